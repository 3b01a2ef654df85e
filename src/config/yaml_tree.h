/* SPDX-License-Identifier: Apache-2.0 */
/* YAML read into small trees with libyaml's event API, one tree per
 * document, for readers that then walk them key by key (config/yaml_walk.h),
 * such as the --config file (config/file.h). Bounded in nesting depth and
 * in nodes per document; aliases are refused, since shared nodes would let a
 * small text stand for a huge tree. Plain scalars resolve by YAML 1.1 rules,
 * as go-yaml v2 (behind kubectl and NVIDIA's device plugin) does: "yes" is a
 * boolean, 0x10 an integer, 1e3 a float.
 *
 * Errors read "line N: problem" (or just "problem" without a position);
 * yaml_fail writes them so, for the readers that walk the trees too
 * (config/yaml_walk.h). */
#pragma once

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>

enum ynode_type { YN_SCALAR, YN_SEQ, YN_MAP };
enum yscalar_kind { YS_STR, YS_NULL, YS_BOOL, YS_INT, YS_FLOAT };

struct ynode {
	enum ynode_type type;
	enum yscalar_kind kind; /* scalars: quoted or tagged !!str ones are YS_STR */
	size_t line;
	char *value; /* scalars: terminated, no NUL inside */
	size_t len;
	/* Children in order; a mapping's alternate key, value. */
	struct ynode *first, *last, *next;
	size_t n_children;
};

/* Input-controlled text quoted in a message is cut to this. */
#define YAML_CLIP 96

/* Writes the message to why as "line N: message", or as it is when line is
 * 0 (no position), and returns r. Does nothing but return r when why_size
 * is 0. */
int yaml_fail(char *why, size_t why_size, size_t line, int r, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));
int yaml_vfail(char *why, size_t why_size, size_t line, int r, const char *fmt, va_list ap)
	__attribute__((format(printf, 5, 0)));

/* Whether s is one of YAML 1.1's spellings of true (a YS_BOOL scalar that is
 * not true is false). */
bool yaml_true(const char *s);

/* Called for each document, in order, with its root (NULL for an empty
 * one) and the line it starts on. The tree is freed when it returns. A
 * negative return stops the parse and is returned as it is, with why as the
 * callback left it. */
typedef int (*yaml_document_fn)(void *ctx, const struct ynode *root, size_t line);

struct yaml_tree_limits {
	size_t max_depth; /* at most YAML_TREE_MAX_DEPTH */
	size_t max_nodes; /* per document */
};

#define YAML_TREE_MAX_DEPTH 64

/* Parses len bytes of YAML. Returns 0, -EINVAL (malformed YAML, an alias, a
 * NUL in a string, a key that is not a scalar), -E2BIG (a limit) or -ENOMEM,
 * with why said, or what fn returned. */
int yaml_tree_parse(const char *data, size_t len, const struct yaml_tree_limits *limits, yaml_document_fn fn,
		    void *ctx, char *why, size_t why_size);
