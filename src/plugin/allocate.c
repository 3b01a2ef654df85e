/* SPDX-License-Identifier: Apache-2.0 */
#include "plugin/allocate.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <limits.h>

#include "base/arena.h"
#include "base/macro.h"
#include "base/strbuf.h"
#include "deviceplugin.pb-c.h"
#include "node/cdi.h"
#include "node/device_metadata.h"
#include "plugin/request.h"
#include "node/status_files.h"
#include "node/visible.h"

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

/* The variables an answer sets at most: ASCEND_VISIBLE_DEVICES,
 * ASCEND_RT_VISIBLE_DEVICES, ASCEND_RUNTIME_OPTIONS, ASCEND_NPU_NETWORK,
 * ASCEND_NPU_STATUS and ASCEND_NPU_METADATA. */
#define ALLOCATE_MAX_ENVS 6

/* Growable arrays of message pointers inside the arena, bounded by the caller. */
struct response_builder {
	struct arena *arena;
	V1beta1__ContainerAllocateResponse *out;
	size_t devices_cap, mounts_cap;
	bool oom;
};

/* The strings outlive the packing (the arena's, or the host files' the
 * caller holds a reference to): they are not copied. */
static void add_device(struct response_builder *b, const char *host, const char *container)
{
	static char rw[] = "rw";
	if (b->out->n_devices == b->devices_cap || !host || !container) {
		b->oom = true;
		return;
	}
	V1beta1__DeviceSpec *spec = arena_alloc(b->arena, sizeof(*spec));
	if (!spec) {
		b->oom = true;
		return;
	}
	v1beta1__device_spec__init(spec);
	spec->host_path = (char *)(uintptr_t)host;
	spec->container_path = (char *)(uintptr_t)container;
	spec->permissions = rw;
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
	m->host_path = (char *)(uintptr_t)path; /* the host files', as in add_device */
	m->container_path = m->host_path;
	m->read_only = 1;
	b->out->mounts[b->out->n_mounts++] = m;
}

/* native: DeviceSpecs and read-only mounts. */
static void add_native(struct response_builder *b, const struct host_files *files, const struct npu_device **devs,
		       size_t n)
{
	/* The chips plus the shared nodes of every family there is. */
	b->devices_cap = n;
	for (size_t family = 0; family < HOST_FILES_FAMILIES; family++)
		b->devices_cap += files->n_nodes[family];
	b->mounts_cap = HOST_FILES_MAX_MOUNTS;
	b->out->devices = arena_alloc(b->arena, b->devices_cap * sizeof(*b->out->devices));
	b->out->mounts = arena_alloc(b->arena, b->mounts_cap * sizeof(*b->out->mounts));
	if (!b->out->devices || !b->out->mounts) {
		b->oom = true;
		return;
	}

	/* A vNPU's node /dev/vdavinci<id> is /dev/davinci<id> inside. */
	for (size_t i = 0; i < n; i++) {
		uint32_t number = npu_device_number(devs[i]);
		add_device(b, arena_printf(b->arena, "/dev/%s%u", npu_device_node_prefix(devs[i]), number),
			   arena_printf(b->arena, "/dev/davinci%u", number));
	}
	/* A node holds one family; should it hold several, each family's nodes are added once. */
	enum npu_family families[HOST_FILES_FAMILIES];
	size_t n_families = host_files_families(devs, n, families);
	for (size_t f = 0; f < n_families; f++) {
		size_t count;
		const struct host_node *nodes = host_files_nodes(files, families[f], &count);
		for (size_t k = 0; k < count; k++)
			add_device(b, nodes[k].host, nodes[k].container);
	}
	for (size_t i = 0; i < files->n_mounts; i++)
		add_mount(b, files->mounts[i]);
}

