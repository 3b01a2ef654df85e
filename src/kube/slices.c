/* SPDX-License-Identifier: Apache-2.0 */
/* ResourceSlice objects from an inventory snapshot (see slices.h). */
#include "kube/slices.h"

#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/json_put.h"
#include "base/k8s_names.h"
#include "npu/family.h"
#include "npu/vnpu.h"
#include "node/partitions.h"
#include "node/topology.h"

static uint64_t hbm_of(const struct kube_slice_params *p, size_t index)
{
	return p->facts ? p->facts[index].hbm_bytes : 0;
}

/* How many claims may hold chip index at once: 0 or 1 unless the server
 * keeps shared capacity (see slices.h). */
static uint32_t shares_of(const struct kube_slice_params *p, size_t index)
{
	return p->facts && !(p->lacking & KUBE_LACKS_SHARING) ? p->facts[index].shares : 0;
}

/* The index of the chip phy in the snapshot (the chips come first). */
static bool chip_index(const struct npu_snapshot *snap, uint32_t phy, size_t *ret)
{
	for (size_t i = 0; i < snap->count && snap->devices[i].kind == NPU_DEVICE_CHIP; i++)
		if (snap->devices[i].chip.phy_id == phy) {
			*ret = i;
			return true;
		}
	return false;
}

/* Whether chip index is carved on demand (see slices.h): listed, with
 * placements, no vNPU on it but the driver's, and a server that keeps
 * partitions. */
static bool dynamic_chip(const struct npu_snapshot *snap, size_t index, const struct kube_slice_params *p)
{
	const struct npu_device *c = &snap->devices[index];
	struct partition one;
	if ((p->lacking & KUBE_LACKS_PARTITIONS) || !p->facts || !p->facts[index].carve_on_demand ||
	    c->kind != NPU_DEVICE_CHIP || partitions_of_chip(&c->chip, hbm_of(p, index), &one, 1) == 0)
		return false;
	for (size_t i = index + 1; i < snap->count; i++) {
		const struct npu_device *v = &snap->devices[i];
		if (v->kind == NPU_DEVICE_VNPU && v->vnpu.phy_id == c->chip.phy_id && !p->facts[i].made_for_claim)
			return false;
	}
	return true;
}

/* Whether device index goes into the slices: a chip not carved into vNPUs
 * or carved on demand, or a static vNPU whose template says its size,
 * where the server keeps partitions; healthy where it drops taints (see
 * slices.h). */
static bool publishes(const struct npu_snapshot *snap, size_t index, const struct kube_slice_params *p)
{
	const struct npu_device *d = &snap->devices[index];
	struct npu_vnpu_size size;
	size_t chip;
	if (!d->healthy && (p->lacking & KUBE_LACKS_TAINTS))
		return false;
	if (d->kind == NPU_DEVICE_CHIP)
		return d->vnpu_count == 0 || dynamic_chip(snap, index, p);
	if (p->lacking & KUBE_LACKS_PARTITIONS)
		return false;
	if (chip_index(snap, d->vnpu.phy_id, &chip) && dynamic_chip(snap, chip, p))
		return false;
	return npu_vnpu_template_size(d->vnpu.template_name, &size) == 0;
}

/* What a vNPU takes of its chip's counters: each of AI cores and HBM that
 * both the template and the chip's counter set know (0: not consumed).
 * False, the out-parameters untouched, when it takes nothing: then it
 * consumes no counter at all. */
static bool vnpu_consumes(const struct npu_snapshot *snap, size_t index, const struct kube_slice_params *p,
			  uint32_t *ret_cores, uint64_t *ret_memory)
{
	const struct npu_device *d = &snap->devices[index];
	struct npu_vnpu_size size;
	size_t chip;
	if ((p->lacking & KUBE_LACKS_PARTITIONS) || d->kind != NPU_DEVICE_VNPU ||
	    npu_vnpu_template_size(d->vnpu.template_name, &size) < 0 || !chip_index(snap, d->vnpu.phy_id, &chip))
		return false;
	uint32_t cores = snap->devices[chip].chip.aicore_count ? size.aicores : 0;
	uint64_t memory = hbm_of(p, chip) ? size.memory_bytes : 0;
	if (!cores && !memory)
		return false;
	*ret_cores = cores;
	*ret_memory = memory;
	return true;
}

