/* SPDX-License-Identifier: Apache-2.0 */
/* A client of the container runtime's CRI (runtime.v1), the part of it a
 * kubelet needs to run pods: Version, pod sandboxes, containers, their
 * status, ExecSync, and ImageStatus. Messages are the hand-written subset in
 * proto/cri.proto, wire-compatible with kubernetes/cri-api. Every call is
 * blocking with a deadline; it returns 0, -EIO with *status filled when the
 * runtime answered with an error, or another negative errno for a local
 * failure (then status->code is -1 and status->message says what). status
 * is written only on failure and may be NULL. Strings the runtime returns
 * are cut to the sizes below. Deadlines: 2 min for RunPodSandbox and
 * CreateContainer, the command's timeout + 30 s for StopContainer and
 * ExecSync, 30 s for the rest (see cri.c for why). */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct cri;

/* Largest grace period (StopContainer) and exec timeout, in seconds. */
#define CRI_MAX_TIMEOUT_S 86400

/* Longest list (of labels, mounts, command words...) in one request. */
#define CRI_MAX_LIST 1024

/* The runtime's error, as the kubelet would quote it. */
struct cri_status {
	int code; /* gRPC status code; -1 for a local error */
	char message[512];
};

struct cri_kv {
	const char *key;
	const char *value;
};

struct cri_mount {
	const char *container_path;
	const char *host_path;
	bool readonly;
};

struct cri_device {
	const char *container_path;
	const char *host_path;
	const char *permissions;
};

/* The pod sandbox, as the kubelet describes it (PodSandboxConfig). */
struct cri_sandbox_config {
	const char *name;
	const char *uid;
	const char *namespace;
	uint32_t attempt;
	const char *hostname;
	const char *log_directory; /* absolute; container logs go below it */
	const struct cri_kv *labels;
	size_t n_labels;
	const struct cri_kv *annotations;
	size_t n_annotations;
	bool host_network; /* NamespaceOption.network = NODE (else POD) */
	bool host_pid;
	bool host_ipc;
	bool privileged; /* needed when any container is privileged */
	bool has_run_as_user;
	int64_t run_as_user;
	bool has_run_as_group;
	int64_t run_as_group;
	const int64_t *supplemental_groups;
	size_t n_supplemental_groups;
};

/* One container (ContainerConfig). */
struct cri_container_config {
	const char *name;
	uint32_t attempt;
	const char *image;
	const char *const *command;
	size_t n_command;
	const char *const *args;
	size_t n_args;
	const char *working_dir; /* NULL or "" for the image's */
	const struct cri_kv *envs;
	size_t n_envs;
	const struct cri_mount *mounts;
	size_t n_mounts;
	const struct cri_device *devices;
	size_t n_devices;
	const struct cri_kv *labels;
	size_t n_labels;
	const struct cri_kv *annotations;
	size_t n_annotations;
	const char *const *cdi_devices; /* fully qualified CDI names */
	size_t n_cdi_devices;
	const char *log_path; /* relative to the sandbox's log_directory */
	bool privileged;
	bool readonly_rootfs;
	bool has_run_as_user;
	int64_t run_as_user;
	bool has_run_as_group;
	int64_t run_as_group;
	const int64_t *supplemental_groups;
	size_t n_supplemental_groups;
	const char *const *add_capabilities;
	size_t n_add_capabilities;
	const char *const *drop_capabilities;
	size_t n_drop_capabilities;
	bool host_network; /* the container joins the node's network (as its sandbox) */
	bool host_pid;
	bool host_ipc;
};

enum cri_container_state {
	CRI_CONTAINER_CREATED = 0,
	CRI_CONTAINER_RUNNING = 1,
	CRI_CONTAINER_EXITED = 2,
	CRI_CONTAINER_UNKNOWN = 3,
};

struct cri_container_status {
	enum cri_container_state state;
	int32_t exit_code;
	int64_t started_at;  /* ns since the epoch, 0 when not started */
	int64_t finished_at; /* ns since the epoch, 0 when not finished */
	char reason[128];    /* e.g. "Completed", "Error", "OOMKilled" */
	char message[512];
	char log_path[4096]; /* absolute, as the runtime reports it */
};

struct cri_version {
	char runtime_name[64];
	char runtime_version[64];
	char runtime_api_version[32];
};

struct cri_exec_result {
	int32_t exit_code;
	uint8_t *out; /* malloc'd, may be NULL when empty */
	size_t out_len;
	uint8_t *err;
	size_t err_len;
};

/* Connects lazily to the runtime's unix socket (an absolute path, or
 * unix://PATH). -ENAMETOOLONG (the path does not fit sun_path), -EINVAL (a
 * relative path or another scheme) or -ENOMEM. */
int cri_open(const char *endpoint, struct cri **ret_cri);
/* Accepts NULL. */
void cri_close(struct cri *cri);

int cri_version(struct cri *cri, struct cri_version *ret_version, struct cri_status *status);

/* ImageService.ImageStatus: *ret_present tells whether the runtime has the
 * image (an image reference as in a pod spec: "name:tag", normalised by the
 * runtime). */
int cri_image_present(struct cri *cri, const char *image, bool *ret_present, struct cri_status *status);

/* *ret_id is malloc'd. */
int cri_run_sandbox(struct cri *cri, const struct cri_sandbox_config *config, char **ret_id,
		    struct cri_status *status);
int cri_stop_sandbox(struct cri *cri, const char *sandbox_id, struct cri_status *status);
int cri_remove_sandbox(struct cri *cri, const char *sandbox_id, struct cri_status *status);

/* *ret_id is malloc'd. The sandbox config must be the one the sandbox was run with. */
int cri_create_container(struct cri *cri, const char *sandbox_id, const struct cri_container_config *config,
			 const struct cri_sandbox_config *sandbox, char **ret_id, struct cri_status *status);
int cri_start_container(struct cri *cri, const char *container_id, struct cri_status *status);
/* timeout_s: the grace period before the runtime kills it (0: at once), at
 * most CRI_MAX_TIMEOUT_S. */
int cri_stop_container(struct cri *cri, const char *container_id, int64_t timeout_s, struct cri_status *status);
int cri_remove_container(struct cri *cri, const char *container_id, struct cri_status *status);
int cri_container_status(struct cri *cri, const char *container_id, struct cri_container_status *ret_status,
			 struct cri_status *status);

/* Runs cmd in the container and waits for it at most timeout_s seconds, in
 * [1, CRI_MAX_TIMEOUT_S] (the runtime enforces it; the call's own deadline is
 * 30 s longer). Free the result with cri_exec_result_clear. Output is
 * bounded by gRPC's 4 MiB receive limit: an answer above it fails with
 * RESOURCE_EXHAUSTED (the kubelet allows 16 MiB). A command that
 * runs over its timeout is an error of the runtime's (containerd:
 * DEADLINE_EXCEEDED), not an exit code. */
int cri_exec_sync(struct cri *cri, const char *container_id, const char *const *cmd, size_t n_cmd, int64_t timeout_s,
		  struct cri_exec_result *ret_result, struct cri_status *status);
void cri_exec_result_clear(struct cri_exec_result *result);
