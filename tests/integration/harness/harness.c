/* SPDX-License-Identifier: Apache-2.0 */
#include "harness.h"

#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "base/file.h"
#include "base/macro.h"
#include "base/parse.h"
#include "npu/chip.h"

/* Node trees still there, so that a test that fails between node_init and
 * node_fini (cmocka leaves it by longjmp) leaves nothing behind once the
 * test program exits; the processes are tests/support's to kill. */
#define MAX_LIVE 32
static char live_roots[MAX_LIVE][64];

static void track_root(const char *root)
{
	for (size_t i = 0; i < MAX_LIVE; i++) {
		if (live_roots[i][0] == '\0') {
			snprintf(live_roots[i], sizeof(live_roots[i]), "%s", root);
			return;
		}
	}
}

static void untrack_root(const char *root)
{
	for (size_t i = 0; i < MAX_LIVE; i++)
		if (strcmp(live_roots[i], root) == 0)
			live_roots[i][0] = '\0';
}

static void clean_up_leftovers(void)
{
	proc_reap_all();
	for (size_t i = 0; i < MAX_LIVE; i++)
		if (live_roots[i][0])
			tmpdir_remove(live_roots[i]);
}

static void register_cleanup(void)
{
	static bool registered;
	if (!registered)
		atexit(clean_up_leftovers);
	registered = true;
}

struct proc *proc_start(const char *const argv[], const char *const extra_env[])
{
	const struct proc_options options = { .argv = argv, .extra_env = extra_env, .stop_timeout_ms = EXIT_WAIT_MS };
	struct proc *p = NULL;
	register_cleanup();
	int r = proc_spawn(&options, &p);
	if (r < 0)
		fail_msg("cannot start %s: %s", argv[0], strerror(-r));
	return p;
}

void proc_send(struct proc *p, const char *line)
{
	assert_int_equal(proc_write_line(p, line), 0);
}

long long proc_status(pid_t pid, const char *key)
{
	long long kib = proc_status_kib(pid, key);
	if (kib < 0)
		fail_msg("no %s in /proc/%d/status", key, (int)pid);
	return kib;
}

void proc_block_stderr(struct proc *p)
{
	assert_int_equal(proc_stderr_block(p), 0);
}

void proc_unblock_stderr(struct proc *p)
{
	assert_int_equal(proc_stderr_unblock(p), 0);
}

/* --- the node ----------------------------------------------------------- */

void node_touch(struct node *node, const char *relative)
{
	assert_int_equal(node_tree_touch(node->root, relative), 0);
}

void node_remove(struct node *node, const char *relative)
{
	char path[512];
	snprintf(path, sizeof(path), "%s/%s", node->root, relative);
	assert_int_equal(unlink(path), 0);
}

void node_install_dcmi(struct node *node, bool present)
{
	char lib[512];
	snprintf(lib, sizeof(lib), "%s/libdcmi.so", node->dcmi_dir);
	if (present)
		assert_int_equal(node_tree_install(FAKE_DCMI_LIB, lib, 0755), 0);
	else
		unlink(lib);
}

void node_write_state(struct node *node, const char *fmt, ...)
{
	char *text;
	va_list ap;
	va_start(ap, fmt);
	int len = vasprintf(&text, fmt, ap);
	va_end(ap);
	assert_true(len >= 0);
	assert_int_equal(file_write_atomic(node->state_file, text, (size_t)len, 0644, 0), 0);
	free(text);
}

void node_write_chip_state(struct node *node, const struct chip_state *st)
{
	assert_int_equal(chip_state_write(node->state_file, st), 0);
}

void node_write_health(struct node *node, unsigned chips, int phy, unsigned health)
{
	char attr[16];
	const char *attrs[NPU_MAX_CHIPS] = { NULL };
	snprintf(attr, sizeof(attr), "health=%u", health);
	assert_true(chips <= NPU_MAX_CHIPS && phy < (int)chips);
	if (phy >= 0)
		attrs[phy] = attr;
	node_write_chip_state(node, &(struct chip_state){ .chips = chips, .attrs = attrs });
}

