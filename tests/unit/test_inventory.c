/* Health mapping and device identity in the inventory, against the DCMI
 * simulator and against device files: DCMI 0/1 Healthy; 2, 3, absent and a
 * missing node Unhealthy; a missing davinci_manager makes every chip
 * Unhealthy; IDs are npu-<phy> whatever the card and logic numbering. */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "npu/inventory.h"

struct tree {
	char root[64];
	char dev[96];
	char lib[200];
	char state[96];
};

static void put(const char *path, const char *content)
{
	FILE *f = fopen(path, "we");
	assert_non_null(f);
	fputs(content, f);
	assert_int_equal(fclose(f), 0);
}

static void dev_node(struct tree *t, const char *name)
{
	char path[160];
	snprintf(path, sizeof(path), "%s/%s", t->dev, name);
	put(path, "");
}

static void make_tree(struct tree *t)
{
	snprintf(t->root, sizeof(t->root), "/tmp/inventory-test-XXXXXX");
	assert_non_null(mkdtemp(t->root));
	snprintf(t->dev, sizeof(t->dev), "%s/dev", t->root);
	snprintf(t->state, sizeof(t->state), "%s/state", t->root);
	assert_int_equal(mkdir(t->dev, 0755), 0);
}

/* A copy under the fresh root-owned temp dir passes DCMI's ownership check
 * wherever the build tree lives. */
static void install_library(struct tree *t)
{
	snprintf(t->lib, sizeof(t->lib), "%s/libdcmi.so", t->root);
	char cmd[512];
	snprintf(cmd, sizeof(cmd), "cp '%s' '%s'", FAKE_DCMI_LIB, t->lib);
	assert_int_equal(system(cmd), 0);
}

static void remove_tree(struct tree *t)
{
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", t->root);
	assert_int_equal(system(cmd), 0);
}

static const struct npu_device *find(const struct npu_snapshot *s, const char *id)
{
	const struct npu_device *d = npu_snapshot_find(s, id);
	if (!d)
		fail_msg("%s is not listed", id);
	return d;
}

static void test_dcmi_health_mapping(void **state)
{
	(void)state;
	struct tree t;
	make_tree(&t);
	put(t.state, "chip phy=0 card=4 logic=3 health=0\n"
		     "chip phy=1 card=5 logic=2 health=1\n"
		     "chip phy=2 card=6 logic=1 health=2 errors=80E01801,80E18402\n"
		     "chip phy=3 card=7 logic=0 health=3\n"
		     "chip phy=5 card=9 logic=5 health=absent\n"
		     "chip phy=6 card=10 logic=6 health=0\n");
	setenv("ASCEND_FAKE_DCMI_STATE", t.state, 1);
	install_library(&t);
	for (int i = 0; i <= 6; i++) {
		char name[16];
		snprintf(name, sizeof(name), "davinci%d", i);
		if (i != 6) /* davinci6 is missing on purpose */
			dev_node(&t, name);
	}
	dev_node(&t, "davinci_manager");

	struct inventory *inv;
	const struct inventory_options o = {
		.backend = NPU_BACKEND_DCMI,
		.dcmi = { .explicit_path = t.lib, .host_root = "/", .driver_path = "/none" },
		.dev_dir = t.dev,
	};
	assert_int_equal(inventory_new(&o, &inv), 0);
	bool changed = false;
	assert_int_equal(inventory_refresh(inv, &changed), 0);
	assert_true(changed);
	assert_int_equal(inventory_status(inv)->source, INVENTORY_SOURCE_DCMI);
	assert_true(inventory_status(inv)->driver_ready);

	struct npu_snapshot *s = inventory_snapshot(inv);
	assert_int_equal(s->count, 6);
	assert_int_equal(s->healthy, 2);
	/* Sorted by phy id, named by it. */
	assert_string_equal(s->devices[0].id, "npu-0");
	assert_string_equal(s->devices[5].id, "npu-6");
	assert_true(find(s, "npu-0")->healthy);
	assert_true(find(s, "npu-1")->healthy);

	const struct npu_device *d = find(s, "npu-2");
	assert_false(d->healthy);
	assert_int_equal(d->fault, NPU_FAULT_HEALTH_LEVEL);
	assert_int_equal(d->n_fault_codes, 2);
	assert_int_equal(d->fault_codes[0], 0x80E01801);
	char why[256];
	npu_device_describe(d, why, sizeof(why));
	assert_string_equal(why, "DCMI health 2 (major), error codes 80E01801,80E18402");

	assert_int_equal(find(s, "npu-3")->fault, NPU_FAULT_HEALTH_LEVEL);
	assert_int_equal(find(s, "npu-5")->fault, NPU_FAULT_ABSENT);
	assert_int_equal(find(s, "npu-6")->fault, NPU_FAULT_NODE_MISSING);
	assert_null(npu_snapshot_find(s, "npu-4"));
	npu_snapshot_unref(s);

	/* Nothing changed: a refresh reports no change. */
	assert_int_equal(inventory_refresh(inv, &changed), 0);
	assert_false(changed);

	/* Without davinci_manager every chip is Unhealthy. */
	char manager[128];
	snprintf(manager, sizeof(manager), "%s/davinci_manager", t.dev);
	assert_int_equal(unlink(manager), 0);
	assert_int_equal(inventory_refresh(inv, &changed), 0);
	assert_true(changed);
	assert_false(inventory_status(inv)->driver_ready);
	s = inventory_snapshot(inv);
	assert_int_equal(s->healthy, 0);
	assert_int_equal(find(s, "npu-0")->fault, NPU_FAULT_DRIVER_NOT_READY);
	npu_snapshot_unref(s);

	inventory_free(inv);
	remove_tree(&t);
}

