/* SPDX-License-Identifier: Apache-2.0 */
#include "config/yaml_tree.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <yaml.h>

#include "base/arena.h"
#include "base/macro.h"

struct builder {
	const struct yaml_tree_limits *limits;
	struct arena arena;
	struct ynode *root;
	struct ynode *stack[YAML_TREE_MAX_DEPTH];
	size_t depth;
	size_t n_nodes;
	size_t doc_line;
	char *why;
	size_t why_size;
};

int yaml_vfail(char *why, size_t why_size, size_t line, int r, const char *fmt, va_list ap)
{
	if (why_size == 0)
		return r;
	char msg[768];
	vsnprintf(msg, sizeof(msg), fmt, ap);
	if (line)
		snprintf(why, why_size, "line %zu: %s", line, msg);
	else
		snprintf(why, why_size, "%s", msg);
	return r;
}

int yaml_fail(char *why, size_t why_size, size_t line, int r, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	yaml_vfail(why, why_size, line, r, fmt, ap);
	va_end(ap);
	return r;
}

static bool str_in(const char *s, const char *const *set, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(s, set[i]) == 0)
			return true;
	return false;
}

static const char *const yaml_nulls[] = { "", "~", "null", "Null", "NULL" };
static const char *const yaml_trues[] = { "y", "Y", "yes", "Yes", "YES", "true", "True", "TRUE", "on", "On", "ON" };
static const char *const yaml_falses[] = { "n", "N", "no", "No", "NO", "false", "False", "FALSE", "off", "Off", "OFF" };

bool yaml_true(const char *s)
{
	return str_in(s, yaml_trues, ELEMENTSOF(yaml_trues));
}

static bool span_of(const char *s, const char *set)
{
	return s[0] != '\0' && s[strspn(s, set)] == '\0';
}

/* [-+]?(0x[0-9a-fA-F_]+|0b[01_]+|0o[0-7_]+|[0-9][0-9_]*) */
static bool looks_int(const char *s)
{
	if (*s == '-' || *s == '+')
		s++;
	if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
		return span_of(s + 2, "0123456789abcdefABCDEF_");
	if (s[0] == '0' && (s[1] == 'b' || s[1] == 'B'))
		return span_of(s + 2, "01_");
	if (s[0] == '0' && (s[1] == 'o' || s[1] == 'O'))
		return span_of(s + 2, "01234567_");
	return s[0] >= '0' && s[0] <= '9' && span_of(s, "0123456789_");
}

/* [-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?, or .inf/.nan. */
static bool looks_float(const char *s)
{
	static const char *const special[] = { ".inf", ".Inf", ".INF", ".nan", ".NaN", ".NAN" };
	if (*s == '-' || *s == '+')
		s++;
	if (str_in(s, special, ELEMENTSOF(special)))
		return true;
	size_t digits = strspn(s, "0123456789");
	s += digits;
	if (*s == '.') {
		size_t frac = strspn(s + 1, "0123456789");
		if (digits == 0 && frac == 0)
			return false;
		s += 1 + frac;
	} else if (digits == 0) {
		return false;
	}
	if (*s == 'e' || *s == 'E') {
		s++;
		if (*s == '-' || *s == '+')
			s++;
		return span_of(s, "0123456789");
	}
	return *s == '\0';
}

static enum yscalar_kind resolve_plain(const char *s)
{
	if (str_in(s, yaml_nulls, ELEMENTSOF(yaml_nulls)))
		return YS_NULL;
	if (yaml_true(s) || str_in(s, yaml_falses, ELEMENTSOF(yaml_falses)))
		return YS_BOOL;
	if (looks_int(s))
		return YS_INT;
	if (looks_float(s))
		return YS_FLOAT;
	return YS_STR;
}

static int tree_add(struct builder *b, enum ynode_type type, const yaml_event_t *ev, struct ynode **ret)
{
	size_t line = ev->start_mark.line + 1;
	if (++b->n_nodes > b->limits->max_nodes)
		return yaml_fail(b->why, b->why_size, line, -E2BIG, "more than %zu YAML nodes in one document",
				 b->limits->max_nodes);
	struct ynode *parent = b->depth ? b->stack[b->depth - 1] : NULL;
	if (parent && parent->type == YN_MAP && parent->n_children % 2 == 0 && type != YN_SCALAR)
		return yaml_fail(b->why, b->why_size, line, -EINVAL, "a mapping key must be a scalar");
	if (!parent && b->root)
		return yaml_fail(b->why, b->why_size, line, -EINVAL, "malformed YAML: a second root node");

	struct ynode *node = arena_alloc(&b->arena, sizeof(*node));
	if (!node)
		return yaml_fail(b->why, b->why_size, 0, -ENOMEM, "out of memory");
	node->type = type;
	node->line = line;
	if (!parent) {
		b->root = node;
	} else {
		if (parent->last)
			parent->last->next = node;
		else
			parent->first = node;
		parent->last = node;
		parent->n_children++;
	}
	*ret = node;
	return 0;
}

