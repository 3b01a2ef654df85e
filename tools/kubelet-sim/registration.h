/* SPDX-License-Identifier: Apache-2.0 */
/* The simulated kubelet's life cycle and its Registration service: starting
 * (create the device-plugins dir, delete every socket file in it, serve
 * kubelet.sock), the Register handler (validation like the kubelet, dial-back
 * with GetDevicePluginOptions before answering, then a follower for the new
 * plugin's ListAndWatch), and stopping (server first, then every follower,
 * then every plugin connection), which `restart` and `quit` use. */
#pragma once

#include "sim.h"

/* Like a kubelet start. Returns 0 or a negative errno (and logs why). */
int kubelet_start(struct sim *sim);

/* Stops serving kubelet.sock (gRPC unlinks it), ends every followed stream
 * with the given details, and forgets every registered plugin. Device lists
 * (now unhealthy) and allocations are kept, like the kubelet's checkpoint. */
void kubelet_stop(struct sim *sim, const char *reason);

