/* SPDX-License-Identifier: Apache-2.0 */
/* A ResourceClaim as the DRA driver needs it: its uid and the devices the
 * scheduler allocated, read from the claim's JSON (resource.k8s.io/v1 or
 * v1beta1/v1beta2: status.allocation.devices.results[] has the same shape
 * in all of them). The JSON comes from the API server, so everything is
 * bounded: the text's size, its nesting, the number of results and every
 * string; anything beyond is refused with the reason, never cut. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/k8s_names.h"

/* Larger than any object etcd stores by default (1.5 MiB). */
#define DRA_CLAIM_JSON_MAX (2 * 1024 * 1024)
/* The API's limit on allocation results per claim (AllocationResultsMaxSize). */
#define DRA_CLAIM_RESULTS_MAX 32
/* A uid is a UUID; room for anything the API server could mint. */
#define DRA_UID_MAX 128
/* A request name, or "<request>/<subrequest>" for a prioritized list. */
#define DRA_REQUEST_MAX (2 * K8S_NAME_MAX + 2)
/* A pool name: DNS subdomains joined by '/', 253 characters in all. */
#define DRA_POOL_MAX (K8S_DNS_SUBDOMAIN_MAX + 1)

struct dra_result {
	char request[DRA_REQUEST_MAX];
	char driver[K8S_DNS_SUBDOMAIN_MAX + 1];
	char pool[DRA_POOL_MAX];
	char device[K8S_NAME_MAX + 1];
	/* A dynamic vNPU's placement (node/partitions.h), in the driver's
	 * record only: the id of the vNPU made for it (0: none yet) and
	 * whether DCMI created it. The id is recorded before the create, so a
	 * crash in between leaves no vNPU the record does not name. */
	uint32_t vnpu_id;
	bool vnpu_created;
	/* Allocated for administrative access (adminAccess, DRAAdminAccess):
	 * a monitoring container sees the device beside the workload that
	 * holds it, and holds it for no one. */
	bool admin_access;
};

/* The annotation the ResourceClaim controller puts on a claim it made from
 * a template: the pod's own name for the claim (pod.spec.resourceClaims[].name). */
#define DRA_POD_CLAIM_ANNOTATION "resource.kubernetes.io/pod-claim-name"

struct dra_claim {
	char uid[DRA_UID_MAX];
	/* DRA_POD_CLAIM_ANNOTATION's value, a DNS label; "" for a claim made
	 * directly. */
	char pod_claim_name[K8S_NAME_MAX + 1];
	/* False when status.allocation is absent: the claim is not allocated. */
	bool allocated;
	size_t n_results;
	struct dra_result results[DRA_CLAIM_RESULTS_MAX];
};

/* Whether s is a DNS label (RFC 1123: lower-case letters, digits and '-',
 * neither first nor last, at most 63): what a pod's claim name is. */
bool dra_pod_claim_name_ok(const char *s);

/* Parses len bytes of a ResourceClaim's JSON (need not be NUL-terminated).
 * Returns 0 with *ret_claim filled, or -EINVAL with why saying what is wrong
 * ("not JSON", "results[3].device is missing", "more than 32 results", ...),
 * -E2BIG when the text is over DRA_CLAIM_JSON_MAX, -ENOMEM. */
int dra_claim_parse(const char *json, size_t len, struct dra_claim *ret_claim, char *why, size_t why_size);