static int tree_scalar(struct builder *b, const yaml_event_t *ev)
{
	struct ynode *node;
	int r = tree_add(b, YN_SCALAR, ev, &node);
	if (r < 0)
		return r;
	size_t len = ev->data.scalar.length;
	if (memchr(ev->data.scalar.value, '\0', len))
		return yaml_fail(b->why, b->why_size, node->line, -EINVAL, "a NUL character in a string");
	node->value = arena_alloc(&b->arena, len + 1);
	if (!node->value)
		return yaml_fail(b->why, b->why_size, 0, -ENOMEM, "out of memory");
	memcpy(node->value, ev->data.scalar.value, len);
	node->len = len;

	const char *tag = (const char *)ev->data.scalar.tag;
	if (tag && (strcmp(tag, YAML_STR_TAG) == 0 || strcmp(tag, "!") == 0))
		node->kind = YS_STR;
	else if (ev->data.scalar.style == YAML_PLAIN_SCALAR_STYLE)
		node->kind = resolve_plain(node->value);
	else
		node->kind = YS_STR;
	return 0;
}

static int tree_open(struct builder *b, enum ynode_type type, const yaml_event_t *ev)
{
	if (b->depth >= b->limits->max_depth)
		return yaml_fail(b->why, b->why_size, ev->start_mark.line + 1, -E2BIG,
				 "YAML nested deeper than %zu levels", b->limits->max_depth);
	struct ynode *node;
	int r = tree_add(b, type, ev, &node);
	if (r < 0)
		return r;
	b->stack[b->depth++] = node;
	return 0;
}

static void tree_reset(struct builder *b)
{
	arena_free(&b->arena);
	b->root = NULL;
	b->depth = 0;
	b->n_nodes = 0;
}

static int yaml_failure(struct builder *b, const yaml_parser_t *parser)
{
	if (parser->error == YAML_MEMORY_ERROR)
		return yaml_fail(b->why, b->why_size, 0, -ENOMEM, "out of memory");
	const char *problem = parser->problem ? parser->problem : "unknown error";
	if (parser->error == YAML_READER_ERROR)
		return yaml_fail(b->why, b->why_size, 0, -EINVAL, "malformed YAML: %s at byte %zu", problem,
				 parser->problem_offset);
	size_t line = parser->problem_mark.line + 1;
	if (parser->context)
		return yaml_fail(b->why, b->why_size, line, -EINVAL, "malformed YAML: %s (%s)", problem,
				 parser->context);
	return yaml_fail(b->why, b->why_size, line, -EINVAL, "malformed YAML: %s", problem);
}

static int handle_event(struct builder *b, const yaml_event_t *ev, yaml_document_fn fn, void *ctx, bool *done)
{
	size_t line = ev->start_mark.line + 1;
	switch (ev->type) {
	case YAML_STREAM_END_EVENT:
		*done = true;
		return 0;
	case YAML_DOCUMENT_START_EVENT:
		tree_reset(b);
		b->doc_line = line;
		return 0;
	case YAML_DOCUMENT_END_EVENT: {
		int r = fn(ctx, b->root, b->doc_line);
		tree_reset(b);
		return r;
	}
	case YAML_ALIAS_EVENT:
		return yaml_fail(b->why, b->why_size, line, -EINVAL, "YAML aliases (*%.*s) are not supported",
				 YAML_CLIP, (const char *)ev->data.alias.anchor);
	case YAML_SCALAR_EVENT:
		return tree_scalar(b, ev);
	case YAML_SEQUENCE_START_EVENT:
		return tree_open(b, YN_SEQ, ev);
	case YAML_MAPPING_START_EVENT:
		return tree_open(b, YN_MAP, ev);
	case YAML_SEQUENCE_END_EVENT:
	case YAML_MAPPING_END_EVENT:
		if (b->depth > 0)
			b->depth--;
		return 0;
	case YAML_NO_EVENT:
	case YAML_STREAM_START_EVENT:
		return 0;
	}
	return 0;
}

int yaml_tree_parse(const char *data, size_t len, const struct yaml_tree_limits *limits, yaml_document_fn fn,
		    void *ctx, char *why, size_t why_size)
{
	struct yaml_tree_limits bounded = *limits;
	if (bounded.max_depth > YAML_TREE_MAX_DEPTH)
		bounded.max_depth = YAML_TREE_MAX_DEPTH;
	struct builder b = { .limits = &bounded, .why = why, .why_size = why_size };
	yaml_parser_t parser;
	if (!yaml_parser_initialize(&parser))
		return yaml_fail(b.why, b.why_size, 0, -ENOMEM, "out of memory");
	yaml_parser_set_input_string(&parser, (const unsigned char *)(data ? data : ""), len);
	int r = 0;
	for (bool done = false; !done && r == 0;) {
		yaml_event_t ev;
		if (!yaml_parser_parse(&parser, &ev)) {
			r = yaml_failure(&b, &parser);
			break;
		}
		r = handle_event(&b, &ev, fn, ctx, &done);
		yaml_event_delete(&ev);
	}
	yaml_parser_delete(&parser);
	tree_reset(&b);
	return r;
}
