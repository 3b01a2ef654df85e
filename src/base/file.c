/* SPDX-License-Identifier: Apache-2.0 */
/* Bounded whole-file reads; see file.h. */
#include "base/file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>


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
