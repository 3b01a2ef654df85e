/* SPDX-License-Identifier: Apache-2.0 */
#include "gather.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/parse.h"
#include "base/strbuf.h"
#include "kube/objects.h"

#define PATH_MAX_LEN 4096
/* Reasons named in one message; the rest are counted. */
#define REASONS_SHOWN 6

/* Appends s to sb percent-encoded as a query value (RFC 3986's unreserved
 * characters stay). */
static int put_escaped(struct strbuf *sb, const char *s)
{
	for (; *s; s++) {
		unsigned char ch = (unsigned char)*s;
		bool plain = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
			     ch == '-' || ch == '.' || ch == '_' || ch == '~';
		int r = plain ? strbuf_printf(sb, "%c", ch) : strbuf_printf(sb, "%%%02X", ch);
		if (r < 0)
			return -ENAMETOOLONG;
	}
	return 0;
}

/* What a refusal of the API server means here: 410 is a watch's version
 * gone (list again), 409 a uid precondition that failed. */
static int status_errno(long status)
{
	switch (status) {
	case 404:
		return -ENOENT;
	case 401:
	case 403:
		return -EACCES;
	case 409:
		return -ESTALE;
	case 410:
		return -EAGAIN;
	default:
		return -EREMOTEIO;
	}
}

/* A request whose answer must be 200 (or, with ok_404, may be 404:
 * -ENOENT). Returns 0 with *res to free, or a negative errno with why. */
static int request(struct kube_client *c, const char *method, const char *path, const char *body,
		   const struct kube_request_limits *limits, struct kube_response *res, bool ok_404, char *why,
		   size_t why_size)
{
	*res = (struct kube_response){ 0 };
	int r = kube_client_request_limited(c, method, path, body, body ? strlen(body) : 0, limits, res);
	if (r < 0)
		return why_fail(why, why_size, r, "API server: %s", res->cause);
	if (res->status == 200 || res->status == 201)
		return 0;
	char message[256];
	kube_status_message(res->body, res->len, message, sizeof(message));
	r = status_errno(res->status);
	if (!(ok_404 && r == -ENOENT))
		why_fail(why, why_size, r, "%s %.200s: HTTP %ld%s%s", method, path, res->status, message[0] ? ": " : "",
			 message);
	kube_response_free(res);
	return r;
}

int rt_read_pod(struct kube_client *c, const char *ns, const char *name, json_object **ret_pod, char *why,
		size_t why_size)
{
	char path[PATH_MAX_LEN];
	struct kube_response res;
	if (str_printf(path, sizeof(path), "/api/v1/namespaces/%s/pods/%s", ns, name) < 0)
		return why_fail(why, why_size, -ENAMETOOLONG, "the pod's name is too long");
	int r = request(c, "GET", path, NULL, NULL, &res, false, why, why_size);
	if (r < 0)
		return r;
	r = kube_json_parse(res.body, res.len, ret_pod, why, why_size);
	kube_response_free(&res);
	return r;
}

int rt_publish(struct kube_client *c, const char *ns, const char *name, const char *uid, const char *network,
	       char *why, size_t why_size)
{
	/* The uid in the patch is a precondition: the API server refuses to
	 * change it, so a pod of the same name made anew is never written. */
	json_object *patch = json_object_new_object(), *meta = json_object_new_object(),
		    *annotations = json_object_new_object();
	char path[PATH_MAX_LEN];
	int r = -ENOMEM;
	if (!patch || !meta || !annotations ||
	    json_object_object_add(annotations, RT_NETWORK_ANNOTATION, json_object_new_string(network)) < 0 ||
	    json_object_object_add(meta, "uid", json_object_new_string(uid)) < 0 ||
	    json_object_object_add(meta, "annotations", annotations) < 0) {
		json_object_put(annotations);
		json_object_put(meta);
		goto out;
	}
	annotations = NULL;
	if (json_object_object_add(patch, "metadata", meta) < 0) {
		json_object_put(meta);
		goto out;
	}
	if (str_printf(path, sizeof(path), "/api/v1/namespaces/%s/pods/%s", ns, name) < 0) {
		r = why_fail(why, why_size, -ENAMETOOLONG, "the pod's name is too long");
		goto out;
	}
	struct kube_response res;
	r = request(c, "PATCH", path, json_object_to_json_string_ext(patch, JSON_C_TO_STRING_PLAIN), NULL, &res,
		    false, why, why_size);
	if (r == 0)
		kube_response_free(&res);
out:
	if (r == -ENOMEM)
		why_fail(why, why_size, r, "out of memory");
	json_object_put(patch);
	return r;
}

