/* SPDX-License-Identifier: Apache-2.0 */
/* The ResourceSlices (resource.k8s.io/v1) that describe this node's chips to
 * the scheduler, built from an inventory snapshot as json-c objects: one
 * pool named after the node, one device per chip named like the device
 * plugin's ids ("npu-<phy>"), typed attributes for what claims select and
 * constrain on, HBM and AI cores as capacity, and an Unhealthy chip tainted
 * NoSchedule (DRADeviceTaints, GA and on by default in Kubernetes 1.37), so
 * that the scheduler allocates it to no new claim while it stays listed.
 *
 * Attributes (unqualified names are in the driver's domain):
 *   type                      "chip" or "vnpu"
 *   family, product           "910B", "910B3" (strings; product when DCMI named the chip)
 *   physicalID, logicID       ints: the N of /dev/davinciN, DCMI's logic id
 *   card, chip                ints: DCMI's card and chip-on-card (die) ids
 *   interconnect              "hccs-ring", "hccs-mesh", "die-pair", "card" or "pcie"
 *   interconnectGroup         "hccs-ring-1": chips that share one ring, mesh, die pair or card
 *   driverVersion, firmwareVersion   a DRA version when the text is semantic versioning, else a string
 *   resource.kubernetes.io/pciBusID  "0000:3b:00.0" (the standard name)
 *   resource.kubernetes.io/numaNode  int, only where the kernel knows the node
 *   resource.kubernetes.io/pcieRoot  "pci0000:3a", the root complex (where sysfs shows it),
 *                             so a RoCE NIC another driver publishes can be aligned with the chip
 *   roceIP                    the RoCE port's address (HCCL's device_ip), where it has one
 *   roceLink                  "up", "down" or "unknown" (no port, no detection address)
 *   roceLinkUp                bool, on every chip: a multi-node claim selects roceLinkUp == true
 *   superPodID, superDeviceID, serverIndex   ints, A3 chips in a super pod (SDID is superDeviceID)
 * Capacity: memory (HBM bytes, when known) and aiCores (when DCMI said).
 *
 * vNPUs (the static ones an administrator made with npu-smi) are partitions
 * of their chip (DRAPartitionableDevices, beta in 1.37): each chip carved
 * into vNPUs gets a counter set "npu-<phy>" with counters aicores and
 * memory (what DCMI said of the chip), and each vNPU is a device "vnpu-<id>"
 * that consumes its template's AI cores and HBM from it (npu/vnpu.h; a
 * counter the template or the chip leaves unknown is neither offered nor
 * consumed). A vNPU carries type, family, product, physicalID (its chip's),
 * vnpuID (the N of /dev/vdavinciN), template, dynamic (false), card, chip, the versions,
 * pciBusID, pcieRoot and numaNode of its chip (no network identity: HCCL
 * jobs across servers use whole chips), and capacity aiCores and memory of its
 * template. It carries no interconnect attributes: HCCS links join whole
 * chips, and a claim matching vNPUs on a ring would be promised nothing. A
 * vNPU whose template is unknown (found by its device node only) is not
 * published, as the device plugin lists it under no resource.
 *
 * The chip itself stays withheld while it carries vNPUs, as the device
 * plugin withholds it: the vNPUs exist on the chip whether or not they are
 * allocated, so handing the chip out whole would give one container the AI
 * cores and HBM that another's vNPU already holds. The counters cannot say
 * so (a whole chip consuming all of them would only be refused while a vNPU
 * is allocated); they are there so that the scheduler, and people reading
 * the slices, see what each vNPU takes of which chip.
 *
 * Taints by fault level: an Unhealthy device is tainted npu.ascend.com/unhealthy
 * with effect NoSchedule, or NoExecute for the levels the operator chose
 * (--dra-no-execute-levels: Kubernetes then evicts the pods that use it);
 * a chip in service at the level SubHealthFault carries
 * npu.ascend.com/sub-health with the effect None, which schedules as
 * before and tells what the policy saw. The value names the level and
 * the code where the fault policy judged the chip (facts.taint_value).
 *
 * Time-slicing (sharing.timeSlicing of the config): a chip whose resource
 * is time-sliced with R replicas is published with allowMultipleAllocations
 * (DRAConsumableCapacity, beta in 1.37) and a capacity "shares" of R, of
 * which each allocation takes exactly one (requestPolicy default 1, valid
 * values [1]), so that at most R claims hold the chip at once. Its memory
 * and aiCores are not divided among the sharers: they get requestPolicy
 * default 0 and valid values [0], since without a default an allocation
 * that names no amount would take them whole, and a claim asking for a
 * part of them would be promised a split that time-slicing does not make.
 *
 * Dynamic vNPUs (chips whose facts say carve_on_demand): such a chip is published
 * whole and as every placement of its family's templates (node/partitions.h),
 * "npu-<phy>-<template>-<k>", each a vNPU device (type "vnpu", dynamic
 * true, template, the chip's identity, interconnect and versions, capacity
 * of its template). Its counter set "npu-<phy>" holds the chip's AI cores
 * and HBM; the whole chip consumes all of them and each placement its
 * template's share, so a chip is allocated either whole or in partitions
 * that fit, never both. The vNPUs created for claims are not devices of
 * their own: the published set does not change when one is made.
 *
 * Slices: the devices first, then the counter sets in slices of their own
 * (in 1.37 a slice holds devices or sharedCounters, never both; a device
 * may consume from a counter set in any slice of its pool), at most
 * KUBE_SLICE_MAX_COUNTER_SETS per slice.
 *
 * Older API servers: taints, counters and shared capacity sit behind
 * feature gates that are off by default before Kubernetes 1.36, and an API
 * server whose gate is off does not refuse such a slice: it stores it
 * without the fields (dropDisabledFields in
 * pkg/registry/resource/resourceslice/strategy.go). The slice would then
 * promise what nobody keeps: a chip and its vNPUs as independent devices
 * (the same AI cores allocated twice), an Unhealthy chip that looks
 * allocatable, a time-sliced chip served to one claim. So the publisher
 * finds out what the server keeps (kube/publisher.h), and params.lacking
 * says what it drops; the slices then leave out what cannot be said safely
 * without it:
 *   KUBE_LACKS_TAINTS (DRADeviceTaints): an Unhealthy device is left out,
 *     as before taints existed (a claim that holds it keeps it), and the
 *     sub-health taint, which only informs, is not published;
 *   KUBE_LACKS_PARTITIONS (DRAPartitionableDevices): no counter sets and no
 *     device that consumes counters: static vNPUs and the placements of
 *     dynamic vNPUs are not published, a chip carrying any vNPU stays
 *     withheld, and a chip to carve on demand that carries none is
 *     published whole, as a plain chip;
 *   KUBE_LACKS_SHARING (DRAConsumableCapacity): a time-sliced chip is
 *     published as a plain chip (no allowMultipleAllocations, no shares,
 *     no request policies), which the scheduler gives one claim at a time.
 * kube_slice_probe builds the slice that asks, kube_slice_dropped reads the
 * answer (and the answer to every write). */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include <json-c/json.h>

