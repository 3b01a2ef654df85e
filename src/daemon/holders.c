/* SPDX-License-Identifier: Apache-2.0 */
#include "daemon/holders.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/log.h"
#include "base/parse.h"
#include "base/strbuf.h"
#include "telemetry/podres.h"

/* At most one pod resources List this often (the kubelet allows 100/s,
 * burst 10), and the wait after an Allocate for the kubelet to record it. */
#define POD_REFRESH_MIN_MS 1000
#define POD_SETTLE_MS 500
#define POD_LIST_TIMEOUT_MS 10000

struct holders {
	struct loop *loop;
	char pod_socket[SOCKET_PATH_MAX];
	struct metrics *metrics;
	size_t (*resources)(void *ctx, const char *names[], size_t max);
	void *resources_ctx;

	struct loop_timer *pods_timer;
	struct loop_async *pods_async;
	struct podres *podres;
	atomic_bool pods_wanted;     /* a scrape asks for a refresh */
	atomic_bool pods_after_alloc; /* an Allocate asks for one after POD_SETTLE_MS */
	atomic_int_least64_t last_alloc_ms; /* when the latest Allocate answered */
	atomic_bool pods_running;
	int64_t pods_started_ms;
	pthread_mutex_t pods_lock; /* the problem logged last, and the latest list */
	char pods_problem[256]; /* the last problem logged, empty after a success */
	struct pod_map *pods;   /* the latest list, under pods_lock; NULL before one */
	int64_t pods_listing_ms; /* under pods_lock: when the List under way began */
	int64_t pods_list_ms;    /* under pods_lock: when the List that gave pods began */
};

/* Says a problem of the pod map once, and that it is over. Any thread. */
static void pods_report(struct holders *o, const char *problem)
{
	pthread_mutex_lock(&o->pods_lock);
	if (strcmp(problem, o->pods_problem) != 0) {
		if (problem[0])
			log_event(LOG_LEVEL_WARN, LOG_EVENT_POD_RESOURCES_UNAVAILABLE,
				  &(struct log_fields){ .more = { LOG_STR("reason", problem) } },
				  "pod resources: %s; metrics are served without pod labels", problem);
		else
			log_info("pod resources: listing %s works; metrics carry pod labels", o->pod_socket);
		snprintf(o->pods_problem, sizeof(o->pods_problem), "%s", problem);
	}
	pthread_mutex_unlock(&o->pods_lock);
}

/* The List's end, on the client's thread. */
static void on_pods_listed(void *ctx, int r, grpc_status_code status, const char *details, struct pod_map *map)
{
	struct holders *o = ctx;
	char problem[256] = "";
	if (r == -ECANCELED)
		return;
	if (r == -EIO)
		snprintf(problem, sizeof(problem), "List on %s failed: status %d: %s", o->pod_socket, status, details);
	else if (r < 0)
		snprintf(problem, sizeof(problem), "List on %s: %s", o->pod_socket, strerror(-r));
	if (r == 0 || r == -EIO) {
		metrics_publish_pods(o->metrics, map);
		pthread_mutex_lock(&o->pods_lock);
		pod_map_unref(o->pods);
		o->pods = pod_map_ref(map);
		o->pods_list_ms = o->pods_listing_ms;
		pthread_mutex_unlock(&o->pods_lock);
	}
	if (map)
		log_event(LOG_LEVEL_DEBUG, LOG_EVENT_POD_RESOURCES_READ,
			  &(struct log_fields){ .more = { LOG_NUM("containers", map->count) } },
			  "pod resources: %zu containers hold chips", map->count);
	pod_map_unref(map);
	pods_report(o, problem);
	atomic_store(&o->pods_running, false);
	/* A scrape that came meanwhile asked for a newer list. */
	if (atomic_load(&o->pods_wanted))
		loop_async_send(o->pods_async);
}

/* Asks the loop for a refresh after a scrape: at once, at most every
 * POD_REFRESH_MIN_MS (after an Allocate: see holders_allocated). */
static void kick_pods(struct holders *o)
{
	if (!o->podres)
		return;
	atomic_store(&o->pods_wanted, true);
	loop_async_send(o->pods_async);
}

static void start_pods_list(struct holders *o)
{
	if (atomic_load(&o->pods_running))
		return;
	int64_t now = now_ms();
	if (now - o->pods_started_ms < POD_REFRESH_MIN_MS) {
		loop_timer_arm(o->pods_timer, o->pods_started_ms + POD_REFRESH_MIN_MS - now, 0);
		return;
	}
	atomic_store(&o->pods_wanted, false);
	o->pods_started_ms = now;
	pthread_mutex_lock(&o->pods_lock);
	o->pods_listing_ms = now;
	pthread_mutex_unlock(&o->pods_lock);
	atomic_store(&o->pods_running, true);
	const char *names[METRICS_MAX_RESOURCES];
	size_t n = o->resources(o->resources_ctx, names, METRICS_MAX_RESOURCES);
	int r = podres_list_start(o->podres, names, n, POD_LIST_TIMEOUT_MS, on_pods_listed, o);
	if (r < 0) {
		atomic_store(&o->pods_running, false);
		char problem[256];
		if (r == -ENOENT)
			snprintf(problem, sizeof(problem), "%s does not exist", o->pod_socket);
		else
			snprintf(problem, sizeof(problem), "cannot list on %s: %s", o->pod_socket, strerror(-r));
		metrics_publish_pods(o->metrics, NULL);
		pods_report(o, problem);
	}
}

