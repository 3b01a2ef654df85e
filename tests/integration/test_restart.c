/* SPDX-License-Identifier: Apache-2.0 */
/* Surviving the kubelet and the operator: kubelet restarts (several in a
 * row), the kubelet ending its stream, the plugin's socket being deleted,
 * SIGHUP, and SIGTERM cleanup. */
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cmocka.h>

#include "base/parse.h"
#include "harness/harness.h"

static void start_registered(struct node *node, unsigned chips, const char *const flags[])
{
	node_init(node, &(struct node_options){ .chips = chips });
	node_start_registered(node, flags);
	/* The kubelet follows the plugin before its Register answer is sent:
	 * wait until the plugin has that answer too, or a restart right away
	 * cancels it and the next registration is not "again" but the first. */
	expect_event(node->plugin, "plugin.registered", "resource", "ascend.com/npu");
}

static bool is_socket(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 && S_ISSOCK(st.st_mode);
}

static void test_kubelet_restarts_in_a_row(void **state)
{
	(void)state;
	struct node node;
	start_registered(&node, 8, NULL);
	struct proc *k = node.kubelet;

	for (int i = 0; i < 5; i++) {
		proc_send(k, "restart");
		assert_non_null(proc_expect(k, "restarted", WAIT_MS));
		/* The kubelet deleted every socket; the plugin serves anew and registers. */
		assert_non_null(proc_expect(k, "register resource=ascend.com/npu", WAIT_MS));
		assert_non_null(proc_expect(k, "capacity=8 allocatable=8", WAIT_MS));
		expect_event(node.plugin, "plugin.reregistered", "resource", "ascend.com/npu");
	}
	assert_true(is_socket(node.plugin_socket));
	/* Allocation works against the new server. */
	proc_send(k, "allocate 2");
	assert_non_null(proc_expect(k, "allocate ok", WAIT_MS));
	node_fini(&node);
}

/* Reads kubelet-sim's lines until the ended stream was reported and, after
 * a new registration, all chips were allocatable again. The order of the
 * first and the other two is free: the plugin may register again, and even
 * send its device list, before kubelet-sim has written the line for the
 * stream that ended. */
static void expect_stream_replaced(struct proc *k)
{
	bool ended = false, registered = false, listed = false;
	while (!ended || !listed) {
		const char *line = proc_expect(k, "", WAIT_MS);
		if (!line)
			fail_msg("kubelet-sim: stream ended %d, registered %d, listed %d",
				 ended, registered, listed);
		ended |= strstr(line, "stream-ended") != NULL;
		if (strstr(line, "register resource=ascend.com/npu")) {
			registered = true;
			listed = false;
		}
		listed |= registered && strstr(line, "capacity=4 allocatable=4") != NULL;
	}
}

static void test_kubelet_ends_stream_without_restart(void **state)
{
	(void)state;
	struct node node;
	start_registered(&node, 4, NULL);
	struct proc *k = node.kubelet;

	/* The plugin notices its kubelet stream ended and registers again.
	 * Twice, to show the new stream is watched as the kubelet's too. */
	for (int i = 0; i < 2; i++) {
		proc_send(k, "end-stream");
		expect_stream_replaced(k);
		expect_event(node.plugin, "plugin.stream-ended", "resource", "ascend.com/npu");
	}
	node_fini(&node);
}

static void test_socket_deleted_by_someone_else(void **state)
{
	(void)state;
	struct node node;
	start_registered(&node, 2, NULL);
	assert_int_equal(unlink(node.plugin_socket), 0);
	expect_event(node.plugin, "plugin.socket-removed", "resource", "ascend.com/npu");
	assert_non_null(proc_expect(node.kubelet, "register resource=ascend.com/npu", WAIT_MS));
	assert_true(is_socket(node.plugin_socket));
	node_fini(&node);
}

