/* SPDX-License-Identifier: Apache-2.0 */
/* Keeps the CDI spec (the cdi device-list strategy, node/cdi.h) true to
 * the node while the daemon serves: written when its text would change
 * (chips appearing or going, a device node's numbers, a shared node or
 * driver path; never health alone, which is not in it), written again when
 * the file is gone, removed when no chip is left and when the daemon stops.
 * A failed write is retried at the next refresh and said once. It starts
 * only once the daemon serves, so a second plugin that cannot take the
 * socket leaves the live one's spec alone. Part of the top level: it logs. */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "config/config.h"
#include "npu/inventory.h"
#include "node/cdi.h"
#include "node/host_files.h"
#include "plugin/resources.h"

struct cdi_keeper {
	const char *dir;               /* --cdi-dir */
	const struct cdi_names *names; /* NULL: the cdi strategy is off */
	char path[CONFIG_PATH_MAX + CDI_KIND_MAX + 8];
	bool active;
	char *written; /* the text last written, NULL when there is no file */
	int error;     /* the last write error logged, 0 after a success */
};

/* Sets where the spec goes; nothing is written before cdi_keeper_start.
 * Returns 0 or -ENAMETOOLONG (the spec's path). dir and names must outlive
 * the keeper. */
int cdi_keeper_init(struct cdi_keeper *keeper, const char *dir, const struct cdi_names *names);

/* Starts keeping the spec (once the daemon serves) and writes it. */
void cdi_keeper_start(struct cdi_keeper *keeper, const struct resource_set *resources, const struct npu_snapshot *all,
		      const struct host_paths *paths, const struct host_files *files);

/* Brings the spec up to date with what the resources list of all. */
void cdi_keeper_sync(struct cdi_keeper *keeper, const struct resource_set *resources, const struct npu_snapshot *all,
		     const struct host_paths *paths, const struct host_files *files);

/* The daemon stops serving: no runtime should inject its devices any more,
 * and the spec is removed, unless remove is false (another plugin process
 * of the node serves on and keeps it). */
void cdi_keeper_stop(struct cdi_keeper *keeper, bool remove);
