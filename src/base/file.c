/* SPDX-License-Identifier: Apache-2.0 */
/* Bounded reads and directories; see file.h. */
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