void node_write_chips(struct node *node, unsigned chips, const char *extra)
{
	node_write_chip_state(node, &(struct chip_state){ .chips = chips, .tail = extra });
}

const char *devices_line(char *buf, size_t size, unsigned capacity, unsigned allocatable, const char *unhealthy)
{
	int w = snprintf(buf, size, "devices resource=ascend.com/npu capacity=%u allocatable=%u unhealthy=%s", capacity,
			 allocatable, unhealthy);
	assert_true(w > 0 && (size_t)w < size);
	return buf;
}

void node_init(struct node *node, const struct node_options *o)
{
	memset(node, 0, sizeof(*node));
	node->chips = o->chips;
	/* A fresh root-owned dir under the sticky /tmp passes DCMI's ownership check. */
	assert_int_equal(tmpdir_make(node->root, sizeof(node->root), "ascend-it"), 0);
	chmod(node->root, 0755);
	register_cleanup();
	track_root(node->root);
	snprintf(node->dev_dir, sizeof(node->dev_dir), "%s/" NODE_TREE_DEV_DIR, node->root);
	snprintf(node->socket_dir, sizeof(node->socket_dir), "%s/" NODE_TREE_SOCKET_DIR, node->root);
	snprintf(node->driver_path, sizeof(node->driver_path), NODE_TREE_DRIVER_PATH);
	snprintf(node->dcmi_dir, sizeof(node->dcmi_dir), "%s/" NODE_TREE_DCMI_DIR, node->root);
	snprintf(node->state_file, sizeof(node->state_file), "%s/" NODE_TREE_STATE_FILE, node->root);
	snprintf(node->plugin_socket, sizeof(node->plugin_socket), "%s/" NODE_TREE_PLUGIN_SOCKET, node->socket_dir);
	snprintf(node->state_dir, sizeof(node->state_dir), "%s/state", node->root);
	const struct node_tree_options options = {
		.chips = o->chips, .no_manager = o->no_manager, .dcmi_lib = o->no_dcmi ? NULL : FAKE_DCMI_LIB
	};
	assert_int_equal(node_tree_build(node->root, &options), 0);
	node_write_chip_state(node, &(struct chip_state){ .chips = o->chips, .name = o->chip_name, .tail = o->extra_state });
}

int node_setup(void **state)
{
	struct node *node = calloc(1, sizeof(*node));
	if (!node)
		return -1;
	*state = node;
	return 0;
}

int node_teardown(void **state)
{
	struct node *node = *state;
	*state = NULL;
	if (node && node->root[0]) {
		proc_free(node->plugin);
		proc_free(node->kubelet);
		tmpdir_remove(node->root);
		untrack_root(node->root);
	}
	free(node);
	return 0;
}

void node_fini(struct node *node)
{
	int plugin_status = 0;
	if (node->root[0] == '\0')
		return;
	if (node->plugin) {
		proc_kill(node->plugin, SIGTERM);
		plugin_status = proc_free(node->plugin);
		node->plugin = NULL;
	}
	if (node->kubelet) {
		proc_send(node->kubelet, "quit");
		proc_free(node->kubelet);
		node->kubelet = NULL;
	}
	tmpdir_remove(node->root);
	untrack_root(node->root);
	node->root[0] = '\0';
	/* A sanitizer report or a crash at exit fails the test here. */
	assert_int_equal(plugin_status, 0);
}

/* The plugin's command line after prefix (a wrapper's argv without the
 * NULL; n_prefix words), with extra "NAME=value" environment entries. */
