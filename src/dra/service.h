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
 * The method table's context is a struct dra_service.
 *
 * Nothing that needs no API server waits for one: unprepare, and the
 * claims of a prepare that are recorded already, are answered on the gRPC
 * thread at once. The other claims of a prepare are read by the claim
 * readers, threads of the service (at most DRA_SERVICE_READERS, made as
 * they are needed), each call's claims at once and all of them within one
 * deadline for the call (DRA_SERVICE_PREPARE_TIMEOUT_MS, or the kubelet's if
 * sooner), the calls taking turns for readers; the call is answered when
 * its last claim is. How many claims wait for reads is bounded too
 * (DRA_SERVICE_CLAIMS_IN_FLIGHT). A call the kubelet cancels, or whose
 * deadline passes, stops: its reads under way are abandoned, its claims not
 * read yet fail at once. */
#pragma once

#include <stddef.h>

#include "dra/driver.h"
#include "dra/health.h"
#include "grpc/server.h"

/* Claims one request may name: far more than a pod can reference. */
#define DRA_SERVICE_MAX_CLAIMS 128

/* Claims read from the API server at once, over all calls. A read takes
 * milliseconds from a server that is well, so a few threads keep up with
 * any kubelet; this many leave room for calls of several pods while the
 * server hangs. */
#define DRA_SERVICE_READERS 16

/* Claims of prepares waiting for their reads, over all calls: each holds
 * its answer's room (some 4 KiB) until its call is answered. A claim past
 * the bound fails at once (the kubelet retries it); calls whose claims are
 * all recorded are answered whatever the count. */
#define DRA_SERVICE_CLAIMS_IN_FLIGHT 512

/* The claims of a prepare are read by this long after the call came (or
 * the kubelet's deadline for the call, if sooner), however many there are.
 * The read sits on a pod's start: a claim read takes milliseconds from a
 * server that is well, and this leaves room for one under load, a TLS
 * handshake anew, or a Retry-After of a few seconds, while staying well
 * inside the kubelet's own deadline for the call (45 s), which retries a
 * failed prepare. */
#define DRA_SERVICE_PREPARE_TIMEOUT_MS 5000

struct dra_service;

/* The service of driver, with health's stream; no reader runs yet. Returns
 * 0 or -ENOMEM. */
int dra_service_new(struct dra_driver *driver, struct dra_health *health, struct dra_service **ret_service);

/* Stops the readers: call it once no server serves the service any more
 * (gs_server_stop answered every call). Accepts NULL. */
void dra_service_free(struct dra_service *service);

const struct gs_method *dra_service_methods(size_t *ret_count);
