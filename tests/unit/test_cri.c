/* SPDX-License-Identifier: Apache-2.0 */
/* kubelet-sim's CRI client (tools/kubelet-sim/cri.c) against a fake runtime
 * served by our gRPC server: what each call puts on the wire, how answers
 * are decoded and cut to size, and how errors map (runtime errors -EIO with
 * the gRPC status, local ones another errno with code -1).
 *
 * With --runtime, it runs instead a pod's whole life on the real runtime at
 * $CRI_TEST_ENDPOINT (e.g. a private containerd with the CRI plugin), which
 * must have $CRI_TEST_IMAGE (default docker.io/local/busybox:1, a busybox
 * with /bin/sh) and its sandbox image; without the variable it exits 77. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <cmocka.h>

#include "base/parse.h"
#include "cri.h"
#include "cri.pb-c.h"
#include "cri_api.h"
#include "grpc/server.h"

#define SKIP_CODE 77

struct fixture {
	char dir[64];
	char path[128];
	char endpoint[160];
	struct gs_server *server;
	struct cri *cri;

	pthread_mutex_t lock;
	/* The last request the fake runtime got. */
	const char *method;
	uint8_t *req;
	size_t req_len;
	unsigned calls;
	/* What it answers next. */
	grpc_status_code status;
	char details[512];
	uint8_t *reply;
	size_t reply_len;
};

static void handle(struct fixture *f, const char *method, const uint8_t *req, size_t len, struct gs_reply *reply)
{
	pthread_mutex_lock(&f->lock);
	f->method = method;
	free(f->req);
	f->req = malloc(len ? len : 1);
	memcpy(f->req, req ? req : (const uint8_t *)"", len);
	f->req_len = len;
	f->calls++;
	if (f->status != GRPC_STATUS_OK) {
		gs_reply_error(reply, f->status, "%s", f->details);
	} else if (f->reply_len) {
		reply->body = malloc(f->reply_len);
		memcpy(reply->body, f->reply, f->reply_len);
		reply->len = f->reply_len;
	}
	pthread_mutex_unlock(&f->lock);
}

#define HANDLER(fn, path)                                                                           \
	static void fn(void *ctx, const uint8_t *req, size_t len, struct gs_reply *reply)           \
	{                                                                                           \
		handle(ctx, path, req, len, reply);                                                 \
	}
HANDLER(on_version, CRI_METHOD_VERSION)
HANDLER(on_run_sandbox, CRI_METHOD_RUN_POD_SANDBOX)
HANDLER(on_stop_sandbox, CRI_METHOD_STOP_POD_SANDBOX)
HANDLER(on_remove_sandbox, CRI_METHOD_REMOVE_POD_SANDBOX)
HANDLER(on_create, CRI_METHOD_CREATE_CONTAINER)
HANDLER(on_start, CRI_METHOD_START_CONTAINER)
HANDLER(on_stop, CRI_METHOD_STOP_CONTAINER)
HANDLER(on_remove, CRI_METHOD_REMOVE_CONTAINER)
HANDLER(on_status, CRI_METHOD_CONTAINER_STATUS)
HANDLER(on_exec, CRI_METHOD_EXEC_SYNC)
HANDLER(on_image_status, CRI_METHOD_IMAGE_STATUS)

static const struct gs_method methods[] = {
	{ .path = CRI_METHOD_VERSION, .unary = on_version },
	{ .path = CRI_METHOD_RUN_POD_SANDBOX, .unary = on_run_sandbox },
	{ .path = CRI_METHOD_STOP_POD_SANDBOX, .unary = on_stop_sandbox },
	{ .path = CRI_METHOD_REMOVE_POD_SANDBOX, .unary = on_remove_sandbox },
	{ .path = CRI_METHOD_CREATE_CONTAINER, .unary = on_create },
	{ .path = CRI_METHOD_START_CONTAINER, .unary = on_start },
	{ .path = CRI_METHOD_STOP_CONTAINER, .unary = on_stop },
	{ .path = CRI_METHOD_REMOVE_CONTAINER, .unary = on_remove },
	{ .path = CRI_METHOD_CONTAINER_STATUS, .unary = on_status },
	{ .path = CRI_METHOD_EXEC_SYNC, .unary = on_exec },
	{ .path = CRI_METHOD_IMAGE_STATUS, .unary = on_image_status },
};

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));
	snprintf(f->dir, sizeof(f->dir), "/tmp/cri-test-XXXXXX");
	assert_non_null(mkdtemp(f->dir));
	snprintf(f->path, sizeof(f->path), "%s/cri.sock", f->dir);
	snprintf(f->endpoint, sizeof(f->endpoint), "unix://%s", f->path);
	pthread_mutex_init(&f->lock, NULL);
	assert_int_equal(gs_server_start(f->path, methods, sizeof(methods) / sizeof(methods[0]), f, &f->server), 0);
	assert_int_equal(cri_open(f->endpoint, &f->cri), 0);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;
	cri_close(f->cri);
	gs_server_stop(f->server);
	rmdir(f->dir);
	pthread_mutex_destroy(&f->lock);
	free(f->req);
	free(f->reply);
	free(f);
	return 0;
}

