/* SPDX-License-Identifier: Apache-2.0 */
#include "node/topology.h"

#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

/* What a device is to this request. */
enum slot {
	SLOT_NONE,     /* not offered */
	SLOT_OFFERED,  /* offered but Unhealthy in the snapshot: counted, never chosen */
	SLOT_FREE,     /* offered and Healthy: may be chosen */
	SLOT_SPARE,    /* offered, Healthy, its RoCE link down: chosen only when nothing better is left */
	SLOT_CHOSEN,   /* part of the answer (must_include devices start here) */
};

enum grouping {
	GROUP_BY_NODE, /* one group: the node is a full mesh or its topology is unknown */
	GROUP_BY_RING, /* 910 HCCS rings: phy / 4 */
	GROUP_BY_MESH, /* 910B Box16 meshes: phy / 8 */
	GROUP_BY_PAIR, /* A3 die pairs: phy / 2 */
	GROUP_BY_CARD, /* 310P: chip.card_id */
	GROUP_BY_NUMA, /* NUMA node, chips of unknown node together: where the interconnect sets no groups */
};

struct rules {
	enum grouping grouping;
	size_t group_size;  /* requests up to this size stay inside one group */
	bool even_rest;     /* prefer a group left with an even number free (Volcano's 910 rule) */
	bool split_halves;  /* even requests above one group take half from each of two */
	bool numa_first;    /* the rules inside one NUMA node first, when one can hold the request */
};

struct group {
	long key;      /* ring, mesh, pair or card number: orders ties */
	uint16_t free; /* devices still free */
	uint16_t must; /* must_include devices */
	bool touched;  /* the answer already holds a device of it */
};

struct chooser {
	const struct npu_snapshot *snap;
	uint8_t slot[NPU_MAX_CHIPS];
	uint16_t group_of[NPU_MAX_CHIPS];
	struct group groups[NPU_MAX_CHIPS];
	size_t n_groups;
	size_t n_must;
	size_t n_chosen;
	size_t n_spare;
};

/* The family every chip shares; a mixed node gets no topology rules, nor
 * do vNPUs, several of which share a chip and its place in the groups. */
static enum npu_family node_family(const struct npu_snapshot *snap)
{
	if (snap->count == 0)
		return NPU_FAMILY_UNKNOWN;
	enum npu_family family = snap->devices[0].chip.family;
	for (size_t i = 0; i < snap->count; i++)
		if (snap->devices[i].chip.family != family || snap->devices[i].kind == NPU_DEVICE_VNPU)
			return NPU_FAMILY_UNKNOWN;
	return family;
}

/* The groups a family's interconnect makes (GROUP_BY_NODE: none), whatever
 * the node's size. */
static enum grouping family_grouping(enum npu_family family)
{
	switch (family) {
	case NPU_FAMILY_910:
		return GROUP_BY_RING;
	case NPU_FAMILY_910B:
		return GROUP_BY_MESH;
	case NPU_FAMILY_A3:
		return GROUP_BY_PAIR;
	case NPU_FAMILY_310P:
		return GROUP_BY_CARD;
	case NPU_FAMILY_UNKNOWN:
	case NPU_FAMILY_310:
	case NPU_FAMILY_310B:
		break;
	}
	return GROUP_BY_NODE;
}

/* The interconnect's groups for chips of one family, chips of them on the node. */
static struct rules interconnect_rules(enum npu_family family, size_t chips)
{
	switch (family_grouping(family)) {
	case GROUP_BY_RING:
		return (struct rules){ .grouping = GROUP_BY_RING, .group_size = 4, .even_rest = true };
	case GROUP_BY_MESH:
		/* Atlas 800T/800I A2 (8 chips) is one full mesh; only the Box16
		 * joins two meshes. */
		if (chips <= 8)
			break;
		return (struct rules){ .grouping = GROUP_BY_MESH, .group_size = 8, .split_halves = true };
	case GROUP_BY_PAIR:
		return (struct rules){ .grouping = GROUP_BY_PAIR, .group_size = 2 };
	case GROUP_BY_CARD:
		return (struct rules){ .grouping = GROUP_BY_CARD, .group_size = 2 };
	case GROUP_BY_NODE:
	case GROUP_BY_NUMA:
		break;
	}
	return (struct rules){ .grouping = GROUP_BY_NODE };
}

