/* SPDX-License-Identifier: Apache-2.0 */
/* Device metadata for the container (KEP-5304, "DRA Device Attributes
 * Downward API", beta in Kubernetes 1.37): for each request of a prepared
 * claim, a JSON file the container finds at a path it can derive from its
 * pod spec, naming the devices it got with their attributes. The driver
 * writes the file and mounts it through the claim's CDI spec; the kubelet
 * has no part in it. Layout and format as the upstream helper writes them
 * (k8s.io/dynamic-resource-allocation, kubeletplugin/metadata.go and
 * api/metadata):
 *   /var/run/kubernetes.io/dra-device-attributes/resourceclaims/<claim>/<request>/<driver>-metadata.json
 *   /var/run/kubernetes.io/dra-device-attributes/resourceclaimtemplates/<pod claim>/<request>/<driver>-metadata.json
 * (the second for a claim made from a template: the pod's name for it); the
 * file is a stream of the same DeviceMetadata object once per API version,
 * newest first (metadata.resource.k8s.io/v1beta1, then v1alpha1), so that a
 * reader of either finds its own:
 *   {"kind":"DeviceMetadata","apiVersion":"metadata.resource.k8s.io/v1beta1",
 *    "metadata":{"name":..,"namespace":..,"uid":..,"generation":1},
 *    "podClaimName":..,"requests":[{"name":"npu","devices":[{"driver":..,
 *    "pool":..,"name":"npu-2","attributes":{"family":{"string":"910B"},...},
 *    "networkData":{"ips":["192.168.1.12/24"]}}]}]}
 * Attributes are named as in the ResourceSlices (kube/slices.h): type,
 * family, physicalID, card, chip, vnpuID and template for a vNPU,
 * interconnect and interconnectGroup (node/topology.h), roceIP,
 * resource.kubernetes.io/pciBusID and numaNode where known; besides them
 * containerLogicalID, the number CANN gives the device inside the
 * container (ASCEND_RT_VISIBLE_DEVICES). */
#pragma once

#include <stddef.h>

#include "dra/checkpoint.h"
#include "npu/inventory.h"

#define DRA_METADATA_CONTAINER_DIR "/var/run/kubernetes.io/dra-device-attributes"

/* One device of a request, and its place among the container's devices. */
struct dra_metadata_device {
	const struct npu_device *device;
	const char *pool;
	size_t logical_id;
};

/* The file's text for the devices of request (its base name, without a
 * "/<subrequest>") of claim p, malloc'd in *ret_json. Returns 0, -EINVAL
 * for no devices, -ENOMEM. */
int dra_metadata_render(const char *driver, const struct dra_prepared *p, const char *request,
			const struct dra_metadata_device *devs, size_t n, char **ret_json);

/* Where the container finds that file, into buf. Returns 0 or -ENAMETOOLONG. */
int dra_metadata_container_path(const char *driver, const struct dra_prepared *p, const char *request, char *buf,
				size_t size);
