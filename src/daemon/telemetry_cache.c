/* SPDX-License-Identifier: Apache-2.0 */
#include "daemon/telemetry_cache.h"

#include <time.h>

#include "base/log.h"

static double wall_seconds(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void refresh_telemetry(struct telemetry_cache *o)
{
	if (!o->options.inventory)
		return;
	struct npu_snapshot *snap = inventory_snapshot(o->options.inventory);
	struct telemetry_snapshot *t;
	if (telemetry_read(inventory_dcmi(o->options.inventory), snap, o->telemetry, wall_seconds(),
			   metrics_dcmi_errors(o->options.metrics), &t) == 0) {
		metrics_publish_telemetry(o->options.metrics, t);
		telemetry_snapshot_unref(o->telemetry);
		o->telemetry = t;
		log_event(LOG_LEVEL_DEBUG, LOG_EVENT_TELEMETRY_READ,
			  &(struct log_fields){ .more = { LOG_NUM("chips", t->count) } }, "telemetry: read %zu chips",
			  t->count);
	}
	npu_snapshot_unref(snap);
}

static void on_telemetry_timer(void *ctx)
{
	struct telemetry_cache *o = ctx;
	refresh_telemetry(o);
	if (o->options.tick)
		o->options.tick(o->options.ctx);
}

int telemetry_cache_init(struct telemetry_cache *o, const struct telemetry_cache_options *options)
{
	*o = (struct telemetry_cache){ .options = *options };
	return loop_timer_new(options->loop, on_telemetry_timer, o, &o->timer);
}

void telemetry_cache_start(struct telemetry_cache *o)
{
	refresh_telemetry(o);
	loop_timer_arm(o->timer, o->options.interval_ms, o->options.interval_ms);
}

void telemetry_cache_node(struct telemetry_cache *o, const struct npu_snapshot *snapshot)
{
	/* New chips get their telemetry at once rather than an interval later. */
	size_t chips = 0;
	for (size_t i = 0; i < snapshot->count; i++)
		chips += snapshot->devices[i].kind == NPU_DEVICE_CHIP;
	if (o->telemetry && o->telemetry->count != chips)
		refresh_telemetry(o);
}

const struct telemetry_reading *telemetry_cache_find(const struct telemetry_cache *o, const char *id)
{
	return telemetry_snapshot_find(o->telemetry, id);
}

void telemetry_cache_hbm_bytes(const struct telemetry_cache *o, const struct npu_snapshot *s, uint64_t *out)
{
	for (size_t i = 0; i < s->count; i++) {
		const struct telemetry_reading *t = o->telemetry && s->devices[i].kind == NPU_DEVICE_CHIP
							    ? telemetry_snapshot_find(o->telemetry, s->devices[i].id)
							    : NULL;
		out[i] = t && t->has_hbm ? t->hbm_total_bytes : 0;
	}
}

void telemetry_cache_fini(struct telemetry_cache *o)
{
	loop_timer_free(o->timer);
	o->timer = NULL;
	telemetry_snapshot_unref(o->telemetry);
	o->telemetry = NULL;
}
