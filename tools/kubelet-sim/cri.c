/* SPDX-License-Identifier: Apache-2.0 */
/* kubelet-sim's CRI client; see cri.h. Requests are built in an arena (one
 * per call, freed at the end), packed, sent with gc_unary, and the answer is
 * decoded into the caller's bounded structures. */
#include "cri.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/arena.h"
#include "base/parse.h"
#include "cri.pb-c.h"
#include "cri_api.h"
#include "grpc/client.h"

/* Deadlines. The kubelet gives every runtime call its runtimeRequestTimeout
 * (2 min by default), RunPodSandbox twice that, and StopContainer and
 * ExecSync the command's own timeout on top. kubelet-sim is a test tool: a
 * healthy runtime answers most calls in well under a second, and a test
 * should learn of a stuck runtime sooner than the kubelet would, so those
 * calls get 30 s. Creating a sandbox or a container may unpack an image
 * (and containerd pulls a missing sandbox image), which can legitimately
 * take minutes, so those get 2 min (the kubelet: 2 min for CreateContainer, 4 for
 * RunPodSandbox). */
#define CRI_TIMEOUT_MS (30 * 1000)
#define CRI_SLOW_TIMEOUT_MS (2 * 60 * 1000)
/* Added to StopContainer's grace period and ExecSync's timeout: the runtime
 * enforces those; this leaves it time to kill and report. */
#define CRI_MARGIN_MS (30 * 1000)

/* What the kubelet sends in VersionRequest (kuberuntime's
 * kubeRuntimeAPIVersion); containerd ignores it. */
#define KUBE_RUNTIME_API_VERSION "0.1.0"

/* The largest request sent: far below containerd's 16 MiB receive limit.
 * CRI_MAX_LIST (cri.h) bounds the lists, which keeps the arena's size
 * arithmetic far from overflow. */
#define CRI_MAX_REQUEST_BYTES (4 * 1024 * 1024)

#define UNIX_SCHEME "unix://"

struct cri {
	struct gc_channel *channel;
};

/* A valid protobuf message of length 0 needs a non-NULL buffer to decode from. */
static const uint8_t empty_message[1];

