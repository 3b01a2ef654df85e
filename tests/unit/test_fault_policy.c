/* SPDX-License-Identifier: Apache-2.0 */
/* The fault policy without processes: every level as the kubelet sees it,
 * the built-in table, unknown codes and DCMI health without a code, the
 * recovery hold against 1,000 flaps (and its absence, which is the old
 * behaviour), each window, separation, release and the release window, and
 * every bound. Time is explicit, so a day of faults replays at once. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "base/macro.h"
#include "fault/policy.h"

/* Codes of the built-in table, by their level there. */
#define HBM_ECC 0x80E01801u   /* RestartBusiness */
#define LINK_DOWN 0x81078603u /* NotHandleFault */
#define AIC_ECC 0x80C98008u   /* RestartRequest */
#define HBM_ROWS 0x80E18402u  /* SeparateNPU */
#define SUBHEALTH 0x81A3880Cu /* SubHealthFault */
#define UNKNOWN 0x12345678u

#define SECOND 1000
#define MINUTE (60 * SECOND)

static struct fault_policy_config cfg;
static struct fault_state chip;

static int setup(void **state)
{
	(void)state;
	fault_policy_config_init(&cfg);
	cfg.recovery_hold_ms = 0;
	fault_state_init(&chip);
	return 0;
}

/* One step with the codes given (none: a clean chip, DCMI health 0). */
static struct fault_step step_health(int64_t now, unsigned health, size_t n, const uint32_t *codes)
{
	struct fault_step s;
	const struct fault_input in = { .codes = codes, .n_codes = n, .dcmi_health = health };
	assert_int_equal(fault_policy_step(&cfg, &chip, &in, now, &s), 0);
	assert_true(s.n_decisions <= FAULT_STEP_MAX_DECISIONS);
	assert_int_equal(s.healthy, !fault_level_unhealthy(s.level));
	return s;
}

static struct fault_step step1(int64_t now, uint32_t code)
{
	return step_health(now, code ? 2 : 0, code ? 1 : 0, &code);
}

static struct fault_step clean(int64_t now)
{
	return step_health(now, 0, 0, NULL);
}

/* The step decided exactly this (and maybe more after it, at index i). */
static void assert_decision(const struct fault_step *s, size_t i, enum fault_decision_kind kind, uint32_t code,
			    enum fault_level level, enum fault_rule rule)
{
	if (i >= s->n_decisions)
		fail_msg("decision %zu of %zu", i, s->n_decisions);
	const struct fault_decision *d = &s->decisions[i];
	if (d->kind != kind || d->code != code || d->level != level || d->rule != rule)
		fail_msg("decision %zu: kind %d code %08X %s %s; want kind %d code %08X %s %s", i, d->kind, d->code,
			 fault_level_name(d->level), fault_rule_name(d->rule), kind, code, fault_level_name(level),
			 fault_rule_name(rule));
	assert_non_null(d->hint);
	assert_true(strlen(d->hint) > 10);
}

static void test_level_names(void **state)
{
	(void)state;
	static const struct {
		enum fault_level level;
		const char *name;
		bool unhealthy;
	} levels[] = {
		{ FAULT_LEVEL_NOT_HANDLE, "NotHandleFault", false },
		{ FAULT_LEVEL_SUB_HEALTH, "SubHealthFault", false },
		{ FAULT_LEVEL_RESTART_REQUEST, "RestartRequest", true },
		{ FAULT_LEVEL_RESTART_BUSINESS, "RestartBusiness", true },
		{ FAULT_LEVEL_FREE_RESTART_NPU, "FreeRestartNPU", true },
		{ FAULT_LEVEL_RESTART_NPU, "RestartNPU", true },
		{ FAULT_LEVEL_PRE_SEPARATE_NPU, "PreSeparateNPU", true },
		{ FAULT_LEVEL_SEPARATE_NPU, "SeparateNPU", true },
		{ FAULT_LEVEL_MANUALLY_SEPARATE_NPU, "ManuallySeparateNPU", true },
	};
	for (size_t i = 0; i < ELEMENTSOF(levels); i++) {
		enum fault_level l = FAULT_LEVEL_NONE;
		assert_string_equal(fault_level_name(levels[i].level), levels[i].name);
		assert_int_equal(fault_level_parse(levels[i].name, &l), 0);
		assert_int_equal(l, levels[i].level);
		assert_int_equal(fault_level_unhealthy(levels[i].level), levels[i].unhealthy);
		/* The order is the severity. */
		assert_int_equal(levels[i].level, FAULT_LEVEL_NOT_HANDLE + (int)i);
		assert_non_null(strstr(FAULT_LEVEL_NAMES, levels[i].name));
	}
	enum fault_level l = FAULT_LEVEL_SEPARATE_NPU;
	assert_string_equal(fault_level_name(FAULT_LEVEL_NONE), "none");
	assert_false(fault_level_unhealthy(FAULT_LEVEL_NONE));
	assert_int_equal(fault_level_parse("none", &l), -EINVAL);
	assert_int_equal(fault_level_parse("notHandleFault", &l), -EINVAL);
	assert_int_equal(fault_level_parse("SeparateNPU ", &l), -EINVAL);
	assert_int_equal(fault_level_parse(NULL, &l), -EINVAL);
	assert_int_equal(l, FAULT_LEVEL_SEPARATE_NPU);
	assert_string_equal(fault_rule_name(FAULT_RULE_RELEASE_WINDOW), "release window");
	assert_string_equal(fault_rule_name(FAULT_RULE_CODE_TABLE), "code table");
}

