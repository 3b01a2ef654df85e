/* SPDX-License-Identifier: Apache-2.0 */
/* Time-slicing and each chip's device-share mode: the driver lets several
 * containers use a chip only while the mode is on (npu/dcmi.h), so a chip
 * that time-slicing would share but whose mode is off is served whole
 * (plugin/replica.h decides). This module, on the daemon's loop, switches
 * the mode on where sharing.timeSlicing.enableDeviceShare asks for it,
 * once per chip, and says which chips are served whole and why: one line
 * when a chip becomes so, one when it is shared again, one when the DCMI
 * library cannot tell the mode. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "npu/inventory.h"
#include "plugin/resources.h"

struct device_share {
	/* Chips whose mode the daemon tried to switch on, whatever came of
	 * it: each is tried once while the daemon runs. */
	uint32_t tried[NPU_MAX_CHIPS];
	size_t n_tried;
	/* Chips last said to be served whole. */
	uint32_t whole[NPU_MAX_CHIPS];
	size_t n_whole;
	bool said_unknown;
};

/* With enable, switches on the mode of each chip of snapshot (the
 * inventory's raw one) that a time-sliced resource of resources lists and
 * whose mode is off, unless it was tried before; logs each outcome. lib
 * is the inventory's DCMI (NULL: nothing to do). Returns true when a chip
 * was switched on: the caller refreshes the inventory, so that its next
 * snapshot reads the mode anew and shares the chip. */
bool device_share_enable(struct device_share *share, struct dcmi_lib *lib, const struct npu_snapshot *snapshot,
			 const struct resource_set *resources, bool enable);

/* Logs the chips of snapshot that time-slicing serves whole, each once when
 * it becomes so and once when it is shared again, and once that the mode
 * is unknown when status says the library lacks the call. Returns how
 * many chips are served whole. */
size_t device_share_report(struct device_share *share, const struct npu_snapshot *snapshot,
			   const struct resource_set *resources, const struct inventory_status *status,
			   bool enable);
