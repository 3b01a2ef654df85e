/* SPDX-License-Identifier: Apache-2.0 */
/* Fuzzes the rank-table builder (hccl/ranktable.c), which has no parser of
 * its own: the bytes are decoded into a group of members (families, pod
 * indexes, nodes, host addresses, chips with device ids, addresses good,
 * bad and shared, links, super pod information), small enough that
 * collisions are frequent. Every table the builder writes must pass the
 * independent checker of HCCL's documented rules
 * (tests/support/ranktable_check.c) with one rank per chip given, and be
 * the same whatever order the members come in; every refusal must be one
 * of the documented errors with a one-line reason. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hccl/ranktable.h"
#include "support/ranktable_check.h"

#define MEMBERS 12
#define CHIPS (HCCL_RANKTABLE_MAX_CHIPS + 1)

struct bytes {
	const uint8_t *p;
	size_t n;
};

/* The next byte, 0 once they run out. */
static unsigned next(struct bytes *b)
{
	if (b->n == 0)
		return 0;
	b->n--;
	return *b->p++;
}

static const char *const families[] = { "910", "910B", "A3", "910_93", "310P" };
static const char *const servers[] = {
	"node-0", "node-1", "node-2", "node-3", "", "node 5",
	"node-6-with-a-name-longer-than-the-sixty-four-characters-hccl-takes",
};
static const char *const hosts[] = { NULL, "192.0.2.1", "192.0.2.2", "fd00::1", "300.1.1.1" };

struct group {
	struct hccl_member members[MEMBERS];
	struct hccl_chip chips[MEMBERS][CHIPS];
	char ips[MEMBERS][CHIPS][48];
	size_t n, n_chips;
	const char *family;
};

static void decode_chip(struct bytes *b, struct hccl_chip *c, char *ip, size_t ip_size)
{
	unsigned id = next(b), mode = next(b), link = next(b), sp = next(b), sdid = next(b);
	unsigned a = mode >> 2;
	*c = (struct hccl_chip){
		.device_id = id % 8,
		.link = (enum hccl_link)(link % 4), /* 3 is none of them */
		.has_super_pod = sp & 1,
		.super_pod_id = (sp >> 1) & 1,
		.server_index = (sp >> 2) & 3,
		.sdid = sdid % 16,
	};
	switch (mode % 4) {
	case 1:
		snprintf(ip, ip_size, "10.0.%u.%u", a / 8, a % 8);
		break;
	case 2:
		snprintf(ip, ip_size, "fd00::%x", a);
		break;
	case 3:
		snprintf(ip, ip_size, "%s", a & 1 ? "fd00:::1" : "10.0.0");
		break;
	default:
		return;
	}
	c->device_ip = ip;
}

static void decode(struct bytes *b, struct group *g)
{
	g->family = families[next(b) % 5];
	g->n = next(b) % MEMBERS;
	for (size_t i = 0; i < g->n; i++) {
		struct hccl_member *m = &g->members[i];
		unsigned pod = next(b), server = next(b), host = next(b), family = next(b), chips = next(b);
		*m = (struct hccl_member){
			.pod_index = pod % 16,
			.server_id = servers[server % (sizeof(servers) / sizeof(servers[0]))],
			.host_ip = hosts[host % 5],
			.family = family % 8 == 7 ? families[(family >> 3) % 5] : g->family,
			.chips = g->chips[i],
			.n_chips = chips == 255 ? CHIPS : chips % 6,
		};
		for (size_t c = 0; c < m->n_chips; c++)
			decode_chip(b, &g->chips[i][c], g->ips[i][c], sizeof(g->ips[i][c]));
		g->n_chips += m->n_chips;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct bytes b = { data, size };
	struct group *g = calloc(1, sizeof(*g));
	struct hccl_member reversed[MEMBERS];
	struct ranktable_facts facts;
	char *json = NULL, *again = NULL, why[256] = "", check_why[256];
	if (!g)
		return 0;
	decode(&b, g);
	int r = hccl_ranktable_build(g->members, g->n, &json, why, sizeof(why));
	if (r == 0) {
		/* A table has one family: the first member's is every member's. */
		const char *family = g->members[0].family;
		family = strcmp(family, "910_93") == 0 ? "A3" : family;
		if (ranktable_check(json, family, &facts, check_why, sizeof(check_why)) != 0) {
			fprintf(stderr, "the checker refuses: %s\n%s", check_why, json);
			abort();
		}
		if (facts.devices != g->n_chips || facts.servers > g->n)
			abort();
	} else if ((r != -EINVAL && r != -EEXIST && r != -ENETDOWN && r != -EOPNOTSUPP && r != -E2BIG &&
		    r != -ENOMEM) ||
		   !why[0] || strchr(why, '\n') || json) {
		abort();
	}
	/* The members in the other order: the same table, or a refusal again. */
	for (size_t i = 0; i < g->n; i++)
		reversed[i] = g->members[g->n - 1 - i];
	int r2 = hccl_ranktable_build(reversed, g->n, &again, why, sizeof(why));
	if ((r == 0) != (r2 == 0) || (r == 0 && strcmp(json, again) != 0))
		abort();
	free(again);
	free(json);
	free(g);
	return 0;
}
