/* SPDX-License-Identifier: Apache-2.0 */
#include "base/log.h"

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "base/macro.h"
#include "base/wait.h"

static const char *const level_names[] = {
	[LOG_LEVEL_ERROR] = "error",
	[LOG_LEVEL_WARN] = "warn",
	[LOG_LEVEL_INFO] = "info",
	[LOG_LEVEL_DEBUG] = "debug",
};

static _Atomic int threshold = LOG_LEVEL_INFO;

enum log_mode {
	MODE_DIRECT,  /* the caller writes (not started, or stopped cleanly) */
	MODE_QUEUED,  /* the writer thread writes */
	MODE_DROPPED, /* the writer failed for good, or log_stop gave up: drop */
};

/* The queue is a byte ring of whole lines: a line goes in entirely or not at
 * all, and the writer writes from the oldest byte on. Only the writer
 * removes bytes, only callers (under the lock) append them, so the writer
 * may read [head, head + len) without the lock while callers append after it. */
static struct {
	pthread_mutex_t lock;
	pthread_cond_t wake;    /* to the writer: bytes queued, or stop */
	pthread_cond_t drained; /* to log_stop: the queue is empty, or the writer ended */
	enum log_mode mode;
	bool started;
	bool stopping;
	bool writer_done;
	int fd;
	char *ring;
	size_t cap, head, len;
	uint64_t dropped;        /* since log_start, for log_dropped() */
	uint64_t dropped_unsaid; /* not yet reported by a line of the log's own */
	pthread_t writer;
} q = {
	.lock = PTHREAD_MUTEX_INITIALIZER,
	.wake = PTHREAD_COND_INITIALIZER,
	.mode = MODE_DIRECT,
	.fd = STDERR_FILENO,
};

