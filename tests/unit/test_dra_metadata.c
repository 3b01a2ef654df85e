/* SPDX-License-Identifier: Apache-2.0 */
/* Device metadata for the container (dra/metadata.h): the stream of one
 * DeviceMetadata object per API version, and where the container finds it. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "dra/metadata.h"

static void test_render(void **state)
{
	(void)state;
	struct dra_prepared *p = dra_prepared_new(0);
	assert_non_null(p);
	snprintf(p->uid, sizeof(p->uid), "6f1c-42");
	snprintf(p->namespace, sizeof(p->namespace), "default");
	snprintf(p->name, sizeof(p->name), "pod-npu-x7k");
	snprintf(p->pod_claim, sizeof(p->pod_claim), "npu");
	struct npu_device chip = { .kind = NPU_DEVICE_CHIP, .id = "npu-2", .has_numa = true, .numa_node = 1,
				   .pci_address = "0000:3b:00.0" };
	chip.chip.phy_id = 2;
	chip.chip.card_id = 1;
	chip.chip.device_id = 0;
	chip.chip.family = NPU_FAMILY_910B;
	chip.net.has_ip = true;
	chip.net.prefix_len = 24;
	memcpy(chip.net.ip, (uint8_t[]){ 192, 168, 1, 12 }, 4);
	struct npu_device vnpu = { .kind = NPU_DEVICE_VNPU, .id = "vnpu-100", .vnpu = { .id = 100, .phy_id = 3 } };
	snprintf(vnpu.vnpu.template_name, sizeof(vnpu.vnpu.template_name), "vir05_1c_8g");
	vnpu.chip.phy_id = 3;
	vnpu.chip.family = NPU_FAMILY_910B;
	const struct device_metadata_device devs[] = { { .device = &chip, .pool = "node-1", .logical_id = 1 },
						    { .device = &vnpu, .pool = "node-1", .logical_id = 0 } };
	char *json = NULL;
	assert_int_equal(dra_metadata_render("npu.ascend.com", p, "npu", devs, 2, &json), 0);
	static const char body[] =
		"\"metadata\":{\"name\":\"pod-npu-x7k\",\"namespace\":\"default\",\"uid\":\"6f1c-42\",\"generation\":1},"
		"\"podClaimName\":\"npu\",\"requests\":[{\"name\":\"npu\",\"devices\":["
		"{\"driver\":\"npu.ascend.com\",\"pool\":\"node-1\",\"name\":\"npu-2\",\"attributes\":{"
		"\"type\":{\"string\":\"chip\"},\"family\":{\"string\":\"910B\"},\"physicalID\":{\"int\":2},"
		"\"card\":{\"int\":1},\"chip\":{\"int\":0},\"containerLogicalID\":{\"int\":1},"
		"\"interconnect\":{\"string\":\"hccs-mesh\"},\"interconnectGroup\":{\"string\":\"hccs-mesh-0\"},"
		"\"roceIP\":{\"string\":\"192.168.1.12\"},\"resource.kubernetes.io/pciBusID\":{\"string\":\"0000:3b:00.0\"},"
		"\"resource.kubernetes.io/numaNode\":{\"int\":1}},\"networkData\":{\"ips\":[\"192.168.1.12/24\"]}},"
		"{\"driver\":\"npu.ascend.com\",\"pool\":\"node-1\",\"name\":\"vnpu-100\",\"attributes\":{"
		"\"type\":{\"string\":\"vnpu\"},\"family\":{\"string\":\"910B\"},\"physicalID\":{\"int\":3},"
		"\"card\":{\"int\":0},\"chip\":{\"int\":0},\"containerLogicalID\":{\"int\":0},\"vnpuID\":{\"int\":100},"
		"\"template\":{\"string\":\"vir05_1c_8g\"}}}]}]}\n";
	char want[4096];
	snprintf(want, sizeof(want),
		 "{\"kind\":\"DeviceMetadata\",\"apiVersion\":\"metadata.resource.k8s.io/v1beta1\",%s"
		 "{\"kind\":\"DeviceMetadata\",\"apiVersion\":\"metadata.resource.k8s.io/v1alpha1\",%s",
		 body, body);
	assert_string_equal(json, want);
	free(json);
	assert_int_equal(dra_metadata_render("npu.ascend.com", p, "npu", devs, 0, &json), -EINVAL);

	char path[512];
	assert_int_equal(dra_metadata_container_path("npu.ascend.com", p, "npu", path, sizeof(path)), 0);
	assert_string_equal(path, "/var/run/kubernetes.io/dra-device-attributes/resourceclaimtemplates/npu/npu/"
				  "npu.ascend.com-metadata.json");
	p->pod_claim[0] = '\0';
	assert_int_equal(dra_metadata_container_path("npu.ascend.com", p, "npu", path, sizeof(path)), 0);
	assert_string_equal(path, "/var/run/kubernetes.io/dra-device-attributes/resourceclaims/pod-npu-x7k/npu/"
				  "npu.ascend.com-metadata.json");
	assert_int_equal(dra_metadata_container_path("npu.ascend.com", p, "npu", path, 40), -ENAMETOOLONG);
	free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_render),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
