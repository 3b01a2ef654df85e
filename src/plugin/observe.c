/* SPDX-License-Identifier: Apache-2.0 */
#include "plugin/observe.h"

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/k8s_names.h"
#include "base/log.h"
#include "base/parse.h"
#include "base/strbuf.h"
#include "fault/policy.h"
#include "http/server.h"
#include "npu/family.h"
#include "telemetry/metrics.h"
#include "telemetry/nfd.h"
#include "telemetry/podres.h"
#include "telemetry/telemetry.h"

/* The loop beats this often; OBSERVE_LOOP_STUCK_MS is in plugin/observe.h. */
#define HEARTBEAT_MS 1000
/* At most one pod resources List this often (the kubelet allows 100/s,
 * burst 10), and the wait after an Allocate for the kubelet to record it. */
#define POD_REFRESH_MIN_MS 1000
#define POD_SETTLE_MS 500
#define POD_LIST_TIMEOUT_MS 10000

struct observe_resource {
	struct observe *observe;
	struct metrics_resource *metrics;
	char name[RESOURCE_NAME_MAX];
	/* Registration state for /healthz, under observe->lock. */
	bool serving;
	bool registered;
	bool stream_open;
	unsigned failures;
	char why[256];
};

struct observe {
	struct loop *loop;
	char metrics_addr[HTTP_ADDR_MAX];
	int64_t telemetry_interval_ms;
	char pod_socket[SOCKET_PATH_MAX];
	char nfd_file[PATH_MAX];
	char kubelet_socket[SOCKET_PATH_MAX];
	unsigned replicas;

	struct metrics *metrics;
	struct observe_resource resources[METRICS_MAX_RESOURCES];
	size_t n_resources;
	struct inventory *inventory;
	struct http_server *http;
	int http_error; /* the last bind error logged, 0 after a success */

	struct loop_timer *telemetry_timer;
	struct loop_timer *heartbeat_timer;
	struct loop_timer *pods_timer;
	struct loop_async *pods_async;
	struct telemetry_snapshot *telemetry; /* the loop's own reference */
	struct npu_snapshot *devices;         /* the node's latest snapshot, for the features file */

	pthread_mutex_t lock; /* resources' registration state, and the DRA driver's */
	atomic_int_fast64_t heartbeat_ms;
	/* The DRA front end's registration (observe_dra); dra_driver empty when off. */
	char dra_driver[256];
	bool dra_notified, dra_registered;
	char dra_error[256];

	/* The pod map. */
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

	/* The features file. */
	char *nfd_written; /* the text last written, NULL when none */
	int nfd_error;     /* the last write error logged */
};

/* --- /metrics and /healthz (the HTTP thread) ------------------------------- */

static void kick_pods(struct observe *o);

static void on_metrics(void *ctx, struct http_reply *reply)
{
	struct observe *o = ctx;
	char *text;
	size_t len;
	kick_pods(o);
	int r = metrics_render(o->metrics, &text, &len);
	if (r < 0) {
		reply->status = 500;
		reply->content_type = "text/plain; charset=utf-8";
		char msg[128];
		int n = snprintf(msg, sizeof(msg), "cannot render the metrics: %s\n", strerror(-r));
		reply->body = strdup(msg);
		reply->len = reply->body && n > 0 ? (size_t)n : 0;
		return;
	}
	reply->status = 200;
	reply->content_type = METRICS_CONTENT_TYPE;
	reply->body = text;
	reply->len = len;
}

