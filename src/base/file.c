/* SPDX-License-Identifier: Apache-2.0 */
/* Bounded reads, atomic writes and directories; see file.h. */
#include "base/file.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/parse.h"

int file_read_bounded(const char *path, size_t max, char **ret_buf, size_t *ret_len, char *why, size_t why_size)
{
	char *buf = NULL;
	size_t len = 0;
	int r;

	/* O_NONBLOCK: opening a FIFO must not wait for a writer. */
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0) {
		r = -errno;
		snprintf(why, why_size, "cannot open: %s", strerror(-r));
		goto out;
	}
	struct stat st;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		r = -EINVAL;
		snprintf(why, why_size, "not a regular file");
		goto out;
	}
	/* One byte more than allowed tells a full file from a long one; a file
	 * that fits leaves it for the terminator. */
	buf = malloc(max + 1);
	if (!buf) {
		r = -ENOMEM;
		snprintf(why, why_size, "out of memory");
		goto out;
	}
	while (len <= max) {
		ssize_t n = read(fd, buf + len, max + 1 - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			r = -errno;
			snprintf(why, why_size, "cannot read: %s", strerror(-r));
			goto out;
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	if (len > max) {
		r = -E2BIG;
		snprintf(why, why_size, "larger than %zu bytes", max);
		goto out;
	}
	buf[len] = '\0';
	*ret_buf = buf;
	*ret_len = len;
	buf = NULL;
	r = 0;
out:
	if (fd >= 0)
		close(fd);
	free(buf);
	return r;
}

/* "<dir>/.<name>.tmp" beside path, and the length of "<dir>/". */
static int temp_path(const char *path, char tmp[PATH_MAX], size_t *ret_dir_len)
{
	const char *slash = strrchr(path, '/');
	const char *name = slash ? slash + 1 : path;
	if (!name[0])
		return -EINVAL;
	size_t dir_len = slash ? (size_t)(slash - path + 1) : 0;
	int r = str_printf(tmp, PATH_MAX, "%.*s.%s.tmp", (int)dir_len, path, name);
	if (r < 0)
		return r;
	*ret_dir_len = dir_len;
	return 0;
}

static int write_all(int fd, const char *data, size_t len)
{
	while (len > 0) {
		ssize_t n = write(fd, data, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		data += n;
		len -= (size_t)n;
	}
	return 0;
}

/* Syncs the directory of a rename that is done: that only makes it durable,
 * so a failure is not the caller's. */
static void sync_dir(char *tmp, size_t dir_len)
{
	const char *dir = ".";
	if (dir_len > 0) {
		tmp[dir_len] = '\0';
		dir = tmp;
	}
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd >= 0) {
		(void)fsync(fd);
		close(fd);
	}
}

int file_write_atomic(const char *path, const void *data, size_t len, mode_t mode, unsigned flags)
{
	char tmp[PATH_MAX];
	size_t dir_len;
	int r = temp_path(path, tmp, &dir_len);
	if (r < 0)
		return r;
	/* A temp file a crash left behind is ours to replace; O_EXCL and
	 * O_NOFOLLOW then make sure that the file written is a new one. */
	if (unlink(tmp) < 0 && errno != ENOENT)
		return -errno;
	int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
	if (fd < 0)
		return -errno;
	r = write_all(fd, data, len);
	if (r == 0 && fchmod(fd, mode) < 0)
		r = -errno;
	if (r == 0 && (flags & FILE_WRITE_SYNC) && fsync(fd) < 0)
		r = -errno;
	if (close(fd) < 0 && r == 0)
		r = -errno;
	if (r == 0 && rename(tmp, path) < 0)
		r = -errno;
	if (r < 0) {
		unlink(tmp);
		return r;
	}
	if (flags & FILE_WRITE_SYNC)
		sync_dir(tmp, dir_len);
	return 0;
}

int file_remove_atomic(const char *path)
{
	char tmp[PATH_MAX];
	size_t dir_len;
	int r = temp_path(path, tmp, &dir_len);
	if (r < 0)
		return r;
	if (unlink(path) < 0 && errno != ENOENT)
		r = -errno;
	if (unlink(tmp) < 0 && errno != ENOENT && r == 0)
		r = -errno;
	return r;
}

int mkdir_ensure(const char *path, mode_t mode)
{
	if (mkdir(path, mode) == 0)
		return 0;
	if (errno != EEXIST)
		return -errno;
	struct stat st;
	if (stat(path, &st) < 0)
		return -errno;
	return S_ISDIR(st.st_mode) ? 0 : -ENOTDIR;
}

int mkdir_p(const char *path, mode_t mode)
{
	char buf[PATH_MAX];
	int r = str_copy(buf, sizeof(buf), path);
	if (r < 0)
		return r;
	/* Each parent in turn; one that exists as something else makes the
	 * next mkdir fail with ENOTDIR. */
	for (char *p = buf + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(buf, mode) < 0 && errno != EEXIST)
			return -errno;
		*p = '/';
	}
	return mkdir_ensure(buf, mode);
}

int dir_open(const char *path, DIR **ret)
{
	int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	DIR *dir = fdopendir(fd);
	if (!dir) {
		int r = -errno;
		close(fd);
		return r;
	}
	*ret = dir;
	return 0;
}
