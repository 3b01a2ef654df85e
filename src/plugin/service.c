/* SPDX-License-Identifier: Apache-2.0 */
#include "plugin/service.h"

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/macro.h"
#include "deviceplugin.pb-c.h"
#include "deviceplugin_api.h"
#include "node/cdi.h"
#include "plugin/preferred.h"

struct watcher {
	struct gs_stream *stream;
	uint64_t id;          /* this service's number for the stream, from 1 */
	uint64_t kubelet_tag; /* the registration it follows; 0: not the kubelet's */
};

struct service {
	/* Copied at service_new: the gRPC threads read nothing the loop writes,
	 * except what service_publish hands over under the lock. */
	struct allocate_options allocate;
	struct cdi_names cdi;
	struct loop_async *kubelet_stream_changed;
	struct observe_resource *observe;

	pthread_mutex_t lock;
	struct npu_snapshot *snapshot;
	struct host_files *files; /* what Allocate adds besides the chips */
	uint8_t *encoded; /* the snapshot as a ListAndWatchResponse */
	size_t encoded_len;
	struct watcher watchers[SERVICE_MAX_STREAMS];
	size_t n_watchers;
	uint64_t last_stream_id;
	/* Whether a stream is the kubelet's depends on the order of calls,
	 * which only this side sees: a stream that follows a dial-back during a
	 * Register attempt is. */
	uint64_t registering;    /* the tag of the Register call under way, or 0 */
	uint64_t expect_kubelet; /* the kubelet dialed back: its stream comes next */
	/* What the loop has not taken yet, oldest first (a ring). */
	struct service_report reports[SERVICE_REPORTS_MAX];
	size_t first_report, n_reports;
	bool reports_lost;
};

/* One device of the list and what it points to; a device whose NUMA node
 * is known carries it as its TopologyInfo (one node), which the kubelet's
 * topology manager aligns with; the others carry none, which the kubelet
 * takes as "no NUMA preference". */
struct encoded_device {
	V1beta1__Device device;
	V1beta1__TopologyInfo topology;
	V1beta1__NUMANode node;
	V1beta1__NUMANode *nodes[1];
};

/* The list: each chip once, or with time-slicing each chip's replicas
 * (replica_count: one for a chip served whole), which share its health and
 * NUMA node. */
static int encode_list(const struct npu_snapshot *snap, const struct replica_options *sharing, uint8_t **ret_body,
		       size_t *ret_len)
{
	V1beta1__ListAndWatchResponse resp;
	v1beta1__list_and_watch_response__init(&resp);
	bool sliced = replica_sharing(sharing);
	size_t n = 0;
	for (size_t i = 0; i < snap->count; i++)
		n += replica_count(sharing, &snap->devices[i]);
	struct encoded_device *devices = calloc(n ? n : 1, sizeof(*devices));
	V1beta1__Device **ptrs = calloc(n ? n : 1, sizeof(*ptrs));
	char (*ids)[REPLICA_ID_MAX] = sliced ? calloc(n ? n : 1, sizeof(*ids)) : NULL;
	static char healthy[] = DP_HEALTHY, unhealthy[] = DP_UNHEALTHY;
	int r = -ENOMEM;

	if (!devices || !ptrs || (sliced && !ids))
		goto out;
	for (size_t j = 0, i = 0, k = 0; j < n; j++, k++) {
		/* The k-th replica of the i-th device. */
		while (k >= replica_count(sharing, &snap->devices[i])) {
			i++;
			k = 0;
		}
		const struct npu_device *d = &snap->devices[i];
		struct encoded_device *e = &devices[j];
		v1beta1__device__init(&e->device);
		if (sliced) {
			r = replica_format(d->id, (unsigned)k, ids[j], sizeof(ids[j]));
			if (r < 0)
				goto out;
			e->device.id = ids[j];
		} else {
			e->device.id = (char *)(uintptr_t)d->id;
		}
		e->device.health = d->healthy ? healthy : unhealthy;
		if (d->has_numa) {
			v1beta1__topology_info__init(&e->topology);
			v1beta1__numanode__init(&e->node);
			e->node.id = d->numa_node;
			e->nodes[0] = &e->node;
			e->topology.nodes = e->nodes;
			e->topology.n_nodes = 1;
			e->device.topology = &e->topology;
		}
		ptrs[j] = &e->device;
	}
	resp.n_devices = n;
	resp.devices = ptrs;

	r = -ENOMEM;
	size_t len = v1beta1__list_and_watch_response__get_packed_size(&resp);
	uint8_t *body = malloc(len ? len : 1);
	if (!body)
		goto out;
	v1beta1__list_and_watch_response__pack(&resp, body);
	*ret_body = body;
	*ret_len = len;
	r = 0;
out:
	free(devices);
	free(ptrs);
	free(ids);
	return r;
}