static struct proc *start_plugin(struct node *node, const char *const prefix[], size_t n_prefix,
				 const char *const extra_flags[], const char *const extra_env[])
{
	char state_env[200], dev_env[200];
	snprintf(state_env, sizeof(state_env), "ASCEND_FAKE_DCMI_STATE=%s", node->state_file);
	/* A vNPU the simulator carves gets its node where the plugin looks. */
	snprintf(dev_env, sizeof(dev_env), "ASCEND_FAKE_DCMI_DEV_DIR=%s", node->dev_dir);
	/* The DRA front end's module from this build, not an installed one. */
	const char *env[9] = { state_env, dev_env, "ASCEND_KUBE_MODULE=" KUBE_MODULE_LIB };
	for (size_t i = 0, n = 3; extra_env && extra_env[i] && n < ELEMENTSOF(env) - 1; i++)
		env[n++] = extra_env[i];

	/* No metrics port, NFD file or pod resources socket unless a test asks
	 * (later flags win): tests run in parallel and must not share a port
	 * or write to the host's /etc or /var/lib. The log is JSON, so that
	 * tests wait on events by name (expect_event); a test of the text
	 * format asks for it. */
	const char *const own[] = {
		PLUGIN_BIN, "--socket-dir", node->socket_dir, "--dev-dir", node->dev_dir, "--host-root", node->root,
		"--driver-path", node->driver_path, "--log-level", "debug", "--log-format", "json", "--metrics-addr=",
		"--nfd-features-file=",
		"--pod-resources-socket=", "--state-dir", node->state_dir,
	};
	const char *argv[56];
	size_t n = 0;
	assert_true(n_prefix + ELEMENTSOF(own) < ELEMENTSOF(argv));
	for (size_t i = 0; i < n_prefix; i++)
		argv[n++] = prefix[i];
	for (size_t i = 0; i < ELEMENTSOF(own); i++)
		argv[n++] = own[i];
	for (size_t i = 0; extra_flags && extra_flags[i] && n < ELEMENTSOF(argv) - 1; i++)
		argv[n++] = extra_flags[i];
	argv[n] = NULL;
	node->plugin = proc_start(argv, env);
	return node->plugin;
}

struct proc *node_start_plugin(struct node *node, const char *const extra_flags[])
{
	return start_plugin(node, NULL, 0, extra_flags, NULL);
}

struct proc *node_start_plugin_env(struct node *node, const char *const extra_flags[], const char *const extra_env[])
{
	return start_plugin(node, NULL, 0, extra_flags, extra_env);
}

struct proc *node_start_plugin_limited(struct node *node, unsigned long long as_bytes, const char *const extra_flags[])
{
	char limit[48];
	snprintf(limit, sizeof(limit), "--as=%llu", as_bytes);
	const char *const prefix[] = { "/usr/bin/prlimit", limit, "--" };
	return start_plugin(node, prefix, ELEMENTSOF(prefix), extra_flags, NULL);
}

struct proc *node_start_kubelet(struct node *node)
{
	return node_start_kubelet_with(node, NULL);
}

struct proc *node_start_kubelet_with(struct node *node, const char *const extra_flags[])
{
	const char *argv[16] = { KUBELET_SIM_BIN, "--dir", node->socket_dir };
	size_t n = 3;
	for (size_t i = 0; extra_flags && extra_flags[i] && n < 15; i++)
		argv[n++] = extra_flags[i];
	argv[n] = NULL;
	node->kubelet = proc_start(argv, NULL);
	assert_non_null(proc_expect(node->kubelet, "ready", WAIT_MS));
	return node->kubelet;
}

void node_start_registered(struct node *node, const char *const extra_flags[])
{
	struct proc *k = node_start_kubelet(node);
	node_start_plugin(node, extra_flags);
	assert_non_null(proc_expect(k, "register resource=ascend.com/npu", WAIT_MS));
	char want[128];
	assert_non_null(proc_expect(k, devices_line(want, sizeof(want), node->chips, node->chips, "-"), WAIT_MS));
}

struct gc_channel *node_plugin_channel(struct node *node)
{
	struct gc_channel *ch;
	assert_int_equal(gc_channel_open(node->plugin_socket, &ch), 0);
	return ch;
}

const char *line_value(const char *line, const char *key, char *buf, size_t size)
{
	char pattern[64];
	snprintf(pattern, sizeof(pattern), " %s=", key);
	const char *p = strstr(line, pattern);
	buf[0] = '\0';
	if (!p)
		return buf;
	p += strlen(pattern);
	size_t n = 0;
	if (*p == '"') {
		p++;
		while (p[n] && p[n] != '"')
			n++;
	} else {
		while (p[n] && p[n] != ' ')
			n++;
	}
	if (n >= size)
		n = size - 1;
	memcpy(buf, p, n);
	buf[n] = '\0';
	return buf;
}

