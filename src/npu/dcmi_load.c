/* SPDX-License-Identifier: Apache-2.0 */
#include "npu/dcmi_load.h"

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "base/crash.h"
#include "base/threads.h"
#include "base/wait.h"

struct dcmi_load {
	/* What the thread reads: copies, since an abandoned load outlives its
	 * owner. */
	char *explicit_path, *ld_library_path, *driver_path, *host_root;

	pthread_mutex_t lock;
	pthread_cond_t done_cond;
	bool done;
	unsigned refs; /* the thread's and the owner's, under lock */
	struct dcmi_load_result result;
};

/* A copy of s, NULL for NULL; -ENOMEM when it cannot be made. */
static int copy(const char *s, char **ret)
{
	*ret = NULL;
	if (s && !(*ret = strdup(s)))
		return -ENOMEM;
	return 0;
}

static void load_unref(struct dcmi_load *l)
{
	pthread_mutex_lock(&l->lock);
	bool last = --l->refs == 0;
	pthread_mutex_unlock(&l->lock);
	if (!last)
		return;
	dcmi_lib_close(l->result.lib); /* abandoned with a library: it stays mapped */
	free(l->explicit_path);
	free(l->ld_library_path);
	free(l->driver_path);
	free(l->host_root);
	pthread_cond_destroy(&l->done_cond);
	pthread_mutex_destroy(&l->lock);
	free(l);
}

static void *load_thread(void *arg)
{
	struct dcmi_load *l = arg;
	/* Only the vendor's constructors and dcmi_init run here. */
	crash_guard_enter(DCMI_CRASH_WHAT);
	const struct dcmi_search search = {
		.explicit_path = l->explicit_path,
		.ld_library_path = l->ld_library_path,
		.driver_path = l->driver_path,
		.host_root = l->host_root,
	};
	struct dcmi_load_result result = { 0 };
	result.error = dcmi_lib_open(&search, &result.lib, result.why, sizeof(result.why));
	pthread_mutex_lock(&l->lock);
	l->result = result;
	l->done = true;
	pthread_cond_broadcast(&l->done_cond);
	pthread_mutex_unlock(&l->lock);
	load_unref(l);
	return NULL;
}

int dcmi_load_start(const struct dcmi_search *search, struct dcmi_load **ret_load)
{
	struct dcmi_load *l = calloc(1, sizeof(*l));
	if (!l)
		return -ENOMEM;
	pthread_mutex_init(&l->lock, NULL);
	cond_init_monotonic(&l->done_cond);
	l->refs = 2;
	int r = copy(search->explicit_path, &l->explicit_path);
	if (r == 0)
		r = copy(search->ld_library_path, &l->ld_library_path);
	if (r == 0)
		r = copy(search->driver_path, &l->driver_path);
	if (r == 0)
		r = copy(search->host_root, &l->host_root);
	/* Detached: an abandoned load is never joined. */
	pthread_t thread;
	if (r == 0)
		r = thread_start_vendor(&thread, load_thread, l);
	if (r == 0)
		pthread_detach(thread);
	if (r < 0) {
		l->refs = 1;
		load_unref(l);
		return r;
	}
	*ret_load = l;
	return 0;
}

int dcmi_load_take(struct dcmi_load *l, int64_t timeout_ms, struct dcmi_load_result *ret_result)
{
	struct timespec until = deadline_after_ms(timeout_ms);
	pthread_mutex_lock(&l->lock);
	while (!l->done && timeout_ms > 0 && pthread_cond_timedwait(&l->done_cond, &l->lock, &until) != ETIMEDOUT) {
	}
	bool done = l->done;
	if (done) {
		*ret_result = l->result;
		l->result.lib = NULL; /* the caller's now */
	}
	pthread_mutex_unlock(&l->lock);
	if (!done)
		return -EINPROGRESS;
	load_unref(l);
	return 0;
}

void dcmi_load_abandon(struct dcmi_load *l)
{
	if (l)
		load_unref(l);
}
