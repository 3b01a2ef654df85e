/* SPDX-License-Identifier: Apache-2.0 */
/* What the plugin knows about one NPU chip, whichever backend found it. */
#pragma once

#include <arpa/inet.h>
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "npu/family.h"

/* Bound on chips per node: DCMI reports at most 64 cards of at most 4 chips. */
#define NPU_MAX_CHIPS 256

struct npu_chip {
	uint32_t phy_id; /* the N of /dev/davinciN: the chip's stable identity */
	uint32_t logic_id;
	int card_id;
	int device_id;
	char name[32]; /* DCMI chip name such as "910B3"; empty from devfs */
	enum npu_family family;
	uint32_t aicore_count; /* 0 when unknown */
	bool has_board_id;
	uint32_t board_id;
};

/* A static vNPU: a slice of one chip that an administrator created with
 * npu-smi (set -t create-vnpu) from a template such as "vir04_3c". The
 * driver numbers them phy*16+100 .. phy*16+115 and gives each a node
 * /dev/vdavinci<id>. */
#define NPU_VNPU_FIRST_ID 100u
#define NPU_VNPUS_PER_CHIP 16u
#define NPU_VNPU_TEMPLATE_MAX 16 /* DCMI's name field, terminator included */
#define NPU_MAX_VNPUS 512

struct npu_vnpu {
	uint32_t id;
	uint32_t phy_id;                          /* the chip it is carved from */
	char template_name[NPU_VNPU_TEMPLATE_MAX]; /* empty when unknown (device files only) */
};

/* A chip's network identity, for jobs that span servers: HCCL reaches the
 * chip over its RoCE port, so the rank table names the port's address
 * (device_ip), and on an A3 super pod also the chip's id across the pod
 * (SDID) and the pod it is in. Each part may be unknown: 310P and 310B have
 * no RoCE port, older drivers lack the calls, and only A3 has super pods. */
enum npu_link {
	NPU_LINK_UNKNOWN, /* not read, not supported, or detection not started */
	NPU_LINK_UP,
	NPU_LINK_DOWN,
};

struct npu_net {
	bool has_ip;
	bool ipv6;          /* else IPv4, in the first four bytes */
	uint8_t ip[16];     /* network byte order */
	uint8_t prefix_len; /* from the port's mask */
	enum npu_link link;
	uint32_t link_code; /* DCMI's detection result behind link (DCMI_RDFX_DETECT_*) */
	bool has_super_pod;
	uint32_t super_pod_id;
	uint32_t sdid;
	uint32_t server_index;
};

/* "up", "down" or "unknown": the link as every interface of this project
 * names it (slice attributes, the container's environment, the doctor). */
static inline const char *npu_link_name(enum npu_link link)
{
	return link == NPU_LINK_UP ? "up" : link == NPU_LINK_DOWN ? "down" : "unknown";
}

/* Room for an address and its "/prefix". */
#define NPU_NET_ADDRESS_MAX (INET6_ADDRSTRLEN + 4)

/* The RoCE address as text into buf[NPU_NET_ADDRESS_MAX], with "/<prefix>"
 * when with_prefix ("192.168.1.8/24"); false, buf empty, without one. */
static inline bool npu_net_address(const struct npu_net *net, bool with_prefix, char *buf)
{
	buf[0] = '\0';
	if (!net->has_ip || !inet_ntop(net->ipv6 ? AF_INET6 : AF_INET, net->ip, buf, INET6_ADDRSTRLEN)) {
		buf[0] = '\0';
		return false;
	}
	if (with_prefix) {
		size_t n = strlen(buf);
		buf[n++] = '/';
		unsigned p = net->prefix_len;
		if (p >= 100)
			buf[n++] = (char)('0' + p / 100);
		if (p >= 10)
			buf[n++] = (char)('0' + p / 10 % 10);
		buf[n++] = (char)('0' + p % 10);
		buf[n] = '\0';
	}
	return true;
}

/* The chip a vNPU id belongs to by the driver's numbering; -ERANGE below it. */
static inline int npu_vnpu_chip(uint32_t vnpu_id, uint32_t *ret_phy)
{
	if (vnpu_id < NPU_VNPU_FIRST_ID)
		return -ERANGE;
	*ret_phy = (vnpu_id - NPU_VNPU_FIRST_ID) / NPU_VNPUS_PER_CHIP;
	return 0;
}

/* Three-way comparison of phy ids, the order every chip list is kept in. */
static inline int npu_phy_compare(uint32_t a, uint32_t b)
{
	return (a > b) - (a < b);
}

/* qsort comparator for arrays of struct npu_chip, by phy id. */
static inline int npu_chip_compare_phy(const void *a, const void *b)
{
	return npu_phy_compare(((const struct npu_chip *)a)->phy_id, ((const struct npu_chip *)b)->phy_id);
}
