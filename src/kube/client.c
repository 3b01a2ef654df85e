/* SPDX-License-Identifier: Apache-2.0 */
/* Requests to the API server over libcurl (see client.h). */
#include "kube/client.h"

#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <curl/curl.h>

#include "base/file.h"
#include "base/parse.h"

struct kube_client {
	struct kube_config config;
	long timeout_ms;
	CURLSH *share;
	/* One per libcurl lock kind: the share object's locks. */
	pthread_mutex_t share_locks[CURL_LOCK_DATA_LAST];
	/* The bearer token, "Authorization: Bearer ..." ready, and the file's
	 * identity when it came from one; under the same lock, the identity of
	 * the CA file config.ca was last read from. */
	pthread_mutex_t token_lock;
	char *auth_header;
	struct stat token_stat;
	bool token_read;
	struct stat ca_stat;
	bool ca_stat_known;
	/* kube_client_abort: the flag, and an eventfd every wait watches. */
	atomic_bool aborted;
	int abort_fd;
};

static pthread_once_t curl_once = PTHREAD_ONCE_INIT;
static CURLcode curl_init_result;

/* curl_global_init is not thread-safe in libcurl 7.88, and the client may be
 * made from any thread: once per process. */
static void curl_init_once(void)
{
	curl_init_result = curl_global_init(CURL_GLOBAL_DEFAULT);
}

static void share_lock(CURL *handle, curl_lock_data data, curl_lock_access access, void *userptr)
{
	(void)handle;
	(void)access;
	struct kube_client *c = userptr;
	if ((unsigned)data < CURL_LOCK_DATA_LAST)
		pthread_mutex_lock(&c->share_locks[data]);
}

static void share_unlock(CURL *handle, curl_lock_data data, void *userptr)
{
	(void)handle;
	struct kube_client *c = userptr;
	if ((unsigned)data < CURL_LOCK_DATA_LAST)
		pthread_mutex_unlock(&c->share_locks[data]);
}

const struct kube_config *kube_client_config(const struct kube_client *client)
{
	return &client->config;
}

static int set_auth_header(struct kube_client *c, const char *token, size_t len)
{
	static const char prefix[] = "Authorization: Bearer ";
	char *h = malloc(sizeof(prefix) + len);
	if (!h)
		return -ENOMEM;
	memcpy(h, prefix, sizeof(prefix) - 1);
	memcpy(h + sizeof(prefix) - 1, token, len);
	h[sizeof(prefix) - 1 + len] = '\0';
	free(c->auth_header);
	c->auth_header = h;
	return 0;
}

static bool same_file(const struct stat *a, const struct stat *b)
{
	return a->st_ino == b->st_ino && a->st_dev == b->st_dev && a->st_size == b->st_size &&
	       a->st_mtim.tv_sec == b->st_mtim.tv_sec && a->st_mtim.tv_nsec == b->st_mtim.tv_nsec;
}

/* Reads the token file again when it changed (or always, with force).
 * Called with token_lock held. The kubelet replaces the projected token by
 * swapping a symlink, so stat (following it) sees a new inode. */
static int refresh_token(struct kube_client *c, bool force, char *cause, size_t cause_size)
{
	if (!c->config.token_file)
		return 0;
	struct stat st;
	if (stat(c->config.token_file, &st) < 0) {
		int r = -errno;
		snprintf(cause, cause_size, "token file %s: %s", c->config.token_file, strerror(-r));
		return r == -ENOMEM ? r : -EACCES;
	}
	if (!force && c->token_read && same_file(&st, &c->token_stat))
		return 0;
	char *buf = NULL, why[128];
	size_t len = 0;
	int r = file_read_bounded(c->config.token_file, 64 * 1024, &buf, &len, why, sizeof(why));
	if (r < 0) {
		snprintf(cause, cause_size, "token file %s: %s", c->config.token_file, why);
		return r == -ENOMEM ? r : -EACCES;
	}
	if (kube_token_check(buf, &len, why, sizeof(why)) < 0) {
		free(buf);
		snprintf(cause, cause_size, "token file %s: %s", c->config.token_file, why);
		return -EACCES;
	}
	r = set_auth_header(c, buf, len);
	free(buf);
	if (r < 0) {
		snprintf(cause, cause_size, "out of memory");
		return r;
	}
	c->token_stat = st;
	c->token_read = true;
	return 0;
}