/* The next answer: msg packed, or an empty message when NULL. */
static void answer(struct fixture *f, const ProtobufCMessage *msg)
{
	pthread_mutex_lock(&f->lock);
	free(f->reply);
	f->reply = NULL;
	f->reply_len = msg ? protobuf_c_message_get_packed_size(msg) : 0;
	if (f->reply_len) {
		f->reply = malloc(f->reply_len);
		protobuf_c_message_pack(msg, f->reply);
	}
	f->status = GRPC_STATUS_OK;
	pthread_mutex_unlock(&f->lock);
}

static void answer_raw(struct fixture *f, const void *bytes, size_t len)
{
	pthread_mutex_lock(&f->lock);
	free(f->reply);
	f->reply = malloc(len);
	memcpy(f->reply, bytes, len);
	f->reply_len = len;
	f->status = GRPC_STATUS_OK;
	pthread_mutex_unlock(&f->lock);
}

static void answer_error(struct fixture *f, grpc_status_code status, const char *details)
{
	pthread_mutex_lock(&f->lock);
	f->status = status;
	snprintf(f->details, sizeof(f->details), "%s", details);
	pthread_mutex_unlock(&f->lock);
}

/* Decodes the last request, which must have gone to method. */
static ProtobufCMessage *request(struct fixture *f, const char *method, const ProtobufCMessageDescriptor *desc)
{
	pthread_mutex_lock(&f->lock);
	assert_non_null(f->method);
	assert_string_equal(f->method, method);
	ProtobufCMessage *m = protobuf_c_message_unpack(desc, NULL, f->req_len, f->req);
	pthread_mutex_unlock(&f->lock);
	assert_non_null(m);
	return m;
}

static unsigned calls(struct fixture *f)
{
	pthread_mutex_lock(&f->lock);
	unsigned n = f->calls;
	pthread_mutex_unlock(&f->lock);
	return n;
}

static const struct cri_kv pod_labels[] = { { "app", "demo" }, { "tier", "test" } };
static const struct cri_kv pod_annotations[] = { { "note", "x" } };
static const int64_t pod_groups[] = { 44, 55 };

static const struct cri_sandbox_config sandbox = {
	.name = "pod-a",
	.uid = "uid-1",
	.namespace = "default",
	.attempt = 2,
	.hostname = "host-a",
	.log_directory = "/var/log/pods/default_pod-a_uid-1",
	.labels = pod_labels,
	.n_labels = 2,
	.annotations = pod_annotations,
	.n_annotations = 1,
	.host_network = true,
	.host_ipc = true,
	.privileged = true,
	.has_run_as_user = true,
	.run_as_user = 0,
	.supplemental_groups = pod_groups,
	.n_supplemental_groups = 2,
};

static void assert_sandbox_config(const Runtime__V1__PodSandboxConfig *c)
{
	assert_non_null(c);
	assert_string_equal(c->metadata->name, "pod-a");
	assert_string_equal(c->metadata->uid, "uid-1");
	assert_string_equal(c->metadata->namespace_, "default");
	assert_int_equal(c->metadata->attempt, 2);
	assert_string_equal(c->hostname, "host-a");
	assert_string_equal(c->log_directory, "/var/log/pods/default_pod-a_uid-1");
	assert_int_equal(c->n_labels, 2);
	assert_string_equal(c->labels[1]->key, "tier");
	assert_string_equal(c->labels[1]->value, "test");
	assert_int_equal(c->n_annotations, 1);
	assert_string_equal(c->annotations[0]->key, "note");
	const Runtime__V1__LinuxSandboxSecurityContext *sc = c->linux->security_context;
	assert_int_equal(sc->namespace_options->network, RUNTIME__V1__NAMESPACE_MODE__NODE);
	assert_int_equal(sc->namespace_options->pid, RUNTIME__V1__NAMESPACE_MODE__CONTAINER);
	assert_int_equal(sc->namespace_options->ipc, RUNTIME__V1__NAMESPACE_MODE__NODE);
	assert_true(sc->privileged);
	/* run_as_user 0 is set (root), which only the wrapper can tell from unset. */
	assert_non_null(sc->run_as_user);
	assert_int_equal(sc->run_as_user->value, 0);
	assert_null(sc->run_as_group);
	assert_int_equal(sc->n_supplemental_groups, 2);
	assert_int_equal(sc->supplemental_groups[1], 55);
}

static void test_open_rejects_bad_endpoints(void **state)
{
	(void)state;
	static char sentinel;
	struct cri *cri = (struct cri *)(void *)&sentinel; /* must stay untouched */
	struct cri *before = cri;
	assert_int_equal(cri_open(NULL, &cri), -EINVAL);
	assert_int_equal(cri_open("", &cri), -EINVAL);
	assert_int_equal(cri_open("run/containerd.sock", &cri), -EINVAL);
	assert_int_equal(cri_open("unix://run/containerd.sock", &cri), -EINVAL);
	assert_int_equal(cri_open("tcp://127.0.0.1:1234", &cri), -EINVAL);
	char longer[SOCKET_PATH_MAX + 16];
	memset(longer, 'a', sizeof(longer) - 1);
	longer[0] = '/';
	longer[sizeof(longer) - 1] = '\0';
	assert_int_equal(cri_open(longer, &cri), -ENAMETOOLONG);
	assert_ptr_equal(cri, before);

	/* Both spellings of a path are accepted; nothing is dialled yet. */
	assert_int_equal(cri_open("/nonexistent/containerd.sock", &cri), 0);
	cri_close(cri);
	assert_int_equal(cri_open("unix:///nonexistent/containerd.sock", &cri), 0);
	cri_close(cri);
	cri_close(NULL);
}

