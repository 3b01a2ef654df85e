/* SPDX-License-Identifier: Apache-2.0 */
/* kubelet-sim's reader of CRI container logs: full and partial records per
 * stream, records that are not ones, the line limit, and the end of input. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "tools/kubelet-sim/crilog.h"

struct got {
	char text[8][128];
	char stream[8][8];
	bool cut[8];
	size_t lens[8];
	size_t n;
};

static void collect(void *ctx, const struct crilog_line *l)
{
	struct got *g = ctx;
	assert_true(g->n < 8);
	snprintf(g->text[g->n], sizeof(g->text[0]), "%.*s", (int)(l->len < 127 ? l->len : 127), l->text);
	snprintf(g->stream[g->n], sizeof(g->stream[0]), "%s", l->stream);
	g->cut[g->n] = l->cut;
	g->lens[g->n] = l->len;
	g->n++;
}

static struct got read_all(const char *s, size_t *ret_skipped)
{
	struct got g = { 0 };
	assert_int_equal(crilog_read(s, strlen(s), collect, &g, ret_skipped), 0);
	return g;
}

static void full_records(void **state)
{
	(void)state;
	size_t skipped;
	struct got g = read_all("2026-12-01T22:49:00.1Z stdout F hello world\n"
				"2026-12-01T22:49:00.2Z stderr F oops\n"
				"2026-12-01T22:49:00.3Z stdout F \n",
				&skipped);
	assert_int_equal(g.n, 3);
	assert_string_equal(g.text[0], "hello world");
	assert_string_equal(g.stream[0], "stdout");
	assert_string_equal(g.text[1], "oops");
	assert_string_equal(g.stream[1], "stderr");
	assert_int_equal(g.lens[2], 0); /* an empty line is a line */
	assert_int_equal(skipped, 0);
}

static void partial_records_join_per_stream(void **state)
{
	(void)state;
	size_t skipped;
	/* A stderr record between the two halves does not break the stdout line. */
	struct got g = read_all("t stdout P abc\n"
				"t stderr F err\n"
				"t stdout F def\n"
				"t stdout P tail without end",
				&skipped);
	assert_int_equal(g.n, 3);
	assert_string_equal(g.text[0], "err");
	assert_string_equal(g.text[1], "abcdef");
	assert_string_equal(g.stream[1], "stdout");
	/* What is still partial at the end is a line too. */
	assert_string_equal(g.text[2], "tail without end");
	assert_int_equal(skipped, 0);
}

static void tags_with_fields(void **state)
{
	(void)state;
	size_t skipped;
	struct got g = read_all("t stdout F:x one\nt stdout X two\nt stdout FF three\n", &skipped);
	assert_int_equal(g.n, 1);
	assert_string_equal(g.text[0], "one");
	assert_int_equal(skipped, 2);
}

static void not_records(void **state)
{
	(void)state;
	size_t skipped;
	struct got g = read_all("garbage\n stdout F no time\nt stdin F x\nt stdout\n\nt stdout F ok\n", &skipped);
	assert_int_equal(g.n, 1);
	assert_string_equal(g.text[0], "ok");
	assert_int_equal(skipped, 4); /* the empty line is not counted */
}

static void long_lines_are_cut(void **state)
{
	(void)state;
	size_t chunk = CRILOG_LINE_MAX / 2 + 10;
	size_t len = 3 * (chunk + 12);
	char *s = malloc(len + 1);
	assert_non_null(s);
	size_t off = 0;
	for (int i = 0; i < 3; i++) {
		off += (size_t)snprintf(s + off, len + 1 - off, "t stdout %c ", i < 2 ? 'P' : 'F');
		memset(s + off, 'a' + i, chunk);
		off += chunk;
		s[off++] = '\n';
	}
	struct got g = { 0 };
	size_t skipped;
	assert_int_equal(crilog_read(s, off, collect, &g, &skipped), 0);
	assert_int_equal(g.n, 1);
	assert_int_equal(g.lens[0], CRILOG_LINE_MAX);
	assert_true(g.cut[0]);
	free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(full_records),
		cmocka_unit_test(partial_records_join_per_stream),
		cmocka_unit_test(tags_with_fields),
		cmocka_unit_test(not_records),
		cmocka_unit_test(long_lines_are_cut),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
