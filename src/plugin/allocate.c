/* SPDX-License-Identifier: Apache-2.0 */
#include "plugin/allocate.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/arena.h"
#include "base/macro.h"
#include "base/parse.h"
#include "base/strbuf.h"
#include "deviceplugin.pb-c.h"
#include "plugin/request.h"

/* Driver paths a container needs read-only; "<driver>" is the driver path. */
static const struct {
	bool under_driver;
	const char *path;
} driver_mounts[] = {
	{ true, "lib64" },
	{ true, "include" },
	{ true, "version.info" },
	{ false, "/usr/local/dcmi" },
	{ false, "/usr/local/bin/npu-smi" },
	{ false, "/etc/ascend_install.info" },
};

static grpc_status_code validate(const struct npu_snapshot *snap, const V1beta1__AllocateRequest *req,
				 char *details, size_t size)
{
	if (req->n_container_requests == 0)
		return request_reject(details, size, GRPC_STATUS_INVALID_ARGUMENT,
				      "AllocateRequest has no container requests");
	if (req->n_container_requests > ALLOCATE_MAX_CONTAINERS)
		return request_reject(details, size, GRPC_STATUS_INVALID_ARGUMENT,
				      "AllocateRequest has %zu container requests, at most %d are accepted",
				      req->n_container_requests, ALLOCATE_MAX_CONTAINERS);

	for (size_t c = 0; c < req->n_container_requests; c++) {
		const V1beta1__ContainerAllocateRequest *cr = req->container_requests[c];
		if (cr->n_devices_ids == 0)
			return request_reject(details, size, GRPC_STATUS_INVALID_ARGUMENT,
					      "container request %zu asks for no devices", c);
		if (cr->n_devices_ids > snap->count)
			return request_reject(details, size, GRPC_STATUS_INVALID_ARGUMENT,
					      "container request %zu asks for %zu devices but the plugin advertises %zu", c,
					      cr->n_devices_ids, snap->count);

		for (size_t i = 0; i < cr->n_devices_ids; i++) {
			const char *id = cr->devices_ids[i];
			if (strlen(id) > ALLOCATE_MAX_ID_LENGTH)
				return request_reject(details, size, GRPC_STATUS_INVALID_ARGUMENT,
						      "device ID \"%.32s...\" is longer than %d characters", id,
						      ALLOCATE_MAX_ID_LENGTH);
			const struct npu_device *d = npu_snapshot_find(snap, id);
			if (!d)
				return request_reject(details, size, GRPC_STATUS_INVALID_ARGUMENT,
						      "unknown device ID \"%s\"", id);
			for (size_t j = 0; j < i; j++)
				if (strcmp(cr->devices_ids[j], id) == 0)
					return request_reject(details, size, GRPC_STATUS_INVALID_ARGUMENT,
							      "duplicate device ID \"%s\"", id);
			if (!d->healthy) {
				char why[256];
				npu_device_describe(d, why, sizeof(why));
				return request_reject(details, size, GRPC_STATUS_FAILED_PRECONDITION,
						      "device %s is Unhealthy (%s)", id, why);
			}
		}
	}
	return GRPC_STATUS_OK;
}

/* Growable arrays of message pointers inside the arena, bounded by the caller. */
struct response_builder {
	struct arena *arena;
	V1beta1__ContainerAllocateResponse *out;
	size_t devices_cap, mounts_cap;
	bool oom;
};

static void add_device(struct response_builder *b, const char *host, const char *container)
{
	if (b->out->n_devices == b->devices_cap) {
		b->oom = true;
		return;
	}
	V1beta1__DeviceSpec *spec = arena_alloc(b->arena, sizeof(*spec));
	if (!spec) {
		b->oom = true;
		return;
	}
	v1beta1__device_spec__init(spec);
	spec->host_path = arena_strdup(b->arena, host);
	spec->container_path = arena_strdup(b->arena, container);
	spec->permissions = arena_strdup(b->arena, "rw");
	if (!spec->host_path || !spec->container_path || !spec->permissions)
		b->oom = true;
	b->out->devices[b->out->n_devices++] = spec;
}

static void add_mount(struct response_builder *b, const char *path)
{
	if (b->out->n_mounts == b->mounts_cap) {
		b->oom = true;
		return;
	}
	V1beta1__Mount *m = arena_alloc(b->arena, sizeof(*m));
	if (!m) {
		b->oom = true;
		return;
	}
	v1beta1__mount__init(m);
	m->host_path = arena_strdup(b->arena, path);
	m->container_path = m->host_path;
	m->read_only = 1;
	if (!m->host_path)
		b->oom = true;
	b->out->mounts[b->out->n_mounts++] = m;
}

static bool exists_in(const char *dir, const char *name)
{
	char path[4200];
	return path_join(path, sizeof(path), dir, name) == 0 && path_exists(path);
}

static int compare_phy(const void *a, const void *b)
{
	const struct npu_device *const *x = a, *const *y = b;
	return npu_phy_compare((*x)->chip.phy_id, (*y)->chip.phy_id);
}

static void add_shared_nodes(struct response_builder *b, const struct allocate_paths *paths, enum npu_family family)
{
	const struct npu_shared_node *nodes;
	size_t n = npu_family_shared_nodes(family, &nodes);
	char dev[80];

	for (size_t i = 0; i < n; i++) {
		/* 310B boards expose a docker-specific manager that takes the usual name inside. */
		if (family == NPU_FAMILY_310B && strcmp(nodes[i].name, "davinci_manager") == 0 &&
		    exists_in(paths->dev_dir, "davinci_manager_docker")) {
			add_device(b, "/dev/davinci_manager_docker", "/dev/davinci_manager");
			continue;
		}
		if (!exists_in(paths->dev_dir, nodes[i].name))
			continue;
		snprintf(dev, sizeof(dev), "/dev/%s", nodes[i].name);
		add_device(b, dev, dev);
	}
}

