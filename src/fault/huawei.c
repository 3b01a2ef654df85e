/* SPDX-License-Identifier: Apache-2.0 */
/* Huawei's fault policy files; see huawei.h. json-c parses the text; the
 * walk below checks it key by key and keeps the path it came down, and on a
 * refusal a small scanner finds that path in the text again for the line
 * (json-c's objects do not remember where they were). */
#include "fault/huawei.h"

#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include <json-c/json.h>

#include "base/file.h"
#include "base/macro.h"
#include "base/parse.h"

/* Input-controlled text quoted in a message is cut to this. */
#define CLIP 64

/* Huawei's ranges (component/ascend-device-plugin/pkg/common/constants.go
 * of MindCluster), in seconds. */
#define TIME_WINDOW_MIN 60
#define TIME_WINDOW_MAX 864000
#define RELEASE_WINDOW_MIN 60
#define RELEASE_WINDOW_MAX 4294967296LL
#define FAULT_TIMEOUT_MAX 600
#define RECOVER_TIMEOUT_MAX 86400
#define HUAWEI_TIMES_MAX 100

struct path_step {
	const char *key; /* NULL: an index */
	size_t index;
};

struct reader {
	const char *text;
	size_t len;
	char *why;
	size_t why_size;
	struct path_step path[FAULT_HUAWEI_MAX_DEPTH];
	size_t depth;
};

static void push_key(struct reader *r, const char *key)
{
	if (r->depth < FAULT_HUAWEI_MAX_DEPTH)
		r->path[r->depth] = (struct path_step){ .key = key };
	r->depth++;
}

static void push_index(struct reader *r, size_t index)
{
	if (r->depth < FAULT_HUAWEI_MAX_DEPTH)
		r->path[r->depth] = (struct path_step){ .key = NULL, .index = index };
	r->depth++;
}

static void pop(struct reader *r)
{
	r->depth--;
}

/* --- Finding a path in the text again, for its line --- */

static size_t skip_blank(const struct reader *r, size_t i)
{
	while (i < r->len && (r->text[i] == ' ' || r->text[i] == '\t' || r->text[i] == '\n' || r->text[i] == '\r'))
		i++;
	return i;
}

/* Past the string at i (json-c also takes single quotes). */
static size_t skip_string(const struct reader *r, size_t i)
{
	char quote = r->text[i++];
	while (i < r->len && r->text[i] != quote)
		i += r->text[i] == '\\' ? 2 : 1;
	return i + 1;
}

/* Past the value at i: a string, a number or word, or a whole object or
 * array (brackets counted outside strings). */
static size_t skip_value(const struct reader *r, size_t i)
{
	if (i >= r->len)
		return i;
	char c = r->text[i];
	if (c == '"' || c == '\'')
		return skip_string(r, i);
	if (c != '{' && c != '[') {
		while (i < r->len && !strchr(",}] \t\r\n", r->text[i]))
			i++;
		return i;
	}
	size_t depth = 0;
	while (i < r->len) {
		c = r->text[i];
		if (c == '"' || c == '\'') {
			i = skip_string(r, i);
			continue;
		}
		if (c == '{' || c == '[')
			depth++;
		else if ((c == '}' || c == ']') && --depth == 0)
			return i + 1;
		i++;
	}
	return i;
}

/* The offset of the value at the reader's path (the last of a key written
 * twice, as json-c keeps), or false when the text does not show it plainly
 * (a key written with escapes). */
