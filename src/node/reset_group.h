/* SPDX-License-Identifier: Apache-2.0 */
/* The chips a hot reset of one chip disturbs: the hardware resets a group,
 * not a chip, so the guard must find every chip of the group free before it
 * resets, and keep them all out while the reset runs. One table, from
 * Huawei's MindCluster Ascend device plugin (Ascend/mind-cluster on GitHub,
 * component/ascend-device-plugin: pkg/server/hot_reset_manager.go,
 * getResetRingDevices and getRingSize; the sizes in pkg/common/constants.go;
 * the A3 pairing in pkg/device/ascend910.go, GetAssociatedLogicIDs), on the
 * interconnect groups node/topology.h already knows:
 *
 *   family / product                        group                     MindCluster
 *   910 (Atlas 800 training)                 HCCS ring: phy / 4        Ascend910RingsNum = 4
 *   910B, node of up to 8 chips              the 8-chip board: phy / 8 Ascend910BRingsNumTrain = 8
 *   910B, node of more (Atlas 200T A2 Box16) every 910B chip (16)      A200TA2RingsNum = 16
 *   910B inference boards without HCCS       the chip alone            Ascend910BRingsNumInfer = 1
 *     (board id 0x28, 0x29: Atlas 300I A2; 0x33, 0x3c: Atlas 800I A2 without HCCS)
 *   A3 (910_93)                              both dies of the chip's   GetAssociatedLogicIDs
 *                                            card and of the card DCMI
 *                                            pairs it with (brother)
 *   310P (Atlas 300I Duo)                    the chips of its card     getDuoCardDevices
 *   anything else, vNPUs' chips              the chip alone            ring size 1
 *
 * Huawei counts the ring by logic id; the plugin names chips by phy id,
 * which the driver numbers the same way on these servers, as
 * node/topology.h's groups do. Pure: no I/O, no logging. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "npu/inventory.h"

/* The largest group: the Box16's 16 chips. */
#define RESET_GROUP_MAX 16

struct reset_group {
	const char *kind; /* static: "chip", "hccs-ring", "board", "box16", "a3-cards", "card" */
	size_t n;
	uint32_t phys[RESET_GROUP_MAX]; /* ascending, the chip itself among them */
};

/* Whether the chip's group depends on the card DCMI pairs its card with
 * (A3): then reset_group_of needs brother_card. */
bool reset_group_needs_brother(const struct npu_device *chip);

/* The group a reset of chip (a chip of snapshot) disturbs, among the chips
 * of snapshot. brother_card: for A3, the card DCMI pairs with the chip's
 * (dcmi_get_netdev_brother_device), or -1 when DCMI did not say: then
 * -ENODATA, since an unknown group must not be reset. -EINVAL for a NULL
 * argument or a device that is not a chip; -E2BIG when more than
 * RESET_GROUP_MAX chips would be in it (a layout the table does not know). */
int reset_group_of(const struct npu_snapshot *snapshot, const struct npu_device *chip, int brother_card,
		   struct reset_group *ret_group);

/* Whether phy is in group. */
bool reset_group_has(const struct reset_group *group, uint32_t phy);
