/* SPDX-License-Identifier: Apache-2.0 */
/* ascend-ranktable, the real program, against the real kube-apiserver and
 * etcd (harness/apiserver.h; skipped, 77, where they were not built). The
 * nodes are simulated: the member pods are made with spec.nodeName and
 * their status written through the status subresource, as a scheduler and
 * kubelet would; what a member's device plugin would give its init
 * container is ASCEND_NPU_NETWORK in the program's environment, and what
 * the DRA driver writes at prepare is the claims' status.devices, written
 * here by an admin.
 *   - device-plugin mode, a label group of two pods on two nodes: each
 *     program publishes its chips on its pod and waits for the other (the
 *     second pod is made only once the first program says it misses it);
 *     both write the same table, which passes HCCL's rules, and the env file;
 *   - DRA mode, an Indexed Job's pods (size from the Job): the table waits
 *     for the claim not prepared yet, names it, and is written once it is;
 *   - a StatefulSet's pods (size from the set), a pod with the same labels
 *     but another controller left out;
 *   - a member replaced while the program waits: the table has the new pod;
 *   - least privilege: with the service account token of
 *     deploy/ranktable's Role for each mode, a group through the device
 *     plugin and one through DRA are written; the DRA mode's Role, which
 *     cannot patch pods, does not do for the device plugin's; the examples
 *     pass the API server's validation;
 *   - refusals, each one line and exit 1 with no table: two chips with one
 *     address, a link down across nodes, mixed families, a member without
 *     addresses, a group larger than its pods (at the deadline, naming the
 *     missing index), no ASCEND_NPU_NETWORK; a bad flag exits 2. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "base/file.h"
#include "harness/apiserver.h"
#include "harness/harness.h"
#include "support/ranktable_check.h"

static struct apiserver *const api = &the_apiserver;

/* A pod bound to node with hostIP, labels given as YAML lines ("    k: v\n"),
 * and optionally the annotation of published chips and a claim. */
static void make_pod(const char *ns, const char *name, const char *labels, const char *node, const char *host_ip,
		     const char *network, const char *claim, const char *owner)
{
	char yaml[4096], ann[2048] = "", claims[256] = "";
	if (network)
		snprintf(ann, sizeof(ann), "  annotations:\n    ascend.com/npu-network: '%s'\n", network);
	if (claim)
		snprintf(claims, sizeof(claims), "  resourceClaims:\n  - name: npu\n    resourceClaimName: %s\n", claim);
	snprintf(yaml, sizeof(yaml),
		 "apiVersion: v1\nkind: Pod\nmetadata:\n  name: %s\n  namespace: %s\n  labels:\n%s%s%s"
		 "spec:\n  nodeName: %s\n  containers:\n  - name: main\n    image: busybox\n%s",
		 name, ns, labels, ann, owner ? owner : "", node, claims);
	assert_int_equal(apiserver_kubectl(api, yaml, "apply -f -"), 0);
	assert_int_equal(apiserver_kubectl(api, NULL,
					   "-n %s patch pod %s --subresource=status --type=merge -p "
					   "'{\"status\":{\"hostIP\":\"%s\",\"hostIPs\":[{\"ip\":\"%s\"}]}}'",
					   ns, name, host_ip, host_ip),
			 0);
}

/* Pod <group>-<index> (or name) of a label group on node-<node>, whose
 * hostIP is 10.0.0.<1 + node - 'a'>. */
static void group_pod(const char *ns, const char *group, int index, const char *name, char node,
		      const char *network, const char *claim)
{
	char labels[160], own[64], node_name[16], ip[16];
	snprintf(labels, sizeof(labels), "    ascend.com/hccl-group: %s\n    ascend.com/hccl-index: \"%d\"\n", group,
		 index);
	snprintf(own, sizeof(own), "%s-%d", group, index);
	snprintf(node_name, sizeof(node_name), "node-%c", node);
	snprintf(ip, sizeof(ip), "10.0.0.%d", 1 + node - 'a');
	make_pod(ns, name ? name : own, labels, node_name, ip, network, claim, NULL);
}