static int local_error(struct cri_status *status, int r, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* Fills status for a local failure and returns r. */
static int local_error(struct cri_status *status, int r, const char *fmt, ...)
{
	if (status) {
		va_list ap;
		va_start(ap, fmt);
		status->code = -1;
		vsnprintf(status->message, sizeof(status->message), fmt, ap);
		va_end(ap);
	}
	return r;
}

/* Copies src into dst[size], cut if need be at a UTF-8 character boundary
 * so that the message stays valid text. */
static void copy_bounded(char *dst, size_t size, const char *src)
{
	size_t n = strnlen(src ? src : "", size);
	if (n == size) {
		n = size - 1;
		while (n > 0 && ((unsigned char)src[n] & 0xC0) == 0x80)
			n--;
	}
	if (n)
		memcpy(dst, src, n);
	dst[n] = '\0';
}

int cri_open(const char *endpoint, struct cri **ret_cri)
{
	if (!endpoint)
		return -EINVAL;
	const char *path = endpoint;
	if (strncmp(path, UNIX_SCHEME, strlen(UNIX_SCHEME)) == 0)
		path += strlen(UNIX_SCHEME);
	else if (strstr(path, "://"))
		return -EINVAL; /* another scheme: the kubelet only dials unix sockets on Linux */
	/* Relative paths would depend on the working directory of the moment. */
	if (path[0] != '/')
		return -EINVAL;

	struct cri *cri = calloc(1, sizeof(*cri));
	if (!cri)
		return -ENOMEM;
	int r = gc_channel_open(path, &cri->channel);
	if (r < 0) {
		free(cri);
		return r;
	}
	*ret_cri = cri;
	return 0;
}

void cri_close(struct cri *cri)
{
	if (!cri)
		return;
	gc_channel_close(cri->channel);
	free(cri);
}

/* One unary call: packs req, sends it to method with a deadline and decodes
 * the answer as resp_desc. Returns 0 with *ret_resp (free it with
 * protobuf_c_message_free_unpacked), -EIO with the runtime's status, or
 * another negative errno with a local status. */
static int call(struct cri *cri, const char *method, const ProtobufCMessage *req, int64_t timeout_ms,
		const ProtobufCMessageDescriptor *resp_desc, ProtobufCMessage **ret_resp, struct cri_status *status)
{
	struct gc_result result = { 0 };
	uint8_t *packed = NULL;
	int r;

	size_t len = protobuf_c_message_get_packed_size(req);
	if (len > CRI_MAX_REQUEST_BYTES) {
		r = local_error(status, -EMSGSIZE, "%s request is %zu bytes, more than %d", req->descriptor->name, len,
				CRI_MAX_REQUEST_BYTES);
		goto out;
	}
	packed = malloc(len ? len : 1);
	if (!packed) {
		r = local_error(status, -ENOMEM, "out of memory packing %s", req->descriptor->name);
		goto out;
	}
	protobuf_c_message_pack(req, packed);

	r = gc_unary(cri->channel, method, packed, len, timeout_ms, &result);
	if (r < 0) {
		r = local_error(status, r, "cannot call %s: %s", method, strerror(-r));
		goto out;
	}
	if (result.status != GRPC_STATUS_OK) {
		if (status) {
			status->code = (int)result.status;
			copy_bounded(status->message, sizeof(status->message), result.details);
		}
		r = -EIO;
		goto out;
	}
	ProtobufCMessage *resp =
		protobuf_c_message_unpack(resp_desc, NULL, result.len, result.body ? result.body : empty_message);
	if (!resp) {
		r = local_error(status, -EBADMSG, "cannot decode the runtime's %s", resp_desc->name);
		goto out;
	}
	*ret_resp = resp;
	r = 0;
out:
	gc_result_clear(&result);
	free(packed);
	return r;
}

/* A call whose answer carries nothing kubelet-sim needs. */
static int call_empty(struct cri *cri, const char *method, const ProtobufCMessage *req, int64_t timeout_ms,
		      const ProtobufCMessageDescriptor *resp_desc, struct cri_status *status)
{
	ProtobufCMessage *resp = NULL;
	int r = call(cri, method, req, timeout_ms, resp_desc, &resp, status);
	if (r == 0)
		protobuf_c_message_free_unpacked(resp, NULL);
	return r;
}

static bool valid_id(const char *id)
{
	return id && id[0] != '\0';
}

/* Whether a caller's array of n elements is usable. */
static bool valid_list(const void *items, size_t n)
{
	return n == 0 || (items && n <= CRI_MAX_LIST);
}

/* The message fields are char *; the caller's strings are const, so every
 * string is copied into the arena. NULL means "". */
static char *dup_str(struct arena *a, const char *s)
{
	return arena_strdup(a, s ? s : "");
}

/* Copies n strings into the arena; NULL only when out of memory. */
static char **dup_strv(struct arena *a, const char *const *v, size_t n)
{
	char **out = arena_alloc(a, (n ? n : 1) * sizeof(*out));
	if (!out)
		return NULL;
	for (size_t i = 0; i < n; i++)
		if (!(out[i] = dup_str(a, v[i])))
			return NULL;
	return out;
}

static int64_t *dup_int64v(struct arena *a, const int64_t *v, size_t n)
{
	int64_t *out = arena_alloc(a, (n ? n : 1) * sizeof(*out));
	if (out && n)
		memcpy(out, v, n * sizeof(*out));
	return out;
}

static Runtime__V1__Int64Value *int64_value(struct arena *a, int64_t value)
{
	Runtime__V1__Int64Value *v = arena_alloc(a, sizeof(*v));
	if (v) {
		runtime__v1__int64_value__init(v);
		v->value = value;
	}
	return v;
}

/* Each map<string, string> has an entry type of its own, all shaped like
 * KeyValue; this defines the builder of an array of T from the pairs. */
#define DEFINE_KV_BUILDER(fn, T, init_fn)                                                                      \
	static T **fn(struct arena *a, const struct cri_kv *kv, size_t n)                                      \
	{                                                                                                      \
		T **entries = arena_alloc(a, (n ? n : 1) * sizeof(*entries));                                  \
		if (!entries)                                                                                  \
			return NULL;                                                                           \
		for (size_t i = 0; i < n; i++) {                                                               \
			T *e = arena_alloc(a, sizeof(*e));                                                     \
			if (!e)                                                                                \
				return NULL;                                                                   \
			init_fn(e);                                                                            \
			e->key = dup_str(a, kv[i].key);                                                        \
			e->value = dup_str(a, kv[i].value);                                                    \
			if (!e->key || !e->value)                                                              \
				return NULL;                                                                   \
			entries[i] = e;                                                                        \
		}                                                                                              \
		return entries;                                                                                \
	}

DEFINE_KV_BUILDER(key_values, Runtime__V1__KeyValue, runtime__v1__key_value__init)
DEFINE_KV_BUILDER(sandbox_labels, Runtime__V1__PodSandboxConfig__LabelsEntry,
		   runtime__v1__pod_sandbox_config__labels_entry__init)
DEFINE_KV_BUILDER(sandbox_annotations, Runtime__V1__PodSandboxConfig__AnnotationsEntry,
		   runtime__v1__pod_sandbox_config__annotations_entry__init)
DEFINE_KV_BUILDER(container_labels, Runtime__V1__ContainerConfig__LabelsEntry,
		   runtime__v1__container_config__labels_entry__init)
DEFINE_KV_BUILDER(container_annotations, Runtime__V1__ContainerConfig__AnnotationsEntry,
		   runtime__v1__container_config__annotations_entry__init)

/* The namespaces as the kubelet asks for them (kuberuntime's
 * namespacesForPod): network and IPC are the pod's or the node's; the PID
 * namespace is the node's or the container's own (a v1 pod's default, as
 * kubelet-sim does not model shareProcessNamespace). */
static Runtime__V1__NamespaceOption *namespaces(struct arena *a, bool host_network, bool host_pid, bool host_ipc)
{
	Runtime__V1__NamespaceOption *ns = arena_alloc(a, sizeof(*ns));
	if (!ns)
		return NULL;
	runtime__v1__namespace_option__init(ns);
	ns->network = host_network ? RUNTIME__V1__NAMESPACE_MODE__NODE : RUNTIME__V1__NAMESPACE_MODE__POD;
	ns->pid = host_pid ? RUNTIME__V1__NAMESPACE_MODE__NODE : RUNTIME__V1__NAMESPACE_MODE__CONTAINER;
	ns->ipc = host_ipc ? RUNTIME__V1__NAMESPACE_MODE__NODE : RUNTIME__V1__NAMESPACE_MODE__POD;
	return ns;
}

static bool valid_sandbox_config(const struct cri_sandbox_config *c)
{
	return c && valid_list(c->labels, c->n_labels) && valid_list(c->annotations, c->n_annotations) &&
	       valid_list(c->supplemental_groups, c->n_supplemental_groups);
}

/* PodSandboxConfig in the arena; NULL only when out of memory. */
static Runtime__V1__PodSandboxConfig *sandbox_config(struct arena *a, const struct cri_sandbox_config *c)
{
	Runtime__V1__PodSandboxConfig *cfg = arena_alloc(a, sizeof(*cfg));
	Runtime__V1__PodSandboxMetadata *md = arena_alloc(a, sizeof(*md));
	Runtime__V1__LinuxPodSandboxConfig *linux = arena_alloc(a, sizeof(*linux));
	Runtime__V1__LinuxSandboxSecurityContext *sc = arena_alloc(a, sizeof(*sc));
	if (!cfg || !md || !linux || !sc)
		return NULL;
	runtime__v1__pod_sandbox_config__init(cfg);
	runtime__v1__pod_sandbox_metadata__init(md);
	runtime__v1__linux_pod_sandbox_config__init(linux);
	runtime__v1__linux_sandbox_security_context__init(sc);

	md->name = dup_str(a, c->name);
	md->uid = dup_str(a, c->uid);
	md->namespace_ = dup_str(a, c->namespace);
	md->attempt = c->attempt;
	cfg->metadata = md;
	cfg->hostname = dup_str(a, c->hostname);
	cfg->log_directory = dup_str(a, c->log_directory);
	cfg->labels = sandbox_labels(a, c->labels, c->n_labels);
	cfg->n_labels = c->n_labels;
	cfg->annotations = sandbox_annotations(a, c->annotations, c->n_annotations);
	cfg->n_annotations = c->n_annotations;

	sc->namespace_options = namespaces(a, c->host_network, c->host_pid, c->host_ipc);
	sc->privileged = c->privileged;
	if (c->has_run_as_user && !(sc->run_as_user = int64_value(a, c->run_as_user)))
		return NULL;
	if (c->has_run_as_group && !(sc->run_as_group = int64_value(a, c->run_as_group)))
		return NULL;
	sc->supplemental_groups = dup_int64v(a, c->supplemental_groups, c->n_supplemental_groups);
	sc->n_supplemental_groups = c->n_supplemental_groups;
	linux->security_context = sc;
	cfg->linux = linux;

	if (!md->name || !md->uid || !md->namespace_ || !cfg->hostname || !cfg->log_directory || !cfg->labels ||
	    !cfg->annotations || !sc->namespace_options || !sc->supplemental_groups)
		return NULL;
	return cfg;
}

static bool valid_container_config(const struct cri_container_config *c)
{
	return c && valid_list(c->command, c->n_command) && valid_list(c->args, c->n_args) &&
	       valid_list(c->envs, c->n_envs) && valid_list(c->mounts, c->n_mounts) &&
	       valid_list(c->devices, c->n_devices) && valid_list(c->labels, c->n_labels) &&
	       valid_list(c->annotations, c->n_annotations) && valid_list(c->cdi_devices, c->n_cdi_devices) &&
	       valid_list(c->supplemental_groups, c->n_supplemental_groups) &&
	       valid_list(c->add_capabilities, c->n_add_capabilities) &&
	       valid_list(c->drop_capabilities, c->n_drop_capabilities);
}

static Runtime__V1__Mount **mounts(struct arena *a, const struct cri_mount *m, size_t n)
{
	Runtime__V1__Mount **out = arena_alloc(a, (n ? n : 1) * sizeof(*out));
	if (!out)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		Runtime__V1__Mount *e = arena_alloc(a, sizeof(*e));
		if (!e)
			return NULL;
		runtime__v1__mount__init(e);
		e->container_path = dup_str(a, m[i].container_path);
		e->host_path = dup_str(a, m[i].host_path);
		e->readonly = m[i].readonly;
		if (!e->container_path || !e->host_path)
			return NULL;
		out[i] = e;
	}
	return out;
}

