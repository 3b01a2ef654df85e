/* SPDX-License-Identifier: Apache-2.0 */
#include "hccl/ranktable.h"

#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "base/json_put.h"
#include "base/parse.h"

enum family {
	FAMILY_910,
	FAMILY_910B,
	FAMILY_A3,
};

/* A member as messages name it: its pod index and server. The server id is
 * cut at its bound, so a message stays one short line whatever it holds. */
#define POD_FMT "pod %" PRIu32 " (%.64s)"
#define POD_ARGS(m) (m)->pod_index, ((m)->server_id ? (m)->server_id : "no server")

/* An address as parsed: family (AF_INET, AF_INET6, or 0 when absent) and bytes. */
struct addr {
	int family;
	unsigned char bytes[16];
};

/* One chip, in rank order once the table is laid out. */
struct slot {
	const struct hccl_member *member;
	const struct hccl_chip *chip;
	size_t server; /* its index in servers */
	struct addr ip;
};

struct server {
	const struct hccl_member *first; /* its member of the lowest pod index */
	struct addr host_ip;
	size_t group;                    /* the first server of its super pod (1.2), else itself */
	size_t slot_first, slot_count;
};

/* What two things must not share: value within group. index says whose it is. */
struct key {
	uint32_t group;
	unsigned char value[17];
	size_t index;
};

static int family_parse(const char *name, enum family *ret_family)
{
	if (strcmp(name, "910") == 0)
		*ret_family = FAMILY_910;
	else if (strcmp(name, "910B") == 0)
		*ret_family = FAMILY_910B;
	else if (strcmp(name, "A3") == 0 || strcmp(name, "910_93") == 0)
		*ret_family = FAMILY_A3;
	else
		return -EOPNOTSUPP;
	return 0;
}

/* Parses an address text bounded by HCCL_IP_TEXT_MAX; v4_only for host_ip. */
static int addr_parse(const char *text, bool v4_only, struct addr *ret_addr)
{
	struct addr a = { 0 };
	if (strnlen(text, HCCL_IP_TEXT_MAX + 1) > HCCL_IP_TEXT_MAX)
		return -E2BIG;
	if (inet_pton(AF_INET, text, a.bytes) == 1)
		a.family = AF_INET;
	else if (!v4_only && inet_pton(AF_INET6, text, a.bytes) == 1)
		a.family = AF_INET6;
	else
		return -EINVAL;
	*ret_addr = a;
	return 0;
}

static void u32_value(uint32_t v, unsigned char value[17])
{
	memset(value, 0, 17);
	value[0] = (unsigned char)(v >> 24);
	value[1] = (unsigned char)(v >> 16);
	value[2] = (unsigned char)(v >> 8);
	value[3] = (unsigned char)v;
}

static int key_compare(const void *pa, const void *pb)
{
	const struct key *a = pa, *b = pb;
	if (a->group != b->group)
		return a->group < b->group ? -1 : 1;
	int c = memcmp(a->value, b->value, sizeof(a->value));
	if (c)
		return c;
	return a->index < b->index ? -1 : a->index > b->index;
}

/* Sorts keys[n]; true with the indexes of the first two keys that share a
 * group and value (the lower index first), false when none do. */
static bool find_twins(struct key *keys, size_t n, size_t *ret_a, size_t *ret_b)
{
	qsort(keys, n, sizeof(*keys), key_compare);
	for (size_t i = 1; i < n; i++)
		if (keys[i].group == keys[i - 1].group && memcmp(keys[i].value, keys[i - 1].value, 17) == 0) {
			*ret_a = keys[i - 1].index;
			*ret_b = keys[i].index;
			return true;
		}
	return false;
}

static int member_compare(const void *pa, const void *pb)
{
	const struct hccl_member *a = *(const struct hccl_member *const *)pa;
	const struct hccl_member *b = *(const struct hccl_member *const *)pb;
	return a->pod_index < b->pod_index ? -1 : a->pod_index > b->pod_index;
}

