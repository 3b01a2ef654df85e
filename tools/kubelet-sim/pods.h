/* SPDX-License-Identifier: Apache-2.0 */
/* kubelet-sim's pod worker: runs pods from YAML in a real container runtime
 * through CRI, the way a kubelet does on one node. Admission allocates the
 * extended resources in each container's limits through the registered
 * device plugin (devmgr.h) and refuses a pod with the kubelet's reasons
 * (UnexpectedAdmissionError, OutOf<resource>); the Allocate answers become
 * CRI devices, mounts, envs, annotations and CDI devices; hostPath volumes
 * (with the kubelet's type checks), env with $(VAR) expansion and fieldRefs,
 * command/args, privileged, runAsUser/Group, supplementalGroups, capabilities
 * and readOnlyRootFilesystem are passed on. A periodic relist (like the
 * kubelet's PLEG) follows each container's state, restarts containers by the
 * pod's restartPolicy with a back-off, runs exec liveness and readiness
 * probes through ExecSync, and reports the pod's phase. A pod that ends
 * (Succeeded or Failed) gets its sandbox stopped and its devices released;
 * `delete` and kubelet-sim's exit stop and remove everything.
 *
 * With a node root, every host path (hostPath volumes, device and mount host
 * paths of Allocate answers) is taken relative to it, so that a simulated
 * node's directory tree stands in for the host's / and shipped manifests run
 * unchanged. Everything runs on kubelet-sim's main thread and prints event
 * lines (docs/kubelet-sim.md). */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "cri.h"
#include "sim.h"

/* Pods kept at once (running or ended, until deleted). */
#define PODS_MAX 64
/* Image aliases accepted on the command line. */
#define PODS_MAX_ALIASES 16

struct pods_options {
	const char *runtime_endpoint; /* the CRI socket */
	const char *node_root;        /* NULL or "": host paths as written */
	const char *log_dir;          /* pod logs: LOG_DIR/<ns>_<name>_<uid>/<container>/<n>.log */
	const char *alias_from[PODS_MAX_ALIASES]; /* image references replaced ... */
	const char *alias_to[PODS_MAX_ALIASES];   /* ... by these (nothing can be pulled) */
	size_t n_aliases;
	int64_t relist_ms; /* period of the relist and probe timer */
};

struct pods;

/* Connects to the runtime (lazily) and creates the relist timer. Returns 0
 * or a negative errno. */
int pods_new(struct sim *sim, const struct pods_options *options, struct pods **ret_pods);
/* Stops and removes every pod (sandboxes and containers) and frees. Accepts NULL. */
void pods_free(struct pods *pods);

/* The timerfd to poll; on POLLIN call pods_tick. */
int pods_timer_fd(const struct pods *pods);
void pods_tick(struct pods *pods);

/* The commands (see commands.c). Each prints its result lines. */
void pods_run(struct pods *pods, const char *path);
void pods_delete(struct pods *pods, const char *name, int64_t grace_s);
void pods_list(struct pods *pods);
void pods_logs(struct pods *pods, const char *name, const char *container);
void pods_exec(struct pods *pods, const char *name, const char *container, const char *command_line);
void pods_probe(struct pods *pods, const char *name, const char *container, const char *kind);
void pods_runtime_version(struct pods *pods);
/* The runtime's Version call, for the start-up check. */
int pods_check_runtime(struct pods *pods, struct cri_version *ret_version, struct cri_status *status);
