/* SPDX-License-Identifier: Apache-2.0 */
/* The DRA front end as the daemon runs it (--front-end=dra): the DRA driver
 * (dra/driver.h) with its DRA service on
 * <kubelet dir>/plugins/<driver>/dra.sock and the registration service on
 * <kubelet dir>/plugins_registry/<driver>-reg.sock, both served by the same
 * gRPC server machinery as the device plugin's socket, each with its own
 * threads (and the claims' reads on the DRA service's readers, so that
 * nothing but the prepares that need the API server waits for it). The kubelet's
 * plugin watcher finds the registration socket by itself, also after its
 * own restart; when either socket or a directory on its path goes (seen
 * through inotify, and checked again at every refresh), both servers are
 * stopped and started anew, so the watcher finds them again. Each refresh
 * hands the driver the latest snapshot; the kubelet's
 * NotifyRegistrationStatus is logged as it comes. With an instance
 * (config.instance, a surge roll) the sockets are dra-<instance>.sock and
 * <driver>-<instance>-reg.sock, and the driver shares its checkpoint with
 * the other instance under a lock (dra/driver.h). Part of the top level: it
 * logs. */
#pragma once

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>

#include "base/parse.h"
#include "config/config.h"
#include "dra/driver.h"
#include "dra/health.h"
#include "dra/service.h"
#include "dra/registration.h"
#include "grpc/server.h"
#include "loop/loop.h"
#include "daemon/status_http.h"
#include "plugin/resources.h"

struct dra_front {
	struct loop *loop;
	struct status_http *status;
	char node_name[K8S_DNS_SUBDOMAIN_MAX + 1];
	char kubelet_dir[PATH_MAX];
	char plugins_dir[PATH_MAX]; /* <kubelet dir>/plugins */
	char plugin_dir[PATH_MAX];  /* <kubelet dir>/plugins/<driver> */
	char registry_dir[PATH_MAX]; /* <kubelet dir>/plugins_registry */
	char dra_socket[SOCKET_PATH_MAX];
	char reg_socket[SOCKET_PATH_MAX];
	char lock_path[PATH_MAX];    /* <plugin dir>/DRA_LOCK_FILE: the instances' lock */
	struct dra_driver *driver;
	struct npu_chip_select dynamic; /* --dra-dynamic-vnpus, for the health of placements */
	bool has_dynamic;
	struct dra_health *health;
	struct dra_service *service; /* the dra.sock methods' context */
	struct dra_registration registration;
	bool registration_ready;
	bool started; /* dra_front_start succeeded: the sockets are kept from then on */
	struct gs_server *dra_server, *reg_server;
	int inotify_fd; /* on the directories of the sockets' paths; -1 before start */
	struct loop_async *notified; /* a NotifyRegistrationStatus came */
	void (*registered)(void *ctx); /* the options' hook */
	void *registered_ctx;
	/* What was logged last, so each change is said once. */
	uint64_t notifications_seen;
	int serve_error;
};

/* What the front end is made with, at init, never set after it. */
struct dra_front_options {
	const struct config *config;
	/* How claims are read (its get may be NULL: every prepare then fails
	 * saying there is no API-server client). */
	struct dra_claim_reader reader;
	const struct host_paths *paths;
	struct loop *loop;
	struct status_http *status; /* hears the registration for /healthz (may be NULL) */
	struct status_dirs *npu_status; /* the claims' live status files (may be NULL: none) */
	/* What creates and destroys dynamic vNPUs (daemon/carver.h). */
	struct dra_carver carver;
	/* Called on the loop when the kubelet registered the driver (may be NULL). */
	void (*registered)(void *ctx);
	void *registered_ctx;
};

/* Builds the driver (loading its checkpoint) as options say; nothing is
 * served yet. Returns 0, or a negative errno with why. */
int dra_front_init(struct dra_front *front, const struct dra_front_options *options, char *why, size_t why_size);

/* Serves both sockets and starts watching their directories. Returns 0,
 * or a negative errno with why. */
int dra_front_start(struct dra_front *front, char *why, size_t why_size);

/* At each refresh: hands the driver the snapshot and files (and how many
 * claims may share each device, by the time-slicing of resources),
 * publishes the
 * chips' health to the health streams (to be trusted for three health
 * intervals, at least 30 s), serves the
 * sockets anew when one went, and logs what the kubelet said of the
 * registration since the last call. */
void dra_front_refresh(struct dra_front *front, struct npu_snapshot *snapshot, struct host_files *files,
		       int64_t health_interval_ms, const struct resource_set *resources);

/* Stops serving (the sockets are removed) and frees the driver. Accepts a
 * zeroed front never initialised. */
void dra_front_fini(struct dra_front *front);