#include "npu/inventory.h"

#define KUBE_DRIVER_DEFAULT "npu.ascend.com"
/* Devices per slice: the API's limit, and its limit when any device of a
 * slice carries a taint (resource/v1 ResourceSliceMaxDevices and
 * ResourceSliceMaxDevicesWithAdvancedFeatures). */
#define KUBE_SLICE_MAX_DEVICES 128
#define KUBE_SLICE_MAX_DEVICES_TAINTED 64
/* The same limit holds when any device of a slice consumes counters, and a
 * slice holds at most 8 counter sets (ResourceSliceMaxCounterSets). */
#define KUBE_SLICE_MAX_COUNTER_SETS 8
/* The taint of an Unhealthy chip; its value names the fault. */
#define KUBE_TAINT_UNHEALTHY_KEY "npu.ascend.com/unhealthy"

/* A driver name: a DNS subdomain of at most 63 characters (resource/v1
 * DriverNameMaxLength). */
#define KUBE_DRIVER_NAME_MAX 63
/* A string or version attribute's value (DeviceAttributeMaxValueLength):
 * a version longer than this is left out. */
#define KUBE_ATTRIBUTE_VALUE_MAX 64

/* A slice's metadata.name: at most 253 characters and a terminator. */
#define KUBE_NAME_MAX 254

/* The taint a device's fault policy asks for (see the top of this file). */
enum kube_taint {
	KUBE_TAINT_AS_HEALTH,  /* NoSchedule while the device is Unhealthy, none otherwise */
	KUBE_TAINT_NO_EXECUTE, /* Unhealthy at a level whose pods must go: NoExecute */
	KUBE_TAINT_SUB_HEALTH, /* in service but sub-health: the informational effect None */
};
/* A taint's value: a label value. */
#define KUBE_TAINT_VALUE_MAX 64
/* The taint of a chip in service at a sub-health level. */
#define KUBE_TAINT_SUB_HEALTH_KEY "npu.ascend.com/sub-health"

