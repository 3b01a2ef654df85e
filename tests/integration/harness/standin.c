/* SPDX-License-Identifier: Apache-2.0 */
#include "standin.h"

#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmocka.h>
#include <openssl/ssl.h>

#include "base/parse.h"
#include "base/wait.h"

#define FIXTURES TEST_SOURCE_DIR "/fixtures/kube"
#define CONNS_MAX 64
#define HEAD_MAX 16384
#define BODY_MAX (4u << 20)
#define CLAIM_PATH "/apis/resource.k8s.io/v1/namespaces/"

struct claim {
	char name[256];
	char json[1024];
	enum standin_mode mode;
	unsigned throttles, retry_after_s, reads;
	int64_t times[STANDIN_MAX_TIMES];
};

struct conn {
	bool used;
	int fd;
	int wake_fd; /* written when what is held may have changed */
};

struct standin {
	SSL_CTX *ctx;
	int listen_fd;
	uint16_t port;
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t cond; /* a counter changed, or a connection ended */
	struct conn conns[CONNS_MAX];
	unsigned active;
	bool stopping, hold_all;
	struct claim claims[STANDIN_MAX_CLAIMS];
	size_t n_claims;
	unsigned counters[STANDIN_ABANDONED + 1];
	int64_t last_abandoned_ms;
};

/* Called with the lock held. */
static struct claim *find(struct standin *s, const char *name)
{
	for (size_t i = 0; i < s->n_claims; i++)
		if (strcmp(s->claims[i].name, name) == 0)
			return &s->claims[i];
	return NULL;
}

/* Called with the lock held. */
static void wake_all(struct standin *s)
{
	uint64_t one = 1;
	for (size_t i = 0; i < CONNS_MAX; i++)
		if (s->conns[i].used && write(s->conns[i].wake_fd, &one, sizeof(one)) != sizeof(one))
			abort(); /* an eventfd write of 1 cannot fail short of overflow */
}

static void count(struct standin *s, enum standin_counter c, int delta)
{
	pthread_mutex_lock(&s->lock);
	s->counters[c] += (unsigned)delta;
	if (c == STANDIN_ABANDONED)
		s->last_abandoned_ms = now_ms();
	pthread_cond_broadcast(&s->cond);
	pthread_mutex_unlock(&s->lock);
}

/* A claim it serves is held by its mode, anything else while all is held. */
static bool holding(struct standin *s, const char *claim_name)
{
	pthread_mutex_lock(&s->lock);
	const struct claim *c = claim_name ? find(s, claim_name) : NULL;
	bool hold = !s->stopping && (c ? c->mode == STANDIN_HOLD : s->hold_all);
	pthread_mutex_unlock(&s->lock);
	return hold;
}

/* Holds the request while it is to be held; false when its client went
 * away meanwhile or the stand-in stops. A client of HTTP/1.1 sends nothing
 * while it waits for the answer, so anything readable is its leaving. */
static bool hold(struct standin *s, struct conn *conn, SSL *ssl, const char *claim_name)
{
	bool answer = true;
	count(s, STANDIN_HELD, 1);
	while (holding(s, claim_name)) {
		struct pollfd p[2] = { { .fd = conn->fd, .events = POLLIN }, { .fd = conn->wake_fd, .events = POLLIN } };
		if (poll(p, 2, -1) < 0 && errno != EINTR)
			break;
		uint64_t v;
		if (p[1].revents && read(conn->wake_fd, &v, sizeof(v)) < 0 && errno != EAGAIN)
			break;
		char byte;
		if (p[0].revents && SSL_read(ssl, &byte, 1) <= 0) {
			count(s, STANDIN_ABANDONED, 1);
			answer = false;
			break;
		}
	}
	count(s, STANDIN_HELD, -1);
	pthread_mutex_lock(&s->lock);
	answer = answer && !s->stopping;
	pthread_mutex_unlock(&s->lock);
	return answer;
}

