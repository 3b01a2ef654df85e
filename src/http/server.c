/* SPDX-License-Identifier: Apache-2.0 */
#include "http/server.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <microhttpd.h>

#include "base/parse.h"

/* Entries in the table: the connections served, and those cut off that
 * libmicrohttpd has not closed yet. */
#define TABLE_SIZE (HTTP_MAX_CONNECTIONS + HTTP_CLOSING_MAX)

/* A connection. While waiting, its request's line and headers must be in by
 * since_ms + HTTP_HEADER_DEADLINE_MS; seq orders the waits by their start. */
struct reading {
	int fd;
	ino_t ino; /* the socket's, so that a reused descriptor number is told apart */
	struct in6_addr peer; /* the client's address; IPv4 as IPv4-mapped */
	uint64_t seq;
	int64_t since_ms;
	bool waiting; /* no complete request yet since since_ms */
	bool cut;     /* shut down, libmicrohttpd yet to close it */
};

struct http_server {
	struct MHD_Daemon *mhd;
	int listen_fd;
	/* The header deadline: libmicrohttpd's own timeout is for inactivity
	 * only, which a client sending a byte now and then never reaches. */
	pthread_mutex_t lock;
	struct reading conns[TABLE_SIZE];
	size_t n_conns;
	uint64_t next_seq;
	int wake_fd; /* stops the sweeper */
	pthread_t sweeper;
	bool sweeping;
	uint16_t port;
	const struct http_route *routes;
	size_t n_routes;
	void *ctx;
	struct MHD_Response *not_found;
	struct MHD_Response *not_allowed;
};

static const char not_found_body[] = "404 page not found: try /metrics or /healthz\n";
static const char not_allowed_body[] = "405 method not allowed: only GET and HEAD\n";

int http_addr_parse(const char *s, struct sockaddr_storage *ret_addr, socklen_t *ret_len)
{
	const char *colon = strrchr(s, ':');
	if (!colon)
		return -EINVAL;
	uint32_t port;
	if (parse_u32(colon + 1, 10, 65535, &port) < 0)
		return -EINVAL;
	size_t host_len = (size_t)(colon - s);
	char host[64];
	if (host_len >= sizeof(host))
		return -EINVAL;
	memcpy(host, s, host_len);
	host[host_len] = '\0';

	struct sockaddr_storage ss;
	memset(&ss, 0, sizeof(ss));
	if (host_len == 0 || (host[0] == '[' && host_len >= 2 && host[host_len - 1] == ']')) {
		struct sockaddr_in6 *a6 = (struct sockaddr_in6 *)&ss;
		a6->sin6_family = AF_INET6;
		a6->sin6_port = htons((uint16_t)port);
		if (host_len == 0) {
			a6->sin6_addr = in6addr_any;
		} else {
			host[host_len - 1] = '\0';
			if (inet_pton(AF_INET6, host + 1, &a6->sin6_addr) != 1)
				return -EINVAL;
		}
		*ret_len = sizeof(*a6);
	} else {
		struct sockaddr_in *a4 = (struct sockaddr_in *)&ss;
		a4->sin_family = AF_INET;
		a4->sin_port = htons((uint16_t)port);
		if (strcmp(host, "localhost") == 0)
			a4->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		else if (inet_pton(AF_INET, host, &a4->sin_addr) != 1)
			return -EINVAL;
		*ret_len = sizeof(*a4);
	}
	*ret_addr = ss;
	return 0;
}

/* The listening socket is ours, so that a failed bind says why. An empty
 * host listens on IPv6 and IPv4 alike (IPV6_V6ONLY off), falling back to
 * IPv4 alone on a node without IPv6. */
