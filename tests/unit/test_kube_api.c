/* SPDX-License-Identifier: Apache-2.0 */
/* The API-server client (kube/client.c) and the ResourceSlice publisher
 * (kube/publisher.c) against a fake API server in this process: a small
 * libmicrohttpd server behind a TLS front made with OpenSSL (certificates in
 * tests/fixtures/kube/; the daemon's static libmicrohttpd has no TLS) that
 * keeps ResourceSlices in memory and can be told to misbehave in the ways a
 * real kube-apiserver cannot be made to on demand: garbage JSON, a body
 * above the client's bound, an answer slower than the timeout, 5xx, 401,
 * conflicts, and not listening at all; and an old server, which drops the
 * fields of feature gates it has off, or one that refuses dry runs. It
 * serves a watch of the slices as a real server does (every change an
 * event, a bookmark at the end), and can answer one with a 410 or a line of
 * its choosing. The real server is exercised by
 * tests/integration/test_kube_apiserver.c. The daemon's claim reader
 * (daemon/dra_kube.c) is tested here too, through the module. */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <json-c/json.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <openssl/ssl.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>

#include "base/parse.h"
#include "base/wait.h"
#include "daemon/dra_kube.h"
#include "daemon/kube_module.h"
#include "kube/client.h"
#include "kube/objects.h"
#include "kube/publisher.h"
#include "support/gated_fields.h"
#include "support/publish_reports.h"
#include "support/tmpdir.h"

#define FIXTURES TEST_SOURCE_DIR "/fixtures/kube"
#define MAX_SLICES 16
#define WAIT_MS 10000
/* Changes of the slices kept for watches; older ones are forgotten. */
#define MAX_CHANGES 256
#define MAX_WATCHES 32

enum fault {
	FAULT_NONE,
	FAULT_GARBAGE,  /* every answer 200 with a body that is not JSON */
	FAULT_HUGE,     /* every answer 200 with a body above KUBE_RESPONSE_MAX */
	FAULT_SLOW,     /* answers after the client's timeout */
	FAULT_5XX,      /* 503 with a Status */
	FAULT_CONFLICT, /* the next PUT gets 409 (and the slice a new resourceVersion) */
};

struct stored {
	char name[KUBE_META_NAME_MAX];
	char *json; /* as the driver sent it */
	long rv;
};

/* A change of the slices, as a watch event. */
struct change {
	const char *type; /* "ADDED", "MODIFIED", "DELETED" */
	char *object;     /* as served, resourceVersion included */
	long rv;
};

static struct server {
	struct MHD_Daemon *mhd;
	uint16_t port;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	enum fault fault;
	bool releasing; /* FAULT_SLOW: let the held answers go */
	unsigned throttles;      /* answer this many requests 429 first, */
	const char *retry_after; /* with this Retry-After (NULL: none) */
	const char *token;    /* the bearer token accepted; NULL: any */
	char last_auth[256];  /* the last Authorization header seen */
	unsigned requests, writes, conflicts_left;
	unsigned node_reads; /* GETs of the Node node-a */
	unsigned drops;      /* KUBE_LACKS_*: the fields it drops from a slice it stores */
	unsigned dry_runs;   /* creates with ?dryRun=All: answered, nothing stored */
	bool refuse_dry_runs; /* with 403 */
	char dry_run_owner[64]; /* the owner's uid of the last dry run's slice */
	unsigned sent_gated;  /* KUBE_LACKS_*: the gated fields the writes carried */
	int64_t arrived[64]; /* when the first requests came, ms */
	struct stored slices[MAX_SLICES];
	size_t n_slices;
	long next_rv; /* the last resourceVersion given */
	/* Watches: not counted in requests. */
	struct change changes[MAX_CHANGES];
	size_t n_changes;
	unsigned lists;   /* lists of the slices */
	unsigned watches; /* watch requests */
	unsigned streams_refused; /* watches with sendInitialEvents, refused */
	char watch_from[MAX_WATCHES][32]; /* the resourceVersion each asked for */
	bool closing;     /* server_stop: open watches end */
	bool watch_gone;  /* the next watch is told its resourceVersion is gone (410) */
	char *watch_line; /* the next watch's first line, sent as it is (the watch's, freed by it) */
	bool meddle;      /* each write of a slice is followed by someone else's change of it */
} srv;

static char *read_all(const char *path)
{
	FILE *f = fopen(path, "r");
	assert_non_null(f);
	static char buf[8192];
	size_t n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	char *s = strdup(buf);
	assert_non_null(s);
	return s;
}

struct upload {
	char *data;
	size_t len;
};

static enum MHD_Result answer_retry(struct MHD_Connection *conn, unsigned status, const char *body,
				    const char *retry_after)
{
	struct MHD_Response *r = MHD_create_response_from_buffer(strlen(body), (void *)(uintptr_t)body,
								 MHD_RESPMEM_MUST_COPY);
	MHD_add_response_header(r, "Content-Type", "application/json");
	if (retry_after)
		MHD_add_response_header(r, "Retry-After", retry_after);
	enum MHD_Result ret = MHD_queue_response(conn, status, r);
	MHD_destroy_response(r);
	return ret;
}

static enum MHD_Result answer(struct MHD_Connection *conn, unsigned status, const char *body)
{
	return answer_retry(conn, status, body, NULL);
}

static enum MHD_Result answer_status(struct MHD_Connection *conn, unsigned status, const char *reason,
				     const char *message)
{
	char body[512];
	snprintf(body, sizeof(body),
		 "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"status\":\"Failure\",\"message\":\"%s\",\"reason\":\"%s\","
		 "\"code\":%u}",
		 message, reason, status);
	return answer(conn, status, body);
}

static struct stored *find(const char *name)
{
	for (size_t i = 0; i < srv.n_slices; i++)
		if (strcmp(srv.slices[i].name, name) == 0)
			return &srv.slices[i];
	return NULL;
}

/* The stored JSON with metadata.uid and .resourceVersion set, as a server answers. */
static char *served(const struct stored *s)
{
	json_object *o = json_tokener_parse(s->json), *meta;
	assert_non_null(o);
	assert_true(json_object_object_get_ex(o, "metadata", &meta));
	char rv[32];
	snprintf(rv, sizeof(rv), "%ld", s->rv);
	json_object_object_add(meta, "resourceVersion", json_object_new_string(rv));
	json_object_object_add(meta, "uid", json_object_new_string("uid-of-slice"));
	char *text = strdup(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN));
	json_object_put(o);
	return text;
}

/* Keeps a change of s for the watches (srv.lock held); a deletion gets a
 * resourceVersion of its own, as a real server's. */
static void record(const char *type, struct stored *s)
{
	if (strcmp(type, "DELETED") == 0)
		s->rv = ++srv.next_rv;
	if (srv.n_changes == MAX_CHANGES) {
		free(srv.changes[0].object);
		memmove(srv.changes, srv.changes + 1, (MAX_CHANGES - 1) * sizeof(srv.changes[0]));
		srv.n_changes--;
	}
	srv.changes[srv.n_changes++] = (struct change){ .type = type, .object = served(s), .rv = s->rv };
	pthread_cond_broadcast(&srv.cond);
}

/* srv.meddle: someone else changes what the driver just wrote, in the same
 * generation: its devices are gone. */
static void meddle(struct stored *s)
{
	json_object *o = json_tokener_parse(s->json), *spec;
	assert_non_null(o);
	assert_true(json_object_object_get_ex(o, "spec", &spec));
	json_object_object_add(spec, "devices", json_object_new_array());
	free(s->json);
	s->json = strdup(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN));
	json_object_put(o);
	s->rv = ++srv.next_rv;
	record("MODIFIED", s);
}

/* What the server keeps of a slice it is sent: all but what srv.drops says. */
static char *stored_json(const char *sent)
{
	json_object *o = json_tokener_parse(sent), *bare = json_tokener_parse(sent);
	assert_non_null(o);
	assert_non_null(bare);
	gated_fields_drop(bare, KUBE_LACKS_ALL);
	srv.sent_gated |= kube_slice_dropped(o, bare);
	json_object_put(bare);
	gated_fields_drop(o, srv.drops);
	char *text = strdup(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN));
	json_object_put(o);
	assert_non_null(text);
	return text;
}

static const char *slice_name_of(const char *json, char *out, size_t size)
{
	json_object *o = json_tokener_parse(json), *meta, *name;
	out[0] = '\0';
	if (o && json_object_object_get_ex(o, "metadata", &meta) && json_object_object_get_ex(meta, "name", &name))
		snprintf(out, size, "%s", json_object_get_string(name));
	json_object_put(o);
	return out;
}

static enum MHD_Result serve_slices(struct MHD_Connection *conn, const char *method, const char *url,
				    const struct upload *up)
{
	const char *prefix = "/apis/resource.k8s.io/v1/resourceslices";
	const char *rest = url + strlen(prefix);
	char name[KUBE_META_NAME_MAX];
	if (strcmp(method, "GET") == 0 && *rest == '\0') {
		/* The list: the fake keeps one node's slices only. */
		size_t cap = 160;
		for (size_t i = 0; i < srv.n_slices; i++)
			cap += strlen(srv.slices[i].json) + 128;
		char *body = malloc(cap);
		assert_non_null(body);
		srv.lists++;
		size_t len = (size_t)snprintf(body, cap,
					      "{\"kind\":\"ResourceSliceList\",\"metadata\":{\"resourceVersion\":\"%ld\"},"
					      "\"items\":[",
					      srv.next_rv);
		for (size_t i = 0; i < srv.n_slices; i++) {
			char *s = served(&srv.slices[i]);
			len += (size_t)snprintf(body + len, cap - len, "%s%s", i ? "," : "", s);
			free(s);
		}
		snprintf(body + len, cap - len, "]}");
		enum MHD_Result r = answer(conn, 200, body);
		free(body);
		return r;
	}
	if (strcmp(method, "POST") == 0 && *rest == '\0') {
		slice_name_of(up->data ? up->data : "", name, sizeof(name));
		if (!name[0])
			return answer_status(conn, 400, "BadRequest", "no name");
		if (find(name))
			return answer_status(conn, 409, "AlreadyExists", "exists");
		const char *dry = MHD_lookup_connection_value(conn, MHD_GET_ARGUMENT_KIND, "dryRun");
		if (dry && srv.refuse_dry_runs)
			return answer_status(conn, 403, "Forbidden", "no dry runs here");
		unsigned gated = srv.sent_gated;
		struct stored probe = { .json = stored_json(up->data), .rv = srv.next_rv + 1 };
		if (dry) {
			srv.sent_gated = gated; /* a dry run is not a write */
			assert_string_equal(dry, "All");
			srv.dry_runs++;
			json_object *o = json_tokener_parse(probe.json);
			const char *owner = json_object_get_string(json_object_object_get(
				json_object_array_get_idx(json_object_object_get(json_object_object_get(o, "metadata"),
										 "ownerReferences"),
							  0),
				"uid"));
			snprintf(srv.dry_run_owner, sizeof(srv.dry_run_owner), "%s", owner ? owner : "");
			json_object_put(o);
			char *text = served(&probe);
			free(probe.json);
			enum MHD_Result r = answer(conn, 201, text);
			free(text);
			return r;
		}
		assert_true(srv.n_slices < MAX_SLICES);
		struct stored *s = &srv.slices[srv.n_slices++];
		snprintf(s->name, sizeof(s->name), "%s", name);
		s->json = probe.json;
		s->rv = ++srv.next_rv;
		srv.writes++;
		record("ADDED", s);
		char *text = served(s);
		if (srv.meddle)
			meddle(s);
		enum MHD_Result r = answer(conn, 201, text);
		free(text);
		return r;
	}
	if (*rest != '/')
		return answer_status(conn, 404, "NotFound", "no such path");
	struct stored *s = find(rest + 1);
	if (strcmp(method, "GET") == 0 || strcmp(method, "DELETE") == 0) {
		if (!s)
			return answer_status(conn, 404, "NotFound", "no such slice");
		char *text = served(s);
		if (strcmp(method, "DELETE") == 0) {
			record("DELETED", s);
			free(s->json);
			*s = srv.slices[--srv.n_slices];
			srv.writes++;
		}
		enum MHD_Result r = answer(conn, 200, text);
		free(text);
		return r;
	}
	if (strcmp(method, "PUT") == 0) {
		if (!s)
			return answer_status(conn, 404, "NotFound", "no such slice");
		if (srv.conflicts_left) {
			srv.conflicts_left--;
			s->rv = ++srv.next_rv;
			return answer_status(conn, 409, "Conflict", "the object has been modified");
		}
		json_object *o = json_tokener_parse(up->data ? up->data : ""), *meta, *rv;
		bool match = o && json_object_object_get_ex(o, "metadata", &meta) &&
			     json_object_object_get_ex(meta, "resourceVersion", &rv) &&
			     strtol(json_object_get_string(rv), NULL, 10) == s->rv;
		json_object_put(o);
		if (!match)
			return answer_status(conn, 409, "Conflict", "the object has been modified");
		free(s->json);
		s->json = stored_json(up->data);
		s->rv = ++srv.next_rv;
		srv.writes++;
		record("MODIFIED", s);
		char *text = served(s);
		if (srv.meddle)
			meddle(s);
		enum MHD_Result r = answer(conn, 200, text);
		free(text);
		return r;
	}
	return answer_status(conn, 405, "MethodNotAllowed", "no");
}

