/* SPDX-License-Identifier: Apache-2.0 */
/* Reading the API server's watch stream (a GET with ?watch=1): one JSON
 * object per line, {"type":"ADDED","object":{...}}, for as long as the
 * watch lasts. The splitter takes the body in whatever chunks the transport
 * delivers, keeps what follows the last newline for the next chunk, and
 * hands each whole line, parsed, to a callback. The body is the server's, so
 * a line is bounded (one longer fails the stream instead of growing a
 * buffer) and every member read is type-checked. No libcurl here (the
 * client feeds it, kube/client.h), so that it is fuzzed on its own. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include <json-c/json.h>

#include "kube/objects.h"

/* An event longer than this, its newline included, fails the watch
 * (-EMSGSIZE): the largest object watched is one ResourceSlice, far below
 * the list's bound (KUBE_RESPONSE_MAX, the same 4 MiB). */
#define KUBE_WATCH_EVENT_MAX (4u * 1024u * 1024u)
/* Room for an ERROR event's message, terminator included. */
#define KUBE_WATCH_MESSAGE_MAX 160

enum kube_watch_type {
	KUBE_WATCH_ADDED,
	KUBE_WATCH_MODIFIED,
	KUBE_WATCH_DELETED,
	KUBE_WATCH_BOOKMARK, /* the stream's position only: metadata.resourceVersion */
	KUBE_WATCH_ERROR,    /* a Status: code (410: the resourceVersion is too old) and message */
};

struct kube_watch_event {
	enum kube_watch_type type;
	/* The object's metadata.name and .resourceVersion: both for ADDED,
	 * MODIFIED and DELETED, the version alone for a BOOKMARK, neither for
	 * an ERROR ("" where absent). */
	char name[KUBE_META_NAME_MAX];
	char resource_version[KUBE_META_VERSION_MAX];
	/* BOOKMARK of a watch that streams the list first (sendInitialEvents):
	 * the one that ends the initial events, annotated
	 * k8s.io/initial-events-end "true"; resource_version is the list's. */
	bool initial_events_end;
	/* ERROR: the Status's code (0 when it has none) and message. */
	long code;
	char message[KUBE_WATCH_MESSAGE_MAX];
	/* The event's object, whole; borrowed for the callback only. */
	json_object *object;
};

/* Called for each event in order. Returns 0 to go on, or a negative errno
 * that ends the stream with it. */
typedef int (*kube_watch_fn)(void *ctx, const struct kube_watch_event *event);

/* One stream's splitter. */
struct kube_watch_lines {
	char *buf; /* the partial line so far */
	size_t len, cap;
	size_t max; /* a line's bound, newline included */
};

/* An empty splitter of lines up to max bytes (0: KUBE_WATCH_EVENT_MAX). */
void kube_watch_lines_init(struct kube_watch_lines *lines, size_t max);
void kube_watch_lines_fini(struct kube_watch_lines *lines);

/* Takes the next n bytes of the body: each line they complete is parsed
 * and handed to fn (a line of white space alone is skipped). Returns 0, or
 * with why said: -EMSGSIZE (a line above the bound), -EBADMSG (a line that
 * is not an event), -ENOMEM, or fn's own negative errno. After a failure
 * the stream is over: nothing more is fed. */
int kube_watch_feed(struct kube_watch_lines *lines, const char *data, size_t n, kube_watch_fn fn, void *ctx,
		    char *why, size_t why_size);

/* At the body's end: 0, or -EBADMSG when an event was cut short (bytes
 * other than white space after the last newline). */
int kube_watch_end(const struct kube_watch_lines *lines, char *why, size_t why_size);

/* One line as an event: *ret_event, whose object is *ret_root's (the caller
 * puts it). Returns 0, -EBADMSG with why said (not JSON, no known type, an
 * object without the metadata its type needs) or -ENOMEM. */
int kube_watch_parse(const char *line, size_t len, struct kube_watch_event *ret_event, json_object **ret_root,
		     char *why, size_t why_size);
