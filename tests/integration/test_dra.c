/* SPDX-License-Identifier: Apache-2.0 */
/* The DRA front end as the kubelet sees it, with real processes: the daemon
 * with --front-end=dra serves the registration socket in plugins_registry,
 * kubelet-sim's DRA mode (the plugin watcher's part) registers it with
 * GetInfo and NotifyRegistrationStatus and calls its DRA service; the device
 * plugin then does not even serve, and /healthz says the driver is
 * registered. With --front-end=both the chips of --dra-chips are the
 * driver's and the others the device plugin's, none in both. Unprepare of an unknown claim succeeds on
 * both API versions' paths, a malformed request is INVALID_ARGUMENT, and
 * a socket or its directory removed from under the daemon is served anew at
 * once and registered again,
 * as is the driver after a kubelet restart. The health stream lists every
 * chip, and a chip's fault and recovery reach it with the fault event.
 * Both front ends under an address-space limit (RLIMIT_AS of 512 MiB) serve
 * six clients at once and reserve at most 128 MiB.
 *
 * Requests naming claims whose uid is megabytes long, from as many parallel
 * connections as one peer may hold, are refused whole (INVALID_ARGUMENT,
 * the uid never echoed) and the daemon stays within the memory limit the
 * DaemonSet gives it (deploy/dra/ascend-dra-driver.yaml).
 *
 * The API server here is unreachable: a prepare fails naming the claim and
 * the cause, and nothing else waits for it. Prepares that succeed, against
 * the real kube-apiserver, are test_dra_apiserver.c's. */
#include <pthread.h>
#include <setjmp.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "base/parse.h"
#include "deviceplugin.pb-c.h"
#include "deviceplugin_api.h"
#include "dra.pb-c.h"
#include "dra_health.pb-c.h"
#include "dra_api.h"
#include "dra/claim.h"
#include "grpc/client.h"
#include "grpc/server.h"
#include <grpc/byte_buffer.h>
#include <grpc/grpc.h>
#include <grpc/grpc_security.h>
#include <grpc/support/alloc.h>
#include "harness/dra.h"
#include "harness/harness.h"
#include "harness/http.h"

struct dra_node {
	struct node node;
	char kubelet_dir[96], registry[128], reg_socket[192], dra_socket[192], cdi_dir[96], kubeconfig[96];
	struct proc *kubelet, *plugin;
};

static struct proc *start_kubelet(struct dra_node *d)
{
	const char *const flags[] = { "--dra-registry", d->registry, NULL };
	return node_start_kubelet_with(&d->node, flags);
}

/* front_end: "dra" or "both"; dra_chips: --dra-chips; as_bytes: the
 * daemon's address-space limit (RLIMIT_AS), 0 for none. */
static void start_limited(struct dra_node *d, const char *front_end, const char *dra_chips, unsigned long long as_bytes)
{
	node_init(&d->node, &(struct node_options){ .chips = 4 });
	snprintf(d->kubelet_dir, sizeof(d->kubelet_dir), "%s/kubelet-root", d->node.root);
	snprintf(d->registry, sizeof(d->registry), "%s/plugins_registry", d->kubelet_dir);
	snprintf(d->reg_socket, sizeof(d->reg_socket), "%s/npu.ascend.com-reg.sock", d->registry);
	snprintf(d->dra_socket, sizeof(d->dra_socket), "%s/plugins/npu.ascend.com/dra.sock", d->kubelet_dir);
	snprintf(d->cdi_dir, sizeof(d->cdi_dir), "%s/cdi", d->node.root);
	/* An API server nobody serves: the kubelet side never waits for it. */
	snprintf(d->kubeconfig, sizeof(d->kubeconfig), "%s/kubeconfig", d->node.root);
	FILE *f = fopen(d->kubeconfig, "w");
	assert_non_null(f);
	fputs("apiVersion: v1\nkind: Config\ncurrent-context: c\n"
	      "clusters: [{name: k, cluster: {server: 'https://127.0.0.1:1'}}]\n"
	      "users: [{name: u, user: {token: t}}]\n"
	      "contexts: [{name: c, context: {cluster: k, user: u}}]\n",
	      f);
	assert_int_equal(fclose(f), 0);
	d->kubelet = start_kubelet(d);
	const char *const flags[] = { "--front-end",  front_end, "--kubelet-dir",     d->kubelet_dir,
				      "--node-name",  "node-1",  "--cdi-dir",         d->cdi_dir,
				      "--kubeconfig", d->kubeconfig, "--dra-chips", dra_chips,
				      "--health-interval", "1h", "--metrics-addr=127.0.0.1:0", NULL };
	d->plugin = as_bytes ? node_start_plugin_limited(&d->node, as_bytes, flags) : node_start_plugin(&d->node, flags);
}

