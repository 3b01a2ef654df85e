/* SPDX-License-Identifier: Apache-2.0 */
/* The watch stream's splitter and event reader (see watch.h). */
#include "kube/watch.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/parse.h"

void kube_watch_lines_init(struct kube_watch_lines *w, size_t max)
{
	*w = (struct kube_watch_lines){ .max = max ? max : KUBE_WATCH_EVENT_MAX };
}

void kube_watch_lines_fini(struct kube_watch_lines *w)
{
	free(w->buf);
	*w = (struct kube_watch_lines){ .max = w->max };
}

static const struct {
	const char *name;
	enum kube_watch_type type;
} types[] = {
	{ "ADDED", KUBE_WATCH_ADDED },	     { "MODIFIED", KUBE_WATCH_MODIFIED }, { "DELETED", KUBE_WATCH_DELETED },
	{ "BOOKMARK", KUBE_WATCH_BOOKMARK }, { "ERROR", KUBE_WATCH_ERROR },
};

/* An ERROR event's Status: its code and message. */
static void status_of(json_object *object, struct kube_watch_event *ev)
{
	json_object *code;
	if (json_object_object_get_ex(object, "code", &code) && json_object_is_type(code, json_type_int)) {
		int64_t c = json_object_get_int64(code);
		ev->code = c < 0 || c > 999 ? 0 : (long)c;
	}
	const char *text = json_object_to_json_string_ext(object, JSON_C_TO_STRING_PLAIN);
	if (text)
		kube_status_message(text, strlen(text), ev->message, sizeof(ev->message));
}

int kube_watch_parse(const char *line, size_t len, struct kube_watch_event *ret_event, json_object **ret_root,
		     char *why, size_t why_size)
{
	json_object *root, *type, *object, *meta;
	struct kube_watch_event ev = { .type = KUBE_WATCH_ERROR };
	int r = kube_json_parse(line, len, &root, why, why_size);
	if (r < 0)
		return r;
	const char *name = NULL;
	if (json_object_object_get_ex(root, "type", &type) && json_object_is_type(type, json_type_string))
		name = json_object_get_string(type);
	size_t t = 0;
	while (name && t < sizeof(types) / sizeof(types[0]) && strcmp(types[t].name, name) != 0)
		t++;
	if (!name || t == sizeof(types) / sizeof(types[0])) {
		r = why_fail(why, why_size, -EBADMSG, "a watch event without a known type");
		goto out;
	}
	ev.type = types[t].type;
	if (!json_object_object_get_ex(root, "object", &object) || !json_object_is_type(object, json_type_object)) {
		r = why_fail(why, why_size, -EBADMSG, "a watch event %s without an object", name);
		goto out;
	}
	if (ev.type == KUBE_WATCH_ERROR) {
		status_of(object, &ev);
	} else {
		if (!json_object_object_get_ex(object, "metadata", &meta) || !json_object_is_type(meta, json_type_object)) {
			r = why_fail(why, why_size, -EBADMSG, "a watch event %s whose object has no metadata", name);
			goto out;
		}
		r = kube_json_string(meta, "resourceVersion", ev.resource_version, sizeof(ev.resource_version), why,
				     why_size, "metadata.");
		if (r == 0 && ev.type != KUBE_WATCH_BOOKMARK)
			r = kube_json_string(meta, "name", ev.name, sizeof(ev.name), why, why_size, "metadata.");
		if (r == -ENOENT)
			r = why_fail(why, why_size, -EBADMSG, "a watch event %s whose object lacks its name or version",
				     name);
		if (r < 0)
			goto out;
		json_object *annotations, *end;
		ev.initial_events_end = ev.type == KUBE_WATCH_BOOKMARK &&
					json_object_object_get_ex(meta, "annotations", &annotations) &&
					json_object_object_get_ex(annotations, "k8s.io/initial-events-end", &end) &&
					json_object_is_type(end, json_type_string) &&
					strcmp(json_object_get_string(end), "true") == 0;
	}
	ev.object = object;
	*ret_event = ev;
	*ret_root = root;
	return 0;
out:
	json_object_put(root);
	return r;
}

/* Whether s[0..n) is white space alone. */
static bool blank(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (s[i] != ' ' && s[i] != '\t' && s[i] != '\r' && s[i] != '\n')
			return false;
	return true;
}

/* One whole line (its newline included): an event for fn, unless it is
 * white space alone. */
static int deliver(const char *line, size_t len, kube_watch_fn fn, void *ctx, char *why, size_t why_size)
{
	if (blank(line, len))
		return 0;
	struct kube_watch_event ev;
	json_object *root;
	int r = kube_watch_parse(line, len, &ev, &root, why, why_size);
	if (r < 0)
		return r;
	r = fn(ctx, &ev);
	json_object_put(root);
	if (r < 0 && why_size && why[0] == '\0')
		why_fail(why, why_size, r, "the watch's reader stopped it");
	return r < 0 ? r : 0;
}

/* Appends n bytes to the partial line (the bound was checked). */
static int keep(struct kube_watch_lines *w, const char *data, size_t n)
{
	if (w->len + n > w->cap) {
		size_t cap = w->cap ? w->cap : 4096;
		while (cap < w->len + n)
			cap *= 2;
		if (cap > w->max)
			cap = w->max;
		char *b = realloc(w->buf, cap);
		if (!b)
			return -ENOMEM;
		w->buf = b;
		w->cap = cap;
	}
	memcpy(w->buf + w->len, data, n);
	w->len += n;
	return 0;
}

int kube_watch_feed(struct kube_watch_lines *w, const char *data, size_t n, kube_watch_fn fn, void *ctx, char *why,
		    size_t why_size)
{
	if (why_size)
		why[0] = '\0';
	while (n > 0) {
		const char *nl = memchr(data, '\n', n);
		size_t take = nl ? (size_t)(nl - data) + 1 : n;
		int r;
		if (take > w->max - w->len)
			return why_fail(why, why_size, -EMSGSIZE, "a watch event above %zu bytes", w->max);
		if (w->len == 0 && nl) {
			/* A whole line in this chunk: read where it lies. */
			r = deliver(data, take, fn, ctx, why, why_size);
		} else {
			if (keep(w, data, take) < 0)
				return why_fail(why, why_size, -ENOMEM, "out of memory");
			if (!nl)
				return 0;
			r = deliver(w->buf, w->len, fn, ctx, why, why_size);
			w->len = 0;
		}
		if (r < 0)
			return r;
		data += take;
		n -= take;
	}
	return 0;
}

int kube_watch_end(const struct kube_watch_lines *w, char *why, size_t why_size)
{
	if (!blank(w->buf, w->len))
		return why_fail(why, why_size, -EBADMSG, "a watch event cut short at the watch's end");
	return 0;
}
