/* SPDX-License-Identifier: Apache-2.0 */
/* The DRA driver's node side: prepares and unprepares ResourceClaims for the
 * kubelet. Preparing a claim reads it through a claim reader (the API
 * server's client, wired by the daemon), takes the allocation results of
 * this driver, checks that each device is this node's (its pool is the node
 * name) and a healthy whole chip or vNPU of the latest inventory snapshot
 * (a chip carved into vNPUs is not handed out whole), writes a CDI spec
 * with one device for the claim, "<driver>/claim=<uid>", and records the
 * claim in the checkpoint (dra/checkpoint.h) before answering. The spec
 * gives a container what the device plugin's Allocate gives it
 * (node/cdi.h): a vNPU's /dev/vdavinci<id> as /dev/davinci<id>.
 *
 * Dynamic vNPUs (dra/vnpus.h): a placement of a chip carved on demand is
 * made a vNPU at prepare: its id recorded first (durably), then DCMI's
 * create (outside the lock, through the carver), then the record says it
 * was created and the spec is written. A create DCMI refuses destroys what
 * the claim got and drops the record; one past its deadline, and a crash
 * in between, leave a record naming the vNPU, which the kubelet's next
 * prepare completes (the carver finds one DCMI finished meanwhile) and its
 * unprepare removes. Unprepare removes the spec, destroys the vNPUs (one
 * DCMI does not know is gone already), then drops the record. A vNPU the
 * record does not name is never touched.
 *
 * Idempotent: a claim already recorded is answered from the record (its CDI
 * spec written again if it went, e.g. with a tmpfs /var/run/cdi after a
 * reboot), without reading the API server; a device is never prepared for
 * two claims at once, unless it is time-sliced: then for at most as many
 * claims as its replicas (dra_driver_publish). Unpreparing removes the spec and the record, and
 * succeeds for a claim never prepared. Each failure is the claim's alone,
 * with a message naming the device and the reason.
 *
 * Threads: prepare and unprepare may run on several threads at once (the
 * DRA service's gRPC thread and its claim readers, dra/service.h): the
 * checkpoint and the specs are under one lock, never held across a claim
 * read, so a read waiting on the API server holds up no other claim;
 * dra_driver_publish runs on the daemon's loop.
 *
 * Instances: during a surge roll two driver processes of one node share
 * plugin_dir and the CDI directory, and the kubelet may prepare a claim
 * through one and unprepare it through the other. With a lock_path, each
 * use of the checkpoint also holds an exclusive flock on that file and
 * first reads the checkpoint again when another instance replaced it since
 * this one last read or wrote it (told by the file's inode, size and
 * mtime, so a call that finds it as it left it reads nothing). */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "dra/checkpoint.h"
#include "dra/claim.h"
#include "npu/chip_select.h"
#include "npu/inventory.h"
#include "node/cdi.h"
#include "node/host_files.h"
#include "node/status_files.h"

#define DRA_DEFAULT_DRIVER_NAME "npu.ascend.com"
/* How long a vNPU's create or destroy may take when the kubelet's call
 * names no deadline. */
#define DRA_CARVE_TIMEOUT_MS 10000
#define DRA_CDI_CLASS "claim"
#define DRA_CHECKPOINT_FILE "checkpoint.json"
/* In plugin_dir beside the checkpoint: what two instances flock. */
#define DRA_LOCK_FILE "checkpoint.lock"
/* "<driver>/claim=<uid>" */
#define DRA_CDI_ID_MAX (CDI_KIND_MAX + 1 + DRA_UID_MAX)
/* "<uid>-<index>-<device>", and "<driver>/claim=" before it. */
#define DRA_CDI_PART_MAX (DRA_UID_MAX + 1 + 10 + 1 + K8S_NAME_MAX + 1)
#define DRA_CDI_RESULT_ID_MAX (CDI_KIND_MAX + 1 + DRA_CDI_PART_MAX)

