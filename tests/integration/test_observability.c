/* SPDX-License-Identifier: Apache-2.0 */
/* The plugin's observability against the real daemon, kubelet-sim (with its
 * pod resources server) and the DCMI simulator: /metrics while a chip fails
 * and recovers and a pod holds a chip (values, labels, promtool clean),
 * /healthz across a kubelet that dies and comes back, 404 and 405, garbage,
 * a huge header and 1,000 connections, slowloris clients cut off and, from
 * 33 addresses, not keeping /healthz from answering, the NFD features file
 * (content, rewrite, removal) and JSON logs.
 *
 * Every wait is on a line the plugin or kubelet-sim prints: the plugin logs
 * each telemetry read and pod list at debug level (the harness runs it so). */
#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <netinet/in.h>
#include <poll.h>
#include <arpa/inet.h>
#include <setjmp.h>
#include <spawn.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "base/parse.h"

#include "harness/harness.h"
#include "harness/http.h"
#include "plugin/observe.h"

#define CHIPS 2
#define TELEMETRY "temp=45 power=92.5 util=37 hbm_used_mb=1024"

extern char **environ;

static void write_state(struct node *node, const char *chip0, const char *chip1)
{
	const char *attrs[CHIPS] = { chip0, chip1 };
	node_write_chip_state(node, &(struct chip_state){ .chips = CHIPS, .attrs = attrs });
}

/* A scrape, checked: 200, the text format's Content-Type. */
static char *scrape(uint16_t port)
{
	struct http_response resp;
	http_call(port, "GET", "/metrics", &resp);
	assert_int_equal(resp.status, 200);
	assert_non_null(strstr(resp.head, "Content-Type: text/plain; version=0.0.4; charset=utf-8"));
	char *body = resp.body;
	resp.body = NULL;
	http_response_clear(&resp);
	return body;
}

/* Waits for the plugin's next telemetry read (after whatever changed). */
static void next_telemetry(struct node *node)
{
	/* A read logged earlier, and not yet consumed, may predate the state
	 * the test just wrote: only a read logged from now on counts. */
	proc_discard(node->plugin);
	expect_event(node->plugin, "telemetry.read");
}

/* promtool check metrics on the text: clean, no lint warning. Skipped
 * (with a note) where promtool is not installed. */
static void promtool_clean(const char *text, const char *dir)
{
	if (access("/usr/bin/promtool", X_OK) != 0) {
		print_message("promtool not installed (Debian package prometheus): check skipped\n");
		return;
	}
	char in[256], out[256], cmd[700];
	snprintf(in, sizeof(in), "%s/scrape.txt", dir);
	snprintf(out, sizeof(out), "%s/promtool.out", dir);
	FILE *f = fopen(in, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
	snprintf(cmd, sizeof(cmd), "/usr/bin/promtool check metrics < '%s' > '%s' 2>&1", in, out);
	char sh[] = "/bin/sh", dash_c[] = "-c";
	char *argv[] = { sh, dash_c, cmd, NULL };
	pid_t pid;
	assert_int_equal(posix_spawn(&pid, "/bin/sh", NULL, NULL, argv, environ), 0);
	int status;
	assert_int_equal(waitpid(pid, &status, 0), pid);
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		char buf[4096] = "";
		f = fopen(out, "r");
		if (f) {
			size_t n = fread(buf, 1, sizeof(buf) - 1, f);
			buf[n] = '\0';
			fclose(f);
		}
		fail_msg("promtool check metrics failed:\n%s", buf);
	}
}

/* Each metric family once, each series once: what promtool 2.42 does not check. */
static void no_duplicates(const char *text)
{
	char *copy = strdup(text);
	char **lines = calloc(20000, sizeof(char *));
	size_t n = 0;
	for (char *save, *l = strtok_r(copy, "\n", &save); l && n < 20000; l = strtok_r(NULL, "\n", &save)) {
		if (strncmp(l, "# TYPE ", 7) == 0 || l[0] != '#') {
			char *key = strdup(l);
			if (key[0] != '#')
				*strrchr(key, ' ') = '\0'; /* the series without its value */
			for (size_t i = 0; i < n; i++)
				if (strcmp(lines[i], key) == 0)
					fail_msg("repeated in the scrape: %s", key);
			lines[n++] = key;
		}
	}
	for (size_t i = 0; i < n; i++)
		free(lines[i]);
	free(lines);
	free(copy);
}

