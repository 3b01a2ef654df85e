/* SPDX-License-Identifier: Apache-2.0 */
/* The DRA driver's record of the claims it prepared, kept in a file under
 * the kubelet's plugin directory so that a prepared claim outlives a restart
 * of the driver (the kubelet prepares again after its own restart and must
 * get the same answer) and unprepare finds what to undo. The file is JSON:
 *
 *   {"version": 1, "claims": [{"uid": "...", "namespace": "...",
 *     "name": "...", "devices": [{"request": "...", "pool": "...",
 *     "device": "npu-3"}]}]}
 *
 * A dynamic vNPU's device also has "vnpu": {"id": 132, "created": true},
 * a device allocated for administrative access "adminAccess": true
 * (dra/claim.h).
 *
 * It is replaced atomically (temp file, rename): a reader sees the old
 * record or the new one; a save asked to be durable also syncs the file and
 * its directory, so that it outlives a crash of the node. A file that
 * cannot be parsed is refused with the reason, and is the caller's to set
 * aside. Bounded: at most
 * DRA_CHECKPOINT_MAX_CLAIMS claims and DRA_CLAIM_RESULTS_MAX devices each. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "dra/claim.h"
#include "npu/chip.h"

#define DRA_CHECKPOINT_VERSION 1
#define DRA_CHECKPOINT_MAX_CLAIMS 256
/* vNPU ids: chip phy's are phy * 16 + 100 .. phy * 16 + 115 (the
 * driver's numbering, which npu-smi shows). */
#define DRA_VNPU_ID_FIRST 100
#define DRA_VNPU_ID_LAST ((NPU_MAX_CHIPS - 1) * 16 + 115)
/* Far above DRA_CHECKPOINT_MAX_CLAIMS full claims. */
#define DRA_CHECKPOINT_JSON_MAX (16 * 1024 * 1024)

struct dra_prepared {
	char uid[DRA_UID_MAX];
	char namespace[K8S_NAME_MAX + 1];
	char name[K8S_DNS_SUBDOMAIN_MAX + 1];
	char pod_claim[K8S_NAME_MAX + 1]; /* the claim's DRA_POD_CLAIM_ANNOTATION, "" when none */
	size_t n_devices;
	struct dra_result devices[]; /* driver is left empty: it is ours */
};

struct dra_checkpoint {
	size_t count;
	struct dra_prepared *claims[DRA_CHECKPOINT_MAX_CLAIMS];
};

/* A claim entry with room for n devices, zeroed, or NULL without memory. */
struct dra_prepared *dra_prepared_new(size_t n_devices);

/* Frees every entry and empties the checkpoint. */
void dra_checkpoint_clear(struct dra_checkpoint *cp);

/* The entry of uid, or NULL. */
struct dra_prepared *dra_checkpoint_find(const struct dra_checkpoint *cp, const char *uid);

/* Takes entry over (replacing one of the same uid). Returns 0, or -ENOSPC
 * when DRA_CHECKPOINT_MAX_CLAIMS claims are recorded (entry stays the
 * caller's). */
int dra_checkpoint_put(struct dra_checkpoint *cp, struct dra_prepared *entry);

/* Drops and frees the entry of uid; returns whether there was one. */
bool dra_checkpoint_drop(struct dra_checkpoint *cp, const char *uid);

/* Parses len bytes of the file's text into *cp (which must be empty).
 * Returns 0, or -EINVAL with why saying what is wrong (then *cp stays
 * empty), -E2BIG over DRA_CHECKPOINT_JSON_MAX, -ENOMEM. */
int dra_checkpoint_parse(const char *json, size_t len, struct dra_checkpoint *cp, char *why, size_t why_size);

/* The checkpoint as the file's text, malloc'd. Returns 0 or -ENOMEM. */
int dra_checkpoint_render(const struct dra_checkpoint *cp, char **ret_json);

/* Reads path into *cp (which must be empty): -ENOENT when there is no file
 * (a first start), other errors as dra_checkpoint_parse or reading says. */
int dra_checkpoint_load(const char *path, struct dra_checkpoint *cp, char *why, size_t why_size);

/* Replaces path with the checkpoint, atomically, and durably if asked.
 * Returns 0 or a negative errno (the file is then as it was). */
int dra_checkpoint_save(const char *path, const struct dra_checkpoint *cp, bool durable);