int service_new(const struct service_options *options, struct service **ret_service)
{
	struct service *s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->allocate = options->allocate;
	if (options->allocate.cdi) {
		s->cdi = *options->allocate.cdi;
		s->allocate.cdi = &s->cdi;
	}
	s->kubelet_stream_changed = options->kubelet_stream_changed;
	s->observe = options->observe;
	pthread_mutex_init(&s->lock, NULL);
	*ret_service = s;
	return 0;
}

void service_free(struct service *s)
{
	if (!s)
		return;
	npu_snapshot_unref(s->snapshot);
	host_files_unref(s->files);
	free(s->encoded);
	pthread_mutex_destroy(&s->lock);
	free(s);
}

int service_publish(struct service *s, struct npu_snapshot *snap, struct host_files *files)
{
	uint8_t *body = NULL;
	size_t len = 0;
	bool devices_changed = snap != s->snapshot; /* only the loop writes it */
	if (devices_changed) {
		int r = encode_list(snap, &s->allocate.sharing, &body, &len);
		if (r < 0)
			return r;
	}

	pthread_mutex_lock(&s->lock);
	host_files_unref(s->files);
	s->files = host_files_ref(files);
	if (devices_changed) {
		npu_snapshot_unref(s->snapshot);
		s->snapshot = npu_snapshot_ref(snap);
		free(s->encoded);
		s->encoded = body;
		s->encoded_len = len;
		/* A failed send needs no handling: -EPIPE means the stream has
		 * ended and its close handler is about to drop it; after -ENOMEM
		 * the watcher misses this list, and every later one is complete
		 * again. */
		for (size_t i = 0; i < s->n_watchers; i++)
			(void)gs_stream_send(s->watchers[i].stream, body, len);
	}
	pthread_mutex_unlock(&s->lock);
	return 0;
}

void service_register_started(struct service *s, uint64_t tag)
{
	pthread_mutex_lock(&s->lock);
	s->registering = tag;
	pthread_mutex_unlock(&s->lock);
}

void service_register_ended(struct service *s, uint64_t tag, bool ok)
{
	pthread_mutex_lock(&s->lock);
	if (s->registering == tag)
		s->registering = 0;
	/* Accepted: the kubelet's stream may still be on its way. */
	if (!ok && s->expect_kubelet == tag)
		s->expect_kubelet = 0;
	pthread_mutex_unlock(&s->lock);
}

size_t service_take_reports(struct service *s, struct service_report *out, size_t max, bool *ret_lost)
{
	pthread_mutex_lock(&s->lock);
	size_t n = s->n_reports < max ? s->n_reports : max;
	for (size_t i = 0; i < n; i++)
		out[i] = s->reports[(s->first_report + i) % SERVICE_REPORTS_MAX];
	s->first_report = (s->first_report + n) % SERVICE_REPORTS_MAX;
	s->n_reports -= n;
	*ret_lost = s->reports_lost;
	s->reports_lost = false;
	pthread_mutex_unlock(&s->lock);
	return n;
}

void service_forget_kubelet_stream(struct service *s)
{
	if (!s)
		return;
	pthread_mutex_lock(&s->lock);
	s->registering = 0;
	s->expect_kubelet = 0;
	for (size_t i = 0; i < s->n_watchers; i++)
		s->watchers[i].kubelet_tag = 0;
	s->n_reports = 0;
	s->reports_lost = false;
	pthread_mutex_unlock(&s->lock);
}