/* One watch's stream: the line being sent, and where it is. */
struct watch_conn {
	long rv;        /* the events after this one are sent */
	int64_t end_at; /* its timeoutSeconds */
	char *out;
	size_t len, off;
	bool last; /* the stream ends after out */
};

/* The next line of a watch (srv.lock held): the first change after w->rv,
 * or at the end a bookmark of the latest resourceVersion. */
static void watch_next(struct watch_conn *w)
{
	while (!srv.closing) {
		for (size_t i = 0; i < srv.n_changes; i++) {
			const struct change *c = &srv.changes[i];
			if (c->rv <= w->rv)
				continue;
			size_t n = strlen(c->object) + 64;
			w->out = malloc(n);
			assert_non_null(w->out);
			snprintf(w->out, n, "{\"type\":\"%s\",\"object\":%s}\n", c->type, c->object);
			w->rv = c->rv;
			return;
		}
		int64_t left = w->end_at - now_ms();
		if (left <= 0) {
			char line[256];
			snprintf(line, sizeof(line),
				 "{\"type\":\"BOOKMARK\",\"object\":{\"kind\":\"ResourceSlice\",\"metadata\":"
				 "{\"resourceVersion\":\"%ld\"}}}\n",
				 srv.next_rv);
			w->out = strdup(line);
			w->last = true;
			return;
		}
		struct timespec ts = deadline_after_ms(left);
		pthread_cond_timedwait(&srv.cond, &srv.lock, &ts);
	}
}

static ssize_t watch_read(void *cls, uint64_t pos, char *buf, size_t max)
{
	(void)pos;
	struct watch_conn *w = cls;
	if (w->off == w->len) {
		if (w->last)
			return MHD_CONTENT_READER_END_OF_STREAM;
		free(w->out);
		w->out = NULL;
		w->off = w->len = 0;
		pthread_mutex_lock(&srv.lock);
		watch_next(w);
		pthread_mutex_unlock(&srv.lock);
		if (!w->out)
			return MHD_CONTENT_READER_END_OF_STREAM;
		w->len = strlen(w->out);
	}
	size_t n = w->len - w->off < max ? w->len - w->off : max;
	memcpy(buf, w->out + w->off, n);
	w->off += n;
	return (ssize_t)n;
}

static void watch_free(void *cls)
{
	struct watch_conn *w = cls;
	free(w->out);
	free(w);
}

/* A watch of the slices: 200 and the stream. Called with srv.lock held,
 * which it lets go of: libmicrohttpd calls watch_read with its own lock
 * held, so its lock is never taken under srv.lock. */
static enum MHD_Result serve_watch(struct MHD_Connection *conn)
{
	const char *rv = MHD_lookup_connection_value(conn, MHD_GET_ARGUMENT_KIND, "resourceVersion");
	const char *timeout = MHD_lookup_connection_value(conn, MHD_GET_ARGUMENT_KIND, "timeoutSeconds");
	if (srv.watches < MAX_WATCHES)
		snprintf(srv.watch_from[srv.watches], sizeof(srv.watch_from[0]), "%s", rv ? rv : "");
	srv.watches++;
	struct watch_conn *w = calloc(1, sizeof(*w));
	assert_non_null(w);
	w->rv = rv && *rv ? strtol(rv, NULL, 10) : srv.next_rv;
	w->end_at = now_ms() + (timeout ? strtol(timeout, NULL, 10) : 60) * 1000;
	if (srv.watch_gone) {
		srv.watch_gone = false;
		w->out = strdup("{\"type\":\"ERROR\",\"object\":{\"kind\":\"Status\",\"status\":\"Failure\","
				"\"message\":\"too old resource version\",\"reason\":\"Expired\",\"code\":410}}\n");
		w->last = true;
	} else if (srv.watch_line) {
		w->out = srv.watch_line;
		srv.watch_line = NULL;
	}
	if (w->out)
		w->len = strlen(w->out);
	pthread_cond_broadcast(&srv.cond);
	pthread_mutex_unlock(&srv.lock);
	struct MHD_Response *r = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 16384, watch_read, w, watch_free);
	assert_non_null(r);
	MHD_add_response_header(r, "Content-Type", "application/json");
	enum MHD_Result ret = MHD_queue_response(conn, 200, r);
	MHD_destroy_response(r);
	return ret;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn, const char *url, const char *method,
				  const char *version, const char *data, size_t *data_size, void **con_cls)
{
	(void)cls;
	(void)version;
	struct upload *up = *con_cls;
	if (!up) {
		up = calloc(1, sizeof(*up));
		*con_cls = up;
		return MHD_YES;
	}
	if (*data_size) {
		up->data = realloc(up->data, up->len + *data_size + 1);
		memcpy(up->data + up->len, data, *data_size);
		up->len += *data_size;
		up->data[up->len] = '\0';
		*data_size = 0;
		return MHD_YES;
	}
	pthread_mutex_lock(&srv.lock);
	if (MHD_lookup_connection_value(conn, MHD_GET_ARGUMENT_KIND, "watch") &&
	    strcmp(url, "/apis/resource.k8s.io/v1/resourceslices") == 0) {
		/* This server lists and watches as Kubernetes 1.33 does by
		 * default (the WatchList gate off): a streamed list is refused,
		 * and the publisher lists instead. The streamed list itself is
		 * tested against the real kube-apiserver (test_kube_apiserver). */
		if (MHD_lookup_connection_value(conn, MHD_GET_ARGUMENT_KIND, "sendInitialEvents")) {
			srv.streams_refused++;
			pthread_mutex_unlock(&srv.lock);
			return answer_status(conn, 422, "Invalid",
					     "ListOptions.meta.k8s.io is invalid: sendInitialEvents: Forbidden: "
					     "sendInitialEvents is forbidden for watch unless the WatchList feature "
					     "gate is enabled");
		}
		return serve_watch(conn);
	}
	if (srv.requests < sizeof(srv.arrived) / sizeof(srv.arrived[0]))
		srv.arrived[srv.requests] = now_ms();
	srv.requests++;
	pthread_cond_broadcast(&srv.cond); /* also for an answer held below */
	const char *auth = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Authorization");
	snprintf(srv.last_auth, sizeof(srv.last_auth), "%s", auth ? auth : "");
	enum MHD_Result r;
	char want[256];
	snprintf(want, sizeof(want), "Bearer %s", srv.token ? srv.token : "");
	if (srv.token && strcmp(srv.last_auth, want) != 0) {
		r = answer_status(conn, 401, "Unauthorized", "Unauthorized");
	} else if (srv.throttles > 0) {
		srv.throttles--;
		r = answer_retry(conn, 429, "{\"kind\":\"Status\",\"message\":\"slow down\",\"code\":429}",
				 srv.retry_after);
	} else if (srv.fault == FAULT_GARBAGE) {
		r = answer(conn, 200, "{\"kind\": \"ResourceSliceList\", \"items\": [ {{{ garbage");
	} else if (srv.fault == FAULT_HUGE) {
		size_t n = KUBE_RESPONSE_MAX + 4096;
		char *big = malloc(n + 1);
		assert_non_null(big);
		memset(big, ' ', n);
		big[0] = '{';
		big[n - 1] = '}';
		big[n] = '\0';
		r = answer(conn, 200, big);
		free(big);
	} else if (srv.fault == FAULT_SLOW) {
		/* Hold the answer until the test lets it go (after the client gave up). */
		while (!srv.releasing)
			pthread_cond_wait(&srv.cond, &srv.lock);
		r = answer(conn, 200, "{}");
	} else if (srv.fault == FAULT_5XX) {
		r = answer_status(conn, 503, "ServiceUnavailable", "etcd is unhappy");
	} else if (strcmp(url, "/api/v1/nodes/node-a") == 0) {
		srv.node_reads++;
		r = answer(conn, 200,
			   "{\"kind\":\"Node\",\"metadata\":{\"name\":\"node-a\",\"uid\":\"node-a-uid\",\"resourceVersion\":\"1\"}}");
	} else if (strcmp(url, "/apis/resource.k8s.io/v1/namespaces/default/resourceclaims/c1") == 0) {
		r = answer(conn, 200, "{\"kind\":\"ResourceClaim\",\"metadata\":{\"name\":\"c1\",\"uid\":\"u1\"}}");
	} else if (strcmp(url, "/apis/resource.k8s.io/v1/namespaces/secret/resourceclaims/c1") == 0) {
		r = answer_status(conn, 403, "Forbidden", "resourceclaims is forbidden");
	} else if (strncmp(url, "/apis/resource.k8s.io/v1/resourceslices", 39) == 0) {
		r = serve_slices(conn, method, url, up);
	} else {
		r = answer_status(conn, 404, "NotFound", "not found");
	}
	pthread_cond_broadcast(&srv.cond);
	pthread_mutex_unlock(&srv.lock);
	return r;
}

static void on_completed(void *cls, struct MHD_Connection *conn, void **con_cls, enum MHD_RequestTerminationCode toe)
{
	(void)cls;
	(void)conn;
	(void)toe;
	struct upload *up = *con_cls;
	if (up)
		free(up->data);
	free(up);
	*con_cls = NULL;
}

/* --- the TLS front: accepts TLS, forwards the plain bytes to libmicrohttpd --------- */

#define FRONT_MAX_CONNS 64

static struct front {
	SSL_CTX *ctx;
	int listen_fd;
	pthread_t thread;
	uint16_t backend;
	pthread_mutex_t lock;
	pthread_cond_t idle;
	int conns[FRONT_MAX_CONNS];
	unsigned active;
} front;

