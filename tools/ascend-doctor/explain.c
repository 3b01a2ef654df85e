/* SPDX-License-Identifier: Apache-2.0 */
/* The Pending story; see explain.h. */
#include "explain.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "base/file.h"
#include "fit.h"
#include "kubectl.h"

/* kubectl's output for a big cluster: 150,000 pods of a few KiB each. */
#define JSON_MAX_BYTES (512u * 1024 * 1024)
#define DEFAULT_RESOURCE "ascend.com/npu"
/* kubectl get pods -A on a big cluster takes its time. */
#define KUBECTL_TIMEOUT_MS 60000
/* json-c's nesting limit; Kubernetes objects are far shallower. */
#define JSON_MAX_DEPTH 64

static int parse_json(const char *what, const char *text, size_t len, struct json_object **ret, char *why,
		      size_t why_size)
{
	struct json_tokener *tok = json_tokener_new_ex(JSON_MAX_DEPTH);
	if (!tok)
		return -ENOMEM;
	if (len > INT32_MAX) {
		json_tokener_free(tok);
		snprintf(why, why_size, "%s: too large", what);
		return -EFBIG;
	}
	struct json_object *obj = json_tokener_parse_ex(tok, text, (int)len);
	enum json_tokener_error err = json_tokener_get_error(tok);
	/* Text that ends inside a value is incomplete, not continued later. */
	if (!obj && err == json_tokener_continue)
		obj = json_tokener_parse_ex(tok, "", 1);
	err = json_tokener_get_error(tok);
	json_tokener_free(tok);
	if (!obj) {
		snprintf(why, why_size, "%s: not JSON: %s", what,
			 err == json_tokener_success ? "empty" : json_tokener_error_desc(err));
		return -EINVAL;
	}
	*ret = obj;
	return 0;
}

/* Splits "ns/name" or "name". */
static void split_pod_arg(const char *arg, const char *namespace, char *ns, size_t ns_size, char *name,
			  size_t name_size)
{
	const char *slash = arg ? strchr(arg, '/') : NULL;
	if (slash) {
		snprintf(ns, ns_size, "%.*s", (int)(slash - arg), arg);
		snprintf(name, name_size, "%s", slash + 1);
	} else {
		snprintf(ns, ns_size, "%s", namespace ? namespace : "");
		snprintf(name, name_size, "%s", arg ? arg : "");
	}
}

static const char *meta_str(struct json_object *o, const char *key)
{
	struct json_object *meta, *v;
	if (!json_object_is_type(o, json_type_object) || !json_object_object_get_ex(o, "metadata", &meta) ||
	    !json_object_is_type(meta, json_type_object) || !json_object_object_get_ex(meta, key, &v) ||
	    !json_object_is_type(v, json_type_string))
		return NULL;
	return json_object_get_string(v);
}

/* The pod named ns/name in doc (a Pod or a list); ns empty matches any. */
static struct json_object *find_pod(struct json_object *doc, const char *ns, const char *name, size_t *ret_matches)
{
	bool single;
	struct json_object *items = fit_items(doc, &single), *found = NULL;
	size_t n = !items ? 0 : single ? 1 : json_object_array_length(items), matches = 0;
	for (size_t i = 0; i < n; i++) {
		struct json_object *p = single ? items : json_object_array_get_idx(items, i);
		const char *p_name = meta_str(p, "name"), *p_ns = meta_str(p, "namespace");
		if (name[0] && (!p_name || strcmp(p_name, name) != 0))
			continue;
		if (ns[0] && strcmp(p_ns ? p_ns : "default", ns) != 0)
			continue;
		if (!found)
			found = p;
		matches++;
	}
	*ret_matches = matches;
	return found;
}

static const char *str_or_default(const char *s, const char *fallback)
{
	return s ? s : fallback;
}

static bool add_str(struct json_object *o, const char *key, const char *value)
{
	struct json_object *s = json_object_new_string(value);
	if (!s || json_object_object_add(o, key, s) < 0) {
		json_object_put(s);
		return false;
	}
	return true;
}

