/* SPDX-License-Identifier: Apache-2.0 */
/* Where the inventory says each chip sits, against the DCMI simulator and a
 * sysfs tree under a temporary host root: the PCI address from DCMI's
 * dcmi_get_device_pcie_info_v2 (the simulator's pci=), else from the sysfs
 * link of the chip's device node; the NUMA node from that device's
 * numa_node (0 and 1 read; -1, a missing file and garbage mean unknown,
 * each with its reason). What was read is kept while a chip stays listed,
 * and read again when the chip comes back or its node reappears; a new
 * NUMA node counts as a change. The device nodes that must be character
 * devices are symlinks to /dev/null, /dev/zero and /dev/full, so the test
 * needs no mknod. The simulator is process-global: one tree serves every
 * test. */
#include <errno.h>
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

#include "base/file.h"
#include "npu/inventory.h"
#include "support/tmpdir.h"

static struct {
	char root[64];
	char dev[96];
	char lib[128];
	char state[96];
} t;

static void path_of(char *buf, size_t size, const char *relative)
{
	int n = snprintf(buf, size, "%s/%s", t.root, relative);
	assert_true(n > 0 && (size_t)n < size);
}

static void mkdirs(const char *relative)
{
	char path[PATH_MAX];
	path_of(path, sizeof(path), relative);
	assert_int_equal(mkdir_p(path, 0755), 0);
}

/* Written atomically, as a state file must be. */
static void put(const char *relative, const char *content)
{
	char path[PATH_MAX];
	path_of(path, sizeof(path), relative);
	assert_int_equal(file_write_atomic(path, content, strlen(content), 0644, 0), 0);
}

static void remove_path(const char *relative)
{
	char path[PATH_MAX];
	path_of(path, sizeof(path), relative);
	assert_int_equal(unlink(path), 0);
}

static void put_numa(const char *pci, const char *content)
{
	char relative[128];
	snprintf(relative, sizeof(relative), "sys/bus/pci/devices/%s", pci);
	mkdirs(relative);
	snprintf(relative, sizeof(relative), "sys/bus/pci/devices/%s/numa_node", pci);
	put(relative, content);
}

/* dev/davinci<phy> as a symlink to the character device char_dev, whose
 * sysfs "device" link names parent (NULL: no link). */
static void char_node(unsigned phy, const char *char_dev, const char *parent)
{
	char relative[128], path[PATH_MAX];
	struct stat st;
	snprintf(relative, sizeof(relative), "dev/davinci%u", phy);
	path_of(path, sizeof(path), relative);
	unlink(path);
	assert_int_equal(symlink(char_dev, path), 0);
	assert_int_equal(stat(char_dev, &st), 0);
	snprintf(relative, sizeof(relative), "sys/dev/char/%u:%u", major(st.st_rdev), minor(st.st_rdev));
	mkdirs(relative);
	strncat(relative, "/device", sizeof(relative) - strlen(relative) - 1);
	path_of(path, sizeof(path), relative);
	unlink(path);
	if (parent)
		assert_int_equal(symlink(parent, path), 0);
}

static void file_node(unsigned phy)
{
	char relative[64];
	snprintf(relative, sizeof(relative), "dev/davinci%u", phy);
	put(relative, "");
}

static int group_setup(void **state)
{
	(void)state;
	assert_int_equal(tmpdir_make(t.root, sizeof(t.root), "inventory-numa"), 0);
	path_of(t.dev, sizeof(t.dev), "dev");
	path_of(t.lib, sizeof(t.lib), "libdcmi.so");
	path_of(t.state, sizeof(t.state), "state");
	mkdirs("dev");
	put("dev/davinci_manager", "");
	char cmd[512];
	snprintf(cmd, sizeof(cmd), "cp '%s' '%s'", FAKE_DCMI_LIB, t.lib);
	assert_int_equal(system(cmd), 0);
	setenv("ASCEND_FAKE_DCMI_STATE", t.state, 1);
	return 0;
}

static int group_teardown(void **state)
{
	(void)state;
	return tmpdir_remove(t.root) == 0 ? 0 : -1;
}

static struct inventory *new_inventory(enum npu_backend_mode backend)
{
	struct inventory *inv;
	const struct inventory_options o = {
		.backend = backend,
		.dcmi = { .explicit_path = t.lib, .host_root = "/", .driver_path = "/none" },
		.dev_dir = t.dev,
		.host_root = t.root,
	};
	assert_int_equal(inventory_new(&o, &inv), 0);
	return inv;
}

static struct npu_snapshot *refresh(struct inventory *inv, bool want_changed)
{
	bool changed = !want_changed;
	assert_int_equal(inventory_refresh(inv, &changed), 0);
	assert_int_equal(changed, want_changed);
	return inventory_snapshot(inv);
}

static const struct npu_device *find(const struct npu_snapshot *s, const char *id)
{
	const struct npu_device *d = npu_snapshot_find(s, id);
	if (!d)
		fail_msg("%s is not listed", id);
	return d;
}