static bool locate(const struct reader *r, size_t *ret_offset)
{
	size_t i = skip_blank(r, 0);
	size_t depth = r->depth < FAULT_HUAWEI_MAX_DEPTH ? r->depth : FAULT_HUAWEI_MAX_DEPTH;
	for (size_t d = 0; d < depth; d++) {
		const struct path_step *p = &r->path[d];
		if (i >= r->len || r->text[i] != (p->key ? '{' : '['))
			return false;
		i++;
		size_t found = SIZE_MAX;
		for (size_t n = 0;; n++) {
			i = skip_blank(r, i);
			if (i >= r->len || r->text[i] == '}' || r->text[i] == ']')
				break;
			if (p->key) {
				size_t start = i + 1;
				i = skip_string(r, i);
				size_t klen = i - 1 - start;
				bool match = i <= r->len && klen == strlen(p->key) && memcmp(r->text + start, p->key, klen) == 0;
				i = skip_blank(r, i);
				if (i >= r->len || r->text[i] != ':')
					return false;
				i = skip_blank(r, i + 1);
				if (match)
					found = i;
			} else if (n == p->index) {
				found = i;
				break;
			}
			i = skip_blank(r, skip_value(r, i));
			if (i >= r->len || r->text[i] != ',')
				break;
			i++;
		}
		if (found == SIZE_MAX)
			return false;
		i = found;
	}
	*ret_offset = i;
	return true;
}

static size_t line_of(const struct reader *r, size_t offset)
{
	size_t line = 1;
	for (size_t i = 0; i < offset && i < r->len; i++)
		line += r->text[i] == '\n';
	return line;
}

/* "FaultFrequency[0].EventId[2]". */
static void path_text(const struct reader *r, char *buf, size_t size)
{
	size_t n = 0;
	buf[0] = '\0';
	size_t depth = r->depth < FAULT_HUAWEI_MAX_DEPTH ? r->depth : FAULT_HUAWEI_MAX_DEPTH;
	for (size_t d = 0; d < depth && n < size; d++) {
		int w = r->path[d].key ? snprintf(buf + n, size - n, "%s%.*s", d ? "." : "", CLIP, r->path[d].key)
				       : snprintf(buf + n, size - n, "[%zu]", r->path[d].index);
		if (w < 0)
			break;
		n += (size_t)w;
	}
}

/* Writes "line N: path: message" (without the line when the path cannot be
 * found, without the path at the top) and returns err. */
