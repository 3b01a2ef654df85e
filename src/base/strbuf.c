/* SPDX-License-Identifier: Apache-2.0 */
#include "base/strbuf.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

void strbuf_init(struct strbuf *sb, char *buf, size_t size, const char *mark)
{
	size_t reserve = mark ? strlen(mark) : 0;
	*sb = (struct strbuf){ .buf = buf, .size = size, .reserve = reserve, .mark = mark };
	if (size > 0)
		buf[0] = '\0';
	/* No room for even the mark and a terminator: nothing can be appended. */
	if (size <= reserve)
		sb->truncated = true;
}

int strbuf_printf(struct strbuf *sb, const char *fmt, ...)
{
	if (sb->truncated)
		return -ENOBUFS;

	/* What a piece may use: all but the terminator and the mark's room. */
	size_t avail = sb->size - sb->reserve - sb->len;
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(sb->buf + sb->len, avail, fmt, ap);
	va_end(ap);
	if (n >= 0 && (size_t)n < avail) {
		sb->len += (size_t)n;
		return 0;
	}

	/* Take back the part that was written, then say the text is cut. */
	sb->buf[sb->len] = '\0';
	sb->truncated = true;
	if (sb->mark) {
		memcpy(sb->buf + sb->len, sb->mark, sb->reserve + 1);
		sb->len += sb->reserve;
	}
	return -ENOBUFS;
}
