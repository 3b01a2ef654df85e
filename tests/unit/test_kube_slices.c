/* SPDX-License-Identifier: Apache-2.0 */
/* ResourceSlices from snapshots (kube/slices.c): the pool, the owner
 * reference, each typed attribute and capacity of a chip, the taint of an
 * Unhealthy chip, the split at 128 devices (64 once one is tainted), vNPUs
 * as partitions of their chip (counter sets in slices of their own, the
 * carved chip withheld), time-sliced chips shared by capacity, slice names,
 * and the semantic-version test that decides between a version and a
 * string attribute; for an API server that drops taints, counters or
 * shared capacity, the slices without them, and the probe that tells. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "kube/slices.h"
#include "support/carve.h"
#include "support/gated_fields.h"

static struct npu_snapshot *make_snapshot(enum npu_family family, const char *name, unsigned count)
{
	struct npu_snapshot *s = npu_snapshot_new(count);
	assert_non_null(s);
	s->healthy = count;
	for (unsigned i = 0; i < count; i++) {
		struct npu_device *d = &s->devices[i];
		snprintf(d->id, sizeof(d->id), "npu-%u", i);
		d->chip.phy_id = i;
		d->chip.logic_id = i + 100;
		d->chip.card_id = (int)(i / 2);
		d->chip.device_id = (int)(i % 2);
		d->chip.family = family;
		d->chip.aicore_count = 20;
		snprintf(d->chip.name, sizeof(d->chip.name), "%s", name);
		d->healthy = true;
	}
	return s;
}

static json_object *get(json_object *o, const char *path)
{
	/* "a.b.c", each a key; numbers index arrays. */
	char buf[256];
	snprintf(buf, sizeof(buf), "%s", path);
	for (char *save = NULL, *k = strtok_r(buf, ".", &save); k && o; k = strtok_r(NULL, ".", &save)) {
		if (json_object_is_type(o, json_type_array))
			o = json_object_array_get_idx(o, strtoul(k, NULL, 10));
		else if (!json_object_object_get_ex(o, k, &o))
			return NULL;
	}
	return o;
}

static const char *str(json_object *o, const char *path)
{
	json_object *v = get(o, path);
	return v ? json_object_get_string(v) : NULL;
}

static json_object *attr(json_object *device, const char *name)
{
	json_object *attrs = get(device, "attributes"), *a = NULL;
	return attrs && json_object_object_get_ex(attrs, name, &a) ? a : NULL;
}

static void test_one_chip(void **state)
{
	(void)state;
	struct npu_snapshot *s = make_snapshot(NPU_FAMILY_910, "910A", 8);
	snprintf(s->devices[5].pci_address, sizeof(s->devices[5].pci_address), "0000:3b:00.0");
	s->devices[5].has_numa = true;
	s->devices[5].numa_node = 1;
	struct kube_device_facts facts[8] = { { 0 } };
	facts[5].hbm_bytes = 64ull << 30;
	const struct kube_slice_params p = {
		.node_name = "node-1",
		.node_uid = "1234-abcd",
		.generation = 7,
		.driver_version = "24.1.rc2",
		.firmware_version = "7.5.0",
		.facts = facts,
	};
	json_object *slices = NULL;
	assert_int_equal(kube_slices_build(s, &p, &slices), 0);
	assert_int_equal(json_object_array_length(slices), 1);
	json_object *sl = json_object_array_get_idx(slices, 0);
	assert_string_equal(str(sl, "apiVersion"), "resource.k8s.io/v1");
	assert_string_equal(str(sl, "kind"), "ResourceSlice");
	assert_string_equal(str(sl, "metadata.name"), "node-1-npu.ascend.com-0");
	assert_string_equal(str(sl, "metadata.ownerReferences.0.kind"), "Node");
	assert_string_equal(str(sl, "metadata.ownerReferences.0.name"), "node-1");
	assert_string_equal(str(sl, "metadata.ownerReferences.0.uid"), "1234-abcd");
	assert_string_equal(str(sl, "spec.driver"), "npu.ascend.com");
	assert_string_equal(str(sl, "spec.nodeName"), "node-1");
	assert_string_equal(str(sl, "spec.pool.name"), "node-1");
	assert_int_equal(json_object_get_int64(get(sl, "spec.pool.generation")), 7);
	assert_int_equal(json_object_get_int64(get(sl, "spec.pool.resourceSliceCount")), 1);
	json_object *devices = get(sl, "spec.devices");
	assert_int_equal(json_object_array_length(devices), 8);

	json_object *d = json_object_array_get_idx(devices, 5);
	assert_string_equal(str(d, "name"), "npu-5");
	assert_string_equal(str(attr(d, "family"), "string"), "910");
	assert_string_equal(str(attr(d, "product"), "string"), "910A");
	assert_int_equal(json_object_get_int64(get(attr(d, "physicalID"), "int")), 5);
	assert_int_equal(json_object_get_int64(get(attr(d, "logicID"), "int")), 105);
	assert_int_equal(json_object_get_int64(get(attr(d, "card"), "int")), 2);
	assert_int_equal(json_object_get_int64(get(attr(d, "chip"), "int")), 1);
	assert_string_equal(str(attr(d, "interconnect"), "string"), "hccs-ring");
	assert_string_equal(str(attr(d, "interconnectGroup"), "string"), "hccs-ring-1");
	/* Not semantic versioning: a string; semantic versioning: a version. */
	assert_string_equal(str(attr(d, "driverVersion"), "string"), "24.1.rc2");
	assert_string_equal(str(attr(d, "firmwareVersion"), "version"), "7.5.0");
	assert_string_equal(str(attr(d, "resource.kubernetes.io/pciBusID"), "string"), "0000:3b:00.0");
	assert_int_equal(json_object_get_int64(get(attr(d, "resource.kubernetes.io/numaNode"), "int")), 1);
	assert_string_equal(str(d, "capacity.memory.value"), "64Gi");
	assert_string_equal(str(d, "capacity.aiCores.value"), "20");
	assert_null(get(d, "taints"));

	/* Chip 0: nothing known of its place or memory, so no such attribute. */
	d = json_object_array_get_idx(devices, 0);
	assert_string_equal(str(attr(d, "interconnectGroup"), "string"), "hccs-ring-0");
	assert_null(attr(d, "resource.kubernetes.io/pciBusID"));
	assert_null(attr(d, "resource.kubernetes.io/numaNode"));
	assert_null(get(d, "capacity.memory"));
	json_object_put(slices);
	npu_snapshot_unref(s);
}

/* The network identity: roceIP where there is one, roceLink and roceLinkUp
 * on every chip, the super pod place on A3 chips, pcieRoot where sysfs said;
 * nothing of it on a vNPU. */
