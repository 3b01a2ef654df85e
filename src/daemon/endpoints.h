/* SPDX-License-Identifier: Apache-2.0 */
/* The set of endpoints the daemon serves: what is advertised (the
 * configuration's resources, then one per vNPU template seen since the
 * start or the last reload), each resource served by the endpoint of the
 * same index once built. It builds the missing ones, starts them once the
 * daemon serves, sends each its view of the devices, feeds them the events
 * that concern every resource, and across a reload keeps the endpoints of
 * resources that stay as they were. Part of the top level: it logs. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "daemon/consumers.h"
#include "grpc/cq.h"
#include "daemon/node.h"
#include "loop/loop.h"
#include "npu/inventory.h"
#include "plugin/allocate.h"
#include "plugin/endpoint.h"
#include "node/host_files.h"
#include "plugin/observe.h"
#include "plugin/resources.h"
#include "plugin/session.h"

struct endpoint_set_options {
	struct loop *loop;
	const char *kubelet_socket;        /* must outlive the set */
	struct allocate_options allocate;  /* copied by each endpoint's service */
	struct observe *observe;
	const struct node_session *node;   /* how a resource built later joins; outlives the set */
};

struct endpoint_set {
	struct endpoint_set_options options;
	struct cq_runner *registrar_runner; /* one thread for every resource's Register calls */
	struct resource_set resources;
	struct endpoint *endpoints[RESOURCES_MAX];
	bool publish_due; /* an endpoint was built or the resources changed: publish even if the devices did not */
};

/* Returns 0, or a negative errno when the registrars' thread cannot start. */
int endpoint_set_init(struct endpoint_set *set, const struct endpoint_set_options *options,
		      const struct resource_set *resources);

/* Stops and frees every endpoint (their sockets are removed). */
void endpoint_set_fini(struct endpoint_set *set);

/* Builds the endpoint of every resource that has none, and once the node
 * serves has it join the others (daemon/node.h): it starts, or waits for the
 * directory with them. One whose socket cannot be served yet keeps trying by
 * itself (its session's retry). Returns 0, or the first failure to build
 * one (tried again at the next call) with why naming the resource; the
 * others are still built. */
int endpoint_set_ensure(struct endpoint_set *set, char *why, size_t why_size);

/* Builds every endpoint, sends each its devices and starts them: the first
 * that cannot be had stops the start (why says which and why). */
int endpoint_set_start(struct endpoint_set *set, const struct npu_snapshot *all, struct host_files *files, char *why,
		       size_t why_size);

/* Sends each endpoint its view of all and the host files. */
void endpoint_set_publish(struct endpoint_set *set, const struct npu_snapshot *all, struct host_files *files);

/* A snapshot consumer (daemon/consumers.h; ctx: the set): publishes the
 * device plugin's view when there is news for the endpoints (the devices,
 * the files, an endpoint built or the resources changed). */
void endpoint_set_consume(void *set, const struct snapshot_news *news);

/* Feeds an event to every endpoint. */
void endpoint_set_broadcast(struct endpoint_set *set, enum session_event event, const struct session_event_data *data);

/* The socket file of each resource marked in gone was deleted: those whose
 * file is still missing were deleted by someone else. */
void endpoint_set_sockets_deleted(struct endpoint_set *set, const bool gone[RESOURCES_MAX]);

/* Takes grown, the set's resources with more appended (a vNPU template's),
 * as what is advertised: the new ones are built at the next
 * endpoint_set_ensure. */
void endpoint_set_grow(struct endpoint_set *set, const struct resource_set *grown);

/* Takes next as what is advertised: endpoints of resources that stay as
 * they were are kept, the others stop (what names the reason in logs). */
void endpoint_set_replace(struct endpoint_set *set, const struct resource_set *next, const char *what);