int rt_owner_size(struct kube_client *c, const char *ns, const struct rt_group *g, uint32_t *ret_size, char *why,
		  size_t why_size)
{
	const bool job = g->kind == RT_GROUP_JOB;
	if (!job && g->kind != RT_GROUP_STATEFULSET)
		return why_fail(why, why_size, -ENOENT, "the group has no owner that tells its size");
	char path[PATH_MAX_LEN];
	if (str_printf(path, sizeof(path), job ? "/apis/batch/v1/namespaces/%s/jobs/%s"
					       : "/apis/apps/v1/namespaces/%s/statefulsets/%s",
		       ns, g->owner_name) < 0)
		return why_fail(why, why_size, -ENAMETOOLONG, "the owner's name is too long");
	struct kube_response res;
	json_object *o = NULL, *spec, *v;
	int r = request(c, "GET", path, NULL, NULL, &res, false, why, why_size);
	if (r < 0)
		return r;
	if ((r = kube_json_parse(res.body, res.len, &o, why, why_size)) < 0)
		goto out;
	const char *key = job ? "completions" : "replicas";
	if (!json_object_object_get_ex(o, "spec", &spec) || !json_object_object_get_ex(spec, key, &v) ||
	    !json_object_is_type(v, json_type_int) || json_object_get_int64(v) < 1 ||
	    json_object_get_int64(v) > RT_GROUP_MAX) {
		r = why_invalid(why, why_size, "%s %s: spec.%s is not a size in 1-%d", job ? "Job" : "StatefulSet",
				g->owner_name, key, RT_GROUP_MAX);
		goto out;
	}
	*ret_size = (uint32_t)json_object_get_int64(v);
out:
	json_object_put(o);
	kube_response_free(&res);
	return r;
}

/* The state of one pass: the list's version, and what is still missing. */
struct pass {
	char resource_version[KUBE_META_VERSION_MAX];
	uint32_t missing;
	bool pods_missing; /* a pod, its node or its annotation: watch pods */
	struct strbuf reasons;
	char text[1536];
};

