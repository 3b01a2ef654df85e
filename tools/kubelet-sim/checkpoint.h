/* SPDX-License-Identifier: Apache-2.0 */
/* The kubelet_internal_checkpoint file kubelet-sim keeps in its directory, so
 * the directory looks like a kubelet's: a JSON document in the kubelet's
 * shape (pod device entries with the device IDs and the base64 of the packed
 * AllocateResponse, and the registered devices per resource), written
 * atomically (temporary file, then rename). It is a regular file, so a
 * (simulated) kubelet restart never deletes it. The checksum is left 0:
 * nothing reads the file back. */
#pragma once

#include <stdbool.h>

#include "sim.h"

bool checkpoint_exists(const struct sim *sim);

/* Writes the current allocations; call with sim->lock held. Returns 0 or a
 * negative errno (the previous file is then left as it was). */
int checkpoint_write(const struct sim *sim);