/* What the kubelet sees at each level, while the fault lasts and after. */
static void test_every_level(void **state)
{
	(void)state;
	for (int l = FAULT_LEVEL_NOT_HANDLE; l < FAULT_LEVEL_COUNT; l++) {
		enum fault_level level = (enum fault_level)l;
		uint32_t code = 0xA0000000u + (uint32_t)l;
		fault_policy_config_init(&cfg);
		cfg.recovery_hold_ms = 0;
		assert_int_equal(fault_policy_config_set_code(&cfg, code, level), 0);
		fault_state_init(&chip);

		struct fault_step s = step1(1000, code);
		assert_int_equal(s.level, level);
		assert_int_equal(s.code, code);
		assert_int_equal(s.healthy, level <= FAULT_LEVEL_SUB_HEALTH);
		assert_int_equal(s.pods_may_finish, level == FAULT_LEVEL_PRE_SEPARATE_NPU);
		assert_int_equal(s.separated, level == FAULT_LEVEL_MANUALLY_SEPARATE_NPU);
		assert_true(s.changed);
		assert_int_equal(s.n_onsets, 1);
		assert_int_equal(s.onsets[0], code);
		if (level == FAULT_LEVEL_MANUALLY_SEPARATE_NPU) {
			assert_int_equal(s.n_decisions, 1);
			assert_decision(&s, 0, FAULT_DECISION_SEPARATED, code, level, FAULT_RULE_CODE_TABLE);
		} else {
			assert_int_equal(s.n_decisions, 1);
			assert_decision(&s, 0, FAULT_DECISION_LEVEL, code, level, FAULT_RULE_CODE_TABLE);
		}

		/* While it lasts, nothing new is decided. */
		s = step1(2000, code);
		assert_int_equal(s.level, level);
		assert_int_equal(s.n_decisions, 0);
		assert_int_equal(s.n_onsets, 0);
		assert_false(s.changed);

		/* Once it clears: back at once (no hold), but a separation stays. */
		s = clean(3000);
		if (level == FAULT_LEVEL_MANUALLY_SEPARATE_NPU) {
			assert_int_equal(s.level, level);
			assert_false(s.healthy);
			assert_true(s.separated);
			assert_int_equal(s.n_decisions, 0);
		} else {
			assert_int_equal(s.level, FAULT_LEVEL_NONE);
			assert_true(s.healthy);
			assert_int_equal(s.n_decisions, 1);
			assert_decision(&s, 0, FAULT_DECISION_LEVEL, code, FAULT_LEVEL_NONE, FAULT_RULE_RECOVERY);
			assert_string_equal(s.decisions[0].hint, "the faults cleared; back in service");
		}
	}
}

static void test_builtin_table(void **state)
{
	(void)state;
	size_t n;
	const struct fault_code_level *t = fault_policy_builtin(&n);
	assert_int_equal(n, 350);
	for (size_t i = 1; i < n; i++)
		assert_true(t[i - 1].code < t[i].code);
	for (size_t i = 0; i < n; i++)
		assert_true(t[i].level > FAULT_LEVEL_NONE && t[i].level < FAULT_LEVEL_MANUALLY_SEPARATE_NPU);

	/* The documented examples. */
	static const struct fault_code_level facts[] = {
		{ 0x80E01801, FAULT_LEVEL_RESTART_BUSINESS }, { 0x80E18402, FAULT_LEVEL_SEPARATE_NPU },
		{ 0x80E18005, FAULT_LEVEL_RESTART_NPU },      { 0x81078603, FAULT_LEVEL_NOT_HANDLE },
		{ 0x40F84E00, FAULT_LEVEL_RESTART_NPU },      { 0x80C98008, FAULT_LEVEL_RESTART_REQUEST },
		{ 0x80DE1801, FAULT_LEVEL_RESTART_NPU },      { 0x8C2FA009, FAULT_LEVEL_NOT_HANDLE },
		{ 0x81A3880C, FAULT_LEVEL_SUB_HEALTH },       { 0x8C0E4E00, FAULT_LEVEL_FREE_RESTART_NPU },
		/* Listed as RestartBusiness and SeparateNPU: the severe one. */
		{ 0xA2301001, FAULT_LEVEL_SEPARATE_NPU },
	};
	for (size_t i = 0; i < ELEMENTSOF(facts); i++) {
		enum fault_rule rule = FAULT_RULE_NONE;
		assert_int_equal(fault_policy_code_level(&cfg, facts[i].code, &rule), facts[i].level);
		assert_int_equal(rule, FAULT_RULE_CODE_TABLE);
	}

	/* The operator's table wins; without the built-in table a code is unknown. */
	assert_int_equal(fault_policy_config_set_code(&cfg, HBM_ECC, FAULT_LEVEL_RESTART_NPU), 0);
	assert_int_equal(fault_policy_code_level(&cfg, HBM_ECC, NULL), FAULT_LEVEL_RESTART_NPU);
	cfg.builtin_codes = false;
	enum fault_rule rule;
	assert_int_equal(fault_policy_code_level(&cfg, HBM_ECC, NULL), FAULT_LEVEL_RESTART_NPU);
	assert_int_equal(fault_policy_code_level(&cfg, LINK_DOWN, &rule), FAULT_LEVEL_SEPARATE_NPU);
	assert_int_equal(rule, FAULT_RULE_DEFAULT_LEVEL);
}