/* cdi: the qualified names, as CDI devices and in the annotation. */
static void add_cdi(struct response_builder *b, const struct cdi_names *cdi, const struct npu_device **devs,
		    size_t n)
{
	size_t cap = n * (strlen(cdi->kind) + 17) + 1;
	char *joined = arena_alloc(b->arena, cap);
	V1beta1__ContainerAllocateResponse__AnnotationsEntry *annotation = arena_alloc(b->arena, sizeof(*annotation));
	b->out->annotations = arena_alloc(b->arena, sizeof(*b->out->annotations));
	b->out->cdi_devices = arena_alloc(b->arena, n * sizeof(*b->out->cdi_devices));
	if (!joined || !annotation || !b->out->annotations || !b->out->cdi_devices) {
		b->oom = true;
		return;
	}
	struct strbuf sb;
	strbuf_init(&sb, joined, cap, NULL);
	for (size_t i = 0; i < n; i++) {
		V1beta1__CDIDevice *device = arena_alloc(b->arena, sizeof(*device));
		if (!device) {
			b->oom = true;
			return;
		}
		v1beta1__cdidevice__init(device);
		const char *vnpu = devs[i]->kind == NPU_DEVICE_VNPU ? "vnpu-" : "";
		uint32_t number = npu_device_number(devs[i]);
		device->name = arena_printf(b->arena, "%s=%s%u", cdi->kind, vnpu, number);
		if (!device->name)
			b->oom = true;
		b->out->cdi_devices[b->out->n_cdi_devices++] = device;
		(void)strbuf_printf(&sb, "%s%s=%s%u", i ? "," : "", cdi->kind, vnpu, number); /* cap fits */
	}
	/* Runtimes take every annotation under cdi.k8s.io/ as a request for the
	 * comma-separated names in it; those that read cdi_devices as well
	 * inject each device once. */
	v1beta1__container_allocate_response__annotations_entry__init(annotation);
	annotation->key = arena_strdup(b->arena, cdi->annotation_key);
	annotation->value = joined;
	if (!annotation->key)
		b->oom = true;
	b->out->annotations[0] = annotation;
	b->out->n_annotations = 1;
}

static void add_env(struct response_builder *b, const char *key, const char *value)
{
	V1beta1__ContainerAllocateResponse__EnvsEntry *env = arena_alloc(b->arena, sizeof(*env));
	if (!env) {
		b->oom = true;
		return;
	}
	v1beta1__container_allocate_response__envs_entry__init(env);
	env->key = arena_strdup(b->arena, key);
	env->value = arena_strdup(b->arena, value);
	if (!env->key || !env->value)
		b->oom = true;
	b->out->envs[b->out->n_envs++] = env;
}

/* ASCEND_VISIBLE_DEVICES with the devices ascending (node/visible.h);
 * ASCEND_RUNTIME_OPTIONS=VIRTUAL for vNPUs where the Ascend Docker Runtime
 * mounts them; ASCEND_NPU_NETWORK where the chips have a network identity;
 * ASCEND_RT_VISIBLE_DEVICES, their numbers inside the container. */
static void add_envs(struct response_builder *b, unsigned strategies, const struct npu_device **devs, size_t n)
{
	size_t cap = n * VISIBLE_NUMBER_MAX + 1;
	char *visible = arena_alloc(b->arena, cap);
	char *logical = arena_alloc(b->arena, cap);
	b->out->envs = arena_alloc(b->arena, ALLOCATE_MAX_ENVS * sizeof(*b->out->envs));
	if (!visible || !logical || !b->out->envs) {
		b->oom = true;
		return;
	}
	(void)visible_devices(devs, n, visible, cap); /* cap fits n ids */
	add_env(b, VISIBLE_DEVICES_ENV, visible);
	if ((strategies & ALLOCATE_STRATEGY_ASCEND_RUNTIME) && visible_virtual(devs, n))
		add_env(b, VISIBLE_OPTIONS_ENV, VISIBLE_OPTIONS_VIRTUAL);
	char *network = NULL;
	int r = visible_network(devs, n, &network);
	if (r == 0)
		add_env(b, VISIBLE_NETWORK_ENV, network);
	else if (r != -ENODATA)
		b->oom = true;
	free(network);
	(void)visible_logical(n, logical, cap); /* as many numbers, each shorter */
	add_env(b, VISIBLE_RUNTIME_ENV, logical);
}

/* Appends a read-only mount of host at container; the mounts' array grows
 * by one in the arena, for what add_native did not size it for. */
static void append_mount(struct response_builder *b, const char *host, const char *container)
{
	V1beta1__Mount **grown = arena_alloc(b->arena, (b->out->n_mounts + 1) * sizeof(*grown));
	V1beta1__Mount *m = arena_alloc(b->arena, sizeof(*m));
	if (!grown || !m) {
		b->oom = true;
		return;
	}
	if (b->out->n_mounts)
		memcpy(grown, b->out->mounts, b->out->n_mounts * sizeof(*grown));
	v1beta1__mount__init(m);
	m->host_path = arena_strdup(b->arena, host);
	m->container_path = (char *)(uintptr_t)container;
	m->read_only = 1;
	if (!m->host_path)
		b->oom = true;
	grown[b->out->n_mounts++] = m;
	b->out->mounts = grown;
}

