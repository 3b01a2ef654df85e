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
#include "base/strbuf.h"
#include "claims.h"
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

/* ---- ResourceClaims ---------------------------------------------------------- */

/* One node's line for the claim: per request, what is available and why
 * the rest is not. */
static void pool_line(const struct claims_result *c, size_t p, char *found, size_t found_size, char *fix,
		      size_t fix_size)
{
	struct strbuf sb, fb;
	strbuf_init(&sb, found, found_size, "...");
	strbuf_init(&fb, fix, fix_size, "...");
	bool causes[CLAIMS_CAUSE_COUNT] = { false };
	for (size_t i = 0; i < c->n_requests; i++) {
		const struct claims_request *req = &c->requests[i];
		if (p >= req->n_pools)
			continue;
		const struct claims_pool *pl = &req->pools[p];
		char want[64];
		if (req->all)
			snprintf(want, sizeof(want), "all");
		else
			snprintf(want, sizeof(want), "%" PRId64, req->count);
		strbuf_printf(&sb, "%srequest %s: %zu available, %s wanted (%zu devices, %zu of class %s", i ? "; " : "",
			      req->name, pl->available, want, pl->devices, pl->of_class, req->device_class);
		if (pl->count[CLAIMS_NOT_SELECTED])
			strbuf_printf(&sb, ", %zu not selected", pl->count[CLAIMS_NOT_SELECTED]);
		strbuf_printf(&sb, ")");
		for (int k = 0; k < CLAIMS_CAUSE_COUNT; k++) {
			if (!pl->named[k])
				continue;
			if (k == CLAIMS_NOT_SELECTED)
				strbuf_printf(&sb, "; CEL errors: %s", pl->named[k]);
			else
				strbuf_printf(&sb, "; %zu %s: %s", pl->count[k], claims_cause_name((enum claims_cause)k),
					      pl->named[k]);
			causes[k] |= !pl->fits;
		}
		if (pl->not_evaluated)
			strbuf_printf(&sb, "; %zu counted as selected by parts not evaluated", pl->not_evaluated);
	}
	static const char *const fixes[CLAIMS_CAUSE_COUNT] = {
		[CLAIMS_NOT_SELECTED] = "guard the attribute with `\"NAME\" in device.attributes[...]`",
		[CLAIMS_TAINTED] = "fix the fault (ascend-doctor node on the node) or delete the DeviceTaintRule "
				   "named, or tolerate the taint in the request",
		[CLAIMS_ALLOCATED] = "delete or wait for the pods of the claims holding the devices",
		[CLAIMS_NO_COUNTERS] = "delete the claims holding the chip's partitions, or ask for another chip",
		[CLAIMS_NO_SHARES] = "raise sharing.timeSlicing replicas, or delete a claim holding a share",
	};
	const char *sep = "";
	for (int k = 0; k < CLAIMS_CAUSE_COUNT; k++) {
		if (!causes[k])
			continue;
		strbuf_printf(&fb, "%s", sep);
		strbuf_printf(&fb, "%s", fixes[k]);
		sep = "; ";
	}
	if (!sep[0])
		strbuf_printf(&fb, "too few devices match: ask for fewer, or add devices that match");
}

