/* SPDX-License-Identifier: Apache-2.0 */
/* The guarded hot reset against the DCMI simulator's reset calls, with the
 * real daemon and kubelet-sim (whose pod resources server says who holds
 * what): a reset that works (the chip is back Healthy), one whose chip
 * comes back with its fault (reset again until the resets are spent, then
 * separated), one whose chip never comes back (separated at the timeout),
 * one whose DCMI call fails, and no reset while a container holds the chip
 * (until it is released). During a reset the kubelet sees the chip
 * Unhealthy: the lists are checked in order with proc_expect_next.
 *
 * No polling: the health interval is an hour, so only DCMI's events (the
 * fault, the simulator's reset-finished event) and the plugin's own reset
 * timer drive the refreshes. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "harness/harness.h"
#include "harness/http.h"
#include "base/file.h"

#define CHIPS 4
/* Four 910B chips make one board: a reset of one takes all four down
 * (node/reset_group.h), so the kubelet sees them all Unhealthy meanwhile. */
#define GROUP "npu-0,npu-1,npu-2,npu-3"
/* 80E18005 (HBMC parity) is RestartNPU in the built-in table. */
#define FAULT "health=2 errors=80E18005"

/* The plugin's metrics port, read from its log at the start. */
static uint16_t metrics_port;

/* Writes the node's state with attrs on chip phy (NULL: all healthy). */
static void write_chip(struct node *node, unsigned phy, const char *attrs)
{
	const char *all[CHIPS] = { 0 };
	if (attrs)
		all[phy] = attrs;
	node_write_chip_state(node, &(struct chip_state){ .chips = CHIPS, .attrs = all });
}

/* The same with two chips' attrs. */
static void write_chips(struct node *node, unsigned a, const char *attrs_a, unsigned b, const char *attrs_b)
{
	const char *all[CHIPS] = { 0 };
	all[a] = attrs_a;
	all[b] = attrs_b;
	node_write_chip_state(node, &(struct chip_state){ .chips = CHIPS, .attrs = all });
}

/* Writes the config file: no recovery hold, resets on (maxResets 2, the
 * given timeout) or, without a timeout, off. */
static void write_config(struct node *node, const char *path, const char *timeout)
{
	char text[256];
	if (timeout)
		snprintf(text, sizeof(text),
			 "version: v1\nfaultPolicy:\n  recoveryHold: 0\n  reset:\n    enabled: true\n    maxResets: 2\n"
			 "    timeout: %s\n",
			 timeout);
	else
		snprintf(text, sizeof(text), "version: v1\nfaultPolicy:\n  recoveryHold: 0\n");
	char tmp[160];
	snprintf(tmp, sizeof(tmp), "%s/config.tmp", node->root);
	FILE *f = fopen(tmp, "we");
	assert_non_null(f);
	fputs(text, f);
	assert_int_equal(fclose(f), 0);
	assert_int_equal(rename(tmp, path), 0);
}

/* The config file (write_config), kubelet-sim with a pod resources server,
 * the plugin with metrics; waits until every chip is Healthy. */
static void start(struct node *node, const char *timeout)
{
	char config[128], flag[160], podres[200];
	snprintf(config, sizeof(config), "%s/config.yaml", node->root);
	write_config(node, config, timeout);
	snprintf(flag, sizeof(flag), "--config=%s", config);
	snprintf(podres, sizeof(podres), "%s/pod-resources.sock", node->root);
	struct proc *k = node_start_kubelet_with(node, (const char *[]){ "--pod-resources-socket", podres, NULL });
	char reset_log[200];
	snprintf(reset_log, sizeof(reset_log), "ASCEND_FAKE_DCMI_RESET_LOG=%s/resets.log", node->root);
	node_start_plugin_env(node,
			      (const char *[]){ "--health-interval", "1h", "--metrics-addr=127.0.0.1:0",
						"--pod-resources-socket", podres, flag, NULL },
			      (const char *[]){ reset_log, NULL });
	metrics_port = http_plugin_port(node->plugin);
	char line[128];
	assert_non_null(proc_expect(k, devices_line(line, sizeof(line), node->chips, node->chips, "-"), WAIT_MS));
}

