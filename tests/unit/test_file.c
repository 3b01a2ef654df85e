/* SPDX-License-Identifier: Apache-2.0 */
/* Whole files (base/file.c) in a temporary directory: a bounded read
 * returns a terminated buffer, refuses a FIFO and a file over the bound and
 * writes nothing on failure. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "base/file.h"
#include "base/parse.h"

struct fixture {
	char dir[64];
};

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));
	if (!f)
		return -1;
	snprintf(f->dir, sizeof(f->dir), "/tmp/base-file-XXXXXX");
	if (!mkdtemp(f->dir)) {
		free(f);
		return -1;
	}
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", f->dir);
	int r = system(cmd);
	free(f);
	return r == 0 ? 0 : -1;
}

static void under(const struct fixture *f, const char *relative, char *buf, size_t size)
{
	assert_int_equal(path_join(buf, size, f->dir, relative), 0);
}

static void put(const char *path, const char *content)
{
	FILE *out = fopen(path, "we");
	assert_non_null(out);
	fputs(content, out);
	assert_int_equal(fclose(out), 0);
}

static void test_read_bounded(void **state)
{
	struct fixture *f = *state;
	char path[PATH_MAX], why[128];
	char *buf = (char *)(uintptr_t)0x1;
	size_t len = 77;

	/* Exactly max bytes fit, and the buffer is a string of them. */
	under(f, "ten", path, sizeof(path));
	put(path, "0123456789");
	assert_int_equal(file_read_bounded(path, 10, &buf, &len, why, sizeof(why)), 0);
	assert_int_equal(len, 10);
	assert_string_equal(buf, "0123456789");
	free(buf);

	/* An empty file is an empty string. */
	under(f, "empty", path, sizeof(path));
	put(path, "");
	assert_int_equal(file_read_bounded(path, 10, &buf, &len, why, sizeof(why)), 0);
	assert_int_equal(len, 0);
	assert_string_equal(buf, "");
	free(buf);

	/* Failures leave the outputs alone and say why. */
	buf = (char *)(uintptr_t)0x1;
	len = 77;
	under(f, "ten", path, sizeof(path));
	assert_int_equal(file_read_bounded(path, 9, &buf, &len, why, sizeof(why)), -E2BIG);
	assert_string_equal(why, "larger than 9 bytes");
	under(f, "fifo", path, sizeof(path));
	assert_int_equal(mkfifo(path, 0600), 0);
	assert_int_equal(file_read_bounded(path, 10, &buf, &len, why, sizeof(why)), -EINVAL);
	assert_string_equal(why, "not a regular file");
	assert_int_equal(file_read_bounded(f->dir, 10, &buf, &len, why, sizeof(why)), -EINVAL);
	under(f, "missing", path, sizeof(path));
	assert_int_equal(file_read_bounded(path, 10, &buf, &len, why, sizeof(why)), -ENOENT);
	assert_non_null(strstr(why, "cannot open: "));
	assert_ptr_equal(buf, (char *)(uintptr_t)0x1);
	assert_int_equal(len, 77);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_read_bounded, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