static void respond(SSL *ssl, unsigned status, const char *reason, unsigned retry_after_s, const char *body)
{
	char head[256], retry[64] = "";
	if (retry_after_s)
		snprintf(retry, sizeof(retry), "Retry-After: %u\r\n", retry_after_s);
	int n = snprintf(head, sizeof(head),
			 "HTTP/1.1 %u %s\r\nContent-Type: application/json\r\nContent-Length: %zu\r\n%sConnection: "
			 "close\r\n\r\n",
			 status, reason, strlen(body), retry);
	if (SSL_write(ssl, head, n) == n && body[0])
		(void)SSL_write(ssl, body, (int)strlen(body));
}

static void respond_status(SSL *ssl, unsigned status, const char *reason, unsigned retry_after_s,
			   const char *message)
{
	char body[512];
	snprintf(body, sizeof(body),
		 "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"status\":\"Failure\",\"message\":\"%s\","
		 "\"reason\":\"%s\",\"code\":%u}",
		 message, reason, status);
	respond(ssl, status, reason, retry_after_s, body);
}

/* The claim's name when path reads a ResourceClaim, else NULL. */
static const char *claim_of(const char *method, const char *path)
{
	if (strcmp(method, "GET") != 0 || strncmp(path, CLAIM_PATH, strlen(CLAIM_PATH)) != 0 ||
	    !strstr(path, "/resourceclaims/"))
		return NULL;
	return strrchr(path, '/') + 1;
}

/* Reads the rest of a request body, bounded, and drops it. */
static bool skip_body(SSL *ssl, size_t left)
{
	char buf[4096];
	if (left > BODY_MAX)
		return false;
	while (left > 0) {
		int n = SSL_read(ssl, buf, left < sizeof(buf) ? (int)left : (int)sizeof(buf));
		if (n <= 0)
			return false;
		left -= (size_t)n;
	}
	return true;
}

static void serve(struct standin *s, struct conn *conn, SSL *ssl)
{
	char head[HEAD_MAX], method[8], path[1024];
	size_t n = 0;
	head[0] = '\0';
	char *end;
	while (!(end = strstr(head, "\r\n\r\n"))) {
		if (n == sizeof(head) - 1)
			return;
		int k = SSL_read(ssl, head + n, (int)(sizeof(head) - 1 - n));
		if (k <= 0)
			return;
		n += (size_t)k;
		head[n] = '\0';
	}
	if (sscanf(head, "%7s %1023s", method, path) != 2)
		return;
	/* A body the client waits to be asked for is never read: the answer
	 * comes first. */
	const char *length = strstr(head, "\r\nContent-Length: ");
	size_t body_len = length ? strtoul(length + strlen("\r\nContent-Length: "), NULL, 10) : 0;
	size_t body_read = n - (size_t)(end + 4 - head);
	if (!strstr(head, "\r\nExpect: 100-continue") && body_len > body_read && !skip_body(ssl, body_len - body_read))
		return;

	char name[256] = "";
	const char *claim_name = claim_of(method, path);
	if (claim_name) {
		snprintf(name, sizeof(name), "%s", claim_name);
		pthread_mutex_lock(&s->lock);
		struct claim *c = find(s, name);
		if (c) {
			if (c->reads < STANDIN_MAX_TIMES)
				c->times[c->reads] = now_ms();
			c->reads++;
		}
		s->counters[STANDIN_CLAIM_GETS]++;
		pthread_cond_broadcast(&s->cond);
		pthread_mutex_unlock(&s->lock);
	}
	if (holding(s, claim_name ? name : NULL) && !hold(s, conn, ssl, claim_name ? name : NULL))
		return;

	char json[sizeof(((struct claim *)0)->json)] = "";
	unsigned retry_after_s = 0;
	pthread_mutex_lock(&s->lock);
	struct claim *c = claim_name ? find(s, name) : NULL;
	if (c && c->mode == STANDIN_THROTTLE && c->throttles > 0) {
		c->throttles--;
		retry_after_s = c->retry_after_s;
	} else if (c) {
		memcpy(json, c->json, sizeof(json));
	}
	pthread_mutex_unlock(&s->lock);
	if (retry_after_s)
		respond_status(ssl, 429, "TooManyRequests", retry_after_s, "too many requests, please try again later");
	else if (json[0])
		respond(ssl, 200, "OK", 0, json);
	else if (claim_name)
		respond_status(ssl, 404, "NotFound", 0, "the stand-in has no such resourceclaim");
	else
		respond_status(ssl, 403, "Forbidden", 0, "the stand-in API server serves ResourceClaims only");
}

