/* SPDX-License-Identifier: Apache-2.0 */
#include "harness.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <setjmp.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "base/file.h"
#include "base/parse.h"
#include "npu/chip.h"

extern char **environ;

#define LINE_MAX_BYTES 8192
#define HISTORY_LINES 64

struct stream {
	int fd;
	char buf[LINE_MAX_BYTES];
	size_t len;
	bool eof;
	/* The last lines, printed when an expectation fails. */
	char history[HISTORY_LINES][256];
	unsigned n_history;
	char line[LINE_MAX_BYTES];
};

struct proc {
	pid_t pid;
	int in_fd;
	struct stream out, err;
	bool exited;
	int status;
	char name[64];
	int err_filler; /* > 0 while stderr is blocked: our writer on its pipe */
};

/* Processes and node trees still alive, so that a test that fails between
 * start and cleanup (cmocka leaves it by longjmp) leaves nothing behind once
 * the test program exits. */
#define MAX_LIVE 32
static pid_t live_pids[MAX_LIVE];
static char live_roots[MAX_LIVE][64];

static void track(pid_t *slots_pid, char (*slots_root)[64], pid_t pid, const char *root)
{
	for (size_t i = 0; i < MAX_LIVE; i++) {
		if (slots_pid && slots_pid[i] == 0) {
			slots_pid[i] = pid;
			return;
		}
		if (slots_root && slots_root[i][0] == '\0') {
			snprintf(slots_root[i], sizeof(slots_root[i]), "%s", root);
			return;
		}
	}
}

static void untrack_pid(pid_t pid)
{
	for (size_t i = 0; i < MAX_LIVE; i++)
		if (live_pids[i] == pid)
			live_pids[i] = 0;
}

static void untrack_root(const char *root)
{
	for (size_t i = 0; i < MAX_LIVE; i++)
		if (strcmp(live_roots[i], root) == 0)
			live_roots[i][0] = '\0';
}

static void remove_tree(const char *path);

static void clean_up_leftovers(void)
{
	for (size_t i = 0; i < MAX_LIVE; i++) {
		if (live_pids[i] > 0) {
			kill(live_pids[i], SIGKILL);
			waitpid(live_pids[i], NULL, 0);
		}
	}
	for (size_t i = 0; i < MAX_LIVE; i++)
		if (live_roots[i][0])
			remove_tree(live_roots[i]);
}

static void register_cleanup(void)
{
	static bool registered;
	if (!registered)
		atexit(clean_up_leftovers);
	registered = true;
}

static void remember(struct stream *s, const char *line)
{
	/* Long lines are cut: history is for reading, not matching. */
	char *slot = s->history[s->n_history % HISTORY_LINES];
	size_t n = strnlen(line, sizeof(s->history[0]) - 1);
	memcpy(slot, line, n);
	slot[n] = '\0';
	s->n_history++;
}

static void dump(const struct proc *p)
{
	const struct stream *streams[] = { &p->out, &p->err };
	const char *names[] = { "stdout", "stderr" };
	for (int k = 0; k < 2; k++) {
		const struct stream *s = streams[k];
		unsigned first = s->n_history > HISTORY_LINES ? s->n_history - HISTORY_LINES : 0;
		fprintf(stderr, "--- %s %s (last %u lines)\n", p->name, names[k], s->n_history - first);
		for (unsigned i = first; i < s->n_history; i++)
			fprintf(stderr, "    %s\n", s->history[i % HISTORY_LINES]);
	}
}

struct proc *proc_start(const char *const argv[], const char *const extra_env[])
{
	int in[2], out[2], err[2];
	assert_int_equal(pipe2(in, O_CLOEXEC), 0);
	assert_int_equal(pipe2(out, O_CLOEXEC), 0);
	assert_int_equal(pipe2(err, O_CLOEXEC), 0);

