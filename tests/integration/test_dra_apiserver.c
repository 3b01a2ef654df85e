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
 *     slices say what happened meanwhile;
 *   - a restarted driver writes the spec of a prepared claim again, and
 *     keeps the specs when its checkpoint was garbled and set aside;
 *   - vNPUs and a time-sliced --config: the vNPUs in the slices as
 *     partitions, a vNPU's claim prepared with its node, a shared chip
 *     prepared for as many claims as its replicas;
 *   - a time-sliced chip whose device-share mode is off is published and
 *     prepared whole, said in the log and the metrics; enableDeviceShare
 *     switches its mode on, and it is shared;
 *   - an API server with the feature gates of taints, counters and shared
 *     capacity off (as Kubernetes 1.34 and 1.35 have them): the daemon says
 *     once per field what the server drops and what it does instead, and
 *     publishes only what the server keeps. */
#include <setjmp.h>
#include <signal.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "base/file.h"
#include "base/parse.h"
#include "dra_api.h"
#include "dra_health.pb-c.h"
#include "grpc/client.h"
#include "harness/dra.h"
#include "harness/apiserver.h"
#include "harness/harness.h"
#include "harness/http.h"

#define NODE_NAME "sim-node-1"

static struct apiserver *const api = &the_apiserver;

struct dra_node {
	struct node node;
	char kubelet_dir[96], registry[128], cdi_dir[96], config_path[160], config_flag[200];
	const char *more_flag; /* one more daemon flag, or NULL */
	struct proc *kubelet, *plugin;
};

/* The daemon stopped as a pod is (SIGTERM), and a clean exit. */
static void stop_plugin(struct dra_node *d)
{
	proc_kill(d->plugin, SIGTERM);
	assert_int_equal(proc_free(d->plugin), 0);
	d->plugin = d->node.plugin = NULL;
}

/* The daemon as the DRA driver of the node, up to the kubelet's
 * registration of it. */
static void start_plugin(struct dra_node *d)
{
	const char *const flags[] = { "--front-end", "dra", "--kubelet-dir", d->kubelet_dir, "--node-name", NODE_NAME,
				      "--cdi-dir", d->cdi_dir, "--kubeconfig", api->kubeconfig, "--health-interval",
				      "1h", d->config_flag, d->more_flag, NULL };
	d->plugin = node_start_plugin(&d->node, flags);
	assert_non_null(proc_expect(d->kubelet, "dra-registered socket=npu.ascend.com-reg.sock", WAIT_MS));
}

/* The --config file's text becomes config (the daemon reads it when it
 * starts). */
static void write_config(struct dra_node *d, const char *config)
{
	FILE *f = fopen(d->config_path, "we");
	assert_non_null(f);
	assert_true(fputs(config, f) >= 0);
	assert_int_equal(fclose(f), 0);
}

/* config: the --config file's text, or NULL for none; state: the DCMI
 * state to start from, or NULL for 8 healthy chips; files: more device
 * nodes under the root (NULL-terminated; NULL: none); more_flag: one more
 * daemon flag, or NULL. */
static void start_with(struct dra_node *d, const char *config, const char *state, const char *const files[],
		       const char *more_flag)
{
	node_init(&d->node, &(struct node_options){ .chips = 8 });
	if (state)
		node_write_state(&d->node, "%s", state);
	for (size_t i = 0; files && files[i]; i++)
		node_touch(&d->node, files[i]);
	d->more_flag = more_flag;
	snprintf(d->config_path, sizeof(d->config_path), "%s/config.yaml", d->node.root);
	snprintf(d->config_flag, sizeof(d->config_flag), "--health-interval=1h");
	if (config) {
		write_config(d, config);
		snprintf(d->config_flag, sizeof(d->config_flag), "--config=%s", d->config_path);
	}
	snprintf(d->kubelet_dir, sizeof(d->kubelet_dir), "%s/kubelet-root", d->node.root);
	snprintf(d->registry, sizeof(d->registry), "%s/plugins_registry", d->kubelet_dir);
	snprintf(d->cdi_dir, sizeof(d->cdi_dir), "%s/cdi", d->node.root);
	const char *const kflags[] = { "--dra-registry", d->registry, NULL };
	d->kubelet = node_start_kubelet_with(&d->node, kflags);
	start_plugin(d);
}

static void start(struct dra_node *d, const char *config, const char *state, const char *const files[])
{
	start_with(d, config, state, files, NULL);
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
	const char *line = expect_event(d->plugin, "slices.published", "node", NODE_NAME, "recovered", again ? "1" : "0",
					"slices", "1", "devices", "8");
	char g[32];
	uint64_t gen;
	assert_int_equal(parse_u64(event_field(line, "generation", g, sizeof(g)), 10, INT64_MAX, &gen), 0);
	return (int64_t)gen;
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

/* A claim for one device, allocated to device of this node as the
 * scheduler would; its uid in uid. */
static void make_claim(const char *name, const char *device, char *uid, size_t size)
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
		 "\"npu.ascend.com\",\"pool\":\"" NODE_NAME "\",\"device\":\"%s\"}]}}}}'",
		 device);
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
static void prepare(struct dra_node *d, const char *name, const char *uid, const char *device)
{
	char cmd[256], want[256];
	snprintf(cmd, sizeof(cmd), "dra-prepare default %s %s", name, uid);
	proc_send(d->kubelet, cmd);
	snprintf(want, sizeof(want), "dra-prepared uid=%s devices=%s cdi=npu.ascend.com/claim=%s-0-%s,npu.ascend.com/claim=%s",
		 uid, device, uid, device, uid);
	assert_non_null(proc_expect(d->kubelet, want, WAIT_MS));
}

static char *read_spec(const char *path)
{
	char *spec = NULL;
	size_t len = 0;
	FILE *f = fopen(path, "r");
	assert_non_null(f);
	assert_true(getdelim(&spec, &len, '\0', f) > 0);
	fclose(f);
	return spec;
}

