/* SPDX-License-Identifier: Apache-2.0 */
/* sysfs reading (npu/sysfs.c) on a tree under a temporary host root: a
 * numa_node of 0 or 3 is read, -1 means "no node", a missing file, garbage,
 * an empty or overlong file and a node past the bound are refused; the PCI
 * address behind a character device comes from the parent link under
 * /sys/dev/char/<major>:<minor>, and a node that is not a character device,
 * a device without that link or with a parent that is not PCI give none.
 * The character device is /dev/null (1:3), reached through a symlink, so the
 * test needs no mknod. */
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
#include "base/parse.h"
#include "npu/sysfs.h"
#include "support/tmpdir.h"

struct tree {
	char root[64];
};

static void mkdirs(const char *root, const char *relative)
{
	char path[PATH_MAX];
	assert_int_equal(path_join(path, sizeof(path), root, relative), 0);
	assert_int_equal(mkdir_p(path, 0755), 0);
}

static void put(const struct tree *t, const char *relative, const char *content, size_t len)
{
	char path[PATH_MAX];
	snprintf(path, sizeof(path), "%s/%s", t->root, relative);
	FILE *f = fopen(path, "we");
	assert_non_null(f);
	assert_int_equal(fwrite(content, 1, len, f), len);
	assert_int_equal(fclose(f), 0);
}

static void link_at(const struct tree *t, const char *target, const char *relative)
{
	char path[PATH_MAX];
	snprintf(path, sizeof(path), "%s/%s", t->root, relative);
	assert_int_equal(symlink(target, path), 0);
}

static int setup(void **state)
{
	static struct tree t;
	assert_int_equal(tmpdir_make(t.root, sizeof(t.root), "sysfs-test"), 0);
	mkdirs(t.root, "dev");
	*state = &t;
	return 0;
}

static int teardown(void **state)
{
	const struct tree *t = *state;
	return tmpdir_remove(t->root) == 0 ? 0 : -1;
}

/* <root>/sys/bus/pci/devices/<name>/numa_node with content. */
static void put_numa(const struct tree *t, const char *name, const char *content, size_t len)
{
	char relative[128];
	snprintf(relative, sizeof(relative), "sys/bus/pci/devices/%s", name);
	mkdirs(t->root, relative);
	snprintf(relative, sizeof(relative), "sys/bus/pci/devices/%s/numa_node", name);
	put(t, relative, content, len);
}

static int numa_of(const struct tree *t, const char *name, uint32_t *ret_node)
{
	struct pci_address a;
	assert_int_equal(pci_address_parse(name, &a), 0);
	return sysfs_pci_numa_node(t->root, &a, ret_node);
}

