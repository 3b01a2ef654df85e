/* SPDX-License-Identifier: Apache-2.0 */
#include "telemetry/podres.h"

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "base/k8s_names.h"
#include "base/parse.h"
#include "base/refcount.h"
#include "grpc/client.h"
#include "grpc/cq.h"
#include "podresources.pb-c.h"
#include "podresources_api.h"

DEFINE_REFCOUNT(struct pod_map, pod_map, free)

/* A decimal number without a leading zero (but "0") of at most 5 digits
 * at s; its length, or 0. */
static size_t id_digits(const char *s, uint32_t *ret)
{
	size_t n = strspn(s, "0123456789");
	if (n == 0 || n > 5 || (n > 1 && s[0] == '0'))
		return 0;
	uint32_t v = 0;
	for (size_t i = 0; i < n; i++)
		v = v * 10 + (uint32_t)(s[i] - '0');
	*ret = v;
	return n;
}

int pod_map_chip_of(const char *device_id, char *chip_id)
{
	uint32_t id, phy;
	size_t n;
	if (strncmp(device_id, "vnpu-", 5) == 0) {
		n = id_digits(device_id + 5, &id);
		if (n == 0 || device_id[5 + n] != '\0' || npu_vnpu_chip(id, &phy) < 0)
			return -EINVAL;
	} else if (strncmp(device_id, "npu-", 4) == 0) {
		n = id_digits(device_id + 4, &phy);
		const char *rest = device_id + 4 + n;
		if (n == 0 || (rest[0] != '\0' && strncmp(rest, "::", 2) != 0))
			return -EINVAL;
	} else {
		return -EINVAL;
	}
	return str_printf(chip_id, NPU_DEVICE_ID_MAX, "npu-%u", phy) < 0 ? -EINVAL : 0;
}

static int holder_compare(const void *a, const void *b)
{
	const struct pod_holder *x = a, *y = b;
	int c = strcmp(x->chip_id, y->chip_id);
	if (!c)
		c = strcmp(x->namespace_, y->namespace_);
	if (!c)
		c = strcmp(x->pod, y->pod);
	if (!c)
		c = strcmp(x->container, y->container);
	return c;
}

static bool wanted(const char *resource, const char *const resources[], size_t n)
{
	for (size_t i = 0; resource && i < n; i++)
		if (strcmp(resource, resources[i]) == 0)
			return true;
	return false;
}

int pod_map_decode(const uint8_t *buf, size_t len, const char *const resources[], size_t n_resources,
		   struct pod_map **ret_map)
{
	V1__ListPodResourcesResponse *resp = v1__list_pod_resources_response__unpack(NULL, len, buf);
	if (!resp)
		return -EBADMSG;

	/* Counted first, so that the map is one allocation. */
	size_t total = 0;
	for (size_t p = 0; p < resp->n_pod_resources; p++) {
		const V1__PodResources *pod = resp->pod_resources[p];
		for (size_t c = 0; c < pod->n_containers; c++)
			for (size_t d = 0; d < pod->containers[c]->n_devices; d++)
				total += pod->containers[c]->devices[d]->n_device_ids;
	}
	if (total > POD_MAP_MAX_HOLDERS)
		total = POD_MAP_MAX_HOLDERS;
	struct pod_map *map = calloc(1, sizeof(*map) + total * sizeof(map->holders[0]));
	if (!map) {
		v1__list_pod_resources_response__free_unpacked(resp, NULL);
		return -ENOMEM;
	}
	atomic_init(&map->refs, 1);

	for (size_t p = 0; p < resp->n_pod_resources; p++) {
		const V1__PodResources *pod = resp->pod_resources[p];
		struct pod_holder h;
		if (str_copy(h.namespace_, sizeof(h.namespace_), pod->namespace_) < 0 ||
		    str_copy(h.pod, sizeof(h.pod), pod->name) < 0)
			continue;
		for (size_t c = 0; c < pod->n_containers; c++) {
			const V1__ContainerResources *ctr = pod->containers[c];
			if (str_copy(h.container, sizeof(h.container), ctr->name) < 0)
				continue;
			for (size_t d = 0; d < ctr->n_devices; d++) {
				const V1__ContainerDevices *devs = ctr->devices[d];
				if (!wanted(devs->resource_name, resources, n_resources))
					continue;
				for (size_t i = 0; i < devs->n_device_ids && map->count < total; i++)
					if (pod_map_chip_of(devs->device_ids[i], h.chip_id) == 0)
						map->holders[map->count++] = h;
			}
		}
	}
	v1__list_pod_resources_response__free_unpacked(resp, NULL);

