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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_templates),
		cmocka_unit_test(test_not_templates),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
