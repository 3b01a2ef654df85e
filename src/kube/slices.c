/* SPDX-License-Identifier: Apache-2.0 */
/* ResourceSlice objects from an inventory snapshot (see slices.h). */
#include "kube/slices.h"

#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "base/json_put.h"
#include "base/k8s_names.h"
#include "npu/family.h"
#include "plugin/topology.h"

/* Whether the device goes into the slices. The extension point for vNPUs:
 * they and the chips they are carved from would be published here as
 * partitions (shared counters) or separate devices. */
static bool publishes(const struct npu_device *d)
{
	return d->kind == NPU_DEVICE_CHIP && d->vnpu_count == 0;
}

/* The taint's value: the fault in a few words, a valid label value. */
static const char *fault_value(enum npu_fault fault)
{
	switch (fault) {
	case NPU_FAULT_NONE:
		break;
	case NPU_FAULT_DRIVER_NOT_READY:
		return "driver-not-ready";
	case NPU_FAULT_NODE_MISSING:
		return "device-node-missing";
	case NPU_FAULT_ABSENT:
		return "absent";
	case NPU_FAULT_HEALTH_CALL:
		return "health-unreadable";
	case NPU_FAULT_HEALTH_LEVEL:
		return "health-critical";
	case NPU_FAULT_DISCOVERY:
		return "discovery-failed";
	case NPU_FAULT_VENDOR_TIMEOUT:
		return "vendor-call-timeout";
	case NPU_FAULT_POLICY:
		return "fault-policy";
	}
	return "unhealthy";
}

static bool numeric(const char *s, size_t n, bool leading_zero_ok)
{
	if (n == 0)
		return false;
	for (size_t i = 0; i < n; i++)
		if (s[i] < '0' || s[i] > '9')
			return false;
	return leading_zero_ok || n == 1 || s[0] != '0';
}

