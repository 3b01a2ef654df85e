/* SPDX-License-Identifier: Apache-2.0 */
/* The workload reader; see podspec.h. Each YAML document becomes a small
 * tree (config/yaml_tree.h), which is walked the way the API server decodes,
 * defaults and validates a pod. */
#include "podspec.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/file.h"
#include "base/k8s_names.h"
#include "base/macro.h"
#include "base/parse.h"
#include "config/yaml_tree.h"

/* Room for the deepest path the walk builds with one clipped key in it. */
#define PATH_SIZE 384
/* Input-controlled text quoted in a path or a message is cut to this. */
#define CLIP 96

struct ctx {
	struct podspec *spec;
	char *err;
	size_t err_size;
};

/* A kind whose pods the reader takes, and its restartPolicy rule. */
struct workload_kind {
	const char *kind;
	bool pod;      /* the object is the pod itself */
	bool job;      /* OnFailure or Never, and said so */
	bool always;   /* Always only (controllers that restart pods) */
};

static const struct workload_kind workload_kinds[] = {
	{ .kind = "Pod", .pod = true },
	{ .kind = "DaemonSet", .always = true },
	{ .kind = "Deployment", .always = true },
	{ .kind = "ReplicaSet", .always = true },
	{ .kind = "StatefulSet", .always = true },
	{ .kind = "Job", .job = true },
};

__attribute__((format(printf, 4, 5))) static int fail(struct ctx *c, const struct ynode *at, int r,
						       const char *fmt, ...)
{
	if (c->err_size == 0)
		return r;
	char msg[768];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (at)
		snprintf(c->err, c->err_size, "line %zu: %s", at->line, msg);
	else
		snprintf(c->err, c->err_size, "%s", msg);
	return r;
}

static int fail_nomem(struct ctx *c)
{
	return fail(c, NULL, -ENOMEM, "out of memory");
}

__attribute__((format(printf, 2, 3))) static int ignore(struct ctx *c, const char *fmt, ...)
{
	struct podspec *spec = c->spec;
	if (spec->n_ignored >= PODSPEC_MAX_IGNORED) {
		spec->n_ignored_more++;
		return 0;
	}
	char entry[PATH_SIZE + 2 * CLIP];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(entry, sizeof(entry), fmt, ap);
	va_end(ap);
	char *s = arena_strdup(&spec->arena, entry);
	if (!s)
		return fail_nomem(c);
	spec->ignored[spec->n_ignored++] = s;
	return 0;
}

static bool str_in(const char *s, const char *const *set, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(s, set[i]) == 0)
			return true;
	return false;
}

static bool span_of(const char *s, const char *set)
{
	return s[0] != '\0' && s[strspn(s, set)] == '\0';
}

/* --- Typed access to the tree --- */

static bool is_null(const struct ynode *n)
{
	return n->type == YN_SCALAR && n->kind == YS_NULL;
}

static bool key_is(const struct ynode *key, const char *name)
{
	return key->type == YN_SCALAR && strcmp(key->value, name) == 0;
}

#define for_each_pair(map, k, v) \
	for (const struct ynode *k = (map)->first, *v = k ? k->next : NULL; k && v; \
	     k = v->next, v = k ? k->next : NULL)

static const struct ynode *map_get(const struct ynode *map, const char *name)
{
	if (map->type != YN_MAP)
		return NULL;
	for_each_pair(map, k, v)
		if (key_is(k, name))
			return v;
	return NULL;
}

/* path.key, the key cut to CLIP bytes. Paths only name things in messages,
 * and PATH_SIZE holds the deepest one the walk builds, so a cut path (never
 * seen) would only read oddly. */
static void path_key(char *buf, size_t size, const char *path, const char *key)
{
	size_t len = strlen(key);
	int n = path[0] == '\0' ? snprintf(buf, size, "%.*s%s", CLIP, key, len > CLIP ? "..." : "")
				: snprintf(buf, size, "%s.%.*s%s", path, CLIP, key, len > CLIP ? "..." : "");
	if (n < 0)
		buf[0] = '\0';
}

static void path_index(char *buf, size_t size, const char *path, size_t i)
{
	if (snprintf(buf, size, "%s[%zu]", path, i) < 0)
		buf[0] = '\0';
}

static int ignore_key(struct ctx *c, const char *path, const struct ynode *key)
{
	char p[PATH_SIZE];
	path_key(p, sizeof(p), path, key->value);
	return ignore(c, "%s", p);
}

/* A mapping, or null (no pairs). Walked mappings are small: at most
 * PODSPEC_MAX_ITEMS pairs, which also bounds the duplicate-key check. */
static int want_map(struct ctx *c, const struct ynode *n, const char *path)
{
	if (is_null(n))
		return 0;
	if (n->type != YN_MAP)
		return fail(c, n, -EINVAL, "%s must be a mapping", path);
	if (n->n_children / 2 > PODSPEC_MAX_ITEMS)
		return fail(c, n, -E2BIG, "%s has more than %d entries", path, PODSPEC_MAX_ITEMS);
	for_each_pair(n, k, v)
		for (const struct ynode *k2 = v->next; k2 && k2->next; k2 = k2->next->next)
			if (strcmp(k->value, k2->value) == 0)
				return fail(c, k2, -EINVAL, "%s: the key \"%.*s\" appears twice", path, CLIP,
					    k->value);
	return 0;
}

/* Lists every key of a mapping as ignored. */
static int ignore_all(struct ctx *c, const struct ynode *n, const char *path)
{
	int r = want_map(c, n, path);
	if (r < 0)
		return r;
	for_each_pair(n, k, v) {
		r = ignore_key(c, path, k);
		if (r < 0)
			return r;
	}
	return 0;
}

/* A sequence of at most max items, or null (none). */
static int want_seq(struct ctx *c, const struct ynode *n, const char *path, size_t max, const char *what)
{
	if (is_null(n))
		return 0;
	if (n->type != YN_SEQ)
		return fail(c, n, -EINVAL, "%s must be a list of %s", path, what);
	if (n->n_children > max)
		return fail(c, n, -E2BIG, "%s has more than %zu entries", path, max);
	return 0;
}

