/* SPDX-License-Identifier: Apache-2.0 */
#include "support/ranktable_check.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

/* The keys each level may hold, by page. */
static const char *const top_keys[] = { "status", "version", "server_count", "server_list", NULL };
static const char *const top_keys_v12[] = {
	"status", "version", "server_count", "server_list", "super_pod_list", NULL,
};
static const char *const server_keys[] = { "server_id", "device", NULL };
static const char *const server_keys_a3[] = { "server_id", "host_ip", "device", NULL };
static const char *const device_keys_910[] = { "device_id", "device_ip", "rank_id", NULL };
static const char *const device_keys_910b[] = { "device_id", "device_ip", "device_port", "rank_id", NULL };
static const char *const device_keys_a3_v10[] = {
	"device_id", "device_ip", "device_port", "host_port", "rank_id", NULL,
};
static const char *const device_keys_a3_v12[] = {
	"device_id", "super_device_id", "device_ip", "device_port", "backup_device_ip",
	"backup_device_port", "host_port", "rank_id", NULL,
};
static const char *const pod_keys[] = { "super_pod_id", "server_list", NULL };
static const char *const pod_server_keys[] = { "server_id", NULL };

struct device_seen {
	unsigned long id, rank;
	size_t server;
	bool has_ip, has_sdid;
	unsigned char ip[17]; /* address family byte, then the address */
	unsigned long sdid;
};

struct check {
	bool is_910, is_a3, v12;
	char *why;
	size_t why_size;
	json_object **servers; /* server_list's objects */
	size_t n_servers;
	struct device_seen *devices;
	size_t n_devices;
	size_t *pod_of; /* per server: its super pod, or SIZE_MAX */
	size_t n_pods;
};

