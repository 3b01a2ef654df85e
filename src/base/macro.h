/* Small macros used across the tree: the element count of an array and the
 * enclosing object of an embedded member. */
#pragma once

#include <stddef.h>

#define ELEMENTSOF(array) (sizeof(array) / sizeof((array)[0]))

/* The object of type that embeds member at ptr (a callback's tag, say). */
#define container_of(ptr, type, member) ((type *)(void *)((char *)(ptr)-offsetof(type, member)))
