/* SPDX-License-Identifier: Apache-2.0 */
/* Why a ResourceClaim waits; see claims.h. */
#include "claims.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "base/strbuf.h"
#include "fit.h"
#include "quantity.h"

const char *claims_cause_name(enum claims_cause cause)
{
	static const char *const names[CLAIMS_CAUSE_COUNT] = {
		[CLAIMS_NOT_SELECTED] = "not-selected",
		[CLAIMS_TAINTED] = "tainted",
		[CLAIMS_ALLOCATED] = "allocated",
		[CLAIMS_NO_COUNTERS] = "short-of-counters",
		[CLAIMS_NO_SHARES] = "short-of-shares",
	};
	return (unsigned)cause < CLAIMS_CAUSE_COUNT ? names[cause] : "unknown";
}

/* ---- JSON access: a wrong type is an absent field ------------------------- */

static struct json_object *get(struct json_object *o, const char *key)
{
	struct json_object *v;
	if (!o || !json_object_is_type(o, json_type_object) || !json_object_object_get_ex(o, key, &v))
		return NULL;
	return v;
}

static const char *get_str(struct json_object *o, const char *key)
{
	struct json_object *v = get(o, key);
	return v && json_object_is_type(v, json_type_string) ? json_object_get_string(v) : NULL;
}

static struct json_object *get_array(struct json_object *o, const char *key)
{
	struct json_object *v = get(o, key);
	return v && json_object_is_type(v, json_type_array) ? v : NULL;
}

static size_t array_len(struct json_object *a)
{
	return a ? json_object_array_length(a) : 0;
}

static bool get_bool(struct json_object *o, const char *key)
{
	struct json_object *v = get(o, key);
	return v && json_object_is_type(v, json_type_boolean) && json_object_get_boolean(v);
}

static const char *or_empty(const char *s)
{
	return s ? s : "";
}

/* A List's items (or an array, or one object) as an array view: *ret_n
 * elements, element i by item(). */
struct view {
	struct json_object *items;
	bool single;
	size_t n;
};

static struct view view_of(struct json_object *doc)
{
	struct view v = { 0 };
	v.items = fit_items(doc, &v.single);
	v.n = !v.items ? 0 : v.single ? 1 : json_object_array_length(v.items);
	return v;
}

static struct json_object *item(const struct view *v, size_t i)
{
	return v->single ? v->items : json_object_array_get_idx(v->items, i);
}

/* A quantity field ({"value": "20"} in counters, "1" in consumedCapacity):
 * 0 and -EINVAL when it is neither. */
static int amount(struct json_object *v, int64_t *ret)
{
	struct json_object *inner = get(v, "value");
	if (inner)
		v = inner;
	if (v && json_object_is_type(v, json_type_string))
		return quantity_parse_amount(json_object_get_string(v), ret);
	if (v && json_object_is_type(v, json_type_int) && json_object_get_int64(v) >= 0) {
		*ret = json_object_get_int64(v);
		return 0;
	}
	return -EINVAL;
}

/* ---- CEL: the simple forms (claims.h) ------------------------------------- */

enum sel {
	SEL_FALSE,
	SEL_TRUE,
	SEL_ERROR,   /* CEL fails on this device (a missing attribute, a type mismatch) */
	SEL_UNKNOWN, /* not evaluated */
};

#define MAX_PARTS 32
#define TOKEN_MAX 128

enum part_kind {
	PART_UNKNOWN,
	PART_DRIVER,    /* device.driver OP literal */
	PART_ATTRIBUTE, /* device.attributes[domain].name OP literal, or alone (a bool) */
	PART_IN,        /* "name" in device.attributes[domain] / device.capacity[domain] */
};

enum lit_type { LIT_NONE, LIT_STRING, LIT_INT, LIT_BOOL };

struct part {
	enum part_kind kind;
	bool negate;     /* != */
	bool capacity;   /* PART_IN: in device.capacity */
	char domain[TOKEN_MAX], name[TOKEN_MAX];
	enum lit_type lit;
	char str[TOKEN_MAX];
	int64_t num;
	bool flag;
};

struct selector {
	size_t n;
	bool whole_unknown; /* a top-level || or ?: we cannot split */
	struct part parts[MAX_PARTS];
};

static const char *skip_space(const char *p)
{
	while (isspace((unsigned char)*p))
		p++;
	return p;
}

/* A double- or single-quoted string without escapes into out. */
static const char *quoted(const char *p, char *out)
{
	char q = *p;
	if (q != '"' && q != '\'')
		return NULL;
	const char *end = strchr(p + 1, q);
	if (!end || (size_t)(end - p - 1) >= TOKEN_MAX || memchr(p + 1, '\\', (size_t)(end - p - 1)))
		return NULL;
	memcpy(out, p + 1, (size_t)(end - p - 1));
	out[end - p - 1] = '\0';
	return end + 1;
}

static const char *literal_prefix(const char *p, const char *word)
{
	size_t n = strlen(word);
	return strncmp(p, word, n) == 0 ? p + n : NULL;
}

static const char *identifier(const char *p, char *out)
{
	size_t n = 0;
	while ((isalnum((unsigned char)p[n]) || p[n] == '_') && n + 1 < TOKEN_MAX)
		n++;
	if (n == 0 || isalnum((unsigned char)p[n]) || p[n] == '_')
		return NULL;
	memcpy(out, p, n);
	out[n] = '\0';
	return p + n;
}

/* `device.attributes["domain"]` or `device.capacity["domain"]`. */
static const char *map_ref(const char *p, struct part *part, bool *ret_capacity)
{
	const char *q;
	if ((q = literal_prefix(p, "device.attributes[")) != NULL)
		*ret_capacity = false;
	else if ((q = literal_prefix(p, "device.capacity[")) != NULL)
		*ret_capacity = true;
	else
		return NULL;
	q = quoted(skip_space(q), part->domain);
	if (!q || *(q = skip_space(q)) != ']')
		return NULL;
	return q + 1;
}

static const char *literal(const char *p, struct part *part)
{
	const char *q;
	if ((q = quoted(p, part->str)) != NULL) {
		part->lit = LIT_STRING;
		return q;
	}
	if ((q = literal_prefix(p, "true")) != NULL || (q = literal_prefix(p, "false")) != NULL) {
		if (isalnum((unsigned char)*q) || *q == '_')
			return NULL;
		part->lit = LIT_BOOL;
		part->flag = *p == 't';
		return q;
	}
	char *end;
	errno = 0;
	long long v = strtoll(p, &end, 10);
	if (end == p || errno || *end == '.' || *end == 'u' || *end == 'e')
		return NULL;
	part->lit = LIT_INT;
	part->num = v;
	return end;
}

