/* SPDX-License-Identifier: Apache-2.0 */
/* Which container holds which chip; see pods.h. */
#include "pods.h"

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <string.h>
#include <time.h>

#include "base/wait.h"
#include "telemetry/podres.h"

#define PODS_DEFAULT_TIMEOUT_MS 10000

struct wait_list {
	pthread_mutex_t lock;
	pthread_cond_t done_cond;
	bool done;
	int r;
	grpc_status_code status;
	char details[256];
	struct pod_map *map;
};

/* On the client's thread: hand the answer over and wake main. */
static void on_listed(void *ctx, int r, grpc_status_code status, const char *details, struct pod_map *map)
{
	struct wait_list *w = ctx;
	pthread_mutex_lock(&w->lock);
	w->done = true;
	w->r = r;
	w->status = status;
	snprintf(w->details, sizeof(w->details), "%s", details ? details : "");
	w->map = map;
	pthread_cond_signal(&w->done_cond);
	pthread_mutex_unlock(&w->lock);
}

static int add_unreachable(struct report *report, const char *socket, const char *why)
{
	return report_add(report, VERDICT_FAIL, "pod-resources",
			  "run on the node (or in a pod mounting /var/lib/kubelet/pod-resources); the kubelet serves "
			  "the pod resources API since Kubernetes 1.15, GA in 1.28",
			  "cannot list the kubelet's pod resources at %s: %s", socket, why);
}

int pods_run(const struct doctor_options *o, struct report *report)
{
	struct wait_list w = { .lock = PTHREAD_MUTEX_INITIALIZER };
	struct podres *client = NULL;
	const char *names[] = { o->resource_name };
	int64_t timeout_ms = o->timeout_ms > 0 ? o->timeout_ms : PODS_DEFAULT_TIMEOUT_MS;
	char why[320];
	int r;

	cond_init_monotonic(&w.done_cond);

	r = podres_new(o->pod_resources_socket, &client);
	if (r < 0) {
		r = r == -ENOMEM ? r : add_unreachable(report, o->pod_resources_socket, strerror(-r));
		goto out;
	}
	r = podres_list_start(client, names, 1, timeout_ms, on_listed, &w);
	if (r < 0) {
		r = r == -ENOMEM ? r : add_unreachable(report, o->pod_resources_socket, strerror(-r));
		goto out;
	}
	/* The List carries its own deadline; a second past it bounds a client
	 * that never answers at all. */
	struct timespec until = deadline_after_ms(timeout_ms + 1000);
	pthread_mutex_lock(&w.lock);
	while (!w.done && pthread_cond_timedwait(&w.done_cond, &w.lock, &until) != ETIMEDOUT) {
	}
	bool done = w.done;
	pthread_mutex_unlock(&w.lock);
	if (!done) {
		r = add_unreachable(report, o->pod_resources_socket, "no answer in time");
		goto out;
	}
	if (w.r < 0) {
		if (w.r == -EIO)
			snprintf(why, sizeof(why), "gRPC status %d: %s", (int)w.status, w.details);
		else
			snprintf(why, sizeof(why), "%s", strerror(-w.r));
		r = add_unreachable(report, o->pod_resources_socket, why);
		goto out;
	}
	r = 0;
	if (w.map->count == 0)
		r = report_add(report, VERDICT_OK, "pods", NULL, "no container holds %s", o->resource_name);
	for (size_t i = 0; r == 0 && i < w.map->count; i++) {
		const struct pod_holder *h = &w.map->holders[i];
		r = report_add(report, VERDICT_OK, h->chip_id, NULL, "%s/%s/%s", h->namespace_, h->pod, h->container);
	}
out:
	/* Frees the client first: its thread may still run the callback. */
	podres_free(client);
	pod_map_unref(w.map);
	pthread_cond_destroy(&w.done_cond);
	return r < 0 ? r : 0;
}
