/* SPDX-License-Identifier: Apache-2.0 */
/* Snapshots with static vNPUs, for the tests of what is built from them
 * (ResourceSlices, DRA prepare): vNPUs laid out as the inventory lists
 * them, after the chips, by id. */
#pragma once

#include "npu/inventory.h"

/* A copy of chips (chips only) whose first `carved` chips are carved into
 * per_chip vNPUs of template_name each: ids by the driver's numbering
 * (NPU_VNPU_FIRST_ID + phy * NPU_VNPUS_PER_CHIP + k), each with its chip's
 * place and health, the chips' vnpu_count set. NULL without memory or for
 * more vNPUs than a chip has. */
struct npu_snapshot *carve_snapshot(const struct npu_snapshot *chips, unsigned carved, unsigned per_chip,
				    const char *template_name);
