/* SPDX-License-Identifier: Apache-2.0 */
/* Keeps the Node Feature Discovery features file (telemetry/nfd.h) true
 * to the node while the daemon serves: written once the daemon serves,
 * again when its text would change (the chips, their health, their HBM
 * from the telemetry cache, the driver) or when the file is gone, removed
 * when no chip is left and when the daemon stops. A failed write is
 * retried at the next look and said once. Part of the top level: it logs. */
#pragma once

#include <limits.h>
#include <stdbool.h>

#include "daemon/telemetry_cache.h"
#include "npu/inventory.h"

/* What the keeper is made with, at init, never set after it. */
struct nfd_keeper_options {
	const char *file;                       /* empty: no features file */
	unsigned replicas;                      /* the default resource's time-slicing replicas */
	struct inventory *inventory;            /* the driver's version */
	const struct telemetry_cache *telemetry; /* the chips' HBM */
};

struct nfd_keeper {
	char nfd_file[PATH_MAX];
	unsigned replicas;
	struct inventory *inventory;
	const struct telemetry_cache *telemetry;
	bool started;
	struct npu_snapshot *devices; /* the node's latest snapshot */
	char *nfd_written; /* the text last written, NULL when none */
	int nfd_error;     /* the last write error logged */
};

/* Returns 0 or -ENAMETOOLONG (the file's path). */
int nfd_keeper_init(struct nfd_keeper *keeper, const struct nfd_keeper_options *options);

/* The daemon serves: the file is written from now on. */
void nfd_keeper_start(struct nfd_keeper *keeper);

/* The node's latest snapshot (chips and vNPUs), after every refresh. */
void nfd_keeper_node(struct nfd_keeper *keeper, struct npu_snapshot *snapshot);

/* Brings the file up to date (the telemetry interval's look). */
void nfd_keeper_sync(struct nfd_keeper *keeper);

/* Removes the file unless remove is false (another plugin process of the
 * node keeps it), frees. Accepts a zeroed keeper. */
void nfd_keeper_stop(struct nfd_keeper *keeper, bool remove);
