/* SPDX-License-Identifier: Apache-2.0 */
/* What the driver serves on its dra.sock: the kubelet's DRA plugin service,
 * NodePrepareResources and NodeUnprepareResources, under the method paths of
 * both DRA API versions the kubelet speaks (v1 and v1beta1, the same
 * messages; proto/dra_api.h), and the health service's NodeWatchResources
 * (dra/health.h). Each claim of a request is prepared or unprepared by the
 * driver (dra/driver.h) on its own, and its answer carries its devices or
 * its error; a request that cannot be decoded, names more than
 * DRA_SERVICE_MAX_CLAIMS claims or a claim whose uid, namespace or name is
 * longer than the driver records (DRA_UID_MAX - 1, K8S_NAME_MAX,
 * K8S_DNS_SUBDOMAIN_MAX) is answered INVALID_ARGUMENT as a whole, naming
 * the field, never echoing it.
 * The method table's context is a struct dra_service. */
#pragma once

#include <stddef.h>

#include "dra/driver.h"
#include "dra/health.h"
#include "grpc/server.h"

/* Claims one request may name: far more than a pod can reference. */
#define DRA_SERVICE_MAX_CLAIMS 128

struct dra_service {
	struct dra_driver *driver;
	struct dra_health *health;
};

const struct gs_method *dra_service_methods(size_t *ret_count);