static V1beta1__ContainerAllocateResponse *build_container(struct arena *arena, const struct npu_snapshot *snap,
							   const struct allocate_paths *paths,
							   const V1beta1__ContainerAllocateRequest *cr)
{
	size_t n = cr->n_devices_ids;
	const struct npu_device **devs = arena_alloc(arena, n * sizeof(*devs));
	V1beta1__ContainerAllocateResponse *out = arena_alloc(arena, sizeof(*out));
	if (!devs || !out)
		return NULL;
	v1beta1__container_allocate_response__init(out);
	for (size_t i = 0; i < n; i++)
		devs[i] = npu_snapshot_find(snap, cr->devices_ids[i]);
	qsort(devs, n, sizeof(*devs), compare_phy);

	struct response_builder b = { .arena = arena, .out = out };
	b.devices_cap = n + 32; /* the chips plus every shared node of any family */
	b.mounts_cap = ELEMENTSOF(driver_mounts);
	out->devices = arena_alloc(arena, b.devices_cap * sizeof(*out->devices));
	out->mounts = arena_alloc(arena, b.mounts_cap * sizeof(*out->mounts));
	if (!out->devices || !out->mounts)
		return NULL;

	char dev[40];
	for (size_t i = 0; i < n; i++) {
		snprintf(dev, sizeof(dev), "/dev/davinci%u", devs[i]->chip.phy_id);
		add_device(&b, dev, dev);
	}
	/* A node holds one family; should it hold several, each family's nodes are added once. */
	for (size_t i = 0; i < n; i++) {
		bool seen = false;
		for (size_t j = 0; j < i && !seen; j++)
			seen = devs[j]->chip.family == devs[i]->chip.family;
		if (!seen)
			add_shared_nodes(&b, paths, devs[i]->chip.family);
	}

	for (size_t i = 0; i < b.mounts_cap; i++) {
		char host[4200];
		if (driver_mounts[i].under_driver) {
			if (path_join(host, sizeof(host), paths->driver_path, driver_mounts[i].path) < 0)
				continue;
		} else if (str_copy(host, sizeof(host), driver_mounts[i].path) < 0) {
			continue;
		}
		if (exists_in(paths->host_root, host))
			add_mount(&b, host);
	}

	/* ASCEND_VISIBLE_DEVICES: physical ids, ascending, comma separated. */
	size_t cap = n * 11 + 1;
	char *visible = arena_alloc(arena, cap);
	V1beta1__ContainerAllocateResponse__EnvsEntry *env = arena_alloc(arena, sizeof(*env));
	out->envs = arena_alloc(arena, sizeof(*out->envs));
	if (!visible || !env || !out->envs || b.oom)
		return NULL;
	struct strbuf sb;
	strbuf_init(&sb, visible, cap, NULL);
	for (size_t i = 0; i < n; i++)
		(void)strbuf_printf(&sb, "%s%u", i ? "," : "", devs[i]->chip.phy_id); /* cap fits n ids */
	v1beta1__container_allocate_response__envs_entry__init(env);
	env->key = arena_strdup(arena, "ASCEND_VISIBLE_DEVICES");
	env->value = visible;
	if (!env->key)
		return NULL;
	out->envs[0] = env;
	out->n_envs = 1;
	return out;
}

grpc_status_code allocate_answer(const struct npu_snapshot *snap, const struct allocate_paths *paths,
				 const uint8_t *request, size_t len, uint8_t **ret_body, size_t *ret_len,
				 char *details, size_t details_size)
{
	struct arena arena = { 0 };
	grpc_status_code code;
	uint8_t *body = NULL;

	ProtobufCMessage *message;
	code = request_unpack(&v1beta1__allocate_request__descriptor, request, len, &message, details, details_size);
	if (code != GRPC_STATUS_OK)
		return code;
	V1beta1__AllocateRequest *req = (V1beta1__AllocateRequest *)message;

	code = validate(snap, req, details, details_size);
	if (code != GRPC_STATUS_OK)
		goto out;

	V1beta1__AllocateResponse resp;
	v1beta1__allocate_response__init(&resp);
	resp.n_container_responses = req->n_container_requests;
	resp.container_responses = arena_alloc(&arena, req->n_container_requests * sizeof(*resp.container_responses));
	code = GRPC_STATUS_RESOURCE_EXHAUSTED;
	if (!resp.container_responses)
		goto oom;
	for (size_t c = 0; c < req->n_container_requests; c++) {
		resp.container_responses[c] = build_container(&arena, snap, paths, req->container_requests[c]);
		if (!resp.container_responses[c])
			goto oom;
	}

	size_t size = v1beta1__allocate_response__get_packed_size(&resp);
	body = malloc(size ? size : 1);
	if (!body)
		goto oom;
	v1beta1__allocate_response__pack(&resp, body);
	*ret_body = body;
	*ret_len = size;
	code = GRPC_STATUS_OK;
	goto out;

oom:
	request_reject(details, details_size, code, "out of memory building the response");
out:
	arena_free(&arena);
	v1beta1__allocate_request__free_unpacked(req, NULL);
	return code;
}
