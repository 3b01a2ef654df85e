/* SPDX-License-Identifier: Apache-2.0 */
/* Child processes whose output lines are awaited with deadlines, for the
 * integration tests (through tests/integration/harness) and the benchmark
 * (bench/bench.c): the plugin, kubelet-sim and whatever else they run. A
 * child's stdout, and its stderr unless that goes to a file, are pipes read
 * line by line; stdin is a pipe for commands or /dev/null. Nothing here
 * sleeps to synchronise: every wait is a poll on a pipe with a deadline,
 * and what was last seen is printed when an expectation fails. No test
 * framework here: calls return a value or a negative errno, and the caller
 * (a test, the bench) decides what a failure means. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

struct proc;

/* Output kept per stream unless proc_options says otherwise: a longer line
 * comes out in pieces of this size. */
#define PROC_BUFFER_DEFAULT 8192
/* The longest line handed out; longer ones are cut (the rest is dropped). */
#define PROC_LINE_MAX 8192

struct proc_options {
	const char *const *argv;      /* argv[0] is the path run; NULL-terminated */
	const char *const *extra_env; /* "NAME=value" added to the environment; NULL-terminated, may be NULL */
	const char *stderr_path;      /* stderr appended to this file; NULL: a pipe read like stdout */
	bool null_stdin;              /* stdin from /dev/null; otherwise a pipe for proc_write_line */
	size_t buffer_size;           /* output buffered per stream; 0: PROC_BUFFER_DEFAULT */
	int stop_timeout_ms;          /* proc_free's wait after SIGTERM, and after SIGKILL */
};

/* Starts the child with default signal handling and an empty signal mask,
 * whatever the caller has. Returns 0 with *ret_proc, or a negative errno
 * (the spawn's, with a line on stderr). */
int proc_spawn(const struct proc_options *options, struct proc **ret_proc);

/* Waits until a line containing needle appears on stdout (or, with _err, on
 * stderr), consuming lines up to and including it. Returns the line (valid
 * until the next call) or NULL on timeout or end of output, after printing
 * what was awaited and what was seen. */
const char *proc_expect(struct proc *p, const char *needle, int timeout_ms);
const char *proc_expect_err(struct proc *p, const char *needle, int timeout_ms);

/* A test of a line other than "contains a needle": match says whether line
 * is the one awaited (arg is its own), what says which line that is, for
 * the message of a failed expectation ("the event plugin.registered with
 * resource=ascend.com/npu"). */
struct proc_match {
	bool (*match)(const char *line, const void *arg);
	const void *arg;
	const char *what;
};

/* proc_expect_err and proc_count_err with a matcher. */
const char *proc_expect_err_match(struct proc *p, const struct proc_match *m, int timeout_ms);
unsigned proc_count_err_match(struct proc *p, const struct proc_match *m);

/* Waits until each of the n needles (at most PROC_EXPECT_ALL_MAX) has
 * appeared in a stdout line, in any order, consuming the lines read: for
 * events of two threads of the process that may come either way round.
 * Returns false on timeout or end of output, after printing what is
 * missing. */
#define PROC_EXPECT_ALL_MAX 8
bool proc_expect_all(struct proc *p, const char *const needles[], size_t n, int timeout_ms);

/* The sentinel check that replaces "nothing happens for a while": after
 * the action that must have no visible effect, cause a different event that
 * the process reports after it, then expect that event's line to be the
 * first line containing needle. Returns the line, or NULL (after printing
 * what was seen) when the first such line does not contain want, or on
 * timeout or exit. */
const char *proc_expect_next(struct proc *p, const char *needle, const char *want, int timeout_ms);

/* Whether a line containing needle arrives on stdout within window_ms;
 * used to assert that something does NOT happen. Consumes what it reads. */
bool proc_sees_within(struct proc *p, const char *needle, int window_ms);

/* How many of the stderr lines kept so far contain needle (reads what is
 * pending first). 0 when stderr goes to a file. */
unsigned proc_count_err(struct proc *p, const char *needle);

/* Drops every line read so far and whatever the pipes hold now, so that
 * the next expectation sees only what comes after. */
void proc_discard(struct proc *p);

/* Writes line and a newline to the child's stdin. 0, -EBADF without a
 * stdin pipe, or another negative errno. */
int proc_write_line(struct proc *p, const char *line);

/* Sends a signal, unless the process was reaped. */
void proc_kill(struct proc *p, int sig);

/* Waits for the exit, reading output meanwhile; returns the exit status
 * (0-255), 128+signal, or -1 on timeout. */
int proc_wait(struct proc *p, int timeout_ms);

pid_t proc_pid(const struct proc *p);

/* A number of /proc/PID/status: in KiB for "VmRSS", "VmHWM", "VmSize",
 * "VmPeak" and the like, a count for "Threads"; -1 when it cannot be read. */
long long proc_status_kib(pid_t pid, const char *key);

/* Stops reading the process's stderr pipe and fills it, so that the
 * process's next write to stderr blocks, as under a log collector that
 * stopped reading. Lines already read stay readable. 0, -EALREADY when it
 * is blocked already, -EBADF when stderr is not a pipe, or a negative errno. */
int proc_stderr_block(struct proc *p);

/* Reads stderr again (the filler first), so that a blocked writer resumes.
 * -EINVAL when it was not blocked. */
int proc_stderr_unblock(struct proc *p);

/* Prints the last lines of stdout and stderr (of the file, when stderr
 * goes to one) to this process's stderr. */
void proc_dump(const struct proc *p);

/* Prints the last lines of a file (the log a child's stderr went to) under
 * title to this process's stderr; nothing when it cannot be read. */
void proc_print_log(const char *title, const char *path);

/* SIGTERM unless it has exited; waits stop_timeout_ms, then SIGKILL and as
 * long again; reaps, prints what was seen when the status is not 0, and
 * frees. Returns the exit status as proc_wait. Accepts NULL (returns 0). */
int proc_free(struct proc *p);

/* SIGKILL to every child started here and not yet reaped. Only kill(2):
 * async-signal-safe, for a SIGINT handler. */
void proc_kill_all(void);

/* proc_kill_all, then reaps them: for an exit path that lost track of its
 * children (a test left by longjmp). */
void proc_reap_all(void);
