/* SPDX-License-Identifier: Apache-2.0 */
/* The watch stream's splitter and event reader (kube/watch.c): events cut
 * anywhere across the transport's chunks, blank lines, an event above the
 * bound, lines that are not events, an event cut short at the end, and a
 * reader that ends the stream. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "kube/watch.h"

#define ADDED_1                                                                                                     \
	"{\"type\":\"ADDED\",\"object\":{\"kind\":\"ResourceSlice\",\"metadata\":{\"name\":\"n1-d-0\",\"uid\":\"u\"," \
	"\"resourceVersion\":\"218\"},\"spec\":{\"pool\":{\"generation\":3}}}}\n"
#define DELETED_1 "{\"type\":\"DELETED\",\"object\":{\"metadata\":{\"name\":\"n1-d-0\",\"resourceVersion\":\"219\"}}}\n"
#define BOOKMARK_1                                                                                                  \
	"{\"type\":\"BOOKMARK\",\"object\":{\"kind\":\"ResourceSlice\",\"metadata\":{\"resourceVersion\":\"230\"}}}\n"
#define GONE                                                                                                        \
	"{\"type\":\"ERROR\",\"object\":{\"kind\":\"Status\",\"status\":\"Failure\",\"message\":\"too old resource "  \
	"version: 215 (226)\",\"reason\":\"Expired\",\"code\":410}}\n"

/* What the reader saw, in order, as one line of text per event. */
struct seen {
	char text[1024];
	size_t events;
	int stop_at; /* the event (1-based) whose reader answers -EINTR; 0: none */
};

static int reader(void *ctx, const struct kube_watch_event *ev)
{
	static const char *const names[] = { "ADDED", "MODIFIED", "DELETED", "BOOKMARK", "ERROR" };
	struct seen *s = ctx;
	size_t n = strlen(s->text);
	snprintf(s->text + n, sizeof(s->text) - n, "%s %s %s %ld %s|", names[ev->type], ev->name, ev->resource_version,
		 ev->code, ev->message);
	assert_non_null(ev->object);
	return ++s->events == (size_t)s->stop_at ? -EINTR : 0;
}

/* Feeds text in chunks of step bytes; returns the first failure, or 0. */
static int feed(struct kube_watch_lines *w, const char *text, size_t step, struct seen *s, char *why, size_t size)
{
	size_t len = strlen(text);
	for (size_t at = 0; at < len; at += step) {
		int r = kube_watch_feed(w, text + at, len - at < step ? len - at : step, reader, s, why, size);
		if (r < 0)
			return r;
	}
	return kube_watch_end(w, why, size);
}

/* Every cut of the stream gives the same events as the whole at once. */
static void test_chunks(void **state)
{
	(void)state;
	static const char stream[] = ADDED_1 "\r\n  \n" DELETED_1 BOOKMARK_1 GONE;
	static const char want[] = "ADDED n1-d-0 218 0 |DELETED n1-d-0 219 0 |BOOKMARK  230 0 |"
				   "ERROR   410 too old resource version: 215 (226)|";
	for (size_t step = 1; step <= sizeof(stream); step++) {
		struct kube_watch_lines w;
		struct seen s = { .text = "" };
		char why[128] = "";
		kube_watch_lines_init(&w, 0);
		assert_int_equal(feed(&w, stream, step, &s, why, sizeof(why)), 0);
		assert_string_equal(s.text, want);
		kube_watch_lines_fini(&w);
	}
}

/* A line above the bound fails the stream, whole or in pieces, before it
 * is kept; one exactly at the bound passes. */
static void test_bound(void **state)
{
	(void)state;
	size_t max = strlen(ADDED_1);
	for (size_t step = 1; step <= max + 1; step += 7) {
		struct kube_watch_lines w;
		struct seen s = { .text = "" };
		char why[128] = "";
		kube_watch_lines_init(&w, max);
		assert_int_equal(feed(&w, ADDED_1 ADDED_1, step, &s, why, sizeof(why)), 0);
		assert_int_equal(s.events, 2);
		assert_int_equal(feed(&w, " " ADDED_1, step, &s, why, sizeof(why)), -EMSGSIZE);
		char want[64];
		snprintf(want, sizeof(want), "a watch event above %zu bytes", max);
		assert_string_equal(why, want);
		assert_int_equal(s.events, 2);
		assert_true(w.cap <= max);
		kube_watch_lines_fini(&w);
	}
	/* The default bound. */
	struct kube_watch_lines w;
	kube_watch_lines_init(&w, 0);
	assert_int_equal(w.max, KUBE_WATCH_EVENT_MAX);
	kube_watch_lines_fini(&w);
}