static int claim_report(const struct claims_result *c, const char *pod, struct report *report)
{
	int r;
	if (pod)
		r = report_add(report, VERDICT_OK, "claim", NULL, "%s of pod %s: %zu request(s)%s", c->claim, pod,
			       c->n_requests, c->allocated_node ? ", allocated" : ", not allocated");
	else
		r = report_add(report, VERDICT_OK, "claim", NULL, "%s: %zu request(s)%s", c->claim, c->n_requests,
			       c->allocated_node ? ", allocated" : ", not allocated");
	for (size_t i = 0; r == 0 && i < c->n_requests; i++) {
		const struct claims_request *req = &c->requests[i];
		char name[REPORT_NAME_MAX];
		snprintf(name, sizeof(name), "request %s", req->name);
		char count[64];
		if (req->all)
			snprintf(count, sizeof(count), "all");
		else
			snprintf(count, sizeof(count), "exactly %" PRId64, req->count);
		if (!req->class_found) {
			r = report_add(report, VERDICT_FAIL, name, c->fix, "%s%s of DeviceClass %s, which does not exist",
				       req->alternative ? "first available: " : "", count, req->device_class);
			continue;
		}
		r = report_add(report, VERDICT_OK, name, NULL, "%s%s of DeviceClass %s%s", req->alternative ? "first available: " : "",
			       count, req->device_class, req->admin_access ? ", adminAccess" : "");
		for (size_t k = 0; r == 0 && k < req->n_selectors; k++) {
			const struct claims_selector *sel = &req->selectors[k];
			r = report_add(report, VERDICT_OK, sel->from_class ? "selector (class)" : "selector (claim)", NULL,
				       "%s [%s]", sel->expression, sel->evaluated ? "evaluated" : "not evaluated");
		}
	}
	if (r == 0 && c->n_constraints)
		r = report_add(report, VERDICT_OK, "constraints", NULL, "%zu matchAttribute constraint(s): not evaluated",
			       c->n_constraints);
	bool classes_found = true;
	for (size_t i = 0; i < c->n_requests; i++)
		classes_found &= c->requests[i].class_found;
	for (size_t p = 0; r == 0 && classes_found && !c->allocated_node && p < c->n_nodes; p++) {
		char found[REPORT_TEXT_MAX], fix[REPORT_TEXT_MAX], name[REPORT_NAME_MAX];
		const struct claims_pool *pl = &c->requests[0].pools[p];
		snprintf(name, sizeof(name), "node %s", pl->node[0] ? pl->node : pl->pool);
		pool_line(c, p, found, sizeof(found), fix, sizeof(fix));
		bool fits = claims_pool_fits(c, p);
		r = report_add(report, fits ? VERDICT_OK : c->n_fit ? VERDICT_WARN : VERDICT_FAIL, name, fix, "%s", found);
	}
	if (r == 0)
		r = report_add(report, c->allocated_node || c->n_fit ? VERDICT_OK : VERDICT_FAIL, "allocation", c->fix, "%s",
			       c->summary);
	return r;
}

static struct json_object *pool_json(const struct claims_pool *pl)
{
	struct json_object *o = json_object_new_object(), *causes = json_object_new_object();
	if (!o || !causes || !add_str(o, "node", pl->node) || !add_str(o, "pool", pl->pool) ||
	    !add_obj(o, "devices", json_object_new_int64((int64_t)pl->devices)) ||
	    !add_obj(o, "ofClass", json_object_new_int64((int64_t)pl->of_class)) ||
	    !add_obj(o, "available", json_object_new_int64((int64_t)pl->available)) ||
	    !add_obj(o, "notEvaluated", json_object_new_int64((int64_t)pl->not_evaluated)) ||
	    !add_obj(o, "fits", json_object_new_boolean(pl->fits)))
		goto fail;
	for (int k = 0; k < CLAIMS_CAUSE_COUNT; k++) {
		struct json_object *cause = json_object_new_object();
		if (!add_obj(causes, claims_cause_name((enum claims_cause)k), cause) ||
		    !add_obj(cause, "count", json_object_new_int64((int64_t)pl->count[k])) ||
		    (pl->named[k] && !add_str(cause, "devices", pl->named[k])))
			goto fail;
	}
	if (!add_obj(o, "causes", causes)) {
		causes = NULL;
		goto fail;
	}
	return o;
fail:
	json_object_put(causes);
	json_object_put(o);
	return NULL;
}

