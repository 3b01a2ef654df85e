/* SPDX-License-Identifier: Apache-2.0 */
/* The liveness and readiness probe's client (--probe): asks a running
 * plugin for its DevicePluginOptions, which it refuses while its event loop
 * is stuck (plugin/service.h). */
#pragma once

#include <stddef.h>

#define PROBE_TIMEOUT_MS 2000

/* Returns 0 when the plugin at socket_path answers OK within
 * PROBE_TIMEOUT_MS, or a negative errno with why. */
int probe_plugin(const char *socket_path, char *why, size_t why_size);
