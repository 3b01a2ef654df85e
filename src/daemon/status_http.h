/* SPDX-License-Identifier: Apache-2.0 */
/* What the daemon shows about itself and the node without an API server:
 * the HTTP endpoint, /metrics (telemetry/metrics.h; a scrape also asks the
 * pod map for a newer list) and /healthz (the event loop, each resource the
 * device plugin serves as plugin/observe.h keeps it, and the DRA driver's
 * registration). A failed bind is said once and tried again at every
 * telemetry interval. The HTTP server runs on its own thread. Part of the
 * top level: it logs. */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "daemon/holders.h"
#include "http/server.h"
#include "plugin/observe.h"
#include "telemetry/metrics.h"

/* What the endpoint is made with, at init, never set after it. */
struct status_http_options {
	const char *addr;          /* "HOST:PORT"; empty: no HTTP endpoint */
	int64_t retry_ms;          /* how often a failed bind is tried again (said in the log) */
	const char *kubelet_socket; /* kubelet.sock: its absence is a legitimate wait */
	struct metrics *metrics;
	struct observe *observe;
	struct holders *holders;   /* may be NULL */
};

struct status_http;

/* Nothing is served before status_http_serve. Returns 0 or a negative
 * errno. */
int status_http_new(const struct status_http_options *options, struct status_http **ret_status);

/* Serves, unless it does already. On the loop. */
void status_http_serve(struct status_http *status);

/* The DRA driver's registration as the kubelet last notified it, for
 * /healthz: notified is false until the first NotifyRegistrationStatus;
 * a refusal (registered false) makes /healthz unhealthy. Accepts NULL. */
void status_http_dra(struct status_http *status, const char *driver, bool notified, bool registered,
		     const char *error);

/* Stops serving, frees. Accepts NULL. */
void status_http_free(struct status_http *status);
