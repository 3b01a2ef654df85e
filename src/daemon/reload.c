/* SPDX-License-Identifier: Apache-2.0 */
#include "daemon/reload.h"

#include <errno.h>
#include <stddef.h>
#include <string.h>

#include "base/log.h"
#include "base/macro.h"

/* The settings a running daemon cannot change: where it looks and how it
 * answers. A new value is reported and waits for a restart. */
static void warn_restart_only(const char *what, const struct config *running, const struct config *next)
{
	static const struct {
		const char *flag;
		size_t offset;
	} strings[] = {
		{ "socket-dir", offsetof(struct config, socket_dir) },
		{ "dev-dir", offsetof(struct config, dev_dir) },
		{ "driver-path", offsetof(struct config, driver_path) },
		{ "host-root", offsetof(struct config, host_root) },
		{ "dcmi-lib", offsetof(struct config, dcmi_lib) },
		{ "cdi-dir", offsetof(struct config, cdi_dir) },
		{ "metrics-addr", offsetof(struct config, metrics_addr) },
		{ "pod-resources-socket", offsetof(struct config, pod_resources_socket) },
		{ "nfd-features-file", offsetof(struct config, nfd_features_file) },
	};
	for (size_t i = 0; i < ELEMENTSOF(strings); i++) {
		const char *was = (const char *)running + strings[i].offset;
		const char *now = (const char *)next + strings[i].offset;
		if (strcmp(was, now) != 0)
			log_warn("%s: --%s changed to '%s'; it takes effect at the next restart, keeping '%s'", what,
				 strings[i].flag, now, was);
	}
	if (running->backend != next->backend)
		log_warn("%s: --backend changed; it takes effect at the next restart", what);
	if (running->device_list_strategies != next->device_list_strategies)
		log_warn("%s: --device-list-strategy changed; it takes effect at the next restart", what);
	else if ((running->device_list_strategies & ALLOCATE_STRATEGY_CDI) && strcmp(running->cdi.kind, next->cdi.kind) != 0)
		log_warn("%s: the CDI kind would be %s; it takes effect at the next restart, keeping %s", what,
			 next->cdi.kind, running->cdi.kind);
	if (running->telemetry_interval_ms != next->telemetry_interval_ms)
		log_warn("%s: --telemetry-interval changed; it takes effect at the next restart", what);
	if (running->log_format != next->log_format)
		log_warn("%s: --log-format changed; it takes effect at the next restart", what);
}

int reload_take(struct config *c, struct config *next, const char *what)
{
	warn_restart_only(what, c, next);
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
	memcpy(c->resource_name, next->resource_name, sizeof(c->resource_name));
	memcpy(c->endpoint, next->resources.defs[0].endpoint, sizeof(c->endpoint));
	memcpy(c->socket_path, next->resources.defs[0].socket_path, sizeof(c->socket_path));
	memcpy(c->vnpu_base, next->vnpu_base, sizeof(c->vnpu_base));
	c->resources = next->resources;
	c->sharing = next->sharing;
	c->rename_by_default = next->rename_by_default;
	c->health_interval_ms = next->health_interval_ms;
	c->log_level = next->log_level;
	return 0;
}
