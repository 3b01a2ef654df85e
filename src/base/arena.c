/* SPDX-License-Identifier: Apache-2.0 */
#include "base/arena.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ARENA_BLOCK_BYTES 8192

struct arena_block {
	struct arena_block *next;
	size_t used, size;
	max_align_t data[];
};

void *arena_alloc(struct arena *arena, size_t size)
{
	size = (size + sizeof(max_align_t) - 1) & ~(sizeof(max_align_t) - 1);
	struct arena_block *b = arena->head;
	if (!b || b->size - b->used < size) {
		size_t cap = size > ARENA_BLOCK_BYTES ? size : ARENA_BLOCK_BYTES;
		b = malloc(sizeof(*b) + cap);
		if (!b)
			return NULL;
		b->size = cap;
		b->used = 0;
		b->next = arena->head;
		arena->head = b;
	}
	void *p = (char *)b->data + b->used;
	b->used += size;
	memset(p, 0, size);
	return p;
}

char *arena_strdup(struct arena *arena, const char *s)
{
	size_t len = strlen(s) + 1;
	char *p = arena_alloc(arena, len);
	if (p)
		memcpy(p, s, len);
	return p;
}

char *arena_printf(struct arena *arena, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0)
		return NULL;
	char *p = arena_alloc(arena, (size_t)n + 1);
	if (!p)
		return NULL;
	va_start(ap, fmt);
	vsnprintf(p, (size_t)n + 1, fmt, ap);
	va_end(ap);
	return p;
}

void arena_free(struct arena *arena)
{
	struct arena_block *b = arena->head;
	while (b) {
		struct arena_block *next = b->next;
		free(b);
		b = next;
	}
	arena->head = NULL;
}
