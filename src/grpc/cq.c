/* SPDX-License-Identifier: Apache-2.0 */
#include "grpc/cq.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>

#include <grpc/support/time.h>

#if defined(__SANITIZE_THREAD__)
#include <sanitizer/tsan_interface.h>
#define HANDOVER(tag) __tsan_release(tag)
#define TAKEOVER(tag) __tsan_acquire(tag)
#else
#define HANDOVER(tag) ((void)(tag))
#define TAKEOVER(tag) ((void)(tag))
#endif

struct cq_runner {
	grpc_completion_queue *cq;
	pthread_t thread;
};

static void *cq_thread(void *arg)
{
	struct cq_runner *runner = arg;

	for (;;) {
		grpc_event ev = grpc_completion_queue_next(runner->cq, gpr_inf_future(GPR_CLOCK_MONOTONIC), NULL);
		if (ev.type == GRPC_QUEUE_SHUTDOWN)
			break;
		if (ev.type == GRPC_OP_COMPLETE) {
			struct cq_tag *tag = ev.tag;
			TAKEOVER(tag);
			tag->done(tag, ev.success != 0);
		}
	}
	return NULL;
}

int cq_runner_start(struct cq_runner **ret_runner)
{
	struct cq_runner *runner = calloc(1, sizeof(*runner));
	if (!runner)
		return -ENOMEM;

	grpc_init();
	runner->cq = grpc_completion_queue_create_for_next(NULL);
	int r = -pthread_create(&runner->thread, NULL, cq_thread, runner);
	if (r < 0)
		goto fail;

	*ret_runner = runner;
	return 0;

fail:
	grpc_completion_queue_shutdown(runner->cq);
	grpc_completion_queue_destroy(runner->cq);
	grpc_shutdown();
	free(runner);
	return r;
}

void cq_handover(struct cq_tag *tag)
{
	HANDOVER(tag);
}

grpc_call_error cq_start_batch(grpc_call *call, const grpc_op *ops, size_t n, void *tag)
{
	HANDOVER(tag);
	return grpc_call_start_batch(call, ops, n, tag, NULL);
}

grpc_completion_queue *cq_runner_queue(struct cq_runner *runner)
{
	return runner->cq;
}

bool cq_runner_on_thread(struct cq_runner *runner)
{
	return pthread_equal(pthread_self(), runner->thread) != 0;
}

void cq_runner_stop(struct cq_runner *runner)
{
	if (!runner)
		return;
	/* The thread drains every pending tag and ends at GRPC_QUEUE_SHUTDOWN. */
	grpc_completion_queue_shutdown(runner->cq);
	pthread_join(runner->thread, NULL);
	grpc_completion_queue_destroy(runner->cq);
	grpc_shutdown();
	free(runner);
}
