/* SPDX-License-Identifier: Apache-2.0 */
/* A small HTTP server for the metrics and health endpoints, on libmicrohttpd
 * (one thread of its own, epoll). It answers GET and HEAD on a fixed table of
 * paths, 404 on any other path and 405 on any other method, and is bounded:
 * HTTP_MAX_CONNECTIONS served at once, HTTP_MAX_PER_IP from one address,
 * HTTP_TIMEOUT_S of inactivity closes a connection, a request whose line and
 * headers are not all in within HTTP_HEADER_DEADLINE_MS of the connection
 * (or of the previous request's end) is cut off however it trickles in (a
 * slowloris client), and a request line plus headers larger than
 * HTTP_MEMORY_LIMIT is refused by libmicrohttpd with 431.
 *
 * A new connection is never turned away for want of room, so that the
 * kubelet's liveness probe (an httpGet on /healthz, which sends its request
 * at once) is answered while other clients hold every slot: when it takes
 * its address past HTTP_MAX_PER_IP, or the server past HTTP_MAX_CONNECTIONS,
 * the connection from that address, or from anyone, that has waited for its
 * headers the longest is cut off instead. A request sent at once is read on
 * libmicrohttpd's next turn, before HTTP_MAX_PER_IP newer connections from
 * its address or HTTP_MAX_CONNECTIONS in all can come in (a turn accepts at
 * most 11), so it is never the one cut. Which address the probe comes from
 * is not known here (the pod has a network of its own: the node's address,
 * the CNI bridge's), so no room is kept for it by address, and a lower share
 * per address would not help against many addresses (an IPv6 prefix has
 * plenty).
 *
 * Handlers run on the server's thread: they must only read what is cheap and
 * already at hand (never DCMI, never the kubelet). The module never logs. */
#pragma once

#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#define HTTP_MAX_CONNECTIONS 64
#define HTTP_MAX_PER_IP 16
/* Connections cut off that libmicrohttpd has yet to close (it does on its
 * next turn): its own limit is HTTP_MAX_CONNECTIONS plus these, at which it
 * stops accepting until it has closed some. */
#define HTTP_CLOSING_MAX 32
/* Connections the kernel completes before the server accepts them (capped
 * by net.core.somaxconn): the full shares of 64 addresses reconnecting at
 * once. Were it full, the kernel would drop the next SYN and the probe's
 * connect wait 1 s for its retransmission, the kubelet's default probe
 * timeout. */
#define HTTP_BACKLOG 1024
#define HTTP_TIMEOUT_S 10
#define HTTP_HEADER_DEADLINE_MS 5000
/* How often the header deadline is checked. */
#define HTTP_SWEEP_MS 500
#define HTTP_MEMORY_LIMIT (16 * 1024)
/* "HOST:PORT" as given on the command line. */
#define HTTP_ADDR_MAX 128

/* What a handler answers: status, a static Content-Type, and a malloc'd
 * body (may be NULL when len is 0) that the server frees. */
struct http_reply {
	unsigned status;
	const char *content_type;
	char *body;
	size_t len;
};

typedef void (*http_handler_fn)(void *ctx, struct http_reply *reply);

struct http_route {
	const char *path; /* exact match, e.g. "/metrics" */
	http_handler_fn handler;
};

/* Parses "HOST:PORT": HOST an IPv4 literal, "[IPv6 literal]", "localhost"
 * (127.0.0.1) or empty (every IPv4 and IPv6 address); PORT 0-65535 (0: the
 * kernel picks, for tests). -EINVAL otherwise (no name is resolved). */
int http_addr_parse(const char *s, struct sockaddr_storage *ret_addr, socklen_t *ret_len);

struct http_server;

/* Binds addr and serves routes (the table and ctx must outlive the server).
 * Returns 0, or a negative errno: -EINVAL (bad address), the bind's or
 * listen's errno (-EADDRINUSE, -EACCES...), -EIO when libmicrohttpd cannot
 * start. */
int http_server_start(const char *addr, const struct http_route *routes, size_t n_routes, void *ctx,
		      struct http_server **ret_server);

/* The port bound (useful with port 0). */
uint16_t http_server_port(const struct http_server *server);

/* Connections open now. */
unsigned http_server_connections(const struct http_server *server);

/* Stops serving, closes every connection, joins the thread. Accepts NULL. */
void http_server_stop(struct http_server *server);
