/* SPDX-License-Identifier: Apache-2.0 */
/* The ResourceSlice publisher (kube/publisher.c) against the real etcd and
 * kube-apiserver the e2e cluster is built from (scripts/cluster-bins.sh), on
 * free ports of this machine, started by tests/cluster/cluster.sh's own
 * functions (CLUSTER_HOST_NET=1: no network namespace, no root needed). It
 * reads a kubeconfig the way an operator's would be read, publishes the
 * slices of a simulated 8-chip 910B3 node, and checks them with kubectl:
 * the pool, the devices and their attributes, the owner reference to the
 * Node; a chip fault taints the chip in a new generation; the API server is
 * stopped, a change made meanwhile, and once the server is back the
 * publisher puts the current truth there. vNPUs as partitions and a
 * time-sliced chip are published and read back. Two publishers of one
 * pool (a surge roll of the DRA driver) write nothing the other wrote
 * already. The publisher's watch streams the list first (sendInitialEvents)
 * and the rounds read it instead of listing: a deleted slice is put back
 * within a second with a read of the Node and a create, no list, no
 * polling (the server's audit log counts its requests); the watch is made
 * again each time the server ends it, streams the list again when a
 * restarted server no longer has its version (410), and ends at once at
 * a stop. With the feature gates of taints, counters and shared capacity
 * off, as Kubernetes 1.34 and 1.35 have them, the publisher finds out
 * before it writes and publishes only what the server keeps. A server
 * without streamed lists (WatchList off, as in 1.33) is listed and watched
 * as before. Skipped (77) where the cluster's binaries were not built. */
#include <errno.h>
#include <setjmp.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include <cmocka.h>
#include <json-c/json.h>

#include "base/parse.h"
#include "harness/apiserver.h"
#include "kube/client.h"
#include "kube/publisher.h"
#include "support/carve.h"
#include "support/publish_reports.h"

#define WAIT_MS 60000
/* The publisher's client, as the audit log names it. */
#define AGENT "ascend-k8s/"

static struct apiserver *const api = &the_apiserver;

static struct publish_reports reps;

static size_t wait_report(size_t after, enum kube_publish_event event)
{
	size_t i = 0;
	if (publish_reports_wait(&reps, after, event, 0, WAIT_MS, &i) < 0)
		fail_msg("no report of event %d after %zu", event, after);
	return i;
}

static struct npu_snapshot *chips(int unhealthy)
{
	struct npu_snapshot *s = npu_snapshot_new(8);
	assert_non_null(s);
	for (unsigned i = 0; i < 8; i++) {
		struct npu_device *d = &s->devices[i];
		snprintf(d->id, sizeof(d->id), "npu-%u", i);
		d->chip.phy_id = i;
		d->chip.logic_id = i;
		d->chip.card_id = (int)i;
		d->chip.family = NPU_FAMILY_910B;
		d->chip.aicore_count = 20;
		snprintf(d->chip.name, sizeof(d->chip.name), "910B3");
		snprintf(d->pci_address, sizeof(d->pci_address), "0000:%02x:00.0", 0xc1 + i);
		d->has_numa = true;
		d->numa_node = i / 4;
		d->healthy = (int)i != unhealthy;
		d->fault = d->healthy ? NPU_FAULT_NONE : NPU_FAULT_HEALTH_LEVEL;
		s->healthy += d->healthy;
	}
	return s;
}

static void offer(struct kube_publisher *p, int unhealthy)
{
	struct kube_device_facts facts[8] = { { 0 } };
	for (size_t i = 0; i < 8; i++)
		facts[i].hbm_bytes = 64ull << 30;
	struct npu_snapshot *s = chips(unhealthy);
	assert_int_equal(kube_publisher_offer(p, s, facts), 0);
	npu_snapshot_unref(s);
}

/* The node's slices as the server has them: one slice of 8 devices at
 * generation, npu-<tainted> (or none, -1) with the unhealthy taint. */
