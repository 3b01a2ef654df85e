/* SPDX-License-Identifier: Apache-2.0 */
/* What a container given NPUs needs from the host besides its
 * /dev/davinci<phy> nodes: the family's shared device nodes and the driver
 * paths, read-only, each only if it exists now. Allocate's native answer and
 * the CDI spec both take them from here, so that every device-list strategy
 * gives a container the same files. */
#pragma once

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

/* Receives a shared node: name is the file under dev_dir (and under the
 * host's /dev), container_name the file under /dev in the container. */
typedef void (*host_node_fn)(void *ctx, const char *name, const char *container_name);

/* Calls fn for each of the family's shared nodes that exists under dev_dir,
 * in the order they are mounted. On 310B boards /dev/davinci_manager_docker,
 * when it exists, stands in for davinci_manager under the usual name. */
void host_files_shared_nodes(const char *dev_dir, enum npu_family family, host_node_fn fn, void *ctx);

/* Receives the host path of a driver path, mounted at the same path. */
typedef void (*host_mount_fn)(void *ctx, const char *host_path);

/* Calls fn with the host path of each driver path that exists (looked for
 * under host_root): <driver>/lib64, <driver>/include, <driver>/version.info,
 * /usr/local/dcmi, /usr/local/bin/npu-smi, /etc/ascend_install.info. */
void host_files_driver_mounts(const struct host_paths *paths, host_mount_fn fn, void *ctx);