static int fail(const struct reader *r, int err, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int fail(const struct reader *r, int err, const char *fmt, ...)
{
	if (!r->why_size)
		return err;
	char msg[512], path[256];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	path_text(r, path, sizeof(path));
	size_t offset;
	char line[32] = "";
	/* A message about the whole text says where itself, if anywhere. */
	if (r->depth > 0 && locate(r, &offset))
		snprintf(line, sizeof(line), "line %zu: ", line_of(r, offset));
	snprintf(r->why, r->why_size, "%s%s%s%s", line, path, path[0] ? ": " : "", msg);
	return err;
}

/* "a string" and the like, for messages. */
static const char *type_name(const struct json_object *v)
{
	switch (json_object_get_type(v)) {
	case json_type_null:
		return "null";
	case json_type_boolean:
		return "a boolean";
	case json_type_double:
		return "a fraction";
	case json_type_int:
		return "an integer";
	case json_type_object:
		return "an object";
	case json_type_array:
		return "a list";
	case json_type_string:
		return "a string";
	}
	return "a value";
}

static int parse_text(struct reader *r, struct json_object **ret_root)
{
	const char *nul = memchr(r->text, '\0', r->len);
	if (nul) {
		size_t line = line_of(r, (size_t)(nul - r->text));
		return fail(r, -EINVAL, "line %zu: a NUL byte: not a JSON text", line);
	}
	if (r->len > FAULT_HUAWEI_MAX_BYTES)
		return fail(r, -E2BIG, "larger than %d bytes", FAULT_HUAWEI_MAX_BYTES);
	if (skip_blank(r, 0) == r->len)
		return fail(r, -EINVAL, "empty: a JSON object was expected");
	struct json_tokener *tok = json_tokener_new_ex(FAULT_HUAWEI_MAX_DEPTH);
	if (!tok)
		return fail(r, -ENOMEM, "out of memory");
	json_tokener_set_flags(tok, JSON_TOKENER_STRICT | JSON_TOKENER_VALIDATE_UTF8);
	/* Fits: at most FAULT_HUAWEI_MAX_BYTES. */
	struct json_object *root = json_tokener_parse_ex(tok, r->text, (int)r->len);
	enum json_tokener_error err = json_tokener_get_error(tok);
	size_t end = json_tokener_get_parse_end(tok);
	json_tokener_free(tok);
	if (!root) {
		if (err == json_tokener_continue)
			return fail(r, -EINVAL, "line %zu: malformed JSON: the text ends inside a value", line_of(r, r->len));
		if (err == json_tokener_error_depth)
			return fail(r, -E2BIG, "line %zu: JSON nested deeper than %d levels", line_of(r, end),
				    FAULT_HUAWEI_MAX_DEPTH);
		return fail(r, -EINVAL, "line %zu: malformed JSON: %s", line_of(r, end), json_tokener_error_desc(err));
	}
	if (!json_object_is_type(root, json_type_object)) {
		const char *type = type_name(root);
		json_object_put(root);
		return fail(r, -EINVAL, "line %zu: the top level must be an object, not %s", line_of(r, skip_blank(r, 0)),
			    type);
	}
	*ret_root = root;
	return 0;
}

/* An integer in [min, max]. */
static int get_integer(struct reader *r, struct json_object *v, int64_t min, int64_t max, int64_t *ret)
{
	int64_t n = json_object_get_int64(v);
	if (!json_object_is_type(v, json_type_int) || n < min || n > max)
		return fail(r, -EINVAL, "must be an integer from %lld to %lld", (long long)min, (long long)max);
	*ret = n;
	return 0;
}

/* A code: a string of hex digits, or (older files) a JSON integer. */
static int get_code(struct reader *r, struct json_object *v, bool integers, uint32_t *ret)
{
	if (json_object_is_type(v, json_type_string)) {
		const char *s = json_object_get_string(v);
		if (fault_code_parse(s, ret) < 0)
			return fail(r, -EINVAL, "'%.*s' is not a fault code (up to 8 hex digits such as 80E01801)", CLIP,
				    s);
		return 0;
	}
	if (integers && json_object_is_type(v, json_type_int)) {
		int64_t n = json_object_get_int64(v);
		if (n < 1 || n > UINT32_MAX)
			return fail(r, -EINVAL, "must be a fault code from 1 to %u", UINT32_MAX);
		*ret = (uint32_t)n;
		return 0;
	}
	return fail(r, -EINVAL, "must be a fault code (a string of hex digits such as \"80E01801\"%s), not %s",
		    integers ? " or an integer" : "", type_name(v));
}

static int get_level(struct reader *r, struct json_object *v, bool manual, enum fault_level *ret)
{
	if (!json_object_is_type(v, json_type_string))
		return fail(r, -EINVAL, "must be a fault level (a string), not %s", type_name(v));
	const char *s = json_object_get_string(v);
	enum fault_level level;
	if (fault_level_parse(s, &level) < 0)
		return fail(r, -EINVAL, "'%.*s' is not one of %s", CLIP, s, FAULT_LEVEL_NAMES);
	if (!manual && level == FAULT_LEVEL_MANUALLY_SEPARATE_NPU)
		return fail(r, -EINVAL, "ManuallySeparateNPU is not a level a FaultDuration rule takes (Huawei's plugin "
				       "skips such a rule); a FaultFrequency rule can separate the chip");
	*ret = level;
	return 0;
}

/* The unknown key at the top of the path, with what the object takes
 * ("faultCode.json takes ..."); a key that differs from one of keys only in
 * case gets its spelling instead, since Huawei's reader (Go's) ignores case
 * and this one does not. */
static int unknown_key(struct reader *r, const char *key, const char *const *keys, size_t n_keys, const char *takes)
{
	for (size_t i = 0; i < n_keys; i++)
		if (strcasecmp(key, keys[i]) == 0)
			return fail(r, -EINVAL, "unknown key: keys are case-sensitive here, write %s", keys[i]);
	return fail(r, -EINVAL, "unknown key (%s)", takes);
}

/* --- faultCode.json --- */

static const struct {
	const char *key;
	enum fault_level level;
} code_lists[] = {
	{ "NotHandleFaultCodes", FAULT_LEVEL_NOT_HANDLE },
	{ "SubHealthFaultCodes", FAULT_LEVEL_SUB_HEALTH },
	{ "RestartRequestCodes", FAULT_LEVEL_RESTART_REQUEST },
	{ "RestartBusinessCodes", FAULT_LEVEL_RESTART_BUSINESS },
	{ "RecoverRestartBusinessCodes", FAULT_LEVEL_RESTART_BUSINESS },
	{ "FreeRestartNPUCodes", FAULT_LEVEL_FREE_RESTART_NPU },
	{ "RestartNPUCodes", FAULT_LEVEL_RESTART_NPU },
	{ "PreSeparateNPUCodes", FAULT_LEVEL_PRE_SEPARATE_NPU },
	{ "SeparateNPUCodes", FAULT_LEVEL_SEPARATE_NPU },
};

/* Faults of a chip's RoCE link, which Huawei's plugin reports apart from
 * the chip's health (fault/policy.h, network_codes). */
static const struct {
	const char *key;
	enum fault_level level;
} network_lists[] = {
	{ "NotHandleFaultNetworkCodes", FAULT_LEVEL_NOT_HANDLE },
	{ "SubHealthFaultNetworkCodes", FAULT_LEVEL_SUB_HEALTH },
	{ "PreSeparateNPUNetworkCodes", FAULT_LEVEL_PRE_SEPARATE_NPU },
	{ "SeparateNPUNetworkCodes", FAULT_LEVEL_SEPARATE_NPU },
};

static int read_code_list(struct reader *r, struct json_object *list, enum fault_level level, bool network,
			  struct fault_policy_config *c)
{
	if (!json_object_is_type(list, json_type_array))
		return fail(r, -EINVAL, "must be a list of fault codes, not %s", type_name(list));
	size_t n = json_object_array_length(list);
	for (size_t i = 0; i < n; i++) {
		push_index(r, i);
		uint32_t code;
		int err = get_code(r, json_object_array_get_idx(list, i), true, &code);
		/* The most severe level of the lists holding the code. */
		if (err == 0 && network) {
			err = fault_policy_config_set_network_code(c, code, level);
			if (err == -E2BIG)
				err = fail(r, err, "more than %d network codes", FAULT_POLICY_MAX_NETWORK_CODES);
		} else if (err == 0 && fault_policy_code_level(c, code, NULL) < level) {
			err = fault_policy_config_set_code(c, code, level);
			if (err == -E2BIG)
				err = fail(r, err, "more than %d codes", FAULT_POLICY_MAX_CODES);
		}
		if (err < 0)
			return err;
		pop(r);
	}
	return 0;
}

static int read_codes(struct reader *r, struct json_object *root, struct fault_policy_config *c)
{
	/* The file's table alone: a code it does not list has the default
	 * level, which is lower than none of the lists' (the lookup below
	 * must not see the built-in table or earlier codes). */
	c->builtin_codes = false;
	c->n_codes = 0;
	c->n_network_codes = 0;
	enum fault_level saved_default = c->default_level;
	c->default_level = FAULT_LEVEL_NONE;
	int err = 0;
	json_object_object_foreach(root, key, value)
	{
		push_key(r, key);
		size_t i = 0;
		while (i < ELEMENTSOF(code_lists) && strcmp(key, code_lists[i].key) != 0)
			i++;
		size_t n = 0;
		while (n < ELEMENTSOF(network_lists) && strcmp(key, network_lists[n].key) != 0)
			n++;
		if (i < ELEMENTSOF(code_lists)) {
			err = read_code_list(r, value, code_lists[i].level, false, c);
		} else if (n < ELEMENTSOF(network_lists)) {
			err = read_code_list(r, value, network_lists[n].level, true, c);
		} else {
			const char *keys[ELEMENTSOF(code_lists) + ELEMENTSOF(network_lists)];
			for (size_t j = 0; j < ELEMENTSOF(code_lists); j++)
				keys[j] = code_lists[j].key;
			for (size_t j = 0; j < ELEMENTSOF(network_lists); j++)
				keys[ELEMENTSOF(code_lists) + j] = network_lists[j].key;
			err = unknown_key(r, key, keys, ELEMENTSOF(keys),
					  "faultCode.json takes NotHandleFaultCodes, SubHealthFaultCodes, "
					  "RestartRequestCodes, RestartBusinessCodes, RecoverRestartBusinessCodes, "
					  "FreeRestartNPUCodes, RestartNPUCodes, PreSeparateNPUCodes, SeparateNPUCodes and "
					  "the four *NetworkCodes lists");
		}
		if (err < 0)
			break;
		pop(r);
	}
	c->default_level = saved_default;
	return err;
}

/* Parses text and has read_file apply it to a copy of config, which
 * replaces config only when the whole file was good. */
static int parse_into(const char *text, size_t len, struct fault_policy_config *config, char *why, size_t why_size,
		      int (*read_file)(struct reader *r, struct json_object *root, struct fault_policy_config *c))
{
	struct reader r = { .text = text ? text : "", .len = text ? len : 0, .why = why, .why_size = why_size };
	struct json_object *root = NULL;
	struct fault_policy_config *c = NULL;
	if (why_size)
		why[0] = '\0';
	int err = parse_text(&r, &root);
	if (err < 0)
		goto out;
	c = malloc(sizeof(*c));
	if (!c) {
		err = fail(&r, -ENOMEM, "out of memory");
		goto out;
	}
	*c = *config;
	err = read_file(&r, root, c);
	if (err < 0)
		goto out;
	*config = *c;
out:
	free(c);
	json_object_put(root);
	return err;
}

int fault_huawei_codes_parse(const char *text, size_t len, struct fault_policy_config *config, char *why,
			     size_t why_size)
{
	return parse_into(text, len, config, why, why_size, read_codes);
}

/* --- faultCustomization.json --- */

/* The codes of a rule's EventId, each at most once in the rules of its
 * kind (seen: the codes of the kind's earlier rules, *n_seen of them). */
static int read_event_ids(struct reader *r, struct json_object *list, uint32_t *codes, size_t *ret_n,
			  uint32_t *seen, size_t *n_seen, const char *kind)
{
	if (!json_object_is_type(list, json_type_array))
		return fail(r, -EINVAL, "must be a list of fault codes, not %s", type_name(list));
	size_t n = json_object_array_length(list);
	if (n > FAULT_POLICY_MAX_RULE_CODES - *n_seen)
		return fail(r, -E2BIG, "more than %d codes in the %s rules", FAULT_POLICY_MAX_RULE_CODES, kind);
	for (size_t i = 0; i < n; i++) {
		push_index(r, i);
		uint32_t code;
		int err = get_code(r, json_object_array_get_idx(list, i), false, &code);
		if (err < 0)
			return err;
		for (size_t j = 0; j < *n_seen; j++)
			if (seen[j] == code)
				return fail(r, -EINVAL,
					    "%08X is listed twice in %s (Huawei's plugin would skip all but the first)",
					    code, kind);
		seen[(*n_seen)++] = code;
		codes[i] = code;
		pop(r);
	}
	*ret_n = n;
	return 0;
}

struct rule_keys {
	struct json_object *event_id, *handling, *a, *b, *c; /* a, b, c: the kind's numbers */
};

/* Sorts a rule's keys into keys, refusing any other. names[0..2] are the
 * kind's numeric keys. */
static int rule_fields(struct reader *r, struct json_object *rule, const char *const names[3], const char *takes,
		       struct rule_keys *keys)
{
	if (!json_object_is_type(rule, json_type_object))
		return fail(r, -EINVAL, "must be an object, not %s", type_name(rule));
	const char *all[] = { "EventId", "FaultHandling", names[0], names[1], names[2] };
	*keys = (struct rule_keys){ 0 };
	json_object_object_foreach(rule, key, value)
	{
		struct json_object **slot = strcmp(key, "EventId") == 0          ? &keys->event_id
					    : strcmp(key, "FaultHandling") == 0  ? &keys->handling
					    : strcmp(key, names[0]) == 0         ? &keys->a
					    : strcmp(key, names[1]) == 0         ? &keys->b
					    : names[2] && strcmp(key, names[2]) == 0 ? &keys->c
										  : NULL;
		if (!slot) {
			push_key(r, key);
			return unknown_key(r, key, all, names[2] ? 5 : 4, takes);
		}
		*slot = value;
	}
	return 0;
}

/* A rule's key that must be there. */
static int need(struct reader *r, struct json_object *v, const char *key)
{
	return v ? 0 : fail(r, -EINVAL, "needs %s", key);
}

static int read_frequency_rule(struct reader *r, struct json_object *rule, struct fault_policy_config *c,
			       uint32_t *seen, size_t *n_seen)
{
	static const char *const names[3] = { "TimeWindow", "Times", "ReleaseTimeWindow" };
	struct rule_keys k;
	int err = rule_fields(r, rule, names, "a FaultFrequency rule takes EventId, TimeWindow, Times, FaultHandling, "
					      "ReleaseTimeWindow", &k);
	if (err < 0 || (err = need(r, k.a, "TimeWindow")) < 0 || (err = need(r, k.b, "Times")) < 0 ||
	    (err = need(r, k.handling, "FaultHandling")) < 0)
		return err;
	uint32_t codes[FAULT_POLICY_MAX_RULE_CODES];
	size_t n = 0;
	int64_t window = 0, times = 0, release = 0;
	enum fault_level level;
	if (k.event_id) {
		push_key(r, "EventId");
		err = read_event_ids(r, k.event_id, codes, &n, seen, n_seen, "FaultFrequency");
		if (err < 0)
			return err;
		pop(r);
	}
	push_key(r, "TimeWindow");
	if ((err = get_integer(r, k.a, TIME_WINDOW_MIN, TIME_WINDOW_MAX, &window)) < 0)
		return err;
	pop(r);
	push_key(r, "Times");
	if (json_object_is_type(k.b, json_type_int) && json_object_get_int64(k.b) > FAULT_POLICY_MAX_COUNT &&
	    json_object_get_int64(k.b) <= HUAWEI_TIMES_MAX)
		return fail(r, -EINVAL, "must be an integer from 1 to %d here (this plugin remembers %d occurrences "
				       "of a code; Huawei's takes up to %d)",
			    FAULT_POLICY_MAX_COUNT, FAULT_ONSETS_KEPT, HUAWEI_TIMES_MAX);
	if ((err = get_integer(r, k.b, 1, FAULT_POLICY_MAX_COUNT, &times)) < 0)
		return err;
	pop(r);
	push_key(r, "FaultHandling");
	if ((err = get_level(r, k.handling, true, &level)) < 0)
		return err;
	pop(r);
	if (k.c) {
		push_key(r, "ReleaseTimeWindow");
		if ((err = get_integer(r, k.c, 0, RELEASE_WINDOW_MAX, &release)) < 0)
			return err;
		if (release > 0 && release < RELEASE_WINDOW_MIN)
			return fail(r, -EINVAL, "must be 0 (none) or from %d to %lld", RELEASE_WINDOW_MIN,
				    (long long)RELEASE_WINDOW_MAX);
		pop(r);
	}
	if (n == 0)
		return 0; /* applies to no code, as in Huawei's plugin */
	if (level != FAULT_LEVEL_MANUALLY_SEPARATE_NPU && release == 0) {
		push_key(r, "FaultHandling");
		return fail(r, -EINVAL, "%s needs a ReleaseTimeWindow (Huawei's plugin skips such a rule; only "
				       "ManuallySeparateNPU goes without one)",
			    fault_level_name(level));
	}
	/* In range: checked above, and the pool's room by read_event_ids. */
	err = fault_policy_config_add_frequency(c, codes, n, false, (uint32_t)times, window * 1000, level,
						release * 1000);
	if (err == -E2BIG)
		return fail(r, err, "more than %d FaultFrequency rules", FAULT_POLICY_MAX_RULES);
	return err;
}

static int read_duration_rule(struct reader *r, struct json_object *rule, struct fault_policy_config *c,
			      uint32_t *seen, size_t *n_seen)
{
	static const char *const names[3] = { "FaultTimeout", "RecoverTimeout", NULL };
	struct rule_keys k;
	int err = rule_fields(r, rule, names, "a FaultDuration rule takes EventId, FaultTimeout, RecoverTimeout, "
					      "FaultHandling", &k);
	if (err < 0 || (err = need(r, k.handling, "FaultHandling")) < 0)
		return err;
	uint32_t codes[FAULT_POLICY_MAX_RULE_CODES];
	size_t n = 0;
	int64_t timeout = 0, recover = 0;
	enum fault_level level;
	if (k.event_id) {
		push_key(r, "EventId");
		err = read_event_ids(r, k.event_id, codes, &n, seen, n_seen, "FaultDuration");
		if (err < 0)
			return err;
		pop(r);
	}
	/* Missing numbers are 0, as Huawei's reader takes them. */
	if (k.a) {
		push_key(r, "FaultTimeout");
		if ((err = get_integer(r, k.a, 0, FAULT_TIMEOUT_MAX, &timeout)) < 0)
			return err;
		pop(r);
	}
	if (k.b) {
		push_key(r, "RecoverTimeout");
		if ((err = get_integer(r, k.b, 0, RECOVER_TIMEOUT_MAX, &recover)) < 0)
			return err;
		pop(r);
	}
	push_key(r, "FaultHandling");
	if ((err = get_level(r, k.handling, false, &level)) < 0)
		return err;
	pop(r);
	if (n == 0)
		return 0;
	err = fault_policy_config_add_duration(c, codes, n, false, timeout * 1000, level, recover * 1000);
	if (err == -E2BIG)
		return fail(r, err, "more than %d FaultDuration rules", FAULT_POLICY_MAX_RULES);
	return err;
}

/* A list of rules of one kind. */
static int read_rules(struct reader *r, struct json_object *list, struct fault_policy_config *c,
		      int (*read_rule)(struct reader *, struct json_object *, struct fault_policy_config *, uint32_t *,
				       size_t *))
{
	if (!json_object_is_type(list, json_type_array))
		return fail(r, -EINVAL, "must be a list of rules, not %s", type_name(list));
	uint32_t *seen = malloc(FAULT_POLICY_MAX_RULE_CODES * sizeof(*seen));
	if (!seen)
		return fail(r, -ENOMEM, "out of memory");
	size_t n_seen = 0, n = json_object_array_length(list);
	int err = 0;
	for (size_t i = 0; i < n && err == 0; i++) {
		push_index(r, i);
		err = read_rule(r, json_object_array_get_idx(list, i), c, seen, &n_seen);
		if (err == 0)
			pop(r);
	}
	free(seen);
	return err;
}

/* GraceTolerance: checked, then ignored (see huawei.h). */
static int read_grace_tolerance(struct reader *r, struct json_object *obj)
{
	static const char *const keys[] = { "WaitProcessReadCMTime", "WaitFlushingCMTime", "WaitDeviceResetTime",
					    "WaitFaultSelfHealingTime" };
	if (!json_object_is_type(obj, json_type_object))
		return fail(r, -EINVAL, "must be an object, not %s", type_name(obj));
	json_object_object_foreach(obj, key, value)
	{
		push_key(r, key);
		size_t i = 0;
		while (i < ELEMENTSOF(keys) && strcmp(key, keys[i]) != 0)
			i++;
		if (i == ELEMENTSOF(keys))
			return unknown_key(r, key, keys, ELEMENTSOF(keys),
					   "GraceTolerance takes WaitProcessReadCMTime, WaitFlushingCMTime, "
					   "WaitDeviceResetTime, WaitFaultSelfHealingTime");
		int64_t seconds;
		int err = get_integer(r, value, 0, INT32_MAX, &seconds);
		if (err < 0)
			return err;
		pop(r);
	}
	return 0;
}

static int read_customization(struct reader *r, struct json_object *root, struct fault_policy_config *c)
{
	static const char *const keys[] = { "GraceTolerance", "FaultFrequency", "FaultDuration" };
	json_object_object_foreach(root, key, value)
	{
		push_key(r, key);
		int err;
		if (strcmp(key, "GraceTolerance") == 0)
			err = read_grace_tolerance(r, value);
		else if (strcmp(key, "FaultFrequency") == 0)
			err = read_rules(r, value, c, read_frequency_rule);
		else if (strcmp(key, "FaultDuration") == 0)
			err = read_rules(r, value, c, read_duration_rule);
		else
			err = unknown_key(r, key, keys, ELEMENTSOF(keys),
					  "faultCustomization.json takes GraceTolerance, FaultFrequency, FaultDuration");
		if (err < 0)
			return err;
		pop(r);
	}
	return 0;
}

int fault_huawei_customization_parse(const char *text, size_t len, struct fault_policy_config *config, char *why,
				     size_t why_size)
{
	return parse_into(text, len, config, why, why_size, read_customization);
}

/* --- Files --- */

typedef int (*parse_fn)(const char *text, size_t len, struct fault_policy_config *config, char *why,
			size_t why_size);

/* Reads the file at path with parse; why starts with the path. */
static int load_file(const char *path, parse_fn parse, struct fault_policy_config *config, char *why,
		     size_t why_size)
{
	char *buf = NULL;
	size_t len = 0;
	char problem[768] = "";
	int err = file_read_bounded(path, FAULT_HUAWEI_MAX_BYTES, &buf, &len, problem, sizeof(problem));
	if (err == 0)
		err = parse(buf, len, config, problem, sizeof(problem));
	if (err < 0 && why_size)
		snprintf(why, why_size, "%s: %s", path, problem);
	free(buf);
	return err;
}

int fault_huawei_load(const char *path, struct fault_policy_config *config, char *why, size_t why_size)
{
	struct fault_policy_config *c = NULL;
	char file[4200];
	struct stat st;
	int err;
	if (why_size)
		why[0] = '\0';
	if (!path || !config) {
		err = -EINVAL;
		snprintf(why, why_size, "no path or no configuration");
		goto out;
	}
	c = malloc(sizeof(*c));
	if (!c) {
		err = -ENOMEM;
		snprintf(why, why_size, "%s: out of memory", path);
		goto out;
	}
	*c = *config;
	if (stat(path, &st) < 0) {
		err = -errno;
		snprintf(why, why_size, "%s: cannot open: %s", path, strerror(-err));
		goto out;
	}
	if (!S_ISDIR(st.st_mode)) {
		const char *base = strrchr(path, '/');
		base = base ? base + 1 : path;
		if (strcmp(base, FAULT_HUAWEI_CODES_FILE) == 0)
			err = load_file(path, fault_huawei_codes_parse, c, why, why_size);
		else if (strcmp(base, FAULT_HUAWEI_CUSTOMIZATION_FILE) == 0)
			err = load_file(path, fault_huawei_customization_parse, c, why, why_size);
		else {
			err = -EINVAL;
			snprintf(why, why_size,
				 "%s: neither a directory nor a file named " FAULT_HUAWEI_CODES_FILE
				 " or " FAULT_HUAWEI_CUSTOMIZATION_FILE,
				 path);
		}
		if (err < 0)
			goto out;
	} else {
		/* A mounted ConfigMap: its keys are files (links into ..data). */
		bool any = false;
		static const struct {
			const char *name;
			parse_fn parse;
		} files[] = {
			{ FAULT_HUAWEI_CODES_FILE, fault_huawei_codes_parse },
			{ FAULT_HUAWEI_CUSTOMIZATION_FILE, fault_huawei_customization_parse },
		};
		for (size_t i = 0; i < ELEMENTSOF(files); i++) {
			if (path_join(file, sizeof(file), path, files[i].name) < 0) {
				err = -ENAMETOOLONG;
				snprintf(why, why_size, "%s: path too long", path);
				goto out;
			}
			if (!path_exists(file))
				continue;
			any = true;
			err = load_file(file, files[i].parse, c, why, why_size);
			if (err < 0)
				goto out;
		}
		if (!any) {
			err = -ENOENT;
			snprintf(why, why_size, "%s: holds neither " FAULT_HUAWEI_CODES_FILE " nor " FAULT_HUAWEI_CUSTOMIZATION_FILE,
				 path);
			goto out;
		}
	}
	*config = *c;
	err = 0;
out:
	free(c);
	return err;
}
