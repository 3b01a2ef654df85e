/* SPDX-License-Identifier: Apache-2.0 */
/* The firmware's version (npu/firmware.c): read from version.info beside
 * the driver's directory, with the file and the problem named when it
 * cannot be. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "npu/firmware.h"
#include "support/tmpdir.h"

static char root[64], driver[160], info[192];

static void write_info(const char *text)
{
	FILE *f = fopen(info, "w");
	assert_non_null(f);
	fputs(text, f);
	assert_int_equal(fclose(f), 0);
}

static int setup(void **state)
{
	(void)state;
	assert_int_equal(tmpdir_make(root, sizeof(root), "ascend-fw"), 0);
	char dir[96];
	snprintf(dir, sizeof(dir), "%s/Ascend", root);
	assert_int_equal(mkdir(dir, 0755), 0);
	snprintf(driver, sizeof(driver), "%s/driver", dir);
	assert_int_equal(mkdir(driver, 0755), 0);
	snprintf(dir, sizeof(dir), "%s/Ascend/firmware", root);
	assert_int_equal(mkdir(dir, 0755), 0);
	snprintf(info, sizeof(info), "%s/version.info", dir);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	return tmpdir_remove(root) == 0 ? 0 : -1;
}

static void test_reads_version(void **state)
{
	(void)state;
	char v[NPU_FIRMWARE_VERSION_MAX + 1] = "", why[256];
	write_info("Version=7.1.0.11.220\ncompatible_version_drv=[23.0.rc3,23.0.rc3.]\n");
	assert_int_equal(npu_firmware_version(driver, v, sizeof(v), why, sizeof(why)), 0);
	assert_string_equal(v, "7.1.0.11.220");
	/* A trailing slash names the same directory. */
	char slashed[192];
	snprintf(slashed, sizeof(slashed), "%s//", driver);
	assert_int_equal(npu_firmware_version(slashed, v, sizeof(v), why, sizeof(why)), 0);
	assert_string_equal(v, "7.1.0.11.220");
}

static void test_problems_named(void **state)
{
	(void)state;
	char v[NPU_FIRMWARE_VERSION_MAX + 1] = "unchanged", why[256], want[256];
	assert_int_equal(npu_firmware_version(driver, v, sizeof(v), why, sizeof(why)), -ENOENT);
	snprintf(want, sizeof(want), "%s: cannot open", info);
	assert_non_null(strstr(why, want));
	write_info("compatible_version_drv=[23.0.rc3,23.0.rc3.]\n");
	assert_int_equal(npu_firmware_version(driver, v, sizeof(v), why, sizeof(why)), -EINVAL);
	assert_non_null(strstr(why, "no Version= line"));
	write_info("Version=\n");
	assert_int_equal(npu_firmware_version(driver, v, sizeof(v), why, sizeof(why)), -EINVAL);
	char long_line[200] = "Version=";
	memset(long_line + 8, '7', 150);
	long_line[158] = '\n';
	long_line[159] = '\0';
	write_info(long_line);
	assert_int_equal(npu_firmware_version(driver, v, sizeof(v), why, sizeof(why)), -ENAMETOOLONG);
	assert_non_null(strstr(why, "too long"));
	assert_string_equal(v, "unchanged");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_reads_version, setup, teardown),
		cmocka_unit_test_setup_teardown(test_problems_named, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