	/* Sorted, then one holder per (chip, container): replicas of one chip
	 * in one container are one holder. */
	qsort(map->holders, map->count, sizeof(map->holders[0]), holder_compare);
	size_t kept = 0;
	for (size_t i = 0; i < map->count; i++)
		if (kept == 0 || holder_compare(&map->holders[kept - 1], &map->holders[i]) != 0)
			map->holders[kept++] = map->holders[i];
	map->count = kept;
	*ret_map = map;
	return 0;
}

/* --- the client ------------------------------------------------------------ */

struct podres {
	char socket_path[SOCKET_PATH_MAX];
	char resource_store[PODRES_MAX_RESOURCES][RESOURCE_NAME_MAX];
	const char *resources[PODRES_MAX_RESOURCES];
	size_t n_resources;
	struct cq_runner *runner;
	struct gc_channel *channel;

	pthread_mutex_t lock;
	struct gc_async *async; /* the List running, NULL when none */
	bool stopping;
	podres_done_fn done;
	void *done_ctx;
};

static void on_list_done(void *ctx, struct gc_result *result)
{
	struct podres *c = ctx;
	pthread_mutex_lock(&c->lock);
	bool stopping = c->stopping;
	podres_done_fn done = c->done;
	void *done_ctx = c->done_ctx;
	pthread_mutex_unlock(&c->lock);

	/* The List still counts as running while its answer is decoded with
	 * the resource names it was started with: a new start waits. */
	struct pod_map *map = NULL;
	int r = 0;
	if (stopping)
		r = -ECANCELED;
	else if (result->status != GRPC_STATUS_OK)
		r = -EIO;
	else
		r = pod_map_decode(result->body, result->len, c->resources, c->n_resources, &map);

	pthread_mutex_lock(&c->lock);
	struct gc_async *async = c->async;
	c->async = NULL;
	pthread_mutex_unlock(&c->lock);
	done(done_ctx, r, result->status, result->details, map);
	gc_result_clear(result);
	gc_async_unref(async);
}

int podres_new(const char *socket_path, struct podres **ret)
{
	struct podres *c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	pthread_mutex_init(&c->lock, NULL);
	int r = str_copy(c->socket_path, sizeof(c->socket_path), socket_path);
	if (r == 0)
		r = gc_channel_open(socket_path, &c->channel);
	if (r == 0)
		r = cq_runner_start(&c->runner);
	if (r < 0) {
		podres_free(c);
		return r;
	}
	*ret = c;
	return 0;
}

int podres_list_start(struct podres *c, const char *const resources[], size_t n_resources, int64_t timeout_ms,
		      podres_done_fn done, void *ctx)
{
	int r = 0;
	if (n_resources > PODRES_MAX_RESOURCES)
		return -E2BIG;
	pthread_mutex_lock(&c->lock);
	if (c->async || c->stopping) {
		r = -EBUSY;
		goto out;
	}
	/* No List runs: the names are the client's to change. */
	c->n_resources = 0;
	for (size_t i = 0; i < n_resources; i++) {
		char *slot = c->resource_store[c->n_resources];
		if (str_copy(slot, RESOURCE_NAME_MAX, resources[i]) < 0)
			continue; /* longer than a resource name can be */
		c->resources[c->n_resources++] = slot;
	}
	if (!path_exists(c->socket_path)) {
		r = -ENOENT;
		goto out;
	}
	c->done = done;
	c->done_ctx = ctx;
	V1__ListPodResourcesRequest req = V1__LIST_POD_RESOURCES_REQUEST__INIT;
	uint8_t body[8];
	size_t len = v1__list_pod_resources_request__pack(&req, body);
	/* The lock is held across the start so that done, which takes it,
	 * sees the handle. */
	r = gc_unary_start(c->channel, c->runner, PODRES_METHOD_LIST, body, len, timeout_ms, on_list_done, c,
			   &c->async);
out:
	pthread_mutex_unlock(&c->lock);
	return r;
}

void podres_free(struct podres *c)
{
	if (!c)
		return;
	pthread_mutex_lock(&c->lock);
	c->stopping = true;
	if (c->async)
		gc_async_cancel(c->async);
	pthread_mutex_unlock(&c->lock);
	/* Waits for the cancelled List's done. */
	cq_runner_stop(c->runner);
	gc_channel_close(c->channel);
	pthread_mutex_destroy(&c->lock);
	free(c);
}
