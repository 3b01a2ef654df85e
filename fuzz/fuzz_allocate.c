/* SPDX-License-Identifier: Apache-2.0 */
/* Fuzzes the Allocate path from raw request bytes: protobuf decoding,
 * validation of container requests and building the response, against a
 * fixed 8-chip snapshot with one Unhealthy chip; each input is answered
 * as native, as every device-list strategy at once, and with time-slicing
 * (4 replicas, IDs "npu-<phy>::<k>"), once with failRequestsGreaterThanOne. */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "plugin/allocate.h"
#include "node/cdi.h"

static struct npu_snapshot *make_snapshot(void)
{
	struct npu_snapshot *s = npu_snapshot_new(8);
	if (!s)
		abort();
	for (uint32_t i = 0; i < 8; i++) {
		struct npu_device *d = &s->devices[i];
		snprintf(d->id, sizeof(d->id), "npu-%u", i);
		d->chip.phy_id = i;
		d->chip.family = i % 2 ? NPU_FAMILY_910B : NPU_FAMILY_310B;
		d->healthy = i != 3;
		d->fault = d->healthy ? NPU_FAULT_NONE : NPU_FAULT_HEALTH_LEVEL;
		d->dcmi_health = d->healthy ? 0 : 3;
	}
	s->healthy = 7;
	return s;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct npu_snapshot *snapshot;
	static struct host_files *files;
	if (!snapshot)
		snapshot = make_snapshot();
	if (!files && host_files_scan(&(struct host_paths){ .dev_dir = "/dev", .host_root = "/",
							    .driver_path = "/usr/local/Ascend/driver" },
				      &files) < 0)
		abort();
	/* gRPC itself caps requests at 4 MiB. */
	if (size > 4 * 1024 * 1024)
		return 0;

	static struct cdi_names cdi;
	char why[256];
	if (!cdi.kind[0] && cdi_names_from_resource("ascend.com/npu", &cdi, why, sizeof(why)) < 0)
		abort();
	const unsigned all = ALLOCATE_STRATEGY_NATIVE | ALLOCATE_STRATEGY_ASCEND_RUNTIME | ALLOCATE_STRATEGY_CDI;
	const struct {
		unsigned strategies;
		struct replica_options sharing;
	} runs[] = {
		{ ALLOCATE_STRATEGY_NATIVE, { 0, false } },
		{ all, { 0, false } },
		{ all, { 4, false } },
		{ ALLOCATE_STRATEGY_NATIVE, { 4, true } },
	};
	for (size_t i = 0; i < sizeof(runs) / sizeof(runs[0]); i++) {
		const struct allocate_options options = {
			.strategies = runs[i].strategies,
			.cdi = &cdi,
			.sharing = runs[i].sharing,
		};
		uint8_t *body = NULL;
		size_t len = 0;
		char details[512];
		grpc_status_code code =
			allocate_answer(snapshot, files, &options, data, size, &body, &len, details, sizeof(details));
		if (code != GRPC_STATUS_OK && body)
			abort(); /* an error must not leave a body behind */
		free(body);
	}
	return 0;
}
