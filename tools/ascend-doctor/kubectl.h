/* SPDX-License-Identifier: Apache-2.0 */
/* Runs a program (kubectl) without a shell and collects what it prints,
 * bounded in size and time: the child is killed when it prints more than
 * max bytes or runs past the deadline. */
#pragma once

#include <stddef.h>
#include <stdint.h>

#define RUN_MAX_ARGS 32

/* Runs argv[0] (searched on PATH) with argv (at most RUN_MAX_ARGS, NULL-ended), stdin from /dev/null. Returns 0
 * with its stdout in *ret_out (malloc'd, NUL-terminated; *ret_len bytes)
 * when it exits 0. Otherwise a negative errno and why: -ENOENT when the
 * program is not found, -ETIMEDOUT past timeout_ms, -EFBIG beyond max bytes,
 * -EIO when it exits non-zero or is killed (why quotes the first line of its
 * stderr). */
int run_capture(const char *const argv[], int64_t timeout_ms, size_t max, char **ret_out, size_t *ret_len, char *why,
		size_t why_size);
