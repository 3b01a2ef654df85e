/* SPDX-License-Identifier: Apache-2.0 */
#include "dra/health.h"

#include "node/partitions.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dra_health.pb-c.h"

/* The kubelet cuts longer messages. */
#define MESSAGE_MAX 1024

struct dra_health {
	pthread_mutex_t lock;
	struct gs_stream *streams[DRA_HEALTH_MAX_STREAMS];
	size_t n_streams;
	uint8_t *encoded; /* the last NodeWatchResourcesResponse, NULL before one */
	size_t encoded_len;
};

int dra_health_new(struct dra_health **ret_health)
{
	struct dra_health *h = calloc(1, sizeof(*h));
	if (!h)
		return -ENOMEM;
	pthread_mutex_init(&h->lock, NULL);
	*ret_health = h;
	return 0;
}

void dra_health_free(struct dra_health *h)
{
	if (!h)
		return;
	/* The server stopped first: every stream was closed and dropped. */
	free(h->encoded);
	pthread_mutex_destroy(&h->lock);
	free(h);
}

/* One device's entry and what it points to. */
struct entry {
	V1__DeviceHealth health;
	V1__DeviceIdentifier id;
	char message[MESSAGE_MAX];
	char name[PARTITION_NAME_MAX]; /* a placement's; a device's id otherwise */
};

/* The entry of device d under name, with d's health. */
static void fill(struct entry *e, const struct npu_device *d, const char *name, const char *pool, int64_t now_s,
		 int64_t timeout_s)
{
	v1__device_health__init(&e->health);
	v1__device_identifier__init(&e->id);
	snprintf(e->name, sizeof(e->name), "%s", name);
	e->id.pool_name = (char *)(uintptr_t)pool;
	e->id.device_name = e->name;
	e->health.device = &e->id;
	e->health.health = d->healthy ? V1__HEALTH_STATUS__HEALTHY : V1__HEALTH_STATUS__UNHEALTHY;
	e->health.last_updated_time = now_s;
	e->health.health_check_timeout_seconds = timeout_s;
	if (!d->healthy) {
		npu_device_describe(d, e->message, sizeof(e->message));
		e->health.message = e->message;
	}
}

/* How many placements chip d has when it is carved on demand, into parts. */
static size_t placements(const struct npu_device *d, const struct npu_chip_select *dynamic, struct partition *parts)
{
	if (!dynamic || d->kind != NPU_DEVICE_CHIP || !npu_chip_select_has(dynamic, &d->chip))
		return 0;
	size_t k = partitions_of_chip(&d->chip, 0, parts, PARTITIONS_MAX);
	return k < PARTITIONS_MAX ? k : PARTITIONS_MAX;
}

static int encode(const struct npu_snapshot *snap, const char *pool, const struct npu_chip_select *dynamic,
		  int64_t now_s, int64_t timeout_s, uint8_t **ret_body, size_t *ret_len)
{
	/* vNPUs too: each is as healthy as its chip (npu/inventory.h); and
	 * the placements of a chip carved on demand, so that a pod holding a
	 * vNPU made of one hears its chip's faults. Their names are those
	 * the chip's AI cores allow, a few more than its HBM may let the
	 * slices publish: the kubelet heeds only the devices it allocated. */
	struct partition *parts = calloc(PARTITIONS_MAX, sizeof(*parts));
	size_t n = snap->count;
	for (size_t i = 0; parts && i < snap->count; i++)
		n += placements(&snap->devices[i], dynamic, parts);
	struct entry *entries = calloc(n ? n : 1, sizeof(*entries));
	V1__DeviceHealth **ptrs = calloc(n ? n : 1, sizeof(*ptrs));
	int r = -ENOMEM;
	if (!parts || !entries || !ptrs)
		goto out;
	size_t j = 0;
	for (size_t i = 0; i < snap->count; i++) {
		const struct npu_device *d = &snap->devices[i];
		fill(&entries[j], d, d->id, pool, now_s, timeout_s);
		ptrs[j] = &entries[j].health;
		j++;
		size_t k = placements(d, dynamic, parts);
		for (size_t m = 0; m < k && j < n; m++, j++) {
			fill(&entries[j], d, parts[m].name, pool, now_s, timeout_s);
			ptrs[j] = &entries[j].health;
		}
	}
	V1__NodeWatchResourcesResponse resp;
	v1__node_watch_resources_response__init(&resp);
	resp.n_devices = j;
	resp.devices = ptrs;
	size_t len = v1__node_watch_resources_response__get_packed_size(&resp);
	uint8_t *body = malloc(len ? len : 1);
	if (!body)
		goto out;
	v1__node_watch_resources_response__pack(&resp, body);
	*ret_body = body;
	*ret_len = len;
	r = 0;
out:
	free(parts);
	free(entries);
	free(ptrs);
	return r;
}

int dra_health_publish(struct dra_health *h, const struct npu_snapshot *snap, const char *pool,
		       const struct npu_chip_select *dynamic, int64_t now_s, int64_t timeout_s)
{
	uint8_t *body;
	size_t len;
	int r = encode(snap, pool, dynamic, now_s, timeout_s, &body, &len);
	if (r < 0)
		return r;
	pthread_mutex_lock(&h->lock);
	free(h->encoded);
	h->encoded = body;
	h->encoded_len = len;
	/* -EPIPE: the stream ended and its close handler drops it; -ENOMEM:
	 * it misses this one, and the next publish is whole again. */
	for (size_t i = 0; i < h->n_streams; i++)
		(void)gs_stream_send(h->streams[i], body, len);
	pthread_mutex_unlock(&h->lock);
	return 0;
}

grpc_status_code dra_health_open(struct dra_health *h, struct gs_stream *stream, const uint8_t *req, size_t len,
				 struct gs_reply *reply)
{
	V1__NodeWatchResourcesRequest *r = v1__node_watch_resources_request__unpack(NULL, len, req);
	if (!r) {
		gs_reply_error(reply, GRPC_STATUS_INVALID_ARGUMENT, "malformed NodeWatchResourcesRequest");
		return reply->status;
	}
	v1__node_watch_resources_request__free_unpacked(r, NULL);
	pthread_mutex_lock(&h->lock);
	if (h->n_streams == DRA_HEALTH_MAX_STREAMS) {
		pthread_mutex_unlock(&h->lock);
		gs_reply_error(reply, GRPC_STATUS_RESOURCE_EXHAUSTED, "too many NodeWatchResources streams (at most %d)",
			       DRA_HEALTH_MAX_STREAMS);
		return reply->status;
	}
	gs_stream_ref(stream);
	h->streams[h->n_streams++] = stream;
	if (h->encoded)
		(void)gs_stream_send(stream, h->encoded, h->encoded_len); /* as in dra_health_publish */
	pthread_mutex_unlock(&h->lock);
	return GRPC_STATUS_OK;
}

void dra_health_closed(struct dra_health *h, struct gs_stream *stream)
{
	pthread_mutex_lock(&h->lock);
	for (size_t i = 0; i < h->n_streams; i++)
		if (h->streams[i] == stream) {
			h->streams[i] = h->streams[--h->n_streams];
			break;
		}
	pthread_mutex_unlock(&h->lock);
	gs_stream_unref(stream);
}
