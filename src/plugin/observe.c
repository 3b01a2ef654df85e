/* SPDX-License-Identifier: Apache-2.0 */
#include "plugin/observe.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/k8s_names.h"
#include "base/parse.h"

/* The loop beats this often; OBSERVE_LOOP_STUCK_MS is in plugin/observe.h. */
#define HEARTBEAT_MS 1000

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
	struct metrics *metrics;
	void (*allocated)(void *ctx);
	void *allocated_ctx;
	struct observe_resource resources[METRICS_MAX_RESOURCES];
	size_t n_resources;
	struct loop_timer *heartbeat_timer;
	pthread_mutex_t lock; /* resources' registration state */
	atomic_int_fast64_t heartbeat_ms;
};

/* --- /healthz (the HTTP thread) --------------------------------------------- */

size_t observe_healthz(struct observe *o, const char *kubelet_socket, struct strbuf *sb, bool *ok)
{
	if (!o)
		return 0;
	int64_t since = now_ms() - atomic_load(&o->heartbeat_ms);
	if (since > OBSERVE_LOOP_STUCK_MS) {
		*ok = false;
		strbuf_printf(sb, "the event loop is stuck: no heartbeat for %llds\n", (long long)(since / 1000));
	}
	bool kubelet_there = path_exists(kubelet_socket);
	pthread_mutex_lock(&o->lock);
	size_t serving = 0;
	for (size_t i = 0; i < o->n_resources; i++) {
		const struct observe_resource *r = &o->resources[i];
		if (!r->serving)
			continue;
		serving++;
		if (r->registered && r->stream_open) {
			strbuf_printf(sb, "%s: registered, the kubelet's ListAndWatch stream is open\n", r->name);
		} else if (!kubelet_there) {
			strbuf_printf(sb, "%s: waiting for the kubelet (%s does not exist)\n", r->name, kubelet_socket);
		} else if (r->failures) {
			*ok = false;
			strbuf_printf(sb, "%s: registration failing (%u attempts): %s\n", r->name, r->failures, r->why);
		} else {
			*ok = false;
			strbuf_printf(sb, "%s: %s\n", r->name,
				      r->registered ? "registered, waiting for the kubelet's ListAndWatch stream"
						    : "registering with the kubelet");
		}
	}
	pthread_mutex_unlock(&o->lock);
	return serving;
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
	o->metrics = opt->metrics;
	o->allocated = opt->allocated;
	o->allocated_ctx = opt->allocated_ctx;
	atomic_init(&o->heartbeat_ms, now_ms());
	int r = loop_timer_new(opt->loop, on_heartbeat, o, &o->heartbeat_timer);
	if (r < 0) {
		observe_free(o);
		return r;
	}
	loop_timer_arm(o->heartbeat_timer, HEARTBEAT_MS, HEARTBEAT_MS);
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

size_t observe_resource_names(struct observe *o, const char *names[], size_t max)
{
	size_t n = 0;
	for (; o && n < o->n_resources && n < max; n++)
		names[n] = o->resources[n].name;
	return n;
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

void observe_free(struct observe *o)
{
	if (!o)
		return;
	loop_timer_free(o->heartbeat_timer);
	pthread_mutex_destroy(&o->lock);
	free(o);
}

/* --- the endpoints' events ---------------------------------------------------------- */

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

void observe_allocate(struct observe_resource *res, int grpc_code, double seconds)
{
	if (!res)
		return;
	metrics_observe_allocate(res->metrics, grpc_code, seconds);
	struct observe *o = res->observe;
	if (grpc_code == 0 && o->allocated)
		o->allocated(o->allocated_ctx);
}

void observe_streams_changed(struct observe_resource *res, int delta)
{
	if (res)
		metrics_streams_changed(res->metrics, delta);
}
