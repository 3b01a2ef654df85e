/* SPDX-License-Identifier: Apache-2.0 */
#include "loop/loop.h"

#include <assert.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/timerfd.h>
#include <unistd.h>

/* Bounds the fds the loop watches: the daemon's own (signals, inotify,
 * timers, wakeups) and five per resource it serves (plugin/endpoint.h), at
 * most RESOURCES_MAX of them. */
#define LOOP_MAX_WATCHES 256
/* Events taken per epoll_wait; more wait for the next round. */
#define LOOP_EVENTS_PER_WAIT 64

struct watch {
	int fd;
	loop_fd_fn fn;
	void *ctx;
};

struct loop {
	int epfd;
	bool quit;
	struct watch watches[LOOP_MAX_WATCHES];
};

struct loop_timer {
	struct loop *loop;
	int fd;
	loop_fn fn;
	void *ctx;
};

struct loop_async {
	struct loop *loop;
	int fd;
	loop_fn fn;
	void *ctx;
};

int loop_new(struct loop **ret_loop)
{
	struct loop *loop = calloc(1, sizeof(*loop));
	if (!loop)
		return -ENOMEM;
	loop->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (loop->epfd < 0) {
		int r = -errno;
		free(loop);
		return r;
	}
	for (size_t i = 0; i < LOOP_MAX_WATCHES; i++)
		loop->watches[i].fd = -1;
	*ret_loop = loop;
	return 0;
}

void loop_free(struct loop *loop)
{
	if (!loop)
		return;
	close(loop->epfd);
	free(loop);
}

int loop_add_fd(struct loop *loop, int fd, uint32_t events, loop_fd_fn fn, void *ctx)
{
	struct watch *w = NULL;
	for (size_t i = 0; i < LOOP_MAX_WATCHES && !w; i++)
		if (loop->watches[i].fd < 0)
			w = &loop->watches[i];
	if (!w)
		return -ENOSPC;

	struct epoll_event ev = { .events = events, .data.ptr = w };
	if (epoll_ctl(loop->epfd, EPOLL_CTL_ADD, fd, &ev) < 0)
		return -errno;
	w->fd = fd;
	w->fn = fn;
	w->ctx = ctx;
	return 0;
}

void loop_remove_fd(struct loop *loop, int fd)
{
	for (size_t i = 0; i < LOOP_MAX_WATCHES; i++) {
		if (loop->watches[i].fd != fd)
			continue;
		epoll_ctl(loop->epfd, EPOLL_CTL_DEL, fd, NULL);
		loop->watches[i].fd = -1;
		loop->watches[i].fn = NULL;
	}
}

int loop_run(struct loop *loop)
{
	loop->quit = false;
	while (!loop->quit) {
		struct epoll_event events[LOOP_EVENTS_PER_WAIT];
		int n = epoll_wait(loop->epfd, events, LOOP_EVENTS_PER_WAIT, -1);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		for (int i = 0; i < n && !loop->quit; i++) {
			struct watch *w = events[i].data.ptr;
			/* A callback earlier in this batch may have removed the watch. */
			if (w->fd >= 0 && w->fn)
				w->fn(w->ctx, events[i].events);
		}
	}
	return 0;
}

void loop_quit(struct loop *loop)
{
	loop->quit = true;
}

static void timer_ready(void *ctx, uint32_t events)
{
	(void)events;
	struct loop_timer *t = ctx;
	uint64_t expirations;
	if (read(t->fd, &expirations, sizeof(expirations)) != (ssize_t)sizeof(expirations))
		return;
	t->fn(t->ctx);
}

int loop_timer_new(struct loop *loop, loop_fn fn, void *ctx, struct loop_timer **ret_timer)
{
	struct loop_timer *t = calloc(1, sizeof(*t));
	if (!t)
		return -ENOMEM;
	t->loop = loop;
	t->fn = fn;
	t->ctx = ctx;
	t->fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	int r = t->fd < 0 ? -errno : loop_add_fd(loop, t->fd, EPOLLIN, timer_ready, t);
	if (r < 0) {
		if (t->fd >= 0)
			close(t->fd);
		free(t);
		return r;
	}
	*ret_timer = t;
	return 0;
}

static struct timespec ms_to_timespec(int64_t ms)
{
	return (struct timespec){ .tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000 };
}

void loop_timer_arm(struct loop_timer *t, int64_t delay_ms, int64_t interval_ms)
{
	struct itimerspec spec = {
		/* A zero it_value would disarm: fire as soon as possible instead. */
		.it_value = delay_ms > 0 ? ms_to_timespec(delay_ms) : (struct timespec){ .tv_nsec = 1 },
		.it_interval = interval_ms > 0 ? ms_to_timespec(interval_ms) : (struct timespec){ 0 },
	};
	/* With a valid timerfd and these normalised values timerfd_settime
	 * cannot fail (EBADF, EFAULT and EINVAL are our own bugs). */
	int r = timerfd_settime(t->fd, 0, &spec, NULL);
	assert(r == 0);
	(void)r;
}

void loop_timer_disarm(struct loop_timer *t)
{
	struct itimerspec off = { 0 };
	timerfd_settime(t->fd, 0, &off, NULL);
}

void loop_timer_free(struct loop_timer *t)
{
	if (!t)
		return;
	loop_remove_fd(t->loop, t->fd);
	close(t->fd);
	free(t);
}

static void async_ready(void *ctx, uint32_t events)
{
	(void)events;
	struct loop_async *a = ctx;
	uint64_t count;
	if (read(a->fd, &count, sizeof(count)) != (ssize_t)sizeof(count))
		return;
	a->fn(a->ctx);
}

int loop_async_new(struct loop *loop, loop_fn fn, void *ctx, struct loop_async **ret_async)
{
	struct loop_async *a = calloc(1, sizeof(*a));
	if (!a)
		return -ENOMEM;
	a->loop = loop;
	a->fn = fn;
	a->ctx = ctx;
	a->fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	int r = a->fd < 0 ? -errno : loop_add_fd(loop, a->fd, EPOLLIN, async_ready, a);
	if (r < 0) {
		if (a->fd >= 0)
			close(a->fd);
		free(a);
		return r;
	}
	*ret_async = a;
	return 0;
}

void loop_async_send(struct loop_async *a)
{
	/* write() on an eventfd is async-signal-safe; a full counter still wakes. */
	uint64_t one = 1;
	ssize_t n = write(a->fd, &one, sizeof(one));
	(void)n;
}

void loop_async_free(struct loop_async *a)
{
	if (!a)
		return;
	loop_remove_fd(a->loop, a->fd);
	close(a->fd);
	free(a);
}