int log_level_parse(const char *s, enum log_level *ret_level)
{
	for (size_t i = 0; i < ELEMENTSOF(level_names); i++) {
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

static _Atomic int format = LOG_FORMAT_TEXT;

int log_format_parse(const char *s, enum log_format *ret_format)
{
	if (strcmp(s, "text") == 0)
		*ret_format = LOG_FORMAT_TEXT;
	else if (strcmp(s, "json") == 0)
		*ret_format = LOG_FORMAT_JSON;
	else
		return -EINVAL;
	return 0;
}

void log_set_format(enum log_format f)
{
	atomic_store(&format, (int)f);
}

/* Appends s as the inside of a JSON string to buf[used..room), escaped
 * (RFC 8259: quote, backslash and control characters). Stops before a
 * character that does not fit; returns the new length and whether all of s
 * went in. Bytes above 0x7f pass as they are: messages are UTF-8 or ASCII. */
static size_t json_escape(char *buf, size_t used, size_t room, const char *s, bool *ret_whole)
{
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		char esc[8];
		size_t n;
		if (c == '"' || c == '\\') {
			esc[0] = '\\';
			esc[1] = (char)c;
			n = 2;
		} else if (c == '\n' || c == '\t' || c == '\r') {
			esc[0] = '\\';
			esc[1] = c == '\n' ? 'n' : c == '\t' ? 't' : 'r';
			n = 2;
		} else if (c < 0x20 || c == 0x7f) {
			n = (size_t)snprintf(esc, sizeof(esc), "\\u%04x", c);
		} else {
			esc[0] = (char)c;
			n = 1;
		}
		if (used + n > room) {
			*ret_whole = false;
			return used;
		}
		memcpy(buf + used, esc, n);
		used += n;
	}
	*ret_whole = true;
	return used;
}

/* Appends ,"key":"value" (or ,"key":number) to tail[used..room); leaves
 * tail as it was and returns used when the field does not fit whole: a field
 * too long for a log line is left out. */
static size_t put_field(char *tail, size_t used, size_t room, const struct log_field *f)
{
	int n = f->is_num ? snprintf(tail + used, room - used, ",\"%s\":%lld", f->key, f->num)
			  : snprintf(tail + used, room - used, ",\"%s\":\"", f->key);
	if (n < 0 || (size_t)n >= room - used)
		return used;
	size_t end = used + (size_t)n;
	if (f->is_num)
		return end;
	bool whole;
	end = json_escape(tail, end, room - 1, f->str, &whole);
	if (!whole)
		return used;
	tail[end++] = '"';
	return end;
}

/* One JSON object: {"time":...,"level":...[,"event":...],"msg":...[,"resource":...][,"device":...][,more...]}.
 * A message that does not fit is cut and ends in "...", the object stays whole. */
static size_t format_json(char *buf, const char *stamp, enum log_level level, enum log_event event, const char *msg,
			  const struct log_fields *fields)
{
	/* Room for the closing of the object, the fields and the newline. */
	char tail[1024];
	const size_t tail_room = sizeof(tail) - 2; /* the closing brace and the newline */
	size_t tail_len = 0;
	tail[tail_len++] = '"';
	if (fields) {
		const struct log_field named[] = { LOG_STR("resource", fields->resource),
						   LOG_STR("device", fields->device) };
		for (size_t i = 0; i < ELEMENTSOF(named); i++)
			if (named[i].str && named[i].str[0])
				tail_len = put_field(tail, tail_len, tail_room, &named[i]);
		for (size_t i = 0; i < LOG_FIELDS_MORE_MAX; i++) {
			const struct log_field *f = &fields->more[i];
			if (f->key && (f->is_num || (f->str && f->str[0])))
				tail_len = put_field(tail, tail_len, tail_room, f);
		}
	}
	tail[tail_len++] = '}';
	tail[tail_len++] = '\n';

	int n = snprintf(buf, LOG_LINE_MAX, "{\"time\":\"%s\",\"level\":\"%s\",", stamp, level_names[level]);
	size_t used = n > 0 ? (size_t)n : 0;
	const char *name = log_event_name(event);
	if (name) {
		n = snprintf(buf + used, LOG_LINE_MAX - used, "\"event\":\"%s\",", name);
		used += n > 0 ? (size_t)n : 0;
	}
	memcpy(buf + used, "\"msg\":\"", 7);
	used += 7;
	bool whole;
	size_t room = LOG_LINE_MAX - tail_len - 3;
	used = json_escape(buf, used, room, msg, &whole);
	if (!whole) {
		memcpy(buf + used, "...", 3);
		used += 3;
	}
	memcpy(buf + used, tail, tail_len);
	return used + tail_len;
}

const char *log_event_name(enum log_event event)
{
	static const char *const names[] = {
#define LOG_EVENT_NAME(id, name) [LOG_EVENT_##id] = name,
		LOG_EVENTS(LOG_EVENT_NAME)
#undef LOG_EVENT_NAME
	};
	return (size_t)event < ELEMENTSOF(names) ? names[event] : NULL;
}

size_t log_text_escape(char *buf, size_t used, size_t room, const char *s, bool *cut)
{
	static const char hex[] = "0123456789abcdef";
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		char esc[4];
		size_t len = 1;
		esc[0] = (char)c;
		if (c == '\n' || c == '\r' || c == '\t') {
			esc[0] = '\\';
			esc[1] = c == '\n' ? 'n' : c == '\r' ? 'r' : 't';
			len = 2;
		} else if (c < 0x20 || c == 0x7f) {
			esc[0] = '\\';
			esc[1] = 'x';
			esc[2] = hex[c >> 4];
			esc[3] = hex[c & 0xf];
			len = 4;
		}
		if (used + len > room) {
			*cut = true;
			break;
		}
		memcpy(buf + used, esc, len);
		used += len;
	}
	return used;
}

/* "<UTC time> <level> <message>\n" (or the JSON object) into
 * buf[LOG_LINE_MAX]; returns the length. A cut line ends in "...\n" so
 * that a reader sees it was cut. */