static int copy_string(struct ctx *c, const struct ynode *n, const char *path, char **ret)
{
	if (n->len > PODSPEC_STRING_MAX)
		return fail(c, n, -E2BIG, "%s is longer than %d bytes", path, PODSPEC_STRING_MAX);
	char *s = arena_alloc(&c->spec->arena, n->len + 1);
	if (!s)
		return fail_nomem(c);
	memcpy(s, n->value, n->len);
	*ret = s;
	return 0;
}

/* A string; null leaves *ret alone, as decoding JSON null into a Go string does. */
static int get_string(struct ctx *c, const struct ynode *n, const char *path, char **ret)
{
	if (is_null(n))
		return 0;
	if (n->type != YN_SCALAR || n->kind != YS_STR)
		return fail(c, n, -EINVAL, "%s must be a string", path);
	return copy_string(c, n, path, ret);
}

static int get_bool(struct ctx *c, const struct ynode *n, const char *path, bool *ret)
{
	if (is_null(n))
		return 0;
	if (n->type != YN_SCALAR || n->kind != YS_BOOL)
		return fail(c, n, -EINVAL, "%s must be true or false", path);
	*ret = yaml_true(n->value);
	return 0;
}

/* A decimal integer in [0, max]; *set (when given) tells whether one was. */
static int get_int(struct ctx *c, const struct ynode *n, const char *path, int64_t max, int64_t *ret, bool *set)
{
	if (is_null(n))
		return 0;
	if (n->type != YN_SCALAR || n->kind != YS_INT)
		return fail(c, n, -EINVAL, "%s must be an integer", path);
	const char *s = n->value;
	bool negative = *s == '-';
	if (*s == '-' || *s == '+')
		s++;
	uint64_t u;
	int r = parse_u64(s, 10, (uint64_t)max, &u);
	if (r == -EINVAL) /* 0x10, 1_000: integers to YAML, not to us */
		return fail(c, n, -EINVAL, "%s must be a decimal integer", path);
	if (r < 0 || (negative && u != 0))
		return fail(c, n, -EINVAL, "%s must be an integer from 0 to %lld", path, (long long)max);
	*ret = (int64_t)u;
	if (set)
		*set = true;
	return 0;
}

static int get_u32(struct ctx *c, const struct ynode *n, const char *path, uint32_t *ret)
{
	int64_t v = 0;
	bool set = false;
	int r = get_int(c, n, path, INT32_MAX, &v, &set);
	if (r == 0 && set)
		*ret = (uint32_t)v;
	return r;
}

/* A list of strings, at most PODSPEC_MAX_ITEMS. */
static int get_string_list(struct ctx *c, const struct ynode *n, const char *path, char ***ret, size_t *ret_n)
{
	const char *what = "strings";
	int r = want_seq(c, n, path, PODSPEC_MAX_ITEMS, what);
	if (r < 0 || n->n_children == 0)
		return r;
	char **list = arena_alloc(&c->spec->arena, n->n_children * sizeof(*list));
	if (!list)
		return fail_nomem(c);
	size_t i = 0;
	for (const struct ynode *item = n->first; item; item = item->next, i++) {
		if (item->type != YN_SCALAR || item->kind != YS_STR)
			return fail(c, item, -EINVAL, "%s must be a list of %s", path, what);
		r = copy_string(c, item, path, &list[i]);
		if (r < 0)
			return r;
	}
	*ret = list;
	*ret_n = i;
	return 0;
}

/* --- Kubernetes value rules --- */

/* An RFC 1123 label: container, volume and port names. */
static bool dns_label_ok(const char *s)
{
	size_t len = strlen(s);
	if (len == 0 || len > 63 || s[0] == '-' || s[len - 1] == '-')
		return false;
	return span_of(s, "abcdefghijklmnopqrstuvwxyz0123456789-");
}

/* What the API server takes as an env name: printable ASCII but '='. */
static bool env_name_ok(const char *s)
{
	if (*s == '\0')
		return false;
	for (; *s; s++)
		if (*s < 0x20 || *s > 0x7e || *s == '=')
			return false;
	return true;
}

/* Kubernetes' quantity grammar (apimachinery resource.ParseQuantity), minus
 * the sign: requests and limits cannot be negative. */
