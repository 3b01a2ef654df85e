/* SPDX-License-Identifier: Apache-2.0 */
/* Lines of the daemon's JSON log (--log-format json) matched by the name of
 * the event they say and the values of its fields, not by the sentence:
 * a reworded message keeps its tests, and a test cannot pass on a line that
 * merely contains the words it looks for. The names are src/base/log_events.h's. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "support/proc.h"

/* At most this many "key", "value" pairs per match. */
#define LOG_MATCH_PAIRS_MAX 8

struct log_match {
	const char *event;
	const char *pairs[2 * LOG_MATCH_PAIRS_MAX]; /* key, value, ...; unused ones NULL */
	char what[512];                             /* "the event x with k=v", for messages */
};

/* Fills m for event with the n strings of pairs (key, value, ...). Returns
 * 0, or -EINVAL when n is odd or over 2 * LOG_MATCH_PAIRS_MAX. */
int log_match_init(struct log_match *m, const char *event, const char *const pairs[], unsigned n);

/* Whether line is a JSON object with "event" equal to m's and each key's
 * value equal to its value as text (a number by its decimal digits). arg is
 * a struct log_match, so that this serves as a proc_match. */
bool log_match_line(const char *line, const void *m);

/* The proc_match of m (which must outlive it). */
struct proc_match log_match_proc(const struct log_match *m);

/* The text of field key of a JSON log line (a number by its digits) into
 * buf. Returns 0, -ENOENT when the line has no such field or is no JSON
 * object, or -ENOBUFS when the value does not fit. */
int log_line_field(const char *line, const char *key, char *buf, size_t size);
