/* SPDX-License-Identifier: Apache-2.0 */
/* The fault policy: what a chip's DCMI error codes mean for the kubelet.
 * Each code has one of Huawei's fault levels (a built-in table of the codes
 * Huawei's device plugin ships, an operator's table over or instead of it,
 * a default level for the rest); windows escalate a code that comes back too
 * often or lasts too long; a recovery hold damps a chip that flaps; a chip
 * separated (ManuallySeparateNPU) stays out until it is released. These are
 * pure functions over a caller-owned per-chip state, the chip's codes and an
 * explicit time (monotonic milliseconds): no I/O, no logging, no globals, so
 * the event loop drives it and the tests replay any sequence at once.
 *
 * Driving it, per chip: fault_state_init once when the chip is first listed;
 * at every refresh fault_policy_step with the chip's current error codes and
 * DCMI health and the loop's now_ms(); then publish step.healthy (ANDed with
 * the inventory's own verdict: an absent chip, a missing device file or a
 * failing DCMI call make it Unhealthy whatever the policy says), log each of
 * step.decisions once (they are what changed in this step, each with the
 * code, the level, the rule that fired and a hint for the operator), count
 * step.onsets per code (faults by code) and the ESCALATED and SEPARATED
 * decisions per code (escalations by code), and export step.level as the
 * chip's fault level. An operator's release calls fault_policy_release; a
 * separation restored from a record calls fault_policy_separate. Steps
 * cost microseconds: the loop may call one at every refresh of every chip.
 *
 * What the kubelet sees: NotHandleFault and SubHealthFault keep the chip
 * Healthy; RestartRequest, RestartBusiness, FreeRestartNPU, RestartNPU and
 * SeparateNPU make it Unhealthy while the fault lasts; PreSeparateNPU makes
 * it Unhealthy too (no new pods) with step.pods_may_finish set, since the
 * pods already on it may run to their end; ManuallySeparateNPU keeps it
 * Unhealthy until fault_policy_release, or until its code has stayed away
 * for the release window when one is configured.
 *
 * A chip's level is the most severe of: each current code's level from the
 * table; the default level when DCMI reports health 2 (major) or 3
 * (critical) without any code, since the chip then says it is faulty
 * without saying why; the escalations in force; the separation. It rises at
 * once. It falls only when the chip's faults have stayed below it for the
 * recovery hold (0: at once, the plugin's behaviour before the policy),
 * except when a release or the end of an escalation lowers it: those only
 * come after the code stayed away, so they take effect at once.
 *
 * Windows. Frequency: a code that begins (an onset: absent at the previous
 * step, present now; not every step while it lasts) count times within the
 * window escalates to the rule's level; the onsets counted start afresh
 * after the rule fires. An escalation to ManuallySeparateNPU separates the
 * chip; another level holds until the code has stayed away for the rule's
 * release window (by default the rule's window). Duration: a code present
 * longer than the timeout escalates to the rule's level, which holds until
 * the code has stayed away for the rule's recovery time. A code that a
 * duration window names counts for frequency windows when it outlasts that
 * timeout, not when it begins, as Huawei's plugin counts it: a link that
 * drops for a second now and then is not the link that stays down. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Huawei's levels, least severe first; the order is the severity. */
enum fault_level {
	FAULT_LEVEL_NONE,
	FAULT_LEVEL_NOT_HANDLE,               /* NotHandleFault */
	FAULT_LEVEL_SUB_HEALTH,               /* SubHealthFault */
	FAULT_LEVEL_RESTART_REQUEST,          /* RestartRequest */
	FAULT_LEVEL_RESTART_BUSINESS,         /* RestartBusiness */
	FAULT_LEVEL_FREE_RESTART_NPU,         /* FreeRestartNPU */
	FAULT_LEVEL_RESTART_NPU,              /* RestartNPU */
	FAULT_LEVEL_PRE_SEPARATE_NPU,         /* PreSeparateNPU */
	FAULT_LEVEL_SEPARATE_NPU,             /* SeparateNPU */
	FAULT_LEVEL_MANUALLY_SEPARATE_NPU,    /* ManuallySeparateNPU */
	FAULT_LEVEL_COUNT
};