static void test_unknown_codes_and_dcmi_health(void **state)
{
	(void)state;
	/* Without configuration an unknown code keeps the chip Unhealthy while
	 * it lasts, as before the policy. */
	struct fault_step s = step1(0, UNKNOWN);
	assert_int_equal(s.level, FAULT_LEVEL_SEPARATE_NPU);
	assert_false(s.healthy);
	assert_false(s.separated);
	assert_decision(&s, 0, FAULT_DECISION_LEVEL, UNKNOWN, FAULT_LEVEL_SEPARATE_NPU, FAULT_RULE_DEFAULT_LEVEL);
	assert_true(clean(1).healthy);

	/* DCMI health 2 or 3 without a code: the default level, code 0. */
	s = step_health(2, 3, 0, NULL);
	assert_false(s.healthy);
	assert_int_equal(s.code, 0);
	assert_int_equal(s.rule, FAULT_RULE_DCMI_HEALTH);
	assert_decision(&s, 0, FAULT_DECISION_LEVEL, 0, FAULT_LEVEL_SEPARATE_NPU, FAULT_RULE_DCMI_HEALTH);
	assert_true(step_health(3, 1, 0, NULL).healthy);
	assert_false(step_health(4, 2, 0, NULL).healthy);

	/* With codes, the codes decide, whatever the health: a NotHandle code
	 * keeps a chip at health 2 in service; SubHealth at health 1 too. */
	s = step1(5, LINK_DOWN);
	assert_true(s.healthy);
	assert_int_equal(s.level, FAULT_LEVEL_NOT_HANDLE);
	s = step_health(6, 1, 1, &(uint32_t){ SUBHEALTH });
	assert_true(s.healthy);
	assert_int_equal(s.level, FAULT_LEVEL_SUB_HEALTH);
	assert_decision(&s, 0, FAULT_DECISION_LEVEL, SUBHEALTH, FAULT_LEVEL_SUB_HEALTH, FAULT_RULE_CODE_TABLE);

	/* The most severe code wins; zeros and repeats are skipped. */
	const uint32_t codes[] = { SUBHEALTH, 0, HBM_ECC, HBM_ROWS, HBM_ECC, 0 };
	s = step_health(7, 3, ELEMENTSOF(codes), codes);
	assert_int_equal(s.level, FAULT_LEVEL_SEPARATE_NPU);
	assert_int_equal(s.code, HBM_ROWS);
	assert_int_equal(s.n_onsets, 2); /* SUBHEALTH was there already */

	/* A default level of NotHandleFault keeps unknown codes in service. */
	fault_state_init(&chip);
	cfg.default_level = FAULT_LEVEL_NOT_HANDLE;
	assert_true(step1(10, UNKNOWN).healthy);
	assert_true(step_health(11, 3, 0, NULL).healthy);
}

/* 1,000 flaps, 100 ms apart: without a hold the kubelet sees every one
 * (2,000 changes, the old behaviour); with a 5 s hold it sees the chip go
 * Unhealthy once and come back once, 5 s after the last flap. */
static void test_flap_damping(void **state)
{
	(void)state;
	for (int pass = 0; pass < 2; pass++) {
		cfg.recovery_hold_ms = pass ? 5 * SECOND : 0;
		fault_state_init(&chip);
		bool healthy = true;
		unsigned changes = 0, decisions = 0, onsets = 0;
		int64_t now = 0;
		for (int i = 0; i < 1000; i++) {
			struct fault_step s = step1(now, HBM_ECC);
			changes += s.healthy != healthy;
			healthy = s.healthy;
			decisions += (unsigned)s.n_decisions;
			onsets += (unsigned)s.n_onsets;
			now += 50;
			s = clean(now);
			changes += s.healthy != healthy;
			healthy = s.healthy;
			decisions += (unsigned)s.n_decisions;
			now += 50;
		}
		assert_int_equal(onsets, 1000); /* every onset is counted */
		if (!pass) {
			assert_int_equal(changes, 2000);
			assert_int_equal(decisions, 2000);
			assert_true(healthy);
			continue;
		}
		assert_int_equal(changes, 1);
		assert_int_equal(decisions, 1);
		assert_false(healthy);
		/* The last clean step was at now - 50: the hold ends 5 s after it. */
		struct fault_step s = clean(now - 50 + 5 * SECOND - 1);
		assert_false(s.healthy);
		assert_true(s.holding);
		assert_int_equal(s.level, FAULT_LEVEL_RESTART_BUSINESS);
		s = clean(now - 50 + 5 * SECOND);
		assert_true(s.healthy);
		assert_false(s.holding);
		assert_true(s.changed);
		assert_int_equal(s.n_decisions, 1);
		assert_decision(&s, 0, FAULT_DECISION_LEVEL, HBM_ECC, FAULT_LEVEL_NONE, FAULT_RULE_RECOVERY_HOLD);
	}

	/* The hold damps a fall between levels too, and a rise ends it. */
	cfg.recovery_hold_ms = 5 * SECOND;
	fault_state_init(&chip);
	const uint32_t both[] = { HBM_ECC, HBM_ROWS };
	struct fault_step s = step_health(0, 3, 2, both);
	assert_int_equal(s.level, FAULT_LEVEL_SEPARATE_NPU);
	s = step1(1 * SECOND, HBM_ECC);
	assert_int_equal(s.level, FAULT_LEVEL_SEPARATE_NPU);
	assert_true(s.holding);
	s = step1(6 * SECOND, HBM_ECC);
	assert_int_equal(s.level, FAULT_LEVEL_RESTART_BUSINESS);
	assert_decision(&s, 0, FAULT_DECISION_LEVEL, HBM_ROWS, FAULT_LEVEL_RESTART_BUSINESS, FAULT_RULE_RECOVERY_HOLD);
	/* A time before the last step counts as the last step's. */
	s = clean(1 * SECOND);
	assert_true(s.holding);
	s = clean(10 * SECOND);
	assert_true(s.holding);
	s = clean(11 * SECOND);
	assert_true(s.healthy);
}

/* Frequency: onsets, not steps, count; within the window only; afresh
 * after the rule fired; the escalation holds for the window by default. */