static Runtime__V1__Device **devices(struct arena *a, const struct cri_device *d, size_t n)
{
	Runtime__V1__Device **out = arena_alloc(a, (n ? n : 1) * sizeof(*out));
	if (!out)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		Runtime__V1__Device *e = arena_alloc(a, sizeof(*e));
		if (!e)
			return NULL;
		runtime__v1__device__init(e);
		e->container_path = dup_str(a, d[i].container_path);
		e->host_path = dup_str(a, d[i].host_path);
		e->permissions = dup_str(a, d[i].permissions);
		if (!e->container_path || !e->host_path || !e->permissions)
			return NULL;
		out[i] = e;
	}
	return out;
}

static Runtime__V1__CDIDevice **cdi_devices(struct arena *a, const char *const *names, size_t n)
{
	Runtime__V1__CDIDevice **out = arena_alloc(a, (n ? n : 1) * sizeof(*out));
	if (!out)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		Runtime__V1__CDIDevice *e = arena_alloc(a, sizeof(*e));
		if (!e)
			return NULL;
		runtime__v1__cdidevice__init(e);
		if (!(e->name = dup_str(a, names[i])))
			return NULL;
		out[i] = e;
	}
	return out;
}

/* LinuxContainerConfig in the arena; NULL only when out of memory. */
static Runtime__V1__LinuxContainerConfig *container_linux(struct arena *a, const struct cri_container_config *c)
{
	Runtime__V1__LinuxContainerConfig *linux = arena_alloc(a, sizeof(*linux));
	Runtime__V1__LinuxContainerSecurityContext *sc = arena_alloc(a, sizeof(*sc));
	Runtime__V1__Capability *caps = arena_alloc(a, sizeof(*caps));
	if (!linux || !sc || !caps)
		return NULL;
	runtime__v1__linux_container_config__init(linux);
	runtime__v1__linux_container_security_context__init(sc);
	runtime__v1__capability__init(caps);

	caps->add_capabilities = dup_strv(a, c->add_capabilities, c->n_add_capabilities);
	caps->n_add_capabilities = c->n_add_capabilities;
	caps->drop_capabilities = dup_strv(a, c->drop_capabilities, c->n_drop_capabilities);
	caps->n_drop_capabilities = c->n_drop_capabilities;
	sc->capabilities = caps;
	sc->privileged = c->privileged;
	sc->namespace_options = namespaces(a, c->host_network, c->host_pid, c->host_ipc);
	if (c->has_run_as_user && !(sc->run_as_user = int64_value(a, c->run_as_user)))
		return NULL;
	if (c->has_run_as_group && !(sc->run_as_group = int64_value(a, c->run_as_group)))
		return NULL;
	sc->readonly_rootfs = c->readonly_rootfs;
	sc->supplemental_groups = dup_int64v(a, c->supplemental_groups, c->n_supplemental_groups);
	sc->n_supplemental_groups = c->n_supplemental_groups;
	linux->security_context = sc;

	if (!caps->add_capabilities || !caps->drop_capabilities || !sc->namespace_options ||
	    !sc->supplemental_groups)
		return NULL;
	return linux;
}