/* Both programs write their table. */
static void both_succeed(struct proc *p0, struct proc *p1)
{
	assert_int_equal(proc_wait(p0, WAIT_MS), 0);
	assert_int_equal(proc_wait(p1, WAIT_MS), 0);
	assert_int_equal(proc_free(p0), 0);
	assert_int_equal(proc_free(p1), 0);
}

static void make_namespace(const char *ns)
{
	/* No controller makes the namespace's default service account: the
	 * pods' admission needs it. */
	char yaml[256];
	snprintf(yaml, sizeof(yaml),
		 "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: %s\n---\napiVersion: v1\nkind: ServiceAccount\n"
		 "metadata:\n  name: default\n  namespace: %s\n",
		 ns, ns);
	assert_int_equal(apiserver_kubectl(api, yaml, "apply -f -"), 0);
}

/* ASCEND_NPU_NETWORK for n 910B chips 0..n-1 whose addresses are
 * 192.168.<subnet>.<10+i>; chip down_chip's link down (-1: none). */
static void network(char *buf, size_t size, const char *family, int subnet, int n, int down_chip)
{
	size_t len = (size_t)snprintf(buf, size, "[");
	for (int i = 0; i < n; i++)
		len += (size_t)snprintf(buf + len, size - len,
					"%s{\"device_id\":%d,\"family\":\"%s\",\"device_ip\":\"192.168.%d.%d\","
					"\"prefix_len\":24,\"link\":\"%s\"}",
					i ? "," : "", i, family, subnet, 10 + i, i == down_chip ? "down" : "up");
	snprintf(buf + len, size - len, "]");
}

/* The program for pod ns/name writing under dir/<name>/, with network as
 * its ASCEND_NPU_NETWORK (NULL: none) and more flags (NULL-terminated). */
static struct proc *run(const char *dir, const char *ns, const char *name, const char *net, const char *const more[])
{
	static char out[8][256], env[8][2048];
	static unsigned slot;
	unsigned s = slot++ % 8;
	snprintf(out[s], sizeof(out[s]), "%s/%s/hccl.json", dir, name);
	snprintf(env[s], sizeof(env[s]), "ASCEND_NPU_NETWORK=%s", net ? net : "");
	const char *argv[24] = { RANKTABLE_BIN, "--kubeconfig", api->kubeconfig, "--namespace", ns, "--pod", name,
				 "--output", out[s] };
	size_t n = 9;
	for (size_t i = 0; more && more[i] && n < 23; i++)
		argv[n++] = more[i];
	argv[n] = NULL;
	return proc_start(argv, (const char *const[]){ env[s], NULL });
}

static char *read_text(const char *path)
{
	char *text, why[128];
	size_t len;
	if (file_read_bounded(path, 1 << 20, &text, &len, why, sizeof(why)) < 0)
		fail_msg("%s: %s", path, why);
	return text;
}

/* Both pods' tables are the same, pass HCCL's rules for family with
 * servers servers and devices ranks; the first is returned. */
static char *same_tables(const char *dir, const char *a, const char *b, const char *family, size_t servers,
			 size_t devices)
{
	char path[256], why[256];
	snprintf(path, sizeof(path), "%s/%s/hccl.json", dir, a);
	char *ta = read_text(path);
	snprintf(path, sizeof(path), "%s/%s/hccl.json", dir, b);
	char *tb = read_text(path);
	assert_string_equal(ta, tb);
	free(tb);
	struct ranktable_facts facts;
	if (ranktable_check(ta, family, &facts, why, sizeof(why)) != 0)
		fail_msg("the table breaks HCCL's rules: %s\n%s", why, ta);
	assert_int_equal(facts.servers, servers);
	assert_int_equal(facts.devices, devices);
	snprintf(path, sizeof(path), "%s/%s/hccl.env", dir, a);
	char *env = read_text(path), want[512];
	snprintf(want, sizeof(want), "RANK_TABLE_FILE='%s/%s/hccl.json'\nRANK_SIZE=%zu\n", dir, a, devices);
	assert_string_equal(env, want);
	free(env);
	return ta;
}