static void test_dra_against_kube_apiserver(void **state)
{
	(void)state;
	assert_int_equal(apiserver_kubectl(api, "apiVersion: v1\nkind: Node\nmetadata:\n  name: " NODE_NAME "\n",
					   "apply -f -"),
			 0);
	struct dra_node d;
	start(&d, NULL, NULL, NULL);

	/* (a) The slices, with every chip's HBM. */
	int64_t gen = 0;
	await_slices(&d, false, &gen, -1, NULL);

	/* (b) A claim allocated npu-2: prepared with the chip's device node and
	 * id in its CDI spec; unprepared, the spec is gone. */
	char uid[64], path[256];
	make_claim("c1", "npu-2", uid, sizeof(uid));
	prepare(&d, "c1", uid, "npu-2");
	spec_path(&d, uid, path, sizeof(path));
	char *spec = read_spec(path);
	assert_non_null(strstr(spec, "/dev/davinci2\""));
	assert_non_null(strstr(spec, "\"ASCEND_VISIBLE_DEVICES=2\""));
	assert_null(strstr(spec, "/dev/davinci3\""));
	/* The result's own CDI device, the first id the kubelet got for it. */
	char part[128];
	snprintf(part, sizeof(part), "\"name\": \"%s-0-npu-2\"", uid);
	assert_non_null(strstr(spec, part));
	/* The live status file: the claim's directory, mounted under the
	 * claim's name. */
	assert_non_null(strstr(spec, "\"ASCEND_RT_VISIBLE_DEVICES=0\""));
	assert_non_null(strstr(spec, "\"ASCEND_NPU_STATUS=/var/run/ascend/npu-status/c1/status.json\""));
	char status_dir[PATH_MAX], mount[PATH_MAX + 128];
	snprintf(status_dir, sizeof(status_dir), "%s/npu-status/claim-%s", d.node.state_dir, uid);
	snprintf(mount, sizeof(mount), "\"%s\"", status_dir);
	assert_non_null(strstr(spec, mount));
	assert_non_null(strstr(spec, "\"/var/run/ascend/npu-status/c1\""));
	/* Device metadata (KEP-5304): the request's file, where the container
	 * derives it from the claim's name. */
	char metadata[PATH_MAX + 32];
	snprintf(metadata, sizeof(metadata), "\"%s/metadata-npu.json\"", status_dir);
	assert_non_null(strstr(spec, metadata));
	assert_non_null(strstr(
		spec, "\"/var/run/kubernetes.io/dra-device-attributes/resourceclaims/c1/npu/npu.ascend.com-metadata.json\""));
	char *text = wait_file_text(status_dir, "metadata-npu.json", "metadata.resource.k8s.io/v1alpha1", WAIT_MS);
	char want_meta[256];
	snprintf(want_meta, sizeof(want_meta), "\"metadata\":{\"name\":\"c1\",\"namespace\":\"default\",\"uid\":\"%s\",", uid);
	assert_non_null(strstr(text, want_meta));
	assert_non_null(strstr(text, "\"requests\":[{\"name\":\"npu\",\"devices\":[{\"driver\":\"npu.ascend.com\",\"pool\":\"" NODE_NAME
				     "\",\"name\":\"npu-2\",\"attributes\":{\"type\":{\"string\":\"chip\"},\"family\":{\"string\":\"910B\"},"
				     "\"physicalID\":{\"int\":2},"));
	assert_non_null(strstr(text, "\"containerLogicalID\":{\"int\":0}"));
	assert_non_null(strstr(text, "{\"kind\":\"DeviceMetadata\",\"apiVersion\":\"metadata.resource.k8s.io/v1beta1\","));
	free(text);
	free(spec);
	free(wait_file_text(status_dir, "status.json", "\"chips\":[{\"device\":\"npu-2\",\"logical_id\":0,", WAIT_MS));
	char cmd[256];
	snprintf(cmd, sizeof(cmd), "dra-unprepare default c1 %s", uid);
	proc_send(d.kubelet, cmd);
	snprintf(cmd, sizeof(cmd), "dra-unprepared uid=%s", uid);
	assert_non_null(proc_expect(d.kubelet, cmd, WAIT_MS));
	assert_int_equal(access(path, F_OK), -1);
	assert_int_equal(access(status_dir, F_OK), -1);
	/* A claim the server does not have. */
	proc_send(d.kubelet, "dra-prepare default nope uid-nope");
	const char *line = proc_expect(d.kubelet, "dra-prepare-error uid=uid-nope", WAIT_MS);
	assert_non_null(line);
	assert_non_null(strstr(line, "cannot read ResourceClaim default/nope: no such claim (HTTP 404)"));

	/* (c) A chip fault taints its device, and the container of a claim on
	 * it reads the fault in the claim's live status file; recovery (after
	 * the policy's hold) removes the taint and says so in the file. */
	char uid5[64], status5[PATH_MAX];
	make_claim("c5", "npu-5", uid5, sizeof(uid5));
	prepare(&d, "c5", uid5, "npu-5");
	snprintf(status5, sizeof(status5), "%s/npu-status/claim-%s", d.node.state_dir, uid5);
	free(wait_file_text(status5, "status.json", "\"device\":\"npu-5\",\"logical_id\":0,\"phy_id\":5,\"family\":\"910B\","
				       "\"healthy\":true,\"level\":\"None\"",
			    WAIT_MS));
	node_write_health(&d.node, 8, 5, 3);
	await_slices(&d, false, &gen, 5, "SeparateNPU");
	free(wait_file_text(status5, "status.json", "\"healthy\":false,\"level\":\"SeparateNPU\"", WAIT_MS));
	node_write_health(&d.node, 8, -1, 0);
	await_slices(&d, false, &gen, -1, NULL);
	free(wait_file_text(status5, "status.json", "\"healthy\":true,\"level\":\"None\"", WAIT_MS));
	snprintf(cmd, sizeof(cmd), "dra-unprepare default c5 %s", uid5);
	proc_send(d.kubelet, cmd);
	snprintf(cmd, sizeof(cmd), "dra-unprepared uid=%s", uid5);
	assert_non_null(proc_expect(d.kubelet, cmd, WAIT_MS));
	assert_int_equal(access(status5, F_OK), -1);

	/* (d) The API server goes: a claim prepared before is answered from
	 * the checkpoint, a fault meanwhile is reported once as a failure to
	 * publish, and once the server is back the slices say so. */
	prepare(&d, "c1", uid, "npu-2");
	apiserver_stop(api);
	prepare(&d, "c1", uid, "npu-2");
	node_write_health(&d.node, 8, 6, 3);
	expect_event(d.plugin, "slices.publish-failed", "node", NODE_NAME);
	prepare(&d, "c1", uid, "npu-2");
	apiserver_start(api);
	await_slices(&d, true, &gen, 6, "SeparateNPU");
	/* Each cause once however many retries (a starting server may add one
	 * of its own, such as a 503). */
	assert_true(count_events(d.plugin, "slices.publish-failed") <= 2);

	/* (e) The driver restarted, its prepared claim's spec gone meanwhile
	 * (a running kubelet would not prepare the claim again): the spec is
	 * back from the checkpoint before any call. */
	stop_plugin(&d);
	assert_int_equal(unlink(path), 0);
	start_plugin(&d);
	expect_event(d.plugin, "dra.checkpoint-restored", "claims", "1");
	spec = read_spec(path);
	assert_non_null(strstr(spec, "\"ASCEND_VISIBLE_DEVICES=2\""));
	free(spec);

	/* (f) The driver restarted with its checkpoint garbled: set aside, and
	 * the spec kept (no record says it is stale, and the kubelet will not
	 * prepare the claim again before its own restart). */
	stop_plugin(&d);
	char checkpoint[200];
	snprintf(checkpoint, sizeof(checkpoint), "%s/plugins/npu.ascend.com/checkpoint.json", d.kubelet_dir);
	FILE *cf = fopen(checkpoint, "we");
	assert_non_null(cf);
	fputs("{\"version\":1,\"cla", cf);
	assert_int_equal(fclose(cf), 0);
	start_plugin(&d);
	expect_event(d.plugin, "dra.checkpoint-kept");
	assert_int_equal(access(path, F_OK), 0);

	snprintf(cmd, sizeof(cmd), "dra-unprepare default c1 %s", uid);
	proc_send(d.kubelet, cmd);
	snprintf(cmd, sizeof(cmd), "dra-unprepared uid=%s", uid);
	assert_non_null(proc_expect(d.kubelet, cmd, WAIT_MS));
	assert_int_equal(access(path, F_OK), -1);
	node_fini(&d.node);
}