static void check_slices(const char *node_uid, int64_t generation, int tainted)
{
	json_object *list = apiserver_kubectl_json(api, "get resourceslices");
	json_object *items = json_at(list, "items");
	assert_int_equal(json_object_array_length(items), 1);
	json_object *s = json_object_array_get_idx(items, 0);
	assert_string_equal(json_str_at(s, "metadata.name"), "sim-node-1-npu.ascend.com-0");
	assert_string_equal(json_str_at(s, "metadata.ownerReferences.0.kind"), "Node");
	assert_string_equal(json_str_at(s, "metadata.ownerReferences.0.uid"), node_uid);
	assert_string_equal(json_str_at(s, "spec.driver"), "npu.ascend.com");
	assert_string_equal(json_str_at(s, "spec.nodeName"), "sim-node-1");
	assert_string_equal(json_str_at(s, "spec.pool.name"), "sim-node-1");
	assert_int_equal(json_object_get_int64(json_at(s, "spec.pool.generation")), generation);
	assert_int_equal(json_object_get_int64(json_at(s, "spec.pool.resourceSliceCount")), 1);
	json_object *devices = json_at(s, "spec.devices");
	assert_int_equal(json_object_array_length(devices), 8);
	for (size_t i = 0; i < 8; i++) {
		json_object *d = json_object_array_get_idx(devices, i);
		char name[16];
		snprintf(name, sizeof(name), "npu-%zu", i);
		assert_string_equal(json_str_at(d, "name"), name);
		assert_string_equal(json_str_at(d, "attributes.product.string"), "910B3");
		assert_string_equal(json_str_at(d, "attributes.interconnectGroup.string"), "hccs-mesh-0");
		assert_int_equal(json_object_get_int64(json_at(d, "attributes.physicalID.int")), (int64_t)i);
		json_object *numa = NULL;
		assert_true(json_object_object_get_ex(json_at(d, "attributes"), "resource.kubernetes.io/numaNode", &numa));
		assert_int_equal(json_object_get_int64(json_at(numa, "int")), (int64_t)(i / 4));
		assert_string_equal(json_str_at(d, "capacity.memory.value"), "64Gi");
		assert_string_equal(json_str_at(d, "capacity.aiCores.value"), "20");
		bool has_taint = json_at(d, "taints") != NULL;
		assert_int_equal(has_taint, (int)i == tainted);
		if (has_taint) {
			assert_string_equal(json_str_at(d, "taints.0.key"), "npu.ascend.com/unhealthy");
			assert_string_equal(json_str_at(d, "taints.0.effect"), "NoSchedule");
		}
	}
	json_object_put(list);
}

/* A client read from the server's kubeconfig as an operator's would be. */
static struct kube_client *client_of_kubeconfig(void)
{
	char why[512];
	struct kube_config config;
	if (kube_config_from_kubeconfig(api->kubeconfig, NULL, &config, why, sizeof(why)) < 0)
		fail_msg("%s", why);
	struct kube_client *client = NULL;
	if (kube_client_new(&config, 2000, &client, why, sizeof(why)) < 0)
		fail_msg("%s", why);
	return client;
}