static int open_listener(const char *addr, int *ret_fd, uint16_t *ret_port)
{
	struct sockaddr_storage ss;
	socklen_t len;
	int r = http_addr_parse(addr, &ss, &len);
	if (r < 0)
		return r;
	bool any = addr[0] == ':';
	int fd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0 && any && errno == EAFNOSUPPORT) {
		struct sockaddr_in *a4 = (struct sockaddr_in *)&ss;
		uint16_t port = ((struct sockaddr_in6 *)&ss)->sin6_port;
		memset(&ss, 0, sizeof(ss));
		a4->sin_family = AF_INET;
		a4->sin_port = port;
		a4->sin_addr.s_addr = htonl(INADDR_ANY);
		len = sizeof(*a4);
		fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	}
	if (fd < 0)
		return -errno;
	int one = 1, zero = 0;
	(void)setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (ss.ss_family == AF_INET6 && any)
		(void)setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof(zero));
	if (bind(fd, (struct sockaddr *)&ss, len) < 0 || listen(fd, HTTP_BACKLOG) < 0) {
		r = -errno;
		close(fd);
		return r;
	}
	struct sockaddr_storage bound;
	socklen_t bound_len = sizeof(bound);
	if (getsockname(fd, (struct sockaddr *)&bound, &bound_len) < 0) {
		r = -errno;
		close(fd);
		return r;
	}
	*ret_port = ntohs(bound.ss_family == AF_INET6 ? ((struct sockaddr_in6 *)&bound)->sin6_port
						      : ((struct sockaddr_in *)&bound)->sin_port);
	*ret_fd = fd;
	return 0;
}

static int conn_fd(struct MHD_Connection *conn)
{
	const union MHD_ConnectionInfo *info = MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CONNECTION_FD);
	return info ? info->connect_fd : -1;
}

/* Under s->lock. */
static struct reading *find_locked(struct http_server *s, int fd)
{
	for (size_t i = 0; i < s->n_conns; i++)
		if (s->conns[i].fd == fd)
			return &s->conns[i];
	return NULL;
}

/* The client's address, an IPv4 one in its IPv4-mapped form, so that a
 * client counts as one address however the listener sees it. */
static struct in6_addr peer_of(struct MHD_Connection *conn)
{
	struct in6_addr key = IN6ADDR_ANY_INIT;
	const union MHD_ConnectionInfo *info = MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
	const struct sockaddr *sa = info ? info->client_addr : NULL;
	if (sa && sa->sa_family == AF_INET6) {
		key = ((const struct sockaddr_in6 *)sa)->sin6_addr;
	} else if (sa && sa->sa_family == AF_INET) {
		key.s6_addr[10] = key.s6_addr[11] = 0xff;
		memcpy(&key.s6_addr[12], &((const struct sockaddr_in *)sa)->sin_addr, 4);
	}
	return key;
}

/* Under s->lock: a request's headers are in (waiting false), or a
 * connection began or a request ended and the wait for the next headers
 * starts now (waiting true). */
static void wait_from_now_locked(struct http_server *s, struct reading *r, bool waiting)
{
	r->waiting = waiting;
	r->since_ms = now_ms();
	r->seq = s->next_seq++;
}

static void mark(struct http_server *s, struct MHD_Connection *conn, bool waiting)
{
	int fd = conn_fd(conn);
	pthread_mutex_lock(&s->lock);
	struct reading *r = find_locked(s, fd);
	if (r && !r->cut)
		wait_from_now_locked(s, r, waiting);
	pthread_mutex_unlock(&s->lock);
}

/* Under s->lock: ends r's connection. shutdown() makes libmicrohttpd see
 * the connection's end and close it itself on its next turn; until then
 * the entry stays, marked, so that it is neither cut twice nor counted. */
static void cut_locked(struct reading *r)
{
	struct stat st;
	if (fstat(r->fd, &st) == 0 && st.st_ino == r->ino)
		shutdown(r->fd, SHUT_RDWR);
	r->cut = true;
	r->waiting = false;
}

/* Under s->lock: of the connections from peer (from anyone when NULL), the
 * one that has waited for its headers the longest, or NULL. */
static struct reading *longest_waiting_locked(struct http_server *s, const struct in6_addr *peer)
{
	struct reading *oldest = NULL;
	for (size_t i = 0; i < s->n_conns; i++) {
		struct reading *r = &s->conns[i];
		if (r->waiting && (!peer || IN6_ARE_ADDR_EQUAL(&r->peer, peer)) && (!oldest || r->seq < oldest->seq))
			oldest = r;
	}
	return oldest;
}

/* Under s->lock: a new connection on fd, always taken in. When it brings
 * its address past HTTP_MAX_PER_IP, or the server past
 * HTTP_MAX_CONNECTIONS, the connection of that address, or of anyone, that
 * has waited for its headers the longest is cut off instead: a client that
 * sends its request at once (the kubelet's probe) is served however many
 * connections from however many addresses trickle theirs (a slowloris
 * client). Refusing the newcomer would leave the slots to whoever took
 * them first, until the header deadline, and to them again after. */