static void test_nothing_listening_is_unavailable(void **state)
{
	(void)state;
	char dir[] = "/tmp/cri-test-XXXXXX";
	assert_non_null(mkdtemp(dir));
	char path[64];
	snprintf(path, sizeof(path), "%s/none.sock", dir);
	struct cri *cri;
	assert_int_equal(cri_open(path, &cri), 0);
	struct cri_version v;
	struct cri_status status = { 0 };
	int64_t start = now_ms();
	assert_int_equal(cri_version(cri, &v, &status), -EIO);
	assert_int_equal(status.code, GRPC_STATUS_UNAVAILABLE);
	assert_true(status.message[0] != '\0');
	/* Fails fast, not at the 30 s deadline. */
	assert_true(now_ms() - start < 10000);
	/* A NULL status is allowed. */
	bool present;
	assert_int_equal(cri_image_present(cri, "busybox", &present, NULL), -EIO);
	cri_close(cri);
	rmdir(dir);
}

static void test_version(void **state)
{
	struct fixture *f = *state;
	Runtime__V1__VersionResponse resp = RUNTIME__V1__VERSION_RESPONSE__INIT;
	char name[] = "containerd", version[] = "1.6.20", api[] = "v1";
	resp.runtime_name = name;
	resp.runtime_version = version;
	resp.runtime_api_version = api;
	answer(f, &resp.base);

	struct cri_version v;
	struct cri_status status = { 0 };
	assert_int_equal(cri_version(f->cri, &v, &status), 0);
	assert_string_equal(v.runtime_name, "containerd");
	assert_string_equal(v.runtime_version, "1.6.20");
	assert_string_equal(v.runtime_api_version, "v1");
	Runtime__V1__VersionRequest *req = (Runtime__V1__VersionRequest *)request(
		f, CRI_METHOD_VERSION, &runtime__v1__version_request__descriptor);
	assert_string_equal(req->version, "0.1.0");
	runtime__v1__version_request__free_unpacked(req, NULL);
}

static void test_runtime_error_is_eio_with_status(void **state)
{
	struct fixture *f = *state;
	answer_error(f, GRPC_STATUS_NOT_FOUND, "an error occurred when try to find container \"nope\": not found");
	struct cri_container_status cs;
	memset(&cs, 0x5a, sizeof(cs));
	struct cri_container_status before = cs;
	struct cri_status status = { 0 };
	assert_int_equal(cri_container_status(f->cri, "nope", &cs, &status), -EIO);
	assert_int_equal(status.code, GRPC_STATUS_NOT_FOUND);
	assert_string_equal(status.message, "an error occurred when try to find container \"nope\": not found");
	assert_memory_equal(&cs, &before, sizeof(cs));
}

static void test_local_errors_do_not_call(void **state)
{
	struct fixture *f = *state;
	struct cri_status status = { 0 };
	char *id = NULL;
	struct cri_exec_result res = { 0 };
	const char *cmd[] = { "true" };
	assert_int_equal(cri_start_container(f->cri, "", &status), -EINVAL);
	assert_int_equal(status.code, -1);
	assert_string_equal(status.message, "no container ID given");
	assert_int_equal(cri_stop_sandbox(f->cri, NULL, &status), -EINVAL);
	assert_int_equal(cri_stop_container(f->cri, "c", -1, &status), -EINVAL);
	assert_int_equal(cri_stop_container(f->cri, "c", CRI_MAX_TIMEOUT_S + 1, &status), -EINVAL);
	assert_int_equal(cri_exec_sync(f->cri, "c", cmd, 1, 0, &res, &status), -EINVAL);
	assert_int_equal(cri_exec_sync(f->cri, "c", cmd, 0, 1, &res, &status), -EINVAL);
	assert_int_equal(cri_exec_sync(f->cri, "c", NULL, 1, 1, &res, &status), -EINVAL);
	struct cri_sandbox_config bad = sandbox;
	bad.labels = NULL;
	assert_int_equal(cri_run_sandbox(f->cri, &bad, &id, &status), -EINVAL);
	bad = sandbox;
	bad.n_supplemental_groups = CRI_MAX_LIST + 1;
	assert_int_equal(cri_run_sandbox(f->cri, &bad, &id, &status), -EINVAL);
	assert_null(id);
	assert_int_equal(calls(f), 0);
}

static void test_run_sandbox(void **state)
{
	struct fixture *f = *state;
	Runtime__V1__RunPodSandboxResponse resp = RUNTIME__V1__RUN_POD_SANDBOX_RESPONSE__INIT;
	char sid[] = "sandbox-123";
	resp.pod_sandbox_id = sid;
	answer(f, &resp.base);

	char *id = NULL;
	struct cri_status status = { 0 };
	assert_int_equal(cri_run_sandbox(f->cri, &sandbox, &id, &status), 0);
	assert_string_equal(id, "sandbox-123");
	free(id);
	Runtime__V1__RunPodSandboxRequest *req = (Runtime__V1__RunPodSandboxRequest *)request(
		f, CRI_METHOD_RUN_POD_SANDBOX, &runtime__v1__run_pod_sandbox_request__descriptor);
	assert_sandbox_config(req->config);
	assert_string_equal(req->runtime_handler, "");
	runtime__v1__run_pod_sandbox_request__free_unpacked(req, NULL);

	/* An answer without an ID is broken, as the kubelet holds too. */
	answer(f, NULL);
	id = NULL;
	assert_int_equal(cri_run_sandbox(f->cri, &sandbox, &id, &status), -EBADMSG);
	assert_int_equal(status.code, -1);
	assert_null(id);
}