static void test_metrics_fault_recovery_and_pods(void **state)
{
	struct node *node = *state;
	node_init(node, &(struct node_options){ .chips = CHIPS });
	write_state(node, "health=0 " TELEMETRY, "health=0 " TELEMETRY);
	char podres[200];
	snprintf(podres, sizeof(podres), "%s/pod-resources.sock", node->root);
	struct proc *k = node_start_kubelet_with(node, (const char *[]){ "--pod-resources-socket", podres, NULL });
	node_start_plugin(node, (const char *[]){ "--metrics-addr=127.0.0.1:0", "--telemetry-interval=1s",
						  "--pod-resources-socket", podres, NULL });
	uint16_t port = http_plugin_port(node->plugin);
	char want[160];
	assert_non_null(proc_expect(k, devices_line(want, sizeof(want), CHIPS, CHIPS, "-"), WAIT_MS));
	/* The stream can open before the plugin has the Register answer, which
	 * the registrations counter counts: scrape once it has. */
	expect_event(node->plugin, "plugin.registered", "resource", "ascend.com/npu");

	/* Every chip metric, with DCMI's values in base units. */
	char *m = scrape(port);
	assert_true(http_metric(m, "ascend_npu_healthy{id=\"npu-0\",phy=\"0\",chip=\"910B3\"}") == 1);
	assert_true(http_metric(m, "ascend_npu_health_code{id=\"npu-1\",phy=\"1\",chip=\"910B3\"}") == 0);
	assert_true(http_metric(m, "ascend_npu_error_codes{id=\"npu-1\",phy=\"1\",chip=\"910B3\"}") == 0);
	assert_true(http_metric(m, "ascend_npu_temperature_celsius{id=\"npu-0\",phy=\"0\",chip=\"910B3\"}") == 45);
	assert_true(http_metric(m, "ascend_npu_power_watts{id=\"npu-0\",phy=\"0\",chip=\"910B3\"}") == 92.5);
	assert_true(http_metric(m, "ascend_npu_aicore_utilization_ratio{id=\"npu-1\",phy=\"1\",chip=\"910B3\"}") == 0.37);
	assert_true(http_metric(m, "ascend_npu_hbm_total_bytes{id=\"npu-0\",phy=\"0\",chip=\"910B3\"}") ==
		    65536.0 * 1024 * 1024);
	assert_true(http_metric(m, "ascend_npu_hbm_used_bytes{id=\"npu-0\",phy=\"0\",chip=\"910B3\"}") ==
		    1024.0 * 1024 * 1024);
	assert_true(http_metric(m, "ascend_npu_telemetry_timestamp_seconds{id=\"npu-0\",phy=\"0\",chip=\"910B3\"}") >
		    1.7e9);
	assert_true(http_metric(m, "ascend_device_plugin_build_info{version=\"" ASCEND_VERSION "\"}") == 1);
	/* Every Register the kubelet accepted: at start, later ones may
	 * overtake the first (kubelet.sock seen by inotify meanwhile, more
	 * often on a loaded machine), and each counts. */
	assert_true(http_metric(m, "ascend_device_plugin_registrations_total{resource=\"ascend.com/npu\"}") >= 1);
	assert_true(http_metric(m, "ascend_device_plugin_list_and_watch_streams{resource=\"ascend.com/npu\"}") == 1);
	assert_true(http_metric(m, "ascend_device_plugin_devices{resource=\"ascend.com/npu\",health=\"Healthy\"}") == 2);
	promtool_clean(m, node->root);
	no_duplicates(m);
	free(m);

	/* npu-1 fails; npu-0's temperature call fails: that metric goes, the
	 * others stay, and the failure is counted. */
	write_state(node, "health=0 fail=temperature " TELEMETRY, "health=2 errors=80E01801,80C98008 " TELEMETRY);
	assert_non_null(proc_expect(k, devices_line(want, sizeof(want), CHIPS, 1, "npu-1"), WAIT_MS));
	next_telemetry(node);
	m = scrape(port);
	assert_true(http_metric(m, "ascend_npu_healthy{id=\"npu-1\",phy=\"1\",chip=\"910B3\"}") == 0);
	assert_true(http_metric(m, "ascend_npu_health_code{id=\"npu-1\",phy=\"1\",chip=\"910B3\"}") == 2);
	assert_true(http_metric(m, "ascend_npu_error_codes{id=\"npu-1\",phy=\"1\",chip=\"910B3\"}") == 2);
	/* The fault policy: 80E01801 is RestartBusiness (4), above 80C98008's RestartRequest. */
	assert_true(http_metric(m, "ascend_npu_fault_level{id=\"npu-1\",phy=\"1\",chip=\"910B3\"}") == 4);
	assert_true(http_metric(m, "ascend_npu_fault_code{id=\"npu-1\",phy=\"1\",chip=\"910B3\"}") == 0x80E01801);
	assert_true(http_metric(m, "ascend_npu_fault_level{id=\"npu-0\",phy=\"0\",chip=\"910B3\"}") == 0);
	assert_true(http_metric(m, "ascend_device_plugin_fault_onsets_total{code=\"80E01801\"}") == 1);
	assert_true(http_metric(m, "ascend_device_plugin_fault_onsets_total{code=\"80C98008\"}") == 1);
	assert_true(http_metric(m, "ascend_npu_temperature_celsius{id=\"npu-0\",phy=\"0\",chip=\"910B3\"}") == -1);
	assert_true(http_metric(m, "ascend_npu_power_watts{id=\"npu-0\",phy=\"0\",chip=\"910B3\"}") == 92.5);
	assert_true(http_metric(m, "ascend_device_plugin_dcmi_errors_total{function=\"dcmi_get_device_temperature\"}") >=
		    1);
	assert_true(http_metric(m, "ascend_device_plugin_devices{resource=\"ascend.com/npu\",health=\"Unhealthy\"}") ==
		    1);
	assert_true(http_metric(m, "ascend_device_plugin_health_transitions_total{resource=\"ascend.com/npu\"}") == 1);
	promtool_clean(m, node->root);
	free(m);

	/* Recovery: everything back, two transitions. */
	write_state(node, "health=0 " TELEMETRY, "health=0 " TELEMETRY);
	assert_non_null(proc_expect(k, devices_line(want, sizeof(want), CHIPS, CHIPS, "-"), WAIT_MS));
	next_telemetry(node);
	m = scrape(port);
	assert_true(http_metric(m, "ascend_npu_healthy{id=\"npu-1\",phy=\"1\",chip=\"910B3\"}") == 1);
	assert_true(http_metric(m, "ascend_npu_fault_level{id=\"npu-1\",phy=\"1\",chip=\"910B3\"}") == 0);
	assert_true(http_metric(m, "ascend_npu_temperature_celsius{id=\"npu-0\",phy=\"0\",chip=\"910B3\"}") == 45);
	assert_true(http_metric(m, "ascend_device_plugin_health_transitions_total{resource=\"ascend.com/npu\"}") == 2);
	free(m);

	/* A pod takes a chip: its series carry the holder, from kubelet-sim's
	 * pod resources server. */
	proc_send(k, "allocate 1");
	const char *line = proc_expect(k, "allocate ok", WAIT_MS);
	assert_non_null(line);
	char ids[64];
	line_value(line, "ids", ids, sizeof(ids));
	expect_event(node->plugin, "pod-resources.read", "containers", "1");
	m = scrape(port);
	char series[256];
	snprintf(series, sizeof(series),
		 "ascend_npu_healthy{id=\"%s\",phy=\"%c\",chip=\"910B3\",namespace=\"default\",pod=\"kubelet-sim-pod-1\","
		 "container=\"container-1\"}",
		 ids, ids[4]);
	assert_true(http_metric(m, series) == 1);
	assert_true(http_metric(m, "ascend_device_plugin_allocate_requests_total{resource=\"ascend.com/npu\",code=\"OK\"}") ==
		    1);
	assert_true(http_metric(m, "ascend_device_plugin_allocate_duration_seconds_count{resource=\"ascend.com/npu\"}") ==
		    1);
	promtool_clean(m, node->root);
	no_duplicates(m);
	free(m);

	/* The chip it holds fails: the decision names the container to act on. */
	if (ids[4] == '0')
		write_state(node, "health=2 errors=80E01801 " TELEMETRY, "health=0 " TELEMETRY);
	else
		write_state(node, "health=0 " TELEMETRY, "health=2 errors=80E01801 " TELEMETRY);
	expect_event(node->plugin, "fault.level", "device", ids, "fault_level", "RestartBusiness", "rule", "code table", "code",
		     "80E01801", "held_by", "default/kubelet-sim-pod-1/container-1");
	node_fini(node);
}