static void test_frequency(void **state)
{
	(void)state;
	const uint32_t codes[] = { HBM_ECC };
	assert_int_equal(fault_policy_config_add_frequency(&cfg, codes, 1, false, 3, 60 * SECOND,
							   FAULT_LEVEL_PRE_SEPARATE_NPU, 0),
			 0);

	/* A fault lasting 100 polls is one onset. */
	for (int i = 0; i < 100; i++)
		assert_int_equal(step1(i, HBM_ECC).level, FAULT_LEVEL_RESTART_BUSINESS);
	clean(100);
	/* Two more onsets, the first of the three now out of the window. */
	step1(61 * SECOND, HBM_ECC);
	clean(61 * SECOND + 1);
	struct fault_step s = step1(62 * SECOND, HBM_ECC);
	assert_int_equal(s.level, FAULT_LEVEL_RESTART_BUSINESS);
	assert_int_equal(s.n_decisions, 1);
	clean(62 * SECOND + 1);
	/* The third within 60 s escalates. */
	s = step1(63 * SECOND, HBM_ECC);
	assert_int_equal(s.level, FAULT_LEVEL_PRE_SEPARATE_NPU);
	assert_true(s.pods_may_finish);
	assert_false(s.healthy);
	assert_int_equal(s.rule, FAULT_RULE_FREQUENCY);
	assert_int_equal(s.n_decisions, 1);
	assert_decision(&s, 0, FAULT_DECISION_ESCALATED, HBM_ECC, FAULT_LEVEL_PRE_SEPARATE_NPU, FAULT_RULE_FREQUENCY);

	/* It holds after the fault cleared, and a fourth onset neither fires
	 * again (the count starts afresh) nor resets anything but the wait. */
	s = clean(64 * SECOND);
	assert_int_equal(s.level, FAULT_LEVEL_PRE_SEPARATE_NPU);
	assert_int_equal(s.n_decisions, 0);
	s = step1(65 * SECOND, HBM_ECC);
	assert_int_equal(s.n_decisions, 0);
	s = clean(66 * SECOND);
	/* It ends once the code stayed away for the window (60 s), at once. */
	s = clean(66 * SECOND + 60 * SECOND - 1);
	assert_int_equal(s.level, FAULT_LEVEL_PRE_SEPARATE_NPU);
	s = clean(66 * SECOND + 60 * SECOND);
	assert_int_equal(s.level, FAULT_LEVEL_NONE);
	assert_true(s.healthy);
	assert_int_equal(s.n_decisions, 1);
	assert_decision(&s, 0, FAULT_DECISION_ESCALATION_ENDED, HBM_ECC, FAULT_LEVEL_NONE, FAULT_RULE_FREQUENCY);

	/* Other codes do not count for this rule; "*" counts every code. */
	fault_state_init(&chip);
	for (int i = 0; i < 5; i++) {
		step1(i * 2, AIC_ECC);
		s = clean(i * 2 + 1);
	}
	assert_int_equal(s.level, FAULT_LEVEL_NONE);
	assert_int_equal(fault_policy_config_add_frequency(&cfg, NULL, 0, true, 2, MINUTE, FAULT_LEVEL_SEPARATE_NPU,
							   10 * SECOND),
			 0);
	fault_state_init(&chip);
	step1(0, LINK_DOWN);
	clean(1);
	s = step1(2, LINK_DOWN);
	assert_int_equal(s.level, FAULT_LEVEL_SEPARATE_NPU);
	assert_decision(&s, 0, FAULT_DECISION_ESCALATED, LINK_DOWN, FAULT_LEVEL_SEPARATE_NPU, FAULT_RULE_FREQUENCY);
	/* Its own release window ends it: 10 s after the code left. */
	clean(3);
	assert_int_equal(clean(3 + 10 * SECOND - 1).level, FAULT_LEVEL_SEPARATE_NPU);
	assert_int_equal(clean(3 + 10 * SECOND).level, FAULT_LEVEL_NONE);
}

/* Two rules on one code: the first escalation does not stop the second
 * from counting. */
static void test_frequency_two_rules(void **state)
{
	(void)state;
	const uint32_t codes[] = { HBM_ECC };
	assert_int_equal(fault_policy_config_add_frequency(&cfg, codes, 1, false, 2, 3600 * SECOND,
							   FAULT_LEVEL_PRE_SEPARATE_NPU, 0),
			 0);
	assert_int_equal(fault_policy_config_add_frequency(&cfg, codes, 1, false, 5, 3600 * SECOND,
							   FAULT_LEVEL_MANUALLY_SEPARATE_NPU, 0),
			 0);
	unsigned escalated = 0, separated = 0;
	struct fault_step s;
	for (int i = 0; i < 5; i++) {
		s = step1(i * MINUTE, HBM_ECC);
		for (size_t d = 0; d < s.n_decisions; d++) {
			escalated += s.decisions[d].kind == FAULT_DECISION_ESCALATED;
			separated += s.decisions[d].kind == FAULT_DECISION_SEPARATED;
		}
		clean(i * MINUTE + SECOND);
	}
	assert_int_equal(escalated, 1);
	assert_int_equal(separated, 1);
	assert_decision(&s, 0, FAULT_DECISION_SEPARATED, HBM_ECC, FAULT_LEVEL_MANUALLY_SEPARATE_NPU,
			FAULT_RULE_FREQUENCY);
	assert_true(s.separated);
	/* Without a release window it stays separated for good. */
	s = clean(30 * 24 * 3600 * (int64_t)SECOND);
	assert_true(s.separated);
	assert_int_equal(s.level, FAULT_LEVEL_MANUALLY_SEPARATE_NPU);
	assert_int_equal(s.code, HBM_ECC);
	assert_int_equal(s.rule, FAULT_RULE_FREQUENCY);
}

/* Duration: a code present past the timeout escalates, until it stayed
 * away for the recovery time. */
