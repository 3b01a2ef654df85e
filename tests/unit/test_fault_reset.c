/* SPDX-License-Identifier: Apache-2.0 */
/* The hot reset's guard without processes: off by default; only the levels
 * that ask for a reset; never while a container holds the chip or while
 * nobody knows who does; at most max_resets per window, then separation;
 * a failed call, a chip that stays away and a chip back with its fault;
 * each wait reported once. Time is explicit. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "fault/reset.h"

#define CODE 0x80E18005u /* HBMC parity: RestartNPU in the built-in table */
#define SECOND 1000

static struct fault_reset_config cfg;
static struct fault_reset_state chip;

static int setup(void **state)
{
	(void)state;
	fault_reset_config_init(&cfg);
	cfg.enabled = true;
	fault_reset_state_init(&chip);
	return 0;
}

/* A chip that answers and asks for a reset, held as given. */
static struct fault_reset_input asking(enum fault_reset_holders holders)
{
	return (struct fault_reset_input){
		.answered = true, .asks = true, .level = FAULT_LEVEL_RESTART_NPU, .code = CODE, .holders = holders,
	};
}

static const struct fault_reset_input away = { .answered = false };
static const struct fault_reset_input back_clean = { .answered = true, .holders = FAULT_RESET_FREE };

static struct fault_reset_step step(const struct fault_reset_input *in, int64_t now)
{
	struct fault_reset_step s;
	assert_int_equal(fault_reset_step(&cfg, &chip, in, now, &s), 0);
	return s;
}

static void called(bool ok, int64_t now, enum fault_reset_action want)
{
	struct fault_reset_step s;
	assert_int_equal(fault_reset_called(&chip, ok, now, &s), 0);
	assert_int_equal(s.action, want);
}

static void test_defaults_and_levels(void **state)
{
	(void)state;
	struct fault_reset_config c;
	fault_reset_config_init(&c);
	assert_false(c.enabled);
	assert_int_equal(c.max_resets, 3);
	assert_int_equal(c.timeout_ms, 120 * SECOND);
	assert_true(fault_reset_config_same(&c, &c));
	struct fault_reset_config d = c;
	d.enabled = true;
	assert_false(fault_reset_config_same(&c, &d));
	for (int l = FAULT_LEVEL_NONE; l < FAULT_LEVEL_COUNT; l++)
		assert_int_equal(fault_reset_level_asks((enum fault_level)l),
				 l == FAULT_LEVEL_RESTART_NPU || l == FAULT_LEVEL_FREE_RESTART_NPU);
	/* Off: nothing happens, whatever the chip asks. */
	cfg.enabled = false;
	struct fault_reset_input in = asking(FAULT_RESET_FREE);
	assert_int_equal(step(&in, 0).action, FAULT_RESET_IDLE);
	assert_false(fault_reset_busy(&chip));
	assert_int_equal(fault_reset_attempts(&cfg, &chip, 0), 0);
	/* A chip that does not ask, or is separated, neither. */
	cfg.enabled = true;
	in.asks = false;
	assert_int_equal(step(&in, 0).action, FAULT_RESET_IDLE);
	in = asking(FAULT_RESET_FREE);
	in.separated = true;
	assert_int_equal(step(&in, 0).action, FAULT_RESET_IDLE);
	assert_int_equal(fault_reset_step(NULL, &chip, &in, 0, &(struct fault_reset_step){ 0 }), -EINVAL);
	assert_int_equal(fault_reset_called(&chip, true, 0, &(struct fault_reset_step){ 0 }), -EINVAL);
	assert_string_equal(fault_reset_action_name(FAULT_RESET_TIMED_OUT), "timed out");
}

/* A free chip is reset; it goes away, comes back clean: succeeded. */
static void test_reset_that_works(void **state)
{
	(void)state;
	struct fault_reset_input in = asking(FAULT_RESET_FREE);
	struct fault_reset_step s = step(&in, 1000);
	assert_int_equal(s.action, FAULT_RESET_NOW);
	assert_true(s.news);
	assert_int_equal(s.attempt, 1);
	assert_int_equal(s.code, CODE);
	assert_int_equal(s.due_ms, 1000 + cfg.timeout_ms);
	assert_true(fault_reset_busy(&chip));
	/* While the call runs, nothing else happens. */
	assert_int_equal(step(&in, 1100).action, FAULT_RESET_IN_PROGRESS);
	called(true, 1200, FAULT_RESET_IN_PROGRESS);
	s = step(&away, 1300);
	assert_int_equal(s.action, FAULT_RESET_IN_PROGRESS);
	assert_false(s.news);
	assert_true(fault_reset_busy(&chip));
	s = step(&back_clean, 4000);
	assert_int_equal(s.action, FAULT_RESET_SUCCEEDED);
	assert_true(s.news);
	assert_int_equal(s.elapsed_ms, 3000);
	assert_int_equal(s.attempt, 1);
	assert_false(fault_reset_busy(&chip));
	/* The level held by the recovery hold asks nothing: the chip is left alone. */
	assert_int_equal(step(&back_clean, 5000).action, FAULT_RESET_IDLE);
	assert_int_equal(fault_reset_attempts(&cfg, &chip, 5000), 1);
}

