/* SPDX-License-Identifier: Apache-2.0 */
/* The configuration file reader; see file.h. The YAML becomes a small tree
 * (config/yaml_tree.h), which is walked key by key (config/yaml_walk.h). */
#include "config/file.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/file.h"
#include "base/k8s_names.h"
#include "base/macro.h"
#include "base/parse.h"
#include "config/config.h"
#include "config/yaml_tree.h"
#include "config/yaml_walk.h"

struct ctx {
	struct yaml_walk w;
	struct config_file *file;
	size_t n_documents;
};

static int fail_nomem(struct ctx *c)
{
	return yaml_walk_fail(&c->w, 0, -ENOMEM, "out of memory");
}

/* --- Typed access to the tree --- */

/* Any scalar but null, as text: 910 is a family, 5 a duration in seconds. */
static int get_text(struct ctx *c, const struct ynode *n, const char *path, const char **ret)
{
	int r = yaml_want_text(&c->w, n, path);
	if (r < 0)
		return r;
	char *s = arena_strdup(&c->file->arena, n->value);
	if (!s)
		return fail_nomem(c);
	*ret = s;
	return 0;
}

static int get_replicas(struct ctx *c, const struct ynode *n, const char *path, uint32_t *ret)
{
	uint32_t v;
	if (n->type != YN_SCALAR || n->kind != YS_INT || n->value[0] == '-' || n->value[0] == '+' ||
	    parse_u32(n->value, 10, CONFIG_FILE_REPLICAS_MAX, &v) < 0 || v < CONFIG_FILE_REPLICAS_MIN)
		return yaml_walk_fail(&c->w, n->line, -EINVAL, "%s: must be an integer from %d to %d", path,
				      CONFIG_FILE_REPLICAS_MIN, CONFIG_FILE_REPLICAS_MAX);
	*ret = v;
	return 0;
}

static int get_resource_name(struct ctx *c, const struct ynode *n, const char *path, char ret[RESOURCE_NAME_MAX])
{
	const char *s = NULL;
	int r = get_text(c, n, path, &s);
	if (r < 0)
		return r;
	char problem[160];
	if (k8s_extended_resource_name_check(s, problem, sizeof(problem)) < 0)
		return yaml_walk_fail(&c->w, n->line, -EINVAL, "%s: '%.*s' is invalid: %s", path, YAML_CLIP, s,
				      problem);
	/* Fits: a valid name is shorter than RESOURCE_NAME_MAX. */
	(void)str_copy(ret, RESOURCE_NAME_MAX, s);
	return 0;
}

/* --- The sections --- */

/* "healthInterval" -> "health-interval"; false when key is not camelCase
 * of lowercase words and digits (so "health-interval" is not a key). */
static bool camel_to_flag(const char *key, char *buf, size_t size)
{
	size_t n = 0;
	if (!(key[0] >= 'a' && key[0] <= 'z'))
		return false;
	for (const char *p = key; *p; p++) {
		bool upper = *p >= 'A' && *p <= 'Z';
		if (!upper && !(*p >= 'a' && *p <= 'z') && !(*p >= '0' && *p <= '9'))
			return false;
		if (n + 3 > size)
			return false;
		if (upper)
			buf[n++] = '-';
		buf[n++] = upper ? (char)(*p - 'A' + 'a') : *p;
	}
	buf[n] = '\0';
	return true;
}

