/* SPDX-License-Identifier: Apache-2.0 */
#include "daemon/reload.h"

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "base/log.h"

/* A setting a running daemon cannot change (where it looks, how it
 * answers): reported, and kept until a restart. */
static void warn_restart_only(void *ctx, const struct config_change *change)
{
	const char *what = ctx;
	if (change->reloadable)
		return;
	if (change->was)
		log_warn("%s: --%s changed to '%s'; it takes effect at the next restart, keeping '%s'", what, change->flag,
			 change->now, change->was);
	else
		log_warn("%s: --%s changed; it takes effect at the next restart", what, change->flag);
}

int reload_take(struct config *c, struct config *next, const char *what)
{
	config_changes(c, next, warn_restart_only, (void *)(uintptr_t)what);
	/* Not a flag: derived from --resource-name. */
	if (c->device_list_strategies == next->device_list_strategies &&
	    (c->device_list_strategies & ALLOCATE_STRATEGY_CDI) && strcmp(c->cdi.kind, next->cdi.kind) != 0)
		log_warn("%s: the CDI kind would be %s; it takes effect at the next restart, keeping %s", what,
			 next->cdi.kind, c->cdi.kind);
	/* The sockets stay in the running directory; a new resource whose
	 * socket does not fit there is left out, and a plugin resource name that
	 * does not fit keeps the running configuration. */
	struct resource_set *set = &next->resources;
	for (size_t i = 0; i < set->count;) {
		struct resource_def *def = &set->defs[i];
		char name[RESOURCE_NAME_MAX];
		memcpy(name, def->name, sizeof(name));
		if (resource_def_name(def, name, c->socket_dir) == 0) {
			i++;
			continue;
		}
		if (i == 0) {
			log_error("%s: keeping the running configuration: the socket path of %s under %s is too long",
				  what, name, c->socket_dir);
			return -ENAMETOOLONG;
		}
		log_warn("%s: %s: its socket path under %s is too long; not serving it", what, name, c->socket_dir);
		memmove(def, def + 1, (set->count - i - 1) * sizeof(*def));
		set->count--;
	}
	config_take_reloadable(c, next);
	/* What the reloadable --resource-name and the file's resources imply. */
	memcpy(c->endpoint, next->resources.defs[0].endpoint, sizeof(c->endpoint));
	memcpy(c->socket_path, next->resources.defs[0].socket_path, sizeof(c->socket_path));
	memcpy(c->vnpu_base, next->vnpu_base, sizeof(c->vnpu_base));
	c->resources = next->resources;
	c->sharing = next->sharing;
	c->rename_by_default = next->rename_by_default;
	return 0;
}
