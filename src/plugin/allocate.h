/* SPDX-License-Identifier: Apache-2.0 */
/* Answers Allocate: validates each container request against the current
 * snapshot and builds the container response the kubelet hands to the
 * runtime, in the form the device-list strategies ask for:
 *
 *   native          the kubelet mounts the devices itself, so no Ascend
 *                   Docker Runtime is needed: DeviceSpecs for /dev/davinci<phy>
 *                   of each device and the family's shared nodes that exist,
 *                   read-only mounts of the driver paths that exist (as last
 *                   scanned, node/host_files.h), and ASCEND_VISIBLE_DEVICES;
 *   ascend-runtime  ASCEND_VISIBLE_DEVICES only: the Ascend Docker Runtime
 *                   mounts what it names;
 *   cdi             CDI device names <kind>=<phy> (cdi_devices, read by
 *                   runtimes from containerd 1.7.2 and CRI-O 1.28 on), the
 *                   same names in a cdi.k8s.io/ annotation (for older ones),
 *                   and ASCEND_VISIBLE_DEVICES, which the CDI spec cannot
 *                   carry (see node/cdi.h).
 *
 * Whatever the strategy, the answer also carries ASCEND_RT_VISIBLE_DEVICES
 * (node/visible.h) and, with a status directory, the live status file of
 * the container's set of chips (node/status_files.h): its directory mounted
 * read-only at STATUS_CONTAINER_DIR and ASCEND_NPU_STATUS naming the file,
 * and the set's device metadata (KEP-5304's file, node/device_metadata.h):
 * written into the same directory, mounted read-only at
 * ALLOCATE_METADATA_PATH, named by ASCEND_NPU_METADATA. Those are the file
 * system steps of Allocate: the set's directory is made the first time the
 * set is handed out and touched after that, and its metadata file written
 * when its text changes.
 *
 * Several strategies answer with the union of their parts, as NVIDIA's
 * device plugin does: each part reaches a different consumer, and the one
 * variable they share has the same value. */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include <grpc/status.h>

#include "npu/inventory.h"
#include "node/host_files.h"
#include "plugin/replica.h"

struct status_dirs;

/* The set's device metadata: its file's name in the set's directory, where
 * the container finds it, and the variable naming that. */
#define ALLOCATE_METADATA_FILE_NAME "metadata.json"
#define ALLOCATE_METADATA_PATH "/var/run/ascend/npu-metadata.json"
#define ALLOCATE_METADATA_ENV "ASCEND_NPU_METADATA"

/* Bounds container requests in one AllocateRequest (the kubelet sends one). */
#define ALLOCATE_MAX_CONTAINERS 64
#define ALLOCATE_MAX_ID_LENGTH 63

/* The parts of an answer, a set: what --device-list-strategy names. */
enum allocate_strategy {
	ALLOCATE_STRATEGY_NATIVE = 1u << 0,
	ALLOCATE_STRATEGY_ASCEND_RUNTIME = 1u << 1,
	ALLOCATE_STRATEGY_CDI = 1u << 2,
};

struct cdi_names;

struct allocate_options {
	unsigned strategies;          /* a set of ALLOCATE_STRATEGY_*; 0 answers as native */
	const struct cdi_names *cdi;  /* with ALLOCATE_STRATEGY_CDI: the spec's names */
	struct replica_options sharing; /* time-slicing: requests name replicas (plugin/replica.h) */
	/* Where the live status files of the chips' sets are kept
	 * (node/status_files.h); NULL: none are handed out. */
	struct status_dirs *status;
	/* The resource name, as the device metadata's driver and request;
	 * NULL: no metadata is handed out. Must outlive the options. */
	const char *resource;
};

/* Unpacks an AllocateRequest, validates it and packs the AllocateResponse
 * into a malloc'd buffer. Returns GRPC_STATUS_OK, INVALID_ARGUMENT (malformed
 * or bad IDs) or FAILED_PRECONDITION (an Unhealthy device), with a message
 * naming the problem in details. The shared nodes and driver paths are the
 * files' (the loop's last scan): Allocate touches no file system. With time-slicing the IDs are
 * replicas: each maps to its chip, and a chip named by several replicas is
 * given once (one DeviceSpec, one CDI name, once in ASCEND_VISIBLE_DEVICES). */
grpc_status_code allocate_answer(const struct npu_snapshot *snapshot, const struct host_files *files,
				 const struct allocate_options *options,
				 const uint8_t *request, size_t len, uint8_t **ret_body, size_t *ret_len,
				 char *details, size_t details_size);
