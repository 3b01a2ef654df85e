/* SPDX-License-Identifier: Apache-2.0 */
/* Separation that survives restarts, and release: a chip separated by a
 * frequency window is recorded in --state-dir; a plugin started again has
 * it Unhealthy in its very first device list; `ascend-doctor release` (the
 * real binary) brings it back Healthy in the running plugin, and a record
 * written by hand separates a chip; the release window of faultPolicy
 * releases a chip by itself and drops its record; a record damaged while
 * the plugin runs is set aside at the next separation; a record the plugin
 * cannot read stops its start, naming the file and the line. */
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "base/file.h"
#include "base/parse.h"
#include "harness/harness.h"

#define CHIPS 8
#define NO_POLLING "1h"

static void write_config(struct node *node, const char *text, char *flag, size_t flag_size)
{
	char path[128];
	snprintf(path, sizeof(path), "%s/config.yaml", node->root);
	assert_int_equal(file_write_atomic(path, text, strlen(text), 0644, 0), 0);
	snprintf(flag, flag_size, "--config=%s", path);
}

static void write_state(struct node *node, const char *const attrs[])
{
	node_write_chip_state(node, &(struct chip_state){ .chips = CHIPS, .attrs = attrs });
}

/* The record's text ("" when there is no file). */
static char *record(struct node *node)
{
	char path[160], why[128], *text;
	size_t len;
	snprintf(path, sizeof(path), "%s/separated-chips", node->state_dir);
	if (!path_exists(path))
		return strdup("");
	assert_int_equal(file_read_bounded(path, 65536, &text, &len, why, sizeof(why)), 0);
	return text;
}

/* Two onsets of 80E01801 on npu-5 separate it (count 2 in the config);
 * its fault then clears. */
static void separate_npu5(struct node *node)
{
	struct proc *k = node->kubelet, *p = node->plugin;
	char line[128];
	const char *faulty[CHIPS] = { [5] = "health=2 errors=80E01801" };
	write_state(node, faulty);
	assert_non_null(proc_expect(k, devices_line(line, sizeof(line), 8, 7, "npu-5"), WAIT_MS));
	write_state(node, NULL);
	assert_non_null(proc_expect(k, devices_line(line, sizeof(line), 8, 8, "-"), WAIT_MS));
	write_state(node, faulty);
	expect_event(p, "fault.separated", "device", "npu-5", "fault_level", "ManuallySeparateNPU", "rule", "frequency",
		     "code", "80E01801");
	assert_non_null(proc_expect(k, devices_line(line, sizeof(line), 8, 7, "npu-5"), WAIT_MS));
	write_state(node, NULL);
	expect_event(p, "dcmi.event", "logic_id", "5", "assertion", "recovered");
}

static struct proc *run_doctor(struct node *node, const char *chip)
{
	const char *argv[] = { DOCTOR_BIN, "release", chip, "--state-dir", node->state_dir, NULL };
	return proc_start(argv, NULL);
}