/* The chip of address ip has rank in the table. */
static void assert_rank(const char *table, const char *ip, const char *rank)
{
	json_object *t = json_tokener_parse(table), *servers = json_at(t, "server_list");
	const char *found = NULL;
	for (size_t i = 0; servers && i < json_object_array_length(servers); i++) {
		json_object *devices = json_at(json_object_array_get_idx(servers, i), "device");
		for (size_t j = 0; devices && j < json_object_array_length(devices); j++) {
			json_object *d = json_object_array_get_idx(devices, j);
			const char *a = json_str_at(d, "device_ip");
			if (a && strcmp(a, ip) == 0)
				found = json_str_at(d, "rank_id");
		}
	}
	if (!found || strcmp(found, rank) != 0)
		fail_msg("%s has rank %s, not %s:\n%s", ip, found ? found : "(none)", rank, table);
	json_object_put(t);
}

/* The program exits 1 with a last line naming what; no table written. */
static void refused(struct proc *p, const char *dir, const char *name, const char *what)
{
	const char *line = proc_expect_err(p, what, WAIT_MS);
	if (!line)
		fail_msg("no line saying '%s'", what);
	assert_non_null(strstr(line, "ascend-ranktable: "));
	assert_int_equal(proc_wait(p, WAIT_MS), 1);
	assert_int_equal(proc_free(p), 1);
	char path[256];
	snprintf(path, sizeof(path), "%s/%s/hccl.json", dir, name);
	assert_int_equal(access(path, F_OK), -1);
}

static void test_device_plugin_group(void **state)
{
	(void)state;
	char dir[64], net0[2048], net1[2048];
	assert_int_equal(tmpdir_make(dir, sizeof(dir), "ranktable"), 0);
	make_namespace("dp");
	network(net0, sizeof(net0), "910B", 1, 4, -1);
	network(net1, sizeof(net1), "910B", 2, 4, -1);
	group_pod("dp", "g", 0, NULL, 'a', NULL, NULL);
	struct proc *p0 = run(dir, "dp", "g-0", net0, (const char *const[]){ "--size", "2", NULL });
	/* It publishes its chips, then waits for the pod not made yet. */
	assert_non_null(proc_expect_err(p0, "label ascend.com/hccl-group=g of 2 pods, device-plugin mode", WAIT_MS));
	assert_non_null(proc_expect_err(p0, "waiting for 1 of 2 members: index 1: no pod yet", WAIT_MS));
	json_object *pod = apiserver_kubectl_json(api, "-n dp get pod g-0");
	json_object *published = NULL;
	assert_true(json_object_object_get_ex(json_at(pod, "metadata.annotations"), "ascend.com/npu-network", &published));
	assert_string_equal(json_object_get_string(published), net0);
	json_object_put(pod);
	group_pod("dp", "g", 1, NULL, 'b', NULL, NULL);
	struct proc *p1 = run(dir, "dp", "g-1", net1, (const char *const[]){ "--size", "2", NULL });
	assert_non_null(proc_expect(p0, "\"server_id\": \"node-b\"", WAIT_MS)); /* printed too */
	both_succeed(p0, p1);
	char *table = same_tables(dir, "g-0", "g-1", "910B", 2, 8);
	/* Pod 0's chips are ranks 0-3, pod 1's 4-7. */
	assert_rank(table, "192.168.1.13", "3");
	assert_rank(table, "192.168.2.10", "4");
	fprintf(stderr, "the table of the device-plugin group:\n%s", table);
	free(table);
	assert_int_equal(tmpdir_remove(dir), 0);
}

