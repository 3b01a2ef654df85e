/* SPDX-License-Identifier: Apache-2.0 */
/* What the DRA integration tests share of the kubelet's side of dra.sock:
 * the health stream read with a deadline. */
#pragma once

#include <stdint.h>

#include "dra_health.pb-c.h"
#include "grpc/client.h"

/* The stream's next message, by deadline_ms (now_ms); fails the test when
 * none comes. The caller frees it (v1__node_watch_resources_response__free_unpacked). */
V1__NodeWatchResourcesResponse *dra_health_next(struct gc_stream *stream, int64_t deadline_ms);