/* Reads the CA file again when it changed; called with token_lock held.
 * A file that cannot be read now (mid-update, or gone) keeps the CA last
 * read: a request that then fails verification says so itself. */
static void refresh_ca(struct kube_client *c)
{
	struct stat st;
	if (!c->config.ca_file || stat(c->config.ca_file, &st) < 0)
		return;
	if (c->ca_stat_known && same_file(&st, &c->ca_stat))
		return;
	char *buf = NULL, why[128];
	size_t len = 0;
	if (file_read_bounded(c->config.ca_file, KUBE_CA_MAX, &buf, &len, why, sizeof(why)) < 0 || len == 0) {
		free(buf);
		return;
	}
	free(c->config.ca.data);
	c->config.ca = (struct kube_blob){ .data = buf, .len = len };
	c->ca_stat = st;
	c->ca_stat_known = true;
}

int kube_client_new(struct kube_config *config, int timeout_ms, struct kube_client **ret_client, char *why,
		    size_t why_size)
{
	if (!config->server || strncmp(config->server, "https://", 8) != 0) {
		snprintf(why, why_size, "the API server's address must be an https:// URL");
		return -EINVAL;
	}
	pthread_once(&curl_once, curl_init_once);
	if (curl_init_result != CURLE_OK) {
		snprintf(why, why_size, "libcurl: %s", curl_easy_strerror(curl_init_result));
		return -ENOMEM;
	}
	struct kube_client *c = calloc(1, sizeof(*c));
	if (!c) {
		snprintf(why, why_size, "out of memory");
		return -ENOMEM;
	}
	for (size_t i = 0; i < CURL_LOCK_DATA_LAST; i++)
		pthread_mutex_init(&c->share_locks[i], NULL);
	pthread_mutex_init(&c->token_lock, NULL);
	c->timeout_ms = timeout_ms > 0 ? timeout_ms : KUBE_TIMEOUT_MS_DEFAULT;
	c->abort_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (c->abort_fd < 0) {
		snprintf(why, why_size, "cannot make an eventfd: %s", strerror(errno));
		goto fail;
	}
	/* TLS sessions are not shared: libcurl before 8.10 hands one
	 * SSL_SESSION to handshakes on several threads at once, which OpenSSL
	 * mutates (a data race, github.com/curl/curl/pull/14751), and claims
	 * are read on several threads. The shared connections make a handshake
	 * rare anyway. */
	c->share = curl_share_init();
	if (!c->share || curl_share_setopt(c->share, CURLSHOPT_LOCKFUNC, share_lock) != CURLSHE_OK ||
	    curl_share_setopt(c->share, CURLSHOPT_UNLOCKFUNC, share_unlock) != CURLSHE_OK ||
	    curl_share_setopt(c->share, CURLSHOPT_USERDATA, c) != CURLSHE_OK ||
	    curl_share_setopt(c->share, CURLSHOPT_SHARE, CURL_LOCK_DATA_DNS) != CURLSHE_OK ||
	    curl_share_setopt(c->share, CURLSHOPT_SHARE, CURL_LOCK_DATA_CONNECT) != CURLSHE_OK) {
		snprintf(why, why_size, "libcurl: cannot make a share object");
		goto fail;
	}
	if (config->token.data && set_auth_header(c, config->token.data, config->token.len) < 0) {
		snprintf(why, why_size, "out of memory");
		goto fail;
	}
	c->config = *config;
	*config = (struct kube_config){ 0 };
	*ret_client = c;
	return 0;
fail:
	if (c->share)
		curl_share_cleanup(c->share);
	if (c->abort_fd >= 0)
		close(c->abort_fd);
	free(c->auth_header);
	free(c);
	return -ENOMEM;
}