/* The device of that name in the node's slices, or NULL; *list holds them
 * (the caller puts it). */
static json_object *slice_device(json_object **list, const char *name)
{
	*list = apiserver_kubectl_json(api, "get resourceslices --field-selector spec.nodeName=" NODE_NAME);
	json_object *items = json_at(*list, "items");
	for (size_t i = 0; i < json_object_array_length(items); i++) {
		json_object *devices = json_at(json_object_array_get_idx(items, i), "spec.devices");
		for (size_t k = 0; devices && k < json_object_array_length(devices); k++)
			if (strcmp(json_str_at(json_object_array_get_idx(devices, k), "name"), name) == 0)
				return json_object_array_get_idx(devices, k);
	}
	return NULL;
}

/* kubelet-sim prepares the claim, which fails saying reason. */
static void prepare_fails(struct dra_node *d, const char *name, const char *uid, const char *reason)
{
	char cmd[256];
	snprintf(cmd, sizeof(cmd), "dra-prepare default %s %s", name, uid);
	proc_send(d->kubelet, cmd);
	snprintf(cmd, sizeof(cmd), "dra-prepare-error uid=%s", uid);
	const char *line = proc_expect(d->kubelet, cmd, WAIT_MS);
	assert_non_null(line);
	if (!strstr(line, reason))
		fail_msg("'%s' does not say '%s'", line, reason);
}

/* Chips 0-3, chip 0 carved into vNPUs 100 and 101 (vir10_3c_16g), chip 2
 * of health h (a string literal); and the default resource time-sliced by
 * 2. */
#define VNPUS_STATE(h)                                                                        \
	"driver 24.1.rc1\n"                                                                   \
	"chip phy=0 card=0 device=0 logic=0 name=910B3 health=0 aicore=20 hbm_mb=65536\n"     \
	"chip phy=1 card=1 device=0 logic=1 name=910B3 health=0 aicore=20 hbm_mb=65536\n"     \
	"chip phy=2 card=2 device=0 logic=2 name=910B3 health=" h " aicore=20 hbm_mb=65536\n" \
	"chip phy=3 card=3 device=0 logic=3 name=910B3 health=0 aicore=20 hbm_mb=65536\n"     \
	"vnpu id=100 phy=0 template=vir10_3c_16g\n"                                           \
	"vnpu id=101 phy=0 template=vir10_3c_16g\n"
static const char time_sliced_config[] = "version: v1\n"
					 "sharing:\n"
					 "  timeSlicing:\n"
					 "    resources:\n"
					 "    - name: ascend.com/npu\n"
					 "      replicas: 2\n";

/* A node of VNPUS_STATE with time_sliced_config. */
static void start_vnpus(struct dra_node *d, const char *dcmi_state)
{
	start(d, time_sliced_config, dcmi_state, (const char *const[]){ "dev/vdavinci100", "dev/vdavinci101", NULL });
}

/* VNPUS_STATE, all chips healthy, and time_sliced_config: the daemon's own
 * wiring of vNPUs and time-slicing, from the inventory and the --config
 * file to the slices and to prepare. */
static void test_vnpus_and_time_slicing(void **state)
{
	(void)state;
	struct dra_node d;
	start_vnpus(&d, VNPUS_STATE("0"));

	/* The slices: chips 1-3 shared by 2, the vNPUs consuming from chip
	 * 0's counter set in a slice of its own, chip 0 withheld. */
	json_object *list = NULL, *dev = NULL;
	for (int i = 0; i < 8 && !(dev && json_at(dev, "consumesCounters")); i++) {
		json_object_put(list);
		list = NULL;
		expect_event(d.plugin, "slices.published", "node", NODE_NAME);
		dev = slice_device(&list, "vnpu-100");
	}
	assert_non_null(dev);
	assert_string_equal(json_str_at(dev, "attributes.template.string"), "vir10_3c_16g");
	assert_string_equal(json_str_at(dev, "consumesCounters.0.counterSet"), "npu-0");
	assert_string_equal(json_str_at(dev, "consumesCounters.0.counters.aicores.value"), "10");
	json_object_put(list);
	assert_null(slice_device(&list, "npu-0"));
	json_object_put(list);
	dev = slice_device(&list, "npu-1");
	assert_non_null(dev);
	assert_true(json_object_get_boolean(json_at(dev, "allowMultipleAllocations")));
	assert_string_equal(json_str_at(dev, "capacity.shares.value"), "2");
	json_object_put(list);

	/* A vNPU's claim: its node as /dev/davinci<id>, the runtime told. */
	char uid[64], path[256];
	make_claim("v1", "vnpu-100", uid, sizeof(uid));
	prepare(&d, "v1", uid, "vnpu-100");
	spec_path(&d, uid, path, sizeof(path));
	char *spec = read_spec(path);
	assert_non_null(strstr(spec, "\"hostPath\": \"/dev/vdavinci100\""));
	assert_non_null(strstr(spec, "\"path\": \"/dev/davinci100\""));
	assert_non_null(strstr(spec, "\"ASCEND_VISIBLE_DEVICES=100\""));
	assert_non_null(strstr(spec, "\"ASCEND_RUNTIME_OPTIONS=VIRTUAL\""));
	free(spec);
	make_claim("v2", "npu-0", uid, sizeof(uid));
	prepare_fails(&d, "v2", uid, "device npu-0 is carved into 2 vNPUs");

	/* Chip 1 for two claims, not for a third. */
	make_claim("s1", "npu-1", uid, sizeof(uid));
	prepare(&d, "s1", uid, "npu-1");
	make_claim("s2", "npu-1", uid, sizeof(uid));
	prepare(&d, "s2", uid, "npu-1");
	make_claim("s3", "npu-1", uid, sizeof(uid));
	prepare_fails(&d, "s3", uid, "device npu-1 is prepared for 2 claims already");
	/* The server keeps every field: nothing said of it. */
	assert_int_equal(count_events(d.plugin, "slices.fields-dropped"), 0);
	node_fini(&d.node);
}

