/* SPDX-License-Identifier: Apache-2.0 */
/* Topology-aware choice (node/topology.c) on hand-built snapshots: 910
 * rings with Volcano's ring preference, 910B full mesh and Box16 meshes, A3
 * die pairs (a whole free pair over two half-taken ones), 310P cards, lowest
 * phy ids elsewhere; NUMA nodes where those rules set no groups (the
 * tightest node, then as few as possible; 310P requests larger than a card
 * in one node), ignored by rings, meshes and pairs; must_include, Unhealthy
 * offers, best effort for the sizes the rules call invalid, and the errors
 * with nothing written. Lists are written
 * as phy ids ("0-3,6"), the devices being "npu-<phy>". */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "base/macro.h"
#include "node/topology.h"

#define LIST_MAX (NPU_MAX_CHIPS + 8)

/* count chips phy 0..count-1 of one family, all Healthy, card = phy. */
static struct npu_snapshot *make_snapshot(enum npu_family family, unsigned count)
{
	struct npu_snapshot *s = npu_snapshot_new(count);
	assert_non_null(s);
	s->healthy = count;
	for (unsigned i = 0; i < count; i++) {
		struct npu_device *d = &s->devices[i];
		snprintf(d->id, sizeof(d->id), "npu-%u", i);
		d->chip.phy_id = i;
		d->chip.card_id = (int)i;
		d->chip.family = family;
		d->healthy = true;
	}
	return s;
}

static void set_unhealthy(struct npu_snapshot *s, unsigned phy)
{
	s->devices[phy].healthy = false;
	s->devices[phy].fault = NPU_FAULT_HEALTH_LEVEL;
	s->healthy--;
}

/* 310P cards of two chips: phy 0 and 1 on card 0, 2 and 3 on card 1, ... */
static void cards_of_two(struct npu_snapshot *s)
{
	for (size_t i = 0; i < s->count; i++)
		s->devices[i].chip.card_id = (int)(i / 2);
}

/* IDs from "0-3,6" (each "npu-<phy>"); "" is no IDs. */
struct id_list {
	char ids[LIST_MAX][NPU_DEVICE_ID_MAX];
	const char *ptrs[LIST_MAX];
	size_t n;
};

static unsigned number(const char **p)
{
	char *end;
	unsigned long v = strtoul(*p, &end, 10);
	assert_true(end != *p && v < 100000);
	*p = end;
	return (unsigned)v;
}

static void parse_list(const char *text, struct id_list *l)
{
	l->n = 0;
	for (const char *p = text; *p;) {
		unsigned from = number(&p), to = from;
		if (*p == '-') {
			p++;
			to = number(&p);
		}
		for (unsigned v = from; v <= to; v++) {
			assert_true(l->n < LIST_MAX);
			snprintf(l->ids[l->n], sizeof(l->ids[l->n]), "npu-%u", v);
			l->ptrs[l->n] = l->ids[l->n];
			l->n++;
		}
		if (*p == ',')
			p++;
	}
}

/* topology_choose's answer as a phy list ("0,1"), or "error <errno name>". */
static const char *choose(const struct npu_snapshot *s, const char *available, const char *must, size_t size)
{
	static struct id_list avail, mandatory;
	static char out[2048];
	const struct npu_device *chosen[LIST_MAX];
	size_t n = 12345;

	parse_list(available, &avail);
	parse_list(must, &mandatory);
	for (size_t i = 0; i < LIST_MAX; i++)
		chosen[i] = NULL;
	int r = topology_choose(s, avail.ptrs, avail.n, mandatory.ptrs, mandatory.n, size, chosen, &n);
	if (r < 0) {
		/* Nothing is written on failure. */
		assert_int_equal(n, 12345);
		for (size_t i = 0; i < LIST_MAX; i++)
			assert_null(chosen[i]);
		snprintf(out, sizeof(out), "error %s",
			 r == -EINVAL   ? "EINVAL"
			 : r == -E2BIG  ? "E2BIG"
			 : r == -ENOENT ? "ENOENT"
			 : r == -ERANGE ? "ERANGE"
					: "other");
		return out;
	}
	assert_int_equal(r, 0);
	assert_true(n <= size);
	size_t used = 0;
	out[0] = '\0';
	for (size_t i = 0; i < n; i++) {
		assert_non_null(chosen[i]);
		/* In phy order, without repeats. */
		if (i > 0)
			assert_true(chosen[i - 1]->chip.phy_id < chosen[i]->chip.phy_id);
		used += (size_t)snprintf(out + used, sizeof(out) - used, "%s%u", i ? "," : "", chosen[i]->chip.phy_id);
		assert_true(used < sizeof(out));
	}
	for (size_t i = n; i < LIST_MAX; i++)
		assert_null(chosen[i]);
	return out;
}