/* Under the lock: queues what happened to one of the kubelet's streams and
 * wakes the loop. The ring only fills when the loop has not run for as
 * long as it takes the kubelet to open and end several streams; then the
 * oldest report goes, and the loop is told that some were lost. */
static void report_locked(struct service *s, enum service_report_kind kind, uint64_t tag, uint64_t stream)
{
	if (s->n_reports == SERVICE_REPORTS_MAX) {
		s->first_report = (s->first_report + 1) % SERVICE_REPORTS_MAX;
		s->n_reports--;
		s->reports_lost = true;
	}
	s->reports[(s->first_report + s->n_reports++) % SERVICE_REPORTS_MAX] =
		(struct service_report){ .kind = kind, .tag = tag, .stream = stream };
	if (s->kubelet_stream_changed)
		loop_async_send(s->kubelet_stream_changed);
}

/* --- handlers (gRPC thread) --------------------------------------------- */

static void get_options(void *ctx, const uint8_t *req, size_t len, struct gs_reply *reply)
{
	struct service *s = ctx;
	(void)req, (void)len;

	/* What --probe (the liveness and readiness probes) asks: a plugin whose
	 * event loop is stuck must not look alive. */
	int64_t stuck = observe_loop_stuck_ms(s->observe);
	if (stuck) {
		gs_reply_error(reply, GRPC_STATUS_UNAVAILABLE, "the plugin's event loop has not run for %lld ms",
			       (long long)stuck);
		return;
	}

	pthread_mutex_lock(&s->lock);
	if (s->registering)
		s->expect_kubelet = s->registering;
	pthread_mutex_unlock(&s->lock);

	V1beta1__DevicePluginOptions options;
	v1beta1__device_plugin_options__init(&options);
	options.pre_start_required = 0;
	options.get_preferred_allocation_available = 1;
	gs_reply_message(reply, &options.base);
}

/* The current snapshot (and host files) with a new reference, or NULL (and
 * an UNAVAILABLE reply) before the first one is published. */
static struct npu_snapshot *current_snapshot(struct service *s, struct host_files **ret_files, struct gs_reply *reply)
{
	pthread_mutex_lock(&s->lock);
	struct npu_snapshot *snap = npu_snapshot_ref(s->snapshot);
	if (snap && ret_files)
		*ret_files = host_files_ref(s->files);
	pthread_mutex_unlock(&s->lock);
	if (!snap)
		gs_reply_error(reply, GRPC_STATUS_UNAVAILABLE, "no device inventory yet");
	return snap;
}

static void preferred(void *ctx, const uint8_t *req, size_t len, struct gs_reply *reply)
{
	struct service *s = ctx;
	struct npu_snapshot *snap = current_snapshot(s, NULL, reply);
	if (!snap)
		return;
	reply->status = preferred_answer(snap, &s->allocate.sharing, req, len, &reply->body, &reply->len, reply->details,
					 sizeof(reply->details));
	npu_snapshot_unref(snap);
}

static void allocate(void *ctx, const uint8_t *req, size_t len, struct gs_reply *reply)
{
	struct service *s = ctx;
	struct timespec start, end;
	clock_gettime(CLOCK_MONOTONIC, &start);
	struct host_files *files = NULL;
	struct npu_snapshot *snap = current_snapshot(s, &files, reply);
	if (snap) {
		reply->status = allocate_answer(snap, files, &s->allocate, req, len, &reply->body, &reply->len,
						reply->details, sizeof(reply->details));
		npu_snapshot_unref(snap);
		host_files_unref(files);
	}
	clock_gettime(CLOCK_MONOTONIC, &end);
	observe_allocate(s->observe, reply->status,
			 (double)(end.tv_sec - start.tv_sec) + (double)(end.tv_nsec - start.tv_nsec) / 1e9);
}

static void pre_start(void *ctx, const uint8_t *req, size_t len, struct gs_reply *reply)
{
	(void)ctx;
	V1beta1__PreStartContainerRequest *r = v1beta1__pre_start_container_request__unpack(NULL, len, req);
	if (!r) {
		gs_reply_error(reply, GRPC_STATUS_INVALID_ARGUMENT, "malformed PreStartContainerRequest");
		return;
	}
	v1beta1__pre_start_container_request__free_unpacked(r, NULL);
}