static size_t format_line_fields(char *buf, enum log_level level, enum log_event event,
				 const struct log_fields *fields, const char *fmt, va_list ap)
{
	struct timespec now;
	struct tm tm;
	char date[24], stamp[48];
	clock_gettime(CLOCK_REALTIME, &now);
	gmtime_r(&now.tv_sec, &tm);
	strftime(date, sizeof(date), "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(stamp, sizeof(stamp), "%s.%03dZ", date, (int)(now.tv_nsec / 1000000) % 1000);

	if (atomic_load(&format) == LOG_FORMAT_JSON) {
		char msg[LOG_LINE_MAX];
		if (vsnprintf(msg, sizeof(msg), fmt, ap) < 0)
			msg[0] = '\0';
		return format_json(buf, stamp, level, event, msg, fields);
	}

	/* One byte is kept for the newline, one for a terminator. */
	const size_t room = LOG_LINE_MAX - 2;
	int n = snprintf(buf, room, "%s %-5s ", stamp, level_names[level]);
	size_t used = n > 0 && (size_t)n < room ? (size_t)n : 0;
	char msg[LOG_LINE_MAX];
	n = vsnprintf(msg, sizeof(msg), fmt, ap);
	bool cut = n >= (int)sizeof(msg);
	if (n < 0)
		msg[0] = '\0';
	used = log_text_escape(buf, used, room, msg, &cut);
	if (cut) {
		while (used + 3 > room)
			used--;
		memcpy(buf + used, "...", 3);
		used += 3;
	}
	buf[used++] = '\n';
	return used;
}

static void write_all(int fd, const char *p, size_t n)
{
	while (n > 0) {
		ssize_t w = write(fd, p, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return;
		p += w;
		n -= (size_t)w;
	}
}

/* Writes what fd takes without waiting, per call (RWF_NOWAIT): O_NONBLOCK
 * would change the file description shared with the parent. Returns the
 * bytes written; 0 where the kernel cannot promise not to wait (EAGAIN, or
 * EOPNOTSUPP on some files), and on any error, which the writer will meet. */
static size_t write_nowait(int fd, const char *p, size_t n)
{
	struct iovec iov = { .iov_base = (void *)(uintptr_t)p, .iov_len = n };
	ssize_t w;
	do
		w = pwritev2(fd, &iov, 1, -1, RWF_NOWAIT);
	while (w < 0 && errno == EINTR);
	return w > 0 ? (size_t)w : 0;
}

/* Appends a whole line when it fits; the caller holds the lock. */
static bool push_locked(const char *line, size_t n)
{
	if (n > q.cap - q.len)
		return false;
	size_t tail = (q.head + q.len) % q.cap;
	size_t first = n < q.cap - tail ? n : q.cap - tail;
	memcpy(q.ring + tail, line, first);
	memcpy(q.ring, line + first, n - first);
	q.len += n;
	pthread_cond_signal(&q.wake);
	return true;
}

static void drop_locked(void)
{
	q.dropped++;
	q.dropped_unsaid++;
}

static size_t format_linef(char *buf, enum log_level level, enum log_event event, const struct log_fields *fields,
			   const char *fmt, ...) __attribute__((format(printf, 5, 6)));
static size_t format_linef(char *buf, enum log_level level, enum log_event event, const struct log_fields *fields,
			   const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	size_t n = format_line_fields(buf, level, event, fields, fmt, ap);
	va_end(ap);
	return n;
}

/* Queues the line that reports unreported drops, when it fits. Until it
 * does, new lines are dropped too, so that the report stands in the gap. */
static bool say_dropped_locked(void)
{
	if (q.dropped_unsaid == 0)
		return true;
	char line[LOG_LINE_MAX];
	const struct log_fields f = { .more = { LOG_NUM("lines", q.dropped_unsaid) } };
	size_t n = format_linef(line, LOG_LEVEL_WARN, LOG_EVENT_LOG_DROPPED, &f,
				"log: %llu lines dropped: stderr was not being read", (unsigned long long)q.dropped_unsaid);
	if (!push_locked(line, n))
		return false;
	q.dropped_unsaid = 0;
	return true;
}

/* A line ends with the byte before it; a discarded queue is counted in lines. */
static uint64_t count_lines_locked(void)
{
	uint64_t lines = 0;
	for (size_t i = 0; i < q.len; i++)
		lines += q.ring[(q.head + i) % q.cap] == '\n';
	return lines;
}

static void *writer_main(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&q.lock);
	for (;;) {
		if (q.mode == MODE_QUEUED)
			say_dropped_locked();
		if (q.len == 0) {
			pthread_cond_broadcast(&q.drained);
			if (q.stopping)
				break;
			pthread_cond_wait(&q.wake, &q.lock);
			continue;
		}
		const char *p = q.ring + q.head;
		size_t chunk = q.len < q.cap - q.head ? q.len : q.cap - q.head;
		pthread_mutex_unlock(&q.lock);

		/* The write that may block for good, outside the lock. */
		ssize_t w = write(q.fd, p, chunk);
		int err = errno;
		if (w < 0 && err == EAGAIN) {
			/* Someone set O_NONBLOCK on the shared file description. */
			struct pollfd pfd = { .fd = q.fd, .events = POLLOUT };
			poll(&pfd, 1, -1);
		}

		pthread_mutex_lock(&q.lock);
		if (w > 0) {
			q.head = (q.head + (size_t)w) % q.cap;
			q.len -= (size_t)w;
		} else if (w == 0 || (err != EINTR && err != EAGAIN)) {
			/* stderr is gone (EPIPE, EBADF...): nothing will be read
			 * again, so keep no line and stop saying so. */
			uint64_t lines = count_lines_locked();
			q.dropped += lines;
			q.head = q.len = 0;
			q.dropped_unsaid = 0;
			q.mode = MODE_DROPPED;
		}
	}
	q.writer_done = true;
	pthread_mutex_unlock(&q.lock);
	return NULL;
}

static void emit(const char *line, size_t n);

/* The line of every log call: formatted on the caller's stack, then out. */
static void say(enum log_level level, enum log_event event, const struct log_fields *fields, const char *fmt,
		va_list ap)
{
	char line[LOG_LINE_MAX];
	emit(line, format_line_fields(line, level, event, fields, fmt, ap));
}

void log_msg(enum log_level level, const char *fmt, ...)
{
	if (!log_enabled(level))
		return;
	va_list ap;
	va_start(ap, fmt);
	say(level, LOG_EVENT_NONE, NULL, fmt, ap);
	va_end(ap);
}

void log_msg_fields(enum log_level level, const struct log_fields *fields, const char *fmt, ...)
{
	if (!log_enabled(level))
		return;
	va_list ap;
	va_start(ap, fmt);
	say(level, LOG_EVENT_NONE, fields, fmt, ap);
	va_end(ap);
}

void log_event(enum log_level level, enum log_event event, const struct log_fields *fields, const char *fmt, ...)
{
	if (!log_enabled(level))
		return;
	va_list ap;
	va_start(ap, fmt);
	say(level, event, fields, fmt, ap);
	va_end(ap);
}

static void emit(const char *line, size_t n)
{
	pthread_mutex_lock(&q.lock);
	switch (q.mode) {
	case MODE_DIRECT:
		/* Under the lock, so that lines of different threads stay whole. */
		write_all(q.fd, line, n);
		break;
	case MODE_QUEUED: {
		/* With nothing queued, a write the kernel can take at once keeps
		 * the line in order with what this process does next (a test,
		 * a person reading along); the rest waits for the writer. */
		size_t done = q.len == 0 && q.dropped_unsaid == 0 ? write_nowait(q.fd, line, n) : 0;
		if (done < n && (!say_dropped_locked() || !push_locked(line + done, n - done)))
			drop_locked();
		break;
	}
	case MODE_DROPPED:
		q.dropped++;
		break;
	}
	pthread_mutex_unlock(&q.lock);
}

int log_start(int fd, size_t queue_bytes)
{
	if (fd < 0 || queue_bytes < LOG_LINE_MAX)
		return -EINVAL;

	pthread_mutex_lock(&q.lock);
	int r = 0;
	if (q.started) {
		r = -EALREADY;
		goto out;
	}
	q.ring = malloc(queue_bytes);
	if (!q.ring) {
		r = -ENOMEM;
		goto out;
	}
	/* log_stop waits with a deadline that wall-clock steps must not move. */
	cond_init_monotonic(&q.drained);
	q.fd = fd;
	q.cap = queue_bytes;
	q.head = q.len = 0;
	q.dropped = q.dropped_unsaid = 0;

	/* Signals belong to whoever waits for them (a signalfd), never to the writer. */
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	r = -pthread_create(&q.writer, NULL, writer_main, NULL);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (r < 0) {
		pthread_cond_destroy(&q.drained);
		free(q.ring);
		q.ring = NULL;
		q.fd = STDERR_FILENO;
		goto out;
	}
	q.started = true;
	q.mode = MODE_QUEUED;
out:
	pthread_mutex_unlock(&q.lock);
	return r;
}

void log_stop(int timeout_ms)
{
	pthread_mutex_lock(&q.lock);
	if (!q.started || q.stopping) {
		pthread_mutex_unlock(&q.lock);
		return;
	}
	q.stopping = true;
	pthread_cond_signal(&q.wake);

	struct timespec deadline = deadline_after_ms(timeout_ms);
	while (!q.writer_done && pthread_cond_timedwait(&q.drained, &q.lock, &deadline) != ETIMEDOUT)
		;
	bool done = q.writer_done;
	if (done) {
		q.mode = MODE_DIRECT;
	} else {
		/* The writer is stuck in write(): what it holds goes with the
		 * process. The queue stays allocated for it. */
		q.dropped += count_lines_locked();
		q.mode = MODE_DROPPED;
	}
	pthread_mutex_unlock(&q.lock);

	if (done) {
		pthread_join(q.writer, NULL);
		pthread_mutex_lock(&q.lock);
		free(q.ring);
		q.ring = NULL;
		q.cap = 0;
		pthread_mutex_unlock(&q.lock);
	}
}

uint64_t log_dropped(void)
{
	pthread_mutex_lock(&q.lock);
	uint64_t n = q.dropped;
	pthread_mutex_unlock(&q.lock);
	return n;
}
