/* SPDX-License-Identifier: Apache-2.0 */
/* Integration test harness: a simulated Ascend node in a fresh temporary
 * directory (device nodes as regular files, a driver tree with the DCMI
 * simulator installed as libdcmi.so, a kubelet socket directory and a DCMI
 * state file), and child processes whose output lines tests wait for with
 * deadlines. The node's files and the processes are built with
 * tests/support (shared with the benchmark); what is here fails the test on
 * an error and cleans up after a test that failed. Nothing here sleeps to
 * synchronise: every wait is on a pipe or a socket with a bounded deadline. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "grpc/client.h"
#include "support/log_match.h"
#include "support/node_tree.h"
#include "support/proc.h"
#include "support/tmpdir.h"
#include "wait.h" /* WAIT_MS */

/* The process helpers are tests/support/proc.h's; these five fail the
 * test where those return an error. */

/* Starts argv[0] with the environment plus extra "NAME=value" entries
 * (NULL-terminated, may be NULL); stdin, stdout and stderr are pipes, and
 * proc_free waits EXIT_WAIT_MS for the exit. */
struct proc *proc_start(const char *const argv[], const char *const extra_env[]);

/* Writes one line to the process's stdin. */
void proc_send(struct proc *p, const char *line);

/* proc_status_kib: a number of /proc/PID/status. */
long long proc_status(pid_t pid, const char *key);

/* proc_stderr_block and proc_stderr_unblock. */
void proc_block_stderr(struct proc *p);
void proc_unblock_stderr(struct proc *p);

struct node_options {
	unsigned chips;        /* chip lines phy 0..chips-1, name 910B3 */
	const char *chip_name; /* default "910B3" */
	bool no_dcmi;          /* do not install libdcmi.so in the driver tree */
	bool no_manager;       /* no davinci_manager device node */
	const char *extra_state; /* appended to the state file */
};

struct node {
	unsigned chips;          /* as in node_options */
	char root[64];           /* the node's temp dir; also --host-root */
	char dev_dir[128];       /* <root>/dev */
	char socket_dir[128];    /* <root>/kubelet */
	char driver_path[64];    /* host path: /usr/local/Ascend/driver */
	char dcmi_dir[256];      /* <root>/usr/local/Ascend/driver/lib64/driver */
	char state_file[128];    /* <root>/dcmi-state */
	char plugin_socket[160]; /* <socket_dir>/ascend-npu.sock */
	char state_dir[96];      /* <root>/state: the plugin's --state-dir */
	struct proc *plugin;
	struct proc *kubelet;
};

/* Builds the node; fails the test on error. */
void node_init(struct node *node, const struct node_options *options);

/* Stops processes (asserting the plugin exits 0 after SIGTERM if running) and
 * removes the tree. A second call does nothing. */
void node_fini(struct node *node);

/* cmocka setup and teardown for tests that take their node from *state: a
 * test that fails part way leaves its node to node_teardown, which cleans
 * up without asserting. */
int node_setup(void **state);
int node_teardown(void **state);

/* Replaces the DCMI state file atomically (write + rename). */
void node_write_state(struct node *node, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* chip_state_write to the node's state file (struct chip_state is
 * tests/support/node_tree.h's). */
void node_write_chip_state(struct node *node, const struct chip_state *state);

/* The standard state with one chip (none when phy < 0) at a DCMI health. */
void node_write_health(struct node *node, unsigned chips, int phy, unsigned health);

/* The standard state for n healthy 910B3 chips, followed by extra lines. */
void node_write_chips(struct node *node, unsigned chips, const char *extra);

/* kubelet-sim's line for a device list of resource ascend.com/npu;
 * unhealthy is the comma-separated ids, or "-" for none. */
const char *devices_line(char *buf, size_t size, unsigned capacity, unsigned allocatable, const char *unhealthy);

/* Installs (or removes) the simulator as the driver tree's libdcmi.so. */
void node_install_dcmi(struct node *node, bool present);

/* Creates or removes a file under the node (relative path). */
void node_touch(struct node *node, const char *relative);
void node_remove(struct node *node, const char *relative);

/* Starts the plugin with the node's paths plus extra flags (NULL-terminated).
 * The metrics endpoint, the NFD file and the pod resources client are off
 * unless extra flags turn them on. */
struct proc *node_start_plugin(struct node *node, const char *const extra_flags[]);
/* The same with extra "NAME=value" environment entries (NULL-terminated,
 * may be NULL), such as the plugin's ASCEND_PLUGIN_INSTANCE. */
struct proc *node_start_plugin_env(struct node *node, const char *const extra_flags[], const char *const extra_env[]);

/* The same under prlimit(1) (util-linux) with its address space (RLIMIT_AS, soft and
 * hard) limited to as_bytes, as `ulimit -v` or a container runtime limits it. */
struct proc *node_start_plugin_limited(struct node *node, unsigned long long as_bytes, const char *const extra_flags[]);

/* Starts kubelet-sim on the node's socket dir and waits for it to be ready. */
struct proc *node_start_kubelet(struct node *node);
/* The same with extra flags (NULL-terminated), e.g. --pod-resources-socket. */
struct proc *node_start_kubelet_with(struct node *node, const char *const extra_flags[]);

/* Starts kubelet-sim, then the plugin with extra flags, and waits until
 * the kubelet has the registration and every chip of the node Healthy. */
void node_start_registered(struct node *node, const char *const extra_flags[]);

/* A gRPC channel to the plugin's socket. */
struct gc_channel *node_plugin_channel(struct node *node);

/* The value of key=VALUE in a kubelet-sim line (until the next space), or "" */
/* Waits up to timeout_ms for dir/file to hold text, woken by inotify as
 * files are renamed into dir or written in it (a daemon replacing the file
 * atomically); returns the file's text, malloc'd. Fails the test on timeout,
 * quoting what the file says. */
char *wait_file_text(const char *dir, const char *file, const char *text, int timeout_ms);

const char *line_value(const char *line, const char *key, char *buf, size_t size);

/* The daemon's events, matched by name and fields (tests/support/log_match.h)
 * on its stderr, which the harness has it write as JSON. The arguments
 * after the event are "key", "value" pairs (the macros end them with NULL);
 * a value matches a field's text exactly, a number's by its digits. */

/* Waits WAIT_MS for the event; fails the test, after saying which event it
 * awaited and showing the last lines, when none comes. Returns the line. */
#define expect_event(p, ...) expect_event_v(p, WAIT_MS, __VA_ARGS__, (const char *)NULL)
/* The same within timeout_ms, returning NULL (having said what it awaited)
 * instead of failing: for a test that waits for the events to stop. */
#define wait_event(p, timeout_ms, ...) wait_event_v(p, timeout_ms, __VA_ARGS__, (const char *)NULL)
/* How many of the stderr lines kept (proc_count_err's) say the event. */
#define count_events(p, ...) count_events_v(p, __VA_ARGS__, (const char *)NULL)

const char *expect_event_v(struct proc *p, int timeout_ms, const char *event, ...);
const char *wait_event_v(struct proc *p, int timeout_ms, const char *event, ...);
unsigned count_events_v(struct proc *p, const char *event, ...);

/* The text of field key of an event's line (expect_event's), for a test
 * that looks into a value; fails the test when the line has no such field. */
const char *event_field(const char *line, const char *key, char *buf, size_t size);
