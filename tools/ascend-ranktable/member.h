/* SPDX-License-Identifier: Apache-2.0 */
/* One member's chips, read from where the two front ends put them: the
 * JSON array of ASCEND_NPU_NETWORK (node/visible.h), which the device
 * plugin gives the container and this program then publishes as its pod's
 * annotation, and a ResourceClaim whose status.devices[] entries of the NPU
 * driver carry the same objects as data. Everything read here comes from
 * outside (another pod's annotation, a claim anyone in the namespace may
 * write), so every field is type-checked and bounded, and anything odd is
 * refused with its reason rather than guessed. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include <json-c/json.h>

#include "hccl/ranktable.h"

/* ASCEND_NPU_NETWORK or the annotation: 16 chips of about 170 bytes each
 * fit four times over. */
#define RT_NETWORK_MAX 8192
/* A family's name ("910B", "A3", "910_93"): far more than any. */
#define RT_FAMILY_MAX 16
/* A device id is a chip's phy id: /dev/davinci<id>. */
#define RT_DEVICE_ID_MAX 65535u

/* The chips of one member, with the storage their strings point into. */
struct rt_chips {
	size_t n;
	struct hccl_chip chips[HCCL_RANKTABLE_MAX_CHIPS];
	char ips[HCCL_RANKTABLE_MAX_CHIPS][HCCL_IP_TEXT_MAX + 1];
	char family[RT_FAMILY_MAX]; /* every chip's, the same */
};

/* s as it may go into a one-line reason: control characters escaped
 * (base/log.h's log_text_escape), cut to fit buf[size]. Returns buf. */
const char *rt_printable(const char *s, char *buf, size_t size);

/* Adds one chip's object (node/visible.h's fields: device_id and family
 * required; device_ip with prefix_len, link, and the three super pod
 * fields all or none, optional) to *chips. Returns 0, or -EINVAL (a field
 * missing, of the wrong type or out of range, a device_ip that is no IPv4
 * or IPv6 address, a family other than the chips' before), -E2BIG (more
 * than HCCL_RANKTABLE_MAX_CHIPS), with why naming the field. */
int rt_chip_add(struct json_object *object, struct rt_chips *chips, char *why, size_t why_size);

/* Parses len bytes (at most RT_NETWORK_MAX) of a JSON array of such objects,
 * as ASCEND_NPU_NETWORK and the annotation hold, into *ret_chips (at least
 * one chip). Returns 0, or -EINVAL / -E2BIG with why said. */
int rt_network_parse(const char *text, size_t len, struct rt_chips *ret_chips, char *why, size_t why_size);

/* Reads the chips of a ResourceClaim (the API server's JSON) that the
 * driver's devices hold: for every result of the driver in
 * status.allocation.devices.results, the status.devices[] entry of the same
 * driver, pool and device, and its data. Adds them to *chips (a pod may
 * have several claims). Returns 0; -EAGAIN when the claim is not allocated
 * or a device of the driver has no data yet (not prepared), with why saying
 * which; -ENOENT when the claim has no device of the driver; -EINVAL,
 * -E2BIG or -EBADMSG for what cannot be used, with why said. */
int rt_claim_chips(const char *body, size_t len, const char *driver, struct rt_chips *chips, char *why,
		   size_t why_size);