/* One conjunct, text[0..len). */
static void parse_part(const char *text, size_t len, struct part *part)
{
	char buf[1024];
	*part = (struct part){ .kind = PART_UNKNOWN };
	if (len >= sizeof(buf))
		return;
	memcpy(buf, text, len);
	buf[len] = '\0';
	const char *p = skip_space(buf), *q;
	struct part tmp = { 0 };
	bool capacity = false;
	if ((q = quoted(p, tmp.name)) != NULL) {
		/* "name" in device.attributes["domain"] */
		q = skip_space(q);
		if (strncmp(q, "in", 2) != 0 || !isspace((unsigned char)q[2]))
			return;
		q = map_ref(skip_space(q + 2), &tmp, &capacity);
		if (!q || *skip_space(q) != '\0')
			return;
		tmp.kind = PART_IN;
		tmp.capacity = capacity;
		*part = tmp;
		return;
	}
	if ((q = literal_prefix(p, "device.driver")) != NULL) {
		tmp.kind = PART_DRIVER;
	} else if ((q = map_ref(p, &tmp, &capacity)) != NULL && !capacity && *q == '.') {
		q = identifier(q + 1, tmp.name);
		if (!q)
			return;
		tmp.kind = PART_ATTRIBUTE;
	} else {
		return;
	}
	q = skip_space(q);
	if (*q == '\0' && tmp.kind == PART_ATTRIBUTE) {
		/* A bool attribute alone. */
		tmp.lit = LIT_BOOL;
		tmp.flag = true;
		*part = tmp;
		return;
	}
	if (strncmp(q, "==", 2) == 0)
		tmp.negate = false;
	else if (strncmp(q, "!=", 2) == 0)
		tmp.negate = true;
	else
		return;
	q = literal(skip_space(q + 2), &tmp);
	if (!q || *skip_space(q) != '\0' || (tmp.kind == PART_DRIVER && tmp.lit != LIT_STRING))
		return;
	*part = tmp;
}

/* Splits expression at its top-level && (outside strings and brackets). */
static void parse_selector(const char *expression, struct selector *s)
{
	*s = (struct selector){ 0 };
	int depth = 0;
	char quote = 0;
	const char *start = expression, *p;
	for (p = expression; *p; p++) {
		if (quote) {
			if (*p == '\\' && p[1])
				p++;
			else if (*p == quote)
				quote = 0;
			continue;
		}
		if (*p == '"' || *p == '\'') {
			quote = *p;
		} else if (*p == '(' || *p == '[' || *p == '{') {
			depth++;
		} else if (*p == ')' || *p == ']' || *p == '}') {
			depth--;
		} else if (depth == 0 && (strncmp(p, "||", 2) == 0 || *p == '?')) {
			s->whole_unknown = true;
			return;
		} else if (depth == 0 && strncmp(p, "&&", 2) == 0) {
			if (s->n == MAX_PARTS) {
				s->whole_unknown = true;
				return;
			}
			parse_part(start, (size_t)(p - start), &s->parts[s->n++]);
			start = p + 2;
			p++;
		}
	}
	if (s->n == MAX_PARTS) {
		s->whole_unknown = true;
		return;
	}
	parse_part(start, (size_t)(p - start), &s->parts[s->n++]);
}

static bool selector_evaluated(const struct selector *s)
{
	if (s->whole_unknown)
		return false;
	for (size_t i = 0; i < s->n; i++)
		if (s->parts[i].kind == PART_UNKNOWN)
			return false;
	return true;
}

/* The attribute or capacity entry domain/name of device; unqualified names
 * are in the driver's domain. */
static struct json_object *device_entry(struct json_object *device, const char *map, const char *domain,
					const char *name, const char *driver)
{
	struct json_object *entries = get(device, map);
	char key[2 * TOKEN_MAX + 2];
	snprintf(key, sizeof(key), "%s/%s", domain, name);
	struct json_object *v = get(entries, key);
	if (!v && strcmp(domain, driver) == 0)
		v = get(entries, name);
	return v;
}

static bool domain_has(struct json_object *device, const char *map, const char *domain, const char *name,
		       const char *driver)
{
	return device_entry(device, map, domain, name, driver) != NULL;
}

static enum sel eval_part(const struct part *part, const char *driver, struct json_object *device)
{
	bool equal;
	switch (part->kind) {
	case PART_UNKNOWN:
		return SEL_UNKNOWN;
	case PART_DRIVER:
		equal = strcmp(part->str, driver) == 0;
		return equal != part->negate ? SEL_TRUE : SEL_FALSE;
	case PART_IN:
		return domain_has(device, part->capacity ? "capacity" : "attributes", part->domain, part->name, driver)
			       ? SEL_TRUE
			       : SEL_FALSE;
	case PART_ATTRIBUTE:
		break;
	}
	struct json_object *a = device_entry(device, "attributes", part->domain, part->name, driver), *v;
	if (!a)
		return SEL_ERROR;
	if ((v = get(a, "string")) != NULL && json_object_is_type(v, json_type_string)) {
		if (part->lit != LIT_STRING)
			return SEL_ERROR;
		equal = strcmp(json_object_get_string(v), part->str) == 0;
	} else if ((v = get(a, "int")) != NULL && json_object_is_type(v, json_type_int)) {
		if (part->lit != LIT_INT)
			return SEL_ERROR;
		equal = json_object_get_int64(v) == part->num;
	} else if ((v = get(a, "bool")) != NULL && json_object_is_type(v, json_type_boolean)) {
		if (part->lit != LIT_BOOL)
			return SEL_ERROR;
		equal = json_object_get_boolean(v) == part->flag;
	} else {
		/* A version compares by semantic version rules: not ours to judge. */
		return SEL_UNKNOWN;
	}
	return equal != part->negate ? SEL_TRUE : SEL_FALSE;
}