/* ContainerConfig in the arena; NULL only when out of memory. */
static Runtime__V1__ContainerConfig *container_config(struct arena *a, const struct cri_container_config *c)
{
	Runtime__V1__ContainerConfig *cfg = arena_alloc(a, sizeof(*cfg));
	Runtime__V1__ContainerMetadata *md = arena_alloc(a, sizeof(*md));
	Runtime__V1__ImageSpec *image = arena_alloc(a, sizeof(*image));
	if (!cfg || !md || !image)
		return NULL;
	runtime__v1__container_config__init(cfg);
	runtime__v1__container_metadata__init(md);
	runtime__v1__image_spec__init(image);

	md->name = dup_str(a, c->name);
	md->attempt = c->attempt;
	cfg->metadata = md;
	image->image = dup_str(a, c->image);
	cfg->image = image;
	cfg->command = dup_strv(a, c->command, c->n_command);
	cfg->n_command = c->n_command;
	cfg->args = dup_strv(a, c->args, c->n_args);
	cfg->n_args = c->n_args;
	cfg->working_dir = dup_str(a, c->working_dir);
	cfg->envs = key_values(a, c->envs, c->n_envs);
	cfg->n_envs = c->n_envs;
	cfg->mounts = mounts(a, c->mounts, c->n_mounts);
	cfg->n_mounts = c->n_mounts;
	cfg->devices = devices(a, c->devices, c->n_devices);
	cfg->n_devices = c->n_devices;
	cfg->labels = container_labels(a, c->labels, c->n_labels);
	cfg->n_labels = c->n_labels;
	cfg->annotations = container_annotations(a, c->annotations, c->n_annotations);
	cfg->n_annotations = c->n_annotations;
	cfg->log_path = dup_str(a, c->log_path);
	cfg->linux = container_linux(a, c);
	cfg->cdi_devices = cdi_devices(a, c->cdi_devices, c->n_cdi_devices);
	cfg->n_cdi_devices = c->n_cdi_devices;

	if (!md->name || !image->image || !cfg->command || !cfg->args || !cfg->working_dir || !cfg->envs ||
	    !cfg->mounts || !cfg->devices || !cfg->labels || !cfg->annotations || !cfg->log_path || !cfg->linux ||
	    !cfg->cdi_devices)
		return NULL;
	return cfg;
}