/* The value of one of the chip's reset counters. */
static double resets(const char *id, const char *result)
{
	struct http_response resp;
	http_call(metrics_port, "GET", "/metrics", &resp);
	assert_int_equal(resp.status, 200);
	char series[160];
	snprintf(series, sizeof(series), "ascend_npu_resets_total{id=\"%s\",phy=\"%c\",chip=\"910B3\",result=\"%s\"}", id,
		 id[4], result);
	double v = http_metric(resp.body, series);
	http_response_clear(&resp);
	return v;
}

/* The value of one of the chip's reset decision counters. */
static double decisions(const char *id, const char *reason)
{
	struct http_response resp;
	http_call(metrics_port, "GET", "/metrics", &resp);
	assert_int_equal(resp.status, 200);
	char series[160];
	snprintf(series, sizeof(series),
		 "ascend_npu_reset_decisions_total{id=\"%s\",phy=\"%c\",chip=\"910B3\",reason=\"%s\"}", id, id[4],
		 reason);
	double v = http_metric(resp.body, series);
	http_response_clear(&resp);
	return v;
}

/* What the simulator's reset log holds ("" when nothing was reset). */
static const char *reset_log(struct node *node)
{
	static char text[512];
	char path[128], *buf = NULL, why[128];
	size_t len = 0;
	snprintf(path, sizeof(path), "%s/resets.log", node->root);
	text[0] = '\0';
	if (file_read_bounded(path, sizeof(text) - 1, &buf, &len, why, sizeof(why)) == 0) {
		memcpy(text, buf, len);
		text[len] = '\0';
	}
	free(buf);
	return text;
}

/* An 8-chip 910B board whose chips reset together (reset_group=0), with
 * attrs added to chip phy's line (NULL: none) and to chip busy's (NULL:
 * none). */
#define BOARD 8
static void write_board(struct node *node, unsigned phy, const char *attrs, unsigned busy, const char *busy_attrs)
{
	char lines[BOARD][160];
	const char *all[BOARD];
	for (unsigned i = 0; i < BOARD; i++) {
		const char *extra = i == phy && attrs ? attrs : i == busy && busy_attrs ? busy_attrs : "health=0";
		snprintf(lines[i], sizeof(lines[i]), "reset_group=0 %s", extra);
		all[i] = lines[i];
	}
	node_write_chip_state(node, &(struct chip_state){ .chips = BOARD, .attrs = all });
}

/* A fault on one chip of an 8-chip 910B board resets all eight: the
 * kubelet sees them all Unhealthy until the reset is over, DCMI took all
 * eight down, and the decision is logged and counted. */
static void test_group_reset_takes_the_board(void **state)
{
	struct node *node = *state;
	node_init(node, &(struct node_options){ .chips = BOARD });
	write_board(node, BOARD, NULL, BOARD, NULL);
	start(node, "10s");
	struct proc *k = node->kubelet, *p = node->plugin;
	char line[256];

	write_board(node, 3, FAULT " reset=clean reset_ms=300", BOARD, NULL);
	assert_non_null(proc_expect(
		k, devices_line(line, sizeof(line), BOARD, 0, "npu-0,npu-1,npu-2,npu-3,npu-4,npu-5,npu-6,npu-7"), WAIT_MS));
	expect_event(p, "reset.started", "device", "npu-3", "fault_level", "RestartNPU", "code", "80E18005", "group",
		     "npu-0..npu-7");
	assert_non_null(proc_expect_next(k, "devices ", devices_line(line, sizeof(line), BOARD, BOARD, "-"), WAIT_MS));
	expect_event(p, "reset.done", "device", "npu-3", "attempt", "1");
	assert_string_equal(reset_log(node), "reset phy=3 chips=0,1,2,3,4,5,6,7\n");
	assert_true(decisions("npu-3", "reset") == 1);
	assert_true(decisions("npu-3", "held-by-pod") == 0);
	assert_true(resets("npu-3", "succeeded") == 1);
	node_fini(node);
}

