/* SPDX-License-Identifier: Apache-2.0 */
/* Health as the kubelet sees it: DCMI fault events and health polling turn
 * chip faults into Unhealthy devices and back, DCMI health 0 and 1 are both
 * Healthy (and a change between them is not an update), an absent chip stays
 * listed as Unhealthy, a missing /dev/davinci<phy> makes that device
 * Unhealthy and a missing /dev/davinci_manager every device, logged once.
 *
 * No timing is asserted (the benchmark measures latency). Each test proves
 * the mechanism by its setup instead: with a 1h health interval only a fault
 * event can deliver a fault; with `subscribe off` only polling can. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "harness/harness.h"

#define CHIPS 8
/* Long enough that no poll happens during a test: only events refresh. */
#define NO_POLLING "1h"
#define SHORT_INTERVAL "100ms"
/* Several short intervals: polls surely ran within it on an idle machine. */
#define POLL_WINDOW_MS 800

/* The DCMI state for chips 0..n-1 after head (may be NULL), with attrs[phy]
 * instead of "health=0" where given. */
static void write_state(struct node *node, const char *head, unsigned n, const char *const attrs[])
{
	node_write_chip_state(node, &(struct chip_state){ .chips = n, .head = head, .attrs = attrs });
}

/* Starts kubelet-sim and the plugin with the given health interval and waits
 * until the kubelet sees every chip Healthy. When subscribed is true the
 * plugin must have subscribed to fault events, otherwise it must have said
 * that it polls. */
static void start(struct node *node, const char *interval, bool subscribed, unsigned chips)
{
	struct proc *k = node_start_kubelet(node);
	struct proc *p = node_start_plugin(node, (const char *[]){ "--health-interval", interval, NULL });
	expect_event(p, "dcmi.loaded");
	if (subscribed)
		expect_event(p, "dcmi.events-subscribed");
	else
		expect_event(p, "dcmi.events-unavailable");
	char line[128];
	assert_non_null(proc_expect(k, devices_line(line, sizeof(line), chips, chips, "-"), WAIT_MS));
}

/* With events and no polling, a major fault and its recovery both reach the
 * kubelet, and the plugin says why the chip is Unhealthy. */
static void test_fault_and_recovery_by_event(void **state)
{
	struct node *node = *state;
	node_init(node, &(struct node_options){ .chips = CHIPS });
	start(node, NO_POLLING, true, CHIPS);
	struct proc *k = node->kubelet, *p = node->plugin;
	char line[128];

	const char *faulty[CHIPS] = { [3] = "health=2 errors=80E01801" };
	write_state(node, NULL, CHIPS, faulty);
	assert_non_null(proc_expect(k, devices_line(line, sizeof(line), 8, 7, "npu-3"), WAIT_MS));
	/* The handler ran (logic id 3 = phy 3 here), then the chip was judged. */
	expect_event(p, "dcmi.event", "logic_id", "3", "assertion", "fault");
	expect_event(p, "device.unhealthy", "device", "npu-3", "fault", "health-level", "health", "2", "code", "80E01801");

	write_state(node, NULL, CHIPS, NULL);
	assert_non_null(proc_expect(k, devices_line(line, sizeof(line), 8, 8, "-"), WAIT_MS));
	expect_event(p, "dcmi.event", "logic_id", "3", "assertion", "recovered");
	expect_event(p, "device.healthy", "device", "npu-3");

	/* A critical fault on another chip takes the same path. */
	const char *critical[CHIPS] = { [6] = "health=3" };
	write_state(node, NULL, CHIPS, critical);
	assert_non_null(proc_expect(k, devices_line(line, sizeof(line), 8, 7, "npu-6"), WAIT_MS));
	expect_event(p, "device.unhealthy", "device", "npu-6", "fault", "health-level", "health", "3");
	node_fini(node);
}

/* The fault policy's recovery hold (5 s by default): a chip whose fault comes
 * and goes is reported Unhealthy once and Healthy once, after the fault
 * stayed away for the hold. With no polling, only the plugin's own timer at
 * the hold's end can bring it back. */
