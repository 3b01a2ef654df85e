/* SPDX-License-Identifier: Apache-2.0 */
/* Keeps the record of separated chips (fault/separation.h, in --state-dir)
 * and the fault stage's chips in step, both ways:
 *
 *   at start     the record is read; each chip it names is separated from
 *                the first judgement on, so the very first ListAndWatch has
 *                it Unhealthy. An unreadable record stops the start (the
 *                daemon cannot tell which chips it must keep out, and would
 *                hand them out otherwise): the message names the file, the
 *                line and the fix;
 *   after each   a chip the policy separated is added to the record, one
 *   judgement    it released (its release window) is removed, under the
 *                writers' lock and over the file as it is then, so that a
 *                release by ascend-doctor at the same moment is not undone;
 *   on a change  (inotify on the directory) a record removed by
 *   of the file  `ascend-doctor release` releases its chip, a record added
 *                by hand separates it. An unreadable file then is logged
 *                and the chips stay as they are.
 *
 * A write that fails is logged and tried again at every refresh; the chip
 * stays separated meanwhile. Part of the top level: it logs. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "config/config.h"
#include "daemon/fault_stage.h"
#include "fault/separation.h"
#include "npu/inventory.h"

struct separations {
	char dir[CONFIG_PATH_MAX];
	char path[CONFIG_PATH_MAX + 32];
	struct fault_separations known; /* the file as last read or written */
	char logged[CONFIG_PATH_MAX + 640]; /* the problem last logged, "" when none */
	struct fault_stage *stage;
};

/* Reads the record in dir (a missing directory or file is no record) for
 * stage. Returns 0, or a negative errno with why (the record cannot be
 * read: the daemon must not start). */
int separations_init(struct separations *s, const char *dir, struct fault_stage *stage, char *why,
		     size_t why_size);

/* fault_stage's restore hook: separates chip (its state fresh) when the
 * record names it. */
void separations_restore(void *ctx, const struct npu_device *chip, struct fault_state *state, int64_t now_ms);

/* After each judgement of snap: records new separations, drops released
 * ones. Asks the stage to judge anew (its hold timer) when the file held
 * news that changed a chip. */
void separations_sync(struct separations *s, const struct npu_snapshot *snap);

/* The file changed: takes a release or a separation made in it. Returns
 * true when a chip changed, so the caller judges anew. */
bool separations_reread(struct separations *s);