	size_t n_env = 0, n_extra = 0;
	while (environ[n_env])
		n_env++;
	while (extra_env && extra_env[n_extra])
		n_extra++;
	char **envp = calloc(n_env + n_extra + 1, sizeof(*envp));
	assert_non_null(envp);
	memcpy(envp, environ, n_env * sizeof(*envp));
	for (size_t i = 0; i < n_extra; i++)
		envp[n_env + i] = (char *)(uintptr_t)extra_env[i];

	posix_spawn_file_actions_t fa;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, in[0], 0);
	posix_spawn_file_actions_adddup2(&fa, out[1], 1);
	posix_spawn_file_actions_adddup2(&fa, err[1], 2);
	/* The test process blocks nothing, but be explicit for the child. */
	posix_spawnattr_t attr;
	posix_spawnattr_init(&attr);
	sigset_t none;
	sigemptyset(&none);
	posix_spawnattr_setsigmask(&attr, &none);
	posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK);

	struct proc *p = calloc(1, sizeof(*p));
	assert_non_null(p);
	int r = posix_spawn(&p->pid, argv[0], &fa, &attr, (char *const *)(uintptr_t)argv, envp);
	posix_spawn_file_actions_destroy(&fa);
	posix_spawnattr_destroy(&attr);
	free(envp);
	if (r != 0)
		fail_msg("cannot start %s: %s", argv[0], strerror(r));
	register_cleanup();
	track(live_pids, NULL, p->pid, NULL);

	close(in[0]);
	close(out[1]);
	close(err[1]);
	p->in_fd = in[1];
	p->out.fd = out[0];
	p->err.fd = err[0];
	const char *base = strrchr(argv[0], '/');
	snprintf(p->name, sizeof(p->name), "%s", base ? base + 1 : argv[0]);
	return p;
}

pid_t proc_pid(const struct proc *p)
{
	return p->pid;
}

/* Takes one complete line out of the stream's buffer, if there is one; an
 * overlong line, or an unterminated one at EOF, counts as a line too. */
static bool take_line(struct stream *s)
{
	char *nl = memchr(s->buf, '\n', s->len);
	size_t n, used;
	if (nl) {
		n = (size_t)(nl - s->buf);
		used = n + 1;
	} else if (s->len == sizeof(s->buf) || (s->eof && s->len > 0)) {
		n = used = s->len;
	} else {
		return false;
	}
	if (n >= sizeof(s->line))
		n = sizeof(s->line) - 1;
	memcpy(s->line, s->buf, n);
	s->line[n] = '\0';
	memmove(s->buf, s->buf + used, s->len - used);
	s->len -= used;
	remember(s, s->line);
	return true;
}

static int64_t mono_ms(void)
{
	return now_ms();
}

/* Reads whatever is available on either stream within the timeout. Returns
 * false when the timeout passed with nothing read. */
static bool pump(struct proc *p, int timeout_ms)
{
	struct pollfd fds[2] = { { .fd = p->out.eof ? -1 : p->out.fd, .events = POLLIN },
				 { .fd = p->err.eof || p->err_filler > 0 ? -1 : p->err.fd, .events = POLLIN } };
	if (p->out.eof && p->err.eof)
		return false;
	int n = poll(fds, 2, timeout_ms);
	if (n <= 0)
		return false;
	struct stream *streams[2] = { &p->out, &p->err };
	for (int i = 0; i < 2; i++) {
		if (!(fds[i].revents & (POLLIN | POLLHUP | POLLERR)))
			continue;
		struct stream *s = streams[i];
		ssize_t got = read(s->fd, s->buf + s->len, sizeof(s->buf) - s->len);
		if (got <= 0)
			s->eof = true;
		else
			s->len += (size_t)got;
	}
	return true;
}

