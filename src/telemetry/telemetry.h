/* SPDX-License-Identifier: Apache-2.0 */
/* The telemetry cache: what DCMI says about each chip's temperature, power,
 * AI Core utilisation, HBM and error codes, read on the daemon's loop (every
 * --telemetry-interval) into immutable reference-counted snapshots that the
 * metrics endpoint reads from its own thread. A scrape never calls DCMI.
 *
 * A call that fails leaves its value out of the chip's reading (never a stale
 * or zero value) and counts in the errors of its DCMI function; a call the
 * driver lacks (or answers "not supported") is left out without counting.
 * Each reading carries the wall-clock time of the chip's last successful
 * call, kept across refreshes in which every call failed. */
#pragma once

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "npu/dcmi.h"
#include "npu/inventory.h"

struct telemetry_reading {
	char id[NPU_DEVICE_ID_MAX]; /* the chip's device ID, "npu-<phy>" */
	uint32_t phy_id;
	bool has_temperature, has_power, has_utilization, has_hbm, has_error_codes, has_timestamp;
	int temperature_celsius;
	double power_watts;
	double aicore_utilization_ratio; /* 0..1 */
	uint64_t hbm_total_bytes, hbm_used_bytes;
	size_t error_codes;       /* current error codes (at most DCMI_MAX_ERROR_CODES) */
	double timestamp_seconds; /* wall clock of the last successful call */
};

struct telemetry_snapshot {
	atomic_uint refs;
	size_t count;
	struct telemetry_reading readings[]; /* the chips, in the inventory snapshot's order (phy id) */
};

/* The DCMI functions the cache calls, the label values of
 * ascend_device_plugin_dcmi_errors_total{function}. */
enum telemetry_call {
	TELEMETRY_CALL_TEMPERATURE,
	TELEMETRY_CALL_POWER,
	TELEMETRY_CALL_UTILIZATION,
	TELEMETRY_CALL_HBM,
	TELEMETRY_CALL_ERROR_CODES,
	TELEMETRY_CALL_COUNT,
};
const char *telemetry_call_name(enum telemetry_call call);

/* Failed calls since the start, per function; written by the loop, read by
 * any thread. */
struct telemetry_errors {
	atomic_uint_fast64_t count[TELEMETRY_CALL_COUNT];
};

/* Both take NULL (base/refcount.h). */
struct telemetry_snapshot *telemetry_snapshot_ref(struct telemetry_snapshot *snapshot);
void telemetry_snapshot_unref(struct telemetry_snapshot *snapshot);
/* The reading of the chip with that ID, or NULL. */
const struct telemetry_reading *telemetry_snapshot_find(const struct telemetry_snapshot *snapshot, const char *id);

/* Reads every chip of devices (vNPUs are skipped) through lib (NULL: DCMI is not in use, every
 * reading is empty) at wall-clock time now_seconds. previous (may be NULL)
 * gives the timestamps of chips none of whose calls succeeded now. Counts
 * failures in errors (may be NULL). Returns 0 with a snapshot of one
 * reference, or -ENOMEM. */
int telemetry_read(struct dcmi_lib *lib, const struct npu_snapshot *devices, const struct telemetry_snapshot *previous,
		   double now_seconds, struct telemetry_errors *errors, struct telemetry_snapshot **ret_snapshot);
