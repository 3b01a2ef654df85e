/* SPDX-License-Identifier: Apache-2.0 */
/* The guard of a chip's hot reset: whether a chip whose faults ask for a
 * reset (levels RestartNPU and FreeRestartNPU) is reset now, waits, or is
 * separated, and what a reset under way came to. Pure functions over a
 * caller-owned per-chip state and an explicit time (monotonic
 * milliseconds): no I/O, no logging, so the loop drives it and the tests
 * replay any sequence at once.
 *
 * The rules: nothing happens unless resets are enabled. A chip is reset
 * only when its current faults ask for it (not a level the recovery hold
 * keeps after they cleared), it is not separated, and the kubelet's pod
 * resources list, taken since the chip asked, says no container holds it;
 * without such a list (pod resources unavailable) it is not reset at all.
 * The caller answers for the chip's whole reset group (node/reset_group.h):
 * no container and no DCMI process on any of its chips.
 * At most max_resets resets per chip within window_ms: a chip that asks
 * once more is separated. A reset whose DCMI call fails, or whose chip is
 * not back within timeout_ms of the call, separates the chip; a chip back
 * with its fault counts as a failed reset and asks again (so it is reset
 * again, or separated once the resets are spent).
 *
 * Driving it, per chip and refresh: fault_reset_step with what the chip
 * says now; act on the action (start the DCMI reset on
 * FAULT_RESET_NOW, separate on FAULT_RESET_SEPARATE, FAILED and TIMED_OUT;
 * keep the chip Unhealthy and never offered while fault_reset_busy); log it
 * when news is set; and when the DCMI call returns, fault_reset_called. */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "fault/policy.h"

#define FAULT_RESET_MAX_ATTEMPTS 16 /* max_resets at most */
/* Huawei's plugin: at most 3 resets per chip, 120 s for one to finish. */
#define FAULT_RESET_DEFAULT_MAX 3
#define FAULT_RESET_DEFAULT_WINDOW_MS (86400LL * 1000)
#define FAULT_RESET_DEFAULT_TIMEOUT_MS (120LL * 1000)
#define FAULT_RESET_MAX_TIMEOUT_MS (3600LL * 1000)
/* A chip that answers right after the call, without having been seen
 * away, may not have gone down yet: its answer counts (back clean, or back
 * with its fault) only after this long. */
#define FAULT_RESET_SETTLE_MS 5000

struct fault_reset_config {
	bool enabled;
	uint32_t max_resets; /* per chip within window_ms: 1..FAULT_RESET_MAX_ATTEMPTS */
	int64_t window_ms;   /* 1..FAULT_POLICY_MAX_WINDOW_MS */
	int64_t timeout_ms;  /* from the call until the chip is back: 1..FAULT_RESET_MAX_TIMEOUT_MS */
};

/* Off, with Huawei's limits for when it is turned on. */
void fault_reset_config_init(struct fault_reset_config *config);
bool fault_reset_config_same(const struct fault_reset_config *a, const struct fault_reset_config *b);

/* Whether a level asks for a reset: RestartNPU and FreeRestartNPU. */
bool fault_reset_level_asks(enum fault_level level);

/* Who holds the chip, as far as the loop knows. */
enum fault_reset_holders {
	FAULT_RESET_FREE,        /* a list taken since the chip asked names nobody */
	FAULT_RESET_HELD,        /* ... names a container */
	FAULT_RESET_LISTING,     /* no list that recent yet: one is on its way */
	FAULT_RESET_UNAVAILABLE, /* pod resources is off or failing */
	FAULT_RESET_PROCESSES,   /* DCMI lists a process on a chip of the reset group */
	FAULT_RESET_GROUP_UNKNOWN, /* the reset group is unknown (an A3 chip without its brother card) */
};