void kube_client_free(struct kube_client *client)
{
	if (!client)
		return;
	curl_share_cleanup(client->share);
	close(client->abort_fd);
	for (size_t i = 0; i < CURL_LOCK_DATA_LAST; i++)
		pthread_mutex_destroy(&client->share_locks[i]);
	pthread_mutex_destroy(&client->token_lock);
	free(client->auth_header);
	kube_config_free(&client->config);
	free(client);
}

void kube_response_free(struct kube_response *response)
{
	free(response->body);
	response->body = NULL;
	response->len = 0;
}

/* A watch's body as it comes (kube_client_watch): events for its reader. */
struct stream {
	struct kube_watch_lines lines;
	kube_watch_fn fn;
	void *ctx;
	/* What ended it from inside the transfer: the splitter's failure, an
	 * ERROR event (code: its Status's), or the reader's own errno. */
	int error;
	long code;
	char why[KUBE_CAUSE_MAX];
};

struct sink {
	char *buf;
	size_t len, cap;
	bool too_big, no_memory;
	bool until_line, got_line; /* kube_request_limits.until_first_line */
	/* A watch: a 2xx body goes to the stream, any other is kept whole as
	 * a request's (its Status says why). */
	struct stream *stream;
	CURL *easy;
	bool status_read, streaming;
};

/* An ERROR event ends the watch with its Status; the rest goes to the
 * watch's reader. */
static int stream_event(void *ctx, const struct kube_watch_event *ev)
{
	struct stream *st = ctx;
	if (ev->type != KUBE_WATCH_ERROR)
		return st->fn(st->ctx, ev);
	st->code = ev->code;
	snprintf(st->why, sizeof(st->why), "the watch ended with an error (code %ld)%s%s", ev->code,
		 ev->message[0] ? ": " : "", ev->message);
	return ev->code == 410 ? -ESTALE : -EREMOTEIO;
}

/* A watch's chunk: 0 when the stream took it, 1 when it is the body of a
 * refusal (kept as a request's), -1 to end the transfer (st->error says). */
static int on_stream(struct sink *s, const char *data, size_t n)
{
	if (!s->status_read) {
		long status = 0;
		curl_easy_getinfo(s->easy, CURLINFO_RESPONSE_CODE, &status);
		s->streaming = kube_status_ok(status);
		s->status_read = true;
	}
	if (!s->streaming)
		return 1; /* kept as a request's body */
	struct stream *st = s->stream;
	int r = kube_watch_feed(&st->lines, data, n, stream_event, st, st->why, sizeof(st->why));
	if (r < 0) {
		st->error = r;
		return -1;
	}
	return 0;
}

static size_t on_data(char *data, size_t size, size_t nmemb, void *userdata)
{
	struct sink *s = userdata;
	size_t n = size * nmemb;
	if (s->stream) {
		int r = on_stream(s, data, n);
		if (r <= 0)
			return r == 0 ? n : 0;
	}
	if (n > KUBE_RESPONSE_MAX - s->len) {
		s->too_big = true;
		return 0; /* libcurl ends the transfer with CURLE_WRITE_ERROR */
	}
	if (s->len + n + 1 > s->cap) {
		size_t cap = s->cap ? s->cap : 16384;
		while (cap < s->len + n + 1)
			cap *= 2;
		char *b = realloc(s->buf, cap);
		if (!b) {
			s->no_memory = true;
			return 0;
		}
		s->buf = b;
		s->cap = cap;
	}
	memcpy(s->buf + s->len, data, n);
	s->len += n;
	s->buf[s->len] = '\0';
	if (s->until_line && memchr(data, '\n', n)) {
		/* Whatever follows the last newline is an event cut short. */
		s->len = (size_t)((char *)memrchr(s->buf, '\n', s->len) - s->buf) + 1;
		s->buf[s->len] = '\0';
		s->got_line = true;
		return 0; /* ends the transfer: transfer() takes it as done */
	}
	return n;
}

static bool method_known(const char *m)
{
	static const char *const known[] = { "GET", "POST", "PUT", "PATCH", "APPLY", "DELETE" };
	for (size_t i = 0; i < sizeof(known) / sizeof(known[0]); i++)
		if (strcmp(m, known[i]) == 0)
			return true;
	return false;
}

/* A path below the server: "/..." without whitespace or control characters,
 * so that it cannot smuggle another request line. */