/* Chips 0 and 1 of which chip 1 has its device-share mode off, as chips
 * ship. */
#define SHARE_OFF_STATE                                                                   \
	"driver 24.1.rc1\n"                                                               \
	"chip phy=0 card=0 device=0 logic=0 name=910B3 health=0 aicore=20 hbm_mb=65536\n" \
	"chip phy=1 card=1 device=0 logic=1 name=910B3 health=0 aicore=20 hbm_mb=65536\n" \
	"share phy=1 mode=off\n"

#define SHARE_SERIES(phy) "ascend_npu_device_share{id=\"npu-" #phy "\",phy=\"" #phy "\",chip=\"910B3\"}"

/* Waits for publications until device name is in the slices shared by
 * shares ("2"), or whole (NULL: neither allowMultipleAllocations nor the
 * shares capacity). */
static void await_shares(struct dra_node *d, const char *name, const char *shares)
{
	char last[2048] = "(not published)";
	for (int i = 0; i < 4 && wait_event(d->plugin, WAIT_MS, "slices.published", "node", NODE_NAME); i++) {
		json_object *list = NULL;
		json_object *dev = slice_device(&list, name);
		bool as_said = false;
		if (dev) {
			const char *q = json_str_at(dev, "capacity.shares.value");
			json_object *multi = json_at(dev, "allowMultipleAllocations");
			as_said = shares ? q && strcmp(q, shares) == 0 && multi && json_object_get_boolean(multi)
					 : !q && !multi;
			snprintf(last, sizeof(last), "%s", json_object_to_json_string(dev));
		}
		json_object_put(list);
		if (as_said)
			return;
	}
	fail_msg("%s was never published %s%s: last %s", name, shares ? "shared by " : "whole", shares ? shares : "",
		 last);
}

/* The value of series on the daemon's /metrics. */
static double scrape_metric(uint16_t port, const char *series)
{
	struct http_response resp;
	http_call(port, "GET", "/metrics", &resp);
	assert_int_equal(resp.status, 200);
	double v = http_metric(resp.body, series);
	http_response_clear(&resp);
	return v;
}

/* SHARE_OFF_STATE with time_sliced_config: the DRA driver serves chip 1
 * whole, as the device plugin would (tests/integration/test_time_slicing.c):
 * published without shares, prepared for one claim, said in the log and
 * the metrics, while chip 0 is shared. Restarted with enableDeviceShare,
 * the daemon switches chip 1's mode on (the simulator keeps it) and
 * publishes and prepares it shared. */
static void test_device_share_off(void **state)
{
	(void)state;
	struct dra_node d;
	start_with(&d, time_sliced_config, SHARE_OFF_STATE, NULL, "--metrics-addr=127.0.0.1:0");
	expect_event(d.plugin, "device-share.off", "device", "npu-1", "phy", "1", "card", "1", "chip", "0");
	uint16_t port = http_plugin_port(d.plugin);
	await_shares(&d, "npu-1", NULL);
	json_object *list = NULL, *dev = slice_device(&list, "npu-0");
	assert_non_null(dev);
	assert_true(json_object_get_boolean(json_at(dev, "allowMultipleAllocations")));
	assert_string_equal(json_str_at(dev, "capacity.shares.value"), "2");
	json_object_put(list);
	assert_true(scrape_metric(port, SHARE_SERIES(0)) == 1);
	assert_true(scrape_metric(port, SHARE_SERIES(1)) == 0);
	char uid1[64], uid2[64];
	make_claim("whole1", "npu-1", uid1, sizeof(uid1));
	prepare(&d, "whole1", uid1, "npu-1");
	make_claim("whole2", "npu-1", uid2, sizeof(uid2));
	prepare_fails(&d, "whole2", uid2, "device npu-1 is prepared for claim default/whole1");
	assert_int_equal(count_events(d.plugin, "device-share.enabled"), 0);

	stop_plugin(&d);
	write_config(&d, "version: v1\n"
			 "sharing:\n"
			 "  timeSlicing:\n"
			 "    enableDeviceShare: true\n"
			 "    resources:\n"
			 "    - name: ascend.com/npu\n"
			 "      replicas: 2\n");
	start_plugin(&d);
	expect_event(d.plugin, "device-share.enabled", "device", "npu-1", "phy", "1");
	port = http_plugin_port(d.plugin);
	await_shares(&d, "npu-1", "2");
	assert_true(scrape_metric(port, SHARE_SERIES(1)) == 1);
	/* The driver keeps the mode: the simulator's state says so. */
	char *text = NULL, why[256];
	size_t len = 0;
	assert_int_equal(file_read_bounded(d.node.state_file, 1 << 20, &text, &len, why, sizeof(why)), 0);
	assert_null(strstr(text, "share phy=1"));
	free(text);
	prepare(&d, "whole2", uid2, "npu-1");
	/* Chip 0, on already, is left alone; chip 1 is no longer whole. */
	assert_int_equal(count_events(d.plugin, "device-share.enabled"), 1);
	assert_int_equal(count_events(d.plugin, "device-share.off"), 0);
	node_fini(&d.node);
}

/* The simulator's state file holds a vnpu line with id (and template). */
static bool state_has_vnpu(struct dra_node *d, unsigned id, const char *template_name)
{
	char want[96];
	snprintf(want, sizeof(want), "vnpu id=%u phy=0 template=%s", id, template_name);
	char *text = read_spec(d->node.state_file);
	bool has = strstr(text, want) != NULL;
	free(text);
	return has;
}

static bool dev_node_exists(struct dra_node *d, unsigned id)
{
	char path[200];
	snprintf(path, sizeof(path), "%s/vdavinci%u", d->node.dev_dir, id);
	return access(path, F_OK) == 0;
}

