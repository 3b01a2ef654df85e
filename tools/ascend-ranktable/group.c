/* SPDX-License-Identifier: Apache-2.0 */
#include "group.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "base/parse.h"
#include "base/strbuf.h"

#define LWS_GROUP_KEY "leaderworkerset.sigs.k8s.io/group-key"
#define LWS_SIZE "leaderworkerset.sigs.k8s.io/size"
#define JOB_UID "batch.kubernetes.io/controller-uid"
#define JOB_INDEX "batch.kubernetes.io/job-completion-index"

/* Where a pod's index is read, first found first. */
static const char *const index_labels[] = {
	RT_INDEX_LABEL,
	JOB_INDEX,
	"apps.kubernetes.io/pod-index",
	"leaderworkerset.sigs.k8s.io/worker-index",
};

/* A StatefulSet's labels that differ from pod to pod (the kubelet's and the
 * controller's), which its selector therefore never holds. */
static const char *const per_pod_labels[] = {
	"statefulset.kubernetes.io/pod-name",
	"apps.kubernetes.io/pod-index",
	"controller-revision-hash",
};

static json_object *at(json_object *o, const char *a, const char *b)
{
	json_object *v = NULL;
	if (!json_object_object_get_ex(o, a, &v) || (b && !json_object_object_get_ex(v, b, &v)))
		return NULL;
	return v;
}

/* o.a.b as a string of at most size-1 bytes into out ("" when absent). */
static int copy_str(json_object *o, const char *a, const char *b, char *out, size_t size, char *why,
		    size_t why_size)
{
	json_object *v = at(o, a, b);
	out[0] = '\0';
	if (!v || json_object_is_type(v, json_type_null))
		return 0;
	if (!json_object_is_type(v, json_type_string))
		return why_invalid(why, why_size, "%s%s%s: not a string", a, b ? "." : "", b ? b : "");
	if (str_copy(out, size, json_object_get_string(v)) < 0)
		return why_fail(why, why_size, -E2BIG, "%s%s%s: longer than %zu bytes", a, b ? "." : "", b ? b : "",
				size - 1);
	return 0;
}

/* A label's (or annotation's) string; NULL when absent or not a string. */
static const char *meta_str(json_object *pod, const char *map, const char *key)
{
	json_object *m = at(pod, "metadata", map), *v;
	if (!m || !json_object_object_get_ex(m, key, &v) || !json_object_is_type(v, json_type_string))
		return NULL;
	return json_object_get_string(v);
}

static int read_index(json_object *pod, struct rt_pod *p, char *why, size_t why_size)
{
	for (size_t i = 0; i < sizeof(index_labels) / sizeof(index_labels[0]); i++) {
		const char *v = meta_str(pod, "labels", index_labels[i]);
		if (!v && strcmp(index_labels[i], JOB_INDEX) == 0)
			v = meta_str(pod, "annotations", JOB_INDEX); /* before the label (Kubernetes 1.28) */
		if (!v)
			continue;
		char text[40];
		if (parse_u32(v, 10, RT_GROUP_MAX - 1, &p->index) < 0)
			return why_invalid(why, why_size, "%s: \"%s\" is no index in 0-%d", index_labels[i],
					   rt_printable(v, text, sizeof(text)), RT_GROUP_MAX - 1);
		p->has_index = true;
		return 0;
	}
	return 0;
}

static int read_controller(json_object *pod, char *uid, size_t size, char *name, size_t name_size,
			   const char **ret_kind, char *why, size_t why_size)
{
	json_object *refs = at(pod, "metadata", "ownerReferences");
	uid[0] = '\0';
	*ret_kind = NULL;
	if (!refs || !json_object_is_type(refs, json_type_array))
		return 0;
	for (size_t i = 0; i < json_object_array_length(refs); i++) {
		json_object *ref = json_object_array_get_idx(refs, i), *c;
		if (!json_object_object_get_ex(ref, "controller", &c) || !json_object_get_boolean(c))
			continue;
		int r = copy_str(ref, "uid", NULL, uid, size, why, why_size);
		if (r == 0 && name)
			r = copy_str(ref, "name", NULL, name, name_size, why, why_size);
		if (r < 0)
			return r;
		json_object *k;
		if (json_object_object_get_ex(ref, "kind", &k) && json_object_is_type(k, json_type_string))
			*ret_kind = json_object_get_string(k);
		return 0;
	}
	return 0;
}

