/* SPDX-License-Identifier: Apache-2.0 */
/* The scheduling rules an NPU pod meets; see fit.h. */
#include "fit.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "base/strbuf.h"
#include "quantity.h"

const char *fit_code_name(enum fit_code code)
{
	static const char *const names[FIT_CODE_COUNT] = {
		[FIT_UNSCHEDULABLE] = "unschedulable",
		[FIT_NOT_READY] = "not-ready",
		[FIT_UNTOLERATED_TAINT] = "untolerated-taint",
		[FIT_NODE_SELECTOR_MISMATCH] = "node-selector-mismatch",
		[FIT_NODE_AFFINITY_MISMATCH] = "node-affinity-mismatch",
		[FIT_NO_NPU_CAPACITY] = "no-npu-capacity",
		[FIT_INSUFFICIENT_NPU] = "insufficient-npu",
		[FIT_UNHEALTHY_NPU] = "unhealthy-npu",
	};
	return (unsigned)code < FIT_CODE_COUNT ? names[code] : "unknown";
}

/* ---- JSON access: a wrong type is an absent field ------------------------- */

static struct json_object *get(struct json_object *o, const char *key)
{
	struct json_object *v;
	if (!o || !json_object_is_type(o, json_type_object) || !json_object_object_get_ex(o, key, &v))
		return NULL;
	return v;
}

static struct json_object *get_type(struct json_object *o, const char *key, json_type type)
{
	struct json_object *v = get(o, key);
	return v && json_object_is_type(v, type) ? v : NULL;
}

static const char *get_str(struct json_object *o, const char *key)
{
	struct json_object *v = get_type(o, key, json_type_string);
	return v ? json_object_get_string(v) : NULL;
}

static const char *str_or(const char *s, const char *fallback)
{
	return s ? s : fallback;
}

static bool str_eq(const char *a, const char *b)
{
	return strcmp(str_or(a, ""), str_or(b, "")) == 0;
}

struct json_object *fit_items(struct json_object *doc, bool *ret_single)
{
	*ret_single = false;
	if (!doc)
		return NULL;
	if (json_object_is_type(doc, json_type_array))
		return doc;
	if (!json_object_is_type(doc, json_type_object))
		return NULL;
	struct json_object *items = get_type(doc, "items", json_type_array);
	if (items)
		return items;
	*ret_single = true;
	return doc;
}

/* ---- quantities ----------------------------------------------------------- */

/* A quantity field: a string or a whole JSON number. 0 when absent
 * (*ret_present false); -EINVAL for anything else. */
static int read_quantity(struct json_object *v, int64_t *ret_value, bool *ret_present)
{
	*ret_present = v != NULL;
	if (!v) {
		*ret_value = 0;
		return 0;
	}
	if (json_object_is_type(v, json_type_string))
		return quantity_parse_count(json_object_get_string(v), ret_value);
	if (json_object_is_type(v, json_type_int)) {
		int64_t n = json_object_get_int64(v);
		if (n < 0 || n > QUANTITY_MAX)
			return -ERANGE;
		*ret_value = n;
		return 0;
	}
	return -EINVAL;
}

static int container_request(struct json_object *container, const char *resource, int64_t *ret, char *why,
			     size_t why_size)
{
	struct json_object *resources = get(container, "resources");
	struct json_object *req = get(get(resources, "requests"), resource);
	struct json_object *lim = get(get(resources, "limits"), resource);
	int64_t value;
	bool present;
	struct json_object *v = req ? req : lim;
	int r = read_quantity(v, &value, &present);
	if (r < 0) {
		snprintf(why, why_size, "container %s: %s %s: '%s' is not a whole number", str_or(get_str(container, "name"), "?"),
			 req ? "requests" : "limits", resource, json_object_get_string(v));
		return -EINVAL;
	}
	*ret = value;
	return 0;
}