/* Back with its fault: a failed reset, then reset again until the
 * window's resets are spent, then separated. */
static void test_still_faulty_until_spent(void **state)
{
	(void)state;
	struct fault_reset_input in = asking(FAULT_RESET_FREE);
	int64_t t = 0;
	for (uint32_t k = 1; k <= cfg.max_resets; k++) {
		struct fault_reset_step s = step(&in, t);
		assert_int_equal(s.action, FAULT_RESET_NOW);
		assert_int_equal(s.attempt, k);
		called(true, t + 10, FAULT_RESET_IN_PROGRESS);
		assert_int_equal(step(&away, t + 20).action, FAULT_RESET_IN_PROGRESS);
		s = step(&in, t + 30);
		assert_int_equal(s.action, FAULT_RESET_BACK_FAULTY);
		assert_int_equal(s.attempt, k);
		t += 60 * SECOND;
	}
	struct fault_reset_step s = step(&in, t);
	assert_int_equal(s.action, FAULT_RESET_SEPARATE);
	assert_true(s.news);
	assert_int_equal(s.attempt, cfg.max_resets);
	/* A day later the window is empty again. */
	assert_int_equal(step(&in, t + cfg.window_ms).action, FAULT_RESET_NOW);
}

/* A chip answering at once, never seen away, may not have gone down yet:
 * its answer counts only after the settle time. */
static void test_answer_right_after_the_call(void **state)
{
	(void)state;
	struct fault_reset_input in = asking(FAULT_RESET_FREE);
	assert_int_equal(step(&in, 0).action, FAULT_RESET_NOW);
	called(true, 10, FAULT_RESET_IN_PROGRESS);
	assert_int_equal(step(&in, 20).action, FAULT_RESET_IN_PROGRESS);
	assert_int_equal(step(&in, FAULT_RESET_SETTLE_MS).action, FAULT_RESET_BACK_FAULTY);
	/* Clean at once is no success yet either: the chip stays out. */
	assert_int_equal(step(&in, 10 * FAULT_RESET_SETTLE_MS).action, FAULT_RESET_NOW);
	called(true, 10 * FAULT_RESET_SETTLE_MS, FAULT_RESET_IN_PROGRESS);
	assert_int_equal(step(&back_clean, 10 * FAULT_RESET_SETTLE_MS + 10).action, FAULT_RESET_IN_PROGRESS);
	assert_true(fault_reset_busy(&chip));
	assert_int_equal(step(&back_clean, 11 * FAULT_RESET_SETTLE_MS).action, FAULT_RESET_SUCCEEDED);
}

static void test_call_fails(void **state)
{
	(void)state;
	struct fault_reset_input in = asking(FAULT_RESET_FREE);
	assert_int_equal(step(&in, 0).action, FAULT_RESET_NOW);
	called(false, 50, FAULT_RESET_FAILED);
	assert_false(fault_reset_busy(&chip));
	assert_int_equal(fault_reset_called(&chip, true, 60, &(struct fault_reset_step){ 0 }), -EINVAL);
}

/* Never back, or a call that never returns: timed out at the deadline. */
static void test_timeouts(void **state)
{
	(void)state;
	struct fault_reset_input in = asking(FAULT_RESET_FREE);
	assert_int_equal(step(&in, 0).action, FAULT_RESET_NOW);
	called(true, 10, FAULT_RESET_IN_PROGRESS);
	assert_int_equal(step(&away, cfg.timeout_ms - 1).action, FAULT_RESET_IN_PROGRESS);
	struct fault_reset_step s = step(&away, cfg.timeout_ms);
	assert_int_equal(s.action, FAULT_RESET_TIMED_OUT);
	assert_true(s.news);
	assert_int_equal(s.elapsed_ms, cfg.timeout_ms);
	assert_false(fault_reset_busy(&chip));

	int64_t t = 10 * cfg.timeout_ms;
	assert_int_equal(step(&in, t).action, FAULT_RESET_NOW);
	assert_int_equal(step(&in, t + cfg.timeout_ms).action, FAULT_RESET_TIMED_OUT);
}

