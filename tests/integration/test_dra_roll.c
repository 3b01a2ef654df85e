/* SPDX-License-Identifier: Apache-2.0 */
/* The DRA driver rolls without a window: two driver processes of one node
 * (the old and the new pod of a surge roll, named by
 * ASCEND_PLUGIN_INSTANCE) serve sockets of their own, register side by
 * side with the kubelet (kubelet-sim, which keeps both and calls the
 * newest, as the kubelet does), and share the checkpoint under a lock: a
 * claim one prepared is known to the other, which unprepares it, answers
 * it from the record without the API server, and refuses its device to
 * another claim. The old one's exit leaves the claims' CDI specs. Without
 * an instance the sockets keep their names and no lock file is made. */
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cmocka.h>

#include "base/file.h"
#include "harness/harness.h"
#include "harness/standin.h"

#define NODE_NAME "node-1"

struct roll_node {
	struct node node;
	char kubelet_dir[96], registry[128], plugin_dir[160], cdi_dir[96], kubeconfig[96];
	struct standin *api;
	struct proc *kubelet;
};

/* Whether dir/name exists. */
static bool exists(const char *dir, const char *name)
{
	char path[256];
	struct stat st;
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return stat(path, &st) == 0;
}

static void start(struct roll_node *d)
{
	node_init(&d->node, &(struct node_options){ .chips = 4 });
	snprintf(d->kubelet_dir, sizeof(d->kubelet_dir), "%s/kubelet-root", d->node.root);
	snprintf(d->registry, sizeof(d->registry), "%s/plugins_registry", d->kubelet_dir);
	snprintf(d->plugin_dir, sizeof(d->plugin_dir), "%s/plugins/npu.ascend.com", d->kubelet_dir);
	snprintf(d->cdi_dir, sizeof(d->cdi_dir), "%s/cdi", d->node.root);
	snprintf(d->kubeconfig, sizeof(d->kubeconfig), "%s/kubeconfig", d->node.root);
	d->api = standin_start();
	standin_kubeconfig(d->api, d->kubeconfig);
	const char *const flags[] = { "--dra-registry", d->registry, NULL };
	d->kubelet = node_start_kubelet_with(&d->node, flags);
}

static void finish(struct roll_node *d)
{
	node_fini(&d->node);
	standin_stop(d->api);
}

/* A driver process; instance NULL: none. Waits until the kubelet has
 * registered it through reg_socket (the name in the registry). */
static struct proc *start_driver(struct roll_node *d, const char *instance, const char *reg_socket)
{
	const char *const flags[] = { "--front-end", "dra", "--kubelet-dir", d->kubelet_dir, "--node-name", NODE_NAME,
				      "--cdi-dir", d->cdi_dir, "--kubeconfig", d->kubeconfig, "--health-interval",
				      "1h", NULL };
	char env[96];
	snprintf(env, sizeof(env), "ASCEND_PLUGIN_INSTANCE=%s", instance ? instance : "");
	struct proc *p = node_start_plugin_env(&d->node, flags, (const char *[]){ env, NULL });
	expect_event(p, "dra.serving", "driver", "npu.ascend.com");
	char want[192];
	snprintf(want, sizeof(want), "dra-registered socket=%s ", reg_socket);
	assert_non_null(proc_expect(d->kubelet, want, WAIT_MS));
	return p;
}

static void stop_driver(struct roll_node *d, struct proc *p)
{
	proc_kill(p, SIGTERM);
	assert_int_equal(proc_wait(p, WAIT_MS), 0);
	proc_free(p);
	if (d->node.plugin == p)
		d->node.plugin = NULL;
}

static void add_claim(struct roll_node *d, const char *name, const char *device)
{
	char uid[64];
	snprintf(uid, sizeof(uid), "uid-%s", name);
	standin_add_claim(d->api, name, uid, NODE_NAME, device, STANDIN_ANSWER, 0, 0);
}

/* `dra-prepare` through the kubelet's newest registration: its line. */
static const char *prepare(struct roll_node *d, const char *name)
{
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "dra-prepare default %s uid-%s", name, name);
	proc_send(d->kubelet, cmd);
	const char *line = proc_expect(d->kubelet, "dra-", WAIT_MS);
	assert_non_null(line);
	return line;
}

static void expect_prepared(struct roll_node *d, const char *name, const char *device)
{
	char want[192];
	snprintf(want, sizeof(want),
		 "dra-prepared uid=uid-%s devices=%s cdi=npu.ascend.com/claim=uid-%s-0-%s,npu.ascend.com/claim=uid-%s", name,
		 device, name, device, name);
	const char *line = prepare(d, name);
	if (strcmp(line, want) != 0)
		fail_msg("prepare %s: %s", name, line);
}