int fit_pod_request(struct json_object *pod, const char *resource, int64_t *ret_request, char *why, size_t why_size)
{
	struct json_object *spec = get(pod, "spec");
	struct json_object *containers = get_type(spec, "containers", json_type_array);
	struct json_object *inits = get_type(spec, "initContainers", json_type_array);
	int64_t sum = 0, sidecars = 0, init_max = 0, v;
	size_t n = containers ? json_object_array_length(containers) : 0;
	for (size_t i = 0; i < n; i++) {
		if (container_request(json_object_array_get_idx(containers, i), resource, &v, why, why_size) < 0)
			return -EINVAL;
		sum += v;
		if (sum > QUANTITY_MAX)
			return -ERANGE;
	}
	n = inits ? json_object_array_length(inits) : 0;
	for (size_t i = 0; i < n; i++) {
		struct json_object *c = json_object_array_get_idx(inits, i);
		if (container_request(c, resource, &v, why, why_size) < 0)
			return -EINVAL;
		if (str_eq(get_str(c, "restartPolicy"), "Always")) {
			/* A sidecar: runs on beside everything that follows. */
			sidecars += v;
			if (sidecars > QUANTITY_MAX)
				return -ERANGE;
		} else if (sidecars + v > init_max) {
			init_max = sidecars + v;
		}
	}
	int64_t total = sum + sidecars;
	*ret_request = total > init_max ? total : init_max;
	return 0;
}

static bool extended_name(const char *name)
{
	const char *slash = strchr(name, '/');
	if (!slash || slash == name)
		return false;
	/* kubernetes.io and its subdomains are Kubernetes' own resources. */
	size_t domain = (size_t)(slash - name), suffix = strlen("kubernetes.io");
	return !(domain >= suffix && strncmp(slash - suffix, "kubernetes.io", suffix) == 0 &&
		 (domain == suffix || slash[-(long)suffix - 1] == '.'));
}

int fit_pod_extended_resource(struct json_object *pod, char *name, size_t size)
{
	static const char *const lists[] = { "containers", "initContainers" };
	static const char *const kinds[] = { "requests", "limits" };
	const char *found = NULL;
	for (size_t l = 0; l < 2; l++) {
		struct json_object *containers = get_type(get(pod, "spec"), lists[l], json_type_array);
		size_t n = containers ? json_object_array_length(containers) : 0;
		for (size_t i = 0; i < n; i++) {
			struct json_object *resources = get(json_object_array_get_idx(containers, i), "resources");
			for (size_t k = 0; k < 2; k++) {
				struct json_object *map = get_type(resources, kinds[k], json_type_object);
				if (!map)
					continue;
				json_object_object_foreach(map, key, value)
				{
					(void)value;
					if (!extended_name(key))
						continue;
					if (found && strcmp(found, key) != 0)
						return -E2BIG;
					found = key;
				}
			}
		}
	}
	if (!found)
		return -ENOENT;
	if (strlen(found) >= size)
		return -ENAMETOOLONG;
	memcpy(name, found, strlen(found) + 1);
	return 0;
}

/* ---- the filters ---------------------------------------------------------- */