/* Whether chip index gets a counter set: some published device consumes
 * from it (a chip carved on demand and its placements go together). */
static bool has_counter_set(const struct npu_snapshot *snap, size_t index, const struct kube_slice_params *p)
{
	const struct npu_device *c = &snap->devices[index];
	if (dynamic_chip(snap, index, p))
		return publishes(snap, index, p);
	if (c->kind != NPU_DEVICE_CHIP || c->vnpu_count == 0)
		return false;
	for (size_t i = index + 1; i < snap->count; i++) {
		uint32_t cores;
		uint64_t memory;
		if (snap->devices[i].kind == NPU_DEVICE_VNPU && snap->devices[i].vnpu.phy_id == c->chip.phy_id &&
		    publishes(snap, i, p) && vnpu_consumes(snap, i, p, &cores, &memory))
			return true;
	}
	return false;
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

/* "<node>-<driver>-<suffix>", the node's name cut as kube_slice_name says. */
static int slice_name(const char *node_name, const char *driver, const char *suffix, char out[KUBE_NAME_MAX])
{
	char tail[96];
	int t = snprintf(tail, sizeof(tail), "-%s-%s", driver, suffix);
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

int kube_slice_name(const char *node_name, const char *driver, size_t index, char out[KUBE_NAME_MAX])
{
	char suffix[24];
	snprintf(suffix, sizeof(suffix), "%zu", index);
	return slice_name(node_name, driver, suffix, out);
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

/* A quantity of bytes as the API server writes it back (its canonical
 * form): the largest binary suffix that divides it, so that a publisher
 * can tell the slices another instance wrote from its own (an API server
 * turns 65536Mi into 64Gi). */
static void bytes_quantity(uint64_t bytes, char *buf, size_t size)
{
	static const char suffixes[][3] = { "Ki", "Mi", "Gi", "Ti", "Pi", "Ei" };
	size_t k = 0;
	while (bytes && bytes % 1024 == 0 && k < sizeof(suffixes) / sizeof(suffixes[0])) {
		bytes /= 1024;
		k++;
	}
	snprintf(buf, size, "%" PRIu64 "%s", bytes, k ? suffixes[k - 1] : "");
}

/* capacity[name] = {value}; shared: the device is allocated to several
 * claims, each taking only what policy says (see slices.h). */
static void put_capacity(struct json_put *b, json_object *cap, const char *name, const char *quantity,
			 const char *policy)
{
	json_object *c = json_put(b, cap, name, json_object_new_object());
	json_put_string(b, c, "value", quantity);
	if (policy) {
		json_object *rp = json_put(b, c, "requestPolicy", json_object_new_object());
		json_put_string(b, rp, "default", policy);
		json_object *valid = json_put(b, rp, "validValues", json_object_new_array());
		json_put_string(b, valid, NULL, policy);
	}
}

/* counters[name] = {value}. */
static void put_counter(struct json_put *b, json_object *counters, const char *name, const char *quantity)
{
	json_object *c = json_put(b, counters, name, json_object_new_object());
	json_put_string(b, c, "value", quantity);
}

static void put_memory_and_cores(struct json_put *b, json_object *cap, uint64_t memory, uint32_t cores,
				 const char *policy)
{
	char q[32];
	if (memory) {
		bytes_quantity(memory, q, sizeof(q));
		put_capacity(b, cap, "memory", q, policy);
	}
	if (cores) {
		snprintf(q, sizeof(q), "%" PRIu32, cores);
		put_capacity(b, cap, "aiCores", q, policy);
	}
}

/* A chip's capacity: its HBM and AI cores, and with time-slicing the shares. */
static void put_chip_capacity(struct json_put *b, json_object *dev, const struct npu_device *d,
			      const struct kube_slice_params *p, size_t index)
{
	uint64_t hbm = hbm_of(p, index);
	uint32_t shares = shares_of(p, index);
	if (!hbm && !d->chip.aicore_count && shares < 2)
		return;
	json_object *cap = json_put(b, dev, "capacity", json_object_new_object());
	put_memory_and_cores(b, cap, hbm, d->chip.aicore_count, shares > 1 ? "0" : NULL);
	if (shares > 1) {
		char q[16];
		snprintf(q, sizeof(q), "%" PRIu32, shares);
		json_put(b, dev, "allowMultipleAllocations", json_object_new_boolean(1));
		put_capacity(b, cap, "shares", q, "1");
	}
}

/* consumesCounters: cores and memory (each when not 0) of chip phy's set. */
static void put_consumes(struct json_put *b, json_object *dev, uint32_t phy, uint32_t cores, uint64_t memory)
{
	char set[24], q[32];
	snprintf(set, sizeof(set), "npu-%" PRIu32, phy);
	json_object *consumes = json_put(b, dev, "consumesCounters", json_object_new_array());
	json_object *c = json_put(b, consumes, NULL, json_object_new_object());
	json_put_string(b, c, "counterSet", set);
	json_object *counters = json_put(b, c, "counters", json_object_new_object());
	if (cores) {
		snprintf(q, sizeof(q), "%" PRIu32, cores);
		put_counter(b, counters, "aicores", q);
	}
	if (memory) {
		bytes_quantity(memory, q, sizeof(q));
		put_counter(b, counters, "memory", q);
	}
}

/* A vNPU's capacity: its template's; and what it takes of its chip's
 * counter set. */
static void put_vnpu_capacity(struct json_put *b, json_object *dev, const struct npu_snapshot *snap, size_t index,
			      const struct kube_slice_params *p)
{
	const struct npu_device *d = &snap->devices[index];
	struct npu_vnpu_size size;
	if (npu_vnpu_template_size(d->vnpu.template_name, &size) < 0)
		return;
	json_object *cap = json_put(b, dev, "capacity", json_object_new_object());
	put_memory_and_cores(b, cap, size.memory_bytes, size.aicores, NULL);
	uint32_t cores;
	uint64_t memory;
	if (vnpu_consumes(snap, index, p, &cores, &memory))
		put_consumes(b, dev, d->vnpu.phy_id, cores, memory);
}

/* A chip's network identity (see slices.h): roceLinkUp is always there, so
 * that a selector asking for it never meets a missing attribute (a CEL
 * error, not a mismatch). */
static void put_network(struct json_put *b, json_object *attrs, const struct npu_net *net)
{
	char ip[NPU_NET_ADDRESS_MAX];
	if (npu_net_address(net, false, ip))
		put_attr(b, attrs, "roceIP", "string", json_object_new_string(ip));
	put_attr(b, attrs, "roceLink", "string", json_object_new_string(npu_link_name(net->link)));
	put_attr(b, attrs, "roceLinkUp", "bool", json_object_new_boolean(net->link == NPU_LINK_UP));
	if (net->has_super_pod) {
		put_attr(b, attrs, "superPodID", "int", json_object_new_int64(net->super_pod_id));
		put_attr(b, attrs, "superDeviceID", "int", json_object_new_int64(net->sdid));
		put_attr(b, attrs, "serverIndex", "int", json_object_new_int64(net->server_index));
	}
}

/* Whether the fault policy asks for the sub-health taint of healthy d. */
static bool sub_health(const struct npu_device *d, const struct kube_device_facts *fact)
{
	return d->healthy && fact && fact->taint == KUBE_TAINT_SUB_HEALTH && fact->taint_value[0];
}

/* Whether a published device carries a taint (see slices.h): fact is its
 * own, or its chip's for a placement; NULL when nothing is known but its
 * health. Where the server drops taints only healthy devices are
 * published, and the sub-health taint is left out. */
static bool tainted(const struct npu_device *d, const struct kube_device_facts *fact,
		    const struct kube_slice_params *p)
{
	return !(p->lacking & KUBE_LACKS_TAINTS) && (!d->healthy || sub_health(d, fact));
}

/* The taint of a device, if any (see tainted). */
static void put_taint(struct json_put *b, json_object *dev, const struct npu_device *d,
		      const struct kube_device_facts *fact, const struct kube_slice_params *p)
{
	if (!tainted(d, fact, p))
		return;
	bool informational = d->healthy; /* tainted while healthy: sub-health */
	json_object *taints = json_put(b, dev, "taints", json_object_new_array());
	json_object *t = json_put(b, taints, NULL, json_object_new_object());
	json_put_string(b, t, "key", informational ? KUBE_TAINT_SUB_HEALTH_KEY : KUBE_TAINT_UNHEALTHY_KEY);
	json_put_string(b, t, "value", fact && fact->taint_value[0] ? fact->taint_value : fault_value(d->fault));
	json_put_string(b, t, "effect",
			informational ? "None" : fact && fact->taint == KUBE_TAINT_NO_EXECUTE ? "NoExecute" : "NoSchedule");
}

/* What a device says of its chip: family, product, physicalID, card and
 * chip; the interconnect when with_interconnect; the versions, PCI and NUMA
 * placement. */
static void put_chip_identity(struct json_put *b, json_object *attrs, const struct npu_device *d,
			      const struct kube_slice_params *p, bool with_interconnect)
{
	if (d->chip.family != NPU_FAMILY_UNKNOWN)
		put_attr(b, attrs, "family", "string", json_object_new_string(npu_family_name(d->chip.family)));
	if (d->chip.name[0])
		put_attr(b, attrs, "product", "string", json_object_new_string(d->chip.name));
	put_attr(b, attrs, "physicalID", "int", json_object_new_int64(d->chip.phy_id));
	if (d->chip.card_id >= 0)
		put_attr(b, attrs, "card", "int", json_object_new_int64(d->chip.card_id));
	if (d->chip.device_id >= 0)
		put_attr(b, attrs, "chip", "int", json_object_new_int64(d->chip.device_id));
	struct topology_group g;
	if (!with_interconnect) {
		/* No interconnect: see slices.h. */
	} else if (topology_interconnect(d, &g) == 0) {
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
	if (d->pcie_root[0])
		put_attr(b, attrs, "resource.kubernetes.io/pcieRoot", "string", json_object_new_string(d->pcie_root));
	if (d->has_numa)
		put_attr(b, attrs, "resource.kubernetes.io/numaNode", "int", json_object_new_int64(d->numa_node));
}

static json_object *device_json(struct json_put *b, const struct npu_snapshot *snap, size_t index,
				const struct kube_slice_params *p)
{
	const struct npu_device *d = &snap->devices[index];
	bool vnpu = d->kind == NPU_DEVICE_VNPU;
	json_object *dev = json_object_new_object();
	json_put_string(b, dev, "name", d->id);
	json_object *attrs = json_put(b, dev, "attributes", json_object_new_object());
	put_attr(b, attrs, "type", "string", json_object_new_string(vnpu ? "vnpu" : "chip"));
	if (vnpu) {
		put_attr(b, attrs, "vnpuID", "int", json_object_new_int64(d->vnpu.id));
		put_attr(b, attrs, "template", "string", json_object_new_string(d->vnpu.template_name));
		put_attr(b, attrs, "dynamic", "bool", json_object_new_boolean(0));
	} else {
		put_attr(b, attrs, "logicID", "int", json_object_new_int64(d->chip.logic_id));
		put_network(b, attrs, &d->net);
	}
	put_chip_identity(b, attrs, d, p, !vnpu);
	if (vnpu) {
		put_vnpu_capacity(b, dev, snap, index, p);
	} else {
		put_chip_capacity(b, dev, d, p, index);
		if (dynamic_chip(snap, index, p))
			put_consumes(b, dev, d->chip.phy_id, d->chip.aicore_count, hbm_of(p, index));
	}
	put_taint(b, dev, d, p->facts ? &p->facts[index] : NULL, p);
	return dev;
}

/* A placement of a chip carved on demand (see slices.h). */
static json_object *partition_json(struct json_put *b, const struct npu_snapshot *snap, size_t chip,
				   const struct kube_slice_params *p, const struct partition *part)
{
	const struct npu_device *d = &snap->devices[chip];
	json_object *dev = json_object_new_object();
	json_put_string(b, dev, "name", part->name);
	json_object *attrs = json_put(b, dev, "attributes", json_object_new_object());
	put_attr(b, attrs, "type", "string", json_object_new_string("vnpu"));
	put_attr(b, attrs, "template", "string", json_object_new_string(part->template_name));
	put_attr(b, attrs, "dynamic", "bool", json_object_new_boolean(1));
	put_chip_identity(b, attrs, d, p, true);
	json_object *cap = json_put(b, dev, "capacity", json_object_new_object());
	put_memory_and_cores(b, cap, part->size.memory_bytes, part->size.aicores, NULL);
	put_consumes(b, dev, d->chip.phy_id, part->size.aicores, hbm_of(p, chip) ? part->size.memory_bytes : 0);
	put_taint(b, dev, d, p->facts ? &p->facts[chip] : NULL, p);
	return dev;
}

/* The counter set of chip index: what DCMI said of its AI cores and HBM. */
static json_object *counter_set_json(struct json_put *b, const struct npu_snapshot *snap, size_t index,
				     const struct kube_slice_params *p)
{
	const struct npu_device *d = &snap->devices[index];
	char name[24], q[32];
	json_object *set = json_object_new_object();
	snprintf(name, sizeof(name), "npu-%" PRIu32, d->chip.phy_id);
	json_put_string(b, set, "name", name);
	json_object *counters = json_put(b, set, "counters", json_object_new_object());
	if (d->chip.aicore_count) {
		snprintf(q, sizeof(q), "%" PRIu32, d->chip.aicore_count);
		put_counter(b, counters, "aicores", q);
	}
	if (hbm_of(p, index)) {
		bytes_quantity(hbm_of(p, index), q, sizeof(q));
		put_counter(b, counters, "memory", q);
	}
	return set;
}

/* A slice named name whose spec has an empty list under list_key
 * ("devices" or "sharedCounters": one or the other, never both). */
static json_object *named_slice_json(struct json_put *b, const struct kube_slice_params *p, const char *driver,
				     const char *name, size_t count, const char *list_key)
{
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
	json_put(b, spec, list_key, json_object_new_array());
	return s;
}

/* The same named by its index in the pool. */
static json_object *slice_json(struct json_put *b, const struct kube_slice_params *p, const char *driver,
			       size_t index, size_t count, const char *list_key)
{
	char name[KUBE_NAME_MAX];
	if (kube_slice_name(p->node_name, driver, index, name) < 0) {
		b->failed = true;
		return NULL;
	}
	return named_slice_json(b, p, driver, name, count, list_key);
}

/* Appends item to the list of the current slice, starting a new slice
 * (named by *next_index) whenever the current one holds per_slice. */
struct filler {
	json_object *slices, *list;
	size_t placed, per_slice, next_index, count;
	const char *list_key;
};

static void fill(struct json_put *b, struct filler *f, const struct kube_slice_params *p, const char *driver,
		 json_object *item)
{
	if (f->placed % f->per_slice == 0) {
		json_object *slice = json_put(b, f->slices, NULL, slice_json(b, p, driver, f->next_index++, f->count,
									      f->list_key));
		json_object *spec = slice ? json_object_object_get(slice, "spec") : NULL;
		f->list = spec ? json_object_object_get(spec, f->list_key) : NULL;
	}
	json_put(b, f->list, NULL, item);
	f->placed++;
}

/* The driver's name, or NULL when params name no valid node or driver. */
static const char *driver_of(const struct kube_slice_params *params)
{
	const char *driver = params->driver ? params->driver : KUBE_DRIVER_DEFAULT;
	if (!params->node_name || k8s_dns_subdomain_check(params->node_name, strlen(params->node_name)) < 0 ||
	    !kube_driver_name_ok(driver))
		return NULL;
	return driver;
}

int kube_slices_build(const struct npu_snapshot *snapshot, const struct kube_slice_params *params,
		      json_object **ret_slices)
{
	const char *driver = driver_of(params);
	if (!driver)
		return -EINVAL;
	size_t n = 0, sets = 0;
	bool advanced = false;
	struct partition *parts = calloc(PARTITIONS_MAX, sizeof(*parts));
	if (!parts)
		return -ENOMEM;
	for (size_t i = 0; i < snapshot->count; i++) {
		const struct npu_device *d = &snapshot->devices[i];
		sets += has_counter_set(snapshot, i, params);
		if (!publishes(snapshot, i, params))
			continue;
		n++;
		uint32_t cores;
		uint64_t memory;
		const struct kube_device_facts *fact = params->facts ? &params->facts[i] : NULL;
		advanced |= tainted(d, fact, params) || vnpu_consumes(snapshot, i, params, &cores, &memory);
		if (dynamic_chip(snapshot, i, params)) {
			size_t k = partitions_of_chip(&d->chip, hbm_of(params, i), parts, PARTITIONS_MAX);
			n += k < PARTITIONS_MAX ? k : PARTITIONS_MAX;
			advanced = true;
		}
	}
	/* One limit for the whole pool: the split then does not move devices
	 * between slices when a chip's health changes, unless a taint first
	 * appears or the last one goes (or the vNPUs do). */
	size_t per_slice = advanced ? KUBE_SLICE_MAX_DEVICES_TAINTED : KUBE_SLICE_MAX_DEVICES;
	size_t device_slices = (n + per_slice - 1) / per_slice;
	size_t count = device_slices + (sets + KUBE_SLICE_MAX_COUNTER_SETS - 1) / KUBE_SLICE_MAX_COUNTER_SETS;
	struct json_put b = { 0 };
	json_object *slices = json_object_new_array();
	struct filler f = { .slices = slices, .per_slice = per_slice, .count = count, .list_key = "devices" };
	for (size_t i = 0; i < snapshot->count && !b.failed; i++) {
		if (!publishes(snapshot, i, params))
			continue;
		fill(&b, &f, params, driver, device_json(&b, snapshot, i, params));
		if (!dynamic_chip(snapshot, i, params))
			continue;
		size_t k = partitions_of_chip(&snapshot->devices[i].chip, hbm_of(params, i), parts, PARTITIONS_MAX);
		for (size_t j = 0; j < k && j < PARTITIONS_MAX && !b.failed; j++)
			fill(&b, &f, params, driver, partition_json(&b, snapshot, i, params, &parts[j]));
	}
	free(parts);
	f = (struct filler){ .slices = slices,
			     .per_slice = KUBE_SLICE_MAX_COUNTER_SETS,
			     .next_index = device_slices,
			     .count = count,
			     .list_key = "sharedCounters" };
	for (size_t i = 0; i < snapshot->count && !b.failed; i++)
		if (has_counter_set(snapshot, i, params))
			fill(&b, &f, params, driver, counter_set_json(&b, snapshot, i, params));
	if (!slices || b.failed) {
		json_object_put(slices);
		return -ENOMEM;
	}
	*ret_slices = slices;
	return 0;
}

int kube_slice_probe(const struct kube_slice_params *params, json_object **ret_probe)
{
	const char *driver = driver_of(params);
	char name[KUBE_NAME_MAX];
	if (!driver || slice_name(params->node_name, driver, "probe", name) < 0)
		return -EINVAL;
	struct json_put b = { 0 };
	json_object *slice = named_slice_json(&b, params, driver, name, 1, "devices");
	json_object *devices = json_object_object_get(json_object_object_get(slice, "spec"), "devices");
	json_object *dev = json_put(&b, devices, NULL, json_object_new_object());
	json_put_string(&b, dev, "name", "probe");
	/* The fields as the real slices carry them: each gate's own. */
	json_object *taints = json_put(&b, dev, "taints", json_object_new_array());
	json_object *t = json_put(&b, taints, NULL, json_object_new_object());
	json_put_string(&b, t, "key", KUBE_TAINT_UNHEALTHY_KEY);
	json_put_string(&b, t, "value", "probe");
	json_put_string(&b, t, "effect", "NoSchedule");
	put_consumes(&b, dev, 0, 1, 0);
	json_put(&b, dev, "allowMultipleAllocations", json_object_new_boolean(1));
	put_capacity(&b, json_put(&b, dev, "capacity", json_object_new_object()), "shares", "1", "1");
	if (!slice || b.failed) {
		json_object_put(slice);
		return -ENOMEM;
	}
	*ret_probe = slice;
	return 0;
}

/* Whether o has member key. */
static bool has(json_object *o, const char *key)
{
	return json_object_object_get_ex(o, key, NULL);
}

static bool named(json_object *device, const char *name)
{
	const char *own = json_object_get_string(json_object_object_get(device, "name"));
	return own && strcmp(own, name) == 0;
}

/* The device named name in the array devices, or NULL; at index i first,
 * where it is when the server kept the order. */
static json_object *device_named(json_object *devices, size_t i, const char *name)
{
	size_t n = json_object_array_length(devices);
	if (i < n && named(json_object_array_get_idx(devices, i), name))
		return json_object_array_get_idx(devices, i);
	for (size_t k = 0; k < n; k++)
		if (named(json_object_array_get_idx(devices, k), name))
			return json_object_array_get_idx(devices, k);
	return NULL;
}

/* What stored lacks of the device sent. */
static unsigned device_dropped(json_object *sent, json_object *stored)
{
	unsigned dropped = 0;
	if (has(sent, "taints") && !has(stored, "taints"))
		dropped |= KUBE_LACKS_TAINTS;
	if (has(sent, "consumesCounters") && !has(stored, "consumesCounters"))
		dropped |= KUBE_LACKS_PARTITIONS;
	if (has(sent, "allowMultipleAllocations") && !has(stored, "allowMultipleAllocations"))
		dropped |= KUBE_LACKS_SHARING;
	json_object *capacity = json_object_object_get(sent, "capacity");
	json_object *kept = json_object_object_get(stored, "capacity");
	if (json_object_is_type(capacity, json_type_object)) {
		json_object_object_foreach(capacity, name, c) {
			json_object *k = json_object_object_get(kept, name);
			if (has(c, "requestPolicy") && k && !has(k, "requestPolicy"))
				dropped |= KUBE_LACKS_SHARING;
		}
	}
	return dropped;
}

/* The gated fields a device carries. */
static unsigned device_gated(json_object *d)
{
	json_object *taints = json_object_object_get(d, "taints"), *capacity = json_object_object_get(d, "capacity");
	unsigned used = json_object_is_type(taints, json_type_array) && json_object_array_length(taints) > 0
				? KUBE_LACKS_TAINTS
				: 0;
	if (has(d, "consumesCounters"))
		used |= KUBE_LACKS_PARTITIONS;
	if (has(d, "allowMultipleAllocations"))
		used |= KUBE_LACKS_SHARING;
	if (json_object_is_type(capacity, json_type_object)) {
		json_object_object_foreach(capacity, name, c) {
			(void)name;
			if (has(c, "requestPolicy"))
				used |= KUBE_LACKS_SHARING;
		}
	}
	return used;
}

unsigned kube_slices_gated(json_object *slices)
{
	unsigned used = 0;
	for (size_t i = 0; json_object_is_type(slices, json_type_array) && i < json_object_array_length(slices); i++) {
		json_object *spec = json_object_object_get(json_object_array_get_idx(slices, i), "spec");
		json_object *devices = json_object_object_get(spec, "devices");
		if (has(spec, "sharedCounters"))
			used |= KUBE_LACKS_PARTITIONS;
		for (size_t k = 0; json_object_is_type(devices, json_type_array) && k < json_object_array_length(devices);
		     k++)
			used |= device_gated(json_object_array_get_idx(devices, k));
	}
	return used;
}

unsigned kube_slice_dropped(json_object *sent, json_object *stored)
{
	json_object *ours = json_object_object_get(sent, "spec"), *theirs = json_object_object_get(stored, "spec");
	if (!json_object_is_type(ours, json_type_object) || !json_object_is_type(theirs, json_type_object))
		return 0;
	unsigned dropped = has(ours, "sharedCounters") && !has(theirs, "sharedCounters") ? KUBE_LACKS_PARTITIONS : 0;
	json_object *devices = json_object_object_get(ours, "devices");
	json_object *kept = json_object_object_get(theirs, "devices");
	if (!json_object_is_type(devices, json_type_array) || !json_object_is_type(kept, json_type_array))
		return dropped;
	for (size_t i = 0; i < json_object_array_length(devices); i++) {
		json_object *d = json_object_array_get_idx(devices, i);
		const char *name = json_object_get_string(json_object_object_get(d, "name"));
		json_object *k = name ? device_named(kept, i, name) : NULL;
		if (k)
			dropped |= device_dropped(d, k);
	}
	return dropped;
}
