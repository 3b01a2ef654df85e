/* SPDX-License-Identifier: Apache-2.0 */
/* The daemon: wires the inventory, the fault policy and the front ends
 * (the device plugin's endpoints, the DRA driver and its API-server side)
 * to one event loop, and decides when to rediscover, publish, and
 * re-register.
 *
 * Triggers and what they do:
 *   health timer, DCMI fault event, dev-dir change -> refresh the inventory and
 *       publish a changed device list to every ListAndWatch stream;
 *   kubelet.sock created, own socket deleted, kubelet's stream ended ->
 *       stop the server fully, bind a new one, register again;
 *   SIGHUP -> read the configuration again (reload), apply what a running
 *       daemon can change (resources, time-slicing, health interval, log
 *       level) and rediscover, keeping the registrations that stand;
 *   the --config file changed -> the same reload without the rediscovery,
 *       acting only on what changed (resources added, removed or changed),
 *       as an event of its own after whatever the loop was doing;
 *   SIGTERM, SIGINT -> stop serving, remove the socket, return. */
#pragma once

#include "config/config.h"
#include "daemon/dra_kube.h"
#include "daemon/reload.h"
#include "daemon/serving.h"

/* Runs the daemon until SIGTERM or SIGINT, one resource per entry of
 * serving->resources (serving_build of config) plus one per vNPU template
 * found. With the DRA front end, kube is its opened API-server side
 * (dra_kube_open; the caller closes it after), else NULL. The caller must have
 * blocked those signals and SIGHUP in every thread (see
 * daemon_block_signals). Returns 0 on a clean stop or a negative errno when
 * it cannot start. */
int daemon_run(const struct config *config, const struct serving *serving, struct dra_kube *kube,
	       daemon_reload_fn reload, void *reload_ctx);

/* Blocks SIGTERM, SIGINT, SIGHUP and SIGPIPE before any thread exists, so
 * they reach the daemon through its signalfd and never a gRPC thread. */
int daemon_block_signals(void);