static void start_as(struct dra_node *d, const char *front_end, const char *dra_chips)
{
	start_limited(d, front_end, dra_chips, 0);
}

static void start(struct dra_node *d)
{
	start_as(d, "dra", "all");
}

static void expect_registered(struct dra_node *d)
{
	const char *line = proc_expect(d->kubelet, "dra-registered socket=npu.ascend.com-reg.sock", WAIT_MS);
	assert_non_null(line);
	char want[256];
	snprintf(want, sizeof(want), "endpoint=%s ", d->dra_socket);
	assert_non_null(strstr(line, "name=npu.ascend.com type=DRAPlugin"));
	assert_non_null(strstr(line, want));
	assert_non_null(strstr(line, "versions=v1.DRAPlugin,v1beta1.DRAPlugin,v1.DRAResourceHealth,v1alpha1.DRAResourceHealth chosen=v1.DRAPlugin"));
}

/* A v1 NodePrepareResources (prepare) or NodeUnprepareResources request
 * for one claim, malloc'd; NULL when out of memory (no assert: the load's
 * client threads call it too). */
static uint8_t *claim_request(bool prepare, const char *ns, const char *name, const char *uid, size_t *ret_len)
{
	K8s__Io__Kubelet__Pkg__Apis__Dra__V1__Claim claim, *claims[] = { &claim };
	k8s__io__kubelet__pkg__apis__dra__v1__claim__init(&claim);
	claim.namespace_ = (char *)(uintptr_t)ns;
	claim.name = (char *)(uintptr_t)name;
	claim.uid = (char *)(uintptr_t)uid;
	/* Both messages are one repeated Claim, field 1. */
	K8s__Io__Kubelet__Pkg__Apis__Dra__V1__NodePrepareResourcesRequest prep;
	K8s__Io__Kubelet__Pkg__Apis__Dra__V1__NodeUnprepareResourcesRequest unprep;
	k8s__io__kubelet__pkg__apis__dra__v1__node_prepare_resources_request__init(&prep);
	k8s__io__kubelet__pkg__apis__dra__v1__node_unprepare_resources_request__init(&unprep);
	prep.n_claims = unprep.n_claims = 1;
	prep.claims = unprep.claims = claims;
	const ProtobufCMessage *m = prepare ? &prep.base : &unprep.base;
	size_t len = protobuf_c_message_get_packed_size(m);
	uint8_t *buf = malloc(len ? len : 1);
	if (!buf)
		return NULL;
	*ret_len = protobuf_c_message_pack(m, buf);
	return buf;
}

static void test_registers_and_answers(void **state)
{
	(void)state;
	struct dra_node d;
	start(&d);
	expect_registered(&d);
	/* The chips are DRA's, and the device plugin, which would have served
	 * its socket before the driver's, does not serve at all: the kubelet
	 * gets no ascend.com/npu, not even an empty one. */
	expect_event(d.plugin, "front-ends", "dra", "npu-0,npu-1,npu-2,npu-3");
	assert_int_equal(access(d.node.plugin_socket, F_OK), -1);
	uint16_t port = http_plugin_port(d.plugin); /* logged before any refresh of the loop */
	expect_event(d.plugin, "dra.registered", "driver", "npu.ascend.com");
	struct http_response health;
	http_call(port, "GET", "/healthz", &health);
	assert_int_equal(health.status, 200);
	assert_non_null(strstr(health.body, "npu.ascend.com (DRA): registered with the kubelet\n"));
	http_response_clear(&health);

	proc_send(d.kubelet, "dra-prepare default claim-1 uid-1");
	const char *line = proc_expect(d.kubelet, "dra-prepare-error uid=uid-1", WAIT_MS);
	assert_non_null(line);
	assert_non_null(strstr(line, "cannot read ResourceClaim default/claim-1: API server: "));
	assert_non_null(strstr(line, "127.0.0.1:1"));
	proc_send(d.kubelet, "dra-unprepare default claim-1 uid-1");
	assert_non_null(proc_expect(d.kubelet, "dra-unprepared uid=uid-1", WAIT_MS));

	/* The v1beta1 paths are served too (an older kubelet's). */
	struct gc_channel *ch;
	struct gc_result res;
	assert_int_equal(gc_channel_open(d.dra_socket, &ch), 0);
	size_t len;
	uint8_t *buf = claim_request(false, "default", "c", "uid-2", &len);
	assert_non_null(buf);
	assert_int_equal(gc_unary(ch, DRA_METHOD_V1BETA1_UNPREPARE, buf, len, WAIT_MS, &res), 0);
	free(buf);
	assert_int_equal(res.status, GRPC_STATUS_OK);
	K8s__Io__Kubelet__Pkg__Apis__Dra__V1__NodeUnprepareResourcesResponse *resp =
		k8s__io__kubelet__pkg__apis__dra__v1__node_unprepare_resources_response__unpack(NULL, res.len, res.body);
	assert_non_null(resp);
	assert_int_equal(resp->n_claims, 1);
	assert_string_equal(resp->claims[0]->key, "uid-2");
	assert_true(!resp->claims[0]->value->error || !resp->claims[0]->value->error[0]);
	k8s__io__kubelet__pkg__apis__dra__v1__node_unprepare_resources_response__free_unpacked(resp, NULL);
	gc_result_clear(&res);

	/* Bytes that are no request. */
	static const uint8_t garbage[] = { 0x0a, 0xff, 0xff };
	assert_int_equal(gc_unary(ch, DRA_METHOD_V1BETA1_PREPARE, garbage, sizeof(garbage), WAIT_MS, &res), 0);
	assert_int_equal(res.status, GRPC_STATUS_INVALID_ARGUMENT);
	gc_result_clear(&res);
	gc_channel_close(ch);
	node_fini(&d.node);
}