static void test_network_identity(void **state)
{
	(void)state;
	struct npu_snapshot *s = make_snapshot(NPU_FAMILY_A3, "910_9391", 3);
	s->devices[0].net = (struct npu_net){ .has_ip = true, .ip = { 192, 168, 1, 8 }, .prefix_len = 24,
					      .link = NPU_LINK_UP, .has_super_pod = true, .super_pod_id = 3,
					      .sdid = 106, .server_index = 1 };
	s->devices[1].net = (struct npu_net){ .has_ip = true, .ipv6 = true, .ip = { 0xfd, [15] = 0x18 },
					      .prefix_len = 64, .link = NPU_LINK_DOWN };
	snprintf(s->devices[0].pcie_root, sizeof(s->devices[0].pcie_root), "pci0000:3a");
	const struct kube_slice_params p = { .node_name = "node-1", .node_uid = "u", .generation = 1 };
	json_object *slices = NULL;
	assert_int_equal(kube_slices_build(s, &p, &slices), 0);
	json_object *devices = get(json_object_array_get_idx(slices, 0), "spec.devices");

	json_object *d = json_object_array_get_idx(devices, 0);
	assert_string_equal(str(attr(d, "roceIP"), "string"), "192.168.1.8");
	assert_string_equal(str(attr(d, "roceLink"), "string"), "up");
	assert_true(json_object_get_boolean(get(attr(d, "roceLinkUp"), "bool")));
	assert_int_equal(json_object_get_int64(get(attr(d, "superPodID"), "int")), 3);
	assert_int_equal(json_object_get_int64(get(attr(d, "superDeviceID"), "int")), 106);
	assert_int_equal(json_object_get_int64(get(attr(d, "serverIndex"), "int")), 1);
	assert_string_equal(str(attr(d, "resource.kubernetes.io/pcieRoot"), "string"), "pci0000:3a");

	d = json_object_array_get_idx(devices, 1);
	assert_string_equal(str(attr(d, "roceIP"), "string"), "fd00::18");
	assert_string_equal(str(attr(d, "roceLink"), "string"), "down");
	assert_false(json_object_get_boolean(get(attr(d, "roceLinkUp"), "bool")));
	assert_null(attr(d, "superPodID"));
	assert_null(attr(d, "resource.kubernetes.io/pcieRoot"));

	/* Nothing known: no address, but the link attributes all the same. */
	d = json_object_array_get_idx(devices, 2);
	assert_null(attr(d, "roceIP"));
	assert_string_equal(str(attr(d, "roceLink"), "string"), "unknown");
	assert_non_null(get(attr(d, "roceLinkUp"), "bool"));
	assert_false(json_object_get_boolean(get(attr(d, "roceLinkUp"), "bool")));
	json_object_put(slices);
	npu_snapshot_unref(s);
}

static void test_interconnect_groups(void **state)
{
	(void)state;
	static const struct {
		enum npu_family family;
		unsigned count, phy;
		const char *kind, *group;
	} cases[] = {
		{ NPU_FAMILY_910B, 8, 7, "hccs-mesh", "hccs-mesh-0" },
		{ NPU_FAMILY_910B, 16, 9, "hccs-mesh", "hccs-mesh-1" },
		{ NPU_FAMILY_A3, 16, 5, "die-pair", "die-pair-2" },
		{ NPU_FAMILY_310P, 4, 3, "card", "card-1" },
		{ NPU_FAMILY_310, 4, 3, "pcie", NULL },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct npu_snapshot *s = make_snapshot(cases[i].family, "", cases[i].count);
		const struct kube_slice_params p = { .node_name = "n", .generation = 1 };
		json_object *slices = NULL;
		assert_int_equal(kube_slices_build(s, &p, &slices), 0);
		json_object *d = get(slices, "0.spec.devices");
		d = json_object_array_get_idx(d, cases[i].phy);
		assert_string_equal(str(attr(d, "interconnect"), "string"), cases[i].kind);
		if (cases[i].group)
			assert_string_equal(str(attr(d, "interconnectGroup"), "string"), cases[i].group);
		else
			assert_null(attr(d, "interconnectGroup"));
		assert_null(attr(d, "product")); /* no DCMI name */
		assert_null(get(slices, "0.metadata.ownerReferences"));
		json_object_put(slices);
		npu_snapshot_unref(s);
	}
}

/* A chip's group is its own family's: a mixed node's 910B chips share their
 * mesh and its 310P chips their cards; a part of a Box16 (the chips one
 * front end serves) keeps each chip in its mesh. */
static void test_interconnect_mixed_and_partial(void **state)
{
	(void)state;
	struct npu_snapshot *s = make_snapshot(NPU_FAMILY_910B, "910B3", 6);
	for (unsigned i = 4; i < 6; i++) {
		s->devices[i].chip.family = NPU_FAMILY_310P;
		s->devices[i].chip.card_id = 7;
	}
	const struct kube_slice_params p = { .node_name = "n", .generation = 1 };
	json_object *slices = NULL;
	assert_int_equal(kube_slices_build(s, &p, &slices), 0);
	json_object *devices = get(slices, "0.spec.devices");
	static const char *const want[] = { "hccs-mesh-0", "hccs-mesh-0", "hccs-mesh-0", "hccs-mesh-0", "card-7", "card-7" };
	for (size_t i = 0; i < 6; i++)
		assert_string_equal(str(attr(json_object_array_get_idx(devices, i), "interconnectGroup"), "string"), want[i]);
	json_object_put(slices);
	npu_snapshot_unref(s);

	/* Chips 4-11 of a Box16: 4-7 in mesh 0, 8-11 in mesh 1. */
	s = make_snapshot(NPU_FAMILY_910B, "910B3", 8);
	for (unsigned i = 0; i < 8; i++) {
		snprintf(s->devices[i].id, sizeof(s->devices[i].id), "npu-%u", i + 4);
		s->devices[i].chip.phy_id = i + 4;
	}
	assert_int_equal(kube_slices_build(s, &p, &slices), 0);
	devices = get(slices, "0.spec.devices");
	assert_string_equal(str(attr(json_object_array_get_idx(devices, 3), "interconnectGroup"), "string"), "hccs-mesh-0");
	assert_string_equal(str(attr(json_object_array_get_idx(devices, 4), "interconnectGroup"), "string"), "hccs-mesh-1");
	json_object_put(slices);
	npu_snapshot_unref(s);
}

static json_object *find_device(json_object *slices, const char *name);

