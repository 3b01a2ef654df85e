/* SPDX-License-Identifier: Apache-2.0 */
#include "npu/family.h"

#include <string.h>

#include "base/macro.h"

/* Huawei matches chip names with start-anchored regular expressions; these
 * prefix checks give the same answers without a regex engine. */
static bool has_prefix(const char *s, const char *prefix)
{
	return strncmp(s, prefix, strlen(prefix)) == 0;
}

static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

/* ^<prefix>\d : the prefix followed by at least one digit. */
static bool has_prefix_digit(const char *s, const char *prefix)
{
	return has_prefix(s, prefix) && is_digit(s[strlen(prefix)]);
}

/* A3 (910_93) boards report names that older tools also use for 910B, so the
 * board id (dcmi_get_device_board_info in Huawei's DCMI API reference) is
 * the reliable signal; the ids are those Huawei's MindCluster device plugin
 * treats as A3. */
static bool is_a3_board(uint32_t board_id)
{
	if (board_id >= 0xb0 && board_id <= 0xb4)
		return true;
	return board_id == 0x81 || board_id == 0x83 || board_id == 0xd1 || board_id == 0xd3;
}

enum npu_family npu_family_detect(const char *chip_name, bool has_board_id, uint32_t board_id)
{
	if (has_board_id && is_a3_board(board_id))
		return NPU_FAMILY_A3;
	if (!chip_name)
		return NPU_FAMILY_UNKNOWN;

	/* Order matters: the 910B and A3 names also start with "910", and the
	 * 310P/310B names with "310". */
	if (has_prefix(chip_name, "910_93"))
		return NPU_FAMILY_A3;
	if (has_prefix_digit(chip_name, "910B") || has_prefix_digit(chip_name, "A2G"))
		return NPU_FAMILY_910B;
	if (has_prefix(chip_name, "910"))
		return NPU_FAMILY_910;
	/* ^(310P\d?|I2\d?) as a prefix match: the optional digit adds nothing. */
	if (has_prefix(chip_name, "310P") || has_prefix(chip_name, "I2"))
		return NPU_FAMILY_310P;
	if (has_prefix(chip_name, "310B"))
		return NPU_FAMILY_310B;
	if (has_prefix(chip_name, "310"))
		return NPU_FAMILY_310;
	/* The 950 series ("Ascend950...") is not supported yet. */
	return NPU_FAMILY_UNKNOWN;
}

bool npu_family_has_roce(enum npu_family family)
{
	return family == NPU_FAMILY_910 || family == NPU_FAMILY_910B || family == NPU_FAMILY_A3;
}

const char *npu_family_name(enum npu_family family)
{
	switch (family) {
	case NPU_FAMILY_910:
		return "910";
	case NPU_FAMILY_910B:
		return "910B";
	case NPU_FAMILY_A3:
		return "A3";
	case NPU_FAMILY_310:
		return "310";
	case NPU_FAMILY_310P:
		return "310P";
	case NPU_FAMILY_310B:
		return "310B";
	case NPU_FAMILY_UNKNOWN:
		break;
	}
	return "unknown";
}

/* The driver's memory-sharing (devmm_svm) and host-device channel (hisi_hdc)
 * nodes: the runtime cannot start without them on these families. */
static const struct npu_shared_node common_nodes[] = {
	{ "davinci_manager", true },
	{ "devmm_svm", true },
	{ "hisi_hdc", true },
	/* Only media (DVPP) workloads use it, and some installs lack it. */
	{ "dvpp_cmdlist", false },
};

/* 310B (Atlas 200I A2 / 500 A2 boards) exposes its media and SoC blocks as
 * separate nodes instead of devmm_svm/hisi_hdc. Which of them a board has
 * depends on the product, so only davinci_manager is required. */
static const struct npu_shared_node nodes_310b[] = {
	{ "davinci_manager", true },
	{ "svm0", false },
	{ "ts_aisle", false },
	{ "upgrade", false },
	{ "sys", false },
	{ "vdec", false },
	{ "vpc", false },
	{ "pngd", false },
	{ "venc", false },
	{ "log_drv", false },
	{ "acodec", false },
	{ "ai", false },
	{ "ao", false },
	{ "vo", false },
	{ "hdmi", false },
	{ "dvpp_cmdlist", false },
};

/* An unrecognised chip (including everything the devfs backend finds) gets
 * the common set, but only davinci_manager is required: a 310B board seen
 * without DCMI has no devmm_svm/hisi_hdc and must still be usable. */
static const struct npu_shared_node unknown_nodes[] = {
	{ "davinci_manager", true },
	{ "devmm_svm", false },
	{ "hisi_hdc", false },
	{ "dvpp_cmdlist", false },
};

size_t npu_family_shared_nodes(enum npu_family family, const struct npu_shared_node **ret_nodes)
{
	switch (family) {
	case NPU_FAMILY_910:
	case NPU_FAMILY_910B:
	case NPU_FAMILY_A3:
	case NPU_FAMILY_310:
	case NPU_FAMILY_310P:
		*ret_nodes = common_nodes;
		return ELEMENTSOF(common_nodes);
	case NPU_FAMILY_310B:
		*ret_nodes = nodes_310b;
		return ELEMENTSOF(nodes_310b);
	case NPU_FAMILY_UNKNOWN:
		break;
	}
	*ret_nodes = unknown_nodes;
	return ELEMENTSOF(unknown_nodes);
}