static struct json_object *request_json(const struct claims_request *req)
{
	struct json_object *o = json_object_new_object(), *sels = NULL, *nodes = NULL;
	if (!o || !add_str(o, "name", req->name) || !add_str(o, "deviceClassName", req->device_class) ||
	    !add_obj(o, "classFound", json_object_new_boolean(req->class_found)) ||
	    !add_str(o, "allocationMode", req->all ? "All" : "ExactCount") ||
	    !add_obj(o, "count", json_object_new_int64(req->count)) ||
	    !add_obj(o, "adminAccess", json_object_new_boolean(req->admin_access)) ||
	    !add_obj(o, "firstAvailable", json_object_new_boolean(req->alternative)) ||
	    !add_obj(o, "selectors", sels = json_object_new_array()) || !add_obj(o, "nodes", nodes = json_object_new_array()))
		goto fail;
	for (size_t k = 0; k < req->n_selectors; k++) {
		struct json_object *s = json_object_new_object();
		if (!append(sels, s) || !add_str(s, "source", req->selectors[k].from_class ? "class" : "claim") ||
		    !add_str(s, "expression", req->selectors[k].expression) ||
		    !add_obj(s, "evaluated", json_object_new_boolean(req->selectors[k].evaluated)))
			goto fail;
	}
	for (size_t p = 0; p < req->n_pools; p++)
		if (!append(nodes, pool_json(&req->pools[p])))
			goto fail;
	return o;
fail:
	json_object_put(o);
	return NULL;
}

static struct json_object *claim_json(const struct claims_result *c)
{
	struct json_object *o = json_object_new_object(), *reqs = NULL;
	if (!o || !add_str(o, "claim", c->claim) || !add_obj(o, "requests", reqs = json_object_new_array()) ||
	    !add_obj(o, "allocatable", json_object_new_int64((int64_t)c->n_fit)) ||
	    !add_obj(o, "nodes", json_object_new_int64((int64_t)c->n_nodes)) || !add_str(o, "summary", c->summary) ||
	    !add_str(o, "fix", c->fix))
		goto fail;
	if (c->allocated_node && !add_str(o, "allocatedNode", c->allocated_node))
		goto fail;
	for (size_t i = 0; i < c->n_requests; i++)
		if (!append(reqs, request_json(&c->requests[i])))
			goto fail;
	return o;
fail:
	json_object_put(o);
	return NULL;
}

/* The claims' JSON texts, read or fetched, and parsed. */
struct claim_inputs {
	struct json_object *claims, *classes, *slices, *rules;
	char rules_error[512];
};

static void claim_inputs_clear(struct claim_inputs *in)
{
	json_object_put(in->claims);
	json_object_put(in->classes);
	json_object_put(in->slices);
	json_object_put(in->rules);
}

static int obtain_json(const struct doctor_options *o, const char *file, const char *what, const char *flag,
		       const char *const args[], struct json_object **ret, char *why, size_t why_size)
{
	char *text = NULL;
	size_t len = 0;
	int r = obtain(o, file, what, args, &text, &len, why, why_size);
	if (r == 0)
		r = parse_json(flag, text, len, ret, why, why_size);
	free(text);
	return r;
}

static int read_claim_inputs(const struct doctor_options *o, struct claim_inputs *in, char *why, size_t why_size)
{
	const char *k = o->kubectl;
	char selector[128];
	snprintf(selector, sizeof(selector), "spec.driver=%s", o->driver);
	const char *const claims_args[] = { k, "get", "resourceclaims", "--all-namespaces", "-o", "json", NULL };
	const char *const classes_args[] = { k, "get", "deviceclasses", "-o", "json", NULL };
	const char *const slices_args[] = { k, "get", "resourceslices", "--field-selector", selector, "-o", "json", NULL };
	const char *const rules_args[] = { k, "get", "devicetaintrules", "-o", "json", NULL };
	int r;
	if ((r = obtain_json(o, o->claims_file, "the claims", "--claims", claims_args, &in->claims, why, why_size)) < 0 ||
	    (r = obtain_json(o, o->classes_file, "the device classes", "--classes", classes_args, &in->classes, why,
			     why_size)) < 0 ||
	    (r = obtain_json(o, o->slices_file, "the resource slices", "--slices", slices_args, &in->slices, why,
			     why_size)) < 0)
		return r;
	/* A cluster may not serve DeviceTaintRules: said, not fatal. */
	r = obtain_json(o, o->rules_file, "the device taint rules", "--taint-rules", rules_args, &in->rules,
			in->rules_error, sizeof(in->rules_error));
	if (r == -ENOMEM || (r < 0 && o->rules_file)) {
		snprintf(why, why_size, "%s", in->rules_error);
		return r;
	}
	if (r < 0)
		in->rules = NULL;
	else
		in->rules_error[0] = '\0';
	return 0;
}

