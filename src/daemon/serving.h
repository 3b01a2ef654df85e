/* SPDX-License-Identifier: Apache-2.0 */
/* What the daemon serves, derived from its configuration: the resource set
 * (the default resource, the file's per-family names, time-slicing and
 * renameByDefault, every socket checked to fit), the kubelet's socket, the
 * Allocate strategies and, with the cdi strategy, the CDI names. The
 * configuration holds settings as given; this is where they are read
 * together, at start (a problem exits 2) and at each reload (a problem keeps
 * the running set). */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "base/k8s_names.h"
#include "base/parse.h"
#include "config/config.h"
#include "node/cdi.h"
#include "plugin/resources.h"

struct serving {
	/* defs[0] is the default resource: --resource-name, ".shared" added
	 * by renameByDefault when it is time-sliced. The daemon adds one
	 * resource per vNPU template it finds. */
	struct resource_set resources;
	char vnpu_base[RESOURCE_NAME_MAX];     /* --resource-name before ".shared": what vNPU names start with */
	char kubelet_socket[SOCKET_PATH_MAX]; /* <socket_dir>/kubelet.sock */
	unsigned strategies;                  /* a set of ALLOCATE_STRATEGY_* */
	struct cdi_names cdi;                 /* with ALLOCATE_STRATEGY_CDI; the chips' kind, never ".shared" */
};

/* Derives what config serves. Returns 0, or -EINVAL with why naming the
 * flag, or the file, line and key; *in_file says whether the --config file
 * is to blame (why then starts with its path). */
int serving_build(const struct config *config, struct serving *ret_serving, bool *in_file, char *why,
		  size_t why_size);

/* The default resource. */
static inline const struct resource_def *serving_default(const struct serving *s)
{
	return &s->resources.defs[0];
}
