/* SPDX-License-Identifier: Apache-2.0 */
/* Ascend chip families: recognising them from DCMI's chip name and board id,
 * and the shared device nodes a container of each family needs besides its
 * /dev/davinci<phy> nodes, as Huawei's MindCluster Ascend device plugin and
 * Ascend Docker Runtime (both open source) mount them for each chip family. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum npu_family {
	NPU_FAMILY_UNKNOWN,
	NPU_FAMILY_910,
	NPU_FAMILY_910B,
	NPU_FAMILY_A3,
	NPU_FAMILY_310,
	NPU_FAMILY_310P,
	NPU_FAMILY_310B,
};

/* A board id in the A3 set (0xb0-0xb4, 0x81, 0x83, 0xd1, 0xd3) means A3
 * whatever the name; otherwise by name, first match wins: "910_93..." A3,
 * ^(910B\d|A2G\d) 910B, ^910 910, ^(310P\d?|I2\d?) 310P, ^310B 310B, ^310 310;
 * anything else (including "Ascend950...", "" and NULL) UNKNOWN. Like
 * Huawei's regular expressions the patterns match a prefix: "910B" without a
 * digit is 910, and "I25" is 310P. board_id is ignored unless has_board_id. */
enum npu_family npu_family_detect(const char *chip_name, bool has_board_id, uint32_t board_id);

/* Whether chips of the family talk to other servers' chips over RoCE ports
 * of their own (910, 910B and A3): then a multi-node job's rank table needs
 * each chip's address. 310, 310P and 310B have no such port. */
bool npu_family_has_roce(enum npu_family family);

/* "910", "910B", "A3", "310", "310P", "310B" or "unknown". */
const char *npu_family_name(enum npu_family family);

struct npu_shared_node {
	const char *name; /* file name under /dev */
	bool required;    /* a container cannot use the chip without it */
};

/* The shared nodes of a family, in the order they are mounted; the array is
 * static. 910, 910B, A3, 310 and 310P: davinci_manager, devmm_svm, hisi_hdc
 * (required) and dvpp_cmdlist (optional). 310B: davinci_manager (required),
 * then its SoC and media nodes and dvpp_cmdlist (optional; which exist
 * depends on the board); mounting /dev/davinci_manager_docker in place of
 * davinci_manager when it exists is left to the caller. UNKNOWN (and any
 * value out of range) gets the common set with only davinci_manager
 * required, since the chip might be a 310B. */
size_t npu_family_shared_nodes(enum npu_family family, const struct npu_shared_node **ret_nodes);