static bool add_obj(struct json_object *o, const char *key, struct json_object *value)
{
	if (!value || json_object_object_add(o, key, value) < 0) {
		json_object_put(value);
		return false;
	}
	return true;
}

static bool append(struct json_object *array, struct json_object *value)
{
	if (!value || json_object_array_add(array, value) < 0) {
		json_object_put(value);
		return false;
	}
	return true;
}

static struct json_object *node_json(const struct fit_node *n)
{
	struct json_object *o = json_object_new_object(), *reasons = json_object_new_array();
	if (!o || !reasons)
		goto fail;
	if (!add_str(o, "name", n->name) || !add_obj(o, "fits", json_object_new_boolean(n->fits)) ||
	    !add_obj(o, "capacity", json_object_new_int64(n->capacity)) ||
	    !add_obj(o, "allocatable", json_object_new_int64(n->allocatable)) ||
	    !add_obj(o, "requested", json_object_new_int64(n->used)) ||
	    !add_obj(o, "free", json_object_new_int64(n->free)))
		goto fail;
	for (size_t i = 0; i < n->n_reasons; i++) {
		struct json_object *r = json_object_new_object();
		if (!append(reasons, r) || !add_str(r, "code", fit_code_name(n->reasons[i].code)) ||
		    !add_str(r, "detail", n->reasons[i].detail))
			goto fail;
	}
	if (!add_obj(o, "reasons", reasons)) {
		reasons = NULL;
		goto fail;
	}
	return o;
fail:
	json_object_put(reasons);
	json_object_put(o);
	return NULL;
}

static struct json_object *cluster_json(const struct fit_cluster *c, const char *resource, const struct report *report)
{
	struct json_object *doc = report_to_json(report, "explain");
	struct json_object *request = json_object_new_object(), *nodes = json_object_new_array();
	char pod[2 * FIT_NAME_MAX];
	snprintf(pod, sizeof(pod), "%s/%s", c->pod_namespace, c->pod_name);
	if (!doc || !request || !nodes || !add_obj(request, resource, json_object_new_int64(c->request)))
		goto fail;
	for (size_t i = 0; i < c->n_nodes; i++)
		if (!append(nodes, node_json(&c->nodes[i])))
			goto fail;
	if (!add_str(doc, "pod", pod) || !add_obj(doc, "request", request)) {
		request = NULL;
		goto fail;
	}
	request = NULL;
	if (!add_obj(doc, "nodes", nodes)) {
		nodes = NULL;
		goto fail;
	}
	nodes = NULL;
	if (!add_str(doc, "summary", c->summary) || !add_str(doc, "fix", c->fix))
		goto fail;
	return doc;
fail:
	json_object_put(request);
	json_object_put(nodes);
	json_object_put(doc);
	return NULL;
}

static int fill_report(const struct fit_cluster *c, const char *resource, struct report *report)
{
	int r = 0;
	char what[2 * FIT_NAME_MAX + 32];
	snprintf(what, sizeof(what), "pod %s/%s", c->pod_namespace, c->pod_name);
	if (c->request > 0)
		r = report_add(report, VERDICT_OK, "request", NULL, "%s requests %" PRId64 " %s", what, c->request,
			       resource);
	else
		r = report_add(report, VERDICT_WARN, "request", c->fix, "%s requests no %s", what, resource);
	for (size_t i = 0; r == 0 && i < c->n_nodes; i++) {
		const struct fit_node *n = &c->nodes[i];
		char name[FIT_NAME_MAX + 8];
		snprintf(name, sizeof(name), "node %s", n->name);
		if (n->fits) {
			r = report_add(report, VERDICT_OK, name, NULL,
				       "fits: %" PRId64 " of %" PRId64 " allocatable %s free, %" PRId64 " requested", n->free,
				       n->allocatable, resource, c->request);
			continue;
		}
		char reasons[REPORT_TEXT_MAX], fix[REPORT_TEXT_MAX];
		size_t len = 0;
		reasons[0] = '\0';
		for (size_t k = 0; k < n->n_reasons; k++) {
			int w = snprintf(reasons + len, sizeof(reasons) - len, "%s%s (%s)", k ? "; " : "",
					 fit_code_name(n->reasons[k].code), n->reasons[k].detail);
			if (w < 0 || (size_t)w >= sizeof(reasons) - len)
				break;
			len += (size_t)w;
		}
		fit_node_fix(c, n, resource, fix, sizeof(fix));
		/* A node that cannot take the pod is the verdict only when no node can. */
		r = report_add(report, c->n_fit ? VERDICT_WARN : VERDICT_FAIL, name, fix, "%s", reasons);
	}
	if (r == 0)
		r = report_add(report, c->n_fit ? VERDICT_OK : VERDICT_FAIL, "scheduling", c->fix, "%s", c->summary);
	return r;
}