/* CEL's && is commutative over errors: any false part makes it false. */
static enum sel eval_selector(const struct selector *s, const char *driver, struct json_object *device)
{
	if (s->whole_unknown)
		return SEL_UNKNOWN;
	bool unknown = false, error = false;
	for (size_t i = 0; i < s->n; i++) {
		switch (eval_part(&s->parts[i], driver, device)) {
		case SEL_FALSE:
			return SEL_FALSE;
		case SEL_ERROR:
			error = true;
			break;
		case SEL_UNKNOWN:
			unknown = true;
			break;
		case SEL_TRUE:
			break;
		}
	}
	return unknown ? SEL_UNKNOWN : error ? SEL_ERROR : SEL_TRUE;
}

int claims_selector_eval(const char *expression, const char *driver, struct json_object *device,
			 bool *ret_evaluated)
{
	struct selector *s = malloc(sizeof(*s));
	if (!s)
		return -ENOMEM;
	parse_selector(expression, s);
	*ret_evaluated = selector_evaluated(s);
	enum sel r = eval_selector(s, driver, device);
	free(s);
	return r == SEL_TRUE ? 1 : r == SEL_FALSE ? 0 : r == SEL_ERROR ? -1 : 2;
}

/* ---- the cluster's state -------------------------------------------------- */

struct device {
	struct json_object *obj; /* the slice's device entry */
	const char *name, *pool, *node;
	struct json_object *rule_taints; /* an array of taints from DeviceTaintRules, or NULL */
};

struct counter_set {
	const char *pool, *name;
	struct json_object *counters; /* {"aicores": {"value": "20"}, ...} */
};

struct allocation {
	const char *pool, *device, *claim_ns, *claim_name;
	bool admin;
	struct json_object *consumed; /* consumedCapacity, or NULL */
};

struct state {
	const char *driver;
	size_t n_devices, n_sets, n_allocs;
	struct device *devices;
	struct counter_set *sets;
	struct allocation *allocs;
	/* "pool/device" -> index in devices, and -> array of indices in allocs. */
	struct json_object *device_index, *alloc_index;
	/* The pools in the order they were first seen, with their node. */
	size_t n_pools;
	const char **pool_names, **pool_nodes;
};

static void state_clear(struct state *s)
{
	for (size_t i = 0; i < s->n_devices; i++)
		json_object_put(s->devices[i].rule_taints);
	free(s->devices);
	free(s->sets);
	free(s->allocs);
	free(s->pool_names);
	free(s->pool_nodes);
	json_object_put(s->device_index);
	json_object_put(s->alloc_index);
}

static void device_key(char *buf, size_t size, const char *pool, const char *device)
{
	snprintf(buf, size, "%s/%s", pool, device);
}

/* The newest generation of each pool of driver (older slices are being
 * replaced: the scheduler ignores them). */
static int pool_generations(const struct view *slices, const char *driver, struct json_object *ret_gen)
{
	for (size_t i = 0; i < slices->n; i++) {
		struct json_object *spec = get(item(slices, i), "spec"), *pool = get(spec, "pool"), *g;
		const char *name = get_str(pool, "name");
		if (!name || strcmp(or_empty(get_str(spec, "driver")), driver) != 0)
			continue;
		int64_t gen = (g = get(pool, "generation")) && json_object_is_type(g, json_type_int) ? json_object_get_int64(g) : 0;
		struct json_object *have = get(ret_gen, name);
		if (have && json_object_get_int64(have) >= gen)
			continue;
		struct json_object *v = json_object_new_int64(gen);
		if (!v || json_object_object_add(ret_gen, name, v) < 0) {
			json_object_put(v);
			return -ENOMEM;
		}
	}
	return 0;
}

static int read_slices(struct state *s, struct json_object *slices_doc, char *why, size_t why_size)
{
	struct view slices = view_of(slices_doc);
	struct json_object *gens = json_object_new_object();
	int r;
	if (!gens)
		return -ENOMEM;
	if (slices.n > CLAIMS_MAX_SLICES) {
		snprintf(why, why_size, "%zu ResourceSlices: more than %d", slices.n, CLAIMS_MAX_SLICES);
		r = -E2BIG;
		goto out;
	}
	r = pool_generations(&slices, s->driver, gens);
	if (r < 0)
		goto out;
	size_t n_devices = 0, n_sets = 0;
	for (int pass = 0; pass < 2; pass++) {
		for (size_t i = 0; i < slices.n; i++) {
			struct json_object *spec = get(item(&slices, i), "spec"), *pool = get(spec, "pool");
			const char *pool_name = get_str(pool, "name");
			struct json_object *g = get(pool, "generation");
			if (!pool_name || strcmp(or_empty(get_str(spec, "driver")), s->driver) != 0 || !get(gens, pool_name) ||
			    (g && json_object_is_type(g, json_type_int) ? json_object_get_int64(g) : 0) !=
				    json_object_get_int64(get(gens, pool_name)))
				continue;
			const char *node = get_str(spec, "nodeName");
			struct json_object *devices = get_array(spec, "devices"), *sets = get_array(spec, "sharedCounters");
			if (pass == 0) {
				n_devices += array_len(devices);
				n_sets += array_len(sets);
				if (n_devices > CLAIMS_MAX_DEVICES || n_sets > CLAIMS_MAX_DEVICES) {
					snprintf(why, why_size, "more than %d devices in the ResourceSlices of %s",
						 CLAIMS_MAX_DEVICES, s->driver);
					r = -E2BIG;
					goto out;
				}
				continue;
			}
			size_t p = 0;
			while (p < s->n_pools && strcmp(s->pool_names[p], pool_name) != 0)
				p++;
			if (p == s->n_pools) {
				s->pool_names[p] = pool_name;
				s->pool_nodes[p] = node ? node : "";
				s->n_pools++;
			} else if (node && !s->pool_nodes[p][0]) {
				s->pool_nodes[p] = node;
			}
			for (size_t k = 0; k < array_len(devices); k++) {
				struct json_object *d = json_object_array_get_idx(devices, k);
				const char *name = get_str(d, "name");
				if (!name)
					continue;
				s->devices[s->n_devices] = (struct device){ .obj = d, .name = name, .pool = pool_name,
									    .node = node ? node : "" };
				char key[2 * FIT_NAME_MAX];
				device_key(key, sizeof(key), pool_name, name);
				struct json_object *idx = json_object_new_int64((int64_t)s->n_devices);
				if (!idx || json_object_object_add(s->device_index, key, idx) < 0) {
					json_object_put(idx);
					r = -ENOMEM;
					goto out;
				}
				s->n_devices++;
			}
			for (size_t k = 0; k < array_len(sets); k++) {
				struct json_object *c = json_object_array_get_idx(sets, k);
				if (get_str(c, "name"))
					s->sets[s->n_sets++] = (struct counter_set){ .pool = pool_name,
										     .name = get_str(c, "name"),
										     .counters = get(c, "counters") };
			}
		}
		if (pass == 0) {
			size_t n_pools = (size_t)json_object_object_length(gens);
			s->devices = calloc(n_devices ? n_devices : 1, sizeof(*s->devices));
			s->sets = calloc(n_sets ? n_sets : 1, sizeof(*s->sets));
			s->pool_names = calloc(n_pools ? n_pools : 1, sizeof(*s->pool_names));
			s->pool_nodes = calloc(n_pools ? n_pools : 1, sizeof(*s->pool_nodes));
			if (!s->devices || !s->sets || !s->pool_names || !s->pool_nodes) {
				r = -ENOMEM;
				goto out;
			}
		}
	}
	r = 0;
out:
	json_object_put(gens);
	return r;
}