/* One call of choose and the answer it must give. */
struct choice {
	const char *available, *must;
	size_t size;
	const char *want;
};

/* Each case in turn on s; a wrong answer names the case. */
static void expect_choices(const struct npu_snapshot *s, const struct choice *cases, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		const struct choice *c = &cases[i];
		const char *got = choose(s, c->available, c->must, c->size);
		if (strcmp(got, c->want) != 0)
			fail_msg("choose(\"%s\", \"%s\", %zu): \"%s\" != \"%s\"", c->available, c->must, c->size, got,
				 c->want);
	}
}

/* --- 910: two HCCS rings ------------------------------------------------ */

static void test_910_single_chip_follows_volcano(void **state)
{
	(void)state;
	struct npu_snapshot *s = make_snapshot(NPU_FAMILY_910, 8);
	static const struct choice cases[] = {
		/* All free: both rings have 4, the lower ring wins. */
		{ "0-7", "", 1, "0" },
		/* A ring with 1 free beats a ring with 3. */
		{ "0-2,5", "", 1, "5" },
		/* 3 beats 2 (it leaves an even number free). */
		{ "0,1,5-7", "", 1, "5" },
		{ "1-3,6,7", "", 1, "1" },
		/* 2 beats 4. */
		{ "2,3,4-7", "", 1, "2" },
		{ "0-3,6,7", "", 1, "6" },
		/* 1 beats 2 and 4 as well. */
		{ "0-3,7", "", 1, "7" },
	};
	expect_choices(s, cases, ELEMENTSOF(cases));
	free(s);
}

static void test_910_pairs_and_quads_follow_volcano(void **state)
{
	(void)state;
	struct npu_snapshot *s = make_snapshot(NPU_FAMILY_910, 8);
	static const struct choice cases[] = {
		/* For 2: a ring with 2 free, then 4, then 3. */
		{ "0-2,4,5", "", 2, "4,5" },
		{ "1-3,4-7", "", 2, "4,5" },
		{ "0-3,5-7", "", 2, "0,1" },
		{ "1-3,7", "", 2, "1,2" },
		/* For 4: a ring with all 4 free, never spread when one has them. */
		{ "1-3,4-7", "", 4, "4,5,6,7" },
		{ "0-7", "", 4, "0,1,2,3" },
		/* 8 takes the node. */
		{ "0-7", "", 8, "0,1,2,3,4,5,6,7" },
	};
	expect_choices(s, cases, ELEMENTSOF(cases));
	free(s);
}

static void test_910_invalid_sizes_get_best_effort(void **state)
{
	(void)state;
	struct npu_snapshot *s = make_snapshot(NPU_FAMILY_910, 8);
	static const struct choice cases[] = {
		/* 3 is no training topology, but one ring still holds it: the tightest. */
		{ "0-7", "", 3, "0,1,2" },
		{ "0,1,4-6", "", 3, "4,5,6" },
		{ "0-3,5-7", "", 3, "5,6,7" },
		/* 5, 6 and 7 need both rings: the fuller one whole, the rest from the other. */
		{ "0-7", "", 5, "0,1,2,3,4" },
		{ "0-2,4-7", "", 6, "0,1,4,5,6,7" },
		{ "0-7", "", 7, "0,1,2,3,4,5,6" },
		/* Valid sizes no ring can hold: spread rather than fail. */
		{ "0,4", "", 2, "0,4" },
		{ "0-2,4-6", "", 4, "0,1,2,4" },
	};
	expect_choices(s, cases, ELEMENTSOF(cases));
	free(s);
}

static void test_910_must_include(void **state)
{
	(void)state;
	struct npu_snapshot *s = make_snapshot(NPU_FAMILY_910, 8);
	static const struct choice cases[] = {
		/* The ring of the chosen chip, though the other ring is emptier. */
		{ "0-7", "5", 2, "4,5" },
		{ "1-7", "0", 4, "0,1,2,3" },
		/* Listed in both lists it counts once. */
		{ "0-7", "6", 2, "4,6" },
		/* The kubelet chose them already: all of them, even across rings. */
		{ "0-7", "0,4", 4, "0,1,2,4" },
		{ "0-7", "3,5", 2, "3,5" },
		/* must_include need not be listed in available. */
		{ "0,1,2", "3", 4, "0,1,2,3" },
	};
	expect_choices(s, cases, ELEMENTSOF(cases));
	free(s);
}