static struct rules family_rules(const struct npu_snapshot *snap)
{
	return interconnect_rules(node_family(snap), snap->count);
}

static bool knows_numa(const struct npu_snapshot *snap)
{
	for (size_t i = 0; i < snap->count; i++)
		if (snap->devices[i].has_numa)
			return true;
	return false;
}

/* NUMA nodes only matter where the family's rules leave room: they replace
 * "one group" (a full mesh or unknown chips) and enclose the 310P cards;
 * rings, Box16 meshes and die pairs keep their rules alone. */
static struct rules rules_for(const struct npu_snapshot *snap)
{
	struct rules rules = family_rules(snap);
	if (!knows_numa(snap))
		return rules;
	if (rules.grouping == GROUP_BY_NODE)
		return (struct rules){ .grouping = GROUP_BY_NUMA, .group_size = SIZE_MAX };
	if (rules.grouping == GROUP_BY_CARD)
		rules.numa_first = true;
	return rules;
}

static long group_key(enum grouping grouping, const struct npu_device *d)
{
	switch (grouping) {
	case GROUP_BY_RING:
		return d->chip.phy_id / 4;
	case GROUP_BY_MESH:
		return d->chip.phy_id / 8;
	case GROUP_BY_PAIR:
		return d->chip.phy_id / 2;
	case GROUP_BY_CARD:
		return d->chip.card_id;
	case GROUP_BY_NUMA:
		/* Unknown sorts last, so that ties go to a known node. */
		return d->has_numa ? (long)d->numa_node : LONG_MAX;
	case GROUP_BY_NODE:
		break;
	}
	return 0;
}

int topology_interconnect(const struct npu_device *device, struct topology_group *ret_group)
{
	/* The chip's own family and ids alone decide: the other chips of the
	 * node (a mixed node, the chips a front end does not serve, vNPUs
	 * carved from some of them) change no chip's group. A 910B chip's mesh
	 * is phy / 8: the one full mesh of an Atlas 800 A2 (phy 0-7) and the two
	 * of a Box16 alike. */
	static const char *const kinds[] = {
		[GROUP_BY_RING] = "hccs-ring",
		[GROUP_BY_MESH] = "hccs-mesh",
		[GROUP_BY_PAIR] = "die-pair",
		[GROUP_BY_CARD] = "card",
	};
	enum grouping grouping = family_grouping(device->chip.family);
	if (device->kind != NPU_DEVICE_CHIP || grouping == GROUP_BY_NODE)
		return -ENOENT;
	long key = group_key(grouping, device);
	if (key < 0)
		return -ENOENT;
	*ret_group = (struct topology_group){ .kind = kinds[grouping], .index = key };
	return 0;
}

static int find_index(const struct npu_snapshot *snap, const char *id, size_t *ret_index)
{
	const struct npu_device *d = npu_snapshot_find(snap, id);
	if (!d)
		return -ENOENT;
	*ret_index = (size_t)(d - snap->devices);
	return 0;
}

/* Groups the devices in play; the snapshot is sorted by phy id, so groups
 * of phy-derived keys come out in ascending order. */
static void build_groups(struct chooser *c, enum grouping grouping)
{
	for (size_t i = 0; i < c->snap->count; i++) {
		if (c->slot[i] != SLOT_FREE && c->slot[i] != SLOT_CHOSEN)
			continue;
		long key = group_key(grouping, &c->snap->devices[i]);
		size_t g = 0;
		while (g < c->n_groups && c->groups[g].key != key)
			g++;
		if (g == c->n_groups)
			c->groups[c->n_groups++] = (struct group){ .key = key };
		c->group_of[i] = (uint16_t)g;
		if (c->slot[i] == SLOT_FREE) {
			c->groups[g].free++;
		} else {
			c->groups[g].must++;
			c->groups[g].touched = true;
		}
	}
}