static struct device *find_device(const struct state *s, const char *pool, const char *name)
{
	char key[2 * FIT_NAME_MAX];
	device_key(key, sizeof(key), pool, name);
	struct json_object *idx = get(s->device_index, key);
	return idx ? &s->devices[json_object_get_int64(idx)] : NULL;
}

/* Every device result of driver in the claims' status.allocation, but the
 * claim being explained. */
static int read_allocations(struct state *s, struct json_object *claims_doc, const char *self_ns,
			    const char *self_name, char *why, size_t why_size)
{
	struct view claims = view_of(claims_doc);
	if (claims.n > CLAIMS_MAX_CLAIMS) {
		snprintf(why, why_size, "%zu ResourceClaims: more than %d", claims.n, CLAIMS_MAX_CLAIMS);
		return -E2BIG;
	}
	size_t total = 0;
	for (size_t i = 0; i < claims.n; i++)
		total += array_len(get_array(get(get(get(item(&claims, i), "status"), "allocation"), "devices"), "results"));
	if (total > CLAIMS_MAX_DEVICES) {
		snprintf(why, why_size, "more than %d allocated devices in the ResourceClaims", CLAIMS_MAX_DEVICES);
		return -E2BIG;
	}
	s->allocs = calloc(total ? total : 1, sizeof(*s->allocs));
	if (!s->allocs)
		return -ENOMEM;
	for (size_t i = 0; i < claims.n; i++) {
		struct json_object *c = item(&claims, i), *meta = get(c, "metadata");
		const char *ns = or_empty(get_str(meta, "namespace")), *name = or_empty(get_str(meta, "name"));
		if (strcmp(ns, self_ns) == 0 && strcmp(name, self_name) == 0)
			continue;
		struct json_object *results = get_array(get(get(get(c, "status"), "allocation"), "devices"), "results");
		for (size_t k = 0; k < array_len(results); k++) {
			struct json_object *res = json_object_array_get_idx(results, k);
			const char *pool = get_str(res, "pool"), *device = get_str(res, "device");
			if (!pool || !device || strcmp(or_empty(get_str(res, "driver")), s->driver) != 0)
				continue;
			s->allocs[s->n_allocs] = (struct allocation){ .pool = pool, .device = device, .claim_ns = ns,
								      .claim_name = name, .admin = get_bool(res, "adminAccess"),
								      .consumed = get(res, "consumedCapacity") };
			char key[2 * FIT_NAME_MAX];
			device_key(key, sizeof(key), pool, device);
			struct json_object *list = get(s->alloc_index, key), *idx;
			if (!list) {
				list = json_object_new_array();
				if (!list || json_object_object_add(s->alloc_index, key, list) < 0) {
					json_object_put(list);
					return -ENOMEM;
				}
			}
			idx = json_object_new_int64((int64_t)s->n_allocs);
			if (!idx || json_object_array_add(list, idx) < 0) {
				json_object_put(idx);
				return -ENOMEM;
			}
			s->n_allocs++;
		}
	}
	return 0;
}

/* The taints of DeviceTaintRules, on each device they select. */
static int read_rules(struct state *s, struct json_object *rules_doc, char *why, size_t why_size)
{
	struct view rules = view_of(rules_doc);
	if (rules.n > CLAIMS_MAX_RULES) {
		snprintf(why, why_size, "%zu DeviceTaintRules: more than %d", rules.n, CLAIMS_MAX_RULES);
		return -E2BIG;
	}
	for (size_t i = 0; i < rules.n; i++) {
		struct json_object *rule = item(&rules, i), *spec = get(rule, "spec"), *sel = get(spec, "deviceSelector");
		struct json_object *taint = get(spec, "taint");
		const char *driver = get_str(sel, "driver"), *pool = get_str(sel, "pool"), *device = get_str(sel, "device");
		if (!taint || (driver && strcmp(driver, s->driver) != 0))
			continue;
		for (size_t k = 0; k < s->n_devices; k++) {
			struct device *d = &s->devices[k];
			if ((pool && strcmp(pool, d->pool) != 0) || (device && strcmp(device, d->name) != 0))
				continue;
			/* The rule's name goes with its taint, for the fix. */
			struct json_object *t = json_object_new_object(), *copy = NULL;
			if (!t || json_object_deep_copy(taint, &copy, NULL) < 0 ||
			    json_object_object_add(t, "taint", copy) < 0) {
				json_object_put(copy);
				json_object_put(t);
				return -ENOMEM;
			}
			struct json_object *name = json_object_new_string(or_empty(get_str(get(rule, "metadata"), "name")));
			if (!name || json_object_object_add(t, "rule", name) < 0) {
				json_object_put(name);
				json_object_put(t);
				return -ENOMEM;
			}
			if (!d->rule_taints && !(d->rule_taints = json_object_new_array())) {
				json_object_put(t);
				return -ENOMEM;
			}
			if (json_object_array_add(d->rule_taints, t) < 0) {
				json_object_put(t);
				return -ENOMEM;
			}
		}
	}
	return 0;
}

/* ---- one request ---------------------------------------------------------- */

/* What a request asks, from an ExactDeviceRequest or a subrequest. */
struct ask {
	const char *class_name;
	struct json_object *selectors, *tolerations, *capacity_requests;
	bool admin, all;
	int64_t count;
};