/* Lines that are not events: the stream fails saying what is wrong. */
static void test_garbage(void **state)
{
	(void)state;
	static const struct {
		const char *line, *why;
	} bad[] = {
		{ "garbage\n", "not JSON" },
		{ "[1,2]\n", "not a JSON object" },
		{ "{\"type\":\"ADDED\"} trailing\n", "text after the object" },
		{ "{\"object\":{}}\n", "without a known type" },
		{ "{\"type\":\"SHOUTED\",\"object\":{}}\n", "without a known type" },
		{ "{\"type\":7,\"object\":{}}\n", "without a known type" },
		{ "{\"type\":\"ADDED\"}\n", "ADDED without an object" },
		{ "{\"type\":\"ADDED\",\"object\":\"x\"}\n", "ADDED without an object" },
		{ "{\"type\":\"MODIFIED\",\"object\":{}}\n", "has no metadata" },
		{ "{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"name\":\"a\"}}}\n", "lacks its name or version" },
		{ "{\"type\":\"DELETED\",\"object\":{\"metadata\":{\"resourceVersion\":\"1\"}}}\n",
		  "lacks its name or version" },
		{ "{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"name\":1,\"resourceVersion\":\"1\"}}}\n",
		  "metadata.name is not a string" },
		{ "{\"type\":\"BOOKMARK\",\"object\":{\"metadata\":{}}}\n", "lacks its name or version" },
		{ "{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"name\":\"a\",\"resourceVersion\":\"1\"}}}{}\n",
		  "text after the object" },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct kube_watch_lines w;
		struct seen s = { .text = "" };
		char why[128] = "";
		kube_watch_lines_init(&w, 0);
		assert_int_equal(feed(&w, bad[i].line, 5, &s, why, sizeof(why)), -EBADMSG);
		if (!strstr(why, bad[i].why))
			fail_msg("%s: %s, not %s", bad[i].line, why, bad[i].why);
		assert_int_equal(s.events, 0);
		kube_watch_lines_fini(&w);
	}
	/* Too deep for the reader (KUBE_JSON_MAX_DEPTH). */
	char deep[256];
	int n = snprintf(deep, sizeof(deep), "{\"type\":\"ADDED\",\"object\":");
	memset(deep + n, '[', 40);
	snprintf(deep + n + 40, sizeof(deep) - (size_t)n - 40, "\n");
	struct kube_watch_lines w;
	struct seen s = { .text = "" };
	char why[128] = "";
	kube_watch_lines_init(&w, 0);
	assert_int_equal(feed(&w, deep, 16, &s, why, sizeof(why)), -EBADMSG);
	kube_watch_lines_fini(&w);
}

/* An event cut short by the end of the stream is an error; white space
 * after the last event is not. */
static void test_end(void **state)
{
	(void)state;
	struct kube_watch_lines w;
	struct seen s = { .text = "" };
	char why[128] = "";
	kube_watch_lines_init(&w, 0);
	assert_int_equal(feed(&w, ADDED_1 " \r\n\t", 9, &s, why, sizeof(why)), 0);
	assert_int_equal(s.events, 1);
	kube_watch_lines_fini(&w);
	kube_watch_lines_init(&w, 0);
	assert_int_equal(feed(&w, ADDED_1 "{\"type\":\"ADDED\",\"obj", 9, &s, why, sizeof(why)), -EBADMSG);
	assert_string_equal(why, "a watch event cut short at the watch's end");
	assert_int_equal(s.events, 2);
	kube_watch_lines_fini(&w);
}

/* The reader's own errno ends the stream: nothing after it is read. */
static void test_reader_stops(void **state)
{
	(void)state;
	struct kube_watch_lines w;
	struct seen s = { .text = "", .stop_at = 2 };
	char why[128] = "";
	kube_watch_lines_init(&w, 0);
	assert_int_equal(kube_watch_feed(&w, ADDED_1 DELETED_1 BOOKMARK_1, strlen(ADDED_1 DELETED_1 BOOKMARK_1), reader,
					 &s, why, sizeof(why)),
			 -EINTR);
	assert_int_equal(s.events, 2);
	assert_string_equal(why, "the watch's reader stopped it");
	kube_watch_lines_fini(&w);
}

/* An ERROR event's Status without a code or a message. */
static void test_bare_error(void **state)
{
	(void)state;
	struct kube_watch_event ev;
	json_object *root;
	char why[128];
	static const char line[] = "{\"type\":\"ERROR\",\"object\":{\"code\":-5}}";
	assert_int_equal(kube_watch_parse(line, strlen(line), &ev, &root, why, sizeof(why)), 0);
	assert_int_equal(ev.type, KUBE_WATCH_ERROR);
	assert_int_equal(ev.code, 0);
	assert_string_equal(ev.name, "");
	json_object_put(root);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_chunks),	 cmocka_unit_test(test_bound),	       cmocka_unit_test(test_garbage),
		cmocka_unit_test(test_end),	 cmocka_unit_test(test_reader_stops), cmocka_unit_test(test_bare_error),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