int cri_version(struct cri *cri, struct cri_version *ret_version, struct cri_status *status)
{
	Runtime__V1__VersionRequest req = RUNTIME__V1__VERSION_REQUEST__INIT;
	Runtime__V1__VersionResponse *resp = NULL;
	char version[] = KUBE_RUNTIME_API_VERSION;
	req.version = version;
	int r = call(cri, CRI_METHOD_VERSION, &req.base, CRI_TIMEOUT_MS, &runtime__v1__version_response__descriptor,
		     (ProtobufCMessage **)&resp, status);
	if (r < 0)
		return r;
	struct cri_version v;
	copy_bounded(v.runtime_name, sizeof(v.runtime_name), resp->runtime_name);
	copy_bounded(v.runtime_version, sizeof(v.runtime_version), resp->runtime_version);
	copy_bounded(v.runtime_api_version, sizeof(v.runtime_api_version), resp->runtime_api_version);
	runtime__v1__version_response__free_unpacked(resp, NULL);
	*ret_version = v;
	return 0;
}

int cri_image_present(struct cri *cri, const char *image, bool *ret_present, struct cri_status *status)
{
	if (!valid_id(image))
		return local_error(status, -EINVAL, "no image given");
	struct arena a = { 0 };
	Runtime__V1__ImageStatusRequest req = RUNTIME__V1__IMAGE_STATUS_REQUEST__INIT;
	Runtime__V1__ImageSpec spec = RUNTIME__V1__IMAGE_SPEC__INIT;
	Runtime__V1__ImageStatusResponse *resp = NULL;
	int r;

	if (!(spec.image = dup_str(&a, image))) {
		r = local_error(status, -ENOMEM, "out of memory");
		goto out;
	}
	req.image = &spec;
	r = call(cri, CRI_METHOD_IMAGE_STATUS, &req.base, CRI_TIMEOUT_MS,
		 &runtime__v1__image_status_response__descriptor, (ProtobufCMessage **)&resp, status);
	if (r < 0)
		goto out;
	/* An absent image is an answer without one (not an error). */
	*ret_present = resp->image && resp->image->id[0] != '\0';
	runtime__v1__image_status_response__free_unpacked(resp, NULL);
out:
	arena_free(&a);
	return r;
}