static int write_all(int fd, const char *buf, size_t len)
{
	while (len) {
		ssize_t n = write(fd, buf, len);
		if (n <= 0)
			return -1;
		buf += n;
		len -= (size_t)n;
	}
	return 0;
}

static int connect_backend(void)
{
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(front.backend),
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	if (fd >= 0 && connect(fd, (struct sockaddr *)&a, sizeof(a)) == 0)
		return fd;
	if (fd >= 0)
		close(fd);
	return -1;
}

static void *front_conn(void *arg)
{
	size_t slot = (size_t)(uintptr_t)arg;
	pthread_mutex_lock(&front.lock);
	int fd = front.conns[slot];
	pthread_mutex_unlock(&front.lock);
	SSL *ssl = SSL_new(front.ctx);
	int up = -1;
	SSL_set_fd(ssl, fd);
	if (SSL_accept(ssl) == 1 && (up = connect_backend()) >= 0) {
		char buf[16384];
		for (;;) {
			struct pollfd pf[2] = { { .fd = fd, .events = POLLIN }, { .fd = up, .events = POLLIN } };
			if (SSL_pending(ssl) == 0 && poll(pf, 2, -1) < 0)
				break;
			if (SSL_pending(ssl) > 0 || pf[0].revents) {
				int n = SSL_read(ssl, buf, sizeof(buf));
				if (n <= 0 || write_all(up, buf, (size_t)n) < 0)
					break;
			}
			if (pf[1].revents) {
				ssize_t n = read(up, buf, sizeof(buf));
				if (n <= 0 || SSL_write(ssl, buf, (int)n) <= 0)
					break;
			}
		}
	}
	SSL_free(ssl);
	if (up >= 0)
		close(up);
	pthread_mutex_lock(&front.lock);
	front.conns[slot] = -1;
	close(fd);
	front.active--;
	pthread_cond_broadcast(&front.idle);
	pthread_mutex_unlock(&front.lock);
	return NULL;
}

static void *front_accept(void *arg)
{
	(void)arg;
	for (;;) {
		int fd = accept4(front.listen_fd, NULL, NULL, SOCK_CLOEXEC);
		if (fd < 0)
			return NULL; /* shut down by front_stop */
		pthread_mutex_lock(&front.lock);
		size_t slot = 0;
		while (slot < FRONT_MAX_CONNS && front.conns[slot] >= 0)
			slot++;
		if (slot == FRONT_MAX_CONNS) {
			pthread_mutex_unlock(&front.lock);
			close(fd);
			continue;
		}
		front.conns[slot] = fd;
		front.active++;
		pthread_mutex_unlock(&front.lock);
		pthread_t t;
		assert_int_equal(pthread_create(&t, NULL, front_conn, (void *)(uintptr_t)slot), 0);
		pthread_detach(t);
	}
}

