/* SPDX-License-Identifier: Apache-2.0 */
#include "node/visible.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "base/strbuf.h"

static int compare_number(const void *a, const void *b)
{
	const struct npu_device *const *x = a, *const *y = b;
	return npu_phy_compare(npu_device_number(*x), npu_device_number(*y));
}

void visible_sort(const struct npu_device **devs, size_t n)
{
	if (n > 1)
		qsort(devs, n, sizeof(*devs), compare_number);
}

int visible_devices(const struct npu_device *const *devs, size_t n, char *buf, size_t size)
{
	struct strbuf sb;
	strbuf_init(&sb, buf, size, NULL);
	for (size_t i = 0; i < n; i++)
		if (strbuf_printf(&sb, "%s%u", i ? "," : "", npu_device_number(devs[i])) < 0)
			return -ENOSPC;
	return size ? 0 : -ENOSPC;
}

int visible_logical(size_t n, char *buf, size_t size)
{
	struct strbuf sb;
	strbuf_init(&sb, buf, size, NULL);
	for (size_t i = 0; i < n; i++)
		if (strbuf_printf(&sb, "%s%zu", i ? "," : "", i) < 0)
			return -ENOSPC;
	return size ? 0 : -ENOSPC;
}

bool visible_virtual(const struct npu_device *const *devs, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (devs[i]->kind == NPU_DEVICE_VNPU)
			return true;
	return false;
}

/* Adds key: value to o; a failed add frees value and says so. */
static bool put(struct json_object *o, const char *key, struct json_object *value)
{
	if (!value || json_object_object_add(o, key, value) < 0) {
		json_object_put(value);
		return false;
	}
	return true;
}

struct json_object *visible_network_entry(const struct npu_device *device)
{
	const struct npu_net *net = &device->net;
	struct json_object *o = json_object_new_object();
	bool ok = o && put(o, "device_id", json_object_new_int64(device->chip.phy_id)) &&
		  put(o, "family", json_object_new_string(npu_family_name(device->chip.family)));
	char ip[NPU_NET_ADDRESS_MAX];
	if (ok && npu_net_address(net, false, ip))
		ok = put(o, "device_ip", json_object_new_string(ip)) &&
		     put(o, "prefix_len", json_object_new_int64(net->prefix_len));
	ok = ok && put(o, "link", json_object_new_string(npu_link_name(net->link)));
	if (ok && net->has_super_pod)
		ok = put(o, "super_device_id", json_object_new_int64(net->sdid)) &&
		     put(o, "super_pod_id", json_object_new_int64(net->super_pod_id)) &&
		     put(o, "server_index", json_object_new_int64(net->server_index));
	if (!ok) {
		json_object_put(o);
		return NULL;
	}
	return o;
}

int visible_network(const struct npu_device *const *devs, size_t n, char **ret_value)
{
	bool any = false;
	for (size_t i = 0; i < n; i++)
		any |= devs[i]->kind == NPU_DEVICE_CHIP && (devs[i]->net.has_ip || devs[i]->net.has_super_pod);
	if (!any)
		return -ENODATA;
	struct json_object *list = json_object_new_array();
	int r = list ? 0 : -ENOMEM;
	for (size_t i = 0; r == 0 && i < n; i++) {
		if (devs[i]->kind != NPU_DEVICE_CHIP)
			continue;
		struct json_object *o = visible_network_entry(devs[i]);
		if (!o || json_object_array_add(list, o) < 0) {
			json_object_put(o);
			r = -ENOMEM;
		}
	}
	char *value = NULL;
	if (r == 0) {
		const char *text = json_object_to_json_string_ext(list, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE);
		value = text ? strdup(text) : NULL;
		r = value ? 0 : -ENOMEM;
	}
	json_object_put(list);
	if (r == 0)
		*ret_value = value;
	return r;
}
