/* SPDX-License-Identifier: Apache-2.0 */
/* Background vendor calls (a chip reset): the caller does not wait, is woken
 * when the call returns, and takes its result; meanwhile the library is
 * busy for every other call; a call given up leaves the worker stuck in it,
 * as an overdue call does. The vendor function here blocks on a gate the
 * test opens, so nothing depends on timing. */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "base/wait.h"
#include "npu/vendor_call.h"

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond;
static bool gate_open, entered, woken, left;

struct arg {
	int in, out;
};

/* The vendor call: says it entered, waits for the gate, doubles in. */
static int gated(void *p)
{
	struct arg *a = p;
	pthread_mutex_lock(&lock);
	entered = true;
	pthread_cond_broadcast(&cond);
	while (!gate_open)
		pthread_cond_wait(&cond, &lock);
	left = true;
	pthread_cond_broadcast(&cond);
	pthread_mutex_unlock(&lock);
	a->out = a->in * 2;
	return 7;
}

static int quick(void *p)
{
	(void)p;
	return 1;
}

/* The worker's wake-up, under the guard's lock. */
static void on_done(void *ctx)
{
	(void)ctx;
	pthread_mutex_lock(&lock);
	woken = true;
	pthread_cond_broadcast(&cond);
	pthread_mutex_unlock(&lock);
}

/* Waits (up to 10 s) until *flag is set. */
static bool wait_for(const bool *flag)
{
	struct timespec until = deadline_after_ms(10000);
	pthread_mutex_lock(&lock);
	while (!*flag && pthread_cond_timedwait(&cond, &lock, &until) == 0) {
	}
	bool set = *flag;
	pthread_mutex_unlock(&lock);
	return set;
}

static void open_gate(void)
{
	pthread_mutex_lock(&lock);
	gate_open = true;
	pthread_cond_broadcast(&cond);
	pthread_mutex_unlock(&lock);
}

static int setup(void **state)
{
	(void)state;
	cond_init_monotonic(&cond);
	gate_open = entered = woken = left = false;
	return 0;
}

static void test_background_call(void **state)
{
	(void)state;
	struct vendor_guard *g;
	assert_int_equal(vendor_guard_new(1000, "test", &g), 0);
	struct arg a = { .in = 21 };
	int result = 0;
	assert_int_equal(vendor_call_take(g, false, &a, sizeof(a), &result), -ENOENT);
	assert_int_equal(vendor_call_start(g, "reset", 3, gated, &a, sizeof(a), on_done, NULL), 0);
	assert_true(wait_for(&entered));
	/* Running: busy for everything else, not yet taken. */
	assert_int_equal(vendor_call_take(g, false, &a, sizeof(a), &result), -EINPROGRESS);
	assert_int_equal(vendor_call_run(g, "health", 1, quick, &a, sizeof(a)), -EBUSY);
	assert_int_equal(vendor_call_start(g, "reset", 4, gated, &a, sizeof(a), on_done, NULL), -EBUSY);
	open_gate();
	assert_true(wait_for(&woken));
	/* Returned but not taken: still busy. */
	assert_int_equal(vendor_call_run(g, "health", 1, quick, &a, sizeof(a)), -EBUSY);
	assert_int_equal(vendor_call_take(g, false, &a, sizeof(a), &result), 0);
	assert_int_equal(result, 7);
	assert_int_equal(a.out, 42);
	/* Taken: the library answers again. */
	assert_int_equal(vendor_call_run(g, "health", 1, quick, &a, sizeof(a)), 1);
	assert_int_equal(vendor_call_take(g, false, &a, sizeof(a), &result), -ENOENT);
	assert_false(vendor_guard_free(g));
}

static void test_background_call_given_up(void **state)
{
	(void)state;
	struct vendor_guard *g;
	assert_int_equal(vendor_guard_new(1000, "test", &g), 0);
	struct arg a = { .in = 1 };
	int result = 0;
	assert_int_equal(vendor_call_start(g, "reset", 3, gated, &a, sizeof(a), on_done, NULL), 0);
	assert_true(wait_for(&entered));
	assert_int_equal(vendor_call_take(g, true, &a, sizeof(a), &result), -ETIMEDOUT);
	assert_int_equal(a.out, 0); /* never written back */
	/* Stuck: the same call on the same chip is overdue, others busy. */
	assert_int_equal(vendor_call_run(g, "reset", 3, quick, &a, sizeof(a)), -ETIMEDOUT);
	assert_int_equal(vendor_call_run(g, "health", 1, quick, &a, sizeof(a)), -EBUSY);
	assert_int_equal(vendor_call_take(g, false, &a, sizeof(a), &result), -ENOENT);
	/* Freed while stuck: the worker is left to end on its own, and its
	 * owner is not woken any more. */
	assert_true(vendor_guard_free(g));
	open_gate();
	assert_true(wait_for(&left));
	pthread_mutex_lock(&lock);
	assert_false(woken);
	pthread_mutex_unlock(&lock);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_background_call, setup),
		cmocka_unit_test_setup(test_background_call_given_up, setup),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