/* "NotHandleFault" and the rest as Huawei spells them; "none" for
 * FAULT_LEVEL_NONE. */
const char *fault_level_name(enum fault_level level);
/* The level Huawei's name stands for (exactly, case included); "none" is
 * not a level one can configure and is refused. -EINVAL otherwise. */
int fault_level_parse(const char *name, enum fault_level *ret_level);
/* Whether the kubelet sees a chip at this level as Unhealthy. */
bool fault_level_unhealthy(enum fault_level level);
/* "NotHandleFault, SubHealthFault, ..., ManuallySeparateNPU", for messages. */
#define FAULT_LEVEL_NAMES                                                                              \
	"NotHandleFault, SubHealthFault, RestartRequest, RestartBusiness, FreeRestartNPU, RestartNPU, " \
	"PreSeparateNPU, SeparateNPU, ManuallySeparateNPU"

/* Why a chip has its level, or what changed it. */
enum fault_rule {
	FAULT_RULE_NONE,              /* nothing: the chip is clean */
	FAULT_RULE_CODE_TABLE,        /* the code's level in the table */
	FAULT_RULE_DEFAULT_LEVEL,     /* a code the table does not know: the default level */
	FAULT_RULE_DCMI_HEALTH,       /* DCMI health 2 or 3 without a code: the default level */
	FAULT_RULE_FREQUENCY,         /* a frequency window */
	FAULT_RULE_DURATION,          /* a duration window */
	FAULT_RULE_RECOVERY,          /* the faults cleared (no recovery hold) */
	FAULT_RULE_RECOVERY_HOLD,     /* the faults stayed cleared for the recovery hold */
	FAULT_RULE_MANUAL_SEPARATION, /* fault_policy_separate: an operator, or a record restored */
	FAULT_RULE_RELEASE,           /* fault_policy_release */
	FAULT_RULE_RELEASE_WINDOW,    /* the separating code stayed away for the release window */
};

/* "code table", "frequency", ... for log lines. */
const char *fault_rule_name(enum fault_rule rule);

/* A fault code as operators write it: 1 to 8 hex digits, with or without
 * 0x, any case ("80E01801", "0x80e01801"), not 0 (DCMI reports no such
 * code; the policy uses it for "no code"). -EINVAL otherwise. */
int fault_code_parse(const char *text, uint32_t *ret_code);

/* --- Configuration: a value type (copied whole, no pointers) --- */

#define FAULT_POLICY_MAX_CODES 4096     /* codes the operator's table holds */
#define FAULT_POLICY_MAX_NETWORK_CODES 1024 /* codes of the network lists */
#define FAULT_POLICY_MAX_RULES 64       /* frequency rules; as many duration rules */
#define FAULT_POLICY_MAX_RULE_CODES 2048 /* codes named by all the rules together */
#define FAULT_ONSETS_KEPT 32            /* onsets remembered per code and chip */
#define FAULT_POLICY_MAX_COUNT FAULT_ONSETS_KEPT
/* Windows, timeouts, recovery times and holds: 10 days, the longest
 * TimeWindow Huawei's plugin takes. */
#define FAULT_POLICY_MAX_WINDOW_MS (864000LL * 1000)
/* Release windows: 2^32 s, the longest ReleaseTimeWindow Huawei's takes. */
#define FAULT_POLICY_MAX_RELEASE_MS (4294967296LL * 1000)
/* The recovery hold without configuration: long enough to ride out a fault
 * that DCMI raises and clears within a few polls, short enough that a chip
 * that really recovered is back within one more health interval. */
#define FAULT_POLICY_DEFAULT_RECOVERY_HOLD_MS 5000
/* The level of a code no table knows, without configuration: see
 * fault_policy_config_init. */
