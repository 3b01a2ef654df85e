/* SPDX-License-Identifier: Apache-2.0 */
#include "member.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "base/log.h"
#include "base/parse.h"
#include "kube/objects.h"

/* The chip objects are flat; a claim is about 8 deep. */
#define NETWORK_MAX_DEPTH 8

const char *rt_printable(const char *s, char *buf, size_t size)
{
	bool cut = false;
	buf[log_text_escape(buf, 0, size - 1, s, &cut)] = '\0';
	return buf;
}

/* An integer field in [0, max]; absent: -ENOENT. */
static int get_u32(json_object *o, const char *key, uint32_t max, uint32_t *ret, char *why, size_t why_size)
{
	json_object *v;
	if (!json_object_object_get_ex(o, key, &v))
		return -ENOENT;
	if (!json_object_is_type(v, json_type_int))
		return why_invalid(why, why_size, "%s: not an integer", key);
	int64_t n = json_object_get_int64(v);
	if (n < 0 || n > (int64_t)max)
		return why_invalid(why, why_size, "%s: %lld is out of range 0-%u", key, (long long)n, max);
	*ret = (uint32_t)n;
	return 0;
}

/* A string field of at most max bytes; absent: NULL. */
static int get_str(json_object *o, const char *key, size_t max, const char **ret, char *why, size_t why_size)
{
	json_object *v;
	*ret = NULL;
	if (!json_object_object_get_ex(o, key, &v))
		return 0;
	if (!json_object_is_type(v, json_type_string))
		return why_invalid(why, why_size, "%s: not a string", key);
	if ((size_t)json_object_get_string_len(v) > max)
		return why_fail(why, why_size, -E2BIG, "%s: longer than %zu bytes", key, max);
	*ret = json_object_get_string(v);
	return 0;
}

static int read_link(json_object *o, enum hccl_link *ret, char *why, size_t why_size)
{
	const char *s;
	char text[72];
	int r = get_str(o, "link", 16, &s, why, why_size);
	if (r < 0)
		return r;
	if (!s || strcmp(s, "unknown") == 0)
		*ret = HCCL_LINK_UNKNOWN;
	else if (strcmp(s, "up") == 0)
		*ret = HCCL_LINK_UP;
	else if (strcmp(s, "down") == 0)
		*ret = HCCL_LINK_DOWN;
	else
		return why_invalid(why, why_size, "link: \"%s\" is none of up, down, unknown",
				   rt_printable(s, text, sizeof(text)));
	return 0;
}

/* The three super pod fields, all or none. */
static int read_super_pod(json_object *o, struct hccl_chip *c, char *why, size_t why_size)
{
	static const char *const keys[] = { "super_device_id", "super_pod_id", "server_index" };
	uint32_t *const into[] = { &c->sdid, &c->super_pod_id, &c->server_index };
	unsigned present = 0;
	for (size_t i = 0; i < 3; i++) {
		int r = get_u32(o, keys[i], UINT32_MAX, into[i], why, why_size);
		if (r == 0)
			present++;
		else if (r != -ENOENT)
			return r;
	}
	if (present != 0 && present != 3)
		return why_invalid(why, why_size, "super_device_id, super_pod_id and server_index: some without the others");
	c->has_super_pod = present == 3;
	return 0;
}

