/* SPDX-License-Identifier: Apache-2.0 */
/* Resources that grow with the node: one per vNPU template found
 * ("ascend.com/npu-vir04-3c" for vir04_3c, plugin/resources.h), added when
 * the first vNPU of a template appears and kept until the next reload. vNPUs
 * no resource can list (their template unknown without DCMI, a name that is
 * not valid or taken, a socket path too long, the set full) are reported
 * when their number changes. Part of the top level: it logs. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "npu/inventory.h"
#include "plugin/resources.h"

struct vnpu_resources {
	size_t logged_unnamed; /* vNPUs no resource lists, as last reported */
	bool logged_full;
};

/* Appends to set a resource for each vNPU template of snap that has none;
 * names start with vnpu_base, sockets go into socket_dir, named with
 * instance (resource_endpoint). */
void vnpu_resources_add(struct vnpu_resources *growth, struct resource_set *set, const struct npu_snapshot *snap,
			const char *vnpu_base, const char *socket_dir, const char *instance);
