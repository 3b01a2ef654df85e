/* SPDX-License-Identifier: Apache-2.0 */
/* Vendor calls with a deadline. A vendor library call (DCMI) may block for
 * seconds or minutes (a chip reset, a wedged driver); run on the daemon's
 * event loop it would freeze registration, the kubelet's streams, health
 * and SIGTERM with it. Here every call runs on one worker thread of its own,
 * one at a time (the library is not known to be thread-safe), and the
 * caller waits for it only up to a deadline:
 *
 * - a call that returns in time gives its result;
 * - a call that does not gives -ETIMEDOUT; it goes on running on the
 *   worker, which is then "stuck", and its result is dropped when it ends;
 * - while the worker is stuck, a new call is not started: it gives
 *   -ETIMEDOUT when it is the same call on the same chip as the stuck one,
 *   -EBUSY otherwise (the library could not be asked), at once.
 *
 * A call's argument is copied into storage the guard owns and copied back
 * only when the call returned in time, so a call that is abandoned never
 * writes into the caller's memory: fn must reach nothing of the caller's
 * through pointers in arg, only the long-lived library state.
 *
 * A call that may take long by nature (a chip reset) runs in the background
 * instead (vendor_call_start): the caller does not wait at all, is woken
 * when it returns, takes its result, and decides itself when it is late.
 * While it runs, and until its result is taken, the library is busy: other
 * calls give -EBUSY at once.
 *
 * Threads: vendor_call_run, vendor_call_start and vendor_call_take from one
 * thread at a time (the loop thread). */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct vendor_guard;

/* The largest argument a call may take. */
#define VENDOR_CALL_ARG_MAX 32768

/* Starts the worker, guarded by base/crash.h with crash_what for its whole
 * life (a string that outlives the guard). Returns 0, -ENOMEM or -EAGAIN. */
int vendor_guard_new(int64_t deadline_ms, const char *crash_what, struct vendor_guard **ret_guard);

/* Stops the worker and frees the guard, unless a call is stuck: then the
 * worker is left to end on its own (it frees what it holds) and true is
 * returned, so that the caller knows not to unload the library. Accepts
 * NULL (false). */
bool vendor_guard_free(struct vendor_guard *guard);

/* Runs fn(arg) on the worker; name (a literal) and key (e.g. the chip's
 * physical id, -1 for none) identify the call. Returns fn's result, or
 * -ETIMEDOUT / -EBUSY as above, or -E2BIG when arg_size is over
 * VENDOR_CALL_ARG_MAX. arg is written only when fn's result is returned. */
int vendor_call_run(struct vendor_guard *guard, const char *name, long key, int (*fn)(void *arg), void *arg,
		    size_t arg_size);

/* Starts fn(arg) on the worker and returns at once; arg is copied as for
 * vendor_call_run. When fn returns, done(done_ctx) runs on the worker with
 * the guard's lock held: it must only wake its owner (an eventfd), and is
 * never called once vendor_guard_free has returned. Returns 0, -EBUSY
 * when the worker is stuck or a background call is under way or untaken,
 * -E2BIG as vendor_call_run. */
int vendor_call_start(struct vendor_guard *guard, const char *name, long key, int (*fn)(void *arg), const void *arg,
		      size_t arg_size, void (*done)(void *done_ctx), void *done_ctx);

/* The background call's outcome: 0 with fn's result in *ret_result and its
 * argument copied back into arg (arg_size bytes, as started) once it
 * returned, and the library free again; -EINPROGRESS while it runs, unless
 * give_up: then it is abandoned (the worker is stuck, as with a call past
 * its deadline) and -ETIMEDOUT returned. -ENOENT when none was started. */
int vendor_call_take(struct vendor_guard *guard, bool give_up, void *arg, size_t arg_size, int *ret_result);