static int read_flag(struct ctx *c, struct config *scratch, const struct ynode *k, const struct ynode *v,
		     struct config_file_flag *out)
{
	char p[YAML_PATH_SIZE], flag[64], msg[512];
	yaml_path_key(p, sizeof(p), "flags", k->value);
	if (!camel_to_flag(k->value, flag, sizeof(flag)))
		return yaml_walk_fail(&c->w, k->line, -EINVAL,
				      "%s: unknown flag (keys are flags in camelCase, e.g. healthInterval)", p);
	const char *value = NULL;
	int r = get_text(c, v, p, &value);
	if (r < 0)
		return r;
	/* The command line's rule for the flag, on a scratch configuration: the
	 * caller applies the flags once the whole file is known to be good. */
	r = config_flag_apply(scratch, flag, value, msg, sizeof(msg));
	if (r == -ENOENT)
		return yaml_walk_fail(&c->w, k->line, -EINVAL, "%s: unknown flag (there is no --%s)", p, flag);
	if (r == -EOPNOTSUPP)
		return yaml_walk_fail(&c->w, k->line, -EINVAL, "%s: --%s cannot be set from the file", p, flag);
	if (r < 0) {
		/* The message names the flag as "--flag: ", which the path replaces. */
		const char *m = msg;
		size_t flag_len = strlen(flag);
		if (strncmp(m, "--", 2) == 0 && strncmp(m + 2, flag, flag_len) == 0 && strncmp(m + 2 + flag_len, ": ", 2) == 0)
			m += 4 + flag_len;
		return yaml_walk_fail(&c->w, v->line, -EINVAL, "%s: %s", p, m);
	}
	out->key = arena_strdup(&c->file->arena, k->value);
	out->flag = arena_strdup(&c->file->arena, flag);
	if (!out->key || !out->flag)
		return fail_nomem(c);
	out->value = value;
	out->line = k->line;
	return 0;
}

static int read_flags(struct ctx *c, const struct ynode *n)
{
	int r = yaml_want_map(&c->w, n, "flags");
	if (r < 0 || ynode_is_null(n))
		return r;
	struct config_file *f = c->file;
	struct config *scratch = calloc(1, sizeof(*scratch));
	f->flags = arena_alloc(&f->arena, (n->n_children / 2 + 1) * sizeof(*f->flags));
	if (!scratch || !f->flags) {
		r = fail_nomem(c);
		goto out;
	}
	ynode_for_each_pair(n, k, v) {
		r = read_flag(c, scratch, k, v, &f->flags[f->n_flags]);
		if (r < 0)
			goto out;
		f->n_flags++;
	}
	r = 0;
out:
	free(scratch);
	return r;
}

static int read_ts_resource(struct ctx *c, const struct ynode *n, const char *path,
			    struct config_slice *out)
{
	int r = yaml_want_map(&c->w, n, path);
	if (r < 0)
		return r;
	if (ynode_is_null(n))
		return yaml_walk_fail(&c->w, n->line, -EINVAL, "%s: needs a name and replicas", path);
	const struct ynode *name = NULL, *replicas = NULL;
	ynode_for_each_pair(n, k, v) {
		if (strcmp(k->value, "name") == 0)
			name = v;
		else if (strcmp(k->value, "replicas") == 0)
			replicas = v;
		else
			return yaml_unknown_key(&c->w, k, path, "name, replicas");
	}
	if (!name || !replicas)
		return yaml_walk_fail(&c->w, n->line, -EINVAL, "%s: needs %s", path, name ? "replicas" : "a name");
	char p[YAML_PATH_SIZE];
	yaml_path_key(p, sizeof(p), path, "name");
	r = get_resource_name(c, name, p, out->name);
	if (r < 0)
		return r;
	yaml_path_key(p, sizeof(p), path, "replicas");
	r = get_replicas(c, replicas, p, &out->replicas);
	if (r < 0)
		return r;
	out->line = n->line;
	return 0;
}

