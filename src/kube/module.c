/* SPDX-License-Identifier: Apache-2.0 */
#include "kube/module.h"

static const struct kube_module_api api = {
	.version = KUBE_MODULE_API_VERSION,
	.size = sizeof(struct kube_module_api),
	.layout = KUBE_MODULE_LAYOUT,
	.build_version = ASCEND_VERSION,
	.config_in_cluster = kube_config_in_cluster,
	.config_from_kubeconfig = kube_config_from_kubeconfig,
	.config_free = kube_config_free,
	.client_new = kube_client_new,
	.client_free = kube_client_free,
	.client_config = kube_client_config,
	.client_request = kube_client_request_limited,
	.client_abort = kube_client_abort,
	.response_free = kube_response_free,
	.parse_meta = kube_parse_meta,
	.parse_slice_list = kube_parse_slice_list,
	.status_message = kube_status_message,
	.publisher_start = kube_publisher_start,
	.publisher_offer = kube_publisher_offer,
	.publisher_stop = kube_publisher_stop,
	.publisher_recheck = kube_publisher_recheck,
};

/* The one symbol the module exports (src/kube/module.map hides the rest). */
__attribute__((visibility("default"))) const struct kube_module_api *ascend_kube_module_v1(void);

const struct kube_module_api *ascend_kube_module_v1(void)
{
	return &api;
}
