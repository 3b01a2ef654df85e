/* SPDX-License-Identifier: Apache-2.0 */
/* The publisher's reports as a test collects them; see publish_reports.h. */
#include "support/publish_reports.h"

#include <errno.h>
#include <string.h>
#include <time.h>

#include "base/wait.h"

void publish_reports_init(struct publish_reports *reports)
{
	memset(reports, 0, sizeof(*reports));
	pthread_mutex_init(&reports->lock, NULL);
	cond_init_monotonic(&reports->cond);
}

void publish_reports_fini(struct publish_reports *reports)
{
	pthread_cond_destroy(&reports->cond);
	pthread_mutex_destroy(&reports->lock);
}

void publish_reports_add(void *ctx, const struct kube_publish_report *report)
{
	struct publish_reports *reports = ctx;
	pthread_mutex_lock(&reports->lock);
	if (reports->n < PUBLISH_REPORTS_MAX)
		reports->all[reports->n++] = *report;
	pthread_cond_broadcast(&reports->cond);
	pthread_mutex_unlock(&reports->lock);
}

size_t publish_reports_count(struct publish_reports *reports)
{
	pthread_mutex_lock(&reports->lock);
	size_t n = reports->n;
	pthread_mutex_unlock(&reports->lock);
	return n;
}

int publish_reports_wait(struct publish_reports *reports, size_t after, enum kube_publish_event event, int error,
			 int64_t wait_ms, size_t *ret_index)
{
	struct timespec deadline = deadline_after_ms(wait_ms);
	int r = -ETIMEDOUT;
	pthread_mutex_lock(&reports->lock);
	for (;;) {
		for (size_t i = after; i < reports->n && r < 0; i++) {
			const struct kube_publish_report *report = &reports->all[i];
			if (report->event == event && (!error || report->error == error)) {
				*ret_index = i;
				r = 0;
			}
		}
		if (r == 0 || pthread_cond_timedwait(&reports->cond, &reports->lock, &deadline) == ETIMEDOUT)
			break;
	}
	pthread_mutex_unlock(&reports->lock);
	return r;
}
