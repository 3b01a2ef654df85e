/* SPDX-License-Identifier: Apache-2.0 */
/* kubelet-sim's pod resources API (v1 PodResourcesLister, see
 * proto/podresources.proto): List answers from kubelet-sim's own
 * allocations, GetAllocatableResources with every device of every followed
 * resource; Get is not served (UNIMPLEMENTED). An allocation made with
 * `allocate` belongs to pod "kubelet-sim-pod-<serial>" in namespace
 * "default", container "container-<serial>" (the names of the checkpoint).
 * Handlers take sim->lock. */
#pragma once

#include "sim.h"

/* Serves the API on the unix socket at path, whose directory must exist.
 * Returns 0 or a negative errno as gs_server_start. */
int podresources_start(struct sim *sim, const char *path);

/* Stops serving; the socket file is removed. Does nothing when not started. */
void podresources_stop(struct sim *sim);