static void test_separation_survives_restart_until_released(void **state)
{
	struct node *node = *state;
	node_init(node, &(struct node_options){ .chips = CHIPS });
	char flag[160], line[128];
	write_config(node,
		     "version: v1\nfaultPolicy:\n  recoveryHold: 0\n  frequency:\n  - codes: [80E01801]\n    count: 2\n"
		     "    window: 1h\n    level: ManuallySeparateNPU\n",
		     flag, sizeof(flag));
	const char *flags[] = { "--health-interval", NO_POLLING, flag, NULL };
	struct proc *k = node_start_kubelet(node);
	node_start_plugin(node, flags);
	assert_non_null(proc_expect(k, devices_line(line, sizeof(line), CHIPS, CHIPS, "-"), WAIT_MS));
	separate_npu5(node);
	char *text = record(node);
	assert_non_null(strstr(text, "\nnpu-5 level=ManuallySeparateNPU code=80E01801 rule=frequency since=20"));
	free(text);

	/* A restart: the chip is out from the first list on, though DCMI
	 * finds it clean. */
	proc_kill(node->plugin, SIGTERM);
	assert_int_equal(proc_wait(node->plugin, EXIT_WAIT_MS), 0);
	proc_free(node->plugin);
	struct proc *p = node_start_plugin(node, flags);
	char chips[256];
	event_field(expect_event(p, "separations.loaded", "count", "1"), "chips", chips, sizeof(chips));
	assert_non_null(strstr(chips, "npu-5 (code 80E01801, frequency, since 20"));
	assert_non_null(proc_expect(k, "register resource=ascend.com/npu", WAIT_MS));
	assert_non_null(proc_expect_next(k, "devices ", devices_line(line, sizeof(line), 8, 7, "npu-5"), WAIT_MS));

	/* The operator releases it without the API: the plugin sees the
	 * record go and the chip comes back. */
	struct proc *doctor = run_doctor(node, "npu-5");
	assert_non_null(proc_expect(doctor, "OK release: npu-5 released (was ManuallySeparateNPU since 20", WAIT_MS));
	assert_int_equal(proc_wait(doctor, EXIT_WAIT_MS), 0);
	proc_free(doctor);
	expect_event(p, "separation.removed", "phy", "5");
	assert_non_null(proc_expect_next(k, "devices ", devices_line(line, sizeof(line), 8, 8, "-"), WAIT_MS));
	expect_event(p, "fault.released", "device", "npu-5");
	text = record(node);
	assert_null(strstr(text, "npu-5"));
	free(text);
	/* Released twice: nothing names it any more. */
	doctor = run_doctor(node, "npu-5");
	assert_non_null(proc_expect(doctor, "FAIL release: npu-5 is not separated", WAIT_MS));
	assert_int_equal(proc_wait(doctor, EXIT_WAIT_MS), 2);
	proc_free(doctor);

	/* A record written by hand separates its chip in the running plugin. */
	char path[160];
	snprintf(path, sizeof(path), "%s/separated-chips", node->state_dir);
	const char *hand = "npu-2 level=ManuallySeparateNPU code=none rule=manual-separation since=2026-12-02T14:40:00Z\n";
	assert_int_equal(file_write_atomic(path, hand, strlen(hand), 0644, 0), 0);
	expect_event(p, "separation.added", "phy", "2");
	assert_non_null(proc_expect_next(k, "devices ", devices_line(line, sizeof(line), 8, 7, "npu-2"), WAIT_MS));
	node_fini(node);
}

/* faultPolicy.releaseWindow: once the separating code stayed away that
 * long, the chip is released and its record dropped. Polling makes the
 * steps that see the window pass. */
static void test_release_window(void **state)
{
	struct node *node = *state;
	node_init(node, &(struct node_options){ .chips = CHIPS });
	char flag[160], line[128];
	write_config(node,
		     "version: v1\nfaultPolicy:\n  recoveryHold: 0\n  releaseWindow: 300ms\n  frequency:\n"
		     "  - codes: [80E01801]\n    count: 2\n    window: 1h\n    level: ManuallySeparateNPU\n",
		     flag, sizeof(flag));
	struct proc *k = node_start_kubelet(node);
	struct proc *p = node_start_plugin(node, (const char *[]){ "--health-interval", "100ms", flag, NULL });
	assert_non_null(proc_expect(k, devices_line(line, sizeof(line), CHIPS, CHIPS, "-"), WAIT_MS));
	separate_npu5(node);
	expect_event(p, "fault.released", "device", "npu-5", "fault_level", "none", "rule", "release window", "code",
		     "80E01801");
	assert_non_null(proc_expect(k, devices_line(line, sizeof(line), 8, 8, "-"), WAIT_MS));
	char *text = record(node);
	assert_null(strstr(text, "npu-5"));
	assert_non_null(strstr(text, "# Chips the Ascend device plugin separated"));
	free(text);
	node_fini(node);
}

/* A record damaged while the plugin runs: logged, the chips stay as they
 * are; the next separation keeps the damaged file aside and writes the
 * plugin's own record, which names every chip still separated. */
