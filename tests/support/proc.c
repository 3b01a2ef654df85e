/* SPDX-License-Identifier: Apache-2.0 */
/* Child processes read line by line; see proc.h. */
#include "support/proc.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/parse.h"

extern char **environ;

/* Every line of a stream is kept, so that a count (proc_count_err) sees
 * all of them since the process started: the daemon at debug level writes
 * thousands in some tests (600 kubelet restarts). Past HISTORY_MAX lines a
 * count refuses to answer rather than answer low. A failure's dump shows
 * the last DUMP_LINES. */
#define HISTORY_MAX (1u << 20)
#define DUMP_LINES 256
/* Long enough for a whole line of the daemon's JSON log with its fields, so
 * that proc_count_err_match reads lines whole. */
#define HISTORY_LINE_MAX 2048
/* Children alive at once; more are run but not killed by proc_kill_all. */
#define MAX_LIVE 32

struct stream {
	int fd; /* -1 when there is none: stderr goes to a file */
	char *buf;
	size_t size, len;
	bool eof;
	/* The last lines, printed when an expectation fails. */
	char **history; /* malloc'd lines, n_history of them in room for history_cap */
	unsigned n_history, history_cap;
	bool history_full;
	char line[PROC_LINE_MAX];
};

struct proc {
	pid_t pid;
	int in_fd;
	struct stream out, err;
	bool exited;
	int status;
	int stop_timeout_ms;
	char name[64];
	char stderr_path[PATH_MAX]; /* empty when stderr is a pipe */
	int err_filler;             /* > 0 while stderr is blocked: our writer on its pipe */
};

/* Children to kill when the caller is interrupted or leaves early: only
 * pids here, so that a signal handler may read them. */
static volatile sig_atomic_t live_pids[MAX_LIVE];

static void track(pid_t pid, bool add)
{
	for (size_t i = 0; i < MAX_LIVE; i++) {
		if (add && live_pids[i] == 0) {
			live_pids[i] = pid;
			return;
		}
		if (!add && live_pids[i] == pid) {
			live_pids[i] = 0;
			return;
		}
	}
}

/* The processes alive now, for the picture a failed expectation prints:
 * the line awaited from one of them often depends on what another did. */
static struct proc *live_procs[MAX_LIVE];

static void remember_live(struct proc *p, bool add)
{
	for (size_t i = 0; i < MAX_LIVE; i++) {
		if (add && !live_procs[i]) {
			live_procs[i] = p;
			return;
		}
		if (!add && live_procs[i] == p) {
			live_procs[i] = NULL;
			return;
		}
	}
}

void proc_kill_all(void)
{
	for (size_t i = 0; i < MAX_LIVE; i++)
		if (live_pids[i] > 0)
			kill((pid_t)live_pids[i], SIGKILL);
}

void proc_reap_all(void)
{
	proc_kill_all();
	for (size_t i = 0; i < MAX_LIVE; i++) {
		if (live_pids[i] > 0)
			waitpid((pid_t)live_pids[i], NULL, 0);
		live_pids[i] = 0;
	}
}

static int stream_init(struct stream *s, int fd, size_t size)
{
	s->fd = fd;
	s->eof = fd < 0;
	s->size = size;
	s->buf = size ? malloc(size) : NULL;
	return !size || s->buf ? 0 : -ENOMEM;
}

static void stream_fini(struct stream *s)
{
	if (s->fd >= 0)
		close(s->fd);
	free(s->buf);
	for (unsigned i = 0; i < s->n_history; i++)
		free(s->history[i]);
	free(s->history);
}

static void close_pair(int fds[2])
{
	for (int i = 0; i < 2; i++)
		if (fds[i] >= 0)
			close(fds[i]);
}

/* posix_spawn with stdin, stdout and stderr as the options say; the pipe
 * ends the child uses are in in[0], out[1] and err[1]. */