/* Allocates asked for a list: true while the last of them is younger than
 * POD_SETTLE_MS (the timer is armed for the rest), false once it is due. */
static bool settling(struct holders *o)
{
	if (!atomic_exchange(&o->pods_after_alloc, false))
		return false;
	/* The kubelet records an allocation once Allocate has answered. */
	int64_t since = now_ms() - atomic_load(&o->last_alloc_ms);
	if (since < POD_SETTLE_MS) {
		atomic_store(&o->pods_after_alloc, true);
		loop_timer_arm(o->pods_timer, POD_SETTLE_MS - since, 0);
		return true;
	}
	atomic_store(&o->pods_wanted, true);
	return false;
}

static void on_pods_async(void *ctx)
{
	struct holders *o = ctx;
	if (!settling(o) && atomic_load(&o->pods_wanted))
		start_pods_list(o);
}

static void on_pods_timer(void *ctx)
{
	struct holders *o = ctx;
	if (!settling(o))
		start_pods_list(o);
}

/* --- lifecycle ------------------------------------------------------------------ */

int holders_new(const struct holders_options *opt, struct holders **ret)
{
	if (!opt->socket[0]) {
		*ret = NULL;
		return 0;
	}
	struct holders *o = calloc(1, sizeof(*o));
	if (!o)
		return -ENOMEM;
	pthread_mutex_init(&o->pods_lock, NULL);
	o->loop = opt->loop;
	o->metrics = opt->metrics;
	o->resources = opt->resources;
	o->resources_ctx = opt->resources_ctx;
	int r;
	if ((r = str_copy(o->pod_socket, sizeof(o->pod_socket), opt->socket)) < 0 ||
	    (r = loop_timer_new(o->loop, on_pods_timer, o, &o->pods_timer)) < 0 ||
	    (r = loop_async_new(o->loop, on_pods_async, o, &o->pods_async)) < 0 ||
	    /* Before any thread may ask for a list (an Allocate, a scrape). */
	    (r = podres_new(o->pod_socket, &o->podres)) < 0) {
		holders_free(o);
		return r;
	}
	*ret = o;
	return 0;
}

void holders_free(struct holders *o)
{
	if (!o)
		return;
	podres_free(o->podres);
	loop_async_free(o->pods_async);
	loop_timer_free(o->pods_timer);
	pod_map_unref(o->pods);
	pthread_mutex_destroy(&o->pods_lock);
	free(o);
}

/* --- the readers ------------------------------------------------------------------ */

void holders_want(struct holders *o)
{
	if (o)
		kick_pods(o);
}

void holders_allocated(struct holders *o)
{
	if (!o)
		return;
	/* One wakeup of the loop per burst of Allocates, not one each: the
	 * loop lists the pods POD_SETTLE_MS after the last of them. */
	atomic_store(&o->last_alloc_ms, now_ms());
	if (!atomic_exchange(&o->pods_after_alloc, true))
		loop_async_send(o->pods_async);
}
int holders_of(struct holders *o, const char *chip_id, char *buf, size_t size)
{
	if (!o)
		return -ENOENT;
	struct strbuf sb;
	strbuf_init(&sb, buf, size, ",...");
	size_t n = 0;
	pthread_mutex_lock(&o->pods_lock);
	for (size_t i = 0; o->pods && i < o->pods->count; i++) {
		const struct pod_holder *h = &o->pods->holders[i];
		if (strcmp(h->chip_id, chip_id) == 0 &&
		    strbuf_printf(&sb, "%s%s/%s/%s", n++ ? ", " : "", h->namespace_, h->pod, h->container) < 0)
			break;
	}
	pthread_mutex_unlock(&o->pods_lock);
	return n ? 0 : -ENOENT;
}

int holders_since(struct holders *o, const char *chip_id, int64_t since_ms, char *buf, size_t size)
{
	if (!o || !o->podres) {
		snprintf(buf, size, "--pod-resources-socket is empty");
		return -ENODATA;
	}
	pthread_mutex_lock(&o->pods_lock);
	bool failed = o->pods_problem[0] != '\0';
	if (failed)
		snprintf(buf, size, "%s", o->pods_problem); /* cut to fit: it is for a log line */
	bool fresh = o->pods && o->pods_list_ms >= since_ms;
	pthread_mutex_unlock(&o->pods_lock);
	if (failed || !fresh) {
		kick_pods(o);
		return failed ? -ENODATA : -EAGAIN;
	}
	if (holders_of(o, chip_id, buf, size) < 0)
		return 0;
	/* Whoever asks will ask again: a newer list may free the chip. */
	kick_pods(o);
	return 1;
}
