/* SPDX-License-Identifier: Apache-2.0 */
/* The reset groups of node/reset_group.c on hand-built snapshots: the 910
 * HCCS rings, the 910B 8-chip board, the Box16's 16 chips, the 910B
 * inference boards whose chips are reset alone, the A3 cards and their
 * brother (and no group without it), the 310P card, and the chip alone
 * elsewhere; written as phy lists ("0-3"). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "node/reset_group.h"

/* count chips phy 0..count-1 of one family, card = phy / per_card. */
static struct npu_snapshot *make(enum npu_family family, unsigned count, unsigned per_card)
{
	struct npu_snapshot *s = npu_snapshot_new(count);
	assert_non_null(s);
	for (unsigned i = 0; i < count; i++) {
		struct npu_device *d = &s->devices[i];
		snprintf(d->id, sizeof(d->id), "npu-%u", i);
		d->chip.phy_id = i;
		d->chip.card_id = (int)(i / per_card);
		d->chip.device_id = (int)(i % per_card);
		d->chip.family = family;
		d->healthy = true;
	}
	return s;
}

/* The group of phy as "a,b,c", with its kind in *kind. */
static const char *group(const struct npu_snapshot *s, unsigned phy, int brother, const char **kind)
{
	static char buf[128];
	struct reset_group g;
	assert_int_equal(reset_group_of(s, &s->devices[phy], brother, &g), 0);
	size_t len = 0;
	buf[0] = '\0';
	for (size_t i = 0; i < g.n; i++)
		len += (size_t)snprintf(buf + len, sizeof(buf) - len, "%s%u", i ? "," : "", g.phys[i]);
	*kind = g.kind;
	assert_true(reset_group_has(&g, phy));
	return buf;
}

static void test_910_rings(void **state)
{
	(void)state;
	struct npu_snapshot *s = make(NPU_FAMILY_910, 8, 1);
	const char *kind;
	assert_string_equal(group(s, 2, -1, &kind), "0,1,2,3");
	assert_string_equal(kind, "hccs-ring");
	assert_string_equal(group(s, 5, -1, &kind), "4,5,6,7");
	npu_snapshot_unref(s);
}

static void test_910b_board_and_box16(void **state)
{
	(void)state;
	const char *kind;
	struct npu_snapshot *s = make(NPU_FAMILY_910B, 8, 1);
	assert_string_equal(group(s, 3, -1, &kind), "0,1,2,3,4,5,6,7");
	assert_string_equal(kind, "board");
	npu_snapshot_unref(s);
	/* A node of four 910B chips (a test layout): the board is what is there. */
	s = make(NPU_FAMILY_910B, 4, 1);
	assert_string_equal(group(s, 0, -1, &kind), "0,1,2,3");
	npu_snapshot_unref(s);
	/* Atlas 200T A2 Box16: MindCluster resets all 16 together. */
	s = make(NPU_FAMILY_910B, 16, 1);
	assert_string_equal(group(s, 9, -1, &kind), "0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15");
	assert_string_equal(kind, "box16");
	npu_snapshot_unref(s);
}

static void test_910b_inference_boards_alone(void **state)
{
	(void)state;
	const unsigned boards[] = { 0x28, 0x29, 0x33, 0x3c };
	for (size_t b = 0; b < sizeof(boards) / sizeof(boards[0]); b++) {
		struct npu_snapshot *s = make(NPU_FAMILY_910B, 8, 1);
		for (size_t i = 0; i < s->count; i++) {
			s->devices[i].chip.has_board_id = true;
			s->devices[i].chip.board_id = boards[b];
		}
		const char *kind;
		assert_string_equal(group(s, 6, -1, &kind), "6");
		assert_string_equal(kind, "chip");
		npu_snapshot_unref(s);
	}
	/* Another board id (a training server) keeps the board. */
	struct npu_snapshot *s = make(NPU_FAMILY_910B, 8, 1);
	s->devices[6].chip.has_board_id = true;
	s->devices[6].chip.board_id = 0x22;
	const char *kind;
	assert_string_equal(group(s, 6, -1, &kind), "0,1,2,3,4,5,6,7");
	npu_snapshot_unref(s);
}

static void test_a3_cards_and_brother(void **state)
{
	(void)state;
	struct npu_snapshot *s = make(NPU_FAMILY_A3, 16, 2);
	const char *kind;
	assert_true(reset_group_needs_brother(&s->devices[5]));
	/* phy 5 is die 1 of card 2; DCMI pairs card 2 with card 3. */
	assert_string_equal(group(s, 5, 3, &kind), "4,5,6,7");
	assert_string_equal(kind, "a3-cards");
	/* Without the brother the group is unknown: no reset. */
	struct reset_group g;
	assert_int_equal(reset_group_of(s, &s->devices[5], -1, &g), -ENODATA);
	npu_snapshot_unref(s);
}

static void test_310p_card_and_others_alone(void **state)
{
	(void)state;
	const char *kind;
	struct npu_snapshot *s = make(NPU_FAMILY_310P, 4, 2);
	assert_false(reset_group_needs_brother(&s->devices[3]));
	assert_string_equal(group(s, 3, -1, &kind), "2,3");
	assert_string_equal(kind, "card");
	npu_snapshot_unref(s);
	const enum npu_family alone[] = { NPU_FAMILY_310, NPU_FAMILY_310B, NPU_FAMILY_UNKNOWN };
	for (size_t f = 0; f < 3; f++) {
		s = make(alone[f], 4, 1);
		assert_string_equal(group(s, 1, -1, &kind), "1");
		assert_string_equal(kind, "chip");
		npu_snapshot_unref(s);
	}
}

static void test_errors(void **state)
{
	(void)state;
	struct npu_snapshot *s = make(NPU_FAMILY_910B, 20, 1);
	struct reset_group g = { .n = 99 };
	/* Twenty 910B chips: no layout the table knows. */
	assert_int_equal(reset_group_of(s, &s->devices[0], -1, &g), -E2BIG);
	assert_int_equal(g.n, 99);
	s->devices[1].kind = NPU_DEVICE_VNPU;
	assert_int_equal(reset_group_of(s, &s->devices[1], -1, &g), -EINVAL);
	assert_int_equal(reset_group_of(NULL, &s->devices[0], -1, &g), -EINVAL);
	npu_snapshot_unref(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_910_rings),
		cmocka_unit_test(test_910b_board_and_box16),
		cmocka_unit_test(test_910b_inference_boards_alone),
		cmocka_unit_test(test_a3_cards_and_brother),
		cmocka_unit_test(test_310p_card_and_others_alone),
		cmocka_unit_test(test_errors),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