/* Chip 0 of a 910B3 node carved on demand (--dra-dynamic-vnpus): its
 * placements published with counters; a claim of one is a vNPU created at
 * prepare (the simulator's state file and /dev/vdavinci<id> say so) and
 * destroyed at unprepare; a create DCMI refuses fails the claim naming the
 * chip, the template and the code, and leaves nothing; a driver killed
 * while DCMI creates leaves a record that the next prepare completes. */
static void test_dynamic_vnpus(void **state)
{
	(void)state;
	static const char dcmi_state[] = "driver 24.1.rc1\n"
					 "chip phy=0 card=0 device=0 logic=0 name=910B3 health=0 aicore=20 hbm_mb=65536\n"
					 "chip phy=1 card=1 device=0 logic=1 name=910B3 health=0 aicore=20 hbm_mb=65536\n";
	static const char config[] = "version: v1\n"
				     "flags:\n"
				     "  draDynamicVnpus: \"0\"\n";
	struct dra_node d;
	start(&d, config, dcmi_state, NULL);

	/* The slices: chip 0 whole and in placements, all consuming its
	 * counter set; chip 1 plain. */
	json_object *list = NULL, *dev = NULL;
	for (int i = 0; i < 8 && !dev; i++) {
		json_object_put(list);
		list = NULL;
		expect_event(d.plugin, "slices.published", "node", NODE_NAME);
		dev = slice_device(&list, "npu-0-vir05-1c-8g-0");
	}
	assert_non_null(dev);
	assert_true(json_object_get_boolean(json_at(dev, "attributes.dynamic.bool")));
	assert_string_equal(json_str_at(dev, "consumesCounters.0.counters.aicores.value"), "5");
	json_object_put(list);
	dev = slice_device(&list, "npu-0");
	assert_string_equal(json_str_at(dev, "consumesCounters.0.counters.aicores.value"), "20");
	json_object_put(list);
	assert_null(json_at(slice_device(&list, "npu-1"), "consumesCounters"));
	json_object_put(list);

	/* Prepared: vNPU 100 created, its node given as /dev/davinci100. */
	char uid[64], path[256];
	make_claim("d1", "npu-0-vir05-1c-8g-0", uid, sizeof(uid));
	prepare(&d, "d1", uid, "npu-0-vir05-1c-8g-0");
	expect_event(d.plugin, "dra.vnpu-created", "vnpu", "vnpu-100", "template", "vir05_1c_8g");
	assert_true(state_has_vnpu(&d, 100, "vir05_1c_8g"));
	assert_true(dev_node_exists(&d, 100));
	spec_path(&d, uid, path, sizeof(path));
	char *spec = read_spec(path);
	assert_non_null(strstr(spec, "\"hostPath\": \"/dev/vdavinci100\""));
	assert_non_null(strstr(spec, "\"ASCEND_VISIBLE_DEVICES=100\""));
	free(spec);
	/* The pod holding it hears its chip's health under the placement's
	 * name (the kubelet's health stream). */
	char dra_socket[200];
	snprintf(dra_socket, sizeof(dra_socket), "%s/plugins/npu.ascend.com/dra.sock", d.kubelet_dir);
	struct gc_channel *ch;
	struct gc_stream *st;
	assert_int_equal(gc_channel_open(dra_socket, &ch), 0);
	assert_int_equal(gc_stream_open(ch, DRA_METHOD_HEALTH_V1_WATCH, NULL, 0, &st), 0);
	V1__NodeWatchResourcesResponse *health = dra_health_next(st, now_ms() + WAIT_MS);
	bool heard = false;
	for (size_t i = 0; i < health->n_devices; i++)
		heard |= strcmp(health->devices[i]->device->device_name, "npu-0-vir05-1c-8g-0") == 0 &&
			 health->devices[i]->health == V1__HEALTH_STATUS__HEALTHY;
	assert_true(heard);
	v1__node_watch_resources_response__free_unpacked(health, NULL);
	gc_stream_close(st);
	gc_channel_close(ch);
	/* A second placement gets the next id. */
	char uid2[64];
	make_claim("d2", "npu-0-vir10-3c-32g-0", uid2, sizeof(uid2));
	prepare(&d, "d2", uid2, "npu-0-vir10-3c-32g-0");
	assert_true(state_has_vnpu(&d, 101, "vir10_3c_32g"));

	/* Unprepared: the vNPU destroyed, then the record dropped. */
	char cmd[256];
	snprintf(cmd, sizeof(cmd), "dra-unprepare default d1 %s", uid);
	proc_send(d.kubelet, cmd);
	snprintf(cmd, sizeof(cmd), "dra-unprepared uid=%s", uid);
	assert_non_null(proc_expect(d.kubelet, cmd, WAIT_MS));
	assert_false(state_has_vnpu(&d, 100, "vir05_1c_8g"));
	assert_false(dev_node_exists(&d, 100));
	assert_true(access(path, F_OK) < 0);

	/* DCMI refuses the create (no room): the claim fails saying so, and
	 * neither a vNPU nor a record is left. */
	node_write_state(&d.node, "%s",
			 "driver 24.1.rc1\n"
			 "chip phy=0 card=0 device=0 logic=0 name=910B3 health=0 aicore=20 hbm_mb=65536 "
			 "fail=create_vdevice:-8020\n"
			 "chip phy=1 card=1 device=0 logic=1 name=910B3 health=0 aicore=20 hbm_mb=65536\n"
			 "vnpu id=101 phy=0 template=vir10_3c_32g\n");
	make_claim("d3", "npu-0-vir05-1c-8g-1", uid, sizeof(uid));
	prepare_fails(&d, "d3", uid, "dcmi_create_vdevice for vNPU 100 (vir05_1c_8g) on chip npu-0 failed with DCMI "
				     "code -8020");
	assert_false(state_has_vnpu(&d, 100, "vir05_1c_8g"));
	char checkpoint[256];
	snprintf(checkpoint, sizeof(checkpoint), "%s/plugins/npu.ascend.com/checkpoint.json", d.kubelet_dir);
	char *record = read_spec(checkpoint);
	assert_null(strstr(record, uid));
	assert_non_null(strstr(record, "\"vnpu\":{\"id\":101,\"created\":true}"));
	free(record);

	/* DCMI takes longer than the prepare may (7 s of its 5): the claim
	 * fails, its record stays, and the kubelet's next prepare finds the
	 * vNPU DCMI finished meanwhile instead of making a second one. */
	node_write_state(&d.node, "%s",
			 "driver 24.1.rc1\n"
			 "chip phy=0 card=0 device=0 logic=0 name=910B3 health=0 aicore=20 hbm_mb=65536 "
			 "hang_ms=create_vdevice:7000\n"
			 "chip phy=1 card=1 device=0 logic=1 name=910B3 health=0 aicore=20 hbm_mb=65536\n"
			 "vnpu id=101 phy=0 template=vir10_3c_32g\n");
	make_claim("d4", "npu-0-vir05-1c-8g-2", uid, sizeof(uid));
	prepare_fails(&d, "d4", uid, "did not return");
	record = read_spec(checkpoint);
	assert_non_null(strstr(record, uid));
	assert_non_null(strstr(record, "\"vnpu\":{\"id\":100,\"created\":false}"));
	free(record);
	prepare(&d, "d4", uid, "npu-0-vir05-1c-8g-2");
	char *text = read_spec(d.node.state_file);
	const char *first = strstr(text, "vnpu id=100 ");
	assert_non_null(first);
	assert_null(strstr(first + 1, "vnpu id=100 "));
	free(text);
	snprintf(cmd, sizeof(cmd), "dra-unprepare default d4 %s", uid);
	proc_send(d.kubelet, cmd);
	snprintf(cmd, sizeof(cmd), "dra-unprepared uid=%s", uid);
	assert_non_null(proc_expect(d.kubelet, cmd, WAIT_MS));
	assert_false(state_has_vnpu(&d, 100, "vir05_1c_8g"));
	node_fini(&d.node);
}

