/* SPDX-License-Identifier: Apache-2.0 */
/* A stderr that nobody reads must not stop the plugin. The harness fills the
 * plugin's stderr pipe and stops reading it, as a log collector that hangs
 * would; the plugin must still turn a chip fault into an Unhealthy update for
 * the kubelet and still exit 0 on SIGTERM, within the usual deadlines. Before
 * the log had a writer thread, the loop thread blocked in write() on its next
 * log line and did neither.
 *
 * No timing is asserted: the benchmark measures the stall (docs/performance.md).
 * With a 1h health interval only the DCMI fault event can deliver the fault,
 * and the plugin logs that event on the loop thread before it publishes. */
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "harness/harness.h"

#define CHIPS 4
#define NO_POLLING "1h"

/* kubelet-sim and the plugin, registered with every chip Healthy and
 * subscribed to fault events; the plugin logs at debug level (harness). */
static void start(struct node *node)
{
	node_init(node, &(struct node_options){ .chips = CHIPS });
	node_start_registered(node, (const char *[]){ "--health-interval", NO_POLLING, NULL });
	expect_event(node->plugin, "dcmi.events-subscribed");
}

static void inject_fault(struct node *node, unsigned phy)
{
	const char *attrs[CHIPS] = { NULL };
	attrs[phy] = "health=2 errors=80E01801";
	node_write_chip_state(node, &(struct chip_state){ .chips = CHIPS, .attrs = attrs });
}

/* With stderr blocked, the fault reaches the kubelet, the recovery too, and
 * SIGTERM ends the plugin with 0 although what it logged cannot be written. */
static void test_blocked_stderr_does_not_stop_the_plugin(void **state)
{
	struct node *node = *state;
	start(node);
	struct proc *k = node->kubelet, *p = node->plugin;
	char line[128];

	proc_block_stderr(p);
	inject_fault(node, 2);
	assert_non_null(proc_expect(k, devices_line(line, sizeof(line), CHIPS, CHIPS - 1, "npu-2"), WAIT_MS));
	node_write_chips(node, CHIPS, NULL);
	assert_non_null(proc_expect(k, devices_line(line, sizeof(line), CHIPS, CHIPS, "-"), WAIT_MS));

	/* The pipe is still full: the exit may not wait for it for long. */
	proc_kill(p, SIGTERM);
	assert_int_equal(proc_wait(p, EXIT_WAIT_MS), 0);
	/* The kubelet saw the plugin go: its socket is gone, the stream ended. */
	node_fini(node);
}

/* What was logged while stderr was blocked comes out, in order, once it is
 * read again: the queue delays lines, it does not lose them (a queue this
 * size is not filled by one fault). */
static void test_lines_come_out_once_stderr_drains(void **state)
{
	struct node *node = *state;
	start(node);
	struct proc *k = node->kubelet, *p = node->plugin;
	char line[128];

	proc_block_stderr(p);
	inject_fault(node, 1);
	assert_non_null(proc_expect(k, devices_line(line, sizeof(line), CHIPS, CHIPS - 1, "npu-1"), WAIT_MS));
	proc_unblock_stderr(p);
	expect_event(p, "dcmi.event", "logic_id", "1", "assertion", "fault");
	expect_event(p, "device.unhealthy", "device", "npu-1", "fault", "health-level", "health", "2", "code", "80E01801");
	assert_int_equal(count_events(p, "log.dropped"), 0);
	node_fini(node);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_blocked_stderr_does_not_stop_the_plugin, node_setup, node_teardown),
		cmocka_unit_test_setup_teardown(test_lines_come_out_once_stderr_drains, node_setup, node_teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