/* What the daemon knows of a device beyond the inventory. */
struct kube_device_facts {
	uint64_t hbm_bytes; /* 0: unknown */
	/* Time-slicing: how many claims may hold the chip at once; 0 or 1:
	 * one (not shared). */
	uint32_t shares;
	/* Dynamic vNPUs (node/partitions.h): a chip to carve on demand; a vNPU
	 * the DRA driver made for a claim, which is a placement at work, not a
	 * device of its own. A chip to carve that carries any other vNPU (an
	 * administrator's) is served as before, with its static vNPUs: the two
	 * are never mixed on a chip. */
	bool carve_on_demand;
	bool made_for_claim;
	/* The taint's effect and value ("SeparateNPU-80E01801": the fault
	 * policy's level and code); an empty value: the fault in a few words
	 * ("health-critical"). A placement takes its chip's. */
	enum kube_taint taint;
	char taint_value[KUBE_TAINT_VALUE_MAX];
};

/* What the API server drops (see the top of this file): a mask. */
#define KUBE_LACKS_TAINTS 0x1u     /* device taints (DRADeviceTaints) */
#define KUBE_LACKS_PARTITIONS 0x2u /* sharedCounters, consumesCounters (DRAPartitionableDevices) */
#define KUBE_LACKS_SHARING 0x4u    /* allowMultipleAllocations, requestPolicy (DRAConsumableCapacity) */
#define KUBE_LACKS_ALL 0x7u

struct kube_slice_params {
	const char *driver;    /* NULL: KUBE_DRIVER_DEFAULT */
	const char *node_name; /* the pool's name too */
	const char *node_uid;  /* the Node's metadata.uid for the owner reference; NULL: none */
	int64_t generation;    /* the pool's */
	const char *driver_version;   /* NULL or "": unknown */
	const char *firmware_version; /* NULL or "": unknown */
	/* What the snapshot does not say, per device by index in it; NULL:
	 * nothing known. */
	const struct kube_device_facts *facts;
	unsigned lacking; /* KUBE_LACKS_*: what the API server drops */
};

/* Builds the slices: *ret_slices is a json array of ResourceSlice objects,
 * named by kube_slice_name(i), each with the pool's generation and the
 * number of slices. A node without devices to publish gets no slice (an
 * empty array): its pool then simply has none. Devices are split at
 * KUBE_SLICE_MAX_DEVICES, or at KUBE_SLICE_MAX_DEVICES_TAINTED when any
 * device is tainted or consumes counters; the counter sets follow in
 * slices of up to KUBE_SLICE_MAX_COUNTER_SETS. Returns 0, -EINVAL (no node name, or one that is not a
 * DNS subdomain, or a driver name that kube_driver_name_ok refuses) or
 * -ENOMEM. */
int kube_slices_build(const struct npu_snapshot *snapshot, const struct kube_slice_params *params,
		      json_object **ret_slices);

/* The probe (see the top of this file): a slice of the node's pool as
 * params say (the name "<node>-<driver>-probe", which no slice of the pool
 * has) with one device that carries each field params.lacking covers: a
 * taint, a consumption from a counter set (of no slice: a dry run is not
 * checked against other objects), allowMultipleAllocations and a capacity
 * with a request policy. It is meant for a server-side dry run only.
 * Returns 0, -EINVAL (as kube_slices_build) or -ENOMEM. */
int kube_slice_probe(const struct kube_slice_params *params, json_object **ret_probe);

/* What the API server dropped of the slice sent when it answered with
 * stored (both whole ResourceSlice objects): the KUBE_LACKS_* bits of each
 * field sent that stored lacks. Devices are matched by name; a device or
 * a spec that stored does not have at all counts for nothing. */
unsigned kube_slice_dropped(json_object *sent, json_object *stored);

/* The KUBE_LACKS_* bits of the gated fields any slice of the array carries
 * (a taint, counters, shared capacity): none, and what the server keeps
 * does not matter to them. */
unsigned kube_slices_gated(json_object *slices);

/* The name of slice index of the node's pool: "<node>-<driver>-<index>";
 * a node name too long for that is cut and followed by a hash of it.
 * Returns 0 or -EINVAL (nothing fits). */
int kube_slice_name(const char *node_name, const char *driver, size_t index, char out[KUBE_NAME_MAX]);

/* Whether driver is a valid driver name (KUBE_DRIVER_NAME_MAX). */
bool kube_driver_name_ok(const char *driver);

/* Whether text is a semantic version (semver.org 2.0.0), which a DRA
 * `version` attribute must be. */
bool kube_is_semver(const char *text);