struct conn_arg {
	struct standin *s;
	struct conn *conn;
};

static void *conn_thread(void *arg)
{
	struct conn_arg a = *(struct conn_arg *)arg;
	free(arg);
	SSL *ssl = SSL_new(a.s->ctx);
	if (ssl && SSL_set_fd(ssl, a.conn->fd) == 1 && SSL_accept(ssl) == 1)
		serve(a.s, a.conn, ssl);
	SSL_free(ssl);
	pthread_mutex_lock(&a.s->lock);
	close(a.conn->fd);
	close(a.conn->wake_fd);
	a.conn->used = false;
	a.s->active--;
	pthread_cond_broadcast(&a.s->cond);
	pthread_mutex_unlock(&a.s->lock);
	return NULL;
}

static void *accept_thread(void *arg)
{
	struct standin *s = arg;
	for (;;) {
		int fd = accept4(s->listen_fd, NULL, NULL, SOCK_CLOEXEC);
		if (fd < 0 && (errno == EINTR || errno == ECONNABORTED))
			continue;
		if (fd < 0)
			return NULL; /* shut down by standin_stop */
		int wake = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
		struct conn_arg *a = malloc(sizeof(*a));
		pthread_mutex_lock(&s->lock);
		size_t slot = 0;
		while (slot < CONNS_MAX && s->conns[slot].used)
			slot++;
		bool room = slot < CONNS_MAX && wake >= 0 && a && !s->stopping;
		if (room) {
			s->conns[slot] = (struct conn){ .used = true, .fd = fd, .wake_fd = wake };
			s->active++;
			*a = (struct conn_arg){ .s = s, .conn = &s->conns[slot] };
		}
		pthread_mutex_unlock(&s->lock);
		pthread_t t;
		if (!room || pthread_create(&t, NULL, conn_thread, a) != 0) {
			fail_msg("stand-in API server: cannot serve a connection");
			return NULL;
		}
		pthread_detach(t);
	}
}

struct standin *standin_start(void)
{
	/* A client that goes away mid-answer must not end the test. */
	signal(SIGPIPE, SIG_IGN);
	struct standin *s = calloc(1, sizeof(*s));
	assert_non_null(s);
	pthread_mutex_init(&s->lock, NULL);
	cond_init_monotonic(&s->cond);
	s->ctx = SSL_CTX_new(TLS_server_method());
	assert_non_null(s->ctx);
	assert_int_equal(SSL_CTX_use_certificate_file(s->ctx, FIXTURES "/server.crt", SSL_FILETYPE_PEM), 1);
	assert_int_equal(SSL_CTX_use_PrivateKey_file(s->ctx, FIXTURES "/server.key", SSL_FILETYPE_PEM), 1);
	s->listen_fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	assert_true(s->listen_fd >= 0);
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(a);
	assert_int_equal(bind(s->listen_fd, (struct sockaddr *)&a, sizeof(a)), 0);
	assert_int_equal(listen(s->listen_fd, 64), 0);
	assert_int_equal(getsockname(s->listen_fd, (struct sockaddr *)&a, &len), 0);
	s->port = ntohs(a.sin_port);
	assert_int_equal(pthread_create(&s->thread, NULL, accept_thread, s), 0);
	return s;
}

void standin_stop(struct standin *s)
{
	if (!s)
		return;
	pthread_mutex_lock(&s->lock);
	s->stopping = true;
	wake_all(s);
	for (size_t i = 0; i < CONNS_MAX; i++)
		if (s->conns[i].used)
			shutdown(s->conns[i].fd, SHUT_RDWR);
	pthread_mutex_unlock(&s->lock);
	shutdown(s->listen_fd, SHUT_RDWR);
	pthread_join(s->thread, NULL);
	close(s->listen_fd);
	pthread_mutex_lock(&s->lock);
	while (s->active > 0)
		pthread_cond_wait(&s->cond, &s->lock);
	pthread_mutex_unlock(&s->lock);
	SSL_CTX_free(s->ctx);
	pthread_cond_destroy(&s->cond);
	pthread_mutex_destroy(&s->lock);
	free(s);
}

