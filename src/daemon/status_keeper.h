/* SPDX-License-Identifier: Apache-2.0 */
/* Keeps the containers' live status files (node/status_files.h) current:
 * their directories live under <state dir>/npu-status, made by the front
 * ends as they hand chips out; at every refresh each file whose devices'
 * health, fault level or code changed is rewritten, and the device
 * plugin's directories that no container has held for a while are removed
 * (the DRA driver removes a claim's at unprepare). Without a usable
 * directory the daemon serves on without status files, saying so once.
 * Part of the top level: it logs. */
#pragma once

#include <stdbool.h>

#include "daemon/holders.h"
#include "node/status_files.h"
#include "npu/inventory.h"

#define STATUS_KEEPER_SUBDIR "npu-status"
/* A set's directory stays this long after it was last handed out or
 * rewritten, whatever pod resources says: the kubelet records a container
 * only after Allocate, and a pod may start again on the same chips. */
#define STATUS_KEEPER_IDLE_MS (10 * 60 * 1000)
/* Pruning looks at most this often. */
#define STATUS_KEEPER_PRUNE_EVERY_MS (60 * 1000)

struct status_keeper {
	struct status_dirs *dirs; /* NULL: no status files */
	struct holders *holders;  /* who holds a chip (may be NULL: nothing is pruned) */
	int64_t pruned_at_ms;
	int last_error;           /* the refresh's last error, said once */
};

/* Makes <state_dir>/npu-status; a failure is logged and leaves the keeper
 * without directories. */
void status_keeper_init(struct status_keeper *keeper, const char *state_dir, struct holders *holders);

/* At each refresh, with the node's judged snapshot. */
void status_keeper_refresh(struct status_keeper *keeper, const struct npu_snapshot *snapshot);

void status_keeper_fini(struct status_keeper *keeper);