static void test_served_anew(void **state)
{
	(void)state;
	struct dra_node d;
	start(&d);
	expect_registered(&d);

	/* The registration socket removed from under the daemon: served anew
	 * at once (inotify; the refresh is an hour away), and the watcher
	 * registers it again. */
	assert_int_equal(unlink(d.reg_socket), 0);
	expect_event(d.plugin, "dra.sockets-restored");
	expect_registered(&d);

	/* The DRA socket's directory taken away (moved, so that the daemon
	 * making it anew cannot race a removal): both served anew, registered
	 * again. */
	char dir[160], away[160];
	snprintf(dir, sizeof(dir), "%s/plugins/npu.ascend.com", d.kubelet_dir);
	snprintf(away, sizeof(away), "%s/plugins-away", d.node.root);
	assert_int_equal(rename(dir, away), 0);
	expect_event(d.plugin, "dra.sockets-restored");
	expect_registered(&d);
	proc_send(d.kubelet, "dra-prepare default claim-1 uid-4");
	assert_non_null(proc_expect(d.kubelet, "dra-prepare-error uid=uid-4", WAIT_MS));

	/* A kubelet restart: the new watcher finds the socket by itself. */
	proc_send(d.kubelet, "quit");
	assert_int_equal(proc_wait(d.kubelet, WAIT_MS), 0);
	proc_free(d.kubelet);
	d.kubelet = d.node.kubelet = start_kubelet(&d);
	expect_registered(&d);
	proc_send(d.kubelet, "dra-unprepare default claim-1 uid-3");
	assert_non_null(proc_expect(d.kubelet, "dra-unprepared uid=uid-3", WAIT_MS));
	node_fini(&d.node);
}

/* Reads the health stream until npu-<phy> has the health wanted (the list
 * comes again at every refresh); returns that device's message, malloc'd. */
static char *await_health(struct gc_stream *st, const char *device, V1__HealthStatus want, size_t chips)
{
	int64_t deadline = now_ms() + WAIT_MS;
	for (;;) {
		V1__NodeWatchResourcesResponse *resp = dra_health_next(st, deadline);
		assert_int_equal(resp->n_devices, chips);
		char *found = NULL;
		for (size_t i = 0; i < resp->n_devices; i++) {
			const V1__DeviceHealth *h = resp->devices[i];
			assert_string_equal(h->device->pool_name, "node-1");
			assert_true(h->last_updated_time > 0);
			/* Three health intervals of an hour. */
			assert_int_equal(h->health_check_timeout_seconds, 3 * 3600);
			if (strcmp(h->device->device_name, device) == 0 && h->health == want)
				found = strdup(h->message ? h->message : "");
		}
		v1__node_watch_resources_response__free_unpacked(resp, NULL);
		if (found)
			return found;
	}
}