static bool quantity_ok(const char *s)
{
	static const char *const suffixes[] = { "",  "n", "u", "m",  "k",  "M",  "G",  "T",  "P",
						 "E", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei" };
	if (*s == '+')
		s++;
	size_t digits = strspn(s, "0123456789");
	s += digits;
	if (*s == '.') {
		size_t frac = strspn(s + 1, "0123456789");
		s += 1 + frac;
		digits += frac;
	}
	if (digits == 0)
		return false;
	if (*s == 'e' || *s == 'E') {
		const char *e = s + 1;
		if (*e == '+' || *e == '-')
			e++;
		if (span_of(e, "0123456789"))
			return true;
	}
	return str_in(s, suffixes, ELEMENTSOF(suffixes));
}

/* The field paths the kubelet resolves for env (k8s.io/kubernetes
 * pkg/apis/core/validation, validEnvDownwardAPIFieldPathExpressions). */
static bool env_field_path_ok(const char *s)
{
	static const char *const paths[] = {
		"metadata.name",      "metadata.namespace",	    "metadata.uid", "spec.nodeName",
		"spec.serviceAccountName", "status.hostIP", "status.hostIPs", "status.podIP",
		"status.podIPs",
	};
	if (str_in(s, paths, ELEMENTSOF(paths)))
		return true;
	static const char *const subscripted[] = { "metadata.labels['", "metadata.annotations['" };
	for (size_t i = 0; i < ELEMENTSOF(subscripted); i++) {
		size_t plen = strlen(subscripted[i]), len = strlen(s);
		if (strncmp(s, subscripted[i], plen) == 0 && len > plen + 2 && strcmp(s + len - 2, "']") == 0)
			return true;
	}
	return false;
}

/* Not native (cpu, memory, hugepages-2Mi, names under kubernetes.io/): a device
 * plugin's or an operator's resource, which cannot be overcommitted. */
static bool is_extended_resource(const char *name)
{
	return strchr(name, '/') && !strstr(name, "kubernetes.io/");
}

/* --- The pod --- */

static int read_labels(struct ctx *c, const struct ynode *n, const char *path)
{
	struct podspec *spec = c->spec;
	int r = want_map(c, n, path);
	if (r < 0 || n->n_children == 0)
		return r;
	size_t count = n->n_children / 2;
	spec->label_keys = arena_alloc(&spec->arena, count * sizeof(char *));
	spec->label_values = arena_alloc(&spec->arena, count * sizeof(char *));
	if (!spec->label_keys || !spec->label_values)
		return fail_nomem(c);
	spec->n_labels = 0;
	for_each_pair(n, k, v) {
		char p[PATH_SIZE];
		path_key(p, sizeof(p), path, k->value);
		char *value = NULL;
		r = copy_string(c, k, p, &spec->label_keys[spec->n_labels]);
		if (r == 0)
			r = get_string(c, v, p, &value);
		if (r < 0)
			return r;
		if (!value)
			value = arena_strdup(&spec->arena, "");
		if (!value)
			return fail_nomem(c);
		spec->label_values[spec->n_labels++] = value;
	}
	return 0;
}

const struct podspec_volume *podspec_find_volume(const struct podspec *spec, const char *name)
{
	for (size_t i = 0; i < spec->n_volumes; i++)
		if (strcmp(spec->volumes[i].name, name) == 0)
			return &spec->volumes[i];
	return NULL;
}

/* A ".." element, which the API server refuses in a hostPath. */
static bool has_backstep(const char *path)
{
	for (const char *p = path; *p;) {
		size_t len = strcspn(p, "/");
		if (len == 2 && p[0] == '.' && p[1] == '.')
			return true;
		p += len;
		p += strspn(p, "/");
	}
	return false;
}

static int read_host_path(struct ctx *c, const struct ynode *n, const char *path, struct podspec_volume *vol)
{
	static const char *const types[] = { "",	  "DirectoryOrCreate", "Directory",  "FileOrCreate",
					     "File",	  "Socket",	       "CharDevice", "BlockDevice" };
	int r = want_map(c, n, path);
	if (r < 0)
		return r;
	for_each_pair(n, k, v) {
		char p[PATH_SIZE];
		path_key(p, sizeof(p), path, k->value);
		if (key_is(k, "path"))
			r = get_string(c, v, p, &vol->host_path);
		else if (key_is(k, "type"))
			r = get_string(c, v, p, &vol->host_path_type);
		else
			r = ignore(c, "%s", p);
		if (r < 0)
			return r;
	}
	if (!vol->host_path || vol->host_path[0] == '\0')
		return fail(c, n, -EINVAL, "%s.path is missing", path);
	if (has_backstep(vol->host_path))
		return fail(c, n, -EINVAL, "%s.path must not contain '..'", path);
	if (!vol->host_path_type)
		vol->host_path_type = arena_strdup(&c->spec->arena, "");
	if (!vol->host_path_type)
		return fail_nomem(c);
	if (!str_in(vol->host_path_type, types, ELEMENTSOF(types)))
		return fail(c, n, -EINVAL, "%s.type \"%.*s\" is not a hostPath type", path, CLIP,
			    vol->host_path_type);
	return 0;
}

static int read_volume(struct ctx *c, const struct ynode *n, const char *path, struct podspec_volume *vol)
{
	int r = want_map(c, n, path);
	if (r < 0)
		return r;
	size_t sources = 0;
	for_each_pair(n, k, v) {
		char p[PATH_SIZE];
		path_key(p, sizeof(p), path, k->value);
		if (key_is(k, "name"))
			r = get_string(c, v, p, &vol->name);
		else if (++sources > 1)
			return fail(c, k, -EINVAL, "%s has more than one volume source", path);
		else if (key_is(k, "hostPath"))
			r = read_host_path(c, v, p, vol);
		else if (key_is(k, "emptyDir")) {
			/* medium and sizeLimit: a plain directory is made either way. */
			vol->empty_dir = true;
			r = ignore_all(c, v, p);
		} else {
			r = ignore(c, "%s", p);
		}
		if (r < 0)
			return r;
	}
	if (!vol->name)
		return fail(c, n, -EINVAL, "%s.name is missing", path);
	if (!dns_label_ok(vol->name))
		return fail(c, n, -EINVAL, "%s.name \"%.*s\" is not a lowercase RFC 1123 label", path, CLIP, vol->name);
	if (sources == 0)
		return fail(c, n, -EINVAL, "%s has no volume source", path);
	return 0;
}

static int read_volumes(struct ctx *c, const struct ynode *n, const char *path)
{
	struct podspec *spec = c->spec;
	int r = want_seq(c, n, path, PODSPEC_MAX_VOLUMES, "volumes");
	if (r < 0 || n->n_children == 0)
		return r;
	spec->volumes = arena_alloc(&spec->arena, n->n_children * sizeof(*spec->volumes));
	if (!spec->volumes)
		return fail_nomem(c);
	size_t i = 0;
	for (const struct ynode *item = n->first; item; item = item->next, i++) {
		char p[PATH_SIZE];
		path_index(p, sizeof(p), path, i);
		struct podspec_volume *vol = &spec->volumes[i];
		r = read_volume(c, item, p, vol);
		if (r < 0)
			return r;
		if (podspec_find_volume(spec, vol->name))
			return fail(c, item, -EINVAL, "%s.name \"%s\" is used by another volume", p, vol->name);
		spec->n_volumes++;
	}
	return 0;
}

static int read_env_entry(struct ctx *c, const struct ynode *n, const char *path, struct podspec_env *env,
			  bool *keep)
{
	int r = want_map(c, n, path);
	if (r < 0)
		return r;
	const struct ynode *value_from = NULL;
	for_each_pair(n, k, v) {
		char p[PATH_SIZE];
		path_key(p, sizeof(p), path, k->value);
		if (key_is(k, "name"))
			r = get_string(c, v, p, &env->name);
		else if (key_is(k, "value"))
			r = get_string(c, v, p, &env->value);
		else if (key_is(k, "valueFrom"))
			value_from = is_null(v) ? NULL : v;
		else
			r = ignore(c, "%s", p);
		if (r < 0)
			return r;
	}
	if (!env->name)
		return fail(c, n, -EINVAL, "%s.name is missing", path);
	if (!env_name_ok(env->name))
		return fail(c, n, -EINVAL, "%s.name \"%.*s\" is not a valid environment variable name", path, CLIP,
			    env->name);
	*keep = true;
	if (!value_from) {
		if (!env->value)
			env->value = arena_strdup(&c->spec->arena, "");
		return env->value ? 0 : fail_nomem(c);
	}

	char vpath[PATH_SIZE];
	path_key(vpath, sizeof(vpath), path, "valueFrom");
	if (env->value && env->value[0] != '\0')
		return fail(c, value_from, -EINVAL, "%s has both value and valueFrom", path);
	env->value = NULL;
	r = want_map(c, value_from, vpath);
	if (r < 0)
		return r;
	if (value_from->n_children != 2)
		return fail(c, value_from, -EINVAL, "%s must name exactly one source", vpath);
	const struct ynode *k = value_from->first, *v = k->next;
	char p[PATH_SIZE];
	path_key(p, sizeof(p), vpath, k->value);
	if (!key_is(k, "fieldRef")) {
		/* The kubelet would fetch a secret or a config map; we cannot. */
		*keep = false;
		return ignore(c, "%s", p);
	}
	r = want_map(c, v, p);
	if (r < 0)
		return r;
	for_each_pair(v, fk, fv) {
		char fp[PATH_SIZE];
		path_key(fp, sizeof(fp), p, fk->value);
		if (key_is(fk, "fieldPath")) {
			r = get_string(c, fv, fp, &env->field_ref);
		} else if (key_is(fk, "apiVersion")) {
			char *ignored_version = NULL;
			r = get_string(c, fv, fp, &ignored_version);
		} else {
			r = ignore(c, "%s", fp);
		}
		if (r < 0)
			return r;
	}
	if (!env->field_ref)
		return fail(c, v, -EINVAL, "%s.fieldPath is missing", p);
	if (!env_field_path_ok(env->field_ref))
		return fail(c, v, -EINVAL, "%s.fieldPath \"%.*s\" is not a field the kubelet resolves", p, CLIP,
			    env->field_ref);
	return 0;
}

static int read_env(struct ctx *c, const struct ynode *n, const char *path, struct podspec_container *ctr)
{
	int r = want_seq(c, n, path, PODSPEC_MAX_ITEMS, "environment variables");
	if (r < 0 || n->n_children == 0)
		return r;
	ctr->env = arena_alloc(&c->spec->arena, n->n_children * sizeof(*ctr->env));
	if (!ctr->env)
		return fail_nomem(c);
	size_t i = 0;
	for (const struct ynode *item = n->first; item; item = item->next, i++) {
		char p[PATH_SIZE];
		path_index(p, sizeof(p), path, i);
		struct podspec_env *env = &ctr->env[ctr->n_env];
		bool keep = false;
		r = read_env_entry(c, item, p, env, &keep);
		if (r < 0)
			return r;
		if (keep)
			ctr->n_env++;
		else
			*env = (struct podspec_env){ 0 };
	}
	return 0;
}

static int read_mounts(struct ctx *c, const struct ynode *n, const char *path, struct podspec_container *ctr)
{
	int r = want_seq(c, n, path, PODSPEC_MAX_ITEMS, "volume mounts");
	if (r < 0 || n->n_children == 0)
		return r;
	ctr->mounts = arena_alloc(&c->spec->arena, n->n_children * sizeof(*ctr->mounts));
	if (!ctr->mounts)
		return fail_nomem(c);
	size_t i = 0;
	for (const struct ynode *item = n->first; item; item = item->next, i++) {
		char p[PATH_SIZE];
		path_index(p, sizeof(p), path, i);
		struct podspec_mount *m = &ctr->mounts[i];
		r = want_map(c, item, p);
		if (r < 0)
			return r;
		for_each_pair(item, k, v) {
			char kp[PATH_SIZE];
			path_key(kp, sizeof(kp), p, k->value);
			if (key_is(k, "name"))
				r = get_string(c, v, kp, &m->name);
			else if (key_is(k, "mountPath"))
				r = get_string(c, v, kp, &m->mount_path);
			else if (key_is(k, "readOnly"))
				r = get_bool(c, v, kp, &m->read_only);
			else
				r = ignore(c, "%s", kp);
			if (r < 0)
				return r;
		}
		if (!m->name)
			return fail(c, item, -EINVAL, "%s.name is missing", p);
		if (!m->mount_path || m->mount_path[0] == '\0')
			return fail(c, item, -EINVAL, "%s.mountPath is missing", p);
		if (!podspec_find_volume(c->spec, m->name))
			return fail(c, item, -EINVAL, "%s.name \"%.*s\" is not a volume of the pod", p, CLIP, m->name);
		for (size_t j = 0; j < i; j++)
			if (strcmp(ctr->mounts[j].mount_path, m->mount_path) == 0)
				return fail(c, item, -EINVAL, "%s.mountPath \"%.*s\" is mounted twice", p, CLIP,
					    m->mount_path);
		ctr->n_mounts++;
	}
	return 0;
}

static int read_quantities(struct ctx *c, const struct ynode *n, const char *path, struct podspec_quantity **ret,
			   size_t *ret_n)
{
	int r = want_map(c, n, path);
	if (r < 0 || n->n_children == 0)
		return r;
	struct podspec_quantity *list = arena_alloc(&c->spec->arena, n->n_children / 2 * sizeof(*list));
	if (!list)
		return fail_nomem(c);
	size_t i = 0;
	for_each_pair(n, k, v) {
		char p[PATH_SIZE];
		path_key(p, sizeof(p), path, k->value);
		struct podspec_quantity *q = &list[i];
		r = copy_string(c, k, p, &q->name);
		if (r < 0)
			return r;
		/* A quantity decodes from a JSON string or number alike. */
		if (v->type != YN_SCALAR || !(v->kind == YS_STR || v->kind == YS_INT || v->kind == YS_FLOAT))
			return fail(c, v, -EINVAL, "%s must be a quantity (\"1\", \"500m\", \"16Mi\")", p);
		r = copy_string(c, v, p, &q->text);
		if (r < 0)
			return r;
		if (!quantity_ok(q->text))
			return fail(c, v, -EINVAL, "%s \"%.*s\" is not a quantity", p, CLIP, q->text);
		uint64_t value;
		if (span_of(q->text, "0123456789") && parse_u64(q->text, 10, INT64_MAX, &value) == 0) {
			q->is_integer = true;
			q->value = (int64_t)value;
		}
		if (is_extended_resource(q->name)) {
			char why[256];
			if (k8s_extended_resource_name_check(q->name, why, sizeof(why)) < 0)
				return fail(c, k, -EINVAL, "%s: %s", p, why);
			if (!q->is_integer)
				return fail(c, v, -EINVAL, "%s must be a whole number, not \"%.*s\"", p, CLIP, q->text);
		}
		i++;
	}
	*ret = list;
	*ret_n = i;
	return 0;
}

static const struct podspec_quantity *find_quantity(const struct podspec_quantity *list, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(list[i].name, name) == 0)
			return &list[i];
	return NULL;
}

