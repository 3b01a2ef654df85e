/* SPDX-License-Identifier: Apache-2.0 */
/* Waiting on a condition variable with a deadline that wall-clock steps
 * cannot move: the condition variable reads CLOCK_MONOTONIC, and deadlines
 * are CLOCK_MONOTONIC times. */
#pragma once

#include <pthread.h>
#include <stdint.h>
#include <time.h>

/* pthread_cond_init with the monotonic clock. */
void cond_init_monotonic(pthread_cond_t *cond);

/* The CLOCK_MONOTONIC time ms milliseconds from now, for
 * pthread_cond_timedwait on a cond_init_monotonic condition variable. */
struct timespec deadline_after_ms(int64_t ms);