static void add_reason(struct fit_node *node, enum fit_code code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void add_reason(struct fit_node *node, enum fit_code code, const char *fmt, ...)
{
	for (size_t i = 0; i < node->n_reasons; i++)
		if (node->reasons[i].code == code)
			return;
	struct fit_reason *r = &node->reasons[node->n_reasons++];
	r->code = code;
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(r->detail, sizeof(r->detail), fmt, ap);
	va_end(ap);
	if (n < 0)
		r->detail[0] = '\0';
}

static bool tolerates(struct json_object *tolerations, const char *key, const char *value, const char *effect)
{
	size_t n = tolerations ? json_object_array_length(tolerations) : 0;
	for (size_t i = 0; i < n; i++) {
		struct json_object *t = json_object_array_get_idx(tolerations, i);
		const char *t_effect = get_str(t, "effect"), *t_key = get_str(t, "key");
		const char *op = str_or(get_str(t, "operator"), "Equal");
		if (t_effect && t_effect[0] && strcmp(t_effect, effect) != 0)
			continue;
		if (!t_key || !t_key[0]) {
			/* An empty key with Exists tolerates everything. */
			if (strcmp(op, "Exists") == 0)
				return true;
			continue;
		}
		if (strcmp(t_key, key) != 0)
			continue;
		if (strcmp(op, "Exists") == 0 || (strcmp(op, "Equal") == 0 && str_eq(get_str(t, "value"), value)))
			return true;
	}
	return false;
}

/* A taint the node lifecycle controller sets for a condition that has a
 * reason of its own (cordoned, not ready): named by that reason. */
static bool condition_taint(const struct fit_node *out, const char *key)
{
	for (size_t i = 0; i < out->n_reasons; i++) {
		enum fit_code code = out->reasons[i].code;
		if (code == FIT_UNSCHEDULABLE && strcmp(key, "node.kubernetes.io/unschedulable") == 0)
			return true;
		if (code == FIT_NOT_READY && (strcmp(key, "node.kubernetes.io/not-ready") == 0 ||
					      strcmp(key, "node.kubernetes.io/unreachable") == 0))
			return true;
	}
	return false;
}

static void check_taints(struct fit_node *out, struct json_object *node, struct json_object *tolerations)
{
	struct json_object *taints = get_type(get(node, "spec"), "taints", json_type_array);
	size_t n = taints ? json_object_array_length(taints) : 0;
	for (size_t i = 0; i < n; i++) {
		struct json_object *t = json_object_array_get_idx(taints, i);
		const char *key = str_or(get_str(t, "key"), ""), *value = str_or(get_str(t, "value"), "");
		const char *effect = str_or(get_str(t, "effect"), "");
		if (strcmp(effect, "NoSchedule") != 0 && strcmp(effect, "NoExecute") != 0)
			continue;
		if (tolerates(tolerations, key, value, effect))
			continue;
		/* The scheduler names the first untolerated taint, whatever set it. */
		if (!out->taint_scheduler[0])
			snprintf(out->taint_scheduler, sizeof(out->taint_scheduler),
				 "node(s) had untolerated taint {%s: %s}", key, value);
		if (condition_taint(out, key))
			continue;
		add_reason(out, FIT_UNTOLERATED_TAINT, "%s%s%s:%s", key, value[0] ? "=" : "", value, effect);
		snprintf(out->taint, sizeof(out->taint), "{key: %s, operator: Equal, value: \"%s\", effect: %s}", key,
			 value, effect);
		return;
	}
}

static bool int_of(const char *s, long long *ret)
{
	if (!s || !*s)
		return false;
	char *end;
	errno = 0;
	long long v = strtoll(s, &end, 10);
	if (errno || *end)
		return false;
	*ret = v;
	return true;
}

/* One requirement {key, operator, values} against a label value (NULL when
 * the node lacks the label). Writes why it fails. */
static bool requirement_matches(struct json_object *req, struct json_object *labels, char *why, size_t why_size)
{
	const char *key = str_or(get_str(req, "key"), "");
	const char *op = str_or(get_str(req, "operator"), "");
	struct json_object *values = get_type(req, "values", json_type_array);
	const char *have = get_str(labels, key);
	size_t n = values ? json_object_array_length(values) : 0;
	char list[160];
	struct strbuf sb;
	strbuf_init(&sb, list, sizeof(list), "...");
	bool in = false;
	for (size_t i = 0; i < n; i++) {
		struct json_object *v = json_object_array_get_idx(values, i);
		const char *s = json_object_is_type(v, json_type_string) ? json_object_get_string(v) : "";
		strbuf_printf(&sb, "%s%s", i ? "," : "", s);
		if (have && strcmp(have, s) == 0)
			in = true;
	}
	bool ok;
	if (strcmp(op, "In") == 0) {
		ok = in;
	} else if (strcmp(op, "NotIn") == 0) {
		ok = !in;
	} else if (strcmp(op, "Exists") == 0) {
		ok = have != NULL;
	} else if (strcmp(op, "DoesNotExist") == 0) {
		ok = have == NULL;
	} else if (strcmp(op, "Gt") == 0 || strcmp(op, "Lt") == 0) {
		long long want, got;
		struct json_object *v0 = n == 1 ? json_object_array_get_idx(values, 0) : NULL;
		ok = v0 && json_object_is_type(v0, json_type_string) && int_of(json_object_get_string(v0), &want) &&
		     int_of(have, &got) && (op[0] == 'G' ? got > want : got < want);
	} else {
		snprintf(why, why_size, "%s: unknown operator '%s'", key, op);
		return false;
	}
	if (!ok) {
		if (have)
			snprintf(why, why_size, "%s %s [%s]: the node has %s=%s", key, op, list, key, have);
		else
			snprintf(why, why_size, "%s %s [%s]: the node has no label %s", key, op, list, key);
	}
	return ok;
}

static void check_selector(struct fit_node *out, struct json_object *pod_spec, struct json_object *labels)
{
	struct json_object *selector = get_type(pod_spec, "nodeSelector", json_type_object);
	if (!selector)
		return;
	json_object_object_foreach(selector, key, val)
	{
		const char *want = json_object_is_type(val, json_type_string) ? json_object_get_string(val) : "";
		const char *have = get_str(labels, key);
		if (have && strcmp(have, want) == 0)
			continue;
		snprintf(out->selector_label, sizeof(out->selector_label), "%s=%s", key, want);
		if (have)
			add_reason(out, FIT_NODE_SELECTOR_MISMATCH, "nodeSelector %s=%s: the node has %s=%s", key, want,
				   key, have);
		else
			add_reason(out, FIT_NODE_SELECTOR_MISMATCH, "nodeSelector %s=%s: the node has no label %s", key,
				   want, key);
		return;
	}
}

static void check_affinity(struct fit_node *out, struct json_object *pod_spec, struct json_object *labels)
{
	struct json_object *required =
		get(get(get(pod_spec, "affinity"), "nodeAffinity"), "requiredDuringSchedulingIgnoredDuringExecution");
	if (!required)
		return;
	struct json_object *terms = get_type(required, "nodeSelectorTerms", json_type_array);
	size_t n = terms ? json_object_array_length(terms) : 0;
	char first_why[FIT_DETAIL_MAX] = "no nodeSelectorTerms";
	/* metadata.name is the one field matchFields may name. */
	struct json_object *fields = json_object_new_object();
	struct json_object *name = json_object_new_string(out->name);
	if (fields && name && json_object_object_add(fields, "metadata.name", name) == 0)
		name = NULL;
	json_object_put(name);
	for (size_t i = 0; i < n; i++) {
		struct json_object *term = json_object_array_get_idx(terms, i);
		struct json_object *exprs = get_type(term, "matchExpressions", json_type_array);
		struct json_object *field_exprs = get_type(term, "matchFields", json_type_array);
		size_t ne = exprs ? json_object_array_length(exprs) : 0;
		size_t nf = field_exprs ? json_object_array_length(field_exprs) : 0;
		char why[FIT_DETAIL_MAX] = "an empty term matches no node";
		bool ok = ne + nf > 0;
		for (size_t j = 0; ok && j < ne; j++)
			ok = requirement_matches(json_object_array_get_idx(exprs, j), labels, why, sizeof(why));
		for (size_t j = 0; ok && j < nf; j++)
			ok = requirement_matches(json_object_array_get_idx(field_exprs, j), fields, why, sizeof(why));
		if (ok) {
			json_object_put(fields);
			return;
		}
		if (i == 0)
			memcpy(first_why, why, sizeof(first_why));
	}
	json_object_put(fields);
	add_reason(out, FIT_NODE_AFFINITY_MISMATCH, "required node affinity: %s%s", first_why,
		   n > 1 ? " (and no other term matches)" : "");
}

/* ---- pods bound to nodes -------------------------------------------------- */

struct bound {
	const char *node;
	int64_t request;
};

static bool same_pod(struct json_object *a, struct json_object *b)
{
	struct json_object *ma = get(a, "metadata"), *mb = get(b, "metadata");
	const char *ua = get_str(ma, "uid"), *ub = get_str(mb, "uid");
	if (ua && ub)
		return strcmp(ua, ub) == 0;
	return str_eq(get_str(ma, "name"), get_str(mb, "name")) &&
	       str_eq(str_or(get_str(ma, "namespace"), "default"), str_or(get_str(mb, "namespace"), "default"));
}

/* The bound, unfinished pods that request the resource. */
static int collect_bound(struct json_object *pod, struct json_object *pods, const char *resource,
			 struct bound **ret_bound, size_t *ret_n, char *why, size_t why_size)
{
	bool single;
	struct json_object *items = fit_items(pods, &single);
	size_t n = !items ? 0 : single ? 1 : json_object_array_length(items);
	if (n > FIT_MAX_PODS) {
		snprintf(why, why_size, "%zu pods: more than %d", n, FIT_MAX_PODS);
		return -E2BIG;
	}
	struct bound *bound = calloc(n ? n : 1, sizeof(*bound));
	if (!bound)
		return -ENOMEM;
	size_t kept = 0;
	for (size_t i = 0; i < n; i++) {
		struct json_object *p = single ? items : json_object_array_get_idx(items, i);
		const char *node = get_str(get(p, "spec"), "nodeName");
		const char *phase = str_or(get_str(get(p, "status"), "phase"), "");
		if (!node || !node[0] || strcmp(phase, "Succeeded") == 0 || strcmp(phase, "Failed") == 0 ||
		    same_pod(p, pod))
			continue;
		int64_t req;
		char pod_why[256];
		if (fit_pod_request(p, resource, &req, pod_why, sizeof(pod_why)) < 0)
			continue; /* the API server admitted it: count what can be read */
		if (req == 0)
			continue;
		bound[kept++] = (struct bound){ .node = node, .request = req };
	}
	*ret_bound = bound;
	*ret_n = kept;
	return 0;
}

/* ---- one node ------------------------------------------------------------- */

static bool ready(struct json_object *node, char *why, size_t why_size)
{
	struct json_object *conds = get_type(get(node, "status"), "conditions", json_type_array);
	size_t n = conds ? json_object_array_length(conds) : 0;
	for (size_t i = 0; i < n; i++) {
		struct json_object *c = json_object_array_get_idx(conds, i);
		if (!str_eq(get_str(c, "type"), "Ready"))
			continue;
		const char *status = str_or(get_str(c, "status"), "Unknown");
		if (strcmp(status, "True") == 0)
			return true;
		snprintf(why, why_size, "Ready is %s%s%s", status, get_str(c, "message") ? ": " : "",
			 str_or(get_str(c, "message"), ""));
		return false;
	}
	snprintf(why, why_size, "the node reports no Ready condition");
	return false;
}

/* The scheduler stops at a node's first failing filter and reports that
 * one: NodeUnschedulable, TaintToleration (which also covers not-ready
 * nodes through their node.kubernetes.io/not-ready taint), NodeAffinity,
 * NodeResourcesFit. A not-ready node without that taint is named last. */
static void set_scheduler_reason(struct fit_node *out, const char *resource)
{
	bool has[FIT_CODE_COUNT] = { false };
	for (size_t i = 0; i < out->n_reasons; i++)
		has[out->reasons[i].code] = true;
	char *dst = out->scheduler_reason;
	size_t size = sizeof(out->scheduler_reason);
	if (has[FIT_UNSCHEDULABLE])
		snprintf(dst, size, "node(s) were unschedulable");
	else if (out->taint_scheduler[0])
		snprintf(dst, size, "%s", out->taint_scheduler);
	else if (has[FIT_NODE_SELECTOR_MISMATCH] || has[FIT_NODE_AFFINITY_MISMATCH])
		snprintf(dst, size, "node(s) didn't match Pod's node affinity/selector");
	else if (has[FIT_NO_NPU_CAPACITY] || has[FIT_INSUFFICIENT_NPU])
		snprintf(dst, size, "Insufficient %s", resource);
	else if (has[FIT_NOT_READY])
		snprintf(dst, size, "node(s) were not ready");
	else
		dst[0] = '\0';
}

static void evaluate_node(struct json_object *pod, int64_t request, struct json_object *node, const struct bound *bound,
			  size_t n_bound, const char *resource, struct fit_node *out)
{
	struct json_object *meta = get(node, "metadata"), *spec = get(node, "spec"), *status = get(node, "status");
	struct json_object *pod_spec = get(pod, "spec");
	struct json_object *tolerations = get_type(pod_spec, "tolerations", json_type_array);
	struct json_object *labels = get_type(meta, "labels", json_type_object);
	snprintf(out->name, sizeof(out->name), "%s", str_or(get_str(meta, "name"), "?"));

	/* NodeUnschedulable: a cordoned node, unless tolerated (DaemonSets). */
	struct json_object *unsched = get_type(spec, "unschedulable", json_type_boolean);
	if (unsched && json_object_get_boolean(unsched) &&
	    !tolerates(tolerations, "node.kubernetes.io/unschedulable", "", "NoSchedule"))
		add_reason(out, FIT_UNSCHEDULABLE, "spec.unschedulable is true (cordoned)");
	char why[FIT_DETAIL_MAX];
	if (!ready(node, why, sizeof(why)))
		add_reason(out, FIT_NOT_READY, "%s", why);
	check_taints(out, node, tolerations);
	check_selector(out, pod_spec, labels);
	check_affinity(out, pod_spec, labels);

	/* NodeResourcesFit. */
	bool present, capacity_present;
	int64_t capacity = 0, allocatable = 0;
	if (read_quantity(get(get(status, "capacity"), resource), &capacity, &capacity_present) < 0)
		capacity = 0;
	if (read_quantity(get(get(status, "allocatable"), resource), &allocatable, &present) < 0 || !present)
		allocatable = present ? 0 : capacity;
	out->capacity = capacity;
	out->allocatable = allocatable;
	out->has_npu = capacity > 0 || allocatable > 0;
	for (size_t i = 0; i < n_bound; i++) {
		if (strcmp(bound[i].node, out->name) == 0) {
			out->used += bound[i].request;
			out->pods_using++;
		}
	}
	out->free = allocatable > out->used ? allocatable - out->used : 0;
	if (request > 0) {
		bool short_of = false;
		if (!out->has_npu) {
			if (capacity_present)
				add_reason(out, FIT_NO_NPU_CAPACITY,
					   "the node advertises 0 %s: its device plugin runs but found no chips", resource);
			else
				add_reason(out, FIT_NO_NPU_CAPACITY, "the node advertises no %s", resource);
			short_of = true;
		} else if (out->free < request) {
			add_reason(out, FIT_INSUFFICIENT_NPU,
				   "allocatable %" PRId64 ", %" PRId64 " taken by %zu pod(s), %" PRId64 " free, %" PRId64
				   " requested",
				   allocatable, out->used, out->pods_using, out->free, request);
			short_of = true;
		}
		if (short_of && capacity > allocatable)
			add_reason(out, FIT_UNHEALTHY_NPU, "capacity %" PRId64 " > allocatable %" PRId64 ": %" PRId64
				   " chip(s) Unhealthy", capacity, allocatable, capacity - allocatable);
	}
	out->fits = out->n_reasons == 0;
	set_scheduler_reason(out, resource);
}

/* ---- the cluster ---------------------------------------------------------- */

static int compare_strings(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The most NPUs free on a node that fails for want of them alone. */
static int64_t fit_most_free(const struct fit_cluster *c)
{
	int64_t most = 0;
	for (size_t i = 0; i < c->n_nodes; i++) {
		const struct fit_node *n = &c->nodes[i];
		bool resource_only = n->has_npu;
		for (size_t k = 0; k < n->n_reasons; k++)
			resource_only &= n->reasons[k].code == FIT_INSUFFICIENT_NPU || n->reasons[k].code == FIT_UNHEALTHY_NPU;
		if (resource_only && n->free > most)
			most = n->free;
	}
	return most;
}

static void reason_fix(struct strbuf *sb, const struct fit_node *node, const struct fit_reason *reason,
		       const char *resource, int64_t most_free)
{
	switch (reason->code) {
	case FIT_UNSCHEDULABLE:
		strbuf_printf(sb, "kubectl uncordon %s once it may take work", node->name);
		break;
	case FIT_NOT_READY:
		strbuf_printf(sb, "%s is not Ready: kubectl describe node %s, and check the kubelet on it", node->name,
			      node->name);
		break;
	case FIT_UNTOLERATED_TAINT:
		strbuf_printf(sb, "add to the pod's spec: tolerations: [%s] (the taint of %s)", node->taint, node->name);
		break;
	case FIT_NODE_SELECTOR_MISMATCH:
		strbuf_printf(sb, "kubectl label nodes %s %s --overwrite if the pod belongs there, or change the pod's "
				  "nodeSelector",
			      node->name, node->selector_label);
		break;
	case FIT_NODE_AFFINITY_MISMATCH:
		strbuf_printf(sb, "label %s to satisfy the pod's required node affinity if the pod belongs there, or "
				  "change the affinity",
			      node->name);
		break;
	case FIT_NO_NPU_CAPACITY:
		strbuf_printf(sb, "%s advertises no %s: if it has NPUs, run ascend-doctor node there", node->name,
			      resource);
		break;
	case FIT_INSUFFICIENT_NPU:
		strbuf_printf(sb, "free NPUs (kubectl get pods -A -o wide --field-selector spec.nodeName=%s) or add NPU nodes",
			      node->name);
		if (most_free > 0)
			strbuf_printf(sb, ", or request at most %" PRId64 " (the most free on a node that takes the pod "
					  "otherwise)",
				      most_free);
		break;
	case FIT_UNHEALTHY_NPU:
		strbuf_printf(sb, "chips are Unhealthy on %s: run ascend-doctor node there (npu-smi info)", node->name);
		break;
	case FIT_CODE_COUNT:
		break;
	}
}

void fit_node_fix(const struct fit_cluster *cluster, const struct fit_node *node, const char *resource, char *buf,
		  size_t size)
{
	struct strbuf sb;
	strbuf_init(&sb, buf, size, "...");
	int64_t most_free = fit_most_free(cluster);
	for (size_t k = 0; k < node->n_reasons; k++) {
		strbuf_printf(&sb, "%s", k ? "; " : "");
		reason_fix(&sb, node, &node->reasons[k], resource, most_free);
	}
}

static int compare_parts(const void *a, const void *b)
{
	return strcmp(a, b);
}

static void summarize(struct fit_cluster *c, const char *resource)
{
	struct strbuf sb;
	strbuf_init(&sb, c->summary, sizeof(c->summary), "...");
	strbuf_printf(&sb, "%zu/%zu nodes are available", c->n_fit, c->n_nodes);
	/* The scheduler's histogram: each distinct reason with its count, the
	 * "<count> <reason>" strings sorted. */
	const char **reasons = calloc(c->n_nodes ? c->n_nodes : 1, sizeof(*reasons));
	if (reasons) {
		size_t n = 0;
		for (size_t i = 0; i < c->n_nodes; i++)
			if (!c->nodes[i].fits && c->nodes[i].scheduler_reason[0])
				reasons[n++] = c->nodes[i].scheduler_reason;
		qsort(reasons, n, sizeof(*reasons), compare_strings);
		char(*parts)[FIT_DETAIL_MAX + 16] = calloc(n ? n : 1, sizeof(*parts));
		size_t n_parts = 0;
		for (size_t i = 0; parts && i < n;) {
			size_t j = i;
			while (j < n && strcmp(reasons[j], reasons[i]) == 0)
				j++;
			snprintf(parts[n_parts++], sizeof(parts[0]), "%zu %s", j - i, reasons[i]);
			i = j;
		}
		if (parts) {
			qsort(parts, n_parts, sizeof(parts[0]), compare_parts);
			for (size_t i = 0; i < n_parts; i++)
				strbuf_printf(&sb, "%s%s", i ? ", " : ": ", parts[i]);
		}
		free(parts);
		free(reasons);
	}
	strbuf_printf(&sb, ".");

	/* The fix, from the nodes that could hold the pod's NPUs: one per
	 * distinct reason, naming its first node. */
	strbuf_init(&sb, c->fix, sizeof(c->fix), "...");
	if (c->request == 0) {
		strbuf_printf(&sb, "the pod requests no %s: set resources.limits: {%s: \"1\"} in its containers", resource,
			      resource);
		if (c->n_fit > 0)
			return;
		strbuf_printf(&sb, "; ");
	}
	for (size_t i = 0; c->n_fit > 0 && i < c->n_nodes; i++) {
		if (c->nodes[i].fits) {
			strbuf_printf(&sb,
				      "none needed for %s: the pod fits on %s; if it stays Pending, kubectl describe pod "
				      "names another reason (cpu, memory, ports, volumes)",
				      resource, c->nodes[i].name);
			return;
		}
	}
	size_t npu_nodes = 0;
	int64_t most_free = fit_most_free(c);
	for (size_t i = 0; i < c->n_nodes; i++)
		npu_nodes += c->nodes[i].has_npu;
	if (c->n_nodes == 0) {
		strbuf_printf(&sb, "the cluster lists no nodes: check the kubeconfig or the --nodes file");
		return;
	}
	if (npu_nodes == 0) {
		strbuf_printf(&sb,
			      "no node advertises %s: the device plugin is not running or not registered on the NPU "
			      "nodes; kubectl get pods -n kube-system -l name=ascend-device-plugin -o wide, then "
			      "ascend-doctor node on an NPU node",
			      resource);
		return;
	}
	bool done[FIT_CODE_COUNT] = { false };
	const char *sep = "";
	for (int code = 0; code < FIT_CODE_COUNT; code++) {
		for (size_t i = 0; i < c->n_nodes && !done[code]; i++) {
			const struct fit_node *node = &c->nodes[i];
			for (size_t k = 0; node->has_npu && k < node->n_reasons; k++) {
				if (node->reasons[k].code != (enum fit_code)code)
					continue;
				done[code] = true;
				strbuf_printf(&sb, "%s", sep);
				reason_fix(&sb, node, &node->reasons[k], resource, most_free);
				sep = "; ";
				break;
			}
		}
	}
}

int fit_cluster_evaluate(struct json_object *pod, struct json_object *nodes, struct json_object *pods,
			 const char *resource, struct fit_cluster *ret_cluster, char *why, size_t why_size)
{
	struct fit_cluster c = { 0 };
	struct bound *bound = NULL;
	size_t n_bound = 0;
	int r;
	if (!pod || !json_object_is_type(pod, json_type_object) || !get_type(pod, "spec", json_type_object)) {
		snprintf(why, why_size, "the pod is not a Pod object (no spec)");
		return -EINVAL;
	}
	struct json_object *meta = get(pod, "metadata");
	snprintf(c.pod_name, sizeof(c.pod_name), "%s", str_or(get_str(meta, "name"), "?"));
	snprintf(c.pod_namespace, sizeof(c.pod_namespace), "%s", str_or(get_str(meta, "namespace"), "default"));
	r = fit_pod_request(pod, resource, &c.request, why, why_size);
	if (r < 0)
		goto fail;
	bool single;
	struct json_object *items = fit_items(nodes, &single);
	if (!items) {
		snprintf(why, why_size, "the node list is not a List, an array or a Node");
		r = -EINVAL;
		goto fail;
	}
	size_t n = single ? 1 : json_object_array_length(items);
	if (n > FIT_MAX_NODES) {
		snprintf(why, why_size, "%zu nodes: more than %d", n, FIT_MAX_NODES);
		r = -E2BIG;
		goto fail;
	}
	r = collect_bound(pod, pods, resource, &bound, &n_bound, why, why_size);
	if (r < 0)
		goto fail;
	c.nodes = calloc(n ? n : 1, sizeof(*c.nodes));
	if (!c.nodes) {
		r = -ENOMEM;
		goto fail;
	}
	for (size_t i = 0; i < n; i++) {
		struct json_object *node = single ? items : json_object_array_get_idx(items, i);
		evaluate_node(pod, c.request, node, bound, n_bound, resource, &c.nodes[c.n_nodes]);
		if (c.nodes[c.n_nodes].fits)
			c.n_fit++;
		c.n_nodes++;
	}
	summarize(&c, resource);
	free(bound);
	*ret_cluster = c;
	return 0;
fail:
	free(bound);
	fit_cluster_clear(&c);
	return r;
}

void fit_cluster_clear(struct fit_cluster *cluster)
{
	if (!cluster)
		return;
	free(cluster->nodes);
	*cluster = (struct fit_cluster){ 0 };
}