static grpc_status_code watch_open(void *ctx, struct gs_stream *stream, const uint8_t *req, size_t len,
				   struct gs_reply *reply)
{
	struct service *s = ctx;
	V1beta1__Empty *empty = v1beta1__empty__unpack(NULL, len, req);
	if (!empty) {
		gs_reply_error(reply, GRPC_STATUS_INVALID_ARGUMENT, "malformed Empty request");
		return reply->status;
	}
	v1beta1__empty__free_unpacked(empty, NULL);

	pthread_mutex_lock(&s->lock);
	/* The last slot is the kubelet's: other watchers filling every slot
	 * must not keep the kubelet from watching after it re-registers us. */
	size_t others = 0;
	for (size_t i = 0; i < s->n_watchers; i++)
		others += !s->watchers[i].kubelet_tag;
	bool full = s->n_watchers == SERVICE_MAX_STREAMS || (!s->expect_kubelet && others >= SERVICE_MAX_STREAMS - 1);
	if (full) {
		pthread_mutex_unlock(&s->lock);
		gs_reply_error(reply, GRPC_STATUS_RESOURCE_EXHAUSTED,
			       "too many ListAndWatch streams (at most %d besides the kubelet's)", SERVICE_MAX_STREAMS - 1);
		return reply->status;
	}
	gs_stream_ref(stream);
	struct watcher *w = &s->watchers[s->n_watchers++];
	w->stream = stream;
	w->id = ++s->last_stream_id;
	w->kubelet_tag = s->expect_kubelet;
	s->expect_kubelet = 0;
	if (w->kubelet_tag)
		report_locked(s, SERVICE_KUBELET_STREAM_OPENED, w->kubelet_tag, w->id);
	if (s->encoded)
		(void)gs_stream_send(stream, s->encoded, s->encoded_len); /* as in service_publish */
	pthread_mutex_unlock(&s->lock);
	observe_streams_changed(s->observe, 1);
	return GRPC_STATUS_OK;
}

static void watch_closed(void *ctx, struct gs_stream *stream)
{
	struct service *s = ctx;

	pthread_mutex_lock(&s->lock);
	for (size_t i = 0; i < s->n_watchers; i++) {
		if (s->watchers[i].stream != stream)
			continue;
		if (s->watchers[i].kubelet_tag)
			report_locked(s, SERVICE_KUBELET_STREAM_ENDED, s->watchers[i].kubelet_tag, s->watchers[i].id);
		s->watchers[i] = s->watchers[--s->n_watchers];
		break;
	}
	pthread_mutex_unlock(&s->lock);
	observe_streams_changed(s->observe, -1);
	gs_stream_unref(stream);
}

/* A ListAndWatch call ended before its request was read: when the kubelet
 * had just dialed back, it was almost surely the kubelet's, cancelled at
 * once (it will not open another by itself). Reporting it as opened and
 * ended lets the daemon register again instead of waiting for a stream
 * that never comes. */
static void watch_aborted(void *ctx)
{
	struct service *s = ctx;

	pthread_mutex_lock(&s->lock);
	uint64_t tag = s->expect_kubelet;
	s->expect_kubelet = 0;
	if (tag) {
		uint64_t id = ++s->last_stream_id;
		report_locked(s, SERVICE_KUBELET_STREAM_OPENED, tag, id);
		report_locked(s, SERVICE_KUBELET_STREAM_ENDED, tag, id);
	}
	pthread_mutex_unlock(&s->lock);
}

static const struct gs_method methods[] = {
	{ .path = DP_METHOD_GET_OPTIONS, .unary = get_options },
	{ .path = DP_METHOD_LIST_AND_WATCH,
	  .stream_open = watch_open,
	  .stream_closed = watch_closed,
	  .stream_aborted = watch_aborted },
	{ .path = DP_METHOD_GET_PREFERRED, .unary = preferred },
	{ .path = DP_METHOD_ALLOCATE, .unary = allocate },
	{ .path = DP_METHOD_PRE_START, .unary = pre_start },
};

const struct gs_method *service_methods(size_t *ret_count)
{
	*ret_count = ELEMENTSOF(methods);
	return methods;
}