/* --- the daemon's events -------------------------------------------------- */

/* The event and the NULL-terminated "key", "value" strings of ap into m. */
static void match_from(struct log_match *m, const char *event, va_list ap)
{
	const char *pairs[2 * LOG_MATCH_PAIRS_MAX + 1];
	unsigned n = 0;
	for (const char *s; (s = va_arg(ap, const char *));) {
		if (n == ELEMENTSOF(pairs))
			fail_msg("the event %s: more than %d fields to match", event, LOG_MATCH_PAIRS_MAX);
		pairs[n++] = s;
	}
	if (log_match_init(m, event, pairs, n) < 0)
		fail_msg("the event %s: a key without a value to match", event);
}

/* Waits for the event of m, filled from event and ap. */
static const char *await_event(struct proc *p, int timeout_ms, struct log_match *m, const char *event, va_list ap)
{
	match_from(m, event, ap);
	const struct proc_match pm = log_match_proc(m);
	return proc_expect_err_match(p, &pm, timeout_ms);
}

const char *wait_event_v(struct proc *p, int timeout_ms, const char *event, ...)
{
	struct log_match m;
	va_list ap;
	va_start(ap, event);
	const char *line = await_event(p, timeout_ms, &m, event, ap);
	va_end(ap);
	return line;
}

const char *expect_event_v(struct proc *p, int timeout_ms, const char *event, ...)
{
	struct log_match m;
	va_list ap;
	va_start(ap, event);
	const char *line = await_event(p, timeout_ms, &m, event, ap);
	va_end(ap);
	if (!line)
		fail_msg("%s did not come within %dms", m.what, timeout_ms);
	return line;
}

unsigned count_events_v(struct proc *p, const char *event, ...)
{
	struct log_match m;
	va_list ap;
	va_start(ap, event);
	match_from(&m, event, ap);
	va_end(ap);
	const struct proc_match pm = log_match_proc(&m);
	return proc_count_err_match(p, &pm);
}

const char *event_field(const char *line, const char *key, char *buf, size_t size)
{
	if (log_line_field(line, key, buf, size) < 0)
		fail_msg("no field %s (or too long) in %s", key, line);
	return buf;
}

/* Waits up to timeout_ms for path to hold text, woken by inotify when a new
 * file is renamed into its directory (the daemon replaces it atomically);
 * returns the file's text, malloc'd. */
char *wait_file_text(const char *dir, const char *file, const char *text, int timeout_ms)
{
	char path[PATH_MAX];
	snprintf(path, sizeof(path), "%s/%s", dir, file);
	int fd = inotify_init1(IN_CLOEXEC | IN_NONBLOCK);
	assert_true(fd >= 0);
	assert_true(inotify_add_watch(fd, dir, IN_MOVED_TO | IN_CLOSE_WRITE) >= 0);
	struct timespec start, now;
	clock_gettime(CLOCK_MONOTONIC, &start);
	for (;;) {
		char *got = NULL;
		FILE *f = fopen(path, "r");
		if (f) {
			size_t cap = 0;
			if (getdelim(&got, &cap, '\0', f) < 0) {
				free(got);
				got = NULL;
			}
			fclose(f);
		}
		if (got && strstr(got, text)) {
			close(fd);
			return got;
		}
		clock_gettime(CLOCK_MONOTONIC, &now);
		long long left = timeout_ms - ((now.tv_sec - start.tv_sec) * 1000LL + (now.tv_nsec - start.tv_nsec) / 1000000);
		if (left <= 0)
			fail_msg("%s does not say %s within %d ms; it says: %s", path, text, timeout_ms, got ? got : "(none)");
		free(got);
		struct pollfd p = { .fd = fd, .events = POLLIN };
		if (poll(&p, 1, (int)left) > 0) {
			char events[4096];
			while (read(fd, events, sizeof(events)) > 0)
				;
		}
	}
}
