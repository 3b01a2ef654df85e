/* SPDX-License-Identifier: Apache-2.0 */
/* Answers GetPreferredAllocation: unpacks and checks the kubelet's request
 * and, for each container request, names the devices topology_choose picks
 * (node/topology.h) from the current snapshot. The kubelet takes the
 * preferred IDs it can and fills up from its own list, so the answer is
 * advice; an error fails the pod's admission, which is why only requests
 * the kubelet would never send are refused. */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include <grpc/status.h>

#include "npu/inventory.h"
#include "plugin/replica.h"

/* Bounds container requests in one PreferredAllocationRequest (the kubelet sends one). */
#define PREFERRED_MAX_CONTAINERS 64

/* Unpacks a PreferredAllocationRequest and packs the
 * PreferredAllocationResponse, one container response per container
 * request, into a malloc'd buffer. Returns GRPC_STATUS_OK, or
 * INVALID_ARGUMENT with a message naming the problem in details and nothing
 * in *ret_body: a malformed request, none or too many container requests,
 * an allocation_size below 1 or above the devices offered, more
 * must_include devices than allocation_size, too many IDs, or an ID the
 * plugin does not advertise. RESOURCE_EXHAUSTED when out of memory.
 *
 * With time-slicing (sharing, may be NULL) the IDs are replicas. The answer
 * spreads them: it wants as many distinct chips as it can get, up to
 * allocation_size, among the chips of must_include and those with a free
 * replica; topology_choose picks them from the least used chips (fewest
 * replicas taken, that is not in available) first, widening to more used
 * ones only while too few chips are left. Each chosen chip then gives one
 * free replica (its lowest), and replicas still missing come from the least
 * used chips. */
grpc_status_code preferred_answer(const struct npu_snapshot *snapshot, const struct replica_options *sharing,
				  const uint8_t *request, size_t len, uint8_t **ret_body, size_t *ret_len,
				  char *details, size_t details_size);