static void test_taint(void **state)
{
	(void)state;
	struct npu_snapshot *s = make_snapshot(NPU_FAMILY_910B, "910B3", 8);
	s->devices[2].healthy = false;
	s->devices[2].fault = NPU_FAULT_HEALTH_LEVEL;
	s->healthy--;
	const struct kube_slice_params p = { .node_name = "n", .generation = 2 };
	json_object *slices = NULL;
	assert_int_equal(kube_slices_build(s, &p, &slices), 0);
	json_object *devices = get(slices, "0.spec.devices");
	/* An Unhealthy chip stays listed, tainted: claims holding it keep it. */
	assert_int_equal(json_object_array_length(devices), 8);
	json_object *d = json_object_array_get_idx(devices, 2);
	assert_string_equal(str(d, "taints.0.key"), "npu.ascend.com/unhealthy");
	assert_string_equal(str(d, "taints.0.value"), "health-critical");
	assert_string_equal(str(d, "taints.0.effect"), "NoSchedule");
	assert_int_equal(json_object_array_length(get(d, "taints")), 1);
	assert_null(get(json_object_array_get_idx(devices, 1), "taints"));
	json_object_put(slices);

	/* The fault policy's verdicts (the daemon's facts): the level and code
	 * in the value, NoExecute for a level the operator chose, and a chip in
	 * service at SubHealthFault tainted with the effect None. */
	struct kube_device_facts facts[8] = { 0 };
	facts[2] = (struct kube_device_facts){ .taint = KUBE_TAINT_NO_EXECUTE, .taint_value = "SeparateNPU-80E01801" };
	facts[5] = (struct kube_device_facts){ .taint = KUBE_TAINT_SUB_HEALTH, .taint_value = "SubHealthFault-80C98009" };
	/* A healthy chip's NoExecute means nothing. */
	facts[6] = (struct kube_device_facts){ .taint = KUBE_TAINT_NO_EXECUTE, .taint_value = "SeparateNPU" };
	const struct kube_slice_params judged = { .node_name = "n", .generation = 3, .facts = facts };
	assert_int_equal(kube_slices_build(s, &judged, &slices), 0);
	d = find_device(slices, "npu-2");
	assert_string_equal(str(d, "taints.0.key"), "npu.ascend.com/unhealthy");
	assert_string_equal(str(d, "taints.0.value"), "SeparateNPU-80E01801");
	assert_string_equal(str(d, "taints.0.effect"), "NoExecute");
	d = find_device(slices, "npu-5");
	assert_string_equal(str(d, "taints.0.key"), KUBE_TAINT_SUB_HEALTH_KEY);
	assert_string_equal(str(d, "taints.0.value"), "SubHealthFault-80C98009");
	assert_string_equal(str(d, "taints.0.effect"), "None");
	assert_null(get(find_device(slices, "npu-6"), "taints"));
	json_object_put(slices);
	npu_snapshot_unref(s);
}

static size_t devices_in(json_object *slices, size_t i)
{
	return json_object_array_length(get(json_object_array_get_idx(slices, i), "spec.devices"));
}

static void test_split(void **state)
{
	(void)state;
	struct npu_snapshot *s = make_snapshot(NPU_FAMILY_UNKNOWN, "", NPU_MAX_CHIPS);
	const struct kube_slice_params p = { .node_name = "n", .generation = 3 };
	json_object *slices = NULL;
	assert_int_equal(kube_slices_build(s, &p, &slices), 0);
	assert_int_equal(json_object_array_length(slices), 2);
	assert_int_equal(devices_in(slices, 0), 128);
	assert_int_equal(devices_in(slices, 1), 128);
	assert_string_equal(str(slices, "1.metadata.name"), "n-npu.ascend.com-1");
	assert_string_equal(str(slices, "1.spec.devices.0.name"), "npu-128");
	for (size_t i = 0; i < 2; i++) {
		assert_int_equal(json_object_get_int64(get(json_object_array_get_idx(slices, i), "spec.pool.resourceSliceCount")), 2);
		assert_int_equal(json_object_get_int64(get(json_object_array_get_idx(slices, i), "spec.pool.generation")), 3);
	}
	json_object_put(slices);

	/* One taint: at most 64 per slice (the API's limit with taints). */
	s->devices[200].healthy = false;
	s->devices[200].fault = NPU_FAULT_NODE_MISSING;
	assert_int_equal(kube_slices_build(s, &p, &slices), 0);
	assert_int_equal(json_object_array_length(slices), 4);
	for (size_t i = 0; i < 4; i++)
		assert_int_equal(devices_in(slices, i), 64);
	assert_int_equal(json_object_get_int64(get(slices, "3.spec.pool.resourceSliceCount")), 4);
	assert_string_equal(str(slices, "3.spec.devices.8.taints.0.value"), "device-node-missing");
	json_object_put(slices);

	/* 129 chips: two slices, the second of one. */
	npu_snapshot_unref(s);
	s = make_snapshot(NPU_FAMILY_UNKNOWN, "", 129);
	assert_int_equal(kube_slices_build(s, &p, &slices), 0);
	assert_int_equal(json_object_array_length(slices), 2);
	assert_int_equal(devices_in(slices, 1), 1);
	json_object_put(slices);
	npu_snapshot_unref(s);

	/* No chips: no slices. */
	s = make_snapshot(NPU_FAMILY_UNKNOWN, "", 0);
	assert_int_equal(kube_slices_build(s, &p, &slices), 0);
	assert_int_equal(json_object_array_length(slices), 0);
	json_object_put(slices);
	npu_snapshot_unref(s);
}

/* chips 910B3 chips, the first carved of them carved into per_chip vNPUs
 * of template_name, each chip at PCI 0000:<phy+1>:00.0. */
static struct npu_snapshot *carve(unsigned chips, unsigned carved, unsigned per_chip, const char *template_name)
{
	struct npu_snapshot *c = make_snapshot(NPU_FAMILY_910B, "910B3", chips);
	for (unsigned phy = 0; phy < chips; phy++)
		snprintf(c->devices[phy].pci_address, sizeof(c->devices[phy].pci_address), "0000:%02x:00.0", (phy + 1) & 0xffu);
	struct npu_snapshot *s = carve_snapshot(c, carved, per_chip, template_name);
	assert_non_null(s);
	npu_snapshot_unref(c);
	return s;
}

static json_object *find_device(json_object *slices, const char *name)
{
	for (size_t i = 0; i < json_object_array_length(slices); i++) {
		json_object *devices = get(json_object_array_get_idx(slices, i), "spec.devices");
		for (size_t k = 0; devices && k < json_object_array_length(devices); k++)
			if (strcmp(str(json_object_array_get_idx(devices, k), "name"), name) == 0)
				return json_object_array_get_idx(devices, k);
	}
	return NULL;
}

