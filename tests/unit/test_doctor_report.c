/* SPDX-License-Identifier: Apache-2.0 */
/* ascend-doctor's report: verdict lines, fix lines, the worst verdict as
 * exit code, the JSON document, and the bounds. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <json-c/json.h>

#include "report.h"

static char *printed(const struct report *r)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	assert_non_null(f);
	report_print(r, f);
	fclose(f);
	return buf;
}

static void test_lines_and_exit_codes(void **state)
{
	(void)state;
	struct report r;
	report_init(&r);
	assert_int_equal(report_exit_code(&r), 0);
	assert_int_equal(report_add(&r, VERDICT_OK, "driver", "ignored for OK", "%s from %s", "24.1.rc1", "/x"), 0);
	assert_int_equal(report_exit_code(&r), 0);
	assert_int_equal(report_add(&r, VERDICT_WARN, "cann", "give --toolkit-path", "unknown"), 0);
	assert_int_equal(report_exit_code(&r), 1);
	assert_int_equal(report_add(&r, VERDICT_FAIL, "chip npu-3", "restart", "health %d", 2), 0);
	assert_int_equal(report_exit_code(&r), 2);
	assert_int_equal(report_add(&r, VERDICT_WARN, "late", NULL, "a WARN after a FAIL"), 0);
	assert_int_equal(report_exit_code(&r), 2);
	char *text = printed(&r);
	assert_string_equal(text, "OK driver: 24.1.rc1 from /x\n"
				  "WARN cann: unknown\n"
				  "  fix: give --toolkit-path\n"
				  "FAIL chip npu-3: health 2\n"
				  "  fix: restart\n"
				  "WARN late: a WARN after a FAIL\n"
				  "  fix: see docs/troubleshooting.md\n");
	free(text);
	report_clear(&r);
	report_clear(&r); /* twice is fine */
	report_clear(NULL);
}

static void test_json(void **state)
{
	(void)state;
	struct report r;
	report_init(&r);
	assert_int_equal(report_add(&r, VERDICT_OK, "kubelet", NULL, "ok"), 0);
	assert_int_equal(report_add(&r, VERDICT_WARN, "firmware", "fix \"it\"", "unknown"), 0);
	struct json_object *doc = report_to_json(&r, "node"), *v, *checks;
	assert_non_null(doc);
	assert_true(json_object_object_get_ex(doc, "command", &v));
	assert_string_equal(json_object_get_string(v), "node");
	assert_true(json_object_object_get_ex(doc, "verdict", &v));
	assert_string_equal(json_object_get_string(v), "WARN");
	assert_true(json_object_object_get_ex(doc, "exit_code", &v));
	assert_int_equal(json_object_get_int(v), 1);
	assert_true(json_object_object_get_ex(doc, "checks", &checks));
	assert_int_equal(json_object_array_length(checks), 2);
	struct json_object *first = json_object_array_get_idx(checks, 0), *second = json_object_array_get_idx(checks, 1);
	assert_false(json_object_object_get_ex(first, "fix", &v)); /* no fix for OK */
	assert_true(json_object_object_get_ex(second, "fix", &v));
	assert_string_equal(json_object_get_string(v), "fix \"it\"");
	assert_true(json_object_object_get_ex(second, "check", &v));
	assert_string_equal(json_object_get_string(v), "firmware");
	json_object_put(doc);
	report_clear(&r);
}

static void test_bounds(void **state)
{
	(void)state;
	struct report r;
	report_init(&r);
	char long_text[3 * REPORT_TEXT_MAX];
	memset(long_text, 'x', sizeof(long_text) - 1);
	long_text[sizeof(long_text) - 1] = '\0';
	assert_int_equal(report_add(&r, VERDICT_OK, "long", NULL, "%s", long_text), 0);
	assert_int_equal(strlen(r.checks[0].found), REPORT_TEXT_MAX - 1);
	assert_string_equal(r.checks[0].found + REPORT_TEXT_MAX - 4, "...");
	for (int i = 1; i < REPORT_MAX_CHECKS; i++)
		assert_int_equal(report_add(&r, VERDICT_OK, "many", NULL, "%d", i), 0);
	/* Beyond the bound a check is counted, and its verdict still decides. */
	assert_int_equal(report_add(&r, VERDICT_FAIL, "dropped", "x", "x"), 0);
	assert_int_equal(r.count, REPORT_MAX_CHECKS);
	assert_int_equal(r.dropped, 1);
	assert_int_equal(report_exit_code(&r), 2);
	report_clear(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_lines_and_exit_codes),
		cmocka_unit_test(test_json),
		cmocka_unit_test(test_bounds),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
