/* SPDX-License-Identifier: Apache-2.0 */
#include "daemon/reload.h"

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "base/log.h"
#include "plugin/allocate.h"

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

int reload_read(daemon_reload_fn read, void *ctx, struct reload_next *next, char *why, size_t why_size)
{
	bool in_file;
	int r = read(ctx, &next->config, why, why_size);
	if (r < 0)
		return r;
	return serving_build(&next->config, &next->serving, &in_file, why, why_size);
}

int reload_take(struct config *c, struct serving *s, const struct config *next, struct serving *next_s,
		const char *what)
{
	config_changes(c, next, warn_restart_only, (void *)(uintptr_t)what);
	/* Not a flag: derived from --resource-name. */
	if (s->strategies == next_s->strategies && (s->strategies & ALLOCATE_STRATEGY_CDI) &&
	    strcmp(s->cdi.kind, next_s->cdi.kind) != 0)
		log_warn("%s: the CDI kind would be %s; it takes effect at the next restart, keeping %s", what,
			 next_s->cdi.kind, s->cdi.kind);
	/* The sockets stay in the running directory; a new resource whose
	 * socket does not fit there is left out, and a plugin resource name that
	 * does not fit keeps the running configuration. */
	struct resource_set *set = &next_s->resources;
	for (size_t i = 0; i < set->count;) {
		struct resource_def *def = &set->defs[i];
		char name[RESOURCE_NAME_MAX];
		memcpy(name, def->name, sizeof(name));
		if (resource_def_name(def, name, c->socket_dir, c->instance) == 0) {
			i++;
			continue;
		}
		if (i == 0) {
			log_event(LOG_LEVEL_ERROR, LOG_EVENT_CONFIG_REJECTED,
				  &(struct log_fields){ .more = { LOG_STR("trigger", what) } },
				  "%s: keeping the running configuration: the socket path of %s under %s is too long", what,
				  name, c->socket_dir);
			return -ENAMETOOLONG;
		}
		log_warn("%s: %s: its socket path under %s is too long; not serving it", what, name, c->socket_dir);
		memmove(def, def + 1, (set->count - i - 1) * sizeof(*def));
		set->count--;
	}
	/* Not a flag either: the section of the file. Chips keep what the
	 * policy remembers of them (onsets, separations); the new rules judge
	 * them from the next refresh on. */
	if (!fault_policy_config_same(&c->fault_policy, &next->fault_policy)) {
		const struct fault_policy_config *p = &next->fault_policy;
		log_event(LOG_LEVEL_INFO, LOG_EVENT_FAULT_POLICY_CHANGED,
			  &(struct log_fields){ .more = { LOG_STR("trigger", what),
							  LOG_NUM("recovery_hold_ms", p->recovery_hold_ms),
							  LOG_STR("default_level", fault_level_name(p->default_level)),
							  LOG_NUM("codes", p->n_codes) } },
			  "%s: fault policy changed: recovery hold %lldms, default level %s, %zu codes of its own%s, %zu "
			  "frequency and %zu duration windows",
			  what, (long long)p->recovery_hold_ms, fault_level_name(p->default_level), p->n_codes,
			  p->builtin_codes ? " over the built-in table" : "", p->n_frequency, p->n_duration);
	}
	if (!fault_reset_config_same(&c->fault_reset, &next->fault_reset)) {
		const struct fault_reset_config *rc = &next->fault_reset;
		const struct log_fields f = { .more = { LOG_STR("trigger", what), LOG_NUM("enabled", rc->enabled),
							LOG_NUM("max_resets", rc->max_resets),
							LOG_NUM("window_s", rc->window_ms / 1000),
							LOG_NUM("timeout_s", rc->timeout_ms / 1000) } };
		if (rc->enabled)
			log_event(LOG_LEVEL_INFO, LOG_EVENT_RESET_POLICY_CHANGED, &f,
				  "%s: chip resets enabled: at most %u per chip within %llds, each back within %llds or the "
				  "chip is separated",
				  what, rc->max_resets, (long long)(rc->window_ms / 1000), (long long)(rc->timeout_ms / 1000));
		else
			log_event(LOG_LEVEL_INFO, LOG_EVENT_RESET_POLICY_CHANGED, &f, "%s: chip resets disabled", what);
	}
	config_take_reloadable(c, next);
	/* What the reloadable --resource-name and the file's resources imply. */
	memcpy(s->vnpu_base, next_s->vnpu_base, sizeof(s->vnpu_base));
	s->resources = next_s->resources;
	return 0;
}
