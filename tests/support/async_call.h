/* SPDX-License-Identifier: Apache-2.0 */
/* A unary gRPC call made asynchronously (grpc/client.h's gc_unary_start),
 * for a test that does something else while the call is under way (cancels
 * it, calls again, stops the server) and then waits for its end with a
 * deadline. */
#pragma once

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "grpc/client.h"

struct async_call {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	bool done;
	struct gc_result result; /* once done */
	struct gc_async *async;  /* for gc_async_cancel */
};

/* Starts the call on runner's thread. Returns 0 or a negative errno. */
int async_call_start(struct async_call *call, struct gc_channel *channel, struct cq_runner *runner,
		     const char *method, const uint8_t *req, size_t len, int64_t timeout_ms);

/* Waits up to timeout_ms for the call's end; whether it came. */
bool async_call_wait(struct async_call *call, int timeout_ms);

/* Waits as async_call_wait, then frees what the call held but its result
 * (gc_result_clear is the caller's). Returns 0, or -ETIMEDOUT (nothing
 * freed) when the call did not end. */
int async_call_end(struct async_call *call, int timeout_ms);
