/* SPDX-License-Identifier: Apache-2.0 */
/* A client of the Kubernetes API server (reached as kube/config.h says):
 * one JSON request at a time over HTTPS with libcurl. TLS is always verified
 * against the configured CA (or the system's when the kubeconfig names
 * none); there is no way to turn that off. Nothing here logs: a failure
 * is a negative errno and a short cause for the caller's top level to log.
 *
 * The projected token is rotated by the kubelet (it expires within the hour),
 * so the client reads the token file again when its modification time, size
 * or inode changed, and once more after a 401 before answering with it.
 *
 * A 429 or 503 with a Retry-After is sent again after the time the server
 * asks, as client-go's REST client does (k8s.io/client-go/rest/with_retry.go),
 * when that ends before the request's deadline.
 *
 * Nothing blocks for longer than the request's deadline, and nothing past
 * an abort: each transfer runs in a libcurl multi handle that also watches
 * the client's abort eventfd (kube_client_abort: the daemon stops) and the
 * request's own (its caller gave up), as does the wait of a Retry-After.
 *
 * A watch (kube_client_watch) is a request whose body is a stream of
 * events, handed to a reader as they come, for as long as the server keeps
 * it open; it uses the same TLS, token, deadline and abort machinery.
 *
 * Threads: any number of threads may call kube_client_request (or watch) on
 * one client at once. Each call uses its own libcurl easy handle; the handles share
 * connections and DNS (not TLS sessions: see client.c) through a libcurl
 * share object whose locks are the client's mutexes, and the token sits
 * behind its own mutex. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kube/config.h"
#include "kube/watch.h"

/* A response body longer than this fails the request (-EFBIG): the largest
 * answer this project reads is a list of one node's ResourceSlices (at most
 * a dozen objects of 64 devices). */
#define KUBE_RESPONSE_MAX (4u * 1024u * 1024u)
/* A request body longer than this is refused (-E2BIG) before it is sent. */
#define KUBE_REQUEST_MAX (2u * 1024u * 1024u)
/* Each request, connection and TLS handshake included, unless the client's
 * timeout_ms says otherwise. */
#define KUBE_TIMEOUT_MS_DEFAULT 10000
/* A 429 or 503 with a Retry-After is retried at most this many times per
 * request, each after the time asked if that is at most
 * KUBE_RETRY_AFTER_MAX_MS and ends before the request's deadline. */
#define KUBE_RETRY_AFTER_TRIES 3
#define KUBE_RETRY_AFTER_MAX_MS 10000
/* Room for a cause, terminator included. */
#define KUBE_CAUSE_MAX 256
/* A CA file read again after a rotation: at most this many bytes. */
#define KUBE_CA_MAX (1024u * 1024u)

struct kube_client;

/* Takes the config (it is moved into the client, and zeroed, on success
 * only). timeout_ms 0 is KUBE_TIMEOUT_MS_DEFAULT. Returns 0, -ENOMEM or
 * -EINVAL (no server, or one that is not https://), with why said. */
int kube_client_new(struct kube_config *config, int timeout_ms, struct kube_client **ret_client, char *why,
		    size_t why_size);
void kube_client_free(struct kube_client *client);

/* The config the client was made from (the namespace, the source). */
const struct kube_config *kube_client_config(const struct kube_client *client);

/* What the server answered. */
struct kube_response {
	long status; /* the HTTP status, 200 ... 599 */
	char *body;  /* malloc'd, NUL-terminated (the server's NULs stay in len) */
	size_t len;
	/* The seconds of a 429's or 503's Retry-After that was not waited
	 * for (past the deadline or KUBE_RETRY_AFTER_MAX_MS, or the tries were
	 * used up); 0 otherwise. */
	long retry_after_s;
	/* On failure (and only then) the cause: "connect to
	 * https://10.0.0.1:443: Connection refused", "response above 4194304
	 * bytes", "timed out after 10000 ms". */
	char cause[KUBE_CAUSE_MAX];
};

/* Frees the body; the struct may be reused. */
void kube_response_free(struct kube_response *response);

/* One request: method ("GET", "POST", "PUT", "PATCH", "APPLY", "DELETE"),
 * path below the server ("/api/v1/nodes/n1", with its query), and an
 * optional JSON body (Content-Type application/json; for PATCH
 * application/merge-patch+json; APPLY is a PATCH of a server-side apply,
 * application/apply-patch+yaml, whose YAML a JSON body is).
 * Any HTTP status is a success: the caller judges it (4xx and 5xx included).
 * A 401 is retried once after the token file was read again, a 429 or 503
 * as its Retry-After says (see KUBE_RETRY_AFTER_TRIES). The deadline is
 * the client's timeout from now.
 *
 * Returns 0 with out->status and out->body set (out->cause empty), or, with
 * only out->cause written:
 *   -EINVAL       a method or path this client does not send;
 *   -E2BIG        a body above KUBE_REQUEST_MAX;
 *   -EFBIG        a response body above KUBE_RESPONSE_MAX;
 *   -ETIMEDOUT    no whole answer within the timeout;
 *   -ECONNREFUSED the server could not be reached (refused, no route, DNS);
 *   -EPROTO       TLS failed (an unknown CA, a bad certificate) or the
 *                 answer was not HTTP;
 *   -ECANCELED    aborted (kube_client_abort, or the request's abort fd);
 *   -EACCES       the token file could not be read;
 *   -ENOMEM       out of memory;
 *   -EIO          any other transfer failure. */
