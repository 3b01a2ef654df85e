/* SPDX-License-Identifier: Apache-2.0 */
/* Whole files and directories (base/file.c) in a temporary directory: a
 * bounded read returns a terminated buffer, refuses a FIFO and a file over
 * the bound and writes nothing on failure; an atomic write replaces the file
 * with the exact mode whatever the umask, replaces a temp file a crash left,
 * leaves no temp file when it fails and keeps the old content then; removal
 * takes the temp file too; mkdir_ensure and mkdir_p make what is missing and
 * tell a directory from anything else; dir_open lists a directory, refuses
 * anything else and gives a descriptor closed on exec. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <dirent.h>

#include <cmocka.h>

#include "base/file.h"
#include "base/parse.h"
#include "support/tmpdir.h"

struct fixture {
	char dir[64];
};

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));
	if (!f)
		return -1;
	if (tmpdir_make(f->dir, sizeof(f->dir), "base-file") < 0) {
		free(f);
		return -1;
	}
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;
	int r = tmpdir_remove(f->dir);
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

static void assert_content(const char *path, const char *want)
{
	char *buf = NULL, why[128];
	size_t len = 0;
	assert_int_equal(file_read_bounded(path, 4096, &buf, &len, why, sizeof(why)), 0);
	assert_int_equal(len, strlen(want));
	assert_string_equal(buf, want);
	free(buf);
}

/* path is a directory (a link to one counts), of that mode unless it is 0. */
static void assert_dir(const char *path, mode_t mode)
{
	struct stat st;
	assert_int_equal(stat(path, &st), 0);
	assert_true(S_ISDIR(st.st_mode));
	if (mode)
		assert_int_equal(st.st_mode & 0777, mode);
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

static void test_write_atomic(void **state)
{
	struct fixture *f = *state;
	char path[PATH_MAX], tmp[PATH_MAX];
	struct stat st;
	under(f, "spec.json", path, sizeof(path));
	under(f, ".spec.json.tmp", tmp, sizeof(tmp));

	/* A temp file a crash left behind is replaced, and the umask does
	 * not narrow the mode. */
	put(tmp, "stale");
	mode_t old = umask(077);
	assert_int_equal(file_write_atomic(path, "one\n", 4, 0644, 0), 0);
	umask(old);
	assert_content(path, "one\n");
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0644);
	assert_int_equal(access(tmp, F_OK), -1);

	/* Replacing, synced, with a mode of its own; len counts, not a NUL. */
	assert_int_equal(file_write_atomic(path, "two\nignored", 4, 0600, FILE_WRITE_SYNC), 0);
	assert_content(path, "two\n");
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0600);
	assert_int_equal(access(tmp, F_OK), -1);

	/* The rename cannot replace a directory: the write fails and leaves
	 * neither a temp file nor a changed target. */
	char blocker[PATH_MAX], blocker_tmp[PATH_MAX];
	under(f, "blocker", blocker, sizeof(blocker));
	under(f, ".blocker.tmp", blocker_tmp, sizeof(blocker_tmp));
	assert_int_equal(mkdir(blocker, 0755), 0);
	assert_int_equal(file_write_atomic(blocker, "x", 1, 0644, 0), -EISDIR);
	assert_int_equal(access(blocker_tmp, F_OK), -1);
	assert_dir(blocker, 0);

	/* A temp file that is a symlink is removed, never followed. */
	char victim[PATH_MAX];
	under(f, "victim", victim, sizeof(victim));
	put(victim, "untouched");
	assert_int_equal(symlink(victim, tmp), 0);
	assert_int_equal(file_write_atomic(path, "three", 5, 0644, 0), 0);
	assert_content(victim, "untouched");
	assert_content(path, "three");

	/* No directory, or no name. */
	assert_int_equal(file_write_atomic("/nonexistent-base-file/x", "x", 1, 0644, 0), -ENOENT);
	assert_int_equal(file_write_atomic("/tmp/", "x", 1, 0644, 0), -EINVAL);
	assert_int_equal(file_write_atomic("", "x", 1, 0644, 0), -EINVAL);
}

/* A name without a directory is beside the working directory. */
static void test_write_atomic_relative(void **state)
{
	struct fixture *f = *state;
	char cwd[PATH_MAX];
	assert_non_null(getcwd(cwd, sizeof(cwd)));
	assert_int_equal(chdir(f->dir), 0);
	int r = file_write_atomic("plain", "p", 1, 0644, FILE_WRITE_SYNC);
	bool tmp_left = access(".plain.tmp", F_OK) == 0;
	assert_int_equal(chdir(cwd), 0);
	assert_int_equal(r, 0);
	assert_false(tmp_left);
	char path[PATH_MAX];
	under(f, "plain", path, sizeof(path));
	assert_content(path, "p");
}