/* Another chip of the board held by a pod: no reset, said and counted
 * once. Released, but DCMI lists a process on a third chip: still no
 * reset, said and counted. The process gone, the board is reset. */
static void test_group_not_reset_while_held_or_busy(void **state)
{
	struct node *node = *state;
	node_init(node, &(struct node_options){ .chips = BOARD });
	write_board(node, BOARD, NULL, BOARD, NULL);
	start(node, "10s");
	struct proc *k = node->kubelet, *p = node->plugin;
	char line[256];

	proc_send(k, "allocate 1");
	const char *ok = proc_expect(k, "allocate ok", WAIT_MS);
	assert_non_null(ok);
	char id[32];
	line_value(ok, "ids", id, sizeof(id));
	expect_event(p, "pod-resources.read", "containers", "1");
	unsigned held = (unsigned)(id[4] - '0');
	unsigned faulty = held == 3 ? 5 : 3, busy = held == 6 || faulty == 6 ? 7 : 6;
	char faulty_id[16], busy_text[64];
	snprintf(faulty_id, sizeof(faulty_id), "npu-%u", faulty);

	write_board(node, faulty, FAULT " reset=clean reset_ms=200", BOARD, NULL);
	expect_event(p, "reset.held", "device", faulty_id, "fault_level", "RestartNPU", "holders",
		     "default/kubelet-sim-pod-1/container-1", "group", "npu-0..npu-7", "group_kind", "board");
	assert_true(decisions(faulty_id, "held-by-pod") == 1);

	/* A process on a third chip, then the pod goes. */
	write_board(node, faulty, FAULT " reset=clean reset_ms=200", busy, "health=0 procs=4242:1024");
	snprintf(line, sizeof(line), "release %s", id);
	proc_send(k, line);
	assert_non_null(proc_expect(k, "released ids=", WAIT_MS));
	snprintf(busy_text, sizeof(busy_text), "npu-%u runs 1 process (pid 4242)", busy);
	expect_event(p, "reset.busy-process", "device", faulty_id, "holders", busy_text, "group", "npu-0..npu-7");
	assert_true(decisions(faulty_id, "busy-process") == 1);
	assert_int_equal(count_events(p, "reset.started"), 0);
	assert_string_equal(reset_log(node), "");

	/* The process ends: the board is reset. */
	write_board(node, faulty, FAULT " reset=clean reset_ms=200", BOARD, NULL);
	expect_event(p, "reset.started", "device", faulty_id, "group", "npu-0..npu-7");
	expect_event(p, "reset.done", "device", faulty_id, "attempt", "1");
	snprintf(line, sizeof(line), "reset phy=%u chips=0,1,2,3,4,5,6,7\n", faulty);
	assert_string_equal(reset_log(node), line);
	assert_int_equal(count_events(p, "reset.held"), 1);
	assert_int_equal(count_events(p, "reset.busy-process"), 1);
	assert_true(decisions(faulty_id, "reset") == 1);
	node_fini(node);
}

static double separated(const char *id)
{
	struct http_response resp;
	http_call(metrics_port, "GET", "/metrics", &resp);
	assert_int_equal(resp.status, 200);
	char series[128];
	snprintf(series, sizeof(series), "ascend_npu_separated{id=\"%s\",phy=\"%c\",chip=\"910B3\"}", id, id[4]);
	double v = http_metric(resp.body, series);
	http_response_clear(&resp);
	return v;
}

/* The chip is reset, goes away, comes back clean: Healthy again, and the
 * kubelet never saw it Healthy in between. */
