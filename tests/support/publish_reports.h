/* SPDX-License-Identifier: Apache-2.0 */
/* The ResourceSlice publisher's reports (kube/publisher.h) as a test
 * collects them, for the publisher's unit test and its test against the
 * real API server: kept in order, up to PUBLISH_REPORTS_MAX, and awaited
 * with a deadline. The publisher reports on its own thread. */
#pragma once

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "kube/publisher.h"

#define PUBLISH_REPORTS_MAX 64

struct publish_reports {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	struct kube_publish_report all[PUBLISH_REPORTS_MAX];
	size_t n;
};

/* Empty; publish_reports_fini undoes it. */
void publish_reports_init(struct publish_reports *reports);
void publish_reports_fini(struct publish_reports *reports);

/* A kube_publish_report_fn: ctx is the struct publish_reports. Reports
 * beyond PUBLISH_REPORTS_MAX are dropped. */
void publish_reports_add(void *ctx, const struct kube_publish_report *report);

/* How many there are now. */
size_t publish_reports_count(struct publish_reports *reports);

/* The index of the first report from index after on of kind event (and
 * with error, when error is not 0), waiting up to wait_ms for it.
 * Returns 0 or -ETIMEDOUT. */
int publish_reports_wait(struct publish_reports *reports, size_t after, enum kube_publish_event event, int error,
			 int64_t wait_ms, size_t *ret_index);