static void test_create_container(void **state)
{
	struct fixture *f = *state;
	Runtime__V1__CreateContainerResponse resp = RUNTIME__V1__CREATE_CONTAINER_RESPONSE__INIT;
	char cid[] = "container-9";
	resp.container_id = cid;
	answer(f, &resp.base);

	static const char *const command[] = { "/bin/sh", "-c" };
	static const char *const args[] = { "echo $A" };
	static const struct cri_kv envs[] = { { "A", "1" }, { "ASCEND_VISIBLE_DEVICES", "3" } };
	static const struct cri_mount mounts[] = { { "/data", "/tmp/data", true }, { "/rw", "/tmp/rw", false } };
	static const struct cri_device devs[] = { { "/dev/davinci3", "/dev/davinci3", "rw" } };
	static const char *const cdi[] = { "huawei.com/npu=3" };
	static const char *const add[] = { "SYS_ADMIN" };
	static const int64_t groups[] = { 1000 };
	const struct cri_container_config config = {
		.name = "main",
		.attempt = 1,
		.image = "docker.io/library/busybox:1",
		.command = command,
		.n_command = 2,
		.args = args,
		.n_args = 1,
		.working_dir = NULL,
		.envs = envs,
		.n_envs = 2,
		.mounts = mounts,
		.n_mounts = 2,
		.devices = devs,
		.n_devices = 1,
		.labels = pod_labels,
		.n_labels = 1,
		.cdi_devices = cdi,
		.n_cdi_devices = 1,
		.log_path = "main/1.log",
		.readonly_rootfs = true,
		.has_run_as_group = true,
		.run_as_group = 1000,
		.supplemental_groups = groups,
		.n_supplemental_groups = 1,
		.add_capabilities = add,
		.n_add_capabilities = 1,
		.host_network = true,
		.host_pid = true,
	};
	char *id = NULL;
	struct cri_status status = { 0 };
	assert_int_equal(cri_create_container(f->cri, "sandbox-123", &config, &sandbox, &id, &status), 0);
	assert_string_equal(id, "container-9");
	free(id);

	Runtime__V1__CreateContainerRequest *req = (Runtime__V1__CreateContainerRequest *)request(
		f, CRI_METHOD_CREATE_CONTAINER, &runtime__v1__create_container_request__descriptor);
	assert_string_equal(req->pod_sandbox_id, "sandbox-123");
	assert_sandbox_config(req->sandbox_config);
	const Runtime__V1__ContainerConfig *c = req->config;
	assert_string_equal(c->metadata->name, "main");
	assert_int_equal(c->metadata->attempt, 1);
	assert_string_equal(c->image->image, "docker.io/library/busybox:1");
	assert_int_equal(c->n_command, 2);
	assert_string_equal(c->command[1], "-c");
	assert_int_equal(c->n_args, 1);
	assert_string_equal(c->args[0], "echo $A");
	assert_string_equal(c->working_dir, "");
	assert_int_equal(c->n_envs, 2);
	assert_string_equal(c->envs[1]->key, "ASCEND_VISIBLE_DEVICES");
	assert_string_equal(c->envs[1]->value, "3");
	assert_int_equal(c->n_mounts, 2);
	assert_string_equal(c->mounts[0]->container_path, "/data");
	assert_string_equal(c->mounts[0]->host_path, "/tmp/data");
	assert_true(c->mounts[0]->readonly);
	assert_false(c->mounts[1]->readonly);
	assert_int_equal(c->n_devices, 1);
	assert_string_equal(c->devices[0]->container_path, "/dev/davinci3");
	assert_string_equal(c->devices[0]->permissions, "rw");
	assert_int_equal(c->n_labels, 1);
	assert_string_equal(c->labels[0]->key, "app");
	assert_int_equal(c->n_annotations, 0);
	assert_string_equal(c->log_path, "main/1.log");
	assert_int_equal(c->n_cdi_devices, 1);
	assert_string_equal(c->cdi_devices[0]->name, "huawei.com/npu=3");
	const Runtime__V1__LinuxContainerSecurityContext *sc = c->linux->security_context;
	assert_false(sc->privileged);
	assert_true(sc->readonly_rootfs);
	assert_null(sc->run_as_user);
	assert_non_null(sc->run_as_group);
	assert_int_equal(sc->run_as_group->value, 1000);
	assert_int_equal(sc->n_supplemental_groups, 1);
	assert_int_equal(sc->capabilities->n_add_capabilities, 1);
	assert_string_equal(sc->capabilities->add_capabilities[0], "SYS_ADMIN");
	assert_int_equal(sc->capabilities->n_drop_capabilities, 0);
	assert_int_equal(sc->namespace_options->network, RUNTIME__V1__NAMESPACE_MODE__NODE);
	assert_int_equal(sc->namespace_options->pid, RUNTIME__V1__NAMESPACE_MODE__NODE);
	assert_int_equal(sc->namespace_options->ipc, RUNTIME__V1__NAMESPACE_MODE__POD);
	runtime__v1__create_container_request__free_unpacked(req, NULL);
}

/* Start, stop and remove send the ID (and the grace period) and expect an
 * empty answer. */
