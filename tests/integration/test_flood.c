/* SPDX-License-Identifier: Apache-2.0 */
/* The plugin's resources under churn, against the real plugin binary.
 * A flood of connections to its socket: 2,000 held open (half idle, half
 * having sent garbage) and 5,000 connect/close rounds. During the flood the
 * registered kubelet is still served (Allocate answers, device list
 * updates); the plugin's RSS rises by at most FLOOD_RSS_BOUND_KIB and comes
 * back to within SETTLED_RSS_SLACK_KIB of idle after it, and its fds stay
 * bounded. No fd is left behind by 600 kubelet restarts. The socket file is
 * 0600 even when the plugin runs under umask 0.
 *
 * The RSS bounds are checked in the release build only: ASan's allocator and
 * shadow memory make RSS meaningless. The flood itself, and the checks that
 * the plugin keeps serving, run in every build. */
#include <dirent.h>
#include <errno.h>
#include <poll.h>
#include <sched.h>
#include <stdbool.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cmocka.h>

#include "grpc/server.h"
#include "harness/harness.h"

#define METHOD_OPTIONS "/v1beta1.DevicePlugin/GetDevicePluginOptions"

#define FLOOD_CONNECTIONS 2000
#define FLOOD_ROUNDS 5000
#define RESTARTS 600
#define FLOOD_RSS_BOUND_KIB (16 * 1024)
#define SETTLED_RSS_SLACK_KIB (4 * 1024)
/* A probe may wait behind a full listen backlog of dead connections. */
#define PROBE_WAIT_MS (6 * WAIT_MS)

/* Sanitizers keep freed memory in quarantine or shadow it: RSS bounds hold
 * for the release build only. */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define RSS_CHECKED 0
#else
#define RSS_CHECKED 1
#endif

static unsigned count_fds(pid_t pid)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/fd", (int)pid);
	DIR *d = opendir(path);
	assert_non_null(d);
	unsigned n = 0;
	for (struct dirent *e; (e = readdir(d));)
		if (e->d_name[0] != '.')
			n++;
	closedir(d);
	return n;
}

/* The plugin may still be closing connections that ended a moment ago, but
 * never more than it serves at once. */
static void expect_fds_bounded(pid_t pid, unsigned before)
{
	unsigned now = count_fds(pid);
	print_message("plugin fds: %u (%u before the flood)\n", now, before);
	assert_true(now <= before + GS_MAX_CONNECTIONS + 1);
}

static void check_rss(const char *what, long long rss_kib, long long idle_kib, long long bound_kib)
{
	print_message("plugin RSS %s: %lld KiB (idle %lld KiB, %+lld KiB; bound +%lld KiB)\n", what, rss_kib, idle_kib,
		      rss_kib - idle_kib, bound_kib);
	if (!RSS_CHECKED)
		return;
	assert_true(rss_kib - idle_kib <= bound_kib);
}

/* Enough fds for the flood on the test's side. */
static void raise_fd_limit(void)
{
	struct rlimit rl;
	assert_int_equal(getrlimit(RLIMIT_NOFILE, &rl), 0);
	if (rl.rlim_cur < FLOOD_CONNECTIONS + 256) {
		rl.rlim_cur = rl.rlim_max;
		assert_int_equal(setrlimit(RLIMIT_NOFILE, &rl), 0);
	}
	if (rl.rlim_cur < FLOOD_CONNECTIONS + 256)
		fail_msg("RLIMIT_NOFILE hard limit %llu is too low for the flood", (unsigned long long)rl.rlim_max);
}

/* A connected socket, or -1 when the plugin refused it (a full backlog makes
 * a non-blocking connect fail with EAGAIN). */
static int dial(const char *path)
{
	struct sockaddr_un addr = { .sun_family = AF_UNIX };
	memcpy(addr.sun_path, path, strlen(path) + 1);
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	assert_true(fd >= 0);
	if (connect(fd, (struct sockaddr *)&addr, sizeof(addr)) < 0) {
		assert_true(errno == EAGAIN);
		close(fd);
		return -1;
	}
	return fd;
}

/* One Allocate through kubelet-sim, answered. */
static void expect_allocate(struct proc *k)
{
	proc_send(k, "allocate 1");
	const char *line = proc_expect(k, "allocate ", WAIT_MS);
	assert_non_null(line);
	if (strstr(line, "allocate error"))
		fail_msg("Allocate failed: %s", line);
	assert_non_null(proc_expect(k, "allocate end", WAIT_MS));
	proc_send(k, "release all");
	assert_non_null(proc_expect(k, "released ids=", WAIT_MS));
}

