/* SPDX-License-Identifier: Apache-2.0 */
/* HCCL's rank table (hccl/ranktable.h): the tables a group of pods gets for
 * each family and layout, the order of its ranks, and every refusal. Every
 * table built here is also held against HCCL's documented rules by
 * tests/support/ranktable_check.c, an independent reading of the pages,
 * which is itself tested on tables transcribed from the pages' examples
 * (tests/fixtures/hccl/) and on broken variants of them. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <json-c/json.h>

#include "base/file.h"
#include "hccl/ranktable.h"
#include "support/ranktable_check.h"

#define FIXTURES TEST_SOURCE_DIR "/fixtures/hccl"

/* A group of members as a test lays it out; heap-allocated, it holds the
 * largest group the builder takes. */
struct group {
	struct hccl_member members[HCCL_RANKTABLE_MAX_MEMBERS + 1];
	struct hccl_chip chips[HCCL_RANKTABLE_MAX_MEMBERS + 1][HCCL_RANKTABLE_MAX_CHIPS + 1];
	char ips[HCCL_RANKTABLE_MAX_MEMBERS + 1][HCCL_RANKTABLE_MAX_CHIPS + 1][48];
	size_t n;
	char why[256];
};

static struct group *group_new(void)
{
	struct group *g = calloc(1, sizeof(*g));
	assert_non_null(g);
	return g;
}

/* Adds pod `pod` on server with n chips, device ids 0..n-1, links up, each
 * with the IPv4 address 10.<pod / 256>.<pod % 256>.<id> when with_ip. */
static struct hccl_member *add(struct group *g, uint32_t pod, const char *server, const char *family, size_t n,
			       bool with_ip)
{
	size_t i = g->n++;
	for (size_t c = 0; c < n; c++) {
		g->chips[i][c] = (struct hccl_chip){ .device_id = (uint32_t)c, .link = HCCL_LINK_UP };
		if (with_ip) {
			snprintf(g->ips[i][c], sizeof(g->ips[i][c]), "10.%u.%u.%zu", pod / 256, pod % 256, c);
			g->chips[i][c].device_ip = g->ips[i][c];
		}
	}
	g->members[i] = (struct hccl_member){
		.pod_index = pod, .server_id = server, .family = family, .chips = g->chips[i], .n_chips = n
	};
	return &g->members[i];
}

/* Gives member i's chips super pod information: super pod sp, server index
 * index, SDIDs from sdid on. */
static void super_pod(struct group *g, size_t i, uint32_t sp, uint32_t index, uint32_t sdid)
{
	for (size_t c = 0; c < g->members[i].n_chips; c++) {
		g->chips[i][c].has_super_pod = true;
		g->chips[i][c].super_pod_id = sp;
		g->chips[i][c].server_index = index;
		g->chips[i][c].sdid = sdid + (uint32_t)c;
	}
}

/* Builds g's table, which must pass the checker for family, and returns it parsed. */
static json_object *build(struct group *g, const char *family, struct ranktable_facts *facts)
{
	char *json = NULL, why[256];
	int r = hccl_ranktable_build(g->members, g->n, &json, g->why, sizeof(g->why));
	if (r != 0)
		fail_msg("build: %d %s", r, g->why);
	assert_non_null(json);
	assert_int_equal(json[strlen(json) - 1], '\n');
	r = ranktable_check(json, family, facts, why, sizeof(why));
	if (r != 0)
		fail_msg("the checker refuses the table: %s\n%s", why, json);
	json_object *root = json_tokener_parse(json);
	assert_non_null(root);
	free(json);
	return root;
}

/* Builds g's table, which must fail with r and a reason holding part; the
 * out-parameter stays untouched. */
static void refused(struct group *g, int r, const char *part)
{
	char untouched[] = "untouched", *json = untouched;
	g->why[0] = '\0';
	assert_int_equal(hccl_ranktable_build(g->members, g->n, &json, g->why, sizeof(g->why)), r);
	assert_ptr_equal(json, untouched);
	if (!strstr(g->why, part))
		fail_msg("'%s' does not say '%s'", g->why, part);
	assert_null(strchr(g->why, '\n'));
}

static const char *get(json_object *o, const char *key)
{
	json_object *v;
	if (!json_object_object_get_ex(o, key, &v))
		return NULL;
	assert_true(json_object_is_type(v, json_type_string));
	return json_object_get_string(v);
}