/* No pod resources socket: metrics without pod labels, said once. */
static void test_metrics_without_pod_resources(void **state)
{
	struct node *node = *state;
	node_init(node, &(struct node_options){ .chips = CHIPS });
	node_start_registered(node, (const char *[]){ "--metrics-addr=127.0.0.1:0", "--telemetry-interval=1s",
						     "--pod-resources-socket", "/nonexistent/kubelet.sock", NULL });
	uint16_t port = http_plugin_port(node->plugin);
	char *m = scrape(port);
	assert_non_null(strstr(m, "ascend_npu_healthy{id=\"npu-0\",phy=\"0\",chip=\"910B3\"} 1\n"));
	free(m);
	expect_event(node->plugin, "pod-resources.unavailable", "reason", "/nonexistent/kubelet.sock does not exist");
	/* More scrapes ask for more lists (at most one a second): one warning. */
	m = scrape(port);
	free(m);
	expect_event_v(node->plugin, WAIT_MS * 2, "telemetry.read", (const char *)NULL);
	m = scrape(port);
	free(m);
	assert_int_equal(count_events(node->plugin, "pod-resources.unavailable"), 1);
	node_fini(node);
}

static void expect_healthz(uint16_t port, int status, const char *needle)
{
	struct http_response resp;
	http_call(port, "GET", "/healthz", &resp);
	if (resp.status != status || !strstr(resp.body, needle))
		fail_msg("/healthz: want %d with '%s', got %d:\n%s", status, needle, resp.status, resp.body);
	http_response_clear(&resp);
}

/* Waits until the session has both the kubelet's answer to Register and
 * its ListAndWatch stream, which come in either order: then /healthz has
 * both too. */