static void test_flapping_chip_is_damped(void **state)
{
	struct node *node = *state;
	node_init(node, &(struct node_options){ .chips = CHIPS });
	start(node, NO_POLLING, true, CHIPS);
	struct proc *k = node->kubelet, *p = node->plugin;
	char line[128], healthy[128];

	const char *faulty[CHIPS] = { [2] = "health=2 errors=80E01801" };
	for (int i = 0; i < 4; i++) {
		/* Each state is seen: the plugin reports each event before the next write. */
		write_state(node, NULL, CHIPS, faulty);
		expect_event(p, "dcmi.event", "logic_id", "2", "assertion", "fault");
		write_state(node, NULL, CHIPS, NULL);
		expect_event(p, "dcmi.event", "logic_id", "2", "assertion", "recovered");
	}
	assert_non_null(proc_expect(k, devices_line(line, sizeof(line), 8, 7, "npu-2"), WAIT_MS));
	/* The next list the kubelet gets is the recovery: none came in between. */
	assert_non_null(proc_expect_next(k, "devices ", devices_line(healthy, sizeof(healthy), 8, 8, "-"), WAIT_MS));
	expect_event(p, "device.healthy", "device", "npu-2");
	assert_int_equal(count_events(p, "device.healthy", "device", "npu-2"), 1);
	assert_int_equal(count_events(p, "fault.level", "device", "npu-2", "fault_level", "RestartBusiness", "rule",
				      "code table", "code", "80E01801"),
			 1);
	node_fini(node);
}

/* Writes text as the node's --config file; path gets its path and flag the
 * plugin's --config flag for it. */
static void write_config(struct node *node, const char *text, char *path, size_t path_size, char *flag,
			 size_t flag_size)
{
	snprintf(path, path_size, "%s/config.yaml", node->root);
	FILE *f = fopen(path, "we");
	assert_non_null(f);
	fputs(text, f);
	assert_int_equal(fclose(f), 0);
	snprintf(flag, flag_size, "--config=%s", path);
}

/* Huawei's network lists: a chip reporting a code of SeparateNPUNetworkCodes
 * keeps its health (the kubelet still has 8 chips) but its RoCE link counts
 * as down, which the container's ASCEND_NPU_NETWORK says; the code gone,
 * the link is as DCMI reports it again (polled: DCMI raises no event
 * between health 1 and 0). */
static void test_network_fault_code(void **state)
{
	struct node *node = *state;
	node_init(node, &(struct node_options){ .chips = CHIPS });
	char codes[160], text[256], path[128], flag[160];
	snprintf(codes, sizeof(codes), "%s/faultCode.json", node->root);
	FILE *f = fopen(codes, "we");
	assert_non_null(f);
	fputs("{\"SeparateNPUNetworkCodes\": [\"81078603\"]}\n", f);
	assert_int_equal(fclose(f), 0);
	snprintf(text, sizeof(text), "version: v1\nfaultPolicy:\n  recoveryHold: 0\n  huaweiFiles: %s\n", codes);
	write_config(node, text, path, sizeof(path), flag, sizeof(flag));
	const char *faulty[CHIPS] = { [2] = "ip=192.168.1.12/24 link=up health=1 errors=81078603",
				      [3] = "ip=192.168.1.13/24 link=up" };
	write_state(node, NULL, CHIPS, faulty);
	struct proc *k = node_start_kubelet(node);
	struct proc *p = node_start_plugin(node, (const char *[]){ "--health-interval", "100ms", flag, NULL });
	expect_event(p, "fault.network", "device", "npu-2", "code", "81078603", "level", "SeparateNPU");
	char line[128];
	assert_non_null(proc_expect(k, devices_line(line, sizeof(line), CHIPS, CHIPS, "-"), WAIT_MS));
	proc_send(k, "allocate-ids npu-2,npu-3");
	const char *env = proc_expect(k, "allocate env name=ASCEND_NPU_NETWORK", WAIT_MS);
	assert_non_null(env);
	assert_non_null(strstr(env, "\\\"device_id\\\":2,\\\"family\\\":\\\"910B\\\",\\\"device_ip\\\":\\\"192.168.1.12\\\","
				    "\\\"prefix_len\\\":24,\\\"link\\\":\\\"down\\\""));
	assert_non_null(strstr(env, "\\\"device_ip\\\":\\\"192.168.1.13\\\",\\\"prefix_len\\\":24,\\\"link\\\":\\\"up\\\""));

	/* The code clears: the link is DCMI's again. */
	const char *clean[CHIPS] = { [2] = "ip=192.168.1.12/24 link=up", [3] = "ip=192.168.1.13/24 link=up" };
	write_state(node, NULL, CHIPS, clean);
	expect_event(p, "fault.network", "device", "npu-2", "level", "none");
	node_fini(node);
}

