/* SPDX-License-Identifier: Apache-2.0 */
/* The address space the daemon's threads reserve. glibc's malloc gives a
 * thread that finds the other arenas busy an arena of its own, each a
 * 64 MiB reservation (up to eight per core), and every thread gets 8 MiB of
 * stack (RLIMIT_STACK's usual value), gRPC's and libcurl's as well as ours:
 * about 1 GiB of address space for 18 MiB resident, so that under an
 * RLIMIT_AS of 512 MiB (`ulimit -v`) thread creation failed and gRPC threw
 * std::bad_alloc. threads_limit() holds malloc to one arena and gives the
 * threads created after it a smaller stack by default; the threads that run
 * a vendor library's code keep the stack the process started with. */
#pragma once

#include <pthread.h>
#include <stddef.h>

/* The default stack of threads after threads_limit: none of ours uses more
 * than 32 KiB under load, nor gRPC's (the deepest frame is a few tens of
 * KiB); and it is what every thread gets on Windows, twice macOS's. */
#define THREADS_STACK_BYTES (1024 * 1024)

/* Holds malloc to one arena, and makes THREADS_STACK_BYTES (or RLIMIT_STACK's
 * default when that is smaller) the stack of every thread created from then
 * on without a size of its own, remembering the default it replaced for
 * thread_start_vendor. Call it before any thread exists. A malloc that
 * ignores the arena setting (a sanitizer's) is no error. Returns 0 or a
 * negative errno. */
int threads_limit(void);

/* pthread_create with the stack threads had before threads_limit (the
 * default when it was not called): for a thread that calls into a vendor
 * library, whose stack needs nobody here knows. Returns 0 or a negative
 * errno. */
int thread_start_vendor(pthread_t *ret_thread, void *(*fn)(void *), void *arg);