static void wait_registered_and_watched(struct proc *plugin)
{
	bool registered = false, opened = false;
	while (!registered || !opened) {
		char on[32];
		event_field(expect_event(plugin, "plugin.session", "handled", "1"), "on", on, sizeof(on));
		registered |= strcmp(on, "registered") == 0;
		opened |= strcmp(on, "stream-opened") == 0;
	}
}

static void test_healthz_across_kubelet_death(void **state)
{
	struct node *node = *state;
	node_init(node, &(struct node_options){ .chips = CHIPS });
	node_start_plugin(node, (const char *[]){ "--metrics-addr=127.0.0.1:0", NULL });
	uint16_t port = http_plugin_port(node->plugin);
	expect_event(node->plugin, "plugin.register-failed");
	/* No kubelet at all: a legitimate wait. */
	expect_healthz(port, 200, "waiting for the kubelet");

	struct proc *k = node_start_kubelet(node);
	assert_non_null(proc_expect(k, "register resource=ascend.com/npu", WAIT_MS));
	wait_registered_and_watched(node->plugin);
	expect_healthz(port, 200, "registered, the kubelet's ListAndWatch stream is open");

	/* The kubelet dies and leaves its socket: registration fails. */
	proc_kill(k, SIGKILL);
	proc_wait(k, WAIT_MS);
	proc_free(k);
	node->kubelet = NULL;
	expect_event(node->plugin, "plugin.kubelet-not-ready");
	expect_healthz(port, 503, "registration failing");

	/* It comes back: healthy again. */
	k = node_start_kubelet(node);
	assert_non_null(proc_expect(k, "register resource=ascend.com/npu", WAIT_MS));
	wait_registered_and_watched(node->plugin);
	expect_healthz(port, 200, "registered");
	node_fini(node);
}

static int connect_to(const char *ip, uint16_t port)
{
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(port) };
	inet_pton(AF_INET, ip, &a.sin_addr);
	if (fd >= 0)
		(void)connect(fd, (struct sockaddr *)&a, sizeof(a));
	return fd;
}

static void test_http_edges_and_flood(void **state)
{
	struct node *node = *state;
	node_init(node, &(struct node_options){ .chips = CHIPS });
	node_start_registered(node, (const char *[]){ "--metrics-addr=0.0.0.0:0", NULL });
	uint16_t port = http_plugin_port(node->plugin);
	struct http_response resp;

	http_call(port, "GET", "/nope", &resp);
	assert_int_equal(resp.status, 404);
	http_response_clear(&resp);
	http_call(port, "POST", "/metrics", &resp);
	assert_int_equal(resp.status, 405);
	assert_non_null(strstr(resp.head, "Allow: GET, HEAD"));
	http_response_clear(&resp);
	http_call(port, "HEAD", "/metrics", &resp);
	assert_int_equal(resp.status, 200);
	assert_int_equal(resp.body_len, 0);
	http_response_clear(&resp);

	/* Garbage and a 64 KiB header: refused or dropped, never served. */
	const char garbage[] = "\x01\x02 nonsense \xff\r\n\r\n";
	assert_int_equal(http_raw("127.0.0.1", port, garbage, sizeof(garbage) - 1, WAIT_MS, &resp), 0);
	assert_true(resp.status == 0 || resp.status >= 400);
	http_response_clear(&resp);
	size_t big = 64 * 1024;
	char *huge = malloc(big + 128);
	int n = snprintf(huge, 128, "GET /metrics HTTP/1.1\r\nX-Big: ");
	memset(huge + n, 'a', big);
	memcpy(huge + n + big, "\r\n\r\n", 4);
	assert_int_equal(http_raw("127.0.0.1", port, huge, (size_t)n + big + 4, WAIT_MS, &resp), 0);
	assert_true(resp.status == 0 || resp.status == 431 || resp.status == 413 || resp.status == 400);
	http_response_clear(&resp);
	free(huge);

	/* 1,000 connections held open from 127.0.0.1: a scraper elsewhere
	 * (127.0.0.2) is still served, and memory comes back afterwards. */
	struct rlimit rl;
	getrlimit(RLIMIT_NOFILE, &rl);
	rl.rlim_cur = rl.rlim_max;
	setrlimit(RLIMIT_NOFILE, &rl);
	long long before = proc_status(proc_pid(node->plugin), "VmRSS");
	enum { FLOOD = 1000 };
	int *fds = calloc(FLOOD, sizeof(int));
	for (int i = 0; i < FLOOD; i++)
		fds[i] = connect_to("127.0.0.1", port);
	char req[] = "GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n";
	assert_int_equal(http_raw("127.0.0.2", port, req, sizeof(req) - 1, WAIT_MS, &resp), 0);
	assert_int_equal(resp.status, 200);
	http_response_clear(&resp);
	for (int i = 0; i < FLOOD; i++)
		if (fds[i] >= 0)
			close(fds[i]);
	free(fds);
	/* The server takes the closed connections off its books as it reads
	 * their ends: until then the limits may turn a new one away. Served
	 * within the deadline is what counts. */
	struct timespec t0, t;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		assert_int_equal(http_raw("127.0.0.3", port, req, sizeof(req) - 1, WAIT_MS, &resp), 0);
		if (resp.status == 200)
			break;
		http_response_clear(&resp);
		clock_gettime(CLOCK_MONOTONIC, &t);
		if ((t.tv_sec - t0.tv_sec) * 1000 + (t.tv_nsec - t0.tv_nsec) / 1000000 > WAIT_MS)
			fail_msg("/metrics not served again within %d ms of the flood's end", WAIT_MS);
	}
	http_response_clear(&resp);
	long long after = proc_status(proc_pid(node->plugin), "VmRSS");
	print_message("plugin VmRSS %lld KiB before the flood, %lld KiB after\n", before, after);
	/* Sanitizer builds grow more (their own bookkeeping per thread and
	 * allocation, and ASan's quarantine of freed memory, which holds the
	 * 16 KiB buffer of each of the thousand connections: the server takes
	 * every one in and cuts another off); the bound is loose on purpose. */
