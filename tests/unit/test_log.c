/* SPDX-License-Identifier: Apache-2.0 */
/* The log's queue: with its output blocked, log_msg returns at once, a full
 * queue drops lines and counts them, and once the output drains the queued
 * lines come out in order followed by one line saying how many were dropped;
 * with nothing queued a line is out before log_msg returns; control
 * characters in a line are escaped; log_stop gives
 * up on a blocked output at its deadline. Every wait here is a poll with a
 * deadline on the pipe the log writes to. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include <cmocka.h>

#include "base/log.h"
#include "base/parse.h"

#define WAIT_MS 10000
/* Every test line is this long: "<24-byte stamp> info  line NN " plus padding. */
#define LINE_BYTES 64
#define QUEUE_LINES 8

static int pipe_fds[2];

/* Fills the pipe so that the next blocking write to it blocks; returns the
 * bytes put in. O_NONBLOCK is set on the test's own pipe only, and cleared. */
static size_t fill(int fd)
{
	int flags = fcntl(fd, F_GETFL);
	assert_int_equal(fcntl(fd, F_SETFL, flags | O_NONBLOCK), 0);
	char chunk[4096];
	memset(chunk, '#', sizeof(chunk));
	size_t total = 0;
	for (size_t size = sizeof(chunk); size > 0; size /= 2) {
		ssize_t w;
		while ((w = write(fd, chunk, size)) > 0)
			total += (size_t)w;
		assert_int_equal(errno, EAGAIN);
	}
	assert_int_equal(fcntl(fd, F_SETFL, flags), 0);
	return total;
}

/* Reads exactly n bytes, or fails the test at the deadline. */
static void read_exactly(int fd, char *buf, size_t n)
{
	int64_t deadline = now_ms() + WAIT_MS;
	size_t got = 0;
	while (got < n) {
		struct pollfd pfd = { .fd = fd, .events = POLLIN };
		int64_t left = deadline - now_ms();
		assert_true(left > 0);
		if (poll(&pfd, 1, (int)left) <= 0)
			fail_msg("only %zu of %zu bytes arrived", got, n);
		ssize_t r = read(fd, buf + got, n - got);
		assert_true(r > 0);
		got += (size_t)r;
	}
}

/* Reads one line (without its newline) or fails the test at the deadline. */
static void read_line(int fd, char *buf, size_t size)
{
	size_t n = 0;
	for (;;) {
		assert_true(n < size - 1);
		read_exactly(fd, buf + n, 1);
		if (buf[n] == '\n')
			break;
		n++;
	}
	buf[n] = '\0';
}

static void log_line(unsigned i)
{
	/* 24 (stamp) + 1 + 5 (level) + 1 = 31 bytes of prefix, + 32 + newline = 64. */
	log_info("line %02u %-24s", i, "padding");
}

static void test_full_queue_drops_and_says_so(void **state)
{
	(void)state;
	assert_int_equal(pipe2(pipe_fds, O_CLOEXEC), 0);
	size_t filler = fill(pipe_fds[1]);
	log_set_level(LOG_LEVEL_INFO);
	assert_int_equal(log_start(pipe_fds[1], LOG_LINE_MAX), 0);
	assert_int_equal(log_start(pipe_fds[1], LOG_LINE_MAX), -EALREADY);

	/* LOG_LINE_MAX bytes hold 64 lines of 64 bytes; the writer is stuck
	 * on the full pipe, so 64 lines wait and the rest are dropped. log_msg
	 * returning at all is the point: before the queue it blocked here. */
	const unsigned queued = LOG_LINE_MAX / LINE_BYTES, total = queued + 20;
	for (unsigned i = 0; i < total; i++)
		log_line(i);
	assert_int_equal(log_dropped(), total - queued);

	/* The reader comes back: the filler, then the queued lines in order,
	 * then the count of what was lost. */
	char *skip = malloc(filler);
	assert_non_null(skip);
	read_exactly(pipe_fds[0], skip, filler);
	free(skip);
	char line[LOG_LINE_MAX], want[64];
	for (unsigned i = 0; i < queued; i++) {
		read_line(pipe_fds[0], line, sizeof(line));
		assert_int_equal(strlen(line) + 1, LINE_BYTES);
		snprintf(want, sizeof(want), " info  line %02u ", i);
		if (!strstr(line, want))
			fail_msg("line %u is '%s'", i, line);
	}
	read_line(pipe_fds[0], line, sizeof(line));
	snprintf(want, sizeof(want), " warn  log: %u lines dropped: stderr was not being read", total - queued);
	if (!strstr(line, want))
		fail_msg("expected the drop count, got '%s'", line);

	/* Writing has resumed: a new line comes out, and nothing more is lost. */
	log_line(99);
	read_line(pipe_fds[0], line, sizeof(line));
	assert_non_null(strstr(line, "line 99"));
	assert_int_equal(log_dropped(), total - queued);
}