/* What bounds a claim read: the kubelet's call it serves. */
struct dra_read_limits {
	int64_t deadline_ms; /* CLOCK_MONOTONIC ms (now_ms); 0: the reader's own timeout */
	int abort_fd;        /* turns readable when the call is given up; -1: none */
};

/* Where claims come from: ns/name as the API server's JSON, malloc'd in
 * *ret_json (the caller frees it), at most DRA_CLAIM_JSON_MAX bytes. Returns
 * 0, or a negative errno with why saying what failed (-ENOENT: no such
 * claim, -ETIMEDOUT: no answer by the deadline, -ECANCELED: abort_fd turned
 * readable, or the reader is stopping). It may block, up to the deadline:
 * it runs on a claim reader of the DRA service. */
struct dra_claim_reader {
	int (*get)(void *ctx, const char *ns, const char *name, const struct dra_read_limits *limits,
		   char **ret_json, size_t *ret_len, char *why, size_t why_size);
	/* After a claim was prepared anew (not answered from its record) and
	 * its chips have a network identity: the server-side apply of its
	 * status (dra/claim_status.h), valid only during the call. Must not
	 * block: the kubelet's call waits for nothing the API server does. May
	 * be NULL. */
	void (*prepared)(void *ctx, const char *ns, const char *name, const char *status_body);
	void *ctx;
};

/* What makes and removes dynamic vNPUs (DCMI, which the daemon's loop
 * calls). Each call blocks its thread until DCMI answered or deadline_ms
 * (CLOCK_MONOTONIC, now_ms) passed. create returns 0 once the vNPU of
 * template with id exists on chip phy; destroy 0 once it is gone, -ENOENT
 * when there was none; else a negative errno with why naming the chip, the
 * call and DCMI's code. */
struct dra_carver {
	int (*create)(void *ctx, uint32_t phy, const char *template_name, uint32_t vnpu_id, int64_t deadline_ms,
		      char *why, size_t why_size);
	int (*destroy)(void *ctx, uint32_t phy, uint32_t vnpu_id, int64_t deadline_ms, char *why, size_t why_size);
	void *ctx;
};

struct dra_driver_options {
	const char *driver_name; /* a DNS subdomain, e.g. DRA_DEFAULT_DRIVER_NAME */
	const char *node_name;   /* this node's pool */
	const char *plugin_dir;  /* <kubelet dir>/plugins/<driver>: the checkpoint's directory */
	const char *cdi_dir;     /* where the claims' CDI specs go */
	/* A file flocked around every use of the checkpoint, for two instances
	 * of the driver sharing plugin_dir (a surge roll); NULL: one instance. */
	const char *lock_path;
	struct host_paths paths; /* copied; the strings must outlive the driver */
	struct dra_claim_reader reader;
	/* The chips carved on demand (copied; NULL: none) and what carves them. */
	const struct npu_chip_select *dynamic;
	struct dra_carver carver;
	/* The claims' live status files (node/status_files.h): each prepared
	 * claim's directory, "claim-<uid>", is mounted at
	 * STATUS_CONTAINER_DIR/<claim name>; NULL: none. */
	struct status_dirs *status;
};

struct dra_driver;

/* Builds the driver and loads its checkpoint. A checkpoint that cannot be
 * read or parsed is renamed to <file>.bad and the driver starts with none;
 * set_aside then says why (empty otherwise), for the caller to log. Returns
 * 0, -EINVAL with why when the driver name makes no CDI kind, -ENOMEM. */
int dra_driver_new(const struct dra_driver_options *options, struct dra_driver **ret_driver, char *set_aside,
		   size_t set_aside_size, char *why, size_t why_size);
void dra_driver_free(struct dra_driver *driver);

/* Makes snapshot and files what the next prepare checks devices against and
 * gives containers, and shares (per device of snapshot, copied; NULL: none
 * shared) how many claims may hold each device at once: its time-slicing
 * replicas. Loop thread. */
void dra_driver_publish(struct dra_driver *driver, struct npu_snapshot *snapshot, struct host_files *files,
			const unsigned *shares);