static void test_reset_that_works(void **state)
{
	struct node *node = *state;
	node_init(node, &(struct node_options){ .chips = CHIPS });
	start(node, "10s");
	struct proc *k = node->kubelet, *p = node->plugin;
	char line[128];

	write_chip(node, 2, FAULT " reset=clean reset_ms=300");
	/* First the chip alone (the reset waits for a list of holders), then
	 * its whole board. */
	assert_non_null(proc_expect(k, devices_line(line, sizeof(line), CHIPS, 0, GROUP), WAIT_MS));
	expect_event(p, "reset.started", "device", "npu-2", "fault_level", "RestartNPU", "code", "80E18005", "attempt", "1",
		     "max_resets", "2", "timeout_s", "10", "group", "npu-0..npu-3");
	/* The driver's event of a reset that finished is no fault. It may come
	 * before or after the refresh that finds the chip back. */
	expect_event(p, "dcmi.event", "logic_id", "2", "assertion", "one-off event", "severity", "0", "event_id",
		     "8C2FA009");
	assert_non_null(proc_expect_next(k, "devices ", devices_line(line, sizeof(line), CHIPS, CHIPS, "-"), WAIT_MS));
	assert_int_equal(count_events(p, "reset.done", "device", "npu-2", "attempt", "1"), 1);
	assert_int_equal(count_events(p, "dcmi.event", "logic_id", "2", "assertion", "fault", "severity", "0"), 0);
	assert_true(resets("npu-2", "attempted") == 1);
	assert_true(resets("npu-2", "succeeded") == 1);
	assert_true(resets("npu-2", "failed") == 0);
	assert_true(separated("npu-2") == 0);
	/* Chips never reset have no reset series. */
	assert_true(resets("npu-1", "attempted") == -1);
	node_fini(node);
}

/* Back with its fault each time: reset again, then separated once the two
 * resets are spent; it stays out after the fault clears. */
static void test_reset_back_faulty_until_separated(void **state)
{
	struct node *node = *state;
	node_init(node, &(struct node_options){ .chips = CHIPS });
	start(node, "10s");
	struct proc *k = node->kubelet, *p = node->plugin;
	char line[128];

	write_chip(node, 1, FAULT " reset=faulty reset_ms=200");
	/* First the chip alone (the reset waits for a list of holders), then
	 * its whole board. */
	assert_non_null(proc_expect(k, devices_line(line, sizeof(line), CHIPS, 0, GROUP), WAIT_MS));
	expect_event(p, "reset.started", "device", "npu-1", "fault_level", "RestartNPU", "code", "80E18005", "attempt", "1",
		     "max_resets", "2");
	expect_event(p, "reset.back-faulty", "device", "npu-1", "attempt", "1");
	expect_event(p, "reset.started", "device", "npu-1", "fault_level", "RestartNPU", "code", "80E18005", "attempt", "2",
		     "max_resets", "2");
	expect_event(p, "reset.back-faulty", "device", "npu-1", "attempt", "2");
	expect_event(p, "reset.exhausted", "device", "npu-1", "fault_level", "RestartNPU", "code", "80E18005", "attempt", "2");
	expect_event(p, "fault.level", "device", "npu-1", "fault_level", "ManuallySeparateNPU", "rule", "manual separation",
		     "code", "80E18005");
	assert_true(resets("npu-1", "attempted") == 2);
	assert_true(resets("npu-1", "failed") == 2);

	/* The fault clears: the chip stays out. Another chip's fault is the
	 * sentinel for the next list (and the metrics of the refreshes before
	 * it are published by then). */
	write_chip(node, 1, NULL);
	expect_event(p, "dcmi.event", "logic_id", "1", "assertion", "recovered");
	write_chip(node, 3, "health=3");
	assert_non_null(proc_expect(k, devices_line(line, sizeof(line), CHIPS, CHIPS - 2, "npu-1,npu-3"), WAIT_MS));
	assert_int_equal(count_events(p, "reset.started", "device", "npu-1"), 2);
	assert_true(separated("npu-1") == 1);
	node_fini(node);
}

