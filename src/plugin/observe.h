/* SPDX-License-Identifier: Apache-2.0 */
/* What each resource the device plugin serves reports about itself, and
 * the event loop's heartbeat: per resource, its counters in the metrics
 * (telemetry/metrics.h: the devices it advertises, registrations, the
 * kubelet's streams, Allocate outcomes) and its registration state, which
 * /healthz judges (daemon/status_http.h); a successful Allocate also tells
 * whoever keeps the pod map (the options' allocated hook). Each endpoint
 * (plugin/endpoint.h) feeds the struct observe_resource of its resource:
 * the view it publishes, registrations and their failures, the kubelet's
 * stream (on the loop), Allocate outcomes and stream counts (from the gRPC
 * thread). Everything here tolerates a NULL observe or resource, so a
 * daemon built without it needs no branches. */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "base/strbuf.h"
#include "loop/loop.h"
#include "npu/inventory.h"
#include "telemetry/metrics.h"

/* /healthz and --probe (through GetDevicePluginOptions) call the event loop
 * stuck when it has not beaten for this long (it beats every second): a
 * deadlock, or anything else that holds the loop. Nothing legitimate does
 * for long: a DCMI call that hangs costs the loop at most its 1 s deadline
 * (npu/dcmi.h) and later calls fail at once, so 5 s is a stall and not a
 * slow refresh. */
#define OBSERVE_LOOP_STUCK_MS 5000

struct observe;
struct observe_resource;

struct observe_options {
	struct loop *loop;       /* beats the heartbeat */
	struct metrics *metrics; /* the counters of each resource go here */
	/* An Allocate succeeded (may be NULL): the pod map is due. Any thread. */
	void (*allocated)(void *ctx);
	void *allocated_ctx;
};

/* Starts the heartbeat. Returns 0 or a negative errno (the timer). */
int observe_new(const struct observe_options *options, struct observe **ret_observe);

/* The resource of that name, added when new (never removed: its counters
 * stay across a reload that drops it). replicas: its time-slicing, 0 or 1
 * for none. On the loop. With a NULL observe, *ret_resource is NULL. */
int observe_resource(struct observe *observe, const char *name, unsigned replicas,
		     struct observe_resource **ret_resource);

/* The names of the resources seen (at most max) into names, which stay
 * valid until observe_free; returns how many. On the loop. */
size_t observe_resource_names(struct observe *observe, const char *names[], size_t max);

/* Whether the resource is served now: /healthz judges only those. */
void observe_resource_serving(struct observe_resource *resource, bool serving);

/* Frees. Accepts NULL and a half-built observe. */
void observe_free(struct observe *observe);

/* What /healthz says of the event loop and of the resources served, one
 * line each into sb (kubelet_socket: whose absence is a legitimate wait);
 * clears *ok when one is unhealthy. Returns how many resources are served.
 * Any thread. */
size_t observe_healthz(struct observe *observe, const char *kubelet_socket, struct strbuf *sb, bool *ok);

/* --- on the daemon's loop -------------------------------------------------- */

/* The devices the resource now advertises. */
void observe_devices(struct observe_resource *resource, struct npu_snapshot *view);
/* How long the event loop has not beaten, when that is long enough to call
 * it stuck (as /healthz does); 0 when it runs. Any thread. */
int64_t observe_loop_stuck_ms(const struct observe_resource *resource);
/* The registration the endpoint acts on is accepted (for /healthz). */
void observe_registered(struct observe_resource *resource);
/* The kubelet accepted a Register, the current one or a superseded one:
 * what ascend_device_plugin_registrations_total counts. */
void observe_registration_accepted(struct observe_resource *resource);
void observe_register_failed(struct observe_resource *resource, const char *why);
/* The kubelet's ListAndWatch stream of the resource opened or ended. */
void observe_kubelet_stream(struct observe_resource *resource, bool open);

/* --- from any thread -------------------------------------------------------- */

/* An Allocate answered with grpc_code after seconds. */
void observe_allocate(struct observe_resource *resource, int grpc_code, double seconds);
/* A ListAndWatch stream of the resource opened (+1) or closed (-1),
 * whoever it serves. */
void observe_streams_changed(struct observe_resource *resource, int delta);
