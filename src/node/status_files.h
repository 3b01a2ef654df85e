/* SPDX-License-Identifier: Apache-2.0 */
/* The live status file of a container's NPUs: a small JSON document that
 * the daemon keeps current in a host directory of its own, which the
 * container sees read-only, so that a serving process can stop taking
 * requests when its chip must be restarted and exit when it is separated,
 * rather than hang in a collective that will never return. Both front ends
 * hand it out: the device plugin one directory per set of chips it
 * allocates (Allocate's mounts), the DRA driver one per prepared claim
 * (the claim's CDI spec).
 *
 * Format, version 1 (STATUS_FILE_VERSION; a reader refuses a version it
 * does not know):
 *   {"version": 1,
 *    "chips": [{"device": "npu-3", "logical_id": 0, "phy_id": 3,
 *               "family": "910B", "healthy": false,
 *               "level": "RestartBusiness", "code": "80E01801",
 *               "since": "2026-12-05T10:11:12.345Z",
 *               "reason": "DCMI health 2 (major), error codes 80E01801",
 *               "numa_node": 0, "pci_address": "0000:3b:00.0",
 *               "interconnect_group": "hccs-mesh-0",
 *               "device_ip": "192.168.1.11"}]}
 * One entry per device in the container's order; logical_id is the number
 * CANN gives it inside the container (its place in that order, as
 * ASCEND_RT_VISIBLE_DEVICES says); vNPUs add "vnpu_id" and carry their
 * chip's phy_id. level is Huawei's fault level name where the fault policy
 * judged the device ("None" when it found nothing), "Unknown" where it
 * could not (a DCMI call failing, the device gone); code is the fault code
 * behind the level, "" when none; since is when healthy, level and code
 * became what they are (left out when unknown); reason says why a device
 * is Unhealthy. numa_node, pci_address, interconnect_group (as the DRA
 * driver's interconnectGroup attribute) and device_ip appear where known.
 *
 * The file is replaced atomically (file_write_atomic): the container
 * mounts the directory, not the file, so it sees each new file whole. It
 * is rewritten only when its text changes, at most once per refresh. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "npu/inventory.h"

#define STATUS_FILE_VERSION 1
#define STATUS_FILE_NAME "status.json"
/* Where a container finds the directory (the DRA driver adds
 * "/<claim name>", one per claim), and the variable naming the file. */
#define STATUS_CONTAINER_DIR "/var/run/ascend/npu-status"
#define STATUS_ENV "ASCEND_NPU_STATUS"
/* A file is read back at most this long; one holds at most this many
 * devices (a CDI group's bound). */
#define STATUS_FILE_MAX (64 * 1024)
#define STATUS_FILE_MAX_DEVICES 64
/* Directories kept at most: the device plugin's for sets of chips, and the
 * DRA driver's for claims. */
#define STATUS_DIRS_MAX 1024
/* A directory's name: "set-<ids joined by '+'>" or "set-h<hash>" for long
 * sets, "claim-<uid>". */
#define STATUS_NAME_MAX 200

/* The document for devs (in the container's order) as JSON text ending in a
 * newline, malloc'd, in *ret_json. Returns 0, -EINVAL for no devices or more
 * than STATUS_FILE_MAX_DEVICES, -ENOMEM. */
int status_file_render(const struct npu_device *const *devs, size_t n, char **ret_json);

/* The devices a status file lists, in its order, into ids[max]: 0 with
 * *ret_n, or -EINVAL with why ("not JSON", "version 2 is not known",
 * "chips[1].device is not a device id", ...). len bytes of json, which
 * need not be NUL-terminated. */
int status_file_devices(const char *json, size_t len, char (*ids)[NPU_DEVICE_ID_MAX], size_t max, size_t *ret_n,
			char *why, size_t why_size);

/* The directories of one node, under one base directory: made by the front
 * ends as they hand chips out, kept current and pruned by the daemon's loop.
 * Thread-safe: Allocate and prepare run on gRPC threads. */
struct status_dirs;

/* base is made (mkdir -p) when missing. Returns 0, or a negative errno with
 * why naming the path. */
int status_dirs_new(const char *base, struct status_dirs **ret_dirs, char *why, size_t why_size);
void status_dirs_free(struct status_dirs *dirs);

/* The directory name of a set of devices, the device plugin's: in buf,
 * "set-npu-3+npu-5" (or "set-h<hash>" when that would pass STATUS_NAME_MAX).
 * Returns 0 or -EINVAL for none. */
int status_set_name(const struct npu_device *const *devs, size_t n, char *buf, size_t size);

/* Makes sure the directory name holds the status of devs: made with its
 * file when missing, its time touched when there and over a minute old (so
 * that pruning, which waits far longer, leaves a directory just handed out
 * alone; the usual cost is one stat). Its host path in host_dir. Returns 0,
 * -ENOSPC when STATUS_DIRS_MAX directories exist, or a negative errno. */
int status_dirs_ensure(struct status_dirs *dirs, const char *name, const struct npu_device *const *devs, size_t n,
		       char *host_dir, size_t size);

/* Writes text as the file file_name (not STATUS_FILE_NAME, no '/', not a
 * dot-file) in the existing directory name, atomically, unless the file
 * holds text already; its host path in host_path. For what a front end
 * puts beside the status file (the device metadata of a DRA claim or of a
 * device plugin's set). Returns 0, -EINVAL for a bad name, -ENOENT
 * when the directory is not there, or a negative errno. */
int status_dirs_put(struct status_dirs *dirs, const char *name, const char *file_name, const char *text,
		    char *host_path, size_t size);

/* Whether the directory name holds the file file_name already (put there
 * earlier): its host path in host_path. Returns 0, -ENOENT when it does
 * not, -EINVAL for a bad name. One stat: for a file that is the same each
 * time its set is handed out, which Allocate then neither renders nor
 * reads again. */
int status_dirs_lookup(struct status_dirs *dirs, const char *name, const char *file_name, char *host_path,
		       size_t size);

/* Removes the directory name and the files in it; 0 also when it was not there. */
int status_dirs_remove(struct status_dirs *dirs, const char *name);

/* Rewrites every directory's file whose text differs from what snap says of
 * its devices. How many were rewritten in *ret_rewritten; the first error
 * in the return (the others are tried). */
int status_dirs_refresh(struct status_dirs *dirs, const struct npu_snapshot *snap, size_t *ret_rewritten);

/* Calls fn for each directory, with its name and devices; fn returns true
 * to remove it. Only directories untouched (by ensure or a rewrite) for
 * idle_ms (wall clock) are offered. How many were removed in
 * *ret_removed. */
typedef bool (*status_dirs_unused_fn)(void *ctx, const char *name, char (*ids)[NPU_DEVICE_ID_MAX], size_t n);
int status_dirs_prune(struct status_dirs *dirs, int64_t idle_ms, status_dirs_unused_fn fn, void *ctx,
		      size_t *ret_removed);