/* The daemon killed as a crash would (no cleanup at all). */
static void kill_plugin(struct dra_node *d)
{
	proc_kill(d->plugin, SIGKILL);
	(void)proc_free(d->plugin);
	d->plugin = d->node.plugin = NULL;
}

static char *read_checkpoint(struct dra_node *d)
{
	char path[256];
	snprintf(path, sizeof(path), "%s/plugins/npu.ascend.com/checkpoint.json", d->kubelet_dir);
	return read_spec(path);
}

/* Crashes around DCMI's calls: killed while DCMI creates the vNPU (the
 * record names it, not created), the next prepare creates it; killed after
 * DCMI made it but before the record said so (written as such a crash
 * leaves it), the restarted driver adopts it and the prepare creates
 * nothing; killed while DCMI destroys it, the next unprepare completes.
 * A vNPU an administrator made keeps its chip static. */
static void test_dynamic_vnpu_crashes(void **state)
{
	(void)state;
	static const char chips[] = "driver 24.1.rc1\n"
				    "chip phy=0 card=0 device=0 logic=0 name=910B3 health=0 aicore=20 hbm_mb=65536%s\n"
				    "chip phy=1 card=1 device=0 logic=1 name=910B3 health=0 aicore=20 hbm_mb=65536\n%s";
	static const char config[] = "version: v1\nflags:\n  draDynamicVnpus: 0-1\n";
	struct dra_node d;
	char text[1024], uid[64], cmd[256];
	snprintf(text, sizeof(text), chips, " hang_ms=create_vdevice:4000", "");
	start(&d, config, text, NULL);

	/* (a) Killed while DCMI creates: the record names vNPU 100, not created. */
	make_claim("k1", "npu-0-vir05-1c-8g-0", uid, sizeof(uid));
	snprintf(cmd, sizeof(cmd), "dra-prepare default k1 %s", uid);
	proc_send(d.kubelet, cmd);
	/* The record is written before DCMI is called. */
	expect_event(d.plugin, "dra.vnpu-call", "op", "create", "vnpu", "vnpu-100");
	char *record = read_checkpoint(&d);
	assert_non_null(strstr(record, "\"vnpu\":{\"id\":100,\"created\":false}"));
	free(record);
	kill_plugin(&d);
	assert_false(state_has_vnpu(&d, 100, "vir05_1c_8g"));
	snprintf(text, sizeof(text), chips, "", "");
	node_write_state(&d.node, "%s", text);
	start_plugin(&d);
	prepare(&d, "k1", uid, "npu-0-vir05-1c-8g-0");
	assert_true(state_has_vnpu(&d, 100, "vir05_1c_8g"));

	/* (b) DCMI made vNPU 116 on chip 1, the record was not told: adopted
	 * at the start, answered without a second create. */
	stop_plugin(&d);
	char uid2[64];
	make_claim("k2", "npu-1-vir10-3c-32g-0", uid2, sizeof(uid2));
	record = read_checkpoint(&d);
	char *end = strrchr(record, ']');
	assert_non_null(end);
	char edited[4096];
	snprintf(edited, sizeof(edited),
		 "%.*s,{\"uid\":\"%s\",\"namespace\":\"default\",\"name\":\"k2\",\"devices\":[{\"request\":\"npu\","
		 "\"pool\":\"" NODE_NAME "\",\"device\":\"npu-1-vir10-3c-32g-0\",\"vnpu\":{\"id\":116,\"created\":false}}]}]}\n",
		 (int)(end - record), record, uid2);
	free(record);
	char path[256];
	snprintf(path, sizeof(path), "%s/plugins/npu.ascend.com/checkpoint.json", d.kubelet_dir);
	FILE *f = fopen(path, "we");
	assert_non_null(f);
	assert_true(fputs(edited, f) >= 0);
	assert_int_equal(fclose(f), 0);
	snprintf(text, sizeof(text), chips, "", "vnpu id=100 phy=0 template=vir05_1c_8g\nvnpu id=116 phy=1 template=vir10_3c_32g\n");
	node_write_state(&d.node, "%s", text);
	start_plugin(&d);
	prepare(&d, "k2", uid2, "npu-1-vir10-3c-32g-0");
	record = read_checkpoint(&d);
	assert_non_null(strstr(record, "\"vnpu\":{\"id\":116,\"created\":true}"));
	free(record);
	assert_int_equal(proc_count_err(d.plugin, "dra.vnpu-created"), 0);

	/* (c) Killed while DCMI destroys: the record stays; the kubelet's
	 * next unprepare completes. */
	snprintf(text, sizeof(text), chips, " hang_ms=destroy_vdevice:4000",
		 "vnpu id=100 phy=0 template=vir05_1c_8g\nvnpu id=116 phy=1 template=vir10_3c_32g\n");
	node_write_state(&d.node, "%s", text);
	snprintf(cmd, sizeof(cmd), "dra-unprepare default k1 %s", uid);
	proc_send(d.kubelet, cmd);
	expect_event(d.plugin, "dra.vnpu-call", "op", "destroy", "vnpu", "vnpu-100");
	kill_plugin(&d);
	record = read_checkpoint(&d);
	assert_non_null(strstr(record, uid));
	free(record);
	snprintf(text, sizeof(text), chips, "", "vnpu id=100 phy=0 template=vir05_1c_8g\nvnpu id=116 phy=1 template=vir10_3c_32g\n");
	node_write_state(&d.node, "%s", text);
	start_plugin(&d);
	proc_send(d.kubelet, cmd);
	snprintf(cmd, sizeof(cmd), "dra-unprepared uid=%s", uid);
	assert_non_null(proc_expect(d.kubelet, cmd, WAIT_MS));
	assert_false(state_has_vnpu(&d, 100, "vir05_1c_8g"));
	record = read_checkpoint(&d);
	assert_null(strstr(record, uid));
	free(record);

	/* An administrator's vNPU 101 on chip 0: the chip serves it, not
	 * placements; the driver never touches it. */
	snprintf(text, sizeof(text), chips, "", "vnpu id=101 phy=0 template=vir10_3c_16g\nvnpu id=116 phy=1 template=vir10_3c_32g\n");
	node_write_state(&d.node, "%s", text);
	stop_plugin(&d);
	start_plugin(&d);
	char uid3[64];
	make_claim("k3", "npu-0-vir05-1c-8g-1", uid3, sizeof(uid3));
	prepare_fails(&d, "k3", uid3, "chip npu-0 carries vnpu-101, which the driver did not make");
	assert_true(state_has_vnpu(&d, 101, "vir10_3c_16g"));
	node_fini(&d.node);
}

