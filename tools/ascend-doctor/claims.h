/* SPDX-License-Identifier: Apache-2.0 */
/* Why a ResourceClaim (resource.k8s.io/v1) stays unallocated, for the
 * devices of one DRA driver: each request's DeviceClass and selectors, and
 * for every pool of the driver's ResourceSlices which devices match, which
 * are tainted, allocated to other claims, short of shared counters or of
 * consumable capacity (shares), and the fix. Pure, like fit.h: the caller
 * reads the objects as `kubectl get -o json` prints them; malformed or
 * missing fields count as absent.
 *
 * CEL selectors: no C library for CEL ships in Debian, so an expression is
 * split at its top-level `&&` and each part is evaluated only when it is one
 * of the simple forms below; every other part is "not evaluated", and a
 * device that passes all evaluated parts counts as matching (the report says
 * so). The forms: device.driver == "X" (or !=), and
 * device.attributes["DOMAIN"].NAME == VALUE (or !=) with a string, integer
 * or boolean VALUE, and "NAME" in device.attributes["DOMAIN"] (or
 * device.capacity). As in CEL, an attribute a device lacks is an error for
 * that device, which the scheduler reports as such.
 * (https://kubernetes.io/docs/concepts/scheduling-eviction/dynamic-resource-allocation/) */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct json_object;

/* Bounds on what is read from the cluster: bigger input is refused, not
 * half-read. Requests, subrequests and selectors are the API's own limits. */
#define CLAIMS_MAX_CLAIMS 500000
#define CLAIMS_MAX_SLICES 100000
#define CLAIMS_MAX_DEVICES 1000000
#define CLAIMS_MAX_RULES 10000
#define CLAIMS_MAX_REQUESTS 32
#define CLAIMS_MAX_SUBREQUESTS 8
#define CLAIMS_MAX_SELECTORS 32
/* The devices named per node and cause in a report line. */
#define CLAIMS_NAMED_DEVICES 4

/* What keeps a device from a request, in the order the causes are judged:
 * a device counts under the first that applies. */
enum claims_cause {
	CLAIMS_NOT_SELECTED, /* a class or claim selector is false (or a CEL error) */
	CLAIMS_TAINTED,      /* an untolerated NoSchedule or NoExecute taint */
	CLAIMS_ALLOCATED,    /* allocated to another claim, and not shareable */
	CLAIMS_NO_COUNTERS,  /* its counter set has too little left (partitions) */
	CLAIMS_NO_SHARES,    /* its consumable capacity has too little left */
	CLAIMS_CAUSE_COUNT,
};

/* "not-selected", "tainted", "allocated", "short-of-counters", "short-of-shares". */
const char *claims_cause_name(enum claims_cause cause);

struct claims_selector {
	char *expression;
	bool from_class;    /* the DeviceClass's, else the claim's */
	bool evaluated;     /* every part was one of the simple forms */
};

/* One pool (a node's devices) for one request. */
struct claims_pool {
	char *pool, *node; /* node: spec.nodeName, or "" for a pool not bound to one node */
	size_t devices;     /* of the driver in the pool */
	size_t of_class;    /* passing the class's selectors */
	size_t not_evaluated; /* of those counted available, how many passed only unevaluated parts */
	size_t count[CLAIMS_CAUSE_COUNT];
	char *named[CLAIMS_CAUSE_COUNT]; /* "npu-5 (npu.ascend.com/unhealthy=...:NoSchedule), ..." */
	size_t available;
	bool fits;
};

struct claims_request {
	char *name;          /* "npu", or "npu/small" for a subrequest of firstAvailable */
	char *device_class;
	bool class_found;
	bool admin_access;
	bool all;            /* allocationMode All */
	int64_t count;       /* ExactCount's count */
	size_t n_selectors;
	struct claims_selector *selectors;
	size_t n_pools;
	struct claims_pool *pools;
	bool alternative;    /* a subrequest: the request fits when any of its subrequests does */
};

struct claims_result {
	char *claim;         /* "namespace/name" */
	char *allocated_node; /* the claim is allocated already (to this node, or "" when to none in particular) */
	size_t n_requests;
	struct claims_request *requests;
	size_t n_constraints; /* matchAttribute constraints: reported, not evaluated */
	size_t n_nodes, n_fit; /* pools of the driver, and those where every request fits */
	char *summary;
	char *fix;
};

/* Evaluates claim (a ResourceClaim) against classes (DeviceClasses), slices
 * (ResourceSlices; those of other drivers are skipped), claims (all
 * ResourceClaims, for what is allocated; may be NULL) and rules
 * (DeviceTaintRules; may be NULL), each a List's items, an array or a single
 * object. Returns 0 with *ret (clear it with claims_result_clear), -EINVAL
 * with why for a claim that is none, -E2BIG with why beyond the bounds,
 * -ENOMEM. */
int claims_explain(struct json_object *claim, struct json_object *classes, struct json_object *slices,
		   struct json_object *claims, struct json_object *rules, const char *driver,
		   struct claims_result *ret, char *why, size_t why_size);

void claims_result_clear(struct claims_result *result);

/* Whether every request (one of the subrequests of a firstAvailable one)
 * fits the pool of index p. */
bool claims_pool_fits(const struct claims_result *result, size_t p);

/* The selector's evaluation on one device (its ResourceSlice entry) of
 * driver: 1 true, 0 false, -1 an error in CEL (a missing attribute), 2 not
 * evaluated; for the tests. */
int claims_selector_eval(const char *expression, const char *driver, struct json_object *device,
			 bool *ret_evaluated);
