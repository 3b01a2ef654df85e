/* SPDX-License-Identifier: Apache-2.0 */
/* The ListAndWatch follower thread; see follower.h. */
#include "follower.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/log.h"
#include "deviceplugin.pb-c.h"
#include "output.h"

/* follower_stop wakes the reader at once with gc_stream_cancel; the slice
 * only keeps every wait bounded. */
#define READ_SLICE_MS 1000

/* At most this many `devices-invalid` lines per answer. */
#define MAX_WARNINGS 8

struct follower {
	struct sim *sim;
	struct sim_resource *res;
	struct sim_plugin *plugin;
	pthread_t thread;

	/* `stream` is shared with follower_stop, which cancels it, so it is set
	 * and cleared under `lock`; only the thread reads from or frees it. */
	pthread_mutex_t lock;
	struct gc_stream *stream;
	/* Written by follower_stop before it sets `stop`. */
	char reason[256];
	atomic_bool stop;

	/* Written by the thread, read after the join. */
	bool ended_by_request;
};

static void warn_invalid(struct follower *f, unsigned *problems, const char *reason, const char *id)
{
	if (++*problems > MAX_WARNINGS)
		return;
	struct out_line line;
	out_start(&line, "devices-invalid");
	out_kv(&line, "resource", f->plugin->resource);
	out_kv_quoted(&line, "reason", reason);
	if (id)
		out_kv(&line, "id", id);
	out_emit(&line);
}

/* Copies the answer's devices, sorted and unique (a duplicated ID counts
 * once, unhealthy if any copy is), warning about what the kubelet rejects. */
static int build_devices(struct follower *f, const V1beta1__ListAndWatchResponse *msg,
			 struct sim_device **ret_devices, size_t *ret_n)
{
	unsigned problems = 0;
	size_t n = msg->n_devices;
	if (n > SIM_MAX_DEVICES) {
		char reason[96];
		snprintf(reason, sizeof(reason), "%zu devices; only the first %d are kept", n, SIM_MAX_DEVICES);
		warn_invalid(f, &problems, reason, NULL);
		n = SIM_MAX_DEVICES;
	}

	struct sim_device *devices = calloc(n ? n : 1, sizeof(*devices));
	if (!devices)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		const V1beta1__Device *dev = msg->devices[i];
		const char *id = dev->id ? dev->id : "";
		const char *health = dev->health ? dev->health : "";
		if (id[0] == '\0')
			warn_invalid(f, &problems, "empty device ID", NULL);
		else if (strlen(id) > DEVICE_ID_MAX)
			warn_invalid(f, &problems, "device ID longer than 63 characters", id);
		devices[i].id = strdup(id);
		devices[i].health = strdup(health);
		if (dev->topology) {
			devices[i].has_topology = true;
			devices[i].n_numa = dev->topology->n_nodes;
			for (size_t j = 0; j < dev->topology->n_nodes && j < SIM_DEVICE_NUMA_MAX; j++)
				devices[i].numa[j] = dev->topology->nodes[j] ? dev->topology->nodes[j]->id : 0;
		}
		if (!devices[i].id || !devices[i].health) {
			sim_devices_free(devices, i + 1);
			return -ENOMEM;
		}
	}

	qsort(devices, n, sizeof(*devices), sim_device_compare);
	size_t kept = 0;
	for (size_t i = 0; i < n; i++) {
		if (kept > 0 && strcmp(devices[kept - 1].id, devices[i].id) == 0) {
			warn_invalid(f, &problems, "duplicate device ID", devices[i].id);
			if (strcmp(devices[i].health, DP_HEALTHY) != 0) {
				char *health = devices[kept - 1].health;
				devices[kept - 1].health = devices[i].health;
				devices[i].health = health;
			}
			free(devices[i].id);
			free(devices[i].health);
			continue;
		}
		devices[kept++] = devices[i];
	}

	if (problems > MAX_WARNINGS) {
		char reason[64];
		snprintf(reason, sizeof(reason), "%u more problems not shown", problems - MAX_WARNINGS);
		unsigned ignored = 0;
		warn_invalid(f, &ignored, reason, NULL);
	}
	*ret_devices = devices;
	*ret_n = kept;
	return 0;
}

