/* SPDX-License-Identifier: Apache-2.0 */
#include "node/device_metadata.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "base/parse.h"
#include "node/topology.h"
#include "npu/family.h"

/* Newest first: a reader takes the first version it knows. */
static const char *const versions[] = { "metadata.resource.k8s.io/v1beta1", "metadata.resource.k8s.io/v1alpha1" };

static void put_int(struct json_put *b, json_object *attrs, const char *name, int64_t v)
{
	json_object *a = json_put(b, attrs, name, json_object_new_object());
	json_put(b, a, "int", json_object_new_int64(v));
}

static void put_string(struct json_put *b, json_object *attrs, const char *name, const char *v)
{
	json_object *a = json_put(b, attrs, name, json_object_new_object());
	json_put_string(b, a, "string", v);
}

/* A field known: one with a value. */
static void put_known(struct json_put *b, json_object *o, const char *key, const char *v)
{
	if (v && v[0])
		json_put_string(b, o, key, v);
}

void device_metadata_put_network_data(struct json_put *b, json_object *o, const struct npu_device *d)
{
	char cidr[NPU_NET_ADDRESS_MAX];
	if (d->kind != NPU_DEVICE_CHIP || !npu_net_address(&d->net, true, cidr))
		return;
	json_object *network = json_put(b, o, "networkData", json_object_new_object());
	json_object *ips = json_put(b, network, "ips", json_object_new_array());
	json_put_string(b, ips, NULL, cidr);
}

static void put_device(struct json_put *b, json_object *list, const char *driver,
		       const struct device_metadata_device *m)
{
	const struct npu_device *d = m->device;
	json_object *o = json_put(b, list, NULL, json_object_new_object());
	json_put_string(b, o, "driver", driver);
	put_known(b, o, "pool", m->pool);
	json_put_string(b, o, "name", d->id);
	json_object *attrs = json_put(b, o, "attributes", json_object_new_object());
	put_string(b, attrs, "type", d->kind == NPU_DEVICE_VNPU ? "vnpu" : "chip");
	put_string(b, attrs, "family", npu_family_name(d->chip.family));
	put_int(b, attrs, "physicalID", d->chip.phy_id);
	put_int(b, attrs, "card", d->chip.card_id);
	put_int(b, attrs, "chip", d->chip.device_id);
	put_int(b, attrs, "containerLogicalID", (int64_t)m->logical_id);
	if (d->kind == NPU_DEVICE_VNPU) {
		put_int(b, attrs, "vnpuID", d->vnpu.id);
		if (d->vnpu.template_name[0])
			put_string(b, attrs, "template", d->vnpu.template_name);
	}
	struct topology_group g;
	if (topology_interconnect(d, &g) == 0) {
		char group[64];
		(void)str_printf(group, sizeof(group), "%s-%ld", g.kind, g.index); /* fits */
		put_string(b, attrs, "interconnect", g.kind);
		put_string(b, attrs, "interconnectGroup", group);
	}
	char ip[NPU_NET_ADDRESS_MAX];
	if (d->kind == NPU_DEVICE_CHIP && npu_net_address(&d->net, false, ip))
		put_string(b, attrs, "roceIP", ip);
	if (d->pci_address[0])
		put_string(b, attrs, "resource.kubernetes.io/pciBusID", d->pci_address);
	if (d->has_numa)
		put_int(b, attrs, "resource.kubernetes.io/numaNode", d->numa_node);
	device_metadata_put_network_data(b, o, d);
}

/* One version's object. */
static json_object *object(struct json_put *b, const char *version, const char *driver,
			   const struct device_metadata_owner *owner, const char *request,
			   const struct device_metadata_device *devs, size_t n)
{
	json_object *o = json_object_new_object();
	json_put_string(b, o, "kind", "DeviceMetadata");
	json_put_string(b, o, "apiVersion", version);
	json_object *meta = json_put(b, o, "metadata", json_object_new_object());
	put_known(b, meta, "name", owner->name);
	put_known(b, meta, "namespace", owner->namespace);
	put_known(b, meta, "uid", owner->uid);
	json_put(b, meta, "generation", json_object_new_int(1));
	put_known(b, o, "podClaimName", owner->pod_claim);
	json_object *requests = json_put(b, o, "requests", json_object_new_array());
	json_object *req = json_put(b, requests, NULL, json_object_new_object());
	json_put_string(b, req, "name", request);
	json_object *list = json_put(b, req, "devices", json_object_new_array());
	for (size_t i = 0; i < n; i++)
		put_device(b, list, driver, &devs[i]);
	if (b->failed) {
		json_object_put(o);
		return NULL;
	}
	return o;
}

int device_metadata_render(const char *driver, const struct device_metadata_owner *owner, const char *request,
			   const struct device_metadata_device *devs, size_t n, char **ret_json)
{
	if (n == 0 || n > DEVICE_METADATA_MAX_DEVICES)
		return -EINVAL;
	struct json_put b = { 0 };
	size_t used = 0;
	char *text = NULL;
	int r = 0;
	for (size_t v = 0; v < sizeof(versions) / sizeof(versions[0]) && r == 0; v++) {
		json_object *o = object(&b, versions[v], driver, owner, request, devs, n);
		const char *s = o ? json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE) : NULL;
		size_t len = s ? strlen(s) : 0;
		char *grown = s ? realloc(text, used + len + 2) : NULL;
		if (!grown) {
			r = -ENOMEM;
		} else {
			text = grown;
			memcpy(text + used, s, len);
			used += len;
			text[used++] = '\n';
			text[used] = '\0';
		}
		json_object_put(o);
	}
	if (r < 0) {
		free(text);
		return r;
	}
	*ret_json = text;
	return 0;
}
