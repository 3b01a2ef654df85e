/* SPDX-License-Identifier: Apache-2.0 */
/* Device metadata for the container (KEP-5304, "DRA Device Attributes
 * Downward API", beta in Kubernetes 1.37): a JSON file naming the devices a
 * container got with their attributes, in the format the upstream helper
 * writes (k8s.io/dynamic-resource-allocation, api/metadata): a stream of the
 * same DeviceMetadata object once per API version, newest first
 * (metadata.resource.k8s.io/v1beta1, then v1alpha1), so that a reader of
 * either finds its own:
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
 * container (ASCEND_RT_VISIBLE_DEVICES, node/visible.h).
 *
 * Both front ends write it: the DRA driver one file per request of a
 * claim (dra/metadata.h), the device plugin one per set of chips it hands
 * out (plugin/allocate.h). The device plugin knows no claim: its file
 * leaves out what it does not know (the claim's name, namespace and uid,
 * the pool) and names the resource as driver and request. Pure; never
 * logs. */
#pragma once

#include <stddef.h>

#include "base/json_put.h"
#include "npu/inventory.h"

/* Devices one file lists at most (a CDI group's bound, a status file's). */
#define DEVICE_METADATA_MAX_DEVICES 64

/* Whose devices they are; a NULL or empty field is left out. */
struct device_metadata_owner {
	const char *name, *namespace, *uid;
	const char *pod_claim; /* the pod's name for a claim made from a template */
};

/* One device, and its place among the container's devices. */
struct device_metadata_device {
	const struct npu_device *device;
	const char *pool; /* NULL: left out */
	size_t logical_id;
};

/* The file's text for the devices of request, handed out by driver, malloc'd
 * in *ret_json. Returns 0, -EINVAL for no devices or more than
 * DEVICE_METADATA_MAX_DEVICES, -ENOMEM. */
int device_metadata_render(const char *driver, const struct device_metadata_owner *owner, const char *request,
			   const struct device_metadata_device *devs, size_t n, char **ret_json);

/* Adds "networkData": {"ips": ["<address>/<prefix>"]} to o for a chip whose
 * RoCE port has an address (KEP-4817's NetworkDeviceData, which the DRA
 * driver also puts in a claim's device status); nothing otherwise. */
void device_metadata_put_network_data(struct json_put *b, json_object *o, const struct npu_device *d);