/* A claim allocated npu-0..n-1 of node's pool; with data, prepared too. */
static void make_claim(const char *ns, const char *name, const char *node, int subnet, bool prepared)
{
	char yaml[512], patch[4096];
	snprintf(yaml, sizeof(yaml),
		 "apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nmetadata:\n  name: %s\n  namespace: %s\n"
		 "spec:\n  devices:\n    requests:\n    - name: npu\n      exactly:\n        deviceClassName: "
		 "npu.ascend.com\n        allocationMode: ExactCount\n        count: 2\n",
		 name, ns);
	if (!prepared)
		assert_int_equal(apiserver_kubectl(api, yaml, "apply -f -"), 0);
	size_t len = (size_t)snprintf(patch, sizeof(patch), "'{\"status\":{\"allocation\":{\"devices\":{\"results\":[");
	for (int i = 0; i < 2; i++)
		len += (size_t)snprintf(patch + len, sizeof(patch) - len,
					"%s{\"request\":\"npu\",\"driver\":\"npu.ascend.com\",\"pool\":\"%s\","
					"\"device\":\"npu-%d\"}",
					i ? "," : "", node, i);
	len += (size_t)snprintf(patch + len, sizeof(patch) - len, "]}}");
	if (prepared) {
		len += (size_t)snprintf(patch + len, sizeof(patch) - len, ",\"devices\":[");
		for (int i = 0; i < 2; i++)
			len += (size_t)snprintf(
				patch + len, sizeof(patch) - len,
				"%s{\"driver\":\"npu.ascend.com\",\"pool\":\"%s\",\"device\":\"npu-%d\",\"data\":"
				"{\"device_id\":%d,\"family\":\"910B\",\"device_ip\":\"192.168.%d.%d\",\"prefix_len\":24,"
				"\"link\":\"up\"},\"networkData\":{\"ips\":[\"192.168.%d.%d/24\"]}}",
				i ? "," : "", node, i, i, subnet, 10 + i, subnet, 10 + i);
		len += (size_t)snprintf(patch + len, sizeof(patch) - len, "]");
	}
	snprintf(patch + len, sizeof(patch) - len, "}}'");
	assert_int_equal(apiserver_kubectl(api, NULL, "-n %s patch resourceclaim %s --subresource=status --type=merge -p %s",
					   ns, name, patch),
			 0);
}

static void test_dra_indexed_job(void **state)
{
	(void)state;
	char dir[64], owner[512], labels[512];
	assert_int_equal(tmpdir_make(dir, sizeof(dir), "ranktable"), 0);
	make_namespace("dra");
	assert_int_equal(apiserver_kubectl(api,
					   "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: infer\n  namespace: dra\n"
					   "spec:\n  completions: 2\n  parallelism: 2\n  completionMode: Indexed\n"
					   "  template:\n    spec:\n      restartPolicy: Never\n      containers:\n"
					   "      - name: main\n        image: busybox\n",
					   "apply -f -"),
			 0);
	json_object *job = apiserver_kubectl_json(api, "-n dra get job infer");
	const char *uid = json_str_at(job, "metadata.uid");
	snprintf(owner, sizeof(owner),
		 "  ownerReferences:\n  - apiVersion: batch/v1\n    kind: Job\n    name: infer\n    uid: %s\n"
		 "    controller: true\n",
		 uid);
	for (int i = 0; i < 2; i++) {
		char name[16], claim[16], node[16], ip[16];
		snprintf(name, sizeof(name), "infer-%d", i);
		snprintf(claim, sizeof(claim), "claim-%d", i);
		snprintf(node, sizeof(node), "node-%c", 'a' + i);
		snprintf(ip, sizeof(ip), "10.0.0.%d", 1 + i);
		snprintf(labels, sizeof(labels),
			 "    batch.kubernetes.io/controller-uid: %s\n    batch.kubernetes.io/job-name: infer\n"
			 "    batch.kubernetes.io/job-completion-index: \"%d\"\n",
			 uid, i);
		make_claim("dra", claim, node, 1 + i, false);
		if (i == 0)
			make_claim("dra", claim, node, 1 + i, true);
		make_pod("dra", name, labels, node, ip, NULL, claim, owner);
	}
	json_object_put(job);
	struct proc *p0 = run(dir, "dra", "infer-0", NULL, NULL), *p1 = run(dir, "dra", "infer-1", NULL, NULL);
	assert_non_null(proc_expect_err(p0, "Job infer of 2 pods, DRA mode", WAIT_MS));
	assert_non_null(proc_expect_err(
		p0, "pod 1 (infer-1): claim claim-1 device npu-0 of pool node-b has no data yet (not prepared)", WAIT_MS));
	make_claim("dra", "claim-1", "node-b", 2, true);
	both_succeed(p0, p1);
	char *table = same_tables(dir, "infer-0", "infer-1", "910B", 2, 4);
	assert_non_null(strstr(table, "\"server_id\": \"node-b\""));
	assert_rank(table, "192.168.2.11", "3");
	fprintf(stderr, "the table of the DRA Indexed Job:\n%s", table);
	free(table);
	assert_int_equal(tmpdir_remove(dir), 0);
}

