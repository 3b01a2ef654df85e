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
 *
 * The API server here is unreachable: a prepare fails naming the claim and
 * the cause, and nothing else waits for it. Prepares that succeed, against
 * the real kube-apiserver, are test_dra_apiserver.c's. */
#include <setjmp.h>
#include <stdarg.h>
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
#include "grpc/client.h"
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

/* front_end: "dra" or "both"; dra_chips: --dra-chips. */
static void start_as(struct dra_node *d, const char *front_end, const char *dra_chips)
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
	d->plugin = node_start_plugin(&d->node, flags);
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
	assert_non_null(strstr(line, "versions=v1.DRAPlugin,v1beta1.DRAPlugin,v1.DRAResourceHealth chosen=v1.DRAPlugin"));
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
	assert_non_null(proc_expect_err(d.plugin, "front ends: the DRA driver: npu-0,npu-1,npu-2,npu-3", WAIT_MS));
	assert_int_equal(access(d.node.plugin_socket, F_OK), -1);
	uint16_t port = http_plugin_port(d.plugin); /* logged before any refresh of the loop */
	assert_non_null(proc_expect_err(d.plugin, "the kubelet registered DRA driver npu.ascend.com", WAIT_MS));
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
	K8s__Io__Kubelet__Pkg__Apis__Dra__V1__Claim claim, *claims[1] = { &claim };
	k8s__io__kubelet__pkg__apis__dra__v1__claim__init(&claim);
	char ns[] = "default", name[] = "c", uid[] = "uid-2";
	claim.namespace_ = ns;
	claim.name = name;
	claim.uid = uid;
	K8s__Io__Kubelet__Pkg__Apis__Dra__V1__NodeUnprepareResourcesRequest req;
	k8s__io__kubelet__pkg__apis__dra__v1__node_unprepare_resources_request__init(&req);
	req.n_claims = 1;
	req.claims = claims;
	uint8_t buf[256];
	size_t len = k8s__io__kubelet__pkg__apis__dra__v1__node_unprepare_resources_request__pack(&req, buf);
	assert_int_equal(gc_unary(ch, DRA_METHOD_V1BETA1_UNPREPARE, buf, len, WAIT_MS, &res), 0);
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
	assert_non_null(proc_expect_err(d.plugin, "DRA sockets were gone; serving", WAIT_MS));
	expect_registered(&d);

	/* The DRA socket's directory taken away (moved, so that the daemon
	 * making it anew cannot race a removal): both served anew, registered
	 * again. */
	char dir[160], away[160];
	snprintf(dir, sizeof(dir), "%s/plugins/npu.ascend.com", d.kubelet_dir);
	snprintf(away, sizeof(away), "%s/plugins-away", d.node.root);
	assert_int_equal(rename(dir, away), 0);
	assert_non_null(proc_expect_err(d.plugin, "DRA sockets were gone; serving", WAIT_MS));
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

	/* A fault event: the stream says so at once (the poll is an hour away). */
	const char *faulty[4] = { [2] = "health=2 errors=80E01801" };
	node_write_chip_state(&d.node, &(struct chip_state){ .chips = 4, .attrs = faulty });
	char *message = await_health(st, "npu-2", V1__HEALTH_STATUS__UNHEALTHY, 4);
	assert_non_null(strstr(message, "DCMI health 2 (major), error codes 80E01801"));
	free(message);
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
	assert_non_null(proc_expect_err(d.plugin, "front ends: the DRA driver: npu-0,npu-3; the device plugin: npu-1,npu-2",
					WAIT_MS));
	assert_non_null(proc_expect_err(d.plugin, "the kubelet registered DRA driver npu.ascend.com", WAIT_MS));
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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_registers_and_answers),
		cmocka_unit_test(test_served_anew),
		cmocka_unit_test(test_health_stream),
		cmocka_unit_test(test_both_front_ends),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
