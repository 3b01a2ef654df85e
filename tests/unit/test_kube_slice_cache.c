/* SPDX-License-Identifier: Apache-2.0 */
/* The watch's copy of the node's slices (kube/slice_cache.c), fed real
 * watch lines through the event reader: a streamed list is synced only by
 * the bookmark that ends its initial events, changes and deletions keep it
 * current, a write's answer goes in and the events older than it are
 * passed over until its echo, a new list starts from nothing, a bad
 * object or one slice too many leaves it as it was, and what it reads back
 * is what a list would say. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "kube/slice_cache.h"
#include "kube/watch.h"

/* A watch line about slice name at version rv, generation gen. */
static void slice_line(char *out, size_t size, const char *type, const char *name, const char *rv, int gen)
{
	snprintf(out, size,
		 "{\"type\":\"%s\",\"object\":{\"kind\":\"ResourceSlice\",\"metadata\":{\"name\":\"%s\",\"uid\":\"u-%s\","
		 "\"resourceVersion\":\"%s\"},\"spec\":{\"pool\":{\"generation\":%d}}}}",
		 type, name, name, rv, gen);
}

/* Parses line and applies it; returns what apply did. */
static int apply(struct kube_slice_cache *c, const char *line)
{
	struct kube_watch_event ev;
	json_object *root;
	char why[160];
	assert_int_equal(kube_watch_parse(line, strlen(line), &ev, &root, why, sizeof(why)), 0);
	int r = kube_slice_cache_apply(c, &ev, why, sizeof(why));
	if (r < 0)
		assert_true(why[0] != '\0');
	json_object_put(root);
	return r;
}

static const char END[] = "{\"type\":\"BOOKMARK\",\"object\":{\"kind\":\"ResourceSlice\",\"metadata\":{\"resourceVersion\":"
			  "\"40\",\"annotations\":{\"k8s.io/initial-events-end\":\"true\"}}}}";
static const char MARK[] = "{\"type\":\"BOOKMARK\",\"object\":{\"kind\":\"ResourceSlice\",\"metadata\":{\"resourceVersion\":"
			   "\"41\",\"annotations\":{\"k8s.io/initial-events-end\":\"false\"}}}}";

static void read_back(struct kube_slice_cache *c, struct kube_slice_list *list, size_t count)
{
	json_object *items = NULL;
	assert_int_equal(kube_slice_cache_read(c, list, &items), 0);
	assert_int_equal(list->count, count);
	assert_int_equal(json_object_array_length(items), count);
	json_object_put(items);
}

static void test_stream(void **state)
{
	(void)state;
	struct kube_slice_cache c;
	struct kube_slice_list list;
	json_object *items = NULL;
	char line[512];
	assert_int_equal(kube_slice_cache_init(&c), 0);
	assert_int_equal(kube_slice_cache_read(&c, &list, &items), -EAGAIN);

	slice_line(line, sizeof(line), "ADDED", "n-0", "31", 4);
	assert_int_equal(apply(&c, line), 0);
	slice_line(line, sizeof(line), "ADDED", "n-1", "32", 4);
	assert_int_equal(apply(&c, line), 0);
	/* A bookmark that is not the end, then the end: synced once. */
	assert_int_equal(apply(&c, MARK), 0);
	assert_int_equal(kube_slice_cache_read(&c, &list, &items), -EAGAIN);
	assert_int_equal(apply(&c, END), 1);
	assert_int_equal(apply(&c, END), 0);
	read_back(&c, &list, 2);
	assert_string_equal(list.resource_version, "40");
	assert_string_equal(list.items[0].meta.name, "n-0");
	assert_string_equal(list.items[1].meta.uid, "u-n-1");
	assert_int_equal(list.items[1].generation, 4);

	/* A change replaces, a deletion drops. */
	slice_line(line, sizeof(line), "MODIFIED", "n-0", "42", 5);
	assert_int_equal(apply(&c, line), 0);
	slice_line(line, sizeof(line), "DELETED", "n-1", "43", 5);
	assert_int_equal(apply(&c, line), 0);
	read_back(&c, &list, 1);
	assert_string_equal(list.items[0].meta.resource_version, "42");
	assert_int_equal(list.items[0].generation, 5);
	assert_string_equal(list.resource_version, "43");

	/* A write's answer; a deletion of the publisher's own. */
	json_object *answer = json_tokener_parse("{\"metadata\":{\"name\":\"n-2\",\"uid\":\"x\",\"resourceVersion\":\"50\"},"
						 "\"spec\":{\"pool\":{\"generation\":6}}}");
	assert_int_equal(kube_slice_cache_store(&c, answer, NULL, 0), 0);
	json_object_put(answer);
	read_back(&c, &list, 2);
	kube_slice_cache_forget(&c, "n-0");
	read_back(&c, &list, 1);
	assert_string_equal(list.items[0].meta.name, "n-2");
	/* The watch runs behind: events older than those writes (n-2 at 45,
	 * n-0 changed before its deletion) are passed over until each echo. */
	slice_line(line, sizeof(line), "ADDED", "n-2", "45", 5);
	assert_int_equal(apply(&c, line), 0);
	slice_line(line, sizeof(line), "MODIFIED", "n-0", "46", 5);
	assert_int_equal(apply(&c, line), 0);
	read_back(&c, &list, 1);
	assert_string_equal(list.items[0].meta.resource_version, "50");
	slice_line(line, sizeof(line), "MODIFIED", "n-2", "50", 6);
	assert_int_equal(apply(&c, line), 0);
	slice_line(line, sizeof(line), "DELETED", "n-0", "51", 5);
	assert_int_equal(apply(&c, line), 0);
	/* After the echoes, events are the news again. */
	slice_line(line, sizeof(line), "MODIFIED", "n-2", "55", 7);
	assert_int_equal(apply(&c, line), 0);
	slice_line(line, sizeof(line), "ADDED", "n-0", "56", 7);
	assert_int_equal(apply(&c, line), 0);
	read_back(&c, &list, 2);
	assert_string_equal(list.items[0].meta.name, "n-2");
	assert_string_equal(list.items[0].meta.resource_version, "55");
	assert_string_equal(list.items[1].meta.resource_version, "56");
	kube_slice_cache_forget(&c, "n-0");

	/* A new list: nothing until its end. */
	kube_slice_cache_restart(&c);
	assert_int_equal(kube_slice_cache_read(&c, &list, &items), -EAGAIN);
	assert_int_equal(apply(&c, END), 1);
	read_back(&c, &list, 0);
	kube_slice_cache_fini(&c);
}