static void test_vnpu_partitions(void **state)
{
	(void)state;
	/* Chip 0 carved into two vNPUs, chip 1 whole. */
	struct npu_snapshot *s = carve(2, 1, 2, "vir10_3c_16g");
	snprintf(s->devices[3].vnpu.template_name, sizeof(s->devices[3].vnpu.template_name), "vir05_1c_8g");
	struct kube_device_facts facts[4] = { { .hbm_bytes = 64ull << 30 }, { .hbm_bytes = 64ull << 30 } };
	const struct kube_slice_params p = { .node_name = "n", .generation = 4, .facts = facts,
					     .driver_version = "24.1.0" };
	json_object *slices = NULL;
	assert_int_equal(kube_slices_build(s, &p, &slices), 0);
	/* The devices, then the counter sets in a slice of their own. */
	assert_int_equal(json_object_array_length(slices), 2);
	assert_int_equal(devices_in(slices, 0), 3);
	assert_null(find_device(slices, "npu-0")); /* carved: withheld */
	assert_non_null(find_device(slices, "npu-1"));
	assert_string_equal(str(find_device(slices, "npu-1"), "attributes.type.string"), "chip");
	for (size_t i = 0; i < 2; i++) {
		json_object *sl = json_object_array_get_idx(slices, i);
		assert_int_equal(json_object_get_int64(get(sl, "spec.pool.resourceSliceCount")), 2);
		assert_string_equal(str(sl, "spec.nodeName"), "n");
	}
	/* A slice holds devices or counter sets, never both. */
	assert_null(get(slices, "0.spec.sharedCounters"));
	assert_null(get(slices, "1.spec.devices"));
	assert_string_equal(str(slices, "1.metadata.name"), "n-npu.ascend.com-1");
	assert_int_equal(json_object_array_length(get(slices, "1.spec.sharedCounters")), 1);
	assert_string_equal(str(slices, "1.spec.sharedCounters.0.name"), "npu-0");
	assert_string_equal(str(slices, "1.spec.sharedCounters.0.counters.aicores.value"), "20");
	assert_string_equal(str(slices, "1.spec.sharedCounters.0.counters.memory.value"), "64Gi");

	json_object *v = find_device(slices, "vnpu-100");
	assert_non_null(v);
	assert_string_equal(str(attr(v, "type"), "string"), "vnpu");
	assert_string_equal(str(attr(v, "family"), "string"), "910B");
	assert_string_equal(str(attr(v, "product"), "string"), "910B3");
	assert_int_equal(json_object_get_int64(get(attr(v, "physicalID"), "int")), 0);
	assert_int_equal(json_object_get_int64(get(attr(v, "vnpuID"), "int")), 100);
	assert_string_equal(str(attr(v, "template"), "string"), "vir10_3c_16g");
	assert_string_equal(str(attr(v, "resource.kubernetes.io/pciBusID"), "string"), "0000:01:00.0");
	assert_string_equal(str(attr(v, "driverVersion"), "version"), "24.1.0");
	assert_null(attr(v, "interconnect"));
	assert_null(attr(v, "interconnectGroup"));
	assert_null(attr(v, "logicID"));
	assert_string_equal(str(v, "capacity.aiCores.value"), "10");
	assert_string_equal(str(v, "capacity.memory.value"), "16Gi");
	assert_int_equal(json_object_array_length(get(v, "consumesCounters")), 1);
	assert_string_equal(str(v, "consumesCounters.0.counterSet"), "npu-0");
	assert_string_equal(str(v, "consumesCounters.0.counters.aicores.value"), "10");
	assert_string_equal(str(v, "consumesCounters.0.counters.memory.value"), "16Gi");
	assert_null(get(v, "allowMultipleAllocations"));
	v = find_device(slices, "vnpu-101");
	assert_string_equal(str(v, "consumesCounters.0.counters.aicores.value"), "5");
	assert_string_equal(str(v, "consumesCounters.0.counters.memory.value"), "8Gi");
	json_object_put(slices);

	/* The chip's HBM unknown: no memory counter, and the vNPUs consume
	 * only AI cores, what the set has. A template naming no memory
	 * consumes none either. */
	facts[0].hbm_bytes = 0;
	snprintf(s->devices[3].vnpu.template_name, sizeof(s->devices[3].vnpu.template_name), "vir04");
	assert_int_equal(kube_slices_build(s, &p, &slices), 0);
	assert_null(get(slices, "1.spec.sharedCounters.0.counters.memory"));
	v = find_device(slices, "vnpu-100");
	assert_string_equal(str(v, "capacity.memory.value"), "16Gi");
	assert_null(get(v, "consumesCounters.0.counters.memory"));
	assert_string_equal(str(v, "consumesCounters.0.counters.aicores.value"), "10");
	v = find_device(slices, "vnpu-101");
	assert_null(get(v, "capacity.memory"));
	assert_string_equal(str(v, "capacity.aiCores.value"), "4");
	json_object_put(slices);

	/* Nothing known of the chip: no counter set (an empty one is invalid),
	 * the vNPUs consume nothing and the split stays at 128. */
	s->devices[0].chip.aicore_count = 0;
	assert_int_equal(kube_slices_build(s, &p, &slices), 0);
	assert_int_equal(json_object_array_length(slices), 1);
	assert_null(get(find_device(slices, "vnpu-100"), "consumesCounters"));
	json_object_put(slices);

	/* A vNPU whose template is unknown (found by its node only) is not
	 * published, as the device plugin lists it under no resource. */
	s->devices[0].chip.aicore_count = 20;
	s->devices[2].vnpu.template_name[0] = '\0';
	assert_int_equal(kube_slices_build(s, &p, &slices), 0);
	assert_null(find_device(slices, "vnpu-100"));
	assert_non_null(find_device(slices, "vnpu-101"));
	json_object_put(slices);
	npu_snapshot_unref(s);
}

/* Chips carved on demand (--dra-dynamic-vnpus): chip 0 of a 910B3 (20 AI
 * cores, 64 GiB) is published whole and as every placement of the
 * inference templates, all consuming its counter set; chip 1, not listed,
 * stays a plain chip. */
