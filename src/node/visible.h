/* SPDX-License-Identifier: Apache-2.0 */
/* What a container is told of the NPUs it gets, the same whoever hands them
 * out (Allocate's answer, the DRA driver's CDI spec): ASCEND_VISIBLE_DEVICES
 * lists their numbers (phy ids, vNPU ids: npu_device_number) comma
 * separated, which CANN and the Ascend Docker Runtime read; with a vNPU
 * among them, ASCEND_RUNTIME_OPTIONS=VIRTUAL makes that runtime, where it
 * runs, look for /dev/vdavinci<id> rather than /dev/davinci<id>.
 *
 * ASCEND_RT_VISIBLE_DEVICES lists the numbers CANN gives the same devices
 * inside the container, 0 to n-1 in that order: set with them, so that a
 * serving stack that reads it (and would otherwise be handed the node's
 * physical ids by an image or a wrapper script) picks exactly the
 * container's devices; the live status file (node/status_files.h) calls
 * the same numbers logical_id.
 *
 * ASCEND_NPU_NETWORK gives the network identity of the chips among them
 * (npu/chip.h), which a multi-node job needs for HCCL's rank table and which
 * no tool inside the image can then be asked for: a JSON array in the
 * devices' order, one object per chip,
 *   {"device_id": 3, "family": "910B", "device_ip": "192.168.1.11", "prefix_len": 24,
 *    "link": "up", "super_device_id": 106, "super_pod_id": 3, "server_index": 1}
 * device_id is the chip's phy id (HCCL's device_id); family as
 * npu_family_name names it ("910", "910B", "A3"...); device_ip and prefix_len
 * only where the RoCE port has an address; link "up", "down" or "unknown";
 * the last three only on A3 chips in a super pod. The DRA driver writes the
 * same objects into a claim's device status. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "npu/inventory.h"

#define VISIBLE_DEVICES_ENV "ASCEND_VISIBLE_DEVICES"
#define VISIBLE_OPTIONS_ENV "ASCEND_RUNTIME_OPTIONS"
#define VISIBLE_OPTIONS_VIRTUAL "VIRTUAL"
/* Room for one number and its comma. */
#define VISIBLE_NUMBER_MAX 11

/* Puts devs in the order a container's devices are listed in: ascending by
 * number (npu_device_number, numerically), the order in which the driver
 * inside the container finds their nodes and CANN numbers them. Allocate
 * and the DRA driver both list them so, so that the i-th device of
 * ASCEND_VISIBLE_DEVICES is the one CANN calls i (ASCEND_RT_VISIBLE_DEVICES,
 * a status file's logical_id, device metadata's containerLogicalID). */
void visible_sort(const struct npu_device **devs, size_t n);

/* The value of ASCEND_VISIBLE_DEVICES for devs, in their order, into
 * buf[size] (n * VISIBLE_NUMBER_MAX + 1 always fits). Returns 0 or -ENOSPC. */
int visible_devices(const struct npu_device *const *devs, size_t n, char *buf, size_t size);

#define VISIBLE_RUNTIME_ENV "ASCEND_RT_VISIBLE_DEVICES"

/* The value of ASCEND_RT_VISIBLE_DEVICES for n devices, "0,1,...", into
 * buf[size] (n * VISIBLE_NUMBER_MAX + 1 always fits). Returns 0 or -ENOSPC. */
int visible_logical(size_t n, char *buf, size_t size);

#define VISIBLE_NETWORK_ENV "ASCEND_NPU_NETWORK"

/* One chip's object as above, new; NULL when out of memory. */
struct json_object *visible_network_entry(const struct npu_device *device);

/* The value of ASCEND_NPU_NETWORK for devs, malloc'd, in *ret_value.
 * Returns 0, -ENODATA when no chip among them has an address or a super pod
 * place (then the variable is left out: nothing to say), or -ENOMEM. */
int visible_network(const struct npu_device *const *devs, size_t n, char **ret_value);

/* Whether devs hold a vNPU: ASCEND_RUNTIME_OPTIONS=VIRTUAL is then due. */
bool visible_virtual(const struct npu_device *const *devs, size_t n);