static void test_duration(void **state)
{
	(void)state;
	const uint32_t codes[] = { LINK_DOWN };
	assert_int_equal(fault_policy_config_add_duration(&cfg, codes, 1, false, 20 * SECOND,
							  FAULT_LEVEL_PRE_SEPARATE_NPU, 60 * SECOND),
			 0);
	struct fault_step s = step1(0, LINK_DOWN);
	assert_true(s.healthy);
	assert_int_equal(s.level, FAULT_LEVEL_NOT_HANDLE);
	s = step1(20 * SECOND, LINK_DOWN);
	assert_true(s.healthy);
	assert_int_equal(s.n_decisions, 0);
	s = step1(20 * SECOND + 1, LINK_DOWN);
	assert_false(s.healthy);
	assert_true(s.pods_may_finish);
	assert_int_equal(s.n_decisions, 1);
	assert_decision(&s, 0, FAULT_DECISION_ESCALATED, LINK_DOWN, FAULT_LEVEL_PRE_SEPARATE_NPU, FAULT_RULE_DURATION);
	/* Once, however long it lasts. */
	s = step1(100 * SECOND, LINK_DOWN);
	assert_int_equal(s.n_decisions, 0);
	s = clean(101 * SECOND);
	assert_int_equal(s.level, FAULT_LEVEL_PRE_SEPARATE_NPU);
	/* Back before the recovery time: the wait starts again. */
	step1(150 * SECOND, LINK_DOWN);
	s = clean(151 * SECOND);
	assert_int_equal(clean(211 * SECOND - 1).level, FAULT_LEVEL_PRE_SEPARATE_NPU);
	s = clean(211 * SECOND);
	assert_true(s.healthy);
	assert_decision(&s, 0, FAULT_DECISION_ESCALATION_ENDED, LINK_DOWN, FAULT_LEVEL_NONE, FAULT_RULE_DURATION);

	/* A short fault never escalates. */
	fault_state_init(&chip);
	for (int i = 0; i < 100; i++) {
		step1(i * 30 * SECOND, LINK_DOWN);
		s = clean(i * 30 * SECOND + 10 * SECOND);
		assert_int_equal(s.n_decisions, 1); /* the fall back from NotHandleFault */
	}
	assert_true(s.healthy);

	/* "*" takes DCMI health without a code too. */
	assert_int_equal(fault_policy_config_add_duration(&cfg, NULL, 0, true, 0, FAULT_LEVEL_MANUALLY_SEPARATE_NPU, 0),
			 0);
	cfg.default_level = FAULT_LEVEL_NOT_HANDLE;
	fault_state_init(&chip);
	assert_true(step_health(0, 3, 0, NULL).healthy);
	s = step_health(1, 3, 0, NULL);
	assert_true(s.separated);
	assert_decision(&s, 0, FAULT_DECISION_SEPARATED, 0, FAULT_LEVEL_MANUALLY_SEPARATE_NPU, FAULT_RULE_DURATION);
}

/* A code a duration window names counts for frequency windows when it
 * outlasts the timeout, not when it begins: Huawei's published pair of
 * rules for a RoCE link (down 20 s: PreSeparateNPU; that 5 times a day:
 * ManuallySeparateNPU) leaves a link that blinks alone. */
static void test_duration_counts_for_frequency(void **state)
{
	(void)state;
	const uint32_t link[] = { LINK_DOWN };
	assert_int_equal(fault_policy_config_add_duration(&cfg, link, 1, false, 20 * SECOND,
							  FAULT_LEVEL_PRE_SEPARATE_NPU, 60 * SECOND),
			 0);
	assert_int_equal(fault_policy_config_add_frequency(&cfg, link, 1, false, 5, 24 * 3600 * SECOND,
							   FAULT_LEVEL_MANUALLY_SEPARATE_NPU, 0),
			 0);
	struct fault_step s;
	int64_t now = 0;
	/* 50 short drops: never separated, never out of service. */
	for (int i = 0; i < 50; i++, now += MINUTE) {
		s = step1(now, LINK_DOWN);
		assert_true(s.healthy);
		s = clean(now + SECOND);
		assert_true(s.healthy);
	}
	/* 5 long ones: each escalates, the fifth separates. */
	unsigned escalated = 0;
	for (int i = 0; i < 5; i++, now += 10 * MINUTE) {
		step1(now, LINK_DOWN);
		s = step1(now + 21 * SECOND, LINK_DOWN);
		for (size_t d = 0; d < s.n_decisions; d++)
			escalated += s.decisions[d].kind == FAULT_DECISION_ESCALATED;
		/* Once per presence, however long it lasts. */
		assert_int_equal(step1(now + 40 * SECOND, LINK_DOWN).n_decisions, 0);
		clean(now + 41 * SECOND);
		/* The escalation ends 60 s after the link came back. */
		if (i < 4)
			assert_int_equal(clean(now + 101 * SECOND).level, FAULT_LEVEL_NONE);
	}
	assert_int_equal(escalated, 5);
	assert_true(s.separated);
	assert_decision(&s, 1, FAULT_DECISION_SEPARATED, LINK_DOWN, FAULT_LEVEL_MANUALLY_SEPARATE_NPU,
			FAULT_RULE_FREQUENCY);
	assert_true(clean(now + 30 * 24 * 3600 * (int64_t)SECOND).separated);
}

static void test_code_parse(void **state)
{
	(void)state;
	uint32_t code = 7;
	assert_int_equal(fault_code_parse("80E01801", &code), 0);
	assert_int_equal(code, 0x80E01801u);
	assert_int_equal(fault_code_parse("0x80e01801", &code), 0);
	assert_int_equal(code, 0x80E01801u);
	assert_int_equal(fault_code_parse("0X1", &code), 0);
	assert_int_equal(code, 1);
	assert_int_equal(fault_code_parse("FFFFFFFF", &code), 0);
	assert_int_equal(code, 0xFFFFFFFFu);
	code = 7;
	const char *bad[] = { "", "0", "0x", "00000000", "100000000", "0x0x1", "80E0180G", " 80E01801", "80E01801 ",
			      "-1", "+1", "1e3.0" };
	for (size_t i = 0; i < ELEMENTSOF(bad); i++)
		if (fault_code_parse(bad[i], &code) != -EINVAL)
			fail_msg("'%s' was taken", bad[i]);
	assert_int_equal(fault_code_parse(NULL, &code), -EINVAL);
	assert_int_equal(code, 7);
}

/* Separation: by the table, by a window or by an operator; released by an
 * operator or by the release window, which restarts when the code returns. */