static void test_id_only_calls(void **state)
{
	struct fixture *f = *state;
	struct cri_status status = { 0 };
	answer(f, NULL);

	assert_int_equal(cri_start_container(f->cri, "c1", &status), 0);
	Runtime__V1__StartContainerRequest *start = (Runtime__V1__StartContainerRequest *)request(
		f, CRI_METHOD_START_CONTAINER, &runtime__v1__start_container_request__descriptor);
	assert_string_equal(start->container_id, "c1");
	runtime__v1__start_container_request__free_unpacked(start, NULL);

	assert_int_equal(cri_stop_container(f->cri, "c2", 7, &status), 0);
	Runtime__V1__StopContainerRequest *stop = (Runtime__V1__StopContainerRequest *)request(
		f, CRI_METHOD_STOP_CONTAINER, &runtime__v1__stop_container_request__descriptor);
	assert_string_equal(stop->container_id, "c2");
	assert_int_equal(stop->timeout, 7);
	runtime__v1__stop_container_request__free_unpacked(stop, NULL);

	assert_int_equal(cri_remove_container(f->cri, "c3", &status), 0);
	Runtime__V1__RemoveContainerRequest *rm = (Runtime__V1__RemoveContainerRequest *)request(
		f, CRI_METHOD_REMOVE_CONTAINER, &runtime__v1__remove_container_request__descriptor);
	assert_string_equal(rm->container_id, "c3");
	runtime__v1__remove_container_request__free_unpacked(rm, NULL);

	assert_int_equal(cri_stop_sandbox(f->cri, "s1", &status), 0);
	Runtime__V1__StopPodSandboxRequest *ss = (Runtime__V1__StopPodSandboxRequest *)request(
		f, CRI_METHOD_STOP_POD_SANDBOX, &runtime__v1__stop_pod_sandbox_request__descriptor);
	assert_string_equal(ss->pod_sandbox_id, "s1");
	runtime__v1__stop_pod_sandbox_request__free_unpacked(ss, NULL);

	assert_int_equal(cri_remove_sandbox(f->cri, "s2", &status), 0);
	Runtime__V1__RemovePodSandboxRequest *rs = (Runtime__V1__RemovePodSandboxRequest *)request(
		f, CRI_METHOD_REMOVE_POD_SANDBOX, &runtime__v1__remove_pod_sandbox_request__descriptor);
	assert_string_equal(rs->pod_sandbox_id, "s2");
	runtime__v1__remove_pod_sandbox_request__free_unpacked(rs, NULL);
	assert_int_equal(calls(f), 5);
}

static void test_container_status(void **state)
{
	struct fixture *f = *state;
	Runtime__V1__ContainerStatusResponse resp = RUNTIME__V1__CONTAINER_STATUS_RESPONSE__INIT;
	Runtime__V1__ContainerStatus s = RUNTIME__V1__CONTAINER_STATUS__INIT;
	char id[] = "c1", reason[] = "Error", log_path[] = "/var/log/pods/x/main/0.log";
	/* 510 ASCII bytes then a 3-byte character: it does not fit the
	 * 512-byte message and must go whole, not leave a broken sequence. */
	char message[600];
	memset(message, 'm', 510);
	memcpy(message + 510, "\xe2\x82\xac tail", 9);
	s.id = id;
	s.state = RUNTIME__V1__CONTAINER_STATE__CONTAINER_EXITED;
	s.started_at = 1000;
	s.finished_at = 2000;
	s.exit_code = 3;
	s.reason = reason;
	s.message = message;
	s.log_path = log_path;
	resp.status = &s;
	answer(f, &resp.base);

	struct cri_container_status cs;
	struct cri_status status = { 0 };
	assert_int_equal(cri_container_status(f->cri, "c1", &cs, &status), 0);
	assert_int_equal(cs.state, CRI_CONTAINER_EXITED);
	assert_int_equal(cs.exit_code, 3);
	assert_int_equal(cs.started_at, 1000);
	assert_int_equal(cs.finished_at, 2000);
	assert_string_equal(cs.reason, "Error");
	assert_int_equal(strlen(cs.message), 510);
	assert_string_equal(cs.log_path, "/var/log/pods/x/main/0.log");
	Runtime__V1__ContainerStatusRequest *req = (Runtime__V1__ContainerStatusRequest *)request(
		f, CRI_METHOD_CONTAINER_STATUS, &runtime__v1__container_status_request__descriptor);
	assert_string_equal(req->container_id, "c1");
	assert_false(req->verbose);
	runtime__v1__container_status_request__free_unpacked(req, NULL);

	/* A state this client does not know of is UNKNOWN. */
	s.state = (Runtime__V1__ContainerState)9;
	answer(f, &resp.base);
	assert_int_equal(cri_container_status(f->cri, "c1", &cs, &status), 0);
	assert_int_equal(cs.state, CRI_CONTAINER_UNKNOWN);

	/* No status at all is the kubelet's ErrContainerStatusNil. */
	answer(f, NULL);
	assert_int_equal(cri_container_status(f->cri, "c1", &cs, &status), -EBADMSG);
	assert_string_equal(status.message, "container status is nil");

	/* Bytes that are no protobuf message. */
	answer_raw(f, "\xff\xff\xff", 3);
	assert_int_equal(cri_container_status(f->cri, "c1", &cs, &status), -EBADMSG);
	assert_int_equal(status.code, -1);
}

