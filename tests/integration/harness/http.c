/* SPDX-License-Identifier: Apache-2.0 */
#include "harness.h"
#include "http.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmocka.h>

#include "base/parse.h"

#define HTTP_READ_MAX (8 * 1024 * 1024)

static int wait_fd(int fd, short events, int64_t deadline)
{
	int64_t left = deadline - now_ms();
	if (left <= 0)
		return -ETIMEDOUT;
	struct pollfd p = { .fd = fd, .events = events };
	int n = poll(&p, 1, (int)left);
	return n < 0 ? -errno : n == 0 ? -ETIMEDOUT : 0;
}

int http_raw(const char *ip, uint16_t port, const char *raw, size_t raw_len, int timeout_ms,
	     struct http_response *ret)
{
	int64_t deadline = now_ms() + timeout_ms;
	int r = 0;
	char *buf = NULL;
	size_t len = 0, cap = 0;
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return -errno;
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(port) };
	inet_pton(AF_INET, ip, &a.sin_addr);
	/* Loopback picks 127.0.0.1 as the source whatever the destination: a
	 * client that stands for another host says so. */
	if (strncmp(ip, "127.", 4) == 0) {
		struct sockaddr_in src = a;
		src.sin_port = 0;
		if (bind(fd, (struct sockaddr *)&src, sizeof(src)) < 0) {
			r = -errno;
			goto out;
		}
	}
	if (connect(fd, (struct sockaddr *)&a, sizeof(a)) < 0 && errno != EINPROGRESS) {
		r = -errno;
		goto out;
	}
	for (size_t sent = 0; sent < raw_len;) {
		if ((r = wait_fd(fd, POLLOUT, deadline)) < 0)
			goto out;
		ssize_t w = send(fd, raw + sent, raw_len - sent, MSG_NOSIGNAL);
		if (w < 0 && errno != EAGAIN) {
			/* The server may refuse half way (a huge header): read what it said. */
			break;
		}
		if (w > 0)
			sent += (size_t)w;
	}
	for (;;) {
		if (len + 4096 + 1 > cap) {
			if (cap >= HTTP_READ_MAX) {
				r = -E2BIG;
				goto out;
			}
			cap = cap ? cap * 2 : 65536;
			char *p = realloc(buf, cap);
			if (!p) {
				r = -ENOMEM;
				goto out;
			}
			buf = p;
		}
		if ((r = wait_fd(fd, POLLIN, deadline)) < 0)
			goto out;
		ssize_t n = recv(fd, buf + len, cap - len - 1, 0);
		if (n == 0 || (n < 0 && errno == ECONNRESET))
			break;
		if (n < 0 && errno != EAGAIN) {
			r = -errno;
			goto out;
		}
		if (n > 0)
			len += (size_t)n;
	}
	*ret = (struct http_response){ 0 };
	if (!buf)
		buf = calloc(1, 1);
	buf[len] = '\0';
	sscanf(buf, "HTTP/1.%*d %d", &ret->status);
	char *sep = strstr(buf, "\r\n\r\n");
	size_t head_len = sep ? (size_t)(sep - buf) : len;
	ret->head = strndup(buf, head_len);
	ret->body_len = sep ? len - head_len - 4 : 0;
	ret->body = malloc(ret->body_len + 1);
	memcpy(ret->body, sep ? sep + 4 : "", ret->body_len);
	ret->body[ret->body_len] = '\0';
out:
	free(buf);
	close(fd);
	return r;
}

void http_call(uint16_t port, const char *method, const char *path, struct http_response *ret)
{
	char req[512];
	int n = snprintf(req, sizeof(req), "%s %s HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n", method,
			 path);
	int r = http_raw("127.0.0.1", port, req, (size_t)n, WAIT_MS, ret);
	if (r < 0)
		fail_msg("%s %s on port %u: %s", method, path, port, strerror(-r));
}

void http_response_clear(struct http_response *resp)
{
	free(resp->head);
	free(resp->body);
	*resp = (struct http_response){ 0 };
}

uint16_t http_plugin_port(struct proc *plugin)
{
	char port[8];
	event_field(expect_event(plugin, "metrics.serving"), "port", port, sizeof(port));
	uint64_t n;
	assert_int_equal(parse_u64(port, 10, UINT16_MAX, &n), 0);
	return (uint16_t)n;
}

double http_metric(const char *text, const char *series)
{
	size_t n = strlen(series);
	for (const char *p = text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
		if (strncmp(p, series, n) == 0 && p[n] == ' ')
			return strtod(p + n + 1, NULL);
	}
	return -1;
}
