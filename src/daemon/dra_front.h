/* SPDX-License-Identifier: Apache-2.0 */
/* The DRA front end as the daemon runs it (--front-end=dra): the DRA driver
 * (dra/driver.h) with its DRA service on
 * <kubelet dir>/plugins/<driver>/dra.sock and the registration service on
 * <kubelet dir>/plugins_registry/<driver>-reg.sock, both served by the same
 * gRPC server machinery as the device plugin's socket, each with its own
 * threads (a claim read that blocks holds up DRA calls only). The kubelet's
 * plugin watcher finds the registration socket by itself, also after its
 * own restart; when either socket or its directory goes (the directory
 * wiped), both servers are stopped and started anew at the next check, so
 * the watcher finds them again. Each refresh hands the driver the latest
 * snapshot. Part of the top level: it logs. */
#pragma once

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>

#include "base/parse.h"
#include "config/config.h"
#include "dra/driver.h"
#include "dra/registration.h"
#include "grpc/server.h"
#include "plugin/observe.h"

struct dra_front {
	char node_name[K8S_DNS_SUBDOMAIN_MAX + 1];
	char plugin_dir[PATH_MAX];  /* <kubelet dir>/plugins/<driver> */
	char registry_dir[PATH_MAX]; /* <kubelet dir>/plugins_registry */
	char dra_socket[SOCKET_PATH_MAX];
	char reg_socket[SOCKET_PATH_MAX];
	struct dra_driver *driver;
	struct dra_registration registration;
	bool registration_ready;
	bool started; /* dra_front_start succeeded: the sockets are kept from then on */
	struct gs_server *dra_server, *reg_server;
	/* What was logged last, so each change is said once. */
	uint64_t notifications_seen;
	int serve_error;
};

/* Builds the driver (loading its checkpoint) for config; nothing is served
 * yet. reader is how claims are read (its get may be NULL: every prepare
 * then fails saying there is no API-server client). Returns 0, or a negative
 * errno with why. */
int dra_front_init(struct dra_front *front, const struct config *config, struct dra_claim_reader reader,
		   const struct host_paths *paths, char *why, size_t why_size);

/* Serves both sockets. Returns 0, or a negative errno with why. */
int dra_front_start(struct dra_front *front, char *why, size_t why_size);

/* At each refresh: hands the driver the snapshot and files, serves the
 * sockets anew when one went, and logs what the kubelet said of the
 * registration since the last call (and tells observe, for /healthz). */
void dra_front_refresh(struct dra_front *front, struct npu_snapshot *snapshot, struct host_files *files,
		       struct observe *observe);

/* Stops serving (the sockets are removed) and frees the driver. */
void dra_front_fini(struct dra_front *front);
