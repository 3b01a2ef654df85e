/* SPDX-License-Identifier: Apache-2.0 */
/* A bounded string builder over a caller's fixed buffer: pieces appended with
 * printf semantics, whole or not at all, never past the buffer, which always
 * holds a terminated string. Truncation is recorded, not silent: the first
 * piece that does not fit sets `truncated`, is left out with every later
 * piece, and the optional mark (e.g. "...") is appended in room kept back
 * for it from the start, so a reader of the text sees that it was cut. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

struct strbuf {
	char *buf;
	size_t size;    /* bytes of buf, terminator included */
	size_t reserve; /* kept back for the mark */
	size_t len;
	const char *mark;
	bool truncated;
};

/* Starts buf[size] empty. size must exceed strlen(mark) (mark may be NULL);
 * when it does not, or size is 0, the builder starts truncated and appends
 * nothing. */
void strbuf_init(struct strbuf *sb, char *buf, size_t size, const char *mark);

/* Appends one piece. Returns 0, or -ENOBUFS when it did not fit (or an
 * earlier piece did not): the text is then what fitted before, plus the mark. */
int strbuf_printf(struct strbuf *sb, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
