/* SPDX-License-Identifier: Apache-2.0 */
/* The plugin's Prometheus metrics: a thread-safe store of what the daemon
 * publishes (each resource's device snapshot, the telemetry cache, the pod
 * map) and of counters bumped from any thread with atomics (registrations,
 * kubelet restarts, ListAndWatch streams, Allocate outcomes and durations),
 * rendered on demand as the text exposition format 0.0.4. Rendering only
 * takes references to immutable snapshots under a short lock, so a scrape
 * never waits on DCMI, the kubelet or the loop.
 *
 * Metric names and labels are listed in docs/metrics.md. Per chip:
 * ascend_npu_* with labels id, phy, chip and, for each container holding the
 * chip, namespace, pod and container (one series per holder). Per resource:
 * ascend_device_plugin_* with a resource label. */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "npu/inventory.h"
#include "telemetry/podres.h"
#include "telemetry/telemetry.h"

/* Resources one plugin process has served, at most (plugin/resources.h
 * serves at most 24 at once; a reload may bring new names). */
#define METRICS_MAX_RESOURCES 32
/* The rendered text's bound: far above 256 chips with 64 holders each. */
#define METRICS_TEXT_MAX (16 * 1024 * 1024)
/* The Content-Type of the text format 0.0.4. */
#define METRICS_CONTENT_TYPE "text/plain; version=0.0.4; charset=utf-8"

struct metrics;
struct metrics_resource;

/* version: the build_info label. */
int metrics_new(const char *version, struct metrics **ret_metrics);
/* Accepts NULL and a metrics store still holding snapshots. */
void metrics_free(struct metrics *metrics);

/* The resource of that name, added when new; any thread. replicas is how
 * many devices each listed device is advertised as (1 without
 * time-slicing; an existing resource takes the new value). A resource is
 * never removed: its counters stay. -ENOSPC past METRICS_MAX_RESOURCES,
 * -ENAMETOOLONG for a name longer than a resource name can be. */
int metrics_add_resource(struct metrics *metrics, const char *name, unsigned replicas,
			 struct metrics_resource **ret_resource);
/* The resource of that name, or NULL. */
struct metrics_resource *metrics_find_resource(struct metrics *metrics, const char *name);

/* The daemon's loop publishes (each takes its own reference). The node's
 * snapshot gives the chips of the per-chip metrics (its vNPUs are left
 * out: their chip speaks for them); a resource's view gives its devices
 * by health and counts, per device present before and now, a change of
 * health as one health transition. */
void metrics_publish_chips(struct metrics *metrics, struct npu_snapshot *snapshot);
void metrics_publish_devices(struct metrics_resource *resource, struct npu_snapshot *view);
void metrics_publish_telemetry(struct metrics *metrics, struct telemetry_snapshot *snapshot);
/* Any thread; NULL forgets the pods (no pod labels). */
void metrics_publish_pods(struct metrics *metrics, struct pod_map *map);

/* Where the telemetry cache counts its failed DCMI calls. */
struct telemetry_errors *metrics_dcmi_errors(struct metrics *metrics);

/* Counters, from any thread. grpc_code is the Allocate's gRPC status (0..16). */
void metrics_count_registration(struct metrics_resource *resource);
void metrics_count_kubelet_restart(struct metrics *metrics);

/* Codes the fault counters keep apart; the rest count under code "other",
 * so a chip that reports a new code at every poll cannot grow the page. */
#define METRICS_MAX_FAULT_CODES 64

/* A fault code began on a chip (escalated: a fault policy window fired for
 * it instead). Loop thread; a NULL metrics counts nothing. */
void metrics_count_fault(struct metrics *metrics, uint32_t code, bool escalated);

/* What ascend_npu_resets_total counts, per chip. */
enum metrics_reset {
	METRICS_RESET_ATTEMPTED,
	METRICS_RESET_SUCCEEDED,
	METRICS_RESET_FAILED,
	METRICS_RESET_COUNT
};
/* A reset of chip phy was attempted, or ended so. Loop thread; a NULL
 * metrics counts nothing. */
void metrics_count_reset(struct metrics *metrics, uint32_t phy, enum metrics_reset what);

/* What ascend_npu_reset_decisions_total counts, per chip whose faults ask
 * for a reset: each decision of the reset guard, by its reason. */
enum metrics_reset_decision {
	METRICS_DECISION_RESET,           /* the group was free: reset */
	METRICS_DECISION_HELD_BY_POD,     /* a container holds a chip of the group */
	METRICS_DECISION_BUSY_PROCESS,    /* DCMI lists a process on a chip of the group */
	METRICS_DECISION_HOLDERS_UNKNOWN, /* pod resources is off or failing */
	METRICS_DECISION_GROUP_UNKNOWN,   /* the group is unknown (A3 without its brother card) */
	METRICS_DECISION_COUNT
};
/* A decision about resetting chip phy. Loop thread; a NULL metrics counts
 * nothing. */
void metrics_count_reset_decision(struct metrics *metrics, uint32_t phy, enum metrics_reset_decision why);
void metrics_streams_changed(struct metrics_resource *resource, int delta);
void metrics_observe_allocate(struct metrics_resource *resource, int grpc_code, double seconds);

/* Renders every metric into a malloc'd, terminated text. Any thread.
 * Returns 0, -ENOMEM, or -E2BIG past METRICS_TEXT_MAX. */
int metrics_render(struct metrics *metrics, char **ret_text, size_t *ret_len);

/* Writes value into a label value of the text format, escaped, into
 * buf[size] (for tests and other exporters of the same text). -ENOBUFS when
 * it does not fit. */
int metrics_escape_label(const char *value, char *buf, size_t size);