static void expect_unprepared(struct roll_node *d, const char *name)
{
	char cmd[128], want[96];
	snprintf(cmd, sizeof(cmd), "dra-unprepare default %s uid-%s", name, name);
	snprintf(want, sizeof(want), "dra-unprepared uid=uid-%s", name);
	proc_send(d->kubelet, cmd);
	const char *line = proc_expect(d->kubelet, "dra-", WAIT_MS);
	assert_non_null(line);
	if (strcmp(line, want) != 0)
		fail_msg("unprepare %s: %s", name, line);
}

static unsigned reads(struct roll_node *d, const char *name)
{
	int64_t times[STANDIN_MAX_TIMES];
	return standin_claim_reads(d->api, name, times);
}

static bool spec_exists(struct roll_node *d, const char *name)
{
	char file[128];
	snprintf(file, sizeof(file), "npu.ascend.com-claim_uid-%s.json", name);
	return exists(d->cdi_dir, file);
}

/* Whether the checkpoint file names the claim. */
static bool recorded(struct roll_node *d, const char *name)
{
	char path[192], *text = NULL, uid[64];
	size_t len = 0;
	snprintf(path, sizeof(path), "%s/checkpoint.json", d->plugin_dir);
	snprintf(uid, sizeof(uid), "\"uid-%s\"", name);
	char why[256];
	assert_int_equal(file_read_bounded(path, 1 << 20, &text, &len, why, sizeof(why)), 0);
	bool found = strstr(text, uid) != NULL;
	free(text);
	return found;
}

static void test_claims_cross_instances(void **state)
{
	(void)state;
	struct roll_node d;
	start(&d);
	/* B, then A: A registers last, so the kubelet calls it first. */
	struct proc *b = start_driver(&d, "bbbb2222-0000-1111-2222-333344445555", "npu.ascend.com-bbbb2222-reg.sock");
	struct proc *a = start_driver(&d, "aaaa1111", "npu.ascend.com-aaaa1111-reg.sock");
	assert_true(exists(d.plugin_dir, "dra-aaaa1111.sock"));
	assert_true(exists(d.plugin_dir, "checkpoint.lock"));
	assert_false(exists(d.plugin_dir, "dra.sock"));

	/* Prepared through A, while B runs with the checkpoint it read at its
	 * start. */
	add_claim(&d, "claim-1", "npu-0");
	add_claim(&d, "claim-2", "npu-1");
	add_claim(&d, "claim-3", "npu-1");
	expect_prepared(&d, "claim-1", "npu-0");
	expect_prepared(&d, "claim-2", "npu-1");
	assert_int_equal(reads(&d, "claim-2"), 1);

	/* A leaves: the kubelet keeps B, and the claims' specs stay. */
	stop_driver(&d, a);
	assert_non_null(proc_expect(d.kubelet, "dra-deregistered socket=npu.ascend.com-aaaa1111-reg.sock", WAIT_MS));
	assert_true(spec_exists(&d, "claim-1"));
	assert_true(spec_exists(&d, "claim-2"));
	assert_true(exists(d.plugin_dir, "dra-bbbb2222.sock"));

	/* B unprepares A's claim: its spec and its record go. */
	expect_unprepared(&d, "claim-1");
	assert_false(spec_exists(&d, "claim-1"));
	assert_false(recorded(&d, "claim-1"));
	/* A's other claim is answered from the record, without the API server,
	 * and its chip is refused to another claim. */
	expect_prepared(&d, "claim-2", "npu-1");
	assert_int_equal(reads(&d, "claim-2"), 1);
	const char *line = prepare(&d, "claim-3");
	if (!strstr(line, "dra-prepare-error uid=uid-claim-3") || !strstr(line, "claim-2"))
		fail_msg("claim-3 was not refused npu-1, prepared for claim-2: %s", line);
	/* And npu-0, free again, is B's to give. */
	add_claim(&d, "claim-4", "npu-0");
	expect_prepared(&d, "claim-4", "npu-0");
	assert_true(recorded(&d, "claim-2") && recorded(&d, "claim-4"));

	stop_driver(&d, b);
	/* A driver's exit leaves every spec: a running pod's containers need them. */
	assert_true(spec_exists(&d, "claim-2"));
	assert_true(spec_exists(&d, "claim-4"));
	finish(&d);
}

static void test_no_instance_keeps_names(void **state)
{
	(void)state;
	struct roll_node d;
	start(&d);
	struct proc *p = start_driver(&d, NULL, "npu.ascend.com-reg.sock");
	assert_true(exists(d.plugin_dir, "dra.sock"));
	assert_true(exists(d.registry, "npu.ascend.com-reg.sock"));
	assert_false(exists(d.plugin_dir, "checkpoint.lock"));
	add_claim(&d, "claim-1", "npu-0");
	expect_prepared(&d, "claim-1", "npu-0");
	expect_unprepared(&d, "claim-1");
	stop_driver(&d, p);
	finish(&d);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_claims_cross_instances),
		cmocka_unit_test(test_no_instance_keeps_names),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
