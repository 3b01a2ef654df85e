/* SPDX-License-Identifier: Apache-2.0 */
#include "plugin/resources.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "base/k8s_names.h"

int resource_endpoint(const char *name, char *buf, size_t size)
{
	const char *slash = strchr(name, '/');
	size_t domain_label = strcspn(name, "./");
	if (!slash)
		return -EINVAL;
	return str_printf(buf, size, "%.*s-%s.sock", (int)domain_label, name, slash + 1);
}

int resource_def_name(struct resource_def *def, const char *name, const char *socket_dir)
{
	char endpoint[RESOURCE_ENDPOINT_MAX], socket_path[SOCKET_PATH_MAX];
	if (resource_endpoint(name, endpoint, sizeof(endpoint)) < 0 ||
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