static void test_separation_and_release(void **state)
{
	(void)state;
	assert_int_equal(fault_policy_release(&chip, 0), -ENOENT);
	assert_int_equal(fault_policy_config_set_code(&cfg, HBM_ROWS, FAULT_LEVEL_MANUALLY_SEPARATE_NPU), 0);
	struct fault_step s = step1(0, HBM_ROWS);
	assert_true(s.separated);
	assert_false(s.healthy);
	s = clean(MINUTE);
	assert_true(s.separated);

	/* An operator's release: at once, whatever the hold. */
	cfg.recovery_hold_ms = MINUTE;
	assert_int_equal(fault_policy_release(&chip, 2 * MINUTE), 0);
	assert_int_equal(fault_policy_release(&chip, 2 * MINUTE), -ENOENT);
	s = clean(2 * MINUTE);
	assert_true(s.healthy);
	assert_false(s.separated);
	assert_int_equal(s.level, FAULT_LEVEL_NONE);
	assert_int_equal(s.n_decisions, 1);
	assert_decision(&s, 0, FAULT_DECISION_RELEASED, HBM_ROWS, FAULT_LEVEL_NONE, FAULT_RULE_RELEASE);
	assert_string_equal(s.decisions[0].hint, "released by an operator");

	/* Released while the fault is still there: separated again. */
	step1(3 * MINUTE, HBM_ROWS);
	assert_int_equal(fault_policy_release(&chip, 4 * MINUTE), 0);
	s = step1(4 * MINUTE, HBM_ROWS);
	assert_true(s.separated);
	assert_int_equal(s.n_decisions, 2);
	assert_decision(&s, 0, FAULT_DECISION_RELEASED, HBM_ROWS, FAULT_LEVEL_MANUALLY_SEPARATE_NPU, FAULT_RULE_RELEASE);
	assert_decision(&s, 1, FAULT_DECISION_SEPARATED, HBM_ROWS, FAULT_LEVEL_MANUALLY_SEPARATE_NPU,
			FAULT_RULE_CODE_TABLE);

	/* The release window: 10 minutes after the code left, restarted when it
	 * comes back meanwhile. */
	cfg.release_window_ms = 10 * MINUTE;
	s = clean(5 * MINUTE);
	assert_true(s.separated);
	step1(9 * MINUTE, HBM_ROWS);
	clean(10 * MINUTE);
	assert_true(clean(20 * MINUTE - 1).separated);
	s = clean(20 * MINUTE);
	assert_false(s.separated);
	assert_true(s.healthy);
	assert_decision(&s, 0, FAULT_DECISION_RELEASED, HBM_ROWS, FAULT_LEVEL_NONE, FAULT_RULE_RELEASE_WINDOW);

	/* An operator's separation, or one restored: the next step reports it. */
	assert_int_equal(fault_policy_separate(&chip, HBM_ECC, 21 * MINUTE), 0);
	assert_int_equal(fault_policy_separate(&chip, HBM_ECC, 21 * MINUTE), -EALREADY);
	s = clean(21 * MINUTE);
	assert_true(s.separated);
	assert_false(s.healthy);
	assert_int_equal(s.rule, FAULT_RULE_MANUAL_SEPARATION);
	assert_decision(&s, 0, FAULT_DECISION_LEVEL, HBM_ECC, FAULT_LEVEL_MANUALLY_SEPARATE_NPU,
			FAULT_RULE_MANUAL_SEPARATION);
	/* The configured release window applies to it. */
	assert_true(clean(31 * MINUTE - 1).separated);
	assert_false(clean(31 * MINUTE).separated);

	/* A frequency rule's own release window wins over the configured one. */
	const uint32_t codes[] = { AIC_ECC };
	assert_int_equal(fault_policy_config_add_frequency(&cfg, codes, 1, false, 1, MINUTE,
							   FAULT_LEVEL_MANUALLY_SEPARATE_NPU, 2 * MINUTE),
			 0);
	s = step1(40 * MINUTE, AIC_ECC);
	assert_true(s.separated);
	assert_decision(&s, 0, FAULT_DECISION_SEPARATED, AIC_ECC, FAULT_LEVEL_MANUALLY_SEPARATE_NPU,
			FAULT_RULE_FREQUENCY);
	clean(41 * MINUTE);
	assert_false(clean(43 * MINUTE).separated);

	/* A release ends escalations and forgets the onsets counted. */
	const uint32_t ecc[] = { HBM_ECC };
	assert_int_equal(fault_policy_config_add_frequency(&cfg, ecc, 1, false, 2, MINUTE, FAULT_LEVEL_SEPARATE_NPU, 0),
			 0);
	step1(50 * MINUTE, HBM_ECC);
	clean(50 * MINUTE + 1);
	assert_int_equal(step1(50 * MINUTE + 2, HBM_ECC).level, FAULT_LEVEL_SEPARATE_NPU);
	clean(50 * MINUTE + 3);
	assert_int_equal(fault_policy_release(&chip, 50 * MINUTE + 4), 0);
	s = clean(50 * MINUTE + 5);
	assert_true(s.healthy);
	assert_decision(&s, 0, FAULT_DECISION_RELEASED, HBM_ECC, FAULT_LEVEL_NONE, FAULT_RULE_RELEASE);
	assert_int_equal(step1(50 * MINUTE + 6, HBM_ECC).level, FAULT_LEVEL_RESTART_BUSINESS);
}