#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
	assert_true(after <= before + 32768);
#else
	assert_true(after <= before + 4096);
#endif
	node_fini(node);
}

static char *read_file(const char *path)
{
	FILE *f = fopen(path, "r");
	if (!f)
		return NULL;
	char *buf = calloc(1, 65537);
	size_t n = fread(buf, 1, 65536, f);
	buf[n] = '\0';
	fclose(f);
	return buf;
}

/* A slowloris client: connections from several addresses that send one
 * header byte each second never finish a request. Each is cut off once its
 * headers are overdue (HTTP_HEADER_DEADLINE_MS, 5 s), although every byte
 * would reset the inactivity timeout, and /healthz answers afterwards. */
#define SLOW_CONNS 48
static void test_slowloris_is_cut_off(void **state)
{
	struct node *node = *state;
	node_init(node, &(struct node_options){ .chips = CHIPS });
	node_start_registered(node, (const char *[]){ "--metrics-addr=0.0.0.0:0", NULL });
	uint16_t port = http_plugin_port(node->plugin);
	int fds[SLOW_CONNS];
	size_t open_conns = 0;
	for (size_t i = 0; i < SLOW_CONNS; i++) {
		/* 16 per address: the per-address limit. */
		char ip[32];
		snprintf(ip, sizeof(ip), "127.0.1.%zu", 1 + i / 16);
		struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(port) };
		assert_int_equal(inet_pton(AF_INET, ip, &a.sin_addr), 1);
		fds[i] = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
		assert_true(fds[i] >= 0);
		/* From that address: loopback would pick 127.0.0.1 as the source
		 * whatever the destination, and the /healthz below comes from
		 * there, which must not share the attackers' per-address limit. */
		struct sockaddr_in src = a;
		src.sin_port = 0;
		assert_int_equal(bind(fds[i], (struct sockaddr *)&src, sizeof(src)), 0);
		assert_int_equal(connect(fds[i], (struct sockaddr *)&a, sizeof(a)), 0);
		assert_int_equal(send(fds[i], "GET /healthz HTTP/1.1\r\nX-A: ", 27, MSG_NOSIGNAL), 27);
		open_conns++;
	}
	/* One byte per connection per second, until the server ends them all:
	 * each poll waits for the server's end of a connection, with the
	 * second as its deadline. */
	int64_t start = now_ms(), done_ms = 0;
	bool closed[SLOW_CONNS] = { false };
	size_t left = open_conns;
	while (left > 0 && now_ms() - start < 30000) {
		struct pollfd p[SLOW_CONNS];
		for (size_t i = 0; i < SLOW_CONNS; i++)
			p[i] = (struct pollfd){ .fd = closed[i] ? -1 : fds[i], .events = POLLIN };
		int n = poll(p, SLOW_CONNS, 1000);
		for (size_t i = 0; i < SLOW_CONNS && n > 0; i++) {
			if (closed[i] || !(p[i].revents & (POLLIN | POLLHUP | POLLERR)))
				continue;
			char buf[256];
			if (recv(fds[i], buf, sizeof(buf), MSG_DONTWAIT) <= 0) {
				closed[i] = true;
				left--;
			}
		}
		for (size_t i = 0; i < SLOW_CONNS; i++)
			if (!closed[i])
				(void)send(fds[i], "a", 1, MSG_NOSIGNAL);
	}
	done_ms = now_ms() - start;
	for (size_t i = 0; i < SLOW_CONNS; i++)
		close(fds[i]);
	/* Each byte resets the 10 s inactivity timeout: only the header
	 * deadline can end them. */
	if (left > 0)
		fail_msg("%zu of %d trickling connections still open after %lld ms", left, SLOW_CONNS, (long long)done_ms);
	print_message("trickling connections all cut off after %lld ms\n", (long long)done_ms);
	struct http_response resp;
	http_call(port, "GET", "/healthz", &resp);
	assert_int_equal(resp.status, 200);
	http_response_clear(&resp);
	node_fini(node);
}

