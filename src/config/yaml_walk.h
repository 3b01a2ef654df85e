/* SPDX-License-Identifier: Apache-2.0 */
/* Walking a YAML tree (config/yaml_tree.h) key by key, checking each node
 * where it is reached, for readers such as the --config file (config/file.h).
 * A walk keeps the key path it has come down ("sharing.timeSlicing",
 * "resources[0].name") and names it in every message, which reads "line N:
 * key.path: problem" (yaml_fail's form). Each check returns 0 or a negative
 * errno with why written; null, where a check takes it, means "none". */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "config/yaml_tree.h"

/* Room for the deepest key path a walk builds. */
#define YAML_PATH_SIZE 256

struct yaml_walk {
	char *why;
	size_t why_size;
	size_t max_entries; /* of any one mapping or list; bounds the duplicate-key check too */
};

/* yaml_fail into the walk's why. */
int yaml_walk_fail(const struct yaml_walk *w, size_t line, int r, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static inline bool ynode_is_null(const struct ynode *n)
{
	return n->type == YN_SCALAR && n->kind == YS_NULL;
}

/* k and v run over the key and value nodes of the mapping map, in order. */
#define ynode_for_each_pair(map, k, v)                                              \
	for (const struct ynode *k = (map)->first, *v = k ? k->next : NULL; k && v; \
	     k = v->next, v = k ? k->next : NULL)

/* "a mapping", "a list" or "a scalar", for messages. */
const char *ynode_type_name(const struct ynode *n);

/* path + "." + key ("key" at the top level, path ""), the key cut to
 * YAML_CLIP characters and "..." when longer. */
void yaml_path_key(char *buf, size_t size, const char *path, const char *key);
/* path + "[i]". */
void yaml_path_index(char *buf, size_t size, const char *path, size_t i);

/* A mapping of at most max_entries pairs, each key once, or null. -EINVAL
 * (not a mapping, a key twice) or -E2BIG. */
int yaml_want_map(const struct yaml_walk *w, const struct ynode *n, const char *path);
/* A list of at most max_entries items, or null. -EINVAL or -E2BIG. */
int yaml_want_seq(const struct yaml_walk *w, const struct ynode *n, const char *path);
/* Any scalar but null: its text is n->value (910 is a family, 5 a
 * duration in seconds). -EINVAL otherwise. */
int yaml_want_text(const struct yaml_walk *w, const struct ynode *n, const char *path);
/* true or false, or null (none: *ret is left as it was). -EINVAL otherwise. */
int yaml_get_bool(const struct yaml_walk *w, const struct ynode *n, const char *path, bool *ret);

/* The -EINVAL of a key that the mapping at path does not take; takes lists
 * the keys it does ("name, replicas"). */
int yaml_unknown_key(const struct yaml_walk *w, const struct ynode *k, const char *path, const char *takes);