static void test_health_stream(void **state)
{
	(void)state;
	struct dra_node d;
	start(&d);
	expect_registered(&d);
	struct gc_channel *ch;
	struct gc_stream *st;
	assert_int_equal(gc_channel_open(d.dra_socket, &ch), 0);
	assert_int_equal(gc_stream_open(ch, DRA_METHOD_HEALTH_V1_WATCH, NULL, 0, &st), 0);
	free(await_health(st, "npu-2", V1__HEALTH_STATUS__HEALTHY, 4));
	/* The kubelets before 1.37 open the same stream in package v1alpha1. */
	struct gc_stream *alpha;
	assert_int_equal(gc_stream_open(ch, DRA_METHOD_HEALTH_V1ALPHA1_WATCH, NULL, 0, &alpha), 0);
	free(await_health(alpha, "npu-2", V1__HEALTH_STATUS__HEALTHY, 4));

	/* A fault event: the stream says so at once (the poll is an hour away). */
	const char *faulty[4] = { [2] = "health=2 errors=80E01801" };
	node_write_chip_state(&d.node, &(struct chip_state){ .chips = 4, .attrs = faulty });
	char *message = await_health(st, "npu-2", V1__HEALTH_STATUS__UNHEALTHY, 4);
	assert_non_null(strstr(message, "DCMI health 2 (major), error codes 80E01801"));
	free(message);
	free(await_health(alpha, "npu-2", V1__HEALTH_STATUS__UNHEALTHY, 4));
	gc_stream_close(alpha);
	/* Recovery, after the fault policy's hold. */
	node_write_chip_state(&d.node, &(struct chip_state){ .chips = 4 });
	free(await_health(st, "npu-2", V1__HEALTH_STATUS__HEALTHY, 4));
	gc_stream_close(st);
	gc_channel_close(ch);
	node_fini(&d.node);
}

/* The ids a ListAndWatch of the device plugin lists first, comma-separated. */
static void device_plugin_list(struct dra_node *d, char *ids, size_t size)
{
	struct gc_channel *dp = node_plugin_channel(&d->node);
	struct gc_stream *watch;
	uint8_t *body = NULL;
	size_t body_len = 0;
	assert_int_equal(gc_stream_open(dp, DP_METHOD_LIST_AND_WATCH, NULL, 0, &watch), 0);
	assert_int_equal(gc_stream_next(watch, WAIT_MS, &body, &body_len), 0);
	V1beta1__ListAndWatchResponse *list = v1beta1__list_and_watch_response__unpack(NULL, body_len, body);
	assert_non_null(list);
	ids[0] = '\0';
	for (size_t i = 0; i < list->n_devices; i++)
		snprintf(ids + strlen(ids), size - strlen(ids), "%s%s", i ? "," : "", list->devices[i]->id);
	v1beta1__list_and_watch_response__free_unpacked(list, NULL);
	free(body);
	gc_stream_close(watch);
	gc_channel_close(dp);
}

/* --front-end=both: the driver has the chips of --dra-chips, the device
 * plugin registers and lists the others, and a fault of a chip reaches
 * only its own front end. */
static void test_both_front_ends(void **state)
{
	(void)state;
	struct dra_node d;
	start_as(&d, "both", "0,3");
	/* Both register (in either order). */
	assert_non_null(proc_expect(d.kubelet, "devices resource=ascend.com/npu capacity=2 allocatable=2", WAIT_MS));
	expect_event(d.plugin, "front-ends", "dra", "npu-0,npu-3", "device_plugin", "npu-1,npu-2");
	expect_event(d.plugin, "dra.registered", "driver", "npu.ascend.com");
	char ids[128];
	device_plugin_list(&d, ids, sizeof(ids));
	assert_string_equal(ids, "npu-1,npu-2");

	struct gc_channel *ch;
	struct gc_stream *st;
	assert_int_equal(gc_channel_open(d.dra_socket, &ch), 0);
	assert_int_equal(gc_stream_open(ch, DRA_METHOD_HEALTH_V1_WATCH, NULL, 0, &st), 0);
	free(await_health(st, "npu-3", V1__HEALTH_STATUS__HEALTHY, 2));
	const char *faulty[4] = { [3] = "health=2 errors=80E01801" };
	node_write_chip_state(&d.node, &(struct chip_state){ .chips = 4, .attrs = faulty });
	free(await_health(st, "npu-3", V1__HEALTH_STATUS__UNHEALTHY, 2));
	gc_stream_close(st);
	gc_channel_close(ch);
	node_fini(&d.node);
}

/* Sanitizers keep freed memory in quarantine or shadow it: the memory
 * bound holds for the release build only (as in test_flood.c). */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define MEMORY_CHECKED 0
#else
#define MEMORY_CHECKED 1
#endif

#define HUGE_UID_BYTES (4 * 1000 * 1000)

/* The container's memory limit in the DaemonSet, in KiB: the "memory:"
 * under "limits:", in Mi. */