static void test_publish_to_kube_apiserver(void **state)
{
	(void)state;
	static const char node_yaml[] = "apiVersion: v1\nkind: Node\nmetadata:\n  name: sim-node-1\n";
	assert_int_equal(apiserver_kubectl(api, node_yaml, "apply -f -"), 0);
	json_object *node = apiserver_kubectl_json(api, "get node sim-node-1");
	char node_uid[64];
	snprintf(node_uid, sizeof(node_uid), "%s", json_str_at(node, "metadata.uid"));
	json_object_put(node);

	struct kube_client *client = client_of_kubeconfig();
	const struct kube_publisher_options o = {
		.client = client,
		.node_name = "sim-node-1",
		.driver_version = "24.1.rc2",
		.firmware_version = "7.5.0",
		.backoff_initial_ms = 100,
		.backoff_max_ms = 1000,
		.resync_ms = 1000,
		.report = publish_reports_add,
		.report_ctx = &reps,
	};
	struct kube_publisher *p = NULL;
	assert_int_equal(kube_publisher_start(&o, &p), 0);

	offer(p, -1);
	size_t i = wait_report(0, KUBE_PUBLISH_DONE);
	assert_int_equal(reps.all[i].generation, 1);
	check_slices(node_uid, 1, -1);
	/* The types the server stored: a version where the text is one. */
	json_object *list = apiserver_kubectl_json(api, "get resourceslices");
	assert_string_equal(json_str_at(list, "items.0.spec.devices.0.attributes.firmwareVersion.version"), "7.5.0");
	assert_string_equal(json_str_at(list, "items.0.spec.devices.0.attributes.driverVersion.string"), "24.1.rc2");
	json_object_put(list);

	/* A chip fault: tainted in generation 2. */
	offer(p, 3);
	i = wait_report(i + 1, KUBE_PUBLISH_DONE);
	assert_int_equal(reps.all[i].generation, 2);
	check_slices(node_uid, 2, 3);

	/* The API server goes away; chip 3 recovers and chip 5 fails meanwhile. */
	apiserver_stop(api);
	offer(p, 5);
	i = wait_report(i + 1, KUBE_PUBLISH_FAILED);
	assert_int_equal(reps.all[i].error, -ECONNREFUSED);
	apiserver_start(api);
	i = wait_report(i + 1, KUBE_PUBLISH_DONE);
	assert_true(reps.all[i].recovered);
	assert_int_equal(reps.all[i].generation, 3);
	check_slices(node_uid, 3, 5);
	/* Each cause once, however many retries while the server was away
	 * (a starting server may add a cause of its own, such as a 503). */
	for (size_t k = 1; k < i; k++)
		if (reps.all[k].event == KUBE_PUBLISH_FAILED && reps.all[k - 1].event == KUBE_PUBLISH_FAILED)
			assert_false(reps.all[k].error == reps.all[k - 1].error && reps.all[k].status == reps.all[k - 1].status);

	/* The Node deleted and made again: the garbage collector deletes the
	 * slices the old Node owned (this control plane has no controller
	 * manager: kubectl does it here), and the publisher makes them anew
	 * with the new Node as owner. */
	assert_int_equal(apiserver_kubectl(api, NULL, "delete node sim-node-1"), 0);
	assert_int_equal(apiserver_kubectl(api, node_yaml, "apply -f -"), 0);
	node = apiserver_kubectl_json(api, "get node sim-node-1");
	assert_string_not_equal(json_str_at(node, "metadata.uid"), node_uid);
	snprintf(node_uid, sizeof(node_uid), "%s", json_str_at(node, "metadata.uid"));
	json_object_put(node);
	assert_int_equal(apiserver_kubectl(api, NULL, "delete resourceslice sim-node-1-npu.ascend.com-0"), 0);
	i = wait_report(i + 1, KUBE_PUBLISH_DONE);
	assert_int_equal(reps.all[i].generation, 4);
	check_slices(node_uid, 4, 5);

	kube_publisher_stop(p);
	kube_client_free(client);
}

/* The device of that name in the slices of list, or NULL. */
static json_object *device_named(json_object *list, const char *name)
{
	json_object *items = json_at(list, "items");
	for (size_t i = 0; i < json_object_array_length(items); i++) {
		json_object *devices = json_at(json_object_array_get_idx(items, i), "spec.devices");
		for (size_t k = 0; devices && k < json_object_array_length(devices); k++)
			if (strcmp(json_str_at(json_object_array_get_idx(devices, k), "name"), name) == 0)
				return json_object_array_get_idx(devices, k);
	}
	return NULL;
}

/* vNPUs as partitions (a counter set in a slice of its own, devices that
 * consume from it) and a time-sliced chip (allowMultipleAllocations, a
 * capacity with request policies): the server validates them with its
 * feature gates' defaults (DRAPartitionableDevices, DRAConsumableCapacity)
 * and drops a field whose gate is off, so each is read back. */
