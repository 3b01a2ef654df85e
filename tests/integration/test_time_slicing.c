/* SPDX-License-Identifier: Apache-2.0 */
/* Time-slicing (sharing.timeSlicing in the --config file) through the real
 * daemon, kubelet-sim and the DCMI simulator: each chip listed as its
 * replicas npu-<phy>::<k>, a chip fault marking all of them Unhealthy,
 * `allocate 2` spread over two chips, replicas of one chip given as that
 * chip once, renameByDefault registering <resource>.shared and
 * failRequestsGreaterThanOne refusing a container asking for two; a chip
 * whose device-share mode is off served whole beside shared neighbours, on
 * /metrics too, and enableDeviceShare switching the mode on. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "base/file.h"
#include "harness/harness.h"
#include "harness/http.h"

/* Writes the config file under the node and starts kubelet-sim and the
 * plugin with it (and extra, a flag, unless NULL); waits for the
 * registration of resource. */
static struct proc *start_with(struct node *node, const char *config, const char *resource, const char *extra)
{
	char path[160], flag[200], want[256];
	snprintf(path, sizeof(path), "%s/config.yaml", node->root);
	FILE *f = fopen(path, "we");
	assert_non_null(f);
	assert_true(fputs(config, f) >= 0);
	assert_int_equal(fclose(f), 0);
	snprintf(flag, sizeof(flag), "--config=%s", path);

	struct proc *k = node_start_kubelet(node);
	node_start_plugin(node, (const char *const[]){ flag, extra, NULL });
	snprintf(want, sizeof(want), "register resource=%s ", resource);
	assert_non_null(proc_expect(k, want, WAIT_MS));
	return k;
}

static struct proc *start(struct node *node, const char *config, const char *resource)
{
	return start_with(node, config, resource, NULL);
}

/* Sends command (NULL: the answer is already on its way) and expects the
 * allocate answer's first lines to be want, in order. */
/* The lines every answer carries besides what a test here looks at: the
 * live status file's and the device metadata's mounts and variables, and
 * ASCEND_RT_VISIBLE_DEVICES (test_allocate checks them). */
static bool beside_the_point(const char *line)
{
	return strstr(line, " container=/var/run/ascend/npu-status ") ||
	       strncmp(line, "allocate env name=ASCEND_NPU_STATUS ", 36) == 0 ||
	       strstr(line, " container=/var/run/ascend/npu-metadata.json ") ||
	       strncmp(line, "allocate env name=ASCEND_NPU_METADATA ", 38) == 0 ||
	       strncmp(line, "allocate env name=ASCEND_RT_VISIBLE_DEVICES ", 44) == 0;
}

static void expect_answer(struct proc *k, const char *command, const char *const want[])
{
	if (command)
		proc_send(k, command);
	for (size_t i = 0; want[i]; i++) {
		const char *line = proc_expect(k, "allocate ", WAIT_MS);
		assert_non_null(line);
		while (beside_the_point(line)) {
			line = proc_expect(k, "allocate ", WAIT_MS);
			assert_non_null(line);
		}
		if (strcmp(line, want[i]) != 0)
			fail_msg("'%s': line %zu is '%s', expected '%s'", command ? command : "", i, line, want[i]);
	}
}

