/* SPDX-License-Identifier: Apache-2.0 */
/* Which pod holds which chip, from the kubelet's pod resources API (v1 List
 * on /var/lib/kubelet/pod-resources/kubelet.sock): a client that lists
 * asynchronously (the caller's loop never waits on the kubelet) and the
 * decoding of the answer into an immutable, reference-counted pod map.
 *
 * Only devices of the plugin's own resource names count. A device ID maps
 * back to its chip: "npu-3" is chip npu-3, a time-slicing replica
 * "npu-3::1" too, and a vNPU "vnpu-<id>" the chip the driver numbers it
 * from (npu/chip.h). A chip held by several
 * containers (replicas) has one holder per container; a container holding
 * several replicas of one chip is one holder. Before Kubernetes 1.34 List
 * may also return ended pods with their old devices: they are kept, as the
 * kubelet reports them. */
#pragma once

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include <grpc/status.h>

#include "npu/inventory.h"

/* Holders kept per map: a node's chips times replicas, with room to spare. */
#define POD_MAP_MAX_HOLDERS 4096
/* Kubernetes bounds: namespace and container names 63, pod names 253 characters. */
#define POD_NAMESPACE_MAX 64
#define POD_NAME_MAX 254
#define POD_CONTAINER_MAX 64

struct pod_holder {
	char chip_id[NPU_DEVICE_ID_MAX];
	char namespace_[POD_NAMESPACE_MAX];
	char pod[POD_NAME_MAX];
	char container[POD_CONTAINER_MAX];
};

struct pod_map {
	atomic_uint refs;
	size_t count;
	struct pod_holder holders[]; /* sorted by chip ID, then namespace, pod, container */
};

/* Both take NULL (base/refcount.h). */
struct pod_map *pod_map_ref(struct pod_map *map);
void pod_map_unref(struct pod_map *map);

/* The chip a device ID stands for, into chip_id[NPU_DEVICE_ID_MAX]:
 * "npu-<phy>", from "npu-<phy>", "npu-<phy>::<k>" or "vnpu-<id>".
 * -EINVAL for anything else. */
int pod_map_chip_of(const char *device_id, char *chip_id);

/* Decodes a packed ListPodResourcesResponse, keeping the devices of the
 * n_resources names. Names longer than Kubernetes allows and devices that
 * are no chip are skipped; holders past POD_MAP_MAX_HOLDERS are dropped.
 * Returns 0 with a map of one reference, -EBADMSG when the bytes are no
 * such message, -ENOMEM. */
int pod_map_decode(const uint8_t *buf, size_t len, const char *const resources[], size_t n_resources,
		   struct pod_map **ret_map);

struct podres;

/* What one List came to, on the client's thread: map (a reference the
 * callback takes over) when it succeeded, else NULL with r a negative errno
 * (-EIO: the kubelet's gRPC error, status and details
 * say which; -EBADMSG: an undecodable answer; -ECANCELED when the client is
 * being freed). */
typedef void (*podres_done_fn)(void *ctx, int r, grpc_status_code status, const char *details, struct pod_map *map);

/* A client of the socket at socket_path, with its own completion-queue thread. */
int podres_new(const char *socket_path, struct podres **ret);

/* Starts a List with a deadline; done runs once, on the client's thread
 * (never from inside this call). -EBUSY when a List is still running,
 * -ENOENT (done not called) when nothing is at the socket's path. */
/* The map keeps the devices of resources (copied; at most
 * PODRES_MAX_RESOURCES names, more are -E2BIG). */
#define PODRES_MAX_RESOURCES 32
int podres_list_start(struct podres *client, const char *const resources[], size_t n_resources, int64_t timeout_ms,
		      podres_done_fn done, void *ctx);

/* Cancels a List still running (its done sees -ECANCELED), waits for the
 * client's thread and frees it. Accepts NULL. */
void podres_free(struct podres *client);