static uint16_t front_start(uint16_t port)
{
	/* A client may close its connection while the front writes to it (a
	 * watch aborted mid-stream): the write fails, the process lives. */
	signal(SIGPIPE, SIG_IGN);
	front.listen_fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	assert_true(front.listen_fd >= 0);
	int one = 1;
	setsockopt(front.listen_fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(port), .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	assert_int_equal(bind(front.listen_fd, (struct sockaddr *)&a, sizeof(a)), 0);
	assert_int_equal(listen(front.listen_fd, 64), 0);
	socklen_t len = sizeof(a);
	assert_int_equal(getsockname(front.listen_fd, (struct sockaddr *)&a, &len), 0);
	for (size_t i = 0; i < FRONT_MAX_CONNS; i++)
		front.conns[i] = -1;
	assert_int_equal(pthread_create(&front.thread, NULL, front_accept, NULL), 0);
	return ntohs(a.sin_port);
}

static void front_stop(void)
{
	shutdown(front.listen_fd, SHUT_RDWR);
	pthread_join(front.thread, NULL);
	close(front.listen_fd);
	pthread_mutex_lock(&front.lock);
	for (size_t i = 0; i < FRONT_MAX_CONNS; i++)
		if (front.conns[i] >= 0)
			shutdown(front.conns[i], SHUT_RDWR);
	while (front.active)
		pthread_cond_wait(&front.idle, &front.lock);
	pthread_mutex_unlock(&front.lock);
}

static void server_start(uint16_t port)
{
	srv.closing = false;
	srv.mhd = MHD_start_daemon(MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD, 0, NULL, NULL,
				   on_request, NULL, MHD_OPTION_NOTIFY_COMPLETED, on_completed, NULL, MHD_OPTION_END);
	assert_non_null(srv.mhd);
	const union MHD_DaemonInfo *info = MHD_get_daemon_info(srv.mhd, MHD_DAEMON_INFO_BIND_PORT);
	front.backend = info->port;
	srv.port = front_start(port);
}

static void server_stop(void)
{
	pthread_mutex_lock(&srv.lock);
	srv.releasing = true;
	srv.closing = true;
	pthread_cond_broadcast(&srv.cond);
	pthread_mutex_unlock(&srv.lock);
	front_stop();
	MHD_stop_daemon(srv.mhd);
	srv.mhd = NULL;
	srv.releasing = false;
}

static void set_fault(enum fault fault)
{
	pthread_mutex_lock(&srv.lock);
	srv.fault = fault;
	if (fault != FAULT_SLOW) {
		srv.releasing = true;
		pthread_cond_broadcast(&srv.cond);
	} else {
		srv.releasing = false;
	}
	pthread_mutex_unlock(&srv.lock);
}

static struct publish_reports reps;

static int setup(void **state)
{
	(void)state;
	memset(&srv, 0, sizeof(srv));
	srv.next_rv = 100; /* a real server's versions are never 0, which a watch takes to mean "any" */
	publish_reports_init(&reps);
	pthread_mutex_init(&srv.lock, NULL);
	cond_init_monotonic(&srv.cond);
	pthread_mutex_init(&front.lock, NULL);
	pthread_cond_init(&front.idle, NULL);
	front.ctx = SSL_CTX_new(TLS_server_method());
	assert_non_null(front.ctx);
	assert_int_equal(SSL_CTX_use_certificate_file(front.ctx, FIXTURES "/server.crt", SSL_FILETYPE_PEM), 1);
	assert_int_equal(SSL_CTX_use_PrivateKey_file(front.ctx, FIXTURES "/server.key", SSL_FILETYPE_PEM), 1);
	server_start(0);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	if (srv.mhd)
		server_stop();
	for (size_t i = 0; i < srv.n_slices; i++)
		free(srv.slices[i].json);
	for (size_t i = 0; i < srv.n_changes; i++)
		free(srv.changes[i].object);
	free(srv.watch_line);
	SSL_CTX_free(front.ctx);
	publish_reports_fini(&reps);
	return 0;
}

static struct kube_client *client_for(const char *host, const char *ca_file, const char *token_file, int timeout_ms)
{
	struct kube_config c = { 0 };
	char url[64], why[256];
	snprintf(url, sizeof(url), "https://%s:%u", host, srv.port);
	c.server = strdup(url);
	c.ca.data = read_all(ca_file);
	c.ca.len = strlen(c.ca.data);
	if (token_file)
		c.token_file = strdup(token_file);
	struct kube_client *client = NULL;
	if (kube_client_new(&c, timeout_ms, &client, why, sizeof(why)) < 0)
		fail_msg("%s", why);
	return client;
}

static void test_request(void **state)
{
	(void)state;
	struct kube_client *c = client_for("localhost", FIXTURES "/ca.crt", NULL, 5000);
	struct kube_response resp = { 0 };
	assert_int_equal(kube_client_request(c, "GET", "/api/v1/nodes/node-a", NULL, 0, &resp), 0);
	assert_int_equal(resp.status, 200);
	struct kube_meta meta;
	char why[128];
	assert_int_equal(kube_parse_meta(resp.body, resp.len, &meta, why, sizeof(why)), 0);
	assert_string_equal(meta.uid, "node-a-uid");
	kube_response_free(&resp);
	/* Statuses are the caller's to judge. */
	assert_int_equal(kube_client_request(c, "GET", "/api/v1/nodes/node-b", NULL, 0, &resp), 0);
	assert_int_equal(resp.status, 404);
	char msg[64];
	kube_status_message(resp.body, resp.len, msg, sizeof(msg));
	assert_string_equal(msg, "not found");
	kube_response_free(&resp);
	/* What this client never sends. */
	assert_int_equal(kube_client_request(c, "TRACE", "/", NULL, 0, &resp), -EINVAL);
	assert_int_equal(kube_client_request(c, "GET", "/a b", NULL, 0, &resp), -EINVAL);
	assert_int_equal(kube_client_request(c, "GET", "/a\r\nX: y", NULL, 0, &resp), -EINVAL);
	assert_int_equal(kube_client_request(c, "POST", "/x", "{}", KUBE_REQUEST_MAX + 1, &resp), -E2BIG);
	kube_client_free(c);

	/* A server whose certificate the CA did not sign, or does not name. */
	c = client_for("localhost", FIXTURES "/other-ca.crt", NULL, 5000);
	assert_int_equal(kube_client_request(c, "GET", "/api/v1/nodes/node-a", NULL, 0, &resp), -EPROTO);
	assert_non_null(strstr(resp.cause, "GET /api/v1/nodes/node-a"));
	kube_client_free(c);

	/* Not listening. */
	uint16_t port = srv.port;
	server_stop();
	c = client_for("127.0.0.1", FIXTURES "/ca.crt", NULL, 5000);
	assert_int_equal(kube_client_request(c, "GET", "/", NULL, 0, &resp), -ECONNREFUSED);
	assert_non_null(strstr(resp.cause, "cannot connect"));
	kube_client_free(c);
	server_start(port);
	/* An http:// server is refused. */
	struct kube_config plain = { .server = strdup("http://127.0.0.1:1") };
	struct kube_client *none = NULL;
	assert_int_equal(kube_client_new(&plain, 0, &none, why, sizeof(why)), -EINVAL);
	kube_config_free(&plain);
}

static void test_faults(void **state)
{
	(void)state;
	struct kube_client *c = client_for("127.0.0.1", FIXTURES "/ca.crt", NULL, 500);
	struct kube_response resp = { 0 };
	set_fault(FAULT_HUGE);
	assert_int_equal(kube_client_request(c, "GET", "/x", NULL, 0, &resp), -EFBIG);
	assert_non_null(strstr(resp.cause, "response above 4194304 bytes"));
	set_fault(FAULT_SLOW);
	assert_int_equal(kube_client_request(c, "GET", "/x", NULL, 0, &resp), -ETIMEDOUT);
	assert_non_null(strstr(resp.cause, "within 500 ms"));
	/* A deadline of the request's own. */
	int64_t t0 = now_ms();
	const struct kube_request_limits soon = { .deadline_ms = t0 + 150, .abort_fd = -1 };
	assert_int_equal(kube_client_request_limited(c, "GET", "/x", NULL, 0, &soon, &resp), -ETIMEDOUT);
	assert_true(now_ms() - t0 < 500);
	assert_non_null(strstr(resp.cause, "no answer from https://127.0.0.1:"));
	set_fault(FAULT_GARBAGE);
	assert_int_equal(kube_client_request(c, "GET", "/x", NULL, 0, &resp), 0);
	struct kube_slice_list list;
	char why[128];
	assert_int_equal(kube_parse_slice_list(resp.body, resp.len, &list, why, sizeof(why)), -EBADMSG);
	kube_response_free(&resp);
	set_fault(FAULT_NONE);
	kube_client_free(c);
}

/* Writes fd once the server has had n requests: a caller giving up on one. */
struct giver_up {
	pthread_t thread;
	unsigned requests; /* of srv.requests, or of *counter when set */
	const unsigned *counter;
	int fd; /* an eventfd; -1: kube_client_abort of client instead */
	struct kube_client *client;
};

static void *give_up(void *arg)
{
	struct giver_up *g = arg;
	struct timespec until = deadline_after_ms(WAIT_MS);
	pthread_mutex_lock(&srv.lock);
	const unsigned *n = g->counter ? g->counter : &srv.requests;
	while (*n < g->requests && pthread_cond_timedwait(&srv.cond, &srv.lock, &until) != ETIMEDOUT) {
	}
	pthread_mutex_unlock(&srv.lock);
	uint64_t one = 1;
	if (g->fd < 0)
		kube_client_abort(g->client);
	else if (write(g->fd, &one, sizeof(one)) != sizeof(one))
		abort();
	return NULL;
}

static unsigned requests_now(void)
{
	pthread_mutex_lock(&srv.lock);
	unsigned n = srv.requests;
	pthread_mutex_unlock(&srv.lock);
	return n;
}

/* A 429 with Retry-After is sent again after the time asked, unless that
 * is past the deadline; a request's abort fd, and kube_client_abort, end
 * a transfer and a Retry-After's wait at once. */
static void test_retry_after_and_abort(void **state)
{
	(void)state;
	struct kube_client *c = client_for("127.0.0.1", FIXTURES "/ca.crt", NULL, 5000);
	struct kube_response resp = { 0 };
	pthread_mutex_lock(&srv.lock);
	srv.throttles = 1;
	srv.retry_after = "1";
	pthread_mutex_unlock(&srv.lock);
	unsigned before = requests_now();
	int64_t t0 = now_ms();
	assert_int_equal(kube_client_request(c, "GET", "/api/v1/nodes/node-a", NULL, 0, &resp), 0);
	assert_int_equal(resp.status, 200);
	assert_true(now_ms() - t0 >= 1000);
	assert_int_equal(requests_now(), before + 2);
	kube_response_free(&resp);

	/* Past the deadline (5 s): answered as it is, saying what was asked. */
	pthread_mutex_lock(&srv.lock);
	srv.throttles = 1;
	srv.retry_after = "30";
	pthread_mutex_unlock(&srv.lock);
	t0 = now_ms();
	assert_int_equal(kube_client_request(c, "GET", "/api/v1/nodes/node-a", NULL, 0, &resp), 0);
	assert_int_equal(resp.status, 429);
	assert_int_equal(resp.retry_after_s, 30);
	assert_true(now_ms() - t0 < 1000);
	kube_response_free(&resp);

	/* The request's abort fd: during a transfer, and during a wait. */
	struct giver_up g = { .fd = eventfd(0, EFD_CLOEXEC), .client = c };
	assert_true(g.fd >= 0);
	const struct kube_request_limits limits = { .deadline_ms = now_ms() + 60000, .abort_fd = g.fd };
	set_fault(FAULT_SLOW);
	g.requests = requests_now() + 1;
	assert_int_equal(pthread_create(&g.thread, NULL, give_up, &g), 0);
	t0 = now_ms();
	assert_int_equal(kube_client_request_limited(c, "GET", "/x", NULL, 0, &limits, &resp), -ECANCELED);
	assert_true(now_ms() - t0 < 1000);
	pthread_join(g.thread, NULL);
	set_fault(FAULT_NONE);
	uint64_t v;
	assert_int_equal(read(g.fd, &v, sizeof(v)), sizeof(v));
	pthread_mutex_lock(&srv.lock);
	srv.throttles = 1;
	srv.retry_after = "4";
	pthread_mutex_unlock(&srv.lock);
	g.requests = requests_now() + 1;
	assert_int_equal(pthread_create(&g.thread, NULL, give_up, &g), 0);
	t0 = now_ms();
	assert_int_equal(kube_client_request_limited(c, "GET", "/api/v1/nodes/node-a", NULL, 0, &limits, &resp),
			 -ECANCELED);
	assert_true(now_ms() - t0 < 1000);
	pthread_join(g.thread, NULL);
	close(g.fd);

	/* The client aborted: the request under way, and every later one. */
	set_fault(FAULT_SLOW);
	g = (struct giver_up){ .fd = -1, .client = c, .requests = requests_now() + 1 };
	assert_int_equal(pthread_create(&g.thread, NULL, give_up, &g), 0);
	t0 = now_ms();
	assert_int_equal(kube_client_request(c, "GET", "/x", NULL, 0, &resp), -ECANCELED);
	assert_true(now_ms() - t0 < 1000);
	pthread_join(g.thread, NULL);
	set_fault(FAULT_NONE);
	before = requests_now();
	assert_int_equal(kube_client_request(c, "GET", "/api/v1/nodes/node-a", NULL, 0, &resp), -ECANCELED);
	assert_int_equal(requests_now(), before);
	kube_client_free(c);
}

/* What a watch's reader saw. */
struct seen {
	size_t n;
	enum kube_watch_type type[8];
	char name[8][KUBE_META_NAME_MAX], rv[8][KUBE_META_VERSION_MAX];
	int answer; /* what the reader returns */
};

static int collect(void *ctx, const struct kube_watch_event *ev)
{
	struct seen *s = ctx;
	if (s->n < 8) {
		s->type[s->n] = ev->type;
		snprintf(s->name[s->n], sizeof(s->name[0]), "%s", ev->name);
		snprintf(s->rv[s->n], sizeof(s->rv[0]), "%s", ev->resource_version);
		s->n++;
	}
	return s->answer;
}

/* The watch: events in order until the server ends it with a bookmark;
 * each way one can end early says so with its own errno. */
static void test_watch(void **state)
{
	(void)state;
	struct kube_client *c = client_for("127.0.0.1", FIXTURES "/ca.crt", NULL, 2000);
	struct kube_response resp = { 0 };
	static const char slice[] = "{\"kind\":\"ResourceSlice\",\"metadata\":{\"name\":\"s1\"},"
				    "\"spec\":{\"pool\":{\"generation\":1}}}";
	assert_int_equal(kube_client_request(c, "POST", "/apis/resource.k8s.io/v1/resourceslices", slice,
					     strlen(slice), &resp),
			 0);
	assert_int_equal(resp.status, 201);
	kube_response_free(&resp);

	struct seen seen = { 0 };
	struct kube_watch_request req = {
		.path = "/apis/resource.k8s.io/v1/resourceslices?fieldSelector=spec.nodeName%3Dnode-a",
		.resource_version = "100",
		.timeout_s = 1,
		.abort_fd = -1,
		.on_event = collect,
		.ctx = &seen,
	};
	struct kube_watch_outcome out;
	assert_int_equal(kube_client_watch(c, &req, &out), 0);
	assert_string_equal(out.cause, "");
	assert_int_equal(seen.n, 2);
	assert_int_equal(seen.type[0], KUBE_WATCH_ADDED);
	assert_string_equal(seen.name[0], "s1");
	assert_string_equal(seen.rv[0], "101");
	assert_int_equal(seen.type[1], KUBE_WATCH_BOOKMARK);
	assert_string_equal(seen.rv[1], "101");
	pthread_mutex_lock(&srv.lock);
	assert_string_equal(srv.watch_from[0], "100");
	pthread_mutex_unlock(&srv.lock);

	/* The version is gone: the caller lists again. */
	pthread_mutex_lock(&srv.lock);
	srv.watch_gone = true;
	pthread_mutex_unlock(&srv.lock);
	assert_int_equal(kube_client_watch(c, &req, &out), -ESTALE);
	assert_int_equal(out.status, 410);
	assert_non_null(strstr(out.cause, "too old resource version"));
	/* A line that is not an event; one above the bound. */
	pthread_mutex_lock(&srv.lock);
	srv.watch_line = strdup("this is not JSON\n");
	pthread_mutex_unlock(&srv.lock);
	assert_int_equal(kube_client_watch(c, &req, &out), -EBADMSG);
	assert_non_null(strstr(out.cause, "not JSON"));
	char *big = malloc(KUBE_WATCH_EVENT_MAX + 2);
	assert_non_null(big);
	memset(big, ' ', KUBE_WATCH_EVENT_MAX + 1);
	big[0] = '{';
	big[KUBE_WATCH_EVENT_MAX] = '\n';
	big[KUBE_WATCH_EVENT_MAX + 1] = '\0';
	pthread_mutex_lock(&srv.lock);
	srv.watch_line = big;
	pthread_mutex_unlock(&srv.lock);
	assert_int_equal(kube_client_watch(c, &req, &out), -EMSGSIZE);
	assert_non_null(strstr(out.cause, "a watch event above 4194304 bytes"));
	/* The reader ends it. */
	seen = (struct seen){ .answer = -EINTR };
	assert_int_equal(kube_client_watch(c, &req, &out), -EINTR);
	assert_int_equal(seen.n, 1);
	seen.answer = 0;
	/* Refused: the status and the server's words. */
	req.path = "/apis/resource.k8s.io/v1/nothing";
	assert_int_equal(kube_client_watch(c, &req, &out), -EREMOTEIO);
	assert_int_equal(out.status, 404);
	assert_string_equal(out.cause, "the watch was refused: HTTP 404: not found");
	/* What this client does not send. */
	req.resource_version = "1&watch=0";
	assert_int_equal(kube_client_watch(c, &req, &out), -EINVAL);
	req.resource_version = "101";
	req.timeout_s = 0;
	assert_int_equal(kube_client_watch(c, &req, &out), -EINVAL);

	/* Aborted while idle: at once, however long it was asked to last. */
	req.path = "/apis/resource.k8s.io/v1/resourceslices";
	req.timeout_s = 60;
	struct giver_up g = { .fd = eventfd(0, EFD_CLOEXEC), .client = c, .counter = &srv.watches };
	assert_true(g.fd >= 0);
	req.abort_fd = g.fd;
	pthread_mutex_lock(&srv.lock);
	g.requests = srv.watches + 1;
	pthread_mutex_unlock(&srv.lock);
	assert_int_equal(pthread_create(&g.thread, NULL, give_up, &g), 0);
	int64_t t0 = now_ms();
	assert_int_equal(kube_client_watch(c, &req, &out), -ECANCELED);
	assert_true(now_ms() - t0 < 1000);
	pthread_join(g.thread, NULL);
	close(g.fd);
	kube_client_free(c);
}

static void write_token(const char *path, const char *token)
{
	/* As the kubelet does: a new file renamed over the old. */
	char tmp[256];
	snprintf(tmp, sizeof(tmp), "%s.new", path);
	FILE *f = fopen(tmp, "w");
	assert_non_null(f);
	fputs(token, f);
	fclose(f);
	assert_int_equal(rename(tmp, path), 0);
}

static void set_token(const char *token)
{
	pthread_mutex_lock(&srv.lock);
	srv.token = token;
	pthread_mutex_unlock(&srv.lock);
}

static void test_token_rotation(void **state)
{
	(void)state;
	char dir[64], path[256];
	assert_int_equal(tmpdir_make(dir, sizeof(dir), "kube-token"), 0);
	snprintf(path, sizeof(path), "%s/token", dir);
	write_token(path, "first\n");
	struct kube_client *c = client_for("127.0.0.1", FIXTURES "/ca.crt", path, 5000);
	struct kube_response resp = { 0 };
	set_token("first");
	assert_int_equal(kube_client_request(c, "GET", "/api/v1/nodes/node-a", NULL, 0, &resp), 0);
	assert_int_equal(resp.status, 200);
	kube_response_free(&resp);
	/* Rotated: the next request carries the new token. */
	write_token(path, "second");
	set_token("second");
	assert_int_equal(kube_client_request(c, "GET", "/api/v1/nodes/node-a", NULL, 0, &resp), 0);
	assert_int_equal(resp.status, 200);
	pthread_mutex_lock(&srv.lock);
	assert_string_equal(srv.last_auth, "Bearer second");
	pthread_mutex_unlock(&srv.lock);
	kube_response_free(&resp);
	/* A bare CR in the file: refused, never sent; the header stays the last good one. */
	write_token(path, "sec\rond\n");
	assert_int_equal(kube_client_request(c, "GET", "/api/v1/nodes/node-a", NULL, 0, &resp), -EACCES);
	assert_non_null(strstr(resp.cause, "control character 0x0d at byte 4"));
	assert_null(strstr(resp.cause, "sec"));
	pthread_mutex_lock(&srv.lock);
	assert_string_equal(srv.last_auth, "Bearer second");
	pthread_mutex_unlock(&srv.lock);
	write_token(path, "second");
	/* The server stops taking it: one more read of the file, then the 401 is the caller's. */
	set_token("third");
	assert_int_equal(kube_client_request(c, "GET", "/api/v1/nodes/node-a", NULL, 0, &resp), 0);
	assert_int_equal(resp.status, 401);
	kube_response_free(&resp);
	/* A token file gone: -EACCES naming it. */
	unlink(path);
	assert_int_equal(kube_client_request(c, "GET", "/api/v1/nodes/node-a", NULL, 0, &resp), -EACCES);
	assert_non_null(strstr(resp.cause, path));
	set_token(NULL);
	kube_client_free(c);
	assert_int_equal(rmdir(dir), 0);
}

/* The in-cluster CA file rotated (the kubelet updates the projected
 * kube-root-ca.crt): the next new connection verifies with the new CA. */
static void test_ca_rotation(void **state)
{
	(void)state;
	char dir[64], path[256];
	assert_int_equal(tmpdir_make(dir, sizeof(dir), "kube-ca"), 0);
	snprintf(path, sizeof(path), "%s/ca.crt", dir);
	char *other = read_all(FIXTURES "/other-ca.crt"), *right = read_all(FIXTURES "/ca.crt");
	write_token(path, other);
	struct kube_config cfg = { 0 };
	char url[64], why[256];
	snprintf(url, sizeof(url), "https://127.0.0.1:%u", srv.port);
	cfg.server = strdup(url);
	cfg.ca = (struct kube_blob){ .data = strdup(other), .len = strlen(other) };
	cfg.ca_file = strdup(path);
	struct kube_client *c = NULL;
	if (kube_client_new(&cfg, 5000, &c, why, sizeof(why)) < 0)
		fail_msg("%s", why);
	struct kube_response resp = { 0 };
	assert_true(kube_client_request(c, "GET", "/api/v1/nodes/node-a", NULL, 0, &resp) < 0);
	assert_non_null(strstr(resp.cause, "certificate"));
	/* Replaced by rename, as the kubelet swaps a projected volume. */
	write_token(path, right);
	assert_int_equal(kube_client_request(c, "GET", "/api/v1/nodes/node-a", NULL, 0, &resp), 0);
	assert_int_equal(resp.status, 200);
	kube_response_free(&resp);
	kube_client_free(c);
	free(other);
	free(right);
	assert_int_equal(unlink(path), 0);
	assert_int_equal(rmdir(dir), 0);
}

/* --- the publisher ---------------------------------------------------------------- */


/* Waits for a report after the first `after` of kind event (and error, when
 * not 0); returns its index. */
static size_t wait_report(size_t after, enum kube_publish_event event, int error)
{
	size_t i = 0;
	if (publish_reports_wait(&reps, after, event, error, WAIT_MS, &i) < 0)
		fail_msg("no report of event %d (error %d) after %zu", event, error, after);
	return i;
}

static struct npu_snapshot *chips(unsigned count, int unhealthy)
{
	struct npu_snapshot *s = npu_snapshot_new(count);
	assert_non_null(s);
	for (unsigned i = 0; i < count; i++) {
		struct npu_device *d = &s->devices[i];
		snprintf(d->id, sizeof(d->id), "npu-%u", i);
		d->chip.phy_id = i;
		d->chip.family = NPU_FAMILY_910B;
		snprintf(d->chip.name, sizeof(d->chip.name), "910B3");
		d->healthy = (int)i != unhealthy;
		d->fault = d->healthy ? NPU_FAULT_NONE : NPU_FAULT_HEALTH_LEVEL;
		s->healthy += d->healthy;
	}
	return s;
}

/* The stored slices' devices, and whether npu-<taint> carries a taint. */
static void check_store(size_t want_slices, size_t want_devices, int tainted, int64_t generation)
{
	pthread_mutex_lock(&srv.lock);
	assert_int_equal(srv.n_slices, want_slices);
	size_t devices = 0;
	for (size_t i = 0; i < srv.n_slices; i++) {
		json_object *o = json_tokener_parse(srv.slices[i].json), *spec, *pool, *devs, *gen;
		assert_non_null(o);
		assert_true(json_object_object_get_ex(o, "spec", &spec));
		assert_true(json_object_object_get_ex(spec, "pool", &pool));
		assert_true(json_object_object_get_ex(pool, "generation", &gen));
		assert_int_equal(json_object_get_int64(gen), generation);
		assert_true(json_object_object_get_ex(spec, "devices", &devs));
		for (size_t d = 0; d < json_object_array_length(devs); d++) {
			json_object *dev = json_object_array_get_idx(devs, d), *name, *taints;
			json_object_object_get_ex(dev, "name", &name);
			char want[16];
			snprintf(want, sizeof(want), "npu-%d", tainted);
			bool has = json_object_object_get_ex(dev, "taints", &taints);
			assert_int_equal(has, strcmp(json_object_get_string(name), want) == 0);
			devices++;
		}
		json_object_put(o);
	}
	assert_int_equal(devices, want_devices);
	pthread_mutex_unlock(&srv.lock);
}

/* Deletes every stored slice, as the kubelet's wipe does; srv.lock held. */
static void wipe_store_locked(void)
{
	for (size_t k = 0; k < srv.n_slices; k++) {
		record("DELETED", &srv.slices[k]);
		free(srv.slices[k].json);
	}
	srv.n_slices = 0;
}

static void test_publisher(void **state)
{
	(void)state;
	/* Unreachable at start. */
	uint16_t port = srv.port;
	server_stop();
	struct kube_client *c = client_for("127.0.0.1", FIXTURES "/ca.crt", NULL, 400);
	const struct kube_publisher_options o = {
		.client = c,
		.node_name = "node-a",
		.driver_version = "24.1.rc2",
		.backoff_initial_ms = 20,
		.backoff_max_ms = 100,
		.resync_ms = 300,
		.report = publish_reports_add,
		.report_ctx = &reps,
	};
	struct kube_publisher *p = NULL;
	assert_int_equal(kube_publisher_start(&o, &p), 0);
	struct npu_snapshot *s = chips(200, -1);
	assert_int_equal(kube_publisher_offer(p, s, NULL), 0);
	npu_snapshot_unref(s);
	size_t i = wait_report(0, KUBE_PUBLISH_FAILED, -ECONNREFUSED);
	/* The server comes up: the truth is published, generation 1, two slices of 128 and 72. */
	server_start(port);
	i = wait_report(i + 1, KUBE_PUBLISH_DONE, 0);
	assert_true(reps.all[i].recovered);
	assert_int_equal(reps.all[i].generation, 1);
	assert_int_equal(reps.all[i].slices, 2);
	assert_int_equal(reps.all[i].devices, 200);
	check_store(2, 200, -1, 1);
	/* The refusal was reported once, however many retries. */
	size_t refusals = 0;
	for (size_t k = 0; k < i; k++)
		refusals += reps.all[k].event == KUBE_PUBLISH_FAILED && reps.all[k].error == -ECONNREFUSED;
	assert_int_equal(refusals, 1);

	/* A chip turns Unhealthy: tainted, 64 per slice, generation 2. */
	s = chips(200, 7);
	assert_int_equal(kube_publisher_offer(p, s, NULL), 0);
	npu_snapshot_unref(s);
	i = wait_report(i + 1, KUBE_PUBLISH_DONE, 0);
	assert_false(reps.all[i].recovered);
	assert_int_equal(reps.all[i].generation, 2);
	assert_int_equal(reps.all[i].slices, 4);
	check_store(4, 200, 7, 2);

	/* The same content again: no round, no write. */
	pthread_mutex_lock(&srv.lock);
	unsigned writes = srv.writes;
	pthread_mutex_unlock(&srv.lock);
	s = chips(200, 7);
	assert_int_equal(kube_publisher_offer(p, s, NULL), 0);
	npu_snapshot_unref(s);

	/* Faults, each reported once, then the latest truth: fewer chips. */
	static const struct {
		enum fault fault;
		int error;
	} faults[] = { { FAULT_GARBAGE, -EBADMSG }, { FAULT_HUGE, -EFBIG }, { FAULT_SLOW, -ETIMEDOUT }, { FAULT_5XX, -EREMOTEIO } };
	for (size_t f = 0; f < sizeof(faults) / sizeof(faults[0]); f++) {
		set_fault(faults[f].fault);
		s = chips((unsigned)(100 - f), -1);
		assert_int_equal(kube_publisher_offer(p, s, NULL), 0);
		npu_snapshot_unref(s);
		i = wait_report(i + 1, KUBE_PUBLISH_FAILED, faults[f].error);
	}
	assert_int_equal(reps.all[i].status, 503);
	assert_non_null(strstr(reps.all[i].cause, "etcd is unhappy"));
	pthread_mutex_lock(&srv.lock);
	assert_int_equal(srv.writes, writes);
	pthread_mutex_unlock(&srv.lock);
	/* A conflict on the way back is read again and retried. */
	pthread_mutex_lock(&srv.lock);
	srv.conflicts_left = 1;
	pthread_mutex_unlock(&srv.lock);
	set_fault(FAULT_NONE);
	i = wait_report(i + 1, KUBE_PUBLISH_DONE, 0);
	assert_true(reps.all[i].recovered);
	assert_int_equal(reps.all[i].generation, 3);
	assert_int_equal(reps.all[i].slices, 1);
	assert_int_equal(reps.all[i].devices, 97);
	check_store(1, 97, -1, 3);
	pthread_mutex_lock(&srv.lock);
	assert_int_equal(srv.conflicts_left, 0);
	pthread_mutex_unlock(&srv.lock);

	/* Someone else's higher generation: the next one goes above it. */
	pthread_mutex_lock(&srv.lock);
	json_object *obj = json_tokener_parse(srv.slices[0].json), *spec, *pool;
	json_object_object_get_ex(obj, "spec", &spec);
	json_object_object_get_ex(spec, "pool", &pool);
	json_object_object_add(pool, "generation", json_object_new_int64(41));
	free(srv.slices[0].json);
	srv.slices[0].json = strdup(json_object_to_json_string(obj));
	json_object_put(obj);
	pthread_mutex_unlock(&srv.lock);
	s = chips(96, -1);
	size_t before = publish_reports_count(&reps);
	assert_int_equal(kube_publisher_offer(p, s, NULL), 0);
	npu_snapshot_unref(s);
	i = wait_report(before, KUBE_PUBLISH_DONE, 0);
	assert_int_equal(reps.all[i].generation, 42);
	check_store(1, 96, -1, 42);

	/* Resyncs find the server as written: they list, and write nothing. */
	pthread_mutex_lock(&srv.lock);
	writes = srv.writes;
	unsigned requests = srv.requests;
	struct timespec deadline = deadline_after_ms(WAIT_MS);
	while (srv.requests < requests + 3)
		if (pthread_cond_timedwait(&srv.cond, &srv.lock, &deadline) == ETIMEDOUT)
			fail_msg("no resync within %d ms", WAIT_MS);
	assert_int_equal(srv.writes, writes);
	/* Someone deletes the slice: the next resync puts it back. */
	wipe_store_locked();
	pthread_mutex_unlock(&srv.lock);
	i = wait_report(i + 1, KUBE_PUBLISH_DONE, 0);
	assert_int_equal(reps.all[i].generation, 43);
	check_store(1, 96, -1, 43);

	kube_publisher_stop(p);
	kube_client_free(c);
}

/* A publisher of node-a (resyncs never within a test) whose first
 * publication, 8 healthy chips at generation 1, is on the server: it does
 * not wait for the coalescing window. *ret_i: the index of its report. */
static struct kube_publisher *published_with(struct kube_publisher_options o, struct kube_client **ret_client,
					     size_t *ret_i)
{
	struct kube_client *c = client_for("127.0.0.1", FIXTURES "/ca.crt", NULL, 400);
	o.client = c;
	o.node_name = "node-a";
	o.resync_ms = 3600000;
	o.report = publish_reports_add;
	o.report_ctx = &reps;
	struct kube_publisher *p = NULL;
	assert_int_equal(kube_publisher_start(&o, &p), 0);
	struct npu_snapshot *s = chips(8, -1);
	int64_t start = now_ms();
	assert_int_equal(kube_publisher_offer(p, s, NULL), 0);
	npu_snapshot_unref(s);
	*ret_i = wait_report(0, KUBE_PUBLISH_DONE, 0);
	assert_true(now_ms() - start < 1000);
	check_store(1, 8, -1, 1);
	*ret_client = c;
	return p;
}

static struct kube_publisher *published(struct kube_client **ret_client, int coalesce_ms, size_t *ret_i)
{
	return published_with((struct kube_publisher_options){ .coalesce_ms = coalesce_ms }, ret_client, ret_i);
}

/* What the server had seen, to compare with later: lists, watches and the
 * latest resourceVersion. */
struct so_far {
	unsigned lists, watches;
	char version[32];
};

static struct so_far so_far(void)
{
	struct so_far f;
	pthread_mutex_lock(&srv.lock);
	f.lists = srv.lists;
	f.watches = srv.watches;
	snprintf(f.version, sizeof(f.version), "%ld", srv.next_rv);
	pthread_mutex_unlock(&srv.lock);
	return f;
}

/* Waits until the server has had n watches in all. */
static void await_watches(unsigned n)
{
	pthread_mutex_lock(&srv.lock);
	struct timespec deadline = deadline_after_ms(WAIT_MS);
	while (srv.watches < n)
		if (pthread_cond_timedwait(&srv.cond, &srv.lock, &deadline) == ETIMEDOUT)
			fail_msg("%u watches of %u within %d ms", srv.watches, n, WAIT_MS);
	pthread_mutex_unlock(&srv.lock);
}

/* The kubelet's registration of the driver costs no request: every node of
 * a fleet registers as it starts, and the watch sees a wipe whenever it
 * comes. Before the watch, it was a list at once and every 2 s for 40 s on
 * every node (scripts/bench-fleet.sh). The round that writes the slices
 * back reads the Node, for its uid: a list, the Node, the write. */
static void test_publisher_registration_is_free(void **state)
{
	(void)state;
	struct kube_client *c;
	size_t i;
	struct kube_publisher *p = published(&c, 0, &i);
	await_watches(1);

	pthread_mutex_lock(&srv.lock);
	unsigned reads = srv.node_reads, requests = srv.requests;
	pthread_mutex_unlock(&srv.lock);
	kube_publisher_recheck(p, 20000);
	/* Nothing within a second: a check would come at once. */
	pthread_mutex_lock(&srv.lock);
	struct timespec deadline = deadline_after_ms(1000);
	while (srv.requests == requests && pthread_cond_timedwait(&srv.cond, &srv.lock, &deadline) != ETIMEDOUT) {
	}
	unsigned after = srv.requests;
	pthread_mutex_unlock(&srv.lock);
	assert_int_equal(after, requests);
	pthread_mutex_lock(&srv.lock);
	wipe_store_locked();
	pthread_mutex_unlock(&srv.lock);
	i = wait_report(i + 1, KUBE_PUBLISH_DONE, 0);
	check_store(1, 8, -1, 2);
	pthread_mutex_lock(&srv.lock);
	after = srv.requests;
	unsigned reads_after = srv.node_reads;
	pthread_mutex_unlock(&srv.lock);
	assert_int_equal(after, requests + 3);
	assert_int_equal(reads_after, reads + 1);

	kube_publisher_stop(p);
	kube_client_free(c);
}

/* Faults of one burst (offers within the coalescing window) are one write:
 * before the window, the first fault of a burst was written at once and
 * the others after it, up to 6 writes per node in the bench's fault storm
 * (scripts/bench-fleet.sh). The first publication does not wait. */
static void test_publisher_coalesces_a_burst(void **state)
{
	(void)state;
	struct kube_client *c;
	size_t i;
	struct kube_publisher *p = published(&c, 1000, &i);
	struct npu_snapshot *s;

	pthread_mutex_lock(&srv.lock);
	unsigned writes = srv.writes;
	pthread_mutex_unlock(&srv.lock);
	/* Chips 1 to 5 fail one after another, 20 ms apart. */
	for (int chip = 1; chip <= 5; chip++) {
		s = chips(8, chip);
		assert_int_equal(kube_publisher_offer(p, s, NULL), 0);
		npu_snapshot_unref(s);
		struct timespec pause = { .tv_nsec = 20 * 1000 * 1000 };
		nanosleep(&pause, NULL);
	}
	i = wait_report(i + 1, KUBE_PUBLISH_DONE, 0);
	assert_int_equal(reps.all[i].generation, 2);
	check_store(1, 8, 5, 2);
	pthread_mutex_lock(&srv.lock);
	assert_int_equal(srv.writes, writes + 1);
	pthread_mutex_unlock(&srv.lock);

	kube_publisher_stop(p);
	kube_client_free(c);
}

/* Failed rounds are retried after half to all of the backoff step, at
 * random, not after the step exactly: every driver of a fleet fails at once
 * when the API server does, and would otherwise retry in lockstep. With a
 * fixed step of 200 ms, seven retries in a row all 180 ms or more apart has
 * a chance of 0.2^7 with the jitter, and is certain without it. */
static void test_publisher_backoff_jitter(void **state)
{
	(void)state;
	struct kube_client *c = client_for("127.0.0.1", FIXTURES "/ca.crt", NULL, 400);
	const struct kube_publisher_options o = {
		.client = c,
		.node_name = "node-a",
		.backoff_initial_ms = 200,
		.backoff_max_ms = 200,
		.resync_ms = 3600000,
		.report = publish_reports_add,
		.report_ctx = &reps,
	};
	set_fault(FAULT_5XX);
	struct kube_publisher *p = NULL;
	assert_int_equal(kube_publisher_start(&o, &p), 0);
	struct npu_snapshot *s = chips(8, -1);
	assert_int_equal(kube_publisher_offer(p, s, NULL), 0);
	npu_snapshot_unref(s);
	/* One request per failed round: the list. */
	pthread_mutex_lock(&srv.lock);
	struct timespec deadline = deadline_after_ms(WAIT_MS);
	while (srv.requests < 8)
		if (pthread_cond_timedwait(&srv.cond, &srv.lock, &deadline) == ETIMEDOUT)
			fail_msg("only %u requests within %d ms", srv.requests, WAIT_MS);
	int64_t shortest = INT64_MAX, longest = 0;
	for (unsigned k = 1; k < 8; k++) {
		int64_t gap = srv.arrived[k] - srv.arrived[k - 1];
		shortest = gap < shortest ? gap : shortest;
		longest = gap > longest ? gap : longest;
	}
	pthread_mutex_unlock(&srv.lock);
	kube_publisher_stop(p);
	kube_client_free(c);
	/* Never under half the step; and not all at the step. */
	assert_true(shortest >= 95);
	assert_true(shortest < 180);
	assert_true(longest <= 400);
}

/* The kubelet wipes a node's slices when it starts, in the background, and
 * a driver's 30 s after the driver went away, so a wipe can come at any
 * time, just after the driver registered again too: the watch sees it, and
 * the slices are back within a second, with one list, no resync due and no
 * new snapshot. The echo of the publisher's own writes asks for nothing. */
static void test_publisher_watch_puts_back(void **state)
{
	(void)state;
	struct kube_client *c;
	size_t i;
	struct kube_publisher *p = published(&c, 0, &i);
	await_watches(1);

	for (int64_t generation = 2; generation <= 3; generation++) {
		unsigned lists = so_far().lists;
		pthread_mutex_lock(&srv.lock);
		wipe_store_locked();
		pthread_mutex_unlock(&srv.lock);
		int64_t t0 = now_ms();
		i = wait_report(i + 1, KUBE_PUBLISH_DONE, 0);
		assert_true(now_ms() - t0 < 1500);
		assert_int_equal(reps.all[i].generation, generation);
		check_store(1, 8, -1, generation);
		assert_int_equal(so_far().lists, lists + 1);
	}

	kube_publisher_stop(p);
	kube_client_free(c);
}

/* The server ends each watch at its timeoutSeconds with a bookmark: the
 * next one starts from the bookmark's version, without a list, and still
 * sees a wipe. */
static void test_publisher_watch_again(void **state)
{
	(void)state;
	struct kube_client *c;
	size_t i;
	struct kube_publisher *p = published_with((struct kube_publisher_options){ .watch_timeout_s = 2 }, &c, &i);
	struct so_far before = so_far();
	await_watches(3);
	assert_int_equal(so_far().lists, before.lists);
	assert_string_equal(srv.watch_from[1], before.version); /* written before the third watch */
	assert_string_equal(srv.watch_from[2], before.version);
	pthread_mutex_lock(&srv.lock);
	wipe_store_locked();
	pthread_mutex_unlock(&srv.lock);
	i = wait_report(i + 1, KUBE_PUBLISH_DONE, 0);
	assert_int_equal(reps.all[i].generation, 2);
	check_store(1, 8, -1, 2);

	kube_publisher_stop(p);
	kube_client_free(c);
}

/* How many reports of event there are before index end. */
static size_t reports_of(enum kube_publish_event event, size_t end)
{
	size_t n = 0;
	pthread_mutex_lock(&reps.lock);
	for (size_t k = 0; k < end && k < reps.n; k++)
		n += reps.all[k].event == event;
	pthread_mutex_unlock(&reps.lock);
	return n;
}

/* A watch told its version is gone (410) makes one list, and the next
 * watch starts from that list's version. */
static void test_publisher_watch_gone(void **state)
{
	(void)state;
	struct kube_client *c;
	size_t i;
	struct kube_publisher *p = published_with((struct kube_publisher_options){ .watch_timeout_s = 2 }, &c, &i);
	await_watches(1);
	pthread_mutex_lock(&srv.lock);
	srv.watch_gone = true;
	pthread_mutex_unlock(&srv.lock);
	struct so_far before = so_far();
	/* The watch under way ends (2 s); the next is told 410; the one after
	 * follows the list. */
	await_watches(before.watches + 2);
	assert_int_equal(so_far().lists, before.lists + 1);
	assert_string_equal(srv.watch_from[before.watches + 1], before.version); /* written before it was counted */
	/* A 410 is no failure; the one failure is the streamed list this
	 * server refuses, said once at the start. */
	assert_int_equal(reports_of(KUBE_PUBLISH_WATCH_FAILED, publish_reports_count(&reps)), 1);
	assert_int_equal(srv.streams_refused, 1);

	kube_publisher_stop(p);
	kube_client_free(c);
}

/* Stopping ends a watch at once, however long it was asked to last. */
static void test_publisher_stop_during_watch(void **state)
{
	(void)state;
	struct kube_client *c;
	size_t i;
	struct kube_publisher *p = published(&c, 0, &i);
	await_watches(1);
	int64_t t0 = now_ms();
	kube_publisher_stop(p);
	assert_true(now_ms() - t0 < 1000);
	kube_client_free(c);
}

/* Someone who changes the slices whenever the driver has written them, in
 * the same generation (another controller that disagrees): each change is
 * put back, but such rounds back off from one another, so that the two
 * cost a write per backoff step, not one per round trip. With steps of 100,
 * 200 and 400 ms (each at least half that), six writes take over 600 ms;
 * without the backoff, a few tens. */
static void test_publisher_watch_backs_off(void **state)
{
	(void)state;
	struct kube_client *c;
	size_t i;
	struct kube_publisher *p = published_with(
		(struct kube_publisher_options){ .coalesce_ms = -1, .backoff_initial_ms = 100, .backoff_max_ms = 400 },
		&c, &i);
	await_watches(1);
	pthread_mutex_lock(&srv.lock);
	srv.meddle = true;
	unsigned writes = srv.writes;
	meddle(&srv.slices[0]);
	pthread_mutex_unlock(&srv.lock);
	int64_t t0 = now_ms();
	pthread_mutex_lock(&srv.lock);
	struct timespec deadline = deadline_after_ms(WAIT_MS);
	while (srv.writes < writes + 6)
		if (pthread_cond_timedwait(&srv.cond, &srv.lock, &deadline) == ETIMEDOUT)
			fail_msg("%u writes within %d ms", srv.writes - writes, WAIT_MS);
	srv.meddle = false;
	pthread_mutex_unlock(&srv.lock);
	assert_true(now_ms() - t0 >= 600);

	kube_publisher_stop(p);
	kube_client_free(c);
}

/* A token the server refuses: one report of the 401, and the publication
 * once the kubelet has written a token it takes. */
static void test_publisher_unauthorized(void **state)
{
	(void)state;
	char tdir[64], path[256];
	assert_int_equal(tmpdir_make(tdir, sizeof(tdir), "kube-token"), 0);
	snprintf(path, sizeof(path), "%s/token", tdir);
	write_token(path, "expired");
	set_token("fresh");
	struct kube_client *c = client_for("127.0.0.1", FIXTURES "/ca.crt", path, 2000);
	const struct kube_publisher_options o = {
		.client = c,
		.node_name = "node-a",
		.backoff_initial_ms = 20,
		.backoff_max_ms = 100,
		.report = publish_reports_add,
		.report_ctx = &reps,
	};
	struct kube_publisher *p = NULL;
	assert_int_equal(kube_publisher_start(&o, &p), 0);
	struct npu_snapshot *s = chips(4, -1);
	assert_int_equal(kube_publisher_offer(p, s, NULL), 0);
	npu_snapshot_unref(s);
	size_t i = wait_report(0, KUBE_PUBLISH_FAILED, -EREMOTEIO);
	assert_int_equal(reps.all[i].status, 401);
	write_token(path, "fresh");
	i = wait_report(i + 1, KUBE_PUBLISH_DONE, 0);
	assert_true(reps.all[i].recovered);
	assert_int_equal(reports_of(KUBE_PUBLISH_FAILED, i), 1); /* the 401 once */
	check_store(1, 4, -1, 1);
	kube_publisher_stop(p);
	kube_client_free(c);
	set_token(NULL);
	unlink(path);
	assert_int_equal(rmdir(tdir), 0);
}

/* A publisher of node-a (no resync within a test, short backoffs). */
static struct kube_publisher *publisher_of(struct kube_client **ret_client)
{
	struct kube_client *c = client_for("127.0.0.1", FIXTURES "/ca.crt", NULL, 400);
	const struct kube_publisher_options o = {
		.client = c,
		.node_name = "node-a",
		.backoff_initial_ms = 20,
		.backoff_max_ms = 100,
		.resync_ms = 3600000,
		.coalesce_ms = -1,
		.report = publish_reports_add,
		.report_ctx = &reps,
	};
	struct kube_publisher *p = NULL;
	assert_int_equal(kube_publisher_start(&o, &p), 0);
	*ret_client = c;
	return p;
}

/* 4 chips, npu-<unhealthy> Unhealthy, npu-1 time-sliced by 4. */
static void offer_shared(struct kube_publisher *p, int unhealthy)
{
	struct kube_device_facts facts[4] = { { 0 }, { .shares = 4 } };
	struct npu_snapshot *s = chips(4, unhealthy);
	assert_int_equal(kube_publisher_offer(p, s, facts), 0);
	npu_snapshot_unref(s);
}

/* An API server with the gates of taints, counters and shared capacity off
 * (Kubernetes 1.34 and 1.35 by default) stores slices without them, and
 * says nothing: the probe, one dry run owned by the Node as the slices
 * are, finds out before the first write, which is reported once; the
 * slices then leave the Unhealthy chip out and publish the time-sliced
 * chip plain, and the server drops nothing of them. Before the probe,
 * the Unhealthy chip was published as allocatable. */
static void test_publisher_old_server(void **state)
{
	(void)state;
	pthread_mutex_lock(&srv.lock);
	srv.drops = KUBE_LACKS_ALL;
	pthread_mutex_unlock(&srv.lock);
	struct kube_client *c;
	struct kube_publisher *p = publisher_of(&c);
	offer_shared(p, 2);
	size_t i = wait_report(0, KUBE_PUBLISH_DONE, 0);
	assert_int_equal(reports_of(KUBE_PUBLISH_LACKS, i), 1);
	size_t k = 0;
	while (reps.all[k].event != KUBE_PUBLISH_LACKS)
		k++;
	assert_int_equal(reps.all[k].lacking, KUBE_LACKS_ALL);
	assert_false(reps.all[k].by_write);
	assert_int_equal(reps.all[i].generation, 1);
	assert_int_equal(reps.all[i].devices, 3);
	check_store(1, 3, -1, 1);
	pthread_mutex_lock(&srv.lock);
	assert_int_equal(srv.dry_runs, 1);
	assert_string_equal(srv.dry_run_owner, "node-a-uid");
	assert_int_equal(srv.sent_gated, 0);
	assert_int_equal(srv.writes, 1);
	pthread_mutex_unlock(&srv.lock);

	/* The next fault: no probe, no report, the chip left out. */
	offer_shared(p, 3);
	i = wait_report(i + 1, KUBE_PUBLISH_DONE, 0);
	assert_int_equal(reps.all[i].generation, 2);
	check_store(1, 3, -1, 2);
	assert_int_equal(reports_of(KUBE_PUBLISH_LACKS, i), 1);
	pthread_mutex_lock(&srv.lock);
	assert_int_equal(srv.dry_runs, 1);
	assert_int_equal(srv.sent_gated, 0);
	pthread_mutex_unlock(&srv.lock);
	kube_publisher_stop(p);
	kube_client_free(c);
}

/* A server that refuses the probe (here a 403 of dry runs alone): the
 * slices are written meanwhile without anything a server could drop, the
 * refusal is reported once, saying so, and the probe is tried again with
 * the backoff; once it is answered, everything is published. */
static void test_publisher_probe_refused(void **state)
{
	(void)state;
	pthread_mutex_lock(&srv.lock);
	srv.refuse_dry_runs = true;
	pthread_mutex_unlock(&srv.lock);
	struct kube_client *c;
	struct kube_publisher *p = publisher_of(&c);
	offer_shared(p, 2);
	size_t i = wait_report(0, KUBE_PUBLISH_FAILED, -EREMOTEIO);
	assert_int_equal(reps.all[i].status, 403);
	assert_non_null(strstr(reps.all[i].cause, "(a dry run): HTTP 403: no dry runs here; until it answers"));
	check_store(1, 3, -1, 1);
	/* Retried, reported once. */
	pthread_mutex_lock(&srv.lock);
	struct timespec deadline = deadline_after_ms(WAIT_MS);
	while (srv.requests < 12)
		if (pthread_cond_timedwait(&srv.cond, &srv.lock, &deadline) == ETIMEDOUT)
			fail_msg("no retries within %d ms", WAIT_MS);
	assert_int_equal(srv.sent_gated, 0);
	srv.refuse_dry_runs = false;
	pthread_mutex_unlock(&srv.lock);
	i = wait_report(i + 1, KUBE_PUBLISH_DONE, 0);
	assert_true(reps.all[i].recovered);
	assert_int_equal(reports_of(KUBE_PUBLISH_FAILED, i), 1);
	assert_int_equal(reports_of(KUBE_PUBLISH_LACKS, i), 0);
	assert_int_equal(reps.all[i].devices, 4);
	check_store(1, 4, 2, 2);
	pthread_mutex_lock(&srv.lock);
	assert_int_equal(srv.sent_gated, KUBE_LACKS_TAINTS | KUBE_LACKS_SHARING);
	assert_int_equal(srv.dry_runs, 1);
	pthread_mutex_unlock(&srv.lock);
	kube_publisher_stop(p);
	kube_client_free(c);
}

/* The probe is asked only when the slices would carry a gated field: a
 * node of healthy plain chips starts without it (every request at start is
 * paid by every node of a fleet), and its first fault asks. */
static void test_publisher_probes_when_needed(void **state)
{
	(void)state;
	struct kube_client *c;
	size_t i;
	struct kube_publisher *p = published(&c, 0, &i);
	pthread_mutex_lock(&srv.lock);
	assert_int_equal(srv.dry_runs, 0);
	srv.drops = KUBE_LACKS_TAINTS;
	pthread_mutex_unlock(&srv.lock);
	struct npu_snapshot *s = chips(8, 3);
	assert_int_equal(kube_publisher_offer(p, s, NULL), 0);
	npu_snapshot_unref(s);
	i = wait_report(i + 1, KUBE_PUBLISH_DONE, 0);
	assert_int_equal(reports_of(KUBE_PUBLISH_LACKS, i), 1);
	assert_int_equal(reps.all[i - 1].lacking, KUBE_LACKS_TAINTS);
	assert_false(reps.all[i - 1].by_write);
	assert_int_equal(reps.all[i].devices, 7);
	check_store(1, 7, -1, 2);
	pthread_mutex_lock(&srv.lock);
	assert_int_equal(srv.dry_runs, 1);
	assert_int_equal(srv.sent_gated, 0);
	pthread_mutex_unlock(&srv.lock);
	kube_publisher_stop(p);
	kube_client_free(c);
}

/* The server keeps taints at the probe, and drops them later (a control
 * plane rolled back, a gate turned off): the answer to the write says so,
 * which is reported, and the slices are written again at once without
 * the Unhealthy chip, so that it does not stay published as allocatable. */
static void test_publisher_server_drops_later(void **state)
{
	(void)state;
	struct kube_client *c;
	size_t i;
	struct kube_publisher *p = published(&c, 0, &i);
	/* A first fault: the probe finds taints kept, the chip is tainted. */
	struct npu_snapshot *s = chips(8, 3);
	assert_int_equal(kube_publisher_offer(p, s, NULL), 0);
	npu_snapshot_unref(s);
	i = wait_report(i + 1, KUBE_PUBLISH_DONE, 0);
	assert_int_equal(reps.all[i].devices, 8);
	check_store(1, 8, 3, 2);
	assert_int_equal(reports_of(KUBE_PUBLISH_LACKS, i), 0);

	pthread_mutex_lock(&srv.lock);
	assert_int_equal(srv.dry_runs, 1);
	srv.drops = KUBE_LACKS_TAINTS;
	unsigned writes = srv.writes;
	pthread_mutex_unlock(&srv.lock);
	s = chips(8, 5);
	assert_int_equal(kube_publisher_offer(p, s, NULL), 0);
	npu_snapshot_unref(s);
	i = wait_report(i + 1, KUBE_PUBLISH_DONE, 0);
	assert_int_equal(reports_of(KUBE_PUBLISH_LACKS, i), 1);
	assert_int_equal(reps.all[i - 1].event, KUBE_PUBLISH_LACKS);
	assert_int_equal(reps.all[i - 1].lacking, KUBE_LACKS_TAINTS);
	assert_true(reps.all[i - 1].by_write);
	assert_int_equal(reps.all[i].generation, 4);
	assert_int_equal(reps.all[i].devices, 7);
	check_store(1, 7, -1, 4);
	pthread_mutex_lock(&srv.lock);
	assert_int_equal(srv.writes, writes + 2);
	assert_int_equal(srv.dry_runs, 1);
	pthread_mutex_unlock(&srv.lock);

	/* Found once: the next fault leaves its chip out at once. */
	s = chips(8, 6);
	assert_int_equal(kube_publisher_offer(p, s, NULL), 0);
	npu_snapshot_unref(s);
	i = wait_report(i + 1, KUBE_PUBLISH_DONE, 0);
	assert_int_equal(reps.all[i].generation, 5);
	check_store(1, 7, -1, 5);
	assert_int_equal(reports_of(KUBE_PUBLISH_LACKS, i), 1);
	kube_publisher_stop(p);
	kube_client_free(c);
}

/* --- the same through libascend-kube.so -------------------------------------------- */

/* The daemon's way in: the module loaded by daemon/kube_module.h makes a
 * request and publishes, with its own (hidden) copies of this code, libcurl
 * being the one this test also links. */
static void test_module(void **state)
{
	(void)state;
	const struct kube_module_api *api = NULL;
	char why[512];
	if (kube_module_load(KUBE_MODULE_LIB, &api, why, sizeof(why)) < 0)
		fail_msg("%s", why);
	assert_int_equal(api->version, KUBE_MODULE_API_VERSION);
	/* Its functions are its own, not this test's static ones. */
	assert_ptr_not_equal(api->client_new, kube_client_new);

	struct kube_config conf = { 0 };
	char url[64];
	snprintf(url, sizeof(url), "https://localhost:%u", srv.port);
	conf.server = strdup(url);
	conf.ca.data = read_all(FIXTURES "/ca.crt");
	conf.ca.len = strlen(conf.ca.data);
	struct kube_client *c = NULL;
	if (api->client_new(&conf, 5000, &c, why, sizeof(why)) < 0)
		fail_msg("%s", why);
	assert_string_equal(api->client_config(c)->server, url);
	struct kube_response resp = { 0 };
	assert_int_equal(api->client_request(c, "GET", "/api/v1/nodes/node-a", NULL, 0, NULL, &resp), 0);
	assert_int_equal(resp.status, 200);
	struct kube_meta meta;
	assert_int_equal(api->parse_meta(resp.body, resp.len, &meta, why, sizeof(why)), 0);
	assert_string_equal(meta.uid, "node-a-uid");
	api->response_free(&resp);
	assert_int_equal(api->client_request(c, "GET", "/api/v1/nodes/node-b", NULL, 0, NULL, &resp), 0);
	char msg[64];
	api->status_message(resp.body, resp.len, msg, sizeof(msg));
	assert_string_equal(msg, "not found");
	api->response_free(&resp);

	/* A snapshot of this side's making, published by the module's copy. */
	const struct kube_publisher_options o = {
		.client = c,
		.node_name = "node-a",
		.backoff_initial_ms = 20,
		.backoff_max_ms = 100,
		.report = publish_reports_add,
		.report_ctx = &reps,
	};
	struct kube_publisher *p = NULL;
	assert_int_equal(api->publisher_start(&o, &p), 0);
	struct npu_snapshot *s = chips(4, 2);
	assert_int_equal(api->publisher_offer(p, s, NULL), 0);
	npu_snapshot_unref(s);
	size_t i = wait_report(0, KUBE_PUBLISH_DONE, 0);
	assert_int_equal(reps.all[i].devices, 4);
	check_store(1, 4, 2, 1);
	api->publisher_stop(p);
	api->client_free(c);

	/* Configuration errors come back with their cause. */
	assert_int_equal(api->config_from_kubeconfig("/nonexistent/kubeconfig", NULL, &conf, why, sizeof(why)),
			 -ENOENT);
	assert_non_null(strstr(why, "/nonexistent/kubeconfig"));
}

/* --- the daemon's claim reader (daemon/dra_kube.c) through the module ------------ */

/* A kubeconfig for server, with the fixtures' CA; its path in out. */
static void write_kubeconfig(const char *server, char *out, size_t size)
{
	snprintf(out, size, "/tmp/test-kube-api-kubeconfig-%d", (int)getpid());
	FILE *f = fopen(out, "w");
	assert_non_null(f);
	fprintf(f,
		"apiVersion: v1\nkind: Config\ncurrent-context: c\n"
		"clusters: [{name: k, cluster: {server: '%s', certificate-authority: '" FIXTURES "/ca.crt'}}]\n"
		"users: [{name: u, user: {token: t}}]\ncontexts: [{name: c, context: {cluster: k, user: u}}]\n",
		server);
	assert_int_equal(fclose(f), 0);
}

/* reader.get of ns/name: its return, and why (or the body) in out. */
static int read_claim(struct dra_claim_reader reader, const char *ns, const char *name, char *out, size_t size)
{
	char *json = NULL;
	size_t len = 0;
	const struct dra_read_limits limits = { .deadline_ms = 0, .abort_fd = -1 };
	int r = reader.get(reader.ctx, ns, name, &limits, &json, &len, out, size);
	if (r == 0)
		snprintf(out, size, "%.*s", (int)len, json);
	free(json);
	return r;
}

/* Each answer of the server becomes a cause the DRA driver can put after
 * the claim's name; the kubelet's names never reach the URL unchecked. */
static void test_claim_reader(void **state)
{
	(void)state;
	setenv(KUBE_MODULE_ENV, KUBE_MODULE_LIB, 1);
	static struct config conf; /* large */
	char url[64], why[1024];
	snprintf(url, sizeof(url), "https://localhost:%u", srv.port);
	write_kubeconfig(url, conf.kubeconfig, sizeof(conf.kubeconfig));
	struct dra_kube k;
	enum dra_kube_failure failure;
	if (dra_kube_open(&conf, &k, &failure, why, sizeof(why)) < 0)
		fail_msg("%s", why);
	struct dra_claim_reader reader = dra_kube_reader(&k);

	assert_int_equal(read_claim(reader, "default", "c1", why, sizeof(why)), 0);
	assert_non_null(strstr(why, "\"uid\":\"u1\""));
	assert_int_equal(read_claim(reader, "default", "c2", why, sizeof(why)), -ENOENT);
	assert_string_equal(why, "no such claim (HTTP 404): not found");
	assert_int_equal(read_claim(reader, "secret", "c1", why, sizeof(why)), -EACCES);
	assert_string_equal(why, "not allowed to read it (HTTP 403): resourceclaims is forbidden");
	assert_int_equal(read_claim(reader, "default", "../../nodes/x", why, sizeof(why)), -EINVAL);
	pthread_mutex_lock(&srv.lock);
	unsigned requests = srv.requests;
	pthread_mutex_unlock(&srv.lock);
	assert_int_equal(read_claim(reader, "default", "a?b", why, sizeof(why)), -EINVAL);
	pthread_mutex_lock(&srv.lock);
	assert_int_equal(srv.requests, requests);
	pthread_mutex_unlock(&srv.lock);
	set_fault(FAULT_5XX);
	assert_int_equal(read_claim(reader, "default", "c1", why, sizeof(why)), -EREMOTEIO);
	assert_string_equal(why, "the API server refused (HTTP 503): etcd is unhappy");
	set_fault(FAULT_NONE);
	dra_kube_close(&k);
	unlink(conf.kubeconfig);

	/* Nobody there: the connection's cause. */
	write_kubeconfig("https://127.0.0.1:1", conf.kubeconfig, sizeof(conf.kubeconfig));
	if (dra_kube_open(&conf, &k, &failure, why, sizeof(why)) < 0)
		fail_msg("%s", why);
	reader = dra_kube_reader(&k);
	assert_int_equal(read_claim(reader, "default", "c1", why, sizeof(why)), -ECONNREFUSED);
	assert_non_null(strstr(why, "API server: "));
	assert_non_null(strstr(why, "127.0.0.1"));
	dra_kube_close(&k);
	unlink(conf.kubeconfig);

	/* A kubeconfig that says something wrong is the configuration's fault. */
	write_kubeconfig("http://plain", conf.kubeconfig, sizeof(conf.kubeconfig));
	assert_true(dra_kube_open(&conf, &k, &failure, why, sizeof(why)) < 0);
	assert_int_equal(failure, DRA_KUBE_CONFIG);
	unlink(conf.kubeconfig);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_request, setup, teardown),
		cmocka_unit_test_setup_teardown(test_faults, setup, teardown),
		cmocka_unit_test_setup_teardown(test_retry_after_and_abort, setup, teardown),
		cmocka_unit_test_setup_teardown(test_watch, setup, teardown),
		cmocka_unit_test_setup_teardown(test_token_rotation, setup, teardown),
		cmocka_unit_test_setup_teardown(test_ca_rotation, setup, teardown),
		cmocka_unit_test_setup_teardown(test_publisher, setup, teardown),
		cmocka_unit_test_setup_teardown(test_publisher_watch_puts_back, setup, teardown),
		cmocka_unit_test_setup_teardown(test_publisher_registration_is_free, setup, teardown),
		cmocka_unit_test_setup_teardown(test_publisher_watch_again, setup, teardown),
		cmocka_unit_test_setup_teardown(test_publisher_watch_gone, setup, teardown),
		cmocka_unit_test_setup_teardown(test_publisher_stop_during_watch, setup, teardown),
		cmocka_unit_test_setup_teardown(test_publisher_watch_backs_off, setup, teardown),
		cmocka_unit_test_setup_teardown(test_publisher_coalesces_a_burst, setup, teardown),
		cmocka_unit_test_setup_teardown(test_publisher_backoff_jitter, setup, teardown),
		cmocka_unit_test_setup_teardown(test_publisher_unauthorized, setup, teardown),
		cmocka_unit_test_setup_teardown(test_publisher_old_server, setup, teardown),
		cmocka_unit_test_setup_teardown(test_publisher_probe_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_publisher_probes_when_needed, setup, teardown),
		cmocka_unit_test_setup_teardown(test_publisher_server_drops_later, setup, teardown),
		cmocka_unit_test_setup_teardown(test_module, setup, teardown),
		cmocka_unit_test_setup_teardown(test_claim_reader, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