/* Prepares the claim; *ret_prepared (malloc'd, the caller frees it) lists
 * its devices of this driver. A claim not recorded yet is read within
 * limits (NULL: the reader's own timeout, nothing aborts it). Returns 0, or
 * a negative errno with why naming the device and the reason. */
int dra_driver_prepare(struct dra_driver *driver, const char *ns, const char *uid, const char *name,
		       const struct dra_read_limits *limits, struct dra_prepared **ret_prepared, char *why,
		       size_t why_size);

/* The part of dra_driver_prepare that never waits on the API server: a
 * claim recorded already is answered from its record. Returns as
 * dra_driver_prepare, or -ENODATA (why untouched) when the claim is not
 * recorded: only dra_driver_prepare can prepare it then. */
int dra_driver_prepare_recorded(struct dra_driver *driver, const char *ns, const char *uid, const char *name,
				struct dra_prepared **ret_prepared, char *why, size_t why_size);

/* Undoes dra_driver_prepare; 0 also for a claim never prepared. */
int dra_driver_unprepare(struct dra_driver *driver, const char *uid, char *why, size_t why_size);

/* The CDI device id of a claim: "<driver>/claim=<uid>". */
int dra_driver_cdi_id(const struct dra_driver *driver, const char *uid, char *buf, size_t size);

/* The CDI device of a claim's result index alone (its device's node), so
 * that each result has an id of its own, listed first for it: the name in
 * the claim's spec, "<uid>-<index>-<device>", and the id,
 * "<driver>/claim=<uid>-<index>-<device>". Return 0 or -ENAMETOOLONG. */
int dra_driver_cdi_part(const char *uid, size_t index, const char *device, char *buf, size_t size);
int dra_driver_cdi_result_id(const struct dra_driver *driver, const char *uid, size_t index, const char *device,
			     char *buf, size_t size);

/* Removes the CDI specs of this driver's claims that the checkpoint does
 * not record (a crash between writing a spec and recording its claim), so
 * that no runtime injects chips for a claim the driver does not hold. Call
 * before serving, and not after a checkpoint was set aside: then no spec
 * is known to be stale. Returns how many were removed
 * (>= 0), or a negative errno when the CDI directory cannot be read (-ENOENT
 * when it does not exist: nothing to do). */
int dra_driver_sweep(struct dra_driver *driver);

/* Writes the CDI spec of every claim the checkpoint records again, for the
 * snapshot published last (whatever the devices' health: their pods run on
 * them). A running kubelet never prepares again a claim it saw prepared, so
 * a container it restarts finds its devices only through a spec that is
 * there: this puts back one lost while the driver was down (a CDI directory
 * emptied, a spec never synced before a crash) and renders old ones as this
 * release does. Call after the first dra_driver_publish, before serving.
 *
 * Each record is checked first as a new claim would be: a record whose
 * uid, namespace or name a prepare would refuse, or holding a device that
 * records before it hold as often as it may be shared, is set aside: taken
 * out of the claims prepared (the file drops it at the next save), its
 * spec removed if its uid names one, nothing written for it. A record
 * whose device is not in the snapshot is kept, without a spec: its chip
 * may come back. Returns how many specs were written; *ret_failed counts
 * the claims whose spec was not, why then naming the first and the
 * reason. */
int dra_driver_restore(struct dra_driver *driver, size_t *ret_failed, char *why, size_t why_size);

/* Whether vNPU id is one the driver made for a claim (its record names
 * it). Any thread. */
bool dra_driver_holds_vnpu(struct dra_driver *driver, uint32_t id);

/* How many claims are prepared now. */
size_t dra_driver_prepared_count(struct dra_driver *driver);

/* How many prepared claims use chip phy, whole or through a vNPU of it
 * ("ns/name, ..." in buf, cut with ",..."): a pod may run on it. Claims
 * with admin access alone (monitoring) do not count: they never hold a
 * chip. Any thread. */
size_t dra_driver_claims_on_chip(struct dra_driver *driver, uint32_t phy, char *buf, size_t size);
