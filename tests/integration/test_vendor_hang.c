/* SPDX-License-Identifier: Apache-2.0 */
/* A DCMI call that hangs (the simulator's hang=, as a chip reset or a wedged
 * driver blocks a real call) must never freeze the daemon: the chip whose
 * call is overdue turns Unhealthy with the call's name, the other chips stay
 * as they were and can be allocated, a kubelet restart during the hang is
 * registered again at once, SIGTERM ends the daemon within 2 s, and when the
 * call answers again the chip is Healthy again. A dcmi_init that blocks
 * (ASCEND_FAKE_DCMI_INIT_HANG) holds neither the start nor the loop. */
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cmocka.h>

#include "base/parse.h"
#include "deviceplugin.pb-c.h"
#include "deviceplugin_api.h"
#include "harness/harness.h"

#define CHIPS 4
#define HANG_S 30

/* Chip 1's health call blocks for HANG_S seconds; the others answer. */
static void write_hang(struct node *node, const char *chip1)
{
	node_write_chip_state(node, &(struct chip_state){
					    .chips = CHIPS,
					    .attrs = (const char *const[]){ NULL, chip1, NULL, NULL },
				    });
}

static bool allocate_ok(struct node *node, const char *id)
{
	V1beta1__ContainerAllocateRequest container = V1BETA1__CONTAINER_ALLOCATE_REQUEST__INIT;
	V1beta1__ContainerAllocateRequest *containers[1] = { &container };
	V1beta1__AllocateRequest req = V1BETA1__ALLOCATE_REQUEST__INIT;
	char *ids[1] = { (char *)(uintptr_t)id };
	container.devices_ids = ids;
	container.n_devices_ids = 1;
	req.container_requests = containers;
	req.n_container_requests = 1;
	uint8_t buf[256];
	size_t len = v1beta1__allocate_request__pack(&req, buf);
	struct gc_channel *ch = node_plugin_channel(node);
	struct gc_result res;
	int r = gc_unary(ch, DP_METHOD_ALLOCATE, buf, len, WAIT_MS, &res);
	bool ok = r == 0 && res.status == GRPC_STATUS_OK;
	if (r == 0)
		gc_result_clear(&res);
	gc_channel_close(ch);
	return ok;
}

/* A registered node whose chip 1 health call hangs for 30 s: the next poll
 * asks chip 1 and gives up after the call's deadline. */
static void start_hung(struct node *node)
{
	char line[128];
	node_init(node, &(struct node_options){ .chips = CHIPS });
	node_start_registered(node, (const char *[]){ "--health-interval", "1s", NULL });
	write_hang(node, "health=0 hang=health:30");
	assert_non_null(proc_expect(node->kubelet, devices_line(line, sizeof(line), CHIPS, CHIPS - 1, "npu-1"), WAIT_MS));
}

static void test_hung_health_call(void **state)
{
	struct node *node = *state;
	start_hung(node);
	struct proc *k = node->kubelet, *p = node->plugin;
	char line[128];
	expect_event(p, "device.unhealthy", "device", "npu-1", "fault", "vendor-timeout", "call", "dcmi_get_device_health");

	/* The loop is free: the other chips can be allocated, a kubelet
	 * restart is registered again at once. */
	assert_true(allocate_ok(node, "npu-0"));
	int64_t t0 = now_ms();
	proc_send(k, "restart");
	assert_non_null(proc_expect(k, "restarted", WAIT_MS));
	assert_non_null(proc_expect(k, "register resource=ascend.com/npu", WAIT_MS));
	int64_t took = now_ms() - t0;
	/* A hung loop would wait for the 30 s call; a few seconds of slack for
	 * sanitizer builds on a loaded machine. */
	assert_true(took < 10000);
	assert_non_null(proc_expect(k, devices_line(line, sizeof(line), CHIPS, CHIPS - 1, "npu-1"), WAIT_MS));

	/* SIGTERM during the hang: out within 2 s, the socket gone. */
	t0 = now_ms();
	proc_kill(p, SIGTERM);
	assert_int_equal(proc_wait(p, 5000), 0);
	took = now_ms() - t0;
	if (took > 2000)
		fail_msg("SIGTERM during a DCMI hang took %lld ms", (long long)took);
	struct stat st;
	assert_int_equal(stat(node->plugin_socket, &st), -1);
	assert_int_equal(errno, ENOENT);
	proc_free(p);
	node->plugin = NULL;
	node_fini(node);
}