/* Dot-separated identifiers of [0-9A-Za-z-]; numeric ones without leading zeros when strict. */
static bool identifiers(const char *s, size_t n, bool strict_numbers)
{
	size_t start = 0;
	for (size_t i = 0; i <= n; i++) {
		if (i < n && s[i] != '.') {
			char ch = s[i];
			if (!((ch >= '0' && ch <= '9') || (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || ch == '-'))
				return false;
			continue;
		}
		size_t len = i - start;
		if (len == 0)
			return false;
		if (strict_numbers && numeric(s + start, len, true) && !numeric(s + start, len, false))
			return false;
		start = i + 1;
	}
	return true;
}

bool kube_driver_name_ok(const char *driver)
{
	size_t n = driver ? strlen(driver) : 0;
	return n > 0 && n <= KUBE_DRIVER_NAME_MAX && k8s_dns_subdomain_check(driver, n) == 0;
}

bool kube_is_semver(const char *text)
{
	if (!text)
		return false;
	size_t n = strlen(text);
	const char *plus = memchr(text, '+', n);
	size_t core_end = plus ? (size_t)(plus - text) : n;
	const char *dash = memchr(text, '-', core_end);
	size_t nums_end = dash ? (size_t)(dash - text) : core_end;
	/* MAJOR.MINOR.PATCH */
	size_t start = 0, parts = 0;
	for (size_t i = 0; i <= nums_end; i++) {
		if (i < nums_end && text[i] != '.')
			continue;
		if (!numeric(text + start, i - start, false))
			return false;
		parts++;
		start = i + 1;
	}
	if (parts != 3)
		return false;
	if (dash && !identifiers(dash + 1, core_end - nums_end - 1, true))
		return false;
	if (plus && !identifiers(plus + 1, n - core_end - 1, false))
		return false;
	return true;
}

/* FNV-1a, to tell cut node names apart. */
static uint32_t fnv1a(const char *s)
{
	uint32_t h = 2166136261u;
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 16777619u;
	return h;
}

int kube_slice_name(const char *node_name, const char *driver, size_t index, char out[KUBE_NAME_MAX])
{
	char tail[96];
	int t = snprintf(tail, sizeof(tail), "-%s-%zu", driver, index);
	if (t < 0 || (size_t)t >= sizeof(tail))
		return -EINVAL;
	size_t node_len = strlen(node_name);
	if (node_len + (size_t)t < KUBE_NAME_MAX) {
		memcpy(out, node_name, node_len);
		memcpy(out + node_len, tail, (size_t)t + 1);
		return 0;
	}
	/* "<cut node>-<hash>" and the tail; the cut must not end in '.' or '-'. */
	size_t room = KUBE_NAME_MAX - 1 - (size_t)t - 9;
	if (room < 1)
		return -EINVAL;
	size_t keep = room < node_len ? room : node_len;
	while (keep && (node_name[keep - 1] == '.' || node_name[keep - 1] == '-'))
		keep--;
	snprintf(out, KUBE_NAME_MAX, "%.*s-%08" PRIx32 "%s", (int)keep, node_name, fnv1a(node_name), tail);
	return 0;
}

/* attributes[name] = {type: value}. */
static void put_attr(struct json_put *b, json_object *attrs, const char *name, const char *type, json_object *value)
{
	json_object *a = json_put(b, attrs, name, json_object_new_object());
	json_put(b, a, type, value);
}

static void put_version(struct json_put *b, json_object *attrs, const char *name, const char *text)
{
	/* A longer value would make the server refuse the whole slice. */
	if (text && *text && strlen(text) <= KUBE_ATTRIBUTE_VALUE_MAX)
		put_attr(b, attrs, name, kube_is_semver(text) ? "version" : "string", json_object_new_string(text));
}

static void put_capacity(struct json_put *b, json_object *cap, const char *name, const char *quantity)
{
	json_object *c = json_put(b, cap, name, json_object_new_object());
	json_put_string(b, c, "value", quantity);
}

static json_object *device_json(struct json_put *b, const struct npu_snapshot *snap, size_t index,
				const struct kube_slice_params *p)
{
	const struct npu_device *d = &snap->devices[index];
	json_object *dev = json_object_new_object();
	json_put_string(b, dev, "name", d->id);
	json_object *attrs = json_put(b, dev, "attributes", json_object_new_object());
	if (d->chip.family != NPU_FAMILY_UNKNOWN)
		put_attr(b, attrs, "family", "string", json_object_new_string(npu_family_name(d->chip.family)));
	if (d->chip.name[0])
		put_attr(b, attrs, "product", "string", json_object_new_string(d->chip.name));
	put_attr(b, attrs, "physicalID", "int", json_object_new_int64(d->chip.phy_id));
	put_attr(b, attrs, "logicID", "int", json_object_new_int64(d->chip.logic_id));
	if (d->chip.card_id >= 0)
		put_attr(b, attrs, "card", "int", json_object_new_int64(d->chip.card_id));
	if (d->chip.device_id >= 0)
		put_attr(b, attrs, "chip", "int", json_object_new_int64(d->chip.device_id));
	struct topology_group g;
	if (topology_interconnect(snap, d, &g) == 0) {
		char group[64];
		snprintf(group, sizeof(group), "%s-%ld", g.kind, g.index);
		put_attr(b, attrs, "interconnect", "string", json_object_new_string(g.kind));
		put_attr(b, attrs, "interconnectGroup", "string", json_object_new_string(group));
	} else {
		put_attr(b, attrs, "interconnect", "string", json_object_new_string("pcie"));
	}
	put_version(b, attrs, "driverVersion", p->driver_version);
	put_version(b, attrs, "firmwareVersion", p->firmware_version);
	if (d->pci_address[0])
		put_attr(b, attrs, "resource.kubernetes.io/pciBusID", "string", json_object_new_string(d->pci_address));
	if (d->has_numa)
		put_attr(b, attrs, "resource.kubernetes.io/numaNode", "int", json_object_new_int64(d->numa_node));

	uint64_t hbm = p->hbm_bytes ? p->hbm_bytes[index] : 0;
	if (hbm || d->chip.aicore_count) {
		json_object *cap = json_put(b, dev, "capacity", json_object_new_object());
		char q[32];
		if (hbm) {
			/* Whole MiB when it divides, so that the quantity reads as people write it. */
			if (hbm % (1024 * 1024) == 0)
				snprintf(q, sizeof(q), "%" PRIu64 "Mi", hbm / (1024 * 1024));
			else
				snprintf(q, sizeof(q), "%" PRIu64, hbm);
			put_capacity(b, cap, "memory", q);
		}
		if (d->chip.aicore_count) {
			snprintf(q, sizeof(q), "%" PRIu32, d->chip.aicore_count);
			put_capacity(b, cap, "aiCores", q);
		}
	}
	if (!d->healthy) {
		json_object *taints = json_put(b, dev, "taints", json_object_new_array());
		json_object *t = json_put(b, taints, NULL, json_object_new_object());
		json_put_string(b, t, "key", KUBE_TAINT_UNHEALTHY_KEY);
		json_put_string(b, t, "value", fault_value(d->fault));
		json_put_string(b, t, "effect", "NoSchedule");
	}
	return dev;
}

static json_object *slice_json(struct json_put *b, const struct kube_slice_params *p, const char *driver,
			       size_t index, size_t count)
{
	char name[KUBE_NAME_MAX];
	if (kube_slice_name(p->node_name, driver, index, name) < 0) {
		b->failed = true;
		return NULL;
	}
	json_object *s = json_object_new_object();
	json_put_string(b, s, "apiVersion", "resource.k8s.io/v1");
	json_put_string(b, s, "kind", "ResourceSlice");
	json_object *meta = json_put(b, s, "metadata", json_object_new_object());
	json_put_string(b, meta, "name", name);
	if (p->node_uid && *p->node_uid) {
		/* The Node owns the slices: the garbage collector removes them
		 * with it, even when this driver is long gone. */
		json_object *owners = json_put(b, meta, "ownerReferences", json_object_new_array());
		json_object *o = json_put(b, owners, NULL, json_object_new_object());
		json_put_string(b, o, "apiVersion", "v1");
		json_put_string(b, o, "kind", "Node");
		json_put_string(b, o, "name", p->node_name);
		json_put_string(b, o, "uid", p->node_uid);
		json_put(b, o, "controller", json_object_new_boolean(1));
	}
	json_object *spec = json_put(b, s, "spec", json_object_new_object());
	json_put_string(b, spec, "driver", driver);
	json_put_string(b, spec, "nodeName", p->node_name);
	json_object *pool = json_put(b, spec, "pool", json_object_new_object());
	json_put_string(b, pool, "name", p->node_name);
	json_put(b, pool, "generation", json_object_new_int64(p->generation));
	json_put(b, pool, "resourceSliceCount", json_object_new_int64((int64_t)count));
	json_put(b, spec, "devices", json_object_new_array());
	return s;
}

int kube_slices_build(const struct npu_snapshot *snapshot, const struct kube_slice_params *params,
		      json_object **ret_slices)
{
	const char *driver = params->driver ? params->driver : KUBE_DRIVER_DEFAULT;
	if (!params->node_name || k8s_dns_subdomain_check(params->node_name, strlen(params->node_name)) < 0 ||
	    !kube_driver_name_ok(driver))
		return -EINVAL;
	size_t n = 0;
	bool tainted = false;
	for (size_t i = 0; i < snapshot->count; i++) {
		if (!publishes(&snapshot->devices[i]))
			continue;
		n++;
		tainted |= !snapshot->devices[i].healthy;
	}
	/* One limit for the whole pool: the split then does not move devices
	 * between slices when a chip's health changes, unless a taint first
	 * appears or the last one goes. */
	size_t per_slice = tainted ? KUBE_SLICE_MAX_DEVICES_TAINTED : KUBE_SLICE_MAX_DEVICES;
	size_t count = (n + per_slice - 1) / per_slice;
	struct json_put b = { 0 };
	json_object *slices = json_object_new_array();
	json_object *slice = NULL, *devices = NULL;
	size_t placed = 0;
	for (size_t i = 0; i < snapshot->count && !b.failed; i++) {
		if (!publishes(&snapshot->devices[i]))
			continue;
		if (placed % per_slice == 0) {
			slice = json_put(&b, slices, NULL, slice_json(&b, params, driver, placed / per_slice, count));
			json_object *spec = slice ? json_object_object_get(slice, "spec") : NULL;
			devices = spec ? json_object_object_get(spec, "devices") : NULL;
		}
		json_put(&b, devices, NULL, device_json(&b, snapshot, i, params));
		placed++;
	}
	if (!slices || b.failed) {
		json_object_put(slices);
		return -ENOMEM;
	}
	*ret_slices = slices;
	return 0;
}
