/* SPDX-License-Identifier: Apache-2.0 */
#include "dra/service.h"

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/macro.h"
#include "dra.pb-c.h"
#include "dra_api.h"

typedef K8s__Io__Kubelet__Pkg__Apis__Dra__V1__Claim Claim;
typedef K8s__Io__Kubelet__Pkg__Apis__Dra__V1__NodePrepareResourcesRequest PrepareRequest;
typedef K8s__Io__Kubelet__Pkg__Apis__Dra__V1__NodePrepareResourcesResponse PrepareResponse;
typedef K8s__Io__Kubelet__Pkg__Apis__Dra__V1__NodePrepareResourcesResponse__ClaimsEntry PrepareEntry;
typedef K8s__Io__Kubelet__Pkg__Apis__Dra__V1__NodePrepareResourceResponse PrepareClaim;
typedef K8s__Io__Kubelet__Pkg__Apis__Dra__V1__Device Device;
typedef K8s__Io__Kubelet__Pkg__Apis__Dra__V1__NodeUnprepareResourcesRequest UnprepareRequest;
typedef K8s__Io__Kubelet__Pkg__Apis__Dra__V1__NodeUnprepareResourcesResponse UnprepareResponse;
typedef K8s__Io__Kubelet__Pkg__Apis__Dra__V1__NodeUnprepareResourcesResponse__ClaimsEntry UnprepareEntry;
typedef K8s__Io__Kubelet__Pkg__Apis__Dra__V1__NodeUnprepareResourceResponse UnprepareClaim;

#define WHY_MAX 768

/* One claim's answer and what its message points to. */
struct prepared_claim {
	PrepareEntry entry;
	PrepareClaim claim;
	struct dra_prepared *prepared;
	Device devices[DRA_CLAIM_RESULTS_MAX];
	Device *device_ptrs[DRA_CLAIM_RESULTS_MAX];
	char *request_names[DRA_CLAIM_RESULTS_MAX]; /* one per device */
	char cdi_id[DRA_CDI_ID_MAX];
	char *cdi_ids[1];
	char why[WHY_MAX];
};

static const char *text(const char *s)
{
	return s ? s : "";
}

/* Whether every string of every claim fits the driver's record (struct
 * dra_prepared); if not, reply says which does not. The kubelet matches the
 * answers to its claims by uid, so a claim cannot be answered under a
 * shortened uid: the whole request is refused, its strings never echoed. */
static bool claims_fit(Claim *const *claims, size_t n, struct gs_reply *reply)
{
	if (n > DRA_SERVICE_MAX_CLAIMS) {
		gs_reply_error(reply, GRPC_STATUS_INVALID_ARGUMENT, "%zu claims in one request, at most %d", n,
			       DRA_SERVICE_MAX_CLAIMS);
		return false;
	}
	for (size_t i = 0; i < n; i++) {
		const struct {
			const char *what, *value;
			size_t max;
		} fields[] = {
			{ "uid", claims[i]->uid, DRA_UID_MAX - 1 },
			{ "namespace", claims[i]->namespace_, K8S_NAME_MAX },
			{ "name", claims[i]->name, K8S_DNS_SUBDOMAIN_MAX },
		};
		for (size_t f = 0; f < ELEMENTSOF(fields); f++)
			if (fields[f].value && strnlen(fields[f].value, fields[f].max + 1) > fields[f].max) {
				gs_reply_error(reply, GRPC_STATUS_INVALID_ARGUMENT, "claims[%zu].%s is longer than %zu bytes",
					       i, fields[f].what, fields[f].max);
				return false;
			}
	}
	return true;
}

static void prepare_one(struct dra_driver *d, const Claim *c, struct prepared_claim *out)
{
	k8s__io__kubelet__pkg__apis__dra__v1__node_prepare_resources_response__claims_entry__init(&out->entry);
	k8s__io__kubelet__pkg__apis__dra__v1__node_prepare_resource_response__init(&out->claim);
	out->entry.key = (char *)(uintptr_t)text(c->uid);
	out->entry.value = &out->claim;
	int r = dra_driver_prepare(d, text(c->namespace_), text(c->uid), text(c->name), &out->prepared, out->why,
				   sizeof(out->why));
	if (r == 0 && dra_driver_cdi_id(d, text(c->uid), out->cdi_id, sizeof(out->cdi_id)) < 0)
		r = -ENAMETOOLONG; /* the uid passed the driver's bound: cannot happen */
	if (r < 0) {
		if (!out->why[0])
			snprintf(out->why, sizeof(out->why), "%s", strerror(-r));
		out->claim.error = out->why;
		return;
	}
	/* Every device of the claim is in its one CDI device. */
	out->cdi_ids[0] = out->cdi_id;
	const struct dra_prepared *p = out->prepared;
	for (size_t i = 0; i < p->n_devices; i++) {
		Device *dev = &out->devices[i];
		k8s__io__kubelet__pkg__apis__dra__v1__device__init(dev);
		out->request_names[i] = (char *)(uintptr_t)p->devices[i].request;
		dev->n_request_names = 1;
		dev->request_names = &out->request_names[i];
		dev->pool_name = (char *)(uintptr_t)p->devices[i].pool;
		dev->device_name = (char *)(uintptr_t)p->devices[i].device;
		dev->n_cdi_device_ids = 1;
		dev->cdi_device_ids = out->cdi_ids;
		out->device_ptrs[i] = dev;
	}
	out->claim.n_devices = p->n_devices;
	out->claim.devices = out->device_ptrs;
}

