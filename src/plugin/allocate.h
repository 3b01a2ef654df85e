/* SPDX-License-Identifier: Apache-2.0 */
/* Answers Allocate: validates each container request against the current
 * snapshot and builds the container response the kubelet hands to the
 * runtime. The kubelet mounts the devices itself, so no Ascend Docker Runtime
 * is needed: /dev/davinci<phy> of each device, the family's shared nodes that
 * exist, the driver paths that exist (read-only), and ASCEND_VISIBLE_DEVICES. */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include <grpc/status.h>

#include "npu/inventory.h"

/* Bounds container requests in one AllocateRequest (the kubelet sends one). */
#define ALLOCATE_MAX_CONTAINERS 64
#define ALLOCATE_MAX_ID_LENGTH 63

struct allocate_paths {
	const char *dev_dir;     /* where device nodes are looked for */
	const char *host_root;   /* where the host's / is visible */
	const char *driver_path; /* host path of the driver */
};

/* Unpacks an AllocateRequest, validates it and packs the AllocateResponse
 * into a malloc'd buffer. Returns GRPC_STATUS_OK, INVALID_ARGUMENT (malformed
 * or bad IDs) or FAILED_PRECONDITION (an Unhealthy device), with a message
 * naming the problem in details. Existence of paths is checked now, so a path
 * that disappeared is no longer mounted. */
grpc_status_code allocate_answer(const struct npu_snapshot *snapshot, const struct allocate_paths *paths,
				 const uint8_t *request, size_t len, uint8_t **ret_body, size_t *ret_len,
				 char *details, size_t details_size);
