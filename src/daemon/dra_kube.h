/* SPDX-License-Identifier: Apache-2.0 */
/* The DRA front end's API-server side as the daemon runs it: the module
 * (libascend-kube.so, loaded through daemon/kube_module.h, so only the DRA
 * front end ever maps libcurl), one client made from --kubeconfig or the
 * pod's in-cluster files, the claim reader the DRA driver prepares with,
 * and the ResourceSlice publisher, offered the judged snapshot at every
 * refresh. The publisher's reports (each cause once, and each publication)
 * are logged here, on the publisher's thread, which never waits on the
 * loop. Part of the top level: it logs. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "config/config.h"
#include "daemon/status_writer.h"
#include "dra/driver.h"
#include "kube/module.h"
#include "npu/inventory.h"
#include "daemon/telemetry_cache.h"
#include "plugin/resources.h"

struct dra_kube {
	const struct kube_module_api *api;
	struct kube_client *client;
	struct status_writer status; /* the claims' status, from dra_kube_open on */
	struct kube_publisher *publisher; /* NULL until the first offer */
	const char *node_name, *driver;   /* the first offer's: the slices' node and driver */
	int start_error;                  /* why the publisher could not start, logged once */
};

enum dra_kube_failure {
	DRA_KUBE_MODULE, /* the module could not be loaded: the image is broken (exit 1) */
	DRA_KUBE_CONFIG, /* the kubeconfig or the in-cluster files are wrong (exit 2) */
};

/* Loads the module and makes the client (config->kubeconfig, else the
 * in-cluster config). Nothing is sent yet. Returns 0, or a negative errno
 * with *ret_failure and why (one line naming the file or the key, and the
 * cause). */
int dra_kube_open(const struct config *config, struct dra_kube *kube, enum dra_kube_failure *ret_failure, char *why,
		  size_t why_size);

/* Frees the client (after dra_kube_stop). The module stays loaded. Accepts
 * a zeroed kube. */
void dra_kube_close(struct dra_kube *kube);

/* How the DRA driver reads claims: GET of the ResourceClaim within the
 * read's limits (the client's 10 s timeout without a deadline); and how
 * it tells their status, through the status writer (daemon/status_writer.h). */
struct dra_claim_reader dra_kube_reader(struct dra_kube *kube);

/* What a snapshot is offered with. */
struct dra_kube_offer {
	/* Whose slices they are: taken by the first offer, which starts the
	 * publisher (when the driver's version is known); both strings must
	 * outlive the kube. */
	const char *node_name, *driver;
	const char *driver_version;
	const char *firmware_version;            /* NULL when unknown */
	const struct telemetry_cache *telemetry; /* the chips' HBM sizes */
	const struct resource_set *resources;    /* the chips' time-slicing shares */
	/* Dynamic vNPUs: the chips carved on demand (NULL: none) and the
	 * driver, which says which vNPUs it made for claims. */
	const struct npu_chip_select *carve_on_demand;
	struct dra_driver *claims;
	/* The fault levels whose taint evicts (1u << enum fault_level). */
	uint32_t no_execute_levels;
};

/* Hands the publisher the judged snapshot with its chips' HBM sizes as
 * the telemetry cache last read them and the chips' time-slicing shares
 * as resources say, starting it at the first call. Never waits on the
 * server. Loop thread. */
void dra_kube_offer(struct dra_kube *kube, struct npu_snapshot *snapshot, const struct dra_kube_offer *offer);

/* The kubelet registered the driver: it may have deleted the node's
 * slices when it started (or 30 s after the driver went away), and may do
 * so shortly after. The publisher's watch of the slices sees such a wipe
 * and puts them back (kube/publisher.h), so this costs no request; a watch
 * backing off from a failure is made at once. Loop thread. */
void dra_kube_recheck(struct dra_kube *kube);

/* Aborts every request to the API server, now and later (claim reads
 * fail at once), and stops the publisher (the slices stay): a stop never
 * waits on the server. Accepts a kube never started. */
void dra_kube_stop(struct dra_kube *kube);