static void admit_locked(struct http_server *s, int fd, struct in6_addr peer)
{
	struct stat st;
	if (s->n_conns == TABLE_SIZE || fstat(fd, &st) < 0) {
		/* Untracked, it could not be cut off later: refused.
		 * libmicrohttpd's own limit keeps the table from filling. */
		shutdown(fd, SHUT_RDWR);
		return;
	}
	size_t live = 1, from_peer = 1;
	for (size_t i = 0; i < s->n_conns; i++) {
		live += !s->conns[i].cut;
		from_peer += !s->conns[i].cut && IN6_ARE_ADDR_EQUAL(&s->conns[i].peer, &peer);
	}
	struct reading *r = &s->conns[s->n_conns++];
	*r = (struct reading){ .fd = fd, .ino = st.st_ino, .peer = peer };
	wait_from_now_locked(s, r, true);
	/* The newcomer waits too, so there is always one to cut; one cut
	 * brings both counts back within their limits. */
	struct reading *victim = NULL;
	if (from_peer > HTTP_MAX_PER_IP)
		victim = longest_waiting_locked(s, &peer);
	else if (live > HTTP_MAX_CONNECTIONS)
		victim = longest_waiting_locked(s, NULL);
	if (victim)
		cut_locked(victim);
}

/* libmicrohttpd's thread: connections come and go. A closed connection is
 * forgotten before libmicrohttpd closes its socket, so the sweeper never
 * touches a descriptor number reused since. */
static void on_connection(void *cls, struct MHD_Connection *conn, void **socket_context,
			  enum MHD_ConnectionNotificationCode toe)
{
	(void)socket_context;
	struct http_server *s = cls;
	int fd = conn_fd(conn);
	if (fd < 0)
		return;
	struct in6_addr peer = peer_of(conn);
	pthread_mutex_lock(&s->lock);
	struct reading *r = find_locked(s, fd);
	if (r)
		*r = s->conns[--s->n_conns];
	if (toe == MHD_CONNECTION_NOTIFY_STARTED)
		admit_locked(s, fd, peer);
	pthread_mutex_unlock(&s->lock);
}

static void on_completed(void *cls, struct MHD_Connection *conn, void **con_cls,
			 enum MHD_RequestTerminationCode toe)
{
	(void)con_cls, (void)toe;
	mark(cls, conn, true);
}

/* Ends the connections whose headers are overdue. */
static void *sweeper_main(void *arg)
{
	struct http_server *s = arg;
	for (;;) {
		struct pollfd p = { .fd = s->wake_fd, .events = POLLIN };
		int n = poll(&p, 1, HTTP_SWEEP_MS);
		if (n > 0 || (n < 0 && errno != EINTR))
			break;
		int64_t now = now_ms();
		pthread_mutex_lock(&s->lock);
		for (size_t i = 0; i < s->n_conns; i++)
			if (s->conns[i].waiting && now - s->conns[i].since_ms > HTTP_HEADER_DEADLINE_MS)
				cut_locked(&s->conns[i]);
		pthread_mutex_unlock(&s->lock);
	}
	return NULL;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn, const char *url, const char *method,
				  const char *version, const char *upload_data, size_t *upload_data_size,
				  void **con_cls)
{
	(void)version, (void)upload_data, (void)con_cls;
	struct http_server *s = cls;
	mark(s, conn, false);

	if (strcmp(method, MHD_HTTP_METHOD_GET) != 0 && strcmp(method, MHD_HTTP_METHOD_HEAD) != 0)
		return MHD_queue_response(conn, MHD_HTTP_METHOD_NOT_ALLOWED, s->not_allowed);
	/* A GET with a body: answered at the first call, the body never read. */
	if (*upload_data_size != 0)
		return MHD_NO;
	for (size_t i = 0; i < s->n_routes; i++) {
		if (strcmp(url, s->routes[i].path) != 0)
			continue;
		struct http_reply reply = { .status = MHD_HTTP_INTERNAL_SERVER_ERROR, .content_type = "text/plain" };
		s->routes[i].handler(s->ctx, &reply);
		struct MHD_Response *resp =
			MHD_create_response_from_buffer_with_free_callback(reply.len, reply.body, free);
		if (!resp) {
			free(reply.body);
			return MHD_NO;
		}
		enum MHD_Result ok = MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, reply.content_type);
		if (ok == MHD_YES)
			ok = MHD_queue_response(conn, reply.status, resp);
		MHD_destroy_response(resp);
		return ok;
	}
	return MHD_queue_response(conn, MHD_HTTP_NOT_FOUND, s->not_found);
}

