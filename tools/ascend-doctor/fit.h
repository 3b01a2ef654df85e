/* SPDX-License-Identifier: Apache-2.0 */
/* Why a pod does not fit a node, for the NPU resource: the scheduler's
 * filters that matter to an NPU pod (NodeUnschedulable, TaintToleration,
 * NodeAffinity with nodeSelector, NodeResourcesFit for the extended
 * resource) and the node's Ready condition, evaluated over the objects
 * `kubectl get -o json` prints (json-c trees). Pure: no I/O, the caller
 * reads the JSON. Malformed or missing fields count as absent, never crash;
 * quantities are read as the API server does (quantity.h). */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct json_object;

enum fit_code {
	FIT_UNSCHEDULABLE,
	FIT_NOT_READY,
	FIT_UNTOLERATED_TAINT,
	FIT_NODE_SELECTOR_MISMATCH,
	FIT_NODE_AFFINITY_MISMATCH,
	FIT_NO_NPU_CAPACITY,
	FIT_INSUFFICIENT_NPU,
	FIT_UNHEALTHY_NPU,
	FIT_CODE_COUNT,
};

/* "unschedulable", "not-ready", "untolerated-taint", ... (docs/ascend-doctor.md). */
const char *fit_code_name(enum fit_code code);

#define FIT_DETAIL_MAX 256
#define FIT_NAME_MAX 254 /* a DNS subdomain and its terminator */
/* Bounds on what is read: a bigger cluster is refused, not half-read. */
#define FIT_MAX_NODES 10000
#define FIT_MAX_PODS 500000

struct fit_reason {
	enum fit_code code;
	char detail[FIT_DETAIL_MAX];
};

struct fit_node {
	char name[FIT_NAME_MAX];
	bool fits;
	bool has_npu; /* the node advertises the resource (capacity > 0) */
	int64_t capacity, allocatable, used, free;
	size_t pods_using; /* bound, unfinished pods that request the resource */
	size_t n_reasons;
	struct fit_reason reasons[FIT_CODE_COUNT]; /* at most one per code, in enum order */
	/* What the scheduler would say for this node: its first failing filter. */
	char scheduler_reason[FIT_DETAIL_MAX];
	/* For the fix: the first untolerated taint and the first failing label rule. */
	char taint[FIT_DETAIL_MAX];
	char taint_scheduler[FIT_DETAIL_MAX];
	char selector_label[FIT_DETAIL_MAX]; /* "key=value" of the first unmatched nodeSelector entry */
};

/* The pod's request of resource as the scheduler counts it: the larger of
 * the sum over containers (plus restartable init containers, sidecars) and
 * each init container (on top of the sidecars started before it); a
 * container's request is its requests[resource], else its
 * limits[resource]. -EINVAL (why says which container) for a quantity that
 * is no whole number. */
int fit_pod_request(struct json_object *pod, const char *resource, int64_t *ret_request, char *why,
		    size_t why_size);

/* The one extended resource (a name with a domain, not one of
 * kubernetes.io's) the pod's containers ask for in requests or limits,
 * such as "ascend.com/npu-vir04-3c" or "huawei.com/Ascend910". 0 with the
 * name, -ENOENT when there is none, -E2BIG when there are several,
 * -ENAMETOOLONG when it does not fit. */
int fit_pod_extended_resource(struct json_object *pod, char *name, size_t size);

struct fit_cluster {
	char pod_name[FIT_NAME_MAX];
	char pod_namespace[FIT_NAME_MAX];
	int64_t request;
	size_t n_nodes;
	struct fit_node *nodes; /* in the order of the node list */
	size_t n_fit;
	char summary[2048]; /* "0/10 nodes are available: 10 Insufficient ascend.com/npu." */
	char fix[2048];
};

/* Evaluates pod against every node of nodes (a List's items, or an array,
 * or a single Node), counting what the pods of pods (the same forms; may be
 * NULL) bound to each node and not finished request; the pod itself is not
 * counted. Returns 0, -EINVAL with why for a pod or node list that is not
 * one (or a bad quantity), -E2BIG beyond the bounds, -ENOMEM. */
int fit_cluster_evaluate(struct json_object *pod, struct json_object *nodes, struct json_object *pods,
			 const char *resource, struct fit_cluster *ret_cluster, char *why, size_t why_size);
/* The fix for each of node's reasons, joined by "; ", into buf[size]. */
void fit_node_fix(const struct fit_cluster *cluster, const struct fit_node *node, const char *resource, char *buf,
		  size_t size);

void fit_cluster_clear(struct fit_cluster *cluster);

/* The items of a List ({"items": [...]}), an array itself, or a single
 * object as a one-element view: *ret_single is set for the last. NULL when
 * it is none of these. */
struct json_object *fit_items(struct json_object *doc, bool *ret_single);
