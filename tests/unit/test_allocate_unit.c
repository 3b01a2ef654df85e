/* SPDX-License-Identifier: Apache-2.0 */
/* Allocate responses built straight from a snapshot, for what the simulated
 * node of the integration tests does not reach: the 310B boards' device
 * nodes and their docker-specific davinci_manager. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "deviceplugin.pb-c.h"
#include "plugin/allocate.h"

static char root[64];
static char dev[96];

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

static V1beta1__AllocateResponse *allocate(const struct npu_snapshot *snap)
{
	V1beta1__ContainerAllocateRequest container;
	v1beta1__container_allocate_request__init(&container);
	char id[] = "npu-0";
	char *ids[] = { id };
	container.n_devices_ids = 1;
	container.devices_ids = ids;
	V1beta1__ContainerAllocateRequest *containers[] = { &container };
	V1beta1__AllocateRequest req;
	v1beta1__allocate_request__init(&req);
	req.n_container_requests = 1;
	req.container_requests = containers;
	uint8_t buf[256];
	size_t len = v1beta1__allocate_request__pack(&req, buf);

	const struct allocate_paths paths = { .dev_dir = dev, .host_root = root, .driver_path = "/none" };
	uint8_t *body = NULL;
	size_t body_len = 0;
	char details[512];
	assert_int_equal(allocate_answer(snap, &paths, buf, len, &body, &body_len, details, sizeof(details)),
			 GRPC_STATUS_OK);
	V1beta1__AllocateResponse *resp = v1beta1__allocate_response__unpack(NULL, body_len, body);
	free(body);
	assert_non_null(resp);
	assert_int_equal(resp->n_container_responses, 1);
	return resp;
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
	snprintf(root, sizeof(root), "/tmp/allocate-unit-XXXXXX");
	assert_non_null(mkdtemp(root));
	snprintf(dev, sizeof(dev), "%s/dev", root);
	assert_int_equal(mkdir(dev, 0755), 0);
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
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	assert_int_equal(system(cmd), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_310b_nodes_and_docker_manager),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
