/* SPDX-License-Identifier: Apache-2.0 */
/* Allocate responses built straight from a snapshot, for what the simulated
 * node of the integration tests does not reach: the 310B boards' device
 * nodes and their docker-specific davinci_manager; and the answer of each
 * device-list strategy and of their combinations. */
#include <setjmp.h>
#include <stdarg.h>
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "deviceplugin.pb-c.h"
#include "plugin/allocate.h"
#include "node/cdi.h"
#include "support/tmpdir.h"

static char root[64];
static char dev[96];

/* A new root with an empty dev under it. */
static void make_tree(void)
{
	assert_int_equal(tmpdir_make(root, sizeof(root), "allocate-unit"), 0);
	snprintf(dev, sizeof(dev), "%s/dev", root);
	assert_int_equal(mkdir(dev, 0755), 0);
}

static void remove_tree(void)
{
	assert_int_equal(tmpdir_remove(root), 0);
}

static void touch(const char *name)
{
	char path[160];
	snprintf(path, sizeof(path), "%s/%s", dev, name);
	FILE *f = fopen(path, "we");
	assert_non_null(f);
	fclose(f);
}

static struct npu_snapshot *snapshot_310b(void)
{
	struct npu_snapshot *s = npu_snapshot_new(1);
	assert_non_null(s);
	s->healthy = 1;
	snprintf(s->devices[0].id, sizeof(s->devices[0].id), "npu-0");
	s->devices[0].chip.family = NPU_FAMILY_310B;
	s->devices[0].healthy = true;
	return s;
}

/* Answers an Allocate of one container asking for ids, with the shared
 * nodes and driver paths found under the fixture's tree (driver_path: the
 * driver's host path); fails the test unless it is OK with one answer. */
static V1beta1__AllocateResponse *answer(const struct npu_snapshot *snap, char **ids, size_t n,
					 const struct allocate_options *options, const char *driver_path)
{
	V1beta1__ContainerAllocateRequest container;
	v1beta1__container_allocate_request__init(&container);
	container.n_devices_ids = n;
	container.devices_ids = ids;
	V1beta1__ContainerAllocateRequest *containers[] = { &container };
	V1beta1__AllocateRequest req;
	v1beta1__allocate_request__init(&req);
	req.n_container_requests = 1;
	req.container_requests = containers;
	uint8_t buf[256];
	size_t len = v1beta1__allocate_request__pack(&req, buf);

	struct host_files *files;
	assert_int_equal(
		host_files_scan(&(struct host_paths){ .dev_dir = dev, .host_root = root, .driver_path = driver_path }, &files),
		0);
	uint8_t *body = NULL;
	size_t body_len = 0;
	char details[512];
	assert_int_equal(allocate_answer(snap, files, options, buf, len, &body, &body_len, details, sizeof(details)),
			 GRPC_STATUS_OK);
	host_files_unref(files);
	V1beta1__AllocateResponse *resp = v1beta1__allocate_response__unpack(NULL, body_len, body);
	free(body);
	assert_non_null(resp);
	assert_int_equal(resp->n_container_responses, 1);
	return resp;
}

static V1beta1__AllocateResponse *allocate(const struct npu_snapshot *snap)
{
	char id[] = "npu-0";
	char *ids[] = { id };
	const struct allocate_options options = { 0 };
	return answer(snap, ids, 1, &options, "/none");
}

static const V1beta1__DeviceSpec *find_spec(const V1beta1__ContainerAllocateResponse *c, const char *container_path)
{
	for (size_t i = 0; i < c->n_devices; i++)
		if (strcmp(c->devices[i]->container_path, container_path) == 0)
			return c->devices[i];
	return NULL;
}