static void test_devfs_health_is_node_presence(void **state)
{
	(void)state;
	struct tree t;
	make_tree(&t);
	dev_node(&t, "davinci0");
	dev_node(&t, "davinci3");
	dev_node(&t, "davinci_manager");

	struct inventory *inv;
	const struct inventory_options o = { .backend = NPU_BACKEND_DEVFS, .dev_dir = t.dev };
	assert_int_equal(inventory_new(&o, &inv), 0);
	bool changed;
	assert_int_equal(inventory_refresh(inv, &changed), 0);
	struct npu_snapshot *s = inventory_snapshot(inv);
	assert_int_equal(s->count, 2);
	assert_int_equal(s->healthy, 2);
	npu_snapshot_unref(s);

	/* A vanished node stays listed as Unhealthy until forgotten. */
	char node[128];
	snprintf(node, sizeof(node), "%s/davinci3", t.dev);
	assert_int_equal(unlink(node), 0);
	assert_int_equal(inventory_refresh(inv, &changed), 0);
	assert_true(changed);
	s = inventory_snapshot(inv);
	assert_int_equal(s->count, 2);
	assert_int_equal(find(s, "npu-3")->fault, NPU_FAULT_NODE_MISSING);
	npu_snapshot_unref(s);

	inventory_forget(inv);
	assert_int_equal(inventory_refresh(inv, &changed), 0);
	s = inventory_snapshot(inv);
	assert_int_equal(s->count, 1);
	assert_string_equal(s->devices[0].id, "npu-0");
	npu_snapshot_unref(s);

	inventory_free(inv);
	remove_tree(&t);
}

static void test_dcmi_mode_without_library(void **state)
{
	(void)state;
	struct tree t;
	make_tree(&t);
	dev_node(&t, "davinci0");
	struct inventory *inv;
	const struct inventory_options o = {
		.backend = NPU_BACKEND_DCMI,
		.dcmi = { .explicit_path = "/nonexistent/libdcmi.so", .host_root = "/", .driver_path = "/none" },
		.dev_dir = t.dev,
	};
	assert_int_equal(inventory_new(&o, &inv), 0);
	bool changed;
	assert_int_equal(inventory_refresh(inv, &changed), 0);
	const struct inventory_status *st = inventory_status(inv);
	assert_int_equal(st->source, INVENTORY_SOURCE_NONE);
	assert_int_equal(st->dcmi_open_error, -ENOENT);
	assert_non_null(strstr(st->dcmi_why, "/nonexistent/libdcmi.so"));
	struct npu_snapshot *s = inventory_snapshot(inv);
	assert_int_equal(s->count, 0);
	npu_snapshot_unref(s);
	inventory_free(inv);
	remove_tree(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_dcmi_health_mapping),
		cmocka_unit_test(test_devfs_health_is_node_presence),
		cmocka_unit_test(test_dcmi_mode_without_library),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