static int read_resources(struct ctx *c, const struct ynode *n, const char *path, struct podspec_container *ctr)
{
	int r = want_map(c, n, path);
	if (r < 0)
		return r;
	const struct ynode *requests = NULL;
	for_each_pair(n, k, v) {
		char p[PATH_SIZE];
		path_key(p, sizeof(p), path, k->value);
		if (key_is(k, "limits")) {
			r = read_quantities(c, v, p, &ctr->limits, &ctr->n_limits);
		} else if (key_is(k, "requests")) {
			requests = v;
			r = read_quantities(c, v, p, &ctr->requests, &ctr->n_requests);
		} else {
			r = ignore(c, "%s", p);
		}
		if (r < 0)
			return r;
	}
	/* The API server's rule for what a device plugin hands out: an
	 * extended resource is asked for in limits, and a request must match. */
	for (size_t i = 0; i < ctr->n_requests; i++) {
		const struct podspec_quantity *req = &ctr->requests[i];
		if (!is_extended_resource(req->name))
			continue;
		const struct podspec_quantity *lim = find_quantity(ctr->limits, ctr->n_limits, req->name);
		if (!lim || lim->value != req->value)
			return fail(c, requests, -EINVAL,
				    "%s.requests.%.*s must equal its limit: extended resources cannot be overcommitted",
				    path, CLIP, req->name);
	}
	return 0;
}

