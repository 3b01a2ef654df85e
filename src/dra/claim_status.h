/* SPDX-License-Identifier: Apache-2.0 */
/* What the DRA driver tells the API server of a claim it prepared: each
 * allocated chip's network identity, in the ResourceClaim's status.devices
 * (KEP-4817's device status, GA in Kubernetes 1.37), so that the pods of a
 * multi-node job find every member's chips (HCCL's rank table) in the API
 * the Kubernetes way. One entry per chip with a network identity:
 *   {"driver": "npu.ascend.com", "pool": "<node>", "device": "npu-3",
 *    "data": <the chip's object of node/visible.h, as ASCEND_NPU_NETWORK has it>,
 *    "networkData": {"ips": ["192.168.1.11/24"]}}
 * (networkData only with an address). The whole is a server-side apply of
 * the status subresource under the driver's name as field manager, so
 * entries of other drivers in the same claim stay theirs, and with the
 * claim's uid, so a claim deleted and made anew under its name is not
 * written. No entry is removed at unprepare: the API server drops the
 * status of devices the claim no longer holds. Pure; never logs. */
#pragma once

#include <stddef.h>

#include "base/json_put.h"
#include "npu/inventory.h"

/* The apply's body for claim ns/name (uid) and its devices devs of driver
 * in pool, malloc'd in *ret_body. Returns 0, -ENODATA when no chip among
 * devs has an address or a super pod place (nothing to tell), -ENOMEM. */
int dra_claim_status_body(const char *driver, const char *pool, const char *ns, const char *name, const char *uid,
			  const struct npu_device *const *devs, size_t n, char **ret_body);