static const char *expect_on(struct proc *p, struct stream *want, const char *needle, int timeout_ms)
{
	int64_t deadline = mono_ms() + timeout_ms;
	for (;;) {
		/* Drain complete lines of both streams; stderr lines are history too. */
		struct stream *other = want == &p->out ? &p->err : &p->out;
		while (take_line(other))
			if (other == &p->err && want == &p->out)
				fprintf(stderr, "    [%s] %s\n", p->name, other->line);
		while (take_line(want))
			if (strstr(want->line, needle))
				return want->line;
		int64_t left = deadline - mono_ms();
		if (left <= 0 || (want->eof && want->len == 0)) {
			fprintf(stderr, "expected a line containing '%s' from %s within %dms\n", needle, p->name,
				timeout_ms);
			dump(p);
			return NULL;
		}
		pump(p, (int)left);
	}
}

const char *proc_expect(struct proc *p, const char *needle, int timeout_ms)
{
	return expect_on(p, &p->out, needle, timeout_ms);
}

const char *proc_expect_err(struct proc *p, const char *needle, int timeout_ms)
{
	return expect_on(p, &p->err, needle, timeout_ms);
}

const char *proc_expect_next(struct proc *p, const char *needle, const char *want, int timeout_ms)
{
	const char *line = proc_expect(p, needle, timeout_ms);
	if (line && !strstr(line, want)) {
		fprintf(stderr, "the first line containing '%s' from %s was\n    %s\nnot one containing '%s'\n", needle,
			p->name, line, want);
		dump(p);
		return NULL;
	}
	return line;
}

bool proc_sees_within(struct proc *p, const char *needle, int window_ms)
{
	int64_t deadline = mono_ms() + window_ms;
	for (;;) {
		while (take_line(&p->err))
			;
		while (take_line(&p->out))
			if (strstr(p->out.line, needle))
				return true;
		int64_t left = deadline - mono_ms();
		if (left <= 0 || (p->out.eof && p->out.len == 0))
			return false;
		pump(p, (int)left);
	}
}

unsigned proc_count_err(struct proc *p, const char *needle)
{
	while (pump(p, 0))
		;
	while (take_line(&p->err))
		;
	unsigned count = 0;
	unsigned first = p->err.n_history > HISTORY_LINES ? p->err.n_history - HISTORY_LINES : 0;
	for (unsigned i = first; i < p->err.n_history; i++)
		count += strstr(p->err.history[i % HISTORY_LINES], needle) != NULL;
	return count;
}

void proc_send(struct proc *p, const char *line)
{
	size_t len = strlen(line);
	assert_int_equal(write(p->in_fd, line, len), (ssize_t)len);
	assert_int_equal(write(p->in_fd, "\n", 1), 1);
}

void proc_kill(struct proc *p, int sig)
{
	if (!p->exited)
		kill(p->pid, sig);
}

int proc_wait(struct proc *p, int timeout_ms)
{
	int64_t deadline = mono_ms() + timeout_ms;
	while (!p->exited) {
		int status;
		pid_t r = waitpid(p->pid, &status, WNOHANG);
		if (r == p->pid) {
			untrack_pid(p->pid);
			p->exited = true;
			p->status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
			break;
		}
		int64_t left = deadline - mono_ms();
		if (left <= 0)
			return -1;
		/* Output keeps flowing while we wait; EOF on both means the exit is near. */
		if (!pump(p, left > 20 ? 20 : (int)left))
			continue;
		while (take_line(&p->out))
			;
		while (take_line(&p->err))
			;
	}
	return p->status;
}

int proc_free(struct proc *p)
{
	if (!p)
		return 0;
	if (!p->exited) {
		kill(p->pid, SIGTERM);
		if (proc_wait(p, EXIT_WAIT_MS) < 0) {
			kill(p->pid, SIGKILL);
			proc_wait(p, EXIT_WAIT_MS);
		}
	}
	int status = p->status;
	while (take_line(&p->out))
		;
	while (take_line(&p->err))
		;
	if (status != 0)
		dump(p);
	close(p->in_fd);
	close(p->out.fd);
	close(p->err.fd);
	if (p->err_filler > 0)
		close(p->err_filler);
	free(p);
	return status;
}