/* A SIGHUP while one chip's call hangs: the reload rediscovers, but never
 * withdraws what it cannot see anew. The kubelet keeps every chip listed,
 * the others Healthy, and only the hung chip is overdue (its own call, not a
 * queue behind it). */
static void test_reload_during_hang(void **state)
{
	struct node *node = *state;
	start_hung(node);
	struct proc *k = node->kubelet, *p = node->plugin;
	char line[128];

	proc_kill(p, SIGHUP);
	expect_event(p, "config.applied", "trigger", "SIGHUP");
	/* Four health polls after the reload: every list the kubelet gets
	 * holds all chips, and only npu-1 is out. */
	int64_t until = now_ms() + 4000;
	const char *got;
	while ((got = proc_expect(k, "devices resource=ascend.com/npu", (int)(until - now_ms()))) != NULL &&
	       now_ms() < until) {
		if (!strstr(got, devices_line(line, sizeof(line), CHIPS, CHIPS - 1, "npu-1")))
			fail_msg("after SIGHUP during a hang the kubelet got: %s", got);
	}
	/* Every line that speaks of the hang is npu-1's Unhealthy one: a check
	 * of all lines, whatever event they say, so it stays on the words. */
	assert_int_equal(proc_count_err(p, "dcmi_get_device_health did not return within 1000 ms") -
				 proc_count_err(p, "npu-1 is Unhealthy: the vendor call dcmi_get_device_health"),
			 0);
	assert_true(allocate_ok(node, "npu-0"));
	node_fini(node);
}

/* A call that hangs for a short while: Unhealthy while overdue, Healthy
 * again once DCMI answers. */
static void test_hang_ends(void **state)
{
	struct node *node = *state;
	node_init(node, &(struct node_options){ .chips = CHIPS });
	node_start_registered(node, (const char *[]){ "--health-interval", "1s", NULL });
	struct proc *k = node->kubelet;
	char line[128];

	write_hang(node, "health=0 hang=health:3");
	assert_non_null(proc_expect(k, devices_line(line, sizeof(line), CHIPS, CHIPS - 1, "npu-1"), WAIT_MS));
	write_hang(node, "health=0");
	assert_non_null(proc_expect(k, devices_line(line, sizeof(line), CHIPS, CHIPS, "-"), WAIT_MS));
	expect_event(node->plugin, "device.healthy", "device", "npu-1");
	node_fini(node);
}

/* A dcmi_init that blocks (a driver waiting for a chip reset): DCMI loads on
 * a thread of its own, so the plugin starts on the device files after a
 * short wait, serves and registers again at once while the load hangs, and
 * SIGTERM still ends it within 2 s. */
static void test_hung_dcmi_init(void **state)
{
	struct node *node = *state;
	node_init(node, &(struct node_options){ .chips = CHIPS });
	assert_int_equal(setenv("ASCEND_FAKE_DCMI_INIT_HANG", "30", 1), 0);
	node_start_registered(node, (const char *[]){ "--health-interval", "1s", NULL });
	assert_int_equal(unsetenv("ASCEND_FAKE_DCMI_INIT_HANG"), 0);
	struct proc *k = node->kubelet, *p = node->plugin;

	expect_event(p, "dcmi.unavailable", "fallback", "devfs", "reason",
		     "still loading: libdcmi.so or its dcmi_init has not returned yet");
	/* Registered with the device files' chips (node_start_registered saw
	 * the list); Allocate is served. */
	assert_true(allocate_ok(node, "npu-0"));
	int64_t t0 = now_ms();
	proc_send(k, "restart");
	assert_non_null(proc_expect(k, "restarted", WAIT_MS));
	assert_non_null(proc_expect(k, "register resource=ascend.com/npu", WAIT_MS));
	assert_true(now_ms() - t0 < 10000);
	/* Health polls go on meanwhile and start no second load. */
	assert_false(proc_sees_within(p, "using DCMI from", 2500));

	t0 = now_ms();
	proc_kill(p, SIGTERM);
	assert_int_equal(proc_wait(p, 5000), 0);
	int64_t took = now_ms() - t0;
	if (took > 2000)
		fail_msg("SIGTERM during a hung dcmi_init took %lld ms", (long long)took);
	proc_free(p);
	node->plugin = NULL;
	node_fini(node);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_hung_health_call, node_setup, node_teardown),
		cmocka_unit_test_setup_teardown(test_reload_during_hang, node_setup, node_teardown),
		cmocka_unit_test_setup_teardown(test_hang_ends, node_setup, node_teardown),
		cmocka_unit_test_setup_teardown(test_hung_dcmi_init, node_setup, node_teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