static void on_healthz(void *ctx, struct http_reply *reply)
{
	struct observe *o = ctx;
	char body[4096];
	struct strbuf sb;
	strbuf_init(&sb, body, sizeof(body), "...\n");
	bool ok = true;

	int64_t since = now_ms() - atomic_load(&o->heartbeat_ms);
	if (since > OBSERVE_LOOP_STUCK_MS) {
		ok = false;
		strbuf_printf(&sb, "the event loop is stuck: no heartbeat for %llds\n", (long long)(since / 1000));
	}
	bool kubelet_there = path_exists(o->kubelet_socket);
	pthread_mutex_lock(&o->lock);
	size_t serving = 0;
	for (size_t i = 0; i < o->n_resources; i++) {
		const struct observe_resource *r = &o->resources[i];
		if (!r->serving)
			continue;
		serving++;
		if (r->registered && r->stream_open) {
			strbuf_printf(&sb, "%s: registered, the kubelet's ListAndWatch stream is open\n", r->name);
		} else if (!kubelet_there) {
			strbuf_printf(&sb, "%s: waiting for the kubelet (%s does not exist)\n", r->name, o->kubelet_socket);
		} else if (r->failures) {
			ok = false;
			strbuf_printf(&sb, "%s: registration failing (%u attempts): %s\n", r->name, r->failures, r->why);
		} else {
			ok = false;
			strbuf_printf(&sb, "%s: %s\n", r->name,
				      r->registered ? "registered, waiting for the kubelet's ListAndWatch stream"
						    : "registering with the kubelet");
		}
	}
	if (o->dra_driver[0]) {
		/* Before the first notification the kubelet's plugin watcher has
		 * not found the socket yet: a wait, as for the device plugin. */
		if (o->dra_registered) {
			strbuf_printf(&sb, "%s (DRA): registered with the kubelet\n", o->dra_driver);
		} else if (!o->dra_notified) {
			strbuf_printf(&sb, "%s (DRA): waiting for the kubelet's plugin watcher\n", o->dra_driver);
		} else {
			ok = false;
			strbuf_printf(&sb, "%s (DRA): the kubelet refused it: %s\n", o->dra_driver, o->dra_error);
		}
	}
	pthread_mutex_unlock(&o->lock);
	if (!serving)
		strbuf_printf(&sb, "no resource to serve yet\n");

	size_t len = strlen(body);
	char *out = malloc(len + 16);
	if (!out)
		return; /* the 500 the server starts with */
	int head = snprintf(out, 16, "%s\n", ok ? "ok" : "unhealthy");
	memcpy(out + head, body, len);
	reply->status = ok ? 200 : 503;
	reply->content_type = "text/plain; charset=utf-8";
	reply->body = out;
	reply->len = (size_t)head + len;
}

static const struct http_route routes[] = {
	{ "/metrics", on_metrics },
	{ "/healthz", on_healthz },
};

static void http_try_start(struct observe *o)
{
	if (o->http || !o->metrics_addr[0])
		return;
	int r = http_server_start(o->metrics_addr, routes, sizeof(routes) / sizeof(routes[0]), o, &o->http);
	if (r == 0) {
		log_event(LOG_LEVEL_INFO, LOG_EVENT_METRICS_SERVING,
			  &(struct log_fields){ .more = { LOG_STR("addr", o->metrics_addr),
							  LOG_NUM("port", http_server_port(o->http)) } },
			  "serving /metrics and /healthz on %s (port %u)", o->metrics_addr, http_server_port(o->http));
		o->http_error = 0;
	} else if (r != o->http_error) {
		log_error("cannot serve metrics on %s: %s; retrying every %llds", o->metrics_addr, strerror(-r),
			  (long long)(o->telemetry_interval_ms / 1000));
		o->http_error = r;
	}
}

/* --- the pod map ------------------------------------------------------------ */

/* Says a problem of the pod map once, and that it is over. Any thread. */
static void pods_report(struct observe *o, const char *problem)
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
	struct observe *o = ctx;
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
 * POD_REFRESH_MIN_MS (after an Allocate: see observe_allocate). */
static void kick_pods(struct observe *o)
{
	if (!o->podres)
		return;
	atomic_store(&o->pods_wanted, true);
	loop_async_send(o->pods_async);
}

