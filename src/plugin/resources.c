/* SPDX-License-Identifier: Apache-2.0 */
#include "plugin/resources.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "base/k8s_names.h"
#include "base/parse.h"

int resource_endpoint(const char *name, const char *instance, char *buf, size_t size)
{
	const char *slash = strchr(name, '/');
	size_t domain_label = strcspn(name, "./");
	if (!slash)
		return -EINVAL;
	return str_printf(buf, size, "%.*s-%s%s%.*s.sock", (int)domain_label, name, slash + 1, instance[0] ? "@" : "",
			  RESOURCE_INSTANCE_MAX, instance);
}

int resource_def_name(struct resource_def *def, const char *name, const char *socket_dir, const char *instance)
{
	char endpoint[RESOURCE_ENDPOINT_MAX], socket_path[SOCKET_PATH_MAX];
	if (resource_endpoint(name, instance, endpoint, sizeof(endpoint)) < 0 ||
	    path_join(socket_path, sizeof(socket_path), socket_dir, endpoint) < 0 ||
	    str_copy(def->name, sizeof(def->name), name) < 0)
		return -ENAMETOOLONG;
	memcpy(def->endpoint, endpoint, sizeof(endpoint));
	memcpy(def->socket_path, socket_path, sizeof(socket_path));
	return 0;
}

int resource_vnpu_name(const char *base, const char *template_name, char *buf, size_t size, char *why,
		       size_t why_size)
{
	char name[RESOURCE_NAME_MAX];
	size_t n = strlen(template_name);
	if (n == 0 || strspn(template_name, "abcdefghijklmnopqrstuvwxyz0123456789_") != n) {
		snprintf(why, why_size, "template '%s' is not lowercase letters, digits and '_'", template_name);
		return -EINVAL;
	}
	if (str_printf(name, sizeof(name), "%s-%s", base, template_name) < 0) {
		snprintf(why, why_size, "'%s-%s' is too long", base, template_name);
		return -EINVAL;
	}
	for (char *p = name + strlen(base) + 1; *p; p++)
		if (*p == '_')
			*p = '-';
	char problem[200];
	if (k8s_extended_resource_name_check(name, problem, sizeof(problem)) < 0) {
		snprintf(why, why_size, "'%s' is not a valid resource name: %s", name, problem);
		return -EINVAL;
	}
	return str_copy(buf, size, name);
}

int resource_set_find(const struct resource_set *set, const char *name)
{
	for (size_t i = 0; i < set->count; i++)
		if (strcmp(set->defs[i].name, name) == 0)
			return (int)i;
	return -ENOENT;
}

/* Whether a resource other than the default names the family. */
static bool family_named(const struct resource_set *set, enum npu_family family)
{
	for (size_t i = 0; i < set->count; i++) {
		const struct resource_def *d = &set->defs[i];
		if (d->kind == RESOURCE_CHIPS && !d->is_default && (d->families & (1u << family)))
			return true;
	}
	return false;
}

bool resource_lists(const struct resource_set *set, const struct resource_def *def, const struct npu_device *device)
{
	if (def->kind == RESOURCE_VNPUS)
		return device->kind == NPU_DEVICE_VNPU && strcmp(device->vnpu.template_name, def->vnpu_template) == 0;
	if (device->kind != NPU_DEVICE_CHIP || device->vnpu_count > 0)
		return false;
	if (def->is_default)
		return !family_named(set, device->chip.family);
	return (def->families & (1u << device->chip.family)) != 0;
}

bool resource_def_same(const struct resource_def *a, const struct resource_def *b)
{
	return strcmp(a->name, b->name) == 0 && strcmp(a->socket_path, b->socket_path) == 0 && a->kind == b->kind &&
	       a->is_default == b->is_default && a->families == b->families &&
	       strcmp(a->vnpu_template, b->vnpu_template) == 0 && a->sharing.replicas == b->sharing.replicas &&
	       a->sharing.fail_requests_greater_than_one == b->sharing.fail_requests_greater_than_one;
}