/* --- 910B: full mesh, Box16 meshes -------------------------------------- */

static void test_910b_full_mesh_lowest_ids(void **state)
{
	(void)state;
	struct npu_snapshot *s = make_snapshot(NPU_FAMILY_910B, 8);
	static const struct choice cases[] = {
		{ "7,3,5,1", "", 2, "1,3" },
		{ "1,3,5,7", "6", 3, "1,3,6" },
		{ "0-7", "", 7, "0,1,2,3,4,5,6" },
	};
	expect_choices(s, cases, ELEMENTSOF(cases));
	free(s);
}

/* Chips whose RoCE link is down come last: only to fill up what the others
 * cannot; a link merely unknown counts as any other. */
static void test_link_down_last(void **state)
{
	(void)state;
	struct npu_snapshot *s = make_snapshot(NPU_FAMILY_910B, 8);
	s->devices[0].net.link = NPU_LINK_DOWN;
	s->devices[2].net.link = NPU_LINK_DOWN;
	s->devices[1].net.link = NPU_LINK_UP;
	static const struct choice cases[] = {
		{ "0-7", "", 4, "1,3,4,5" },
		{ "0-7", "", 7, "0,1,3,4,5,6,7" },
		{ "0-3", "", 3, "0,1,3" },
		{ "0-3", "2", 2, "1,2" },
		{ "0,2", "", 2, "0,2" },
	};
	expect_choices(s, cases, ELEMENTSOF(cases));
	free(s);
}

static void test_910b_box16_meshes(void **state)
{
	(void)state;
	struct npu_snapshot *s = make_snapshot(NPU_FAMILY_910B, 16);
	static const struct choice cases[] = {
		/* Up to 8 inside one mesh: the one with the fewest free that fits. */
		{ "0-15", "", 8, "0,1,2,3,4,5,6,7" },
		{ "2-7,8-15", "", 4, "2,3,4,5" },
		{ "2-7,8-15", "", 7, "8,9,10,11,12,13,14" },
		{ "7,8-15", "", 1, "7" },
		/* Even sizes above 8: half from each mesh. */
		{ "0-15", "", 10, "0,1,2,3,4,8,9,10,11,12" },
		{ "2-7,8-15", "", 12, "2,3,4,5,6,7,8,9,10,11,12,13" },
		{ "0-15", "", 16, "0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15" },
		{ "0-15", "9,10,11,12,13,14", 12, "0,1,2,3,4,5,9,10,11,12,13,14" },
		/* A split the meshes cannot give, and odd sizes: best effort. */
		{ "3-7,8-15", "", 12, "3,4,5,6,8,9,10,11,12,13,14,15" },
		{ "0-15", "", 9, "0,1,2,3,4,5,6,7,8" },
		{ "0-15", "", 15, "0,1,2,3,4,5,6,7,8,9,10,11,12,13,14" },
		/* must_include in one mesh keeps the answer there. */
		{ "0-15", "12", 3, "8,9,12" },
	};
	expect_choices(s, cases, ELEMENTSOF(cases));
	free(s);
}

/* --- A3: die pairs ------------------------------------------------------- */

static void test_a3_whole_pairs(void **state)
{
	(void)state;
	struct npu_snapshot *s = make_snapshot(NPU_FAMILY_A3, 16);
	static const struct choice cases[] = {
		/* Free {0,2,3,4}: only {2,3} is a whole free pair. */
		{ "0,2,3,4", "", 2, "2,3" },
		{ "0-15", "", 2, "0,1" },
		{ "0,2-5,7", "", 4, "2,3,4,5" },
		{ "1,3,4,6-9,11", "", 4, "6,7,8,9" },
		{ "0-15", "", 16, "0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15" },
		/* A die whose pair-mate is taken, keeping whole pairs free. */
		{ "0,2,3,4", "", 1, "0" },
		{ "2-6", "", 1, "6" },
		{ "0-15", "", 1, "0" },
		/* must_include: its pair-mate completes the pair. */
		{ "0,2,3", "1", 2, "0,1" },
		{ "2,3,5", "4", 2, "4,5" },
	};
	expect_choices(s, cases, ELEMENTSOF(cases));
	free(s);
}