static json_object *server(json_object *root, size_t s)
{
	return json_object_array_get_idx(json_object_object_get(root, "server_list"), s);
}

static json_object *device(json_object *root, size_t s, size_t d)
{
	return json_object_array_get_idx(json_object_object_get(server(root, s), "device"), d);
}

/* "device_id:rank_id" of every device of server s, in order, space-separated. */
static const char *devices_of(json_object *root, size_t s, char *buf, size_t size)
{
	json_object *devices = json_object_object_get(server(root, s), "device");
	buf[0] = '\0';
	for (size_t d = 0; d < json_object_array_length(devices); d++) {
		json_object *o = json_object_array_get_idx(devices, d);
		size_t len = strlen(buf);
		snprintf(buf + len, size - len, "%s%s:%s", d ? " " : "", get(o, "device_id"), get(o, "rank_id"));
	}
	return buf;
}

static void test_910b_one_server(void **state)
{
	(void)state;
	struct group *g = group_new();
	struct ranktable_facts facts;
	char buf[256];
	/* One server: HCCL's A2 page lets device_ip out, and a link that is
	 * down carries nothing (HCCS joins the chips). */
	add(g, 0, "node-a", "910B", 8, false);
	g->chips[0][5].link = HCCL_LINK_DOWN;
	json_object *root = build(g, "910B", &facts);
	assert_string_equal(facts.version, "1.0");
	assert_int_equal(facts.servers, 1);
	assert_int_equal(facts.devices, 8);
	assert_string_equal(get(root, "status"), "completed");
	assert_string_equal(get(root, "server_count"), "1");
	assert_string_equal(get(server(root, 0), "server_id"), "node-a");
	assert_null(get(server(root, 0), "host_ip"));
	assert_null(get(device(root, 0, 0), "device_ip"));
	assert_string_equal(devices_of(root, 0, buf, sizeof(buf)), "0:0 1:1 2:2 3:3 4:4 5:5 6:6 7:7");
	json_object_put(root);
	free(g);
}

static void test_910b_two_servers(void **state)
{
	(void)state;
	struct group *g = group_new();
	struct ranktable_facts facts;
	char buf[256];
	add(g, 0, "node-a", "910B", 8, true)->host_ip = "192.0.2.1";
	add(g, 1, "node-b", "910B", 8, true);
	g->chips[1][3].link = HCCL_LINK_UNKNOWN; /* DCMI did not say: not refused */
	json_object *root = build(g, "910B", &facts);
	assert_string_equal(facts.version, "1.0");
	assert_int_equal(facts.servers, 2);
	assert_int_equal(facts.devices, 16);
	assert_string_equal(get(root, "server_count"), "2");
	assert_string_equal(get(server(root, 0), "server_id"), "node-a");
	assert_string_equal(get(server(root, 1), "server_id"), "node-b");
	/* A2's page has no host_ip (the checker refuses it there), so the
	 * node's address is not written even when it is known. */
	assert_null(get(server(root, 0), "host_ip"));
	assert_string_equal(devices_of(root, 1, buf, sizeof(buf)), "0:8 1:9 2:10 3:11 4:12 5:13 6:14 7:15");
	assert_string_equal(get(device(root, 0, 7), "device_ip"), "10.0.0.7");
	assert_string_equal(get(device(root, 1, 2), "device_ip"), "10.0.1.2");
	assert_null(get(device(root, 0, 0), "device_port"));
	assert_null(get(device(root, 0, 0), "super_device_id"));
	json_object_put(root);
	free(g);
}

static void test_910(void **state)
{
	(void)state;
	struct group *g = group_new();
	struct ranktable_facts facts;
	char buf[256];
	add(g, 0, "node-a", "910", 8, true);
	add(g, 1, "node-b", "910", 8, true);
	json_object *root = build(g, "910", &facts);
	assert_string_equal(facts.version, "1.0");
	assert_int_equal(facts.devices, 16);
	assert_string_equal(devices_of(root, 0, buf, sizeof(buf)), "0:0 1:1 2:2 3:3 4:4 5:5 6:6 7:7");
	json_object_put(root);

	/* The 910 page makes device_ip mandatory even on one server. */
	g->n = 0;
	add(g, 0, "node-a", "910", 8, true);
	g->chips[0][6].device_ip = NULL;
	refused(g, -EINVAL, "pod 0 (node-a) chip 6 has no device IP: HCCL's 910 tables need");
	free(g);
}