static void test_dynamic_partitions(void **state)
{
	(void)state;
	struct npu_snapshot *s = make_snapshot(NPU_FAMILY_910B, "910B3", 2);
	struct kube_device_facts facts[3] = { { .hbm_bytes = 64ull << 30, .carve_on_demand = true },
					      { .hbm_bytes = 64ull << 30 } };
	struct kube_slice_params p = { .node_name = "n", .generation = 1, .facts = facts };
	json_object *slices = NULL;
	assert_int_equal(kube_slices_build(s, &p, &slices), 0);
	/* 2 chips + 4 + 2 + 2 + 2 + 2 + 4 placements = 18 devices, one slice
	 * of them, one of the counter set. */
	assert_int_equal(json_object_array_length(slices), 2);
	assert_int_equal(devices_in(slices, 0), 18);
	assert_string_equal(str(slices, "1.spec.sharedCounters.0.name"), "npu-0");
	assert_string_equal(str(slices, "1.spec.sharedCounters.0.counters.aicores.value"), "20");
	assert_string_equal(str(slices, "1.spec.sharedCounters.0.counters.memory.value"), "64Gi");
	json_object *whole = find_device(slices, "npu-0");
	assert_non_null(whole);
	assert_string_equal(str(whole, "consumesCounters.0.counterSet"), "npu-0");
	assert_string_equal(str(whole, "consumesCounters.0.counters.aicores.value"), "20");
	assert_string_equal(str(whole, "consumesCounters.0.counters.memory.value"), "64Gi");
	assert_null(get(find_device(slices, "npu-1"), "consumesCounters"));

	json_object *v = find_device(slices, "npu-0-vir05-1c-8g-3");
	assert_non_null(v);
	assert_null(find_device(slices, "npu-0-vir05-1c-8g-4")); /* 20 / 5 = 4 */
	assert_string_equal(str(attr(v, "type"), "string"), "vnpu");
	assert_true(json_object_get_boolean(get(attr(v, "dynamic"), "bool")));
	assert_string_equal(str(attr(v, "template"), "string"), "vir05_1c_8g");
	assert_int_equal(json_object_get_int64(get(attr(v, "physicalID"), "int")), 0);
	assert_string_equal(str(attr(v, "interconnectGroup"), "string"), str(attr(whole, "interconnectGroup"), "string"));
	assert_string_equal(str(v, "capacity.aiCores.value"), "5");
	assert_string_equal(str(v, "consumesCounters.0.counters.aicores.value"), "5");
	assert_string_equal(str(v, "consumesCounters.0.counters.memory.value"), "8Gi");
	/* 32 GiB twice in 64 GiB, 10 cores twice in 20. */
	assert_non_null(find_device(slices, "npu-0-vir10-3c-32g-1"));
	assert_null(find_device(slices, "npu-0-vir10-3c-32g-2"));
	json_object_put(slices);

	/* A vNPU the driver created (id 100) leaves the published set as it
	 * was; one it did not (an administrator's) makes the chip static. */
	struct npu_snapshot *carved = carve_snapshot(s, 1, 1, "vir05_1c_8g");
	assert_non_null(carved);
	facts[2].made_for_claim = true;
	assert_int_equal(kube_slices_build(carved, &p, &slices), 0);
	assert_int_equal(devices_in(slices, 0), 18);
	assert_non_null(find_device(slices, "npu-0"));
	assert_null(find_device(slices, "vnpu-100"));
	json_object_put(slices);
	facts[2].made_for_claim = false;
	assert_int_equal(kube_slices_build(carved, &p, &slices), 0);
	assert_null(find_device(slices, "npu-0"));
	assert_null(find_device(slices, "npu-0-vir05-1c-8g-0"));
	assert_false(json_object_get_boolean(get(attr(find_device(slices, "vnpu-100"), "dynamic"), "bool")));
	json_object_put(slices);
	npu_snapshot_unref(carved);

	/* An Unhealthy chip's placements carry its taint; a chip whose AI
	 * cores are unknown cannot be accounted, and is served whole. */
	s->devices[0].healthy = false;
	s->devices[0].fault = NPU_FAULT_HEALTH_LEVEL;
	assert_int_equal(kube_slices_build(s, &p, &slices), 0);
	assert_string_equal(str(find_device(slices, "npu-0-vir10-3c-16g-0"), "taints.0.key"), KUBE_TAINT_UNHEALTHY_KEY);
	json_object_put(slices);
	s->devices[0].chip.aicore_count = 0;
	assert_int_equal(kube_slices_build(s, &p, &slices), 0);
	assert_int_equal(json_object_array_length(slices), 1);
	assert_null(find_device(slices, "npu-0-vir10-3c-16g-0"));
	assert_null(get(find_device(slices, "npu-0"), "consumesCounters"));
	json_object_put(slices);
	npu_snapshot_unref(s);
}

/* Sixteen 910B3 chips with every template: within the API's limits. */
static void test_dynamic_sixteen_chips(void **state)
{
	(void)state;
	struct npu_snapshot *s = make_snapshot(NPU_FAMILY_910B, "910B3", 16);
	struct kube_device_facts facts[16];
	for (size_t i = 0; i < 16; i++)
		facts[i] = (struct kube_device_facts){ .hbm_bytes = 64ull << 30, .carve_on_demand = true };
	const struct kube_slice_params p = { .node_name = "n", .generation = 1, .facts = facts };
	json_object *slices = NULL;
	assert_int_equal(kube_slices_build(s, &p, &slices), 0);
	/* 16 x 17 = 272 devices at 64 a slice: 5 slices; 16 counter sets at
	 * 8 a slice: 2 more. */
	assert_int_equal(json_object_array_length(slices), 7);
	size_t devices = 0;
	for (size_t i = 0; i < 5; i++) {
		assert_true(devices_in(slices, i) <= KUBE_SLICE_MAX_DEVICES_TAINTED);
		devices += devices_in(slices, i);
	}
	assert_int_equal(devices, 272);
	json_object_put(slices);
	npu_snapshot_unref(s);
}

static void test_vnpu_health(void **state)
{
	(void)state;
	struct npu_snapshot *s = carve(1, 1, 2, "vir08");
	/* The inventory makes the vNPUs of an Unhealthy chip Unhealthy too. */
	for (size_t i = 0; i < s->count; i++) {
		s->devices[i].healthy = false;
		s->devices[i].fault = NPU_FAULT_HEALTH_LEVEL;
	}
	s->healthy = 0;
	const struct kube_slice_params p = { .node_name = "n", .generation = 1 };
	json_object *slices = NULL;
	assert_int_equal(kube_slices_build(s, &p, &slices), 0);
	for (unsigned id = 100; id <= 101; id++) {
		char name[16];
		snprintf(name, sizeof(name), "vnpu-%u", id);
		json_object *v = find_device(slices, name);
		assert_string_equal(str(v, "taints.0.key"), "npu.ascend.com/unhealthy");
		assert_string_equal(str(v, "taints.0.value"), "health-critical");
		assert_string_equal(str(v, "taints.0.effect"), "NoSchedule");
	}
	json_object_put(slices);
	npu_snapshot_unref(s);
}

static void test_vnpu_split(void **state)
{
	(void)state;
	/* 10 chips of 16 vNPUs: 160 devices that consume counters, 64 per
	 * slice (the API's limit then), and 10 counter sets, 8 per slice. */
	struct npu_snapshot *s = carve(10, 10, 16, "vir01");
	const struct kube_slice_params p = { .node_name = "n", .generation = 1 };
	json_object *slices = NULL;
	assert_int_equal(kube_slices_build(s, &p, &slices), 0);
	assert_int_equal(json_object_array_length(slices), 5);
	assert_int_equal(devices_in(slices, 0), 64);
	assert_int_equal(devices_in(slices, 1), 64);
	assert_int_equal(devices_in(slices, 2), 32);
	assert_int_equal(json_object_array_length(get(slices, "3.spec.sharedCounters")), 8);
	assert_int_equal(json_object_array_length(get(slices, "4.spec.sharedCounters")), 2);
	assert_string_equal(str(slices, "4.spec.sharedCounters.1.name"), "npu-9");
	assert_string_equal(str(slices, "4.metadata.name"), "n-npu.ascend.com-4");
	for (size_t i = 0; i < 5; i++)
		assert_int_equal(json_object_get_int64(get(json_object_array_get_idx(slices, i), "spec.pool.resourceSliceCount")), 5);
	json_object_put(slices);
	npu_snapshot_unref(s);
}

