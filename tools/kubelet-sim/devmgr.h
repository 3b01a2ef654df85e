/* SPDX-License-Identifier: Apache-2.0 */
/* The kubelet device manager's allocation for one container, as the
 * `allocate` command makes it: pick the devices (healthy
 * and not allocated, in natural ID order, GetPreferredAllocation first when
 * the plugin advertises it, then fill up like the kubelet), call Allocate,
 * and remember the allocation (with the checkpoint). RPCs run without
 * sim->lock held. Nothing here prints events: errors come back in a
 * devmgr_error, and only a lost checkpoint write is logged. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "deviceplugin.pb-c.h"
#include "grpc/client.h"
#include "sim.h"

struct devmgr_error {
	int code; /* gRPC status of the plugin's answer, or -1 for a local error */
	char message[512];
};

struct devmgr_pick {
	struct sim_plugin *plugin; /* a reference, for the Allocate call */
	char **ids;                /* the chosen IDs, malloc'd copies */
	size_t n_ids;
	bool asked_preferred; /* GetPreferredAllocation was called */
	char **preferred;     /* what it answered, malloc'd copies */
	size_t n_preferred;
};

/* Picks want devices of res (NULL: the current resource). Returns 0, or:
 * -ENODEV when no plugin is registered for it; -ENOSPC when fewer than want
 * devices are healthy and free (*ret_available tells how many are, and the
 * message says so); -EIO when GetPreferredAllocation failed; -ENOMEM;
 * -EBADMSG. err is filled on every failure. */
int devmgr_pick(struct sim *sim, struct sim_resource *res, size_t want, struct devmgr_pick *ret_pick,
		size_t *ret_available, struct devmgr_error *err);
/* Accepts a cleared or half-filled pick. */
void devmgr_pick_clear(struct devmgr_pick *pick);

/* Sends an AllocateRequest of n_containers requests, each for ids. Returns 0
 * with the decoded answer and its raw bytes (for the checkpoint), or -EIO
 * (the plugin's error), -ENOMEM, -EBADMSG with err filled. */
int devmgr_allocate(struct sim_plugin *plugin, size_t n_containers, char **ids, size_t n_ids,
		    V1beta1__AllocateResponse **ret_resp, struct gc_result *ret_raw, struct devmgr_error *err);

/* Remembers a successful allocation of res and writes the checkpoint. A
 * failure is logged, not returned: kubelet-sim is the top level. */
void devmgr_record(struct sim *sim, struct sim_resource *res, char *const *ids, size_t n_ids,
		   const struct gc_result *raw);

/* Writes the checkpoint now (logged when it cannot). */
void devmgr_write_checkpoint(struct sim *sim);