#define FAULT_POLICY_DEFAULT_LEVEL FAULT_LEVEL_SEPARATE_NPU

struct fault_code_level {
	uint32_t code;
	enum fault_level level;
};

/* A window: frequency (count onsets of a code within window_ms) or
 * duration (a code present longer than window_ms, the timeout). */
struct fault_window {
	bool all_codes;         /* "*": every code; else the codes below */
	uint32_t first_code;    /* index of the first in fault_policy_config.rule_codes */
	uint32_t n_codes;
	uint32_t count;         /* frequency: onsets; duration: 0 */
	int64_t window_ms;      /* frequency: the window; duration: the timeout */
	/* Frequency: how long the code must stay away before the escalation
	 * ends (ManuallySeparateNPU: its release window), 0 for the default
	 * (the window; ManuallySeparateNPU: the configured release window).
	 * Duration: the same after the code cleared (Huawei's RecoverTimeout),
	 * 0 to end at once. */
	int64_t hold_ms;
	enum fault_level level;
};

struct fault_policy_config {
	int64_t recovery_hold_ms;
	enum fault_level default_level; /* of codes no table knows */
	int64_t release_window_ms;      /* for separations; 0: only fault_policy_release */
	bool builtin_codes;             /* codes not in codes[] are looked up in the built-in table */
	size_t n_codes;
	struct fault_code_level codes[FAULT_POLICY_MAX_CODES]; /* by code, each once */
	/* Network codes (faultCode.json's *NetworkCodes lists): faults of the
	 * chip's RoCE link, judged apart from its health, as Huawei's plugin
	 * does. A chip reporting one at PreSeparateNPU or above counts as
	 * having its link down (multi-node jobs are kept off it; it still
	 * serves single-node pods); the code never counts for the chip's own
	 * level. By code, each once. */
	size_t n_network_codes;
	struct fault_code_level network_codes[FAULT_POLICY_MAX_NETWORK_CODES];
	size_t n_frequency;
	struct fault_window frequency[FAULT_POLICY_MAX_RULES];
	size_t n_duration;
	struct fault_window duration[FAULT_POLICY_MAX_RULES];
	size_t n_rule_codes;
	uint32_t rule_codes[FAULT_POLICY_MAX_RULE_CODES]; /* each rule's codes, sorted */
};

/* The configuration without settings: the built-in table, the default
 * level SeparateNPU for other codes, the default recovery hold, no windows,
 * no release window. The default level is SeparateNPU so that, as before
 * the policy existed, a code nobody configured keeps the chip Unhealthy
 * while it lasts; it is the level Huawei's plugin gives a code of unknown
 * severity, and unlike RestartNPU and FreeRestartNPU it never asks for a
 * reset of a chip whose fault nobody has looked at. */
void fault_policy_config_init(struct fault_policy_config *config);

/* Sets the level of code in the operator's table (over the built-in one),
 * replacing any level it had there. -EINVAL for code 0 (DCMI reports no
 * such code; the policy uses it for "no code") or FAULT_LEVEL_NONE,
 * -E2BIG when the table holds FAULT_POLICY_MAX_CODES others already. */
int fault_policy_config_set_code(struct fault_policy_config *config, uint32_t code, enum fault_level level);

/* Sets the level of a network code (see network_codes), the most severe
 * level winning when it is set twice. -EINVAL for code 0 or an invalid
 * level, -E2BIG past FAULT_POLICY_MAX_NETWORK_CODES. */
int fault_policy_config_set_network_code(struct fault_policy_config *config, uint32_t code, enum fault_level level);

/* The level of a network code, FAULT_LEVEL_NONE for a code no network list
 * names. */
enum fault_level fault_policy_network_level(const struct fault_policy_config *config, uint32_t code);

/* Whether a network level takes the chip's RoCE link out (PreSeparateNPU
 * and above). */
bool fault_level_network_down(enum fault_level level);