static int read_time_slicing(struct ctx *c, const struct ynode *key, const struct ynode *n)
{
	const char *path = "sharing.timeSlicing";
	int r = yaml_want_map(&c->w, n, path);
	if (r < 0)
		return r;
	struct config_file *f = c->file;
	f->time_slicing.line = key->line;
	if (ynode_is_null(n))
		return 0;
	char p[YAML_PATH_SIZE];
	ynode_for_each_pair(n, k, v) {
		yaml_path_key(p, sizeof(p), path, k->value);
		if (strcmp(k->value, "renameByDefault") == 0) {
			r = yaml_get_bool(&c->w, v, p, &f->time_slicing.rename_by_default);
		} else if (strcmp(k->value, "failRequestsGreaterThanOne") == 0) {
			r = yaml_get_bool(&c->w, v, p, &f->time_slicing.fail_requests_greater_than_one);
		} else if (strcmp(k->value, "enableDeviceShare") == 0) {
			r = yaml_get_bool(&c->w, v, p, &f->time_slicing.enable_device_share);
		} else if (strcmp(k->value, "resources") == 0) {
			r = yaml_want_seq(&c->w, v, p);
			if (r < 0 || ynode_is_null(v))
				continue;
			f->time_slicing.resources = arena_alloc(&f->arena, (v->n_children + 1) *
										  sizeof(*f->time_slicing.resources));
			if (!f->time_slicing.resources)
				return fail_nomem(c);
			size_t i = 0;
			for (const struct ynode *item = v->first; item; item = item->next, i++) {
				char ip[YAML_PATH_SIZE];
				yaml_path_index(ip, sizeof(ip), p, i);
				r = read_ts_resource(c, item, ip, &f->time_slicing.resources[i]);
				if (r < 0)
					return r;
				for (size_t j = 0; j < i; j++)
					if (strcmp(f->time_slicing.resources[j].name, f->time_slicing.resources[i].name) == 0)
						return yaml_walk_fail(&c->w, item->line, -EINVAL,
								      "%s.name: '%s' is listed twice", ip,
								      f->time_slicing.resources[i].name);
				f->time_slicing.n_resources++;
			}
		} else {
			r = yaml_unknown_key(&c->w, k, path,
					     "renameByDefault, failRequestsGreaterThanOne, enableDeviceShare, resources");
		}
		if (r < 0)
			return r;
	}
	return 0;
}

static int read_sharing(struct ctx *c, const struct ynode *n)
{
	int r = yaml_want_map(&c->w, n, "sharing");
	if (r < 0 || ynode_is_null(n))
		return r;
	ynode_for_each_pair(n, k, v) {
		if (strcmp(k->value, "timeSlicing") != 0)
			return yaml_unknown_key(&c->w, k, "sharing", "timeSlicing");
		r = read_time_slicing(c, k, v);
		if (r < 0)
			return r;
	}
	return 0;
}

static int family_parse(const char *s, enum npu_family *ret)
{
	static const enum npu_family families[] = { NPU_FAMILY_910,  NPU_FAMILY_910B, NPU_FAMILY_A3,
						    NPU_FAMILY_310, NPU_FAMILY_310P, NPU_FAMILY_310B };
	for (size_t i = 0; i < ELEMENTSOF(families); i++)
		if (strcmp(s, npu_family_name(families[i])) == 0) {
			*ret = families[i];
			return 0;
		}
	return -EINVAL;
}

static int read_resource(struct ctx *c, const struct ynode *n, const char *path, struct config_family_name *out)
{
	int r = yaml_want_map(&c->w, n, path);
	if (r < 0)
		return r;
	if (ynode_is_null(n))
		return yaml_walk_fail(&c->w, n->line, -EINVAL, "%s: needs a family and a name", path);
	const struct ynode *family = NULL, *name = NULL;
	ynode_for_each_pair(n, k, v) {
		if (strcmp(k->value, "family") == 0)
			family = v;
		else if (strcmp(k->value, "name") == 0)
			name = v;
		else
			return yaml_unknown_key(&c->w, k, path, "family, name");
	}
	if (!family || !name)
		return yaml_walk_fail(&c->w, n->line, -EINVAL, "%s: needs %s", path, family ? "a name" : "a family");
	char p[YAML_PATH_SIZE];
	const char *text = NULL;
	yaml_path_key(p, sizeof(p), path, "family");
	r = get_text(c, family, p, &text);
	if (r < 0)
		return r;
	if (family_parse(text, &out->family) < 0)
		return yaml_walk_fail(&c->w, family->line, -EINVAL,
				      "%s: '%.*s' is not one of 910, 910B, A3, 310, 310P, 310B", p, YAML_CLIP, text);
	yaml_path_key(p, sizeof(p), path, "name");
	r = get_resource_name(c, name, p, out->name);
	if (r < 0)
		return r;
	out->line = n->line;
	return 0;
}

