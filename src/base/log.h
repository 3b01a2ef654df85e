/* SPDX-License-Identifier: Apache-2.0 */
/* Logging for the top level of programs: one line per event on stderr, with
 * a UTC timestamp and a level, filtered by a process-wide threshold. Library
 * modules never log; they return negative errno codes and let callers speak.
 *
 * Logging never blocks the caller once log_start has run: the caller formats
 * its line and queues it, and a thread of the log's own does the writes that
 * may block (a stderr pipe nobody drains blocks write() forever, which must
 * not stop the event loop, health reporting or SIGTERM). While nothing is
 * queued the caller first offers the line to the kernel without waiting
 * (pwritev2 with RWF_NOWAIT), so that in the usual case a line is out before
 * the caller goes on. A full queue drops the line and counts it; once
 * writing resumes, one line says how many were dropped. Before log_start, and
 * after a log_stop that drained the queue, lines are written directly. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/log_events.h"

enum log_level {
	LOG_LEVEL_ERROR,
	LOG_LEVEL_WARN,
	LOG_LEVEL_INFO,
	LOG_LEVEL_DEBUG,
};

/* A line longer than this (newline included) is cut, ending in "...". */
#define LOG_LINE_MAX 4096
/* The queue of lines waiting for the writer: about 500 typical lines. */
#define LOG_QUEUE_BYTES_DEFAULT (64 * 1024)
/* How long log_stop waits for a blocked stderr at exit. */
#define LOG_STOP_TIMEOUT_MS 1000

/* Parses "error", "warn", "info" or "debug". Returns 0 or -EINVAL. */
int log_level_parse(const char *s, enum log_level *ret_level);
void log_set_level(enum log_level level);
bool log_enabled(enum log_level level);

/* Writes one line, whole with respect to other threads' lines; never blocks
 * after log_start. */
void log_msg(enum log_level level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* --log-format: text (the default) is "<time> <level> <message>"; json is
 * one object per line, {"time":"...","level":"...","msg":"..."} plus
 * "event" for a named event, "resource" and "device" when the line is about
 * one, and the event's own fields. */
enum log_format {
	LOG_FORMAT_TEXT,
	LOG_FORMAT_JSON,
};

/* Parses "text" or "json". Returns 0 or -EINVAL. */
int log_format_parse(const char *s, enum log_format *ret_format);
void log_set_format(enum log_format format);

/* One more value of a line for the JSON format: a string, or a number
 * (LOG_NUM). A member with no key, or a string one whose value is NULL or
 * empty, is left out. */
struct log_field {
	const char *key;
	const char *str;
	long long num;
	bool is_num;
};
#define LOG_STR(k, v) { .key = (k), .str = (v) }
#define LOG_NUM(k, v) { .key = (k), .num = (long long)(v), .is_num = true }
#define LOG_FIELDS_MORE_MAX 6

/* What a line is about, for the JSON format (text lines say it in the
 * message). NULL or empty members are left out. */
struct log_fields {
	const char *resource;
	const char *device;
	struct log_field more[LOG_FIELDS_MORE_MAX];
};

void log_msg_fields(enum log_level level, const struct log_fields *fields, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* A line that says one of the events of base/log_events.h: the text format
 * is the message alone, as log_msg_fields writes it; the JSON format adds
 * "event":"<name>" after the level, so that a reader (an alert, a test)
 * matches the name and the fields rather than the sentence, which may be
 * reworded. fields may be NULL. */
void log_event(enum log_level level, enum log_event event, const struct log_fields *fields, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/* The event's name ("plugin.registered"), or NULL for LOG_EVENT_NONE. */
const char *log_event_name(enum log_event event);

/* Appends s to buf[used..room) with every control character escaped (\n,
 * \r, \t, else \xHH), so that a value from a file, a flag or a peer can
 * never start a line of its own that looks like the program's: every line
 * of the log is written so, and so is every error a program prints before
 * its log starts (base/cli.h). Sets *cut when s did not fit whole; returns
 * the new length. */
size_t log_text_escape(char *buf, size_t used, size_t room, const char *s, bool *cut);

#define log_error(...) log_msg(LOG_LEVEL_ERROR, __VA_ARGS__)
#define log_warn(...) log_msg(LOG_LEVEL_WARN, __VA_ARGS__)
#define log_info(...) log_msg(LOG_LEVEL_INFO, __VA_ARGS__)
#define log_debug(...) log_msg(LOG_LEVEL_DEBUG, __VA_ARGS__)

/* From now on lines go through a queue of queue_bytes (at least
 * LOG_LINE_MAX) to a writer thread that writes them to fd (the program's
 * stderr: STDERR_FILENO). The thread blocks every signal. Returns 0,
 * -EALREADY when started before (even if stopped since), -EINVAL, or the
 * errno of allocating the queue or creating the thread; on failure logging
 * stays direct. */
int log_start(int fd, size_t queue_bytes);

/* Writes what is queued, waiting at most timeout_ms for it, and ends the
 * writer. When the queue could not be drained in time (stderr blocked), the
 * rest is abandoned to the process's exit and later lines are dropped; when
 * it was, later lines are written directly again. Does nothing when not
 * started. For the exit path: never hangs on a blocked stderr. */
void log_stop(int timeout_ms);

/* Lines dropped since log_start because the queue was full, the writer had
 * failed for good (e.g. EPIPE) or log_stop had given up. */
uint64_t log_dropped(void);
