/* SPDX-License-Identifier: Apache-2.0 */
#include "npu/devfs.h"

#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/file.h"
#include "base/parse.h"

/* Physical ids are small; anything larger is not a chip node we understand. */
#define DEVFS_MAX_PHY_ID 65535u

/* "<prefix><N>" with N plain decimal: "davinci_manager" and "davinci01"
 * (not a name the driver creates, and it would alias davinci1) are not
 * nodes of a chip, nor "vdavinci100" (a vNPU) one of prefix "davinci". */
static int parse_node_name(const char *name, const char *prefix, uint32_t *ret_id)
{
	size_t prefix_len = strlen(prefix);

	if (strncmp(name, prefix, prefix_len) != 0)
		return -EINVAL;
	const char *digits = name + prefix_len;
	if (digits[0] == '0' && digits[1] != '\0')
		return -EINVAL;
	return parse_u32(digits, 10, DEVFS_MAX_PHY_ID, ret_id);
}

/* Calls add(ctx, id) for each node <prefix><N> of dev_dir, stopping at the
 * first error add returns. A missing dev_dir has no nodes. */
static int scan_nodes(const char *dev_dir, const char *prefix, int (*add)(void *ctx, uint32_t id), void *ctx)
{
	DIR *dir;
	int r = dir_open(dev_dir, &dir);
	if (r < 0)
		return r == -ENOENT ? 0 : r;

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
		uint32_t id;
		if (parse_node_name(entry->d_name, prefix, &id) < 0)
			continue;
		r = add(ctx, id);
		if (r < 0)
			break;
	}
	closedir(dir);
	return r;
}

struct chip_list {
	struct npu_chip *chips;
	size_t max, count;
};

static int add_chip(void *ctx, uint32_t phy)
{
	struct chip_list *l = ctx;
	if (l->count >= l->max)
		return -E2BIG;
	l->chips[l->count++] = (struct npu_chip){
		.phy_id = phy,
		.logic_id = phy,
		.card_id = -1,
		.device_id = -1,
		.name = "",
		.family = NPU_FAMILY_UNKNOWN,
	};
	return 0;
}

int devfs_scan(const char *dev_dir, struct npu_chip *chips, size_t max, size_t *ret_count)
{
	if (!dev_dir || (!chips && max > 0))
		return -EINVAL;
	struct chip_list l = { .chips = chips, .max = max };
	int r = scan_nodes(dev_dir, "davinci", add_chip, &l);
	if (r < 0)
		return r;
	if (l.count > 1)
		qsort(chips, l.count, sizeof(chips[0]), npu_chip_compare_phy);
	*ret_count = l.count;
	return 0;
}

struct vnpu_list {
	struct npu_vnpu *vnpus;
	size_t max, count;
};

static int add_vnpu(void *ctx, uint32_t id)
{
	struct vnpu_list *l = ctx;
	uint32_t phy;
	if (npu_vnpu_chip(id, &phy) < 0)
		return 0; /* not a number the driver gives a vNPU */
	if (l->count >= l->max)
		return -E2BIG;
	l->vnpus[l->count++] = (struct npu_vnpu){ .id = id, .phy_id = phy };
	return 0;
}

static int vnpu_compare_id(const void *a, const void *b)
{
	return npu_phy_compare(((const struct npu_vnpu *)a)->id, ((const struct npu_vnpu *)b)->id);
}

int devfs_scan_vnpus(const char *dev_dir, struct npu_vnpu *vnpus, size_t max, size_t *ret_count)
{
	if (!dev_dir || (!vnpus && max > 0))
		return -EINVAL;
	struct vnpu_list l = { .vnpus = vnpus, .max = max };
	int r = scan_nodes(dev_dir, "vdavinci", add_vnpu, &l);
	if (r < 0)
		return r;
	if (l.count > 1)
		qsort(vnpus, l.count, sizeof(vnpus[0]), vnpu_compare_id);
	*ret_count = l.count;
	return 0;
}