static bool tolerated(struct json_object *tolerations, struct json_object *taint)
{
	const char *key = or_empty(get_str(taint, "key")), *value = or_empty(get_str(taint, "value"));
	const char *effect = or_empty(get_str(taint, "effect"));
	for (size_t i = 0; i < array_len(tolerations); i++) {
		struct json_object *t = json_object_array_get_idx(tolerations, i);
		const char *t_key = get_str(t, "key"), *op = get_str(t, "operator"), *t_effect = get_str(t, "effect");
		if (t_effect && t_effect[0] && strcmp(t_effect, effect) != 0)
			continue;
		bool exists = op && strcmp(op, "Exists") == 0;
		if (t_key && t_key[0] && strcmp(t_key, key) != 0)
			continue;
		if ((!t_key || !t_key[0]) && !exists)
			continue;
		if (exists || strcmp(or_empty(get_str(t, "value")), value) == 0)
			return true;
	}
	return false;
}

/* The first untolerated taint that keeps new allocations off d: "key=value:Effect"
 * (and " (DeviceTaintRule NAME)"). */
static bool untolerated_taint(const struct device *d, struct json_object *tolerations, char *buf, size_t size)
{
	struct json_object *lists[2] = { get_array(d->obj, "taints"), d->rule_taints };
	for (int l = 0; l < 2; l++) {
		for (size_t i = 0; i < array_len(lists[l]); i++) {
			struct json_object *entry = json_object_array_get_idx(lists[l], i);
			struct json_object *taint = l == 0 ? entry : get(entry, "taint");
			const char *effect = or_empty(get_str(taint, "effect"));
			if (strcmp(effect, "NoSchedule") != 0 && strcmp(effect, "NoExecute") != 0)
				continue;
			if (tolerated(tolerations, taint))
				continue;
			const char *value = get_str(taint, "value");
			if (l == 0)
				snprintf(buf, size, "%s%s%s:%s", or_empty(get_str(taint, "key")), value ? "=" : "",
					 or_empty(value), effect);
			else
				snprintf(buf, size, "%s%s%s:%s by DeviceTaintRule %s", or_empty(get_str(taint, "key")),
					 value ? "=" : "", or_empty(value), effect, or_empty(get_str(entry, "rule")));
			return true;
		}
	}
	return false;
}

/* The claims holding d, "ns/a, ns/b", and whether any holds it exclusively
 * (not for admin access). */
static bool holders(const struct state *s, const struct device *d, char *buf, size_t size)
{
	char key[2 * FIT_NAME_MAX];
	device_key(key, sizeof(key), d->pool, d->name);
	struct json_object *list = get(s->alloc_index, key);
	struct strbuf sb;
	bool any = false;
	strbuf_init(&sb, buf, size, "...");
	for (size_t i = 0; i < array_len(list); i++) {
		const struct allocation *a = &s->allocs[json_object_get_int64(json_object_array_get_idx(list, i))];
		if (a->admin)
			continue;
		strbuf_printf(&sb, "%s%s/%s", any ? ", " : "", a->claim_ns, a->claim_name);
		any = true;
	}
	return any;
}

/* The claims whose devices of pool consume from counter set set_name. */
static void set_holders(const struct state *s, const char *pool, const char *set_name, char *buf, size_t size)
{
	struct strbuf sb;
	bool any = false;
	strbuf_init(&sb, buf, size, "...");
	for (size_t a = 0; a < s->n_allocs; a++) {
		const struct allocation *al = &s->allocs[a];
		const struct device *other = al->admin || strcmp(al->pool, pool) != 0 ? NULL : find_device(s, al->pool, al->device);
		struct json_object *uses = other ? get_array(other->obj, "consumesCounters") : NULL;
		for (size_t u = 0; u < array_len(uses); u++) {
			if (strcmp(or_empty(get_str(json_object_array_get_idx(uses, u), "counterSet")), set_name) != 0)
				continue;
			strbuf_printf(&sb, "%s%s/%s", any ? ", " : "", al->claim_ns, al->claim_name);
			any = true;
			break;
		}
	}
	if (!any)
		strbuf_printf(&sb, "no claim");
}

/* Whether d's counter sets have what d consumes left, after what the
 * allocated devices of its pool consume; else why in buf. */
static bool counters_left(const struct state *s, const struct device *d, char *buf, size_t size)
{
	struct json_object *uses = get_array(d->obj, "consumesCounters");
	for (size_t i = 0; i < array_len(uses); i++) {
		struct json_object *use = json_object_array_get_idx(uses, i);
		const char *set_name = or_empty(get_str(use, "counterSet"));
		const struct counter_set *set = NULL;
		for (size_t k = 0; k < s->n_sets && !set; k++)
			if (strcmp(s->sets[k].pool, d->pool) == 0 && strcmp(s->sets[k].name, set_name) == 0)
				set = &s->sets[k];
		if (!set) {
			snprintf(buf, size, "counter set %s is not published", set_name);
			return false;
		}
		json_object_object_foreach(get(use, "counters"), counter, need_obj)
		{
			int64_t need = 0, total = 0, used = 0;
			if (amount(need_obj, &need) < 0 || amount(get(set->counters, counter), &total) < 0)
				continue;
			/* What the pool's allocated devices consume from this set. */
			for (size_t a = 0; a < s->n_allocs; a++) {
				const struct allocation *al = &s->allocs[a];
				if (al->admin || strcmp(al->pool, d->pool) != 0)
					continue;
				const struct device *other = find_device(s, al->pool, al->device);
				struct json_object *other_uses = other ? get_array(other->obj, "consumesCounters") : NULL;
				for (size_t u = 0; u < array_len(other_uses); u++) {
					struct json_object *ou = json_object_array_get_idx(other_uses, u);
					int64_t v;
					if (strcmp(or_empty(get_str(ou, "counterSet")), set_name) == 0 &&
					    amount(get(get(ou, "counters"), counter), &v) == 0)
						used += v;
				}
			}
			if (used + need > total) {
				char who[256];
				set_holders(s, d->pool, set_name, who, sizeof(who));
				snprintf(buf, size,
					 "counter set %s: %s %" PRId64 " of %" PRId64 " left, %" PRId64 " needed; held by %s",
					 set_name, counter, total > used ? total - used : 0, total, need, who);
				return false;
			}
		}
	}
	return true;
}

/* Whether a device shared by several claims (allowMultipleAllocations) has
 * the capacity the request takes left; else why in buf. */
