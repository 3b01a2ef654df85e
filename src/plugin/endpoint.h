/* SPDX-License-Identifier: Apache-2.0 */
/* One advertised resource's link with the kubelet: its socket and gRPC
 * server, its DevicePlugin service, its registrar and the session state
 * machine (plugin/session.h) that drives them, with the session's timers.
 * The daemon owns one per resource (plugin/resources.h), all on its loop,
 * and feeds each the events that concern it: the kubelet's directory, its
 * own socket file, SIGHUP and SIGTERM.
 *
 * It is a part of the daemon's top level, split off so that the daemon can
 * serve several resources: it logs what happens to its registration,
 * naming its resource when the daemon serves more than one. */
#pragma once

#include <stdbool.h>

#include "grpc/cq.h"
#include "loop/loop.h"
#include "npu/inventory.h"
#include "plugin/allocate.h"
#include "plugin/observe.h"
#include "plugin/resources.h"
#include "plugin/session.h"

struct endpoint;

struct endpoint_options {
	struct loop *loop;
	struct cq_runner *registrar_runner; /* shared by every endpoint's registrar */
	const struct resource_def *def; /* copied */
	const char *kubelet_socket;     /* <socket_dir>/kubelet.sock */
	struct allocate_options allocate; /* its sharing is replaced by def's */
	bool name_in_logs;                /* prefix log lines with the resource name */
	struct observe_resource *observe; /* its metrics and /healthz state (may be NULL) */
};

/* Builds everything but the socket: nothing is served before
 * endpoint_start. On failure why says what could not be had. */
int endpoint_new(const struct endpoint_options *options, struct endpoint **ret_endpoint, char *why,
		 size_t why_size);

/* Stops serving (the socket is removed) and frees it. Accepts NULL and
 * half-built endpoints. */
void endpoint_free(struct endpoint *endpoint);

/* Binds the socket and starts registering. Returns 0, or the bind's
 * negative errno. With retry the session tries the bind again every second
 * (said once in the log, and when it works); without, the caller gives up
 * (the daemon cannot start) and frees the endpoint. */
int endpoint_start(struct endpoint *endpoint, bool retry);

/* Makes view (the devices of this resource) what ListAndWatch sends, when
 * it differs from what was sent last, and files what Allocate adds besides
 * the chips. Returns 0 or -ENOMEM. */
int endpoint_publish(struct endpoint *endpoint, struct npu_snapshot *view, struct host_files *files);

/* Which kubelet.sock is at kubelet_socket now (all zero when none): a
 * kubelet that restarts creates a new file. */
struct session_kubelet endpoint_kubelet_at(const char *kubelet_socket);

/* Feeds one event to the session: the kubelet's directory, a new kubelet,
 * SIGHUP, SIGTERM. */
void endpoint_handle(struct endpoint *endpoint, enum session_event event, const struct session_event_data *data);

/* Its socket file was removed by someone else (the daemon saw the name go
 * and the path is still missing). */
void endpoint_socket_deleted(struct endpoint *endpoint);

const struct resource_def *endpoint_def(const struct endpoint *endpoint);
