/* SPDX-License-Identifier: Apache-2.0 */
/* Time-slicing replica IDs: with sharing.timeSlicing (docs/configuration.md)
 * each chip "npu-<phy>" is advertised replicas times as "npu-<phy>::<k>",
 * k = 0..replicas-1, NVIDIA's device plugin's form for shared GPUs. This
 * module only formats and parses the IDs; Allocate, GetPreferredAllocation
 * and ListAndWatch map them to chips. */
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

/* Writes "<chip_id>::<k>"; -ENOBUFS when it does not fit. */
int replica_format(const char *chip_id, unsigned k, char *buf, size_t size);

/* The chip of a replica ID: its index in the snapshot and the replica k.
 * -EINVAL for an ID that is not "<chip>::<k>" with k a decimal number below
 * replicas (no sign, no leading zero), -ENOENT when the snapshot holds no
 * such chip. */
int replica_parse(const struct npu_snapshot *snapshot, unsigned replicas, const char *id, size_t *ret_index,
		  unsigned *ret_k);
