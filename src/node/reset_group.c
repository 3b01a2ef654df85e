/* SPDX-License-Identifier: Apache-2.0 */
#include "node/reset_group.h"

#include <errno.h>

#include "node/topology.h"

/* Huawei's inference boards whose chips share no HCCS link: each chip is
 * reset alone (MindCluster's constants.go: A300IA2BoardId,
 * A300IA2GB64BoardId, A800IA2NoneHccsBoardIdOld, A800IA2NoneHccsBoardId). */
static bool without_hccs(const struct npu_chip *chip)
{
	return chip->has_board_id &&
	       (chip->board_id == 0x28 || chip->board_id == 0x29 || chip->board_id == 0x33 || chip->board_id == 0x3c);
}

/* The ring size of MindCluster's A200T A2 (Box16) applies past 8 chips. */
#define BOARD_CHIPS 8

bool reset_group_needs_brother(const struct npu_device *chip)
{
	return chip && chip->kind == NPU_DEVICE_CHIP && chip->chip.family == NPU_FAMILY_A3;
}

bool reset_group_has(const struct reset_group *group, uint32_t phy)
{
	for (size_t i = 0; i < group->n; i++)
		if (group->phys[i] == phy)
			return true;
	return false;
}

enum rule { BY_CHIP, BY_INTERCONNECT, BY_FAMILY, BY_CARDS };

/* Whether other, a chip of the snapshot, is in the group of chip by rule. */
static bool member(enum rule rule, const struct npu_device *chip, const struct topology_group *group,
		   int brother, const struct npu_device *other)
{
	if (other->kind != NPU_DEVICE_CHIP)
		return false;
	struct topology_group g;
	switch (rule) {
	case BY_CHIP:
		return other->chip.phy_id == chip->chip.phy_id;
	case BY_INTERCONNECT:
		return other->chip.family == chip->chip.family && topology_interconnect(other, &g) == 0 &&
		       g.kind == group->kind && g.index == group->index;
	case BY_FAMILY:
		return other->chip.family == chip->chip.family;
	case BY_CARDS:
		return other->chip.family == chip->chip.family &&
		       (other->chip.card_id == chip->chip.card_id || other->chip.card_id == brother);
	}
	return false;
}

int reset_group_of(const struct npu_snapshot *snap, const struct npu_device *chip, int brother,
		   struct reset_group *ret_group)
{
	if (!snap || !chip || !ret_group || chip->kind != NPU_DEVICE_CHIP)
		return -EINVAL;
	struct topology_group ic = { 0 };
	bool grouped = topology_interconnect(chip, &ic) == 0;
	size_t same_family = 0;
	for (size_t i = 0; i < snap->count; i++)
		same_family += snap->devices[i].kind == NPU_DEVICE_CHIP && snap->devices[i].chip.family == chip->chip.family;

	enum rule rule = BY_CHIP;
	const char *kind = "chip";
	switch (chip->chip.family) {
	case NPU_FAMILY_910:
		rule = grouped ? BY_INTERCONNECT : BY_CHIP;
		kind = "hccs-ring";
		break;
	case NPU_FAMILY_910B:
		if (without_hccs(&chip->chip))
			break;
		rule = same_family > BOARD_CHIPS ? BY_FAMILY : BY_INTERCONNECT;
		kind = same_family > BOARD_CHIPS ? "box16" : "board";
		break;
	case NPU_FAMILY_A3:
		if (brother < 0)
			return -ENODATA;
		rule = BY_CARDS;
		kind = "a3-cards";
		break;
	case NPU_FAMILY_310P:
		rule = grouped ? BY_INTERCONNECT : BY_CHIP;
		kind = "card";
		break;
	case NPU_FAMILY_310:
	case NPU_FAMILY_310B:
	case NPU_FAMILY_UNKNOWN:
		break;
	}
	if (rule == BY_CHIP)
		kind = "chip";
	struct reset_group out = { .kind = kind };
	for (size_t i = 0; i < snap->count; i++) {
		if (!member(rule, chip, &ic, brother, &snap->devices[i]))
			continue;
		if (out.n == RESET_GROUP_MAX)
			return -E2BIG;
		out.phys[out.n++] = snap->devices[i].chip.phy_id;
	}
	/* The chip itself, even when the snapshot lacks it. */
	if (!reset_group_has(&out, chip->chip.phy_id)) {
		if (out.n == RESET_GROUP_MAX)
			return -E2BIG;
		size_t k = out.n++;
		while (k > 0 && out.phys[k - 1] > chip->chip.phy_id) {
			out.phys[k] = out.phys[k - 1];
			k--;
		}
		out.phys[k] = chip->chip.phy_id;
	}
	*ret_group = out;
	return 0;
}