static void test_exec_sync(void **state)
{
	struct fixture *f = *state;
	Runtime__V1__ExecSyncResponse resp = RUNTIME__V1__EXEC_SYNC_RESPONSE__INIT;
	uint8_t out[] = "hi\n", err[] = "oops\n";
	resp.stdout.data = out;
	resp.stdout.len = 3;
	resp.stderr.data = err;
	resp.stderr.len = 5;
	resp.exit_code = 7;
	answer(f, &resp.base);

	const char *cmd[] = { "sh", "-c", "echo hi; echo oops >&2; exit 7" };
	struct cri_exec_result res;
	struct cri_status status = { 0 };
	assert_int_equal(cri_exec_sync(f->cri, "c1", cmd, 3, 5, &res, &status), 0);
	assert_int_equal(res.exit_code, 7);
	assert_int_equal(res.out_len, 3);
	assert_memory_equal(res.out, "hi\n", 3);
	assert_int_equal(res.err_len, 5);
	assert_memory_equal(res.err, "oops\n", 5);
	cri_exec_result_clear(&res);
	assert_null(res.out);
	cri_exec_result_clear(NULL);
	Runtime__V1__ExecSyncRequest *req = (Runtime__V1__ExecSyncRequest *)request(
		f, CRI_METHOD_EXEC_SYNC, &runtime__v1__exec_sync_request__descriptor);
	assert_string_equal(req->container_id, "c1");
	assert_int_equal(req->n_cmd, 3);
	assert_string_equal(req->cmd[2], "echo hi; echo oops >&2; exit 7");
	assert_int_equal(req->timeout, 5);
	runtime__v1__exec_sync_request__free_unpacked(req, NULL);

	/* Nothing on either stream. */
	answer(f, NULL);
	assert_int_equal(cri_exec_sync(f->cri, "c1", cmd, 1, 1, &res, &status), 0);
	assert_int_equal(res.exit_code, 0);
	assert_null(res.out);
	assert_int_equal(res.out_len, 0);
	assert_null(res.err);
	cri_exec_result_clear(&res);
}

static void test_image_present(void **state)
{
	struct fixture *f = *state;
	Runtime__V1__ImageStatusResponse resp = RUNTIME__V1__IMAGE_STATUS_RESPONSE__INIT;
	Runtime__V1__Image image = RUNTIME__V1__IMAGE__INIT;
	char id[] = "sha256:abc";
	image.id = id;
	resp.image = &image;
	answer(f, &resp.base);

	bool present = false;
	struct cri_status status = { 0 };
	assert_int_equal(cri_image_present(f->cri, "busybox:1", &present, &status), 0);
	assert_true(present);
	Runtime__V1__ImageStatusRequest *req = (Runtime__V1__ImageStatusRequest *)request(
		f, CRI_METHOD_IMAGE_STATUS, &runtime__v1__image_status_request__descriptor);
	assert_string_equal(req->image->image, "busybox:1");
	runtime__v1__image_status_request__free_unpacked(req, NULL);

	/* Absent: the runtime answers with no image, not an error. */
	answer(f, NULL);
	assert_int_equal(cri_image_present(f->cri, "busybox:1", &present, &status), 0);
	assert_false(present);
	assert_int_equal(cri_image_present(f->cri, "", &present, &status), -EINVAL);
}

/* ---- The real runtime (--runtime) ---- */

struct live {
	struct cri *cri;
	const char *image;
	char dir[64];
	char logs[128];
	char data[128];
	char dev[128];
	char uid[64];
	struct cri_sandbox_config sandbox;
	char *sandbox_id;
};

static struct live live;

static void write_file(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
}

/* Reads at most size-1 bytes of path; "" when it does not exist. */
static void read_file(const char *path, char *buf, size_t size)
{
	buf[0] = '\0';
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	ssize_t n = read(fd, buf, size - 1);
	close(fd);
	buf[n > 0 ? n : 0] = '\0';
}

/* The CRI subset has no event stream, so this polls ContainerStatus (as the
 * kubelet's PLEG relists) until the container has state, for at most 20 s. */
static void wait_state(const char *id, enum cri_container_state state, struct cri_container_status *ret)
{
	int64_t deadline = now_ms() + 20000;
	struct cri_status status;
	for (;;) {
		assert_int_equal(cri_container_status(live.cri, id, ret, &status), 0);
		if (ret->state == state || now_ms() > deadline)
			break;
		poll(NULL, 0, 50);
	}
	assert_int_equal(ret->state, state);
}

/* Polls the log file until it contains text, for at most 10 s: the
 * runtime's log writer runs behind the container. */
static void wait_log(const char *path, const char *text)
{
	char buf[4096];
	int64_t deadline = now_ms() + 10000;
	for (;;) {
		read_file(path, buf, sizeof(buf));
		if (strstr(buf, text) || now_ms() > deadline)
			break;
		poll(NULL, 0, 50);
	}
	if (!strstr(buf, text))
		fail_msg("%s does not contain \"%s\": %s", path, text, buf);
}

