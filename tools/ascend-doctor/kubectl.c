/* SPDX-License-Identifier: Apache-2.0 */
/* Bounded child processes; see kubectl.h. */
#include "kubectl.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/parse.h"

extern char **environ;

#define STDERR_KEPT 1024

/* Reaps pid, waiting on its pidfd until deadline (now_ms() time). 0 with
 * *ret_status, -ETIMEDOUT, or -errno. */
static int wait_exit(pid_t pid, int64_t deadline, int *ret_status)
{
	int fd = (int)syscall(SYS_pidfd_open, pid, 0);
	if (fd < 0)
		return -errno;
	int r;
	for (;;) {
		pid_t got = waitpid(pid, ret_status, WNOHANG);
		if (got == pid) {
			r = 0;
			break;
		}
		if (got < 0 && errno != EINTR) {
			r = -errno;
			break;
		}
		int64_t left = deadline - now_ms();
		if (left <= 0) {
			r = -ETIMEDOUT;
			break;
		}
		struct pollfd pfd = { .fd = fd, .events = POLLIN };
		if (poll(&pfd, 1, (int)(left > 1000 ? 1000 : left)) < 0 && errno != EINTR) {
			r = -errno;
			break;
		}
	}
	close(fd);
	return r;
}

int run_capture(const char *const argv[], int64_t timeout_ms, size_t max, char **ret_out, size_t *ret_len, char *why,
		size_t why_size)
{
	int out_pipe[2] = { -1, -1 }, err_pipe[2] = { -1, -1 };
	posix_spawn_file_actions_t actions;
	bool actions_ready = false;
	pid_t pid = -1;
	char *buf = NULL, err_text[STDERR_KEPT + 1] = "";
	size_t len = 0, cap = 0, err_len = 0;
	int r;

	/* posix_spawn takes char *const[] for historical reasons and does not
	 * write to the strings: copy the pointers rather than cast. */
	char *args[RUN_MAX_ARGS + 1];
	size_t n_args = 0;
	while (argv[n_args]) {
		if (n_args == RUN_MAX_ARGS)
			return -E2BIG;
		n_args++;
	}
	memcpy(args, argv, (n_args + 1) * sizeof(args[0]));

	if (pipe2(out_pipe, O_CLOEXEC) < 0 || pipe2(err_pipe, O_CLOEXEC) < 0) {
		r = -errno;
		snprintf(why, why_size, "cannot make a pipe: %s", strerror(-r));
		goto out;
	}
	r = -posix_spawn_file_actions_init(&actions);
	if (r < 0)
		goto out;
	actions_ready = true;
	if (posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0) ||
	    posix_spawn_file_actions_adddup2(&actions, out_pipe[1], STDOUT_FILENO) ||
	    posix_spawn_file_actions_adddup2(&actions, err_pipe[1], STDERR_FILENO)) {
		r = -ENOMEM;
		goto out;
	}
	r = posix_spawnp(&pid, argv[0], &actions, NULL, args, environ);
	if (r != 0) {
		pid = -1;
		r = -r;
		snprintf(why, why_size, "cannot run %s: %s", argv[0], strerror(-r));
		goto out;
	}
	close(out_pipe[1]);
	close(err_pipe[1]);
	out_pipe[1] = err_pipe[1] = -1;

	int64_t deadline = now_ms() + timeout_ms;
	bool out_open = true, err_open = true;
	while (out_open || err_open) {
		int64_t left = deadline - now_ms();
		if (left <= 0) {
			r = -ETIMEDOUT;
			snprintf(why, why_size, "%s did not finish within %lldms", argv[0], (long long)timeout_ms);
			goto out;
		}
		struct pollfd fds[2] = { { .fd = out_open ? out_pipe[0] : -1, .events = POLLIN },
					 { .fd = err_open ? err_pipe[0] : -1, .events = POLLIN } };
		int n = poll(fds, 2, (int)(left > 1000 ? 1000 : left));
		if (n < 0 && errno != EINTR) {
			r = -errno;
			goto out;
		}
		if (n <= 0)
			continue;
		if (out_open && fds[0].revents) {
			if (cap - len < 65536) {
				size_t new_cap = cap ? cap * 2 : 65536 * 2;
				if (new_cap > max + 65536 + 1)
					new_cap = max + 65536 + 1;
				char *b = realloc(buf, new_cap);
				if (!b) {
					r = -ENOMEM;
					goto out;
				}
				buf = b;
				cap = new_cap;
			}
			ssize_t got = read(out_pipe[0], buf + len, cap - len - 1);
			if (got < 0 && errno != EINTR && errno != EAGAIN) {
				r = -errno;
				goto out;
			}
			if (got == 0)
				out_open = false;
			if (got > 0)
				len += (size_t)got;
			if (len > max) {
				r = -EFBIG;
				snprintf(why, why_size, "%s printed more than %zu bytes", argv[0], max);
				goto out;
			}
		}
		if (err_open && fds[1].revents) {
			char tmp[4096];
			ssize_t got = read(err_pipe[0], tmp, sizeof(tmp));
			if (got == 0 || (got < 0 && errno != EINTR && errno != EAGAIN))
				err_open = false;
			for (ssize_t i = 0; i < got && err_len < STDERR_KEPT; i++)
				err_text[err_len++] = tmp[i];
		}
	}
	/* Both pipes are closed; the program may still run (or a child of
	 * its may hold nothing open): wait for its end within the deadline. */
	int status;
	r = wait_exit(pid, deadline, &status);
	if (r == -ETIMEDOUT)
		snprintf(why, why_size, "%s did not exit within %lldms", argv[0], (long long)timeout_ms);
	if (r < 0)
		goto out;
	pid = -1;
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		err_text[err_len] = '\0';
		err_text[strcspn(err_text, "\n")] = '\0';
		if (WIFEXITED(status) && WEXITSTATUS(status) == 127)
			snprintf(why, why_size, "%s: not found", argv[0]);
		else if (WIFEXITED(status))
			snprintf(why, why_size, "%s exited with %d: %s", argv[0], WEXITSTATUS(status), err_text);
		else
			snprintf(why, why_size, "%s was killed by signal %d", argv[0], WTERMSIG(status));
		r = -EIO;
		goto out;
	}
	if (!buf) {
		buf = malloc(1);
		if (!buf) {
			r = -ENOMEM;
			goto out;
		}
	}
	buf[len] = '\0';
	*ret_out = buf;
	*ret_len = len;
	buf = NULL;
	r = 0;
out:
	if (pid > 0) {
		kill(pid, SIGKILL);
		while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
			;
	}
	if (actions_ready)
		posix_spawn_file_actions_destroy(&actions);
	for (int i = 0; i < 2; i++) {
		if (out_pipe[i] >= 0)
			close(out_pipe[i]);
		if (err_pipe[i] >= 0)
			close(err_pipe[i]);
	}
	free(buf);
	return r;
}