static void test_a3_invalid_sizes_get_best_effort(void **state)
{
	(void)state;
	struct npu_snapshot *s = make_snapshot(NPU_FAMILY_A3, 16);
	static const struct choice cases[] = {
		/* Odd sizes: whole pairs, the odd die from a broken pair. */
		{ "0,2-5", "", 3, "0,2,3" },
		{ "0-15", "", 5, "0,1,2,3,4" },
		/* A whole pair before two broken ones; without one, as few pairs as possible. */
		{ "0,2,4,5", "", 2, "4,5" },
		{ "0,2,4,6", "", 2, "0,2" },
		{ "0,2,4,6,8,9", "", 4, "0,2,8,9" },
	};
	expect_choices(s, cases, ELEMENTSOF(cases));
	free(s);
}

/* --- 310P: cards of two chips -------------------------------------------- */

static void test_310p_stays_on_one_card(void **state)
{
	(void)state;
	struct npu_snapshot *s = make_snapshot(NPU_FAMILY_310P, 8);
	cards_of_two(s);
	static const struct choice cases[] = {
		{ "0,2,3,5", "", 2, "2,3" },
		{ "0-7", "", 2, "0,1" },
		/* A chip whose card-mate is taken. */
		{ "0,1,3", "", 1, "3" },
		{ "0-7", "", 1, "0" },
		/* More than a card: whole cards, then the tightest card for the rest. */
		{ "0,1,3-7", "", 3, "0,1,3" },
		{ "0,2-7", "", 4, "2,3,4,5" },
	};
	expect_choices(s, cases, ELEMENTSOF(cases));
	free(s);

	/* Cards come from the card id, not from the phy ids: here a card holds
	 * phy 0 and 2, the other 1 and 3. */
	s = make_snapshot(NPU_FAMILY_310P, 4);
	s->devices[0].chip.card_id = 7;
	s->devices[1].chip.card_id = 5;
	s->devices[2].chip.card_id = 7;
	s->devices[3].chip.card_id = 5;
	static const struct choice cases2[] = {
		{ "0-3", "", 2, "1,3" },
		{ "0,2,3", "", 2, "0,2" },
		{ "0,1,2", "", 1, "1" },
	};
	expect_choices(s, cases2, ELEMENTSOF(cases2));
	free(s);
}

/* --- other families ------------------------------------------------------ */

static void test_other_families_take_lowest_ids(void **state)
{
	(void)state;
	static const enum npu_family families[] = { NPU_FAMILY_UNKNOWN, NPU_FAMILY_310, NPU_FAMILY_310B };
	for (size_t f = 0; f < ELEMENTSOF(families); f++) {
		struct npu_snapshot *s = make_snapshot(families[f], 12);
		assert_string_equal(choose(s, "9,5,1,11", "", 2), "1,5");
		assert_string_equal(choose(s, "0-11", "10", 3), "0,1,10");
		free(s);
	}

	/* A node that mixes families gets no topology rules. */
	struct npu_snapshot *s = make_snapshot(NPU_FAMILY_910, 8);
	s->devices[7].chip.family = NPU_FAMILY_910B;
	assert_string_equal(choose(s, "1-3,4-7", "", 2), "1,2");
	free(s);
}

/* --- NUMA nodes ---------------------------------------------------------- */

/* Puts the chips of a phy list on a NUMA node. */
static void set_numa(struct npu_snapshot *s, const char *phys, unsigned node)
{
	static struct id_list l;
	parse_list(phys, &l);
	for (size_t i = 0; i < l.n; i++) {
		struct npu_device *d = (struct npu_device *)(uintptr_t)npu_snapshot_find(s, l.ptrs[i]);
		assert_non_null(d);
		d->has_numa = true;
		d->numa_node = node;
	}
}

static void test_numa_nodes_where_no_groups(void **state)
{
	(void)state;
	static const enum npu_family families[] = { NPU_FAMILY_UNKNOWN, NPU_FAMILY_310, NPU_FAMILY_310B,
						    NPU_FAMILY_910B };
	for (size_t f = 0; f < ELEMENTSOF(families); f++) {
		struct npu_snapshot *s = make_snapshot(families[f], 8);
		/* Without NUMA nodes: the lowest ids. */
		assert_string_equal(choose(s, "0,4-7", "", 2), "0,4");
		set_numa(s, "0-3", 0);
		set_numa(s, "4-7", 1);
		static const struct choice cases[] = {
			/* Node 0 cannot hold 2 any more: node 1. */
			{ "0,4-7", "", 2, "4,5" },
			/* Equal nodes: the lower one. */
			{ "0-7", "", 2, "0,1" },
			{ "0-7", "", 4, "0,1,2,3" },
			/* The node left with the fewest free chips that still holds it. */
			{ "0,1,4-6", "", 1, "0" },
			{ "0,1,4-6", "", 2, "0,1" },
			{ "0,1,4-6", "", 3, "4,5,6" },
			/* No node holds it: the fullest, then the tightest for the rest. */
			{ "0,1,4-6", "", 4, "0,4,5,6" },
			{ "0-7", "", 6, "0,1,2,3,4,5" },
			/* must_include decides the node ... */
			{ "0-7", "5", 2, "4,5" },
			/* ... or, across two nodes, the answer fills them first. */
			{ "1-3,5-7", "0,4", 3, "0,1,4" },
		};
		expect_choices(s, cases, ELEMENTSOF(cases));
		free(s);
	}
}