/* The claim a pod's entry of spec.resourceClaims names: its own
 * resourceClaimName, or the one made from its template, which the pod's
 * status records. NULL when that is not made yet. */
static const char *pod_claim_name(struct json_object *pod, struct json_object *entry)
{
	struct json_object *v, *statuses;
	if (json_object_object_get_ex(entry, "resourceClaimName", &v) && json_object_is_type(v, json_type_string))
		return json_object_get_string(v);
	const char *name = NULL;
	if (json_object_object_get_ex(entry, "name", &v) && json_object_is_type(v, json_type_string))
		name = json_object_get_string(v);
	struct json_object *status;
	if (!name || !json_object_object_get_ex(pod, "status", &status) ||
	    !json_object_object_get_ex(status, "resourceClaimStatuses", &statuses) ||
	    !json_object_is_type(statuses, json_type_array))
		return NULL;
	for (size_t i = 0; i < json_object_array_length(statuses); i++) {
		struct json_object *st = json_object_array_get_idx(statuses, i), *n, *c;
		if (json_object_object_get_ex(st, "name", &n) && json_object_is_type(n, json_type_string) &&
		    strcmp(json_object_get_string(n), name) == 0 && json_object_object_get_ex(st, "resourceClaimName", &c) &&
		    json_object_is_type(c, json_type_string))
			return json_object_get_string(c);
	}
	return NULL;
}

static struct json_object *pod_claims(struct json_object *pod)
{
	struct json_object *spec, *list;
	if (!json_object_object_get_ex(pod, "spec", &spec) || !json_object_object_get_ex(spec, "resourceClaims", &list) ||
	    !json_object_is_type(list, json_type_array) || json_object_array_length(list) == 0)
		return NULL;
	return list;
}

/* explain for claims: the one named (pod NULL), or each of pod's. */
static int explain_claims(const struct doctor_options *o, struct json_object *pod, const char *ns,
			  const char *claim_name, struct report *report, struct json_object **ret_doc, char *why,
			  size_t why_size)
{
	struct claim_inputs in = { 0 };
	struct json_object *doc = NULL, *list = NULL;
	char pod_id[2 * FIT_NAME_MAX] = "";
	int r = read_claim_inputs(o, &in, why, why_size);
	if (r < 0)
		goto out;
	if (pod) {
		ns = str_or_default(meta_str(pod, "namespace"), "default");
		snprintf(pod_id, sizeof(pod_id), "%s/%s", ns, str_or_default(meta_str(pod, "name"), "?"));
	}
	list = json_object_new_array();
	if (!list) {
		r = -ENOMEM;
		goto out;
	}
	if (in.rules_error[0]) {
		r = report_add(report, VERDICT_WARN, "taint-rules", "check that kubectl may list devicetaintrules",
			       "DeviceTaintRules not read (%s): their taints are not counted", in.rules_error);
		if (r < 0)
			goto out;
	}
	struct json_object *entries = pod ? pod_claims(pod) : NULL;
	size_t n = pod ? json_object_array_length(entries) : 1;
	for (size_t i = 0; i < n; i++) {
		const char *name = claim_name;
		if (pod) {
			struct json_object *entry = json_object_array_get_idx(entries, i), *t;
			name = pod_claim_name(pod, entry);
			if (!name) {
				const char *tmpl = json_object_object_get_ex(entry, "resourceClaimTemplateName", &t) &&
							   json_object_is_type(t, json_type_string)
						   ? json_object_get_string(t)
						   : "?";
				r = report_add(report, VERDICT_FAIL, "claim",
					       "kube-controller-manager's resourceclaim controller makes it: check that it runs "
					       "and that the template exists (kubectl get resourceclaimtemplates)",
					       "the claim of pod %s from template %s is not made yet", pod_id, tmpl);
				if (r < 0)
					goto out;
				continue;
			}
		}
		size_t matches = 0;
		const char *claim_ns = ns ? ns : "";
		struct json_object *claim = find_pod(in.claims, claim_ns, name, &matches);
		if (!claim) {
			snprintf(why, why_size, "ResourceClaim %s%s%s not found", claim_ns, claim_ns[0] ? "/" : "", name);
			r = -ENOENT;
			goto out;
		}
		if (matches > 1) {
			snprintf(why, why_size, "%zu claims match '%s': name one with -n NAMESPACE", matches, name);
			r = -EINVAL;
			goto out;
		}
		struct claims_result c;
		r = claims_explain(claim, in.classes, in.slices, in.claims, in.rules, o->driver, &c, why, why_size);
		if (r < 0)
			goto out;
		r = claim_report(&c, pod ? pod_id : NULL, report);
		if (r == 0 && !append(list, claim_json(&c)))
			r = -ENOMEM;
		claims_result_clear(&c);
		if (r < 0)
			goto out;
	}
	doc = report_to_json(report, "explain");
	if (!doc || (pod && !add_str(doc, "pod", pod_id)) || !add_obj(doc, "claims", list)) {
		list = NULL;
		r = -ENOMEM;
		goto out;
	}
	list = NULL;
	*ret_doc = doc;
	doc = NULL;
	r = 0;
out:
	json_object_put(list);
	json_object_put(doc);
	claim_inputs_clear(&in);
	return r;
}