static struct MHD_Response *static_response(const char *body, const char *allow)
{
	struct MHD_Response *r = MHD_create_response_from_buffer(strlen(body), (void *)(uintptr_t)body,
								 MHD_RESPMEM_PERSISTENT);
	if (r && (MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, "text/plain; charset=utf-8") != MHD_YES ||
		  (allow && MHD_add_response_header(r, MHD_HTTP_HEADER_ALLOW, allow) != MHD_YES))) {
		MHD_destroy_response(r);
		r = NULL;
	}
	return r;
}

int http_server_start(const char *addr, const struct http_route *routes, size_t n_routes, void *ctx,
		      struct http_server **ret_server)
{
	struct http_server *s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->listen_fd = -1;
	s->wake_fd = -1;
	pthread_mutex_init(&s->lock, NULL);
	s->routes = routes;
	s->n_routes = n_routes;
	s->ctx = ctx;
	int r = open_listener(addr, &s->listen_fd, &s->port);
	if (r < 0)
		goto fail;
	s->not_found = static_response(not_found_body, NULL);
	s->not_allowed = static_response(not_allowed_body, "GET, HEAD");
	if (!s->not_found || !s->not_allowed) {
		r = -ENOMEM;
		goto fail;
	}
	s->mhd = MHD_start_daemon(MHD_USE_AUTO_INTERNAL_THREAD, 0, NULL, NULL, on_request, s,
				  MHD_OPTION_LISTEN_SOCKET, s->listen_fd,
				  /* At this many libmicrohttpd stops accepting for a
				   * turn, never refusing; admit_locked keeps to the
				   * limits (a per-address one of libmicrohttpd's
				   * would refuse). */
				  MHD_OPTION_CONNECTION_LIMIT, (unsigned int)TABLE_SIZE,
				  MHD_OPTION_CONNECTION_TIMEOUT, (unsigned int)HTTP_TIMEOUT_S,
				  MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)HTTP_MEMORY_LIMIT,
				  MHD_OPTION_STRICT_FOR_CLIENT, (int)1,
				  MHD_OPTION_NOTIFY_CONNECTION, on_connection, s,
				  MHD_OPTION_NOTIFY_COMPLETED, on_completed, s,
				  MHD_OPTION_END);
	if (!s->mhd) {
		r = -EIO;
		goto fail;
	}
	s->wake_fd = eventfd(0, EFD_CLOEXEC);
	if (s->wake_fd < 0) {
		r = -errno;
		goto fail;
	}
	r = -pthread_create(&s->sweeper, NULL, sweeper_main, s);
	if (r < 0)
		goto fail;
	s->sweeping = true;
	*ret_server = s;
	return 0;
fail:
	http_server_stop(s);
	return r;
}

uint16_t http_server_port(const struct http_server *s)
{
	return s->port;
}

unsigned http_server_connections(const struct http_server *s)
{
	const union MHD_DaemonInfo *info = MHD_get_daemon_info(s->mhd, MHD_DAEMON_INFO_CURRENT_CONNECTIONS);
	return info ? info->num_connections : 0;
}

void http_server_stop(struct http_server *s)
{
	if (!s)
		return;
	if (s->sweeping) {
		uint64_t one = 1;
		if (write(s->wake_fd, &one, sizeof(one)) != sizeof(one))
			abort(); /* an eventfd write of 1 cannot fail */
		pthread_join(s->sweeper, NULL);
	}
	if (s->wake_fd >= 0)
		close(s->wake_fd);
	if (s->mhd)
		MHD_stop_daemon(s->mhd);
	/* MHD leaves a socket it was given to its owner. */
	if (s->listen_fd >= 0)
		close(s->listen_fd);
	if (s->not_found)
		MHD_destroy_response(s->not_found);
	if (s->not_allowed)
		MHD_destroy_response(s->not_allowed);
	pthread_mutex_destroy(&s->lock);
	free(s);
}