int rt_chip_add(json_object *o, struct rt_chips *chips, char *why, size_t why_size)
{
	if (!json_object_is_type(o, json_type_object))
		return why_invalid(why, why_size, "a chip is not a JSON object");
	if (chips->n >= HCCL_RANKTABLE_MAX_CHIPS)
		return why_fail(why, why_size, -E2BIG, "more than %d chips", HCCL_RANKTABLE_MAX_CHIPS);
	struct hccl_chip c = { 0 };
	const char *family, *ip;
	int r = get_u32(o, "device_id", RT_DEVICE_ID_MAX, &c.device_id, why, why_size);
	if (r == -ENOENT)
		return why_invalid(why, why_size, "a chip without device_id");
	if (r < 0 || (r = get_str(o, "family", RT_FAMILY_MAX - 1, &family, why, why_size)) < 0 ||
	    (r = get_str(o, "device_ip", HCCL_IP_TEXT_MAX, &ip, why, why_size)) < 0 ||
	    (r = read_link(o, &c.link, why, why_size)) < 0 || (r = read_super_pod(o, &c, why, why_size)) < 0)
		return r;
	if (!family || !family[0])
		return why_invalid(why, why_size, "chip %u: no family", c.device_id);
	/* A name ("910B", "910_93"): what follows quotes it. */
	if (strspn(family, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_") != strlen(family))
		return why_invalid(why, why_size, "chip %u: family is not a name of letters, digits and _",
				   c.device_id);
	if (chips->n > 0 && strcmp(family, chips->family) != 0)
		return why_invalid(why, why_size, "chip %u: family %s among chips of family %s", c.device_id, family,
				   chips->family);
	if (ip) {
		/* Checked here as well as by the table's builder, so that a bad
		 * annotation is refused where it is read, naming its pod. */
		unsigned char addr[16];
		char text[4 * HCCL_IP_TEXT_MAX + 1];
		uint32_t prefix;
		if (inet_pton(AF_INET, ip, addr) != 1 && inet_pton(AF_INET6, ip, addr) != 1)
			return why_invalid(why, why_size, "chip %u: device_ip \"%s\" is no IPv4 or IPv6 address",
					   c.device_id, rt_printable(ip, text, sizeof(text)));
		r = get_u32(o, "prefix_len", 128, &prefix, why, why_size);
		if (r < 0 && r != -ENOENT)
			return r;
		memcpy(chips->ips[chips->n], ip, strlen(ip) + 1);
		c.device_ip = chips->ips[chips->n];
	}
	memcpy(chips->family, family, strlen(family) + 1);
	chips->chips[chips->n++] = c;
	return 0;
}

/* Pointers into ips[] must follow the struct when it is copied. */
static void chips_fix(struct rt_chips *chips)
{
	for (size_t i = 0; i < chips->n; i++)
		if (chips->chips[i].device_ip)
			chips->chips[i].device_ip = chips->ips[i];
}

int rt_network_parse(const char *text, size_t len, struct rt_chips *ret_chips, char *why, size_t why_size)
{
	if (len > RT_NETWORK_MAX)
		return why_fail(why, why_size, -E2BIG, "longer than %d bytes", RT_NETWORK_MAX);
	json_tokener *tok = json_tokener_new_ex(NETWORK_MAX_DEPTH);
	if (!tok)
		return why_fail(why, why_size, -ENOMEM, "out of memory");
	json_object *a = json_tokener_parse_ex(tok, text, (int)len);
	int r;
	if (!a || json_tokener_get_error(tok) != json_tokener_success || (size_t)json_tokener_get_parse_end(tok) != len) {
		r = why_invalid(why, why_size, "not one JSON array");
		goto out;
	}
	if (!json_object_is_type(a, json_type_array)) {
		r = why_invalid(why, why_size, "not a JSON array");
		goto out;
	}
	struct rt_chips chips = { 0 };
	size_t n = json_object_array_length(a);
	if (n == 0) {
		r = why_invalid(why, why_size, "no chip");
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		char cause[192];
		if ((r = rt_chip_add(json_object_array_get_idx(a, i), &chips, cause, sizeof(cause))) < 0) {
			why_fail(why, why_size, r, "entry %zu: %s", i, cause);
			goto out;
		}
	}
	*ret_chips = chips;
	chips_fix(ret_chips);
	r = 0;
out:
	json_object_put(a);
	json_tokener_free(tok);
	return r;
}

/* The string at o.key, or "" when absent or not a string. */
static const char *str_or_empty(json_object *o, const char *key)
{
	json_object *v;
	if (!json_object_object_get_ex(o, key, &v) || !json_object_is_type(v, json_type_string))
		return "";
	return json_object_get_string(v);
}

/* o.a.b.c..., NULL when a step is missing. */
static json_object *at(json_object *o, const char *const *keys, size_t n)
{
	for (size_t i = 0; o && i < n; i++)
		if (!json_object_object_get_ex(o, keys[i], &o))
			return NULL;
	return o;
}

/* The status.devices[] entry of driver, pool and device, or NULL. */
static json_object *device_status(json_object *claim, const char *driver, const char *pool, const char *device)
{
	json_object *list = at(claim, (const char *const[]){ "status", "devices" }, 2);
	if (!list || !json_object_is_type(list, json_type_array))
		return NULL;
	for (size_t i = 0; i < json_object_array_length(list); i++) {
		json_object *e = json_object_array_get_idx(list, i);
		if (json_object_is_type(e, json_type_object) && strcmp(str_or_empty(e, "driver"), driver) == 0 &&
		    strcmp(str_or_empty(e, "pool"), pool) == 0 && strcmp(str_or_empty(e, "device"), device) == 0)
			return e;
	}
	return NULL;
}

int rt_claim_chips(const char *body, size_t len, const char *driver, struct rt_chips *chips, char *why,
		   size_t why_size)
{
	json_object *claim;
	int r = kube_json_parse(body, len, &claim, why, why_size);
	if (r < 0)
		return r;
	struct rt_chips more = *chips;
	chips_fix(&more);
	json_object *results =
		at(claim, (const char *const[]){ "status", "allocation", "devices", "results" }, 4);
	size_t found = 0;
	if (!results) {
		r = why_fail(why, why_size, -EAGAIN, "not allocated yet");
		goto out;
	}
	if (!json_object_is_type(results, json_type_array)) {
		r = why_fail(why, why_size, -EBADMSG, "status.allocation.devices.results: not an array");
		goto out;
	}
	for (size_t i = 0; i < json_object_array_length(results); i++) {
		json_object *res = json_object_array_get_idx(results, i);
		if (!json_object_is_type(res, json_type_object) || strcmp(str_or_empty(res, "driver"), driver) != 0)
			continue;
		const char *pool = str_or_empty(res, "pool"), *device = str_or_empty(res, "device");
		char pool_text[72], device_text[72];
		rt_printable(pool, pool_text, sizeof(pool_text));
		rt_printable(device, device_text, sizeof(device_text));
		json_object *st = device_status(claim, driver, pool, device), *data = NULL;
		if (!st || !json_object_object_get_ex(st, "data", &data) || json_object_is_type(data, json_type_null)) {
			r = why_fail(why, why_size, -EAGAIN, "device %s of pool %s has no data yet (not prepared)",
				     device_text, pool_text);
			goto out;
		}
		char cause[192];
		if ((r = rt_chip_add(data, &more, cause, sizeof(cause))) < 0) {
			why_fail(why, why_size, r, "device %s: %s", device_text, cause);
			goto out;
		}
		found++;
	}
	if (found == 0) {
		r = why_fail(why, why_size, -ENOENT, "no device of driver %.64s", driver);
		goto out;
	}
	*chips = more;
	chips_fix(chips);
	r = 0;
out:
	json_object_put(claim);
	return r;
}
