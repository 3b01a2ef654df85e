/* SPDX-License-Identifier: Apache-2.0 */
/* The DRA front end end to end against the real kube-apiserver and etcd
 * (harness/apiserver.h; skipped, 77, where they were not built), with real
 * processes: the daemon with --front-end=dra --kubeconfig on a simulated
 * 8-chip 910B3 node (the DCMI simulator), kubelet-sim in its DRA mode.
 *   - the node's ResourceSlices appear, 8 devices with their HBM;
 *   - a ResourceClaim allocated as the scheduler would (its status written
 *     by an admin) is prepared: the CDI id names the claim's uid and the
 *     claim's CDI spec gives the chip's device node and
 *     ASCEND_VISIBLE_DEVICES; unprepare removes the spec; a claim the
 *     server does not have fails naming it and the 404;
 *   - a chip fault taints the chip's device, recovery removes the taint;
 *   - with the API server stopped a prepared claim is answered from the
 *     checkpoint and the failure is logged once; once it is back, the
 *     slices say what happened meanwhile. */
#include <setjmp.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "harness/apiserver.h"
#include "harness/harness.h"

#define NODE_NAME "sim-node-1"

static struct apiserver *const api = &the_apiserver;

struct dra_node {
	struct node node;
	char kubelet_dir[96], registry[128], cdi_dir[96];
	struct proc *kubelet, *plugin;
};

static void start(struct dra_node *d)
{
	node_init(&d->node, &(struct node_options){ .chips = 8 });
	snprintf(d->kubelet_dir, sizeof(d->kubelet_dir), "%s/kubelet-root", d->node.root);
	snprintf(d->registry, sizeof(d->registry), "%s/plugins_registry", d->kubelet_dir);
	snprintf(d->cdi_dir, sizeof(d->cdi_dir), "%s/cdi", d->node.root);
	const char *const kflags[] = { "--dra-registry", d->registry, NULL };
	d->kubelet = node_start_kubelet_with(&d->node, kflags);
	const char *const flags[] = { "--front-end", "dra", "--kubelet-dir", d->kubelet_dir, "--node-name", NODE_NAME,
				      "--cdi-dir", d->cdi_dir, "--kubeconfig", api->kubeconfig, "--health-interval",
				      "1h", NULL };
	d->plugin = node_start_plugin(&d->node, flags);
	assert_non_null(proc_expect(d->kubelet, "dra-registered socket=npu.ascend.com-reg.sock", WAIT_MS));
}

/* Whether the node's one slice is at generation with npu-<tainted> (none:
 * -1) alone carrying the unhealthy taint with reason; what differs goes to
 * diff. */
static bool slices_are(int64_t generation, int tainted, const char *reason, char *diff, size_t size)
{
	json_object *list = apiserver_kubectl_json(api, "get resourceslices");
	assert_int_equal(json_object_array_length(json_at(list, "items")), 1);
	json_object *s = json_at(list, "items.0");
	assert_string_equal(json_str_at(s, "metadata.name"), NODE_NAME "-npu.ascend.com-0");
	assert_string_equal(json_str_at(s, "metadata.ownerReferences.0.kind"), "Node");
	assert_string_equal(json_str_at(s, "spec.nodeName"), NODE_NAME);
	assert_string_equal(json_str_at(s, "spec.pool.name"), NODE_NAME);
	assert_int_equal(json_object_get_int64(json_at(s, "spec.pool.generation")), generation);
	json_object *devices = json_at(s, "spec.devices");
	assert_int_equal(json_object_array_length(devices), 8);
	bool same = true;
	for (size_t i = 0; i < 8 && same; i++) {
		json_object *dev = json_object_array_get_idx(devices, i);
		char name[16];
		snprintf(name, sizeof(name), "npu-%zu", i);
		assert_string_equal(json_str_at(dev, "name"), name);
		assert_string_equal(json_str_at(dev, "attributes.product.string"), "910B3");
		assert_int_equal(json_object_get_int64(json_at(dev, "attributes.physicalID.int")), (int64_t)i);
		assert_non_null(json_str_at(dev, "capacity.memory.value"));
		assert_non_null(json_str_at(dev, "capacity.aiCores.value"));
		const char *value = json_str_at(dev, "taints.0.value");
		same = (int)i == tainted ? value && strcmp(value, reason) == 0 &&
						   strcmp(json_str_at(dev, "taints.0.key"), "npu.ascend.com/unhealthy") == 0 &&
						   strcmp(json_str_at(dev, "taints.0.effect"), "NoSchedule") == 0
					 : !json_at(dev, "taints");
		if (!same)
			snprintf(diff, size, "generation %lld: %s", (long long)generation, json_object_to_json_string(dev));
	}
	json_object_put(list);
	return same;
}

