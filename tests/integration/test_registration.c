/* Registration and the device list as the kubelet sees them: the plugin
 * serves first, registers ascend.com/npu, and advertises every chip. */
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "deviceplugin.pb-c.h"
#include "harness/harness.h"

static void test_registers_and_advertises_every_chip(void **state)
{
	(void)state;
	struct node node;
	node_init(&node, &(struct node_options){ .chips = 8 });
	struct proc *k = node_start_kubelet(&node);
	struct proc *p = node_start_plugin(&node, NULL);

	const char *line = proc_expect(k, "register resource=ascend.com/npu", WAIT_MS);
	assert_non_null(line);
	assert_non_null(strstr(line, "endpoint=ascend-npu.sock"));
	assert_non_null(strstr(line, "version=v1beta1"));
	assert_non_null(strstr(line, "pre_start=0"));
	/* Advertised because it is served (kubelet-sim reads it back from GetDevicePluginOptions). */
	assert_non_null(strstr(line, "preferred_allocation=1"));
	assert_non_null(proc_expect(k, "devices resource=ascend.com/npu capacity=8 allocatable=8 unhealthy=-", WAIT_MS));
	assert_non_null(proc_expect_err(p, "using DCMI from", WAIT_MS));
	assert_non_null(proc_expect_err(p, "registered ascend.com/npu with the kubelet", WAIT_MS));

	proc_send(k, "list");
	for (int i = 0; i < 8; i++) {
		char want[64];
		snprintf(want, sizeof(want), "device id=npu-%d health=Healthy", i);
		assert_non_null(proc_expect(k, want, WAIT_MS));
	}
	node_fini(&node);
}

static void test_plugin_first_then_kubelet(void **state)
{
	(void)state;
	struct node node;
	node_init(&node, &(struct node_options){ .chips = 2 });
	struct proc *p = node_start_plugin(&node, NULL);
	/* No kubelet yet: the first failure is logged, then retried quietly. */
	assert_non_null(proc_expect_err(p, "registration with the kubelet failed", WAIT_MS));
	struct proc *k = node_start_kubelet(&node);
	assert_non_null(proc_expect(k, "register resource=ascend.com/npu", WAIT_MS));
	assert_non_null(proc_expect(k, "capacity=2 allocatable=2", WAIT_MS));
	node_fini(&node);
}

static void test_device_ids_follow_phy_ids(void **state)
{
	(void)state;
	struct node node;
	node_init(&node, &(struct node_options){ .chips = 0 });
	node_touch(&node, "dev/davinci4");
	node_touch(&node, "dev/davinci9");
	/* Card and logic numbering differ from the physical ids. */
	node_write_state(&node, "chip phy=9 card=3 device=0 logic=0 name=910B3\n"
				"chip phy=4 card=7 device=0 logic=1 name=910B3\n");
	struct proc *k = node_start_kubelet(&node);
	node_start_plugin(&node, NULL);
	assert_non_null(proc_expect(k, "capacity=2 allocatable=2", WAIT_MS));
	proc_send(k, "list");
	assert_non_null(proc_expect(k, "device id=npu-4 health=Healthy", WAIT_MS));
	assert_non_null(proc_expect(k, "device id=npu-9 health=Healthy", WAIT_MS));
	node_fini(&node);
}

static void test_custom_resource_name(void **state)
{
	(void)state;
	struct node node;
	node_init(&node, &(struct node_options){ .chips = 1 });
	struct proc *k = node_start_kubelet(&node);
	node_start_plugin(&node, (const char *[]){ "--resource-name", "huawei.com/Ascend910", NULL });
	const char *line = proc_expect(k, "register resource=huawei.com/Ascend910", WAIT_MS);
	assert_non_null(line);
	assert_non_null(strstr(line, "endpoint=huawei-Ascend910.sock"));
	node_fini(&node);
}

static void test_options_and_probe(void **state)
{
	(void)state;
	struct node node;
	node_init(&node, &(struct node_options){ .chips = 1 });
	struct proc *k = node_start_kubelet(&node);
	node_start_plugin(&node, NULL);
	assert_non_null(proc_expect(k, "capacity=1", WAIT_MS));

	struct gc_channel *ch = node_plugin_channel(&node);
	struct gc_result res;
	assert_int_equal(gc_unary(ch, "/v1beta1.DevicePlugin/GetDevicePluginOptions", NULL, 0, WAIT_MS, &res), 0);
	assert_int_equal(res.status, GRPC_STATUS_OK);
	V1beta1__DevicePluginOptions *o = v1beta1__device_plugin_options__unpack(NULL, res.len, res.body);
	assert_non_null(o);
	assert_false(o->pre_start_required);
	assert_true(o->get_preferred_allocation_available);
	v1beta1__device_plugin_options__free_unpacked(o, NULL);
	gc_result_clear(&res);
	gc_channel_close(ch);

	/* The liveness probe answers 0 while the plugin serves, 1 when it does not. */
	const char *probe[] = { PLUGIN_BIN, "--probe", "--socket-dir", node.socket_dir, NULL };
	struct proc *pr = proc_start(probe, NULL);
	assert_int_equal(proc_wait(pr, WAIT_MS), 0);
	proc_free(pr);
	const char *bad[] = { PLUGIN_BIN, "--probe", "--socket-dir", "/tmp", NULL };
	pr = proc_start(bad, NULL);
	assert_int_equal(proc_wait(pr, WAIT_MS), 1);
	proc_free(pr);
	node_fini(&node);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_registers_and_advertises_every_chip),
		cmocka_unit_test(test_plugin_first_then_kubelet),
		cmocka_unit_test(test_device_ids_follow_phy_ids),
		cmocka_unit_test(test_custom_resource_name),
		cmocka_unit_test(test_options_and_probe),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