static bool shares_left(const struct state *s, const struct device *d, const struct ask *ask, char *buf,
			size_t size)
{
	char key[2 * FIT_NAME_MAX];
	device_key(key, sizeof(key), d->pool, d->name);
	struct json_object *list = get(s->alloc_index, key);
	json_object_object_foreach(get(d->obj, "capacity"), name, cap)
	{
		int64_t total, need, used = 0, v;
		if (amount(cap, &total) < 0)
			continue;
		/* What the request takes: its own amount, else the policy's
		 * default, else all of it. */
		struct json_object *policy = get(cap, "requestPolicy");
		if (amount(get(ask->capacity_requests, name), &need) < 0 && amount(get(policy, "default"), &need) < 0)
			need = total;
		if (need == 0)
			continue;
		for (size_t i = 0; i < array_len(list); i++) {
			const struct allocation *a = &s->allocs[json_object_get_int64(json_object_array_get_idx(list, i))];
			if (!a->admin && amount(get(a->consumed, name), &v) == 0)
				used += v;
		}
		if (used + need > total) {
			char who[256];
			holders(s, d, who, sizeof(who));
			snprintf(buf, size, "%s %" PRId64 " of %" PRId64 " left, %" PRId64 " needed; held by %s", name,
				 total > used ? total - used : 0, total, need, who);
			return false;
		}
	}
	return true;
}

static int name_device(struct claims_pool *p, enum claims_cause cause, const char *device, const char *detail)
{
	p->count[cause]++;
	if (p->count[cause] > CLAIMS_NAMED_DEVICES + 1)
		return 0;
	char text[1024];
	if (p->count[cause] == CLAIMS_NAMED_DEVICES + 1)
		snprintf(text, sizeof(text), "%s, ...", or_empty(p->named[cause]));
	else
		snprintf(text, sizeof(text), "%s%s%s%s%s%s", or_empty(p->named[cause]), p->named[cause] ? ", " : "",
			 device, detail[0] ? " (" : "", detail, detail[0] ? ")" : "");
	char *copy = strdup(text);
	if (!copy)
		return -ENOMEM;
	free(p->named[cause]);
	p->named[cause] = copy;
	return 0;
}

static int evaluate_pool(const struct state *s, const struct ask *ask, const struct selector *class_sel,
			 size_t n_class_sel, const struct selector *claim_sel, size_t n_claim_sel, size_t pool,
			 struct claims_pool *p)
{
	const char *pool_name = s->pool_names[pool];
	size_t selected = 0;
	int r;
	p->pool = strdup(pool_name);
	p->node = strdup(s->pool_nodes[pool]);
	if (!p->pool || !p->node)
		return -ENOMEM;
	for (size_t i = 0; i < s->n_devices; i++) {
		const struct device *d = &s->devices[i];
		if (strcmp(d->pool, pool_name) != 0)
			continue;
		p->devices++;
		bool unknown = false, of_class = true;
		for (size_t k = 0; k < n_class_sel && of_class; k++) {
			enum sel v = eval_selector(&class_sel[k], s->driver, d->obj);
			of_class = v == SEL_TRUE || v == SEL_UNKNOWN;
			unknown |= v == SEL_UNKNOWN;
		}
		if (!of_class)
			continue;
		p->of_class++;
		char detail[512] = "";
		bool chosen = true;
		for (size_t k = 0; k < n_claim_sel && chosen; k++) {
			enum sel v = eval_selector(&claim_sel[k], s->driver, d->obj);
			chosen = v == SEL_TRUE || v == SEL_UNKNOWN;
			unknown |= v == SEL_UNKNOWN;
			if (v == SEL_ERROR)
				snprintf(detail, sizeof(detail), "CEL error: selector %zu reads an attribute it lacks", k + 1);
		}
		enum claims_cause cause = CLAIMS_CAUSE_COUNT;
		if (!chosen) {
			/* Only a CEL error is worth naming among the unselected. */
			cause = CLAIMS_NOT_SELECTED;
		} else {
			selected++;
			if (untolerated_taint(d, ask->tolerations, detail, sizeof(detail)))
				cause = CLAIMS_TAINTED;
			else if (!ask->admin && !get_bool(d->obj, "allowMultipleAllocations") &&
				 holders(s, d, detail, sizeof(detail)))
				cause = CLAIMS_ALLOCATED;
			else if (!ask->admin && !counters_left(s, d, detail, sizeof(detail)))
				cause = CLAIMS_NO_COUNTERS;
			else if (!ask->admin && get_bool(d->obj, "allowMultipleAllocations") &&
				 !shares_left(s, d, ask, detail, sizeof(detail)))
				cause = CLAIMS_NO_SHARES;
		}
		if (cause == CLAIMS_CAUSE_COUNT) {
			p->available++;
			p->not_evaluated += unknown;
			continue;
		}
		if (cause == CLAIMS_NOT_SELECTED && !detail[0]) {
			p->count[cause]++;
			continue;
		}
		r = name_device(p, cause, d->name, detail);
		if (r < 0)
			return r;
	}
	p->fits = ask->all ? selected > 0 && p->available == selected : (int64_t)p->available >= ask->count;
	return 0;
}

static int parse_selectors(struct json_object *list, bool from_class, struct claims_request *req,
			   struct selector **ret_parsed, size_t *ret_n)
{
	size_t n = array_len(list);
	if (n > CLAIMS_MAX_SELECTORS)
		n = CLAIMS_MAX_SELECTORS;
	struct selector *parsed = calloc(n ? n : 1, sizeof(*parsed));
	if (!parsed)
		return -ENOMEM;
	size_t kept = 0;
	for (size_t i = 0; i < n; i++) {
		const char *expr = get_str(get(json_object_array_get_idx(list, i), "cel"), "expression");
		if (!expr)
			continue;
		parse_selector(expr, &parsed[kept]);
		struct claims_selector *cs = &req->selectors[req->n_selectors];
		cs->expression = strdup(expr);
		if (!cs->expression) {
			free(parsed);
			return -ENOMEM;
		}
		cs->from_class = from_class;
		cs->evaluated = selector_evaluated(&parsed[kept]);
		req->n_selectors++;
		kept++;
	}
	*ret_parsed = parsed;
	*ret_n = kept;
	return 0;
}

static struct json_object *find_class(struct json_object *classes_doc, const char *name)
{
	struct view classes = view_of(classes_doc);
	for (size_t i = 0; i < classes.n; i++)
		if (strcmp(or_empty(get_str(get(item(&classes, i), "metadata"), "name")), name) == 0)
			return item(&classes, i);
	return NULL;
}