static void test_replicas_listed_allocated_and_failed(void **state)
{
	struct node *node = *state;
	node_init(node, &(struct node_options){ .chips = 4 });
	struct proc *k = start(node,
			       "version: v1\n"
			       "sharing:\n"
			       "  timeSlicing:\n"
			       "    resources:\n"
			       "    - name: ascend.com/npu\n"
			       "      replicas: 3\n",
			       "ascend.com/npu");
	assert_non_null(proc_expect(k, "devices resource=ascend.com/npu capacity=12 allocatable=12 unhealthy=-",
				    WAIT_MS));
	expect_event(node->plugin, "time-slicing", "resource", "ascend.com/npu", "replicas", "3", "one_per_container", "0");

	/* Two replicas: two distinct chips, the least used first. */
	proc_send(k, "allocate 2");
	const char *line = proc_expect(k, "preferred ", WAIT_MS);
	assert_non_null(line);
	assert_string_equal(line, "preferred ids=npu-0::0,npu-1::0");
	expect_answer(k, NULL,
		      (const char *const[]){ "allocate ok ids=npu-0::0,npu-1::0",
					     "allocate device host=/dev/davinci0 container=/dev/davinci0 permissions=rw",
					     "allocate device host=/dev/davinci1 container=/dev/davinci1 permissions=rw",
					     NULL });
	assert_non_null(proc_expect(k, "allocate env name=ASCEND_VISIBLE_DEVICES value=0,1", WAIT_MS));
	assert_non_null(proc_expect(k, "allocate end", WAIT_MS));
	/* The next one goes to the chips still unused. */
	proc_send(k, "allocate 1");
	line = proc_expect(k, "preferred ", WAIT_MS);
	assert_non_null(line);
	assert_string_equal(line, "preferred ids=npu-2::0");
	assert_non_null(proc_expect(k, "allocate end", WAIT_MS));

	/* Two replicas of one chip: that chip once. */
	expect_answer(k, "allocate-ids npu-3::2,npu-3::0",
		      (const char *const[]){ "allocate ok ids=npu-3::2,npu-3::0",
					     "allocate device host=/dev/davinci3 container=/dev/davinci3 permissions=rw",
					     "allocate device host=/dev/davinci_manager container=/dev/davinci_manager permissions=rw",
					     NULL });
	for (;;) {
		line = proc_expect(k, "allocate ", WAIT_MS);
		assert_non_null(line);
		if (strncmp(line, "allocate env ", 13) == 0 && !beside_the_point(line))
			break;
		assert_null(strstr(line, "davinci3"));
	}
	assert_string_equal(line, "allocate env name=ASCEND_VISIBLE_DEVICES value=3");
	assert_non_null(proc_expect(k, "allocate end", WAIT_MS));

	/* Unknown and malformed replicas. */
	static const char *const bad[] = { "npu-3::99", "npu-3::", "npu-3::x", "npu-3" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char command[64], want[128];
		snprintf(command, sizeof(command), "allocate-ids %s", bad[i]);
		proc_send(k, command);
		line = proc_expect(k, "allocate ", WAIT_MS);
		assert_non_null(line);
		snprintf(want, sizeof(want), "allocate error code=3 message=\"unknown device ID \\\"%s\\\"", bad[i]);
		if (strncmp(line, want, strlen(want)) != 0)
			fail_msg("'%s' answered '%s'", command, line);
	}

	/* A chip fault: all its replicas Unhealthy. */
	node_write_health(node, 4, 1, 2);
	assert_non_null(proc_expect(
		k, "devices resource=ascend.com/npu capacity=12 allocatable=9 unhealthy=npu-1::0,npu-1::1,npu-1::2",
		WAIT_MS));
	node_fini(node);
}

static void test_rename_and_fail_requests_greater_than_one(void **state)
{
	struct node *node = *state;
	node_init(node, &(struct node_options){ .chips = 2 });
	struct proc *k = start(node,
			       "version: v1\n"
			       "flags:\n"
			       "  deviceListStrategy: ascend-runtime\n"
			       "sharing:\n"
			       "  timeSlicing:\n"
			       "    renameByDefault: true\n"
			       "    failRequestsGreaterThanOne: true\n"
			       "    resources:\n"
			       "    - name: ascend.com/npu\n"
			       "      replicas: 2\n",
			       "ascend.com/npu.shared endpoint=ascend-npu.shared.sock");
	assert_non_null(proc_expect(k, "devices resource=ascend.com/npu.shared capacity=4 allocatable=4 unhealthy=-",
				    WAIT_MS));
	expect_answer(k, "allocate-ids npu-0::0,npu-1::1",
		      (const char *const[]){ "allocate error code=3 message=\"container request 0 asks for 2 shared "
					     "devices, but sharing.timeSlicing.failRequestsGreaterThanOne is set: a "
					     "container may ask for 1\"",
					     NULL });
	expect_answer(k, "allocate 1",
		      (const char *const[]){ "allocate ok ids=npu-0::0",
					     "allocate env name=ASCEND_VISIBLE_DEVICES value=0", "allocate end", NULL });
	node_fini(node);
}

/* A scrape's text; the caller frees it. */
static char *scrape(uint16_t port)
{
	struct http_response resp;
	http_call(port, "GET", "/metrics", &resp);
	assert_int_equal(resp.status, 200);
	char *body = resp.body;
	resp.body = NULL;
	http_response_clear(&resp);
	return body;
}

#define SHARE_SERIES(phy) "ascend_npu_device_share{id=\"npu-" #phy "\",phy=\"" #phy "\",chip=\"910B3\"}"