int kube_client_request(struct kube_client *client, const char *method, const char *path, const char *body,
			size_t body_len, struct kube_response *out);

/* What ends a request early. */
struct kube_request_limits {
	/* CLOCK_MONOTONIC ms (base/parse.h's now_ms) by which the whole request,
	 * retries and their waits included, is answered or fails -ETIMEDOUT;
	 * 0: the client's timeout from now. */
	int64_t deadline_ms;
	/* An fd that turns readable when the request is no longer wanted: it
	 * then fails at once with -ECANCELED. -1: none. */
	int abort_fd;
	/* For a watch (?watch=1): the answer ends, as a success, with the
	 * first whole line the server sends (its first event; every whole
	 * line of that chunk is kept), so that the caller wakes on the event
	 * rather than when the watch times out. */
	bool until_first_line;
};

/* The same within limits (NULL: the client's timeout, no abort fd), e.g.
 * the kubelet's NodePrepareResources call's deadline and cancellation. */
int kube_client_request_limited(struct kube_client *client, const char *method, const char *path, const char *body,
				size_t body_len, const struct kube_request_limits *limits, struct kube_response *out);

/* How long a watch may be asked to last (timeoutSeconds), at most. */
#define KUBE_WATCH_TIMEOUT_MAX_S 3600

struct kube_watch_request {
	/* The collection and its selection, as for its list:
	 * "/apis/resource.k8s.io/v1/resourceslices?fieldSelector=...". */
	const char *path;
	/* Where the watch starts: a list's metadata.resourceVersion, or the
	 * last event's; NULL or "": now, with an ADDED event per object. */
	const char *resource_version;
	int timeout_s; /* the server's timeoutSeconds: 1 .. KUBE_WATCH_TIMEOUT_MAX_S */
	int abort_fd;  /* readable: the watch ends at once with -ECANCELED; -1: none */
	/* The list first, through the watch (sendInitialEvents=true with
	 * resourceVersionMatch=NotOlderThan; the version as above, "" for a
	 * consistent read): an ADDED event per object, then a BOOKMARK whose
	 * initial_events_end is set, then the changes (Kubernetes' "streaming
	 * lists", KEP-3157). A server without it (the WatchList gate off, as in
	 * 1.33) refuses the watch: -EREMOTEIO with status 422 or 400. */
	bool send_initial_events;
	/* Each event but ERROR (which ends the watch, see below), in order, on
	 * the caller's thread; it may block (the stream waits in the socket). */
	kube_watch_fn on_event;
	void *ctx;
};

/* How a watch ended; written by every call. */
struct kube_watch_outcome {
	long status; /* the HTTP status or the ERROR event's code that ended it; 0: neither */
	char cause[KUBE_CAUSE_MAX]; /* "" when the server ended it */
};

/* Watches: GET path with watch=1, resourceVersion, allowWatchBookmarks=true
 * and timeoutSeconds=timeout_s added to its query, each event of the body
 * handed to on_event (kube/watch.h). The deadline is timeout_s plus the
 * client's timeout (the connection within the latter); a 401 or a 429 or
 * 503 with a Retry-After is retried as a request's. Idle, it waits in poll
 * on its socket and the abort fds: no CPU. Returns
 *   0            the server ended the watch (at its timeoutSeconds): watch
 *                again from the last event's resourceVersion;
 *   -ESTALE      that resourceVersion is gone (410, as an ERROR event or the
 *                status): list again, and watch from the list's;
 *   -EREMOTEIO   another status than 2xx, or another ERROR event: out says
 *                which and why;
 *   -EMSGSIZE    an event above KUBE_WATCH_EVENT_MAX;
 *   -EBADMSG     a line that is not an event, or an event cut short;
 *   on_event's own negative errno;
 *   or kube_client_request's errors (-ECANCELED when aborted, -ETIMEDOUT at
 *   the deadline, -ECONNREFUSED, -EPROTO, -EIO...); -EINVAL for a path,
 *   version or timeout this client does not send. */
int kube_client_watch(struct kube_client *client, const struct kube_watch_request *request,
		      struct kube_watch_outcome *out);

/* Makes every request under way on the client, and every later one, fail
 * at once with -ECANCELED: for a stop that must not wait on the server.
 * Any thread; there is no undoing it. */
void kube_client_abort(struct kube_client *client);

/* Whether status is 2xx. */
static inline bool kube_status_ok(long status)
{
	return status >= 200 && status < 300;
}