static void test_partitions_and_sharing(void **state)
{
	(void)state;
	static const char node_yaml[] = "apiVersion: v1\nkind: Node\nmetadata:\n  name: sim-node-2\n";
	assert_int_equal(apiserver_kubectl(api, node_yaml, "apply -f -"), 0);
	struct kube_client *client = client_of_kubeconfig();
	const struct kube_publisher_options o = {
		.client = client,
		.node_name = "sim-node-2",
		.backoff_initial_ms = 100,
		.backoff_max_ms = 1000,
		.report = publish_reports_add,
		.report_ctx = &reps,
	};
	struct kube_publisher *p = NULL;
	size_t before = reps.n;
	assert_int_equal(kube_publisher_start(&o, &p), 0);

	/* Chip 0 carved into two vNPUs; chip 1 shared by 4. */
	struct npu_snapshot *c = chips(-1);
	c->count = 2;
	struct npu_snapshot *s = carve_snapshot(c, 1, 2, "vir10_3c_16g");
	npu_snapshot_unref(c);
	assert_non_null(s);
	struct kube_device_facts facts[4] = { { .hbm_bytes = 64ull << 30 }, { .hbm_bytes = 64ull << 30, .shares = 4 } };
	assert_int_equal(kube_publisher_offer(p, s, facts), 0);
	npu_snapshot_unref(s);
	size_t i = wait_report(before, KUBE_PUBLISH_DONE);
	assert_int_equal(reps.all[i].slices, 2);
	assert_int_equal(reps.all[i].devices, 3);

	json_object *list = apiserver_kubectl_json(api, "get resourceslices --field-selector spec.nodeName=sim-node-2");
	assert_int_equal(json_object_array_length(json_at(list, "items")), 2);
	json_object *sets = NULL;
	for (size_t k = 0; k < 2 && !sets; k++)
		sets = json_at(json_object_array_get_idx(json_at(list, "items"), k), "spec.sharedCounters");
	assert_non_null(sets);
	assert_string_equal(json_str_at(sets, "0.name"), "npu-0");
	assert_string_equal(json_str_at(sets, "0.counters.aicores.value"), "20");
	assert_string_equal(json_str_at(sets, "0.counters.memory.value"), "64Gi");
	assert_null(device_named(list, "npu-0"));
	json_object *v = device_named(list, "vnpu-100");
	assert_non_null(v);
	assert_string_equal(json_str_at(v, "attributes.template.string"), "vir10_3c_16g");
	assert_string_equal(json_str_at(v, "consumesCounters.0.counterSet"), "npu-0");
	assert_string_equal(json_str_at(v, "consumesCounters.0.counters.aicores.value"), "10");
	assert_string_equal(json_str_at(v, "consumesCounters.0.counters.memory.value"), "16Gi");
	json_object *shared = device_named(list, "npu-1");
	assert_non_null(shared);
	assert_true(json_object_get_boolean(json_at(shared, "allowMultipleAllocations")));
	assert_string_equal(json_str_at(shared, "capacity.shares.value"), "4");
	assert_string_equal(json_str_at(shared, "capacity.shares.requestPolicy.default"), "1");
	assert_string_equal(json_str_at(shared, "capacity.shares.requestPolicy.validValues.0"), "1");
	assert_string_equal(json_str_at(shared, "capacity.memory.requestPolicy.default"), "0");
	json_object_put(list);
	/* The probe found everything kept. */
	for (size_t k = before; k < i; k++)
		assert_int_not_equal(reps.all[k].event, KUBE_PUBLISH_LACKS);

	kube_publisher_stop(p);
	kube_client_free(client);
}

/* The generation and resourceVersion of sim-node-3's one slice. */
static void slice_version(int64_t *ret_generation, char *rv, size_t size)
{
	json_object *list = apiserver_kubectl_json(api, "get resourceslices --field-selector spec.nodeName=sim-node-3");
	assert_int_equal(json_object_array_length(json_at(list, "items")), 1);
	*ret_generation = json_object_get_int64(json_at(list, "items.0.spec.pool.generation"));
	snprintf(rv, size, "%s", json_str_at(list, "items.0.metadata.resourceVersion"));
	json_object_put(list);
}

/* Two publishers of one node's pool, as the old and the new pod of a surge
 * roll of the DRA driver run them: the one that finds the slices as it
 * would write them writes nothing and takes the server's generation, and
 * one stopping removes nothing. */
