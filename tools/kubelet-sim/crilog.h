/* SPDX-License-Identifier: Apache-2.0 */
/* The log files CRI runtimes write for containers (the kubelet's CRI logging
 * format): one record per line, `<RFC3339Nano time> <stream> <tag> <text>`,
 * stream `stdout` or `stderr`, tag `F` for a full line or `P` for a partial
 * one that the stream's next record continues (the runtime splits long
 * lines). This reader turns a log's bytes into the container's lines, joining
 * partial records per stream as `kubectl logs` does. Pure: no I/O. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

/* A joined line longer than this is cut (and marked so). */
#define CRILOG_LINE_MAX (64 * 1024)

struct crilog_line {
	const char *stream; /* "stdout" or "stderr" */
	const char *text;   /* not terminated; valid during the callback only */
	size_t len;
	bool cut;
};

typedef void (*crilog_fn)(void *ctx, const struct crilog_line *line);

/* Calls fn for each line of data[0..len), in order. Malformed records are
 * skipped and counted in *ret_skipped; partial records left at the end are
 * given as lines too. Returns 0 or -ENOMEM (then nothing more is called). */
int crilog_read(const char *data, size_t len, crilog_fn fn, void *ctx, size_t *ret_skipped);
