/* Logging for the top level of programs: one line per event on stderr, with
 * a UTC timestamp and a level, filtered by a process-wide threshold. Library
 * modules never log; they return negative errno codes and let callers speak. */
#pragma once

#include <stdbool.h>

enum log_level {
	LOG_LEVEL_ERROR,
	LOG_LEVEL_WARN,
	LOG_LEVEL_INFO,
	LOG_LEVEL_DEBUG,
};

/* Parses "error", "warn", "info" or "debug". Returns 0 or -EINVAL. */
int log_level_parse(const char *s, enum log_level *ret_level);
void log_set_level(enum log_level level);
bool log_enabled(enum log_level level);

/* Writes one line atomically with respect to other threads. */
void log_msg(enum log_level level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#define log_error(...) log_msg(LOG_LEVEL_ERROR, __VA_ARGS__)
#define log_warn(...) log_msg(LOG_LEVEL_WARN, __VA_ARGS__)
#define log_info(...) log_msg(LOG_LEVEL_INFO, __VA_ARGS__)
#define log_debug(...) log_msg(LOG_LEVEL_DEBUG, __VA_ARGS__)