static void test_config_bounds(void **state)
{
	(void)state;
	/* The operator's table: 4096 codes, then no more; bad entries refused. */
	for (uint32_t i = 0; i < FAULT_POLICY_MAX_CODES; i++)
		assert_int_equal(fault_policy_config_set_code(&cfg, 0x90000000u + i * 7u, FAULT_LEVEL_RESTART_NPU), 0);
	assert_int_equal(cfg.n_codes, FAULT_POLICY_MAX_CODES);
	assert_int_equal(fault_policy_config_set_code(&cfg, 0x70000000u, FAULT_LEVEL_RESTART_NPU), -E2BIG);
	assert_int_equal(fault_policy_config_set_code(&cfg, 0x90000007u, FAULT_LEVEL_NOT_HANDLE), 0);
	assert_int_equal(fault_policy_code_level(&cfg, 0x90000007u, NULL), FAULT_LEVEL_NOT_HANDLE);
	for (size_t i = 1; i < cfg.n_codes; i++)
		assert_true(cfg.codes[i - 1].code < cfg.codes[i].code);
	assert_int_equal(fault_policy_config_set_code(&cfg, 0, FAULT_LEVEL_RESTART_NPU), -EINVAL);
	assert_int_equal(fault_policy_config_set_code(&cfg, 1, FAULT_LEVEL_NONE), -EINVAL);
	assert_int_equal(fault_policy_config_set_code(&cfg, 1, FAULT_LEVEL_COUNT), -EINVAL);

	/* Windows: ranges, codes, counts. */
	fault_policy_config_init(&cfg);
	const uint32_t one[] = { 1 }, zero[] = { 0 };
	assert_int_equal(fault_policy_config_add_frequency(&cfg, one, 1, false, 0, MINUTE, FAULT_LEVEL_RESTART_NPU, 0),
			 -EINVAL);
	assert_int_equal(fault_policy_config_add_frequency(&cfg, one, 1, false, FAULT_POLICY_MAX_COUNT + 1, MINUTE,
							   FAULT_LEVEL_RESTART_NPU, 0),
			 -EINVAL);
	assert_int_equal(fault_policy_config_add_frequency(&cfg, one, 1, false, 1, 0, FAULT_LEVEL_RESTART_NPU, 0),
			 -EINVAL);
	assert_int_equal(fault_policy_config_add_frequency(&cfg, one, 1, false, 1, FAULT_POLICY_MAX_WINDOW_MS + 1,
							   FAULT_LEVEL_RESTART_NPU, 0),
			 -EINVAL);
	assert_int_equal(fault_policy_config_add_frequency(&cfg, one, 1, false, 1, MINUTE, FAULT_LEVEL_RESTART_NPU,
							   FAULT_POLICY_MAX_RELEASE_MS + 1),
			 -EINVAL);
	assert_int_equal(fault_policy_config_add_frequency(&cfg, zero, 1, false, 1, MINUTE, FAULT_LEVEL_RESTART_NPU, 0),
			 -EINVAL);
	assert_int_equal(fault_policy_config_add_frequency(&cfg, NULL, 0, false, 1, MINUTE, FAULT_LEVEL_RESTART_NPU, 0),
			 -EINVAL);
	assert_int_equal(fault_policy_config_add_frequency(&cfg, one, 1, false, 1, MINUTE, FAULT_LEVEL_NONE, 0),
			 -EINVAL);
	assert_int_equal(fault_policy_config_add_duration(&cfg, one, 1, false, -1, FAULT_LEVEL_RESTART_NPU, 0),
			 -EINVAL);
	assert_int_equal(fault_policy_config_add_duration(&cfg, one, 1, false, 0, FAULT_LEVEL_RESTART_NPU,
							  FAULT_POLICY_MAX_WINDOW_MS + 1),
			 -EINVAL);
	assert_int_equal(cfg.n_frequency + cfg.n_duration, 0);
	/* A rule's codes are kept sorted and each once. */
	const uint32_t dup[] = { 5, 3, 5, 4, 3 };
	assert_int_equal(fault_policy_config_add_duration(&cfg, dup, 5, false, 0, FAULT_LEVEL_RESTART_NPU, 0), 0);
	assert_int_equal(cfg.duration[0].n_codes, 3);
	assert_int_equal(cfg.n_rule_codes, 3);
	assert_int_equal(cfg.rule_codes[0], 3);
	assert_int_equal(cfg.rule_codes[2], 5);
	for (int i = 1; i < FAULT_POLICY_MAX_RULES; i++)
		assert_int_equal(fault_policy_config_add_duration(&cfg, one, 1, false, 0, FAULT_LEVEL_RESTART_NPU, 0),
				 0);
	assert_int_equal(fault_policy_config_add_duration(&cfg, one, 1, false, 0, FAULT_LEVEL_RESTART_NPU, 0), -E2BIG);
	/* The shared pool of the rules' codes. */
	static uint32_t many[FAULT_POLICY_MAX_RULE_CODES];
	for (uint32_t i = 0; i < FAULT_POLICY_MAX_RULE_CODES; i++)
		many[i] = i + 1;
	assert_int_equal(fault_policy_config_add_frequency(&cfg, many, FAULT_POLICY_MAX_RULE_CODES, false, 1, MINUTE,
							   FAULT_LEVEL_RESTART_NPU, 0),
			 -E2BIG);
	assert_int_equal(cfg.n_frequency, 0);

	/* Merge: the second's codes win, windows append, nothing on overflow. */
	static struct fault_policy_config a, b, saved;
	fault_policy_config_init(&a);
	fault_policy_config_init(&b);
	assert_int_equal(fault_policy_config_set_code(&a, HBM_ECC, FAULT_LEVEL_RESTART_NPU), 0);
	assert_int_equal(fault_policy_config_set_code(&a, AIC_ECC, FAULT_LEVEL_RESTART_NPU), 0);
	assert_int_equal(fault_policy_config_set_code(&b, HBM_ECC, FAULT_LEVEL_NOT_HANDLE), 0);
	const uint32_t x[] = { 7, 8 }, y[] = { 9 };
	assert_int_equal(fault_policy_config_add_frequency(&a, x, 2, false, 2, MINUTE, FAULT_LEVEL_RESTART_NPU, 0), 0);
	assert_int_equal(fault_policy_config_add_duration(&b, y, 1, false, 0, FAULT_LEVEL_SEPARATE_NPU, 0), 0);
	assert_int_equal(fault_policy_config_merge(&a, &b), 0);
	assert_int_equal(a.n_codes, 2);
	assert_int_equal(fault_policy_code_level(&a, HBM_ECC, NULL), FAULT_LEVEL_NOT_HANDLE);
	assert_int_equal(a.n_frequency, 1);
	assert_int_equal(a.n_duration, 1);
	assert_int_equal(a.rule_codes[a.duration[0].first_code], 9);
	for (int i = 1; i < FAULT_POLICY_MAX_RULES; i++)
		assert_int_equal(fault_policy_config_add_duration(&b, y, 1, false, 0, FAULT_LEVEL_SEPARATE_NPU, 0), 0);
	saved = a;
	assert_int_equal(fault_policy_config_merge(&a, &b), -E2BIG);
	assert_memory_equal(&a, &saved, sizeof(a));
}