/* The generation of the daemon's next "published ..." line (or "works
 * again" one, when again). */
static int64_t expect_published(struct dra_node *d, bool again)
{
	const char *line = proc_expect_err(d->plugin,
					    again ? "publishing ResourceSlices works again: node " NODE_NAME
						  : "published the ResourceSlices of node " NODE_NAME,
					    WAIT_MS);
	assert_non_null(line);
	const char *g = strstr(line, "generation ");
	assert_non_null(g);
	assert_non_null(strstr(line, "1 slices, 8 devices"));
	return strtoll(g + strlen("generation "), NULL, 10);
}

/* Waits for publications above *gen until the slices are as said (a fault
 * policy may pass through other reasons on the way, e.g. fault-policy while
 * a recovery is held); *gen becomes the one that is. */
static void await_slices(struct dra_node *d, bool again, int64_t *gen, int tainted, const char *reason)
{
	char diff[2048] = "";
	for (int i = 0; i < 4; i++) {
		int64_t next = expect_published(d, again && i == 0);
		assert_true(next > *gen);
		*gen = next;
		if (slices_are(next, tainted, reason, diff, sizeof(diff)))
			return;
	}
	fail_msg("the slices never had npu-%d tainted %s: last %s", tainted, reason ? reason : "(none)", diff);
}

/* A claim for one device, allocated to npu-<phy> of this node as the
 * scheduler would; its uid in uid. */
static void make_claim(const char *name, unsigned phy, char *uid, size_t size)
{
	char yaml[512], patch[512];
	snprintf(yaml, sizeof(yaml),
		 "apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nmetadata:\n  name: %s\n  namespace: default\n"
		 "spec:\n  devices:\n    requests:\n    - name: npu\n      exactly:\n        deviceClassName: "
		 "npu.ascend.com\n",
		 name);
	assert_int_equal(apiserver_kubectl(api, yaml, "apply -f -"), 0);
	snprintf(patch, sizeof(patch),
		 "'{\"status\":{\"allocation\":{\"devices\":{\"results\":[{\"request\":\"npu\",\"driver\":"
		 "\"npu.ascend.com\",\"pool\":\"" NODE_NAME "\",\"device\":\"npu-%u\"}]}}}}'",
		 phy);
	assert_int_equal(apiserver_kubectl(api, NULL, "-n default patch resourceclaim %s --subresource=status "
							"--type=merge -p %s",
					   name, patch),
			 0);
	char what[128];
	snprintf(what, sizeof(what), "-n default get resourceclaim %s", name);
	json_object *claim = apiserver_kubectl_json(api, what);
	snprintf(uid, size, "%s", json_str_at(claim, "metadata.uid"));
	json_object_put(claim);
}

static void spec_path(struct dra_node *d, const char *uid, char *buf, size_t size)
{
	snprintf(buf, size, "%s/npu.ascend.com-claim_%s.json", d->cdi_dir, uid);
}

/* kubelet-sim prepares the claim; the answer has its CDI id. */
static void prepare(struct dra_node *d, const char *name, const char *uid, unsigned phy)
{
	char cmd[256], want[256];
	snprintf(cmd, sizeof(cmd), "dra-prepare default %s %s", name, uid);
	proc_send(d->kubelet, cmd);
	snprintf(want, sizeof(want), "dra-prepared uid=%s devices=npu-%u cdi=npu.ascend.com/claim=%s", uid, phy, uid);
	assert_non_null(proc_expect(d->kubelet, want, WAIT_MS));
}

