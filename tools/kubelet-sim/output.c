/* SPDX-License-Identifier: Apache-2.0 */
/* kubelet-sim's event lines on stdout; see output.h for the format. */
#include "output.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Room kept at the end of a full line for " truncated=1". */
#define TRUNCATION_MARK " truncated=1"

static pthread_mutex_t out_lock;
static bool out_timestamps;

void out_init(bool timestamps)
{
	pthread_mutexattr_t attr;
	pthread_mutexattr_init(&attr);
	pthread_mutexattr_settype(&attr, PTHREAD_MUTEX_RECURSIVE);
	pthread_mutex_init(&out_lock, &attr);
	pthread_mutexattr_destroy(&attr);
	out_timestamps = timestamps;
}

void out_fini(void)
{
	pthread_mutex_destroy(&out_lock);
}

/* Makes room for `extra` more bytes plus a terminating NUL. Once a line has
 * been refused a field it refuses every later one, so it is cut cleanly. */
static bool reserve(struct out_line *line, size_t extra)
{
	if (line->truncated)
		return false;
	if (extra > OUT_LINE_MAX || line->len + extra > OUT_LINE_MAX) {
		line->truncated = true;
		return false;
	}
	size_t need = line->len + extra + 1;
	if (need <= line->cap)
		return true;
	size_t cap = line->cap ? line->cap : 256;
	while (cap < need)
		cap *= 2;
	char *buf = realloc(line->buf, cap);
	if (!buf) {
		line->truncated = true;
		return false;
	}
	line->buf = buf;
	line->cap = cap;
	return true;
}

static void append(struct out_line *line, const char *s, size_t n)
{
	memcpy(line->buf + line->len, s, n);
	line->len += n;
	line->buf[line->len] = '\0';
}

static bool is_safe_char(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       (c != '\0' && strchr("-_./:,=+@%~", c) != NULL);
}

static bool needs_quotes(const char *value)
{
	if (value[0] == '\0')
		return true;
	for (const char *p = value; *p; p++)
		if (!is_safe_char((unsigned char)*p))
			return true;
	return false;
}

/* Length of the escaped form, without the quotes. */
static size_t escaped_len(const char *value)
{
	size_t n = 0;
	for (const unsigned char *p = (const unsigned char *)value; *p; p++) {
		if (*p == '"' || *p == '\\' || *p == '\n' || *p == '\t' || *p == '\r')
			n += 2;
		else if (*p < 0x20 || *p == 0x7f)
			n += 4;
		else
			n += 1;
	}
	return n;
}

static void append_escaped(struct out_line *line, const char *value)
{
	static const char hex[] = "0123456789abcdef";
	for (const unsigned char *p = (const unsigned char *)value; *p; p++) {
		char esc[4];
		size_t n;
		switch (*p) {
		case '"':
		case '\\':
			esc[0] = '\\';
			esc[1] = (char)*p;
			n = 2;
			break;
		case '\n':
			memcpy(esc, "\\n", 2);
			n = 2;
			break;
		case '\t':
			memcpy(esc, "\\t", 2);
			n = 2;
			break;
		case '\r':
			memcpy(esc, "\\r", 2);
			n = 2;
			break;
		default:
			if (*p < 0x20 || *p == 0x7f) {
				esc[0] = '\\';
				esc[1] = 'x';
				esc[2] = hex[*p >> 4];
				esc[3] = hex[*p & 0xf];
				n = 4;
			} else {
				esc[0] = (char)*p;
				n = 1;
			}
			break;
		}
		append(line, esc, n);
	}
}

void out_start(struct out_line *line, const char *word)
{
	*line = (struct out_line){ 0 };
	if (word && reserve(line, strlen(word)))
		append(line, word, strlen(word));
}

static void field(struct out_line *line, const char *key, const char *value, bool force_quotes)
{
	bool quoted = force_quotes || needs_quotes(value);
	size_t key_len = strlen(key);
	size_t value_len = quoted ? escaped_len(value) + 2 : strlen(value);
	if (!reserve(line, 1 + key_len + 1 + value_len))
		return;
	append(line, " ", 1);
	append(line, key, key_len);
	append(line, "=", 1);
	if (quoted) {
		append(line, "\"", 1);
		append_escaped(line, value);
		append(line, "\"", 1);
	} else {
		append(line, value, value_len);
	}
}

void out_kv(struct out_line *line, const char *key, const char *value)
{
	field(line, key, value, false);
}

void out_kv_quoted(struct out_line *line, const char *key, const char *value)
{
	field(line, key, value, true);
}

void out_kv_u64(struct out_line *line, const char *key, unsigned long long value)
{
	char digits[24];
	snprintf(digits, sizeof(digits), "%llu", value);
	field(line, key, digits, false);
}

void out_kv_bool(struct out_line *line, const char *key, bool value)
{
	field(line, key, value ? "1" : "0", false);
}

void out_list_add(struct out_line *list, const char *item)
{
	size_t n = strlen(item);
	size_t sep = list->len ? 1 : 0;
	if (!reserve(list, sep + n))
		return;
	if (sep)
		append(list, ",", 1);
	append(list, item, n);
}

void out_kv_list(struct out_line *line, const char *key, struct out_line *list)
{
	/* A list that could not be built whole is not printed half. */
	if (list->truncated)
		line->truncated = true;
	else
		field(line, key, list->len ? list->buf : "-", false);
	out_discard(list);
}

void out_emit(struct out_line *line)
{
	pthread_mutex_lock(&out_lock);
	if (out_timestamps) {
		struct timespec now;
		clock_gettime(CLOCK_MONOTONIC, &now);
		long long us = (long long)now.tv_sec * 1000000 + now.tv_nsec / 1000;
		fprintf(stdout, "ts=%lld ", us);
	}
	if (line->len)
		fwrite(line->buf, 1, line->len, stdout);
	if (line->truncated)
		fputs(TRUNCATION_MARK, stdout);
	fputc('\n', stdout);
	fflush(stdout);
	pthread_mutex_unlock(&out_lock);
	out_discard(line);
}

void out_discard(struct out_line *line)
{
	free(line->buf);
	*line = (struct out_line){ 0 };
}

void out_block_begin(void)
{
	pthread_mutex_lock(&out_lock);
}

void out_block_end(void)
{
	pthread_mutex_unlock(&out_lock);
}

void out_error(const char *fmt, ...)
{
	char message[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(message, sizeof(message), fmt, ap);
	va_end(ap);

	struct out_line line;
	out_start(&line, "error");
	out_kv_quoted(&line, "message", message);
	out_emit(&line);
}