static void test_a3_super_pods(void **state)
{
	(void)state;
	struct group *g = group_new();
	struct ranktable_facts facts;
	char buf[256];
	/* Two super pods, 7 and 3, whose pods interleave: 0 and 2 in 7, 1 and
	 * 3 in 3. HCCL wants one super pod's servers together, so server_list
	 * is a, c, b, d and the ranks follow it. SDIDs repeat across super
	 * pods, as in the A3 page's example. */
	add(g, 0, "node-a", "A3", 4, true)->host_ip = "172.16.0.100";
	add(g, 1, "node-b", "A3", 4, true);
	add(g, 2, "node-c", "910_93", 4, true);
	add(g, 3, "node-d", "A3", 4, true);
	super_pod(g, 0, 7, 0, 0);
	super_pod(g, 1, 3, 0, 0);
	super_pod(g, 2, 7, 1, 4);
	super_pod(g, 3, 3, 1, 4);
	json_object *root = build(g, "A3", &facts);
	assert_string_equal(facts.version, "1.2");
	assert_int_equal(facts.servers, 4);
	assert_int_equal(facts.super_pods, 2);
	assert_string_equal(get(root, "version"), "1.2");
	assert_string_equal(get(server(root, 0), "server_id"), "node-a");
	assert_string_equal(get(server(root, 0), "host_ip"), "172.16.0.100");
	assert_string_equal(get(server(root, 1), "server_id"), "node-c");
	assert_string_equal(get(server(root, 2), "server_id"), "node-b");
	assert_string_equal(get(server(root, 3), "server_id"), "node-d");
	assert_string_equal(devices_of(root, 1, buf, sizeof(buf)), "0:4 1:5 2:6 3:7");
	assert_string_equal(get(device(root, 1, 2), "super_device_id"), "6");
	assert_string_equal(get(device(root, 2, 0), "super_device_id"), "0");
	json_object *pods = json_object_object_get(root, "super_pod_list");
	assert_int_equal(json_object_array_length(pods), 2);
	json_object *first = json_object_array_get_idx(pods, 0);
	assert_string_equal(get(first, "super_pod_id"), "7");
	json_object *list = json_object_object_get(first, "server_list");
	assert_int_equal(json_object_array_length(list), 2);
	assert_string_equal(get(json_object_array_get_idx(list, 1), "server_id"), "node-c");
	assert_string_equal(get(json_object_array_get_idx(pods, 1), "super_pod_id"), "3");
	json_object_put(root);

	/* One super pod: HCCS joins its servers, device_ip may be left out
	 * and a link that is down carries nothing. */
	g->n = 0;
	add(g, 0, "node-a", "A3", 2, false);
	add(g, 1, "node-b", "A3", 2, false);
	super_pod(g, 0, 1, 0, 0);
	super_pod(g, 1, 1, 1, 2);
	g->chips[1][1].link = HCCL_LINK_DOWN;
	root = build(g, "A3", &facts);
	assert_string_equal(facts.version, "1.2");
	assert_int_equal(facts.super_pods, 1);
	json_object_put(root);

	/* Without super pod information: the page's "AI Server mode", 1.0. */
	g->n = 0;
	add(g, 0, "node-a", "A3", 16, true);
	add(g, 1, "node-b", "A3", 16, true);
	root = build(g, "A3", &facts);
	assert_string_equal(facts.version, "1.0");
	assert_int_equal(facts.devices, 32);
	assert_null(get(device(root, 0, 0), "super_device_id"));
	assert_null(json_object_object_get(root, "super_pod_list"));
	json_object_put(root);
	free(g);
}