static void test_statefulset(void **state)
{
	(void)state;
	char dir[64], net[2][2048], owner[512], labels[256];
	assert_int_equal(tmpdir_make(dir, sizeof(dir), "ranktable"), 0);
	make_namespace("sts");
	assert_int_equal(apiserver_kubectl(api,
					   "apiVersion: apps/v1\nkind: StatefulSet\nmetadata:\n  name: serve\n  namespace: sts\n"
					   "spec:\n  replicas: 2\n  serviceName: serve\n  selector:\n    matchLabels:\n"
					   "      app: serve\n  template:\n    metadata:\n      labels:\n        app: serve\n"
					   "    spec:\n      containers:\n      - name: main\n        image: busybox\n",
					   "apply -f -"),
			 0);
	json_object *set = apiserver_kubectl_json(api, "-n sts get statefulset serve");
	snprintf(owner, sizeof(owner),
		 "  ownerReferences:\n  - apiVersion: apps/v1\n    kind: StatefulSet\n    name: serve\n    uid: %s\n"
		 "    controller: true\n",
		 json_str_at(set, "metadata.uid"));
	json_object_put(set);
	for (int i = 0; i < 2; i++) {
		char name[16], node[16], ip[16];
		network(net[i], sizeof(net[i]), "910B", 1 + i, 2, -1);
		snprintf(name, sizeof(name), "serve-%d", i);
		snprintf(node, sizeof(node), "node-%c", 'a' + i);
		snprintf(ip, sizeof(ip), "10.0.0.%d", 1 + i);
		snprintf(labels, sizeof(labels),
			 "    app: serve\n    apps.kubernetes.io/pod-index: \"%d\"\n    controller-revision-hash: serve-%d\n"
			 "    statefulset.kubernetes.io/pod-name: %s\n",
			 i, i, name);
		make_pod("sts", name, labels, node, ip, NULL, NULL, owner);
	}
	/* The same labels, no controller: not a member, though it published. */
	make_pod("sts", "stray", "    app: serve\n    apps.kubernetes.io/pod-index: \"1\"\n", "node-c", "10.0.0.3",
		 net[0], NULL, NULL);
	struct proc *p0 = run(dir, "sts", "serve-0", net[0], NULL), *p1 = run(dir, "sts", "serve-1", net[1], NULL);
	assert_non_null(proc_expect_err(p0, "StatefulSet serve of 2 pods, device-plugin mode", WAIT_MS));
	both_succeed(p0, p1);
	free(same_tables(dir, "serve-0", "serve-1", "910B", 2, 4));
	assert_int_equal(tmpdir_remove(dir), 0);
}

static void test_member_replaced(void **state)
{
	(void)state;
	char dir[64], net0[2048], net1[2048];
	assert_int_equal(tmpdir_make(dir, sizeof(dir), "ranktable"), 0);
	make_namespace("rep");
	network(net0, sizeof(net0), "910B", 1, 2, -1);
	network(net1, sizeof(net1), "910B", 3, 2, -1);
	group_pod("rep", "r", 0, NULL, 'a', NULL, NULL);
	group_pod("rep", "r", 1, NULL, 'b', NULL, NULL);
	struct proc *p0 = run(dir, "rep", "r-0", net0, (const char *const[]){ "--size", "2", NULL });
	assert_non_null(proc_expect_err(p0, "pod 1 (r-1): has not published its chips yet", WAIT_MS));
	/* r-1 goes; its replacement lands on node-c and publishes. */
	assert_int_equal(apiserver_kubectl(api, NULL, "-n rep delete pod r-1 --grace-period=0 --force"), 0);
	assert_non_null(proc_expect_err(p0, "waiting for 1 of 2 members: index 1: no pod yet", WAIT_MS));
	group_pod("rep", "r", 1, "r-1b", 'c', net1, NULL);
	assert_int_equal(proc_wait(p0, WAIT_MS), 0);
	assert_int_equal(proc_free(p0), 0);
	char path[128];
	snprintf(path, sizeof(path), "%s/r-0/hccl.json", dir);
	char *table = read_text(path), why[256];
	if (ranktable_check(table, "910B", NULL, why, sizeof(why)) != 0)
		fail_msg("%s\n%s", why, table);
	assert_non_null(strstr(table, "\"server_id\": \"node-c\""));
	assert_null(strstr(table, "node-b"));
	assert_rank(table, "192.168.3.11", "3");
	free(table);
	assert_int_equal(tmpdir_remove(dir), 0);
}

