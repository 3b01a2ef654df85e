/* The device-file backend: chips are the <dev_dir>/davinci<N> nodes, N being
 * the physical id; health is the node being present. Used when DCMI cannot be
 * loaded, and by every backend to check that a chip's node exists. */
#pragma once

#include <stddef.h>

#include "npu/chip.h"

/* Lists davinci[0-9]+ entries (not davinci_manager) sorted by phy id; family
 * UNKNOWN, card = device = logic = -1/phy. Returns 0, -E2BIG beyond max, or
 * -errno from opendir. A missing dev_dir is 0 chips. */
int devfs_scan(const char *dev_dir, struct npu_chip *chips, size_t max, size_t *ret_count);