static bool path_ok(const char *p)
{
	if (p[0] != '/' || strlen(p) > 2048)
		return false;
	for (; *p; p++)
		if ((unsigned char)*p <= ' ' || *p == 0x7f)
			return false;
	return true;
}

static int map_curl_error(CURLcode code, const struct sink *s, long timeout_ms, const char *server, char *cause,
			  size_t cause_size, const char *detail)
{
	if (s->stream && s->stream->error) {
		snprintf(cause, cause_size, "%s", s->stream->why);
		return s->stream->error;
	}
	if (s->too_big) {
		snprintf(cause, cause_size, "response above %u bytes", KUBE_RESPONSE_MAX);
		return -EFBIG;
	}
	if (s->no_memory || code == CURLE_OUT_OF_MEMORY) {
		snprintf(cause, cause_size, "out of memory");
		return -ENOMEM;
	}
	const char *what = detail && *detail ? detail : curl_easy_strerror(code);
	switch (code) {
	case CURLE_OPERATION_TIMEDOUT:
		snprintf(cause, cause_size, "no answer from %s within %ld ms", server, timeout_ms);
		return -ETIMEDOUT;
	case CURLE_COULDNT_RESOLVE_HOST:
	case CURLE_COULDNT_CONNECT:
		snprintf(cause, cause_size, "cannot connect to %s: %s", server, what);
		return -ECONNREFUSED;
	case CURLE_SSL_CONNECT_ERROR:
	case CURLE_PEER_FAILED_VERIFICATION:
	case CURLE_SSL_CERTPROBLEM:
	case CURLE_SSL_CIPHER:
	case CURLE_SSL_CACERT_BADFILE:
	case CURLE_SSL_ISSUER_ERROR:
	case CURLE_WEIRD_SERVER_REPLY:
	case CURLE_UNSUPPORTED_PROTOCOL:
		snprintf(cause, cause_size, "%s: %s", server, what);
		return -EPROTO;
	default:
		snprintf(cause, cause_size, "%s: %s", server, what);
		return -EIO;
	}
}

static struct curl_blob blob_of(const struct kube_blob *b)
{
	return (struct curl_blob){ .data = b->data, .len = b->len, .flags = CURL_BLOB_COPY };
}

/* What ends a request early: its deadline, and the fds that say to stop
 * (the client's abort eventfd first, then the request's abort fd if any). */
struct stops {
	int64_t deadline_ms;
	long budget_ms; /* from the request's start to its deadline, for the cause */
	struct curl_waitfd fds[2];
	unsigned n_fds;
};

/* Whether one of the fds that stop the request turned readable. */
static bool stopped(const struct stops *st)
{
	for (unsigned i = 0; i < st->n_fds; i++)
		if (st->fds[i].revents)
			return true;
	return false;
}

/* The request ends: the client's abort (fds[0]) or its caller's. */
static int cancelled(bool client_aborted, char *cause, size_t cause_size)
{
	snprintf(cause, cause_size, "%s", client_aborted ? "the client is stopping" : "the caller gave up on it");
	return -ECANCELED;
}

/* Runs the transfer in a multi handle of its own, watching the stop fds
 * beside its sockets. The transfer's own timeout ends it at the deadline;
 * libcurl's poll returns then by itself. */
static int perform(CURL *e, struct stops *st, CURLcode *ret_code, char *cause, size_t cause_size)
{
	CURLM *m = curl_multi_init();
	if (!m || curl_multi_add_handle(m, e) != CURLM_OK) {
		curl_multi_cleanup(m);
		snprintf(cause, cause_size, "out of memory");
		return -ENOMEM;
	}
	int running = 1, r = 0;
	CURLMcode mc = CURLM_OK;
	for (unsigned i = 0; i < st->n_fds; i++)
		st->fds[i].revents = 0;
	while (mc == CURLM_OK && !stopped(st)) {
		mc = curl_multi_perform(m, &running);
		if (mc != CURLM_OK || !running)
			break;
		int64_t left = st->deadline_ms - now_ms();
		mc = curl_multi_poll(m, st->fds, st->n_fds, left < 1 ? 1 : left > INT_MAX ? INT_MAX : (int)left, NULL);
	}
	if (stopped(st)) {
		r = cancelled(st->fds[0].revents != 0, cause, cause_size);
	} else if (mc != CURLM_OK) {
		snprintf(cause, cause_size, "libcurl: %s", curl_multi_strerror(mc));
		r = mc == CURLM_OUT_OF_MEMORY ? -ENOMEM : -EIO;
	} else {
		*ret_code = CURLE_OK;
		int queued;
		for (CURLMsg *msg; (msg = curl_multi_info_read(m, &queued));)
			if (msg->msg == CURLMSG_DONE)
				*ret_code = msg->data.result;
	}
	curl_multi_remove_handle(m, e);
	curl_multi_cleanup(m);
	return r;
}

