/* SPDX-License-Identifier: Apache-2.0 */
/* Fuzzes the GetPreferredAllocation path from raw request bytes: protobuf
 * decoding, request checks and the topology choice, each input against
 * fixed snapshots of every topology (910 rings, 910B full mesh and Box16,
 * A3 pairs, 310P cards, unknown chips), some with Unhealthy chips, some
 * with NUMA nodes (whole, or with the last node's chips unknown), each
 * once as is and once time-sliced (3 replicas per chip). An answer must
 * name distinct advertised devices, no more than asked for. */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/macro.h"
#include "deviceplugin.pb-c.h"
#include "plugin/preferred.h"

static const struct {
	enum npu_family family;
	uint32_t count;
	uint32_t unhealthy; /* phy id of an Unhealthy chip, or count for none */
	uint32_t numa_chips; /* chips per NUMA node, 0 for no NUMA nodes */
	bool numa_partial;   /* the last node's chips have no known node */
} layouts[] = {
	{ NPU_FAMILY_910, 8, 8, 0, false },	 { NPU_FAMILY_910B, 8, 3, 0, false },
	{ NPU_FAMILY_910B, 16, 16, 0, false },	 { NPU_FAMILY_A3, 16, 1, 0, false },
	{ NPU_FAMILY_310P, 8, 8, 0, false },	 { NPU_FAMILY_UNKNOWN, 4, 0, 0, false },
	{ NPU_FAMILY_910B, 8, 5, 4, false },	 { NPU_FAMILY_310P, 8, 2, 4, false },
	{ NPU_FAMILY_UNKNOWN, 12, 12, 3, true }, { NPU_FAMILY_910, 8, 8, 2, false },
};
#define N_LAYOUTS ELEMENTSOF(layouts)

static struct npu_snapshot *make_snapshot(size_t layout)
{
	uint32_t count = layouts[layout].count;
	struct npu_snapshot *s = npu_snapshot_new(count);
	if (!s)
		abort();
	for (uint32_t i = 0; i < count; i++) {
		struct npu_device *d = &s->devices[i];
		snprintf(d->id, sizeof(d->id), "npu-%u", i);
		d->chip.phy_id = i;
		d->chip.card_id = (int)(i / 2);
		d->chip.device_id = (int)(i % 2);
		d->chip.family = layouts[layout].family;
		d->healthy = i != layouts[layout].unhealthy;
		d->fault = d->healthy ? NPU_FAULT_NONE : NPU_FAULT_HEALTH_LEVEL;
		uint32_t per = layouts[layout].numa_chips;
		if (per && !(layouts[layout].numa_partial && i / per == (count - 1) / per)) {
			d->has_numa = true;
			d->numa_node = i / per;
		}
		s->healthy += d->healthy;
	}
	return s;
}

static bool advertised(const struct npu_snapshot *snap, unsigned replicas, const char *id)
{
	size_t index;
	unsigned k;
	return replicas ? replica_parse(snap, replicas, id, &index, &k) == 0 : npu_snapshot_find(snap, id) != NULL;
}

static void check_answer(const struct npu_snapshot *snap, unsigned replicas, const uint8_t *data, size_t size,
			 const uint8_t *body, size_t len)
{
	static const uint8_t empty[1];
	V1beta1__PreferredAllocationRequest *req = v1beta1__preferred_allocation_request__unpack(NULL, size, data);
	V1beta1__PreferredAllocationResponse *resp =
		v1beta1__preferred_allocation_response__unpack(NULL, len, body ? body : empty);
	if (!req || !resp || resp->n_container_responses != req->n_container_requests)
		abort();
	for (size_t c = 0; c < resp->n_container_responses; c++) {
		const V1beta1__ContainerPreferredAllocationResponse *out = resp->container_responses[c];
		if (out->n_deviceids > (size_t)req->container_requests[c]->allocation_size)
			abort();
		for (size_t i = 0; i < out->n_deviceids; i++) {
			if (!advertised(snap, replicas, out->deviceids[i]))
				abort();
			for (size_t j = 0; j < i; j++)
				if (strcmp(out->deviceids[i], out->deviceids[j]) == 0)
					abort();
		}
	}
	v1beta1__preferred_allocation_response__free_unpacked(resp, NULL);
	v1beta1__preferred_allocation_request__free_unpacked(req, NULL);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct npu_snapshot *snapshots[N_LAYOUTS];
	if (!snapshots[0])
		for (size_t i = 0; i < N_LAYOUTS; i++)
			snapshots[i] = make_snapshot(i);
	/* gRPC itself caps requests at 4 MiB. */
	if (size > 4 * 1024 * 1024)
		return 0;

	for (size_t run = 0; run < 2 * N_LAYOUTS; run++) {
		size_t i = run % N_LAYOUTS;
		const struct replica_options sharing = { .replicas = run < N_LAYOUTS ? 0 : 3 };
		uint8_t *body = NULL;
		size_t len = 0;
		char details[512];
		grpc_status_code code =
			preferred_answer(snapshots[i], &sharing, data, size, &body, &len, details, sizeof(details));
		if (code != GRPC_STATUS_OK && body)
			abort(); /* an error must not leave a body behind */
		if (code == GRPC_STATUS_OK)
			check_answer(snapshots[i], sharing.replicas, data, size, body, len);
		free(body);
	}
	return 0;
}