/* The device metadata of the set devs (node/device_metadata.h), written
 * beside its status file in the set's directory name: the file mounted
 * read-only at ALLOCATE_METADATA_PATH, and ASCEND_NPU_METADATA naming it.
 * The devices are in the container's order, so each one's
 * containerLogicalID is its place. A file that cannot be written leaves
 * both out, as a status directory that cannot be made does. */
static void add_metadata(struct response_builder *b, struct status_dirs *status, const char *name,
			 const char *resource, const struct npu_device **devs, size_t n)
{
	struct device_metadata_device m[DEVICE_METADATA_MAX_DEVICES];
	char host[PATH_MAX], *json = NULL;
	if (b->oom || !resource || n > DEVICE_METADATA_MAX_DEVICES)
		return;
	/* A set's metadata says what does not change while the node runs
	 * (its chips, their order, where they sit): written when the set is
	 * first handed out, then only mounted, so that Allocate's usual cost
	 * stays one stat more. */
	if (status_dirs_lookup(status, name, ALLOCATE_METADATA_FILE_NAME, host, sizeof(host)) < 0) {
		for (size_t i = 0; i < n; i++)
			m[i] = (struct device_metadata_device){ .device = devs[i], .logical_id = i };
		/* No claim: the resource the container asked for names driver and request. */
		const struct device_metadata_owner none = { 0 };
		int r = device_metadata_render(resource, &none, resource, m, n, &json);
		if (r == 0)
			r = status_dirs_put(status, name, ALLOCATE_METADATA_FILE_NAME, json, host, sizeof(host));
		free(json);
		if (r < 0)
			return;
	}
	append_mount(b, host, ALLOCATE_METADATA_PATH);
	add_env(b, ALLOCATE_METADATA_ENV, ALLOCATE_METADATA_PATH);
}

/* The live status file of the set devs: its directory (made the first time
 * the set is handed out) mounted read-only, and ASCEND_NPU_STATUS; then the
 * set's device metadata. A directory that cannot be made leaves all out:
 * the container runs without the files, as on a node without a status
 * directory. */
static void add_status(struct response_builder *b, struct status_dirs *status, const char *resource,
		       const struct npu_device **devs, size_t n)
{
	char name[STATUS_NAME_MAX + 1], dir[PATH_MAX];
	if (b->oom || !status || status_set_name(devs, n, name, sizeof(name)) < 0 ||
	    status_dirs_ensure(status, name, devs, n, dir, sizeof(dir)) < 0)
		return;
	append_mount(b, dir, STATUS_CONTAINER_DIR);
	add_env(b, STATUS_ENV, STATUS_CONTAINER_DIR "/" STATUS_FILE_NAME);
	add_metadata(b, status, name, resource, devs, n);
}

static V1beta1__ContainerAllocateResponse *build_container(struct arena *arena, const struct npu_snapshot *snap,
							   const struct host_files *files,
							   const struct allocate_options *options,
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
	visible_sort(devs, n);

	unsigned strategies = options->strategies ? options->strategies : ALLOCATE_STRATEGY_NATIVE;
	static const struct host_files no_files; /* none scanned yet (out of memory) */
	if (!files)
		files = &no_files;
	struct response_builder b = { .arena = arena, .out = out };
	if (strategies & ALLOCATE_STRATEGY_NATIVE)
		add_native(&b, files, devs, n);
	if ((strategies & ALLOCATE_STRATEGY_CDI) && options->cdi)
		add_cdi(&b, options->cdi, devs, n);
	/* Every strategy sets it, to the same value: once. */
	add_envs(&b, strategies, devs, n);
	add_status(&b, options->status, options->resource, devs, n);
	return b.oom ? NULL : out;
}

/* Time-slicing: a copy of the request whose container requests name each
 * chip of their replicas once, in the arena, so that the rest of Allocate
 * deals in chips only. Malformed, unknown and repeated replica IDs are
 * refused as unknown and repeated chip IDs are. */
