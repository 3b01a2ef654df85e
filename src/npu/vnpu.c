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