/* The kubelet's probe of the DRA driver (deploy/dra: httpGet /healthz)
 * while other clients drip: DRIP_PER_ADDR connections from each of many
 * source addresses, each sending its request line and headers one byte a
 * tick and never finishing them, opened again at the next tick whenever
 * the server ends one (as a slowloris client does). Every probe, a GET from
 * 127.0.0.1 as the kubelet's comes from the node, must be answered within
 * the kubelet's default timeout: first with 8 addresses dripping (enough
 * for 64 connections twice over), then with 32 and the prober's own
 * address too (a host-network pod shares the node's address), for longer
 * than the header deadline, so that the server also cuts drippers off on
 * that account meanwhile. */
#define DRIP_PER_ADDR 16
#define DRIP_OTHERS_MAX 32
#define DRIP_TICK_MS 250
#define PROBE_TIMEOUT_MS 1000

static const char drip_text[] = "GET /healthz HTTP/1.1\r\nHost: x\r\nX-Drip: ";

struct dripper {
	int fd;       /* -1: the server ended it; opened again at the next tick */
	size_t sent;  /* bytes of drip_text sent, then one 'a' a tick */
	char src[32]; /* its source address */
};

static void drip_open(struct dripper *d, uint16_t port)
{
	struct sockaddr_in dst = { .sin_family = AF_INET, .sin_port = htons(port) };
	struct sockaddr_in src = { .sin_family = AF_INET };
	assert_int_equal(inet_pton(AF_INET, "127.0.0.1", &dst.sin_addr), 1);
	assert_int_equal(inet_pton(AF_INET, d->src, &src.sin_addr), 1);
	d->fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	assert_true(d->fd >= 0);
	assert_int_equal(bind(d->fd, (struct sockaddr *)&src, sizeof(src)), 0);
	if (connect(d->fd, (struct sockaddr *)&dst, sizeof(dst)) < 0)
		assert_int_equal(errno, EINPROGRESS);
	d->sent = 0;
}

static void drip_close(struct dripper *d)
{
	close(d->fd);
	d->fd = -1;
}

/* Until deadline: takes note of the drippers the server ends. Returns how
 * many it ended. */
static size_t drip_wait(struct dripper *d, size_t n, int64_t deadline)
{
	size_t ended = 0;
	struct pollfd *p = calloc(n, sizeof(*p));
	assert_non_null(p);
	for (int64_t left; (left = deadline - now_ms()) > 0;) {
		for (size_t i = 0; i < n; i++)
			p[i] = (struct pollfd){ .fd = d[i].fd, .events = POLLIN };
		if (poll(p, n, (int)left) <= 0)
			continue;
		/* The server never answers a dripper: what it reads is an end. */
		for (size_t i = 0; i < n; i++)
			if (d[i].fd >= 0 && p[i].revents) {
				drip_close(&d[i]);
				ended++;
			}
	}
	free(p);
	return ended;
}

/* One tick's byte from every dripper; the ended ones connect again. A
 * connection still waiting for the server's accept takes its byte later. */
static void drip_send(struct dripper *d, size_t n, uint16_t port)
{
	for (size_t i = 0; i < n; i++) {
		if (d[i].fd < 0) {
			drip_open(&d[i], port);
			continue;
		}
		const char *byte = d[i].sent < sizeof(drip_text) - 1 ? &drip_text[d[i].sent] : "a";
		if (send(d[i].fd, byte, 1, MSG_NOSIGNAL) == 1)
			d[i].sent++;
		else if (errno != EAGAIN && errno != ENOTCONN)
			drip_close(&d[i]);
	}
}

/* n_addrs addresses from 127.0.0.2 (and 127.0.0.1 too when own) drip while
 * /healthz is probed once a tick, probes times. */
static void probe_while_dripping(uint16_t port, size_t n_addrs, bool own, size_t probes)
{
	size_t n_src = n_addrs + (own ? 1 : 0), n = n_src * DRIP_PER_ADDR;
	struct dripper *d = calloc(n, sizeof(*d));
	assert_non_null(d);
	for (size_t i = 0; i < n; i++) {
		snprintf(d[i].src, sizeof(d[i].src), "127.0.0.%zu", (own ? 1 : 2) + i / DRIP_PER_ADDR);
		drip_open(&d[i], port);
	}
	size_t ended = 0;
	int64_t start = now_ms(), worst = 0;
	char req[] = "GET /healthz HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n";
	for (size_t k = 0; k < probes; k++) {
		ended += drip_wait(d, n, now_ms() + DRIP_TICK_MS);
		drip_send(d, n, port);
		struct http_response resp;
		int64_t t0 = now_ms();
		int r = http_raw("127.0.0.1", port, req, sizeof(req) - 1, PROBE_TIMEOUT_MS, &resp);
		int64_t took = now_ms() - t0;
		if (r < 0 || resp.status != 200)
			fail_msg("probe %zu of %zu at %lld ms, %zu addresses dripping: %s after %lld ms", k + 1, probes,
				 (long long)(t0 - start), n_src, r < 0 ? strerror(-r) : "not 200", (long long)took);
		http_response_clear(&resp);
		worst = took > worst ? took : worst;
	}
	for (size_t i = 0; i < n; i++)
		if (d[i].fd >= 0)
			close(d[i].fd);
	free(d);
	print_message("%zu addresses x %d dripping for %lld ms: %zu probes answered (slowest %lld ms), %zu "
		      "drippers ended by the server\n",
		      n_src, DRIP_PER_ADDR, (long long)(now_ms() - start), probes, (long long)worst, ended);
}