static void start_pods_list(struct observe *o)
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
	for (size_t i = 0; i < o->n_resources; i++)
		names[i] = o->resources[i].name;
	int r = podres_list_start(o->podres, names, o->n_resources, POD_LIST_TIMEOUT_MS, on_pods_listed, o);
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
static bool settling(struct observe *o)
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
	struct observe *o = ctx;
	if (!settling(o) && atomic_load(&o->pods_wanted))
		start_pods_list(o);
}

static void on_pods_timer(void *ctx)
{
	struct observe *o = ctx;
	if (!settling(o))
		start_pods_list(o);
}

/* --- the features file --------------------------------------------------------- */

static const char *topology_of(enum npu_family family)
{
	switch (family) {
	case NPU_FAMILY_910:
		return "hccs-ring";
	case NPU_FAMILY_910B:
		return "hccs-mesh";
	case NPU_FAMILY_A3:
		return "die-pairs";
	case NPU_FAMILY_310:
	case NPU_FAMILY_310P:
	case NPU_FAMILY_310B:
		return "pcie";
	default:
		return NULL;
	}
}

static void nfd_sync(struct observe *o)
{
	if (!o->nfd_file[0] || !o->devices || !o->inventory)
		return;
	const struct npu_snapshot *s = o->devices;
	struct nfd_info info = { .replicas = o->replicas };
	const struct npu_chip *first = NULL;
	bool same_name = true, same_family = true;
	for (size_t i = 0; i < s->count; i++) {
		const struct npu_device *dev = &s->devices[i];
		if (dev->kind != NPU_DEVICE_CHIP)
			continue;
		info.count++;
		info.healthy += dev->healthy;
		info.subhealth += dev->policy_judged && dev->policy_level == FAULT_LEVEL_SUB_HEALTH;
		if (!first)
			first = &dev->chip;
		same_name &= strcmp(dev->chip.name, first->name) == 0;
		same_family &= dev->chip.family == first->family;
	}
	if (first && same_name)
		info.product = first->name;
	if (first && same_family && first->family != NPU_FAMILY_UNKNOWN) {
		info.family = npu_family_name(first->family);
		info.topology = topology_of(first->family);
	}
	/* Per chip: the smallest, so that a selector never promises too much. */
	for (size_t i = 0; i < s->count; i++) {
		if (s->devices[i].kind != NPU_DEVICE_CHIP)
			continue;
		uint32_t aicore = s->devices[i].chip.aicore_count;
		if (aicore && (!info.aicore || aicore < info.aicore))
			info.aicore = aicore;
		const struct telemetry_reading *t = telemetry_snapshot_find(o->telemetry, s->devices[i].id);
		uint64_t mib = t && t->has_hbm ? t->hbm_total_bytes / (1024 * 1024) : 0;
		if (mib && (!info.memory_mib || mib < info.memory_mib))
			info.memory_mib = mib;
	}
	info.driver = inventory_status(o->inventory)->driver_version;

	char text[4096];
	if (info.count == 0) {
		/* No chips: no NPU labels at all. */
		int r = nfd_remove(o->nfd_file);
		if (r == 0 && o->nfd_written)
			log_info("removed the NFD features file %s: no chips", o->nfd_file);
		free(o->nfd_written);
		o->nfd_written = NULL;
		return;
	}
	if (nfd_render(&info, text, sizeof(text)) < 0)
		return; /* cannot happen: a dozen short lines */
	if (o->nfd_written && strcmp(text, o->nfd_written) == 0 && path_exists(o->nfd_file))
		return;
	int r = nfd_write(o->nfd_file, text);
	if (r < 0) {
		if (r != o->nfd_error)
			log_warn("cannot write the NFD features file %s: %s%s; node labels will follow once it can be "
				 "written",
				 o->nfd_file, strerror(-r),
				 r == -ENOENT ? " (is Node Feature Discovery installed, its features.d mounted?)" : "");
		o->nfd_error = r;
		return;
	}
	if (!o->nfd_written || o->nfd_error)
		log_event(LOG_LEVEL_INFO, LOG_EVENT_NFD_WRITTEN,
			  &(struct log_fields){ .more = { LOG_STR("path", o->nfd_file), LOG_NUM("chips", info.count),
							  LOG_NUM("healthy", info.healthy) } },
			  "wrote the NFD features file %s: %zu chips, %zu healthy", o->nfd_file, info.count, info.healthy);
	else
		log_event(LOG_LEVEL_DEBUG, LOG_EVENT_NFD_REWRITTEN,
			  &(struct log_fields){ .more = { LOG_STR("path", o->nfd_file), LOG_NUM("chips", info.count),
							  LOG_NUM("healthy", info.healthy) } },
			  "rewrote the NFD features file %s: %zu chips, %zu healthy", o->nfd_file, info.count,
			  info.healthy);
	o->nfd_error = 0;
	free(o->nfd_written);
	o->nfd_written = strdup(text);
}

