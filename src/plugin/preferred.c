/* SPDX-License-Identifier: Apache-2.0 */
#include "plugin/preferred.h"

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/arena.h"
#include "deviceplugin.pb-c.h"
#include "plugin/request.h"
#include "node/topology.h"

/* Device IDs the kubelet sends are at most 63 characters; longer ones are
 * cut in messages so that a hostile request cannot fill the details. */
#define ID_SHOWN 63

typedef V1beta1__ContainerPreferredAllocationRequest container_request;
typedef V1beta1__ContainerPreferredAllocationResponse container_response;

/* The first ID of the container request that the snapshot does not hold. */
static const char *first_unknown(const struct npu_snapshot *snap, const container_request *cr)
{
	for (size_t i = 0; i < cr->n_must_include_deviceids; i++)
		if (!npu_snapshot_find(snap, cr->must_include_deviceids[i]))
			return cr->must_include_deviceids[i];
	for (size_t i = 0; i < cr->n_available_deviceids; i++)
		if (!npu_snapshot_find(snap, cr->available_deviceids[i]))
			return cr->available_deviceids[i];
	return "";
}

static grpc_status_code answer_container(struct arena *arena, const struct npu_snapshot *snap, size_t c,
					 const container_request *cr, container_response **ret_response,
					 char *details, size_t size)
{
	if (cr->allocation_size < 1)
		return request_reject(details, size, GRPC_STATUS_INVALID_ARGUMENT,
				      "container request %zu: allocation_size %d is not positive", c,
				      (int)cr->allocation_size);
	size_t want = (size_t)cr->allocation_size;
	/* topology_choose refuses it as well; checked here first so that the
	 * room reserved for the answer stays bounded by the snapshot. */
	if (want > snap->count)
		return request_reject(details, size, GRPC_STATUS_INVALID_ARGUMENT,
				      "container request %zu: allocation_size %zu is more than the %zu devices the plugin advertises",
				      c, want, snap->count);

	const struct npu_device **chosen = arena_alloc(arena, want * sizeof(*chosen));
	container_response *out = arena_alloc(arena, sizeof(*out));
	if (!chosen || !out)
		return request_reject(details, size, GRPC_STATUS_RESOURCE_EXHAUSTED,
				      "out of memory building the response");

	size_t n;
	int r = topology_choose(snap, (const char *const *)cr->available_deviceids, cr->n_available_deviceids,
				(const char *const *)cr->must_include_deviceids, cr->n_must_include_deviceids, want,
				chosen, &n);
	if (r == -EINVAL)
		return request_reject(details, size, GRPC_STATUS_INVALID_ARGUMENT,
				      "container request %zu: must_include_deviceIDs holds more devices than allocation_size %zu",
				      c, want);
	if (r == -E2BIG)
		return request_reject(details, size, GRPC_STATUS_INVALID_ARGUMENT,
				      "container request %zu lists %zu available and %zu must_include IDs, at most %d of each are accepted",
				      c, cr->n_available_deviceids, cr->n_must_include_deviceids, NPU_MAX_CHIPS);
	if (r == -ENOENT) {
		const char *id = first_unknown(snap, cr);
		return request_reject(details, size, GRPC_STATUS_INVALID_ARGUMENT,
				      "container request %zu: unknown device ID \"%.*s%s\"", c, ID_SHOWN, id,
				      strlen(id) > ID_SHOWN ? "..." : "");
	}
	if (r == -ERANGE)
		return request_reject(details, size, GRPC_STATUS_INVALID_ARGUMENT,
				      "container request %zu: allocation_size %zu is more than the devices in available_deviceIDs and must_include_deviceIDs",
				      c, want);
	if (r < 0)
		return request_reject(details, size, GRPC_STATUS_INTERNAL, "container request %zu: unexpected error %d",
				      c, r);

	v1beta1__container_preferred_allocation_response__init(out);
	out->deviceids = arena_alloc(arena, (n ? n : 1) * sizeof(*out->deviceids));
	if (!out->deviceids)
		return request_reject(details, size, GRPC_STATUS_RESOURCE_EXHAUSTED,
				      "out of memory building the response");
	/* The snapshot outlives packing, so the IDs are not copied. */
	for (size_t i = 0; i < n; i++)
		out->deviceids[i] = (char *)(uintptr_t)chosen[i]->id;
	out->n_deviceids = n;
	*ret_response = out;
	return GRPC_STATUS_OK;
}

/* Per chip, what a time-slicing request offers of it. */
struct chip_use {
	uint64_t free;  /* replicas in available and not in must_include, bit k */
	uint64_t must;  /* replicas in must_include */
	unsigned taken; /* replicas not offered (others hold them), then those the answer takes */
};

static bool more_used(const struct chip_use *a, const struct chip_use *b)
{
	return a->taken > b->taken;
}