/* Adds a frequency window: count (1..FAULT_POLICY_MAX_COUNT) onsets of one
 * of codes (or of any code with all_codes) within window_ms
 * (1..FAULT_POLICY_MAX_WINDOW_MS) escalate to level; hold_ms as in struct
 * fault_window (0..FAULT_POLICY_MAX_RELEASE_MS). -EINVAL for a value out of
 * range, no codes without all_codes, a code 0 or FAULT_LEVEL_NONE; -E2BIG
 * past FAULT_POLICY_MAX_RULES or FAULT_POLICY_MAX_RULE_CODES. */
int fault_policy_config_add_frequency(struct fault_policy_config *config, const uint32_t *codes, size_t n_codes,
				      bool all_codes, uint32_t count, int64_t window_ms, enum fault_level level,
				      int64_t hold_ms);

/* Adds a duration window: one of codes (or any) present longer than
 * timeout_ms (0..FAULT_POLICY_MAX_WINDOW_MS) escalates to level until it
 * has stayed away for recover_ms (0..FAULT_POLICY_MAX_WINDOW_MS). Errors as
 * fault_policy_config_add_frequency. */
int fault_policy_config_add_duration(struct fault_policy_config *config, const uint32_t *codes, size_t n_codes,
				     bool all_codes, int64_t timeout_ms, enum fault_level level, int64_t recover_ms);

/* Adds from's codes to into's table (from's level wins for a code in both)
 * and appends from's windows to into's; the scalar settings are the
 * caller's. -E2BIG (into unchanged) when the result would not fit. */
int fault_policy_config_merge(struct fault_policy_config *into, const struct fault_policy_config *from);

/* Whether a and b say the same, setting by setting (padding aside). */
bool fault_policy_config_same(const struct fault_policy_config *a, const struct fault_policy_config *b);

/* The level of code: the operator's table, then the built-in one (unless
 * replaced), then the default level. *ret_rule (may be NULL) says which:
 * FAULT_RULE_CODE_TABLE or FAULT_RULE_DEFAULT_LEVEL. */
enum fault_level fault_policy_code_level(const struct fault_policy_config *config, uint32_t code,
					 enum fault_rule *ret_rule);

/* The built-in table, sorted by code: the levels Huawei's MindCluster
 * device plugin ships in its build/faultCode.json. */
const struct fault_code_level *fault_policy_builtin(size_t *ret_count);

/* --- Per-chip state, owned by the caller --- */

#define FAULT_STATE_MAX_CODES 16      /* codes followed per chip, present or remembered */
#define FAULT_STATE_MAX_ESCALATIONS 8 /* escalations in force per chip, besides a separation */
#define FAULT_INPUT_MAX_CODES 128     /* codes judged per step (DCMI's own list holds 128) */

struct fault_track {
	bool used, present;
	bool counted; /* this presence has counted for frequency windows */
	uint32_t code;
	int64_t since_ms; /* present: its onset; absent: when it cleared */
	uint32_t n_onsets, next_onset;
	int64_t onsets[FAULT_ONSETS_KEPT]; /* a ring */
	/* When a frequency rule of each level last fired for the code: only
	 * onsets after it count for rules of that level. */
	int64_t fired_ms[FAULT_LEVEL_COUNT];
};

struct fault_escalation {
	bool used;
	uint32_t code;
	enum fault_level level;
	enum fault_rule rule; /* FAULT_RULE_FREQUENCY or FAULT_RULE_DURATION */
	int64_t since_ms;
	int64_t hold_ms;         /* ends once the code stayed away this long */
	int64_t absent_since_ms; /* -1 while the code is there */
};

struct fault_separation {
	bool active;
	uint32_t code;        /* 0: DCMI health without a code, or none given */
	enum fault_rule rule; /* what separated the chip */
	int64_t since_ms;
	int64_t release_ms;   /* the rule's release window; 0: the configured one */
	int64_t absent_since_ms;
};

