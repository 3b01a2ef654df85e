/* SPDX-License-Identifier: Apache-2.0 */
/* The dynamic vNPUs of claims: a device a claim was allocated may be a
 * placement of a chip carved on demand (node/partitions.h), which the
 * driver turns into a vNPU at prepare and back at unprepare. Here: which
 * results are placements, whether they may be prepared on this node, the
 * id each vNPU gets (chosen by the driver, recorded before DCMI creates
 * it), and the vNPU device a placement stands for once created. Pure: the
 * driver (dra/driver.h) holds its lock around them and calls DCMI. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dra/checkpoint.h"
#include "npu/chip_select.h"
#include "npu/inventory.h"

/* Whether res is a placement; its chip and template. */
bool dra_vnpu_placement(const struct dra_result *res, uint32_t *ret_phy, const char **ret_template);

/* Checks each placement of p (a claim being prepared anew) against snap:
 * its chip is on the node, in dynamic, carries no vNPU that cp does not
 * name (an administrator's keeps the chip static), is healthy and has such
 * a placement;
 * and gives it the lowest id of its chip that no vNPU of snap, no device
 * recorded in cp and no earlier placement of p has. Returns 0, -EINVAL
 * with why naming the device and the reason, or -ENOSPC when the chip has
 * no id left. */
int dra_vnpus_plan(struct dra_prepared *p, const struct npu_snapshot *snap, const struct npu_chip_select *dynamic,
		   const struct dra_checkpoint *cp, char *why, size_t why_size);

/* Whether p has a placement whose vNPU is not created yet. */
bool dra_vnpus_pending(const struct dra_prepared *p);

/* Whether id is a vNPU recorded in cp. */
bool dra_vnpu_recorded(const struct dra_checkpoint *cp, uint32_t id);

/* The vNPU device placement res (with its id) stands for: its chip's
 * identity, health and placement from snap, kind VNPU, id "vnpu-<id>".
 * Returns 0, or -ENOENT when its chip is not in snap. */
int dra_vnpu_device(const struct dra_result *res, const struct npu_snapshot *snap, struct npu_device *ret_device);

/* Whether the vNPU fields of a record (the driver's file) stand: an id of
 * its chip's range on every placement, none on any other device, no id
 * twice. Returns 0 or -EINVAL with why. */
int dra_vnpus_check_record(const struct dra_prepared *p, char *why, size_t why_size);

/* A record's vNPUs that snap lists on their chips are created: a crash came
 * between DCMI's create and the record saying so. Returns how many it
 * marked. */
size_t dra_vnpus_adopt(struct dra_prepared *p, const struct npu_snapshot *snap);