static grpc_status_code answer_replicas(struct arena *arena, const struct npu_snapshot *snap, unsigned replicas,
					size_t c, const container_request *cr, container_response **ret_response,
					char *details, size_t size)
{
	if (cr->allocation_size < 1)
		return request_reject(details, size, GRPC_STATUS_INVALID_ARGUMENT,
				      "container request %zu: allocation_size %d is not positive", c,
				      (int)cr->allocation_size);
	size_t want = (size_t)cr->allocation_size, advertised = snap->count * replicas;
	if (want > advertised)
		return request_reject(details, size, GRPC_STATUS_INVALID_ARGUMENT,
				      "container request %zu: allocation_size %zu is more than the %zu devices the plugin advertises",
				      c, want, advertised);
	if (cr->n_available_deviceids > advertised || cr->n_must_include_deviceids > advertised ||
	    snap->count > NPU_MAX_CHIPS)
		return request_reject(details, size, GRPC_STATUS_INVALID_ARGUMENT,
				      "container request %zu lists %zu available and %zu must_include IDs, at most %zu of each are accepted",
				      c, cr->n_available_deviceids, cr->n_must_include_deviceids, advertised);

	struct chip_use *use = arena_alloc(arena, (snap->count ? snap->count : 1) * sizeof(*use));
	const char **chip_avail = arena_alloc(arena, (snap->count ? snap->count : 1) * sizeof(*chip_avail));
	const char **chip_must = arena_alloc(arena, (snap->count ? snap->count : 1) * sizeof(*chip_must));
	const struct npu_device **chosen = arena_alloc(arena, (snap->count ? snap->count : 1) * sizeof(*chosen));
	container_response *out = arena_alloc(arena, sizeof(*out));
	char **ids = arena_alloc(arena, want * sizeof(*ids));
	if (!use || !chip_avail || !chip_must || !chosen || !out || !ids)
		return request_reject(details, size, GRPC_STATUS_RESOURCE_EXHAUSTED,
				      "out of memory building the response");
	memset(use, 0, snap->count * sizeof(*use));

	for (size_t pass = 0; pass < 2; pass++) {
		bool must = pass == 0;
		size_t n = must ? cr->n_must_include_deviceids : cr->n_available_deviceids;
		char **list = must ? cr->must_include_deviceids : cr->available_deviceids;
		for (size_t i = 0; i < n; i++) {
			size_t index;
			unsigned k;
			if (replica_parse(snap, replicas, list[i], &index, &k) < 0)
				return request_reject(details, size, GRPC_STATUS_INVALID_ARGUMENT,
						      "container request %zu: unknown device ID \"%.*s%s\"", c, ID_SHOWN,
						      list[i], strlen(list[i]) > ID_SHOWN ? "..." : "");
			uint64_t bit = UINT64_C(1) << k;
			if (must)
				use[index].must |= bit;
			else if (!(use[index].must & bit))
				use[index].free |= bit;
		}
	}
	size_t n_must = 0, n_offered = 0, n_must_chips = 0;
	for (size_t i = 0; i < snap->count; i++) {
		n_must += (size_t)__builtin_popcountll(use[i].must);
		n_offered += (size_t)__builtin_popcountll(use[i].must | use[i].free);
		/* A chip served whole has one replica, taken when it is not offered. */
		unsigned count = replica_count(&(struct replica_options){ .replicas = replicas }, &snap->devices[i]);
		use[i].taken = count - (unsigned)__builtin_popcountll(use[i].must | use[i].free);
		if (use[i].must)
			chip_must[n_must_chips++] = snap->devices[i].id;
	}
	if (n_must > want)
		return request_reject(details, size, GRPC_STATUS_INVALID_ARGUMENT,
				      "container request %zu: must_include_deviceIDs holds more devices than allocation_size %zu",
				      c, want);
	if (want > n_offered)
		return request_reject(details, size, GRPC_STATUS_INVALID_ARGUMENT,
				      "container request %zu: allocation_size %zu is more than the devices in available_deviceIDs and must_include_deviceIDs",
				      c, want);

	/* The chips: as many distinct ones as wanted and offered, the least
	 * used first. The usage levels widen until enough chips are in play. */
	size_t n_chips_free = 0;
	for (size_t i = 0; i < snap->count; i++)
		n_chips_free += !use[i].must && use[i].free && snap->devices[i].healthy;
	/* Each chip besides must_include's adds one replica to the answer. */
	size_t extra = want - n_must < n_chips_free ? want - n_must : n_chips_free;
	size_t chips_wanted = n_must_chips + extra;
	size_t n_chosen = 0;
	if (chips_wanted > n_must_chips) {
		size_t n_avail = 0;
		for (unsigned level = 0; level <= replicas && n_avail < chips_wanted - n_must_chips; level++)
			for (size_t i = 0; i < snap->count; i++)
				if (!use[i].must && use[i].free && snap->devices[i].healthy && use[i].taken == level)
					chip_avail[n_avail++] = snap->devices[i].id;
		int r = topology_choose(snap, chip_avail, n_avail, chip_must, n_must_chips, chips_wanted, chosen,
					&n_chosen);
		if (r < 0)
			return request_reject(details, size, GRPC_STATUS_INTERNAL,
					      "container request %zu: unexpected error %d choosing chips", c, r);
	}

	/* The replicas: must_include's, one of each chosen chip, then from the
	 * least used chips while some are missing. */
	size_t n = 0;
	for (size_t i = 0; i < snap->count; i++)
		use[i].taken += (unsigned)__builtin_popcountll(use[i].must);
	for (size_t j = 0; j < n_chosen; j++) {
		size_t i = (size_t)(chosen[j] - snap->devices);
		if (!use[i].must && use[i].free) {
			unsigned k = (unsigned)__builtin_ctzll(use[i].free);
			use[i].free &= ~(UINT64_C(1) << k);
			use[i].must |= UINT64_C(1) << k;
			use[i].taken++;
		}
	}
	for (size_t i = 0; i < snap->count; i++)
		n += (size_t)__builtin_popcountll(use[i].must);
	while (n < want) {
		size_t best = SIZE_MAX;
		for (size_t i = 0; i < snap->count; i++)
			if (use[i].free && snap->devices[i].healthy && (best == SIZE_MAX || more_used(&use[best], &use[i])))
				best = i;
		if (best == SIZE_MAX)
			break; /* only Unhealthy chips are left: the kubelet fills up */
		unsigned k = (unsigned)__builtin_ctzll(use[best].free);
		use[best].free &= ~(UINT64_C(1) << k);
		use[best].must |= UINT64_C(1) << k;
		use[best].taken++;
		n++;
	}

	v1beta1__container_preferred_allocation_response__init(out);
	out->deviceids = ids;
	for (size_t i = 0; i < snap->count; i++)
		for (unsigned k = 0; k < replicas; k++) {
			if (!(use[i].must & (UINT64_C(1) << k)))
				continue;
			char id[REPLICA_ID_MAX];
			if (replica_format(snap->devices[i].id, k, id, sizeof(id)) < 0 ||
			    !(ids[out->n_deviceids] = arena_strdup(arena, id)))
				return request_reject(details, size, GRPC_STATUS_RESOURCE_EXHAUSTED,
						      "out of memory building the response");
			out->n_deviceids++;
		}
	*ret_response = out;
	return GRPC_STATUS_OK;
}

