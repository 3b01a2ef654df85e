/* SPDX-License-Identifier: Apache-2.0 */
/* What the daemon shows about itself and the node without an API server:
 * the HTTP endpoint (/metrics, /healthz), the telemetry cache it reads
 * (refreshed on the daemon's loop every telemetry interval), the pod map
 * (which pod holds which chip, from the kubelet's pod resources API) and
 * the Node Feature Discovery features file. Part of the daemon: like
 * daemon.c it logs, once per condition.
 *
 * The daemon owns one struct observe and feeds it the node's snapshot and
 * kubelet restarts; each endpoint (plugin/endpoint.h) feeds the struct
 * observe_resource of its resource: the view it publishes, registrations
 * and their failures, the kubelet's stream (on the loop), Allocate outcomes
 * and stream counts (from the gRPC thread). Everything here tolerates a
 * NULL observe or resource, so a daemon built without it needs no
 * branches. */
#pragma once

#include <stdbool.h>
#include <stdint.h>

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
	struct loop *loop;
	const char *metrics_addr;         /* "HOST:PORT"; empty: no HTTP endpoint */
	int64_t telemetry_interval_ms;
	const char *pod_resources_socket; /* empty: no pod labels */
	const char *nfd_file;             /* empty: no features file */
	const char *kubelet_socket;       /* kubelet.sock: its absence is a legitimate wait */
	unsigned replicas;                /* the default resource's time-slicing replicas (NFD labels) */
};

int observe_new(const struct observe_options *options, struct observe **ret_observe);

/* The resource of that name, added when new (never removed: its counters
 * stay across a reload that drops it). replicas: its time-slicing, 0 or 1
 * for none. On the loop. With a NULL observe, *ret_resource is NULL. */
int observe_resource(struct observe *observe, const char *name, unsigned replicas,
		     struct observe_resource **ret_resource);

/* Whether the resource is served now: /healthz judges only those. */
void observe_resource_serving(struct observe_resource *resource, bool serving);

/* Starts the HTTP endpoint (a failed bind is logged and retried every
 * telemetry interval), the telemetry timer and the features file. The
 * inventory is read on the loop only. */
void observe_start(struct observe *observe, struct inventory *inventory);

/* Stops the endpoint, removes the features file (unless remove_files is
 * false: another plugin process of the node keeps it), frees. Accepts NULL
 * and a half-built observe. */
void observe_free(struct observe *observe, bool remove_files);

/* --- on the daemon's loop -------------------------------------------------- */

/* The node's latest snapshot (chips and vNPUs), after every refresh. */
void observe_node(struct observe *observe, struct npu_snapshot *snapshot);
/* The HBM bytes of each device of snapshot by index, from the latest
 * telemetry read (0: not known yet, or not a chip DCMI reports HBM of). */
void observe_hbm_bytes(const struct observe *observe, const struct npu_snapshot *snapshot, uint64_t *out);
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
void observe_kubelet_restarted(struct observe *observe);
/* The DRA driver's registration as the kubelet last notified it, for
 * /healthz: notified is false until the first NotifyRegistrationStatus;
 * a refusal (registered false) makes /healthz unhealthy. */
void observe_dra(struct observe *observe, const char *driver, bool notified, bool registered, const char *error);
/* The containers that hold chip_id ("npu-3") as the kubelet's pod
 * resources last said, "ns/pod/container, ..." in buf (cut with ",..."):
 * 0, or -ENOENT when none is known to (or pod resources are off). */
int observe_holders(struct observe *observe, const char *chip_id, char *buf, size_t size);

/* Whether a container holds chip_id by a pod resources list that began at
 * or after since_ms (now_ms()'s clock), for a decision that must not act
 * on a chip in use: 0 when none does, 1 when some do (named in buf as by
 * observe_holders; a newer list is asked for), -EAGAIN when no list that
 * recent has come yet (one is asked for: call again at the next refresh), -ENODATA when pod resources
 * is off or its last list failed (why in buf). */
int observe_holders_since(struct observe *observe, const char *chip_id, int64_t since_ms, char *buf, size_t size);

/* A fault code began on a chip, or a fault policy window fired for it. */
void observe_fault(struct observe *observe, uint32_t code, bool escalated);

/* A hot reset of chip phy was attempted, or ended so. */
void observe_reset(struct observe *observe, uint32_t phy, enum metrics_reset what);

/* --- from any thread -------------------------------------------------------- */

/* An Allocate answered with grpc_code after seconds. */
void observe_allocate(struct observe_resource *resource, int grpc_code, double seconds);
/* A ListAndWatch stream of the resource opened (+1) or closed (-1),
 * whoever it serves. */
void observe_streams_changed(struct observe_resource *resource, int delta);

/* The port the endpoint serves on, 0 when it does not (tests). */
uint16_t observe_http_port(struct observe *observe);