static long long manifest_limit_kib(void)
{
	static const char path[] = TEST_SOURCE_DIR "/../deploy/dra/ascend-dra-driver.yaml";
	FILE *f = fopen(path, "r");
	assert_non_null(f);
	char line[256];
	bool in_limits = false;
	long long mib = -1;
	while (mib < 0 && fgets(line, sizeof(line), f)) {
		if (strstr(line, "limits:"))
			in_limits = true;
		else if (in_limits && sscanf(line, " memory: %lldMi", &mib) != 1)
			mib = -1;
	}
	fclose(f);
	if (mib <= 0)
		fail_msg("no memory limit in %s", path);
	return mib * 1024;
}

/* A call whose answer is never read: the request is sent and the server's
 * initial metadata awaited (the daemon sends it with its answer), but no
 * message is asked for, so an answer larger than the flow-control window
 * stays in the daemon, as with a client that does not read. */
struct unread_call {
	grpc_channel *channel;
	grpc_call *call;
	grpc_byte_buffer *send;
	grpc_metadata_array initial, trailing;
	grpc_status_code status;
	grpc_slice details;
	/* The tags of the two batches: each is set when its batch completes. */
	bool answered, ended;
};

static void unread_call_start(struct unread_call *c, const char *socket, grpc_completion_queue *cq,
			      const uint8_t *req, size_t len)
{
	char target[256];
	snprintf(target, sizeof(target), "unix:%s", socket);
	/* A subchannel pool of its own: a connection per call, as many
	 * connections as one peer may hold. */
	static char pool_key[] = GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, bdp_key[] = GRPC_ARG_HTTP2_BDP_PROBE,
		    lookahead_key[] = GRPC_ARG_HTTP2_STREAM_LOOKAHEAD_BYTES;
	grpc_arg arg[] = {
		{ .type = GRPC_ARG_INTEGER, .key = pool_key, .value.integer = 1 },
		{ .type = GRPC_ARG_INTEGER, .key = bdp_key, .value.integer = 0 },
		{ .type = GRPC_ARG_INTEGER, .key = lookahead_key, .value.integer = 0 },
	};
	grpc_channel_args args = { .num_args = 3, .args = arg };
	grpc_channel_credentials *creds = grpc_insecure_credentials_create();
	c->channel = grpc_channel_create(target, creds, &args);
	grpc_channel_credentials_release(creds);
	grpc_slice method = grpc_slice_from_static_string(DRA_METHOD_V1_PREPARE);
	c->call = grpc_channel_create_call(c->channel, NULL, GRPC_PROPAGATE_DEFAULTS, cq, method, NULL,
					   gpr_inf_future(GPR_CLOCK_MONOTONIC), NULL);
	assert_non_null(c->call);
	grpc_slice body = grpc_slice_from_copied_buffer((const char *)req, len);
	c->send = grpc_raw_byte_buffer_create(&body, 1);
	grpc_slice_unref(body);
	grpc_metadata_array_init(&c->initial);
	grpc_metadata_array_init(&c->trailing);
	grpc_op ops[4];
	memset(ops, 0, sizeof(ops));
	ops[0].op = GRPC_OP_SEND_INITIAL_METADATA;
	ops[1].op = GRPC_OP_SEND_MESSAGE;
	ops[1].data.send_message.send_message = c->send;
	ops[2].op = GRPC_OP_SEND_CLOSE_FROM_CLIENT;
	ops[3].op = GRPC_OP_RECV_INITIAL_METADATA;
	ops[3].data.recv_initial_metadata.recv_initial_metadata = &c->initial;
	assert_int_equal(grpc_call_start_batch(c->call, ops, 4, &c->answered, NULL), GRPC_CALL_OK);
	grpc_op status;
	memset(&status, 0, sizeof(status));
	status.op = GRPC_OP_RECV_STATUS_ON_CLIENT;
	status.data.recv_status_on_client.trailing_metadata = &c->trailing;
	status.data.recv_status_on_client.status = &c->status;
	status.data.recv_status_on_client.status_details = &c->details;
	assert_int_equal(grpc_call_start_batch(c->call, &status, 1, &c->ended, NULL), GRPC_CALL_OK);
}

/* Waits until the flag at offset (answered or ended) is set in each of the
 * n calls. */
static void await_calls(grpc_completion_queue *cq, struct unread_call *calls, size_t n, size_t offset)
{
	size_t done = 0;
	while (done < n) {
		gpr_timespec deadline =
			gpr_time_add(gpr_now(GPR_CLOCK_MONOTONIC), gpr_time_from_millis(WAIT_MS, GPR_TIMESPAN));
		grpc_event ev = grpc_completion_queue_next(cq, deadline, NULL);
		if (ev.type != GRPC_OP_COMPLETE)
			fail_msg("%zu of %zu calls got that far", done, n);
		*(bool *)ev.tag = true;
		done = 0;
		for (size_t i = 0; i < n; i++)
			done += *(bool *)((char *)&calls[i] + offset);
	}
}