/* Moves up to n free devices of group g, lowest phy first, into the answer. */
static void take(struct chooser *c, size_t g, size_t n)
{
	for (size_t i = 0; i < c->snap->count && n > 0; i++) {
		if (c->slot[i] != SLOT_FREE || c->group_of[i] != g)
			continue;
		c->slot[i] = SLOT_CHOSEN;
		c->groups[g].free--;
		c->groups[g].touched = true;
		c->n_chosen++;
		n--;
	}
}

/* The whole answer inside one group that holds every must_include device;
 * false when no group can. */
static bool place_in_one_group(struct chooser *c, const struct rules *rules, size_t size)
{
	size_t best = SIZE_MAX, best_rest = 0;
	for (size_t g = 0; g < c->n_groups; g++) {
		const struct group *gr = &c->groups[g];
		size_t have = (size_t)gr->free + gr->must;
		if (gr->must != c->n_must || have < size)
			continue;
		size_t rest = have - size;
		bool better;
		if (best == SIZE_MAX)
			better = true;
		else if (rules->even_rest && rest % 2 != best_rest % 2)
			better = rest % 2 == 0;
		else
			better = rest < best_rest || (rest == best_rest && gr->key < c->groups[best].key);
		if (better) {
			best = g;
			best_rest = rest;
		}
	}
	if (best == SIZE_MAX)
		return false;
	take(c, best, size - c->n_chosen);
	return true;
}

/* Half of the answer from each of exactly two groups (Box16 meshes). */
static bool place_halves(struct chooser *c, size_t size)
{
	size_t half = size / 2;
	if (c->n_groups != 2)
		return false;
	for (size_t g = 0; g < 2; g++)
		if (c->groups[g].must > half || (size_t)c->groups[g].free + c->groups[g].must < half)
			return false;
	for (size_t g = 0; g < 2; g++)
		take(c, g, half - c->groups[g].must);
	return true;
}

/* Whether group g is a better next pick than other while need devices are
 * missing: groups the answer already touches first (fullest first), then an
 * untouched group that holds the rest (tightest fit, keeping bigger groups
 * whole), then the fullest untouched group. */
static bool pick_before(const struct chooser *c, size_t g, size_t other, size_t need)
{
	const struct group *a = &c->groups[g], *b = &c->groups[other];
	int class_a = a->touched ? 0 : a->free >= need ? 1 : 2;
	int class_b = b->touched ? 0 : b->free >= need ? 1 : 2;
	if (class_a != class_b)
		return class_a < class_b;
	if (a->free != b->free)
		return class_a == 1 ? a->free < b->free : a->free > b->free;
	return a->key < b->key;
}

/* Best effort: as few groups as possible. */
static void place_fewest_groups(struct chooser *c, size_t size)
{
	while (c->n_chosen < size) {
		size_t need = size - c->n_chosen, best = SIZE_MAX;
		for (size_t g = 0; g < c->n_groups; g++)
			if (c->groups[g].free > 0 && (best == SIZE_MAX || pick_before(c, g, best, need)))
				best = g;
		if (best == SIZE_MAX)
			return; /* only Unhealthy devices are left */
		take(c, best, need);
	}
}

/* A request larger than one group (310P: more chips than a card has)
 * inside one NUMA node: among the nodes that hold every must_include device
 * and enough free chips, the one left with the fewest free chips (ties to
 * the lower node), and there as few groups as possible. False, with c
 * untouched, when no node can hold it. Smaller requests need no NUMA step:
 * one group (a card) never spans two NUMA nodes. */
