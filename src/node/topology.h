/* SPDX-License-Identifier: Apache-2.0 */
/* Topology-aware chip choice for GetPreferredAllocation: which of the
 * devices the kubelet offers to give a container so that its chips can talk
 * over the fast interconnect and the node keeps whole interconnect groups
 * free for later requests. The groups and rules are those of Volcano's
 * Ascend scheduling documentation and Huawei's MindCluster (Ascend device
 * plugin) documentation on chip affinity. A pure function of the snapshot
 * and the request: no locking, no logging, no heap.
 *
 * The node's family (the family every chip of the snapshot shares; mixed or
 * unrecognised chips count as UNKNOWN) decides the groups and the rules:
 *  - 910: HCCS rings {0-3} and {4-7} (phy / 4). A request of up to 4 stays
 *    inside one ring, chosen by Volcano's rule: the ring left with no free
 *    chip, else with an even number free (the fewest), else with an odd
 *    number (the fewest). That is, for 1: a ring with 1 free, then 3, 2, 4;
 *    for 2: 2, then 4, then 3; for 4: a ring with 4 free.
 *  - 910B on a node of at most 8 chips: one full mesh, the lowest phy ids
 *    (NUMA nodes decide when known, see below).
 *    With more chips (Atlas 200T A2 Box16): meshes {0-7} and {8-15}
 *    (phy / 8); up to 8 inside the mesh with the fewest free chips that still
 *    fits; 10, 12, 14 and 16 half from each mesh.
 *  - A3: die pairs {0,1}, {2,3}, ... (card = phy / 2); a single die comes
 *    from a pair whose other die is taken, a multi-die request takes whole
 *    pairs (free {0,2,3,4}, 2 -> {2,3}).
 *  - 310P: the chips of one card (chip.card_id); up to 2 stay on one card,
 *    a single chip from a card whose other chip is taken. More than 2, when
 *    NUMA nodes are known: inside one NUMA node if one can hold them (the
 *    node left with the fewest free chips), on as few cards as possible there.
 *  - any other family, and vNPUs: the lowest phy ids.
 * NUMA nodes (npu_device.numa_node, from sysfs) count only where the rules
 * above set no groups: for the 910B full mesh and the other families, when
 * at least one chip's node is known, the groups are the NUMA nodes (chips
 * of unknown node make one more group, last on ties) and any size fits one
 * group: the node left with the fewest free chips that still holds the
 * request, else as few nodes as possible. The 910 rings, Box16 meshes and
 * A3 pairs ignore NUMA nodes.
 * Sizes the rules call invalid (910: 3, 5, 6, 7; Box16: odd above 8; A3: odd
 * above 1) and requests no group can hold get a best effort rather than an
 * error, since an error fails the pod's admission: the groups already
 * holding a must_include device first, then, while chips are missing, the
 * group that holds the rest with the fewest free chips to spare, else the
 * group with the most free chips. That touches as few groups as possible.
 * Ties go to the lower group, and inside a group to the lower phy ids.
 *
 * A chip whose RoCE link is down (npu_device.net) is chosen only to fill up
 * what the chips with a working or unknown link could not: it serves a
 * single-node pod as well as any, but a multi-node job's rank table cannot
 * use it. */
#pragma once

#include <stddef.h>

#include "npu/inventory.h"

/* Chooses size devices: every must_include device, then devices from
 * available. IDs may repeat (they count once); a must_include ID need not be
 * listed in available. Only devices the snapshot calls Healthy are chosen
 * from available; must_include devices are taken whatever their health (the
 * kubelet chose them already).
 *
 * On success writes the chosen devices, in phy order, to ret_chosen (room
 * for size entries) and their number to *ret_count. The count is below size
 * only when some available devices are Unhealthy in the snapshot (the
 * kubelet's view lagging behind): the kubelet fills up the rest itself.
 *
 * Returns 0, or, writing nothing:
 *   -EINVAL  size is 0, or must_include holds more distinct devices than size;
 *   -E2BIG   available or must_include lists more than NPU_MAX_CHIPS IDs, or
 *            the snapshot holds more than NPU_MAX_CHIPS devices;
 *   -ENOENT  an ID in either list is not in the snapshot;
 *   -ERANGE  size is larger than the distinct devices of both lists. */
int topology_choose(const struct npu_snapshot *snapshot, const char *const available[], size_t n_available,
		    const char *const must_include[], size_t n_must_include, size_t size,
		    const struct npu_device *ret_chosen[], size_t *ret_count);

/* The fast-interconnect group of a chip, by the family rules above without
 * the NUMA fallback: "hccs-ring" (910, phy / 4), "hccs-mesh" (910B, phy / 8:
 * 0 for the one mesh of a node of up to 8 chips), "die-pair" (A3, phy / 2)
 * or "card" (310P, chip.card_id). For the DRA driver's device attributes,
 * which claims constrain with matchAttribute. The chip's own family decides,
 * whatever the node's other chips are. -ENOENT when the device is in no
 * such group (a vNPU; 310, 310B or unknown chips; a 310P card id below 0). */
struct topology_group {
	const char *kind; /* static */
	long index;
};
int topology_interconnect(const struct npu_device *device, struct topology_group *ret_group);