static void test_rank_order(void **state)
{
	(void)state;
	struct group *g = group_new();
	char buf[256];
	/* Members given out of order, chips in reverse: ranks follow the pod
	 * index, then the device id. */
	add(g, 2, "node-c", "910B", 4, true);
	add(g, 0, "node-a", "910B", 4, true);
	add(g, 1, "node-b", "910B", 4, true);
	for (size_t i = 0; i < g->n; i++)
		for (uint32_t c = 0; c < 4; c++)
			g->chips[i][c].device_id = 2 * (3 - c) + 1; /* 7, 5, 3, 1 */
	json_object *root = build(g, "910B", NULL);
	assert_string_equal(get(server(root, 0), "server_id"), "node-a");
	assert_string_equal(get(server(root, 2), "server_id"), "node-c");
	assert_string_equal(devices_of(root, 0, buf, sizeof(buf)), "1:0 3:1 5:2 7:3");
	assert_string_equal(devices_of(root, 1, buf, sizeof(buf)), "1:4 3:5 5:6 7:7");
	assert_string_equal(devices_of(root, 2, buf, sizeof(buf)), "1:8 3:9 5:10 7:11");
	/* The chip with device id 1 of pod 1 is the one given last. */
	assert_string_equal(get(device(root, 1, 0), "device_ip"), "10.0.1.3");
	json_object_put(root);

	/* Two pods on one node, 0 and 2, pod 1 on another: one server entry
	 * for node-a (HCCL forbids a server_id twice and interleaved ranks),
	 * placed by its lowest pod index, its pods in index order. */
	g->n = 0;
	add(g, 2, "node-a", "910B", 2, true);
	add(g, 1, "node-b", "910B", 4, true);
	add(g, 0, "node-a", "910B", 2, true);
	g->chips[0][0].device_id = 4;
	g->chips[0][1].device_id = 5;
	root = build(g, "910B", NULL);
	assert_string_equal(get(root, "server_count"), "2");
	assert_string_equal(get(server(root, 0), "server_id"), "node-a");
	assert_string_equal(devices_of(root, 0, buf, sizeof(buf)), "0:0 1:1 4:2 5:3");
	assert_string_equal(devices_of(root, 1, buf, sizeof(buf)), "0:4 1:5 2:6 3:7");
	json_object_put(root);
	free(g);
}

static void test_ipv6(void **state)
{
	(void)state;
	struct group *g = group_new();
	add(g, 0, "node-a", "910B", 2, false);
	add(g, 1, "node-b", "910B", 2, false);
	g->chips[0][0].device_ip = "fd00:0:0::a:1";
	g->chips[0][1].device_ip = "fd00::a:2";
	g->chips[1][0].device_ip = "FD00::B:1";
	g->chips[1][1].device_ip = "10.0.0.9"; /* v4 and v6 may mix */
	json_object *root = build(g, "910B", NULL);
	/* Written in the canonical form, as HCCL compares what it parsed. */
	assert_string_equal(get(device(root, 0, 0), "device_ip"), "fd00::a:1");
	assert_string_equal(get(device(root, 1, 0), "device_ip"), "fd00::b:1");
	assert_string_equal(get(device(root, 1, 1), "device_ip"), "10.0.0.9");
	json_object_put(root);

	/* One address written two ways is one address. */
	g->chips[1][0].device_ip = "fd00:0::a:2";
	refused(g, -EEXIST, "pod 0 (node-a) chip 1 and pod 1 (node-b) chip 0 have one device IP, fd00::a:2");
	g->chips[1][0].device_ip = "fd00::a::2";
	refused(g, -EINVAL, "pod 1 (node-b) chip 0: device IP 'fd00::a::2' is neither IPv4 nor IPv6");
	free(g);
}