/* Pod 0 of group g runs the program with net0; pod 1 has net1 published
 * (NULL: none); the program is refused saying what. */
static void refused_case(const char *dir, const char *g, const char *net0, const char *net1, const char *size,
			 const char *timeout, const char *what)
{
	char name[64];
	snprintf(name, sizeof(name), "%s-0", g);
	group_pod("bad", g, 0, NULL, 'a', NULL, NULL);
	group_pod("bad", g, 1, NULL, 'b', net1, NULL);
	refused(run(dir, "bad", name, net0, (const char *const[]){ "--size", size, "--timeout", timeout, NULL }), dir,
		name, what);
}

static void test_refusals(void **state)
{
	(void)state;
	char dir[64], good[2048], other[2048], same[2048], down[2048], f910[2048];
	assert_int_equal(tmpdir_make(dir, sizeof(dir), "ranktable"), 0);
	make_namespace("bad");
	network(good, sizeof(good), "910B", 1, 2, -1);
	network(other, sizeof(other), "910B", 2, 2, -1);
	network(same, sizeof(same), "910B", 1, 2, -1);
	network(down, sizeof(down), "910B", 2, 2, 1);
	network(f910, sizeof(f910), "910", 2, 2, -1);
	refused_case(dir, "dup", good, same, "2", "1m", "have one device IP, 192.168.1.10");
	refused_case(dir, "down", good, down, "2", "1m", "chip 1: its RoCE link is down");
	refused_case(dir, "mixed", good, f910, "2", "1m", "one table, one family");
	refused_case(dir, "noip", good, "[{\"device_id\":0,\"family\":\"910B\",\"link\":\"up\"}]", "2", "1m",
		     "chip 0 has no device IP");
	refused_case(dir, "short", good, other, "3", "3s", "index 2: no pod yet");
	/* Without the device plugin's variable there is nothing to publish. */
	group_pod("bad", "none", 0, NULL, 'a', NULL, NULL);
	refused(run(dir, "bad", "none-0", NULL, (const char *const[]){ "--size", "1", NULL }), dir, "none-0",
		"no ASCEND_NPU_NETWORK in this container");
	/* A bad flag: one line, exit 2. */
	struct proc *p = run(dir, "bad", "none-0", NULL, (const char *const[]){ "--size", "0", NULL });
	assert_non_null(proc_expect_err(p, "ascend-ranktable: --size: '0' is not a group size", WAIT_MS));
	assert_int_equal(proc_wait(p, WAIT_MS), 2);
	assert_int_equal(proc_free(p), 2);
	assert_int_equal(tmpdir_remove(dir), 0);
}

#define REPO TEST_SOURCE_DIR "/.."

/* A kubeconfig at path that reaches the API server as the service account
 * ascend-ranktable of ns, after deploy/ranktable/<rbac> was applied there. */
static void service_account_kubeconfig(const char *ns, const char *rbac, const char *path)
{
	assert_int_equal(apiserver_kubectl(api, NULL, "-n %s apply -f " REPO "/deploy/ranktable/%s", ns, rbac), 0);
	char args[128];
	snprintf(args, sizeof(args), "-n %s create token ascend-ranktable", ns);
	json_object *request = apiserver_kubectl_json(api, args);
	const char *token = json_str_at(request, "status.token");
	assert_non_null(token);
	char *admin = read_text(api->kubeconfig), cmd[4096];
	assert_int_equal(file_write_atomic(path, admin, strlen(admin), 0600, 0), 0);
	free(admin);
	snprintf(cmd, sizeof(cmd),
		 "%s/kubectl config --kubeconfig %s set-credentials ranktable --token=%s >/dev/null && "
		 "%s/kubectl config --kubeconfig %s set-context --current --user=ranktable >/dev/null",
		 api->bin_dir, path, token, api->bin_dir, path);
	assert_int_equal(system(cmd), 0);
	json_object_put(request);
}