static int read_resources(struct ctx *c, const struct ynode *key, const struct ynode *n)
{
	int r = yaml_want_seq(&c->w, n, "resources");
	if (r < 0)
		return r;
	struct config_file *f = c->file;
	f->resources_line = key->line;
	if (ynode_is_null(n))
		return 0;
	f->resources = arena_alloc(&f->arena, (n->n_children + 1) * sizeof(*f->resources));
	if (!f->resources)
		return fail_nomem(c);
	size_t i = 0;
	for (const struct ynode *item = n->first; item; item = item->next, i++) {
		char p[YAML_PATH_SIZE];
		yaml_path_index(p, sizeof(p), "resources", i);
		r = read_resource(c, item, p, &f->resources[i]);
		if (r < 0)
			return r;
		/* A chip is advertised under one name only. */
		for (size_t j = 0; j < i; j++)
			if (f->resources[j].family == f->resources[i].family)
				return yaml_walk_fail(&c->w, item->line, -EINVAL,
						      "%s.family: %s is listed twice (first on line %zu)", p,
						      npu_family_name(f->resources[i].family), f->resources[j].line);
		f->n_resources++;
	}
	return 0;
}

/* --- faultPolicy --- */

/* "240h" for FAULT_POLICY_MAX_WINDOW_MS, for messages. */
#define WINDOW_MAX_TEXT "240h"
#define RELEASE_MAX_TEXT "4294967296s"

static int get_duration(struct ctx *c, const struct ynode *n, const char *path, int64_t min_ms, int64_t max_ms,
			const char *range, int64_t *ret)
{
	int r = yaml_want_text(&c->w, n, path);
	if (r < 0)
		return r;
	int64_t ms;
	if (parse_duration_ms_max(n->value, max_ms, &ms) < 0 || ms < min_ms)
		return yaml_walk_fail(&c->w, n->line, -EINVAL,
				      "%s: '%.*s' is not a duration %s (e.g. 500ms, 30s, 5m, 24h; a bare number means seconds)",
				      path, YAML_CLIP, n->value, range);
	*ret = ms;
	return 0;
}

static int get_level(struct ctx *c, const struct ynode *n, const char *path, enum fault_level *ret)
{
	int r = yaml_want_text(&c->w, n, path);
	if (r < 0)
		return r;
	if (fault_level_parse(n->value, ret) < 0)
		return yaml_walk_fail(&c->w, n->line, -EINVAL, "%s: '%.*s' is not one of %s", path, YAML_CLIP, n->value,
				      FAULT_LEVEL_NAMES);
	return 0;
}

static int get_code(struct ctx *c, const struct ynode *n, const char *path, uint32_t *ret)
{
	int r = yaml_want_text(&c->w, n, path);
	if (r < 0)
		return r;
	if (fault_code_parse(n->value, ret) < 0)
		return yaml_walk_fail(&c->w, n->line, -EINVAL,
				      "%s: '%.*s' is not a fault code (up to 8 hex digits such as 80E01801)", path,
				      YAML_CLIP, n->value);
	return 0;
}

/* codes: "*" for every code, or a list of codes. */
static int get_rule_codes(struct ctx *c, const struct ynode *n, const char *path, uint32_t *codes, size_t *ret_n,
			  bool *ret_all)
{
	if (n->type == YN_SCALAR && strcmp(n->value, "*") == 0) {
		*ret_n = 0;
		*ret_all = true;
		return 0;
	}
	if (n->type != YN_SEQ)
		return yaml_walk_fail(&c->w, n->line, -EINVAL, "%s: must be a list of fault codes, or \"*\" for every code",
				      path);
	if (n->n_children == 0)
		return yaml_walk_fail(&c->w, n->line, -EINVAL,
				      "%s: an empty list names no code; list fault codes, or write \"*\" for every code", path);
	int r = yaml_want_seq(&c->w, n, path);
	if (r < 0)
		return r;
	size_t i = 0;
	for (const struct ynode *item = n->first; item; item = item->next, i++) {
		char p[YAML_PATH_SIZE];
		yaml_path_index(p, sizeof(p), path, i);
		r = get_code(c, item, p, &codes[i]);
		if (r < 0)
			return r;
	}
	*ret_n = i;
	*ret_all = false;
	return 0;
}

/* What a window that fault_policy_config_add_* refused after every check
 * here leaves: the pool of the rules' codes was full. */
static int fail_rule_codes(struct ctx *c, const struct ynode *n, const char *path, int r)
{
	return yaml_walk_fail(&c->w, n->line, r, "%s: more than %d codes in the frequency and duration entries together",
			      path, FAULT_POLICY_MAX_RULE_CODES);
}

