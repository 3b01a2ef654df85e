/* SPDX-License-Identifier: Apache-2.0 */
/* The DRA resource health service (NodeWatchResources, v1): every stream
 * gets the health of each chip and vNPU of the node (a vNPU's is its
 * chip's), in the driver's pool, at once
 * and again at every publish (each refresh of the inventory: a fault event,
 * a device-node change, the health timer), so the kubelet shows a chip's
 * fault in the status of the pods that hold it and never takes a quiet
 * healthy chip for one whose state is unknown. Each device carries the time
 * of the refresh and how long to trust it. The loop publishes; streams open
 * and close on gRPC threads. */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "grpc/server.h"
#include "npu/chip_select.h"
#include "npu/inventory.h"

/* The kubelet's stream and a few watchers of one's own (tools). */
#define DRA_HEALTH_MAX_STREAMS 8

struct dra_health;

int dra_health_new(struct dra_health **ret_health);
void dra_health_free(struct dra_health *health);

/* Sends the health of every device of snapshot in pool, and of every
 * placement of the chips dynamic carves on demand (NULL: none; a placement
 * is as healthy as its chip), determined at now_s (Unix seconds) and to be
 * trusted for timeout_s, to every stream, and keeps it for the streams that
 * open later. Returns 0 or -ENOMEM (the streams then keep what they had).
 * Loop thread. */
int dra_health_publish(struct dra_health *health, const struct npu_snapshot *snapshot, const char *pool,
		       const struct npu_chip_select *dynamic, int64_t now_s, int64_t timeout_s);

/* The stream handlers (grpc/server.h), for the DRA socket's method table. */
grpc_status_code dra_health_open(struct dra_health *health, struct gs_stream *stream, const uint8_t *req, size_t len,
				 struct gs_reply *reply);
void dra_health_closed(struct dra_health *health, struct gs_stream *stream);
