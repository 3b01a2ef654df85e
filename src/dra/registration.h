/* SPDX-License-Identifier: Apache-2.0 */
/* The plugin registration service a DRA driver serves on
 * <kubelet dir>/plugins_registry/<driver>-reg.sock: GetInfo answers what the
 * kubelet's plugin watcher needs to register the driver (type DRAPlugin,
 * the driver's name, its dra.sock, the DRA services served there, most
 * recent first, and the health service), and NotifyRegistrationStatus records the kubelet's verdict
 * for the daemon to report (/healthz-like). The kubelet finds the socket
 * itself, at its start and whenever the socket is made anew: there is no
 * Register call to make. The method table's context is the struct
 * dra_registration. */
#pragma once

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/k8s_names.h"
#include "base/parse.h"
#include "grpc/server.h"

struct dra_registration_status {
	uint64_t notifications; /* NotifyRegistrationStatus calls so far */
	bool registered;        /* the last one's verdict */
	char error[512];        /* and its error, "" when none */
	uint64_t get_info_calls;
};

struct dra_registration {
	char driver_name[K8S_DNS_SUBDOMAIN_MAX + 1];
	char endpoint[SOCKET_PATH_MAX];
	/* Called on the gRPC thread after each NotifyRegistrationStatus is
	 * recorded; it must only wake its owner. May be NULL. */
	void (*notified)(void *ctx);
	void *notified_ctx;
	pthread_mutex_t lock;
	struct dra_registration_status status;
};

/* Returns 0, or -ENAMETOOLONG when a name does not fit. notified may be NULL. */
int dra_registration_init(struct dra_registration *reg, const char *driver_name, const char *endpoint,
			  void (*notified)(void *ctx), void *notified_ctx);
void dra_registration_fini(struct dra_registration *reg);

/* A copy of what the kubelet said last. Any thread. */
void dra_registration_status(struct dra_registration *reg, struct dra_registration_status *ret_status);

const struct gs_method *dra_registration_methods(size_t *ret_count);
