/* SPDX-License-Identifier: Apache-2.0 */
/* One malloc arena and small default thread stacks; see threads.h. */
#include "base/threads.h"

#include <errno.h>
#include <malloc.h>

/* 0 until threads_limit: then the default stack it replaced. Written
 * before any thread exists, read after. */
static size_t vendor_stack_bytes;

int threads_limit(void)
{
	/* mallopt returns 1 on success; a sanitizer's malloc answers 0 and
	 * keeps its own arenas, which is fine: it does not run under a limit. */
	(void)mallopt(M_ARENA_MAX, 1);

	pthread_attr_t attr;
	int r = pthread_getattr_default_np(&attr);
	if (r != 0)
		return -r;
	size_t stack = 0;
	r = pthread_attr_getstacksize(&attr, &stack);
	if (r == 0 && stack > THREADS_STACK_BYTES) {
		r = pthread_attr_setstacksize(&attr, THREADS_STACK_BYTES);
		if (r == 0)
			r = pthread_setattr_default_np(&attr);
		if (r == 0)
			vendor_stack_bytes = stack;
	}
	pthread_attr_destroy(&attr);
	return -r;
}

int thread_start_vendor(pthread_t *ret_thread, void *(*fn)(void *), void *arg)
{
	if (vendor_stack_bytes == 0)
		return -pthread_create(ret_thread, NULL, fn, arg);
	pthread_attr_t attr;
	int r = pthread_attr_init(&attr);
	if (r != 0)
		return -r;
	r = pthread_attr_setstacksize(&attr, vendor_stack_bytes);
	if (r == 0)
		r = pthread_create(ret_thread, &attr, fn, arg);
	pthread_attr_destroy(&attr);
	return -r;
}