static void test_time_slicing(void **state)
{
	(void)state;
	struct npu_snapshot *s = make_snapshot(NPU_FAMILY_910B, "910B3", 2);
	struct kube_device_facts facts[2] = { { .hbm_bytes = 64ull << 30, .shares = 4 }, { .shares = 1 } };
	const struct kube_slice_params p = { .node_name = "n", .generation = 1, .facts = facts };
	json_object *slices = NULL;
	assert_int_equal(kube_slices_build(s, &p, &slices), 0);
	json_object *d = find_device(slices, "npu-0");
	assert_true(json_object_get_boolean(get(d, "allowMultipleAllocations")));
	/* Each allocation takes one of the four shares, and nothing of the
	 * memory and AI cores, which the sharers do not divide. */
	assert_string_equal(str(d, "capacity.shares.value"), "4");
	assert_string_equal(str(d, "capacity.shares.requestPolicy.default"), "1");
	assert_int_equal(json_object_array_length(get(d, "capacity.shares.requestPolicy.validValues")), 1);
	assert_string_equal(str(d, "capacity.shares.requestPolicy.validValues.0"), "1");
	assert_string_equal(str(d, "capacity.memory.value"), "64Gi");
	assert_string_equal(str(d, "capacity.memory.requestPolicy.default"), "0");
	assert_string_equal(str(d, "capacity.memory.requestPolicy.validValues.0"), "0");
	assert_string_equal(str(d, "capacity.aiCores.requestPolicy.default"), "0");
	/* Not shared: as before, no request policy (the API refuses one). */
	d = find_device(slices, "npu-1");
	assert_null(get(d, "allowMultipleAllocations"));
	assert_null(get(d, "capacity.shares"));
	assert_null(get(d, "capacity.aiCores.requestPolicy"));
	json_object_put(slices);
	npu_snapshot_unref(s);
}

/* Whether any device of slices has member key (a dotted path), or any
 * slice has spec.sharedCounters when key is NULL. */
static bool any_has(json_object *slices, const char *key)
{
	for (size_t i = 0; i < json_object_array_length(slices); i++) {
		json_object *sl = json_object_array_get_idx(slices, i), *devices = get(sl, "spec.devices");
		if (!key && get(sl, "spec.sharedCounters"))
			return true;
		for (size_t k = 0; key && devices && k < json_object_array_length(devices); k++)
			if (get(json_object_array_get_idx(devices, k), key))
				return true;
	}
	return false;
}

/* Without taints: an Unhealthy chip (or vNPU) is left out, as before
 * taints, whatever its verdict, and a sub-health chip is published
 * untainted; nothing is tainted, so the split stays at 128. */
static void test_lacking_taints(void **state)
{
	(void)state;
	struct npu_snapshot *s = make_snapshot(NPU_FAMILY_910B, "910B3", 100);
	s->devices[2].healthy = false;
	s->devices[2].fault = NPU_FAULT_HEALTH_LEVEL;
	s->devices[6].healthy = false;
	s->devices[6].fault = NPU_FAULT_POLICY;
	s->healthy -= 2;
	struct kube_device_facts facts[100] = { 0 };
	facts[5] = (struct kube_device_facts){ .taint = KUBE_TAINT_SUB_HEALTH, .taint_value = "SubHealthFault-80C98009" };
	facts[6] = (struct kube_device_facts){ .taint = KUBE_TAINT_NO_EXECUTE, .taint_value = "SeparateNPU-80E01801" };
	const struct kube_slice_params p = { .node_name = "n", .generation = 2, .facts = facts,
					     .lacking = KUBE_LACKS_TAINTS };
	json_object *slices = NULL;
	assert_int_equal(kube_slices_build(s, &p, &slices), 0);
	assert_int_equal(json_object_array_length(slices), 1);
	assert_int_equal(devices_in(slices, 0), 98);
	assert_null(find_device(slices, "npu-2"));
	assert_null(find_device(slices, "npu-6"));
	assert_non_null(find_device(slices, "npu-5"));
	assert_false(any_has(slices, "taints"));
	json_object_put(slices);
	npu_snapshot_unref(s);

	/* The vNPUs of an Unhealthy chip likewise. */
	s = carve(2, 2, 2, "vir08");
	for (size_t i = 0; i < s->count; i++)
		if ((s->devices[i].kind == NPU_DEVICE_CHIP ? s->devices[i].chip.phy_id : s->devices[i].vnpu.phy_id) == 1)
			s->devices[i].healthy = false;
	assert_int_equal(kube_slices_build(s, &p, &slices), 0);
	assert_non_null(find_device(slices, "vnpu-100"));
	assert_non_null(find_device(slices, "vnpu-101"));
	assert_null(find_device(slices, "vnpu-116"));
	assert_null(find_device(slices, "vnpu-117"));
	assert_false(any_has(slices, "taints"));
	/* Chip 1's counter set goes with its vNPUs. */
	assert_int_equal(json_object_array_length(get(slices, "1.spec.sharedCounters")), 1);
	assert_string_equal(str(slices, "1.spec.sharedCounters.0.name"), "npu-0");
	json_object_put(slices);
	npu_snapshot_unref(s);
}

/* Without partitions: no counter sets and no device that consumes any.
 * Static vNPUs are not published and their chip stays withheld; a chip
 * to carve on demand is a plain chip while it carries no vNPU, and
 * withheld while it carries one made for a claim. */