void standin_kubeconfig(struct standin *s, const char *path)
{
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fprintf(f,
		"apiVersion: v1\nkind: Config\ncurrent-context: c\n"
		"clusters: [{name: k, cluster: {server: 'https://127.0.0.1:%u', certificate-authority: '%s'}}]\n"
		"users: [{name: u, user: {token: stand-in}}]\n"
		"contexts: [{name: c, context: {cluster: k, user: u}}]\n",
		s->port, FIXTURES "/ca.crt");
	assert_int_equal(fclose(f), 0);
}

void standin_add_claim(struct standin *s, const char *name, const char *uid, const char *pool, const char *device,
		       enum standin_mode mode, unsigned throttles, unsigned retry_after_s)
{
	pthread_mutex_lock(&s->lock);
	assert_true(s->n_claims < STANDIN_MAX_CLAIMS);
	struct claim *c = &s->claims[s->n_claims++];
	*c = (struct claim){ .mode = mode, .throttles = throttles, .retry_after_s = retry_after_s };
	snprintf(c->name, sizeof(c->name), "%s", name);
	snprintf(c->json, sizeof(c->json),
		 "{\"apiVersion\":\"resource.k8s.io/v1\",\"kind\":\"ResourceClaim\",\"metadata\":{\"name\":\"%s\","
		 "\"namespace\":\"default\",\"uid\":\"%s\"},\"status\":{\"allocation\":{\"devices\":{\"results\":["
		 "{\"request\":\"npu\",\"driver\":\"npu.ascend.com\",\"pool\":\"%s\",\"device\":\"%s\"}]}}}}",
		 name, uid, pool, device);
	pthread_mutex_unlock(&s->lock);
}

void standin_hold_all(struct standin *s, bool hold_all)
{
	pthread_mutex_lock(&s->lock);
	s->hold_all = hold_all;
	wake_all(s);
	pthread_mutex_unlock(&s->lock);
}

void standin_release(struct standin *s)
{
	pthread_mutex_lock(&s->lock);
	s->hold_all = false;
	for (size_t i = 0; i < s->n_claims; i++)
		if (s->claims[i].mode == STANDIN_HOLD)
			s->claims[i].mode = STANDIN_ANSWER;
	wake_all(s);
	pthread_mutex_unlock(&s->lock);
}

unsigned standin_count(struct standin *s, enum standin_counter counter)
{
	pthread_mutex_lock(&s->lock);
	unsigned n = s->counters[counter];
	pthread_mutex_unlock(&s->lock);
	return n;
}

bool standin_wait(struct standin *s, enum standin_counter counter, unsigned at_least, int timeout_ms)
{
	struct timespec until = deadline_after_ms(timeout_ms);
	pthread_mutex_lock(&s->lock);
	while (s->counters[counter] < at_least && pthread_cond_timedwait(&s->cond, &s->lock, &until) != ETIMEDOUT) {
	}
	bool reached = s->counters[counter] >= at_least;
	pthread_mutex_unlock(&s->lock);
	return reached;
}

int64_t standin_last_abandoned_ms(struct standin *s)
{
	pthread_mutex_lock(&s->lock);
	int64_t t = s->last_abandoned_ms;
	pthread_mutex_unlock(&s->lock);
	return t;
}

unsigned standin_claim_reads(struct standin *s, const char *name, int64_t times[STANDIN_MAX_TIMES])
{
	pthread_mutex_lock(&s->lock);
	const struct claim *c = find(s, name);
	unsigned n = c ? c->reads : 0;
	if (c)
		memcpy(times, c->times, sizeof(c->times));
	pthread_mutex_unlock(&s->lock);
	return n;
}