int explain_texts(const char *pod_text, size_t pod_len, const char *nodes_text, size_t nodes_len,
		  const char *pods_text, size_t pods_len, const char *pod_arg, const char *namespace,
		  const char *resource, struct report *report, struct json_object **ret_doc, char *why,
		  size_t why_size)
{
	struct json_object *pod_doc = NULL, *nodes_doc = NULL, *pods_doc = NULL, *doc;
	struct fit_cluster cluster = { 0 };
	char ns[FIT_NAME_MAX], name[FIT_NAME_MAX];
	int r;
	split_pod_arg(pod_arg, namespace, ns, sizeof(ns), name, sizeof(name));
	if ((pod_text && (r = parse_json("--pod", pod_text, pod_len, &pod_doc, why, why_size)) < 0) ||
	    (r = parse_json("--nodes", nodes_text, nodes_len, &nodes_doc, why, why_size)) < 0 ||
	    (pods_text && (r = parse_json("--pods", pods_text, pods_len, &pods_doc, why, why_size)) < 0))
		goto out;
	struct json_object *source = pod_doc ? pod_doc : pods_doc;
	size_t matches = 0;
	struct json_object *pod = source ? find_pod(source, ns, name, &matches) : NULL;
	if (!pod) {
		snprintf(why, why_size, "pod %s%s%s not found in %s", ns, ns[0] ? "/" : "", name[0] ? name : "(any)",
			 pod_doc ? "--pod" : "--pods");
		r = -ENOENT;
		goto out;
	}
	if (matches > 1) {
		snprintf(why, why_size, "%zu pods match '%s': name one as NAMESPACE/NAME", matches, name[0] ? name : "(any)");
		r = -EINVAL;
		goto out;
	}
	/* Without --resource-name, the resource is the pod's: a vNPU template's
	 * or a per-family name as well as ascend.com/npu. */
	char detected[FIT_NAME_MAX + 64];
	if (!resource)
		resource = fit_pod_extended_resource(pod, detected, sizeof(detected)) == 0 ? detected : DEFAULT_RESOURCE;
	/* A request the API server would refuse is the verdict by itself. */
	int64_t request;
	char bad[512];
	if (fit_pod_request(pod, resource, &request, bad, sizeof(bad)) < 0) {
		char fix[512], pod_id[2 * FIT_NAME_MAX];
		snprintf(fix, sizeof(fix), "request whole devices: resources.limits: {%s: \"1\"} (or 2, 4, ...)", resource);
		snprintf(pod_id, sizeof(pod_id), "%s/%s", str_or_default(meta_str(pod, "namespace"), "default"),
			 str_or_default(meta_str(pod, "name"), "?"));
		r = report_add(report, VERDICT_FAIL, "request", fix, "pod %s: %s", pod_id, bad);
		if (r < 0)
			goto out;
		doc = report_to_json(report, "explain");
		if (!doc || !add_str(doc, "pod", pod_id) || !add_str(doc, "summary", bad) || !add_str(doc, "fix", fix)) {
			json_object_put(doc);
			r = -ENOMEM;
			goto out;
		}
		*ret_doc = doc;
		goto out;
	}
	r = fit_cluster_evaluate(pod, nodes_doc, pods_doc, resource, &cluster, why, why_size);
	if (r < 0)
		goto out;
	r = fill_report(&cluster, resource, report);
	if (r < 0)
		goto out;
	doc = cluster_json(&cluster, resource, report);
	if (!doc) {
		r = -ENOMEM;
		goto out;
	}
	*ret_doc = doc;
out:
	fit_cluster_clear(&cluster);
	json_object_put(pod_doc);
	json_object_put(nodes_doc);
	json_object_put(pods_doc);
	return r;
}

