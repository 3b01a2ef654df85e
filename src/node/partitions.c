/* SPDX-License-Identifier: Apache-2.0 */
#include "node/partitions.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "base/parse.h"
#include "npu/family.h"

size_t partitions_of_chip(const struct npu_chip *chip, uint64_t hbm_bytes, struct partition *out, size_t max)
{
	const char *const *names;
	size_t n_templates = npu_vnpu_templates(chip->family, chip->name, &names);
	size_t n = 0;
	if (!chip->aicore_count)
		return 0;
	for (size_t t = 0; t < n_templates; t++) {
		struct npu_vnpu_size size;
		char label[NPU_VNPU_TEMPLATE_MAX];
		if (npu_vnpu_template_size(names[t], &size) < 0 ||
		    npu_vnpu_template_label(names[t], label, sizeof(label)) < 0)
			continue;
		uint64_t fit = chip->aicore_count / size.aicores;
		if (hbm_bytes && size.memory_bytes && hbm_bytes / size.memory_bytes < fit)
			fit = hbm_bytes / size.memory_bytes;
		for (uint32_t k = 0; k < fit; k++, n++) {
			if (n >= max)
				continue;
			struct partition *p = &out[n];
			*p = (struct partition){ .template_name = names[t], .index = k, .size = size };
			if (str_printf(p->name, sizeof(p->name), "npu-%" PRIu32 "-%s-%" PRIu32, chip->phy_id, label,
				       k) < 0)
				p->name[0] = '\0'; /* cannot happen: ids and labels are short */
		}
	}
	return n;
}

/* Whether s[0..n) is a decimal number without a leading zero; its value. */
static bool number(const char *s, size_t n, uint32_t *ret)
{
	uint64_t v = 0;
	if (n == 0 || n > 9 || (n > 1 && s[0] == '0'))
		return false;
	for (size_t i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return false;
		v = v * 10 + (uint64_t)(s[i] - '0');
	}
	*ret = (uint32_t)v;
	return true;
}

int partition_parse(const char *name, uint32_t *ret_phy, const char **ret_template)
{
	static const enum npu_family families[] = { NPU_FAMILY_910, NPU_FAMILY_910B, NPU_FAMILY_A3,
						    NPU_FAMILY_310P };
	static const char *const products[] = { "910B1", "910B3" }; /* both 910B template sets */
	uint32_t phy, k;
	if (strncmp(name, "npu-", 4) != 0)
		return -EINVAL;
	const char *p = name + 4;
	size_t n = strcspn(p, "-");
	if (!number(p, n, &phy) || p[n] != '-')
		return -EINVAL;
	const char *label = p + n + 1;
	const char *last = strrchr(label, '-');
	if (!last || last == label || !number(last + 1, strlen(last + 1), &k))
		return -EINVAL;
	size_t label_len = (size_t)(last - label);
	for (size_t f = 0; f < sizeof(families) / sizeof(families[0]); f++) {
		for (size_t pr = 0; pr < sizeof(products) / sizeof(products[0]); pr++) {
			const char *const *names;
			size_t count = npu_vnpu_templates(families[f], products[pr], &names);
			for (size_t t = 0; t < count; t++) {
				char want[NPU_VNPU_TEMPLATE_MAX];
				if (npu_vnpu_template_label(names[t], want, sizeof(want)) == 0 &&
				    strlen(want) == label_len && strncmp(want, label, label_len) == 0) {
					*ret_phy = phy;
					*ret_template = names[t];
					return 0;
				}
			}
		}
	}
	return -EINVAL;
}