/* The keys of a frequency or duration entry, by name. */
struct rule_nodes {
	const struct ynode *codes, *level, *a, *b, *c; /* a, b, c: the kind's own keys */
};

static int rule_nodes(struct ctx *c, const struct ynode *n, const char *path, const char *const names[3],
		      const char *takes, struct rule_nodes *ret)
{
	int r = yaml_want_map(&c->w, n, path);
	if (r < 0)
		return r;
	*ret = (struct rule_nodes){ 0 };
	if (ynode_is_null(n))
		return yaml_walk_fail(&c->w, n->line, -EINVAL, "%s: needs %s", path, takes);
	ynode_for_each_pair(n, k, v) {
		const struct ynode **slot = strcmp(k->value, "codes") == 0   ? &ret->codes
					    : strcmp(k->value, "level") == 0 ? &ret->level
					    : strcmp(k->value, names[0]) == 0 ? &ret->a
					    : strcmp(k->value, names[1]) == 0 ? &ret->b
					    : names[2] && strcmp(k->value, names[2]) == 0 ? &ret->c
									      : NULL;
		if (!slot)
			return yaml_unknown_key(&c->w, k, path, takes);
		*slot = v;
	}
	return 0;
}

static int need_key(struct ctx *c, const struct ynode *entry, const struct ynode *v, const char *path,
		    const char *key)
{
	return v ? 0 : yaml_walk_fail(&c->w, entry->line, -EINVAL, "%s: needs %s", path, key);
}

static int read_frequency(struct ctx *c, const struct ynode *n, const char *path, struct fault_policy_config *rules)
{
	static const char *const names[3] = { "count", "window", "releaseWindow" };
	struct rule_nodes k;
	char p[YAML_PATH_SIZE];
	int r = rule_nodes(c, n, path, names, "codes, count, window, level, releaseWindow", &k);
	if (r < 0 || (r = need_key(c, n, k.codes, path, "codes")) < 0 || (r = need_key(c, n, k.a, path, "count")) < 0 ||
	    (r = need_key(c, n, k.b, path, "window")) < 0 || (r = need_key(c, n, k.level, path, "level")) < 0)
		return r;
	uint32_t codes[CONFIG_FILE_MAX_ENTRIES];
	size_t n_codes;
	bool all;
	uint32_t count;
	int64_t window = 0, release = 0;
	enum fault_level level;
	yaml_path_key(p, sizeof(p), path, "codes");
	if ((r = get_rule_codes(c, k.codes, p, codes, &n_codes, &all)) < 0)
		return r;
	yaml_path_key(p, sizeof(p), path, "count");
	if (k.a->type != YN_SCALAR || k.a->kind != YS_INT || k.a->value[0] == '-' || k.a->value[0] == '+' ||
	    parse_u32(k.a->value, 10, FAULT_POLICY_MAX_COUNT, &count) < 0 || count < 1)
		return yaml_walk_fail(&c->w, k.a->line, -EINVAL, "%s: must be an integer from 1 to %d", p,
				      FAULT_POLICY_MAX_COUNT);
	yaml_path_key(p, sizeof(p), path, "window");
	if ((r = get_duration(c, k.b, p, 1, FAULT_POLICY_MAX_WINDOW_MS, "from 1ms to " WINDOW_MAX_TEXT, &window)) < 0)
		return r;
	yaml_path_key(p, sizeof(p), path, "level");
	if ((r = get_level(c, k.level, p, &level)) < 0)
		return r;
	yaml_path_key(p, sizeof(p), path, "releaseWindow");
	if (k.c && (r = get_duration(c, k.c, p, 0, FAULT_POLICY_MAX_RELEASE_MS, "from 0 to " RELEASE_MAX_TEXT,
				     &release)) < 0)
		return r;
	/* Within every bound but the pool of the rules' codes: checked above,
	 * and at most 64 rules. */
	r = fault_policy_config_add_frequency(rules, codes, n_codes, all, count, window, level, release);
	return r < 0 ? fail_rule_codes(c, n, path, r) : 0;
}