/* Never back: separated when the timeout passes. */
static void test_reset_never_back(void **state)
{
	struct node *node = *state;
	node_init(node, &(struct node_options){ .chips = CHIPS });
	start(node, "2s");
	struct proc *k = node->kubelet, *p = node->plugin;
	char line[128];

	write_chip(node, 0, FAULT " reset=never");
	/* First the chip alone (the reset waits for a list of holders), then
	 * its whole board. */
	assert_non_null(proc_expect(k, devices_line(line, sizeof(line), CHIPS, 0, GROUP), WAIT_MS));
	expect_event(p, "reset.started", "device", "npu-0");
	expect_event(p, "reset.timed-out", "device", "npu-0", "fault_level", "RestartNPU", "code", "80E18005", "attempt", "1");
	assert_true(resets("npu-0", "attempted") == 1);
	assert_true(resets("npu-0", "failed") == 1);
	assert_int_equal(count_events(p, "reset.started", "device", "npu-0"), 1);
	/* The chip comes back later (the state file takes over): separated. */
	write_chip(node, 0, NULL);
	expect_event(p, "fault.level", "device", "npu-0", "fault_level", "ManuallySeparateNPU", "rule", "manual separation",
		     "code", "80E18005");
	write_chip(node, 3, "health=3");
	assert_non_null(proc_expect(k, devices_line(line, sizeof(line), CHIPS, CHIPS - 2, "npu-0,npu-3"), WAIT_MS));
	node_fini(node);
}

/* A chip that leaves DCMI's list during its reset still times out, and
 * is separated when it is listed again. */
static void test_reset_chip_leaves_the_list(void **state)
{
	struct node *node = *state;
	node_init(node, &(struct node_options){ .chips = CHIPS });
	start(node, "2s");
	struct proc *p = node->plugin;

	write_chip(node, 0, FAULT " reset=never");
	expect_event(p, "reset.returned", "device", "npu-0", "attempt", "1");
	node_write_state(node, "driver 24.1.rc1\nchip phy=1\nchip phy=2\nchip phy=3\n");
	expect_event(p, "reset.timed-out", "device", "npu-0", "fault_level", "RestartNPU", "code", "80E18005", "attempt", "1");
	/* Back in the list (a fault on another chip makes the plugin look). */
	write_chip(node, 3, "health=3");
	expect_event(p, "fault.level", "device", "npu-0", "fault_level", "ManuallySeparateNPU", "rule", "manual separation",
		     "code", "80E18005");
	node_fini(node);
}

/* DCMI refuses the reset: separated at once, nothing else tried. */
static void test_reset_call_fails(void **state)
{
	struct node *node = *state;
	node_init(node, &(struct node_options){ .chips = CHIPS });
	start(node, "10s");
	struct proc *p = node->plugin;

	write_chip(node, 3, FAULT " fail=reset:-8015");
	expect_event(p, "reset.failed", "device", "npu-3", "fault_level", "RestartNPU", "code", "80E18005", "attempt", "1",
		     "call", "dcmi_set_device_reset", "dcmi_error", "-8015");
	expect_event(p, "fault.level", "device", "npu-3", "fault_level", "ManuallySeparateNPU", "rule", "manual separation",
		     "code", "80E18005");
	assert_true(resets("npu-3", "attempted") == 1);
	assert_true(resets("npu-3", "failed") == 1);
	/* A sentinel: once the kubelet has the next list, the separation's
	 * refresh has published its metrics. */
	write_chips(node, 3, FAULT " fail=reset:-8015", 1, "health=3");
	char line[128];
	assert_non_null(proc_expect(node->kubelet, devices_line(line, sizeof(line), CHIPS, CHIPS - 2, "npu-1,npu-3"),
				    WAIT_MS));
	assert_true(separated("npu-3") == 1);
	node_fini(node);
}