/* Whether the first len bytes of s are printable ASCII without spaces, as
 * node names are. */
static bool printable(const char *s, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if (s[i] <= ' ' || s[i] > '~')
			return false;
	return true;
}

/* Text from the caller as a message may show it: at most size - 1 bytes,
 * anything but printable ASCII as '?', so that a reason stays one line. */
static const char *shown(const char *s, char *buf, size_t size)
{
	size_t i = 0;
	for (; s[i] && i + 1 < size; i++)
		buf[i] = s[i] >= ' ' && s[i] <= '~' ? s[i] : '?';
	buf[i] = '\0';
	return buf;
}

/* Checks what one member says on its own. */
static int check_member(const struct hccl_member *m, char *why, size_t why_size)
{
	enum family family;
	struct addr a;
	char text[HCCL_SERVER_ID_MAX + 1];
	int r;
	if (!m->server_id || !m->server_id[0])
		return why_invalid(why, why_size, "pod %" PRIu32 " has no server id", m->pod_index);
	size_t len = strnlen(m->server_id, HCCL_SERVER_ID_MAX + 1);
	if (len > HCCL_SERVER_ID_MAX)
		return why_fail(why, why_size, -E2BIG, "pod %" PRIu32 ": server id '%s...' is longer than %d characters",
				m->pod_index, shown(m->server_id, text, sizeof(text)), HCCL_SERVER_ID_MAX);
	if (!printable(m->server_id, len))
		return why_invalid(why, why_size, "pod %" PRIu32 ": server id '%s' is not printable ASCII without spaces",
				   m->pod_index, shown(m->server_id, text, sizeof(text)));
	if (!m->family)
		return why_invalid(why, why_size, POD_FMT ": no chip family", POD_ARGS(m));
	if (family_parse(m->family, &family) < 0)
		return why_fail(why, why_size, -EOPNOTSUPP,
				POD_FMT ": family '%s' has no HCCL rank table (910, 910B and A3 have)", POD_ARGS(m),
				shown(m->family, text, 17));
	if (m->host_ip && (r = addr_parse(m->host_ip, true, &a)) < 0)
		return why_fail(why, why_size, r, POD_FMT ": host IP '%s' is not an IPv4 address", POD_ARGS(m),
				shown(m->host_ip, text, HCCL_IP_TEXT_MAX + 1));
	if (m->n_chips == 0 || !m->chips)
		return why_invalid(why, why_size, POD_FMT " has no chips", POD_ARGS(m));
	if (m->n_chips > HCCL_RANKTABLE_MAX_CHIPS)
		return why_fail(why, why_size, -E2BIG, POD_FMT " has %zu chips, more than %d", POD_ARGS(m), m->n_chips,
				HCCL_RANKTABLE_MAX_CHIPS);
	for (size_t i = 0; i < m->n_chips; i++) {
		const struct hccl_chip *c = &m->chips[i];
		if (c->link != HCCL_LINK_UNKNOWN && c->link != HCCL_LINK_UP && c->link != HCCL_LINK_DOWN)
			return why_invalid(why, why_size, POD_FMT " chip %" PRIu32 ": link state %d is none of the three",
					   POD_ARGS(m), c->device_id, (int)c->link);
		if (c->device_ip && (r = addr_parse(c->device_ip, false, &a)) < 0)
			return why_fail(why, why_size, r, POD_FMT " chip %" PRIu32 ": device IP '%s' is neither IPv4 nor IPv6",
					POD_ARGS(m), c->device_id, shown(c->device_ip, text, HCCL_IP_TEXT_MAX + 1));
		if (c->has_super_pod && family != FAMILY_A3)
			return why_invalid(why, why_size, POD_FMT " chip %" PRIu32 ": super pod information on a %s chip",
					   POD_ARGS(m), c->device_id, m->family);
		if (c->has_super_pod != m->chips[0].has_super_pod)
			return why_invalid(why, why_size,
					   POD_FMT ": chips %" PRIu32 " and %" PRIu32 " disagree on having super pod information",
					   POD_ARGS(m), m->chips[0].device_id, c->device_id);
	}
	return 0;
}

