/* SPDX-License-Identifier: Apache-2.0 */
/* The resources one plugin process advertises, each with its own socket and
 * registration, and which devices of a snapshot each one lists:
 *
 *   the default resource (--resource-name, "ascend.com/npu")
 *       whole chips of every family that has no name of its own;
 *   per-family names (the config file's resources:, e.g. 310P chips as
 *   "ascend.com/npu-310p")
 *       whole chips of those families only;
 *   one resource per vNPU template, "<default>-<template>" with '_' written
 *   '-' ("ascend.com/npu-vir04-3c")
 *       the vNPUs made from that template.
 *
 * A chip that carries vNPUs is handed out through them, never whole. Chip
 * resources may be time-sliced (plugin/replica.h), each with its own
 * replicas; with renameByDefault a shared one is advertised as
 * "<name>.shared". The set is bounded: a node has few families and few
 * templates. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/k8s_names.h"
#include "base/parse.h"
#include "npu/inventory.h"
#include "plugin/replica.h"

/* Resources one process serves; each costs the loop five fds (a timer pair,
 * wakeups), which loop/loop.c makes room for. */
#define RESOURCES_MAX 24
#define RESOURCE_ENDPOINT_MAX 128

enum resource_kind {
	RESOURCE_CHIPS,
	RESOURCE_VNPUS,
};

struct resource_def {
	char name[RESOURCE_NAME_MAX];          /* as advertised, ".shared" included */
	char endpoint[RESOURCE_ENDPOINT_MAX];  /* socket file name: "ascend-npu.sock" */
	char socket_path[SOCKET_PATH_MAX];     /* <socket_dir>/<endpoint> */
	enum resource_kind kind;
	bool is_default;                       /* chips of the families no other resource names */
	uint32_t families;                     /* named chips: 1u << enum npu_family for each */
	char vnpu_template[NPU_VNPU_TEMPLATE_MAX]; /* RESOURCE_VNPUS: e.g. "vir04_3c" */
	struct replica_options sharing;
};

struct resource_set {
	struct resource_def defs[RESOURCES_MAX];
	size_t count;
};

/* The longest instance a socket name carries (see resource_endpoint). */
#define RESOURCE_INSTANCE_MAX 8

/* The socket file name of a resource: "ascend.com/npu" serves on
 * "ascend-npu.sock" (the domain's first label, '-', the name), and with an
 * instance ("" for none) on "ascend-npu@<instance>.sock": two plugin
 * processes of one node (the old and the new pod of a surge roll) then
 * serve on sockets of their own, and the kubelet, which keeps one
 * registration per socket, follows both until the old one leaves. '@' is
 * in no resource name, so no resource's socket is another's instance.
 * -EINVAL when name has no '/', -ENAMETOOLONG when it does not fit
 * buf[size]; a buffer of RESOURCE_ENDPOINT_MAX holds any resource's. */
int resource_endpoint(const char *name, const char *instance, char *buf, size_t size);

/* Fills the name, endpoint and socket path of def: "ascend.com/npu" in dir
 * "/var/lib/kubelet/device-plugins" serves on ".../ascend-npu.sock" (with
 * an instance as resource_endpoint says). The name must be a valid extended
 * resource name. -ENAMETOOLONG when the endpoint or socket path does not
 * fit. */
int resource_def_name(struct resource_def *def, const char *name, const char *socket_dir, const char *instance);

/* The resource name of a vNPU template, "<base>-<template>" with '_' as
 * '-': "ascend.com/npu" + "vir04_3c" is "ascend.com/npu-vir04-3c". -EINVAL
 * when the template is not [a-z0-9_]+ or the name is not a valid extended
 * resource name (too long), with the reason in why. */
int resource_vnpu_name(const char *base, const char *template_name, char *buf, size_t size, char *why,
		       size_t why_size);

/* The longest --socket-dir a message quotes. */
#define SOCKET_DIR_MAX 4096

/* A per-family name of the --config file: advertise family's chips as name
 * (line: where the file says so, for messages). */
struct resource_plan_name {
	enum npu_family family;
	const char *name;
	size_t line;
};

/* Time-slicing of the --config file: share each chip of name among replicas. */
struct resource_plan_slice {
	const char *name;
	uint32_t replicas;
	size_t line;
};

/* What the set is built from: the default name (--resource-name), the
 * file's per-family names and time-slicing, and where the sockets go. */
struct resource_plan {
	const char *default_name;
	const char *socket_dir;
	const char *instance; /* in every socket's name ("" for none) */
	const char *source; /* the --config file, for messages ("" without) */
	const struct resource_plan_name *names;
	size_t n_names;
	const struct resource_plan_slice *sliced;
	size_t n_sliced;
	bool fail_requests_greater_than_one;
	bool rename_by_default; /* time-sliced resources are advertised as "<name>.shared" */
};

/* Builds the set: the default resource, then the per-family names (a family
 * named like the default resource stays in it; families given one name
 * share a resource), time-slicing on the resources it names (and
 * renameByDefault on those), and every resource's socket, checked to fit
 * (the longest is named with its length) and to be its own. Returns 0, or
 * -EINVAL with why; *in_file says whether the file is to blame (else
 * --socket-dir is). */
int resource_set_build(const struct resource_plan *plan, struct resource_set *ret_set, bool *in_file, char *why,
		       size_t why_size);

/* The index of the resource called name, or -ENOENT. */
int resource_set_find(const struct resource_set *set, const char *name);

/* Whether a and b are one resource served alike (name, socket, devices
 * listed, time-slicing). */
bool resource_def_same(const struct resource_def *a, const struct resource_def *b);

/* Whether set lists device (whatever its health) under def. */
bool resource_lists(const struct resource_set *set, const struct resource_def *def, const struct npu_device *device);

/* How many may share device at once: the replicas of the time-sliced
 * resource that lists it (replica_count: 1 for a chip whose device-share
 * mode is off), else 1 (not shared; also for a device no resource lists).
 * The DRA front end publishes and prepares by it. */
unsigned resource_set_shares(const struct resource_set *set, const struct npu_device *device);

/* The time-slicing of the resource that lists device, whatever the
 * device's device-share mode; NULL when no time-sliced resource lists it. */
const struct replica_options *resource_set_sharing(const struct resource_set *set, const struct npu_device *device);

/* A new snapshot with the devices of snapshot that def lists, in order;
 * with def NULL, those that any resource of set lists. */
int resource_view(const struct resource_set *set, const struct resource_def *def,
		  const struct npu_snapshot *snapshot, struct npu_snapshot **ret_view);
