/* SPDX-License-Identifier: Apache-2.0 */
/* Chip family recognition from DCMI names and board ids, and the shared
 * device nodes each family mounts. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "base/macro.h"
#include "npu/family.h"

static enum npu_family by_name(const char *name)
{
	return npu_family_detect(name, false, 0);
}

static void test_910b_needs_a_digit(void **state)
{
	(void)state;
	assert_int_equal(by_name("910B1"), NPU_FAMILY_910B);
	assert_int_equal(by_name("910B3"), NPU_FAMILY_910B);
	assert_int_equal(by_name("910B4"), NPU_FAMILY_910B);
	assert_int_equal(by_name("910B4-1"), NPU_FAMILY_910B);
	assert_int_equal(by_name("A2G1"), NPU_FAMILY_910B);
	/* Without the digit Huawei's ^910B\d does not match, and ^910 does. */
	assert_int_equal(by_name("910B"), NPU_FAMILY_910);
	assert_int_equal(by_name("A2G"), NPU_FAMILY_UNKNOWN);
	assert_int_equal(by_name("A2GX"), NPU_FAMILY_UNKNOWN);
}

static void test_910(void **state)
{
	(void)state;
	assert_int_equal(by_name("910"), NPU_FAMILY_910);
	assert_int_equal(by_name("910A"), NPU_FAMILY_910);
	assert_int_equal(by_name("910ProB"), NPU_FAMILY_910);
	assert_int_equal(by_name("910_92"), NPU_FAMILY_910);
	/* Matches are anchored at the start. */
	assert_int_equal(by_name("Ascend910"), NPU_FAMILY_UNKNOWN);
	assert_int_equal(by_name(" 910"), NPU_FAMILY_UNKNOWN);
	assert_int_equal(by_name("91"), NPU_FAMILY_UNKNOWN);
}

static void test_a3_by_name(void **state)
{
	(void)state;
	assert_int_equal(by_name("910_93"), NPU_FAMILY_A3);
	assert_int_equal(by_name("910_9391"), NPU_FAMILY_A3);
	assert_int_equal(by_name("910_9382"), NPU_FAMILY_A3);
	assert_int_equal(by_name("910_9"), NPU_FAMILY_910);
}

static void test_a3_by_board_id(void **state)
{
	(void)state;
	static const uint32_t a3_boards[] = { 0xb0, 0xb1, 0xb2, 0xb3, 0xb4, 0x81, 0x83, 0xd1, 0xd3 };
	for (size_t i = 0; i < ELEMENTSOF(a3_boards); i++) {
		/* The board id wins whatever the name says, even without one. */
		assert_int_equal(npu_family_detect("910B3", true, a3_boards[i]), NPU_FAMILY_A3);
		assert_int_equal(npu_family_detect("310P3", true, a3_boards[i]), NPU_FAMILY_A3);
		assert_int_equal(npu_family_detect("", true, a3_boards[i]), NPU_FAMILY_A3);
		assert_int_equal(npu_family_detect(NULL, true, a3_boards[i]), NPU_FAMILY_A3);
		/* A board id DCMI did not give is not a board id. */
		assert_int_equal(npu_family_detect("910B3", false, a3_boards[i]), NPU_FAMILY_910B);
	}
	static const uint32_t other_boards[] = { 0, 0xaf, 0xb5, 0x80, 0x82, 0x84, 0xd0, 0xd2, 0xd4, 0x1b0 };
	for (size_t i = 0; i < ELEMENTSOF(other_boards); i++)
		assert_int_equal(npu_family_detect("910B3", true, other_boards[i]), NPU_FAMILY_910B);
}

static void test_310_family(void **state)
{
	(void)state;
	assert_int_equal(by_name("310P"), NPU_FAMILY_310P);
	assert_int_equal(by_name("310P1"), NPU_FAMILY_310P);
	assert_int_equal(by_name("310P3"), NPU_FAMILY_310P);
	assert_int_equal(by_name("I2"), NPU_FAMILY_310P);
	assert_int_equal(by_name("I25"), NPU_FAMILY_310P);
	assert_int_equal(by_name("310B"), NPU_FAMILY_310B);
	assert_int_equal(by_name("310B1"), NPU_FAMILY_310B);
	assert_int_equal(by_name("310"), NPU_FAMILY_310);
	assert_int_equal(by_name("310M"), NPU_FAMILY_310);
	assert_int_equal(by_name("I1"), NPU_FAMILY_UNKNOWN);
	assert_int_equal(by_name("i2"), NPU_FAMILY_UNKNOWN);
}