/* Reads a file argument, or runs kubectl with args for it. */
static int obtain(const struct doctor_options *o, const char *file, const char *what, const char *const kubectl_args[],
		  char **ret_text, size_t *ret_len, char *why, size_t why_size)
{
	if (file) {
		char reason[256];
		int r = file_read_bounded(file, JSON_MAX_BYTES, ret_text, ret_len, reason, sizeof(reason));
		if (r < 0)
			snprintf(why, why_size, "%s %s: %s", what, file, reason);
		return r;
	}
	char reason[512];
	int r = run_capture(kubectl_args, o->timeout_ms > 0 ? o->timeout_ms : KUBECTL_TIMEOUT_MS, JSON_MAX_BYTES, ret_text,
			    ret_len, reason, sizeof(reason));
	if (r == -ENOENT) {
		snprintf(why, why_size, "%s is not on PATH: give --pod, --nodes and --pods files (kubectl get -o json)",
			 o->kubectl);
		return -ENOEXEC;
	}
	if (r < 0)
		snprintf(why, why_size, "reading %s: %s", what, reason);
	return r;
}

int explain_run(const struct doctor_options *o, const char *pod_arg, struct report *report,
		struct json_object **ret_doc, char *why, size_t why_size)
{
	char *pod_text = NULL, *nodes_text = NULL, *pods_text = NULL;
	size_t pod_len = 0, nodes_len = 0, pods_len = 0;
	char ns[FIT_NAME_MAX], name[FIT_NAME_MAX];
	int r;
	if (!pod_arg && !o->pod_file) {
		snprintf(why, why_size, "explain needs a POD (or --pod FILE)");
		return -EINVAL;
	}
	split_pod_arg(pod_arg, o->namespace, ns, sizeof(ns), name, sizeof(name));
	const char *kubectl = o->kubectl;
	char pod_name_arg[FIT_NAME_MAX];
	snprintf(pod_name_arg, sizeof(pod_name_arg), "%s", name);
	const char *const pod_args_ns[] = { kubectl, "get", "pod", pod_name_arg, "-n", ns, "-o", "json", NULL };
	const char *const pod_args[] = { kubectl, "get", "pod", pod_name_arg, "-o", "json", NULL };
	const char *const nodes_args[] = { kubectl, "get", "nodes", "-o", "json", NULL };
	const char *const pods_args[] = { kubectl, "get", "pods", "--all-namespaces", "-o", "json", NULL };
	/* Without --pod the pod comes from --pods when that file is given. */
	bool pod_from_list = !o->pod_file && o->pods_file;
	if (!pod_from_list) {
		r = obtain(o, o->pod_file, "the pod", ns[0] ? pod_args_ns : pod_args, &pod_text, &pod_len, why, why_size);
		if (r < 0)
			goto out;
	}
	r = obtain(o, o->nodes_file, "the nodes", nodes_args, &nodes_text, &nodes_len, why, why_size);
	if (r < 0)
		goto out;
	r = obtain(o, o->pods_file, "the pods", pods_args, &pods_text, &pods_len, why, why_size);
	if (r < 0)
		goto out;
	r = explain_texts(pod_text, pod_len, nodes_text, nodes_len, pods_text, pods_len, pod_arg, o->namespace,
			  o->resource_name_given ? o->resource_name : NULL, report, ret_doc, why, why_size);
out:
	free(pod_text);
	free(nodes_text);
	free(pods_text);
	return r;
}
