/* SPDX-License-Identifier: Apache-2.0 */
/* The daemon's diffed report lines: what the inventory found and how it is
 * doing (DCMI or device files, fault events or polling, the driver, the
 * chips and vNPUs, each chip's NUMA node and health), each said when it
 * changes, never again while it stays the same. Part of the top level: it
 * logs. */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "config/config.h"
#include "daemon/serving.h"
#include "npu/inventory.h"
#include "plugin/resources.h"

struct report {
	struct npu_snapshot *devices; /* the devices last reported, NULL before */
	struct inventory_status status;
	bool once; /* the status was reported once */
	char front_ends[2048]; /* the split between the front ends last said, "" before */
};

/* The start's lines: version, resource, socket, backend, time-slicing, the
 * device-list strategy (with the CDI spec's path). */
void report_start(const struct config *config, const struct serving *serving, const char *cdi_path);

/* Says what changed in the inventory's status since the last call. */
void report_status(struct report *report, const struct inventory_status *status, const struct config *config);

/* Says which chips and vNPUs there are when the list changed, and each
 * device turning Unhealthy (with why) or Healthy again; resources name the
 * resource of each device in JSON logs. retry_ms is how often the inventory
 * is looked at again (said when no chip is found). */
void report_devices(struct report *report, const struct npu_snapshot *snapshot, const struct resource_set *resources,
		    int64_t retry_ms);

/* Says which devices each front end serves when that changed (--front-end
 * dra or both); device_plugin_on: whether the device plugin runs at all. */
void report_front_ends(struct report *report, const struct npu_snapshot *dra, const struct npu_snapshot *device_plugin,
		       bool device_plugin_on);

void report_fini(struct report *report);