static void test_310b_nodes_and_docker_manager(void **state)
{
	(void)state;
	make_tree();
	touch("davinci0");
	touch("davinci_manager");
	touch("svm0");
	touch("ts_aisle");
	touch("vdec");
	touch("devmm_svm"); /* present on the host, but not a 310B node */

	struct npu_snapshot *snap = snapshot_310b();
	V1beta1__AllocateResponse *resp = allocate(snap);
	const V1beta1__ContainerAllocateResponse *c = resp->container_responses[0];
	assert_non_null(find_spec(c, "/dev/davinci0"));
	assert_non_null(find_spec(c, "/dev/svm0"));
	assert_non_null(find_spec(c, "/dev/ts_aisle"));
	assert_non_null(find_spec(c, "/dev/vdec"));
	assert_null(find_spec(c, "/dev/venc")); /* not on this host */
	assert_null(find_spec(c, "/dev/devmm_svm"));
	const V1beta1__DeviceSpec *manager = find_spec(c, "/dev/davinci_manager");
	assert_non_null(manager);
	assert_string_equal(manager->host_path, "/dev/davinci_manager");
	v1beta1__allocate_response__free_unpacked(resp, NULL);

	/* With the docker-specific manager present, it takes the usual name inside. */
	touch("davinci_manager_docker");
	resp = allocate(snap);
	c = resp->container_responses[0];
	manager = find_spec(c, "/dev/davinci_manager");
	assert_non_null(manager);
	assert_string_equal(manager->host_path, "/dev/davinci_manager_docker");
	v1beta1__allocate_response__free_unpacked(resp, NULL);

	npu_snapshot_unref(snap);
	remove_tree();
}

/* --- device-list strategies ------------------------------------------------ */

/* Whether allocate_with asks for vNPUs 132 and 100 (of chips 2 and 0) instead. */
static bool use_vnpus;
/* Whether allocate_with's chips have a network identity: chip 0 an address
 * and its link up, chip 2 an IPv6 address and its link down. */
static bool use_network;

/* One container asking for npu-2 and npu-0 (the answer sorts them). */
static V1beta1__ContainerAllocateResponse *allocate_with(unsigned strategies, V1beta1__AllocateResponse **ret_resp)
{
	static struct cdi_names cdi;
	char why[128];
	assert_int_equal(cdi_names_from_resource("ascend.com/npu", &cdi, why, sizeof(why)), 0);

	struct npu_snapshot *snap = npu_snapshot_new(3);
	assert_non_null(snap);
	for (uint32_t i = 0; i < 3; i++) {
		struct npu_device *d = &snap->devices[i];
		d->chip.phy_id = i;
		d->chip.family = NPU_FAMILY_910B;
		d->healthy = true;
		if (use_vnpus) {
			d->kind = NPU_DEVICE_VNPU;
			d->vnpu = (struct npu_vnpu){ .id = 100 + 16 * i, .phy_id = i, .template_name = "vir04" };
			snprintf(d->id, sizeof(d->id), "vnpu-%u", d->vnpu.id);
		} else {
			snprintf(d->id, sizeof(d->id), "npu-%u", i);
		}
	}
	if (use_network) {
		snap->devices[0].net = (struct npu_net){ .has_ip = true, .ip = { 192, 168, 1, 10 }, .prefix_len = 24,
							 .link = NPU_LINK_UP };
		snap->devices[2].net = (struct npu_net){ .has_ip = true, .ipv6 = true, .ip = { 0xfd, [15] = 2 },
							 .prefix_len = 64, .link = NPU_LINK_DOWN };
	}
	snap->healthy = 3;

	char id2[16], id0[16];
	snprintf(id2, sizeof(id2), "%s", use_vnpus ? "vnpu-132" : "npu-2");
	snprintf(id0, sizeof(id0), "%s", use_vnpus ? "vnpu-100" : "npu-0");
	char *ids[] = { id2, id0 };
	const struct allocate_options options = {
		.strategies = strategies,
		.cdi = &cdi,
	};
	V1beta1__AllocateResponse *resp = answer(snap, ids, 2, &options, "/driver");
	npu_snapshot_unref(snap);
	*ret_resp = resp;
	return resp->container_responses[0];
}

static int strategies_setup(void **state)
{
	(void)state;
	make_tree();
	touch("davinci0");
	touch("davinci2");
	touch("davinci_manager");
	touch("devmm_svm");
	touch("hisi_hdc");
	char path[160];
	snprintf(path, sizeof(path), "%s/driver", root);
	assert_int_equal(mkdir(path, 0755), 0);
	snprintf(path, sizeof(path), "%s/driver/lib64", root);
	assert_int_equal(mkdir(path, 0755), 0);
	return 0;
}

static int strategies_teardown(void **state)
{
	(void)state;
	remove_tree();
	return 0;
}

static void expect_env_only_visible(const V1beta1__ContainerAllocateResponse *c)
{
	assert_int_equal(c->n_envs, 2);
	assert_string_equal(c->envs[0]->key, "ASCEND_VISIBLE_DEVICES");
	assert_string_equal(c->envs[0]->value, "0,2");
	/* Inside the container CANN numbers the two chips 0 and 1. */
	assert_string_equal(c->envs[1]->key, "ASCEND_RT_VISIBLE_DEVICES");
	assert_string_equal(c->envs[1]->value, "0,1");
}