void proc_block_stderr(struct proc *p)
{
	assert_true(p->err_filler <= 0);
	/* Opening the pipe again through /proc gives a writer with a file
	 * description of its own: O_NONBLOCK on it leaves the child's alone. */
	char path[64];
	snprintf(path, sizeof(path), "/proc/self/fd/%d", p->err.fd);
	int fd = open(path, O_WRONLY | O_NONBLOCK | O_CLOEXEC);
	assert_true(fd > 0);
	/* Whole lines while they fit, then single bytes, until not one more fits. */
	char line[64];
	memset(line, '#', sizeof(line) - 1);
	line[sizeof(line) - 1] = '\n';
	while (write(fd, line, sizeof(line)) == (ssize_t)sizeof(line))
		;
	while (write(fd, "\n", 1) == 1)
		;
	assert_int_equal(errno, EAGAIN);
	p->err_filler = fd;
}

void proc_unblock_stderr(struct proc *p)
{
	assert_true(p->err_filler > 0);
	close(p->err_filler);
	p->err_filler = 0;
}

/* --- the node ----------------------------------------------------------- */

static void write_file(const char *path, const char *content)
{
	FILE *f = fopen(path, "we");
	assert_non_null(f);
	fputs(content, f);
	assert_int_equal(fclose(f), 0);
}

void node_touch(struct node *node, const char *relative)
{
	char path[512];
	snprintf(path, sizeof(path), "%s/%s", node->root, relative);
	char dir[512];
	snprintf(dir, sizeof(dir), "%s", path);
	*strrchr(dir, '/') = '\0';
	assert_int_equal(mkdir_p(dir, 0755), 0);
	write_file(path, "");
}

void node_remove(struct node *node, const char *relative)
{
	char path[512];
	snprintf(path, sizeof(path), "%s/%s", node->root, relative);
	assert_int_equal(unlink(path), 0);
}

static void copy_file(const char *from, const char *to)
{
	char tmp[600];
	snprintf(tmp, sizeof(tmp), "%s.tmp", to);
	int in = open(from, O_RDONLY | O_CLOEXEC);
	assert_true(in >= 0);
	int out = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0755);
	assert_true(out >= 0);
	char buf[65536];
	ssize_t n;
	while ((n = read(in, buf, sizeof(buf))) > 0)
		assert_int_equal(write(out, buf, (size_t)n), n);
	close(in);
	assert_int_equal(close(out), 0);
	assert_int_equal(rename(tmp, to), 0);
}

void node_install_dcmi(struct node *node, bool present)
{
	char lib[512];
	snprintf(lib, sizeof(lib), "%s/libdcmi.so", node->dcmi_dir);
	if (present)
		copy_file(FAKE_DCMI_LIB, lib);
	else
		unlink(lib);
}

void node_write_state(struct node *node, const char *fmt, ...)
{
	char tmp[256];
	snprintf(tmp, sizeof(tmp), "%s.tmp", node->state_file);
	FILE *f = fopen(tmp, "we");
	assert_non_null(f);
	va_list ap;
	va_start(ap, fmt);
	vfprintf(f, fmt, ap);
	va_end(ap);
	assert_int_equal(fclose(f), 0);
	assert_int_equal(rename(tmp, node->state_file), 0);
}

#define STATE_BYTES (64 * 1024)