/* Checks the members against each other: one family, one pod per index,
 * super pod information on all or none. sorted[n] is in pod order. */
static int check_group(const struct hccl_member *const *sorted, size_t n, char *why, size_t why_size)
{
	const struct hccl_member *first = sorted[0];
	for (size_t i = 1; i < n; i++) {
		const struct hccl_member *m = sorted[i];
		enum family a, b;
		if (m->pod_index == sorted[i - 1]->pod_index)
			return why_fail(why, why_size, -EEXIST, "two members have pod index %" PRIu32 ", on %.64s and %.64s",
					m->pod_index, sorted[i - 1]->server_id, m->server_id);
		(void)family_parse(first->family, &a);
		(void)family_parse(m->family, &b);
		if (a != b)
			return why_invalid(why, why_size, POD_FMT " has %s chips, " POD_FMT " %s: one table, one family",
					   POD_ARGS(first), first->family, POD_ARGS(m), m->family);
		if (m->chips[0].has_super_pod != first->chips[0].has_super_pod) {
			const struct hccl_member *with = first->chips[0].has_super_pod ? first : m;
			const struct hccl_member *without = with == first ? m : first;
			return why_invalid(why, why_size,
					   POD_FMT " has super pod information and " POD_FMT
					   " has not: HCCL takes it from every member (1.2) or from none (1.0)",
					   POD_ARGS(with), POD_ARGS(without));
		}
	}
	return 0;
}

/* The table as it is laid out, step by step. */
struct layout {
	enum family family;
	bool v12;
	const struct hccl_member **sorted; /* the members in pod order */
	size_t n_members;
	size_t *member_server; /* per sorted member: its index in servers */
	struct server *servers; /* in the order of their lowest pod index */
	size_t n_servers;
	size_t *order; /* servers as server_list has them */
	struct slot *slots; /* the chips in rank order */
	size_t n_slots;
	struct key *keys; /* room for one key per slot or per server */
};

/* The super pod of a server, as its first chip reports it (1.2 only). */
static uint32_t super_pod_of(const struct server *s)
{
	return s->first->chips[0].super_pod_id;
}

/* Groups the members by server id, which must agree on the host IP, and in
 * 1.2 the servers by super pod. */
static int group_servers(struct layout *l, char *why, size_t why_size)
{
	for (size_t i = 0; i < l->n_members; i++) {
		const struct hccl_member *m = l->sorted[i];
		struct addr host = { 0 };
		size_t s = 0;
		while (s < l->n_servers && strcmp(l->servers[s].first->server_id, m->server_id) != 0)
			s++;
		if (m->host_ip)
			(void)addr_parse(m->host_ip, true, &host);
		if (s == l->n_servers) {
			l->servers[s] = (struct server){ .first = m, .host_ip = host, .group = s };
			l->n_servers++;
		} else if (memcmp(&host, &l->servers[s].host_ip, sizeof(host)) != 0) {
			return why_invalid(why, why_size, POD_FMT " and pod %" PRIu32 " share a server but not its host IP",
					   POD_ARGS(m), l->servers[s].first->pod_index);
		}
		l->member_server[i] = s;
	}
	for (size_t s = 0; l->v12 && s < l->n_servers; s++) {
		size_t g = 0;
		while (super_pod_of(&l->servers[g]) != super_pod_of(&l->servers[s]))
			g++;
		l->servers[s].group = g;
	}
	/* server_list: each super pod's servers together, super pods and the
	 * servers in them in the order of their lowest pod index. Outside 1.2
	 * every server is a group of its own. */
	size_t k = 0;
	for (size_t g = 0; g < l->n_servers; g++)
		for (size_t s = g; l->servers[g].group == g && s < l->n_servers; s++)
			if (l->servers[s].group == g)
				l->order[k++] = s;
	return 0;
}