static void test_socket_dir_removed_and_recreated(void **state)
{
	(void)state;
	struct node node;
	/* An hour between polls: only the watch on its parent can tell the
	 * plugin the directory is back. */
	start_registered(&node, 2, (const char *[]){ "--health-interval", "1h", NULL });

	/* The kubelet's directory goes away with everything in it, and a new
	 * kubelet creates it again later. */
	proc_send(node.kubelet, "quit");
	assert_int_equal(proc_wait(node.kubelet, EXIT_WAIT_MS), 0);
	proc_free(node.kubelet);
	node.kubelet = NULL;
	/* Renamed away first: the plugin may be binding its socket in there
	 * right now, and removing it in place would race with it. */
	char gone[200];
	snprintf(gone, sizeof(gone), "%s.gone", node.socket_dir);
	assert_int_equal(rename(node.socket_dir, gone), 0);
	assert_int_equal(tmpdir_remove(gone), 0);
	expect_event(node.plugin, "kubelet.dir-removed");

	struct proc *k = node_start_kubelet(&node);
	assert_non_null(proc_expect(k, "register resource=ascend.com/npu", WAIT_MS));
	assert_non_null(proc_expect(k, "capacity=2 allocatable=2", WAIT_MS));
	/* Watched again: only inotify can tell the plugin its socket went. */
	expect_event(node.plugin, "kubelet.dir-back");
	assert_int_equal(unlink(node.plugin_socket), 0);
	expect_event(node.plugin, "plugin.socket-removed", "resource", "ascend.com/npu");
	assert_non_null(proc_expect(k, "register resource=ascend.com/npu", WAIT_MS));
	node_fini(&node);
}

/* The new chip reaches the kubelet through the stream that stands. */
static void test_sighup_rediscovers(void **state)
{
	(void)state;
	struct node node;
	/* An hour between polls: only SIGHUP can make the new chip appear. */
	start_registered(&node, 2, (const char *[]){ "--health-interval", "1h", NULL });
	node_touch(&node, "dev/davinci2");
	node_write_chips(&node, 3, NULL);

	proc_kill(node.plugin, SIGHUP);
	expect_event(node.plugin, "config.sighup");
	assert_non_null(proc_expect(node.kubelet, "capacity=3 allocatable=3", WAIT_MS));
	assert_int_equal(count_events(node.plugin, "plugin.reregistered"), 0);
	node_fini(&node);
}

static void test_sigterm_removes_socket_and_exits_zero(void **state)
{
	(void)state;
	struct node node;
	start_registered(&node, 2, NULL);
	assert_true(is_socket(node.plugin_socket));

	proc_kill(node.plugin, SIGTERM);
	assert_int_equal(proc_wait(node.plugin, EXIT_WAIT_MS), 0);
	assert_false(is_socket(node.plugin_socket));
	assert_non_null(proc_expect(node.kubelet, "stream-ended", WAIT_MS));

	proc_free(node.plugin);
	node.plugin = NULL;
	node_fini(&node);
}

static void test_sigint_while_registration_pending(void **state)
{
	(void)state;
	struct node node;
	node_init(&node, &(struct node_options){ .chips = 1 });
	/* A listening socket that never answers: Register stays pending. */
	struct sockaddr_un addr = { .sun_family = AF_UNIX };
	assert_int_equal(str_printf(addr.sun_path, sizeof(addr.sun_path), "%s/kubelet.sock", node.socket_dir), 0);
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	assert_true(fd >= 0);
	assert_int_equal(bind(fd, (struct sockaddr *)&addr, sizeof(addr)), 0);
	assert_int_equal(listen(fd, 4), 0);

	struct proc *p = node_start_plugin(&node, NULL);
	expect_event(p, "plugin.registering", "resource", "ascend.com/npu");
	proc_kill(p, SIGINT);
	assert_int_equal(proc_wait(p, EXIT_WAIT_MS), 0);
	assert_false(is_socket(node.plugin_socket));
	close(fd);
	node_fini(&node);
}

static void test_stale_socket_is_replaced(void **state)
{
	(void)state;
	struct node node;
	node_init(&node, &(struct node_options){ .chips = 1 });
	/* A socket file left behind by a killed plugin. */
	struct sockaddr_un addr = { .sun_family = AF_UNIX };
	assert_int_equal(str_copy(addr.sun_path, sizeof(addr.sun_path), node.plugin_socket), 0);
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	assert_int_equal(bind(fd, (struct sockaddr *)&addr, sizeof(addr)), 0);
	close(fd);

	struct proc *k = node_start_kubelet(&node);
	node_start_plugin(&node, NULL);
	assert_non_null(proc_expect(k, "register resource=ascend.com/npu", WAIT_MS));
	assert_non_null(proc_expect(k, "capacity=1 allocatable=1", WAIT_MS));
	node_fini(&node);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_kubelet_restarts_in_a_row),
		cmocka_unit_test(test_kubelet_ends_stream_without_restart),
		cmocka_unit_test(test_socket_deleted_by_someone_else),
		cmocka_unit_test(test_socket_dir_removed_and_recreated),
		cmocka_unit_test(test_sighup_rediscovers),
		cmocka_unit_test(test_sigterm_removes_socket_and_exits_zero),
		cmocka_unit_test(test_sigint_while_registration_pending),
		cmocka_unit_test(test_stale_socket_is_replaced),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
