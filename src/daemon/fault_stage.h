/* SPDX-License-Identifier: Apache-2.0 */
/* Where the fault policy (fault/policy.h) meets the inventory: at every
 * refresh each chip whose DCMI health could be read is judged by the policy
 * from its error codes and health, with a state of its own kept across
 * refreshes, and the snapshot the resources publish is the inventory's with
 * each chip's (and its vNPUs') health as the policy says. A chip the
 * inventory finds faulty for another reason (absent, its device file
 * missing, a DCMI call failing or overdue) stays Unhealthy and is not
 * judged. Each decision of the policy is logged once, with the code, the
 * level, the rule that fired and what the operator can do. Each chip is
 * also shown to the hot reset (daemon/fault_reset.h), which keeps a chip
 * under reset Unhealthy and may separate it. Part of the top level: it
 * logs. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "daemon/fault_reset.h"
#include "fault/policy.h"
#include "loop/loop.h"
#include "npu/chip.h"
#include "npu/inventory.h"
#include "daemon/holders.h"
#include "telemetry/metrics.h"

struct fault_chip {
	uint32_t phy;
	struct fault_state state;
};

/* When a device's health, level and code last changed (npu_device.since_ms). */
struct fault_since {
	char id[NPU_DEVICE_ID_MAX];
	bool healthy;
	unsigned level;
	uint32_t code;
	int64_t since_ms;
};

struct fault_stage {
	struct fault_chip *chips; /* one per chip seen, at most NPU_MAX_CHIPS */
	size_t n_chips;
	struct npu_snapshot *judged;   /* the last snapshot as the policy judged it, NULL before */
	struct fault_since *since;     /* one per device of judged */
	size_t n_since;
	struct loop_timer *hold_timer; /* fires when a held chip may be Healthy again */
	struct metrics *metrics;       /* faults and escalations are counted here (may be NULL) */
	struct holders *holders;       /* who holds a chip, named in its fault lines (may be NULL) */
	/* Called for a chip about to be judged the first time (may be NULL):
	 * restores a separation recorded before a restart (daemon/separations.h). */
	void (*restore)(void *ctx, const struct npu_device *chip, struct fault_state *state, int64_t now_ms);
	void *restore_ctx;
	struct fault_resets *resets;   /* hot resets of the chips that ask for one (may be NULL) */
};

/* What the stage is made with: everything it calls, at init, never set
 * after it. */
struct fault_stage_options {
	struct loop *loop;
	/* Runs (with ctx) when a chip the recovery hold keeps out may be
	 * Healthy again, and should judge anew. */
	void (*due)(void *ctx);
	void *ctx;
	struct metrics *metrics; /* may be NULL */
	struct holders *holders; /* may be NULL */
	void (*restore)(void *ctx, const struct npu_device *chip, struct fault_state *state, int64_t now_ms);
	void *restore_ctx;
	struct fault_resets *resets; /* may be NULL */
};

/* Sets the stage up as o says. Returns 0 or a negative errno (the timer). */
int fault_stage_init(struct fault_stage *stage, const struct fault_stage_options *o);

/* The inventory's snapshot raw as policy judges it now (a new reference,
 * also kept in stage->judged), which is what every resource publishes;
 * sets *changed when it differs from the last one, which happens without
 * news from the inventory when a recovery hold ends. On -ENOMEM it says so
 * and returns raw as DCMI reports it. */
struct npu_snapshot *fault_stage_judge(struct fault_stage *stage, const struct fault_policy_config *policy,
				       struct npu_snapshot *raw, bool *changed);

/* Judges the chips of in at now_ms by policy and returns, in *ret_out, the
 * snapshot with the policy's health, and in *ret_due_ms when a chip held
 * by the recovery hold may be Healthy again (0: none is held), so that the
 * caller looks again then rather than at its next poll. Returns 0 or
 * -ENOMEM (nothing written). */
int fault_stage_apply(struct fault_stage *stage, const struct fault_policy_config *policy,
		      const struct npu_snapshot *in, int64_t now_ms, struct npu_snapshot **ret_out,
		      int64_t *ret_due_ms);

void fault_stage_fini(struct fault_stage *stage);