/* Whether the plugin serves a new connection: it accepts it and gRPC sends
 * its SETTINGS frame at once, where a refused one is closed at once. */
static bool probe_served(const char *path)
{
	int fd = -1;
	while (fd < 0)
		fd = dial(path);
	struct pollfd p = { .fd = fd, .events = POLLIN };
	if (poll(&p, 1, PROBE_WAIT_MS) != 1)
		fail_msg("the plugin neither served nor refused a connection within %d ms", PROBE_WAIT_MS);
	char buf[64];
	ssize_t n = recv(fd, buf, sizeof(buf), 0);
	close(fd);
	return n > 0;
}

/* After a flood the plugin first works through the connections still in its
 * backlog, and refuses new ones while gRPC has not yet noticed that those
 * it took have gone. Each probe waits for the plugin's answer, so this
 * follows the plugin's pace; it is over once the plugin takes new clients
 * again and a real call is answered. */
static void wait_served_again(struct node *node)
{
	unsigned refused = 0;
	for (;;) {
		while (!probe_served(node->plugin_socket))
			if (++refused == 100000)
				fail_msg("the plugin refused %u connections after the flood", refused);
		struct gc_channel *ch = node_plugin_channel(node);
		struct gc_result res;
		assert_int_equal(gc_unary(ch, METHOD_OPTIONS, NULL, 0, WAIT_MS, &res), 0);
		gc_result_clear(&res);
		gc_channel_close(ch);
		if (res.status == GRPC_STATUS_OK)
			break;
		if (++refused == 100000)
			fail_msg("the plugin refused %u connections after the flood", refused);
	}
	print_message("%u connections refused after the flood\n", refused);
}

/* Registered, one allocation made and released: the plugin's steady state. */
static long long settle(struct node *node)
{
	expect_allocate(node->kubelet);
	return proc_status(proc_pid(node->plugin), "VmRSS");
}

static void test_flood_of_open_connections(void **state)
{
	struct node *node = *state;
	node_init(node, &(struct node_options){ .chips = 8 });
	node_start_registered(node, NULL);
	raise_fd_limit();
	pid_t pid = proc_pid(node->plugin);
	long long idle = settle(node);
	unsigned fds_before = count_fds(pid);

	int *fds = calloc(FLOOD_CONNECTIONS, sizeof(*fds));
	assert_non_null(fds);
	static const char garbage[] = "GET / HTTP/1.1\r\nHost: x\r\n\r\n\x00\xff\x00\xff not HTTP/2 at all";
	unsigned refused = 0;
	for (unsigned i = 0; i < FLOOD_CONNECTIONS; i++) {
		fds[i] = dial(node->plugin_socket);
		if (fds[i] < 0) {
			refused++;
			continue;
		}
		if (i % 2 && send(fds[i], garbage, sizeof(garbage), MSG_NOSIGNAL) < 0)
			assert_true(errno == EPIPE || errno == ECONNRESET || errno == EAGAIN);
	}
	print_message("%u of %u connections refused by a full backlog\n", refused, FLOOD_CONNECTIONS);

	/* With every connection still open, the kubelet is served. */
	expect_allocate(node->kubelet);
	node_write_health(node, 8, 3, 2);
	char want[128];
	assert_non_null(proc_expect(node->kubelet, devices_line(want, sizeof(want), 8, 7, "npu-3"), WAIT_MS));
	check_rss("with 2,000 connections open", proc_status(pid, "VmRSS"), idle, FLOOD_RSS_BOUND_KIB);

	for (unsigned i = 0; i < FLOOD_CONNECTIONS; i++)
		if (fds[i] >= 0)
			close(fds[i]);
	free(fds);

	wait_served_again(node);
	node_write_health(node, 8, -1, 0);
	assert_non_null(proc_expect(node->kubelet, devices_line(want, sizeof(want), 8, 8, "-"), WAIT_MS));
	expect_allocate(node->kubelet);
	check_rss("after the connections closed", proc_status(pid, "VmRSS"), idle, SETTLED_RSS_SLACK_KIB);
	expect_fds_bounded(pid, fds_before);
	if (!RSS_CHECKED)
		print_message("sanitizer build: RSS bounds not checked (ASan inflates memory); flood and service checked\n");
	node_fini(node);
}