/* What the server sends is checked before it is kept. */
static void test_refused(void **state)
{
	(void)state;
	struct kube_slice_cache c;
	struct kube_slice_list list;
	char line[512], why[160];
	assert_int_equal(kube_slice_cache_init(&c), 0);
	/* No generation: not a slice. */
	static const char bad[] = "{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"name\":\"n-9\",\"uid\":\"u\","
				  "\"resourceVersion\":\"3\"},\"spec\":{}}}";
	assert_int_equal(apply(&c, bad), -EBADMSG);
	/* Up to the bound, then one more name is refused; a known name is not. */
	for (int i = 0; i < KUBE_LIST_MAX_ITEMS; i++) {
		char name[16];
		snprintf(name, sizeof(name), "n-%d", i);
		slice_line(line, sizeof(line), "ADDED", name, "5", 1);
		assert_int_equal(apply(&c, line), 0);
	}
	slice_line(line, sizeof(line), "ADDED", "n-extra", "6", 1);
	assert_int_equal(apply(&c, line), -E2BIG);
	slice_line(line, sizeof(line), "MODIFIED", "n-3", "7", 2);
	assert_int_equal(apply(&c, line), 0);
	/* An ERROR is the watch's, not the cache's. */
	struct kube_watch_event ev = { .type = KUBE_WATCH_ERROR };
	assert_int_equal(kube_slice_cache_apply(&c, &ev, why, sizeof(why)), -EINVAL);
	assert_int_equal(apply(&c, END), 1);
	read_back(&c, &list, KUBE_LIST_MAX_ITEMS);
	for (size_t i = 0; i < list.count; i++)
		assert_true(strcmp(list.items[i].meta.name, "n-extra") != 0);
	kube_slice_cache_fini(&c);
}

/* The end of the initial events is the bookmark's annotation, exactly. */
static void test_end_bookmark(void **state)
{
	(void)state;
	struct kube_watch_event ev;
	json_object *root;
	char why[160];
	assert_int_equal(kube_watch_parse(END, strlen(END), &ev, &root, why, sizeof(why)), 0);
	assert_true(ev.initial_events_end);
	json_object_put(root);
	assert_int_equal(kube_watch_parse(MARK, strlen(MARK), &ev, &root, why, sizeof(why)), 0);
	assert_false(ev.initial_events_end);
	json_object_put(root);
	static const char odd[] = "{\"type\":\"BOOKMARK\",\"object\":{\"metadata\":{\"resourceVersion\":\"1\","
				  "\"annotations\":{\"k8s.io/initial-events-end\":true}}}}";
	assert_int_equal(kube_watch_parse(odd, strlen(odd), &ev, &root, why, sizeof(why)), 0);
	assert_false(ev.initial_events_end);
	json_object_put(root);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_stream),
		cmocka_unit_test(test_refused),
		cmocka_unit_test(test_end_bookmark),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