static void expect_native(const V1beta1__ContainerAllocateResponse *c)
{
	/* davinci0, davinci2, davinci_manager, devmm_svm, hisi_hdc */
	assert_int_equal(c->n_devices, 5);
	assert_non_null(find_spec(c, "/dev/davinci0"));
	assert_non_null(find_spec(c, "/dev/davinci2"));
	assert_non_null(find_spec(c, "/dev/hisi_hdc"));
	assert_int_equal(c->n_mounts, 1);
	assert_string_equal(c->mounts[0]->host_path, "/driver/lib64");
	assert_true(c->mounts[0]->read_only);
}

static void expect_cdi(const V1beta1__ContainerAllocateResponse *c)
{
	assert_int_equal(c->n_cdi_devices, 2);
	assert_string_equal(c->cdi_devices[0]->name, "ascend.com/npu=0");
	assert_string_equal(c->cdi_devices[1]->name, "ascend.com/npu=2");
	assert_int_equal(c->n_annotations, 1);
	assert_string_equal(c->annotations[0]->key, "cdi.k8s.io/ascend.com_npu");
	assert_string_equal(c->annotations[0]->value, "ascend.com/npu=0,ascend.com/npu=2");
}

/* Neither the native strategy's device nodes and mounts ... */
static void expect_no_native(const V1beta1__ContainerAllocateResponse *c)
{
	assert_int_equal(c->n_devices, 0);
	assert_int_equal(c->n_mounts, 0);
}

/* ... nor CDI's names and annotation. */
static void expect_no_cdi(const V1beta1__ContainerAllocateResponse *c)
{
	assert_int_equal(c->n_cdi_devices, 0);
	assert_int_equal(c->n_annotations, 0);
}

static void test_strategy_native(void **state)
{
	(void)state;
	V1beta1__AllocateResponse *resp;
	const V1beta1__ContainerAllocateResponse *c = allocate_with(ALLOCATE_STRATEGY_NATIVE, &resp);
	expect_native(c);
	expect_env_only_visible(c);
	expect_no_cdi(c);
	v1beta1__allocate_response__free_unpacked(resp, NULL);

	/* No strategy at all answers as native. */
	c = allocate_with(0, &resp);
	expect_native(c);
	assert_int_equal(c->n_cdi_devices, 0);
	v1beta1__allocate_response__free_unpacked(resp, NULL);
}

static void test_strategy_ascend_runtime(void **state)
{
	(void)state;
	V1beta1__AllocateResponse *resp;
	const V1beta1__ContainerAllocateResponse *c = allocate_with(ALLOCATE_STRATEGY_ASCEND_RUNTIME, &resp);
	expect_env_only_visible(c);
	expect_no_native(c);
	expect_no_cdi(c);
	v1beta1__allocate_response__free_unpacked(resp, NULL);
}

static void test_strategy_cdi(void **state)
{
	(void)state;
	V1beta1__AllocateResponse *resp;
	const V1beta1__ContainerAllocateResponse *c = allocate_with(ALLOCATE_STRATEGY_CDI, &resp);
	expect_cdi(c);
	expect_env_only_visible(c);
	expect_no_native(c);
	v1beta1__allocate_response__free_unpacked(resp, NULL);
}

/* vNPUs: /dev/vdavinci<id> seen as /dev/davinci<id>, their ids visible,
 * VIRTUAL for the Ascend Docker Runtime, CDI names vnpu-<id>. */
