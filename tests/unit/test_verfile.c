/* SPDX-License-Identifier: Apache-2.0 */
/* ascend-doctor's version-file readers: key=value lookup, version order,
 * ranges (with the "23.0.rc3." prefix bound), release lists. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "base/macro.h"
#include "npu/verfile.h"

static const char driver_info[] = "Version=24.1.rc1\n"
				   "ascendhal_version=7.35.19\n"
				   "Innerversion=V100R001C15SPC006B220\r\n"
				   "compatible_version=[V100R001C30],[V100R001C13],[V100R001C15],[V100R001C17]\n"
				   "  compatible_version_fw = [7.0.0,7.2.99]  \n"
				   "no equals sign here\n"
				   "empty=";

static void test_get(void **state)
{
	(void)state;
	char v[64] = "untouched";
	size_t len = sizeof(driver_info) - 1;
	assert_int_equal(verfile_get(driver_info, len, "Version", v, sizeof(v)), 0);
	assert_string_equal(v, "24.1.rc1");
	/* Keys compare without case, CR and spaces go. */
	assert_int_equal(verfile_get(driver_info, len, "innerversion", v, sizeof(v)), 0);
	assert_string_equal(v, "V100R001C15SPC006B220");
	assert_int_equal(verfile_get(driver_info, len, "compatible_version_fw", v, sizeof(v)), 0);
	assert_string_equal(v, "[7.0.0,7.2.99]");
	assert_int_equal(verfile_get(driver_info, len, "empty", v, sizeof(v)), 0);
	assert_string_equal(v, "");
	memcpy(v, "untouched", sizeof("untouched"));
	/* A key is whole: "version" is not "Version=" of ascendhal_version. */
	assert_int_equal(verfile_get(driver_info, len, "hal_version", v, sizeof(v)), -ENOENT);
	assert_int_equal(verfile_get(driver_info, len, "compatible_version", v, 8), -ENAMETOOLONG);
	assert_string_equal(v, "untouched");
	static const char nul[] = "Version=1\0\n";
	assert_int_equal(verfile_get(nul, sizeof(nul) - 1, "Version", v, sizeof(v)), -EINVAL);
	static const char ctl[] = "Version=1\x1b[2J\n";
	assert_int_equal(verfile_get(ctl, sizeof(ctl) - 1, "Version", v, sizeof(v)), -EINVAL);
	assert_int_equal(verfile_get("", 0, "Version", v, sizeof(v)), -ENOENT);
}

static void test_compare(void **state)
{
	(void)state;
	static const struct {
		const char *a, *b;
		int sign;
	} cases[] = {
		{ "7.1.0.11.220", "7.0.0", 1 }, { "7.1.0.11.220", "7.2.99", -1 }, { "7.0.0", "7.0.0", 0 },
		{ "7.0.0.1", "7.0.0", 1 },      { "23.0.rc3", "23.0.0", -1 },     { "23.0.rc1", "23.0.rc3", -1 },
		{ "24.1.RC1", "24.1.rc1", 0 },  { "10.0", "9.9", 1 },		  { "24.1.rc1", "23.0.0", 1 },
		{ "", "1", -1 },		{ "1.a", "1.b", -1 },		  { "8.0.RC1", "8.0.RC1.alpha001", -1 },
	};
	for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
		int r = version_compare(cases[i].a, cases[i].b);
		int sign = (r > 0) - (r < 0);
		if (sign != cases[i].sign)
			fail_msg("%s vs %s: %d, want %d", cases[i].a, cases[i].b, sign, cases[i].sign);
		int back = version_compare(cases[i].b, cases[i].a);
		if (((back > 0) - (back < 0)) != -cases[i].sign)
			fail_msg("%s vs %s is not antisymmetric", cases[i].b, cases[i].a);
	}
}

static void test_ranges(void **state)
{
	(void)state;
	bool in = false;
	assert_int_equal(verrange_contains("[7.0.0,7.2.99]", "7.1.0.11.220", &in), 0);
	assert_true(in);
	assert_int_equal(verrange_contains("[7.0.0,7.2.99]", "6.4.12.1.241", &in), 0);
	assert_false(in);
	assert_int_equal(verrange_contains("[7.0.0,7.2.99]", "7.3.0", &in), 0);
	assert_false(in);
	/* A bound ending in "." takes every version it starts. */
	const char *drv = "[23.0.rc3,23.0.rc3.],[23.0.0,23.0.0.]";
	assert_int_equal(verrange_contains(drv, "23.0.rc3", &in), 0);
	assert_true(in);
	assert_int_equal(verrange_contains(drv, "23.0.rc3.b010", &in), 0);
	assert_true(in);
	assert_int_equal(verrange_contains(drv, "23.0.0.5", &in), 0);
	assert_true(in);
	assert_int_equal(verrange_contains(drv, "23.0.rc2", &in), 0);
	assert_false(in);
	assert_int_equal(verrange_contains(drv, "24.1.rc1", &in), 0);
	assert_false(in);
	in = true;
	static const char *const bad[] = { "", "[7.0.0]", "7.0.0,7.2.99", "[7.0.0,7.2.99", "[1,2],", "[1,2]x",
					   "[[1,2]]" };
	for (size_t i = 0; i < ELEMENTSOF(bad); i++)
		if (verrange_contains(bad[i], "7.1", &in) != -EINVAL)
			fail_msg("'%s' was taken for a range list", bad[i]);
	assert_true(in);
}

static void test_release_lists(void **state)
{
	(void)state;
	bool in = false;
	const char *list = "[V100R001C30],[V100R001C13], [V100R001C15],[V100R001C17]";
	assert_int_equal(verlist_has_prefix_of(list, "V100R001C15", &in), 0);
	assert_true(in);
	assert_int_equal(verlist_has_prefix_of(list, "V100R001C15SPC006B220", &in), 0);
	assert_true(in);
	assert_int_equal(verlist_has_prefix_of(list, "V100R001C1", &in), 0);
	assert_false(in);
	assert_int_equal(verlist_has_prefix_of("[]", "V1", &in), 0);
	assert_false(in);
	assert_int_equal(verlist_has_prefix_of("V100R001C15", "V100R001C15", &in), -EINVAL);

	char release[16] = "x";
	assert_int_equal(innerversion_release("V100R001C15SPC006B220", release, sizeof(release)), 0);
	assert_string_equal(release, "V100R001C15");
	assert_int_equal(innerversion_release("V100R001C25", release, sizeof(release)), 0);
	assert_string_equal(release, "V100R001C25");
	assert_int_equal(innerversion_release("24.1.rc1", release, sizeof(release)), -EINVAL);
	assert_int_equal(innerversion_release("V100R001", release, sizeof(release)), -EINVAL);
	assert_int_equal(innerversion_release("V100R001C15", release, 5), -ENAMETOOLONG);
	assert_string_equal(release, "V100R001C25");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_get),
		cmocka_unit_test(test_compare),
		cmocka_unit_test(test_ranges),
		cmocka_unit_test(test_release_lists),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
