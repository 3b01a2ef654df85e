/* SPDX-License-Identifier: Apache-2.0 */
#include "base/parse.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "base/macro.h"

int parse_u64(const char *s, unsigned base, uint64_t max, uint64_t *ret_value)
{
	if (!s || (base != 10 && base != 16))
		return -EINVAL;
	if (base == 16 && (strncmp(s, "0x", 2) == 0 || strncmp(s, "0X", 2) == 0))
		s += 2;
	/* strtoull accepts signs and leading blanks; we do not. */
	if (!isxdigit((unsigned char)s[0]) || (base == 10 && !isdigit((unsigned char)s[0])))
		return -EINVAL;

	char *end;
	errno = 0;
	unsigned long long v = strtoull(s, &end, (int)base);
	if (errno == ERANGE || v > max)
		return -ERANGE;
	if (*end != '\0')
		return -EINVAL;
	*ret_value = v;
	return 0;
}

int parse_u32(const char *s, unsigned base, uint32_t max, uint32_t *ret_value)
{
	uint64_t v;
	int r = parse_u64(s, base, max, &v);
	if (r < 0)
		return r;
	*ret_value = (uint32_t)v;
	return 0;
}

int parse_duration_ms(const char *s, int64_t *ret_ms)
{
	return parse_duration_ms_max(s, 24LL * 3600 * 1000, ret_ms);
}

int parse_duration_ms_max(const char *s, int64_t max_ms, int64_t *ret_ms)
{
	static const struct {
		const char *suffix;
		uint64_t ms;
	} units[] = {
		{ "ms", 1 }, { "s", 1000 }, { "m", 60000 }, { "h", 3600000 }, { "", 1000 },
	};
	if (!s || max_ms < 0)
		return -EINVAL;
	const uint64_t max = (uint64_t)max_ms;
	size_t digits = strspn(s, "0123456789");
	if (digits == 0 || digits > 12)
		return digits == 0 ? -EINVAL : -ERANGE;

	char number[16];
	memcpy(number, s, digits);
	number[digits] = '\0';
	const char *suffix = s + digits;

	for (size_t i = 0; i < ELEMENTSOF(units); i++) {
		if (strcmp(suffix, units[i].suffix) != 0)
			continue;
		uint64_t v;
		int r = parse_u64(number, 10, max, &v);
		if (r < 0)
			return r;
		if (v > max / units[i].ms)
			return -ERANGE;
		*ret_ms = (int64_t)(v * units[i].ms);
		return 0;
	}
	return -EINVAL;
}

int str_copy(char *dst, size_t size, const char *src)
{
	size_t len = strlen(src);
	if (len >= size)
		return -ENAMETOOLONG;
	memcpy(dst, src, len + 1);
	return 0;
}

int why_fail(char *why, size_t why_size, int r, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(why, why_size, fmt, ap);
	va_end(ap);
	return r;
}

int str_printf(char *dst, size_t size, const char *fmt, ...)
{
	/* Measured first, so that dst is untouched when it does not fit and no
	 * intermediate buffer bounds the result below size. */
	va_list ap, again;
	va_start(ap, fmt);
	va_copy(again, ap);
	int n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n >= 0 && (size_t)n < size)
		vsnprintf(dst, size, fmt, again);
	va_end(again);
	if (n < 0)
		return -EINVAL;
	if ((size_t)n >= size)
		return -ENAMETOOLONG;
	return 0;
}

/* The parts of dir + "/" + name: how much of dir to keep (none for "/")
 * and where name starts, so that one slash stands between them. */
static size_t join_parts(const char *dir, const char **name)
{
	size_t dl = strlen(dir);
	while (dl > 1 && dir[dl - 1] == '/')
		dl--;
	while (**name == '/')
		(*name)++;
	return dl == 1 && dir[0] == '/' ? 0 : dl;
}

int path_join(char *dst, size_t size, const char *dir, const char *name)
{
	size_t dl = join_parts(dir, &name);
	return str_printf(dst, size, "%.*s/%s", (int)dl, dir, name);
}

void socket_path_too_long(char *why, size_t why_size, const char *dir, const char *name)
{
	size_t dl = join_parts(dir, &name);
	snprintf(why, why_size, "the socket path %.*s/%s would be %zu bytes; unix socket paths must stay under %d",
		 (int)dl, dir, name, dl + 1 + strlen(name), SOCKET_PATH_MAX);
}

bool path_exists(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0;
}

int64_t wall_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int64_t now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}
