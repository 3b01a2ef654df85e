/* SPDX-License-Identifier: Apache-2.0 */
/* --dra-chips (npu/chip_select.c): what it accepts and refuses, which chips
 * it has, and a split that gives every device to exactly one side, a vNPU
 * to its chip's. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "npu/chip_select.h"
#include "npu/inventory.h"

static struct npu_chip chip(uint32_t phy, enum npu_family family)
{
	return (struct npu_chip){ .phy_id = phy, .family = family };
}

static void test_parse(void **state)
{
	(void)state;
	struct npu_chip_select s;
	char why[160];
	assert_int_equal(npu_chip_select_parse("all", &s, why, sizeof(why)), 0);
	assert_true(s.all);
	assert_true(npu_chip_select_has(&s, &(struct npu_chip){ .phy_id = 77 }));

	assert_int_equal(npu_chip_select_parse("0-3,6,310p", &s, why, sizeof(why)), 0);
	assert_false(s.all);
	assert_true(npu_chip_select_has(&s, &(struct npu_chip){ .phy_id = 0, .family = NPU_FAMILY_910B }));
	assert_true(npu_chip_select_has(&s, &(struct npu_chip){ .phy_id = 3, .family = NPU_FAMILY_910B }));
	assert_false(npu_chip_select_has(&s, &(struct npu_chip){ .phy_id = 4, .family = NPU_FAMILY_910B }));
	assert_true(npu_chip_select_has(&s, &(struct npu_chip){ .phy_id = 6, .family = NPU_FAMILY_910B }));
	assert_true(npu_chip_select_has(&s, &(struct npu_chip){ .phy_id = 9, .family = NPU_FAMILY_310P }));
	/* A chip whose family is unknown is had by its id only. */
	assert_false(npu_chip_select_has(&s, &(struct npu_chip){ .phy_id = 9 }));

	static const struct {
		const char *text, *why;
		int r;
	} bad[] = {
		{ "", "an entry is empty", -EINVAL },
		{ "1,", "an entry is empty", -EINVAL },
		{ "1,all", "'all' stands alone", -EINVAL },
		{ "3-1", "'3-1' runs backwards", -EINVAL },
		{ "npu-1", "'npu-1' is not a physical id", -EINVAL },
		{ "-1", "'-1' is not a physical id", -EINVAL },
		{ "1-", "'1-' is not a physical id", -EINVAL },
		{ "910X", "'910X' is not a physical id", -EINVAL },
		{ "99999999999", "'99999999999' is not a physical id", -EINVAL },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		why[0] = '\0';
		assert_int_equal(npu_chip_select_parse(bad[i].text, &s, why, sizeof(why)), bad[i].r);
		if (!strstr(why, bad[i].why))
			fail_msg("'%s': %s", bad[i].text, why);
	}
	char many[512] = "0";
	for (int i = 1; i <= NPU_CHIP_SELECT_MAX_ENTRIES; i++)
		snprintf(many + strlen(many), sizeof(many) - strlen(many), ",%d", i);
	assert_int_equal(npu_chip_select_parse(many, &s, why, sizeof(why)), -E2BIG);
}

static void test_split(void **state)
{
	(void)state;
	struct npu_snapshot *snap = npu_snapshot_new(5), *in, *out;
	assert_non_null(snap);
	for (uint32_t i = 0; i < 4; i++) {
		struct npu_device *d = &snap->devices[i];
		d->kind = NPU_DEVICE_CHIP;
		d->chip = chip(i, i == 3 ? NPU_FAMILY_310P : NPU_FAMILY_910B);
		snprintf(d->id, sizeof(d->id), "npu-%u", i);
		d->healthy = i != 1;
	}
	/* A vNPU of chip 3 goes where chip 3 goes, whatever its own id. */
	struct npu_device *v = &snap->devices[4];
	v->kind = NPU_DEVICE_VNPU;
	v->chip = chip(3, NPU_FAMILY_310P);
	v->vnpu = (struct npu_vnpu){ .id = 148, .phy_id = 3 };
	snprintf(v->id, sizeof(v->id), "vnpu-148");
	v->healthy = true;
	snap->healthy = 4;

	struct npu_chip_select s;
	char why[160];
	assert_int_equal(npu_chip_select_parse("1,310P", &s, why, sizeof(why)), 0);
	assert_int_equal(npu_snapshot_split(snap, &s, &in, &out), 0);
	assert_int_equal(in->count, 3);
	assert_string_equal(in->devices[0].id, "npu-1");
	assert_string_equal(in->devices[1].id, "npu-3");
	assert_string_equal(in->devices[2].id, "vnpu-148");
	assert_int_equal(in->healthy, 2);
	assert_int_equal(out->count, 2);
	assert_string_equal(out->devices[0].id, "npu-0");
	assert_string_equal(out->devices[1].id, "npu-2");
	assert_int_equal(out->healthy, 2);
	npu_snapshot_unref(in);
	npu_snapshot_unref(out);
	npu_snapshot_unref(snap);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse),
		cmocka_unit_test(test_split),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