/* A frequency window from the --config file: the second onset of a code
 * within the window separates the chip, which then stays Unhealthy after
 * its fault cleared; the recovery hold is off, so each single fault
 * recovers at once. */
static void test_repeated_fault_separates_the_chip(void **state)
{
	struct node *node = *state;
	node_init(node, &(struct node_options){ .chips = CHIPS });
	char path[128], flag[160];
	write_config(node, "version: v1\nfaultPolicy:\n  recoveryHold: 0\n  frequency:\n  - codes: [80E01801]\n"
			   "    count: 2\n    window: 1h\n    level: ManuallySeparateNPU\n",
		     path, sizeof(path), flag, sizeof(flag));
	FILE *f;
	struct proc *k = node_start_kubelet(node);
	struct proc *p = node_start_plugin(node, (const char *[]){ "--health-interval", NO_POLLING, flag, NULL });
	char line[128];
	assert_non_null(proc_expect(k, devices_line(line, sizeof(line), CHIPS, CHIPS, "-"), WAIT_MS));

	const char *faulty[CHIPS] = { [5] = "health=2 errors=80E01801" };
	write_state(node, NULL, CHIPS, faulty);
	assert_non_null(proc_expect(k, devices_line(line, sizeof(line), 8, 7, "npu-5"), WAIT_MS));
	write_state(node, NULL, CHIPS, NULL);
	assert_non_null(proc_expect(k, devices_line(line, sizeof(line), 8, 8, "-"), WAIT_MS));

	write_state(node, NULL, CHIPS, faulty);
	expect_event(p, "fault.separated", "device", "npu-5", "fault_level", "ManuallySeparateNPU", "rule", "frequency",
		     "code", "80E01801");
	assert_non_null(proc_expect(k, devices_line(line, sizeof(line), 8, 7, "npu-5"), WAIT_MS));
	/* The fault clears; the chip stays out. Another chip's fault is the
	 * sentinel: the next list the kubelet gets still has npu-5 Unhealthy. */
	write_state(node, NULL, CHIPS, NULL);
	expect_event(p, "dcmi.event", "logic_id", "5", "assertion", "recovered");
	const char *other[CHIPS] = { [1] = "health=3" };
	write_state(node, NULL, CHIPS, other);
	assert_non_null(proc_expect_next(k, "devices ", devices_line(line, sizeof(line), 8, 6, "npu-1,npu-5"), WAIT_MS));

	/* A new policy is taken at once (the file is watched), and the chips
	 * keep what the policy remembers: npu-5 stays separated. */
	f = fopen(path, "we");
	assert_non_null(f);
	fputs("version: v1\nfaultPolicy:\n  recoveryHold: 2s\n", f);
	assert_int_equal(fclose(f), 0);
	expect_event(p, "fault.policy-changed", "trigger", "reload", "recovery_hold_ms", "2000", "default_level",
		     "SeparateNPU", "codes", "0");
	expect_event(p, "config.applied", "trigger", "reload");
	/* npu-1 recovers after the reload: the list that follows still has
	 * npu-5 out (it recovered once, before it was separated). */
	write_state(node, NULL, CHIPS, NULL);
	assert_non_null(proc_expect_next(k, "devices ", devices_line(line, sizeof(line), 8, 7, "npu-5"), WAIT_MS));
	assert_int_equal(count_events(p, "device.healthy", "device", "npu-5"), 1);
	node_fini(node);
}

/* A duration window from the --config file: a code still present after the
 * window's timeout escalates the chip to PreSeparateNPU, which keeps it out
 * of new allocations after the fault cleared, until the code stayed away
 * for the window's recover time. Polling judges the chip again while the
 * fault lasts; nothing else happens meanwhile. */