static void test_parse(void **state)
{
	(void)state;
	uint32_t node = 77;
	assert_int_equal(sysfs_numa_node_parse("0\n", 2, &node), 0);
	assert_int_equal(node, 0);
	assert_int_equal(sysfs_numa_node_parse("12", 2, &node), 0);
	assert_int_equal(node, 12);
	assert_int_equal(sysfs_numa_node_parse("1023\n", 5, &node), 0);
	assert_int_equal(node, 1023);
	node = 77;
	assert_int_equal(sysfs_numa_node_parse("-1\n", 3, &node), -ENODATA);
	assert_int_equal(sysfs_numa_node_parse("1024\n", 5, &node), -ERANGE);
	static const char *const bad[] = { "", "\n", "-2\n", "x\n", "1x\n", " 1\n", "1 \n", "1\n\n", "+1", "0x1" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_equal(sysfs_numa_node_parse(bad[i], strlen(bad[i]), &node), -EINVAL);
	assert_int_equal(sysfs_numa_node_parse("1\0", 2, &node), -EINVAL);
	assert_int_equal(node, 77);
}

/* The root complex from the link /sys/bus/pci/devices/<name>, as the kernel
 * writes it (relative) or absolute; anything that does not lead under
 * devices/pci<domain>:<bus> to the device itself is refused. */
static void test_pcie_root_parse(void **state)
{
	(void)state;
	char root[SYSFS_PCIE_ROOT_SIZE] = "untouched";
	assert_int_equal(sysfs_pcie_root_parse("../../../devices/pci0000:3a/0000:3a:00.0/0000:3b:00.0", "0000:3b:00.0",
					       root, sizeof(root)),
			 0);
	assert_string_equal(root, "pci0000:3a");
	assert_int_equal(sysfs_pcie_root_parse("/sys/devices/pci10000:c0/10000:c0:02.0/10000:c1:00.0", "10000:c1:00.0",
					       root, sizeof(root)),
			 0);
	assert_string_equal(root, "pci10000:c0");
	assert_int_equal(sysfs_pcie_root_parse("../../../devices/pci0000:00/0000:00:1f.0", "0000:00:1f.0", root,
					       sizeof(root)),
			 0);
	assert_string_equal(root, "pci0000:00");

	static const char *const bad[] = {
		"../../../devices/pci0000:3a/0000:3a:00.0/0000:3c:00.0", /* another device */
		"../../../devices/platform/0000:3b:00.0",		 /* not under a root complex */
		"../../devices/pci0000:3a/0000:3b:00.0",		 /* not from sys/bus/pci/devices */
		"devices/pci0000:3a/0000:3b:00.0",
		"../../../devices/pci0000:3a",				 /* the root itself */
		"../../../devices/pcix000:3a/0000:3b:00.0",
		"../../../devices/pci0000:3a/../../0000:3b:00.0",
		"../../../devices/pci00:3a/0000:3b:00.0",
		"",
	};
	strcpy(root, "untouched");
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (sysfs_pcie_root_parse(bad[i], "0000:3b:00.0", root, sizeof(root)) != -EINVAL)
			fail_msg("accepted %s", bad[i]);
	assert_string_equal(root, "untouched");
	assert_int_equal(sysfs_pcie_root_parse("../../../devices/pci0000:3a/0000:3b:00.0", "0000:3b:00.0", root, 10),
			 -ENAMETOOLONG);
}

static void test_numa_node_files(void **state)
{
	const struct tree *t = *state;
	uint32_t node = 77;

	put_numa(t, "0000:3b:00.0", "0\n", 2);
	put_numa(t, "0000:86:00.0", "3\n", 2);
	put_numa(t, "0000:af:00.0", "-1\n", 3);
	put_numa(t, "0000:d8:00.0", "node1\n", 6);
	put_numa(t, "0000:d9:00.0", "", 0);
	put_numa(t, "0000:da:00.0", "5000\n", 5);
	char big[64];
	memset(big, '1', sizeof(big));
	put_numa(t, "0000:db:00.0", big, sizeof(big));

	assert_int_equal(numa_of(t, "0000:3b:00.0", &node), 0);
	assert_int_equal(node, 0);
	assert_int_equal(numa_of(t, "0000:86:00.0", &node), 0);
	assert_int_equal(node, 3);
	node = 77;
	assert_int_equal(numa_of(t, "0000:af:00.0", &node), -ENODATA);
	assert_int_equal(numa_of(t, "0000:d8:00.0", &node), -EINVAL);
	assert_int_equal(numa_of(t, "0000:d9:00.0", &node), -EINVAL);
	assert_int_equal(numa_of(t, "0000:da:00.0", &node), -ERANGE);
	assert_int_equal(numa_of(t, "0000:db:00.0", &node), -EINVAL);
	assert_int_equal(numa_of(t, "0000:01:00.0", &node), -ENOENT); /* no such device */
	assert_int_equal(node, 77);

	/* host_root "/" is the plugin's own /sys: an address no machine has. */
	struct pci_address none = { .domain = 0x7ffffffe, .bus = 0xff, .device = 0x1f, .function = 7 };
	assert_int_equal(sysfs_pci_numa_node(NULL, &none, &node), -ENOENT);
}

static void test_char_device_address(void **state)
{
	const struct tree *t = *state;
	struct pci_address a = { .domain = 9 };
	struct stat st;
	char node[PATH_MAX], relative[128];

	/* The real kernel's layout: /sys/dev/char/M:m is the class device,
	 * its "device" the parent, a relative link. */
	assert_int_equal(stat("/dev/null", &st), 0);
	snprintf(relative, sizeof(relative), "sys/dev/char/%u:%u", major(st.st_rdev), minor(st.st_rdev));
	mkdirs(t->root, relative);
	strncat(relative, "/device", sizeof(relative) - strlen(relative) - 1);
	link_at(t, "../../../devices/pci0000:3a/0000:3a:00.0/0000:3b:00.0", relative);
	link_at(t, "/dev/null", "dev/davinci0");
	snprintf(node, sizeof(node), "%s/dev/davinci0", t->root);

	assert_int_equal(sysfs_char_device_pci_address(t->root, node, &a), 0);
	assert_true(pci_address_equal(&a, &(struct pci_address){ .bus = 0x3b }));

	/* A parent that is not a PCI device. */
	char path[PATH_MAX];
	snprintf(path, sizeof(path), "%s/%s", t->root, relative);
	assert_int_equal(unlink(path), 0);
	link_at(t, "../../../devices/platform/hisi-npu.0", relative);
	a.domain = 9;
	assert_int_equal(sysfs_char_device_pci_address(t->root, node, &a), -EINVAL);
	/* No parent link at all (a class device created without a parent). */
	assert_int_equal(unlink(path), 0);
	assert_int_equal(sysfs_char_device_pci_address(t->root, node, &a), -ENOENT);

	/* Not a character device (test trees use regular files), or no node. */
	put(t, "dev/davinci1", "", 0);
	snprintf(node, sizeof(node), "%s/dev/davinci1", t->root);
	assert_int_equal(sysfs_char_device_pci_address(t->root, node, &a), -ENODEV);
	snprintf(node, sizeof(node), "%s/dev/davinci2", t->root);
	assert_int_equal(sysfs_char_device_pci_address(t->root, node, &a), -ENOENT);
	assert_int_equal(a.domain, 9);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse),
		cmocka_unit_test(test_pcie_root_parse),
		cmocka_unit_test(test_numa_node_files),
		cmocka_unit_test(test_char_device_address),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
