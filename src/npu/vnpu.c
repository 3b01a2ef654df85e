/* SPDX-License-Identifier: Apache-2.0 */
#include "npu/vnpu.h"

#include <errno.h>
#include <stdbool.h>
#include <string.h>

/* Digits of s[0..n) as a number in 1..max. */
static bool count_of(const char *s, size_t n, uint32_t max, uint32_t *ret)
{
	uint32_t v = 0;
	if (n == 0 || n > 4)
		return false;
	for (size_t i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return false;
		v = v * 10 + (uint32_t)(s[i] - '0');
	}
	if (v == 0 || v > max)
		return false;
	*ret = v;
	return true;
}

int npu_vnpu_template_size(const char *name, struct npu_vnpu_size *ret_size)
{
	/* Bounds far above any chip: a name beyond them is not a template. */
	const uint32_t max_cores = 1024, max_cpus = 256, max_gib = 4096;
	struct npu_vnpu_size size = { 0 };
	if (!name || strncmp(name, "vir", 3) != 0)
		return -EINVAL;
	const char *p = name + 3;
	size_t n = strcspn(p, "_");
	if (!count_of(p, n, max_cores, &size.aicores))
		return -EINVAL;
	for (p += n; *p == '_'; p += n) {
		p++;
		n = strcspn(p, "_");
		if (n == 0)
			return -EINVAL;
		uint32_t v;
		if (p[n - 1] == 'c' && count_of(p, n - 1, max_cpus, &v))
			size.aicpus = v;
		else if (p[n - 1] == 'g' && count_of(p, n - 1, max_gib, &v))
			size.memory_bytes = (uint64_t)v << 30;
	}
	*ret_size = size;
	return 0;
}

size_t npu_vnpu_templates(enum npu_family family, const char *product, const char *const **ret_names)
{
	static const char *const t910[] = { "vir02", "vir04", "vir08", "vir16" };
	static const char *const t310p[] = { "vir01",	 "vir02",	   "vir04",	    "vir02_1c",
					     "vir04_3c", "vir04_3c_ndvpp", "vir04_4c_dvpp" };
	static const char *const t910b_train[] = { "vir06_1c_16g", "vir12_3c_32g" };
	static const char *const t910b_infer[] = { "vir05_1c_8g",    "vir10_3c_16g", "vir10_3c_16g_nm",
						   "vir10_4c_16g_m", "vir10_3c_32g", "vir05_1c_16g" };
	static const char *const ta3[] = { "vir06_1c_16g", "vir12_3c_32g", "vir05_1c_16g", "vir10_3c_32g" };
#define TEMPLATES(a) (*ret_names = (a), sizeof(a) / sizeof((a)[0]))
	switch (family) {
	case NPU_FAMILY_910:
		return TEMPLATES(t910);
	case NPU_FAMILY_310P:
		return TEMPLATES(t310p);
	case NPU_FAMILY_910B:
		if (product && (strncmp(product, "910B3", 5) == 0 || strncmp(product, "910B4", 5) == 0))
			return TEMPLATES(t910b_infer);
		return TEMPLATES(t910b_train);
	case NPU_FAMILY_A3:
		return TEMPLATES(ta3);
	default:
		break;
	}
#undef TEMPLATES
	*ret_names = NULL;
	return 0;
}

int npu_vnpu_template_label(const char *template_name, char *buf, size_t size)
{
	size_t n = strlen(template_name);
	if (n >= size)
		return -ENAMETOOLONG;
	for (size_t i = 0; i <= n; i++)
		buf[i] = template_name[i] == '_' ? '-' : template_name[i];
	return 0;
}