static void test_long_fault_escalates(void **state)
{
	struct node *node = *state;
	node_init(node, &(struct node_options){ .chips = CHIPS });
	char path[128], flag[160];
	write_config(node, "version: v1\nfaultPolicy:\n  recoveryHold: 0\n  duration:\n  - codes: [80E01801]\n"
			   "    timeout: 1s\n    level: PreSeparateNPU\n    recover: 1h\n",
		     path, sizeof(path), flag, sizeof(flag));
	struct proc *k = node_start_kubelet(node);
	struct proc *p = node_start_plugin(node, (const char *[]){ "--health-interval", SHORT_INTERVAL, flag, NULL });
	char line[128];
	assert_non_null(proc_expect(k, devices_line(line, sizeof(line), CHIPS, CHIPS, "-"), WAIT_MS));

	const char *faulty[CHIPS] = { [4] = "health=2 errors=80E01801" };
	write_state(node, NULL, CHIPS, faulty);
	assert_non_null(proc_expect(k, devices_line(line, sizeof(line), 8, 7, "npu-4"), WAIT_MS));
	expect_event(p, "fault.level", "device", "npu-4", "fault_level", "RestartBusiness", "rule", "code table", "code",
		     "80E01801");
	expect_event(p, "fault.escalated", "device", "npu-4", "fault_level", "PreSeparateNPU", "rule", "duration", "code",
		     "80E01801");

	/* The fault clears and the chip stays out; another chip's fault is the
	 * sentinel that a list was sent after the recovery was seen. */
	write_state(node, NULL, CHIPS, NULL);
	expect_event(p, "dcmi.event", "logic_id", "4", "assertion", "recovered");
	const char *other[CHIPS] = { [0] = "health=3" };
	write_state(node, NULL, CHIPS, other);
	assert_non_null(proc_expect(k, devices_line(line, sizeof(line), 8, 6, "npu-0,npu-4"), WAIT_MS));
	assert_int_equal(count_events(p, "device.healthy", "device", "npu-4"), 0);
	node_fini(node);
}

/* A chip DCMI reports absent is Unhealthy but still listed: the capacity
 * does not shrink under pods that hold it. */
static void test_absent_chip_stays_listed(void **state)
{
	struct node *node = *state;
	node_init(node, &(struct node_options){ .chips = CHIPS });
	start(node, SHORT_INTERVAL, true, CHIPS);
	struct proc *k = node->kubelet, *p = node->plugin;
	char line[128];

	const char *absent[CHIPS] = { [3] = "health=absent" };
	write_state(node, NULL, CHIPS, absent);
	assert_non_null(proc_expect(k, devices_line(line, sizeof(line), 8, 7, "npu-3"), WAIT_MS));
	expect_event(p, "device.unhealthy", "device", "npu-3", "fault", "absent");
	/* Still there for the kubelet, as Unhealthy. */
	proc_send(k, "list");
	assert_non_null(proc_expect(k, "device id=npu-3 health=Unhealthy", WAIT_MS));

	write_state(node, NULL, CHIPS, NULL);
	assert_non_null(proc_expect(k, devices_line(line, sizeof(line), 8, 8, "-"), WAIT_MS));
	expect_event(p, "device.healthy", "device", "npu-3");
	node_fini(node);
}

/* Lets the health polls run for a few intervals. This wait is timed: a
 * poll that finds nothing to report is silent by design, so there is no
 * event to wait for. It asserts nothing by itself: that no update was sent
 * meanwhile is checked against a sentinel afterwards. */
static void let_polls_run(struct node *node)
{
	/* The plugin writes nothing on stdout: this only waits. */
	assert_false(proc_sees_within(node->plugin, "\n", POLL_WINDOW_MS));
}

/* DCMI health 1 (general warning) is Healthy, and moving between 0 and 1 is
 * no change for the kubelet: no ListAndWatch update is sent for it. DCMI
 * sends no event between two healthy levels, so only polls see these. */
