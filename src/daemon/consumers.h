/* SPDX-License-Identifier: Apache-2.0 */
/* The snapshot consumers: whoever must hear the node's judged snapshot
 * after every refresh (the metrics, the device plugin's endpoints, the CDI
 * keeper, the DRA front end, the ResourceSlices...) registers here when
 * the daemon is made, and each refresh hands the news to all of them in
 * the order they registered. A new front end is one more registration,
 * not another edit of the refresh. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "node/host_files.h"
#include "npu/inventory.h"

/* Consumers one daemon registers, at most. */
#define SNAPSHOT_CONSUMERS_MAX 12

/* One refresh's news. Everything is borrowed for the call. */
struct snapshot_news {
	struct npu_snapshot *all;           /* the node's snapshot as the fault policy judged it */
	struct npu_snapshot *device_plugin; /* what the device plugin serves of it */
	struct npu_snapshot *dra;           /* what the DRA front end serves of it (NULL when off) */
	struct host_files *files;           /* the shared nodes and driver paths, as last scanned */
	bool changed;                       /* the devices changed, or this is the first refresh */
	bool files_changed;                 /* the files differ from the last scan's, or it was the first */
};

typedef void (*snapshot_consumer_fn)(void *ctx, const struct snapshot_news *news);

struct snapshot_consumers {
	size_t count;
	struct {
		snapshot_consumer_fn fn;
		void *ctx;
	} list[SNAPSHOT_CONSUMERS_MAX];
};

/* Appends fn (with ctx): it hears the news after those added before it.
 * Returns 0, or -ENOSPC past SNAPSHOT_CONSUMERS_MAX. */
int snapshot_consumers_add(struct snapshot_consumers *consumers, snapshot_consumer_fn fn, void *ctx);

/* Hands news to every consumer, in the order they were added. */
void snapshot_consumers_hand(const struct snapshot_consumers *consumers, const struct snapshot_news *news);