static int chip_compare(const void *pa, const void *pb)
{
	const struct hccl_chip *a = *(const struct hccl_chip *const *)pa;
	const struct hccl_chip *b = *(const struct hccl_chip *const *)pb;
	return a->device_id < b->device_id ? -1 : a->device_id > b->device_id;
}

/* Puts the chips in rank order: server by server, pod by pod, by device id. */
static void fill_slots(struct layout *l)
{
	for (size_t k = 0; k < l->n_servers; k++) {
		struct server *srv = &l->servers[l->order[k]];
		srv->slot_first = l->n_slots;
		for (size_t i = 0; i < l->n_members; i++) {
			const struct hccl_member *m = l->sorted[i];
			const struct hccl_chip *chips[HCCL_RANKTABLE_MAX_CHIPS];
			if (l->member_server[i] != l->order[k])
				continue;
			for (size_t c = 0; c < m->n_chips; c++)
				chips[c] = &m->chips[c];
			qsort(chips, m->n_chips, sizeof(chips[0]), chip_compare);
			for (size_t c = 0; c < m->n_chips; c++) {
				struct slot *sl = &l->slots[l->n_slots++];
				*sl = (struct slot){ .member = m, .chip = chips[c], .server = l->order[k] };
				if (chips[c]->device_ip)
					(void)addr_parse(chips[c]->device_ip, false, &sl->ip);
			}
		}
		srv->slot_count = l->n_slots - srv->slot_first;
	}
}

/* "pod 3 (node-a) chip 5 and pod 4 (node-a) chip 5" for a pair of slots. */
#define TWINS_FMT POD_FMT " chip %" PRIu32 " and " POD_FMT " chip %" PRIu32
#define TWINS_ARGS(a, b) POD_ARGS((a)->member), (a)->chip->device_id, POD_ARGS((b)->member), (b)->chip->device_id

/* What HCCL's pages say of device_ip for this table: NULL when it may be
 * left out, else why it may not. */
static const char *device_ip_need(const struct layout *l)
{
	size_t groups = 0;
	for (size_t s = 0; s < l->n_servers; s++)
		groups += l->servers[s].group == s;
	if (l->family == FAMILY_910)
		return "HCCL's 910 tables need every chip's";
	if (l->v12)
		return groups > 1 ? "HCCL needs it in a table over more than one super pod" : NULL;
	return groups > 1 ? "HCCL needs it in a table over more than one server" : NULL;
}

