/* SPDX-License-Identifier: Apache-2.0 */
/* Reads a Kubernetes workload from YAML, the way a kubelet would see the pod:
 * a Pod, or the pod template of a DaemonSet, Deployment, ReplicaSet,
 * StatefulSet or Job (one workload per file; other objects in a multi-document
 * file, such as a ConfigMap, are skipped and said so). Parsed with libyaml.
 * Only the fields a kubelet acts on are kept; every other field that is
 * present is listed in `ignored` with its path, so that the caller can report
 * what it does not honour instead of dropping it silently. Everything an
 * outsider controls is bounded (see the limits below).
 *
 * Types are checked as the API server decodes them (YAML 1.1 scalars, as
 * kubectl's go-yaml resolves them): `value: 1` is a number, not a string, and
 * is refused like `runAsUser: "0"`; a null field counts as absent. YAML
 * aliases are refused, so a document cannot expand beyond its text. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/arena.h"

#define PODSPEC_FILE_MAX (1024 * 1024)
#define PODSPEC_MAX_CONTAINERS 16
#define PODSPEC_MAX_VOLUMES 64
#define PODSPEC_MAX_ITEMS 256 /* env entries, mounts, args, limits, ... per list */
#define PODSPEC_MAX_IGNORED 64
#define PODSPEC_STRING_MAX 65536 /* bytes of a kept string */
#define PODSPEC_MAX_DEPTH 64       /* YAML nesting */
#define PODSPEC_MAX_NODES 100000   /* YAML nodes in one document */

/* An env entry: a value, or a fieldRef the kubelet resolves (metadata.name,
 * metadata.namespace, metadata.uid, spec.nodeName, status.hostIP,
 * status.podIP, ...). An entry whose valueFrom names another source
 * (secretKeyRef, configMapKeyRef, resourceFieldRef, ...) is left out of
 * `env` and listed in `ignored`. */
struct podspec_env {
	char *name;
	char *value;     /* NULL when field_ref is set ("" when neither is given) */
	char *field_ref; /* valueFrom.fieldRef.fieldPath, or NULL */
};

struct podspec_mount {
	char *name;
	char *mount_path;
	bool read_only;
};

struct podspec_volume {
	char *name;
	char *host_path;      /* NULL: not a hostPath volume (then ignored unless empty_dir) */
	char *host_path_type; /* "" when not given */
	bool empty_dir;
};

/* A resource quantity, kept as written ("1", "500m", "16Mi") and, for
 * plain whole numbers ("1", 1; extended resources such as ascend.com/npu
 * must be one, and their requests must equal their limits), as a number. */
struct podspec_quantity {
	char *name;
	char *text;
	bool is_integer;
	int64_t value;
};

struct podspec_probe {
	bool set;                  /* an exec probe is configured (others are ignored) */
	char **exec;               /* exec.command */
	size_t n_exec;
	uint32_t initial_delay_s;  /* defaults as in the API: 0 */
	uint32_t period_s;         /* 10 */
	uint32_t timeout_s;        /* 1 */
	uint32_t success_threshold;/* 1 */
	uint32_t failure_threshold;/* 3 */
};

struct podspec_container {
	char *name;
	char *image;
	char **command;
	size_t n_command;
	char **args;
	size_t n_args;
	char *working_dir;
	struct podspec_env *env;
	size_t n_env;
	struct podspec_mount *mounts;
	size_t n_mounts;
	struct podspec_quantity *limits;
	size_t n_limits;
	struct podspec_quantity *requests;
	size_t n_requests;
	bool privileged;
	bool read_only_root;
	bool has_run_as_user;
	int64_t run_as_user;
	bool has_run_as_group;
	int64_t run_as_group;
	bool has_run_as_non_root; /* the container's own runAsNonRoot, over the pod's */
	bool run_as_non_root;
	char **cap_add;
	size_t n_cap_add;
	char **cap_drop;
	size_t n_cap_drop;
	struct podspec_probe liveness;
	struct podspec_probe readiness;
};

struct podspec {
	char *kind;      /* of the object the pod came from: Pod, DaemonSet, Job, ... */
	char *name;      /* metadata.name of that object */
	char *namespace; /* "default" when not given */
	char **label_keys; /* the pod's labels (the template's for workloads) */
	char **label_values;
	size_t n_labels;
	char *restart_policy; /* Always (default), OnFailure, Never */
	bool host_network;
	bool host_pid;
	bool host_ipc;
	bool has_run_as_user;
	int64_t run_as_user;
	bool has_run_as_group;
	int64_t run_as_group;
	bool run_as_non_root;
	int64_t *supplemental_groups;
	size_t n_supplemental_groups;
	int64_t termination_grace_s; /* 30 when not given */
	struct podspec_volume *volumes;
	size_t n_volumes;
	struct podspec_container *init_containers;
	size_t n_init_containers;
	struct podspec_container *containers;
	size_t n_containers;
	/* Fields present but not acted on, in document order, each the path of
	 * the field from the object's root, with a reason in parentheses when
	 * the path alone does not say it:
	 *   "spec.template.spec.nodeSelector"
	 *   "spec.containers[0].imagePullPolicy"
	 *   "spec.containers[0].env[2].valueFrom.secretKeyRef"
	 *   "spec.volumes[1].configMap"
	 *   "spec.template.spec.containers[0].readinessProbe (httpGet probe)"
	 *   "ConfigMap/foo (not a workload)"
	 * Resource limits are kept, so they are never listed. A workload's own
	 * metadata (but name and namespace) and spec.selector describe the
	 * controller, not the pod, and are not listed; its other spec fields
	 * (spec.replicas, spec.backoffLimit, ...) are. At most
	 * PODSPEC_MAX_IGNORED, then n_ignored_more counts the rest. */
	char **ignored;
	size_t n_ignored;
	size_t n_ignored_more;
	/* Owns every string and array above: read-only for the caller. */
	struct arena arena;
};

/* Parses data[0..len). On success *ret_spec is set; on failure returns
 * -EINVAL (malformed YAML, not a workload, a field of the wrong type or
 * value, a required field missing, two workloads), -E2BIG (a limit above
 * exceeded) or -ENOMEM, and writes a message naming the problem into err:
 * "line 12: spec.containers[0].command must be a list of strings", the path
 * as in `ignored`, "line N: " left out when no line applies. */
int podspec_parse(const char *data, size_t len, struct podspec **ret_spec, char *err, size_t err_size);
/* Reads path (at most PODSPEC_FILE_MAX bytes) and parses it; err starts
 * with the path ("pod.yaml: line 3: ..."). */
int podspec_load(const char *path, struct podspec **ret_spec, char *err, size_t err_size);
/* Accepts NULL and half-built specs. */
void podspec_free(struct podspec *spec);

/* The pod's volume of that name, or NULL. */
const struct podspec_volume *podspec_find_volume(const struct podspec *spec, const char *name);

/* Expands $(VAR) references in s as the kubelet does for command, args and
 * env values (Kubernetes third_party/forked/golang/expansion): VAR is looked
 * up in names[i] -> values[i], the last definition winning as in the
 * kubelet's map; $$ gives $; an unknown reference, an unterminated "$(" and
 * a '$' before any other character stay as written. *ret is malloc'd.
 * -E2BIG when the result would exceed PODSPEC_FILE_MAX bytes. */
int podspec_expand(const char *s, char *const *names, char *const *values, size_t n, char **ret);
