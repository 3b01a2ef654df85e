/* SPDX-License-Identifier: Apache-2.0 */
/* Time-slicing replica IDs: with sharing.timeSlicing (docs/configuration.md)
 * each chip "npu-<phy>" is advertised replicas times as "npu-<phy>::<k>",
 * k = 0..replicas-1, NVIDIA's device plugin's form for shared GPUs; a chip
 * whose device-share mode is off only as "npu-<phy>::0". This module
 * decides how many replicas a chip gets and formats and parses the IDs;
 * Allocate, GetPreferredAllocation and ListAndWatch map them to chips. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "npu/inventory.h"

#define REPLICA_MAX 64
/* "npu-<phy>::<k>" fits in this, terminator included. */
#define REPLICA_ID_MAX (NPU_DEVICE_ID_MAX + 4)

/* What the plugin does with its chips: replicas 0 (or 1) advertises each
 * chip once, under its own ID. */
struct replica_options {
	unsigned replicas;                    /* 0, or 2..REPLICA_MAX */
	bool fail_requests_greater_than_one; /* refuse a container asking for more than one replica */
};

/* Whether the options share chips at all. */
bool replica_sharing(const struct replica_options *options);

/* How many replicas of device the plugin serves: 1 without time-slicing;
 * 1, the chip whole, when its device-share mode is off, since the driver
 * lets only one container use such a chip (docs/configuration.md,
 * "Time-slicing and device-share"); else options->replicas. A mode that is
 * unknown (no DCMI, or a library without the call) is served as configured.
 * Both front ends count with it: the device plugin's replica IDs and the DRA
 * driver's shares. */
unsigned replica_count(const struct replica_options *options, const struct npu_device *device);

/* Whether time-slicing asks for replicas of device and its device-share
 * mode being off makes it served whole instead. */
bool replica_held_whole(const struct replica_options *options, const struct npu_device *device);

/* Writes "<chip_id>::<k>"; -ENOBUFS when it does not fit. */
int replica_format(const char *chip_id, unsigned k, char *buf, size_t size);

/* The chip of a replica ID: its index in the snapshot and the replica k.
 * -EINVAL for an ID that is not "<chip>::<k>" with k a decimal number below
 * the chip's replica_count with replicas (no sign, no leading zero: a chip
 * served whole has "::0" only), -ENOENT when the snapshot holds no such
 * chip. */
int replica_parse(const struct npu_snapshot *snapshot, unsigned replicas, const char *id, size_t *ret_index,
		  unsigned *ret_k);
