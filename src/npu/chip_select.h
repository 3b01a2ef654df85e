/* SPDX-License-Identifier: Apache-2.0 */
/* Which chips a front end serves (--dra-chips): a comma-separated list of
 * physical ids ("3"), ranges of them ("0-3") and chip families ("910B",
 * "310P", any case), or "all". A vNPU goes with the chip it is carved from,
 * so a chip and its vNPUs are always served by the same front end. Splitting
 * a snapshot by it gives each front end its own view, and no device is in
 * both. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "npu/chip.h"
#include "npu/family.h"

/* Entries of one list: ids, ranges and families together. */
#define NPU_CHIP_SELECT_MAX_ENTRIES 64

struct npu_chip_select {
	bool all;
	uint32_t families; /* a set of 1u << enum npu_family */
	size_t n_ranges;
	struct {
		uint32_t first, last;
	} ranges[NPU_CHIP_SELECT_MAX_ENTRIES];
};

/* Parses text. Returns 0, or -EINVAL (empty, an entry that is neither an
 * id, a range nor a family, a range that runs backwards, "all" beside
 * anything else) or -E2BIG (more than NPU_CHIP_SELECT_MAX_ENTRIES entries),
 * with the offending entry named in why. */
int npu_chip_select_parse(const char *text, struct npu_chip_select *ret_select, char *why, size_t why_size);

/* Whether the selection has the chip. */
bool npu_chip_select_has(const struct npu_chip_select *select, const struct npu_chip *chip);

struct npu_snapshot;

/* Splits snapshot into the devices select has (*ret_in) and the others
 * (*ret_out), each a new snapshot with its own healthy count, the devices
 * in the same order. Returns 0 or -ENOMEM. */
int npu_snapshot_split(const struct npu_snapshot *snapshot, const struct npu_chip_select *select,
		       struct npu_snapshot **ret_in, struct npu_snapshot **ret_out);