/* Prepares naming a claim whose uid is 4 MB, over as many connections as
 * one peer may hold, one after another, their answers left unread: each is
 * refused whole, naming the bound and not echoing the uid, so the daemon
 * holds no answer of megabytes for a client that does not read, and its
 * peak RSS stays under the DaemonSet's memory limit. (When the uid was
 * echoed as the answer's key, the unread answers took it over the limit.)
 * A name over its bound is refused the same way in an unprepare. */
static void test_huge_uids(void **state)
{
	(void)state;
	struct dra_node d;
	start(&d);
	expect_registered(&d);
	pid_t pid = proc_pid(d.plugin);
	long long before = proc_status_kib(pid, "VmHWM");

	char *uid = malloc(HUGE_UID_BYTES + 1);
	assert_non_null(uid);
	memset(uid, 'a', HUGE_UID_BYTES);
	uid[HUGE_UID_BYTES] = '\0';
	char ns[] = "default", name[] = "c";
	size_t len;
	uint8_t *buf = claim_request(true, ns, name, uid, &len);
	assert_non_null(buf);
	free(uid);

	grpc_init();
	grpc_completion_queue *cq = grpc_completion_queue_create_for_next(NULL);
	struct unread_call calls[GS_MAX_CONNECTIONS_PER_PEER];
	memset(calls, 0, sizeof(calls));
	for (size_t i = 0; i < GS_MAX_CONNECTIONS_PER_PEER; i++) {
		unread_call_start(&calls[i], d.dra_socket, cq, buf, len);
		await_calls(cq, calls, i + 1, offsetof(struct unread_call, answered));
	}
	free(buf);

	long long peak = proc_status_kib(pid, "VmHWM"), limit = manifest_limit_kib();
	print_message("daemon peak RSS %lld KiB (%lld KiB before), the DaemonSet's limit %lld KiB\n", peak, before,
		      limit);
	assert_true(peak > 0); /* still running */
	if (MEMORY_CHECKED)
		assert_true(peak < limit);

	await_calls(cq, calls, GS_MAX_CONNECTIONS_PER_PEER, offsetof(struct unread_call, ended));
	char want[64];
	snprintf(want, sizeof(want), "claims[0].uid is longer than %d bytes", DRA_UID_MAX - 1);
	for (size_t i = 0; i < GS_MAX_CONNECTIONS_PER_PEER; i++) {
		struct unread_call *c = &calls[i];
		char *details = grpc_slice_to_c_string(c->details);
		if (c->status != GRPC_STATUS_INVALID_ARGUMENT || !strstr(details, want) || strlen(details) > 256)
			fail_msg("call %zu: status %d, '%.200s'", i, c->status, details);
		gpr_free(details);
		grpc_slice_unref(c->details);
		grpc_metadata_array_destroy(&c->initial);
		grpc_metadata_array_destroy(&c->trailing);
		grpc_byte_buffer_destroy(c->send);
		grpc_call_unref(c->call);
		grpc_channel_destroy(c->channel);
	}
	grpc_completion_queue_shutdown(cq);
	while (grpc_completion_queue_next(cq, gpr_inf_future(GPR_CLOCK_MONOTONIC), NULL).type != GRPC_QUEUE_SHUTDOWN)
		;
	grpc_completion_queue_destroy(cq);
	grpc_shutdown();

	char long_name[K8S_DNS_SUBDOMAIN_MAX + 2];
	memset(long_name, 'n', sizeof(long_name) - 1);
	long_name[sizeof(long_name) - 1] = '\0';
	char short_uid[] = "uid-1";
	buf = claim_request(false, ns, long_name, short_uid, &len);
	assert_non_null(buf);
	struct gc_channel *ch;
	struct gc_result res;
	assert_int_equal(gc_channel_open(d.dra_socket, &ch), 0);
	assert_int_equal(gc_unary(ch, DRA_METHOD_V1_UNPREPARE, buf, len, WAIT_MS, &res), 0);
	free(buf);
	assert_int_equal(res.status, GRPC_STATUS_INVALID_ARGUMENT);
	snprintf(want, sizeof(want), "claims[0].name is longer than %d bytes", K8S_DNS_SUBDOMAIN_MAX);
	assert_string_equal(res.details, want);
	gc_result_clear(&res);
	gc_channel_close(ch);

	/* And it still serves. */
	proc_send(d.kubelet, "dra-unprepare default claim-1 uid-1");
	assert_non_null(proc_expect(d.kubelet, "dra-unprepared uid=uid-1", WAIT_MS));
	node_fini(&d.node);
}

