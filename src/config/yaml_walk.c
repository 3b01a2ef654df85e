/* SPDX-License-Identifier: Apache-2.0 */
/* Checked walks over YAML trees; see yaml_walk.h. */
#include "config/yaml_walk.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

int yaml_walk_fail(const struct yaml_walk *w, size_t line, int r, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	yaml_vfail(w->why, w->why_size, line, r, fmt, ap);
	va_end(ap);
	return r;
}

const char *ynode_type_name(const struct ynode *n)
{
	return n->type == YN_MAP ? "a mapping" : n->type == YN_SEQ ? "a list" : "a scalar";
}

void yaml_path_key(char *buf, size_t size, const char *path, const char *key)
{
	size_t len = strlen(key);
	const char *more = len > YAML_CLIP ? "..." : "";
	int n = path[0] == '\0' ? snprintf(buf, size, "%.*s%s", YAML_CLIP, key, more)
				: snprintf(buf, size, "%s.%.*s%s", path, YAML_CLIP, key, more);
	if (n < 0)
		buf[0] = '\0';
}

void yaml_path_index(char *buf, size_t size, const char *path, size_t i)
{
	if (snprintf(buf, size, "%s[%zu]", path, i) < 0)
		buf[0] = '\0';
}

int yaml_want_map(const struct yaml_walk *w, const struct ynode *n, const char *path)
{
	const char *what = path[0] ? path : "the top level";
	if (ynode_is_null(n))
		return 0;
	if (n->type != YN_MAP)
		return yaml_walk_fail(w, n->line, -EINVAL, "%s: must be a mapping, not %s", what,
				 ynode_type_name(n));
	if (n->n_children / 2 > w->max_entries)
		return yaml_walk_fail(w, n->line, -E2BIG, "%s: more than %zu entries", what,
				 w->max_entries);
	ynode_for_each_pair(n, k, v)
		for (const struct ynode *k2 = v->next; k2 && k2->next; k2 = k2->next->next)
			if (strcmp(k->value, k2->value) == 0) {
				char p[YAML_PATH_SIZE];
				yaml_path_key(p, sizeof(p), path, k2->value);
				return yaml_walk_fail(w, k2->line, -EINVAL,
						 "%s: the key appears twice (first on line %zu)", p, k->line);
			}
	return 0;
}

int yaml_want_seq(const struct yaml_walk *w, const struct ynode *n, const char *path)
{
	if (ynode_is_null(n))
		return 0;
	if (n->type != YN_SEQ)
		return yaml_walk_fail(w, n->line, -EINVAL, "%s: must be a list, not %s", path,
				 ynode_type_name(n));
	if (n->n_children > w->max_entries)
		return yaml_walk_fail(w, n->line, -E2BIG, "%s: more than %zu entries", path,
				 w->max_entries);
	return 0;
}

int yaml_want_text(const struct yaml_walk *w, const struct ynode *n, const char *path)
{
	if (n->type != YN_SCALAR)
		return yaml_walk_fail(w, n->line, -EINVAL, "%s: must be a scalar, not %s", path,
				 ynode_type_name(n));
	if (n->kind == YS_NULL)
		return yaml_walk_fail(w, n->line, -EINVAL, "%s: needs a value", path);
	return 0;
}

int yaml_get_bool(const struct yaml_walk *w, const struct ynode *n, const char *path, bool *ret)
{
	if (ynode_is_null(n))
		return 0;
	if (n->type != YN_SCALAR || n->kind != YS_BOOL)
		return yaml_walk_fail(w, n->line, -EINVAL, "%s: must be true or false", path);
	*ret = yaml_true(n->value);
	return 0;
}

int yaml_unknown_key(const struct yaml_walk *w, const struct ynode *k, const char *path, const char *takes)
{
	char p[YAML_PATH_SIZE];
	yaml_path_key(p, sizeof(p), path, k->value);
	return yaml_walk_fail(w, k->line, -EINVAL, "%s: unknown key (%s takes %s)", p,
			 path[0] ? path : "the file", takes);
}