static int spawn(const struct proc_options *o, pid_t *ret_pid, const int in[2], const int out[2], const int err[2])
{
	size_t n_env = 0, n_extra = 0;
	while (environ[n_env])
		n_env++;
	while (o->extra_env && o->extra_env[n_extra])
		n_extra++;
	char **envp = calloc(n_env + n_extra + 1, sizeof(*envp));
	if (!envp)
		return -ENOMEM;
	memcpy(envp, environ, n_env * sizeof(*envp));
	for (size_t i = 0; i < n_extra; i++)
		envp[n_env + i] = (char *)(uintptr_t)o->extra_env[i];

	posix_spawn_file_actions_t fa;
	posix_spawn_file_actions_init(&fa);
	if (o->null_stdin)
		posix_spawn_file_actions_addopen(&fa, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
	else
		posix_spawn_file_actions_adddup2(&fa, in[0], STDIN_FILENO);
	posix_spawn_file_actions_adddup2(&fa, out[1], STDOUT_FILENO);
	if (o->stderr_path)
		posix_spawn_file_actions_addopen(&fa, STDERR_FILENO, o->stderr_path, O_WRONLY | O_CREAT | O_APPEND,
						 0644);
	else
		posix_spawn_file_actions_adddup2(&fa, err[1], STDERR_FILENO);

	/* The caller's own signal handling (a SIGINT handler, SIGPIPE ignored)
	 * must not leak into the child. */
	posix_spawnattr_t attr;
	posix_spawnattr_init(&attr);
	sigset_t none, defaults;
	sigemptyset(&none);
	sigemptyset(&defaults);
	sigaddset(&defaults, SIGINT);
	sigaddset(&defaults, SIGTERM);
	sigaddset(&defaults, SIGPIPE);
	posix_spawnattr_setsigmask(&attr, &none);
	posix_spawnattr_setsigdefault(&attr, &defaults);
	posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);

	int r = -posix_spawn(ret_pid, o->argv[0], &fa, &attr, (char *const *)(uintptr_t)o->argv, envp);
	posix_spawn_file_actions_destroy(&fa);
	posix_spawnattr_destroy(&attr);
	free(envp);
	return r;
}

int proc_spawn(const struct proc_options *o, struct proc **ret_proc)
{
	int in[2] = { -1, -1 }, out[2] = { -1, -1 }, err[2] = { -1, -1 };
	size_t size = o->buffer_size ? o->buffer_size : PROC_BUFFER_DEFAULT;
	int r;

	struct proc *p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	p->in_fd = -1;
	p->out.fd = p->err.fd = -1;
	if ((!o->null_stdin && pipe2(in, O_CLOEXEC) < 0) || pipe2(out, O_CLOEXEC) < 0 ||
	    (!o->stderr_path && pipe2(err, O_CLOEXEC) < 0)) {
		r = -errno;
		goto fail;
	}
	if (o->stderr_path && (r = str_copy(p->stderr_path, sizeof(p->stderr_path), o->stderr_path)) < 0)
		goto fail;
	if ((r = spawn(o, &p->pid, in, out, err)) < 0)
		goto fail;
	track(p->pid, true);

	p->in_fd = in[1];
	in[1] = -1;
	/* The streams own the read ends from here, whatever happens. */
	int rs = stream_init(&p->out, out[0], size);
	int re = stream_init(&p->err, err[0], o->stderr_path ? 0 : size);
	out[0] = err[0] = -1;
	close_pair(in);
	close_pair(out);
	close_pair(err);
	p->stop_timeout_ms = o->stop_timeout_ms;
	const char *base = strrchr(o->argv[0], '/');
	snprintf(p->name, sizeof(p->name), "%s", base ? base + 1 : o->argv[0]);
	if (rs < 0 || re < 0) {
		proc_free(p);
		return -ENOMEM;
	}
	remember_live(p, true);
	*ret_proc = p;
	return 0;

fail:
	close_pair(in);
	close_pair(out);
	close_pair(err);
	free(p);
	return r;
}

pid_t proc_pid(const struct proc *p)
{
	return p->pid;
}

long long proc_status_kib(pid_t pid, const char *key)
{
	char path[64], line[256];
	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	FILE *f = fopen(path, "re");
	if (!f)
		return -1;
	long long kib = -1;
	size_t key_len = strlen(key);
	while (fgets(line, sizeof(line), f)) {
		if (strncmp(line, key, key_len) != 0 || line[key_len] != ':')
			continue;
		const char *p = line + key_len + 1;
		p += strspn(p, " \t");
		char digits[24];
		size_t n = strspn(p, "0123456789");
		uint64_t v;
		if (n > 0 && n < sizeof(digits)) {
			memcpy(digits, p, n);
			digits[n] = '\0';
			if (parse_u64(digits, 10, INT64_MAX, &v) == 0)
				kib = (long long)v;
		}
		break;
	}
	fclose(f);
	return kib;
}