/* Hands a runtime-made ID to the caller; an empty one is a broken answer,
 * as the kubelet also holds. */
static int take_id(const char *id, const char *what, char **ret_id, struct cri_status *status)
{
	if (!valid_id(id))
		return local_error(status, -EBADMSG, "the runtime returned an empty %s ID", what);
	char *copy = strdup(id);
	if (!copy)
		return local_error(status, -ENOMEM, "out of memory");
	*ret_id = copy;
	return 0;
}

int cri_run_sandbox(struct cri *cri, const struct cri_sandbox_config *config, char **ret_id,
		    struct cri_status *status)
{
	if (!valid_sandbox_config(config))
		return local_error(status, -EINVAL, "invalid sandbox config (a list is NULL or too long)");
	struct arena a = { 0 };
	Runtime__V1__RunPodSandboxRequest req = RUNTIME__V1__RUN_POD_SANDBOX_REQUEST__INIT;
	Runtime__V1__RunPodSandboxResponse *resp = NULL;
	int r;

	if (!(req.config = sandbox_config(&a, config))) {
		r = local_error(status, -ENOMEM, "out of memory");
		goto out;
	}
	r = call(cri, CRI_METHOD_RUN_POD_SANDBOX, &req.base, CRI_SLOW_TIMEOUT_MS,
		 &runtime__v1__run_pod_sandbox_response__descriptor, (ProtobufCMessage **)&resp, status);
	if (r < 0)
		goto out;
	r = take_id(resp->pod_sandbox_id, "sandbox", ret_id, status);
	runtime__v1__run_pod_sandbox_response__free_unpacked(resp, NULL);
out:
	arena_free(&a);
	return r;
}

/* A call whose request is only an ID (field 1 of StopPodSandboxRequest,
 * RemovePodSandboxRequest, StartContainerRequest and
 * RemoveContainerRequest) and whose answer is empty. */
static int call_by_id(struct cri *cri, const char *method, const ProtobufCMessageDescriptor *req_desc,
		      const ProtobufCMessageDescriptor *resp_desc, const char *id, const char *what,
		      struct cri_status *status)
{
	if (!valid_id(id))
		return local_error(status, -EINVAL, "no %s ID given", what);
	const ProtobufCFieldDescriptor *field = protobuf_c_message_descriptor_get_field(req_desc, 1);
	struct arena a = { 0 };
	ProtobufCMessage *req = arena_alloc(&a, req_desc->sizeof_message);
	char *copy = dup_str(&a, id);
	int r;
	if (!req || !copy) {
		r = local_error(status, -ENOMEM, "out of memory");
		goto out;
	}
	protobuf_c_message_init(req_desc, req);
	memcpy((char *)req + field->offset, &copy, sizeof(copy));
	r = call_empty(cri, method, req, CRI_TIMEOUT_MS, resp_desc, status);
out:
	arena_free(&a);
	return r;
}

int cri_stop_sandbox(struct cri *cri, const char *sandbox_id, struct cri_status *status)
{
	return call_by_id(cri, CRI_METHOD_STOP_POD_SANDBOX, &runtime__v1__stop_pod_sandbox_request__descriptor,
			  &runtime__v1__stop_pod_sandbox_response__descriptor, sandbox_id, "sandbox", status);
}