void node_write_chip_state(struct node *node, const struct chip_state *st)
{
	char *buf = calloc(1, STATE_BYTES);
	assert_non_null(buf);
	int w = snprintf(buf, STATE_BYTES, "driver 24.1.rc1\n%s", st->head ? st->head : "");
	assert_true(w > 0 && w < STATE_BYTES);
	size_t used = (size_t)w;
	bool four_per_card = st->chips > 64;
	for (unsigned i = 0; i < st->chips; i++) {
		const char *attrs = st->attrs && st->attrs[i] ? st->attrs[i] : "health=0";
		w = snprintf(buf + used, STATE_BYTES - used,
			     "chip phy=%u card=%u device=%u name=%s aicore=20 hbm_mb=65536 %s\n", i,
			     four_per_card ? i / 4 : i, four_per_card ? i % 4 : 0, st->name ? st->name : "910B3", attrs);
		assert_true(w > 0 && (size_t)w < STATE_BYTES - used);
		used += (size_t)w;
	}
	node_write_state(node, "%s%s", buf, st->tail ? st->tail : "");
	free(buf);
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
	snprintf(node->root, sizeof(node->root), "/tmp/ascend-it-XXXXXX");
	assert_non_null(mkdtemp(node->root));
	chmod(node->root, 0755);
	register_cleanup();
	track(NULL, live_roots, 0, node->root);
	snprintf(node->dev_dir, sizeof(node->dev_dir), "%s/dev", node->root);
	snprintf(node->socket_dir, sizeof(node->socket_dir), "%s/kubelet", node->root);
	snprintf(node->driver_path, sizeof(node->driver_path), "/usr/local/Ascend/driver");
	snprintf(node->dcmi_dir, sizeof(node->dcmi_dir), "%s%s/lib64/driver", node->root, node->driver_path);
	snprintf(node->state_file, sizeof(node->state_file), "%s/dcmi-state", node->root);
	snprintf(node->plugin_socket, sizeof(node->plugin_socket), "%s/ascend-npu.sock", node->socket_dir);
	assert_int_equal(mkdir_p(node->dev_dir, 0755), 0);
	assert_int_equal(mkdir_p(node->socket_dir, 0755), 0);
	assert_int_equal(mkdir_p(node->dcmi_dir, 0755), 0);

	char rel[128];
	for (unsigned i = 0; i < o->chips; i++) {
		snprintf(rel, sizeof(rel), "dev/davinci%u", i);
		node_touch(node, rel);
	}
	if (!o->no_manager)
		node_touch(node, "dev/davinci_manager");
	node_touch(node, "dev/devmm_svm");
	node_touch(node, "dev/hisi_hdc");
	node_touch(node, "usr/local/Ascend/driver/version.info");
	node_touch(node, "usr/local/Ascend/driver/lib64/libascend_hal.so");
	node_touch(node, "usr/local/bin/npu-smi");
	node_touch(node, "etc/ascend_install.info");
	if (!o->no_dcmi)
		node_install_dcmi(node, true);

	node_write_chip_state(node, &(struct chip_state){ .chips = o->chips, .name = o->chip_name, .tail = o->extra_state });
}

static void remove_tree(const char *path)
{
	char *argv[] = { (char *)(uintptr_t)"/bin/rm", (char *)(uintptr_t)"-rf", (char *)(uintptr_t)path, NULL };
	pid_t pid;
	if (posix_spawn(&pid, argv[0], NULL, NULL, argv, environ) == 0)
		waitpid(pid, NULL, 0);
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
		remove_tree(node->root);
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
	remove_tree(node->root);
	untrack_root(node->root);
	node->root[0] = '\0';
	/* A sanitizer report or a crash at exit fails the test here. */
	assert_int_equal(plugin_status, 0);
}

struct proc *node_start_plugin(struct node *node, const char *const extra_flags[])
{
	char state_env[200];
	snprintf(state_env, sizeof(state_env), "ASCEND_FAKE_DCMI_STATE=%s", node->state_file);
	const char *env[] = { state_env, NULL };

	/* No metrics port, NFD file or pod resources socket unless a test asks
	 * (later flags win): tests run in parallel and must not share a port
	 * or write to the host's /etc. */
	const char *argv[48] = {
		PLUGIN_BIN, "--socket-dir", node->socket_dir, "--dev-dir", node->dev_dir, "--host-root", node->root,
		"--driver-path", node->driver_path, "--log-level", "debug", "--metrics-addr=", "--nfd-features-file=",
		"--pod-resources-socket=",
	};
	size_t n = 14;
	for (size_t i = 0; extra_flags && extra_flags[i] && n < 47; i++)
		argv[n++] = extra_flags[i];
	argv[n] = NULL;
	node->plugin = proc_start(argv, env);
	return node->plugin;
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