static void handle_answer(struct follower *f, const uint8_t *body, size_t len)
{
	static const uint8_t empty[1];
	V1beta1__ListAndWatchResponse *msg = v1beta1__list_and_watch_response__unpack(NULL, len, body ? body : empty);
	if (!msg) {
		unsigned problems = 0;
		warn_invalid(f, &problems, "cannot decode ListAndWatchResponse", NULL);
		return;
	}

	struct sim_device *devices;
	size_t n;
	int r = build_devices(f, msg, &devices, &n);
	v1beta1__list_and_watch_response__free_unpacked(msg, NULL);
	if (r < 0) {
		log_error("%s: cannot keep the device list: %s", f->plugin->resource, strerror(-r));
		return;
	}

	pthread_mutex_lock(&f->sim->lock);
	if (sim_resource_follows(f->res, f->plugin)) {
		sim_resource_set_devices(f->res, devices, n);
		devices = NULL;
	}
	pthread_mutex_unlock(&f->sim->lock);
	if (devices)
		sim_devices_free(devices, n);
}

static void report_end(struct follower *f, grpc_status_code status, const char *details)
{
	pthread_mutex_lock(&f->sim->lock);
	struct out_line line;
	out_start(&line, "stream-ended");
	out_kv(&line, "resource", f->plugin->resource);
	out_kv_u64(&line, "status", (unsigned long long)status);
	out_kv_quoted(&line, "details", details);
	out_emit(&line);
	sim_resource_hold(f->sim, f->res, f->plugin->endpoint);
	/* A follower whose plugin has been replaced leaves the devices alone,
	 * and so does one with another registration of its resource still
	 * streaming. */
	if (!sim_resource_stream_ended(f->res, f->plugin))
		sim_resource_mark_unhealthy(f->res);
	pthread_mutex_unlock(&f->sim->lock);
}

static void *follow(void *arg)
{
	struct follower *f = arg;
	grpc_status_code status = GRPC_STATUS_UNKNOWN;
	char details[512] = "";
	struct gc_stream *stream = NULL;

	pthread_mutex_lock(&f->lock);
	int r = atomic_load(&f->stop) ? -ECANCELED
				       : gc_stream_open(f->plugin->channel, DP_METHOD_LIST_AND_WATCH, NULL, 0, &stream);
	if (r == 0)
		f->stream = stream;
	pthread_mutex_unlock(&f->lock);
	if (r < 0 && r != -ECANCELED)
		snprintf(details, sizeof(details), "cannot start ListAndWatch: %s", strerror(-r));

	while (r == 0) {
		uint8_t *body = NULL;
		size_t len = 0;
		r = gc_stream_next(stream, READ_SLICE_MS, &body, &len);
		if (atomic_load(&f->stop)) {
			/* Whatever arrived after the stop request is not looked at. */
			free(body);
			break;
		}
		if (r == -ETIMEDOUT) {
			r = 0;
			continue;
		}
		if (r == -EPIPE) {
			const char *why = NULL;
			gc_stream_status(stream, &status, &why);
			snprintf(details, sizeof(details), "%s", why ? why : "");
			break;
		}
		if (r < 0) {
			snprintf(details, sizeof(details), "cannot read ListAndWatch: %s", strerror(-r));
			break;
		}
		handle_answer(f, body, len);
		free(body);
	}
	if (atomic_load(&f->stop)) {
		status = GRPC_STATUS_CANCELLED;
		snprintf(details, sizeof(details), "%s", f->reason);
		f->ended_by_request = true;
	}

	pthread_mutex_lock(&f->lock);
	f->stream = NULL;
	pthread_mutex_unlock(&f->lock);
	gc_stream_close(stream);
	report_end(f, status, details);
	return NULL;
}

int follower_start(struct sim *sim, struct sim_resource *res, struct sim_plugin *plugin,
		   struct follower **ret_follower)
{
	struct follower *f = calloc(1, sizeof(*f));
	if (!f)
		return -ENOMEM;
	f->sim = sim;
	f->res = res;
	f->plugin = plugin;
	atomic_init(&f->stop, false);
	pthread_mutex_init(&f->lock, NULL);
	sim_plugin_ref(plugin);

	int r = pthread_create(&f->thread, NULL, follow, f);
	if (r != 0) {
		sim_plugin_unref(plugin);
		pthread_mutex_destroy(&f->lock);
		free(f);
		return -r;
	}
	*ret_follower = f;
	return 0;
}

bool follower_stop(struct follower *f, const char *reason)
{
	if (!f)
		return false;
	pthread_mutex_lock(&f->lock);
	snprintf(f->reason, sizeof(f->reason), "%s", reason);
	atomic_store(&f->stop, true);
	if (f->stream)
		gc_stream_cancel(f->stream);
	pthread_mutex_unlock(&f->lock);

	pthread_join(f->thread, NULL);
	bool ended_by_request = f->ended_by_request;
	sim_plugin_unref(f->plugin);
	pthread_mutex_destroy(&f->lock);
	free(f);
	return ended_by_request;
}