static int read_capabilities(struct ctx *c, const struct ynode *n, const char *path, struct podspec_container *ctr)
{
	int r = want_map(c, n, path);
	if (r < 0)
		return r;
	for_each_pair(n, k, v) {
		char p[PATH_SIZE];
		path_key(p, sizeof(p), path, k->value);
		if (key_is(k, "add"))
			r = get_string_list(c, v, p, &ctr->cap_add, &ctr->n_cap_add);
		else if (key_is(k, "drop"))
			r = get_string_list(c, v, p, &ctr->cap_drop, &ctr->n_cap_drop);
		else
			r = ignore(c, "%s", p);
		if (r < 0)
			return r;
	}
	return 0;
}

/* uid and gid range the API server accepts. */
#define ID_MAX INT32_MAX

static int read_container_security(struct ctx *c, const struct ynode *n, const char *path,
				   struct podspec_container *ctr)
{
	int r = want_map(c, n, path);
	if (r < 0)
		return r;
	for_each_pair(n, k, v) {
		char p[PATH_SIZE];
		path_key(p, sizeof(p), path, k->value);
		if (key_is(k, "privileged"))
			r = get_bool(c, v, p, &ctr->privileged);
		else if (key_is(k, "readOnlyRootFilesystem"))
			r = get_bool(c, v, p, &ctr->read_only_root);
		else if (key_is(k, "runAsUser"))
			r = get_int(c, v, p, ID_MAX, &ctr->run_as_user, &ctr->has_run_as_user);
		else if (key_is(k, "runAsGroup"))
			r = get_int(c, v, p, ID_MAX, &ctr->run_as_group, &ctr->has_run_as_group);
		else if (key_is(k, "runAsNonRoot")) {
			r = get_bool(c, v, p, &ctr->run_as_non_root);
			ctr->has_run_as_non_root = r == 0 && !is_null(v);
		} else if (key_is(k, "capabilities"))
			r = read_capabilities(c, v, p, ctr);
		else
			r = ignore(c, "%s", p);
		if (r < 0)
			return r;
	}
	return 0;
}

static int read_exec(struct ctx *c, const struct ynode *key, const struct ynode *n, const char *path,
		     struct podspec_probe *probe)
{
	int r = want_map(c, n, path);
	if (r < 0)
		return r;
	for_each_pair(n, k, v) {
		char p[PATH_SIZE];
		path_key(p, sizeof(p), path, k->value);
		if (key_is(k, "command"))
			r = get_string_list(c, v, p, &probe->exec, &probe->n_exec);
		else
			r = ignore(c, "%s", p);
		if (r < 0)
			return r;
	}
	if (probe->n_exec == 0)
		return fail(c, key, -EINVAL, "%s.command is missing", path);
	return 0;
}

static int read_probe(struct ctx *c, const struct ynode *n, const char *path, bool liveness,
		      struct podspec_probe *ret)
{
	struct podspec_probe probe = {
		.period_s = 10, .timeout_s = 1, .success_threshold = 1, .failure_threshold = 3,
	};
	int r = want_map(c, n, path);
	if (r < 0 || is_null(n))
		return r;
	const struct ynode *handler = NULL;
	for_each_pair(n, k, v) {
		char p[PATH_SIZE];
		path_key(p, sizeof(p), path, k->value);
		if (key_is(k, "exec") || key_is(k, "httpGet") || key_is(k, "tcpSocket") || key_is(k, "grpc")) {
			if (handler)
				return fail(c, k, -EINVAL, "%s has more than one handler", path);
			handler = k;
			if (key_is(k, "exec"))
				r = read_exec(c, k, v, p, &probe);
		} else if (key_is(k, "initialDelaySeconds")) {
			r = get_u32(c, v, p, &probe.initial_delay_s);
		} else if (key_is(k, "periodSeconds")) {
			r = get_u32(c, v, p, &probe.period_s);
		} else if (key_is(k, "timeoutSeconds")) {
			r = get_u32(c, v, p, &probe.timeout_s);
		} else if (key_is(k, "successThreshold")) {
			r = get_u32(c, v, p, &probe.success_threshold);
		} else if (key_is(k, "failureThreshold")) {
			r = get_u32(c, v, p, &probe.failure_threshold);
		} else {
			r = ignore(c, "%s", p);
		}
		if (r < 0)
			return r;
	}
	if (!handler)
		return fail(c, n, -EINVAL, "%s has no handler (exec, httpGet, tcpSocket or grpc)", path);
	/* 0 means "not set" to the API server's defaulting. */
	if (probe.period_s == 0)
		probe.period_s = 10;
	if (probe.timeout_s == 0)
		probe.timeout_s = 1;
	if (probe.success_threshold == 0)
		probe.success_threshold = 1;
	if (probe.failure_threshold == 0)
		probe.failure_threshold = 3;
	if (liveness && probe.success_threshold != 1)
		return fail(c, n, -EINVAL, "%s.successThreshold must be 1 for a liveness probe", path);
	if (!key_is(handler, "exec"))
		return ignore(c, "%s (%s probe)", path, handler->value);
	probe.set = true;
	*ret = probe;
	return 0;
}