static void remember(struct stream *s, const char *line)
{
	if (s->n_history == s->history_cap) {
		unsigned cap = s->history_cap ? s->history_cap * 2 : 256;
		char **grown = cap <= HISTORY_MAX ? realloc(s->history, cap * sizeof(*grown)) : NULL;
		if (!grown) {
			s->history_full = true;
			return;
		}
		s->history = grown;
		s->history_cap = cap;
	}
	/* Long lines are cut: history is for reading, not matching. */
	char *copy = strndup(line, HISTORY_LINE_MAX - 1);
	if (!copy) {
		s->history_full = true;
		return;
	}
	s->history[s->n_history++] = copy;
}

void proc_print_log(const char *title, const char *path)
{
	char buf[4096];
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	off_t size = lseek(fd, 0, SEEK_END);
	off_t from = size > (off_t)sizeof(buf) - 1 ? size - (off_t)sizeof(buf) + 1 : 0;
	ssize_t n = pread(fd, buf, sizeof(buf) - 1, from);
	close(fd);
	if (n <= 0)
		return;
	buf[n] = '\0';
	const char *start = buf;
	if (from > 0 && strchr(buf, '\n'))
		start = strchr(buf, '\n') + 1;
	fprintf(stderr, "--- %s (%s), last lines:\n%s", title, path, start);
}

void proc_dump(const struct proc *p)
{
	const struct stream *streams[] = { &p->out, &p->err };
	const char *names[] = { "stdout", "stderr" };
	for (int k = 0; k < 2; k++) {
		const struct stream *s = streams[k];
		if (k == 1 && p->stderr_path[0]) {
			char title[sizeof(p->name) + 8];
			snprintf(title, sizeof(title), "%s stderr", p->name);
			proc_print_log(title, p->stderr_path);
			continue;
		}
		/* The dump shows the last DUMP_LINES: enough to read, not a flood. */
		unsigned first = s->n_history > DUMP_LINES ? s->n_history - DUMP_LINES : 0;
		fprintf(stderr, "--- %s %s (last %u lines)\n", p->name, names[k], s->n_history - first);
		for (unsigned i = first; i < s->n_history; i++)
			fprintf(stderr, "    %s\n", s->history[i]);
	}
}

/* Takes one complete line out of the stream's buffer, if there is one; an
 * overlong line, or an unterminated one at EOF, counts as a line too. */
static bool take_line(struct stream *s)
{
	if (s->len == 0)
		return false;
	char *nl = memchr(s->buf, '\n', s->len);
	size_t n, used;
	if (nl) {
		n = (size_t)(nl - s->buf);
		used = n + 1;
	} else if (s->len == s->size || s->eof) {
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

static void drain(struct proc *p)
{
	while (take_line(&p->out))
		;
	while (take_line(&p->err))
		;
}

/* Whether a stream can take more now: open, not full, not blocked. */
static bool readable(const struct proc *p, const struct stream *s)
{
	return !s->eof && s->len < s->size && !(s == &p->err && p->err_filler > 0);
}

/* Reads whatever is available on either stream within the timeout. Returns
 * false when the timeout passed with nothing read (or nothing can be). */
static bool pump(struct proc *p, int timeout_ms)
{
	struct stream *streams[2] = { &p->out, &p->err };
	struct pollfd fds[2];
	for (int i = 0; i < 2; i++)
		fds[i] = (struct pollfd){ .fd = readable(p, streams[i]) ? streams[i]->fd : -1, .events = POLLIN };
	if (p->out.eof && p->err.eof)
		return false;
	int n = poll(fds, 2, timeout_ms);
	if (n < 0 && errno == EINTR)
		return true;
	if (n <= 0)
		return false;
	for (int i = 0; i < 2; i++) {
		if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR)))
			continue;
		struct stream *s = streams[i];
		ssize_t got = read(s->fd, s->buf + s->len, s->size - s->len);
		if (got <= 0)
			s->eof = true;
		else
			s->len += (size_t)got;
	}
	return true;
}

/* Prints what a stream holds but nobody has read yet, leaving it there. */
static void print_unread(const struct proc *p, const struct stream *s, const char *name)
{
	if (s->len == 0)
		return;
	fprintf(stderr, "--- %s %s, not read yet:\n%.*s%s", p->name, name, (int)s->len, s->buf,
		s->buf[s->len - 1] == '\n' ? "" : "\n");
}

/* After a failed expectation on failed: every other live process's last
 * lines and what its pipes hold, without taking a line from them (a test
 * that tolerates the failure reads on). */