static void test_slowloris_leaves_healthz_answered(void **state)
{
	struct node *node = *state;
	struct rlimit rl;
	assert_int_equal(getrlimit(RLIMIT_NOFILE, &rl), 0);
	if (rl.rlim_max < (DRIP_OTHERS_MAX + 1) * DRIP_PER_ADDR + 64) {
		print_message("RLIMIT_NOFILE %llu is too low for the drippers: skipped\n",
			      (unsigned long long)rl.rlim_max);
		skip();
	}
	rl.rlim_cur = rl.rlim_max;
	assert_int_equal(setrlimit(RLIMIT_NOFILE, &rl), 0);
	node_init(node, &(struct node_options){ .chips = CHIPS });
	node_start_registered(node, (const char *[]){ "--metrics-addr=127.0.0.1:0", NULL });
	uint16_t port = http_plugin_port(node->plugin);
	probe_while_dripping(port, 8, false, 8);
	/* 24 probes a tick apart: longer than the header deadline. */
	probe_while_dripping(port, DRIP_OTHERS_MAX, true, 24);
	node_fini(node);
}

/* The event loop held (ptrace stops that one thread; the gRPC and HTTP
 * threads run on): /healthz answers 503 naming the stall and --probe fails
 * once OBSERVE_LOOP_STUCK_MS have passed without a heartbeat, and both
 * recover when the loop runs again. */
static int probe_exit(struct node *node)
{
	const char *probe[] = { PLUGIN_BIN, "--probe", "--socket-dir", node->socket_dir, NULL };
	struct proc *pr = proc_start(probe, NULL);
	int status = proc_wait(pr, WAIT_MS);
	proc_free(pr);
	return status;
}

/* GET /healthz until its status is want, one request a quarter second apart
 * (what changes is time passing, there is no event to wait on), until
 * deadline; the last response stays in resp. */
static bool healthz_becomes(uint16_t port, int want, int64_t deadline, struct http_response *resp)
{
	for (;;) {
		http_call(port, "GET", "/healthz", resp);
		if (resp->status == want || now_ms() >= deadline)
			return resp->status == want;
		http_response_clear(resp);
		(void)poll(NULL, 0, 250);
	}
}

static void test_stalled_loop_is_reported(void **state)
{
	struct node *node = *state;
	node_init(node, &(struct node_options){ .chips = CHIPS });
	node_start_registered(node, (const char *[]){ "--metrics-addr=127.0.0.1:0", NULL });
	uint16_t port = http_plugin_port(node->plugin);
	struct http_response resp;
	assert_true(healthz_becomes(port, 200, now_ms() + WAIT_MS, &resp));
	http_response_clear(&resp);
	assert_int_equal(probe_exit(node), 0);

	/* The loop runs on the main thread, whose id is the process's. */
	pid_t loop_tid = proc_pid(node->plugin);
	if (ptrace(PTRACE_SEIZE, loop_tid, NULL, NULL) < 0) {
		print_message("cannot ptrace the plugin (%s): skipped\n", strerror(errno));
		skip();
	}
	assert_int_equal(ptrace(PTRACE_INTERRUPT, loop_tid, NULL, NULL), 0);
	int st;
	assert_int_equal(waitpid(loop_tid, &st, __WALL), loop_tid);
	int64_t held = now_ms();
	bool reported = healthz_becomes(port, 503, held + OBSERVE_LOOP_STUCK_MS + WAIT_MS, &resp);
	int64_t took = now_ms() - held;
	bool named = resp.body && strstr(resp.body, "the event loop is stuck");
	http_response_clear(&resp);
	int probe = probe_exit(node);
	assert_int_equal(ptrace(PTRACE_DETACH, loop_tid, NULL, NULL), 0);
	if (!reported || !named)
		fail_msg("/healthz did not report the stalled loop within %lld ms", (long long)took);
	print_message("stalled loop reported by /healthz after %lld ms\n", (long long)took);
	assert_true(took >= OBSERVE_LOOP_STUCK_MS - 1000);
	assert_int_equal(probe, 1);

	assert_true(healthz_becomes(port, 200, now_ms() + WAIT_MS, &resp));
	http_response_clear(&resp);
	assert_int_equal(probe_exit(node), 0);
	node_fini(node);
}

