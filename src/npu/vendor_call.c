/* SPDX-License-Identifier: Apache-2.0 */
/* Vendor calls with a deadline, on one worker thread; see vendor_call.h. */
#include "npu/vendor_call.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/crash.h"
#include "base/threads.h"
#include "base/wait.h"

enum job_state {
	JOB_IDLE,      /* nothing to do */
	JOB_QUEUED,    /* a caller handed a call over */
	JOB_RUNNING,   /* the worker runs it; its caller waits */
	JOB_DONE,      /* it returned in time; its caller takes the result */
	JOB_ABANDONED, /* it is past its deadline and still running: stuck */
};

struct vendor_guard {
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t work; /* the worker waits here for a call */
	pthread_cond_t done; /* the caller waits here for the result */
	int64_t deadline_ms;
	const char *crash_what; /* the worker's last words, should vendor code kill the process */
	bool quit;
	bool detached; /* freed while stuck: the worker frees the guard */
	bool background; /* the job is vendor_call_start's: nobody waits for it */
	void (*wake)(void *ctx); /* wakes the background job's owner */
	void *wake_ctx;

	enum job_state state;
	int (*fn)(void *arg);
	const char *name;
	long key;
	int result;
	size_t size;
	unsigned char arg[VENDOR_CALL_ARG_MAX];
};

static void destroy(struct vendor_guard *g)
{
	pthread_cond_destroy(&g->work);
	pthread_cond_destroy(&g->done);
	pthread_mutex_destroy(&g->lock);
	free(g);
}

static void *worker_main(void *arg)
{
	struct vendor_guard *g = arg;
	/* Only vendor code runs here: a crash is always the vendor's. */
	crash_guard_enter(g->crash_what);
	pthread_mutex_lock(&g->lock);
	for (;;) {
		while (g->state != JOB_QUEUED && !g->quit)
			pthread_cond_wait(&g->work, &g->lock);
		if (g->state != JOB_QUEUED)
			break;
		g->state = JOB_RUNNING;
		pthread_mutex_unlock(&g->lock);
		/* The argument is the guard's own copy: nobody else touches it
		 * while the call runs, however late it returns. */
		int r = g->fn(g->arg);
		pthread_mutex_lock(&g->lock);
		g->result = r;
		if (g->state == JOB_ABANDONED) {
			g->state = JOB_IDLE;
			if (g->detached)
				break;
		} else {
			g->state = JOB_DONE;
			pthread_cond_signal(&g->done);
			if (g->background && g->wake)
				g->wake(g->wake_ctx);
		}
	}
	bool free_self = g->detached;
	pthread_mutex_unlock(&g->lock);
	if (free_self)
		destroy(g);
	return NULL;
}

int vendor_guard_new(int64_t deadline_ms, const char *crash_what, struct vendor_guard **ret_guard)
{
	struct vendor_guard *g = calloc(1, sizeof(*g));
	if (!g)
		return -ENOMEM;
	g->deadline_ms = deadline_ms;
	g->crash_what = crash_what;
	pthread_mutex_init(&g->lock, NULL);
	pthread_cond_init(&g->work, NULL);
	cond_init_monotonic(&g->done);
	int r = thread_start_vendor(&g->thread, worker_main, g);
	if (r < 0) {
		destroy(g);
		return r;
	}
	*ret_guard = g;
	return 0;
}

bool vendor_guard_free(struct vendor_guard *g)
{
	if (!g)
		return false;
	pthread_mutex_lock(&g->lock);
	g->quit = true;
	g->wake = NULL;
	/* A background call under way is as stuck as an overdue one: nobody
	 * will take its result. */
	if (g->background && (g->state == JOB_QUEUED || g->state == JOB_RUNNING))
		g->state = g->state == JOB_QUEUED ? JOB_IDLE : JOB_ABANDONED;
	bool stuck = g->state == JOB_ABANDONED;
	g->detached = stuck;
	pthread_cond_signal(&g->work);
	pthread_mutex_unlock(&g->lock);
	if (stuck) {
		pthread_detach(g->thread);
		return true;
	}
	pthread_join(g->thread, NULL);
	destroy(g);
	return false;
}