/* One transfer; *ret_status set when it completed, and *ret_retry_after_s
 * to its Retry-After (0: none). */
static int transfer(struct kube_client *c, const char *method, const char *url, const char *body, size_t body_len,
		    const char *auth, const struct kube_blob *ca_now, struct stops *st, struct sink *s,
		    long *ret_status, long *ret_retry_after_s, char *cause, size_t cause_size)
{
	int64_t left = st->deadline_ms - now_ms();
	if (left <= 0) {
		snprintf(cause, cause_size, "no answer from %s within %ld ms", c->config.server, st->budget_ms);
		return -ETIMEDOUT;
	}
	long timeout_ms = left > LONG_MAX ? LONG_MAX : (long)left;
	struct curl_slist *headers = NULL, *h;
	char errbuf[CURL_ERROR_SIZE] = "";
	int r;
	CURL *e = curl_easy_init();
	if (!e) {
		snprintf(cause, cause_size, "out of memory");
		return -ENOMEM;
	}
	s->easy = e;
	static const char *const fixed[] = { "Accept: application/json", "User-Agent: ascend-k8s/" ASCEND_VERSION };
	for (size_t i = 0; i < sizeof(fixed) / sizeof(fixed[0]); i++) {
		if (!(h = curl_slist_append(headers, fixed[i])))
			goto nomem;
		headers = h;
	}
	if (body) {
		h = curl_slist_append(headers, strcmp(method, "PATCH") == 0   ? "Content-Type: application/merge-patch+json"
					       : strcmp(method, "APPLY") == 0 ? "Content-Type: application/apply-patch+yaml"
									      : "Content-Type: application/json");
		if (!h)
			goto nomem;
		headers = h;
	}
	if (auth) {
		if (!(h = curl_slist_append(headers, auth)))
			goto nomem;
		headers = h;
	}
	struct curl_blob ca = blob_of(ca_now), cert = blob_of(&c->config.cert), key = blob_of(&c->config.key);
	CURLcode code = CURLE_OK;
#define SET(opt, val)                                  \
	do {                                           \
		if (code == CURLE_OK)                  \
			code = curl_easy_setopt(e, opt, val); \
	} while (0)
	SET(CURLOPT_URL, url);
	SET(CURLOPT_SHARE, c->share);
	SET(CURLOPT_CUSTOMREQUEST, strcmp(method, "APPLY") == 0 ? "PATCH" : method);
	SET(CURLOPT_HTTPHEADER, headers);
	SET(CURLOPT_WRITEFUNCTION, on_data);
	SET(CURLOPT_WRITEDATA, s);
	SET(CURLOPT_ERRORBUFFER, errbuf);
	SET(CURLOPT_TIMEOUT_MS, timeout_ms);
	/* A watch lasts minutes; its connection is made within a request's time. */
	SET(CURLOPT_CONNECTTIMEOUT_MS, s->stream && c->timeout_ms < timeout_ms ? c->timeout_ms : timeout_ms);
	SET(CURLOPT_NOSIGNAL, 1L);
	SET(CURLOPT_PROTOCOLS_STR, "https");
	SET(CURLOPT_FOLLOWLOCATION, 0L);
	SET(CURLOPT_SSL_VERIFYPEER, 1L);
	SET(CURLOPT_SSL_VERIFYHOST, 2L);
	/* A watch's events are bounded each (KUBE_WATCH_EVENT_MAX), not in sum. */
	SET(CURLOPT_MAXFILESIZE_LARGE, (curl_off_t)(s->stream ? 0 : KUBE_RESPONSE_MAX));
	if (ca_now->data) {
		/* The configured CA alone, as client-go trusts it: a CA blob
		 * replaces libcurl's default bundle file but not its default
		 * CA directory (/etc/ssl/certs on Debian), which OpenSSL would
		 * still search for an issuer the blob lacks, so a certificate
		 * from any CA of the host would pass. */
		SET(CURLOPT_CAINFO_BLOB, &ca);
		SET(CURLOPT_CAPATH, (const char *)NULL);
	}
	if (c->config.cert.data) {
		SET(CURLOPT_SSLCERT_BLOB, &cert);
		SET(CURLOPT_SSLCERTTYPE, "PEM");
		SET(CURLOPT_SSLKEY_BLOB, &key);
		SET(CURLOPT_SSLKEYTYPE, "PEM");
	}
	if (body) {
		SET(CURLOPT_POSTFIELDS, body);
		SET(CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)body_len);
	} else if (strcmp(method, "GET") == 0) {
		SET(CURLOPT_HTTPGET, 1L);
		SET(CURLOPT_CUSTOMREQUEST, (const char *)NULL);
	}
