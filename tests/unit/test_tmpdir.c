/* SPDX-License-Identifier: Apache-2.0 */
/* The tests' scratch directories (tests/support/tmpdir.h): made fresh and
 * private, removed with all they hold, and never through a symbolic link
 * to what lies outside. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "support/tmpdir.h"

static void make_file(const char *path)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	assert_true(fd >= 0);
	assert_int_equal(close(fd), 0);
}

/* How many entries of /tmp start with prefix. */
static size_t count_in_tmp(const char *prefix)
{
	DIR *d = opendir("/tmp");
	assert_non_null(d);
	size_t n = 0;
	for (struct dirent *e; (e = readdir(d));)
		n += strncmp(e->d_name, prefix, strlen(prefix)) == 0;
	assert_int_equal(closedir(d), 0);
	return n;
}

static void test_make(void **state)
{
	(void)state;
	char a[64], b[64];
	assert_int_equal(tmpdir_make(a, sizeof(a), "tmpdir-test"), 0);
	assert_int_equal(tmpdir_make(b, sizeof(b), "tmpdir-test"), 0);
	assert_string_not_equal(a, b);
	assert_int_equal(strncmp(a, "/tmp/tmpdir-test-", strlen("/tmp/tmpdir-test-")), 0);
	struct stat st;
	assert_int_equal(stat(a, &st), 0);
	assert_true(S_ISDIR(st.st_mode));
	assert_int_equal(st.st_mode & 0777, 0700);
	assert_int_equal(tmpdir_remove(a), 0);
	assert_int_equal(tmpdir_remove(b), 0);

	/* Too small for the path: an error, dir untouched, and no directory
	 * made. */
	size_t before = count_in_tmp("tmpdir-small-");
	char small[8] = "keep";
	assert_int_equal(tmpdir_make(small, sizeof(small), "tmpdir-small"), -ENAMETOOLONG);
	assert_string_equal(small, "keep");
	assert_int_equal(count_in_tmp("tmpdir-small-"), before);
}

static void test_remove_tree(void **state)
{
	(void)state;
	char dir[64], outside[64], path[256];
	assert_int_equal(tmpdir_make(dir, sizeof(dir), "tmpdir-test"), 0);
	assert_int_equal(tmpdir_make(outside, sizeof(outside), "tmpdir-outside"), 0);
	snprintf(path, sizeof(path), "%s/kept", outside);
	make_file(path);

	/* Files, nested directories, and links to a file and a directory
	 * outside: the links go, what they point to stays. */
	snprintf(path, sizeof(path), "%s/a", dir);
	assert_int_equal(mkdir(path, 0755), 0);
	snprintf(path, sizeof(path), "%s/a/b", dir);
	assert_int_equal(mkdir(path, 0755), 0);
	snprintf(path, sizeof(path), "%s/a/b/file", dir);
	make_file(path);
	snprintf(path, sizeof(path), "%s/file with 'quotes' and spaces", dir);
	make_file(path);
	char target[128];
	snprintf(path, sizeof(path), "%s/a/to-dir", dir);
	assert_int_equal(symlink(outside, path), 0);
	snprintf(target, sizeof(target), "%s/kept", outside);
	snprintf(path, sizeof(path), "%s/to-file", dir);
	assert_int_equal(symlink(target, path), 0);

	assert_int_equal(tmpdir_remove(dir), 0);
	assert_int_equal(access(dir, F_OK), -1);
	assert_int_equal(errno, ENOENT);
	assert_int_equal(access(target, F_OK), 0);

	assert_int_equal(tmpdir_remove(dir), -ENOENT);
	assert_int_equal(tmpdir_remove(""), -EINVAL);
	assert_int_equal(tmpdir_remove(outside), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_make),
		cmocka_unit_test(test_remove_tree),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
