/* SPDX-License-Identifier: Apache-2.0 */
#include "daemon/serving.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "plugin/allocate.h"
#include "plugin/replica.h"

/* The file's replicas must be IDs plugin/replica.c can parse. */
_Static_assert(CONFIG_FILE_REPLICAS_MAX <= REPLICA_MAX, "replica IDs hold at most REPLICA_MAX replicas");

/* The strategies' names are the configuration's; their meaning, the
 * answer's parts, is the plugin's. */
static unsigned allocate_strategies(unsigned config_strategies)
{
	return ((config_strategies & CONFIG_STRATEGY_NATIVE) ? ALLOCATE_STRATEGY_NATIVE : 0u) |
	       ((config_strategies & CONFIG_STRATEGY_ASCEND_RUNTIME) ? ALLOCATE_STRATEGY_ASCEND_RUNTIME : 0u) |
	       ((config_strategies & CONFIG_STRATEGY_CDI) ? ALLOCATE_STRATEGY_CDI : 0u);
}

int serving_build(const struct config *c, struct serving *ret_serving, bool *in_file, char *why, size_t why_size)
{
	const struct config_resources *file = &c->file;
	struct resource_plan_name names[CONFIG_FILE_MAX_ENTRIES];
	struct resource_plan_slice sliced[CONFIG_FILE_MAX_ENTRIES];
	for (size_t i = 0; i < file->n_names; i++)
		names[i] = (struct resource_plan_name){ file->names[i].family, file->names[i].name, file->names[i].line };
	for (size_t i = 0; i < file->n_sliced; i++)
		sliced[i] = (struct resource_plan_slice){ file->sliced[i].name, file->sliced[i].replicas,
							  file->sliced[i].line };
	struct serving s = { .strategies = allocate_strategies(c->device_list_strategies) };
	*in_file = false;

	/* CDI devices are the chips, shared or not: the kind comes from the
	 * resource name before ".shared". */
	if (s.strategies & ALLOCATE_STRATEGY_CDI) {
		char problem[512];
		if (cdi_names_from_resource(c->resource_name, &s.cdi, problem, sizeof(problem)) < 0)
			return why_invalid(why, why_size,
				    "--device-list-strategy=cdi: --resource-name %s cannot name a CDI kind: %s",
				    c->resource_name, problem);
	}
	const struct resource_plan plan = {
		.default_name = c->resource_name,
		.socket_dir = c->socket_dir,
		.instance = c->instance,
		.source = c->config_file,
		.names = names,
		.n_names = file->n_names,
		.sliced = sliced,
		.n_sliced = file->n_sliced,
		.fail_requests_greater_than_one = file->fail_requests_greater_than_one,
		.rename_by_default = file->rename_by_default,
	};
	int r = resource_set_build(&plan, &s.resources, in_file, why, why_size);
	if (r < 0)
		return r;
	memcpy(s.vnpu_base, c->resource_name, sizeof(s.vnpu_base));
	/* Fits: resource_set_build saw to it. */
	(void)path_join(s.kubelet_socket, sizeof(s.kubelet_socket), c->socket_dir, "kubelet.sock");
	*ret_serving = s;
	return 0;
}
