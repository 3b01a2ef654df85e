/* SPDX-License-Identifier: Apache-2.0 */
#include "npu/devfs.h"

#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/parse.h"

/* Physical ids are small; anything larger is not a chip node we understand. */
#define DEVFS_MAX_PHY_ID 65535u

/* "davinci<N>" with N plain decimal: "davinci_manager", "vdavinci100" (a
 * vNPU) and "davinci01" (not a name the driver creates, and it would alias
 * davinci1) are not chips. */
static int parse_chip_name(const char *name, uint32_t *ret_phy)
{
	static const char prefix[] = "davinci";
	const size_t prefix_len = sizeof(prefix) - 1;

	if (strncmp(name, prefix, prefix_len) != 0)
		return -EINVAL;
	const char *digits = name + prefix_len;
	if (digits[0] == '0' && digits[1] != '\0')
		return -EINVAL;
	return parse_u32(digits, 10, DEVFS_MAX_PHY_ID, ret_phy);
}

int devfs_scan(const char *dev_dir, struct npu_chip *chips, size_t max, size_t *ret_count)
{
	if (!dev_dir || (!chips && max > 0))
		return -EINVAL;

	DIR *dir = opendir(dev_dir);
	if (!dir) {
		if (errno == ENOENT) {
			*ret_count = 0;
			return 0;
		}
		return -errno;
	}

	size_t count = 0;
	int r = 0;
	for (;;) {
		errno = 0;
		const struct dirent *entry = readdir(dir);
		if (!entry) {
			r = -errno;
			break;
		}
		/* Test trees use regular files; the host has character devices.
		 * Only a directory is surely not a device node. */
		if (entry->d_type == DT_DIR)
			continue;
		uint32_t phy;
		if (parse_chip_name(entry->d_name, &phy) < 0)
			continue;
		if (count >= max) {
			r = -E2BIG;
			break;
		}
		chips[count] = (struct npu_chip){
			.phy_id = phy,
			.logic_id = phy,
			.card_id = -1,
			.device_id = -1,
			.name = "",
			.family = NPU_FAMILY_UNKNOWN,
		};
		count++;
	}
	closedir(dir);
	if (r < 0)
		return r;

	if (count > 1)
		qsort(chips, count, sizeof(chips[0]), npu_chip_compare_phy);
	*ret_count = count;
	return 0;
}
