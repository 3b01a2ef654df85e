/* SPDX-License-Identifier: Apache-2.0 */
#include "daemon/endpoints.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "base/log.h"
#include "base/parse.h"

int endpoint_set_init(struct endpoint_set *set, const struct endpoint_set_options *options,
		      const struct resource_set *resources)
{
	*set = (struct endpoint_set){ .options = *options, .resources = *resources };
	return cq_runner_start(&set->registrar_runner);
}

void endpoint_set_fini(struct endpoint_set *set)
{
	for (size_t i = 0; i < RESOURCES_MAX; i++) {
		endpoint_free(set->endpoints[i]);
		set->endpoints[i] = NULL;
	}
	/* After the registrars: each waits for its own calls to complete here. */
	cq_runner_stop(set->registrar_runner);
	set->registrar_runner = NULL;
}

int endpoint_set_ensure(struct endpoint_set *set, char *why, size_t why_size)
{
	int first_error = 0;
	for (size_t i = 0; i < set->resources.count; i++) {
		if (set->endpoints[i])
			continue;
		const struct resource_def *def = &set->resources.defs[i];
		struct observe_resource *observed;
		if (observe_resource(set->options.observe, def->name, def->sharing.replicas, &observed) < 0)
			observed = NULL; /* past the metrics' bound: served without them */
		const struct endpoint_options o = {
			.loop = set->options.loop,
			.registrar_runner = set->registrar_runner,
			.def = def,
			.kubelet_socket = set->options.kubelet_socket,
			.allocate = set->options.allocate,
			.name_in_logs = !def->is_default,
			.observe = observed,
		};
		char problem[512];
		int r = endpoint_new(&o, &set->endpoints[i], problem, sizeof(problem));
		set->publish_due |= r == 0;
		/* A socket that cannot be served yet is the session's to retry. */
		enum session_event join;
		if (r == 0 && node_join(set->options.node, &join)) {
			if (join == SESSION_EV_START)
				(void)endpoint_start(set->endpoints[i], true);
			else
				endpoint_handle(set->endpoints[i], join, NULL);
		}
		if (r < 0 && !first_error) {
			first_error = r;
			snprintf(why, why_size, "%s: %s", def->name, problem);
		}
	}
	return first_error;
}

int endpoint_set_start(struct endpoint_set *set, const struct npu_snapshot *all, struct host_files *files, char *why,
		       size_t why_size)
{
	int r = endpoint_set_ensure(set, why, why_size);
	if (r < 0)
		return r;
	endpoint_set_publish(set, all, files);
	for (size_t i = 0; i < set->resources.count; i++) {
		r = endpoint_start(set->endpoints[i], false);
		if (r < 0) {
			snprintf(why, why_size, "cannot serve on %s: %s", set->resources.defs[i].socket_path, strerror(-r));
			return r;
		}
	}
	return 0;
}

void endpoint_set_publish(struct endpoint_set *set, const struct npu_snapshot *all, struct host_files *files)
{
	for (size_t i = 0; i < set->resources.count; i++) {
		struct npu_snapshot *view = NULL;
		if (!set->endpoints[i])
			continue;
		if (resource_view(&set->resources, &set->resources.defs[i], all, &view) < 0 ||
		    endpoint_publish(set->endpoints[i], view, files) < 0)
			log_error("%s: cannot publish the device list: out of memory", set->resources.defs[i].name);
		npu_snapshot_unref(view);
	}
	set->publish_due = false;
}

void endpoint_set_consume(void *ctx, const struct snapshot_news *news)
{
	struct endpoint_set *set = ctx;
	/* Views are built only when there is news for them; each endpoint also
	 * drops a view equal to what it sent last. */
	if (news->changed || news->files_changed || set->publish_due)
		endpoint_set_publish(set, news->device_plugin, news->files);
}

void endpoint_set_broadcast(struct endpoint_set *set, enum session_event event, const struct session_event_data *data)
{
	for (size_t i = 0; i < set->resources.count; i++)
		if (set->endpoints[i])
			endpoint_handle(set->endpoints[i], event, data);
}

void endpoint_set_sockets_deleted(struct endpoint_set *set, const bool gone[RESOURCES_MAX])
{
	/* Our own restarts delete and recreate a socket too: only a socket
	 * that is still missing now was removed by someone else. A starting
	 * kubelet deletes them and then creates kubelet.sock; each session
	 * knows whether the registration this leads to already reaches that
	 * kubelet. Resources are only appended between reloads, so the
	 * indices hold. */
	for (size_t i = 0; i < set->resources.count; i++)
		if (gone[i] && set->endpoints[i] && !path_exists(set->resources.defs[i].socket_path))
			endpoint_socket_deleted(set->endpoints[i]);
}

void endpoint_set_grow(struct endpoint_set *set, const struct resource_set *grown)
{
	if (grown->count > set->resources.count)
		set->resources = *grown;
}

void endpoint_set_replace(struct endpoint_set *set, const struct resource_set *next, const char *what)
{
	struct resource_set old = set->resources;
	struct endpoint *old_endpoints[RESOURCES_MAX];
	memcpy(old_endpoints, set->endpoints, sizeof(old_endpoints));
	memset(set->endpoints, 0, sizeof(set->endpoints));
	set->resources = *next;
	set->publish_due = true;

	for (size_t i = 0; i < old.count; i++) {
		int j = resource_set_find(&set->resources, old.defs[i].name);
		if (j >= 0 && resource_def_same(&old.defs[i], &set->resources.defs[j]) && old_endpoints[i]) {
			set->endpoints[j] = old_endpoints[i];
			continue;
		}
		if (old_endpoints[i])
			log_event(LOG_LEVEL_INFO, j >= 0 ? LOG_EVENT_RESOURCE_CHANGED : LOG_EVENT_RESOURCE_GONE,
				  &(struct log_fields){ .resource = old.defs[i].name }, "%s: %s %s; no longer serving it", what,
				  old.defs[i].name, j >= 0 ? "changed" : "is gone from the configuration");
		endpoint_free(old_endpoints[i]);
	}
}