static void dump_others(const struct proc *failed)
{
	for (size_t i = 0; i < MAX_LIVE; i++) {
		struct proc *p = live_procs[i];
		if (!p || p == failed)
			continue;
		for (int n = 0; n < 64 && pump(p, 0); n++)
			;
		proc_dump(p);
		print_unread(p, &p->out, "stdout");
		print_unread(p, &p->err, "stderr");
	}
}

static bool has_needle(const char *line, const void *needle)
{
	return strstr(line, needle) != NULL;
}

static const char *expect_on(struct proc *p, struct stream *want, const struct proc_match *m, int timeout_ms)
{
	int64_t deadline = now_ms() + timeout_ms;
	for (;;) {
		/* Drain complete lines of both streams; stderr lines are history too. */
		struct stream *other = want == &p->out ? &p->err : &p->out;
		while (take_line(other))
			if (other == &p->err && want == &p->out)
				fprintf(stderr, "    [%s] %s\n", p->name, other->line);
		while (take_line(want))
			if (m->match(want->line, m->arg))
				return want->line;
		int64_t left = deadline - now_ms();
		if (left <= 0 || (want->eof && want->len == 0)) {
			fprintf(stderr, "expected %s from %s within %dms\n", m->what, p->name, timeout_ms);
			proc_dump(p);
			dump_others(p);
			return NULL;
		}
		pump(p, (int)left);
	}
}

/* A matcher for a line containing needle; what names it in buf. */
static struct proc_match needle_match(const char *needle, char *buf, size_t size)
{
	snprintf(buf, size, "a line containing '%s'", needle);
	return (struct proc_match){ .match = has_needle, .arg = needle, .what = buf };
}

const char *proc_expect(struct proc *p, const char *needle, int timeout_ms)
{
	char what[PROC_LINE_MAX];
	const struct proc_match m = needle_match(needle, what, sizeof(what));
	return expect_on(p, &p->out, &m, timeout_ms);
}

const char *proc_expect_err(struct proc *p, const char *needle, int timeout_ms)
{
	char what[PROC_LINE_MAX];
	const struct proc_match m = needle_match(needle, what, sizeof(what));
	return expect_on(p, &p->err, &m, timeout_ms);
}

const char *proc_expect_err_match(struct proc *p, const struct proc_match *m, int timeout_ms)
{
	return expect_on(p, &p->err, m, timeout_ms);
}

bool proc_expect_all(struct proc *p, const char *const needles[], size_t n, int timeout_ms)
{
	bool seen[PROC_EXPECT_ALL_MAX] = { false };
	size_t missing = n;
	if (n > PROC_EXPECT_ALL_MAX)
		return false;
	int64_t deadline = now_ms() + timeout_ms;
	for (;;) {
		while (take_line(&p->err))
			;
		while (missing > 0 && take_line(&p->out))
			for (size_t i = 0; i < n; i++)
				if (!seen[i] && strstr(p->out.line, needles[i])) {
					seen[i] = true;
					missing--;
				}
		if (missing == 0)
			return true;
		int64_t left = deadline - now_ms();
		if (left <= 0 || (p->out.eof && p->out.len == 0)) {
			for (size_t i = 0; i < n; i++)
				if (!seen[i])
					fprintf(stderr, "expected a line containing '%s' from %s within %dms\n", needles[i],
						p->name, timeout_ms);
			proc_dump(p);
			dump_others(p);
			return false;
		}
		pump(p, (int)left);
	}
}

const char *proc_expect_next(struct proc *p, const char *needle, const char *want, int timeout_ms)
{
	const char *line = proc_expect(p, needle, timeout_ms);
	if (line && !strstr(line, want)) {
		fprintf(stderr, "the first line containing '%s' from %s was\n    %s\nnot one containing '%s'\n", needle,
			p->name, line, want);
		proc_dump(p);
		return NULL;
	}
	return line;
}

bool proc_sees_within(struct proc *p, const char *needle, int window_ms)
{
	int64_t deadline = now_ms() + window_ms;
	for (;;) {
		while (take_line(&p->err))
			;
		while (take_line(&p->out))
			if (strstr(p->out.line, needle))
				return true;
		int64_t left = deadline - now_ms();
		if (left <= 0 || (p->out.eof && p->out.len == 0))
			return false;
		pump(p, (int)left);
	}
}