/* When the pod (from pod_text, else from the --pods file) has ResourceClaims:
 * their explanation, 0 or an error. -ENOENT: the pod has none, or is not
 * found here (the pod path says so). */
static int pod_with_claims(const struct doctor_options *o, const char *pod_text, size_t pod_len, const char *ns,
			   const char *name, struct report *report, struct json_object **ret_doc, char *why,
			   size_t why_size)
{
	char *list_text = NULL;
	size_t list_len = 0;
	struct json_object *doc = NULL;
	char reason[512];
	int r;
	if (!pod_text && o->pods_file) {
		r = file_read_bounded(o->pods_file, JSON_MAX_BYTES, &list_text, &list_len, reason, sizeof(reason));
		if (r < 0)
			return -ENOENT; /* the pod path reports it */
		pod_text = list_text;
		pod_len = list_len;
	}
	r = -ENOENT;
	if (!pod_text || parse_json("--pod", pod_text, pod_len, &doc, reason, sizeof(reason)) < 0)
		goto out;
	size_t matches = 0;
	struct json_object *pod = find_pod(doc, ns, name, &matches);
	if (!pod || matches != 1 || !pod_claims(pod))
		goto out;
	r = explain_claims(o, pod, NULL, NULL, report, ret_doc, why, why_size);
	/* A claim not found is no reason to explain the pod otherwise. */
	if (r == -ENOENT)
		r = -ESRCH;
out:
	json_object_put(doc);
	free(list_text);
	return r;
}

int explain_run(const struct doctor_options *o, const char *pod_arg, struct report *report,
		struct json_object **ret_doc, char *why, size_t why_size)
{
	char *pod_text = NULL, *nodes_text = NULL, *pods_text = NULL;
	size_t pod_len = 0, nodes_len = 0, pods_len = 0;
	char ns[FIT_NAME_MAX], name[FIT_NAME_MAX];
	int r;
	if (!pod_arg && !o->pod_file && !o->claim) {
		snprintf(why, why_size, "explain needs a POD (or --pod FILE)");
		return -EINVAL;
	}
	split_pod_arg(pod_arg, o->namespace, ns, sizeof(ns), name, sizeof(name));
	if (o->claim) {
		char claim_ns[FIT_NAME_MAX], claim_name[FIT_NAME_MAX];
		split_pod_arg(o->claim, o->namespace, claim_ns, sizeof(claim_ns), claim_name, sizeof(claim_name));
		return explain_claims(o, NULL, claim_ns, claim_name, report, ret_doc, why, why_size);
	}
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
	/* A pod with ResourceClaims waits for its claims' devices. */
	r = pod_with_claims(o, pod_text, pod_len, ns, name, report, ret_doc, why, why_size);
	if (r != -ENOENT)
		goto out;
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