static int broken(struct check *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int broken(struct check *c, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(c->why, c->why_size, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

/* The first key of o that allowed does not list, or NULL. */
static const char *stray_key(json_object *o, const char *const *allowed)
{
	json_object_object_foreach(o, key, value)
	{
		(void)value;
		size_t i = 0;
		while (allowed[i] && strcmp(allowed[i], key) != 0)
			i++;
		if (!allowed[i])
			return key;
	}
	return NULL;
}

/* An object whose keys are all in allowed. */
static int object_with(struct check *c, json_object *o, const char *const *allowed, const char *where)
{
	if (!json_object_is_type(o, json_type_object))
		return broken(c, "%s is not an object", where);
	const char *stray = stray_key(o, allowed);
	if (stray)
		return broken(c, "%s has \"%s\", which the page does not document", where, stray);
	return 0;
}

/* *ret is the string at key, or NULL when it is absent and not required. */
static int string_at(struct check *c, json_object *o, const char *key, bool required, const char **ret,
		     const char *where)
{
	json_object *v;
	*ret = NULL;
	if (!json_object_object_get_ex(o, key, &v))
		return required ? broken(c, "%s has no \"%s\"", where, key) : 0;
	if (!json_object_is_type(v, json_type_string))
		return broken(c, "%s: \"%s\" is not a string", where, key);
	*ret = json_object_get_string(v);
	return 0;
}

/* A whole number in plain decimal, no sign, no leading zero, at most max. */
static bool decimal(const char *s, unsigned long max, unsigned long *ret)
{
	unsigned long v = 0;
	size_t len = strlen(s);
	if (len == 0 || len > 10 || (len > 1 && s[0] == '0'))
		return false;
	for (size_t i = 0; i < len; i++) {
		if (s[i] < '0' || s[i] > '9')
			return false;
		v = v * 10 + (unsigned long)(s[i] - '0');
	}
	if (v > max)
		return false;
	*ret = v;
	return true;
}

/* An address as 17 bytes (family, then the address); IPv4 only with v4_only. */
static bool address(const char *s, bool v4_only, unsigned char out[17])
{
	memset(out, 0, 17);
	if (inet_pton(AF_INET, s, out + 1) == 1) {
		out[0] = 4;
		return true;
	}
	if (!v4_only && inet_pton(AF_INET6, s, out + 1) == 1) {
		out[0] = 6;
		return true;
	}
	return false;
}

static int port_at(struct check *c, json_object *o, const char *key, const char *where)
{
	const char *s;
	unsigned long port;
	int r = string_at(c, o, key, false, &s, where);
	if (r < 0 || !s)
		return r;
	if (!decimal(s, 65535, &port) || port == 0)
		return broken(c, "%s: %s \"%s\" is not a port in [1, 65535]", where, key, s);
	return 0;
}

static int check_device(struct check *c, json_object *d, size_t server, const char *where)
{
	const char *const *keys = c->is_910 ? device_keys_910
				  : !c->is_a3 ? device_keys_910b
				  : c->v12    ? device_keys_a3_v12
					      : device_keys_a3_v10;
	struct device_seen *seen = &c->devices[c->n_devices];
	const char *id, *rank, *ip, *sdid, *backup;
	unsigned long id_value;
	unsigned char backup_ip[17];
	int r = object_with(c, d, keys, where);
	if (r < 0)
		return r;
	if ((r = string_at(c, d, "device_id", true, &id, where)) < 0 ||
	    (r = string_at(c, d, "rank_id", true, &rank, where)) < 0 ||
	    (r = string_at(c, d, "device_ip", false, &ip, where)) < 0 ||
	    (r = string_at(c, d, "super_device_id", false, &sdid, where)) < 0 ||
	    (r = string_at(c, d, "backup_device_ip", false, &backup, where)) < 0)
		return r;
	if ((r = port_at(c, d, "device_port", where)) < 0 || (r = port_at(c, d, "host_port", where)) < 0 ||
	    (r = port_at(c, d, "backup_device_port", where)) < 0)
		return r;
	if (!decimal(id, UINT32_MAX, &id_value))
		return broken(c, "%s: device_id \"%s\" is not a whole number", where, id);
	if (!decimal(rank, UINT32_MAX, &seen->rank))
		return broken(c, "%s: rank_id \"%s\" is not a whole number", where, rank);
	if (ip && !address(ip, false, seen->ip))
		return broken(c, "%s: device_ip \"%s\" is neither IPv4 nor IPv6", where, ip);
	if (backup && !address(backup, false, backup_ip))
		return broken(c, "%s: backup_device_ip \"%s\" is neither IPv4 nor IPv6", where, backup);
	if (sdid && !decimal(sdid, UINT32_MAX, &seen->sdid))
		return broken(c, "%s: super_device_id \"%s\" is not a whole number", where, sdid);
	/* device_id once per server: the devices of this server come last. */
	for (size_t i = c->n_devices; i-- > 0 && c->devices[i].server == server;)
		if (c->devices[i].id == id_value)
			return broken(c, "%s: device_id %s twice on one server", where, id);
	seen->id = id_value;
	seen->server = server;
	seen->has_ip = ip != NULL;
	seen->has_sdid = sdid != NULL;
	c->n_devices++;
	return 0;
}

static int check_server(struct check *c, size_t s)
{
	json_object *o = c->servers[s], *devices;
	const char *id, *host;
	char where[128];
	unsigned char host_ip[17];
	snprintf(where, sizeof(where), "server_list[%zu]", s);
	int r = object_with(c, o, c->is_a3 ? server_keys_a3 : server_keys, where);
	if (r < 0 || (r = string_at(c, o, "server_id", true, &id, where)) < 0 ||
	    (r = string_at(c, o, "host_ip", false, &host, where)) < 0)
		return r;
	if (strlen(id) == 0 || strlen(id) > 64)
		return broken(c, "%s: server_id \"%s\" is not 1 to 64 characters", where, id);
	for (size_t i = 0; i < s; i++)
		if (strcmp(json_object_get_string(json_object_object_get(c->servers[i], "server_id")), id) == 0)
			return broken(c, "%s: server_id \"%s\" is also server_list[%zu]'s", where, id, i);
	if (host && !address(host, true, host_ip))
		return broken(c, "%s: host_ip \"%s\" is not IPv4", where, host);
	if (!json_object_object_get_ex(o, "device", &devices) || !json_object_is_type(devices, json_type_array) ||
	    json_object_array_length(devices) == 0)
		return broken(c, "%s (%s): no device list, or an empty one", where, id);
	for (size_t i = 0; i < json_object_array_length(devices); i++) {
		char device_where[160];
		snprintf(device_where, sizeof(device_where), "%s (%s) device[%zu]", where, id, i);
		r = check_device(c, json_object_array_get_idx(devices, i), s, device_where);
		if (r < 0)
			return r;
	}
	return 0;
}

/* Rank ids 0..N-1 each once, one unbroken run per server. */
static int check_ranks(struct check *c)
{
	size_t *count = calloc(c->n_servers, sizeof(*count));
	unsigned long *low = calloc(c->n_servers, sizeof(*low)), *high = calloc(c->n_servers, sizeof(*high));
	bool *taken = calloc(c->n_devices, sizeof(*taken));
	int r = -ENOMEM;
	if (!count || !low || !high || !taken) {
		snprintf(c->why, c->why_size, "out of memory");
		goto out;
	}
	for (size_t i = 0; i < c->n_devices; i++) {
		const struct device_seen *d = &c->devices[i];
		if (d->rank >= c->n_devices) {
			r = broken(c, "rank_id %lu is outside [0, %zu]", d->rank, c->n_devices - 1);
			goto out;
		}
		if (taken[d->rank]) {
			r = broken(c, "rank_id %lu twice", d->rank);
			goto out;
		}
		taken[d->rank] = true;
		if (count[d->server] == 0 || d->rank < low[d->server])
			low[d->server] = d->rank;
		if (count[d->server] == 0 || d->rank > high[d->server])
			high[d->server] = d->rank;
		count[d->server]++;
	}
	r = 0;
	for (size_t s = 0; s < c->n_servers && r == 0; s++)
		if (high[s] - low[s] + 1 != count[s])
			r = broken(c, "server_list[%zu]'s rank ids %lu..%lu interleave with another server's", s, low[s],
				   high[s]);
out:
	free(taken);
	free(high);
	free(low);
	free(count);
	return r;
}

static int check_super_pods(struct check *c, json_object *pods)
{
	char where[64];
	if (!json_object_is_type(pods, json_type_array) || json_object_array_length(pods) == 0)
		return broken(c, "super_pod_list is not a non-empty array");
	c->n_pods = json_object_array_length(pods);
	for (size_t p = 0; p < c->n_pods; p++) {
		json_object *pod = json_object_array_get_idx(pods, p), *list;
		const char *id;
		size_t first = SIZE_MAX, last = 0, n = 0;
		snprintf(where, sizeof(where), "super_pod_list[%zu]", p);
		int r = object_with(c, pod, pod_keys, where);
		if (r < 0 || (r = string_at(c, pod, "super_pod_id", true, &id, where)) < 0)
			return r;
		if (!id[0])
			return broken(c, "%s: super_pod_id is empty", where);
		for (size_t q = 0; q < p; q++)
			if (strcmp(json_object_get_string(
					   json_object_object_get(json_object_array_get_idx(pods, q), "super_pod_id")),
				   id) == 0)
				return broken(c, "%s: super_pod_id \"%s\" twice", where, id);
		if (!json_object_object_get_ex(pod, "server_list", &list) || !json_object_is_type(list, json_type_array) ||
		    json_object_array_length(list) == 0)
			return broken(c, "%s: no server_list, or an empty one", where);
		for (size_t i = 0; i < json_object_array_length(list); i++) {
			json_object *entry = json_object_array_get_idx(list, i);
			const char *server_id;
			size_t s = 0;
			if ((r = object_with(c, entry, pod_server_keys, where)) < 0 ||
			    (r = string_at(c, entry, "server_id", true, &server_id, where)) < 0)
				return r;
			while (s < c->n_servers &&
			       strcmp(json_object_get_string(json_object_object_get(c->servers[s], "server_id")),
				      server_id) != 0)
				s++;
			if (s == c->n_servers)
				return broken(c, "%s: server \"%s\" is not in server_list", where, server_id);
			if (c->pod_of[s] != SIZE_MAX)
				return broken(c, "%s: server \"%s\" is in two super pods, or twice", where, server_id);
			c->pod_of[s] = p;
			first = s < first ? s : first;
			last = s > last ? s : last;
			n++;
		}
		if (last - first + 1 != n)
			return broken(c, "%s: its servers are not side by side in server_list", where);
	}
	for (size_t s = 0; s < c->n_servers; s++)
		if (c->pod_of[s] == SIZE_MAX)
			return broken(c, "server_list[%zu] is in no super pod", s);
	return 0;
}

static int bytes17_compare(const void *a, const void *b)
{
	return memcmp(a, b, 17);
}

/* device_ip where the pages require it, and unique; super_device_id on all
 * devices or none, unique in its super pod. */
static int check_addresses(struct check *c)
{
	unsigned char(*ips)[17] = calloc(c->n_devices, sizeof(*ips));
	unsigned char(*sdids)[17] = calloc(c->n_devices, sizeof(*sdids));
	size_t n_ips = 0, n_sdids = 0;
	size_t groups = c->n_pods ? c->n_pods : c->n_servers;
	bool required = c->is_910 || groups > 1;
	int r = -ENOMEM;
	if (!ips || !sdids) {
		snprintf(c->why, c->why_size, "out of memory");
		goto out;
	}
	for (size_t i = 0; i < c->n_devices; i++) {
		const struct device_seen *d = &c->devices[i];
		if (!d->has_ip && required) {
			r = broken(c, "rank %lu has no device_ip, which the page requires here", d->rank);
			goto out;
		}
		if (d->has_ip)
			memcpy(ips[n_ips++], d->ip, 17);
		if (d->has_sdid != (c->n_pods > 0)) {
			r = broken(c, "rank %lu %s super_device_id, and the table %s super_pod_list", d->rank,
				   d->has_sdid ? "has a" : "has no", c->n_pods ? "has a" : "has no");
			goto out;
		}
		if (d->has_sdid) {
			uint64_t pod = c->pod_of[d->server];
			for (int b = 0; b < 8; b++)
				sdids[n_sdids][b] = (unsigned char)(pod >> (56 - 8 * b));
			for (int b = 0; b < 8; b++)
				sdids[n_sdids][8 + b] = (unsigned char)((uint64_t)d->sdid >> (56 - 8 * b));
			n_sdids++;
		}
	}
	r = 0;
	qsort(ips, n_ips, sizeof(*ips), bytes17_compare);
	for (size_t i = 1; i < n_ips && r == 0; i++)
		if (memcmp(ips[i], ips[i - 1], 17) == 0)
			r = broken(c, "two devices have one device_ip");
	qsort(sdids, n_sdids, sizeof(*sdids), bytes17_compare);
	for (size_t i = 1; i < n_sdids && r == 0; i++)
		if (memcmp(sdids[i], sdids[i - 1], 17) == 0)
			r = broken(c, "two devices of one super pod have one super_device_id");
out:
	free(sdids);
	free(ips);
	return r;
}

/* The devices server_list holds, counted before they are checked (0 for a
 * server without a device array: its check fails anyway). */
static size_t devices_listed(json_object *list)
{
	size_t n = 0;
	for (size_t s = 0; s < json_object_array_length(list); s++) {
		json_object *devices;
		if (json_object_object_get_ex(json_object_array_get_idx(list, s), "device", &devices) &&
		    json_object_is_type(devices, json_type_array))
			n += json_object_array_length(devices);
	}
	return n;
}

static int check_table(struct check *c, json_object *root, const char *family)
{
	const char *status, *version, *count;
	json_object *list, *pods;
	unsigned long count_value;
	int r;
	c->is_910 = strcmp(family, "910") == 0;
	c->is_a3 = strcmp(family, "A3") == 0;
	if (!c->is_910 && !c->is_a3 && strcmp(family, "910B") != 0)
		return broken(c, "no page for family %s", family);
	if (!json_object_is_type(root, json_type_object))
		return broken(c, "the table is not a JSON object");
	if ((r = string_at(c, root, "version", true, &version, "the table")) < 0)
		return r;
	c->v12 = c->is_a3 && strcmp(version, "1.2") == 0;
	if (strcmp(version, "1.0") != 0 && !c->v12)
		return broken(c, "version \"%s\" is not one the %s page describes", version, family);
	if ((r = object_with(c, root, c->v12 ? top_keys_v12 : top_keys, "the table")) < 0 ||
	    (r = string_at(c, root, "status", true, &status, "the table")) < 0 ||
	    (r = string_at(c, root, "server_count", !c->v12, &count, "the table")) < 0)
		return r;
	if (strcmp(status, "completed") != 0 && strcmp(status, "initializing") != 0)
		return broken(c, "status \"%s\" is neither completed nor initializing", status);
	if (!json_object_object_get_ex(root, "server_list", &list) || !json_object_is_type(list, json_type_array) ||
	    json_object_array_length(list) == 0)
		return broken(c, "no server_list, or an empty one");
	c->n_servers = json_object_array_length(list);
	if (count && (!decimal(count, UINT32_MAX, &count_value) || count_value != c->n_servers))
		return broken(c, "server_count \"%s\" is not the %zu servers listed", count, c->n_servers);
	c->servers = calloc(c->n_servers, sizeof(*c->servers));
	c->pod_of = calloc(c->n_servers, sizeof(*c->pod_of));
	c->devices = calloc(devices_listed(list) + 1, sizeof(*c->devices));
	if (!c->servers || !c->pod_of || !c->devices) {
		snprintf(c->why, c->why_size, "out of memory");
		return -ENOMEM;
	}
	for (size_t s = 0; s < c->n_servers; s++) {
		c->servers[s] = json_object_array_get_idx(list, s);
		c->pod_of[s] = SIZE_MAX;
	}
	for (size_t s = 0; s < c->n_servers; s++)
		if ((r = check_server(c, s)) < 0)
			return r;
	if ((r = check_ranks(c)) < 0)
		return r;
	if (json_object_object_get_ex(root, "super_pod_list", &pods) && (r = check_super_pods(c, pods)) < 0)
		return r;
	return check_addresses(c);
}

int ranktable_check(const char *json, const char *family, struct ranktable_facts *ret_facts, char *why,
		    size_t why_size)
{
	struct check c = { .why = why, .why_size = why_size };
	enum json_tokener_error error;
	json_object *root = json_tokener_parse_verbose(json, &error);
	int r;
	if (!root)
		return broken(&c, "not JSON: %s", json_tokener_error_desc(error));
	r = check_table(&c, root, family);
	if (r == 0 && ret_facts) {
		*ret_facts = (struct ranktable_facts){ .servers = c.n_servers,
						       .devices = c.n_devices,
						       .super_pods = c.n_pods };
		snprintf(ret_facts->version, sizeof(ret_facts->version), "%s",
			 json_object_get_string(json_object_object_get(root, "version")));
	}
	free(c.devices);
	free(c.pod_of);
	free(c.servers);
	json_object_put(root);
	return r;
}
