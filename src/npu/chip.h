/* SPDX-License-Identifier: Apache-2.0 */
/* What the plugin knows about one NPU chip, whichever backend found it. */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "npu/family.h"

/* Bound on chips per node: DCMI reports at most 64 cards of at most 4 chips. */
#define NPU_MAX_CHIPS 256

struct npu_chip {
	uint32_t phy_id; /* the N of /dev/davinciN: the chip's stable identity */
	uint32_t logic_id;
	int card_id;
	int device_id;
	char name[32]; /* DCMI chip name such as "910B3"; empty from devfs */
	enum npu_family family;
	uint32_t aicore_count; /* 0 when unknown */
	bool has_board_id;
	uint32_t board_id;
};

/* Three-way comparison of phy ids, the order every chip list is kept in. */
static inline int npu_phy_compare(uint32_t a, uint32_t b)
{
	return (a > b) - (a < b);
}

/* qsort comparator for arrays of struct npu_chip, by phy id. */
static inline int npu_chip_compare_phy(const void *a, const void *b)
{
	return npu_phy_compare(((const struct npu_chip *)a)->phy_id, ((const struct npu_chip *)b)->phy_id);
}
