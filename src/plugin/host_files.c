/* SPDX-License-Identifier: Apache-2.0 */
#include "plugin/host_files.h"

#include <stdbool.h>
#include <string.h>

#include "base/macro.h"
#include "base/parse.h"

/* Driver paths a container needs read-only; "<driver>" is the driver path. */
static const struct {
	bool under_driver;
	const char *path;
} driver_mounts[HOST_FILES_MAX_MOUNTS] = {
	{ true, "lib64" },
	{ true, "include" },
	{ true, "version.info" },
	{ false, "/usr/local/dcmi" },
	{ false, "/usr/local/bin/npu-smi" },
	{ false, "/etc/ascend_install.info" },
};

static bool exists_in(const char *dir, const char *name)
{
	char path[4200];
	return path_join(path, sizeof(path), dir, name) == 0 && path_exists(path);
}

void host_files_shared_nodes(const char *dev_dir, enum npu_family family, host_node_fn fn, void *ctx)
{
	const struct npu_shared_node *nodes;
	size_t n = npu_family_shared_nodes(family, &nodes);

	for (size_t i = 0; i < n; i++) {
		if (family == NPU_FAMILY_310B && strcmp(nodes[i].name, "davinci_manager") == 0 &&
		    exists_in(dev_dir, "davinci_manager_docker")) {
			fn(ctx, "davinci_manager_docker", "davinci_manager");
			continue;
		}
		if (exists_in(dev_dir, nodes[i].name))
			fn(ctx, nodes[i].name, nodes[i].name);
	}
}

void host_files_driver_mounts(const struct host_paths *paths, host_mount_fn fn, void *ctx)
{
	char host[4200];

	for (size_t i = 0; i < ELEMENTSOF(driver_mounts); i++) {
		if (driver_mounts[i].under_driver) {
			if (path_join(host, sizeof(host), paths->driver_path, driver_mounts[i].path) < 0)
				continue;
		} else if (str_copy(host, sizeof(host), driver_mounts[i].path) < 0) {
			continue;
		}
		if (exists_in(paths->host_root, host))
			fn(ctx, host);
	}
}