static int read_duration(struct ctx *c, const struct ynode *n, const char *path, struct fault_policy_config *rules)
{
	static const char *const names[3] = { "timeout", "recover", NULL };
	struct rule_nodes k;
	char p[YAML_PATH_SIZE];
	int r = rule_nodes(c, n, path, names, "codes, timeout, level, recover", &k);
	if (r < 0 || (r = need_key(c, n, k.codes, path, "codes")) < 0 ||
	    (r = need_key(c, n, k.a, path, "timeout")) < 0 || (r = need_key(c, n, k.level, path, "level")) < 0)
		return r;
	uint32_t codes[CONFIG_FILE_MAX_ENTRIES];
	size_t n_codes;
	bool all;
	int64_t timeout = 0, recover = 0;
	enum fault_level level;
	yaml_path_key(p, sizeof(p), path, "codes");
	if ((r = get_rule_codes(c, k.codes, p, codes, &n_codes, &all)) < 0)
		return r;
	yaml_path_key(p, sizeof(p), path, "timeout");
	if ((r = get_duration(c, k.a, p, 0, FAULT_POLICY_MAX_WINDOW_MS, "from 0 to " WINDOW_MAX_TEXT, &timeout)) < 0)
		return r;
	yaml_path_key(p, sizeof(p), path, "level");
	if ((r = get_level(c, k.level, p, &level)) < 0)
		return r;
	yaml_path_key(p, sizeof(p), path, "recover");
	if (k.b && (r = get_duration(c, k.b, p, 0, FAULT_POLICY_MAX_WINDOW_MS, "from 0 to " WINDOW_MAX_TEXT,
				     &recover)) < 0)
		return r;
	r = fault_policy_config_add_duration(rules, codes, n_codes, all, timeout, level, recover);
	return r < 0 ? fail_rule_codes(c, n, path, r) : 0;
}

/* frequency or duration: a list of entries. */
static int read_windows(struct ctx *c, const struct ynode *n, const char *path, struct fault_policy_config *rules,
			int (*read_one)(struct ctx *, const struct ynode *, const char *, struct fault_policy_config *))
{
	int r = yaml_want_seq(&c->w, n, path);
	if (r < 0 || ynode_is_null(n))
		return r;
	size_t i = 0;
	for (const struct ynode *item = n->first; item; item = item->next, i++) {
		char p[YAML_PATH_SIZE];
		yaml_path_index(p, sizeof(p), path, i);
		if ((r = read_one(c, item, p, rules)) < 0)
			return r;
	}
	return 0;
}

/* codes: a mapping of fault codes to levels. */
static int read_fault_codes(struct ctx *c, const struct ynode *n, struct fault_policy_config *rules)
{
	const char *path = "faultPolicy.codes";
	int r = yaml_want_map(&c->w, n, path);
	if (r < 0 || ynode_is_null(n))
		return r;
	/* The codes so far and their lines: the same code may be written in
	 * several ways (80E01801, 0x80e01801). */
	struct {
		uint32_t code;
		size_t line;
	} seen[CONFIG_FILE_MAX_ENTRIES];
	size_t n_seen = 0;
	ynode_for_each_pair(n, k, v) {
		char p[YAML_PATH_SIZE];
		uint32_t code;
		enum fault_level level;
		yaml_path_key(p, sizeof(p), path, k->value);
		if ((r = get_code(c, k, p, &code)) < 0 || (r = get_level(c, v, p, &level)) < 0)
			return r;
		for (size_t i = 0; i < n_seen; i++)
			if (seen[i].code == code)
				return yaml_walk_fail(&c->w, k->line, -EINVAL, "%s: %08X is listed twice (first on line %zu)",
						      p, code, seen[i].line);
		seen[n_seen].code = code;
		seen[n_seen++].line = k->line;
		/* Fits: at most CONFIG_FILE_MAX_ENTRIES codes, a valid level. */
		(void)fault_policy_config_set_code(rules, code, level);
	}
	return 0;
}

