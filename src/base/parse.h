/* SPDX-License-Identifier: Apache-2.0 */
/* Checked parsers for text that comes from outside (flags, environment, state
 * files): numbers, durations and bounded string and path building. Every
 * function returns 0 or a negative errno and writes its output only on
 * success, but socket_path_too_long, which only writes a message. */
#pragma once

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A whole decimal (or, with base 16, hex with an optional 0x) number in [0, max]. */
int parse_u64(const char *s, unsigned base, uint64_t max, uint64_t *ret_value);
int parse_u32(const char *s, unsigned base, uint32_t max, uint32_t *ret_value);

/* "500ms", "5s", "1m", "2h"; a bare number means seconds. Results above one day are -ERANGE. */
int parse_duration_ms(const char *s, int64_t *ret_ms);
/* The same forms, with results up to max_ms (-ERANGE above it): for windows
 * longer than a day, such as a fault policy's release window. */
int parse_duration_ms_max(const char *s, int64_t max_ms, int64_t *ret_ms);

/* Copies src into dst[size]; -ENAMETOOLONG (dst untouched) when it does not fit. */
int str_copy(char *dst, size_t size, const char *src);

/* Formats into dst[size], whatever size is; -ENAMETOOLONG (dst untouched)
 * when the result does not fit, -EINVAL on a formatting error. */
int str_printf(char *dst, size_t size, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* Writes why (cut to why_size; nothing when why_size is 0, why may then be
 * NULL) and returns r: a failure and its reason in one statement. */
int why_fail(char *why, size_t why_size, int r, const char *fmt, ...) __attribute__((format(printf, 4, 5)));

/* why_fail with -EINVAL: a validator's "this is wrong, and here is why". */
#define why_invalid(why, why_size, ...) why_fail((why), (why_size), -EINVAL, __VA_ARGS__)

/* dir + "/" + name with one slash between them, bounded like str_printf. */
int path_join(char *dst, size_t size, const char *dir, const char *name);

/* Whether the path exists (any file type); follows symlinks. */
bool path_exists(const char *path);

/* sockaddr_un.sun_path, terminator included: a unix socket's path must be
 * shorter. The one definition for the plugin, kubelet-sim and the tests. */
#define SOCKET_PATH_MAX 108

/* Why dir + "/" + name cannot be a unix socket, for a flag's message: "the
 * socket path DIR/NAME would be N bytes; unix socket paths must stay under
 * 108", cut to why[why_size]. The whole path and its length show what to
 * shorten and by how much. */
void socket_path_too_long(char *why, size_t why_size, const char *dir, const char *name);

/* Milliseconds on CLOCK_MONOTONIC. */
int64_t now_ms(void);
/* Wall-clock ms since the epoch (CLOCK_REALTIME): for times people and
 * other processes read, never for measuring intervals. */
int64_t wall_ms(void);