static void test_warning_is_healthy_and_quiet(void **state)
{
	struct node *node = *state;
	node_init(node, &(struct node_options){ .chips = CHIPS });
	start(node, SHORT_INTERVAL, true, CHIPS);
	struct proc *k = node->kubelet, *p = node->plugin;
	char line[128];

	/* npu-3 goes from 0 to 1. The sentinel: a real fault on npu-5, written
	 * later with npu-3 still at 1, must be the kubelet's next update, and
	 * it leaves npu-3 Healthy. */
	const char *warning[CHIPS] = { [3] = "health=1" };
	write_state(node, NULL, CHIPS, warning);
	let_polls_run(node);
	const char *warning_and_fault[CHIPS] = { [3] = "health=1", [5] = "health=2" };
	write_state(node, NULL, CHIPS, warning_and_fault);
	assert_non_null(proc_expect_next(k, "devices ", devices_line(line, sizeof(line), 8, 7, "npu-5"), WAIT_MS));

	/* npu-3 goes back from 1 to 0; then npu-5's recovery must be next. */
	const char *fault[CHIPS] = { [5] = "health=2" };
	write_state(node, NULL, CHIPS, fault);
	let_polls_run(node);
	write_state(node, NULL, CHIPS, NULL);
	assert_non_null(proc_expect_next(k, "devices ", devices_line(line, sizeof(line), 8, 8, "-"), WAIT_MS));
	assert_int_equal(count_events(p, "device.unhealthy", "device", "npu-3"), 0);
	node_fini(node);
}

/* Without fault events (the driver does not support them) the fault and the
 * recovery arrive by polling. */
static void test_fault_by_polling_without_events(void **state)
{
	struct node *node = *state;
	node_init(node, &(struct node_options){ .chips = CHIPS, .extra_state = "subscribe off\n" });
	start(node, "200ms", false, CHIPS);
	struct proc *k = node->kubelet, *p = node->plugin;
	char line[128];

	const char *faulty[CHIPS] = { [4] = "health=2 errors=80E18005" };
	write_state(node, "subscribe off\n", CHIPS, faulty);
	assert_non_null(proc_expect(k, devices_line(line, sizeof(line), 8, 7, "npu-4"), WAIT_MS));
	expect_event(p, "device.unhealthy", "device", "npu-4", "fault", "health-level", "health", "2", "code", "80E18005");

	write_state(node, "subscribe off\n", CHIPS, NULL);
	assert_non_null(proc_expect(k, devices_line(line, sizeof(line), 8, 8, "-"), WAIT_MS));
	expect_event(p, "device.healthy", "device", "npu-4");
	assert_int_equal(count_events(p, "dcmi.event"), 0);
	node_fini(node);
}

/* A chip whose health call fails (-8012: the card dropped off the bus) is
 * Unhealthy, and Healthy again once the call answers; found by polling,
 * since DCMI raises no event for it. */
static void test_failing_health_call(void **state)
{
	struct node *node = *state;
	node_init(node, &(struct node_options){ .chips = CHIPS });
	start(node, SHORT_INTERVAL, true, CHIPS);
	struct proc *k = node->kubelet, *p = node->plugin;
	char line[128];

	const char *dropped[CHIPS] = { [6] = "health=0 health_rc=-8012" };
	write_state(node, NULL, CHIPS, dropped);
	assert_non_null(proc_expect(k, devices_line(line, sizeof(line), 8, 7, "npu-6"), WAIT_MS));
	expect_event(p, "device.unhealthy", "device", "npu-6", "fault", "health-call", "dcmi_error", "-8012");

	write_state(node, NULL, CHIPS, NULL);
	assert_non_null(proc_expect(k, devices_line(line, sizeof(line), 8, 8, "-"), WAIT_MS));
	expect_event(p, "device.healthy", "device", "npu-6");
	node_fini(node);
}

/* Fault events that were unavailable when the plugin started (DCMI's
 * daemon not up yet) are used once DCMI offers them: the plugin subscribes
 * again rather than polling for the rest of its life. The plugin's own
 * "DCMI fault event" line shows that the handler ran. */