#undef SET
	if (code != CURLE_OK) {
		r = code == CURLE_OUT_OF_MEMORY ? -ENOMEM : -EIO;
		snprintf(cause, cause_size, "libcurl: %s", curl_easy_strerror(code));
		goto out;
	}
	if ((r = perform(e, st, &code, cause, cause_size)) < 0)
		goto out;
	if (code == CURLE_FILESIZE_EXCEEDED)
		s->too_big = true;
	if (code == CURLE_WRITE_ERROR && s->got_line)
		code = CURLE_OK;
	if (code != CURLE_OK) {
		r = map_curl_error(code, s, st->budget_ms, c->config.server, cause, cause_size, errbuf);
		goto out;
	}
	long status = 0;
	curl_off_t retry_after = 0;
	curl_easy_getinfo(e, CURLINFO_RESPONSE_CODE, &status);
	if (curl_easy_getinfo(e, CURLINFO_RETRY_AFTER, &retry_after) != CURLE_OK || retry_after < 0)
		retry_after = 0;
	if (status < 100 || status > 599) {
		snprintf(cause, cause_size, "%s: not an HTTP answer", c->config.server);
		r = -EPROTO;
		goto out;
	}
	*ret_status = status;
	*ret_retry_after_s = retry_after > LONG_MAX ? LONG_MAX : (long)retry_after;
	r = 0;
	goto out;
nomem:
	snprintf(cause, cause_size, "out of memory");
	r = -ENOMEM;
out:
	curl_slist_free_all(headers);
	curl_easy_cleanup(e);
	return r;
}

/* Waits until until_ms unless a stop fd turns readable first. */
static int wait_until(struct stops *st, int64_t until_ms, char *cause, size_t cause_size)
{
	struct pollfd p[2];
	for (unsigned i = 0; i < st->n_fds; i++)
		p[i] = (struct pollfd){ .fd = st->fds[i].fd, .events = POLLIN };
	for (int64_t left; (left = until_ms - now_ms()) > 0;) {
		int n = poll(p, st->n_fds, left > INT_MAX ? INT_MAX : (int)left);
		if (n < 0 && errno != EINTR) {
			snprintf(cause, cause_size, "poll: %s", strerror(errno));
			return -EIO;
		}
		if (n > 0)
			return cancelled(p[0].revents != 0, cause, cause_size);
	}
	return 0;
}

/* How long to wait before sending again after a 429 or 503 that asked for
 * retry_after_s, or -1 when it is not waited for. */
static int64_t retry_wait_ms(long status, long retry_after_s, unsigned waited, const struct stops *st)
{
	if ((status != 429 && status != 503) || retry_after_s <= 0 || waited >= KUBE_RETRY_AFTER_TRIES ||
	    retry_after_s > KUBE_RETRY_AFTER_MAX_MS / 1000)
		return -1;
	int64_t ms = (int64_t)retry_after_s * 1000;
	return now_ms() + ms < st->deadline_ms ? ms : -1;
}