struct fault_state {
	bool started;
	int64_t last_ms;
	enum fault_level level; /* as the kubelet and the logs know it */
	uint32_t code;
	enum fault_rule rule;
	int64_t lower_since_ms; /* since when the chip's faults are below level; -1 if not */
	bool released;          /* fault_policy_release awaits its decision */
	uint32_t released_code;
	struct fault_separation separation;
	struct fault_track tracks[FAULT_STATE_MAX_CODES];
	struct fault_escalation escalations[FAULT_STATE_MAX_ESCALATIONS];
	/* Kept by the caller that judges network codes (network_codes): the
	 * chip's RoCE link counts as down for one of them. */
	bool network_down;
};

void fault_state_init(struct fault_state *state);

/* --- A step --- */

struct fault_input {
	const uint32_t *codes; /* the chip's current error codes, any order; 0s are skipped */
	size_t n_codes;        /* the first FAULT_INPUT_MAX_CODES are judged */
	unsigned int dcmi_health; /* 0..3 as DCMI reports it; 2 and 3 without a code are a fault */
};

enum fault_decision_kind {
	FAULT_DECISION_LEVEL,            /* the chip's level rose or fell */
	FAULT_DECISION_ESCALATED,        /* a window fired: level is the rule's */
	FAULT_DECISION_ESCALATION_ENDED, /* its code stayed away long enough: level is the chip's now */
	FAULT_DECISION_SEPARATED,        /* the chip is separated (ManuallySeparateNPU) */
	FAULT_DECISION_RELEASED,         /* the separation ended: level is the chip's now */
};

struct fault_decision {
	enum fault_decision_kind kind;
	uint32_t code; /* the code it is about; 0 for DCMI health without a code */
	enum fault_level level;
	enum fault_rule rule;
	const char *hint; /* what the operator can do: a static sentence */
};

#define FAULT_STEP_MAX_DECISIONS 8

struct fault_step {
	enum fault_level level; /* the chip's level */
	uint32_t code;          /* the code behind it (0: none, or DCMI health without a code) */
	enum fault_rule rule;   /* the rule behind it */
	bool healthy;           /* what the kubelet should see (before the inventory's own faults) */
	bool pods_may_finish;   /* PreSeparateNPU: no new pods, the running ones may finish */
	bool separated;
	bool holding;           /* the level is held above the chip's faults by the recovery hold */
	bool changed;           /* level or healthy differ from the previous step */
	size_t n_onsets;
	uint32_t onsets[FAULT_STATE_MAX_CODES]; /* codes that began in this step */
	size_t n_untracked; /* codes judged by the table only: FAULT_STATE_MAX_CODES were followed already */
	size_t n_decisions;
	struct fault_decision decisions[FAULT_STEP_MAX_DECISIONS];
	size_t decisions_dropped; /* past FAULT_STEP_MAX_DECISIONS */
};

/* Judges the chip at now_ms (monotonic; a time before the previous step's
 * counts as that one). Returns 0 with *ret_step, or -EINVAL (an argument
 * NULL, or codes NULL with n_codes > 0). */
int fault_policy_step(const struct fault_policy_config *config, struct fault_state *state,
		      const struct fault_input *input, int64_t now_ms, struct fault_step *ret_step);

/* An operator's release: ends the separation and every escalation and
 * forgets the onsets counted so far, so the next step lowers the chip's
 * level at once (a RELEASED decision) unless a fault present then holds it.
 * Returns 0, or -ENOENT when nothing was separated or escalated. */
int fault_policy_release(struct fault_state *state, int64_t now_ms);

/* Separates the chip as if a rule had (FAULT_RULE_MANUAL_SEPARATION): for an
 * operator's request, or a separation recorded before a restart. code
 * (may be 0) is the one to report; the configured release window applies.
 * Returns 0, or -EALREADY when the chip is separated already. */
int fault_policy_separate(struct fault_state *state, uint32_t code, int64_t now_ms);
