/* SPDX-License-Identifier: Apache-2.0 */
/* Small macros shared by every module. */
#pragma once

#include <stddef.h>

/* The number of elements of an array (not a pointer: that fails to compile). */
#define ELEMENTSOF(x)                                                                                     \
	(__builtin_choose_expr(!__builtin_types_compatible_p(__typeof__(x), __typeof__(&(x)[0])),        \
			       sizeof(x) / sizeof((x)[0]), (void)0))

/* The structure that contains member ptr. */
#define container_of(ptr, type, member) ((type *)(void *)((char *)(ptr) - offsetof(type, member)))