static void test_remove_atomic(void **state)
{
	struct fixture *f = *state;
	char path[PATH_MAX], tmp[PATH_MAX];
	under(f, "features", path, sizeof(path));
	under(f, ".features.tmp", tmp, sizeof(tmp));
	put(path, "a=1\n");
	put(tmp, "a=");
	assert_int_equal(file_remove_atomic(path), 0);
	assert_int_equal(access(path, F_OK), -1);
	assert_int_equal(access(tmp, F_OK), -1);
	/* Gone already: fine. */
	assert_int_equal(file_remove_atomic(path), 0);
	/* Something that cannot be unlinked is an error. */
	assert_int_equal(mkdir(path, 0755), 0);
	assert_int_equal(file_remove_atomic(path), -EISDIR);
}

static void test_mkdir_ensure(void **state)
{
	struct fixture *f = *state;
	char path[PATH_MAX];
	under(f, "d", path, sizeof(path));
	assert_int_equal(mkdir_ensure(path, 0700), 0);
	assert_dir(path, 0700);
	/* There already: fine, and left as it was. */
	assert_int_equal(mkdir_ensure(path, 0755), 0);
	assert_dir(path, 0700);
	/* A link to a directory is one. */
	char link[PATH_MAX];
	under(f, "link", link, sizeof(link));
	assert_int_equal(symlink(path, link), 0);
	assert_int_equal(mkdir_ensure(link, 0755), 0);
	/* Not the parents; not over a file. */
	under(f, "a/b", path, sizeof(path));
	assert_int_equal(mkdir_ensure(path, 0755), -ENOENT);
	under(f, "file", path, sizeof(path));
	put(path, "");
	assert_int_equal(mkdir_ensure(path, 0755), -ENOTDIR);
}

static void test_mkdir_p(void **state)
{
	struct fixture *f = *state;
	char path[PATH_MAX];
	under(f, "a/b/c", path, sizeof(path));
	assert_int_equal(mkdir_p(path, 0755), 0);
	assert_dir(path, 0);
	/* Again, and with doubled and trailing slashes. */
	assert_int_equal(mkdir_p(path, 0755), 0);
	under(f, "a//b/c/d/", path, sizeof(path));
	assert_int_equal(mkdir_p(path, 0755), 0);
	under(f, "a/b/c/d", path, sizeof(path));
	assert_dir(path, 0);

	/* A file on the way, or at the end. */
	under(f, "a/file", path, sizeof(path));
	put(path, "");
	assert_int_equal(mkdir_p(path, 0755), -ENOTDIR);
	under(f, "a/file/below", path, sizeof(path));
	assert_int_equal(mkdir_p(path, 0755), -ENOTDIR);

	/* Longer than a path can be. */
	char *long_path = malloc(PATH_MAX + 2);
	assert_non_null(long_path);
	memset(long_path, 'x', PATH_MAX + 1);
	long_path[0] = '/';
	long_path[PATH_MAX + 1] = '\0';
	assert_int_equal(mkdir_p(long_path, 0755), -ENAMETOOLONG);
	free(long_path);
}

static void test_dir_open(void **state)
{
	struct fixture *f = *state;
	char path[PATH_MAX];
	under(f, "entry", path, sizeof(path));
	put(path, "");

	DIR *dir = NULL;
	assert_int_equal(dir_open(f->dir, &dir), 0);
	assert_non_null(dir);
	assert_true(fcntl(dirfd(dir), F_GETFD) & FD_CLOEXEC);
	bool found = false;
	for (struct dirent *e; (e = readdir(dir));)
		found |= strcmp(e->d_name, "entry") == 0;
	assert_true(found);
	assert_int_equal(closedir(dir), 0);

	/* Neither a file nor a missing path; *ret untouched. */
	DIR *untouched = (DIR *)&found;
	assert_int_equal(dir_open(path, &untouched), -ENOTDIR);
	under(f, "missing", path, sizeof(path));
	assert_int_equal(dir_open(path, &untouched), -ENOENT);
	assert_ptr_equal(untouched, (DIR *)&found);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_read_bounded, setup, teardown),
		cmocka_unit_test_setup_teardown(test_write_atomic, setup, teardown),
		cmocka_unit_test_setup_teardown(test_write_atomic_relative, setup, teardown),
		cmocka_unit_test_setup_teardown(test_remove_atomic, setup, teardown),
		cmocka_unit_test_setup_teardown(test_mkdir_ensure, setup, teardown),
		cmocka_unit_test_setup_teardown(test_mkdir_p, setup, teardown),
		cmocka_unit_test_setup_teardown(test_dir_open, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
