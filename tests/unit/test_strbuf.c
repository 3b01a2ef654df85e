/* SPDX-License-Identifier: Apache-2.0 */
/* The bounded string builder: pieces go in whole or not at all, the buffer
 * is never overrun and always terminated, and truncation is recorded and
 * marked; npu_device_describe, built on it, marks a cut description. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>

#include "base/strbuf.h"
#include "npu/inventory.h"

static void test_pieces_fit_or_are_left_out(void **state)
{
	(void)state;
	/* Guard bytes around the buffer catch any write past it. */
	char area[16 + 2];
	memset(area, 'G', sizeof(area));
	char *buf = area + 1;
	struct strbuf sb;
	strbuf_init(&sb, buf, 16, NULL);
	assert_string_equal(buf, "");
	assert_int_equal(strbuf_printf(&sb, "%s", "0123456789"), 0);
	assert_int_equal(strbuf_printf(&sb, "-%d", 1234), 0);
	assert_string_equal(buf, "0123456789-1234");
	assert_false(sb.truncated);
	/* 15 bytes and the terminator fill it: one more is a cut. */
	assert_int_equal(strbuf_printf(&sb, "x"), -ENOBUFS);
	assert_true(sb.truncated);
	assert_string_equal(buf, "0123456789-1234");
	assert_int_equal(area[0], 'G');
	assert_int_equal(area[17], 'G');
}

static void test_cut_is_marked_and_final(void **state)
{
	(void)state;
	char buf[16];
	struct strbuf sb;
	strbuf_init(&sb, buf, sizeof(buf), ", ...");
	assert_int_equal(strbuf_printf(&sb, "%s", "/a/b"), 0);
	assert_int_equal(strbuf_printf(&sb, ", %s", "/c/d"), 0);
	/* 10 bytes used, 10 usable (16 - 5 for the mark - 1): this one does not
	 * fit and is left out whole, and the mark says so. */
	assert_int_equal(strbuf_printf(&sb, ", %s", "/e"), -ENOBUFS);
	assert_string_equal(buf, "/a/b, /c/d, ...");
	assert_int_equal(sb.len, strlen(buf));
	/* Later pieces, even small ones, stay out: the gap is not hidden. */
	assert_int_equal(strbuf_printf(&sb, "z"), -ENOBUFS);
	assert_string_equal(buf, "/a/b, /c/d, ...");

	/* A buffer too small for the mark appends nothing. */
	char tiny[3] = "xy";
	strbuf_init(&sb, tiny, sizeof(tiny), "...");
	assert_true(sb.truncated);
	assert_string_equal(tiny, "");
	assert_int_equal(strbuf_printf(&sb, "a"), -ENOBUFS);
	assert_string_equal(tiny, "");
}

static void test_device_description_is_cut_visibly(void **state)
{
	(void)state;
	struct npu_device d = {
		.fault = NPU_FAULT_HEALTH_LEVEL,
		.dcmi_health = 2,
		.fault_codes = { 0x80E01801, 0x80E18402, 0x80CB8009, 0x80DE1800 },
		.n_fault_codes = 4,
	};
	char why[256];
	npu_device_describe(&d, why, sizeof(why));
	assert_string_equal(why, "DCMI health 2 (major), error codes 80E01801,80E18402,80CB8009,80DE1800");
	/* Room for one code: the rest is left out, not half-printed. */
	char small[50];
	npu_device_describe(&d, small, sizeof(small));
	assert_string_equal(small, "DCMI health 2 (major), error codes 80E01801...");
	d.dcmi_health = 7;
	d.n_fault_codes = 0;
	npu_device_describe(&d, why, sizeof(why));
	assert_string_equal(why, "DCMI health 7 (unknown)");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pieces_fit_or_are_left_out),
		cmocka_unit_test(test_cut_is_marked_and_final),
		cmocka_unit_test(test_device_description_is_cut_visibly),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
