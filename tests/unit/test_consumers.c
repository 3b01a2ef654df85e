/* SPDX-License-Identifier: Apache-2.0 */
/* The snapshot consumers: each refresh's news reaches every consumer, with
 * its own context, in the order they registered, and the list is bounded. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "daemon/consumers.h"

struct heard {
	int order[SNAPSHOT_CONSUMERS_MAX * 2];
	size_t count;
	const struct snapshot_news *news;
};

struct consumer {
	struct heard *heard;
	int id;
};

static void hear(void *ctx, const struct snapshot_news *news)
{
	struct consumer *c = ctx;
	c->heard->order[c->heard->count++] = c->id;
	c->heard->news = news;
}

static void test_order_and_news(void **state)
{
	(void)state;
	struct heard heard = { 0 };
	struct consumer a = { &heard, 1 }, b = { &heard, 2 }, c = { &heard, 3 };
	struct snapshot_consumers list = { 0 };
	assert_int_equal(snapshot_consumers_add(&list, hear, &b), 0);
	assert_int_equal(snapshot_consumers_add(&list, hear, &a), 0);
	assert_int_equal(snapshot_consumers_add(&list, hear, &c), 0);
	const struct snapshot_news news = { .changed = true };
	snapshot_consumers_hand(&list, &news);
	assert_int_equal(heard.count, 3);
	assert_int_equal(heard.order[0], 2);
	assert_int_equal(heard.order[1], 1);
	assert_int_equal(heard.order[2], 3);
	assert_ptr_equal(heard.news, &news);
	/* A second refresh: the same consumers again, nobody twice. */
	snapshot_consumers_hand(&list, &news);
	assert_int_equal(heard.count, 6);
	assert_int_equal(heard.order[3], 2);
}

static void test_bounded(void **state)
{
	(void)state;
	struct heard heard = { 0 };
	struct consumer c = { &heard, 7 };
	struct snapshot_consumers list = { 0 };
	for (size_t i = 0; i < SNAPSHOT_CONSUMERS_MAX; i++)
		assert_int_equal(snapshot_consumers_add(&list, hear, &c), 0);
	assert_int_equal(snapshot_consumers_add(&list, hear, &c), -ENOSPC);
	snapshot_consumers_hand(&list, &(struct snapshot_news){ 0 });
	assert_int_equal(heard.count, SNAPSHOT_CONSUMERS_MAX);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_order_and_news),
		cmocka_unit_test(test_bounded),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