/* Held, or nobody knows: no reset, each wait said once; free: reset. */
static void test_holders(void **state)
{
	(void)state;
	struct fault_reset_input in = asking(FAULT_RESET_HELD);
	struct fault_reset_step s = step(&in, 0);
	assert_int_equal(s.action, FAULT_RESET_WAIT_HOLDERS);
	assert_true(s.news);
	assert_int_equal(chip.asks_since_ms, 0);
	s = step(&in, 1000);
	assert_int_equal(s.action, FAULT_RESET_WAIT_HOLDERS);
	assert_false(s.news);
	in.holders = FAULT_RESET_UNAVAILABLE;
	s = step(&in, 2000);
	assert_int_equal(s.action, FAULT_RESET_NO_LIST);
	assert_true(s.news);
	assert_false(step(&in, 3000).news);
	in.holders = FAULT_RESET_LISTING;
	s = step(&in, 4000);
	assert_int_equal(s.action, FAULT_RESET_WAIT_LIST);
	assert_false(s.news);
	assert_false(fault_reset_busy(&chip));
	assert_int_equal(chip.asks_since_ms, 0); /* it has asked since the first step */
	in.holders = FAULT_RESET_FREE;
	assert_int_equal(step(&in, 5000).action, FAULT_RESET_NOW);
	assert_int_equal(chip.asks_since_ms, -1);
	/* A chip that stops asking forgets its wait: the next one is news. */
	called(false, 5100, FAULT_RESET_FAILED);
	in.holders = FAULT_RESET_HELD;
	in.asks = false;
	assert_int_equal(step(&in, 6000).action, FAULT_RESET_IDLE);
	in.asks = true;
	assert_true(step(&in, 7000).news);
}

/* A process on a chip of the group, or a group that is unknown: no reset,
 * each said once; the group free, the chip is reset. */
static void test_processes_and_unknown_group(void **state)
{
	(void)state;
	struct fault_reset_input in = asking(FAULT_RESET_PROCESSES);
	struct fault_reset_step s = step(&in, 0);
	assert_int_equal(s.action, FAULT_RESET_WAIT_PROCESSES);
	assert_true(s.news);
	assert_false(step(&in, 1000).news);
	assert_false(fault_reset_busy(&chip));
	in.holders = FAULT_RESET_GROUP_UNKNOWN;
	s = step(&in, 2000);
	assert_int_equal(s.action, FAULT_RESET_NO_GROUP);
	assert_true(s.news);
	assert_false(step(&in, 3000).news);
	assert_int_equal(fault_reset_attempts(&cfg, &chip, 3000), 0);
	in.holders = FAULT_RESET_FREE;
	assert_int_equal(step(&in, 4000).action, FAULT_RESET_NOW);
	assert_string_equal(fault_reset_action_name(FAULT_RESET_WAIT_PROCESSES), "wait for processes");
	assert_string_equal(fault_reset_action_name(FAULT_RESET_NO_GROUP), "no group");
}

/* The ring of attempts stays bounded, however many resets run. */
static void test_attempts_bounded(void **state)
{
	(void)state;
	cfg.max_resets = FAULT_RESET_MAX_ATTEMPTS;
	cfg.window_ms = 10 * SECOND;
	struct fault_reset_input in = asking(FAULT_RESET_FREE);
	for (int64_t t = 0; t < 1000 * SECOND; t += SECOND) {
		struct fault_reset_step s = step(&in, t);
		if (s.action == FAULT_RESET_NOW)
			called(false, t, FAULT_RESET_FAILED);
		else
			assert_int_equal(s.action, FAULT_RESET_SEPARATE);
		assert_true(chip.n_attempts <= FAULT_RESET_MAX_ATTEMPTS);
		assert_true(fault_reset_attempts(&cfg, &chip, t) <= FAULT_RESET_MAX_ATTEMPTS);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_defaults_and_levels, setup),
		cmocka_unit_test_setup(test_reset_that_works, setup),
		cmocka_unit_test_setup(test_still_faulty_until_spent, setup),
		cmocka_unit_test_setup(test_answer_right_after_the_call, setup),
		cmocka_unit_test_setup(test_call_fails, setup),
		cmocka_unit_test_setup(test_timeouts, setup),
		cmocka_unit_test_setup(test_holders, setup),
		cmocka_unit_test_setup(test_processes_and_unknown_group, setup),
		cmocka_unit_test_setup(test_attempts_bounded, setup),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