grpc_status_code preferred_answer(const struct npu_snapshot *snap, const struct replica_options *sharing,
				  const uint8_t *request, size_t len, uint8_t **ret_body, size_t *ret_len,
				  char *details, size_t details_size)
{
	struct arena arena = { 0 };
	ProtobufCMessage *message;
	grpc_status_code code = request_unpack(&v1beta1__preferred_allocation_request__descriptor, request, len,
					       &message, details, details_size);
	if (code != GRPC_STATUS_OK)
		return code;
	const V1beta1__PreferredAllocationRequest *req = (const V1beta1__PreferredAllocationRequest *)message;

	if (req->n_container_requests == 0) {
		code = request_reject(details, details_size, GRPC_STATUS_INVALID_ARGUMENT,
				      "PreferredAllocationRequest has no container requests");
		goto out;
	}
	if (req->n_container_requests > PREFERRED_MAX_CONTAINERS) {
		code = request_reject(details, details_size, GRPC_STATUS_INVALID_ARGUMENT,
				      "PreferredAllocationRequest has %zu container requests, at most %d are accepted",
				      req->n_container_requests, PREFERRED_MAX_CONTAINERS);
		goto out;
	}

	V1beta1__PreferredAllocationResponse resp;
	v1beta1__preferred_allocation_response__init(&resp);
	resp.container_responses = arena_alloc(&arena, req->n_container_requests * sizeof(*resp.container_responses));
	if (!resp.container_responses) {
		code = request_reject(details, details_size, GRPC_STATUS_RESOURCE_EXHAUSTED,
				      "out of memory building the response");
		goto out;
	}
	for (size_t c = 0; c < req->n_container_requests; c++) {
		if (replica_sharing(sharing))
			code = answer_replicas(&arena, snap, sharing->replicas, c, req->container_requests[c],
					       &resp.container_responses[c], details, details_size);
		else
			code = answer_container(&arena, snap, c, req->container_requests[c],
						&resp.container_responses[c], details, details_size);
		if (code != GRPC_STATUS_OK)
			goto out;
	}
	resp.n_container_responses = req->n_container_requests;

	size_t size = v1beta1__preferred_allocation_response__get_packed_size(&resp);
	uint8_t *body = malloc(size ? size : 1);
	if (!body) {
		code = request_reject(details, details_size, GRPC_STATUS_RESOURCE_EXHAUSTED,
				      "out of memory building the response");
		goto out;
	}
	v1beta1__preferred_allocation_response__pack(&resp, body);
	*ret_body = body;
	*ret_len = size;
	code = GRPC_STATUS_OK;
out:
	arena_free(&arena);
	protobuf_c_message_free_unpacked(message, NULL);
	return code;
}
