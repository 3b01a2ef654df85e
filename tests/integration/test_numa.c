/* SPDX-License-Identifier: Apache-2.0 */
/* NUMA nodes as the kubelet sees them, with the real daemon, kubelet-sim
 * and the DCMI simulator on a node whose sysfs tree lives under the
 * plugin's --host-root: each ListAndWatch device carries the NUMA node of
 * its PCI device (found through DCMI's pci= or, for a chip without one,
 * through the sysfs link of its device node) and none when sysfs says -1;
 * the plugin logs the nodes once; GetPreferredAllocation keeps a request
 * inside the tightest NUMA node; and a chip that leaves and comes back has
 * its node read again. */
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <cmocka.h>

#include "harness/harness.h"

static void put(struct node *node, const char *relative, const char *content)
{
	char path[PATH_MAX], tmp[PATH_MAX + 8];
	node_touch(node, relative); /* makes the directories */
	snprintf(path, sizeof(path), "%s/%s", node->root, relative);
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	FILE *f = fopen(tmp, "we");
	assert_non_null(f);
	fputs(content, f);
	assert_int_equal(fclose(f), 0);
	assert_int_equal(rename(tmp, path), 0);
}

static void put_numa(struct node *node, const char *pci, const char *value)
{
	char relative[128];
	snprintf(relative, sizeof(relative), "sys/bus/pci/devices/%s/numa_node", pci);
	put(node, relative, value);
}

/* dev/davinci<phy> becomes a symlink to /dev/null, a real character device
 * whose sysfs "device" link (under the node's root) names parent. */
static void char_node(struct node *node, unsigned phy, const char *parent)
{
	char path[PATH_MAX], relative[128];
	struct stat st;
	assert_int_equal(stat("/dev/null", &st), 0);
	snprintf(relative, sizeof(relative), "sys/dev/char/%u:%u/device", major(st.st_rdev), minor(st.st_rdev));
	node_touch(node, relative);
	node_remove(node, relative);
	snprintf(path, sizeof(path), "%s/%s", node->root, relative);
	assert_int_equal(symlink(parent, path), 0);
	snprintf(relative, sizeof(relative), "dev/davinci%u", phy);
	node_remove(node, relative);
	snprintf(path, sizeof(path), "%s/%s", node->root, relative);
	assert_int_equal(symlink("/dev/null", path), 0);
}

static void expect_list_line(struct proc *k, const char *want)
{
	const char *line = proc_expect(k, "device id=", WAIT_MS);
	assert_non_null(line);
	if (strcmp(line, want) != 0)
		fail_msg("list gave '%s', expected '%s'", line, want);
}

static void expect_allocation(struct proc *k, unsigned n, const char *ids)
{
	char command[32], want[128];
	snprintf(command, sizeof(command), "allocate %u", n);
	proc_send(k, command);
	const char *line = proc_expect(k, "allocate ok", WAIT_MS);
	assert_non_null(line);
	snprintf(want, sizeof(want), "allocate ok ids=%s", ids);
	if (strcmp(line, want) != 0)
		fail_msg("'%s' answered '%s', expected '%s'", command, line, want);
	assert_non_null(proc_expect(k, "allocate end", WAIT_MS));
}

/* 910B3 chips 0-2 on node 0, 3-5 and 7 on node 1, 6 with numa_node -1;
 * chip 7 has no pci= and is found through its device node. */