static void missing(struct pass *p, struct rt_found *f, bool pod_level, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static void missing(struct pass *p, struct rt_found *f, bool pod_level, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(f->reason, sizeof(f->reason), fmt, ap);
	va_end(ap);
	f->known = false;
	p->pods_missing = p->pods_missing || pod_level;
	if (p->missing++ < REASONS_SHOWN)
		(void)strbuf_printf(&p->reasons, "%s%s", p->missing > 1 ? "; " : "", f->reason);
}

/* Reads the chips of a pod's claims into f; 0 when known, 1 when waiting
 * (missing() said why), or a negative errno for what is wrong for good. */
static int claims_chips(struct kube_client *c, const struct rt_wait *w, struct rt_found *f, struct pass *p,
			char *why, size_t why_size)
{
	const struct rt_pod *pod = &f->pod;
	if (pod->n_claims_pending > 0) {
		missing(p, f, true, "pod %u (%s): its resource claim is not made yet", pod->index, pod->name);
		return 1;
	}
	f->chips = (struct rt_chips){ 0 };
	for (size_t i = 0; i < pod->n_claims; i++) {
		char path[PATH_MAX_LEN], cause[RT_REASON_MAX];
		struct kube_response res;
		if (str_printf(path, sizeof(path), "/apis/resource.k8s.io/v1/namespaces/%s/resourceclaims/%s",
			       w->namespace_, pod->claims[i]) < 0)
			return why_fail(why, why_size, -ENAMETOOLONG, "a claim's name is too long");
		int r = request(c, "GET", path, NULL, NULL, &res, true, why, why_size);
		if (r == -ENOENT) {
			missing(p, f, false, "pod %u (%s): claim %s not found yet", pod->index, pod->name,
				pod->claims[i]);
			return 1;
		}
		if (r < 0)
			return r;
		r = rt_claim_chips(res.body, res.len, w->driver, &f->chips, cause, sizeof(cause));
		kube_response_free(&res);
		if (r == -EAGAIN) {
			missing(p, f, false, "pod %u (%s): claim %s %s", pod->index, pod->name, pod->claims[i], cause);
			return 1;
		}
		if (r < 0 && r != -ENOENT) /* -ENOENT: another driver's claim */
			return why_fail(why, why_size, r, "pod %u (%s): claim %s: %s", pod->index, pod->name,
					pod->claims[i], cause);
	}
	if (f->chips.n == 0)
		return why_invalid(why, why_size, "pod %u (%s): no device of driver %s in its claims", pod->index,
				   pod->name, w->driver);
	return 0;
}

/* Judges one member found in the list. */
static int judge(struct kube_client *c, const struct rt_wait *w, struct rt_found *f, struct pass *p, char *why,
		 size_t why_size)
{
	const struct rt_pod *pod = &f->pod;
	if (!pod->node[0]) {
		missing(p, f, true, "pod %u (%s): not scheduled yet", pod->index, pod->name);
		return 0;
	}
	if (w->mode == RT_MODE_DRA) {
		if (!pod->uses_dra)
			return why_invalid(why, why_size,
					   "pod %u (%s) has no resource claims: every member must use DRA like this pod",
					   pod->index, pod->name);
		int r = claims_chips(c, w, f, p, why, why_size);
		if (r < 0)
			return r;
		f->known = r == 0;
		return 0;
	}
	if (!pod->network[0]) {
		missing(p, f, true, "pod %u (%s): has not published its chips yet (annotation %s)", pod->index,
			pod->name, RT_NETWORK_ANNOTATION);
		return 0;
	}
	char cause[RT_REASON_MAX];
	int r = rt_network_parse(pod->network, strlen(pod->network), &f->chips, cause, sizeof(cause));
	if (r < 0)
		return why_fail(why, why_size, r, "pod %u (%s): annotation %s: %s", pod->index, pod->name,
				RT_NETWORK_ANNOTATION, cause);
	f->known = true;
	return 0;
}

/* Places one listed pod by its index. */
static int place(const struct rt_group *g, uint32_t size, json_object *item, struct rt_found *found,
		 uint32_t *dups, char *why, size_t why_size)
{
	static struct rt_pod pod;
	char cause[RT_REASON_MAX];
	int r = rt_pod_read(item, &pod, cause, sizeof(cause));
	if (r < 0)
		return why_fail(why, why_size, r, "a pod of the group: %s", cause);
	if (pod.gone || !rt_group_has(g, &pod))
		return 0;
	if (!pod.has_index)
		return why_invalid(why, why_size, "pod %s has none of the index labels (see docs/ranktable.md)",
				   pod.name);
	if (pod.index >= size)
		return why_invalid(why, why_size, "pod %s has index %u, beyond the group's size %u", pod.name,
				   pod.index, size);
	struct rt_found *f = &found[pod.index];
	if (f->pod.uid[0]) {
		/* Two live pods for one index: wait for the old one to go. */
		dups[pod.index]++;
		return 0;
	}
	f->pod = pod;
	return 0;
}

/* Lists the group's pods (paged) into found[], by index. */
static int list_pods(struct kube_client *c, const struct rt_group *g, uint32_t size, const struct rt_wait *w,
		     struct rt_found *found, uint32_t *dups, struct pass *p, char *why, size_t why_size)
{
	char cont[1024] = "";
	uint32_t seen = 0;
	for (bool first = true; first || cont[0]; first = false) {
		char path[PATH_MAX_LEN];
		struct strbuf sb;
		strbuf_init(&sb, path, sizeof(path), NULL);
		int r = strbuf_printf(&sb, "/api/v1/namespaces/%s/pods?limit=%d&labelSelector=", w->namespace_,
				      RT_LIST_PAGE);
		if (r == 0)
			r = put_escaped(&sb, g->selector);
		if (r == 0 && cont[0] && (r = strbuf_printf(&sb, "&continue=")) == 0)
			r = put_escaped(&sb, cont);
		if (r < 0)
			return why_fail(why, why_size, -ENAMETOOLONG, "the group's selector is too long");
		struct kube_response res;
		json_object *list = NULL, *items, *meta, *v;
		if ((r = request(c, "GET", path, NULL, NULL, &res, false, why, why_size)) < 0)
			return r;
		r = kube_json_parse(res.body, res.len, &list, why, why_size);
		kube_response_free(&res);
		if (r < 0)
			return r;
		cont[0] = '\0';
		if (!json_object_object_get_ex(list, "items", &items) || !json_object_is_type(items, json_type_array)) {
			json_object_put(list);
			return why_fail(why, why_size, -EBADMSG, "a pod list without items");
		}
		if (json_object_object_get_ex(list, "metadata", &meta)) {
			if (first && json_object_object_get_ex(meta, "resourceVersion", &v))
				str_copy(p->resource_version, sizeof(p->resource_version), json_object_get_string(v));
			if (json_object_object_get_ex(meta, "continue", &v) &&
			    str_copy(cont, sizeof(cont), json_object_get_string(v)) < 0)
				r = why_fail(why, why_size, -E2BIG, "a list's continue token is too long");
		}
		size_t n = json_object_array_length(items);
		if (r == 0 && seen + n > RT_LIST_MAX(size))
			r = why_fail(why, why_size, -E2BIG, "more than %u pods match the group's selector %s",
				     RT_LIST_MAX(size), g->selector);
		for (size_t i = 0; r == 0 && i < n; i++)
			r = place(g, size, json_object_array_get_idx(items, i), found, dups, why, why_size);
		seen += (uint32_t)n;
		json_object_put(list);
		if (r < 0)
			return r;
	}
	return 0;
}

/* The resourceVersion to watch claims from: a list of one. */
static int claims_version(struct kube_client *c, const struct rt_wait *w, char *rv, size_t size, char *why,
			  size_t why_size)
{
	char path[PATH_MAX_LEN];
	struct kube_response res;
	json_object *list, *meta, *v;
	if (str_printf(path, sizeof(path), "/apis/resource.k8s.io/v1/namespaces/%s/resourceclaims?limit=1",
		       w->namespace_) < 0)
		return why_fail(why, why_size, -ENAMETOOLONG, "the namespace is too long");
	int r = request(c, "GET", path, NULL, NULL, &res, false, why, why_size);
	if (r < 0)
		return r;
	r = kube_json_parse(res.body, res.len, &list, why, why_size);
	kube_response_free(&res);
	if (r < 0)
		return r;
	if (!json_object_object_get_ex(list, "metadata", &meta) ||
	    !json_object_object_get_ex(meta, "resourceVersion", &v) ||
	    str_copy(rv, size, json_object_get_string(v)) < 0)
		r = why_fail(why, why_size, -EBADMSG, "a claim list without a resourceVersion");
	json_object_put(list);
	return r;
}

/* Waits for the first event of a watch from the pass's version, the watch
 * window at most. Returns 0 (an event, the window's end, or a version too
 * old: the caller lists again) or a negative errno for a refusal. */
static int await_event(struct kube_client *c, const struct rt_group *g, const struct rt_wait *w,
		       const struct pass *p, char *why, size_t why_size)
{
	int64_t left_ms = w->deadline_ms - now_ms();
	if (left_ms <= 0)
		return 0;
	int64_t window_s = left_ms / 1000 + 1 < w->watch_s ? left_ms / 1000 + 1 : w->watch_s;
	char path[PATH_MAX_LEN], rv[KUBE_META_VERSION_MAX];
	struct strbuf sb;
	strbuf_init(&sb, path, sizeof(path), NULL);
	int r;
	if (p->pods_missing || w->mode != RT_MODE_DRA) {
		str_copy(rv, sizeof(rv), p->resource_version);
		r = strbuf_printf(&sb, "/api/v1/namespaces/%s/pods?watch=1&labelSelector=", w->namespace_);
		if (r == 0)
			r = put_escaped(&sb, g->selector);
	} else {
		/* Every pod is there: what is missing is a claim's data. */
		if ((r = claims_version(c, w, rv, sizeof(rv), why, why_size)) < 0)
			return r;
		r = strbuf_printf(&sb, "/apis/resource.k8s.io/v1/namespaces/%s/resourceclaims?watch=1", w->namespace_);
	}
	if (r == 0 && (r = strbuf_printf(&sb, "&timeoutSeconds=%lld&resourceVersion=", (long long)window_s)) == 0)
		r = put_escaped(&sb, rv);
	if (r < 0)
		return why_fail(why, why_size, -ENAMETOOLONG, "the group's selector is too long");
	/* The request's own deadline a little after the server's end of it. */
	int64_t until = now_ms() + window_s * 1000 + 5000;
	const struct kube_request_limits limits = {
		.deadline_ms = until < w->deadline_ms ? until : w->deadline_ms,
		.abort_fd = -1,
		.until_first_line = true,
	};
	struct kube_response res;
	r = request(c, "GET", path, NULL, &limits, &res, false, why, why_size);
	if (r == -ETIMEDOUT || r == -EAGAIN)
		return 0;
	if (r == 0)
		kube_response_free(&res);
	return r;
}

int rt_wait_members(struct kube_client *c, const struct rt_group *g, uint32_t size, const struct rt_wait *w,
		    struct rt_found *found, char *why, size_t why_size)
{
	uint32_t *dups = calloc(size, sizeof(*dups));
	char last[sizeof(((struct pass *)0)->text) + 96] = "";
	int r;
	if (!dups)
		return why_fail(why, why_size, -ENOMEM, "out of memory");
	for (;;) {
		static struct pass p;
		p = (struct pass){ 0 };
		strbuf_init(&p.reasons, p.text, sizeof(p.text), "...");
		memset(dups, 0, size * sizeof(*dups));
		for (uint32_t i = 0; i < size; i++) {
			found[i].known = false;
			found[i].pod.uid[0] = '\0';
		}
		if ((r = list_pods(c, g, size, w, found, dups, &p, why, why_size)) < 0)
			goto out;
		for (uint32_t i = 0; i < size; i++) {
			if (!found[i].pod.uid[0])
				missing(&p, &found[i], true, "index %u: no pod yet", i);
			else if (dups[i])
				missing(&p, &found[i], true, "index %u: %u pods at once (%s and another)", i, dups[i] + 1,
					found[i].pod.name);
			else if ((r = judge(c, w, &found[i], &p, why, why_size)) < 0)
				goto out;
		}
		if (p.missing == 0) {
			r = 0;
			goto out;
		}
		char line[sizeof(p.text) + 96];
		snprintf(line, sizeof(line), "waiting for %u of %u members: %s%s", p.missing, size, p.text,
			 p.missing > REASONS_SHOWN ? "; ..." : "");
		if (now_ms() >= w->deadline_ms) {
			r = why_fail(why, why_size, -ETIMEDOUT, "%u of %u members not known at the deadline: %s%s",
				     p.missing, size, p.text, p.missing > REASONS_SHOWN ? "; ..." : "");
			goto out;
		}
		if (strcmp(line, last) != 0 && w->progress)
			w->progress(w->ctx, line);
		str_copy(last, sizeof(last), line);
		if ((r = await_event(c, g, w, &p, why, why_size)) < 0)
			goto out;
	}
out:
	free(dups);
	return r;
}