static void test_subscribes_when_events_become_available(void **state)
{
	struct node *node = *state;
	node_init(node, &(struct node_options){ .chips = CHIPS, .extra_state = "subscribe off\n" });
	start(node, "200ms", false, CHIPS);
	struct proc *k = node->kubelet, *p = node->plugin;
	char line[128];

	write_state(node, "subscribe on\n", CHIPS, NULL);
	expect_event(p, "dcmi.events-subscribed");
	const char *faulty[CHIPS] = { [7] = "health=2" };
	write_state(node, NULL, CHIPS, faulty);
	assert_non_null(proc_expect(k, devices_line(line, sizeof(line), 8, 7, "npu-7"), WAIT_MS));
	expect_event(p, "dcmi.event", "logic_id", "7", "assertion", "fault");
	node_fini(node);
}

/* A subscription lost while running (DCMI's daemon restarted) delivers no
 * more events; the plugin must keep polling while subscribed, so the next
 * fault is still caught. */
static void test_fault_after_subscription_lost(void **state)
{
	struct node *node = *state;
	node_init(node, &(struct node_options){ .chips = CHIPS });
	start(node, "200ms", true, CHIPS);
	struct proc *k = node->kubelet, *p = node->plugin;
	char line[128];

	/* The subscription works at first. */
	const char *first[CHIPS] = { [1] = "health=2" };
	write_state(node, NULL, CHIPS, first);
	assert_non_null(proc_expect(k, devices_line(line, sizeof(line), 8, 7, "npu-1"), WAIT_MS));
	write_state(node, NULL, CHIPS, NULL);
	assert_non_null(proc_expect(k, devices_line(line, sizeof(line), 8, 8, "-"), WAIT_MS));
	/* The log line may trail the update the kubelet saw: wait for it. */
	expect_event(p, "dcmi.event", "logic_id", "1", "assertion", "recovered");
	unsigned events = count_events(p, "dcmi.event");
	assert_true(events >= 2);

	/* DCMI drops every subscription, then chip 2 fails: no event is sent. */
	write_state(node, "subscribe off\n", CHIPS, NULL);
	const char *faulty[CHIPS] = { [2] = "health=3" };
	write_state(node, "subscribe off\n", CHIPS, faulty);
	assert_non_null(proc_expect(k, devices_line(line, sizeof(line), 8, 7, "npu-2"), WAIT_MS));

	write_state(node, "subscribe off\n", CHIPS, NULL);
	assert_non_null(proc_expect(k, devices_line(line, sizeof(line), 8, 8, "-"), WAIT_MS));
	/* Polls delivered both. */
	assert_int_equal(count_events(p, "dcmi.event"), events);
	node_fini(node);
}

/* A chip whose /dev/davinci<phy> disappears is Unhealthy (a container could
 * not use it) while DCMI still says it is fine; it comes back with the node. */
static void test_device_node_disappears(void **state)
{
	struct node *node = *state;
	node_init(node, &(struct node_options){ .chips = CHIPS });
	start(node, "200ms", true, CHIPS);
	struct proc *k = node->kubelet, *p = node->plugin;
	char line[128];

	node_remove(node, "dev/davinci2");
	assert_non_null(proc_expect(k, devices_line(line, sizeof(line), 8, 7, "npu-2"), WAIT_MS));
	expect_event(p, "device.unhealthy", "device", "npu-2", "fault", "node-missing");
	proc_send(k, "list");
	assert_non_null(proc_expect(k, "device id=npu-2 health=Unhealthy", WAIT_MS));

	node_touch(node, "dev/davinci2");
	assert_non_null(proc_expect(k, devices_line(line, sizeof(line), 8, 8, "-"), WAIT_MS));
	expect_event(p, "device.healthy", "device", "npu-2");
	node_fini(node);
}

/* "npu-0,npu-1,...,npu-<n-1>" */
static const char *all_ids(char *buf, size_t size, unsigned n)
{
	size_t used = 0;
	buf[0] = '\0';
	for (unsigned i = 0; i < n; i++) {
		int w = snprintf(buf + used, size - used, "%snpu-%u", i ? "," : "", i);
		assert_true(w > 0 && (size_t)w < size - used);
		used += (size_t)w;
	}
	return buf;
}

/* Without /dev/davinci_manager no container can use any chip: every device
 * is Unhealthy, said once however many polls see it, and all recover when
 * it returns. Polls are made observable by chips that DCMI starts to report
 * while events are off: only a poll can discover them. */