static void prepare(void *ctx, const uint8_t *req, size_t len, struct gs_reply *reply)
{
	PrepareRequest *r = k8s__io__kubelet__pkg__apis__dra__v1__node_prepare_resources_request__unpack(NULL, len, req);
	if (!r) {
		gs_reply_error(reply, GRPC_STATUS_INVALID_ARGUMENT, "malformed NodePrepareResourcesRequest");
		return;
	}
	if (!claims_fit(r->claims, r->n_claims, reply))
		goto out;
	struct prepared_claim *claims = calloc(r->n_claims ? r->n_claims : 1, sizeof(*claims));
	PrepareEntry **entries = calloc(r->n_claims ? r->n_claims : 1, sizeof(*entries));
	if (claims && entries) {
		for (size_t i = 0; i < r->n_claims; i++) {
			prepare_one(((struct dra_service *)ctx)->driver, r->claims[i], &claims[i]);
			entries[i] = &claims[i].entry;
		}
		PrepareResponse resp;
		k8s__io__kubelet__pkg__apis__dra__v1__node_prepare_resources_response__init(&resp);
		resp.n_claims = r->n_claims;
		resp.claims = entries;
		gs_reply_message(reply, &resp.base);
	} else {
		gs_reply_error(reply, GRPC_STATUS_RESOURCE_EXHAUSTED, "out of memory");
	}
	for (size_t i = 0; claims && i < r->n_claims; i++)
		free(claims[i].prepared);
	free(claims);
	free(entries);
out:
	k8s__io__kubelet__pkg__apis__dra__v1__node_prepare_resources_request__free_unpacked(r, NULL);
}

struct unprepared_claim {
	UnprepareEntry entry;
	UnprepareClaim claim;
	char why[WHY_MAX];
};

static void unprepare(void *ctx, const uint8_t *req, size_t len, struct gs_reply *reply)
{
	UnprepareRequest *r =
		k8s__io__kubelet__pkg__apis__dra__v1__node_unprepare_resources_request__unpack(NULL, len, req);
	if (!r) {
		gs_reply_error(reply, GRPC_STATUS_INVALID_ARGUMENT, "malformed NodeUnprepareResourcesRequest");
		return;
	}
	if (!claims_fit(r->claims, r->n_claims, reply))
		goto out;
	struct unprepared_claim *claims = calloc(r->n_claims ? r->n_claims : 1, sizeof(*claims));
	UnprepareEntry **entries = calloc(r->n_claims ? r->n_claims : 1, sizeof(*entries));
	if (claims && entries) {
		for (size_t i = 0; i < r->n_claims; i++) {
			struct unprepared_claim *u = &claims[i];
			k8s__io__kubelet__pkg__apis__dra__v1__node_unprepare_resources_response__claims_entry__init(
				&u->entry);
			k8s__io__kubelet__pkg__apis__dra__v1__node_unprepare_resource_response__init(&u->claim);
			u->entry.key = (char *)(uintptr_t)text(r->claims[i]->uid);
			u->entry.value = &u->claim;
			int e = dra_driver_unprepare(((struct dra_service *)ctx)->driver, text(r->claims[i]->uid), u->why,
						     sizeof(u->why));
			if (e < 0) {
				if (!u->why[0])
					snprintf(u->why, sizeof(u->why), "%s", strerror(-e));
				u->claim.error = u->why;
			}
			entries[i] = &u->entry;
		}
		UnprepareResponse resp;
		k8s__io__kubelet__pkg__apis__dra__v1__node_unprepare_resources_response__init(&resp);
		resp.n_claims = r->n_claims;
		resp.claims = entries;
		gs_reply_message(reply, &resp.base);
	} else {
		gs_reply_error(reply, GRPC_STATUS_RESOURCE_EXHAUSTED, "out of memory");
	}
	free(claims);
	free(entries);
out:
	k8s__io__kubelet__pkg__apis__dra__v1__node_unprepare_resources_request__free_unpacked(r, NULL);
}

static grpc_status_code health_open(void *ctx, struct gs_stream *stream, const uint8_t *req, size_t len,
				    struct gs_reply *reply)
{
	return dra_health_open(((struct dra_service *)ctx)->health, stream, req, len, reply);
}

static void health_closed(void *ctx, struct gs_stream *stream)
{
	dra_health_closed(((struct dra_service *)ctx)->health, stream);
}

static const struct gs_method methods[] = {
	{ .path = DRA_METHOD_V1_PREPARE, .unary = prepare },
	{ .path = DRA_METHOD_V1_UNPREPARE, .unary = unprepare },
	{ .path = DRA_METHOD_V1BETA1_PREPARE, .unary = prepare },
	{ .path = DRA_METHOD_V1BETA1_UNPREPARE, .unary = unprepare },
	{ .path = DRA_METHOD_HEALTH_V1_WATCH, .stream_open = health_open, .stream_closed = health_closed },
};

const struct gs_method *dra_service_methods(size_t *ret_count)
{
	*ret_count = ELEMENTSOF(methods);
	return methods;
}