static void test_lacking_partitions(void **state)
{
	(void)state;
	struct npu_snapshot *s = carve(2, 1, 2, "vir10_3c_16g");
	struct kube_device_facts facts[4] = { { .hbm_bytes = 64ull << 30 }, { .hbm_bytes = 64ull << 30 } };
	struct kube_slice_params p = { .node_name = "n", .generation = 4, .facts = facts,
				       .lacking = KUBE_LACKS_PARTITIONS };
	json_object *slices = NULL;
	assert_int_equal(kube_slices_build(s, &p, &slices), 0);
	assert_int_equal(json_object_array_length(slices), 1);
	assert_int_equal(devices_in(slices, 0), 1);
	assert_non_null(find_device(slices, "npu-1"));
	assert_false(any_has(slices, NULL));
	json_object_put(slices);
	npu_snapshot_unref(s);

	s = make_snapshot(NPU_FAMILY_910B, "910B3", 2);
	struct kube_device_facts dynamic[3] = { { .hbm_bytes = 64ull << 30, .carve_on_demand = true },
						{ .hbm_bytes = 64ull << 30 } };
	p.facts = dynamic;
	assert_int_equal(kube_slices_build(s, &p, &slices), 0);
	assert_int_equal(json_object_array_length(slices), 1);
	assert_int_equal(devices_in(slices, 0), 2);
	json_object *whole = find_device(slices, "npu-0");
	assert_non_null(whole);
	assert_string_equal(str(whole, "capacity.aiCores.value"), "20");
	assert_false(any_has(slices, "consumesCounters"));
	assert_false(any_has(slices, NULL));
	json_object_put(slices);
	struct npu_snapshot *carved = carve_snapshot(s, 1, 1, "vir05_1c_8g");
	assert_non_null(carved);
	dynamic[2].made_for_claim = true;
	assert_int_equal(kube_slices_build(carved, &p, &slices), 0);
	assert_int_equal(devices_in(slices, 0), 1);
	assert_null(find_device(slices, "npu-0"));
	assert_null(find_device(slices, "vnpu-100"));
	json_object_put(slices);
	npu_snapshot_unref(carved);
	npu_snapshot_unref(s);
}

/* Without shared capacity: a time-sliced chip is a plain chip. */
static void test_lacking_sharing(void **state)
{
	(void)state;
	struct npu_snapshot *s = make_snapshot(NPU_FAMILY_910B, "910B3", 2);
	struct kube_device_facts facts[2] = { { .hbm_bytes = 64ull << 30, .shares = 4 }, { .shares = 1 } };
	const struct kube_slice_params p = { .node_name = "n", .generation = 1, .facts = facts,
					     .lacking = KUBE_LACKS_SHARING };
	json_object *slices = NULL;
	assert_int_equal(kube_slices_build(s, &p, &slices), 0);
	json_object *d = find_device(slices, "npu-0");
	assert_null(get(d, "allowMultipleAllocations"));
	assert_null(get(d, "capacity.shares"));
	assert_string_equal(str(d, "capacity.memory.value"), "64Gi");
	assert_null(get(d, "capacity.memory.requestPolicy"));
	assert_null(get(d, "capacity.aiCores.requestPolicy"));
	json_object_put(slices);
	npu_snapshot_unref(s);
}

/* Slices built without what a server lacks lose nothing when it stores
 * them: for every mask, a node with everything (Unhealthy and sub-health
 * chips, static and dynamic vNPUs, a time-sliced chip) built without the
 * mask's fields is what that server keeps of it. */
static void test_lacking_is_kept(void **state)
{
	(void)state;
	struct npu_snapshot *c = make_snapshot(NPU_FAMILY_910B, "910B3", 5);
	c->devices[3].healthy = false;
	c->devices[3].fault = NPU_FAULT_HEALTH_LEVEL;
	struct npu_snapshot *s = carve_snapshot(c, 1, 2, "vir10_3c_16g");
	npu_snapshot_unref(c);
	assert_non_null(s);
	struct kube_device_facts facts[7] = { { .hbm_bytes = 64ull << 30 }, { .hbm_bytes = 64ull << 30, .shares = 3 },
					      { .hbm_bytes = 64ull << 30, .carve_on_demand = true },
					      { .hbm_bytes = 64ull << 30 },
					      { .taint = KUBE_TAINT_SUB_HEALTH, .taint_value = "SubHealthFault" } };
	for (unsigned lacking = 0; lacking <= KUBE_LACKS_ALL; lacking++) {
		const struct kube_slice_params p = { .node_name = "n", .generation = 1, .facts = facts,
						     .lacking = lacking };
		json_object *slices = NULL;
		assert_int_equal(kube_slices_build(s, &p, &slices), 0);
		for (size_t i = 0; i < json_object_array_length(slices); i++) {
			json_object *sent = json_object_array_get_idx(slices, i), *stored = NULL;
			assert_int_equal(json_object_deep_copy(sent, &stored, NULL), 0);
			gated_fields_drop(stored, lacking);
			assert_true(json_object_equal(sent, stored));
			assert_int_equal(kube_slice_dropped(sent, stored), 0);
			json_object_put(stored);
		}
		/* What it lacks and the slices would say otherwise: found. */
		const struct kube_slice_params all = { .node_name = "n", .generation = 1, .facts = facts };
		json_object *full = NULL;
		assert_int_equal(kube_slices_build(s, &all, &full), 0);
		unsigned found = 0;
		for (size_t i = 0; i < json_object_array_length(full); i++) {
			json_object *sent = json_object_array_get_idx(full, i), *stored = NULL;
			assert_int_equal(json_object_deep_copy(sent, &stored, NULL), 0);
			gated_fields_drop(stored, lacking);
			found |= kube_slice_dropped(sent, stored);
			json_object_put(stored);
		}
		assert_int_equal(found, lacking);
		/* The gated fields the slices carry: all of them in full, none
		 * of what was left out. */
		assert_int_equal(kube_slices_gated(full), KUBE_LACKS_ALL);
		assert_int_equal(kube_slices_gated(slices), KUBE_LACKS_ALL & ~lacking);
		json_object_put(full);
		json_object_put(slices);
	}
	npu_snapshot_unref(s);

	/* Healthy plain chips carry none: no probe is needed for them. */
	struct npu_snapshot *plain = make_snapshot(NPU_FAMILY_910B, "910B3", 4);
	const struct kube_slice_params p = { .node_name = "n", .generation = 1 };
	json_object *slices = NULL;
	assert_int_equal(kube_slices_build(plain, &p, &slices), 0);
	assert_int_equal(kube_slices_gated(slices), 0);
	json_object_put(slices);
	npu_snapshot_unref(plain);
}

/* The probe: a slice of the pool, owned by the Node, one device with each
 * field; what a server keeps of it says which it drops. */