static void assert_numa(const struct npu_snapshot *s, const char *id, int node, const char *pci, const char *describe)
{
	const struct npu_device *d = find(s, id);
	char text[256];
	npu_device_describe_numa(d, text, sizeof(text));
	if (strcmp(text, describe) != 0)
		fail_msg("%s: \"%s\", wanted \"%s\"", id, text, describe);
	assert_string_equal(d->pci_address, pci);
	assert_int_equal(d->has_numa, node >= 0);
	if (node >= 0)
		assert_int_equal(d->numa_node, (uint32_t)node);
}

/* Chips 0-4 take their address from DCMI, chip 5 from its device node's
 * sysfs link (no pci=), chip 6 has neither. */
static const char dcmi_state[] = "chip phy=0 pci=0000:3b:00.0\n"
				 "chip phy=1 pci=0000:86:00.0\n"
				 "chip phy=2 pci=0000:af:00.0\n"
				 "chip phy=3 pci=0000:b0:00.0\n"
				 "chip phy=4 pci=0000:d8:00.0\n"
				 "chip phy=5\n"
				 "chip phy=6\n";

static void test_dcmi_address_then_sysfs_link(void **state)
{
	(void)state;
	put("state", dcmi_state);
	for (unsigned phy = 0; phy <= 4; phy++)
		file_node(phy);
	char_node(5, "/dev/zero", "../../../devices/pci0000:5d/0000:5d:00.0/0000:5e:00.0");
	file_node(6);
	put_numa("0000:3b:00.0", "0\n");
	put_numa("0000:86:00.0", "1\n");
	put_numa("0000:af:00.0", "-1\n");
	/* 0000:b0:00.0 has no numa_node */
	put_numa("0000:d8:00.0", "one\n");
	put_numa("0000:5e:00.0", "1\n");

	struct inventory *inv = new_inventory(NPU_BACKEND_DCMI);
	struct npu_snapshot *s = refresh(inv, true);
	assert_int_equal(s->count, 7);
	assert_int_equal(s->healthy, 7);
	assert_numa(s, "npu-0", 0, "0000:3b:00.0", "NUMA node 0 (PCI 0000:3b:00.0)");
	assert_numa(s, "npu-1", 1, "0000:86:00.0", "NUMA node 1 (PCI 0000:86:00.0)");
	assert_numa(s, "npu-2", -1, "0000:af:00.0",
		    "numa_node of PCI 0000:af:00.0 is -1, the kernel knows no node for it");
	assert_numa(s, "npu-3", -1, "0000:b0:00.0",
		    "cannot read numa_node of PCI 0000:b0:00.0: No such file or directory");
	assert_numa(s, "npu-4", -1, "0000:d8:00.0", "cannot read numa_node of PCI 0000:d8:00.0: not a node number");
	assert_numa(s, "npu-5", 1, "0000:5e:00.0", "NUMA node 1 (PCI 0000:5e:00.0)");
	assert_numa(s, "npu-6", -1, "", "no PCI address: none from DCMI, and davinci6 is not a character device");
	npu_snapshot_unref(s);
	inventory_free(inv);
}

/* On a real host /sys/bus/pci/devices/<pci> links into /sys/devices under
 * the root complex: the inventory reads that root (pcieRoot). */
static void test_pcie_root(void **state)
{
	(void)state;
	put("state", "chip phy=0 pci=0000:1a:00.0\nchip phy=1 pci=0000:2c:00.0\n");
	file_node(0);
	file_node(1);
	mkdirs("sys/devices/pci0000:19/0000:19:00.0/0000:1a:00.0");
	put("sys/devices/pci0000:19/0000:19:00.0/0000:1a:00.0/numa_node", "0\n");
	char path[PATH_MAX];
	mkdirs("sys/bus/pci/devices");
	path_of(path, sizeof(path), "sys/bus/pci/devices/0000:1a:00.0");
	unlink(path);
	assert_int_equal(symlink("../../../devices/pci0000:19/0000:19:00.0/0000:1a:00.0", path), 0);
	put_numa("0000:2c:00.0", "1\n"); /* a directory, as in the other tests: no root */

	struct inventory *inv = new_inventory(NPU_BACKEND_DCMI);
	struct npu_snapshot *s = refresh(inv, true);
	assert_string_equal(find(s, "npu-0")->pcie_root, "pci0000:19");
	assert_int_equal(find(s, "npu-0")->numa_node, 0);
	assert_string_equal(find(s, "npu-1")->pcie_root, "");
	assert_true(find(s, "npu-1")->has_numa);
	npu_snapshot_unref(s);
	inventory_free(inv);
	assert_int_equal(unlink(path), 0);
}