static void test_unknown(void **state)
{
	(void)state;
	assert_int_equal(by_name("Ascend950PR"), NPU_FAMILY_UNKNOWN);
	assert_int_equal(by_name("Ascend950DT"), NPU_FAMILY_UNKNOWN);
	assert_int_equal(by_name(""), NPU_FAMILY_UNKNOWN);
	assert_int_equal(by_name(NULL), NPU_FAMILY_UNKNOWN);
	assert_int_equal(by_name("GPU"), NPU_FAMILY_UNKNOWN);
}

static void test_names(void **state)
{
	(void)state;
	assert_string_equal(npu_family_name(NPU_FAMILY_910), "910");
	assert_string_equal(npu_family_name(NPU_FAMILY_910B), "910B");
	assert_string_equal(npu_family_name(NPU_FAMILY_A3), "A3");
	assert_string_equal(npu_family_name(NPU_FAMILY_310), "310");
	assert_string_equal(npu_family_name(NPU_FAMILY_310P), "310P");
	assert_string_equal(npu_family_name(NPU_FAMILY_310B), "310B");
	assert_string_equal(npu_family_name(NPU_FAMILY_UNKNOWN), "unknown");
	assert_string_equal(npu_family_name((enum npu_family)99), "unknown");
}

/* Checks that nodes[0..count) are exactly the expected names in order. */
static void assert_nodes(enum npu_family family, const char *const *expected, size_t expected_count)
{
	const struct npu_shared_node *nodes = NULL;
	size_t count = npu_family_shared_nodes(family, &nodes);
	assert_non_null(nodes);
	assert_int_equal(count, expected_count);
	for (size_t i = 0; i < count; i++)
		assert_string_equal(nodes[i].name, expected[i]);
}

/* 1 when the family's node is required, 0 when optional, -1 when absent. */
static int node_required(enum npu_family family, const char *name)
{
	const struct npu_shared_node *nodes = NULL;
	size_t count = npu_family_shared_nodes(family, &nodes);
	for (size_t i = 0; i < count; i++)
		if (strcmp(nodes[i].name, name) == 0)
			return nodes[i].required ? 1 : 0;
	return -1;
}

static void test_shared_nodes_common(void **state)
{
	(void)state;
	static const char *const common[] = { "davinci_manager", "devmm_svm", "hisi_hdc", "dvpp_cmdlist" };
	static const enum npu_family families[] = { NPU_FAMILY_910, NPU_FAMILY_910B, NPU_FAMILY_A3, NPU_FAMILY_310,
						    NPU_FAMILY_310P };
	for (size_t i = 0; i < ELEMENTSOF(families); i++) {
		assert_nodes(families[i], common, 4);
		assert_int_equal(node_required(families[i], "davinci_manager"), 1);
		assert_int_equal(node_required(families[i], "devmm_svm"), 1);
		assert_int_equal(node_required(families[i], "hisi_hdc"), 1);
		assert_int_equal(node_required(families[i], "dvpp_cmdlist"), 0);
	}
}

static void test_shared_nodes_310b(void **state)
{
	(void)state;
	static const char *const expected[] = { "davinci_manager", "svm0", "ts_aisle", "upgrade", "sys", "vdec",
						"vpc", "pngd", "venc", "log_drv", "acodec", "ai", "ao", "vo",
						"hdmi", "dvpp_cmdlist" };
	assert_nodes(NPU_FAMILY_310B, expected, ELEMENTSOF(expected));
	assert_int_equal(node_required(NPU_FAMILY_310B, "davinci_manager"), 1);
	assert_int_equal(node_required(NPU_FAMILY_310B, "devmm_svm"), -1);
	assert_int_equal(node_required(NPU_FAMILY_310B, "hisi_hdc"), -1);
}

static void test_shared_nodes_unknown(void **state)
{
	(void)state;
	static const char *const expected[] = { "davinci_manager", "devmm_svm", "hisi_hdc", "dvpp_cmdlist" };
	assert_nodes(NPU_FAMILY_UNKNOWN, expected, 4);
	assert_nodes((enum npu_family)99, expected, 4);
	/* Only davinci_manager is certain on a chip we could not identify. */
	const struct npu_shared_node *nodes = NULL;
	size_t count = npu_family_shared_nodes(NPU_FAMILY_UNKNOWN, &nodes);
	for (size_t i = 0; i < count; i++)
		assert_int_equal(nodes[i].required, strcmp(nodes[i].name, "davinci_manager") == 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_910b_needs_a_digit), cmocka_unit_test(test_910),
		cmocka_unit_test(test_a3_by_name),	   cmocka_unit_test(test_a3_by_board_id),
		cmocka_unit_test(test_310_family),	   cmocka_unit_test(test_unknown),
		cmocka_unit_test(test_names),		   cmocka_unit_test(test_shared_nodes_common),
		cmocka_unit_test(test_shared_nodes_310b),  cmocka_unit_test(test_shared_nodes_unknown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