static void test_refusals(void **state)
{
	(void)state;
	struct group *g = group_new();
	char name[HCCL_SERVER_ID_MAX + 2];

	refused(g, -EINVAL, "the group has no members");

	add(g, 0, "node-a", "910B", 8, true);
	add(g, 1, "node-b", "910B", 0, true);
	refused(g, -EINVAL, "pod 1 (node-b) has no chips");

	/* Two servers: every chip needs its address and a link that is not down. */
	g->n = 0;
	add(g, 0, "node-a", "910B", 8, true);
	add(g, 1, "node-b", "910B", 8, true);
	g->chips[1][4].device_ip = NULL;
	refused(g, -EINVAL, "pod 1 (node-b) chip 4 has no device IP: HCCL needs it in a table over more than one server");
	g->chips[1][4].device_ip = g->ips[1][4];
	g->chips[0][2].link = HCCL_LINK_DOWN;
	refused(g, -ENETDOWN, "pod 0 (node-a) chip 2: its RoCE link is down");
	g->chips[0][2].link = HCCL_LINK_UP;

	g->chips[1][7].device_ip = g->ips[0][3];
	refused(g, -EEXIST, "pod 0 (node-a) chip 3 and pod 1 (node-b) chip 7 have one device IP, 10.0.0.3");
	g->chips[1][7].device_ip = g->ips[1][7];

	/* Two pods on one node may share it, but not a chip. */
	g->members[1].server_id = "node-a";
	refused(g, -EEXIST, "pod 0 (node-a) chip 0 and pod 1 (node-a) chip 0: one device id twice on one server");
	g->members[1].host_ip = "192.0.2.7";
	refused(g, -EINVAL, "pod 1 (node-a) and pod 0 share a server but not its host IP");
	g->members[1].host_ip = NULL;
	g->members[1].server_id = "node-b";

	g->members[1].pod_index = 0;
	refused(g, -EEXIST, "two members have pod index 0, on node-a and node-b");
	g->members[1].pod_index = 1;

	g->members[1].family = "910";
	refused(g, -EINVAL, "pod 0 (node-a) has 910B chips, pod 1 (node-b) 910: one table, one family");
	g->members[1].family = "310P";
	refused(g, -EOPNOTSUPP, "pod 1 (node-b): family '310P' has no HCCL rank table");
	g->members[1].family = "910B";

	g->members[0].host_ip = "2001:db8::1";
	refused(g, -EINVAL, "pod 0 (node-a): host IP '2001:db8::1' is not an IPv4 address");
	g->members[0].host_ip = NULL;

	memset(name, 'n', sizeof(name) - 1);
	name[sizeof(name) - 1] = '\0';
	g->members[1].server_id = name;
	refused(g, -E2BIG, "pod 1: server id 'nnnn");
	name[HCCL_SERVER_ID_MAX] = '\0'; /* 64 characters: HCCL's limit, taken */
	json_object_put(build(g, "910B", NULL));
	g->members[1].server_id = "node b";
	refused(g, -EINVAL, "pod 1: server id 'node b' is not printable ASCII without spaces");
	/* What the caller gave is shown on one line whatever it holds. */
	g->members[1].server_id = "node\nb";
	refused(g, -EINVAL, "pod 1: server id 'node?b' is not printable");
	g->members[1].server_id = "node-b";
	g->members[1].family = "910\nB";
	refused(g, -EOPNOTSUPP, "pod 1 (node-b): family '910?B' has no HCCL rank table");
	g->members[1].family = "910B";
	g->chips[1][2].device_ip = "1111:2222:3333:4444:5555:6666:7777:8888:9999:0";
	refused(g, -E2BIG, "pod 1 (node-b) chip 2: device IP '1111:2222:3333:4444:5555:6666:7777:8888:9999:' is");
	g->chips[1][2].device_ip = g->ips[1][2];

	g->members[1].n_chips = HCCL_RANKTABLE_MAX_CHIPS + 1;
	refused(g, -E2BIG, "pod 1 (node-b) has 17 chips, more than 16");
	g->members[1].n_chips = 8;

	/* Super pod information belongs to A3 alone. */
	g->chips[1][0].has_super_pod = true;
	refused(g, -EINVAL, "pod 1 (node-b) chip 0: super pod information on a 910B chip");
	free(g);
}

static void test_a3_refusals(void **state)
{
	(void)state;
	struct group *g = group_new();
	add(g, 0, "node-a", "A3", 4, true);
	add(g, 1, "node-b", "A3", 4, true);
	add(g, 2, "node-c", "A3", 4, true);
	super_pod(g, 0, 1, 0, 0);
	super_pod(g, 2, 2, 0, 0);
	refused(g, -EINVAL,
		"pod 0 (node-a) has super pod information and pod 1 (node-b) has not: HCCL takes it from every member");
	super_pod(g, 1, 1, 1, 4);
	json_object_put(build(g, "A3", NULL));

	/* Two super pods: RoCE between them. */
	g->chips[2][1].link = HCCL_LINK_DOWN;
	refused(g, -ENETDOWN, "pod 2 (node-c) chip 1: its RoCE link is down");
	g->chips[2][1].link = HCCL_LINK_UP;
	g->chips[1][3].device_ip = NULL;
	refused(g, -EINVAL, "pod 1 (node-b) chip 3 has no device IP: HCCL needs it in a table over more than one super pod");
	g->chips[1][3].device_ip = g->ips[1][3];

	g->chips[1][2].sdid = 1;
	refused(g, -EEXIST, "pod 0 (node-a) chip 1 and pod 1 (node-b) chip 2 have one super device id, 1, in super pod 1");
	g->chips[1][2].sdid = 6;

	g->chips[1][1].super_pod_id = 2;
	refused(g, -EINVAL, "pod 1 (node-b) chip 1 is in super pod 2 at server index 1, pod 1 chip 0 on the same server in 1");
	g->chips[1][1].super_pod_id = 1;

	super_pod(g, 1, 1, 0, 4);
	refused(g, -EEXIST, "pod 0 (node-a) and pod 1 (node-b) are on two servers with one server index, 0, in super pod 1");
	super_pod(g, 1, 1, 1, 4);

	g->chips[1][0].has_super_pod = false;
	refused(g, -EINVAL, "pod 1 (node-b): chips 0 and 1 disagree on having super pod information");
	free(g);
}

