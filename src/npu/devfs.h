/* SPDX-License-Identifier: Apache-2.0 */
/* The device-file backend: chips are the <dev_dir>/davinci<N> nodes, N being
 * the physical id; health is the node being present. Used when DCMI cannot be
 * loaded, and by every backend to check that a chip's node exists. */
#pragma once

#include <stddef.h>

#include "npu/chip.h"

/* Lists davinci<N> entries sorted by phy id, N being plain decimal up to
 * 65535 without leading zeros (so not davinci_manager, vdavinci<N> or
 * davinci01); directories are skipped, any other file type counts (test
 * trees use regular files). Each chip gets phy_id = logic_id = N,
 * card_id = device_id = -1, name "", family UNKNOWN, no board id. Returns 0,
 * -E2BIG beyond max, -EINVAL for NULL chips with max > 0, or -errno from
 * opendir/readdir; a missing dev_dir is 0 chips. On error *ret_count is
 * untouched and the contents of chips are unspecified. */
int devfs_scan(const char *dev_dir, struct npu_chip *chips, size_t max, size_t *ret_count);

/* Lists vdavinci<N> entries (vNPU nodes) sorted by id, N plain decimal
 * without leading zeros, at least NPU_VNPU_FIRST_ID; each gets its chip by
 * the driver's numbering (npu_vnpu_chip) and an empty template, which only
 * DCMI knows. Same rules and returns as devfs_scan. */
int devfs_scan_vnpus(const char *dev_dir, struct npu_vnpu *vnpus, size_t max, size_t *ret_count);