/* reset: the hot reset of chips whose faults ask for one. */
static int read_reset(struct ctx *c, const struct ynode *n, const char *path, struct fault_reset_config *ret)
{
	int r = yaml_want_map(&c->w, n, path);
	if (r < 0)
		return r;
	fault_reset_config_init(ret);
	if (ynode_is_null(n))
		return 0;
	char p[YAML_PATH_SIZE];
	ynode_for_each_pair(n, k, v) {
		yaml_path_key(p, sizeof(p), path, k->value);
		if (strcmp(k->value, "enabled") == 0) {
			r = yaml_get_bool(&c->w, v, p, &ret->enabled);
		} else if (strcmp(k->value, "maxResets") == 0) {
			if (v->type != YN_SCALAR || v->kind != YS_INT || v->value[0] == '-' || v->value[0] == '+' ||
			    parse_u32(v->value, 10, FAULT_RESET_MAX_ATTEMPTS, &ret->max_resets) < 0 || ret->max_resets < 1)
				r = yaml_walk_fail(&c->w, v->line, -EINVAL, "%s: must be an integer from 1 to %d", p,
						   FAULT_RESET_MAX_ATTEMPTS);
		} else if (strcmp(k->value, "window") == 0) {
			r = get_duration(c, v, p, 1, FAULT_POLICY_MAX_WINDOW_MS, "from 1ms to " WINDOW_MAX_TEXT,
					 &ret->window_ms);
		} else if (strcmp(k->value, "timeout") == 0) {
			r = get_duration(c, v, p, 1, FAULT_RESET_MAX_TIMEOUT_MS, "from 1ms to 1h", &ret->timeout_ms);
		} else {
			r = yaml_unknown_key(&c->w, k, path, "enabled, maxResets, window, timeout");
		}
		if (r < 0)
			return r;
	}
	return 0;
}

static int read_fault_policy(struct ctx *c, const struct ynode *key, const struct ynode *n)
{
	const char *path = "faultPolicy";
	int r = yaml_want_map(&c->w, n, path);
	if (r < 0)
		return r;
	struct config_fault_policy *fp = &c->file->fault_policy;
	fp->line = key->line;
	fp->rules = arena_alloc(&c->file->arena, sizeof(*fp->rules));
	if (!fp->rules)
		return fail_nomem(c);
	fault_policy_config_init(fp->rules);
	if (ynode_is_null(n))
		return 0;
	char p[YAML_PATH_SIZE];
	ynode_for_each_pair(n, k, v) {
		yaml_path_key(p, sizeof(p), path, k->value);
		if (strcmp(k->value, "recoveryHold") == 0) {
			r = get_duration(c, v, p, 0, FAULT_POLICY_MAX_WINDOW_MS, "from 0 to " WINDOW_MAX_TEXT,
					 &fp->recovery_hold_ms);
			fp->has_recovery_hold = r == 0;
		} else if (strcmp(k->value, "defaultLevel") == 0) {
			r = get_level(c, v, p, &fp->default_level);
			fp->has_default_level = r == 0;
		} else if (strcmp(k->value, "releaseWindow") == 0) {
			r = get_duration(c, v, p, 0, FAULT_POLICY_MAX_RELEASE_MS, "from 0 to " RELEASE_MAX_TEXT,
					 &fp->release_window_ms);
			fp->has_release_window = r == 0;
		} else if (strcmp(k->value, "codes") == 0) {
			r = read_fault_codes(c, v, fp->rules);
		} else if (strcmp(k->value, "frequency") == 0) {
			r = read_windows(c, v, p, fp->rules, read_frequency);
		} else if (strcmp(k->value, "duration") == 0) {
			r = read_windows(c, v, p, fp->rules, read_duration);
		} else if (strcmp(k->value, "reset") == 0) {
			r = read_reset(c, v, p, &fp->reset);
			fp->has_reset = r == 0;
		} else if (strcmp(k->value, "huaweiFiles") == 0) {
			r = get_text(c, v, p, &fp->huawei_files);
			if (r == 0 && (fp->huawei_files[0] != '/' || strlen(fp->huawei_files) >= CONFIG_PATH_MAX))
				r = yaml_walk_fail(&c->w, v->line, -EINVAL, "%s: '%.*s' is not an absolute path", p,
						   YAML_CLIP, fp->huawei_files);
			fp->huawei_files_line = v->line;
		} else {
			r = yaml_unknown_key(&c->w, k, path,
					     "recoveryHold, defaultLevel, releaseWindow, codes, frequency, duration, "
					     "reset, huaweiFiles");
		}
		if (r < 0)
			return r;
	}
	return 0;
}

