/* SPDX-License-Identifier: Apache-2.0 */
/* The hot reset of chips whose faults ask for one, as fault/reset.h
 * decides, driven from the fault stage at every refresh: the DCMI reset
 * runs in the background on the vendor worker (npu/dcmi.h), so the loop
 * never waits for it; its return wakes the loop, which refreshes; while a
 * reset is under way a timer refreshes every RESET_POLL_MS so that the
 * chip's return, or its deadline, is seen. The chip stays Unhealthy and is
 * never offered meanwhile. A reset that fails, times out, or is spent
 * separates the chip (fault_policy_separate). The hardware resets a group
 * of chips, not one (node/reset_group.h): a chip is reset only when no
 * chip of its group is held, by the kubelet's pod resources list
 * (daemon/holders.h, taken since the chip asked) or a prepared DRA claim,
 * and DCMI lists no process on any of them; the whole group stays
 * Unhealthy while the reset runs. Each decision is logged once, naming the chip, the code, the
 * level and what happens next. Part of the top level: it logs. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "fault/policy.h"
#include "fault/reset.h"
#include "loop/loop.h"
#include "npu/inventory.h"
#include "daemon/holders.h"
#include "node/reset_group.h"
#include "telemetry/metrics.h"

/* How often the loop looks at a reset under way (the chip's return, its
 * deadline) and at a chip waiting for a recent list of holders. */
#define RESET_POLL_MS 500
/* ... and at a chip a container holds: the pods come and go more slowly,
 * and each look asks the kubelet for a new list. */
#define RESET_HOLDERS_POLL_MS 2000

struct reset_chip {
	uint32_t phy;
	struct fault_reset_state state;
	bool returned; /* the DCMI call returned: outcome is waiting to be judged */
	struct reset_group group; /* the chips its reset under way takes down */
	struct dcmi_reset_outcome outcome;
};

struct fault_resets {
	const struct fault_reset_config *config; /* the running one: a reload changes it in place */
	struct inventory *inventory;             /* its DCMI library runs the resets */
	struct metrics *metrics;                 /* resets are counted here (may be NULL) */
	struct holders *holders;                 /* who holds a chip (may be NULL) */
	struct reset_chip *chips;                /* one per chip seen, at most NPU_MAX_CHIPS */
	size_t n_chips;
	long calling; /* the phy id whose DCMI reset runs, -1 for none: one at a time */
	struct loop_timer *poll;
	int64_t poll_at_ms; /* when the poll timer fires, 0 when it is not armed */
	struct loop_async *returned; /* the DCMI reset returned, on the worker thread */
	void (*refresh)(void *ctx);
	void *ctx;
	char logged_cannot[160]; /* why resets cannot run, as last logged; "" when they can */
	bool logged_no_processes; /* that DCMI cannot list processes was said */
	/* How many prepared claims of the DRA driver hold chip phy (named in
	 * buf); NULL without the DRA front end. */
	int (*claims)(void *ctx, uint32_t phy, char *buf, size_t size);
};

/* What the resets are made with, at init, never set after it. */
struct fault_resets_options {
	struct loop *loop;
	const struct fault_reset_config *config; /* the running one */
	struct inventory *inventory;
	struct metrics *metrics; /* may be NULL */
	struct holders *holders; /* may be NULL */
	/* How many prepared DRA claims hold chip phy, named in buf (with ctx);
	 * NULL when the DRA front end is off. */
	int (*claims)(void *ctx, uint32_t phy, char *buf, size_t size);
	/* Runs (with ctx) when a reset needs a look: it should refresh the
	 * inventory and judge the chips. */
	void (*refresh)(void *ctx);
	void *ctx;
};

/* Sets up as o says. Returns 0 or a negative errno (timer, eventfd). */
int fault_resets_init(struct fault_resets *resets, const struct fault_resets_options *o);

/* One chip at one refresh, after the policy judged it (step and state; step
 * NULL when DCMI did not answer for it, state NULL when it was never
 * judged). Returns true while a reset holds the chip: it must then be
 * Unhealthy whatever the policy says. Sets *ret_separated when it
 * separated the chip (fault_policy_separate on state): the caller judges
 * it again so that the separation is decided and published now. */
bool fault_resets_chip(struct fault_resets *resets, const struct npu_snapshot *snapshot, const struct npu_device *chip,
		       const struct fault_step *step, struct fault_state *state, int64_t now_ms, bool *ret_separated);

/* Whether chip phy is in the reset group of another chip whose reset is
 * under way (that chip's phy in *ret_by): it must then be Unhealthy too. */
bool fault_resets_group_hold(const struct fault_resets *resets, uint32_t phy, uint32_t *ret_by);

/* After the inventory is freed (no reset can wake it any more). Accepts a
 * zeroed struct. */
void fault_resets_fini(struct fault_resets *resets);
