/* SPDX-License-Identifier: Apache-2.0 */
/* The DRA driver's device metadata for the container (KEP-5304; the file's
 * format is node/device_metadata.h's): for each request of a prepared
 * claim, a file the container finds at a path it can derive from its pod
 * spec. The driver writes the file and mounts it through the claim's CDI
 * spec; the kubelet has no part in it. Layout as the upstream helper writes
 * it (k8s.io/dynamic-resource-allocation, kubeletplugin/metadata.go):
 *   /var/run/kubernetes.io/dra-device-attributes/resourceclaims/<claim>/<request>/<driver>-metadata.json
 *   /var/run/kubernetes.io/dra-device-attributes/resourceclaimtemplates/<pod claim>/<request>/<driver>-metadata.json
 * (the second for a claim made from a template: the pod's name for it). */
#pragma once

#include <stddef.h>

#include "dra/checkpoint.h"
#include "node/device_metadata.h"

#define DRA_METADATA_CONTAINER_DIR "/var/run/kubernetes.io/dra-device-attributes"

/* The file's text for the devices of request (its base name, without a
 * "/<subrequest>") of claim p, malloc'd in *ret_json. Returns 0, -EINVAL
 * for no devices or too many, -ENOMEM. */
int dra_metadata_render(const char *driver, const struct dra_prepared *p, const char *request,
			const struct device_metadata_device *devs, size_t n, char **ret_json);

/* Where the container finds that file, into buf. Returns 0 or -ENAMETOOLONG. */
int dra_metadata_container_path(const char *driver, const struct dra_prepared *p, const char *request, char *buf,
				size_t size);
