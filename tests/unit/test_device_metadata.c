/* SPDX-License-Identifier: Apache-2.0 */
/* Device metadata (node/device_metadata.h) as the device plugin writes it,
 * knowing no claim: what is unknown is left out, not written empty; the
 * bound on the devices of one file. (A claim's file: test_dra_metadata.c.) */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "node/device_metadata.h"

static void test_without_claim(void **state)
{
	(void)state;
	struct npu_device chip = { .kind = NPU_DEVICE_CHIP, .id = "npu-5" };
	chip.chip.phy_id = 5;
	chip.chip.family = NPU_FAMILY_910B;
	const struct device_metadata_device devs[] = { { .device = &chip, .logical_id = 0 } };
	const struct device_metadata_owner none = { .name = "" };
	char *json = NULL;
	assert_int_equal(device_metadata_render("ascend.com/npu", &none, "ascend.com/npu", devs, 1, &json), 0);
	static const char body[] =
		"\"metadata\":{\"generation\":1},\"requests\":[{\"name\":\"ascend.com/npu\",\"devices\":["
		"{\"driver\":\"ascend.com/npu\",\"name\":\"npu-5\",\"attributes\":{"
		"\"type\":{\"string\":\"chip\"},\"family\":{\"string\":\"910B\"},\"physicalID\":{\"int\":5},"
		"\"card\":{\"int\":0},\"chip\":{\"int\":0},\"containerLogicalID\":{\"int\":0},"
		"\"interconnect\":{\"string\":\"hccs-mesh\"},\"interconnectGroup\":{\"string\":\"hccs-mesh-0\"}}}]}]}\n";
	char want[2048];
	snprintf(want, sizeof(want),
		 "{\"kind\":\"DeviceMetadata\",\"apiVersion\":\"metadata.resource.k8s.io/v1beta1\",%s"
		 "{\"kind\":\"DeviceMetadata\",\"apiVersion\":\"metadata.resource.k8s.io/v1alpha1\",%s",
		 body, body);
	assert_string_equal(json, want);
	free(json);
}

static void test_bounds(void **state)
{
	(void)state;
	struct npu_device chip = { .kind = NPU_DEVICE_CHIP, .id = "npu-0" };
	struct device_metadata_device devs[DEVICE_METADATA_MAX_DEVICES + 1];
	for (size_t i = 0; i <= DEVICE_METADATA_MAX_DEVICES; i++)
		devs[i] = (struct device_metadata_device){ .device = &chip, .logical_id = i };
	const struct device_metadata_owner none = { 0 };
	char *json = NULL;
	assert_int_equal(device_metadata_render("d", &none, "r", devs, 0, &json), -EINVAL);
	assert_int_equal(device_metadata_render("d", &none, "r", devs, DEVICE_METADATA_MAX_DEVICES + 1, &json),
			 -EINVAL);
	assert_null(json);
	assert_int_equal(device_metadata_render("d", &none, "r", devs, DEVICE_METADATA_MAX_DEVICES, &json), 0);
	assert_non_null(strstr(json, "\"containerLogicalID\":{\"int\":63}"));
	free(json);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_without_claim),
		cmocka_unit_test(test_bounds),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
