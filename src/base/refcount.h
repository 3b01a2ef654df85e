/* SPDX-License-Identifier: Apache-2.0 */
/* Reference counts of objects shared between threads (inventory and
 * telemetry snapshots, pod maps, kubelet-sim's registered plugins): one
 * definition of the ref/unref pair, with one rule for NULL. Both take NULL:
 * ref returns it, unref does nothing, so that the holder of a reference that
 * may not exist yet (a resource that published nothing) needs no check, and
 * a destructor may drop references it never took. */
#pragma once

#include <stdatomic.h>

/* Defines
 *   type *name_ref(type *p): one more reference; returns p;
 *   void name_unref(type *p): one less; the last one calls free_fn(p);
 * for a type whose count is an atomic_uint field named refs, set to 1 by
 * whoever makes the object. The module's header declares the two. */
#define DEFINE_REFCOUNT(type, name, free_fn)                          \
	type *name##_ref(type *p)                                     \
	{                                                             \
		if (p)                                                \
			atomic_fetch_add(&p->refs, 1);                \
		return p;                                             \
	}                                                             \
	void name##_unref(type *p)                                    \
	{                                                             \
		if (p && atomic_fetch_sub(&p->refs, 1) == 1)          \
			free_fn(p);                                   \
	}