/* The claims of the pod: direct ones by name, templates' by status. */
static int read_claims(json_object *pod, struct rt_pod *p, char *why, size_t why_size)
{
	json_object *spec = at(pod, "spec", "resourceClaims"), *st = at(pod, "status", "resourceClaimStatuses");
	size_t n_spec = spec && json_object_is_type(spec, json_type_array) ? json_object_array_length(spec) : 0;
	size_t n_st = st && json_object_is_type(st, json_type_array) ? json_object_array_length(st) : 0;
	if (n_spec > RT_POD_CLAIMS_MAX)
		return why_fail(why, why_size, -E2BIG, "more than %d resource claims", RT_POD_CLAIMS_MAX);
	p->uses_dra = n_spec > 0;
	for (size_t i = 0; i < n_spec; i++) {
		json_object *e = json_object_array_get_idx(spec, i);
		char name[RT_NAME_MAX], entry[RT_NAME_MAX];
		int r = copy_str(e, "resourceClaimName", NULL, name, sizeof(name), why, why_size);
		if (r == 0)
			r = copy_str(e, "name", NULL, entry, sizeof(entry), why, why_size);
		if (r < 0)
			return r;
		if (name[0]) {
			memcpy(p->claims[p->n_claims++], name, sizeof(name));
			continue;
		}
		/* A template's: the status names the claim made for it. */
		bool named = false;
		for (size_t j = 0; j < n_st && !named; j++) {
			json_object *s = json_object_array_get_idx(st, j);
			char sname[RT_NAME_MAX];
			if ((r = copy_str(s, "name", NULL, sname, sizeof(sname), why, why_size)) < 0 ||
			    (r = copy_str(s, "resourceClaimName", NULL, name, sizeof(name), why, why_size)) < 0)
				return r;
			if (strcmp(sname, entry) == 0 && name[0]) {
				memcpy(p->claims[p->n_claims++], name, sizeof(name));
				named = true;
			}
		}
		if (!named)
			p->n_claims_pending++;
	}
	return 0;
}

int rt_pod_read(json_object *pod, struct rt_pod *ret_pod, char *why, size_t why_size)
{
	static struct rt_pod p; /* 17 KiB: off the stack; the program is one thread */
	p = (struct rt_pod){ 0 };
	if (!json_object_is_type(pod, json_type_object))
		return why_invalid(why, why_size, "a pod is not a JSON object");
	const char *kind;
	char phase[16];
	int r;
	if ((r = copy_str(pod, "metadata", "name", p.name, sizeof(p.name), why, why_size)) < 0 ||
	    (r = copy_str(pod, "metadata", "uid", p.uid, sizeof(p.uid), why, why_size)) < 0 ||
	    (r = copy_str(pod, "spec", "nodeName", p.node, sizeof(p.node), why, why_size)) < 0 ||
	    (r = copy_str(pod, "status", "hostIP", p.host_ip, sizeof(p.host_ip), why, why_size)) < 0 ||
	    (r = copy_str(pod, "status", "phase", phase, sizeof(phase), why, why_size)) < 0 ||
	    (r = read_controller(pod, p.controller_uid, sizeof(p.controller_uid), NULL, 0, &kind, why, why_size)) <
		    0 ||
	    (r = read_index(pod, &p, why, why_size)) < 0 || (r = read_claims(pod, &p, why, why_size)) < 0)
		return r;
	if (!p.name[0] || !p.uid[0])
		return why_invalid(why, why_size, "metadata: no name or uid");
	const char *network = meta_str(pod, "annotations", RT_NETWORK_ANNOTATION);
	if (network && str_copy(p.network, sizeof(p.network), network) < 0)
		return why_fail(why, why_size, -E2BIG, "annotation %s: longer than %d bytes", RT_NETWORK_ANNOTATION,
				RT_NETWORK_MAX);
	p.gone = at(pod, "metadata", "deletionTimestamp") || strcmp(phase, "Succeeded") == 0 ||
		 strcmp(phase, "Failed") == 0;
	*ret_pod = p;
	return 0;
}

