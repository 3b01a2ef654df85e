/* SPDX-License-Identifier: Apache-2.0 */
/* The device-file backend: which /dev entries are chips, and in what order. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/macro.h"
#include "base/parse.h"
#include "npu/devfs.h"
#include "support/tmpdir.h"

struct fixture {
	char dir[64];
};

static void touch(const char *dir, const char *name)
{
	char path[PATH_MAX];
	assert_int_equal(path_join(path, sizeof(path), dir, name), 0);
	int fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
	assert_true(fd >= 0);
	close(fd);
}

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));
	if (!f)
		return -1;
	if (tmpdir_make(f->dir, sizeof(f->dir), "test_devfs") < 0) {
		free(f);
		return -1;
	}
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;
	tmpdir_remove(f->dir);
	free(f);
	return 0;
}

static void test_scan_picks_chips_sorted(void **state)
{
	struct fixture *f = *state;
	static const char *const names[] = { "davinci12",   "davinci_manager", "davinci3", "vdavinci100",
					     "davinciX",    "davinci0",	       "davinci01", "davinci",
					     "davinci65536", "davinci-1",      "davinci7x" };
	for (size_t i = 0; i < ELEMENTSOF(names); i++)
		touch(f->dir, names[i]);
	/* A directory is never a device node. */
	char sub[PATH_MAX];
	assert_int_equal(path_join(sub, sizeof(sub), f->dir, "davinci9"), 0);
	assert_int_equal(mkdir(sub, 0700), 0);

	struct npu_chip chips[8];
	size_t count = 99;
	assert_int_equal(devfs_scan(f->dir, chips, 8, &count), 0);
	assert_int_equal(count, 3);
	static const uint32_t phys[] = { 0, 3, 12 };
	for (size_t i = 0; i < 3; i++) {
		assert_int_equal(chips[i].phy_id, phys[i]);
		assert_int_equal(chips[i].logic_id, phys[i]);
		assert_int_equal(chips[i].card_id, -1);
		assert_int_equal(chips[i].device_id, -1);
		assert_int_equal(chips[i].family, NPU_FAMILY_UNKNOWN);
		assert_string_equal(chips[i].name, "");
		assert_int_equal(chips[i].aicore_count, 0);
		assert_false(chips[i].has_board_id);
	}
}

static void test_scan_vnpus(void **state)
{
	struct fixture *f = *state;
	static const char *const names[] = { "vdavinci116", "vdavinci100", "vdavinci99", "vdavinci0100",
					     "davinci101",  "vdavinci",    "vdavinci1x", "vdavinci148" };
	for (size_t i = 0; i < ELEMENTSOF(names); i++)
		touch(f->dir, names[i]);

	struct npu_vnpu vnpus[8];
	size_t count = 99;
	assert_int_equal(devfs_scan_vnpus(f->dir, vnpus, 8, &count), 0);
	/* Below 100 is no vNPU number; a leading zero no name the driver makes. */
	assert_int_equal(count, 3);
	static const uint32_t ids[] = { 100, 116, 148 }, phys[] = { 0, 1, 3 };
	for (size_t i = 0; i < 3; i++) {
		assert_int_equal(vnpus[i].id, ids[i]);
		assert_int_equal(vnpus[i].phy_id, phys[i]);
		assert_string_equal(vnpus[i].template_name, "");
	}
	assert_int_equal(devfs_scan_vnpus(f->dir, vnpus, 2, &count), -E2BIG);
}

static void test_scan_largest_phy(void **state)
{
	struct fixture *f = *state;
	touch(f->dir, "davinci65535");
	touch(f->dir, "davinci65536");

	struct npu_chip chips[2];
	size_t count = 0;
	assert_int_equal(devfs_scan(f->dir, chips, 2, &count), 0);
	assert_int_equal(count, 1);
	assert_int_equal(chips[0].phy_id, 65535);
}

static void test_scan_empty_dir(void **state)
{
	struct fixture *f = *state;
	touch(f->dir, "davinci_manager");

	struct npu_chip chips[2];
	size_t count = 99;
	assert_int_equal(devfs_scan(f->dir, chips, 2, &count), 0);
	assert_int_equal(count, 0);
}

static void test_scan_missing_dir(void **state)
{
	struct fixture *f = *state;
	char missing[PATH_MAX];
	assert_int_equal(path_join(missing, sizeof(missing), f->dir, "no-such-dir"), 0);

	struct npu_chip chips[2];
	size_t count = 99;
	assert_int_equal(devfs_scan(missing, chips, 2, &count), 0);
	assert_int_equal(count, 0);
}

static void test_scan_not_a_directory(void **state)
{
	struct fixture *f = *state;
	touch(f->dir, "davinci0");
	char file[PATH_MAX];
	assert_int_equal(path_join(file, sizeof(file), f->dir, "davinci0"), 0);

	struct npu_chip chips[2];
	size_t count = 99;
	assert_int_equal(devfs_scan(file, chips, 2, &count), -ENOTDIR);
	assert_int_equal(count, 99);
}

static void test_scan_too_many(void **state)
{
	struct fixture *f = *state;
	touch(f->dir, "davinci0");
	touch(f->dir, "davinci1");
	touch(f->dir, "davinci2");

	struct npu_chip chips[2];
	size_t count = 99;
	assert_int_equal(devfs_scan(f->dir, chips, 2, &count), -E2BIG);
	assert_int_equal(count, 99);
	assert_int_equal(devfs_scan(f->dir, NULL, 0, &count), -E2BIG);

	struct npu_chip enough[3];
	assert_int_equal(devfs_scan(f->dir, enough, 3, &count), 0);
	assert_int_equal(count, 3);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_scan_picks_chips_sorted, setup, teardown),
		cmocka_unit_test_setup_teardown(test_scan_largest_phy, setup, teardown),
		cmocka_unit_test_setup_teardown(test_scan_vnpus, setup, teardown),
		cmocka_unit_test_setup_teardown(test_scan_empty_dir, setup, teardown),
		cmocka_unit_test_setup_teardown(test_scan_missing_dir, setup, teardown),
		cmocka_unit_test_setup_teardown(test_scan_not_a_directory, setup, teardown),
		cmocka_unit_test_setup_teardown(test_scan_too_many, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