/* Administrative access: the API server takes a claim that asks for it
 * only in a namespace labelled for it; such a claim is prepared on a chip a
 * workload holds, with the chip's nodes, and the workload's own prepare
 * never waits for it. */
static void test_admin_access(void **state)
{
	(void)state;
	struct dra_node d;
	start(&d, "version: v1\nflags:\n  draNoExecuteLevels: SeparateNPU,ManuallySeparateNPU\n", NULL, NULL);
	static const char claim[] = "apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nmetadata:\n  name: %s\n"
				    "  namespace: %s\nspec:\n  devices:\n    requests:\n    - name: npu\n      exactly:\n"
				    "        deviceClassName: npu.ascend.com\n        adminAccess: true\n";
	char yaml[512];
	snprintf(yaml, sizeof(yaml), claim, "look", "default");
	char out[1024];
	assert_int_not_equal(apiserver_kubectl_output(api, yaml, out, sizeof(out), "apply -f -"), 0);
	if (!strstr(out, "resource.kubernetes.io/admin-access"))
		fail_msg("the refusal does not name the label: %s", out);
	assert_int_equal(apiserver_kubectl(api, "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: monitoring\n"
					   "  labels:\n    resource.kubernetes.io/admin-access: \"true\"\n",
					   "apply -f -"),
			 0);
	snprintf(yaml, sizeof(yaml), claim, "look", "monitoring");
	assert_int_equal(apiserver_kubectl(api, yaml, "apply -f -"), 0);
	assert_int_equal(apiserver_kubectl(api, NULL, "-n monitoring patch resourceclaim look --subresource=status "
							"--type=merge -p '{\"status\":{\"allocation\":{\"devices\":"
							"{\"results\":[{\"request\":\"npu\",\"driver\":\"npu.ascend.com\","
							"\"pool\":\"" NODE_NAME "\",\"device\":\"npu-3\",\"adminAccess\":true}]}}}}'"),
			 0);
	json_object *c = apiserver_kubectl_json(api, "-n monitoring get resourceclaim look");
	char admin_uid[64];
	snprintf(admin_uid, sizeof(admin_uid), "%s", json_str_at(c, "metadata.uid"));
	json_object_put(c);

	/* The workload first, then the monitoring claim on its chip. */
	char uid[64], cmd[256], want[256], path[256];
	make_claim("work", "npu-3", uid, sizeof(uid));
	prepare(&d, "work", uid, "npu-3");
	snprintf(cmd, sizeof(cmd), "dra-prepare monitoring look %s", admin_uid);
	proc_send(d.kubelet, cmd);
	snprintf(want, sizeof(want), "dra-prepared uid=%s devices=npu-3", admin_uid);
	assert_non_null(proc_expect(d.kubelet, want, WAIT_MS));
	spec_path(&d, admin_uid, path, sizeof(path));
	char *spec = read_spec(path);
	assert_non_null(strstr(spec, "\"path\": \"/dev/davinci3\""));
	free(spec);
	/* The workload goes and comes back: the monitoring claim is in no one's way. */
	snprintf(cmd, sizeof(cmd), "dra-unprepare default work %s", uid);
	proc_send(d.kubelet, cmd);
	snprintf(want, sizeof(want), "dra-unprepared uid=%s", uid);
	assert_non_null(proc_expect(d.kubelet, want, WAIT_MS));
	assert_int_equal(apiserver_kubectl(api, NULL, "-n default delete resourceclaim work"), 0);
	make_claim("work", "npu-3", uid, sizeof(uid));
	prepare(&d, "work", uid, "npu-3");

	/* A level the operator chose for eviction: the chip's taint is
	 * NoExecute, and its value the level. */
	node_write_health(&d.node, 8, 4, 3);
	json_object *list = NULL, *dev = NULL;
	for (int i = 0; i < 8 && !(dev && json_at(dev, "taints")); i++) {
		json_object_put(list);
		list = NULL;
		expect_event(d.plugin, "slices.published", "node", NODE_NAME);
		dev = slice_device(&list, "npu-4");
	}
	assert_non_null(json_at(dev, "taints"));
	assert_string_equal(json_str_at(dev, "taints.0.effect"), "NoExecute");
	assert_string_equal(json_str_at(dev, "taints.0.value"), "SeparateNPU");
	json_object_put(list);
	node_fini(&d.node);
}

/* Waits (kubectl's watch) until claim's status names device. */
static void await_status(const char *claim, const char *device)
{
	assert_int_equal(apiserver_kubectl(api, NULL,
					   "-n default wait resourceclaim/%s --timeout=%ds "
					   "'--for=jsonpath={.status.devices[0].device}=%s'",
					   claim, WAIT_MS / 1000, device),
			 0);
}

/* Multi-node jobs: each chip's network identity in the slices, and in the
 * claim's status.devices once it is prepared (written by the driver after
 * the prepare answered: awaited here), as the API server stores them. */