static int select_one(struct rt_group *g, const char *key, const char *value, char *why, size_t why_size)
{
	if (str_printf(g->selector, sizeof(g->selector), "%s=%s", key, value) < 0)
		return why_fail(why, why_size, -E2BIG, "label %s: longer than a selector takes", key);
	return 0;
}

/* A StatefulSet's members: the labels every pod of it shares. */
static int select_shared(json_object *pod, struct rt_group *g, char *why, size_t why_size)
{
	json_object *labels = at(pod, "metadata", "labels");
	struct strbuf sb;
	strbuf_init(&sb, g->selector, sizeof(g->selector), NULL);
	if (!labels || !json_object_is_type(labels, json_type_object))
		return why_fail(why, why_size, -ENOENT, "a StatefulSet's pod without labels");
	json_object_object_foreach(labels, key, value)
	{
		bool per_pod = false;
		for (size_t i = 0; i < sizeof(per_pod_labels) / sizeof(per_pod_labels[0]); i++)
			per_pod = per_pod || strcmp(key, per_pod_labels[i]) == 0;
		if (per_pod || !json_object_is_type(value, json_type_string))
			continue;
		if (strbuf_printf(&sb, "%s%s=%s", sb.len ? "," : "", key, json_object_get_string(value)) < 0)
			return why_fail(why, why_size, -E2BIG, "the pod's labels are longer than a selector takes");
	}
	if (!sb.len)
		return why_fail(why, why_size, -ENOENT, "a StatefulSet's pod without shared labels");
	return 0;
}

int rt_group_of(json_object *pod, const char *label_key, struct rt_group *ret_group, char *why, size_t why_size)
{
	struct rt_group g = { 0 };
	const char *v, *kind;
	int r;
	if ((v = meta_str(pod, "labels", label_key))) {
		g.kind = RT_GROUP_LABEL;
		r = select_one(&g, label_key, v, why, why_size);
	} else if ((v = meta_str(pod, "labels", LWS_GROUP_KEY))) {
		g.kind = RT_GROUP_LWS;
		r = select_one(&g, LWS_GROUP_KEY, v, why, why_size);
		const char *size = meta_str(pod, "annotations", LWS_SIZE);
		char text[40];
		if (r == 0 && size && (parse_u32(size, 10, RT_GROUP_MAX, &g.size) < 0 || g.size == 0))
			r = why_invalid(why, why_size, "annotation %s: \"%s\" is no size in 1-%d", LWS_SIZE,
					rt_printable(size, text, sizeof(text)), RT_GROUP_MAX);
	} else if ((r = read_controller(pod, g.owner_uid, sizeof(g.owner_uid), g.owner_name, sizeof(g.owner_name),
				       &kind, why, why_size)) < 0) {
		return r;
	} else if (kind && strcmp(kind, "Job") == 0) {
		g.kind = RT_GROUP_JOB;
		r = select_one(&g, JOB_UID, g.owner_uid, why, why_size);
	} else if (kind && strcmp(kind, "StatefulSet") == 0) {
		g.kind = RT_GROUP_STATEFULSET;
		r = select_shared(pod, &g, why, why_size);
	} else {
		return why_fail(why, why_size, -ENOENT,
				"no group: the pod has no label %s and is owned by no Indexed Job, StatefulSet or "
				"LeaderWorkerSet",
				label_key);
	}
	if (r < 0)
		return r;
	*ret_group = g;
	return 0;
}

bool rt_group_has(const struct rt_group *group, const struct rt_pod *pod)
{
	return group->kind != RT_GROUP_STATEFULSET || strcmp(pod->controller_uid, group->owner_uid) == 0;
}

void rt_group_describe(const struct rt_group *group, char *out, size_t size)
{
	switch (group->kind) {
	case RT_GROUP_LABEL:
		snprintf(out, size, "label %s", group->selector);
		break;
	case RT_GROUP_LWS:
		snprintf(out, size, "LeaderWorkerSet group %s", group->selector);
		break;
	case RT_GROUP_JOB:
		snprintf(out, size, "Job %s", group->owner_name);
		break;
	case RT_GROUP_STATEFULSET:
		snprintf(out, size, "StatefulSet %s", group->owner_name);
		break;
	}
}