static void test_device_share_off_serves_the_chip_whole(void **state)
{
	struct node *node = *state;
	node_init(node, &(struct node_options){ .chips = 3, .extra_state = "share phy=1 mode=off\n" });
	struct proc *k = start_with(node,
				    "version: v1\n"
				    "sharing:\n"
				    "  timeSlicing:\n"
				    "    resources:\n"
				    "    - name: ascend.com/npu\n"
				    "      replicas: 3\n",
				    "ascend.com/npu", "--metrics-addr=127.0.0.1:0");
	/* npu-1 once, its neighbours three times each. */
	assert_non_null(proc_expect(k, "devices resource=ascend.com/npu capacity=7 allocatable=7 unhealthy=-", WAIT_MS));
	expect_event(node->plugin, "device-share.off", "device", "npu-1", "phy", "1", "card", "1", "chip", "0");
	expect_answer(k, "allocate-ids npu-1::1",
		      (const char *const[]){ "allocate error code=3 message=\"unknown device ID \\\"npu-1::1\\\" (time-slicing "
					     "IDs are <chip>::<0..2>, <chip>::0 alone for a chip whose device-share mode "
					     "is off)\"",
					     NULL });
	expect_answer(k, "allocate-ids npu-1::0",
		      (const char *const[]){ "allocate ok ids=npu-1::0",
					     "allocate device host=/dev/davinci1 container=/dev/davinci1 permissions=rw",
					     NULL });
	assert_non_null(proc_expect(k, "allocate end", WAIT_MS));

	uint16_t port = http_plugin_port(node->plugin);
	char *m = scrape(port);
	assert_true(http_metric(m, SHARE_SERIES(0)) == 1);
	assert_true(http_metric(m, SHARE_SERIES(1)) == 0);
	assert_true(http_metric(m, "ascend_device_plugin_chips_served_whole{resource=\"ascend.com/npu\",reason=\"device-"
				   "share-off\"}") == 1);
	assert_true(http_metric(m, "ascend_device_plugin_devices{resource=\"ascend.com/npu\",health=\"Healthy\"}") == 7);
	free(m);

	/* The operator switches it on (npu-smi): it is shared at the next refresh. */
	node_write_chips(node, 3, NULL);
	assert_non_null(proc_expect(k, "devices resource=ascend.com/npu capacity=9 allocatable=9 unhealthy=-", WAIT_MS));
	expect_event(node->plugin, "device-share.on", "device", "npu-1");
	node_fini(node);
}

static void test_enable_device_share_switches_it_on(void **state)
{
	struct node *node = *state;
	node_init(node, &(struct node_options){ .chips = 2 });
	const char *attrs[2] = { NULL, "fail=set_device_share_enable:-8002" };
	node_write_chip_state(node, &(struct chip_state){ .chips = 2, .attrs = attrs,
							 .tail = "share phy=0 mode=off\nshare phy=1 mode=off\n" });
	struct proc *k = start(node,
			       "version: v1\n"
			       "sharing:\n"
			       "  timeSlicing:\n"
			       "    enableDeviceShare: true\n"
			       "    resources:\n"
			       "    - name: ascend.com/npu\n"
			       "      replicas: 2\n",
			       "ascend.com/npu");
	/* The first list already shares npu-0: it was switched on before;
	 * npu-1, which DCMI refuses, stays whole. */
	assert_non_null(proc_expect(k, "devices resource=ascend.com/npu capacity=3 allocatable=3 unhealthy=-", WAIT_MS));
	expect_event(node->plugin, "device-share.enabled", "device", "npu-0");
	expect_event(node->plugin, "device-share.enable-failed", "device", "npu-1", "code", "-8002");
	expect_event(node->plugin, "device-share.off", "device", "npu-1");
	/* The driver keeps the mode: the simulator's state says so. */
	char *text = NULL, why[256];
	size_t len = 0;
	assert_int_equal(file_read_bounded(node->state_file, 1 << 20, &text, &len, why, sizeof(why)), 0);
	assert_null(strstr(text, "share phy=0"));
	assert_non_null(strstr(text, "share phy=1 mode=off"));
	free(text);
	node_fini(node);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_replicas_listed_allocated_and_failed, node_setup, node_teardown),
		cmocka_unit_test_setup_teardown(test_rename_and_fail_requests_greater_than_one, node_setup,
						node_teardown),
		cmocka_unit_test_setup_teardown(test_device_share_off_serves_the_chip_whole, node_setup, node_teardown),
		cmocka_unit_test_setup_teardown(test_enable_device_share_switches_it_on, node_setup, node_teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
