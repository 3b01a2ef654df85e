/* SPDX-License-Identifier: Apache-2.0 */
/* Rolls without a window: a new plugin process beside the old one (the
 * new pod of a surge roll, named by ASCEND_PLUGIN_INSTANCE) serves on a
 * socket of its own and registers while the old one still serves; the
 * kubelet (kubelet-sim, as the kubelet from v1.36 on) follows both, so that
 * the old one's exit leaves every chip allocatable, and the node's CDI spec
 * and NFD file, which both wrote, stay with the one that serves on. And a
 * storm of SIGHUPs never takes the kubelet's devices away: a reload keeps
 * the registration that stands. */
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "harness/harness.h"

#define CHIPS 4

static bool exists(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0;
}

/* One `allocate 1` through kubelet-sim, released again: true when the
 * kubelet could admit a container. */
static bool admit_one(struct proc *k, char *failure, size_t size)
{
	proc_send(k, "allocate 1");
	const char *line = proc_expect(k, "allocate ", WAIT_MS);
	if (!line || strncmp(line, "allocate ok", 11) != 0) {
		snprintf(failure, size, "%s", line ? line : "(no answer)");
		return false;
	}
	char ids[64];
	line_value(line, "ids", ids, sizeof(ids));
	assert_non_null(proc_expect(k, "allocate end", WAIT_MS));
	char cmd[96];
	snprintf(cmd, sizeof(cmd), "release %s", ids);
	proc_send(k, cmd);
	assert_non_null(proc_expect(k, "released ids=", WAIT_MS));
	return true;
}

static void test_surge_roll(void **state)
{
	struct node *node = *state;
	node_init(node, &(struct node_options){ .chips = CHIPS });
	char cdi_dir[128], nfd[128], spec[192];
	snprintf(cdi_dir, sizeof(cdi_dir), "%s/cdi", node->root);
	snprintf(nfd, sizeof(nfd), "%s/ascend.features", node->root);
	snprintf(spec, sizeof(spec), "%s/ascend.com-npu.json", cdi_dir);
	assert_int_equal(mkdir(cdi_dir, 0755), 0);
	const char *flags[] = { "--device-list-strategy=native,cdi", "--cdi-dir", cdi_dir, "--nfd-features-file",
				nfd, NULL };
	struct proc *k = node_start_kubelet(node);
	char line[128], failure[256];

	struct proc *old = node_start_plugin_env(node, flags, (const char *[]){
								       "ASCEND_PLUGIN_INSTANCE=0a1b2c3d-1111-2222-3333-444455556666",
								       NULL });
	assert_non_null(proc_expect(k, "register resource=ascend.com/npu endpoint=ascend-npu@0a1b2c3d.sock", WAIT_MS));
	assert_non_null(proc_expect(k, devices_line(line, sizeof(line), CHIPS, CHIPS, "-"), WAIT_MS));
	expect_event(old, "nfd.written");
	assert_true(exists(spec));

	/* The new pod: its own socket, registered beside the old one. */
	struct proc *new = node_start_plugin_env(node, flags, (const char *[]){ "ASCEND_PLUGIN_INSTANCE=9f8e7d6c", NULL });
	const char *reg = proc_expect(k, "register resource=ascend.com/npu endpoint=ascend-npu@9f8e7d6c.sock", WAIT_MS);
	assert_non_null(reg);
	assert_non_null(strstr(reg, "beside=1"));
	assert_non_null(proc_expect(k, devices_line(line, sizeof(line), CHIPS, CHIPS, "-"), WAIT_MS));
	char old_socket[192];
	snprintf(old_socket, sizeof(old_socket), "%s/ascend-npu@0a1b2c3d.sock", node->socket_dir);
	assert_true(exists(old_socket));
	assert_true(admit_one(k, failure, sizeof(failure)));

	/* The old pod leaves: its stream ends, and the kubelet keeps every
	 * chip allocatable through the new one. */
	proc_kill(old, SIGTERM);
	assert_int_equal(proc_wait(old, WAIT_MS), 0);
	assert_int_equal(count_events(old, "instance.standby"), 1);
	assert_non_null(proc_expect(k, "stream-ended resource=ascend.com/npu", WAIT_MS));
	/* The next devices line, if any, comes after this barrier's: none says
	 * allocatable 0. */
	proc_send(k, "list");
	const char *got;
	while ((got = proc_expect(k, "", WAIT_MS)) && strcmp(got, "list end") != 0)
		if (strstr(got, "allocatable=0") || strstr(got, "health=Unhealthy"))
			fail_msg("the old plugin's exit took devices away: %s", got);
	assert_non_null(got);
	for (int i = 0; i < 8; i++)
		if (!admit_one(k, failure, sizeof(failure)))
			fail_msg("allocate %d after the old plugin left: %s", i, failure);
	assert_false(exists(old_socket));
	/* The files the node's runtime and NFD read stay with the new one. */
	assert_true(exists(spec));
	assert_true(exists(nfd));
	proc_free(old);

	/* The last one takes them with it. */
	proc_kill(new, SIGTERM);
	assert_int_equal(proc_wait(new, WAIT_MS), 0);
	assert_false(exists(spec));
	assert_false(exists(nfd));
	proc_free(new);
	node->plugin = NULL;
	node_fini(node);
}

/* Allocations keep being admitted through a storm of SIGHUPs: the kubelet
 * never sees the devices go, nor a second registration. */
static void test_sighup_storm_admits(void **state)
{
	struct node *node = *state;
	node_init(node, &(struct node_options){ .chips = CHIPS });
	node_start_registered(node, NULL);
	struct proc *k = node->kubelet, *p = node->plugin;
	char failure[256];
	unsigned admitted = 0;
	for (int round = 0; round < 30; round++) {
		for (int i = 0; i < 5; i++)
			proc_kill(p, SIGHUP);
		if (!admit_one(k, failure, sizeof(failure)))
			fail_msg("allocate failed in round %d after %u admitted: %s", round, admitted, failure);
		admitted++;
	}
	/* Every reload is through before the barrier's answer. */
	while (wait_event(p, 1000, "config.applied", "trigger", "SIGHUP"))
		;
	proc_send(k, "list");
	const char *line;
	while ((line = proc_expect(k, "", WAIT_MS)) && strcmp(line, "list end") != 0)
		if (strncmp(line, "register ", 9) == 0 || strncmp(line, "stream-ended", 12) == 0 ||
		    strstr(line, "allocatable=0"))
			fail_msg("a SIGHUP reached the kubelet: %s", line);
	assert_non_null(line);
	assert_int_equal(count_events(p, "plugin.reregistered"), 0);
	node_fini(node);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_surge_roll, node_setup, node_teardown),
		cmocka_unit_test_setup_teardown(test_sighup_storm_admits, node_setup, node_teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
