/* SPDX-License-Identifier: Apache-2.0 */
/* gRPC client calls over a unix socket, built on the gRPC core C API: a
 * blocking unary call with a deadline (tools, tests), an asynchronous unary
 * call completed on a cq_runner thread and cancellable (the registrar), and a
 * blocking reader of a server stream (kubelet-sim, tests, benchmark). Messages
 * are opaque bytes. */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include <grpc/status.h>

#include "grpc/cq.h"

struct gc_channel;

/* The outcome of a call that reached the point of having a status. */
struct gc_result {
	grpc_status_code status;
	char details[512];
	uint8_t *body; /* malloc'd response on OK (NULL when empty) */
	size_t len;
};

void gc_result_clear(struct gc_result *result);

/* Opens a channel to unix:<socket_path>. Connection happens lazily; calls
 * fail fast with UNAVAILABLE when nothing listens there. */
int gc_channel_open(const char *socket_path, struct gc_channel **ret_channel);
void gc_channel_close(struct gc_channel *channel);

/* Blocking unary call; timeout_ms < 0 means no deadline. Returns 0 with
 * *ret_result filled (check its status) or a negative errno on a local error. */
int gc_unary(struct gc_channel *channel, const char *method, const uint8_t *req, size_t len, int64_t timeout_ms,
	     struct gc_result *ret_result);

/* Asynchronous unary call over a connection of its own, made when the call
 * starts and closed when the call is done (the channel only supplies the
 * socket path); nothing listening there makes it complete at once with
 * UNAVAILABLE. done() runs exactly once, on the runner's thread, with the
 * result (which done() may keep: it owns result->body). The handle stays
 * valid for gc_async_cancel until the caller drops it with gc_async_unref. */
struct gc_async;
typedef void (*gc_async_done_fn)(void *ctx, struct gc_result *result);
int gc_unary_start(struct gc_channel *channel, struct cq_runner *runner, const char *method, const uint8_t *req,
		   size_t len, int64_t timeout_ms, gc_async_done_fn done, void *ctx, struct gc_async **ret_async);
void gc_async_cancel(struct gc_async *async);
void gc_async_unref(struct gc_async *async);

/* Server-streaming call read from the calling thread. */
struct gc_stream;
int gc_stream_open(struct gc_channel *channel, const char *method, const uint8_t *req, size_t len,
		   struct gc_stream **ret_stream);

/* Waits up to timeout_ms (< 0: forever) for the next message. Returns 0 with
 * a malloc'd body, -ETIMEDOUT, or -EPIPE once the stream has ended (then
 * gc_stream_status tells how). */
int gc_stream_next(struct gc_stream *stream, int64_t timeout_ms, uint8_t **ret_body, size_t *ret_len);
void gc_stream_status(struct gc_stream *stream, grpc_status_code *ret_status, const char **ret_details);

/* Cancels the call from any thread; a reader blocked in gc_stream_next
 * returns -EPIPE soon after. */
void gc_stream_cancel(struct gc_stream *stream);

/* Cancels the call if still open and frees it. Call it from the reading
 * thread (or once no thread reads). Accepts NULL. */
void gc_stream_close(struct gc_stream *stream);
