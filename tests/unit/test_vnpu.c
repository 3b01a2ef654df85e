/* SPDX-License-Identifier: Apache-2.0 */
/* vNPU template names read as sizes (npu/vnpu.c): every template Huawei
 * documents per family, and names that are not templates. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "base/macro.h"
#include "node/partitions.h"
#include "npu/vnpu.h"

static void test_templates(void **state)
{
	(void)state;
	static const struct {
		const char *name;
		uint32_t cores, cpus, gib;
	} cases[] = {
		/* 910 */
		{ "vir02", 2, 0, 0 },
		{ "vir16", 16, 0, 0 },
		/* 310P */
		{ "vir01", 1, 0, 0 },
		{ "vir02_1c", 2, 1, 0 },
		{ "vir04_3c", 4, 3, 0 },
		{ "vir04_3c_ndvpp", 4, 3, 0 },
		{ "vir04_4c_dvpp", 4, 4, 0 },
		/* Atlas A2 and A3 */
		{ "vir06_1c_16g", 6, 1, 16 },
		{ "vir12_3c_32g", 12, 3, 32 },
		{ "vir05_1c_8g", 5, 1, 8 },
		{ "vir10_3c_16g_nm", 10, 3, 16 },
		{ "vir10_4c_16g_m", 10, 4, 16 },
	};
	for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
		struct npu_vnpu_size v;
		if (npu_vnpu_template_size(cases[i].name, &v) != 0)
			fail_msg("%s: not read", cases[i].name);
		assert_int_equal(v.aicores, cases[i].cores);
		assert_int_equal(v.aicpus, cases[i].cpus);
		assert_true(v.memory_bytes == (uint64_t)cases[i].gib << 30);
	}
}

static void test_not_templates(void **state)
{
	(void)state;
	static const char *const bad[] = { "", "vir", "vir0", "vir00", "vir_4", "VIR04", "vir4x", "vir04_",
					   "vir04__3c", "vir99999", "npu-0" };
	struct npu_vnpu_size v = { .aicores = 7 };
	for (size_t i = 0; i < ELEMENTSOF(bad); i++)
		if (npu_vnpu_template_size(bad[i], &v) != -EINVAL)
			fail_msg("'%s' read as a template", bad[i]);
	assert_int_equal(npu_vnpu_template_size(NULL, &v), -EINVAL);
	assert_int_equal(v.aicores, 7); /* untouched on failure */
}

/* Placements on demand: as many of each template as the chip's AI cores
 * and HBM hold, named so that the chip and template read back. */
static void test_partitions(void **state)
{
	(void)state;
	const char *const *names;
	assert_int_equal(npu_vnpu_templates(NPU_FAMILY_910B, "910B3", &names), 6);
	assert_string_equal(names[0], "vir05_1c_8g");
	assert_int_equal(npu_vnpu_templates(NPU_FAMILY_910B, "910B2", &names), 2);
	assert_int_equal(npu_vnpu_templates(NPU_FAMILY_910B, NULL, &names), 2);
	assert_int_equal(npu_vnpu_templates(NPU_FAMILY_A3, "910_9391", &names), 4);
	assert_int_equal(npu_vnpu_templates(NPU_FAMILY_310P, "310P3", &names), 7);
	assert_int_equal(npu_vnpu_templates(NPU_FAMILY_910, "910B", &names), 4);
	assert_int_equal(npu_vnpu_templates(NPU_FAMILY_310B, "310B1", &names), 0);

	struct npu_chip chip = { .phy_id = 7, .family = NPU_FAMILY_910B, .name = "910B4", .aicore_count = 20 };
	struct partition parts[PARTITIONS_MAX];
	/* 910B4, 32 GiB: 4 x vir05_1c_8g, 2 x vir10_3c_16g (and _nm, _m),
	 * 1 x vir10_3c_32g, 2 x vir05_1c_16g. */
	size_t n = partitions_of_chip(&chip, 32ull << 30, parts, PARTITIONS_MAX);
	assert_int_equal(n, 4 + 2 + 2 + 2 + 1 + 2);
	assert_string_equal(parts[0].name, "npu-7-vir05-1c-8g-0");
	assert_string_equal(parts[10].name, "npu-7-vir10-3c-32g-0");
	for (size_t i = 0; i < n; i++) {
		uint32_t phy = 0;
		const char *t = NULL;
		assert_int_equal(partition_parse(parts[i].name, &phy, &t), 0);
		assert_int_equal(phy, 7);
		assert_string_equal(t, parts[i].template_name);
	}
	/* HBM unknown: AI cores alone decide; at most max written. */
	assert_int_equal(partitions_of_chip(&chip, 0, parts, 3), 4 + 2 + 2 + 2 + 2 + 4);
	chip.aicore_count = 0;
	assert_int_equal(partitions_of_chip(&chip, 32ull << 30, parts, PARTITIONS_MAX), 0);

	static const char *const bad[] = { "npu-7", "npu-7-vir05-1c-8g", "npu-07-vir05-1c-8g-0", "npu-7-vir05-1c-8g-01",
					   "npu-7-vir99-0", "npu--vir02-0", "vnpu-100", "npu-7-vir05_1c_8g-0", "" };
	for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
		uint32_t phy = 99;
		const char *t = NULL;
		if (partition_parse(bad[i], &phy, &t) != -EINVAL)
			fail_msg("'%s' read as a placement", bad[i]);
		assert_int_equal(phy, 99);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_templates),
		cmocka_unit_test(test_not_templates),
		cmocka_unit_test(test_partitions),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