static void test_driver_not_ready(void **state)
{
	struct node *node = *state;
	node_init(node, &(struct node_options){ .chips = CHIPS, .extra_state = "subscribe off\n" });
	/* Nodes for the chips DCMI reports later, created before the plugin
	 * starts so they stir nothing. */
	node_touch(node, "dev/davinci8");
	node_touch(node, "dev/davinci9");
	node_touch(node, "dev/davinci10");
	start(node, SHORT_INTERVAL, false, CHIPS);
	struct proc *k = node->kubelet, *p = node->plugin;
	char line[256], ids[128];

	node_remove(node, "dev/davinci_manager");
	assert_non_null(proc_expect(k, devices_line(line, sizeof(line), 8, 0, all_ids(ids, sizeof(ids), 8)), WAIT_MS));
	expect_event(p, "driver.not-ready");

	/* Three more chips, one per state change, each found by a poll. */
	for (unsigned n = 9; n <= 11; n++) {
		write_state(node, "subscribe off\n", n, NULL);
		assert_non_null(
			proc_expect(k, devices_line(line, sizeof(line), n, 0, all_ids(ids, sizeof(ids), n)), WAIT_MS));
	}
	assert_int_equal(count_events(p, "driver.not-ready"), 1);
	assert_int_equal(count_events(p, "device.unhealthy", "device", "npu-10", "fault", "driver-not-ready"), 1);

	node_touch(node, "dev/davinci_manager");
	assert_non_null(proc_expect(k, devices_line(line, sizeof(line), 11, 11, "-"), WAIT_MS));
	expect_event(p, "driver.ready");
	assert_int_equal(count_events(p, "driver.not-ready"), 1);
	node_fini(node);
}

/* A node whose driver is not loaded yet at start: every chip Unhealthy from
 * the first update, then all Healthy once davinci_manager appears. */
static void test_driver_not_ready_at_start(void **state)
{
	struct node *node = *state;
	node_init(node, &(struct node_options){ .chips = 2, .no_manager = true });
	struct proc *k = node_start_kubelet(node);
	struct proc *p = node_start_plugin(node, (const char *[]){ "--health-interval", "200ms", NULL });
	char line[128];

	assert_non_null(proc_expect(k, devices_line(line, sizeof(line), 2, 0, "npu-0,npu-1"), WAIT_MS));
	expect_event(p, "driver.not-ready");
	node_touch(node, "dev/davinci_manager");
	assert_non_null(proc_expect(k, devices_line(line, sizeof(line), 2, 2, "-"), WAIT_MS));
	expect_event(p, "driver.ready");
	assert_int_equal(count_events(p, "driver.not-ready"), 1);
	node_fini(node);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_fault_and_recovery_by_event, node_setup, node_teardown),
		cmocka_unit_test_setup_teardown(test_flapping_chip_is_damped, node_setup, node_teardown),
		cmocka_unit_test_setup_teardown(test_repeated_fault_separates_the_chip, node_setup, node_teardown),
		cmocka_unit_test_setup_teardown(test_long_fault_escalates, node_setup, node_teardown),
		cmocka_unit_test_setup_teardown(test_absent_chip_stays_listed, node_setup, node_teardown),
		cmocka_unit_test_setup_teardown(test_warning_is_healthy_and_quiet, node_setup, node_teardown),
		cmocka_unit_test_setup_teardown(test_fault_by_polling_without_events, node_setup, node_teardown),
		cmocka_unit_test_setup_teardown(test_failing_health_call, node_setup, node_teardown),
		cmocka_unit_test_setup_teardown(test_fault_after_subscription_lost, node_setup, node_teardown),
		cmocka_unit_test_setup_teardown(test_subscribes_when_events_become_available, node_setup, node_teardown),
		cmocka_unit_test_setup_teardown(test_device_node_disappears, node_setup, node_teardown),
		cmocka_unit_test_setup_teardown(test_driver_not_ready, node_setup, node_teardown),
		cmocka_unit_test_setup_teardown(test_driver_not_ready_at_start, node_setup, node_teardown),
		cmocka_unit_test_setup_teardown(test_network_fault_code, node_setup, node_teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