int cri_remove_sandbox(struct cri *cri, const char *sandbox_id, struct cri_status *status)
{
	return call_by_id(cri, CRI_METHOD_REMOVE_POD_SANDBOX, &runtime__v1__remove_pod_sandbox_request__descriptor,
			  &runtime__v1__remove_pod_sandbox_response__descriptor, sandbox_id, "sandbox", status);
}

int cri_create_container(struct cri *cri, const char *sandbox_id, const struct cri_container_config *config,
			 const struct cri_sandbox_config *sandbox, char **ret_id, struct cri_status *status)
{
	if (!valid_id(sandbox_id))
		return local_error(status, -EINVAL, "no sandbox ID given");
	if (!valid_container_config(config))
		return local_error(status, -EINVAL, "invalid container config (a list is NULL or too long)");
	if (!valid_sandbox_config(sandbox))
		return local_error(status, -EINVAL, "invalid sandbox config (a list is NULL or too long)");
	struct arena a = { 0 };
	Runtime__V1__CreateContainerRequest req = RUNTIME__V1__CREATE_CONTAINER_REQUEST__INIT;
	Runtime__V1__CreateContainerResponse *resp = NULL;
	int r;

	req.pod_sandbox_id = dup_str(&a, sandbox_id);
	req.config = container_config(&a, config);
	req.sandbox_config = sandbox_config(&a, sandbox);
	if (!req.pod_sandbox_id || !req.config || !req.sandbox_config) {
		r = local_error(status, -ENOMEM, "out of memory");
		goto out;
	}
	r = call(cri, CRI_METHOD_CREATE_CONTAINER, &req.base, CRI_SLOW_TIMEOUT_MS,
		 &runtime__v1__create_container_response__descriptor, (ProtobufCMessage **)&resp, status);
	if (r < 0)
		goto out;
	r = take_id(resp->container_id, "container", ret_id, status);
	runtime__v1__create_container_response__free_unpacked(resp, NULL);
out:
	arena_free(&a);
	return r;
}

int cri_start_container(struct cri *cri, const char *container_id, struct cri_status *status)
{
	return call_by_id(cri, CRI_METHOD_START_CONTAINER, &runtime__v1__start_container_request__descriptor,
			  &runtime__v1__start_container_response__descriptor, container_id, "container", status);
}

int cri_stop_container(struct cri *cri, const char *container_id, int64_t timeout_s, struct cri_status *status)
{
	if (!valid_id(container_id))
		return local_error(status, -EINVAL, "no container ID given");
	if (timeout_s < 0 || timeout_s > CRI_MAX_TIMEOUT_S)
		return local_error(status, -EINVAL, "grace period %lld s is out of [0, %d]", (long long)timeout_s,
				   CRI_MAX_TIMEOUT_S);
	struct arena a = { 0 };
	Runtime__V1__StopContainerRequest req = RUNTIME__V1__STOP_CONTAINER_REQUEST__INIT;
	int r;
	if (!(req.container_id = dup_str(&a, container_id))) {
		r = local_error(status, -ENOMEM, "out of memory");
		goto out;
	}
	req.timeout = timeout_s;
	r = call_empty(cri, CRI_METHOD_STOP_CONTAINER, &req.base, timeout_s * 1000 + CRI_MARGIN_MS,
		       &runtime__v1__stop_container_response__descriptor, status);
out:
	arena_free(&a);
	return r;
}

int cri_remove_container(struct cri *cri, const char *container_id, struct cri_status *status)
{
	return call_by_id(cri, CRI_METHOD_REMOVE_CONTAINER, &runtime__v1__remove_container_request__descriptor,
			  &runtime__v1__remove_container_response__descriptor, container_id, "container", status);
}

static enum cri_container_state container_state(Runtime__V1__ContainerState s)
{
	switch (s) {
	case RUNTIME__V1__CONTAINER_STATE__CONTAINER_CREATED:
		return CRI_CONTAINER_CREATED;
	case RUNTIME__V1__CONTAINER_STATE__CONTAINER_RUNNING:
		return CRI_CONTAINER_RUNNING;
	case RUNTIME__V1__CONTAINER_STATE__CONTAINER_EXITED:
		return CRI_CONTAINER_EXITED;
	default:
		return CRI_CONTAINER_UNKNOWN;
	}
}

