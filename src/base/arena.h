/* SPDX-License-Identifier: Apache-2.0 */
/* A bump allocator for building one response: every allocation is freed at
 * once with arena_free, so message trees need no per-field cleanup. */
#pragma once

#include <stddef.h>

struct arena {
	struct arena_block *head;
};

/* Zeroed memory, or NULL when out of memory. */
void *arena_alloc(struct arena *arena, size_t size);
char *arena_strdup(struct arena *arena, const char *s);
char *arena_printf(struct arena *arena, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void arena_free(struct arena *arena);