static void test_vnpus(void **state)
{
	(void)state;
	touch("vdavinci100");
	touch("vdavinci132");
	use_vnpus = true;
	V1beta1__AllocateResponse *resp;
	const V1beta1__ContainerAllocateResponse *c = allocate_with(ALLOCATE_STRATEGY_NATIVE, &resp);
	const V1beta1__DeviceSpec *spec = find_spec(c, "/dev/davinci100");
	assert_non_null(spec);
	assert_string_equal(spec->host_path, "/dev/vdavinci100");
	assert_string_equal(find_spec(c, "/dev/davinci132")->host_path, "/dev/vdavinci132");
	assert_non_null(find_spec(c, "/dev/davinci_manager"));
	assert_int_equal(c->n_envs, 2);
	assert_string_equal(c->envs[0]->value, "100,132");
	assert_string_equal(c->envs[1]->value, "0,1");
	v1beta1__allocate_response__free_unpacked(resp, NULL);

	c = allocate_with(ALLOCATE_STRATEGY_ASCEND_RUNTIME, &resp);
	assert_int_equal(c->n_devices, 0);
	assert_int_equal(c->n_envs, 3);
	assert_string_equal(c->envs[0]->key, "ASCEND_VISIBLE_DEVICES");
	assert_string_equal(c->envs[0]->value, "100,132");
	assert_string_equal(c->envs[1]->key, "ASCEND_RUNTIME_OPTIONS");
	assert_string_equal(c->envs[1]->value, "VIRTUAL");
	v1beta1__allocate_response__free_unpacked(resp, NULL);

	c = allocate_with(ALLOCATE_STRATEGY_CDI, &resp);
	assert_int_equal(c->n_cdi_devices, 2);
	assert_string_equal(c->cdi_devices[0]->name, "ascend.com/npu=vnpu-100");
	assert_string_equal(c->annotations[0]->value, "ascend.com/npu=vnpu-100,ascend.com/npu=vnpu-132");
	v1beta1__allocate_response__free_unpacked(resp, NULL);
	use_vnpus = false;
}

/* The chips' network identity reaches the container in ASCEND_NPU_NETWORK,
 * in the devices' order, whatever the strategy; chips without one leave the
 * variable out (the tests above). */
static void test_network_identity(void **state)
{
	(void)state;
	use_network = true;
	static const char want[] = "[{\"device_id\":0,\"family\":\"910B\",\"device_ip\":\"192.168.1.10\",\"prefix_len\":24,\"link\":\"up\"},"
				   "{\"device_id\":2,\"family\":\"910B\",\"device_ip\":\"fd00::2\",\"prefix_len\":64,\"link\":\"down\"}]";
	const unsigned strategies[] = { ALLOCATE_STRATEGY_NATIVE, ALLOCATE_STRATEGY_ASCEND_RUNTIME,
					ALLOCATE_STRATEGY_CDI };
	for (size_t k = 0; k < sizeof(strategies) / sizeof(strategies[0]); k++) {
		V1beta1__AllocateResponse *resp;
		const V1beta1__ContainerAllocateResponse *c = allocate_with(strategies[k], &resp);
		assert_int_equal(c->n_envs, 3);
		assert_string_equal(c->envs[0]->value, "0,2");
		assert_string_equal(c->envs[1]->key, "ASCEND_NPU_NETWORK");
		assert_string_equal(c->envs[1]->value, want);
		v1beta1__allocate_response__free_unpacked(resp, NULL);
	}
	use_network = false;
}

/* A list answers with the union of its strategies' answers, the shared
 * variable once. */
static void test_strategy_union(void **state)
{
	(void)state;
	V1beta1__AllocateResponse *resp;
	const V1beta1__ContainerAllocateResponse *c =
		allocate_with(ALLOCATE_STRATEGY_NATIVE | ALLOCATE_STRATEGY_CDI, &resp);
	expect_native(c);
	expect_cdi(c);
	expect_env_only_visible(c);
	v1beta1__allocate_response__free_unpacked(resp, NULL);

	c = allocate_with(ALLOCATE_STRATEGY_NATIVE | ALLOCATE_STRATEGY_ASCEND_RUNTIME | ALLOCATE_STRATEGY_CDI, &resp);
	expect_native(c);
	expect_cdi(c);
	expect_env_only_visible(c);
	v1beta1__allocate_response__free_unpacked(resp, NULL);

	c = allocate_with(ALLOCATE_STRATEGY_ASCEND_RUNTIME | ALLOCATE_STRATEGY_CDI, &resp);
	expect_cdi(c);
	expect_env_only_visible(c);
	expect_no_native(c);
	v1beta1__allocate_response__free_unpacked(resp, NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_310b_nodes_and_docker_manager),
		cmocka_unit_test_setup_teardown(test_strategy_native, strategies_setup, strategies_teardown),
		cmocka_unit_test_setup_teardown(test_strategy_ascend_runtime, strategies_setup, strategies_teardown),
		cmocka_unit_test_setup_teardown(test_strategy_cdi, strategies_setup, strategies_teardown),
		cmocka_unit_test_setup_teardown(test_vnpus, strategies_setup, strategies_teardown),
		cmocka_unit_test_setup_teardown(test_strategy_union, strategies_setup, strategies_teardown),
		cmocka_unit_test_setup_teardown(test_network_identity, strategies_setup, strategies_teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