int cri_container_status(struct cri *cri, const char *container_id, struct cri_container_status *ret_status,
			 struct cri_status *status)
{
	if (!valid_id(container_id))
		return local_error(status, -EINVAL, "no container ID given");
	struct arena a = { 0 };
	Runtime__V1__ContainerStatusRequest req = RUNTIME__V1__CONTAINER_STATUS_REQUEST__INIT;
	Runtime__V1__ContainerStatusResponse *resp = NULL;
	int r;

	if (!(req.container_id = dup_str(&a, container_id))) {
		r = local_error(status, -ENOMEM, "out of memory");
		goto out;
	}
	r = call(cri, CRI_METHOD_CONTAINER_STATUS, &req.base, CRI_TIMEOUT_MS,
		 &runtime__v1__container_status_response__descriptor, (ProtobufCMessage **)&resp, status);
	if (r < 0)
		goto out;
	const Runtime__V1__ContainerStatus *s = resp->status;
	if (!s) {
		/* The kubelet's ErrContainerStatusNil. */
		r = local_error(status, -EBADMSG, "container status is nil");
	} else {
		ret_status->state = container_state(s->state);
		ret_status->exit_code = s->exit_code;
		ret_status->started_at = s->started_at;
		ret_status->finished_at = s->finished_at;
		copy_bounded(ret_status->reason, sizeof(ret_status->reason), s->reason);
		copy_bounded(ret_status->message, sizeof(ret_status->message), s->message);
		copy_bounded(ret_status->log_path, sizeof(ret_status->log_path), s->log_path);
	}
	runtime__v1__container_status_response__free_unpacked(resp, NULL);
out:
	arena_free(&a);
	return r;
}

int cri_exec_sync(struct cri *cri, const char *container_id, const char *const *cmd, size_t n_cmd, int64_t timeout_s,
		  struct cri_exec_result *ret_result, struct cri_status *status)
{
	if (!valid_id(container_id))
		return local_error(status, -EINVAL, "no container ID given");
	if (n_cmd == 0 || !valid_list(cmd, n_cmd))
		return local_error(status, -EINVAL, "no command, or one of more than %d words", CRI_MAX_LIST);
	/* 0 would mean "no timeout" to the runtime, and kubelet-sim never waits forever. */
	if (timeout_s < 1 || timeout_s > CRI_MAX_TIMEOUT_S)
		return local_error(status, -EINVAL, "exec timeout %lld s is out of [1, %d]", (long long)timeout_s,
				   CRI_MAX_TIMEOUT_S);
	struct arena a = { 0 };
	Runtime__V1__ExecSyncRequest req = RUNTIME__V1__EXEC_SYNC_REQUEST__INIT;
	Runtime__V1__ExecSyncResponse *resp = NULL;
	uint8_t *out = NULL, *err = NULL;
	int r;

	req.container_id = dup_str(&a, container_id);
	req.cmd = dup_strv(&a, cmd, n_cmd);
	req.n_cmd = n_cmd;
	req.timeout = timeout_s;
	if (!req.container_id || !req.cmd) {
		r = local_error(status, -ENOMEM, "out of memory");
		goto out;
	}
	r = call(cri, CRI_METHOD_EXEC_SYNC, &req.base, timeout_s * 1000 + CRI_MARGIN_MS,
		 &runtime__v1__exec_sync_response__descriptor, (ProtobufCMessage **)&resp, status);
	if (r < 0)
		goto out;
	/* The answer is bounded by gRPC's receive limit (4 MiB). */
	if ((resp->stdout.len && !(out = malloc(resp->stdout.len))) ||
	    (resp->stderr.len && !(err = malloc(resp->stderr.len)))) {
		r = local_error(status, -ENOMEM, "out of memory");
		goto out;
	}
	if (out)
		memcpy(out, resp->stdout.data, resp->stdout.len);
	if (err)
		memcpy(err, resp->stderr.data, resp->stderr.len);
	*ret_result = (struct cri_exec_result){
		.exit_code = resp->exit_code,
		.out = out,
		.out_len = resp->stdout.len,
		.err = err,
		.err_len = resp->stderr.len,
	};
	out = err = NULL;
out:
	free(out);
	free(err);
	if (resp)
		runtime__v1__exec_sync_response__free_unpacked(resp, NULL);
	arena_free(&a);
	return r;
}

void cri_exec_result_clear(struct cri_exec_result *result)
{
	if (!result)
		return;
	free(result->out);
	free(result->err);
	*result = (struct cri_exec_result){ 0 };
}
