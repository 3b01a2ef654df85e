/* SPDX-License-Identifier: Apache-2.0 */
/* The API-server side as a module the daemon loads at run time
 * (libascend-kube.so): libcurl maps about 33 shared libraries and several
 * MiB of their pages into any process that links it, and the device-plugin
 * daemon must carry none of that. So src/kube/ is built into a shared
 * module that alone links libcurl, and the daemon dlopens it only when the
 * DRA front end is on (daemon/kube_module.h).
 *
 * The module exports one symbol, KUBE_MODULE_SYMBOL, a function returning a
 * constant table of the functions of kube/config.h, kube/client.h,
 * kube/objects.h and kube/publisher.h that the daemon calls; every other
 * symbol of it, its own copies of json-c and libyaml included, is hidden, so
 * nothing of it can stand in for the daemon's static copies or the reverse.
 *
 * The daemon and the module pass each other structs (kube_config,
 * kube_response, npu_snapshot...), so both must come from one build: the
 * table says its version, its size and the sizes of those structs, and
 * the loader refuses a module whose figures are not its own. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kube/client.h"
#include "kube/config.h"
#include "kube/objects.h"
#include "kube/publisher.h"
#include "npu/inventory.h"

/* The table's version: bumped when a member changes meaning or moves. */
#define KUBE_MODULE_API_VERSION 3u
#define KUBE_MODULE_SYMBOL "ascend_kube_module_v1"
#define KUBE_MODULE_FILE "libascend-kube.so"

/* The sizes of the structs the daemon and the module share, as each side
 * was built: a daemon and a module of different builds (a field added to
 * one of them) differ here, short of a change that keeps every size. */
struct kube_module_layout {
	uint32_t config, response, request_limits, meta, slice_list, publish_report, publisher_options, snapshot,
		device;
};
#define KUBE_MODULE_LAYOUT                                                                                       \
	{                                                                                                        \
		.config = sizeof(struct kube_config), .response = sizeof(struct kube_response),                  \
		.request_limits = sizeof(struct kube_request_limits),                                            \
		.meta = sizeof(struct kube_meta), .slice_list = sizeof(struct kube_slice_list),                  \
		.publish_report = sizeof(struct kube_publish_report),                                            \
		.publisher_options = sizeof(struct kube_publisher_options),                                      \
		.snapshot = sizeof(struct npu_snapshot), .device = sizeof(struct npu_device),                    \
	}

struct kube_module_api {
	uint32_t version; /* KUBE_MODULE_API_VERSION */
	uint32_t size;    /* sizeof(struct kube_module_api) as the module was built */
	struct kube_module_layout layout; /* KUBE_MODULE_LAYOUT as the module was built */
	const char *build_version; /* the project's version (ASCEND_VERSION) */

	/* kube/config.h */
	int (*config_in_cluster)(const char *dir, struct kube_config *ret_config, char *why, size_t why_size);
	int (*config_from_kubeconfig)(const char *path, const char *context, struct kube_config *ret_config,
				      char *why, size_t why_size);
	void (*config_free)(struct kube_config *config);

	/* kube/client.h */
	int (*client_new)(struct kube_config *config, int timeout_ms, struct kube_client **ret_client, char *why,
			  size_t why_size);
	void (*client_free)(struct kube_client *client);
	const struct kube_config *(*client_config)(const struct kube_client *client);
	int (*client_request)(struct kube_client *client, const char *method, const char *path, const char *body,
			      size_t body_len, const struct kube_request_limits *limits, struct kube_response *out);
	void (*client_abort)(struct kube_client *client);
	void (*response_free)(struct kube_response *response);

	/* kube/objects.h: the readers whose results are plain structs (a
	 * json_object of the module's json-c must not reach the daemon's). */
	int (*parse_meta)(const char *body, size_t len, struct kube_meta *ret_meta, char *why, size_t why_size);
	int (*parse_slice_list)(const char *body, size_t len, struct kube_slice_list *ret_list, char *why,
				size_t why_size);
	void (*status_message)(const char *body, size_t len, char *out, size_t size);

	/* kube/publisher.h */
	int (*publisher_start)(const struct kube_publisher_options *options, struct kube_publisher **ret_publisher);
	int (*publisher_offer)(struct kube_publisher *publisher, struct npu_snapshot *snapshot,
			       const struct kube_device_facts *facts);
	void (*publisher_stop)(struct kube_publisher *publisher);
	void (*publisher_recheck)(struct kube_publisher *publisher, int for_ms);
};

/* The module's one exported function. */
typedef const struct kube_module_api *(*kube_module_entry_fn)(void);
