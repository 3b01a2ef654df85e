/* SPDX-License-Identifier: Apache-2.0 */
/* The DevicePlugin gRPC service: GetDevicePluginOptions, ListAndWatch
 * (fanned out to every watcher, the full list at once and on every change;
 * each device with a known NUMA node carries it as its TopologyInfo; with
 * time-slicing, allocate.sharing, each chip's replicas in its place),
 * GetPreferredAllocation (advertised; see plugin/preferred.h), Allocate and
 * PreStartContainer. Handlers run on the gRPC thread and only
 * read the latest published snapshot; they never call into DCMI.
 *
 * It also reports to the daemon's loop, in order, each of the kubelet's
 * streams opening and ending (see service_register_started for how that
 * stream is recognised); what follows from them is the loop's to decide
 * (plugin/session.h). */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "grpc/server.h"
#include "loop/loop.h"
#include "npu/inventory.h"
#include "plugin/allocate.h"
#include "plugin/observe.h"

/* Bounds concurrent ListAndWatch streams: the kubelet's, which always has a
 * slot, plus up to SERVICE_MAX_STREAMS - 1 others (monitoring tools). */
#define SERVICE_MAX_STREAMS 32

/* Reports the loop has not taken yet; see service_take_reports. */
#define SERVICE_REPORTS_MAX 16

struct service;

enum service_report_kind {
	SERVICE_KUBELET_STREAM_OPENED,
	SERVICE_KUBELET_STREAM_ENDED, /* ended, was cancelled, or was refused before its request was read */
};

/* One of the kubelet's streams opened or ended: stream is the service's
 * number for it (from 1, never reused), tag the registration it followed. */
struct service_report {
	enum service_report_kind kind;
	uint64_t tag;
	uint64_t stream;
};

struct service_options {
	struct allocate_options allocate;
	/* Sent when there are reports; runs on the daemon's loop, which then
	 * takes them with service_take_reports. */
	struct loop_async *kubelet_stream_changed;
	/* Where Allocate outcomes and stream counts go (may be NULL). */
	struct observe_resource *observe;
};

int service_new(const struct service_options *options, struct service **ret_service);
void service_free(struct service *service);

/* The method table to serve, with the service as its context. */
const struct gs_method *service_methods(size_t *ret_count);

/* Makes snapshot the current state and sends it to every watcher when it is
 * not the one published last; files (never NULL) become what Allocate adds
 * besides the chips. Loop thread only. */
int service_publish(struct service *service, struct npu_snapshot *snapshot, struct host_files *files);

/* An attempt of the registration tagged tag (> 0) starts, or ended (ok:
 * the kubelet accepted us). While it runs, the kubelet dials back for
 * GetDevicePluginOptions and then opens its ListAndWatch stream: the first
 * stream after such a dial-back is taken to be the kubelet's and carries the
 * tag. Outside a Register call a dial-back means nothing, so watchers that
 * come while the kubelet is away, or a liveness probe asking for the options,
 * are never mistaken for it. */
void service_register_started(struct service *service, uint64_t tag);
void service_register_ended(struct service *service, uint64_t tag, bool ok);

/* Takes the reports made since the last call, oldest first, at most max (the
 * rest stay for the next call); returns how many. A ListAndWatch call that
 * the kubelet cancels before its request is even read is reported as a
 * stream that opened and ended. *ret_lost is true when reports were dropped
 * because SERVICE_REPORTS_MAX were waiting: the loop then cannot know what
 * the kubelet's stream is doing and should start over. Loop thread. */
size_t service_take_reports(struct service *service, struct service_report *out, size_t max, bool *ret_lost);

/* Forget which stream is the kubelet's, and the reports not taken, so that
 * ending it (for instance while the daemon stops its own server) is not
 * reported. Accepts NULL. */
void service_forget_kubelet_stream(struct service *service);
