/* SPDX-License-Identifier: Apache-2.0 */
/* The host files snapshot: what a scan finds under a fake /dev and host
 * root, 310B's davinci_manager_docker in place of davinci_manager, equality
 * of two scans, the description of a change, and which /dev names count. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "support/node_tree.h"
#include "support/tmpdir.h"

#include "base/macro.h"
#include "npu/inventory.h"
#include "node/host_files.h"

struct fixture {
	char root[64];
	char dev[80];
};

static void touch(struct fixture *f, const char *relative)
{
	assert_int_equal(node_tree_touch(f->root, relative), 0);
}

static void drop(struct fixture *f, const char *relative)
{
	char path[256];
	snprintf(path, sizeof(path), "%s/%s", f->root, relative);
	assert_int_equal(unlink(path), 0);
}

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));
	assert_int_equal(tmpdir_make(f->root, sizeof(f->root), "host-files"), 0);
	snprintf(f->dev, sizeof(f->dev), "%s/dev", f->root);
	touch(f, "dev/davinci_manager");
	touch(f, "dev/devmm_svm");
	touch(f, "dev/hisi_hdc");
	touch(f, "usr/local/Ascend/driver/lib64/libascend_hal.so");
	touch(f, "etc/ascend_install.info");
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;
	tmpdir_remove(f->root);
	free(f);
	return 0;
}

static struct host_files *scan(struct fixture *f)
{
	struct host_files *files;
	const struct host_paths paths = { .dev_dir = f->dev, .host_root = f->root, .driver_path = "/usr/local/Ascend/driver" };
	assert_int_equal(host_files_scan(&paths, &files), 0);
	return files;
}

static void test_scan(void **state)
{
	struct fixture *f = *state;
	struct host_files *files = scan(f);
	size_t n;
	const struct host_node *nodes = host_files_nodes(files, NPU_FAMILY_910B, &n);
	assert_int_equal(n, 3);
	assert_string_equal(nodes[0].host, "/dev/davinci_manager");
	assert_string_equal(nodes[1].host, "/dev/devmm_svm");
	assert_string_equal(nodes[2].host, "/dev/hisi_hdc");
	assert_string_equal(nodes[2].container, "/dev/hisi_hdc");
	/* Host paths, never where the plugin sees them. */
	assert_int_equal(files->n_mounts, 2);
	assert_string_equal(files->mounts[0], "/usr/local/Ascend/driver/lib64");
	assert_string_equal(files->mounts[1], "/etc/ascend_install.info");
	/* Out of range is UNKNOWN's set. */
	size_t unknown;
	host_files_nodes(files, (enum npu_family)99, &unknown);
	assert_int_equal(unknown, 3);
	host_files_unref(files);
}

static void test_310b_manager_docker(void **state)
{
	struct fixture *f = *state;
	touch(f, "dev/davinci_manager_docker");
	struct host_files *files = scan(f);
	size_t n;
	const struct host_node *nodes = host_files_nodes(files, NPU_FAMILY_310B, &n);
	assert_true(n >= 1);
	assert_string_equal(nodes[0].host, "/dev/davinci_manager_docker");
	assert_string_equal(nodes[0].container, "/dev/davinci_manager");
	/* Other families keep their own node. */
	nodes = host_files_nodes(files, NPU_FAMILY_910B, &n);
	assert_string_equal(nodes[0].host, "/dev/davinci_manager");
	host_files_unref(files);
}

static void test_equal_and_change(void **state)
{
	struct fixture *f = *state;
	struct host_files *a = scan(f), *b = scan(f);
	assert_true(host_files_equal(a, b));
	assert_true(host_files_equal(NULL, NULL));
	assert_false(host_files_equal(a, NULL));

	touch(f, "dev/dvpp_cmdlist");
	drop(f, "etc/ascend_install.info");
	struct host_files *c = scan(f);
	assert_false(host_files_equal(a, c));
	char text[256];
	assert_int_equal(host_files_describe_change(a, c, text, sizeof(text)), 0);
	/* Each path once, although several families share the node. */
	assert_string_equal(text, "/dev/dvpp_cmdlist appeared, /etc/ascend_install.info went");

	char small[24];
	assert_int_equal(host_files_describe_change(a, c, small, sizeof(small)), -ENOBUFS);
	host_files_unref(a);
	host_files_unref(b);
	host_files_unref(c);
	host_files_unref(NULL);
}

static void test_shared_node_names(void **state)
{
	(void)state;
	assert_true(host_files_is_shared_node("davinci_manager"));
	assert_true(host_files_is_shared_node("davinci_manager_docker"));
	assert_true(host_files_is_shared_node("dvpp_cmdlist"));
	assert_false(host_files_is_shared_node("davinci0"));
	assert_false(host_files_is_shared_node("tty0"));
}

/* Each family once, in the order the devices give them; a value out of
 * range counts as UNKNOWN, the family whose nodes it gets. */
static void test_families(void **state)
{
	(void)state;
	static const enum npu_family given[] = { NPU_FAMILY_910B, NPU_FAMILY_310P, NPU_FAMILY_910B,
						 NPU_FAMILY_UNKNOWN, (enum npu_family)99, NPU_FAMILY_310P };
	struct npu_device devices[ELEMENTSOF(given)];
	const struct npu_device *devs[ELEMENTSOF(given)];
	for (size_t i = 0; i < ELEMENTSOF(given); i++) {
		devices[i] = (struct npu_device){ .chip = { .family = given[i] } };
		devs[i] = &devices[i];
	}
	enum npu_family families[HOST_FILES_FAMILIES];
	assert_int_equal(host_files_families(devs, ELEMENTSOF(devs), families), 3);
	assert_int_equal(families[0], NPU_FAMILY_910B);
	assert_int_equal(families[1], NPU_FAMILY_310P);
	assert_int_equal(families[2], NPU_FAMILY_UNKNOWN);
	assert_int_equal(host_files_families(devs, 0, families), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_scan, setup, teardown),
		cmocka_unit_test_setup_teardown(test_310b_manager_docker, setup, teardown),
		cmocka_unit_test_setup_teardown(test_equal_and_change, setup, teardown),
		cmocka_unit_test(test_shared_node_names),
		cmocka_unit_test(test_families),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
