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
 * publisher puts the current truth there. Skipped (77) where the cluster's
 * binaries were not built. */
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>
#include <json-c/json.h>

#include "base/wait.h"
#include "kube/client.h"
#include "kube/publisher.h"

#define ROOT TEST_SOURCE_DIR "/.."
#define WAIT_MS 60000

static char bin_dir[512], dir[64], kubeconfig[128];
static uint16_t api_port, etcd_port, peer_port;

static uint16_t free_port(void)
{
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(a);
	assert_true(fd >= 0);
	assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	assert_int_equal(getsockname(fd, (struct sockaddr *)&a, &len), 0);
	close(fd);
	return ntohs(a.sin_port);
}

/* Runs cluster.sh's functions in bash with this control plane's settings. */
static int cluster(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int cluster(const char *fmt, ...)
{
	char script[1024], cmd[2048];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(script, sizeof(script), fmt, ap);
	va_end(ap);
	snprintf(cmd, sizeof(cmd),
		 "CLUSTER_HOST_NET=1 CLUSTER_DIR=%s CLUSTER_PORT=%u bash -c '. " ROOT
		 "/tests/cluster/cluster.sh && %s' >>%s/test.log 2>&1",
		 dir, api_port, script, dir);
	int status = system(cmd);
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static void start_apiserver(void)
{
	if (cluster("cluster_apiserver_start %s %u %u", bin_dir, api_port, etcd_port) != 0) {
		char cmd[256];
		snprintf(cmd, sizeof(cmd), "tail -n 30 %s/test.log %s/logs/kube-apiserver.log >&2", dir, dir);
		int shown = system(cmd);
		fail_msg("kube-apiserver did not start (logs %s)", shown == 0 ? "above" : "missing");
	}
}

/* kubectl's output of args, parsed as JSON. */
static json_object *kubectl_json(const char *args)
{
	char cmd[1024];
	snprintf(cmd, sizeof(cmd), "%s/kubectl --kubeconfig %s %s -o json 2>>%s/test.log", bin_dir, kubeconfig, args,
		 dir);
	FILE *f = popen(cmd, "r");
	assert_non_null(f);
	size_t cap = 1 << 20, len = 0;
	char *buf = malloc(cap);
	assert_non_null(buf);
	size_t n;
	while ((n = fread(buf + len, 1, cap - 1 - len, f)) > 0)
		len += n;
	buf[len] = '\0';
	assert_int_equal(pclose(f), 0);
	json_object *o = json_tokener_parse(buf);
	free(buf);
	assert_non_null(o);
	return o;
}

static json_object *at(json_object *o, const char *path)
{
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

static const char *str_at(json_object *o, const char *path)
{
	json_object *v = at(o, path);
	return v ? json_object_get_string(v) : NULL;
}

static int setup(void **state)
{
	(void)state;
	FILE *f = popen(ROOT "/scripts/cluster-bins.sh --dir 2>/dev/null", "r");
	if (!f || !fgets(bin_dir, sizeof(bin_dir), f))
		bin_dir[0] = '\0';
	if (f)
		pclose(f);
	bin_dir[strcspn(bin_dir, "\n")] = '\0';
	char probe[600];
	snprintf(probe, sizeof(probe), "%s/kube-apiserver", bin_dir);
	bool have = bin_dir[0] && access(probe, X_OK) == 0;
	snprintf(probe, sizeof(probe), "%s/etcd", bin_dir);
	have = have && access(probe, X_OK) == 0;
	if (!have || system("command -v openssl curl setsid >/dev/null") != 0) {
		printf("skip: the cluster's etcd and kube-apiserver are not built (make cluster-bins), or openssl, "
		       "curl or setsid is missing\n");
		exit(77);
	}
	snprintf(dir, sizeof(dir), "/tmp/kube-apiserver-XXXXXX");
	assert_non_null(mkdtemp(dir));
	snprintf(kubeconfig, sizeof(kubeconfig), "%s/kubeconfig", dir);
	api_port = free_port();
	etcd_port = free_port();
	peer_port = free_port();
	assert_int_equal(cluster("mkdir -p \"$CLUSTER_DIR\"/pids \"$CLUSTER_DIR\"/logs && _cl_pki && "
				 "cluster_etcd_start %s %u %u",
				 bin_dir, etcd_port, peer_port),
			 0);
	start_apiserver();
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	if (!dir[0])
		return 0;
	if (cluster("_cl_stop kube-apiserver; _cl_stop etcd") != 0)
		return -1;
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	return system(cmd) == 0 ? 0 : -1;
}

static struct reports {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	struct kube_publish_report all[64];
	size_t n;
} reps;

static void on_report(void *ctx, const struct kube_publish_report *r)
{
	(void)ctx;
	pthread_mutex_lock(&reps.lock);
	if (reps.n < 64)
		reps.all[reps.n++] = *r;
	pthread_cond_broadcast(&reps.cond);
	pthread_mutex_unlock(&reps.lock);
}

static size_t wait_report(size_t after, enum kube_publish_event event)
{
	struct timespec deadline = deadline_after_ms(WAIT_MS);
	pthread_mutex_lock(&reps.lock);
	for (;;) {
		for (size_t i = after; i < reps.n; i++) {
			if (reps.all[i].event == event) {
				pthread_mutex_unlock(&reps.lock);
				return i;
			}
		}
		if (pthread_cond_timedwait(&reps.cond, &reps.lock, &deadline) == ETIMEDOUT)
			break;
	}
	pthread_mutex_unlock(&reps.lock);
	fail_msg("no report of event %d after %zu", event, after);
	return 0;
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
	uint64_t hbm[8];
	for (size_t i = 0; i < 8; i++)
		hbm[i] = 64ull << 30;
	struct npu_snapshot *s = chips(unhealthy);
	assert_int_equal(kube_publisher_offer(p, s, hbm), 0);
	npu_snapshot_unref(s);
}

/* The node's slices as the server has them: one slice of 8 devices at
 * generation, npu-<tainted> (or none, -1) with the unhealthy taint. */
static void check_slices(const char *node_uid, int64_t generation, int tainted)
{
	json_object *list = kubectl_json("get resourceslices");
	json_object *items = at(list, "items");
	assert_int_equal(json_object_array_length(items), 1);
	json_object *s = json_object_array_get_idx(items, 0);
	assert_string_equal(str_at(s, "metadata.name"), "sim-node-1-npu.ascend.com-0");
	assert_string_equal(str_at(s, "metadata.ownerReferences.0.kind"), "Node");
	assert_string_equal(str_at(s, "metadata.ownerReferences.0.uid"), node_uid);
	assert_string_equal(str_at(s, "spec.driver"), "npu.ascend.com");
	assert_string_equal(str_at(s, "spec.nodeName"), "sim-node-1");
	assert_string_equal(str_at(s, "spec.pool.name"), "sim-node-1");
	assert_int_equal(json_object_get_int64(at(s, "spec.pool.generation")), generation);
	assert_int_equal(json_object_get_int64(at(s, "spec.pool.resourceSliceCount")), 1);
	json_object *devices = at(s, "spec.devices");
	assert_int_equal(json_object_array_length(devices), 8);
	for (size_t i = 0; i < 8; i++) {
		json_object *d = json_object_array_get_idx(devices, i);
		char name[16];
		snprintf(name, sizeof(name), "npu-%zu", i);
		assert_string_equal(str_at(d, "name"), name);
		assert_string_equal(str_at(d, "attributes.product.string"), "910B3");
		assert_string_equal(str_at(d, "attributes.interconnectGroup.string"), "hccs-mesh-0");
		assert_int_equal(json_object_get_int64(at(d, "attributes.physicalID.int")), (int64_t)i);
		json_object *numa = NULL;
		assert_true(json_object_object_get_ex(at(d, "attributes"), "resource.kubernetes.io/numaNode", &numa));
		assert_int_equal(json_object_get_int64(at(numa, "int")), (int64_t)(i / 4));
		assert_string_equal(str_at(d, "capacity.memory.value"), "64Gi");
		assert_string_equal(str_at(d, "capacity.aiCores.value"), "20");
		bool has_taint = at(d, "taints") != NULL;
		assert_int_equal(has_taint, (int)i == tainted);
		if (has_taint) {
			assert_string_equal(str_at(d, "taints.0.key"), "npu.ascend.com/unhealthy");
			assert_string_equal(str_at(d, "taints.0.effect"), "NoSchedule");
		}
	}
	json_object_put(list);
}

static void test_publish_to_kube_apiserver(void **state)
{
	(void)state;
	char cmd[2048], why[512];
	snprintf(cmd, sizeof(cmd),
		 "printf 'apiVersion: v1\\nkind: Node\\nmetadata:\\n  name: sim-node-1\\n' | %s/kubectl --kubeconfig %s "
		 "apply -f - >>%s/test.log 2>&1",
		 bin_dir, kubeconfig, dir);
	assert_int_equal(system(cmd), 0);
	json_object *node = kubectl_json("get node sim-node-1");
	char node_uid[64];
	snprintf(node_uid, sizeof(node_uid), "%s", str_at(node, "metadata.uid"));
	json_object_put(node);

	struct kube_config config;
	if (kube_config_from_kubeconfig(kubeconfig, NULL, &config, why, sizeof(why)) < 0)
		fail_msg("%s", why);
	struct kube_client *client = NULL;
	if (kube_client_new(&config, 2000, &client, why, sizeof(why)) < 0)
		fail_msg("%s", why);
	pthread_mutex_init(&reps.lock, NULL);
	cond_init_monotonic(&reps.cond);
	const struct kube_publisher_options o = {
		.client = client,
		.node_name = "sim-node-1",
		.driver_version = "24.1.rc2",
		.firmware_version = "7.5.0",
		.backoff_initial_ms = 100,
		.backoff_max_ms = 1000,
		.resync_ms = 1000,
		.report = on_report,
	};
	struct kube_publisher *p = NULL;
	assert_int_equal(kube_publisher_start(&o, &p), 0);

	offer(p, -1);
	size_t i = wait_report(0, KUBE_PUBLISH_DONE);
	assert_int_equal(reps.all[i].generation, 1);
	check_slices(node_uid, 1, -1);
	/* The types the server stored: a version where the text is one. */
	json_object *list = kubectl_json("get resourceslices");
	assert_string_equal(str_at(list, "items.0.spec.devices.0.attributes.firmwareVersion.version"), "7.5.0");
	assert_string_equal(str_at(list, "items.0.spec.devices.0.attributes.driverVersion.string"), "24.1.rc2");
	json_object_put(list);

	/* A chip fault: tainted in generation 2. */
	offer(p, 3);
	i = wait_report(i + 1, KUBE_PUBLISH_DONE);
	assert_int_equal(reps.all[i].generation, 2);
	check_slices(node_uid, 2, 3);

	/* The API server goes away; chip 3 recovers and chip 5 fails meanwhile. */
	assert_int_equal(cluster("_cl_stop kube-apiserver"), 0);
	offer(p, 5);
	i = wait_report(i + 1, KUBE_PUBLISH_FAILED);
	assert_int_equal(reps.all[i].error, -ECONNREFUSED);
	start_apiserver();
	i = wait_report(i + 1, KUBE_PUBLISH_DONE);
	assert_true(reps.all[i].recovered);
	assert_int_equal(reps.all[i].generation, 3);
	check_slices(node_uid, 3, 5);
	/* Each cause once, however many retries while the server was away
	 * (a starting server may add a cause of its own, such as a 503). */
	for (size_t k = 1; k < i; k++)
		if (reps.all[k].event == KUBE_PUBLISH_FAILED && reps.all[k - 1].event == KUBE_PUBLISH_FAILED)
			assert_false(reps.all[k].error == reps.all[k - 1].error && reps.all[k].status == reps.all[k - 1].status);

	/* The Node deleted and made again: the next resync gives the slices
	 * the new Node as owner (the old uid would make them orphans). */
	snprintf(cmd, sizeof(cmd),
		 "%s/kubectl --kubeconfig %s delete node sim-node-1 >>%s/test.log 2>&1 && "
		 "printf 'apiVersion: v1\\nkind: Node\\nmetadata:\\n  name: sim-node-1\\n' | %s/kubectl --kubeconfig %s "
		 "apply -f - >>%s/test.log 2>&1",
		 bin_dir, kubeconfig, dir, bin_dir, kubeconfig, dir);
	assert_int_equal(system(cmd), 0);
	node = kubectl_json("get node sim-node-1");
	assert_string_not_equal(str_at(node, "metadata.uid"), node_uid);
	snprintf(node_uid, sizeof(node_uid), "%s", str_at(node, "metadata.uid"));
	json_object_put(node);
	i = wait_report(i + 1, KUBE_PUBLISH_DONE);
	assert_int_equal(reps.all[i].generation, 4);
	check_slices(node_uid, 4, 5);

	kube_publisher_stop(p);
	kube_client_free(client);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_publish_to_kube_apiserver),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