static void test_nfd_file(void **state)
{
	struct node *node = *state;
	node_init(node, &(struct node_options){ .chips = CHIPS });
	char dir[200], file[240];
	snprintf(dir, sizeof(dir), "%s/features.d", node->root);
	snprintf(file, sizeof(file), "%s/ascend", dir);
	assert_int_equal(mkdir(dir, 0755), 0);
	node_start_registered(node, (const char *[]){ "--nfd-features-file", file, NULL });
	expect_event(node->plugin, "nfd.written", "path", file);
	char *text = read_file(file);
	assert_non_null(text);
	const char *want[] = {
		"ascend.com/npu.present=true\n", "ascend.com/npu.count=2\n",	    "ascend.com/npu.healthy=2\n",
		"ascend.com/npu.product=Ascend910B3\n", "ascend.com/npu.family=910B\n", "ascend.com/npu.memory=65536\n",
		"ascend.com/npu.aicore=20\n",	   "ascend.com/npu.topology=hccs-mesh\n",
		"ascend.com/driver.version=24.1.rc1\n",
	};
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++)
		if (!strstr(text, want[i]))
			fail_msg("features file lacks %s:\n%s", want[i], text);
	assert_null(strstr(text, "replicas"));
	struct stat st;
	assert_int_equal(stat(file, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0644);
	free(text);

	/* A chip fails: the file says so. */
	node_write_health(node, CHIPS, 1, 3);
	expect_event(node->plugin, "nfd.rewritten", "path", file, "healthy", "1");
	text = read_file(file);
	assert_non_null(strstr(text, "ascend.com/npu.healthy=1\n"));
	free(text);

	/* It comes back with a warning and a sub-health code (80E18405 is
	 * SubHealthFault in the fault policy's table): Healthy once the
	 * recovery hold has passed, and counted for the scheduler. */
	node_write_chip_state(node, &(struct chip_state){ .chips = CHIPS,
							   .attrs = (const char *const[]){ [1] = "health=1 errors=80E18405" } });
	expect_event(node->plugin, "fault.level", "device", "npu-1", "fault_level", "SubHealthFault", "rule", "recovery hold");
	expect_event(node->plugin, "nfd.rewritten", "path", file);
	text = read_file(file);
	assert_non_null(strstr(text, "ascend.com/npu.healthy=2\nascend.com/npu.subhealth=1\n"));
	free(text);

	/* The plugin stops: the labels go with it. */
	proc_kill(node->plugin, SIGTERM);
	assert_int_equal(proc_wait(node->plugin, WAIT_MS), 0);
	assert_int_equal(access(file, F_OK), -1);
	node_fini(node);
}

/* One line of --log-format json, checked as JSON with its keys. */
static json_object *json_line(const char *line)
{
	json_object *o = json_tokener_parse(line);
	if (!o)
		fail_msg("not JSON: %s", line);
	json_object *v;
	assert_true(json_object_object_get_ex(o, "time", &v));
	assert_true(json_object_object_get_ex(o, "level", &v));
	assert_true(json_object_object_get_ex(o, "msg", &v));
	return o;
}

static void test_json_logs(void **state)
{
	struct node *node = *state;
	node_init(node, &(struct node_options){ .chips = CHIPS });
	node_start_registered(node, (const char *[]){ "--log-format", "json", NULL });
	const char *line = expect_event(node->plugin, "chips.found", "count", "2");
	json_object *o = json_line(line);
	json_object *v;
	assert_true(json_object_object_get_ex(o, "level", &v));
	assert_string_equal(json_object_get_string(v), "info");
	json_object_put(o);

	node_write_health(node, CHIPS, 1, 2);
	line = expect_event(node->plugin, "device.unhealthy", "device", "npu-1");
	o = json_line(line);
	assert_true(json_object_object_get_ex(o, "device", &v));
	assert_string_equal(json_object_get_string(v), "npu-1");
	assert_true(json_object_object_get_ex(o, "resource", &v));
	assert_string_equal(json_object_get_string(v), "ascend.com/npu");
	assert_true(json_object_object_get_ex(o, "level", &v));
	assert_string_equal(json_object_get_string(v), "warn");
	json_object_put(o);
	node_fini(node);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_metrics_fault_recovery_and_pods, node_setup, node_teardown),
		cmocka_unit_test_setup_teardown(test_metrics_without_pod_resources, node_setup, node_teardown),
		cmocka_unit_test_setup_teardown(test_healthz_across_kubelet_death, node_setup, node_teardown),
		cmocka_unit_test_setup_teardown(test_http_edges_and_flood, node_setup, node_teardown),
		cmocka_unit_test_setup_teardown(test_slowloris_is_cut_off, node_setup, node_teardown),
		cmocka_unit_test_setup_teardown(test_slowloris_leaves_healthz_answered, node_setup, node_teardown),
		cmocka_unit_test_setup_teardown(test_stalled_loop_is_reported, node_setup, node_teardown),
		cmocka_unit_test_setup_teardown(test_nfd_file, node_setup, node_teardown),
		cmocka_unit_test_setup_teardown(test_json_logs, node_setup, node_teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
