/* SPDX-License-Identifier: Apache-2.0 */
/* The daemon's telemetry cache: DCMI's readings of every chip
 * (telemetry/telemetry.h), read on the loop every telemetry interval and
 * at once when the node's chips come or go, and published to the metrics.
 * The features file takes the chips' HBM from here, and so do the
 * ResourceSlices. Each timed read ends with the options' tick hook, the
 * daemon's other chores of that interval. Part of the top level: it logs. */
#pragma once

#include <stdint.h>

#include "loop/loop.h"
#include "npu/inventory.h"
#include "telemetry/metrics.h"
#include "telemetry/telemetry.h"

/* What the cache is made with, at init, never set after it. */
struct telemetry_cache_options {
	struct loop *loop;
	int64_t interval_ms;
	struct inventory *inventory; /* read on the loop only */
	struct metrics *metrics;     /* hears every read */
	/* Runs (with ctx) after each timed read (may be NULL). */
	void (*tick)(void *ctx);
	void *ctx;
};

struct telemetry_cache {
	struct telemetry_cache_options options;
	struct loop_timer *timer;
	struct telemetry_snapshot *telemetry; /* the latest read, NULL before the first */
};

/* Nothing is read before telemetry_cache_start. Returns 0 or a negative
 * errno (the timer). */
int telemetry_cache_init(struct telemetry_cache *cache, const struct telemetry_cache_options *options);

/* Reads once now, then every interval. */
void telemetry_cache_start(struct telemetry_cache *cache);

/* The node's snapshot changed: new chips get their telemetry at once
 * rather than an interval later (once started). */
void telemetry_cache_node(struct telemetry_cache *cache, const struct npu_snapshot *snapshot);

/* The latest reading of the chip of that device ID, NULL when none. */
const struct telemetry_reading *telemetry_cache_find(const struct telemetry_cache *cache, const char *id);

/* The HBM bytes of each device of snapshot by index, from the latest
 * read (0: not known yet, or not a chip DCMI reports HBM of). */
void telemetry_cache_hbm_bytes(const struct telemetry_cache *cache, const struct npu_snapshot *snapshot,
			       uint64_t *out);

/* Accepts a zeroed cache. */
void telemetry_cache_fini(struct telemetry_cache *cache);