void kube_client_abort(struct kube_client *client)
{
	uint64_t one = 1;
	atomic_store(&client->aborted, true);
	/* Level-triggered: every wait, now or later, sees it. */
	if (write(client->abort_fd, &one, sizeof(one)) != sizeof(one))
		abort(); /* an eventfd write of 1 cannot fail short of overflow */
}

/* A request, or a watch when stream is not NULL (its 2xx body goes there). */
static int exchange(struct kube_client *client, const char *method, const char *path, const char *body,
		    size_t body_len, const struct kube_request_limits *limits, struct stream *stream,
		    struct kube_response *out)
{
	int64_t start = now_ms();
	struct stops st = {
		.deadline_ms = limits && limits->deadline_ms > 0 ? limits->deadline_ms : start + client->timeout_ms,
		.fds = { { .fd = client->abort_fd, .events = CURL_WAIT_POLLIN } },
		.n_fds = 1,
	};
	if (limits && limits->abort_fd >= 0)
		st.fds[st.n_fds++] = (struct curl_waitfd){ .fd = limits->abort_fd, .events = CURL_WAIT_POLLIN };
	st.budget_ms = st.deadline_ms - start > LONG_MAX ? LONG_MAX : (long)(st.deadline_ms - start);
	char cause[KUBE_CAUSE_MAX] = "";
	char *url = NULL, *auth = NULL;
	struct kube_blob ca = { 0 };
	struct sink s = { 0 };
	long status = 0, retry_after_s = 0;
	bool token_again = false, token_retried = false;
	unsigned waited = 0;
	int r;
	out->retry_after_s = 0;
	if (!method || !method_known(method) || !path || !path_ok(path)) {
		snprintf(out->cause, sizeof(out->cause), "not a request this client sends");
		return -EINVAL;
	}
	if (body && body_len > KUBE_REQUEST_MAX) {
		snprintf(out->cause, sizeof(out->cause), "request body above %u bytes", KUBE_REQUEST_MAX);
		return -E2BIG;
	}
	size_t url_len = strlen(client->config.server) + strlen(path) + 1;
	if (!(url = malloc(url_len))) {
		r = -ENOMEM;
		snprintf(cause, sizeof(cause), "out of memory");
		goto out;
	}
	snprintf(url, url_len, "%s%s", client->config.server, path);
	for (;;) {
		if (atomic_load(&client->aborted)) {
			r = cancelled(true, cause, sizeof(cause));
			goto out;
		}
		/* After a 401, the token may have been rotated under us. */
		pthread_mutex_lock(&client->token_lock);
		r = refresh_token(client, token_again, cause, sizeof(cause));
		token_again = false;
		refresh_ca(client);
		free(auth);
		auth = NULL;
		free(ca.data);
		ca = (struct kube_blob){ 0 };
		if (r == 0 && client->auth_header && !(auth = strdup(client->auth_header))) {
			r = -ENOMEM;
			snprintf(cause, sizeof(cause), "out of memory");
		}
		/* A copy: another thread may read a rotated CA meanwhile. */
		if (r == 0 && client->config.ca.data) {
			if (!(ca.data = malloc(client->config.ca.len))) {
				r = -ENOMEM;
				snprintf(cause, sizeof(cause), "out of memory");
			} else {
				memcpy(ca.data, client->config.ca.data, client->config.ca.len);
				ca.len = client->config.ca.len;
			}
		}
		pthread_mutex_unlock(&client->token_lock);
		if (r < 0)
			goto out;
		free(s.buf);
		s = (struct sink){ .until_line = limits && limits->until_first_line, .stream = stream };
		r = transfer(client, method, url, body, body_len, auth, &ca, &st, &s, &status, &retry_after_s, cause,
			     sizeof(cause));
		if (r < 0)
			goto out;
		if (status == 401 && client->config.token_file && !token_retried) {
			token_again = token_retried = true;
			continue;
		}
		int64_t wait_ms = retry_wait_ms(status, retry_after_s, waited, &st);
		if (wait_ms < 0)
			break;
		waited++;
		if ((r = wait_until(&st, now_ms() + wait_ms, cause, sizeof(cause))) < 0)
			goto out;
	}
	if (!s.buf && !(s.buf = calloc(1, 1))) {
		r = -ENOMEM;
		snprintf(cause, sizeof(cause), "out of memory");
		goto out;
	}
	out->status = status;
	out->body = s.buf;
	out->len = s.len;
	out->retry_after_s = status == 429 || status == 503 ? retry_after_s : 0;
	out->cause[0] = '\0';
	s.buf = NULL;
out:
	if (r < 0)
		snprintf(out->cause, sizeof(out->cause), "%.140s (%.6s %.96s)", cause, method, path);
	free(s.buf);
	free(auth);
	free(ca.data);
	free(url);
	return r;
}