/* --- under an address-space limit ----------------------------------------- */

/* The limit, as `ulimit -v 512M` or a container runtime sets it. Under it the
 * daemon with both front ends on aborted now and then with std::bad_alloc
 * out of gRPC, or could not start a thread at all: glibc's malloc reserved
 * 64 MiB of address space for each arena it made for a thread, and each
 * thread, gRPC's too, 8 MiB of stack: about 1 GiB for 18 MiB resident. */
#define AS_LIMIT_BYTES (512ULL << 20)
/* What it may reserve at most (VmPeak), as docs/performance.md says. */
#define AS_BOUND_KIB (128LL * 1024)
#define LOAD_CLIENTS 6
#define LOAD_ROUNDS 25
/* Sanitizers reserve terabytes of shadow memory: no limit there, the load
 * alone. */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define AS_LIMITED 0
#else
#define AS_LIMITED 1
#endif

/* The clients' tally; client threads must not fail the test themselves. */
struct load {
	const struct dra_node *d;
	uint16_t port;
	pthread_mutex_t lock;
	unsigned calls, failures;
	char first_failure[256];
};

struct load_client {
	struct load *load;
	unsigned id;
};

static void load_note(struct load *l, bool ok, const char *what, const char *why)
{
	pthread_mutex_lock(&l->lock);
	l->calls++;
	if (!ok && l->failures++ == 0)
		snprintf(l->first_failure, sizeof(l->first_failure), "%s: %s", what, why);
	pthread_mutex_unlock(&l->lock);
}

/* One unary call on a connection of its own, which must answer OK. */
static void load_unary(struct load *l, const char *socket, const char *method, const uint8_t *req, size_t len)
{
	struct gc_channel *ch;
	struct gc_result res;
	int r = gc_channel_open(socket, &ch);
	if (r == 0) {
		r = gc_unary(ch, method, req, len, WAIT_MS, &res);
		gc_channel_close(ch);
	}
	load_note(l, r == 0 && res.status == GRPC_STATUS_OK, method, r < 0 ? strerror(-r) : res.details);
	if (r == 0)
		gc_result_clear(&res);
}

/* A stream opened on a connection of its own: its first message, then a
 * cancel. */
static void load_stream(struct load *l, const char *socket, const char *method)
{
	struct gc_channel *ch;
	struct gc_stream *st = NULL;
	uint8_t *body = NULL;
	size_t len = 0;
	int r = gc_channel_open(socket, &ch);
	if (r == 0) {
		r = gc_stream_open(ch, method, NULL, 0, &st);
		if (r == 0)
			r = gc_stream_next(st, WAIT_MS, &body, &len);
		free(body);
		gc_stream_close(st);
		gc_channel_close(ch);
	}
	load_note(l, r == 0, method, strerror(-r));
}

static void load_metrics(struct load *l)
{
	static const char req[] = "GET /metrics HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n";
	struct http_response res = { 0 };
	int r = http_raw("127.0.0.1", l->port, req, sizeof(req) - 1, WAIT_MS, &res);
	char why[32];
	snprintf(why, sizeof(why), "status %d", res.status);
	load_note(l, r == 0 && res.status == 200, "GET /metrics", r < 0 ? strerror(-r) : why);
	http_response_clear(&res);
}

/* Every call of both front ends, LOAD_ROUNDS times, each on a connection of
 * its own; prepares fail per claim (no API server) but are answered. */
