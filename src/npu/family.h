/* Ascend chip families: recognising them from DCMI's chip name and board id,
 * and the shared device nodes a container of each family needs besides its
 * /dev/davinci<phy> nodes (ascend-facts.md, "Device files"). */
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

/* A board id in the A3 set means A3 whatever the name; otherwise by name:
 * "910_93..." A3, ^(910B\d|A2G\d) 910B, ^910 910, ^(310P\d?|I2\d?) 310P,
 * ^310B 310B, ^310 310; anything else UNKNOWN. */
enum npu_family npu_family_detect(const char *chip_name, bool has_board_id, uint32_t board_id);

/* "910", "910B", "A3", "310", "310P", "310B" or "unknown". */
const char *npu_family_name(enum npu_family family);

struct npu_shared_node {
	const char *name; /* file name under /dev */
	bool required;    /* a container cannot use the chip without it */
};

/* The shared nodes of a family, in the order they are mounted. UNKNOWN gets
 * the common set (davinci_manager, devmm_svm, hisi_hdc, dvpp_cmdlist). */
size_t npu_family_shared_nodes(enum npu_family family, const struct npu_shared_node **ret_nodes);
