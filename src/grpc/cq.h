/* SPDX-License-Identifier: Apache-2.0 */
/* A gRPC completion queue driven by a thread of its own. Every tag handed to
 * gRPC through this module is a struct cq_tag; when the operation completes,
 * its callback runs on the queue's thread. Callbacks must be short: they share
 * the thread with every other call on the queue. */
#pragma once

#include <stdbool.h>

#include <grpc/grpc.h>

struct cq_tag {
	void (*done)(struct cq_tag *tag, bool ok);
};

struct cq_runner;

/* Creates the queue and starts its thread. */
int cq_runner_start(struct cq_runner **ret_runner);

grpc_completion_queue *cq_runner_queue(struct cq_runner *runner);

/* Whether the caller is running on the queue's thread (inside a callback). */
bool cq_runner_on_thread(struct cq_runner *runner);

/* Starts a batch whose completion comes back through tag. Use it rather
 * than grpc_call_start_batch: everything the caller wrote before is then
 * visible to the tag's callback also for ThreadSanitizer, which cannot see
 * the ordering inside Debian's gRPC (not built with it). */
grpc_call_error cq_start_batch(grpc_call *call, const grpc_op *ops, size_t n, void *tag);

/* The same hand-over for a tag given to gRPC in any other way (a requested
 * call, a shutdown notification), called just before. */
void cq_handover(struct cq_tag *tag);

/* Shuts the queue down, waits until every pending tag has completed and the
 * thread has ended, then frees everything. Callers cancel their calls first.
 * Accepts NULL. */
void cq_runner_stop(struct cq_runner *runner);