static void *load_client_main(void *arg)
{
	const struct load_client *c = arg;
	struct load *l = c->load;
	char dev[] = "npu-2", other[] = "npu-3", *ids[] = { dev }, *available[] = { dev, other };
	V1beta1__ContainerAllocateRequest car = V1BETA1__CONTAINER_ALLOCATE_REQUEST__INIT, *cars[] = { &car };
	car.n_devices_ids = 1;
	car.devices_ids = ids;
	V1beta1__AllocateRequest alloc = V1BETA1__ALLOCATE_REQUEST__INIT;
	alloc.n_container_requests = 1;
	alloc.container_requests = cars;
	V1beta1__ContainerPreferredAllocationRequest cpr = V1BETA1__CONTAINER_PREFERRED_ALLOCATION_REQUEST__INIT,
						     *cprs[] = { &cpr };
	cpr.n_available_deviceids = 2;
	cpr.available_deviceids = available;
	cpr.allocation_size = 1;
	V1beta1__PreferredAllocationRequest pref = V1BETA1__PREFERRED_ALLOCATION_REQUEST__INIT;
	pref.n_container_requests = 1;
	pref.container_requests = cprs;
	uint8_t alloc_buf[64], pref_buf[64];
	size_t alloc_len = v1beta1__allocate_request__pack(&alloc, alloc_buf);
	size_t pref_len = v1beta1__preferred_allocation_request__pack(&pref, pref_buf);

	for (unsigned round = 0; round < LOAD_ROUNDS; round++) {
		char name[32], uid[32];
		snprintf(name, sizeof(name), "claim-%u-%u", c->id, round);
		snprintf(uid, sizeof(uid), "uid-%u-%u", c->id, round);
		size_t prep_len = 0, unprep_len = 0;
		uint8_t *prep_buf = claim_request(true, "default", name, uid, &prep_len);
		uint8_t *unprep_buf = claim_request(false, "default", name, uid, &unprep_len);
		if (!prep_buf || !unprep_buf) {
			free(prep_buf);
			free(unprep_buf);
			load_note(l, false, "a claim request", "out of memory");
			break;
		}

		load_unary(l, l->d->node.plugin_socket, DP_METHOD_ALLOCATE, alloc_buf, alloc_len);
		load_unary(l, l->d->node.plugin_socket, DP_METHOD_GET_PREFERRED, pref_buf, pref_len);
		load_stream(l, l->d->node.plugin_socket, DP_METHOD_LIST_AND_WATCH);
		load_unary(l, l->d->dra_socket, DRA_METHOD_V1_PREPARE, prep_buf, prep_len);
		load_unary(l, l->d->dra_socket, DRA_METHOD_V1_UNPREPARE, unprep_buf, unprep_len);
		load_stream(l, l->d->dra_socket, DRA_METHOD_HEALTH_V1_WATCH);
		load_metrics(l);
		free(prep_buf);
		free(unprep_buf);
	}
	return NULL;
}

/* Both front ends under RLIMIT_AS: they register, answer every call of
 * LOAD_CLIENTS clients at once, still answer after, reserve at most
 * AS_BOUND_KIB, and exit 0 on SIGTERM (node_fini). */
static void test_address_space_limit(void **state)
{
	(void)state;
	struct dra_node d;
	start_limited(&d, "both", "0,1", AS_LIMITED ? AS_LIMIT_BYTES : 0);
	assert_non_null(proc_expect(d.kubelet, "devices resource=ascend.com/npu capacity=2 allocatable=2", WAIT_MS));
	struct load l = { .d = &d, .lock = PTHREAD_MUTEX_INITIALIZER };
	l.port = http_plugin_port(d.plugin);
	expect_event(d.plugin, "dra.registered", "driver", "npu.ascend.com");

	pthread_t threads[LOAD_CLIENTS];
	struct load_client clients[LOAD_CLIENTS];
	for (unsigned i = 0; i < LOAD_CLIENTS; i++) {
		clients[i] = (struct load_client){ .load = &l, .id = i };
		assert_int_equal(pthread_create(&threads[i], NULL, load_client_main, &clients[i]), 0);
	}
	for (unsigned i = 0; i < LOAD_CLIENTS; i++)
		assert_int_equal(pthread_join(threads[i], NULL), 0);

	pid_t pid = proc_pid(d.plugin);
	long long peak = proc_status(pid, "VmPeak"), size = proc_status(pid, "VmSize");
	print_message("%u calls, %u failed; daemon (RLIMIT_AS %llu MiB, 0: none): VmPeak %lld KiB, VmSize %lld KiB, "
		      "VmRSS %lld KiB, %lld threads\n",
		      l.calls, l.failures, AS_LIMITED ? AS_LIMIT_BYTES >> 20 : 0, peak, size, proc_status(pid, "VmRSS"),
		      proc_status(pid, "Threads"));
	if (l.failures)
		fail_msg("first failure: %s", l.first_failure);
	/* Still answering, on both front ends. */
	struct http_response health;
	http_call(l.port, "GET", "/healthz", &health);
	assert_int_equal(health.status, 200);
	http_response_clear(&health);
	proc_send(d.kubelet, "dra-unprepare default claim-x uid-x");
	assert_non_null(proc_expect(d.kubelet, "dra-unprepared uid=uid-x", WAIT_MS));
	if (AS_LIMITED)
		assert_true(peak <= AS_BOUND_KIB);
	node_fini(&d.node);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_registers_and_answers),
		cmocka_unit_test(test_served_anew),
		cmocka_unit_test(test_health_stream),
		cmocka_unit_test(test_both_front_ends),
		cmocka_unit_test(test_huge_uids),
		cmocka_unit_test(test_address_space_limit),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