static int evaluate_request(const struct state *s, struct json_object *classes_doc, const char *name,
			    const struct ask *ask, bool alternative, struct claims_request *req)
{
	struct selector *class_sel = NULL, *claim_sel = NULL;
	size_t n_class = 0, n_claim = 0;
	int r;
	req->name = strdup(name);
	req->device_class = strdup(or_empty(ask->class_name));
	req->selectors = calloc(2 * CLAIMS_MAX_SELECTORS, sizeof(*req->selectors));
	if (!req->name || !req->device_class || !req->selectors)
		return -ENOMEM;
	req->admin_access = ask->admin;
	req->all = ask->all;
	req->count = ask->count;
	req->alternative = alternative;
	struct json_object *cls = ask->class_name ? find_class(classes_doc, ask->class_name) : NULL;
	req->class_found = cls != NULL;
	r = parse_selectors(get_array(get(cls, "spec"), "selectors"), true, req, &class_sel, &n_class);
	if (r < 0)
		goto out;
	r = parse_selectors(ask->selectors, false, req, &claim_sel, &n_claim);
	if (r < 0)
		goto out;
	if (!req->class_found)
		goto out; /* the scheduler allocates nothing of a class that does not exist */
	req->pools = calloc(s->n_pools ? s->n_pools : 1, sizeof(*req->pools));
	if (!req->pools) {
		r = -ENOMEM;
		goto out;
	}
	for (size_t p = 0; p < s->n_pools; p++) {
		r = evaluate_pool(s, ask, class_sel, n_class, claim_sel, n_claim, p, &req->pools[p]);
		req->n_pools++;
		if (r < 0)
			goto out;
	}
out:
	free(class_sel);
	free(claim_sel);
	return r;
}

static void read_ask(struct json_object *o, struct ask *ask)
{
	const char *mode = get_str(o, "allocationMode");
	struct json_object *count = get(o, "count");
	*ask = (struct ask){
		.class_name = get_str(o, "deviceClassName"),
		.selectors = get_array(o, "selectors"),
		.tolerations = get_array(o, "tolerations"),
		.capacity_requests = get(get(o, "capacity"), "requests"),
		.admin = get_bool(o, "adminAccess"),
		.all = mode && strcmp(mode, "All") == 0,
		.count = count && json_object_is_type(count, json_type_int) ? json_object_get_int64(count) : 1,
	};
}

/* ---- the verdict ---------------------------------------------------------- */

bool claims_pool_fits(const struct claims_result *res, size_t p)
{
	for (size_t i = 0; i < res->n_requests;) {
		const struct claims_request *req = &res->requests[i];
		bool fits = false;
		size_t k = i;
		/* A run of subrequests is one request. */
		do {
			const struct claims_request *sub = &res->requests[k];
			fits |= sub->class_found && p < sub->n_pools && sub->pools[p].fits;
			k++;
		} while (req->alternative && k < res->n_requests && res->requests[k].alternative &&
			 strncmp(res->requests[k].name, req->name, strcspn(req->name, "/") + 1) == 0);
		if (!fits)
			return false;
		i = k;
	}
	return true;
}

static int set_text(char **field, const char *text)
{
	char *copy = strdup(text);
	if (!copy)
		return -ENOMEM;
	free(*field);
	*field = copy;
	return 0;
}

static int conclude(struct claims_result *res, const char *driver)
{
	char summary[2048], fix[2048];
	struct strbuf sb;
	res->n_nodes = 0;
	for (size_t i = 0; i < res->n_requests; i++)
		if (res->requests[i].n_pools > res->n_nodes)
			res->n_nodes = res->requests[i].n_pools;
	for (size_t p = 0; p < res->n_nodes; p++)
		res->n_fit += claims_pool_fits(res, p);
	fix[0] = '\0';
	for (size_t i = 0; i < res->n_requests && !fix[0]; i++) {
		if (!res->requests[i].class_found)
			snprintf(fix, sizeof(fix),
				 "create DeviceClass %s (kubectl apply -k deploy/dra) or name an existing one "
				 "(kubectl get deviceclasses)",
				 res->requests[i].device_class);
	}
	if (res->allocated_node) {
		snprintf(summary, sizeof(summary), "claim %s is allocated%s%s: it waits for no device", res->claim,
			 res->allocated_node[0] ? " on node " : "", res->allocated_node);
	} else if (fix[0]) {
		snprintf(summary, sizeof(summary), "claim %s names a DeviceClass that does not exist", res->claim);
	} else if (res->n_nodes == 0) {
		snprintf(summary, sizeof(summary), "no ResourceSlice of driver %s: no node offers its devices", driver);
		snprintf(fix, sizeof(fix),
			 "run the DRA driver on the NPU nodes (kubectl -n kube-system get pods -l name=ascend-dra-driver "
			 "-o wide; docs/dra.md)");
	} else {
		snprintf(summary, sizeof(summary), "%zu/%zu nodes of %s can allocate claim %s", res->n_fit, res->n_nodes,
			 driver, res->claim);
	}
	if (!fix[0] && res->n_fit == 0 && !res->allocated_node) {
		/* One line per cause seen anywhere, in the order of the causes. */
		size_t most = 0;
		int64_t want = 0;
		bool seen[CLAIMS_CAUSE_COUNT] = { false }, none_selected = true, unknown = false;
		for (size_t i = 0; i < res->n_requests; i++) {
			const struct claims_request *req = &res->requests[i];
			want = req->count > want ? req->count : want;
			for (size_t p = 0; p < req->n_pools; p++) {
				const struct claims_pool *pl = &req->pools[p];
				size_t selected = pl->available;
				for (int c = CLAIMS_TAINTED; c < CLAIMS_CAUSE_COUNT; c++) {
					selected += pl->count[c];
					seen[c] |= pl->count[c] > 0;
				}
				seen[CLAIMS_NOT_SELECTED] |= pl->named[CLAIMS_NOT_SELECTED] != NULL;
				none_selected &= selected == 0;
				most = selected > most ? selected : most;
				unknown |= pl->not_evaluated > 0;
			}
		}
		strbuf_init(&sb, fix, sizeof(fix), "...");
		const char *sep = "";
		if (none_selected) {
			strbuf_printf(&sb, "no device passes the class's and claim's selectors: compare them with the "
					   "devices' attributes (kubectl get resourceslices -o yaml)");
			sep = "; ";
		} else if ((int64_t)most < want) {
			strbuf_printf(&sb, "ask for at most %zu (the most devices a node has that match), or add nodes", most);
			sep = "; ";
		}
		static const char *const fixes[CLAIMS_CAUSE_COUNT] = {
			[CLAIMS_NOT_SELECTED] = "guard the attribute with `\"NAME\" in device.attributes[...]` before "
						"reading it: a device without it is a CEL error",
			[CLAIMS_TAINTED] = "a tainted chip has a fault: run ascend-doctor node on its node (or remove the "
					   "DeviceTaintRule named), or add tolerations to the request to use it anyway",
			[CLAIMS_ALLOCATED] = "the devices are held by the claims named: delete the pods using them or "
					     "wait for them to finish",
			[CLAIMS_NO_COUNTERS] = "the chip's AI cores or HBM are taken by its partitions (vNPUs): delete "
					       "the claims of those, or ask for another chip",
			[CLAIMS_NO_SHARES] = "every share of the time-sliced chip is held: raise sharing.timeSlicing "
					     "replicas or delete a claim holding it",
		};
		for (int c = 0; c < CLAIMS_CAUSE_COUNT && !none_selected; c++) {
			if (!seen[c])
				continue;
			strbuf_printf(&sb, "%s%s", sep, fixes[c]);
			sep = "; ";
		}
		if (unknown)
			strbuf_printf(&sb, "%sparts of a selector were not evaluated: check them by hand", sep);
	}
	int r = set_text(&res->summary, summary);
	return r < 0 ? r : set_text(&res->fix, fix);
}

