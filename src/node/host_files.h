/* SPDX-License-Identifier: Apache-2.0 */
/* What a container given NPUs needs from the host besides its
 * /dev/davinci<phy> nodes: the family's shared device nodes and the driver
 * paths, read-only, each only if it exists. The loop scans them at every
 * refresh (device-node events and the health timer) into an immutable
 * snapshot; Allocate (on gRPC threads) and the CDI spec writer read that
 * snapshot, so every device-list strategy gives a container the same files
 * and Allocate itself touches no file system. */
#pragma once

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>

#include "npu/family.h"

/* Where the plugin looks at the host. Paths handed to containers are always
 * the host's own (/dev/..., the driver path): these only say where the
 * plugin sees them. */
struct host_paths {
	const char *dev_dir;     /* the host's /dev as the plugin sees it */
	const char *host_root;   /* the host's / as the plugin sees it */
	const char *driver_path; /* host path of the driver */
};

/* At most this many driver paths are mounted. */
#define HOST_FILES_MAX_MOUNTS 6
/* At most this many shared nodes per family (310B has the most). */
#define HOST_FILES_MAX_NODES 16
/* Families are enum npu_family values, UNKNOWN included. */
#define HOST_FILES_FAMILIES (NPU_FAMILY_310B + 1)

struct host_node {
	char host[48];      /* /dev/<name> on the host */
	char container[48]; /* /dev/<name> in the container */
};

struct host_files {
	atomic_uint refs;
	/* Each family's shared nodes that exist, in the order they are mounted.
	 * On 310B boards /dev/davinci_manager_docker, when it exists, stands in
	 * for davinci_manager under the usual name. */
	struct host_node nodes[HOST_FILES_FAMILIES][HOST_FILES_MAX_NODES];
	size_t n_nodes[HOST_FILES_FAMILIES];
	/* The host path of each driver path that exists (looked for under
	 * host_root), mounted at the same path: <driver>/lib64,
	 * <driver>/include, <driver>/version.info, /usr/local/dcmi,
	 * /usr/local/bin/npu-smi, /etc/ascend_install.info. */
	char *mounts[HOST_FILES_MAX_MOUNTS];
	size_t n_mounts;
};

/* Looks at the host now. Returns 0 or -ENOMEM. */
int host_files_scan(const struct host_paths *paths, struct host_files **ret_files);

struct host_files *host_files_ref(struct host_files *files);
void host_files_unref(struct host_files *files); /* accepts NULL */

/* The same files (NULL equals only NULL). */
bool host_files_equal(const struct host_files *a, const struct host_files *b);

/* The shared nodes of a family (any value out of range is UNKNOWN's). */
const struct host_node *host_files_nodes(const struct host_files *files, enum npu_family family, size_t *ret_count);

struct npu_device;

/* The families of devs, each once, in the order they first appear (a value
 * out of range as UNKNOWN, as host_files_nodes reads it): the families whose
 * shared nodes a container given devs needs. Returns how many. */
size_t host_files_families(const struct npu_device *const *devs, size_t n,
			   enum npu_family families[static HOST_FILES_FAMILIES]);

/* Describes what differs between two scans for a log line, e.g.
 * "/dev/dvpp_cmdlist appeared, /etc/ascend_install.info went"; returns 0 or
 * -ENOBUFS (buf holds what fitted). */
int host_files_describe_change(const struct host_files *before, const struct host_files *after, char *buf,
			       size_t size);

/* Whether a file of this name under /dev is a shared node of some family:
 * its appearing or going changes what containers get. */
bool host_files_is_shared_node(const char *name);