static void test_two_instances_one_pool(void **state)
{
	(void)state;
	static const char node_yaml[] = "apiVersion: v1\nkind: Node\nmetadata:\n  name: sim-node-3\n";
	assert_int_equal(apiserver_kubectl(api, node_yaml, "apply -f -"), 0);
	struct kube_client *client = client_of_kubeconfig();
	const struct kube_publisher_options o = {
		.client = client,
		.node_name = "sim-node-3",
		.backoff_initial_ms = 100,
		.backoff_max_ms = 1000,
		.report = publish_reports_add,
		.report_ctx = &reps,
	};
	struct kube_publisher *old = NULL, *new = NULL;
	int64_t generation, again;
	char rv[64], rv_again[64];
	size_t i = publish_reports_count(&reps);
	assert_int_equal(kube_publisher_start(&o, &old), 0);
	offer(old, -1);
	i = wait_report(i, KUBE_PUBLISH_DONE);
	slice_version(&generation, rv, sizeof(rv));
	assert_int_equal(reps.all[i].generation, generation);

	/* The new one finds the same content: no write. */
	assert_int_equal(kube_publisher_start(&o, &new), 0);
	offer(new, -1);
	i = wait_report(i + 1, KUBE_PUBLISH_DONE);
	assert_int_equal(reps.all[i].generation, generation);
	assert_int_equal(reps.all[i].devices, 8);
	slice_version(&again, rv_again, sizeof(rv_again));
	assert_int_equal(again, generation);
	assert_string_equal(rv_again, rv);

	/* A fault the new one publishes first: the old one, told the same,
	 * finds it there and writes nothing either. */
	offer(new, 3);
	i = wait_report(i + 1, KUBE_PUBLISH_DONE);
	assert_int_equal(reps.all[i].generation, generation + 1);
	slice_version(&generation, rv, sizeof(rv));
	offer(old, 3);
	i = wait_report(i + 1, KUBE_PUBLISH_DONE);
	assert_int_equal(reps.all[i].generation, generation);
	slice_version(&again, rv_again, sizeof(rv_again));
	assert_int_equal(again, generation);
	assert_string_equal(rv_again, rv);

	/* The old one leaves; the slices stay. */
	kube_publisher_stop(old);
	slice_version(&again, rv_again, sizeof(rv_again));
	assert_string_equal(rv_again, rv);
	kube_publisher_stop(new);
	kube_client_free(client);
}

/* A publisher of node (a Node made for it) with watches of watch_timeout_s
 * (0: the default), its first publication, at generation, on the server,
 * and its first watch under way; *ret_i: the index of its report. */
static struct kube_publisher *publish_node(const char *node, int watch_timeout_s, int64_t generation,
					   struct kube_client **ret_client, size_t *ret_i)
{
	char yaml[128];
	snprintf(yaml, sizeof(yaml), "apiVersion: v1\nkind: Node\nmetadata:\n  name: %s\n", node);
	assert_int_equal(apiserver_kubectl(api, yaml, "apply -f -"), 0);
	struct kube_client *client = client_of_kubeconfig();
	const struct kube_publisher_options o = {
		.client = client,
		.node_name = node,
		.backoff_initial_ms = 100,
		.backoff_max_ms = 1000,
		.watch_timeout_s = watch_timeout_s,
		.report = publish_reports_add,
		.report_ctx = &reps,
	};
	struct kube_publisher *p = NULL;
	size_t before = publish_reports_count(&reps);
	long mark = apiserver_audit_mark(api);
	assert_int_equal(kube_publisher_start(&o, &p), 0);
	offer(p, -1);
	*ret_i = wait_report(before, KUBE_PUBLISH_DONE);
	assert_int_equal(reps.all[*ret_i].generation, generation);
	assert_int_equal(apiserver_audit_wait(api, mark, AGENT, "watch", "resourceslices", 1, WAIT_MS), 1);
	*ret_client = client;
	return p;
}

/* The generation of node's one slice, or -1 when it has none. */
static int64_t generation_of(const char *node)
{
	char args[128];
	snprintf(args, sizeof(args), "get resourceslices --field-selector spec.nodeName=%s", node);
	json_object *list = apiserver_kubectl_json(api, args);
	size_t n = json_object_array_length(json_at(list, "items"));
	assert_true(n <= 1);
	int64_t generation = n ? json_object_get_int64(json_at(list, "items.0.spec.pool.generation")) : -1;
	json_object_put(list);
	return generation;
}