static void test_state_bounds(void **state)
{
	(void)state;
	/* 20 codes at once: 16 followed, 4 judged by the table only, and a
	 * severe one among the 4 still counts. */
	uint32_t codes[200];
	for (uint32_t i = 0; i < 200; i++)
		codes[i] = LINK_DOWN + 0x100u * (i + 1); /* unknown: SeparateNPU by default */
	cfg.default_level = FAULT_LEVEL_NOT_HANDLE;
	assert_int_equal(fault_policy_config_set_code(&cfg, codes[19], FAULT_LEVEL_RESTART_NPU), 0);
	struct fault_step s = step_health(0, 2, 20, codes);
	assert_int_equal(s.n_onsets, FAULT_STATE_MAX_CODES);
	assert_int_equal(s.n_untracked, 4);
	assert_int_equal(s.level, FAULT_LEVEL_RESTART_NPU);
	assert_int_equal(s.code, codes[19]);

	/* Only the first 128 codes are judged. */
	fault_state_init(&chip);
	assert_int_equal(fault_policy_config_set_code(&cfg, codes[150], FAULT_LEVEL_SEPARATE_NPU), 0);
	s = step_health(1, 2, 200, codes);
	assert_int_equal(s.level, FAULT_LEVEL_RESTART_NPU);

	/* A new code takes the place of the one absent longest. */
	fault_state_init(&chip);
	for (uint32_t i = 0; i < FAULT_STATE_MAX_CODES + 4; i++) {
		s = step1(2 * i, codes[i]);
		assert_int_equal(s.n_onsets, 1);
		assert_int_equal(s.n_untracked, 0);
		clean(2 * i + 1);
	}

	/* The onsets kept per code: a ring of 32. */
	for (int i = 0; i < 100; i++) {
		step1(1000 + 2 * i, HBM_ECC);
		clean(1000 + 2 * i + 1);
	}
	for (size_t i = 0; i < FAULT_STATE_MAX_CODES; i++)
		if (chip.tracks[i].used && chip.tracks[i].code == HBM_ECC)
			assert_int_equal(chip.tracks[i].n_onsets, FAULT_ONSETS_KEPT);

	/* Escalations per chip and decisions per step are bounded: 12 codes
	 * each firing a window at once, and the level they raise. */
	fault_state_init(&chip);
	cfg.default_level = FAULT_LEVEL_RESTART_NPU;
	assert_int_equal(fault_policy_config_add_frequency(&cfg, NULL, 0, true, 1, MINUTE, FAULT_LEVEL_RESTART_REQUEST, 0),
			 0);
	s = step_health(10000, 2, 12, codes);
	assert_int_equal(s.n_decisions, FAULT_STEP_MAX_DECISIONS);
	assert_true(s.decisions_dropped > 0);
	size_t escalations = 0;
	for (size_t i = 0; i < FAULT_STATE_MAX_ESCALATIONS; i++)
		escalations += chip.escalations[i].used;
	assert_int_equal(escalations, FAULT_STATE_MAX_ESCALATIONS);

	/* Bad arguments. */
	const struct fault_input bad = { .codes = NULL, .n_codes = 1 };
	assert_int_equal(fault_policy_step(&cfg, &chip, &bad, 0, &s), -EINVAL);
	assert_int_equal(fault_policy_step(NULL, &chip, &bad, 0, &s), -EINVAL);
	assert_int_equal(fault_policy_release(NULL, 0), -EINVAL);
	assert_int_equal(fault_policy_separate(NULL, 0, 0), -EINVAL);
}

/* Two configurations say the same exactly when every setting, code and
 * window does. */
static void test_config_same(void **state)
{
	(void)state;
	struct fault_policy_config *a = malloc(sizeof(*a)), *b = malloc(sizeof(*b));
	assert_non_null(a);
	assert_non_null(b);
	fault_policy_config_init(a);
	fault_policy_config_init(b);
	assert_true(fault_policy_config_same(a, b));
	assert_int_equal(fault_policy_config_set_code(a, 0x80E01801, FAULT_LEVEL_RESTART_NPU), 0);
	assert_false(fault_policy_config_same(a, b));
	assert_int_equal(fault_policy_config_set_code(b, 0x80E01801, FAULT_LEVEL_RESTART_NPU), 0);
	assert_true(fault_policy_config_same(a, b));
	const uint32_t code = 0x80E01801;
	assert_int_equal(fault_policy_config_add_frequency(a, &code, 1, false, 2, 60000, FAULT_LEVEL_MANUALLY_SEPARATE_NPU,
							     0),
			 0);
	assert_false(fault_policy_config_same(a, b));
	assert_int_equal(fault_policy_config_add_frequency(b, &code, 1, false, 3, 60000, FAULT_LEVEL_MANUALLY_SEPARATE_NPU,
							     0),
			 0);
	assert_false(fault_policy_config_same(a, b)); /* the count differs */
	b->frequency[0].count = 2;
	assert_true(fault_policy_config_same(a, b));
	b->recovery_hold_ms = 0;
	assert_false(fault_policy_config_same(a, b));
	free(a);
	free(b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_config_same),
		cmocka_unit_test_setup(test_level_names, setup),
		cmocka_unit_test_setup(test_every_level, setup),
		cmocka_unit_test_setup(test_builtin_table, setup),
		cmocka_unit_test_setup(test_unknown_codes_and_dcmi_health, setup),
		cmocka_unit_test_setup(test_flap_damping, setup),
		cmocka_unit_test_setup(test_frequency, setup),
		cmocka_unit_test_setup(test_frequency_two_rules, setup),
		cmocka_unit_test_setup(test_duration, setup),
		cmocka_unit_test_setup(test_duration_counts_for_frequency, setup),
		cmocka_unit_test_setup(test_code_parse, setup),
		cmocka_unit_test_setup(test_separation_and_release, setup),
		cmocka_unit_test_setup(test_config_bounds, setup),
		cmocka_unit_test_setup(test_state_bounds, setup),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