static void test_read_once_while_listed(void **state)
{
	(void)state;
	put("state", dcmi_state);
	struct inventory *inv = new_inventory(NPU_BACKEND_DCMI);
	struct npu_snapshot *s = refresh(inv, true);
	assert_numa(s, "npu-0", 0, "0000:3b:00.0", "NUMA node 0 (PCI 0000:3b:00.0)");
	npu_snapshot_unref(s);

	/* A chip that stays listed keeps what was read. */
	put_numa("0000:3b:00.0", "1\n");
	s = refresh(inv, false);
	assert_numa(s, "npu-0", 0, "0000:3b:00.0", "NUMA node 0 (PCI 0000:3b:00.0)");
	npu_snapshot_unref(s);

	/* Gone, then back: read again, and the new node is a change. */
	put("state", "chip phy=1 pci=0000:86:00.0\n");
	s = refresh(inv, true);
	assert_int_equal(s->count, 1);
	npu_snapshot_unref(s);
	put("state", dcmi_state);
	s = refresh(inv, true);
	assert_numa(s, "npu-0", 1, "0000:3b:00.0", "NUMA node 1 (PCI 0000:3b:00.0)");
	npu_snapshot_unref(s);

	/* Its device node missing, then back: read again, as after the driver
	 * reloaded; here numa_node went from -1 to 0 meanwhile. */
	remove_path("dev/davinci2");
	s = refresh(inv, true);
	assert_false(find(s, "npu-2")->healthy);
	npu_snapshot_unref(s);
	put_numa("0000:af:00.0", "0\n");
	file_node(2);
	s = refresh(inv, true);
	assert_true(find(s, "npu-2")->healthy);
	assert_numa(s, "npu-2", 0, "0000:af:00.0", "NUMA node 0 (PCI 0000:af:00.0)");
	npu_snapshot_unref(s);

	/* A rediscovery (SIGHUP) reads everything again. */
	put_numa("0000:86:00.0", "0\n");
	inventory_rediscover(inv);
	s = refresh(inv, true);
	assert_numa(s, "npu-1", 0, "0000:86:00.0", "NUMA node 0 (PCI 0000:86:00.0)");
	npu_snapshot_unref(s);
	inventory_free(inv);

	put_numa("0000:3b:00.0", "0\n");
	put_numa("0000:af:00.0", "-1\n");
	put_numa("0000:86:00.0", "1\n");
}

/* Without DCMI the device node's sysfs link is the only way. */
static void test_devfs_sysfs_link(void **state)
{
	(void)state;
	char cmd[PATH_MAX];
	snprintf(cmd, sizeof(cmd), "rm -f '%s'/davinci[0-9]*", t.dev);
	assert_int_equal(system(cmd), 0);
	char_node(0, "/dev/null", "../../../devices/pci0000:3a/0000:3a:00.0/0000:3b:00.0");
	char_node(1, "/dev/zero", "../../../devices/pci0000:5d/0000:5d:00.0/0000:5e:00.0");
	char_node(2, "/dev/full", "../../../devices/platform/npu.0");
	char_node(3, "/dev/random", NULL);

	struct inventory *inv = new_inventory(NPU_BACKEND_DEVFS);
	struct npu_snapshot *s = refresh(inv, true);
	assert_int_equal(s->count, 4);
	assert_numa(s, "npu-0", 0, "0000:3b:00.0", "NUMA node 0 (PCI 0000:3b:00.0)");
	assert_numa(s, "npu-1", 1, "0000:5e:00.0", "NUMA node 1 (PCI 0000:5e:00.0)");
	assert_numa(s, "npu-2", -1, "",
		    "no PCI address: the sysfs parent of davinci2 is not a PCI device");
	assert_numa(s, "npu-3", -1, "",
		    "no PCI address: davinci3 has no sysfs device link, or is missing");
	npu_snapshot_unref(s);
	inventory_free(inv);
}

static void test_snapshot_same_compares_numa(void **state)
{
	(void)state;
	struct npu_snapshot *a = npu_snapshot_new(1), *b = npu_snapshot_new(1);
	assert_non_null(a);
	assert_non_null(b);
	snprintf(a->devices[0].id, sizeof(a->devices[0].id), "npu-0");
	b->devices[0] = a->devices[0];
	assert_true(npu_snapshot_same(a, b));
	a->devices[0].has_numa = true;
	assert_false(npu_snapshot_same(a, b));
	b->devices[0].has_numa = true;
	b->devices[0].numa_node = 1;
	assert_false(npu_snapshot_same(a, b));
	a->devices[0].numa_node = 1;
	/* The PCI address and the reason alone are not the kubelet's business. */
	snprintf(a->devices[0].pci_address, sizeof(a->devices[0].pci_address), "0000:3b:00.0");
	assert_true(npu_snapshot_same(a, b));
	npu_snapshot_unref(a);
	npu_snapshot_unref(b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_dcmi_address_then_sysfs_link),
		cmocka_unit_test(test_pcie_root),
		cmocka_unit_test(test_read_once_while_listed),
		cmocka_unit_test(test_devfs_sysfs_link),
		cmocka_unit_test(test_snapshot_same_compares_numa),
	};
	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
