/* SPDX-License-Identifier: Apache-2.0 */
/* Which pods make one group, and each one's place in it, from the pods'
 * own objects (the rules, in the order they are tried, are the table in
 * docs/ranktable.md):
 *   1. the group label (default ascend.com/hccl-group): the pods of the
 *      namespace with the same value;
 *   2. a LeaderWorkerSet group: the same leaderworkerset.sigs.k8s.io/group-key
 *      label, index the worker-index label, size the pods' size annotation;
 *   3. an Indexed Job: the pods of the same controller uid
 *      (batch.kubernetes.io/controller-uid), index the job-completion-index
 *      label (or annotation), size the Job's spec.completions;
 *   4. a StatefulSet: the pods whose controller is the same StatefulSet
 *      (listed by the labels the pod shares with its siblings), index
 *      apps.kubernetes.io/pod-index, size the set's spec.replicas.
 * A pod's index is the first of these labels it has: ascend.com/hccl-index,
 * batch.kubernetes.io/job-completion-index (or that annotation),
 * apps.kubernetes.io/pod-index, leaderworkerset.sigs.k8s.io/worker-index.
 * Nothing here talks to the API server; the pod objects come from it, so
 * every field is type-checked and bounded. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <json-c/json.h>

#include "base/k8s_names.h"
#include "member.h"

#define RT_GROUP_LABEL_DEFAULT "ascend.com/hccl-group"
#define RT_INDEX_LABEL "ascend.com/hccl-index"
#define RT_NETWORK_ANNOTATION "ascend.com/npu-network"
/* A pod's claims this program reads: a pod with more is refused. */
#define RT_POD_CLAIMS_MAX 8
/* The label selector of a group: a handful of labels of at most 317 bytes. */
#define RT_SELECTOR_MAX 2048
#define RT_NAME_MAX (K8S_DNS_SUBDOMAIN_MAX + 1)
#define RT_UID_MAX 64
/* An index or size above this is refused (hccl_ranktable_build's bound). */
#define RT_GROUP_MAX HCCL_RANKTABLE_MAX_MEMBERS

enum rt_group_kind {
	RT_GROUP_LABEL,
	RT_GROUP_LWS,
	RT_GROUP_JOB,
	RT_GROUP_STATEFULSET,
};

struct rt_group {
	enum rt_group_kind kind;
	/* The labelSelector that lists the group (unescaped: "k=v,k2=v2"). */
	char selector[RT_SELECTOR_MAX];
	/* For a Job or StatefulSet: the owner, and for a StatefulSet the uid
	 * every member's controller reference must have. */
	char owner_name[RT_NAME_MAX];
	char owner_uid[RT_UID_MAX];
	/* The size the pod itself tells (LWS's annotation); 0: not told. */
	uint32_t size;
};

/* What this program needs of one pod. */
struct rt_pod {
	char name[RT_NAME_MAX];
	char uid[RT_UID_MAX];
	char node[RT_NAME_MAX];         /* spec.nodeName; "": not scheduled */
	char host_ip[HCCL_IP_TEXT_MAX + 1]; /* status.hostIP; "": unknown */
	char controller_uid[RT_UID_MAX]; /* the controller owner's uid; "": none */
	bool has_index;
	uint32_t index;
	bool gone;     /* being deleted, or Succeeded / Failed: not a member any more */
	bool uses_dra; /* spec.resourceClaims is not empty */
	/* The names of its ResourceClaims that exist: spec.resourceClaims'
	 * resourceClaimName, status.resourceClaimStatuses' names. */
	size_t n_claims;
	char claims[RT_POD_CLAIMS_MAX][RT_NAME_MAX];
	/* spec.resourceClaims entries whose claim is not named yet (a
	 * template's claim the controller has not made). */
	size_t n_claims_pending;
	/* The annotation RT_NETWORK_ANNOTATION's value; "": none. */
	char network[RT_NETWORK_MAX + 1];
};

/* Reads a pod object. Returns 0, or -EINVAL / -E2BIG (a field of the wrong
 * type, over its bound, an index that is no number in 0..RT_GROUP_MAX-1,
 * more than RT_POD_CLAIMS_MAX claims), with why naming the field. */
int rt_pod_read(json_object *pod, struct rt_pod *ret_pod, char *why, size_t why_size);

/* The group of a pod: by label_key when the pod has that label, else as
 * the rules above say. Returns 0, or -ENOENT (no rule applies: why says what
 * to add), -EINVAL / -E2BIG (a value that does not fit), with why said. */
int rt_group_of(json_object *pod, const char *label_key, struct rt_group *ret_group, char *why, size_t why_size);

/* Whether a listed pod belongs to the group beyond matching its selector
 * (a StatefulSet's: its controller). */
bool rt_group_has(const struct rt_group *group, const struct rt_pod *pod);

/* "label ascend.com/hccl-group=x", "Indexed Job x", ... for messages. */
void rt_group_describe(const struct rt_group *group, char *out, size_t size);