static void test_numa_unknown_chips_are_one_more_node(void **state)
{
	(void)state;
	struct npu_snapshot *s = make_snapshot(NPU_FAMILY_UNKNOWN, 6);
	set_numa(s, "0,1", 1);
	set_numa(s, "4,5", 0);
	static const struct choice cases[] = {
		/* 2 and 3 unknown: a node of their own, last on ties. */
		{ "0-5", "", 2, "4,5" },
		{ "0,2-5", "", 2, "4,5" },
		{ "0,2,3,5", "", 2, "2,3" },
		{ "0-3", "", 1, "0" },
	};
	expect_choices(s, cases, ELEMENTSOF(cases));
	free(s);
}

static void test_numa_encloses_310p_cards(void **state)
{
	(void)state;
	struct npu_snapshot *s = make_snapshot(NPU_FAMILY_310P, 8);
	cards_of_two(s);
	/* Without NUMA nodes: as few cards as possible, the lowest first. */
	assert_string_equal(choose(s, "0-7", "", 4), "0,1,2,3");
	assert_string_equal(choose(s, "0-7", "", 3), "0,1,2");
	/* Cards 0 and 2 on node 0, cards 1 and 3 on node 1. */
	set_numa(s, "0,1,4,5", 0);
	set_numa(s, "2,3,6,7", 1);
	static const struct choice cases[] = {
		{ "0-7", "", 4, "0,1,4,5" },
		{ "0-7", "", 3, "0,1,4" },
		/* Node 0 has 3 free, node 1 4: the tighter one. */
		{ "0-3,5-7", "", 3, "0,1,5" },
		{ "0-3,5-7", "", 4, "2,3,6,7" },
		/* A chip of node 1 already in the answer takes the rest there. */
		{ "0-7", "2", 3, "2,3,6" },
		/* Up to a card's size the card rules alone decide, as before. */
		{ "0-7", "", 2, "0,1" },
		{ "1-7", "", 1, "1" },
		/* No node holds 5: the card rules over the whole node. */
		{ "0-7", "", 5, "0,1,2,3,4" },
	};
	expect_choices(s, cases, ELEMENTSOF(cases));
	free(s);
}

static void test_numa_ignored_by_rings_meshes_and_pairs(void **state)
{
	(void)state;
	/* NUMA nodes across the groups must not pull the answer out of them. */
	struct npu_snapshot *s = make_snapshot(NPU_FAMILY_910, 8);
	set_numa(s, "0,2,4,6", 0);
	set_numa(s, "1,3,5,7", 1);
	assert_string_equal(choose(s, "0-7", "", 2), "0,1");
	assert_string_equal(choose(s, "0-2,5", "", 1), "5");
	free(s);

	s = make_snapshot(NPU_FAMILY_910B, 16);
	set_numa(s, "0-3,8-11", 0);
	set_numa(s, "4-7,12-15", 1);
	assert_string_equal(choose(s, "0-15", "", 8), "0,1,2,3,4,5,6,7");
	free(s);

	s = make_snapshot(NPU_FAMILY_A3, 8);
	set_numa(s, "0,2,4,6", 0);
	set_numa(s, "1,3,5,7", 1);
	assert_string_equal(choose(s, "0,2-4", "", 2), "2,3");
	free(s);
}

/* --- health, must_include alone, errors --------------------------------- */

