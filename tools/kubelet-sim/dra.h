/* SPDX-License-Identifier: Apache-2.0 */
/* kubelet-sim's DRA mode (--dra-registry DIR): what the kubelet's plugin
 * watcher and DRA manager do with a DRA driver. It watches DIR (the
 * kubelet's plugins_registry) with inotify; for each socket that appears
 * (and each there at the start) it calls GetInfo, checks the answer as the
 * kubelet does (type DRAPlugin, a DRA service it knows, v1 preferred), calls
 * NotifyRegistrationStatus with the verdict and prints `dra-registered` or
 * `dra-refused`. The commands `dra-prepare NS NAME UID` and `dra-unprepare
 * NS NAME UID` call the last registered driver's NodePrepareResources /
 * NodeUnprepareResources with the chosen version's method path and print
 * each claim's answer. Like the kubelet (from v1.33), it keeps each
 * registration of a driver (two pods of a surge roll register side by
 * side), calls the newest, and drops one when its registration socket is
 * removed (`dra-deregistered`). Main thread only. */
#pragma once

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>

#include "base/parse.h"

#define DRA_SIM_PENDING_MAX 8
#define DRA_SIM_RETRY_MS 100

#define DRA_SIM_PLUGINS_MAX 8

/* One registration, as the kubelet's DRA plugin manager keeps it. */
struct dra_sim_plugin {
	char socket[256]; /* the registration socket's name in DIR */
	char driver[256];
	char endpoint[SOCKET_PATH_MAX];
	const char *prepare_method, *unprepare_method; /* of the chosen version */
};

struct dra_sim {
	char dir[PATH_MAX];
	int inotify_fd; /* -1 when the mode is off */
	/* Oldest first; the calls go to the last. A registration whose socket
	 * is removed is dropped, and one past the bound drops the oldest. */
	struct dra_sim_plugin plugins[DRA_SIM_PLUGINS_MAX];
	size_t n_plugins;
	/* Sockets that did not accept yet (seen between bind and listen):
	 * tried again every DRA_SIM_RETRY_MS, as the kubelet's reconciler
	 * tries its pending plugins every second. */
	char pending[DRA_SIM_PENDING_MAX][256];
	size_t n_pending;
};

/* Makes DIR if missing, watches it and registers every socket already
 * there. Returns 0 or a negative errno (logged). */
int dra_sim_start(struct dra_sim *sim, const char *dir);
void dra_sim_stop(struct dra_sim *sim);

/* The inotify fd had events: registers each new socket. */
void dra_sim_on_events(struct dra_sim *sim);

/* The poll timeout the main loop should use: DRA_SIM_RETRY_MS while a
 * socket waits to be tried again, else -1. */
int dra_sim_timeout(const struct dra_sim *sim);

/* Tries the waiting sockets again. */
void dra_sim_retry(struct dra_sim *sim);

/* `dra-prepare NS NAME UID` (prepare) or `dra-unprepare NS NAME UID`. */
void dra_sim_call(struct dra_sim *sim, bool prepare, char **args);