void observe_hbm_bytes(const struct observe *o, const struct npu_snapshot *s, uint64_t *out)
{
	for (size_t i = 0; i < s->count; i++) {
		const struct telemetry_reading *t = o->telemetry && s->devices[i].kind == NPU_DEVICE_CHIP
							    ? telemetry_snapshot_find(o->telemetry, s->devices[i].id)
							    : NULL;
		out[i] = t && t->has_hbm ? t->hbm_total_bytes : 0;
	}
}

/* --- the telemetry timer and the heartbeat ------------------------------------- */

static double wall_seconds(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void refresh_telemetry(struct observe *o)
{
	if (!o->inventory)
		return;
	struct npu_snapshot *snap = inventory_snapshot(o->inventory);
	struct telemetry_snapshot *t;
	if (telemetry_read(inventory_dcmi(o->inventory), snap, o->telemetry, wall_seconds(),
			   metrics_dcmi_errors(o->metrics), &t) == 0) {
		metrics_publish_telemetry(o->metrics, t);
		telemetry_snapshot_unref(o->telemetry);
		o->telemetry = t;
		log_event(LOG_LEVEL_DEBUG, LOG_EVENT_TELEMETRY_READ,
			  &(struct log_fields){ .more = { LOG_NUM("chips", t->count) } }, "telemetry: read %zu chips",
			  t->count);
	}
	npu_snapshot_unref(snap);
}

static void on_telemetry_timer(void *ctx)
{
	struct observe *o = ctx;
	refresh_telemetry(o);
	nfd_sync(o);
	http_try_start(o);
}

static void on_heartbeat(void *ctx)
{
	struct observe *o = ctx;
	atomic_store(&o->heartbeat_ms, now_ms());
}

/* --- lifecycle ------------------------------------------------------------------ */

int observe_new(const struct observe_options *opt, struct observe **ret)
{
	struct observe *o = calloc(1, sizeof(*o));
	if (!o)
		return -ENOMEM;
	pthread_mutex_init(&o->lock, NULL);
	pthread_mutex_init(&o->pods_lock, NULL);
	o->loop = opt->loop;
	o->telemetry_interval_ms = opt->telemetry_interval_ms;
	o->replicas = opt->replicas;
	atomic_init(&o->heartbeat_ms, now_ms());
	int r;
	if ((r = str_copy(o->metrics_addr, sizeof(o->metrics_addr), opt->metrics_addr)) < 0 ||
	    (r = str_copy(o->pod_socket, sizeof(o->pod_socket), opt->pod_resources_socket)) < 0 ||
	    (r = str_copy(o->nfd_file, sizeof(o->nfd_file), opt->nfd_file)) < 0 ||
	    (r = str_copy(o->kubelet_socket, sizeof(o->kubelet_socket), opt->kubelet_socket)) < 0 ||
	    (r = metrics_new(ASCEND_VERSION, &o->metrics)) < 0 ||
	    (r = loop_timer_new(o->loop, on_telemetry_timer, o, &o->telemetry_timer)) < 0 ||
	    (r = loop_timer_new(o->loop, on_heartbeat, o, &o->heartbeat_timer)) < 0 ||
	    (r = loop_timer_new(o->loop, on_pods_timer, o, &o->pods_timer)) < 0 ||
	    (r = loop_async_new(o->loop, on_pods_async, o, &o->pods_async)) < 0 ||
	    /* Before any thread may ask for a list (an Allocate, a scrape). */
	    (o->pod_socket[0] && (r = podres_new(o->pod_socket, &o->podres)) < 0)) {
		observe_free(o, true);
		return r;
	}
	*ret = o;
	return 0;
}

int observe_resource(struct observe *o, const char *name, unsigned replicas, struct observe_resource **ret)
{
	if (!o) {
		*ret = NULL;
		return 0;
	}
	struct metrics_resource *m;
	int r = metrics_add_resource(o->metrics, name, replicas, &m);
	if (r < 0)
		return r;
	for (size_t i = 0; i < o->n_resources; i++) {
		if (o->resources[i].metrics == m) {
			*ret = &o->resources[i];
			return 0;
		}
	}
	/* Both tables hold the same names, so the metrics' bound holds here. */
	pthread_mutex_lock(&o->lock);
	struct observe_resource *res = &o->resources[o->n_resources];
	*res = (struct observe_resource){ .observe = o, .metrics = m };
	(void)str_copy(res->name, sizeof(res->name), name); /* fits: the metrics took it */
	o->n_resources++;
	pthread_mutex_unlock(&o->lock);
	*ret = res;
	return 0;
}

void observe_resource_serving(struct observe_resource *res, bool serving)
{
	if (!res)
		return;
	pthread_mutex_lock(&res->observe->lock);
	res->serving = serving;
	res->registered = res->stream_open = false;
	res->failures = 0;
	pthread_mutex_unlock(&res->observe->lock);
}

void observe_start(struct observe *o, struct inventory *inventory)
{
	if (!o)
		return;
	o->inventory = inventory;
	refresh_telemetry(o);
	nfd_sync(o);
	http_try_start(o);
	loop_timer_arm(o->telemetry_timer, o->telemetry_interval_ms, o->telemetry_interval_ms);
	loop_timer_arm(o->heartbeat_timer, HEARTBEAT_MS, HEARTBEAT_MS);
}

void observe_free(struct observe *o, bool remove_files)
{
	if (!o)
		return;
	/* The HTTP thread first: it reads everything below. */
	http_server_stop(o->http);
	podres_free(o->podres);
	if (o->nfd_written && remove_files) {
		int r = nfd_remove(o->nfd_file);
		if (r < 0)
			log_warn("cannot remove the NFD features file %s: %s", o->nfd_file, strerror(-r));
		else
			log_info("removed the NFD features file %s", o->nfd_file);
	}
	free(o->nfd_written);
	loop_async_free(o->pods_async);
	loop_timer_free(o->pods_timer);
	loop_timer_free(o->heartbeat_timer);
	loop_timer_free(o->telemetry_timer);
	telemetry_snapshot_unref(o->telemetry);
	npu_snapshot_unref(o->devices);
	pod_map_unref(o->pods);
	metrics_free(o->metrics);
	pthread_mutex_destroy(&o->pods_lock);
	pthread_mutex_destroy(&o->lock);
	free(o);
}

/* --- the daemon's events ---------------------------------------------------------- */

void observe_node(struct observe *o, struct npu_snapshot *snapshot)
{
	if (!o)
		return;
	metrics_publish_chips(o->metrics, snapshot);
	npu_snapshot_unref(o->devices);
	o->devices = npu_snapshot_ref(snapshot);
	/* New chips get their telemetry at once rather than an interval later. */
	size_t chips = 0;
	for (size_t i = 0; i < snapshot->count; i++)
		chips += snapshot->devices[i].kind == NPU_DEVICE_CHIP;
	if (o->telemetry && o->telemetry->count != chips)
		refresh_telemetry(o);
	nfd_sync(o);
}

void observe_devices(struct observe_resource *res, struct npu_snapshot *view)
{
	if (res)
		metrics_publish_devices(res->metrics, view);
}

int64_t observe_loop_stuck_ms(const struct observe_resource *res)
{
	if (!res)
		return 0;
	int64_t since = now_ms() - atomic_load(&res->observe->heartbeat_ms);
	return since > OBSERVE_LOOP_STUCK_MS ? since : 0;
}

void observe_registration_accepted(struct observe_resource *res)
{
	if (res)
		metrics_count_registration(res->metrics);
}

void observe_registered(struct observe_resource *res)
{
	if (!res)
		return;
	pthread_mutex_lock(&res->observe->lock);
	res->registered = true;
	res->failures = 0;
	res->why[0] = '\0';
	pthread_mutex_unlock(&res->observe->lock);
}

void observe_register_failed(struct observe_resource *res, const char *why)
{
	if (!res)
		return;
	pthread_mutex_lock(&res->observe->lock);
	res->registered = false;
	res->stream_open = false;
	res->failures++;
	snprintf(res->why, sizeof(res->why), "%s", why);
	pthread_mutex_unlock(&res->observe->lock);
}

void observe_kubelet_stream(struct observe_resource *res, bool open)
{
	if (!res)
		return;
	pthread_mutex_lock(&res->observe->lock);
	res->stream_open = open;
	if (!open)
		res->registered = false; /* the daemon registers again */
	pthread_mutex_unlock(&res->observe->lock);
}

void observe_dra(struct observe *o, const char *driver, bool notified, bool registered, const char *error)
{
	if (!o)
		return;
	pthread_mutex_lock(&o->lock);
	snprintf(o->dra_driver, sizeof(o->dra_driver), "%s", driver);
	o->dra_notified = notified;
	o->dra_registered = registered;
	snprintf(o->dra_error, sizeof(o->dra_error), "%s", error);
	pthread_mutex_unlock(&o->lock);
}

void observe_kubelet_restarted(struct observe *o)
{
	if (o)
		metrics_count_kubelet_restart(o->metrics);
}

int observe_holders(struct observe *o, const char *chip_id, char *buf, size_t size)
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

int observe_holders_since(struct observe *o, const char *chip_id, int64_t since_ms, char *buf, size_t size)
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
	if (observe_holders(o, chip_id, buf, size) < 0)
		return 0;
	/* Whoever asks will ask again: a newer list may free the chip. */
	kick_pods(o);
	return 1;
}

void observe_fault(struct observe *o, uint32_t code, bool escalated)
{
	if (o)
		metrics_count_fault(o->metrics, code, escalated);
}

void observe_reset(struct observe *o, uint32_t phy, enum metrics_reset what)
{
	if (o)
		metrics_count_reset(o->metrics, phy, what);
}

void observe_allocate(struct observe_resource *res, int grpc_code, double seconds)
{
	if (!res)
		return;
	metrics_observe_allocate(res->metrics, grpc_code, seconds);
	struct observe *o = res->observe;
	if (grpc_code != 0 || !o->podres)
		return;
	/* One wakeup of the loop per burst of Allocates, not one each: the
	 * loop lists the pods POD_SETTLE_MS after the last of them. */
	atomic_store(&o->last_alloc_ms, now_ms());
	if (!atomic_exchange(&o->pods_after_alloc, true))
		loop_async_send(o->pods_async);
}

void observe_streams_changed(struct observe_resource *res, int delta)
{
	if (res)
		metrics_streams_changed(res->metrics, delta);
}

uint16_t observe_http_port(struct observe *o)
{
	return o && o->http ? http_server_port(o->http) : 0;
}