static const struct podspec_container *find_container(const struct podspec *spec, const char *name)
{
	for (size_t i = 0; i < spec->n_init_containers; i++)
		if (strcmp(spec->init_containers[i].name, name) == 0)
			return &spec->init_containers[i];
	for (size_t i = 0; i < spec->n_containers; i++)
		if (strcmp(spec->containers[i].name, name) == 0)
			return &spec->containers[i];
	return NULL;
}

static int read_container(struct ctx *c, const struct ynode *n, const char *path, struct podspec_container *ctr)
{
	int r = want_map(c, n, path);
	if (r < 0)
		return r;
	for_each_pair(n, k, v) {
		char p[PATH_SIZE];
		path_key(p, sizeof(p), path, k->value);
		if (key_is(k, "name"))
			r = get_string(c, v, p, &ctr->name);
		else if (key_is(k, "image"))
			r = get_string(c, v, p, &ctr->image);
		else if (key_is(k, "command"))
			r = get_string_list(c, v, p, &ctr->command, &ctr->n_command);
		else if (key_is(k, "args"))
			r = get_string_list(c, v, p, &ctr->args, &ctr->n_args);
		else if (key_is(k, "workingDir"))
			r = get_string(c, v, p, &ctr->working_dir);
		else if (key_is(k, "env"))
			r = read_env(c, v, p, ctr);
		else if (key_is(k, "volumeMounts"))
			r = read_mounts(c, v, p, ctr);
		else if (key_is(k, "resources"))
			r = read_resources(c, v, p, ctr);
		else if (key_is(k, "securityContext"))
			r = read_container_security(c, v, p, ctr);
		else if (key_is(k, "livenessProbe"))
			r = read_probe(c, v, p, true, &ctr->liveness);
		else if (key_is(k, "readinessProbe"))
			r = read_probe(c, v, p, false, &ctr->readiness);
		else
			r = ignore(c, "%s", p);
		if (r < 0)
			return r;
	}
	if (!ctr->name)
		return fail(c, n, -EINVAL, "%s.name is missing", path);
	if (!dns_label_ok(ctr->name))
		return fail(c, n, -EINVAL, "%s.name \"%.*s\" is not a lowercase RFC 1123 label", path, CLIP, ctr->name);
	if (!ctr->image || ctr->image[0] == '\0')
		return fail(c, n, -EINVAL, "%s.image is missing", path);
	return 0;
}

static int read_containers(struct ctx *c, const struct ynode *n, const char *path, struct podspec_container **list,
			   size_t *count)
{
	int r = want_seq(c, n, path, PODSPEC_MAX_CONTAINERS, "containers");
	if (r < 0 || n->n_children == 0)
		return r;
	*list = arena_alloc(&c->spec->arena, n->n_children * sizeof(**list));
	if (!*list)
		return fail_nomem(c);
	size_t i = 0;
	for (const struct ynode *item = n->first; item; item = item->next, i++) {
		char p[PATH_SIZE];
		path_index(p, sizeof(p), path, i);
		struct podspec_container *ctr = &(*list)[i];
		r = read_container(c, item, p, ctr);
		if (r < 0)
			return r;
		/* Init containers and containers share one name space. */
		if (find_container(c->spec, ctr->name))
			return fail(c, item, -EINVAL, "%s.name \"%s\" is used by another container", p, ctr->name);
		(*count)++;
	}
	return 0;
}

static int read_groups(struct ctx *c, const struct ynode *n, const char *path)
{
	struct podspec *spec = c->spec;
	int r = want_seq(c, n, path, PODSPEC_MAX_ITEMS, "group ids");
	if (r < 0 || n->n_children == 0)
		return r;
	spec->supplemental_groups = arena_alloc(&spec->arena, n->n_children * sizeof(int64_t));
	if (!spec->supplemental_groups)
		return fail_nomem(c);
	for (const struct ynode *item = n->first; item; item = item->next) {
		bool set = false;
		r = get_int(c, item, path, ID_MAX, &spec->supplemental_groups[spec->n_supplemental_groups], &set);
		if (r < 0)
			return r;
		if (!set)
			return fail(c, item, -EINVAL, "%s must be a list of group ids", path);
		spec->n_supplemental_groups++;
	}
	return 0;
}

static int read_pod_security(struct ctx *c, const struct ynode *n, const char *path)
{
	struct podspec *spec = c->spec;
	int r = want_map(c, n, path);
	if (r < 0)
		return r;
	for_each_pair(n, k, v) {
		char p[PATH_SIZE];
		path_key(p, sizeof(p), path, k->value);
		if (key_is(k, "runAsUser")) {
			r = get_int(c, v, p, ID_MAX, &spec->run_as_user, &spec->has_run_as_user);
		} else if (key_is(k, "runAsGroup")) {
			r = get_int(c, v, p, ID_MAX, &spec->run_as_group, &spec->has_run_as_group);
		} else if (key_is(k, "runAsNonRoot")) {
			r = get_bool(c, v, p, &spec->run_as_non_root);
		} else if (key_is(k, "supplementalGroups")) {
			r = read_groups(c, v, p);
		} else {
			r = ignore(c, "%s", p);
		}
		if (r < 0)
			return r;
	}
	return 0;
}