static void test_devices_carry_numa_nodes(void **state)
{
	struct node *node = *state;
	node_init(node, &(struct node_options){ .chips = 8 });
	static const char *const attrs[8] = {
		"pci=0000:3b:00.0", "pci=0000:3c:00.0", "pci=0000:3d:00.0", "pci=0000:86:00.0",
		"pci=0000:87:00.0", "pci=0000:88:00.0", "pci=0000:89:00.0", NULL,
	};
	node_write_chip_state(node, &(struct chip_state){ .chips = 8, .attrs = attrs });
	put_numa(node, "0000:3b:00.0", "0\n");
	put_numa(node, "0000:3c:00.0", "0\n");
	put_numa(node, "0000:3d:00.0", "0\n");
	put_numa(node, "0000:86:00.0", "1\n");
	put_numa(node, "0000:87:00.0", "1\n");
	put_numa(node, "0000:88:00.0", "1\n");
	put_numa(node, "0000:89:00.0", "-1\n");
	put_numa(node, "0000:5e:00.0", "1\n");
	char_node(node, 7, "../../../devices/pci0000:5d/0000:5d:00.0/0000:5e:00.0");

	node_start_registered(node, NULL);
	struct proc *k = node->kubelet, *p = node->plugin;
	expect_event(p, "chips.numa", "numa", "npu-0=0,npu-1=0,npu-2=0,npu-3=1,npu-4=1,npu-5=1,npu-6=?,npu-7=1", "unknown",
		     "npu-6: numa_node of PCI 0000:89:00.0 is -1, the kernel knows no node for it");

	proc_send(k, "list");
	expect_list_line(k, "device id=npu-0 health=Healthy numa=0");
	expect_list_line(k, "device id=npu-1 health=Healthy numa=0");
	expect_list_line(k, "device id=npu-2 health=Healthy numa=0");
	expect_list_line(k, "device id=npu-3 health=Healthy numa=1");
	expect_list_line(k, "device id=npu-4 health=Healthy numa=1");
	expect_list_line(k, "device id=npu-5 health=Healthy numa=1");
	expect_list_line(k, "device id=npu-6 health=Healthy");
	expect_list_line(k, "device id=npu-7 health=Healthy numa=1");
	assert_non_null(proc_expect(k, "list end", WAIT_MS));

	/* Node 0 is the tightest that holds 2; then it holds only 1, and
	 * node 1 takes the next 2 (the lowest ids would be npu-2,npu-3). */
	expect_allocation(k, 2, "npu-0,npu-1");
	expect_allocation(k, 2, "npu-3,npu-4");
	/* No node holds 3 (node 0: 1 free, node 1: 2, unknown: 1): the
	 * fullest node, then the tightest for the rest. */
	expect_allocation(k, 3, "npu-2,npu-5,npu-7");
}

static void test_chip_back_is_read_again(void **state)
{
	struct node *node = *state;
	node_init(node, &(struct node_options){ .chips = 4 });
	static const char *const attrs[4] = { "pci=0000:3b:00.0", "pci=0000:3c:00.0", "pci=0000:3d:00.0",
					      "pci=0000:3e:00.0" };
	node_write_chip_state(node, &(struct chip_state){ .chips = 4, .attrs = attrs });
	put_numa(node, "0000:3b:00.0", "0\n");
	put_numa(node, "0000:3c:00.0", "0\n");
	put_numa(node, "0000:3d:00.0", "0\n");
	put_numa(node, "0000:3e:00.0", "0\n");
	node_start_registered(node, (const char *const[]){ "--health-interval", "100ms", NULL });
	struct proc *k = node->kubelet;
	char want[128];

	proc_send(k, "list");
	assert_non_null(proc_expect(k, "device id=npu-3 health=Healthy numa=0", WAIT_MS));

	/* The card moves to a slot of node 1 (a hot swap): gone, then back. */
	put_numa(node, "0000:3e:00.0", "1\n");
	node_write_chip_state(node, &(struct chip_state){ .chips = 3, .attrs = attrs });
	assert_non_null(proc_expect(k, devices_line(want, sizeof(want), 3, 3, "-"), WAIT_MS));
	node_write_chip_state(node, &(struct chip_state){ .chips = 4, .attrs = attrs });
	assert_non_null(proc_expect(k, devices_line(want, sizeof(want), 4, 4, "-"), WAIT_MS));
	proc_send(k, "list");
	assert_non_null(proc_expect(k, "device id=npu-2 health=Healthy numa=0", WAIT_MS));
	expect_list_line(k, "device id=npu-3 health=Healthy numa=1");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_devices_carry_numa_nodes, node_setup, node_teardown),
		cmocka_unit_test_setup_teardown(test_chip_back_is_read_again, node_setup, node_teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
