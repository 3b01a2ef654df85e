/* SPDX-License-Identifier: Apache-2.0 */
/* Reading a whole file that comes from outside (a configuration file, a
 * manifest), bounded: only a regular file is read (a FIFO or a device must
 * not hold the caller), and at most max bytes. */
#pragma once

#include <stddef.h>

/* Reads path into a malloc'd buffer of *ret_len bytes plus a terminating
 * NUL, so that text can be used as a string at once (a NUL inside the file
 * is the caller's to refuse). Returns 0 with *ret_buf and *ret_len set, or a
 * negative errno with a short message in why ("cannot open: ...", "cannot
 * read: ...", "not a regular file", "larger than N bytes", "out of memory"). */
int file_read_bounded(const char *path, size_t max, char **ret_buf, size_t *ret_len, char *why, size_t why_size);