const struct replica_options *resource_set_sharing(const struct resource_set *set, const struct npu_device *device)
{
	for (size_t i = 0; i < set->count; i++)
		if (resource_lists(set, &set->defs[i], device))
			return replica_sharing(&set->defs[i].sharing) ? &set->defs[i].sharing : NULL;
	return NULL;
}

unsigned resource_set_shares(const struct resource_set *set, const struct npu_device *device)
{
	const struct replica_options *sharing = resource_set_sharing(set, device);
	return sharing ? replica_count(sharing, device) : 1;
}

static bool listed(const struct resource_set *set, const struct resource_def *def, const struct npu_device *device)
{
	if (def)
		return resource_lists(set, def, device);
	for (size_t i = 0; i < set->count; i++)
		if (resource_lists(set, &set->defs[i], device))
			return true;
	return false;
}

int resource_view(const struct resource_set *set, const struct resource_def *def,
		  const struct npu_snapshot *snapshot, struct npu_snapshot **ret_view)
{
	size_t n = 0;
	for (size_t i = 0; i < snapshot->count; i++)
		n += listed(set, def, &snapshot->devices[i]);
	struct npu_snapshot *view = npu_snapshot_new(n);
	if (!view)
		return -ENOMEM;
	size_t k = 0;
	for (size_t i = 0; i < snapshot->count; i++) {
		const struct npu_device *d = &snapshot->devices[i];
		if (!listed(set, def, d))
			continue;
		view->devices[k++] = *d;
		view->healthy += d->healthy;
	}
	*ret_view = view;
	return 0;
}

/* Every socket the plugin serves or dials at start is in --socket-dir: the
 * kubelet's and each resource's. One that does not fit in a socket address
 * is reported whole, with its length, and it is the longest, so that one fix
 * is enough: --socket-dir is to blame unless the kubelet's and the default
 * resource's sockets fit, then the file's resource of that socket is. */
static int check_socket_paths(const struct resource_plan *plan, const struct resource_set *set, bool *in_file,
			      char *why, size_t why_size)
{
	char endpoint[RESOURCE_NAME_MAX + 8 + 1 + RESOURCE_INSTANCE_MAX];
	char longest[sizeof(endpoint)] = "kubelet.sock";
	char socket[SOCKET_PATH_MAX];
	size_t longest_k = 0;
	bool dir_fits = path_join(socket, sizeof(socket), plan->socket_dir, "kubelet.sock") == 0;
	for (size_t k = 0; k < set->count; k++) {
		/* The names are valid resource names: each has a '/' and fits. */
		if (resource_endpoint(set->defs[k].name, plan->instance, endpoint, sizeof(endpoint)) < 0)
			return why_invalid(why, why_size, "resource %s has no socket name", set->defs[k].name);
		if (k == 0)
			dir_fits = dir_fits && path_join(socket, sizeof(socket), plan->socket_dir, endpoint) == 0;
		if (strlen(endpoint) > strlen(longest)) {
			memcpy(longest, endpoint, sizeof(longest));
			longest_k = k;
		}
	}
	if (path_join(socket, sizeof(socket), plan->socket_dir, longest) == 0)
		return 0;
	char problem[SOCKET_DIR_MAX + sizeof(longest) + 128];
	socket_path_too_long(problem, sizeof(problem), plan->socket_dir, longest);
	if (dir_fits) {
		*in_file = true;
		return why_invalid(why, why_size, "%s: resources: %s: %s", plan->source, set->defs[longest_k].name, problem);
	}
	return why_invalid(why, why_size, "--socket-dir: %s", problem);
}

