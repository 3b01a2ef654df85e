/* SPDX-License-Identifier: Apache-2.0 */
/* Registers the plugin with the kubelet: one Register call at a time with a
 * 30 s deadline (longer than the kubelet's own 10 s dial-back), retried with
 * a backoff that starts at 100 ms and doubles up to 5 s, forever. The call
 * runs asynchronously so the daemon keeps serving while it is pending (the
 * kubelet calls back into the plugin before it answers). The calls of every
 * registrar complete on one shared completion-queue thread; results arrive
 * on the daemon's loop. */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "grpc/cq.h"
#include "loop/loop.h"

struct registrar;

struct registrar_options {
	struct loop *loop;
	struct cq_runner *runner;   /* where the calls complete; shared, outlives the registrar */
	const char *kubelet_socket; /* <socket-dir>/kubelet.sock */
	const char *resource_name;
	bool preferred_allocation;  /* advertise GetPreferredAllocation */

	/* Called on the loop thread with the tag given to registrar_register.
	 * attempting: a Register call is about to start (also from inside
	 * registrar_register); it writes the socket file name this call
	 * names (each call may name another) and must not call back into
	 * the registrar; an error fails the attempt like a refused call.
	 * failures counts consecutive failed attempts. */
	int (*attempting)(void *ctx, uint64_t tag, char *endpoint, size_t endpoint_size);
	void (*registered)(void *ctx, uint64_t tag, unsigned failures);
	void (*failed)(void *ctx, uint64_t tag, const char *why, unsigned failures);
	/* Every Register the kubelet accepted, also one a later
	 * registrar_register superseded (the kubelet took it all the same);
	 * may be NULL. */
	void (*accepted)(void *ctx);
	void *ctx;
};

int registrar_new(const struct registrar_options *options, struct registrar **ret_registrar);

/* Cancels the pending attempt and backoff, if any. Accepts NULL. */
void registrar_free(struct registrar *registrar);

/* Starts over: cancels any pending attempt and backoff, registers now; the
 * callbacks of this registration carry tag. When the first call cannot even
 * start, the failure is reported and retried like any other. */
void registrar_register(struct registrar *registrar, uint64_t tag);

/* Cancels any pending attempt and backoff; nothing more happens until the
 * next registrar_register. Accepts NULL. */
void registrar_cancel(struct registrar *registrar);
