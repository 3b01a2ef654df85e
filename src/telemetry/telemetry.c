/* SPDX-License-Identifier: Apache-2.0 */
#include "telemetry/telemetry.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/refcount.h"

static const char *const call_names[TELEMETRY_CALL_COUNT] = {
	[TELEMETRY_CALL_TEMPERATURE] = "dcmi_get_device_temperature",
	[TELEMETRY_CALL_POWER] = "dcmi_get_device_power_info",
	[TELEMETRY_CALL_UTILIZATION] = "dcmi_get_device_utilization_rate",
	[TELEMETRY_CALL_HBM] = "dcmi_get_device_hbm_info",
	[TELEMETRY_CALL_ERROR_CODES] = "dcmi_get_device_errorcode_v2",
};

const char *telemetry_call_name(enum telemetry_call call)
{
	return call < TELEMETRY_CALL_COUNT ? call_names[call] : "unknown";
}

DEFINE_REFCOUNT(struct telemetry_snapshot, telemetry_snapshot, free)

const struct telemetry_reading *telemetry_snapshot_find(const struct telemetry_snapshot *snapshot, const char *id)
{
	for (size_t i = 0; snapshot && i < snapshot->count; i++)
		if (strcmp(snapshot->readings[i].id, id) == 0)
			return &snapshot->readings[i];
	return NULL;
}

/* Whether a call's outcome counts: a missing or unsupported call is no error. */
static bool counted(struct telemetry_errors *errors, enum telemetry_call call, int r)
{
	if (r == 0)
		return true;
	if (r != -EOPNOTSUPP && errors)
		atomic_fetch_add(&errors->count[call], 1);
	return false;
}

static void read_chip(struct dcmi_lib *lib, const struct npu_chip *chip, struct telemetry_reading *t,
		      struct telemetry_errors *errors)
{
	bool any = false;
	int celsius;
	if (counted(errors, TELEMETRY_CALL_TEMPERATURE, dcmi_chip_temperature(lib, chip, &celsius))) {
		t->has_temperature = any = true;
		t->temperature_celsius = celsius;
	}
	double watts;
	if (counted(errors, TELEMETRY_CALL_POWER, dcmi_chip_power(lib, chip, &watts))) {
		t->has_power = any = true;
		t->power_watts = watts;
	}
	unsigned int pct;
	if (counted(errors, TELEMETRY_CALL_UTILIZATION, dcmi_chip_aicore_utilization(lib, chip, &pct))) {
		t->has_utilization = any = true;
		t->aicore_utilization_ratio = pct / 100.0;
	}
	uint64_t total_mb, used_mb;
	if (counted(errors, TELEMETRY_CALL_HBM, dcmi_chip_hbm(lib, chip, &total_mb, &used_mb))) {
		t->has_hbm = any = true;
		t->hbm_total_bytes = total_mb * 1024 * 1024; /* DCMI's MB are MiB */
		t->hbm_used_bytes = used_mb * 1024 * 1024;
	}
	unsigned int codes[DCMI_MAX_ERROR_CODES];
	size_t n;
	if (counted(errors, TELEMETRY_CALL_ERROR_CODES,
		    dcmi_chip_error_codes(lib, chip, codes, DCMI_MAX_ERROR_CODES, &n))) {
		t->has_error_codes = any = true;
		t->error_codes = n;
	}
	t->has_timestamp = any;
}

int telemetry_read(struct dcmi_lib *lib, const struct npu_snapshot *devices, const struct telemetry_snapshot *previous,
		   double now_seconds, struct telemetry_errors *errors, struct telemetry_snapshot **ret_snapshot)
{
	size_t count = 0;
	for (size_t i = 0; devices && i < devices->count; i++)
		count += devices->devices[i].kind == NPU_DEVICE_CHIP;
	struct telemetry_snapshot *s = calloc(1, sizeof(*s) + count * sizeof(s->readings[0]));
	if (!s)
		return -ENOMEM;
	atomic_init(&s->refs, 1);
	for (size_t i = 0; devices && i < devices->count; i++) {
		const struct npu_device *dev = &devices->devices[i];
		if (dev->kind != NPU_DEVICE_CHIP)
			continue; /* a vNPU's telemetry is its chip's */
		struct telemetry_reading *t = &s->readings[s->count++];
		memcpy(t->id, dev->id, sizeof(t->id));
		t->phy_id = dev->chip.phy_id;
		if (lib && dev->chip.card_id >= 0 && dev->chip.device_id >= 0)
			read_chip(lib, &dev->chip, t, errors);
		if (t->has_timestamp) {
			t->timestamp_seconds = now_seconds;
		} else {
			const struct telemetry_reading *before = telemetry_snapshot_find(previous, t->id);
			if (before && before->has_timestamp) {
				t->has_timestamp = true;
				t->timestamp_seconds = before->timestamp_seconds;
			}
		}
	}
	*ret_snapshot = s;
	return 0;
}