static bool place_in_one_numa_node(struct chooser *c, const struct rules *rules, size_t size)
{
	struct chooser inner = *c;
	build_groups(&inner, GROUP_BY_NUMA);
	size_t best = SIZE_MAX;
	for (size_t g = 0; g < inner.n_groups; g++) {
		const struct group *gr = &inner.groups[g];
		if (gr->must != c->n_must || (size_t)gr->free + gr->must < size)
			continue;
		if (best == SIZE_MAX || gr->free < inner.groups[best].free ||
		    (gr->free == inner.groups[best].free && gr->key < inner.groups[best].key))
			best = g;
	}
	if (best == SIZE_MAX)
		return false;

	/* The other nodes' free chips are out of reach; then the family's groups. */
	for (size_t i = 0; i < c->snap->count; i++)
		if (inner.slot[i] == SLOT_FREE && inner.group_of[i] != best)
			inner.slot[i] = SLOT_OFFERED;
	inner.n_groups = 0;
	build_groups(&inner, rules->grouping);
	place_fewest_groups(&inner, size);
	*c = inner;
	return true;
}

int topology_choose(const struct npu_snapshot *snap, const char *const available[], size_t n_available,
		    const char *const must_include[], size_t n_must_include, size_t size,
		    const struct npu_device *ret_chosen[], size_t *ret_count)
{
	struct chooser c = { .snap = snap };
	size_t offered = 0, index;
	int r;

	if (size == 0)
		return -EINVAL;
	if (n_available > NPU_MAX_CHIPS || n_must_include > NPU_MAX_CHIPS || snap->count > NPU_MAX_CHIPS)
		return -E2BIG;
	for (size_t i = 0; i < n_must_include; i++) {
		if ((r = find_index(snap, must_include[i], &index)) < 0)
			return r;
		if (c.slot[index] == SLOT_NONE) {
			c.slot[index] = SLOT_CHOSEN;
			c.n_must++;
			offered++;
		}
	}
	for (size_t i = 0; i < n_available; i++) {
		if ((r = find_index(snap, available[i], &index)) < 0)
			return r;
		if (c.slot[index] == SLOT_NONE) {
			const struct npu_device *d = &snap->devices[index];
			c.slot[index] = !d->healthy			 ? SLOT_OFFERED
					: d->net.link == NPU_LINK_DOWN ? SLOT_SPARE
								       : SLOT_FREE;
			c.n_spare += c.slot[index] == SLOT_SPARE;
			offered++;
		}
	}
	if (c.n_must > size)
		return -EINVAL;
	if (size > offered)
		return -ERANGE;
	c.n_chosen = c.n_must;

	const struct rules rules = rules_for(snap);
	bool numa_placed = rules.numa_first && c.n_chosen < size && size > rules.group_size &&
			   place_in_one_numa_node(&c, &rules, size);
	if (c.n_chosen < size && !numa_placed) {
		build_groups(&c, rules.grouping);
		bool placed = false;
		if (size <= rules.group_size)
			placed = place_in_one_group(&c, &rules, size);
		if (!placed && rules.split_halves && size % 2 == 0 && size > rules.group_size)
			placed = place_halves(&c, size);
		if (!placed)
			place_fewest_groups(&c, size);
	}

	/* Chips whose RoCE link is down serve a single-node pod as well as
	 * any, but a multi-node job cannot use them: they fill up only what
	 * the others could not, lowest phy first. */
	for (size_t i = 0; i < snap->count && c.n_spare && c.n_chosen < size; i++)
		if (c.slot[i] == SLOT_SPARE) {
			c.slot[i] = SLOT_CHOSEN;
			c.n_chosen++;
		}
	size_t n = 0;
	for (size_t i = 0; i < snap->count; i++)
		if (c.slot[i] == SLOT_CHOSEN)
			ret_chosen[n++] = &snap->devices[i];
	*ret_count = n;
	return 0;
}