enum fault_reset_action {
	FAULT_RESET_IDLE,         /* nothing to do */
	FAULT_RESET_WAIT_HOLDERS, /* a container holds the chip: it is reset once free */
	FAULT_RESET_WAIT_LIST,    /* waiting for a list of holders recent enough */
	FAULT_RESET_NO_LIST,      /* pod resources unavailable: no reset */
	FAULT_RESET_WAIT_PROCESSES, /* a process runs on a chip of the group: reset once none does */
	FAULT_RESET_NO_GROUP,     /* which chips a reset would take down is unknown: no reset */
	FAULT_RESET_NOW,          /* reset it now: the attempt is counted */
	FAULT_RESET_SEPARATE,     /* the resets of the window are spent: separate it */
	FAULT_RESET_IN_PROGRESS,  /* the reset runs, or the chip is not back yet */
	FAULT_RESET_SUCCEEDED,    /* back without the fault */
	FAULT_RESET_BACK_FAULTY,  /* back with the fault: a failed reset; it asks again */
	FAULT_RESET_FAILED,       /* the DCMI call failed: separate it */
	FAULT_RESET_TIMED_OUT,    /* not back in time: separate it */
};

const char *fault_reset_action_name(enum fault_reset_action action);

enum fault_reset_phase {
	FAULT_RESET_PHASE_IDLE,
	FAULT_RESET_PHASE_CALLING, /* the DCMI reset runs */
	FAULT_RESET_PHASE_WAITING, /* it returned: waiting for the chip */
};

struct fault_reset_state {
	enum fault_reset_phase phase;
	int64_t asks_since_ms; /* since when the chip asks for a reset; -1 if it does not */
	int64_t called_ms;     /* the reset's start */
	int64_t deadline_ms;   /* the chip must be back by then */
	bool seen_away;        /* the chip did not answer since the call returned */
	uint32_t code;         /* the code the reset is for */
	enum fault_level level;
	uint32_t attempt;      /* which attempt in the window it is (1-based) */
	uint32_t n_attempts, next_attempt;
	int64_t attempts[FAULT_RESET_MAX_ATTEMPTS]; /* a ring of their start times */
	enum fault_reset_action waiting; /* the last wait reported, to report each once */
};

void fault_reset_state_init(struct fault_reset_state *state);

/* What the chip says at this refresh. */
struct fault_reset_input {
	bool answered;  /* DCMI answered for the chip's health */
	bool asks;      /* its current faults ask for a reset (fault_reset_level_asks of a level not held) */
	bool separated; /* the policy has it separated */
	enum fault_level level;
	uint32_t code;
	enum fault_reset_holders holders;
};

struct fault_reset_step {
	enum fault_reset_action action;
	bool news;           /* a decision to log once */
	uint32_t attempt;    /* NOW, and a reset's outcome: which attempt in the window (1-based) */
	uint32_t code;       /* the code the decision is about */
	enum fault_level level;
	int64_t elapsed_ms;  /* outcomes: since the reset's start */
	int64_t due_ms;      /* while busy: when to look again at the latest (the deadline) */
};

/* Judges the chip at now_ms. -EINVAL for a NULL argument. */
int fault_reset_step(const struct fault_reset_config *config, struct fault_reset_state *state,
		     const struct fault_reset_input *input, int64_t now_ms, struct fault_reset_step *ret_step);

/* The DCMI reset returned at now_ms: ok, or it failed (then the reset is
 * over: FAULT_RESET_FAILED in *ret_step). -EINVAL when no reset is
 * calling. */
int fault_reset_called(struct fault_reset_state *state, bool ok, int64_t now_ms, struct fault_reset_step *ret_step);

/* The resets started within window_ms before now_ms. */
uint32_t fault_reset_attempts(const struct fault_reset_config *config, const struct fault_reset_state *state,
			      int64_t now_ms);

/* A reset is under way: the chip must stay Unhealthy and never offered. */
static inline bool fault_reset_busy(const struct fault_reset_state *state)
{
	return state->phase != FAULT_RESET_PHASE_IDLE;
}