static int read_pod_spec(struct ctx *c, const struct ynode *n, const char *path, const struct workload_kind *wk)
{
	struct podspec *spec = c->spec;
	int r = want_map(c, n, path);
	if (r < 0)
		return r;
	char p[PATH_SIZE];
	/* Mounts are checked against the volumes, wherever those are written. */
	const struct ynode *volumes = map_get(n, "volumes");
	if (volumes) {
		path_key(p, sizeof(p), path, "volumes");
		r = read_volumes(c, volumes, p);
		if (r < 0)
			return r;
	}
	const struct ynode *restart = NULL;
	for_each_pair(n, k, v) {
		path_key(p, sizeof(p), path, k->value);
		if (key_is(k, "volumes"))
			r = 0;
		else if (key_is(k, "containers"))
			r = read_containers(c, v, p, &spec->containers, &spec->n_containers);
		else if (key_is(k, "initContainers"))
			r = read_containers(c, v, p, &spec->init_containers, &spec->n_init_containers);
		else if (key_is(k, "restartPolicy")) {
			restart = v;
			r = get_string(c, v, p, &spec->restart_policy);
		} else if (key_is(k, "terminationGracePeriodSeconds"))
			r = get_int(c, v, p, INT64_MAX, &spec->termination_grace_s, NULL);
		else if (key_is(k, "hostNetwork"))
			r = get_bool(c, v, p, &spec->host_network);
		else if (key_is(k, "hostPID"))
			r = get_bool(c, v, p, &spec->host_pid);
		else if (key_is(k, "hostIPC"))
			r = get_bool(c, v, p, &spec->host_ipc);
		else if (key_is(k, "securityContext"))
			r = read_pod_security(c, v, p);
		else
			r = ignore(c, "%s", p);
		if (r < 0)
			return r;
	}
	if (spec->n_containers == 0)
		return fail(c, n, -EINVAL, "%s.containers must list at least one container", path);

	static const char *const policies[] = { "Always", "OnFailure", "Never" };
	const struct ynode *at = restart ? restart : n;
	const char *policy = spec->restart_policy;
	if (policy && !str_in(policy, policies, ELEMENTSOF(policies)))
		return fail(c, at, -EINVAL, "%s.restartPolicy \"%.*s\" is not Always, OnFailure or Never", path, CLIP,
			    policy);
	if (wk->job && (!policy || strcmp(policy, "Always") == 0))
		return fail(c, at, -EINVAL, "%s.restartPolicy must be OnFailure or Never in a Job", path);
	if (wk->always && policy && strcmp(policy, "Always") != 0)
		return fail(c, at, -EINVAL, "%s.restartPolicy must be Always in a %s", path, wk->kind);
	if (!policy) {
		spec->restart_policy = arena_strdup(&spec->arena, "Always");
		if (!spec->restart_policy)
			return fail_nomem(c);
	}
	return 0;
}

/* metadata of the object: name and namespace, and for a Pod its labels. */
static int read_metadata(struct ctx *c, const struct ynode *n, const struct workload_kind *wk)
{
	struct podspec *spec = c->spec;
	int r = want_map(c, n, "metadata");
	if (r < 0)
		return r;
	for_each_pair(n, k, v) {
		char p[PATH_SIZE];
		path_key(p, sizeof(p), "metadata", k->value);
		if (key_is(k, "name"))
			r = get_string(c, v, p, &spec->name);
		else if (key_is(k, "namespace"))
			r = get_string(c, v, p, &spec->namespace);
		else if (wk->pod && key_is(k, "labels"))
			r = read_labels(c, v, p);
		else if (wk->pod)
			r = ignore(c, "%s", p);
		else
			r = 0; /* a controller's own labels and annotations */
		if (r < 0)
			return r;
	}
	if (!spec->name || spec->name[0] == '\0')
		return fail(c, n, -EINVAL, "metadata.name is missing");
	/* The API server's rules; names also become paths and command words. */
	if (k8s_dns_subdomain_check(spec->name, strlen(spec->name)) < 0)
		return fail(c, n, -EINVAL, "metadata.name \"%.*s\" is not a lowercase RFC 1123 subdomain", CLIP,
			    spec->name);
	if (spec->namespace && spec->namespace[0] != '\0' && !dns_label_ok(spec->namespace))
		return fail(c, n, -EINVAL, "metadata.namespace \"%.*s\" is not a lowercase RFC 1123 label", CLIP,
			    spec->namespace);
	return 0;
}

static int read_template_metadata(struct ctx *c, const struct ynode *n, const char *path)
{
	int r = want_map(c, n, path);
	if (r < 0)
		return r;
	for_each_pair(n, k, v) {
		char p[PATH_SIZE];
		path_key(p, sizeof(p), path, k->value);
		if (key_is(k, "labels"))
			r = read_labels(c, v, p);
		else
			r = ignore(c, "%s", p);
		if (r < 0)
			return r;
	}
	return 0;
}

static int read_template(struct ctx *c, const struct ynode *n, const char *path, const struct workload_kind *wk)
{
	int r = want_map(c, n, path);
	if (r < 0)
		return r;
	const struct ynode *pod = NULL;
	for_each_pair(n, k, v) {
		char p[PATH_SIZE];
		path_key(p, sizeof(p), path, k->value);
		if (key_is(k, "metadata")) {
			r = read_template_metadata(c, v, p);
		} else if (key_is(k, "spec")) {
			pod = is_null(v) ? NULL : v;
			if (pod)
				r = read_pod_spec(c, v, p, wk);
		} else {
			r = ignore(c, "%s", p);
		}
		if (r < 0)
			return r;
	}
	if (!pod)
		return fail(c, n, -EINVAL, "%s.spec is missing", path);
	return 0;
}

static int read_workload_spec(struct ctx *c, const struct ynode *n, const struct workload_kind *wk)
{
	int r = want_map(c, n, "spec");
	if (r < 0)
		return r;
	const struct ynode *template = NULL;
	for_each_pair(n, k, v) {
		char p[PATH_SIZE];
		path_key(p, sizeof(p), "spec", k->value);
		if (key_is(k, "template")) {
			template = is_null(v) ? NULL : v;
			if (template)
				r = read_template(c, v, p, wk);
		} else if (!key_is(k, "selector")) {
			r = ignore(c, "%s", p);
		}
		if (r < 0)
			return r;
	}
	if (!template)
		return fail(c, n, -EINVAL, "spec.template is missing");
	return 0;
}