int resource_set_build(const struct resource_plan *plan, struct resource_set *ret_set, bool *in_file, char *why,
		       size_t why_size)
{
	struct resource_set built, *set = &built;
	const char *path = plan->source;
	bool fail_gt1 = plan->fail_requests_greater_than_one;

	*set = (struct resource_set){ .count = 1 };
	set->defs[0] = (struct resource_def){ .kind = RESOURCE_CHIPS, .is_default = true };
	if (str_copy(set->defs[0].name, sizeof(set->defs[0].name), plan->default_name) < 0)
		return why_invalid(why, why_size, "resource name %s is too long", plan->default_name);
	size_t n_families = plan->n_names, n_ts = plan->n_sliced;
	/* Until the sockets are checked, every problem is in what the file says. */
	*in_file = true;
	for (size_t i = 0; i < n_families; i++) {
		const struct resource_plan_name *e = &plan->names[i];
		int k = resource_set_find(set, e->name);
		if (k == 0)
			continue;
		if (k < 0) {
			if (set->count == RESOURCES_MAX)
				return why_invalid(why, why_size, "%s: line %zu: resources: more than %d names", path, e->line,
					    RESOURCES_MAX);
			k = (int)set->count++;
			set->defs[k] = (struct resource_def){ .kind = RESOURCE_CHIPS };
			(void)str_copy(set->defs[k].name, sizeof(set->defs[k].name), e->name); /* same size */
		}
		set->defs[k].families |= 1u << e->family;
	}
	for (size_t i = 0; i < n_ts; i++) {
		const struct resource_plan_slice *ts = &plan->sliced[i];
		int k = resource_set_find(set, ts->name);
		if (k < 0) {
			char names[1024] = "";
			size_t used = 0;
			for (size_t j = 0; j < set->count && used < sizeof(names); j++) {
				int n = snprintf(names + used, sizeof(names) - used, "%s%s", j ? ", " : "",
						 set->defs[j].name);
				used += n > 0 ? (size_t)n : 0;
			}
			return why_invalid(why, why_size,
				    "%s: line %zu: sharing.timeSlicing.resources[%zu].name: '%s' is not a resource of this "
				    "plugin (%s; vNPU resources are not time-sliced)",
				    path, ts->line, i, ts->name, names);
		}
		set->defs[k].sharing = (struct replica_options){ .replicas = ts->replicas,
								  .fail_requests_greater_than_one = fail_gt1 };
	}
	for (size_t k = 0; k < set->count; k++) {
		struct resource_def *d = &set->defs[k];
		char name[RESOURCE_NAME_MAX], problem[160];
		if (!plan->rename_by_default || !replica_sharing(&d->sharing))
			continue;
		if (str_printf(name, sizeof(name), "%s.shared", d->name) < 0 ||
		    k8s_extended_resource_name_check(name, problem, sizeof(problem)) < 0)
			return why_invalid(why, why_size,
				    "%s: sharing.timeSlicing.renameByDefault: '%s.shared' is not a valid resource name",
				    path, d->name);
		memcpy(d->name, name, sizeof(d->name));
	}
	/* From here on the command line may be to blame (--socket-dir). */
	*in_file = false;
	int r = check_socket_paths(plan, set, in_file, why, why_size);
	if (r < 0)
		return r;
	for (size_t k = 0; k < set->count; k++) {
		struct resource_def *d = &set->defs[k];
		char name[RESOURCE_NAME_MAX];
		memcpy(name, d->name, sizeof(name));
		/* Cannot fail: check_socket_paths saw every socket path fit. */
		if (resource_def_name(d, name, plan->socket_dir, plan->instance) < 0)
			return why_invalid(why, why_size, "--socket-dir: the socket of %s does not fit", name);
		/* Only the file adds resources to the default one, so a clash is the file's. */
		for (size_t j = 0; j < k; j++) {
			if (strcmp(set->defs[j].endpoint, d->endpoint) == 0) {
				*in_file = true;
				return why_invalid(why, why_size, "%s: resources: %s and %s would share the socket %s", path,
					    set->defs[j].name, d->name, d->endpoint);
			}
		}
	}
	*ret_set = *set;
	return 0;
}