int kube_client_request(struct kube_client *client, const char *method, const char *path, const char *body,
			size_t body_len, struct kube_response *out)
{
	return exchange(client, method, path, body, body_len, NULL, NULL, out);
}

int kube_client_request_limited(struct kube_client *client, const char *method, const char *path, const char *body,
				size_t body_len, const struct kube_request_limits *limits, struct kube_response *out)
{
	return exchange(client, method, path, body, body_len, limits, NULL, out);
}

/* A resourceVersion goes into the query as it is: the characters a URL
 * takes unescaped (the server's are decimal digits). */
static bool version_ok(const char *v)
{
	size_t n = strlen(v);
	return n < KUBE_META_VERSION_MAX && strspn(v, "0123456789abcdefghijklmnopqrstuvwxyz"
						     "ABCDEFGHIJKLMNOPQRSTUVWXYZ-._~") == n;
}

int kube_client_watch(struct kube_client *client, const struct kube_watch_request *request,
		      struct kube_watch_outcome *out)
{
	const char *version = request->resource_version ? request->resource_version : "";
	char path[2100];
	out->status = 0;
	if (!request->path || !request->on_event || request->timeout_s < 1 ||
	    request->timeout_s > KUBE_WATCH_TIMEOUT_MAX_S || !version_ok(version) ||
	    str_printf(path, sizeof(path), "%s%swatch=1&allowWatchBookmarks=true&timeoutSeconds=%d%s%s%s", request->path,
		       strchr(request->path, '?') ? "&" : "?", request->timeout_s,
		       request->send_initial_events ? "&sendInitialEvents=true&resourceVersionMatch=NotOlderThan" : "",
		       version[0] ? "&resourceVersion=" : "", version) < 0) {
		snprintf(out->cause, sizeof(out->cause), "not a watch this client sends");
		return -EINVAL;
	}
	/* The server ends the watch at timeout_s; one that keeps it open
	 * longer (a connection gone silent) is given the client's timeout
	 * more, then dropped. */
	const struct kube_request_limits limits = {
		.deadline_ms = now_ms() + (int64_t)request->timeout_s * 1000 + client->timeout_ms,
		.abort_fd = request->abort_fd,
	};
	struct stream st = { .fn = request->on_event, .ctx = request->ctx };
	struct kube_response resp = { 0 };
	kube_watch_lines_init(&st.lines, 0);
	int r = exchange(client, "GET", path, NULL, 0, &limits, &st, &resp);
	if (r < 0) {
		out->status = st.code;
		snprintf(out->cause, sizeof(out->cause), "%s", resp.cause);
	} else if (!kube_status_ok(resp.status)) {
		char msg[160];
		kube_status_message(resp.body, resp.len, msg, sizeof(msg));
		r = resp.status == 410 ? -ESTALE : -EREMOTEIO;
		out->status = resp.status;
		snprintf(out->cause, sizeof(out->cause), "the watch was refused: HTTP %ld%s%s", resp.status,
			 msg[0] ? ": " : "", msg);
	} else if ((r = kube_watch_end(&st.lines, out->cause, sizeof(out->cause))) == 0) {
		out->cause[0] = '\0';
	}
	kube_response_free(&resp);
	kube_watch_lines_fini(&st.lines);
	return r;
}