static int read_workload(struct ctx *c, const struct ynode *root, const struct workload_kind *wk)
{
	struct podspec *spec = c->spec;
	int r = want_map(c, root, "the object");
	if (r < 0)
		return r;
	spec->kind = arena_strdup(&spec->arena, wk->kind);
	if (!spec->kind)
		return fail_nomem(c);
	const struct ynode *metadata = NULL, *pod = NULL;
	for_each_pair(root, k, v) {
		if (key_is(k, "apiVersion") || key_is(k, "kind")) {
			r = 0;
		} else if (key_is(k, "metadata")) {
			metadata = v;
			r = read_metadata(c, v, wk);
		} else if (key_is(k, "spec")) {
			pod = is_null(v) ? NULL : v;
			if (pod)
				r = wk->pod ? read_pod_spec(c, v, "spec", wk) : read_workload_spec(c, v, wk);
		} else {
			r = ignore_key(c, "", k);
		}
		if (r < 0)
			return r;
	}
	if (!metadata)
		return fail(c, root, -EINVAL, "metadata.name is missing");
	if (!pod)
		return fail(c, root, -EINVAL, "spec is missing");
	if (!spec->namespace || spec->namespace[0] == '\0')
		spec->namespace = arena_strdup(&spec->arena, "default");
	return spec->namespace ? 0 : fail_nomem(c);
}

static int read_document(void *ctx, const struct ynode *root, size_t line)
{
	struct ctx *c = ctx;
	(void)line;
	if (!root || is_null(root))
		return 0; /* an empty document, as between two "---" */
	if (root->type != YN_MAP)
		return fail(c, root, -EINVAL, "a document must be a mapping (a Kubernetes object)");
	const struct ynode *kind = map_get(root, "kind");
	if (!kind || is_null(kind))
		return fail(c, root, -EINVAL, "kind is missing");
	if (kind->type != YN_SCALAR || kind->kind != YS_STR)
		return fail(c, kind, -EINVAL, "kind must be a string");
	const struct workload_kind *wk = NULL;
	for (size_t i = 0; i < ELEMENTSOF(workload_kinds); i++)
		if (strcmp(kind->value, workload_kinds[i].kind) == 0)
			wk = &workload_kinds[i];
	if (!wk) {
		const struct ynode *meta = map_get(root, "metadata");
		const struct ynode *name = meta ? map_get(meta, "name") : NULL;
		if (name && name->type == YN_SCALAR && name->kind == YS_STR)
			return ignore(c, "%.*s/%.*s (not a workload)", CLIP, kind->value, CLIP, name->value);
		return ignore(c, "%.*s (not a workload)", CLIP, kind->value);
	}
	if (c->spec->kind)
		return fail(c, root, -EINVAL, "a second workload (%s after %s/%s): one workload per file", wk->kind,
			    c->spec->kind, c->spec->name);
	return read_workload(c, root, wk);
}

int podspec_parse(const char *data, size_t len, struct podspec **ret_spec, char *err, size_t err_size)
{
	static const struct yaml_tree_limits limits = { .max_depth = PODSPEC_MAX_DEPTH, .max_nodes = PODSPEC_MAX_NODES };
	struct ctx c = { .err = err, .err_size = err_size };
	int r;

	if (err_size)
		err[0] = '\0';
	if (!data && len) {
		r = fail(&c, NULL, -EINVAL, "no data");
		goto out;
	}
	if (len > PODSPEC_FILE_MAX) {
		r = fail(&c, NULL, -E2BIG, "larger than %d bytes", PODSPEC_FILE_MAX);
		goto out;
	}
	c.spec = calloc(1, sizeof(*c.spec));
	if (!c.spec) {
		r = fail_nomem(&c);
		goto out;
	}
	c.spec->termination_grace_s = 30;
	c.spec->ignored = arena_alloc(&c.spec->arena, PODSPEC_MAX_IGNORED * sizeof(char *));
	if (!c.spec->ignored) {
		r = fail_nomem(&c);
		goto out;
	}
	r = yaml_tree_parse(data, len, &limits, read_document, &c, err, err_size);
	if (r < 0)
		goto out;
	if (!c.spec->kind) {
		r = fail(&c, NULL, -EINVAL, "no Pod or workload (DaemonSet, Deployment, ReplicaSet, StatefulSet, Job)");
		goto out;
	}
	*ret_spec = c.spec;
	c.spec = NULL;
	r = 0;
out:
	podspec_free(c.spec);
	return r;
}

int podspec_load(const char *path, struct podspec **ret_spec, char *err, size_t err_size)
{
	char *buf = NULL;
	char why[1024] = "";
	size_t len = 0;

	if (err_size)
		err[0] = '\0';
	int r = file_read_bounded(path, PODSPEC_FILE_MAX, &buf, &len, why, sizeof(why));
	if (r < 0)
		goto out;
	r = podspec_parse(buf, len, ret_spec, why, sizeof(why));
out:
	if (r < 0 && err_size)
		snprintf(err, err_size, "%s: %s", path, why);
	free(buf);
	return r;
}

void podspec_free(struct podspec *spec)
{
	if (!spec)
		return;
	arena_free(&spec->arena);
	free(spec);
}

static const char *lookup(const char *name, size_t len, char *const *names, char *const *values, size_t n)
{
	for (size_t i = n; i-- > 0;)
		if (names[i] && values[i] && strlen(names[i]) == len && memcmp(names[i], name, len) == 0)
			return values[i];
	return NULL;
}

/* One pass of the expansion: its length, and the text too when out is set. */
static size_t expand_pass(const char *s, char *const *names, char *const *values, size_t n, char *out)
{
	size_t len = 0;
	for (const char *p = s; *p;) {
		const char *piece = p;
		size_t piece_len = 1, advance = 1;
		if (p[0] == '$' && p[1] == '$') {
			advance = 2; /* $$ is an escaped $ */
		} else if (p[0] == '$' && p[1] == '(') {
			const char *close = strchr(p + 2, ')');
			const char *value = close ? lookup(p + 2, (size_t)(close - p - 2), names, values, n) : NULL;
			advance = piece_len = close ? (size_t)(close - p) + 1 : 2;
			if (value) {
				piece = value;
				piece_len = strlen(value);
			}
		} else if (p[0] == '$' && p[1] != '\0') {
			advance = piece_len = 2; /* not a reference: both stay */
		}
		if (out)
			memcpy(out + len, piece, piece_len);
		len += piece_len;
		if (len > PODSPEC_FILE_MAX)
			return len; /* refused by the caller: stop early */
		p += advance;
	}
	return len;
}

int podspec_expand(const char *s, char *const *names, char *const *values, size_t n, char **ret)
{
	size_t len = expand_pass(s, names, values, n, NULL);
	if (len > PODSPEC_FILE_MAX)
		return -E2BIG;
	char *out = malloc(len + 1);
	if (!out)
		return -ENOMEM;
	expand_pass(s, names, values, n, out);
	out[len] = '\0';
	*ret = out;
	return 0;
}
