/* SPDX-License-Identifier: Apache-2.0 */
/* kubelet-sim's event lines on stdout: `word key=value ...`, one event per
 * line, flushed per line, never interleaved between threads. A line is built
 * in a bounded growable buffer, then emitted whole under the output lock (with
 * the optional `ts=<CLOCK_MONOTONIC microseconds> ` prefix). Values are
 * printed bare when they are made of safe characters only, otherwise quoted
 * with "..." and C-style escapes (\" \\ \n \t \xHH). Lock order: the
 * simulator's state lock may be held while printing, never the reverse. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

/* Longest line emitted; a longer one is cut at a field boundary and ends
 * with ` truncated=1`. */
#define OUT_LINE_MAX (1024 * 1024)

struct out_line {
	char *buf;
	size_t len;
	size_t cap;
	bool truncated;
};

/* Process-wide settings; call once before any thread prints. */
void out_init(bool timestamps);
void out_fini(void);

/* Starts a line with its first word (NULL: an empty buffer). Never fails: a line that cannot grow is
 * marked truncated. Every line must be released with out_emit or out_discard. */
void out_start(struct out_line *line, const char *word);

/* key=value, quoted only when needed. */
void out_kv(struct out_line *line, const char *key, const char *value);
/* key="value", always quoted (details, messages, reasons). */
void out_kv_quoted(struct out_line *line, const char *key, const char *value);
void out_kv_u64(struct out_line *line, const char *key, unsigned long long value);
void out_kv_bool(struct out_line *line, const char *key, bool value);

/* Comma-separated lists: start an empty buffer with out_start(&list, NULL),
 * add items, then out_kv_list prints key=a,b,c (`-` when empty) and frees
 * the list buffer. */
void out_list_add(struct out_line *list, const char *item);
void out_kv_list(struct out_line *line, const char *key, struct out_line *list);

/* Prints the line (plus newline), flushes stdout and frees the buffer. */
void out_emit(struct out_line *line);
void out_discard(struct out_line *line);

/* Holds the output lock across several out_emit calls so that a block of
 * lines (an allocation answer) stays together. Reentrant. */
void out_block_begin(void);
void out_block_end(void);

/* One-liners: `error message="..."`. */
void out_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
