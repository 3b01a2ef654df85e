/* The DevicePlugin gRPC service: GetDevicePluginOptions, ListAndWatch
 * (fanned out to every watcher, the full list at once and on every change),
 * GetPreferredAllocation (advertised; see plugin/preferred.h), Allocate and
 * PreStartContainer. Handlers run on the gRPC thread and only
 * read the latest published snapshot; they never call into DCMI.
 *
 * It also tells the daemon when the kubelet's stream ends (see
 * service_registering for how that stream is recognised). */
#pragma once

#include <stddef.h>

#include "grpc/server.h"
#include "loop/loop.h"
#include "npu/inventory.h"
#include "plugin/allocate.h"

/* Bounds concurrent ListAndWatch streams: the kubelet's, which always has a
 * slot, plus up to SERVICE_MAX_STREAMS - 1 others (monitoring tools). */
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

/* A Register call starts, or ended (ok: the kubelet accepted us). While it
 * runs, the kubelet dials back for GetDevicePluginOptions and then opens its
 * ListAndWatch stream: the first stream after such a dial-back is taken to
 * be the kubelet's. Outside a Register call a dial-back means nothing, so
 * watchers that come while the kubelet is away, or a liveness probe asking
 * for the options, are never mistaken for it. */
void service_register_started(struct service *service);
void service_register_ended(struct service *service, bool ok);

/* Forget which stream is the kubelet's, so that ending it (for instance
 * while the daemon stops its own server) is not reported. */
void service_forget_kubelet_stream(struct service *service);