static void test_dra_against_kube_apiserver(void **state)
{
	(void)state;
	assert_int_equal(apiserver_kubectl(api, "apiVersion: v1\nkind: Node\nmetadata:\n  name: " NODE_NAME "\n",
					   "apply -f -"),
			 0);
	struct dra_node d;
	start(&d);

	/* (a) The slices, with every chip's HBM. */
	int64_t gen = 0;
	await_slices(&d, false, &gen, -1, NULL);

	/* (b) A claim allocated npu-2: prepared with the chip's device node and
	 * id in its CDI spec; unprepared, the spec is gone. */
	char uid[64], path[256];
	make_claim("c1", 2, uid, sizeof(uid));
	prepare(&d, "c1", uid, 2);
	spec_path(&d, uid, path, sizeof(path));
	char *spec = NULL;
	size_t len = 0;
	FILE *f = fopen(path, "r");
	assert_non_null(f);
	assert_true(getdelim(&spec, &len, '\0', f) > 0);
	fclose(f);
	assert_non_null(strstr(spec, "/dev/davinci2\""));
	assert_non_null(strstr(spec, "\"ASCEND_VISIBLE_DEVICES=2\""));
	assert_null(strstr(spec, "/dev/davinci3\""));
	free(spec);
	char cmd[256];
	snprintf(cmd, sizeof(cmd), "dra-unprepare default c1 %s", uid);
	proc_send(d.kubelet, cmd);
	snprintf(cmd, sizeof(cmd), "dra-unprepared uid=%s", uid);
	assert_non_null(proc_expect(d.kubelet, cmd, WAIT_MS));
	assert_int_equal(access(path, F_OK), -1);
	/* A claim the server does not have. */
	proc_send(d.kubelet, "dra-prepare default nope uid-nope");
	const char *line = proc_expect(d.kubelet, "dra-prepare-error uid=uid-nope", WAIT_MS);
	assert_non_null(line);
	assert_non_null(strstr(line, "cannot read ResourceClaim default/nope: no such claim (HTTP 404)"));

	/* (c) A chip fault taints its device; recovery (after the policy's
	 * hold) removes the taint. */
	node_write_health(&d.node, 8, 5, 3);
	await_slices(&d, false, &gen, 5, "health-critical");
	node_write_health(&d.node, 8, -1, 0);
	await_slices(&d, false, &gen, -1, NULL);

	/* (d) The API server goes: a claim prepared before is answered from
	 * the checkpoint, a fault meanwhile is reported once as a failure to
	 * publish, and once the server is back the slices say so. */
	prepare(&d, "c1", uid, 2);
	apiserver_stop(api);
	prepare(&d, "c1", uid, 2);
	node_write_health(&d.node, 8, 6, 3);
	assert_non_null(proc_expect_err(d.plugin, "cannot publish the ResourceSlices of node " NODE_NAME, WAIT_MS));
	prepare(&d, "c1", uid, 2);
	apiserver_start(api);
	await_slices(&d, true, &gen, 6, "health-critical");
	/* Each cause once however many retries (a starting server may add one
	 * of its own, such as a 503). */
	assert_true(proc_count_err(d.plugin, "cannot publish the ResourceSlices") <= 2);

	snprintf(cmd, sizeof(cmd), "dra-unprepare default c1 %s", uid);
	proc_send(d.kubelet, cmd);
	snprintf(cmd, sizeof(cmd), "dra-unprepared uid=%s", uid);
	assert_non_null(proc_expect(d.kubelet, cmd, WAIT_MS));
	node_fini(&d.node);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_dra_against_kube_apiserver),
	};
	return cmocka_run_group_tests(tests, apiserver_group_setup, apiserver_group_teardown);
}