int claims_explain(struct json_object *claim, struct json_object *classes, struct json_object *slices,
		   struct json_object *claims, struct json_object *rules, const char *driver,
		   struct claims_result *ret, char *why, size_t why_size)
{
	struct state s = { .driver = driver };
	struct claims_result res = { 0 };
	int r;
	struct json_object *meta = get(claim, "metadata"), *spec = get(claim, "spec");
	const char *ns = or_empty(get_str(meta, "namespace")), *name = get_str(meta, "name");
	struct json_object *requests = get_array(get(spec, "devices"), "requests");
	if (!name || strcmp(or_empty(get_str(claim, "kind")), "ResourceClaim") != 0) {
		snprintf(why, why_size, "not a ResourceClaim");
		return -EINVAL;
	}
	s.device_index = json_object_new_object();
	s.alloc_index = json_object_new_object();
	char claim_id[2 * FIT_NAME_MAX];
	snprintf(claim_id, sizeof(claim_id), "%s/%s", ns, name);
	res.claim = strdup(claim_id);
	res.requests = calloc(CLAIMS_MAX_REQUESTS * (CLAIMS_MAX_SUBREQUESTS + 1), sizeof(*res.requests));
	if (!s.device_index || !s.alloc_index || !res.claim || !res.requests) {
		r = -ENOMEM;
		goto out;
	}
	struct json_object *alloc = get(get(claim, "status"), "allocation");
	if (alloc) {
		/* The node the allocation binds to, when it names one. */
		struct json_object *terms = get_array(get(alloc, "nodeSelector"), "nodeSelectorTerms");
		struct json_object *fields = get_array(json_object_array_get_idx(terms, 0), "matchFields");
		struct json_object *values = get_array(json_object_array_get_idx(fields, 0), "values");
		const char *node = values ? json_object_get_string(json_object_array_get_idx(values, 0)) : NULL;
		res.allocated_node = strdup(or_empty(node));
		if (!res.allocated_node) {
			r = -ENOMEM;
			goto out;
		}
	}
	if ((r = read_slices(&s, slices, why, why_size)) < 0 ||
	    (r = read_allocations(&s, claims, ns, name, why, why_size)) < 0 ||
	    (r = read_rules(&s, rules, why, why_size)) < 0)
		goto out;
	res.n_constraints = array_len(get_array(get(spec, "devices"), "constraints"));
	size_t n = array_len(requests);
	if (n > CLAIMS_MAX_REQUESTS) {
		snprintf(why, why_size, "claim %s has %zu requests: more than %d", claim_id, n, CLAIMS_MAX_REQUESTS);
		r = -E2BIG;
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		struct json_object *req = json_object_array_get_idx(requests, i);
		const char *req_name = or_empty(get_str(req, "name"));
		struct json_object *exactly = get(req, "exactly"), *first = get_array(req, "firstAvailable");
		struct ask ask;
		if (exactly || !first) {
			read_ask(exactly, &ask);
			r = evaluate_request(&s, classes, req_name, &ask, false, &res.requests[res.n_requests++]);
			if (r < 0)
				goto out;
			continue;
		}
		for (size_t k = 0; k < array_len(first) && k < CLAIMS_MAX_SUBREQUESTS; k++) {
			struct json_object *sub = json_object_array_get_idx(first, k);
			char sub_name[2 * FIT_NAME_MAX];
			snprintf(sub_name, sizeof(sub_name), "%s/%s", req_name, or_empty(get_str(sub, "name")));
			read_ask(sub, &ask);
			r = evaluate_request(&s, classes, sub_name, &ask, true, &res.requests[res.n_requests++]);
			if (r < 0)
				goto out;
		}
	}
	r = conclude(&res, driver);
	if (r < 0)
		goto out;
	*ret = res;
	res = (struct claims_result){ 0 };
out:
	claims_result_clear(&res);
	state_clear(&s);
	return r;
}

void claims_result_clear(struct claims_result *res)
{
	if (!res)
		return;
	for (size_t i = 0; i < res->n_requests; i++) {
		struct claims_request *req = &res->requests[i];
		for (size_t k = 0; k < req->n_selectors; k++)
			free(req->selectors[k].expression);
		for (size_t p = 0; p < req->n_pools; p++) {
			free(req->pools[p].pool);
			free(req->pools[p].node);
			for (int c = 0; c < CLAIMS_CAUSE_COUNT; c++)
				free(req->pools[p].named[c]);
		}
		free(req->pools);
		free(req->selectors);
		free(req->name);
		free(req->device_class);
	}
	free(res->requests);
	free(res->claim);
	free(res->allocated_node);
	free(res->summary);
	free(res->fix);
	*res = (struct claims_result){ 0 };
}
