/* SPDX-License-Identifier: Apache-2.0 */
/* Checked parsers: numbers, durations, bounded strings and paths. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "base/k8s_names.h"
#include "base/macro.h"
#include "base/parse.h"

static void test_numbers(void **state)
{
	(void)state;
	uint64_t v = 7;
	assert_int_equal(parse_u64("42", 10, 100, &v), 0);
	assert_int_equal(v, 42);
	assert_int_equal(parse_u64("0x1f", 16, 100, &v), 0);
	assert_int_equal(v, 31);
	assert_int_equal(parse_u64("80E01801", 16, UINT32_MAX, &v), 0);
	assert_int_equal(v, 0x80E01801);
	v = 7;
	assert_int_equal(parse_u64("101", 10, 100, &v), -ERANGE);
	assert_int_equal(parse_u64("-1", 10, 100, &v), -EINVAL);
	assert_int_equal(parse_u64(" 1", 10, 100, &v), -EINVAL);
	assert_int_equal(parse_u64("1x", 10, 100, &v), -EINVAL);
	assert_int_equal(parse_u64("", 10, 100, &v), -EINVAL);
	assert_int_equal(parse_u64("ff", 10, 100, &v), -EINVAL);
	assert_int_equal(parse_u64("99999999999999999999999", 10, UINT64_MAX, &v), -ERANGE);
	/* Failures leave the output alone. */
	assert_int_equal(v, 7);
}

static void test_durations(void **state)
{
	(void)state;
	int64_t ms = -1;
	assert_int_equal(parse_duration_ms("500ms", &ms), 0);
	assert_int_equal(ms, 500);
	assert_int_equal(parse_duration_ms("5s", &ms), 0);
	assert_int_equal(ms, 5000);
	assert_int_equal(parse_duration_ms("5", &ms), 0);
	assert_int_equal(ms, 5000);
	assert_int_equal(parse_duration_ms("1m", &ms), 0);
	assert_int_equal(ms, 60000);
	assert_int_equal(parse_duration_ms("24h", &ms), 0);
	assert_int_equal(ms, 86400000);
	ms = -1;
	assert_int_equal(parse_duration_ms("25h", &ms), -ERANGE);
	assert_int_equal(parse_duration_ms("5 s", &ms), -EINVAL);
	assert_int_equal(parse_duration_ms("s", &ms), -EINVAL);
	assert_int_equal(parse_duration_ms("1.5s", &ms), -EINVAL);
	assert_int_equal(parse_duration_ms("5d", &ms), -EINVAL);
	assert_int_equal(parse_duration_ms("-5s", &ms), -EINVAL);
	assert_int_equal(parse_duration_ms("9999999999999999s", &ms), -ERANGE);
	assert_int_equal(ms, -1);

	/* A bound of one's own: longer than a day, or shorter. */
	assert_int_equal(parse_duration_ms_max("48h", 240LL * 3600 * 1000, &ms), 0);
	assert_int_equal(ms, 172800000);
	assert_int_equal(parse_duration_ms_max("4294967296", 4294967296LL * 1000, &ms), 0);
	assert_int_equal(ms, 4294967296000);
	ms = -1;
	assert_int_equal(parse_duration_ms_max("241h", 240LL * 3600 * 1000, &ms), -ERANGE);
	assert_int_equal(parse_duration_ms_max("2s", 1000, &ms), -ERANGE);
	assert_int_equal(parse_duration_ms_max("1001ms", 1000, &ms), -ERANGE);
	assert_int_equal(parse_duration_ms_max("1s", -1, &ms), -EINVAL);
	assert_int_equal(ms, -1);
	assert_int_equal(parse_duration_ms_max("0", 0, &ms), 0);
	assert_int_equal(ms, 0);
}

static void test_strings_and_paths(void **state)
{
	(void)state;
	char small[8] = "keep";
	assert_int_equal(str_copy(small, sizeof(small), "1234567"), 0);
	assert_string_equal(small, "1234567");
	assert_int_equal(str_copy(small, sizeof(small), "12345678"), -ENAMETOOLONG);
	assert_string_equal(small, "1234567");
	assert_int_equal(str_printf(small, sizeof(small), "%d", 12345678), -ENAMETOOLONG);
	assert_string_equal(small, "1234567");

	/* No hidden bound below size: a result of 5000 bytes fits 5001. */
	static char big[5001];
	assert_int_equal(str_printf(big, sizeof(big), "%05000d", 7), 0);
	assert_int_equal(strlen(big), 5000);
	assert_int_equal(big[4999], '7');
	assert_int_equal(str_printf(big, sizeof(big) - 1, "%05000d", 8), -ENAMETOOLONG);
	assert_int_equal(big[4999], '7');

	char path[64];
	assert_int_equal(path_join(path, sizeof(path), "/", "/usr/local/dcmi"), 0);
	assert_string_equal(path, "/usr/local/dcmi");
	assert_int_equal(path_join(path, sizeof(path), "/tmp/root/", "usr"), 0);
	assert_string_equal(path, "/tmp/root/usr");
	assert_int_equal(path_join(path, sizeof(path), "/tmp/root", "/usr/local"), 0);
	assert_string_equal(path, "/tmp/root/usr/local");

	/* The message names the path as path_join would write it, and its length. */
	char why[160];
	socket_path_too_long(why, sizeof(why), "/run/dp/", "x.sock");
	assert_string_equal(why,
			    "the socket path /run/dp/x.sock would be 14 bytes; unix socket paths must stay under 108");
	socket_path_too_long(why, sizeof(why), "/", "/x.sock");
	assert_string_equal(why, "the socket path /x.sock would be 7 bytes; unix socket paths must stay under 108");
	socket_path_too_long(why, 16, "/run/dp", "x.sock");
	assert_string_equal(why, "the socket path");
}

static void test_resource_names(void **state)
{
	(void)state;
	char why[160];
	assert_int_equal(k8s_extended_resource_name_check("ascend.com/npu", why, sizeof(why)), 0);
	assert_int_equal(k8s_extended_resource_name_check("huawei.com/Ascend910", why, sizeof(why)), 0);
	assert_int_equal(k8s_extended_resource_name_check("example.com/a_b.c-d", why, sizeof(why)), 0);
	const char *bad[] = {
		"npu", "kubernetes.io/npu", "requests.ascend.com/npu", "Ascend.com/npu", "ascend.com/",
		"ascend.com/-npu", "ascend.com/npu-", "-ascend.com/npu", "ascend..com/npu", "ascend.com/n/pu",
		"ascend.com/" "a234567890123456789012345678901234567890123456789012345678901234",
	};
	for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
		why[0] = '\0';
		if (k8s_extended_resource_name_check(bad[i], why, sizeof(why)) != -EINVAL)
			fail_msg("'%s' was accepted", bad[i]);
		assert_true(why[0] != '\0');
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_numbers),
		cmocka_unit_test(test_durations),
		cmocka_unit_test(test_strings_and_paths),
		cmocka_unit_test(test_resource_names),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