static void test_bounds(void **state)
{
	(void)state;
	struct group *g = group_new();
	struct ranktable_facts facts;
	char names[HCCL_RANKTABLE_MAX_MEMBERS + 1][16];
	for (uint32_t i = 0; i <= HCCL_RANKTABLE_MAX_MEMBERS; i++) {
		snprintf(names[i], sizeof(names[i]), "node-%u", i);
		add(g, i, names[i], "910B", HCCL_RANKTABLE_MAX_CHIPS, true);
	}
	refused(g, -E2BIG, "the group has 1025 members, more than 1024");
	g->n--;
	json_object *root = build(g, "910B", &facts);
	assert_int_equal(facts.servers, HCCL_RANKTABLE_MAX_MEMBERS);
	assert_int_equal(facts.devices, HCCL_RANKTABLE_MAX_MEMBERS * HCCL_RANKTABLE_MAX_CHIPS);
	assert_string_equal(get(device(root, 1023, 15), "rank_id"), "16383");
	json_object_put(root);
	free(g);
}

/* The checker's verdict on a fixture file. */
static int check_file(const char *name, const char *family, struct ranktable_facts *facts, char *why,
		      size_t why_size)
{
	char path[512], *text;
	size_t len;
	snprintf(path, sizeof(path), "%s/%s", FIXTURES, name);
	assert_int_equal(file_read_bounded(path, 1 << 20, &text, &len, why, why_size), 0);
	int r = ranktable_check(text, family, facts, why, why_size);
	free(text);
	return r;
}

/* The pages' own examples, transcribed: the checker's reading must take them. */
static void test_checker_takes_the_pages_examples(void **state)
{
	(void)state;
	static const struct {
		const char *file, *family, *version;
		size_t servers, devices, super_pods;
	} examples[] = {
		{ "910.json", "910", "1.0", 2, 4, 0 },
		{ "a2.json", "910B", "1.0", 2, 4, 0 },
		{ "a3-super-pods.json", "A3", "1.2", 4, 16, 2 },
		{ "a3-ai-server.json", "A3", "1.0", 2, 4, 0 },
	};
	for (size_t i = 0; i < sizeof(examples) / sizeof(examples[0]); i++) {
		struct ranktable_facts facts;
		char why[256];
		if (check_file(examples[i].file, examples[i].family, &facts, why, sizeof(why)) != 0)
			fail_msg("%s: %s", examples[i].file, why);
		assert_string_equal(facts.version, examples[i].version);
		assert_int_equal(facts.servers, examples[i].servers);
		assert_int_equal(facts.devices, examples[i].devices);
		assert_int_equal(facts.super_pods, examples[i].super_pods);
	}
}