/* The checks of chips against the table and each other. */
static int check_slots(struct layout *l, char *why, size_t why_size)
{
	const char *need = device_ip_need(l);
	size_t a, b, n = 0;
	for (size_t i = 0; i < l->n_slots; i++) {
		const struct slot *sl = &l->slots[i];
		const struct server *srv = &l->servers[sl->server];
		const struct hccl_chip *ref = &srv->first->chips[0];
		if (l->v12 && (sl->chip->super_pod_id != ref->super_pod_id || sl->chip->server_index != ref->server_index))
			return why_invalid(why, why_size,
					   POD_FMT " chip %" PRIu32 " is in super pod %" PRIu32 " at server index %" PRIu32
					   ", pod %" PRIu32 " chip %" PRIu32 " on the same server in %" PRIu32 " at %" PRIu32,
					   POD_ARGS(sl->member), sl->chip->device_id, sl->chip->super_pod_id,
					   sl->chip->server_index, srv->first->pod_index, ref->device_id, ref->super_pod_id,
					   ref->server_index);
		if (need && !sl->ip.family)
			return why_invalid(why, why_size, POD_FMT " chip %" PRIu32 " has no device IP: %s", POD_ARGS(sl->member),
					   sl->chip->device_id, need);
		if (need && sl->chip->link == HCCL_LINK_DOWN)
			return why_fail(why, why_size, -ENETDOWN,
					POD_FMT " chip %" PRIu32 ": its RoCE link is down, and the table sends traffic over it",
					POD_ARGS(sl->member), sl->chip->device_id);
		l->keys[i] = (struct key){ .group = (uint32_t)sl->server, .index = i };
		u32_value(sl->chip->device_id, l->keys[i].value);
	}
	if (find_twins(l->keys, l->n_slots, &a, &b))
		return why_fail(why, why_size, -EEXIST, TWINS_FMT ": one device id twice on one server",
				TWINS_ARGS(&l->slots[a], &l->slots[b]));

	for (size_t i = 0; i < l->n_slots; i++)
		if (l->slots[i].ip.family) {
			l->keys[n] = (struct key){ .value[0] = (unsigned char)l->slots[i].ip.family, .index = i };
			memcpy(l->keys[n++].value + 1, l->slots[i].ip.bytes, 16);
		}
	if (find_twins(l->keys, n, &a, &b))
		return why_fail(why, why_size, -EEXIST, TWINS_FMT " have one device IP, %.45s",
				TWINS_ARGS(&l->slots[a], &l->slots[b]), l->slots[a].chip->device_ip);
	if (!l->v12)
		return 0;

	for (size_t i = 0; i < l->n_slots; i++) {
		l->keys[i] = (struct key){ .group = l->slots[i].chip->super_pod_id, .index = i };
		u32_value(l->slots[i].chip->sdid, l->keys[i].value);
	}
	if (find_twins(l->keys, l->n_slots, &a, &b))
		return why_fail(why, why_size, -EEXIST, TWINS_FMT " have one super device id, %" PRIu32 ", in super pod %" PRIu32,
				TWINS_ARGS(&l->slots[a], &l->slots[b]), l->slots[a].chip->sdid,
				l->slots[a].chip->super_pod_id);
	for (size_t s = 0; s < l->n_servers; s++) {
		l->keys[s] = (struct key){ .group = super_pod_of(&l->servers[s]), .index = s };
		u32_value(l->servers[s].first->chips[0].server_index, l->keys[s].value);
	}
	if (find_twins(l->keys, l->n_servers, &a, &b))
		return why_fail(why, why_size, -EEXIST, POD_FMT " and " POD_FMT " are on two servers with one server index, %" PRIu32
				", in super pod %" PRIu32,
				POD_ARGS(l->servers[a].first), POD_ARGS(l->servers[b].first),
				l->servers[a].first->chips[0].server_index, super_pod_of(&l->servers[a]));
	return 0;
}

/* Adds an address in its canonical text. */
static void put_addr(struct json_put *b, json_object *parent, const char *key, const struct addr *a)
{
	char text[INET6_ADDRSTRLEN];
	bool ok = inet_ntop(a->family, a->bytes, text, sizeof(text)) != NULL;
	json_put(b, parent, key, ok ? json_object_new_string(text) : NULL);
}

/* Adds a number as the string HCCL reads it as. */
static void put_number(struct json_put *b, json_object *parent, const char *key, uint64_t v)
{
	char text[24];
	snprintf(text, sizeof(text), "%" PRIu64, v);
	json_put_string(b, parent, key, text);
}