static int live_setup(void **state)
{
	(void)state;
	const char *endpoint = getenv("CRI_TEST_ENDPOINT");
	live.image = getenv("CRI_TEST_IMAGE") ? getenv("CRI_TEST_IMAGE") : "docker.io/local/busybox:1";
	assert_int_equal(cri_open(endpoint, &live.cri), 0);
	snprintf(live.dir, sizeof(live.dir), "/tmp/cri-live-XXXXXX");
	assert_non_null(mkdtemp(live.dir));
	snprintf(live.logs, sizeof(live.logs), "%s/logs", live.dir);
	snprintf(live.data, sizeof(live.data), "%s/data", live.dir);
	snprintf(live.dev, sizeof(live.dev), "%s/davinci3", live.dir);
	assert_int_equal(mkdir(live.logs, 0755), 0);
	assert_int_equal(mkdir(live.data, 0755), 0);
	char hello[160];
	snprintf(hello, sizeof(hello), "%s/hello", live.data);
	write_file(hello, "hello from the host\n");
	/* /dev/null's numbers: harmless to open and write. */
	assert_int_equal(mknod(live.dev, S_IFCHR | 0666, makedev(1, 3)), 0);
	snprintf(live.uid, sizeof(live.uid), "uid-%ld", (long)getpid());
	live.sandbox = (struct cri_sandbox_config){
		.name = "cri-test",
		.uid = live.uid,
		.namespace = "default",
		.log_directory = live.logs,
		.host_network = true,
	};
	return 0;
}

/* Removing the sandbox removes whatever containers a failed test left. */
static int live_teardown(void **state)
{
	(void)state;
	struct cri_status status;
	if (live.sandbox_id) {
		cri_stop_sandbox(live.cri, live.sandbox_id, &status);
		cri_remove_sandbox(live.cri, live.sandbox_id, &status);
		free(live.sandbox_id);
	}
	cri_close(live.cri);
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", live.dir);
	return system(cmd) == 0 ? 0 : -1;
}

static void live_version_and_images(void **state)
{
	(void)state;
	struct cri_version v;
	struct cri_status status = { 0 };
	assert_int_equal(cri_version(live.cri, &v, &status), 0);
	print_message("runtime %s %s, CRI %s\n", v.runtime_name, v.runtime_version, v.runtime_api_version);
	assert_string_equal(v.runtime_api_version, "v1");

	bool present = false;
	assert_int_equal(cri_image_present(live.cri, live.image, &present, &status), 0);
	assert_true(present);
	assert_int_equal(cri_image_present(live.cri, "docker.io/local/absent:1", &present, &status), 0);
	assert_false(present);
}

static void live_pod(void **state)
{
	(void)state;
	struct cri_status status = { 0 };
	int r = cri_run_sandbox(live.cri, &live.sandbox, &live.sandbox_id, &status);
	if (r < 0)
		fail_msg("RunPodSandbox: %d %s", status.code, status.message);

	static const char *const command[] = { "/bin/sh", "-c" };
	static const char *const args[] = {
		"echo out-$GREETING; echo err-line >&2; trap 'echo bye; exit 0' TERM; sleep 600 & wait"
	};
	static const struct cri_kv envs[] = { { "GREETING", "hello" } };
	const struct cri_mount mounts[] = { { "/data", live.data, true } };
	const struct cri_device devs[] = { { "/dev/davinci3", live.dev, "rw" } };
	const struct cri_container_config config = {
		.name = "main",
		.image = live.image,
		.command = command,
		.n_command = 2,
		.args = args,
		.n_args = 1,
		.envs = envs,
		.n_envs = 1,
		.mounts = mounts,
		.n_mounts = 1,
		.devices = devs,
		.n_devices = 1,
		.log_path = "main.log",
		.host_network = true,
	};
	char *id = NULL;
	int64_t t0 = now_ms();
	r = cri_create_container(live.cri, live.sandbox_id, &config, &live.sandbox, &id, &status);
	if (r < 0)
		fail_msg("CreateContainer: %d %s", status.code, status.message);
	int64_t t1 = now_ms();
	assert_int_equal(cri_start_container(live.cri, id, &status), 0);
	print_message("create %lld ms, start %lld ms\n", (long long)(t1 - t0), (long long)(now_ms() - t1));
	struct cri_container_status cs;
	wait_state(id, CRI_CONTAINER_RUNNING, &cs);
	assert_true(cs.started_at > 0);
	char log[256];
	snprintf(log, sizeof(log), "%s/main.log", live.logs);
	assert_string_equal(cs.log_path, log);
	wait_log(log, "stdout F out-hello");
	wait_log(log, "stderr F err-line");

	/* ExecSync: both streams and the exit code. */
	struct cri_exec_result res;
	const char *sh[] = { "sh", "-c", "echo hi; echo oops >&2; exit 7" };
	assert_int_equal(cri_exec_sync(live.cri, id, sh, 3, 5, &res, &status), 0);
	assert_int_equal(res.exit_code, 7);
	assert_int_equal(res.out_len, 3);
	assert_memory_equal(res.out, "hi\n", 3);
	assert_int_equal(res.err_len, 5);
	assert_memory_equal(res.err, "oops\n", 5);
	cri_exec_result_clear(&res);

	/* The env, the read-only bind mount and the device. */
	const char *check[] = { "sh", "-c",
				"echo $GREETING; cat /data/hello; touch /data/new 2>&1; "
				"stat -c '%F %t:%T' /dev/davinci3; echo x >/dev/davinci3 && echo written" };
	assert_int_equal(cri_exec_sync(live.cri, id, check, 3, 5, &res, &status), 0);
	print_message("exec: %.*s", (int)res.out_len, (const char *)res.out);
	assert_non_null(res.out);
	char out[1024];
	snprintf(out, sizeof(out), "%.*s", (int)res.out_len, (const char *)res.out);
	assert_non_null(strstr(out, "hello\nhello from the host\n"));
	assert_non_null(strstr(out, "Read-only file system"));
	assert_non_null(strstr(out, "character special file 1:3\n"));
	assert_non_null(strstr(out, "written\n"));
	cri_exec_result_clear(&res);

	/* A command over its timeout. */
	const char *slow[] = { "sleep", "30" };
	int64_t start = now_ms();
	r = cri_exec_sync(live.cri, id, slow, 2, 1, &res, &status);
	print_message("exec timeout: r=%d code=%d \"%s\" after %lld ms\n", r, status.code, status.message,
		      (long long)(now_ms() - start));
	assert_int_equal(r, -EIO);
	assert_int_equal(status.code, GRPC_STATUS_DEADLINE_EXCEEDED);
	assert_true(now_ms() - start < 10000);

	/* Stop with a grace period: the shell's TERM trap exits 0. */
	assert_int_equal(cri_stop_container(live.cri, id, 10, &status), 0);
	wait_state(id, CRI_CONTAINER_EXITED, &cs);
	print_message("stopped: exit %d reason %s\n", cs.exit_code, cs.reason);
	assert_int_equal(cs.exit_code, 0);
	assert_string_equal(cs.reason, "Completed");
	assert_true(cs.finished_at >= cs.started_at);
	wait_log(log, "stdout F bye");
	assert_int_equal(cri_remove_container(live.cri, id, &status), 0);
	r = cri_container_status(live.cri, id, &cs, &status);
	print_message("status after remove: r=%d code=%d \"%s\"\n", r, status.code, status.message);
	assert_int_equal(r, -EIO);
	assert_int_equal(status.code, GRPC_STATUS_NOT_FOUND);
	free(id);
}