static void test_least_privilege(void **state)
{
	(void)state;
	char dir[64], net0[2048], net1[2048], kc_dp[128], kc_dra[128];
	assert_int_equal(tmpdir_make(dir, sizeof(dir), "ranktable"), 0);
	snprintf(kc_dp, sizeof(kc_dp), "%s/kubeconfig-dp", dir);
	snprintf(kc_dra, sizeof(kc_dra), "%s/kubeconfig-dra", dir);
	make_namespace("lp");
	service_account_kubeconfig("lp", "rbac-device-plugin.yaml", kc_dp);
	make_namespace("lpdra");
	service_account_kubeconfig("lpdra", "rbac-dra.yaml", kc_dra);

	/* The device plugin's Role: publish, list, watch. */
	network(net0, sizeof(net0), "910B", 1, 2, -1);
	network(net1, sizeof(net1), "910B", 2, 2, -1);
	group_pod("lp", "lp", 0, NULL, 'a', NULL, NULL);
	group_pod("lp", "lp", 1, NULL, 'b', NULL, NULL);
	const char *const as_dp[] = { "--kubeconfig", kc_dp, "--size", "2", NULL };
	struct proc *p0 = run(dir, "lp", "lp-0", net0, as_dp), *p1 = run(dir, "lp", "lp-1", net1, as_dp);
	both_succeed(p0, p1);
	free(same_tables(dir, "lp-0", "lp-1", "910B", 2, 4));

	/* The DRA Role reads pods and claims, and writes nothing. */
	for (int i = 0; i < 2; i++) {
		char claim[16];
		snprintf(claim, sizeof(claim), "lq-claim-%d", i);
		make_claim("lpdra", claim, i ? "node-b" : "node-a", 1 + i, false);
		make_claim("lpdra", claim, i ? "node-b" : "node-a", 1 + i, true);
		group_pod("lpdra", "lq", i, NULL, (char)('a' + i), NULL, claim);
	}
	const char *const as_dra[] = { "--kubeconfig", kc_dra, "--size", "2", NULL };
	p0 = run(dir, "lpdra", "lq-0", NULL, as_dra);
	p1 = run(dir, "lpdra", "lq-1", NULL, as_dra);
	both_succeed(p0, p1);
	free(same_tables(dir, "lq-0", "lq-1", "910B", 2, 4));
	/* ...so it cannot publish a pod's chips. */
	group_pod("lpdra", "lr", 0, NULL, 'a', NULL, NULL);
	refused(run(dir, "lpdra", "lr-0", net0, (const char *const[]){ "--kubeconfig", kc_dra, "--size", "1", NULL }),
		dir, "lr-0", "PATCH /api/v1/namespaces/lpdra/pods/lr-0: HTTP 403");
	/* A label group's size is given or unknown. */
	refused(run(dir, "lpdra", "lr-0", net0, (const char *const[]){ "--kubeconfig", kc_dra, NULL }), dir, "lr-0",
		"the size of label ascend.com/hccl-group=lr is unknown: give --size or ASCEND_HCCL_GROUP_SIZE");

	/* The examples are what the API server takes. */
	assert_int_equal(apiserver_kubectl(api, NULL,
					   "-n lp apply --dry-run=server -f " REPO
					   "/examples/ranktable/indexed-job-device-plugin.yaml"),
			 0);
	assert_int_equal(apiserver_kubectl(api, NULL,
					   "-n lpdra apply --dry-run=server -f " REPO "/examples/ranktable/indexed-job-dra.yaml"),
			 0);
	assert_int_equal(tmpdir_remove(dir), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_device_plugin_group),
		cmocka_unit_test(test_dra_indexed_job),
		cmocka_unit_test(test_statefulset),
		cmocka_unit_test(test_member_replaced),
		cmocka_unit_test(test_least_privilege),
		cmocka_unit_test(test_refusals),
	};
	return cmocka_run_group_tests(tests, apiserver_group_setup, apiserver_group_teardown);
}