/* With nothing queued and room in the pipe, the line is in the pipe when
 * log_msg returns: output keeps its order with what the caller does next.
 * Kernels whose pipes refuse RWF_NOWAIT leave it to the writer thread. */
static void test_line_is_out_when_log_msg_returns(void **state)
{
	(void)state;
	struct iovec probe = { .iov_base = (void *)(uintptr_t)"", .iov_len = 0 };
	if (pwritev2(pipe_fds[1], &probe, 1, -1, RWF_NOWAIT) < 0 && errno == EOPNOTSUPP)
		skip();
	log_line(42);
	struct pollfd pfd = { .fd = pipe_fds[0], .events = POLLIN };
	assert_int_equal(poll(&pfd, 1, 0), 1);
	char line[LOG_LINE_MAX];
	read_line(pipe_fds[0], line, sizeof(line));
	assert_non_null(strstr(line, "line 42"));
}

/* An overlong line is cut, and says so, instead of being dropped or split. */
static void test_long_line_is_cut(void **state)
{
	(void)state;
	char *big = malloc(2 * LOG_LINE_MAX);
	assert_non_null(big);
	memset(big, 'x', 2 * LOG_LINE_MAX - 1);
	big[2 * LOG_LINE_MAX - 1] = '\0';
	log_info("%s", big);
	free(big);
	char line[LOG_LINE_MAX + 1];
	read_line(pipe_fds[0], line, sizeof(line));
	assert_int_equal(strlen(line) + 1, LOG_LINE_MAX - 1);
	assert_string_equal(line + strlen(line) - 4, "x...");
}

/* A value with a newline or another control character cannot forge a line
 * of its own: text lines escape them. */
static void test_control_characters_are_escaped(void **state)
{
	(void)state;
	log_info("level '%s' from the file", "debug\n2026-12-02T05:06:10.288Z error  npu-3 is Unhealthy: FORGED\x01\t\x7f");
	char line[LOG_LINE_MAX];
	read_line(pipe_fds[0], line, sizeof(line));
	assert_non_null(strstr(line, " info  level 'debug\\n2026-12-02T05:06:10.288Z error  npu-3 is Unhealthy: "
				     "FORGED\\x01\\t\\x7f' from the file"));
	struct pollfd pfd = { .fd = pipe_fds[0], .events = POLLIN };
	assert_int_equal(poll(&pfd, 1, 0), 0);
}

/* With the output blocked again, log_stop returns at its deadline (the test
 * would hang here otherwise) and later lines are dropped, not written. */
static void test_stop_gives_up_on_a_blocked_output(void **state)
{
	(void)state;
	fill(pipe_fds[1]);
	log_line(1);
	uint64_t before = log_dropped();
	log_stop(50);
	/* The line the writer is stuck on counts as dropped. */
	assert_int_equal(log_dropped(), before + 1);
	log_line(2);
	assert_int_equal(log_dropped(), before + 2);
	log_stop(50);
	assert_int_equal(log_start(pipe_fds[1], LOG_LINE_MAX), -EALREADY);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_full_queue_drops_and_says_so),
		cmocka_unit_test(test_line_is_out_when_log_msg_returns),
		cmocka_unit_test(test_long_line_is_cut),
		cmocka_unit_test(test_control_characters_are_escaped),
		cmocka_unit_test(test_stop_gives_up_on_a_blocked_output),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