static void live_exit_code(void **state)
{
	(void)state;
	struct cri_status status = { 0 };
	static const char *const command[] = { "/bin/sh", "-c", "echo last; exit 3" };
	const struct cri_container_config config = {
		.name = "failing",
		.image = live.image,
		.command = command,
		.n_command = 3,
		.log_path = "failing.log",
		.host_network = true,
	};
	char *id = NULL;
	assert_int_equal(cri_create_container(live.cri, live.sandbox_id, &config, &live.sandbox, &id, &status), 0);
	assert_int_equal(cri_start_container(live.cri, id, &status), 0);
	struct cri_container_status cs;
	wait_state(id, CRI_CONTAINER_EXITED, &cs);
	assert_int_equal(cs.exit_code, 3);
	assert_string_equal(cs.reason, "Error");
	char log[256];
	snprintf(log, sizeof(log), "%s/failing.log", live.logs);
	wait_log(log, "stdout F last");
	/* Removed by the sandbox's removal below. */
	free(id);
}

static void live_errors(void **state)
{
	(void)state;
	struct cri_status status = { 0 };
	struct cri_container_status cs;
	assert_int_equal(cri_container_status(live.cri, "no-such-container", &cs, &status), -EIO);
	print_message("unknown container: code=%d \"%s\"\n", status.code, status.message);
	assert_int_equal(status.code, GRPC_STATUS_NOT_FOUND);
	assert_non_null(strstr(status.message, "not found"));
	assert_int_equal(cri_start_container(live.cri, "no-such-container", &status), -EIO);
	print_message("start unknown: code=%d \"%s\"\n", status.code, status.message);

	/* Stop and remove are idempotent. */
	assert_int_equal(cri_stop_sandbox(live.cri, live.sandbox_id, &status), 0);
	assert_int_equal(cri_stop_sandbox(live.cri, live.sandbox_id, &status), 0);
	assert_int_equal(cri_remove_sandbox(live.cri, live.sandbox_id, &status), 0);
	assert_int_equal(cri_remove_sandbox(live.cri, live.sandbox_id, &status), 0);
	free(live.sandbox_id);
	live.sandbox_id = NULL;
}

int main(int argc, char **argv)
{
	if (argc > 1 && strcmp(argv[1], "--runtime") == 0) {
		if (!getenv("CRI_TEST_ENDPOINT")) {
			fprintf(stderr, "CRI_TEST_ENDPOINT is not set: skipped\n");
			return SKIP_CODE;
		}
		/* In order: each step needs the one before. */
		const struct CMUnitTest tests[] = {
			cmocka_unit_test(live_version_and_images),
			cmocka_unit_test(live_pod),
			cmocka_unit_test(live_exit_code),
			cmocka_unit_test(live_errors),
		};
		return cmocka_run_group_tests(tests, live_setup, live_teardown);
	}
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_open_rejects_bad_endpoints),
		cmocka_unit_test(test_nothing_listening_is_unavailable),
		cmocka_unit_test_setup_teardown(test_version, setup, teardown),
		cmocka_unit_test_setup_teardown(test_runtime_error_is_eio_with_status, setup, teardown),
		cmocka_unit_test_setup_teardown(test_local_errors_do_not_call, setup, teardown),
		cmocka_unit_test_setup_teardown(test_run_sandbox, setup, teardown),
		cmocka_unit_test_setup_teardown(test_create_container, setup, teardown),
		cmocka_unit_test_setup_teardown(test_id_only_calls, setup, teardown),
		cmocka_unit_test_setup_teardown(test_container_status, setup, teardown),
		cmocka_unit_test_setup_teardown(test_exec_sync, setup, teardown),
		cmocka_unit_test_setup_teardown(test_image_present, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