static void test_network_identity(void **state)
{
	(void)state;
	static const char dcmi_state[] =
		"driver 24.1.rc1\n"
		"chip phy=0 card=0 name=910B3 aicore=20 hbm_mb=65536 ip=192.168.1.10/24 link=up\n"
		"chip phy=1 card=1 name=910B3 aicore=20 hbm_mb=65536 ip=192.168.1.11/24 link=down\n"
		"chip phy=2 card=2 name=910B3 aicore=20 hbm_mb=65536 ip=192.168.1.12/24 link=up\n"
		"chip phy=3 card=3 name=910B3 aicore=20 hbm_mb=65536\n";
	struct dra_node d;
	start(&d, NULL, dcmi_state, NULL);

	json_object *list = NULL, *dev = NULL;
	for (int i = 0; i < 8 && !(dev && json_at(dev, "attributes.roceIP")); i++) {
		json_object_put(list);
		list = NULL;
		assert_non_null(expect_event(d.plugin, "slices.published", "node", NODE_NAME));
		dev = slice_device(&list, "npu-1");
	}
	assert_non_null(dev);
	assert_string_equal(json_str_at(dev, "attributes.roceIP.string"), "192.168.1.11");
	assert_string_equal(json_str_at(dev, "attributes.roceLink.string"), "down");
	assert_false(json_object_get_boolean(json_at(dev, "attributes.roceLinkUp.bool")));
	json_object_put(list);
	dev = slice_device(&list, "npu-3");
	assert_null(json_at(dev, "attributes.roceIP"));
	assert_false(json_object_get_boolean(json_at(dev, "attributes.roceLinkUp.bool")));
	json_object_put(list);

	/* npu-2's claim: its status tells the chip's identity. */
	char uid[64];
	make_claim("n1", "npu-2", uid, sizeof(uid));
	prepare(&d, "n1", uid, "npu-2");
	await_status("n1", "npu-2");
	json_object *claim = apiserver_kubectl_json(api, "-n default get resourceclaim n1");
	json_object *st = json_at(claim, "status.devices.0");
	assert_non_null(st);
	assert_string_equal(json_str_at(st, "driver"), "npu.ascend.com");
	assert_string_equal(json_str_at(st, "pool"), NODE_NAME);
	assert_string_equal(json_str_at(st, "device"), "npu-2");
	assert_int_equal(json_object_get_int64(json_at(st, "data.device_id")), 2);
	assert_string_equal(json_str_at(st, "data.device_ip"), "192.168.1.12");
	assert_string_equal(json_str_at(st, "data.link"), "up");
	assert_string_equal(json_str_at(st, "data.family"), "910B");
	assert_string_equal(json_str_at(st, "networkData.ips.0"), "192.168.1.12/24");
	assert_null(json_at(claim, "status.devices.1"));
	json_object_put(claim);

	/* npu-3 has no identity: its claim's status stays empty (nothing is
	 * sent), which the next apply of another claim orders after. */
	make_claim("n2", "npu-3", uid, sizeof(uid));
	prepare(&d, "n2", uid, "npu-3");
	make_claim("n3", "npu-0", uid, sizeof(uid));
	prepare(&d, "n3", uid, "npu-0");
	await_status("n3", "npu-0");
	claim = apiserver_kubectl_json(api, "-n default get resourceclaim n3");
	assert_string_equal(json_str_at(claim, "status.devices.0.data.device_ip"), "192.168.1.10");
	json_object_put(claim);
	claim = apiserver_kubectl_json(api, "-n default get resourceclaim n2");
	assert_null(json_at(claim, "status.devices"));
	json_object_put(claim);
	node_fini(&d.node);
}

/* The line of the daemon's next event that the API server drops the
 * fields of gate, found by its probe; it says what the driver does. */
static void expect_dropped(struct dra_node *d, const char *gate, const char *instead)
{
	const char *line = expect_event(d->plugin, "slices.fields-dropped", "node", NODE_NAME, "gate", gate, "found",
					"probe");
	char msg[512];
	event_field(line, "msg", msg, sizeof(msg));
	if (!strstr(msg, instead))
		fail_msg("'%s' does not say '%s'", msg, instead);
}

/* VNPUS_STATE with chip 2 Unhealthy and time_sliced_config, against an API server with the feature gates of
 * taints, counters and shared capacity off (as 1.34 and 1.35 have them),
 * which would store the slices without those fields: the daemon says so
 * once per field, and publishes chips 1 and 3, plain. Last: it leaves the
 * server with its default gates. */
static void test_old_apiserver(void **state)
{
	(void)state;
	apiserver_restart(api, APISERVER_OLD_DRA_GATES);
	struct dra_node d;
	start_vnpus(&d, VNPUS_STATE("3"));
	expect_dropped(&d, "DRADeviceTaints",
		       "the API server drops device taints (feature gate DRADeviceTaints off): Unhealthy chips are left "
		       "out of the ResourceSlices instead");
	expect_dropped(&d, "DRAPartitionableDevices", "vNPUs are not published");
	expect_dropped(&d, "DRAConsumableCapacity", "time-sliced chips are published as plain chips");
	expect_event(d.plugin, "slices.published", "node", NODE_NAME, "slices", "1", "devices", "2");
	json_object *list = NULL;
	const char *const absent[] = { "npu-0", "npu-2", "vnpu-100", "vnpu-101" };
	for (size_t i = 0; i < sizeof(absent) / sizeof(absent[0]); i++) {
		assert_null(slice_device(&list, absent[i]));
		json_object_put(list);
	}
	json_object *dev = slice_device(&list, "npu-1");
	assert_non_null(dev);
	assert_null(json_at(dev, "allowMultipleAllocations"));
	assert_null(json_at(dev, "capacity.shares"));
	assert_null(json_at(dev, "taints"));
	json_object_put(list);
	assert_non_null(slice_device(&list, "npu-3"));
	json_object_put(list);
	/* Once each. */
	assert_int_equal(count_events(d.plugin, "slices.fields-dropped"), 3);
	node_fini(&d.node);
	apiserver_restart(api, NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_dra_against_kube_apiserver),
		cmocka_unit_test(test_vnpus_and_time_slicing),
		cmocka_unit_test(test_device_share_off),
		cmocka_unit_test(test_dynamic_vnpus),
		cmocka_unit_test(test_dynamic_vnpu_crashes),
		cmocka_unit_test(test_admin_access),
		cmocka_unit_test(test_network_identity),
		cmocka_unit_test(test_old_apiserver),
	};
	return cmocka_run_group_tests(tests, apiserver_group_setup, apiserver_group_teardown);
}