static int read_root(struct ctx *c, const struct ynode *root)
{
	if (!root || ynode_is_null(root))
		return yaml_walk_fail(&c->w, root ? root->line : 0, -EINVAL,
				      "the file is empty; it must say at least 'version: v1'");
	int r = yaml_want_map(&c->w, root, "");
	if (r < 0)
		return r;
	const struct ynode *version = NULL;
	ynode_for_each_pair(root, k, v) {
		if (strcmp(k->value, "version") == 0) {
			version = v;
			if (v->type != YN_SCALAR || strcmp(v->value, "v1") != 0)
				return yaml_walk_fail(&c->w, v->line, -EINVAL,
						      "version: '%.*s' is not supported (only v1 is)", YAML_CLIP,
						      v->type == YN_SCALAR ? v->value : ynode_type_name(v));
		} else if (strcmp(k->value, "flags") == 0) {
			r = read_flags(c, v);
		} else if (strcmp(k->value, "sharing") == 0) {
			r = read_sharing(c, v);
		} else if (strcmp(k->value, "resources") == 0) {
			r = read_resources(c, k, v);
		} else if (strcmp(k->value, "faultPolicy") == 0) {
			r = read_fault_policy(c, k, v);
		} else {
			r = yaml_unknown_key(&c->w, k, "", "version, flags, sharing, resources, faultPolicy");
		}
		if (r < 0)
			return r;
	}
	if (!version)
		return yaml_walk_fail(&c->w, root->line, -EINVAL,
				      "version: missing; the file must say 'version: v1'");
	return 0;
}

/* The file holds one document: the first is read, a second refused. */
static int on_document(void *ctx, const struct ynode *root, size_t line)
{
	struct ctx *c = ctx;
	if (++c->n_documents > 1)
		return yaml_walk_fail(&c->w, line, -EINVAL, "a second YAML document: the file holds one");
	return read_root(c, root);
}

int config_file_parse(const char *data, size_t len, struct config_file **ret_file, char *why, size_t why_size)
{
	static const struct yaml_tree_limits limits = { .max_depth = CONFIG_FILE_MAX_DEPTH,
							.max_nodes = CONFIG_FILE_MAX_NODES };
	struct ctx c = { .w = { .why = why, .why_size = why_size, .max_entries = CONFIG_FILE_MAX_ENTRIES } };
	int r;

	if (why_size)
		why[0] = '\0';
	if (!data && len) {
		r = yaml_walk_fail(&c.w, 0, -EINVAL, "no data");
		goto out;
	}
	if (len > CONFIG_FILE_MAX_BYTES) {
		r = yaml_walk_fail(&c.w, 0, -E2BIG, "larger than %d bytes", CONFIG_FILE_MAX_BYTES);
		goto out;
	}
	c.file = calloc(1, sizeof(*c.file));
	if (!c.file) {
		r = fail_nomem(&c);
		goto out;
	}
	r = yaml_tree_parse(data, len, &limits, on_document, &c, why, why_size);
	/* An empty text has no document at all. */
	if (r == 0 && c.n_documents == 0)
		r = read_root(&c, NULL);
	if (r < 0)
		goto out;
	*ret_file = c.file;
	c.file = NULL;
out:
	config_file_free(c.file);
	return r;
}

int config_file_load(const char *path, struct config_file **ret_file, char *why, size_t why_size)
{
	struct config_file *file = NULL;
	char *buf = NULL;
	char problem[1024] = "";
	size_t len = 0;
	int r = file_read_bounded(path, CONFIG_FILE_MAX_BYTES, &buf, &len, problem, sizeof(problem));
	if (r < 0)
		goto out;
	r = config_file_parse(buf, len, &file, problem, sizeof(problem));
	if (r < 0)
		goto out;
	file->path = arena_strdup(&file->arena, path);
	if (!file->path) {
		r = -ENOMEM;
		snprintf(problem, sizeof(problem), "out of memory");
		goto out;
	}
	*ret_file = file;
	file = NULL;
out:
	if (r < 0 && why_size)
		snprintf(why, why_size, "%s: %s", path, problem);
	free(buf);
	config_file_free(file);
	return r;
}

void config_file_free(struct config_file *file)
{
	if (!file)
		return;
	arena_free(&file->arena);
	free(file);
}
