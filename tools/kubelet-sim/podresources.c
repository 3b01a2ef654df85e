/* SPDX-License-Identifier: Apache-2.0 */
#include "podresources.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "podresources.pb-c.h"
#include "podresources_api.h"

/* One pod of the answer: a pod per allocation, with its one container and
 * that container's devices. */
struct entry {
	V1__PodResources pod;
	V1__ContainerResources ctr;
	V1__ContainerResources *ctrs[1];
	V1__ContainerDevices devs;
	V1__ContainerDevices *devs_list[1];
	char name[64], ctr_name[64];
};

static void pack_reply(const ProtobufCMessage *msg, struct gs_reply *reply)
{
	size_t len = protobuf_c_message_get_packed_size(msg);
	uint8_t *body = malloc(len ? len : 1);
	if (!body) {
		gs_reply_error(reply, GRPC_STATUS_RESOURCE_EXHAUSTED, "out of memory");
		return;
	}
	protobuf_c_message_pack(msg, body);
	reply->body = body;
	reply->len = len;
}

static void list(void *ctx, const uint8_t *req, size_t len, struct gs_reply *reply)
{
	struct sim *sim = ctx;
	V1__ListPodResourcesRequest *r = v1__list_pod_resources_request__unpack(NULL, len, req);
	if (!r) {
		gs_reply_error(reply, GRPC_STATUS_INVALID_ARGUMENT, "malformed ListPodResourcesRequest");
		return;
	}
	v1__list_pod_resources_request__free_unpacked(r, NULL);

	pthread_mutex_lock(&sim->lock);
	size_t total = 0;
	for (size_t i = 0; i < sim->n_resources; i++)
		total += sim->resources[i].n_allocs;
	struct entry *entries = calloc(total ? total : 1, sizeof(*entries));
	V1__PodResources **pods = calloc(total ? total : 1, sizeof(*pods));
	if (!entries || !pods) {
		pthread_mutex_unlock(&sim->lock);
		free(entries);
		free(pods);
		gs_reply_error(reply, GRPC_STATUS_RESOURCE_EXHAUSTED, "out of memory");
		return;
	}
	size_t n = 0;
	for (size_t i = 0; i < sim->n_resources; i++) {
		struct sim_resource *res = &sim->resources[i];
		for (size_t k = 0; k < res->n_allocs; k++) {
			const struct sim_allocation *a = &res->allocs[k];
			struct entry *e = &entries[n];
			v1__pod_resources__init(&e->pod);
			v1__container_resources__init(&e->ctr);
			v1__container_devices__init(&e->devs);
			snprintf(e->name, sizeof(e->name), "kubelet-sim-pod-%lu", a->serial);
			snprintf(e->ctr_name, sizeof(e->ctr_name), "container-%lu", a->serial);
			e->pod.name = e->name;
			e->pod.namespace_ = (char *)(uintptr_t) "default";
			e->ctr.name = e->ctr_name;
			e->devs.resource_name = res->name;
			e->devs.device_ids = a->ids;
			e->devs.n_device_ids = a->n_ids;
			e->devs_list[0] = &e->devs;
			e->ctr.devices = e->devs_list;
			e->ctr.n_devices = 1;
			e->ctrs[0] = &e->ctr;
			e->pod.containers = e->ctrs;
			e->pod.n_containers = 1;
			pods[n++] = &e->pod;
		}
	}
	V1__ListPodResourcesResponse resp = V1__LIST_POD_RESOURCES_RESPONSE__INIT;
	resp.pod_resources = pods;
	resp.n_pod_resources = n;
	/* Packed under the lock: the IDs belong to the allocations. */
	pack_reply(&resp.base, reply);
	pthread_mutex_unlock(&sim->lock);
	free(entries);
	free(pods);
}

static void allocatable(void *ctx, const uint8_t *req, size_t len, struct gs_reply *reply)
{
	struct sim *sim = ctx;
	V1__AllocatableResourcesRequest *r = v1__allocatable_resources_request__unpack(NULL, len, req);
	if (!r) {
		gs_reply_error(reply, GRPC_STATUS_INVALID_ARGUMENT, "malformed AllocatableResourcesRequest");
		return;
	}
	v1__allocatable_resources_request__free_unpacked(r, NULL);

	pthread_mutex_lock(&sim->lock);
	V1__ContainerDevices devs[SIM_MAX_RESOURCES];
	V1__ContainerDevices *list_[SIM_MAX_RESOURCES];
	char **ids[SIM_MAX_RESOURCES] = { 0 };
	size_t n = 0;
	bool oom = false;
	for (size_t i = 0; i < sim->n_resources; i++) {
		struct sim_resource *res = &sim->resources[i];
		v1__container_devices__init(&devs[n]);
		devs[n].resource_name = res->name;
		ids[n] = calloc(res->n_devices ? res->n_devices : 1, sizeof(char *));
		oom |= !ids[n];
		for (size_t k = 0; ids[n] && k < res->n_devices; k++)
			ids[n][k] = res->devices[k].id;
		devs[n].device_ids = ids[n];
		devs[n].n_device_ids = ids[n] ? res->n_devices : 0;
		list_[n] = &devs[n];
		n++;
	}
	V1__AllocatableResourcesResponse resp = V1__ALLOCATABLE_RESOURCES_RESPONSE__INIT;
	resp.devices = list_;
	resp.n_devices = n;
	if (oom)
		gs_reply_error(reply, GRPC_STATUS_RESOURCE_EXHAUSTED, "out of memory");
	else
		pack_reply(&resp.base, reply);
	pthread_mutex_unlock(&sim->lock);
	for (size_t i = 0; i < n; i++)
		free(ids[i]);
}

static const struct gs_method methods[] = {
	{ .path = PODRES_METHOD_LIST, .unary = list },
	{ .path = PODRES_METHOD_GET_ALLOCATABLE, .unary = allocatable },
};

int podresources_start(struct sim *sim, const char *path)
{
	return gs_server_start(path, methods, sizeof(methods) / sizeof(methods[0]), sim, &sim->podres_server);
}

void podresources_stop(struct sim *sim)
{
	gs_server_stop(sim->podres_server);
	sim->podres_server = NULL;
}