static grpc_status_code map_replicas(struct arena *arena, const struct npu_snapshot *snap,
				     const struct replica_options *sharing, const V1beta1__AllocateRequest *req,
				     V1beta1__AllocateRequest *ret_chips, char *details, size_t size)
{
	if (req->n_container_requests == 0 || req->n_container_requests > ALLOCATE_MAX_CONTAINERS) {
		*ret_chips = *req; /* validate says why */
		return GRPC_STATUS_OK;
	}
	V1beta1__ContainerAllocateRequest **crs = arena_alloc(arena, req->n_container_requests * sizeof(*crs));
	if (!crs)
		return request_reject(details, size, GRPC_STATUS_RESOURCE_EXHAUSTED, "out of memory");
	size_t advertised = snap->count * sharing->replicas;
	for (size_t c = 0; c < req->n_container_requests; c++) {
		const V1beta1__ContainerAllocateRequest *cr = req->container_requests[c];
		if (cr->n_devices_ids > advertised)
			return request_reject(details, size, GRPC_STATUS_INVALID_ARGUMENT,
					      "container request %zu asks for %zu devices but the plugin advertises %zu", c,
					      cr->n_devices_ids, advertised);
		if (cr->n_devices_ids > 1 && sharing->fail_requests_greater_than_one)
			return request_reject(details, size, GRPC_STATUS_INVALID_ARGUMENT,
					      "container request %zu asks for %zu shared devices, but "
					      "sharing.timeSlicing.failRequestsGreaterThanOne is set: a container may ask for 1",
					      c, cr->n_devices_ids);
		V1beta1__ContainerAllocateRequest *out = arena_alloc(arena, sizeof(*out));
		char **ids = arena_alloc(arena, (cr->n_devices_ids ? cr->n_devices_ids : 1) * sizeof(*ids));
		bool *seen = arena_alloc(arena, (snap->count ? snap->count : 1) * sizeof(*seen));
		if (!out || !ids || !seen)
			return request_reject(details, size, GRPC_STATUS_RESOURCE_EXHAUSTED, "out of memory");
		memset(seen, 0, (snap->count ? snap->count : 1) * sizeof(*seen));
		v1beta1__container_allocate_request__init(out);
		out->devices_ids = ids;
		for (size_t i = 0; i < cr->n_devices_ids; i++) {
			const char *id = cr->devices_ids[i];
			size_t index;
			unsigned k;
			if (strlen(id) > ALLOCATE_MAX_ID_LENGTH)
				return request_reject(details, size, GRPC_STATUS_INVALID_ARGUMENT,
						      "device ID \"%.32s...\" is longer than %d characters", id,
						      ALLOCATE_MAX_ID_LENGTH);
			if (replica_parse(snap, sharing->replicas, id, &index, &k) < 0)
				return request_reject(details, size, GRPC_STATUS_INVALID_ARGUMENT,
						      "unknown device ID \"%s\" (time-slicing IDs are <chip>::<0..%u>, "
						      "<chip>::0 alone for a chip whose device-share mode is off)",
						      id,
						      sharing->replicas - 1);
			for (size_t j = 0; j < i; j++)
				if (strcmp(cr->devices_ids[j], id) == 0)
					return request_reject(details, size, GRPC_STATUS_INVALID_ARGUMENT,
							      "duplicate device ID \"%s\"", id);
			if (!seen[index]) {
				seen[index] = true;
				ids[out->n_devices_ids++] = (char *)(uintptr_t)snap->devices[index].id;
			}
		}
		crs[c] = out;
	}
	*ret_chips = *req;
	ret_chips->container_requests = crs;
	return GRPC_STATUS_OK;
}

grpc_status_code allocate_answer(const struct npu_snapshot *snap, const struct host_files *files,
				 const struct allocate_options *options,
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
	V1beta1__AllocateRequest *unpacked = (V1beta1__AllocateRequest *)message;
	V1beta1__AllocateRequest chips = *unpacked, *req = &chips;
	if (replica_sharing(&options->sharing)) {
		code = map_replicas(&arena, snap, &options->sharing, unpacked, &chips, details, details_size);
		if (code != GRPC_STATUS_OK)
			goto out;
	}

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
		resp.container_responses[c] = build_container(&arena, snap, files, options, req->container_requests[c]);
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
	v1beta1__allocate_request__free_unpacked(unpacked, NULL);
	return code;
}
