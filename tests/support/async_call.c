/* SPDX-License-Identifier: Apache-2.0 */
#include "support/async_call.h"

#include <errno.h>

#include "base/wait.h"

static void on_done(void *ctx, struct gc_result *result)
{
	struct async_call *a = ctx;
	pthread_mutex_lock(&a->lock);
	a->result = *result;
	a->done = true;
	pthread_cond_broadcast(&a->cond);
	pthread_mutex_unlock(&a->lock);
}

int async_call_start(struct async_call *a, struct gc_channel *ch, struct cq_runner *runner, const char *method,
		     const uint8_t *req, size_t len, int64_t timeout_ms)
{
	*a = (struct async_call){ 0 };
	pthread_mutex_init(&a->lock, NULL);
	cond_init_monotonic(&a->cond);
	int r = gc_unary_start(ch, runner, method, req, len, timeout_ms, on_done, a, &a->async);
	if (r < 0) {
		pthread_cond_destroy(&a->cond);
		pthread_mutex_destroy(&a->lock);
	}
	return r;
}

bool async_call_wait(struct async_call *a, int timeout_ms)
{
	struct timespec until = deadline_after_ms(timeout_ms);
	pthread_mutex_lock(&a->lock);
	while (!a->done && pthread_cond_timedwait(&a->cond, &a->lock, &until) != ETIMEDOUT) {
	}
	bool done = a->done;
	pthread_mutex_unlock(&a->lock);
	return done;
}

int async_call_end(struct async_call *a, int timeout_ms)
{
	if (!async_call_wait(a, timeout_ms))
		return -ETIMEDOUT;
	gc_async_unref(a->async);
	pthread_cond_destroy(&a->cond);
	pthread_mutex_destroy(&a->lock);
	return 0;
}
