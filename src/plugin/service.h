/* The DevicePlugin gRPC service: GetDevicePluginOptions, ListAndWatch
 * (fanned out to every watcher, the full list at once and on every change),
 * GetPreferredAllocation (advertised; see plugin/preferred.h), Allocate and
 * PreStartContainer. Handlers run on the gRPC thread and only
 * read the latest published snapshot; they never call into DCMI.
 *
 * It also tells the daemon when the kubelet's stream ends: the first stream
 * opened after service_expect_kubelet_stream is taken to be the kubelet's. */
#pragma once

#include <stddef.h>

#include "grpc/server.h"
#include "loop/loop.h"
#include "npu/inventory.h"
#include "plugin/allocate.h"

/* Bounds concurrent ListAndWatch streams (the kubelet's plus monitoring tools). */
#define SERVICE_MAX_STREAMS 32

struct service;

struct service_options {
	struct allocate_paths paths;
	/* Sent when the kubelet's stream ends; runs on the daemon's loop. */
	struct loop_async *kubelet_stream_ended;
};

int service_new(const struct service_options *options, struct service **ret_service);
void service_free(struct service *service);

/* The method table to serve, with the service as its context. */
const struct gs_method *service_methods(size_t *ret_count);

/* Makes snapshot the current state and sends it to every watcher. */
int service_publish(struct service *service, struct npu_snapshot *snapshot);

/* The next ListAndWatch stream to open belongs to the kubelet. */
void service_expect_kubelet_stream(struct service *service);

/* Forget which stream is the kubelet's, so that ending it (for instance
 * while the daemon stops its own server) is not reported. */
void service_forget_kubelet_stream(struct service *service);

/* Whether the kubelet's stream is open now. */
bool service_kubelet_watching(struct service *service);