unsigned proc_count_err_match(struct proc *p, const struct proc_match *m)
{
	/* Stdout lines stay in the buffer for the next expectation. */
	do
		while (take_line(&p->err))
			;
	while (pump(p, 0));
	/* A count over lines that are gone would be silently low: say so, and
	 * answer what no expected count is. */
	if (p->err.history_full) {
		fprintf(stderr, "%s wrote more lines than a count can see (%u)\n", p->name, p->err.n_history);
		return UINT_MAX;
	}
	unsigned count = 0;
	for (unsigned i = 0; i < p->err.n_history; i++)
		count += m->match(p->err.history[i], m->arg);
	return count;
}

unsigned proc_count_err(struct proc *p, const char *needle)
{
	char what[PROC_LINE_MAX];
	const struct proc_match m = needle_match(needle, what, sizeof(what));
	return proc_count_err_match(p, &m);
}

void proc_discard(struct proc *p)
{
	do
		p->out.len = p->err.len = 0;
	while (pump(p, 0));
	p->out.len = p->err.len = 0;
}

int proc_write_line(struct proc *p, const char *line)
{
	if (p->in_fd < 0)
		return -EBADF;
	size_t len = strlen(line);
	struct iovec iov[2] = { { .iov_base = (void *)(uintptr_t)line, .iov_len = len },
				{ .iov_base = (void *)(uintptr_t)"\n", .iov_len = 1 } };
	ssize_t n = writev(p->in_fd, iov, 2);
	if (n < 0)
		return -errno;
	return (size_t)n == len + 1 ? 0 : -EIO;
}

void proc_kill(struct proc *p, int sig)
{
	if (!p->exited)
		kill(p->pid, sig);
}

static void reaped(struct proc *p, int status)
{
	track(p->pid, false);
	p->exited = true;
	p->status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

int proc_wait(struct proc *p, int timeout_ms)
{
	int64_t deadline = now_ms() + timeout_ms;
	while (!p->exited) {
		int status;
		if (waitpid(p->pid, &status, WNOHANG) == p->pid) {
			reaped(p, status);
			break;
		}
		int64_t left = deadline - now_ms();
		if (left <= 0)
			return -1;
		/* Output keeps flowing while we wait; EOF on both means the exit is near. */
		if (!pump(p, left > 20 ? 20 : (int)left))
			continue;
		drain(p);
	}
	return p->status;
}

int proc_stderr_block(struct proc *p)
{
	if (p->err_filler > 0)
		return -EALREADY;
	if (p->err.fd < 0)
		return -EBADF;
	/* Opening the pipe again through /proc gives a writer with a file
	 * description of its own: O_NONBLOCK on it leaves the child's alone. */
	char path[64];
	snprintf(path, sizeof(path), "/proc/self/fd/%d", p->err.fd);
	int fd = open(path, O_WRONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	/* Whole lines while they fit, then single bytes, until not one more fits. */
	char line[64];
	memset(line, '#', sizeof(line) - 1);
	line[sizeof(line) - 1] = '\n';
	while (write(fd, line, sizeof(line)) == (ssize_t)sizeof(line))
		;
	while (write(fd, "\n", 1) == 1)
		;
	if (errno != EAGAIN) {
		int r = -errno;
		close(fd);
		return r;
	}
	p->err_filler = fd;
	return 0;
}

int proc_stderr_unblock(struct proc *p)
{
	if (p->err_filler <= 0)
		return -EINVAL;
	close(p->err_filler);
	p->err_filler = 0;
	return 0;
}

int proc_free(struct proc *p)
{
	if (!p)
		return 0;
	if (!p->exited) {
		kill(p->pid, SIGTERM);
		if (proc_wait(p, p->stop_timeout_ms) < 0) {
			fprintf(stderr, "%s did not exit within %d ms of SIGTERM; killing it\n", p->name,
				p->stop_timeout_ms);
			kill(p->pid, SIGKILL);
			proc_wait(p, p->stop_timeout_ms);
		}
	}
	/* SIGKILL cannot be refused: a child not reaped by now is near. */
	int status;
	if (!p->exited && waitpid(p->pid, &status, 0) == p->pid)
		reaped(p, status);
	drain(p);
	if (p->status != 0)
		proc_dump(p);
	status = p->status;
	if (p->in_fd >= 0)
		close(p->in_fd);
	stream_fini(&p->out);
	stream_fini(&p->err);
	if (p->err_filler > 0)
		close(p->err_filler);
	remember_live(p, false);
	free(p);
	return status;
}
