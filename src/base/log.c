#include "base/log.h"

#include <errno.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

static const char *const level_names[] = {
	[LOG_LEVEL_ERROR] = "error",
	[LOG_LEVEL_WARN] = "warn",
	[LOG_LEVEL_INFO] = "info",
	[LOG_LEVEL_DEBUG] = "debug",
};

static _Atomic int threshold = LOG_LEVEL_INFO;

int log_level_parse(const char *s, enum log_level *ret_level)
{
	for (size_t i = 0; i < sizeof(level_names) / sizeof(level_names[0]); i++) {
		if (strcmp(s, level_names[i]) == 0) {
			*ret_level = (enum log_level)i;
			return 0;
		}
	}
	return -EINVAL;
}

void log_set_level(enum log_level level)
{
	atomic_store(&threshold, (int)level);
}

bool log_enabled(enum log_level level)
{
	return (int)level <= atomic_load(&threshold);
}

void log_msg(enum log_level level, const char *fmt, ...)
{
	if (!log_enabled(level))
		return;

	struct timespec now;
	struct tm tm;
	char stamp[32];
	clock_gettime(CLOCK_REALTIME, &now);
	gmtime_r(&now.tv_sec, &tm);
	strftime(stamp, sizeof(stamp), "%Y-%m-%dT%H:%M:%S", &tm);

	/* flockfile keeps lines from different threads whole. */
	va_list ap;
	va_start(ap, fmt);
	flockfile(stderr);
	fprintf(stderr, "%s.%03ldZ %-5s ", stamp, now.tv_nsec / 1000000, level_names[level]);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	funlockfile(stderr);
	va_end(ap);
}
