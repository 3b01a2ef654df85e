/* SPDX-License-Identifier: Apache-2.0 */
/* HCCL's rank table (hccl.json) for a group of pods: what the collective
 * library must be told about every chip of a multi-node job (each server,
 * each chip's physical id, RoCE address and rank, and on A3 super pods the
 * super device id and super pod). This module only builds and refuses
 * tables; who gathers the members, and how, is the caller's business.
 *
 * The format is HCCL's own, as the public repository hicann/hccl documents
 * it (docs/zh/user_guide/cluster_info_config/rank_table_config_910.md,
 * _a2.md and _a3.md). Which version goes with which family, and why:
 * - 910 (Atlas training series): "1.0", the template its page recommends
 *   (the older group_list template is for compatibility only). That page
 *   makes device_ip mandatory even on one server, so a 910 chip without an
 *   address is always refused.
 * - 910B (Atlas A2): "1.0", the only version its page describes; device_ip
 *   is mandatory once the table spans more than one server and may be left
 *   out on one server, where the chips talk over HCCS.
 * - A3 (910_93): "1.2" (super pod mode) when every member carries its
 *   chips' super pod information, with each chip's super_device_id (SDID)
 *   and a super_pod_list whose servers sit together in server_list, as the
 *   page requires; device_ip is then mandatory once the table spans more
 *   than one super pod. Without super pod information on any member: "1.0"
 *   (the page's "AI Server mode"), with 910B's device_ip rule. Some members
 *   with it and some without is refused: HCCL could be told neither mode.
 * - 310P, 310B and anything else: refused. HCCL's rank tables describe
 *   training and inference chips joined by RoCE; this project's 310P cards
 *   are not, and a table for them would send users down a dead end.
 * Where a table needs device_ip (above), the chips talk over their RoCE
 * ports, so a chip whose link is down is refused there; elsewhere it is
 * written (HCCS carries the traffic). A link whose state is unknown is not
 * refused: DCMI may not say.
 *
 * What is written: status "completed", version, server_count (a string, as
 * every field is), server_list with server_id, on A3 host_ip when the caller
 * knows it (IPv4, as the A3 page requires; the 910 and A2 pages have no such
 * key, so it is left out there) and device (device_id,
 * super_device_id in 1.2, device_ip when known, in its canonical text, and
 * rank_id), and in 1.2 super_pod_list with each super pod's id and servers.
 * Nothing else: no device_port, backup_device_ip or host_port, which the
 * pages leave optional for HCCL to default and recommend only when several
 * processes share one chip (this project gives a chip to one container), and
 * none of the extra keys MindCluster's ascend-operator writes
 * (component/ascend-operator/pkg/ranktable in Ascend/mind-cluster, e.g. a
 * per-device super_pod_id), which HCCL's pages do not document.
 *
 * Rank order: by the member's pod index, then by device id, numbered "0" to
 * "N-1". HCCL forbids one server's ranks to interleave with another's, and
 * in 1.2 one super pod's servers with another's, so members that share a
 * server (two pods on one node) are grouped into one server entry placed
 * where its lowest pod index puts it, and in 1.2 servers are grouped by
 * super pod the same way; within a server, pods keep their index order. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Bounds on what a caller (in the end, pods' annotations and claims) can
 * grow: 16 chips are a whole A3 server (8 NPUs of two dies each, every die a
 * rank), and 1024 such members are far beyond any job seen so far. */
#define HCCL_RANKTABLE_MAX_MEMBERS 1024
#define HCCL_RANKTABLE_MAX_CHIPS 16
/* HCCL's pages: server_id is a string of at most 64 characters. */
#define HCCL_SERVER_ID_MAX 64
/* The longest address text accepted: IPv6 with an embedded IPv4 is 45. */
#define HCCL_IP_TEXT_MAX 45

enum hccl_link {
	HCCL_LINK_UNKNOWN = 0,
	HCCL_LINK_UP,
	HCCL_LINK_DOWN,
};

struct hccl_chip {
	uint32_t device_id;    /* physical id: /dev/davinci<id> */
	const char *device_ip; /* the RoCE port's IPv4 or IPv6 text; NULL when absent */
	enum hccl_link link;
	/* A3 only: whether DCMI reported the chip's super pod information. */
	bool has_super_pod;
	uint32_t sdid; /* super device id */
	uint32_t super_pod_id;
	uint32_t server_index;
};

struct hccl_member {
	uint32_t pod_index;    /* the pod's place in the group: rank order */
	const char *server_id; /* the node name */
	const char *host_ip;   /* the node's IPv4 address; NULL when unknown; written on A3 only */
	const char *family;    /* "910", "910B", "A3" (or "910_93"); others are refused */
	const struct hccl_chip *chips;
	size_t n_chips;
};

/* Builds the rank table of members (any order) into *ret_json, a malloc'd,
 * newline-terminated JSON text. Returns 0, or a negative errno with one line
 * in why naming the member (by pod index and server) and the chip:
 * -EINVAL a member without chips, a missing or malformed field, a chip
 *         without the device_ip its table needs, a server whose members
 *         disagree on host IP or super pod, super pod information outside
 *         A3 or on only some A3 members, mixed families;
 * -EEXIST two members with one pod index, two chips with one address, one
 *         device id twice on a server, one SDID twice in a super pod, one
 *         server index twice in a super pod;
 * -ENETDOWN a chip whose link is down where the table needs its RoCE port;
 * -EOPNOTSUPP a family HCCL rank tables do not describe;
 * -E2BIG  more than HCCL_RANKTABLE_MAX_MEMBERS members or
 *         HCCL_RANKTABLE_MAX_CHIPS chips on one, a string over its bound;
 * -ENOMEM. */
int hccl_ranktable_build(const struct hccl_member *members, size_t n_members, char **ret_json, char *why,
			 size_t why_size);
