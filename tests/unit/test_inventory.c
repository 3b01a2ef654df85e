/* SPDX-License-Identifier: Apache-2.0 */
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
#include <grp.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "npu/inventory.h"
#include "support/tmpdir.h"

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
	assert_int_equal(tmpdir_make(t->root, sizeof(t->root), "inventory-test"), 0);
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
	assert_int_equal(tmpdir_remove(t->root), 0);
}

/* The simulator's state text for t, and the library installed in t. */
static void dcmi_with_state(struct tree *t, const char *state_text)
{
	put(t->state, state_text);
	setenv("ASCEND_FAKE_DCMI_STATE", t->state, 1);
	install_library(t);
}

/* A DCMI inventory over dev_dir of the library installed in t. */
static struct inventory *dcmi_inventory(struct tree *t, const char *dev_dir)
{
	struct inventory *inv;
	const struct inventory_options o = {
		.backend = NPU_BACKEND_DCMI,
		.dcmi = { .explicit_path = t->lib, .host_root = "/", .driver_path = "/none" },
		.dev_dir = dev_dir,
	};
	assert_int_equal(inventory_new(&o, &inv), 0);
	return inv;
}

/* Removes the file name of t's dev dir. */
static void dev_node_remove(struct tree *t, const char *name)
{
	char path[160];
	snprintf(path, sizeof(path), "%s/%s", t->dev, name);
	assert_int_equal(unlink(path), 0);
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
	dcmi_with_state(&t, "chip phy=0 card=4 logic=3 health=0\n"
			    "chip phy=1 card=5 logic=2 health=1\n"
			    "chip phy=2 card=6 logic=1 health=2 errors=80E01801,80E18402\n"
			    "chip phy=3 card=7 logic=0 health=3\n"
			    "chip phy=5 card=9 logic=5 health=absent\n"
			    "chip phy=6 card=10 logic=6 health=0\n");
	for (int i = 0; i <= 6; i++) {
		char name[16];
		snprintf(name, sizeof(name), "davinci%d", i);
		if (i != 6) /* davinci6 is missing on purpose */
			dev_node(&t, name);
	}
	dev_node(&t, "davinci_manager");

	struct inventory *inv = dcmi_inventory(&t, t.dev);
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
	dev_node_remove(&t, "davinci_manager");
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

/* Each chip's network identity rides in the snapshot: a link going down
 * changes the snapshot but not the chip's health; a failing call keeps
 * what was read; a chip DCMI has none for has none. */
static void test_network_identity(void **state)
{
	(void)state;
	struct tree t;
	make_tree(&t);
	dcmi_with_state(&t, "chip phy=0 ip=192.168.1.8/24 link=up\n"
			    "chip phy=1 board=0xb1 ip=192.168.1.9/24 link=up super_pod=2 sdid=17 server_index=1\n"
			    "chip phy=2 name=310P3\n");
	dev_node(&t, "davinci0");
	dev_node(&t, "davinci1");
	dev_node(&t, "davinci2");
	dev_node(&t, "davinci_manager");
	struct inventory *inv = dcmi_inventory(&t, t.dev);
	bool changed = false;
	assert_int_equal(inventory_refresh(inv, &changed), 0);
	struct npu_snapshot *s = inventory_snapshot(inv);
	const struct npu_net *n0 = &find(s, "npu-0")->net, *n1 = &find(s, "npu-1")->net, *n2 = &find(s, "npu-2")->net;
	assert_true(n0->has_ip);
	assert_memory_equal(n0->ip, ((uint8_t[]){ 192, 168, 1, 8 }), 4);
	assert_int_equal(n0->prefix_len, 24);
	assert_int_equal(n0->link, NPU_LINK_UP);
	assert_false(n0->has_super_pod);
	assert_true(n1->has_super_pod);
	assert_int_equal(n1->sdid, 17);
	assert_int_equal(n1->super_pod_id, 2);
	assert_int_equal(n1->server_index, 1);
	assert_false(n2->has_ip);
	assert_int_equal(n2->link, NPU_LINK_UNKNOWN);
	assert_false(n2->has_super_pod);
	npu_snapshot_unref(s);

	/* The link of chip 0 goes down; chip 1's address call starts failing. */
	put(t.state, "chip phy=0 ip=192.168.1.8/24 link=down\n"
		     "chip phy=1 board=0xb1 ip=192.168.1.9/24 link=up super_pod=2 sdid=17 server_index=1 fail=ip\n"
		     "chip phy=2 name=310P3\n");
	assert_int_equal(inventory_refresh(inv, &changed), 0);
	assert_true(changed);
	s = inventory_snapshot(inv);
	assert_int_equal(find(s, "npu-0")->net.link, NPU_LINK_DOWN);
	assert_true(find(s, "npu-0")->healthy);
	assert_int_equal(s->healthy, 3);
	assert_true(find(s, "npu-1")->net.has_ip);
	assert_int_equal(find(s, "npu-1")->net.ip[3], 9);
	assert_true(find(s, "npu-1")->net.has_super_pod);
	npu_snapshot_unref(s);

	/* A new address is taken at the next refresh. */
	put(t.state, "chip phy=0 ip=10.9.8.7/16 link=up\n"
		     "chip phy=1 board=0xb1 ip=192.168.1.9/24 link=up super_pod=2 sdid=17 server_index=1\n"
		     "chip phy=2 name=310P3\n");
	assert_int_equal(inventory_refresh(inv, &changed), 0);
	assert_true(changed);
	s = inventory_snapshot(inv);
	assert_memory_equal(find(s, "npu-0")->net.ip, ((uint8_t[]){ 10, 9, 8, 7 }), 4);
	assert_int_equal(find(s, "npu-0")->net.prefix_len, 16);
	npu_snapshot_unref(s);
	assert_int_equal(inventory_refresh(inv, &changed), 0);
	assert_false(changed);

	inventory_free(inv);
	remove_tree(&t);
}

/* vNPUs: from DCMI with their template, from their node without; the chip
 * they come from counts them; their health is their chip's and their node's. */
static void test_vnpus(void **state)
{
	(void)state;
	struct tree t;
	make_tree(&t);
	dcmi_with_state(&t, "chip phy=0 card=0 name=310P3 health=0\n"
			    "chip phy=1 card=1 name=310P3 health=2\n"
			    "chip phy=2 card=2 name=310P3 health=0\n"
			    "vnpu id=100 phy=0 template=vir04_3c\n"
			    "vnpu id=101 phy=0 template=vir02\n"
			    "vnpu id=116 phy=1 template=vir02\n");
	static const char *const nodes[] = { "davinci0", "davinci1", "davinci2", "davinci_manager",
					     "vdavinci100", "vdavinci116", "vdavinci132" };
	for (size_t i = 0; i < sizeof(nodes) / sizeof(nodes[0]); i++)
		dev_node(&t, nodes[i]);

	struct inventory *inv = dcmi_inventory(&t, t.dev);
	bool changed = false;
	assert_int_equal(inventory_refresh(inv, &changed), 0);
	struct npu_snapshot *s = inventory_snapshot(inv);
	/* The chips by phy, then the vNPUs by id. */
	assert_int_equal(s->count, 7);
	static const char *const ids[] = { "npu-0", "npu-1", "npu-2", "vnpu-100", "vnpu-101", "vnpu-116", "vnpu-132" };
	for (size_t i = 0; i < 7; i++)
		assert_string_equal(s->devices[i].id, ids[i]);
	assert_int_equal(find(s, "npu-0")->vnpu_count, 2);
	assert_int_equal(find(s, "npu-1")->vnpu_count, 1);
	assert_int_equal(find(s, "npu-2")->vnpu_count, 1);

	const struct npu_device *v = find(s, "vnpu-100");
	assert_int_equal(v->kind, NPU_DEVICE_VNPU);
	assert_int_equal(v->vnpu.id, 100);
	assert_int_equal(v->chip.phy_id, 0);
	assert_string_equal(v->vnpu.template_name, "vir04_3c");
	assert_true(v->healthy);
	assert_int_equal(npu_device_number(v), 100);
	/* DCMI lists it, its node is missing. */
	v = find(s, "vnpu-101");
	assert_false(v->healthy);
	assert_int_equal(v->fault, NPU_FAULT_NODE_MISSING);
	char why[128];
	npu_device_describe(v, why, sizeof(why));
	assert_string_equal(why, "device node vdavinci101 missing");
	/* Its chip is major-faulty. */
	v = find(s, "vnpu-116");
	assert_false(v->healthy);
	assert_int_equal(v->fault, NPU_FAULT_HEALTH_LEVEL);
	/* Only its node: no template. */
	v = find(s, "vnpu-132");
	assert_true(v->healthy);
	assert_string_equal(v->vnpu.template_name, "");
	assert_int_equal(v->chip.phy_id, 2);
	npu_snapshot_unref(s);

	/* DCMI forgets vnpu-100 but its node stays: the template read before is kept. */
	put(t.state, "chip phy=0 card=0 name=310P3 health=0\n"
		     "chip phy=1 card=1 name=310P3 health=2\n"
		     "chip phy=2 card=2 name=310P3 health=0\n");
	assert_int_equal(inventory_refresh(inv, &changed), 0);
	s = inventory_snapshot(inv);
	assert_string_equal(find(s, "vnpu-100")->vnpu.template_name, "vir04_3c");
	assert_null(npu_snapshot_find(s, "vnpu-101"));
	npu_snapshot_unref(s);
	/* ... and across a rediscovery (SIGHUP). */
	inventory_rediscover(inv);
	assert_int_equal(inventory_refresh(inv, &changed), 0);
	s = inventory_snapshot(inv);
	assert_string_equal(find(s, "vnpu-100")->vnpu.template_name, "vir04_3c");
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
	dev_node_remove(&t, "davinci3");
	assert_int_equal(inventory_refresh(inv, &changed), 0);
	assert_true(changed);
	s = inventory_snapshot(inv);
	assert_int_equal(s->count, 2);
	assert_int_equal(find(s, "npu-3")->fault, NPU_FAULT_NODE_MISSING);
	npu_snapshot_unref(s);

	inventory_rediscover(inv);
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

/* What an unreadable dev dir looks like; 0 when it is reported as itself,
 * else which check failed (this runs in a child without cmocka). */
static int judge_unreadable(struct inventory *inv, int want_errno)
{
	bool changed;
	if (inventory_refresh(inv, &changed) < 0)
		return 10;
	const struct inventory_status *st = inventory_status(inv);
	if (st->source != INVENTORY_SOURCE_DCMI)
		return 11;
	if (st->driver_ready)
		return 12;
	if (st->devfs_error != -want_errno)
		return 13;
	struct npu_snapshot *s = inventory_snapshot(inv);
	int r = 0;
	char why[256], want[256];
	snprintf(want, sizeof(want), "driver state unknown (cannot check davinci_manager: %s)", strerror(want_errno));
	if (s->count != 2 || s->healthy != 0)
		r = 14;
	else if (s->devices[0].fault != NPU_FAULT_DRIVER_NOT_READY || s->devices[0].dev_error != -want_errno)
		r = 15;
	else if (npu_device_describe(&s->devices[0], why, sizeof(why)), strcmp(why, want) != 0)
		r = 16;
	npu_snapshot_unref(s);
	return r;
}

/* A dev dir whose davinci_manager cannot be checked is reported with the
 * real errno, not as a driver that is not loaded. Root passes mode bits, so
 * the permission case runs in a child that drops to nobody; ENOTDIR (the
 * dev dir is a file) fails for root too. */
static void test_unreadable_dev_dir_is_not_a_missing_manager(void **state)
{
	(void)state;
	struct tree t;
	make_tree(&t);
	dcmi_with_state(&t, "chip phy=0 health=0\nchip phy=1 health=0\n");
	dev_node(&t, "davinci0");
	dev_node(&t, "davinci1");
	dev_node(&t, "davinci_manager");

	/* ENOTDIR, in this process. */
	char file[128];
	snprintf(file, sizeof(file), "%s/not-a-dir", t.root);
	put(file, "");
	struct inventory *inv = dcmi_inventory(&t, file);
	assert_int_equal(judge_unreadable(inv, ENOTDIR), 0);
	inventory_free(inv);

	/* EACCES: the dev dir is root's and 0700, the inventory runs as nobody. */
	assert_int_equal(chmod(t.root, 0755), 0);
	assert_int_equal(chmod(t.dev, 0700), 0);
	inv = dcmi_inventory(&t, t.dev);
	/* DCMI is loaded here, before the fork: the child must start no thread.
	 * It has none for DCMI calls either (a fork copies only the caller's):
	 * its card list call gives up at its deadline, which changes nothing
	 * this test looks at. */
	bool loaded;
	assert_int_equal(inventory_refresh(inv, &loaded), 0);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		if (geteuid() == 0 && (setgroups(0, NULL) < 0 || setresgid(65534, 65534, 65534) < 0 ||
				       setresuid(65534, 65534, 65534) < 0))
			_exit(20);
		_exit(judge_unreadable(inv, EACCES));
	}
	int status;
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);

	/* As root here the same tree is ready: the errno was the reason. */
	bool changed;
	assert_int_equal(inventory_refresh(inv, &changed), 0);
	if (geteuid() == 0) {
		assert_true(inventory_status(inv)->driver_ready);
		assert_int_equal(inventory_status(inv)->devfs_error, 0);
	}
	inventory_free(inv);
	remove_tree(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_dcmi_health_mapping),
		cmocka_unit_test(test_vnpus),
		cmocka_unit_test(test_network_identity),
		cmocka_unit_test(test_devfs_health_is_node_presence),
		cmocka_unit_test(test_dcmi_mode_without_library),
		cmocka_unit_test(test_unreadable_dev_dir_is_not_a_missing_manager),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
