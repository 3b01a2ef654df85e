/* SPDX-License-Identifier: Apache-2.0 */
/* The daemon's event loop: epoll over file descriptors, timers (timerfd) and
 * asyncs (eventfd). Everything it calls back runs on the loop's thread, which
 * owns the daemon's state; other threads reach it only through asyncs. */
#pragma once

#include <stdbool.h>
#include <stdint.h>

struct loop;
struct loop_timer;
struct loop_async;

typedef void (*loop_fd_fn)(void *ctx, uint32_t events);
typedef void (*loop_fn)(void *ctx);

int loop_new(struct loop **ret_loop);
void loop_free(struct loop *loop);

/* Watches fd for epoll events until loop_remove_fd. */
int loop_add_fd(struct loop *loop, int fd, uint32_t events, loop_fd_fn fn, void *ctx);
void loop_remove_fd(struct loop *loop, int fd);

/* Runs until loop_quit; returns 0 or a negative errno if epoll fails. */
int loop_run(struct loop *loop);
void loop_quit(struct loop *loop);

/* A one-shot or periodic timer on CLOCK_MONOTONIC. */
int loop_timer_new(struct loop *loop, loop_fn fn, void *ctx, struct loop_timer **ret_timer);
/* Fires after delay_ms (at once when <= 0), then every interval_ms if it is
 * > 0. Re-arming replaces. Cannot fail. */
void loop_timer_arm(struct loop_timer *timer, int64_t delay_ms, int64_t interval_ms);
void loop_timer_disarm(struct loop_timer *timer);
void loop_timer_free(struct loop_timer *timer);

/* Wakes the loop from any thread, even from a signal handler or a vendor
 * callback: fn runs once on the loop thread however many sends came first. */
int loop_async_new(struct loop *loop, loop_fn fn, void *ctx, struct loop_async **ret_async);
void loop_async_send(struct loop_async *async);
void loop_async_free(struct loop_async *async);
