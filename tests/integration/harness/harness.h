/* SPDX-License-Identifier: Apache-2.0 */
/* Integration test harness: a simulated Ascend node in a fresh temporary
 * directory (device nodes as regular files, a driver tree with the DCMI
 * simulator installed as libdcmi.so, a kubelet socket directory and a DCMI
 * state file), and child processes whose output lines tests wait for with
 * deadlines. Nothing here sleeps to synchronise: every wait is on a pipe or
 * a socket with a bounded deadline. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "grpc/client.h"
#include "wait.h" /* WAIT_MS */

struct proc;

/* Starts argv[0] with the environment plus extra "NAME=value" entries
 * (NULL-terminated, may be NULL); stdin, stdout and stderr are pipes. */
struct proc *proc_start(const char *const argv[], const char *const extra_env[]);

/* Waits until a line containing needle appears on stdout (or stderr),
 * consuming lines up to and including it. Returns a pointer to the line
 * (valid until the next call) or NULL on timeout or exit, after printing
 * what was seen. */
const char *proc_expect(struct proc *p, const char *needle, int timeout_ms);
const char *proc_expect_err(struct proc *p, const char *needle, int timeout_ms);

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

/* How many stderr lines seen so far contain needle (reads what is pending). */
unsigned proc_count_err(struct proc *p, const char *needle);

/* Writes one line to the process's stdin. */
void proc_send(struct proc *p, const char *line);

/* Sends a signal. */
void proc_kill(struct proc *p, int sig);

/* Waits for the exit; returns the exit status (0-255), 128+signal, or -1 on timeout. */
int proc_wait(struct proc *p, int timeout_ms);

pid_t proc_pid(const struct proc *p);

/* Stops reading the process's stderr and fills its pipe, so that the
 * process's next write to stderr blocks, as under a log collector that
 * stopped reading. Lines already read stay readable. */
void proc_block_stderr(struct proc *p);

/* Reads stderr again (the filler first), so that a blocked writer resumes. */
void proc_unblock_stderr(struct proc *p);

/* Kills if still running, reaps and frees. Returns the exit status as proc_wait. */
int proc_free(struct proc *p);

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

/* A DCMI state file for chips phy 0..chips-1. */
struct chip_state {
	unsigned chips;
	const char *name;          /* chip name, default "910B3" */
	const char *head;          /* lines before the chips, e.g. "subscribe off\n"; may be NULL */
	const char *const *attrs;  /* attrs[phy], e.g. "health=2 errors=80E01801", replaces
				    * "health=0" where not NULL; attrs may be NULL */
	const char *tail;          /* lines after the chips; may be NULL */
};

/* Writes "driver 24.1.rc1", the head, one chip line per chip and the tail.
 * Nodes of more than 64 chips put four on each card, since DCMI lists at
 * most 64 cards; smaller ones have card = phy. */
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
const char *line_value(const char *line, const char *key, char *buf, size_t size);