/* Hands the worker a call; g->lock held, the worker idle. */
static void queue_job(struct vendor_guard *g, const char *name, long key, int (*fn)(void *arg), const void *arg,
		      size_t arg_size, bool background)
{
	g->background = background;
	g->fn = fn;
	g->name = name;
	g->key = key;
	g->size = arg_size;
	memcpy(g->arg, arg, arg_size);
	g->state = JOB_QUEUED;
	pthread_cond_signal(&g->work);
}

int vendor_call_run(struct vendor_guard *g, const char *name, long key, int (*fn)(void *arg), void *arg,
		    size_t arg_size)
{
	if (arg_size > VENDOR_CALL_ARG_MAX)
		return -E2BIG;
	pthread_mutex_lock(&g->lock);
	if (g->state == JOB_ABANDONED) {
		/* The library is still inside an earlier call. */
		int r = strcmp(g->name, name) == 0 && g->key == key ? -ETIMEDOUT : -EBUSY;
		pthread_mutex_unlock(&g->lock);
		return r;
	}
	if (g->state != JOB_IDLE) {
		/* A background call runs, or its result waits to be taken. */
		pthread_mutex_unlock(&g->lock);
		return -EBUSY;
	}
	queue_job(g, name, key, fn, arg, arg_size, false);

	struct timespec until = deadline_after_ms(g->deadline_ms);
	while (g->state != JOB_DONE && pthread_cond_timedwait(&g->done, &g->lock, &until) != ETIMEDOUT) {
	}
	int r;
	if (g->state == JOB_DONE) {
		memcpy(arg, g->arg, arg_size);
		r = g->result;
		g->state = JOB_IDLE;
	} else if (g->state == JOB_QUEUED) {
		/* Never started (the worker was not scheduled in time): taken
		 * back, nothing is stuck. */
		g->state = JOB_IDLE;
		r = -ETIMEDOUT;
	} else {
		/* Running past its deadline: the worker drops its result. */
		g->state = JOB_ABANDONED;
		r = -ETIMEDOUT;
	}
	pthread_mutex_unlock(&g->lock);
	return r;
}

int vendor_call_start(struct vendor_guard *g, const char *name, long key, int (*fn)(void *arg), const void *arg,
		      size_t arg_size, void (*done)(void *done_ctx), void *done_ctx)
{
	if (arg_size > VENDOR_CALL_ARG_MAX)
		return -E2BIG;
	pthread_mutex_lock(&g->lock);
	if (g->state != JOB_IDLE) {
		pthread_mutex_unlock(&g->lock);
		return -EBUSY;
	}
	g->wake = done;
	g->wake_ctx = done_ctx;
	queue_job(g, name, key, fn, arg, arg_size, true);
	pthread_mutex_unlock(&g->lock);
	return 0;
}

int vendor_call_take(struct vendor_guard *g, bool give_up, void *arg, size_t arg_size, int *ret_result)
{
	int r;
	pthread_mutex_lock(&g->lock);
	if (!g->background || g->state == JOB_IDLE || g->state == JOB_ABANDONED) {
		r = -ENOENT;
	} else if (g->state == JOB_DONE) {
		memcpy(arg, g->arg, arg_size < g->size ? arg_size : g->size);
		*ret_result = g->result;
		g->state = JOB_IDLE;
		g->background = false;
		r = 0;
	} else if (!give_up) {
		r = -EINPROGRESS;
	} else if (g->state == JOB_QUEUED) {
		/* Never started: taken back, nothing is stuck. */
		g->state = JOB_IDLE;
		g->background = false;
		r = -ETIMEDOUT;
	} else {
		g->state = JOB_ABANDONED;
		g->background = false;
		r = -ETIMEDOUT;
	}
	pthread_mutex_unlock(&g->lock);
	return r;
}