/* A container holds the chip: no reset, said once; released, it is reset. */
static void test_no_reset_while_held(void **state)
{
	struct node *node = *state;
	node_init(node, &(struct node_options){ .chips = CHIPS });
	start(node, "10s");
	struct proc *k = node->kubelet, *p = node->plugin;
	char line[256];

	proc_send(k, "allocate 1");
	const char *ok = proc_expect(k, "allocate ok", WAIT_MS);
	assert_non_null(ok);
	char id[32];
	line_value(ok, "ids", id, sizeof(id));
	expect_event(p, "pod-resources.read", "containers", "1");
	unsigned phy = (unsigned)(id[4] - '0');

	write_chip(node, phy, FAULT " reset=clean reset_ms=200");
	expect_event(p, "reset.held", "device", id, "fault_level", "RestartNPU", "code", "80E18005", "holders",
		     "default/kubelet-sim-pod-1/container-1");
	/* More lists come (the plugin asks for them); still no reset, said once.
	 * Another chip's fault and its decision are the sentinel. */
	unsigned other = phy == 3 ? 2 : 3;
	write_chips(node, phy, FAULT " reset=clean reset_ms=200", other, "health=3");
	char other_id[16];
	snprintf(other_id, sizeof(other_id), "npu-%u", other);
	expect_event(p, "device.unhealthy", "device", other_id, "fault", "health-level", "health", "3");
	assert_int_equal(count_events(p, "reset.started"), 0);
	assert_int_equal(count_events(p, "reset.held"), 1);
	assert_true(resets(id, "attempted") == -1);

	/* The pod is gone: the chip is reset at the next look. */
	snprintf(line, sizeof(line), "release %s", id);
	proc_send(k, line);
	assert_non_null(proc_expect(k, "released ids=", WAIT_MS));
	expect_event(p, "reset.started", "device", id, "fault_level", "RestartNPU", "code", "80E18005");
	expect_event(p, "reset.done", "device", id, "attempt", "1");
	node_fini(node);
}

/* Off by default: a RestartNPU chip stays Unhealthy, nothing is reset;
 * turned on by a reload, the chip is reset. */
static void test_off_by_default_and_reloaded(void **state)
{
	struct node *node = *state;
	node_init(node, &(struct node_options){ .chips = CHIPS });
	start(node, NULL);
	struct proc *k = node->kubelet, *p = node->plugin;
	char line[128];
	write_chip(node, 2, FAULT " reset=clean reset_ms=100");
	expect_event(p, "fault.level", "device", "npu-2", "fault_level", "RestartNPU", "rule", "code table", "code",
		     "80E18005");
	assert_non_null(proc_expect(k, devices_line(line, sizeof(line), CHIPS, CHIPS - 1, "npu-2"), WAIT_MS));
	assert_int_equal(count_events(p, "reset.started"), 0);

	char config[128];
	snprintf(config, sizeof(config), "%s/config.yaml", node->root);
	write_config(node, config, "10s");
	expect_event(p, "reset.policy-changed", "trigger", "reload", "enabled", "1", "max_resets", "2", "window_s", "86400",
		     "timeout_s", "10");
	expect_event(p, "reset.started", "device", "npu-2", "fault_level", "RestartNPU", "code", "80E18005");
	expect_event(p, "reset.done", "device", "npu-2", "attempt", "1");
	assert_non_null(proc_expect(k, devices_line(line, sizeof(line), CHIPS, CHIPS, "-"), WAIT_MS));
	node_fini(node);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_reset_that_works, node_setup, node_teardown),
		cmocka_unit_test_setup_teardown(test_reset_back_faulty_until_separated, node_setup, node_teardown),
		cmocka_unit_test_setup_teardown(test_reset_never_back, node_setup, node_teardown),
		cmocka_unit_test_setup_teardown(test_reset_chip_leaves_the_list, node_setup, node_teardown),
		cmocka_unit_test_setup_teardown(test_reset_call_fails, node_setup, node_teardown),
		cmocka_unit_test_setup_teardown(test_no_reset_while_held, node_setup, node_teardown),
		cmocka_unit_test_setup_teardown(test_off_by_default_and_reloaded, node_setup, node_teardown),
		cmocka_unit_test_setup_teardown(test_group_reset_takes_the_board, node_setup, node_teardown),
		cmocka_unit_test_setup_teardown(test_group_not_reset_while_held_or_busy, node_setup, node_teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