static void test_unhealthy_offers_are_not_chosen(void **state)
{
	(void)state;
	struct npu_snapshot *s = make_snapshot(NPU_FAMILY_910B, 8);
	set_unhealthy(s, 0);
	set_unhealthy(s, 2);
	static const struct choice cases[] = {
		{ "0-7", "", 2, "1,3" },
		/* Offered but Unhealthy: fewer than asked, the kubelet fills up. */
		{ "0-2", "", 3, "1" },
		/* A must_include device is kept whatever its health. */
		{ "1,3", "2", 2, "1,2" },
	};
	expect_choices(s, cases, ELEMENTSOF(cases));
	free(s);

	s = make_snapshot(NPU_FAMILY_910, 8);
	set_unhealthy(s, 4);
	/* Ring 1 has 3 Healthy chips, ring 0 has 4: 3 is preferred for 1. */
	assert_string_equal(choose(s, "0-7", "", 1), "5");
	free(s);
}

static void test_must_include_alone(void **state)
{
	(void)state;
	struct npu_snapshot *s = make_snapshot(NPU_FAMILY_A3, 16);
	static const struct choice cases[] = {
		{ "0-15", "3,9", 2, "3,9" },
		{ "", "5", 1, "5" },
		{ "0-15", "5,5", 1, "5" },
	};
	expect_choices(s, cases, ELEMENTSOF(cases));
	free(s);
}

static void test_errors_write_nothing(void **state)
{
	(void)state;
	struct npu_snapshot *s = make_snapshot(NPU_FAMILY_910, 8);
	static const struct choice cases[] = {
		{ "0-7", "", 0, "error EINVAL" },
		{ "0-7", "0,1,2", 2, "error EINVAL" },
		{ "0-7,8", "", 1, "error ENOENT" },
		{ "0-7", "99", 1, "error ENOENT" },
		{ "0-3", "", 5, "error ERANGE" },
		{ "", "", 1, "error ERANGE" },
		/* Repeated IDs count once. */
		{ "1,1,1", "", 2, "error ERANGE" },
		{ "1,1,1", "1", 2, "error ERANGE" },
		{ "0-7", "", 9, "error ERANGE" },
	};
	expect_choices(s, cases, ELEMENTSOF(cases));
	/* More IDs than any node has, even repeated ones. */
	char many[8 * (NPU_MAX_CHIPS + 1)] = "";
	size_t used = 0;
	for (unsigned i = 0; i <= NPU_MAX_CHIPS; i++)
		used += (size_t)snprintf(many + used, sizeof(many) - used, "%s%u", i ? "," : "", i % 8);
	assert_true(used < sizeof(many));
	assert_string_equal(choose(s, many, "", 1), "error E2BIG");
	assert_string_equal(choose(s, "0-7", many, 1), "error E2BIG");
	free(s);

	/* An empty snapshot has nothing to offer. */
	s = make_snapshot(NPU_FAMILY_UNKNOWN, 0);
	assert_string_equal(choose(s, "0", "", 1), "error ENOENT");
	assert_string_equal(choose(s, "", "", 1), "error ERANGE");
	free(s);

	/* Unknown IDs that are no "npu-<phy>" at all. */
	s = make_snapshot(NPU_FAMILY_910B, 2);
	const char *odd[] = { "npu-0", "", "npu-1" };
	const struct npu_device *chosen[2] = { NULL, NULL };
	size_t n = 7;
	assert_int_equal(topology_choose(s, odd, 3, NULL, 0, 1, chosen, &n), -ENOENT);
	assert_int_equal(n, 7);
	assert_null(chosen[0]);
	free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_910_single_chip_follows_volcano),
		cmocka_unit_test(test_910_pairs_and_quads_follow_volcano),
		cmocka_unit_test(test_910_invalid_sizes_get_best_effort),
		cmocka_unit_test(test_910_must_include),
		cmocka_unit_test(test_910b_full_mesh_lowest_ids),
		cmocka_unit_test(test_link_down_last),
		cmocka_unit_test(test_910b_box16_meshes),
		cmocka_unit_test(test_a3_whole_pairs),
		cmocka_unit_test(test_a3_invalid_sizes_get_best_effort),
		cmocka_unit_test(test_310p_stays_on_one_card),
		cmocka_unit_test(test_other_families_take_lowest_ids),
		cmocka_unit_test(test_numa_nodes_where_no_groups),
		cmocka_unit_test(test_numa_unknown_chips_are_one_more_node),
		cmocka_unit_test(test_numa_encloses_310p_cards),
		cmocka_unit_test(test_numa_ignored_by_rings_meshes_and_pairs),
		cmocka_unit_test(test_unhealthy_offers_are_not_chosen),
		cmocka_unit_test(test_must_include_alone),
		cmocka_unit_test(test_errors_write_nothing),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