static void test_record_damaged_while_running(void **state)
{
	struct node *node = *state;
	node_init(node, &(struct node_options){ .chips = CHIPS });
	char flag[160], line[128], path[160], aside[180];
	write_config(node,
		     "version: v1\nfaultPolicy:\n  recoveryHold: 0\n  codes:\n    80E18402: ManuallySeparateNPU\n"
		     "  frequency:\n  - codes: [80E01801]\n    count: 2\n    window: 1h\n    level: ManuallySeparateNPU\n",
		     flag, sizeof(flag));
	struct proc *k = node_start_kubelet(node);
	struct proc *p = node_start_plugin(node, (const char *[]){ "--health-interval", NO_POLLING, flag, NULL });
	assert_non_null(proc_expect(k, devices_line(line, sizeof(line), CHIPS, CHIPS, "-"), WAIT_MS));
	separate_npu5(node);
	snprintf(path, sizeof(path), "%s/separated-chips", node->state_dir);
	const char *bad = "npu-5 level=ManuallySeparateNPU code=80E01801 rule=frequency since=soon\n";
	assert_int_equal(file_write_atomic(path, bad, strlen(bad), 0644, 0), 0);
	expect_event(p, "separations.unreadable", "reason",
		     "line 1: since 'soon' is not a UTC time such as 2026-12-02T14:40:00Z");
	/* npu-2's code separates it by its level: both are in the new record. */
	const char *faulty[CHIPS] = { [2] = "health=2 errors=80E18402" };
	write_state(node, faulty);
	expect_event(p, "fault.separated", "device", "npu-2", "fault_level", "ManuallySeparateNPU", "rule", "code table",
		     "code", "80E18402");
	assert_non_null(proc_expect(k, devices_line(line, sizeof(line), 8, 6, "npu-2,npu-5"), WAIT_MS));
	snprintf(aside, sizeof(aside), "%s.corrupt", path);
	assert_true(path_exists(aside));
	char *text = record(node);
	assert_non_null(strstr(text, "\nnpu-5 level=ManuallySeparateNPU code=80E01801 rule=frequency since=20"));
	assert_non_null(strstr(text, "\nnpu-2 level=ManuallySeparateNPU code=80E18402 rule=code-table since=20"));
	free(text);
	node_fini(node);
}

/* A record the plugin cannot read: it does not start (it could not tell
 * which chips to keep out), and says what and where. */
static void test_unreadable_record_stops_the_start(void **state)
{
	struct node *node = *state;
	node_init(node, &(struct node_options){ .chips = CHIPS });
	assert_int_equal(mkdir_p(node->state_dir, 0755), 0);
	char path[160];
	snprintf(path, sizeof(path), "%s/separated-chips", node->state_dir);
	const char *bad = "# edited by hand\nnpu-5 level=ManuallySeparateNPU code=80E0180G rule=frequency\n";
	assert_int_equal(file_write_atomic(path, bad, strlen(bad), 0644, 0), 0);
	struct proc *p = node_start_plugin(node, NULL);
	char reason[1024];
	event_field(expect_event(p, "start.failed"), "reason", reason, sizeof(reason));
	assert_int_equal(proc_wait(p, EXIT_WAIT_MS), 1);
	char want[256];
	snprintf(want, sizeof(want), "%s cannot be read: line 2: code '80E0180G' is not a fault code (hex) or none", path);
	assert_non_null(strstr(reason, want));
	assert_int_equal(count_events(p, "start.failed"), 1);
	proc_free(p);
	node->plugin = NULL;
	node_fini(node);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_separation_survives_restart_until_released, node_setup, node_teardown),
		cmocka_unit_test_setup_teardown(test_release_window, node_setup, node_teardown),
		cmocka_unit_test_setup_teardown(test_record_damaged_while_running, node_setup, node_teardown),
		cmocka_unit_test_setup_teardown(test_unreadable_record_stops_the_start, node_setup, node_teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