static void test_flood_of_connect_close_rounds(void **state)
{
	struct node *node = *state;
	node_init(node, &(struct node_options){ .chips = 8 });
	node_start_registered(node, NULL);
	pid_t pid = proc_pid(node->plugin);
	long long idle = settle(node);
	unsigned fds_before = count_fds(pid);

	long long peak = 0;
	for (unsigned i = 0; i < FLOOD_ROUNDS; i++) {
		int fd = dial(node->plugin_socket);
		if (fd >= 0)
			close(fd);
		if (i % 500 == 499) {
			long long rss = proc_status(pid, "VmRSS");
			peak = rss > peak ? rss : peak;
		}
	}
	expect_allocate(node->kubelet);
	check_rss("during 5,000 connect/close rounds (highest sample)", peak, idle, FLOOD_RSS_BOUND_KIB);

	wait_served_again(node);
	expect_allocate(node->kubelet);
	check_rss("after 5,000 connect/close rounds", proc_status(pid, "VmRSS"), idle, SETTLED_RSS_SLACK_KIB);
	expect_fds_bounded(pid, fds_before);
	node_fini(node);
}

/* The socket file must not follow the umask: under umask 0 it would be 0777. */
static void test_socket_is_0600_under_umask_0(void **state)
{
	struct node *node = *state;
	node_init(node, &(struct node_options){ .chips = 2 });
	node_start_kubelet(node);
	/* posix_spawn passes the umask on to the plugin. */
	mode_t old = umask(0);
	node_start_plugin(node, NULL);
	umask(old);
	assert_non_null(proc_expect(node->kubelet, "register resource=ascend.com/npu", WAIT_MS));

	struct stat st;
	assert_int_equal(lstat(node->plugin_socket, &st), 0);
	assert_true(S_ISSOCK(st.st_mode));
	assert_int_equal(st.st_mode & 07777, 0600);
	node_fini(node);
}

/* Every kubelet restart makes the plugin register anew, over a connection
 * of its own to kubelet.sock; none of them may stay open. The leak this
 * guards against was a race inside gRPC's subchannels that showed once every
 * few dozen restarts with the plugin and kubelet-sim sharing one CPU, and
 * far more rarely on two: so both run on one CPU here. */
static void test_kubelet_restarts_leak_no_fd(void **state)
{
	struct node *node = *state;
	cpu_set_t all, one;
	assert_int_equal(sched_getaffinity(0, sizeof(all), &all), 0);
	CPU_ZERO(&one);
	for (size_t cpu = 0; cpu < (size_t)CPU_SETSIZE; cpu++)
		if (CPU_ISSET(cpu, &all)) {
			CPU_SET(cpu, &one);
			break;
		}
	assert_int_equal(sched_setaffinity(0, sizeof(one), &one), 0);
	node_init(node, &(struct node_options){ .chips = 2 });
	node_start_registered(node, NULL);
	assert_int_equal(sched_setaffinity(0, sizeof(all), &all), 0);

	pid_t pid = proc_pid(node->plugin);
	char healthy[128];
	devices_line(healthy, sizeof(healthy), 2, 2, "-");
	unsigned before = count_fds(pid);
	for (unsigned i = 1; i <= RESTARTS; i++) {
		proc_send(node->kubelet, "restart");
		assert_non_null(proc_expect(node->kubelet, "restarted dir=", WAIT_MS));
		assert_non_null(proc_expect(node->kubelet, healthy, WAIT_MS));
		/* Drains the plugin's log, lest it block on a full pipe. */
		assert_int_equal(count_events(node->plugin, "plugin.serve-failed"), 0);
	}
	/* The connections of the last registrations may still be closing
	 * (slowly under ASan): give the plugin round trips through its gRPC
	 * thread, not time, until they are gone. A leak never goes. */
	unsigned after = count_fds(pid);
	for (int i = 0; i < 50 && after > before; i++) {
		proc_send(node->kubelet, "options");
		assert_non_null(proc_expect(node->kubelet, "options preferred_allocation=", WAIT_MS));
		after = count_fds(pid);
	}
	print_message("plugin fds: %u before %u kubelet restarts, %u after\n", before, RESTARTS, after);
	assert_true(after <= before);
	node_fini(node);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_flood_of_open_connections, node_setup, node_teardown),
		cmocka_unit_test_setup_teardown(test_flood_of_connect_close_rounds, node_setup, node_teardown),
		cmocka_unit_test_setup_teardown(test_socket_is_0600_under_umask_0, node_setup, node_teardown),
		cmocka_unit_test_setup_teardown(test_kubelet_restarts_leak_no_fd, node_setup, node_teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