/* Broken tables, each against one rule: the checker must refuse them. */
static void test_checker_refuses(void **state)
{
	(void)state;
#define SERVER(id, devices) "{\"server_id\":\"" id "\",\"device\":[" devices "]}"
#define DEV(id, ip, rank) "{\"device_id\":\"" id "\",\"device_ip\":\"" ip "\",\"rank_id\":\"" rank "\"}"
#define TABLE(version, count, servers) \
	"{\"status\":\"completed\",\"version\":\"" version "\",\"server_count\":\"" count "\",\"server_list\":[" servers "]}"
	static const struct {
		const char *family, *json, *why;
	} cases[] = {
		{ "910B", TABLE("1.0", "1", SERVER("a", DEV("0", "10.0.0.1", "0"))), NULL },
		/* The pages' counter-example: ranks crossing between servers. */
		{ "910B",
		  TABLE("1.0", "2",
			SERVER("a", DEV("0", "10.0.0.1", "0") "," DEV("1", "10.0.0.2", "1") ","
				    DEV("2", "10.0.0.3", "2") "," DEV("3", "10.0.0.4", "7")) ","
			SERVER("b", DEV("0", "10.0.1.1", "3") "," DEV("1", "10.0.1.2", "4") ","
				    DEV("2", "10.0.1.3", "5") "," DEV("3", "10.0.1.4", "6"))),
		  "interleave" },
		{ "910B", TABLE("1.0", "1", SERVER("a", DEV("0", "10.0.0.1", "1"))), "outside" },
		{ "910B", TABLE("1.0", "1", SERVER("a", DEV("0", "10.0.0.1", "0") "," DEV("1", "10.0.0.2", "0"))), "twice" },
		{ "910B", TABLE("1.0", "2", SERVER("a", DEV("0", "10.0.0.1", "0")) "," SERVER("a", DEV("0", "10.0.0.2", "1"))),
		  "also server_list[0]'s" },
		{ "910B", TABLE("1.0", "1", SERVER("a", DEV("0", "10.0.0.1", "0") "," DEV("0", "10.0.0.2", "1"))),
		  "device_id 0 twice" },
		{ "910B", TABLE("1.0", "2", SERVER("a", DEV("0", "10.0.0.1", "0")) "," SERVER("b", DEV("0", "10.0.0.1", "1"))),
		  "one device_ip" },
		{ "910B", TABLE("1.0", "1", SERVER("a", DEV("0", "10.0.0.256", "0"))), "neither IPv4 nor IPv6" },
		{ "910B", TABLE("1.0", "3", SERVER("a", DEV("0", "10.0.0.1", "0"))), "server_count" },
		{ "910B", TABLE("1.2", "1", SERVER("a", DEV("0", "10.0.0.1", "0"))), "version" },
		{ "910B", TABLE("1.0", "1", SERVER("a", DEV("00", "10.0.0.1", "0"))), "not a whole number" },
		{ "910B",
		  "{\"status\":\"done\",\"version\":\"1.0\",\"server_count\":\"1\",\"server_list\":[" SERVER(
			  "a", DEV("0", "10.0.0.1", "0")) "]}",
		  "neither completed nor initializing" },
		{ "910B",
		  "{\"status\":\"completed\",\"version\":\"1.0\",\"server_count\":1,\"server_list\":[" SERVER(
			  "a", DEV("0", "10.0.0.1", "0")) "]}",
		  "\"server_count\" is not a string" },
		{ "910B",
		  TABLE("1.0", "2",
			SERVER("a", "{\"device_id\":\"0\",\"rank_id\":\"0\"}") "," SERVER("b", DEV("0", "10.0.0.2", "1"))),
		  "no device_ip" },
		/* One server: device_ip may be left out, but not on 910. */
		{ "910B", TABLE("1.0", "1", SERVER("a", "{\"device_id\":\"0\",\"rank_id\":\"0\"}")), NULL },
		{ "910", TABLE("1.0", "1", SERVER("a", "{\"device_id\":\"0\",\"rank_id\":\"0\"}")), "no device_ip" },
		/* Keys a page does not document: MindCluster's per-device
		 * super_pod_id, and A3's host_ip on 910B. */
		{ "910B",
		  TABLE("1.0", "1",
			SERVER("a", "{\"device_id\":\"0\",\"device_ip\":\"10.0.0.1\",\"rank_id\":\"0\",\"super_pod_id\":0}")),
		  "\"super_pod_id\", which the page does not document" },
		{ "910B",
		  TABLE("1.0", "1",
			"{\"server_id\":\"a\",\"host_ip\":\"10.1.0.1\",\"device\":[" DEV("0", "10.0.0.1", "0") "]}"),
		  "\"host_ip\", which the page does not document" },
		{ "910",
		  TABLE("1.0", "1",
			SERVER("a", "{\"device_id\":\"0\",\"device_ip\":\"10.0.0.1\",\"device_port\":\"16667\","
				    "\"rank_id\":\"0\"}")),
		  "\"device_port\", which the page does not document" },
		{ "910B",
		  TABLE("1.0", "1",
			SERVER("a", "{\"device_id\":\"0\",\"device_ip\":\"10.0.0.1\",\"device_port\":\"0\","
				    "\"rank_id\":\"0\"}")),
		  "not a port" },
		{ "910B",
		  TABLE("1.0", "1",
			SERVER("aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", DEV("0", "10.0.0.1", "0"))),
		  "not 1 to 64 characters" },
		{ "910B", "[1]", "not a JSON object" },
		{ "910B", "{", "not JSON" },
		{ "310P", TABLE("1.0", "1", SERVER("a", DEV("0", "10.0.0.1", "0"))), "no page" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char why[256] = "";
		int r = ranktable_check(cases[i].json, cases[i].family, NULL, why, sizeof(why));
		if (!cases[i].why && r != 0)
			fail_msg("case %zu: refused: %s", i, why);
		if (cases[i].why && (r != -EINVAL || !strstr(why, cases[i].why)))
			fail_msg("case %zu: %d '%s', not '%s'", i, r, why, cases[i].why);
	}
}

/* text with its first from replaced by to, into out[size]. */
static void replace_once(const char *text, const char *from, const char *to, char *out, size_t size)
{
	const char *at = strstr(text, from);
	if (!at)
		fail_msg("the text has no '%s'", from);
	snprintf(out, size, "%.*s%s%s", (int)(at - text), text, to, at + strlen(from));
}

/* The super pod rules, on the A3 page's example with one thing changed. */
static void test_checker_refuses_super_pods(void **state)
{
	(void)state;
	static const struct {
		const char *from, *to, *from2, *to2, *why;
	} cases[] = {
		{ "\"server_id\": \"node_1\"", "\"server_id\": \"node_X\"", NULL, NULL, "not in server_list" },
		{ "{\"server_id\": \"node_3\"}", "{\"server_id\": \"node_0\"}", NULL, NULL, "in two super pods" },
		/* Super pod 0 of node_0 and node_2, 1 of node_1 and node_3. */
		{ "{\"server_id\": \"node_2\"}", "{\"server_id\": \"node_1\"}", "{\"server_id\": \"node_1\"}",
		  "{\"server_id\": \"node_2\"}", "not side by side" },
		{ "{\"server_id\": \"node_3\"}", "", "{\"server_id\": \"node_2\"},", "{\"server_id\": \"node_2\"}",
		  "server_list[3] is in no super pod" },
		{ "\"super_pod_id\": \"1\"", "\"super_pod_id\": \"0\"", NULL, NULL, "super_pod_id \"0\" twice" },
		{ "\"super_device_id\": \"5\"", "\"super_device_id\": \"4\"", NULL, NULL, "one super_device_id" },
		{ "\"super_device_id\": \"5\",", "", NULL, NULL, "has no super_device_id" },
		{ "\"version\": \"1.2\"", "\"version\": \"1.0\"", NULL, NULL,
		  "\"super_pod_list\", which the page does not document" },
		{ "\"host_ip\": \"172.16.0.101\"", "\"host_ip\": \"fd00::1\"", NULL, NULL, "is not IPv4" },
		{ "\"backup_device_port\": \"16670\"", "\"backup_device_port\": \"65536\"", NULL, NULL, "not a port" },
	};
	char *text, why[256];
	size_t len;
	assert_int_equal(file_read_bounded(FIXTURES "/a3-super-pods.json", 1 << 20, &text, &len, why, sizeof(why)), 0);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char once[16384], twice[16384];
		replace_once(text, cases[i].from, cases[i].to, once, sizeof(once));
		if (cases[i].from2)
			replace_once(once, cases[i].from2, cases[i].to2, twice, sizeof(twice));
		int r = ranktable_check(cases[i].from2 ? twice : once, "A3", NULL, why, sizeof(why));
		if (r != -EINVAL || !strstr(why, cases[i].why))
			fail_msg("case %zu: %d '%s', not '%s'", i, r, why, cases[i].why);
	}
	free(text);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_910b_one_server),
		cmocka_unit_test(test_910b_two_servers),
		cmocka_unit_test(test_910),
		cmocka_unit_test(test_a3_super_pods),
		cmocka_unit_test(test_rank_order),
		cmocka_unit_test(test_ipv6),
		cmocka_unit_test(test_refusals),
		cmocka_unit_test(test_a3_refusals),
		cmocka_unit_test(test_bounds),
		cmocka_unit_test(test_checker_takes_the_pages_examples),
		cmocka_unit_test(test_checker_refuses),
		cmocka_unit_test(test_checker_refuses_super_pods),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