static void test_probe(void **state)
{
	(void)state;
	const struct kube_slice_params p = { .node_name = "node-1", .node_uid = "1234-abcd", .generation = 3 };
	json_object *probe = NULL;
	assert_int_equal(kube_slice_probe(&p, &probe), 0);
	assert_string_equal(str(probe, "metadata.name"), "node-1-npu.ascend.com-probe");
	assert_string_equal(str(probe, "metadata.ownerReferences.0.uid"), "1234-abcd");
	assert_string_equal(str(probe, "spec.nodeName"), "node-1");
	assert_string_equal(str(probe, "spec.driver"), "npu.ascend.com");
	assert_string_equal(str(probe, "spec.pool.name"), "node-1");
	assert_int_equal(json_object_get_int64(get(probe, "spec.pool.resourceSliceCount")), 1);
	assert_int_equal(json_object_array_length(get(probe, "spec.devices")), 1);
	assert_null(get(probe, "spec.sharedCounters"));
	json_object *d = get(probe, "spec.devices.0");
	assert_string_equal(str(d, "taints.0.effect"), "NoSchedule");
	assert_non_null(str(d, "consumesCounters.0.counterSet"));
	assert_true(json_object_get_boolean(get(d, "allowMultipleAllocations")));
	assert_non_null(get(d, "capacity.shares.requestPolicy"));

	for (unsigned drops = 0; drops <= KUBE_LACKS_ALL; drops++) {
		json_object *stored = NULL;
		assert_int_equal(json_object_deep_copy(probe, &stored, NULL), 0);
		gated_fields_drop(stored, drops);
		assert_int_equal(kube_slice_dropped(probe, stored), drops);
		json_object_put(stored);
	}
	/* A server's additions (a taint's timeAdded) and its order of keys
	 * are not drops; an answer that is not a slice, or that names no such
	 * device, says nothing. */
	json_object *stored = NULL;
	assert_int_equal(json_object_deep_copy(probe, &stored, NULL), 0);
	json_object_object_add(json_object_array_get_idx(get(stored, "spec.devices.0.taints"), 0), "timeAdded",
			       json_object_new_string("2026-01-01T00:00:00Z"));
	assert_int_equal(kube_slice_dropped(probe, stored), 0);
	json_object_object_add(get(stored, "spec.devices.0"), "name", json_object_new_string("other"));
	gated_fields_drop(stored, KUBE_LACKS_ALL);
	assert_int_equal(kube_slice_dropped(probe, stored), 0);
	json_object_put(stored);
	json_object *garbage = json_tokener_parse("{\"spec\":{\"devices\":{\"a\":1}}}");
	assert_int_equal(kube_slice_dropped(probe, garbage), 0);
	json_object_put(garbage);
	garbage = json_tokener_parse("[1,2]");
	assert_int_equal(kube_slice_dropped(probe, garbage), 0);
	json_object_put(garbage);
	garbage = json_tokener_parse("{\"spec\":{\"devices\":[{\"name\":7},{\"name\":\"probe\",\"capacity\":[]}]}}");
	assert_int_equal(kube_slice_dropped(probe, garbage), KUBE_LACKS_TAINTS | KUBE_LACKS_PARTITIONS |
								     KUBE_LACKS_SHARING);
	json_object_put(garbage);
	json_object_put(probe);

	/* The same checks on names as the slices'. */
	const struct kube_slice_params bad = { .node_name = "Node_1" };
	assert_int_equal(kube_slice_probe(&bad, &probe), -EINVAL);
}

static void test_names(void **state)
{
	(void)state;
	char name[KUBE_NAME_MAX];
	assert_int_equal(kube_slice_name("worker-3", "npu.ascend.com", 11, name), 0);
	assert_string_equal(name, "worker-3-npu.ascend.com-11");
	/* A node name of 253 characters is cut, and a hash keeps it apart. */
	char node[254], other[254];
	memset(node, 'a', 253);
	node[253] = '\0';
	memcpy(other, node, sizeof(other));
	other[252] = 'b';
	char name2[KUBE_NAME_MAX];
	assert_int_equal(kube_slice_name(node, "npu.ascend.com", 0, name), 0);
	assert_int_equal(kube_slice_name(other, "npu.ascend.com", 0, name2), 0);
	assert_true(strlen(name) <= 253);
	assert_string_not_equal(name, name2);
	assert_non_null(strstr(name, "-npu.ascend.com-0"));

	struct npu_snapshot *s = make_snapshot(NPU_FAMILY_910, "", 1);
	json_object *slices = NULL;
	const struct kube_slice_params bad = { .node_name = "Node_1", .generation = 1 };
	assert_int_equal(kube_slices_build(s, &bad, &slices), -EINVAL);
	const struct kube_slice_params none = { .generation = 1 };
	assert_int_equal(kube_slices_build(s, &none, &slices), -EINVAL);
	const struct kube_slice_params long_driver = {
		.node_name = "n", .driver = "a234567890123456789012345678901234567890123456789012345678901234.com"
	};
	assert_int_equal(kube_slices_build(s, &long_driver, &slices), -EINVAL);
	const struct kube_slice_params driver = { .node_name = "n", .driver = "gpu.example.com" };
	assert_int_equal(kube_slices_build(s, &driver, &slices), 0);
	assert_string_equal(str(slices, "0.spec.driver"), "gpu.example.com");
	assert_string_equal(str(slices, "0.metadata.name"), "n-gpu.example.com-0");
	json_object_put(slices);
	/* A version above the API's 64 characters is left out, not sent to be refused. */
	char version[80];
	memset(version, '1', 65);
	version[65] = '\0';
	const struct kube_slice_params long_version = { .node_name = "n", .driver_version = version,
							.firmware_version = "1.0.0" };
	assert_int_equal(kube_slices_build(s, &long_version, &slices), 0);
	assert_null(get(slices, "0.spec.devices.0.attributes.driverVersion"));
	assert_non_null(get(slices, "0.spec.devices.0.attributes.firmwareVersion"));
	json_object_put(slices);
	npu_snapshot_unref(s);
}

static void test_semver(void **state)
{
	(void)state;
	static const char *const yes[] = { "1.2.3", "0.0.0", "10.20.30", "1.0.0-alpha.1", "1.0.0+build.5", "1.0.0-rc.1+x-y" };
	static const char *const no[] = { "", "1.2", "1.2.3.4", "01.2.3", "1.2.3-", "1.2.3-01", "24.1.rc2", "v1.2.3",
					  "1.2.3+", "1..3", "1.2.3-a..b", "7.5.0.5.201" };
	for (size_t i = 0; i < sizeof(yes) / sizeof(yes[0]); i++)
		if (!kube_is_semver(yes[i]))
			fail_msg("\"%s\" is semantic versioning", yes[i]);
	for (size_t i = 0; i < sizeof(no) / sizeof(no[0]); i++)
		if (kube_is_semver(no[i]))
			fail_msg("\"%s\" is not semantic versioning", no[i]);
	assert_false(kube_is_semver(NULL));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_one_chip),
		cmocka_unit_test(test_network_identity),
		cmocka_unit_test(test_interconnect_groups),
		cmocka_unit_test(test_interconnect_mixed_and_partial),
		cmocka_unit_test(test_taint),
		cmocka_unit_test(test_split),
		cmocka_unit_test(test_vnpu_partitions),
		cmocka_unit_test(test_dynamic_partitions),
		cmocka_unit_test(test_dynamic_sixteen_chips),
		cmocka_unit_test(test_vnpu_health),
		cmocka_unit_test(test_vnpu_split),
		cmocka_unit_test(test_time_slicing),
		cmocka_unit_test(test_lacking_taints),
		cmocka_unit_test(test_lacking_partitions),
		cmocka_unit_test(test_lacking_sharing),
		cmocka_unit_test(test_lacking_is_kept),
		cmocka_unit_test(test_probe),
		cmocka_unit_test(test_names),
		cmocka_unit_test(test_semver),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