static json_object *table_json(const struct layout *l)
{
	struct json_put b = { 0 };
	json_object *root = json_object_new_object(), *pods = NULL, *pod_servers = NULL;
	json_put_string(&b, root, "status", "completed");
	json_put_string(&b, root, "version", l->v12 ? "1.2" : "1.0");
	put_number(&b, root, "server_count", l->n_servers);
	json_object *list = json_put(&b, root, "server_list", json_object_new_array());
	for (size_t k = 0; k < l->n_servers; k++) {
		const struct server *srv = &l->servers[l->order[k]];
		json_object *o = json_put(&b, list, NULL, json_object_new_object());
		json_put_string(&b, o, "server_id", srv->first->server_id);
		if (srv->host_ip.family && l->family == FAMILY_A3)
			put_addr(&b, o, "host_ip", &srv->host_ip);
		json_object *devices = json_put(&b, o, "device", json_object_new_array());
		for (size_t i = srv->slot_first; i < srv->slot_first + srv->slot_count; i++) {
			const struct slot *sl = &l->slots[i];
			json_object *d = json_put(&b, devices, NULL, json_object_new_object());
			put_number(&b, d, "device_id", sl->chip->device_id);
			if (l->v12)
				put_number(&b, d, "super_device_id", sl->chip->sdid);
			if (sl->ip.family)
				put_addr(&b, d, "device_ip", &sl->ip);
			put_number(&b, d, "rank_id", i);
		}
	}
	if (l->v12)
		pods = json_put(&b, root, "super_pod_list", json_object_new_array());
	for (size_t k = 0; l->v12 && k < l->n_servers; k++) {
		const struct server *srv = &l->servers[l->order[k]];
		if (k == 0 || srv->group != l->servers[l->order[k - 1]].group) {
			json_object *pod = json_put(&b, pods, NULL, json_object_new_object());
			put_number(&b, pod, "super_pod_id", super_pod_of(srv));
			pod_servers = json_put(&b, pod, "server_list", json_object_new_array());
		}
		json_object *o = json_put(&b, pod_servers, NULL, json_object_new_object());
		json_put_string(&b, o, "server_id", srv->first->server_id);
	}
	if (b.failed) {
		json_object_put(root);
		return NULL;
	}
	return root;
}

int hccl_ranktable_build(const struct hccl_member *members, size_t n_members, char **ret_json, char *why,
			 size_t why_size)
{
	struct layout l = { .n_members = n_members };
	json_object *root = NULL;
	const char *text;
	char *json = NULL;
	size_t n_chips = 0;
	int r;
	if (!members || n_members == 0)
		return why_invalid(why, why_size, "the group has no members");
	if (n_members > HCCL_RANKTABLE_MAX_MEMBERS)
		return why_fail(why, why_size, -E2BIG, "the group has %zu members, more than %d", n_members,
				HCCL_RANKTABLE_MAX_MEMBERS);
	for (size_t i = 0; i < n_members; i++) {
		r = check_member(&members[i], why, why_size);
		if (r < 0)
			return r;
		n_chips += members[i].n_chips;
	}

	l.sorted = calloc(n_members, sizeof(*l.sorted));
	l.member_server = calloc(n_members, sizeof(*l.member_server));
	l.servers = calloc(n_members, sizeof(*l.servers));
	l.order = calloc(n_members, sizeof(*l.order));
	l.slots = calloc(n_chips, sizeof(*l.slots));
	l.keys = calloc(n_chips, sizeof(*l.keys)); /* every member has a chip: n_chips >= servers */
	r = -ENOMEM;
	if (!l.sorted || !l.member_server || !l.servers || !l.order || !l.slots || !l.keys) {
		why_fail(why, why_size, r, "out of memory");
		goto out;
	}
	for (size_t i = 0; i < n_members; i++)
		l.sorted[i] = &members[i];
	qsort(l.sorted, n_members, sizeof(*l.sorted), member_compare);
	r = check_group(l.sorted, n_members, why, why_size);
	if (r < 0)
		goto out;
	(void)family_parse(l.sorted[0]->family, &l.family);
	l.v12 = l.sorted[0]->chips[0].has_super_pod;
	r = group_servers(&l, why, why_size);
	if (r < 0)
		goto out;
	fill_slots(&l);
	r = check_slots(&l, why, why_size);
	if (r < 0)
		goto out;

	r = -ENOMEM;
	root = table_json(&l);
	text = root ? json_object_to_json_string_ext(root, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED |
							   JSON_C_TO_STRING_NOSLASHESCAPE)
		    : NULL;
	json = text ? malloc(strlen(text) + 2) : NULL;
	if (!json) {
		why_fail(why, why_size, r, "out of memory");
		goto out;
	}
	memcpy(json, text, strlen(text));
	memcpy(json + strlen(text), "\n", 2);
	*ret_json = json;
	r = 0;
out:
	json_object_put(root);
	free(l.keys);
	free(l.slots);
	free(l.order);
	free(l.servers);
	free(l.member_server);
	free(l.sorted);
	return r;
}