static int64_t cpu_ms(void)
{
	struct rusage u;
	assert_int_equal(getrusage(RUSAGE_SELF, &u), 0);
	return ((int64_t)u.ru_utime.tv_sec + u.ru_stime.tv_sec) * 1000 + (u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1000;
}

/* The kubelet wipes a node's slices when it starts, and a driver's 30 s
 * after the driver went away, at any time after the driver registered
 * again: the watch sees the deletion, and the slice is back within about a
 * second, with a read of the Node and the create, no list, no polling. The
 * server ends each watch (every 3 s here) and the next starts where the
 * last left off, without a list; idle, a watch costs no CPU; after those, a
 * deletion is still seen; a stop ends the watch at once. */
static void test_watch_puts_back(void **state)
{
	(void)state;
	struct kube_client *client;
	size_t i;
	struct kube_publisher *p = publish_node("sim-node-4", 3, 1, &client, &i);

	long mark = apiserver_audit_mark(api);
	assert_int_equal(apiserver_kubectl(api, NULL, "delete resourceslice sim-node-4-npu.ascend.com-0"), 0);
	int64_t t0 = now_ms();
	i = wait_report(i + 1, KUBE_PUBLISH_DONE);
	assert_true(now_ms() - t0 < 1500);
	assert_int_equal(reps.all[i].generation, 2);
	assert_int_equal(generation_of("sim-node-4"), 2);

	int64_t cpu = cpu_ms();
	t0 = now_ms();
	assert_int_equal(apiserver_audit_wait(api, mark, AGENT, "watch", "resourceslices", 3, WAIT_MS), 3);
	assert_true(now_ms() - t0 >= 4000); /* two ended, 3 s each */
	/* A busy loop would take the whole of it; the test's own reads of the
	 * audit log take a little. */
	assert_true(cpu_ms() - cpu < 1000);
	assert_int_equal(apiserver_audit_count(api, mark, AGENT, "list", "resourceslices"), 0);
	assert_int_equal(apiserver_audit_count(api, mark, AGENT, "get", "nodes"), 1);
	assert_int_equal(apiserver_audit_count(api, mark, AGENT, "create", "resourceslices"), 1);

	assert_int_equal(apiserver_kubectl(api, NULL, "delete resourceslice sim-node-4-npu.ascend.com-0"), 0);
	i = wait_report(i + 1, KUBE_PUBLISH_DONE);
	assert_int_equal(reps.all[i].generation, 3);
	assert_int_equal(generation_of("sim-node-4"), 3);

	t0 = now_ms();
	kube_publisher_stop(p);
	assert_true(now_ms() - t0 < 1000);
	kube_client_free(client);
}

/* A restarted API server no longer has the version the watch was at (its
 * cache starts anew: 410 Gone): the publisher's next watch streams the list
 * again, and nothing is listed. While the server is away the watch is
 * made again with backoff, and no round fails. */
static void test_watch_gone_after_restart(void **state)
{
	(void)state;
	struct kube_client *client;
	size_t i;
	struct kube_publisher *p = publish_node("sim-node-5", 0, 1, &client, &i);

	size_t before = publish_reports_count(&reps);
	long mark = apiserver_audit_mark(api);
	apiserver_stop(api);
	apiserver_start(api);
	/* The watch that is told 410, then the one that streams the list. */
	assert_int_equal(apiserver_audit_wait(api, mark, AGENT, "watch", "resourceslices", 2, WAIT_MS), 2);
	assert_int_equal(apiserver_audit_count(api, mark, AGENT, "list", "resourceslices"), 0);
	for (size_t k = before; k < publish_reports_count(&reps); k++)
		assert_int_not_equal(reps.all[k].event, KUBE_PUBLISH_FAILED);
	assert_int_equal(generation_of("sim-node-5"), 1);

	kube_publisher_stop(p);
	kube_client_free(client);
}

/* A server without streamed lists (the WatchList gate off, as 1.33 has it)
 * refuses the watch's sendInitialEvents: the publisher says so once, lists
 * instead, watches from the list's version, and a deleted slice is still
 * put back. A roll (a second publisher of the node, the first stopped)
 * finds the slices as wanted and takes the Node's uid from their owner
 * reference: it writes nothing and reads no Node. Last: the server is
 * left with its default gates. */
static void test_no_streamed_lists(void **state)
{
	(void)state;
	apiserver_restart(api, "--feature-gates=WatchList=false");
	struct kube_client *client;
	size_t i, before = publish_reports_count(&reps);
	long mark = apiserver_audit_mark(api);
	struct kube_publisher *p = publish_node("sim-node-6", 0, 1, &client, &i);
	assert_int_equal(apiserver_audit_count(api, mark, AGENT, "list", "resourceslices"), 1);
	size_t refused = 0;
	for (size_t k = before; k < publish_reports_count(&reps); k++)
		refused += reps.all[k].event == KUBE_PUBLISH_WATCH_FAILED && reps.all[k].status == 422;
	assert_int_equal(refused, 1);

	mark = apiserver_audit_mark(api);
	assert_int_equal(apiserver_kubectl(api, NULL, "delete resourceslice sim-node-6-npu.ascend.com-0"), 0);
	i = wait_report(i + 1, KUBE_PUBLISH_DONE);
	assert_int_equal(reps.all[i].generation, 2);
	assert_int_equal(generation_of("sim-node-6"), 2);
	assert_int_equal(apiserver_audit_count(api, mark, AGENT, "list", "resourceslices"), 1);
	kube_publisher_stop(p);
	kube_client_free(client);

	apiserver_restart(api, NULL);
	mark = apiserver_audit_mark(api);
	before = publish_reports_count(&reps);
	p = publish_node("sim-node-6", 0, 2, &client, &i);
	assert_int_equal(apiserver_audit_count(api, mark, AGENT, "list", "resourceslices"), 0);
	assert_int_equal(apiserver_audit_count(api, mark, AGENT, "get", "nodes"), 0);
	assert_int_equal(apiserver_audit_count(api, mark, AGENT, "create", "resourceslices"), 0);
	assert_int_equal(apiserver_audit_count(api, mark, AGENT, "update", "resourceslices"), 0);
	kube_publisher_stop(p);
	kube_client_free(client);
}

/* Whether any device of sim-node-4's slices has the member at path, or
 * any slice spec.sharedCounters (path NULL); the device names in names. */
static bool old_node_has(const char *path, char *names, size_t size)
{
	json_object *list = apiserver_kubectl_json(api, "get resourceslices --field-selector spec.nodeName=sim-node-4");
	json_object *items = json_at(list, "items");
	bool found = false;
	size_t used = 0;
	names[0] = '\0';
	for (size_t i = 0; i < json_object_array_length(items); i++) {
		json_object *slice = json_object_array_get_idx(items, i), *devices = json_at(slice, "spec.devices");
		found |= !path && json_at(slice, "spec.sharedCounters");
		for (size_t k = 0; devices && k < json_object_array_length(devices); k++) {
			json_object *d = json_object_array_get_idx(devices, k);
			found |= path && json_at(d, path);
			int n = snprintf(names + used, size - used, "%s%s", used ? " " : "", json_str_at(d, "name"));
			used += n > 0 && (size_t)n < size - used ? (size_t)n : 0;
		}
	}
	json_object_put(list);
	return found;
}

/* The report of the fields found lacking from index after on, by probe
 * or by write; -1 when there is none before index end. */
static int lacking_found(size_t after, size_t end, bool by_write)
{
	for (size_t k = after; k < end; k++)
		if (reps.all[k].event == KUBE_PUBLISH_LACKS && reps.all[k].by_write == by_write)
			return (int)reps.all[k].lacking;
	return -1;
}

/* chips 0-3, chip 0 carved into two vNPUs, chip 1 time-sliced by 4, chip
 * <unhealthy> Unhealthy (-1: none). */
static void offer_mixed(struct kube_publisher *p, int unhealthy)
{
	struct npu_snapshot *c = chips(unhealthy);
	c->count = 4;
	struct npu_snapshot *s = carve_snapshot(c, 1, 2, "vir10_3c_16g");
	npu_snapshot_unref(c);
	assert_non_null(s);
	struct kube_device_facts facts[6] = { { .hbm_bytes = 64ull << 30 }, { .hbm_bytes = 64ull << 30, .shares = 4 },
					      { .hbm_bytes = 64ull << 30 }, { .hbm_bytes = 64ull << 30 } };
	assert_int_equal(kube_publisher_offer(p, s, facts), 0);
	npu_snapshot_unref(s);
}

/* The gates of taints, counters and shared capacity off, as 1.34 and 1.35
 * have them (the server would store the slices without those fields and
 * say nothing): the probe finds all three off before the first write, and
 * the slices carry none of them: the Unhealthy chip, the carved chip and
 * its vNPUs are left out, the time-sliced chip is plain. With the gates
 * back on, a new publisher publishes everything; when they go off again
 * while it runs (a control plane rolled back), the answer to its next
 * write tells, and the chip that failed is taken out at once. Last: it
 * leaves the server with its default gates. */
static void test_old_gates(void **state)
{
	(void)state;
	static const char node_yaml[] = "apiVersion: v1\nkind: Node\nmetadata:\n  name: sim-node-4\n";
	assert_int_equal(apiserver_kubectl(api, node_yaml, "apply -f -"), 0);
	apiserver_restart(api, APISERVER_OLD_DRA_GATES);
	struct kube_client *client = client_of_kubeconfig();
	const struct kube_publisher_options o = {
		.client = client,
		.node_name = "sim-node-4",
		.backoff_initial_ms = 100,
		.backoff_max_ms = 1000,
		.resync_ms = 3600000,
		.report = publish_reports_add,
		.report_ctx = &reps,
	};
	struct kube_publisher *p = NULL;
	size_t before = publish_reports_count(&reps);
	assert_int_equal(kube_publisher_start(&o, &p), 0);
	offer_mixed(p, 2);
	size_t i = wait_report(before, KUBE_PUBLISH_DONE);
	assert_int_equal(lacking_found(before, i, false), KUBE_LACKS_ALL);
	assert_int_equal(reps.all[i].slices, 1);
	assert_int_equal(reps.all[i].devices, 2);
	char names[256];
	assert_false(old_node_has("taints", names, sizeof(names)));
	assert_string_equal(names, "npu-1 npu-3");
	assert_false(old_node_has(NULL, names, sizeof(names)));
	assert_false(old_node_has("consumesCounters", names, sizeof(names)));
	assert_false(old_node_has("allowMultipleAllocations", names, sizeof(names)));
	assert_false(old_node_has("capacity.shares", names, sizeof(names)));
	assert_false(old_node_has("capacity.memory.requestPolicy", names, sizeof(names)));
	kube_publisher_stop(p);

	/* Default gates: everything, nothing found lacking. */
	apiserver_restart(api, NULL);
	before = publish_reports_count(&reps);
	assert_int_equal(kube_publisher_start(&o, &p), 0);
	offer_mixed(p, -1);
	i = wait_report(before, KUBE_PUBLISH_DONE);
	assert_int_equal(lacking_found(before, i, false), -1);
	assert_int_equal(reps.all[i].slices, 2);
	assert_true(old_node_has(NULL, names, sizeof(names)));
	assert_string_equal(names, "npu-1 npu-2 npu-3 vnpu-100 vnpu-101");
	assert_true(old_node_has("allowMultipleAllocations", names, sizeof(names)));

	/* Off again under the running publisher; a chip fails. The server
	 * keeps what the stored slice used already (counters, sharing) and
	 * drops the new taint. */
	apiserver_restart(api, APISERVER_OLD_DRA_GATES);
	before = publish_reports_count(&reps);
	offer_mixed(p, 3);
	i = wait_report(before, KUBE_PUBLISH_DONE);
	assert_int_equal(lacking_found(before, i, true), KUBE_LACKS_TAINTS);
	assert_false(old_node_has("taints", names, sizeof(names)));
	assert_string_equal(names, "npu-1 npu-2 vnpu-100 vnpu-101");
	kube_publisher_stop(p);
	kube_client_free(client);
	apiserver_restart(api, NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_publish_to_kube_apiserver),
		cmocka_unit_test(test_partitions_and_sharing),
		cmocka_unit_test(test_two_instances_one_pool),
		cmocka_unit_test(test_watch_puts_back),
		cmocka_unit_test(test_watch_gone_after_restart),
		cmocka_unit_test(test_no_streamed_lists),
		cmocka_unit_test(test_old_gates),
	};
	publish_reports_init(&reps);
	int failed = cmocka_run_group_tests(tests, apiserver_group_setup, apiserver_group_teardown);
	publish_reports_fini(&reps);
	return failed;
}
