/* SPDX-License-Identifier: Apache-2.0 */
/* Registration and the device list as the kubelet sees them: the plugin
 * serves first, registers ascend.com/npu, and advertises every chip. */
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "base/parse.h"
#include "deviceplugin.pb-c.h"
#include "deviceplugin_api.h"
#include "grpc/server.h"
#include "harness/harness.h"

static void test_registers_and_advertises_every_chip(void **state)
{
	(void)state;
	struct node node;
	node_init(&node, &(struct node_options){ .chips = 8 });
	struct proc *k = node_start_kubelet(&node);
	struct proc *p = node_start_plugin(&node, NULL);

	const char *line = proc_expect(k, "register resource=ascend.com/npu", WAIT_MS);
	assert_non_null(line);
	assert_non_null(strstr(line, "endpoint=ascend-npu.sock"));
	assert_non_null(strstr(line, "version=v1beta1"));
	assert_non_null(strstr(line, "pre_start=0"));
	/* Advertised because it is served (kubelet-sim reads it back from GetDevicePluginOptions). */
	assert_non_null(strstr(line, "preferred_allocation=1"));
	assert_non_null(proc_expect(k, "devices resource=ascend.com/npu capacity=8 allocatable=8 unhealthy=-", WAIT_MS));
	expect_event(p, "dcmi.loaded");
	expect_event(p, "plugin.registered", "resource", "ascend.com/npu");

	proc_send(k, "list");
	for (int i = 0; i < 8; i++) {
		char want[64];
		snprintf(want, sizeof(want), "device id=npu-%d health=Healthy", i);
		assert_non_null(proc_expect(k, want, WAIT_MS));
	}
	node_fini(&node);
}

static void test_plugin_first_then_kubelet(void **state)
{
	(void)state;
	struct node node;
	node_init(&node, &(struct node_options){ .chips = 2 });
	struct proc *p = node_start_plugin(&node, NULL);
	/* No kubelet yet: the first failure is logged, then retried quietly. */
	expect_event(p, "plugin.register-failed", "resource", "ascend.com/npu");
	struct proc *k = node_start_kubelet(&node);
	assert_non_null(proc_expect(k, "register resource=ascend.com/npu", WAIT_MS));
	assert_non_null(proc_expect(k, "capacity=2 allocatable=2", WAIT_MS));
	node_fini(&node);
}

static void test_device_ids_follow_phy_ids(void **state)
{
	(void)state;
	struct node node;
	node_init(&node, &(struct node_options){ .chips = 0 });
	node_touch(&node, "dev/davinci4");
	node_touch(&node, "dev/davinci9");
	/* Card and logic numbering differ from the physical ids. */
	node_write_state(&node, "chip phy=9 card=3 device=0 logic=0 name=910B3\n"
				"chip phy=4 card=7 device=0 logic=1 name=910B3\n");
	struct proc *k = node_start_kubelet(&node);
	node_start_plugin(&node, NULL);
	assert_non_null(proc_expect(k, "capacity=2 allocatable=2", WAIT_MS));
	proc_send(k, "list");
	assert_non_null(proc_expect(k, "device id=npu-4 health=Healthy", WAIT_MS));
	assert_non_null(proc_expect(k, "device id=npu-9 health=Healthy", WAIT_MS));
	node_fini(&node);
}

static void test_custom_resource_name(void **state)
{
	(void)state;
	struct node node;
	node_init(&node, &(struct node_options){ .chips = 1 });
	struct proc *k = node_start_kubelet(&node);
	node_start_plugin(&node, (const char *[]){ "--resource-name", "huawei.com/Ascend910", NULL });
	const char *line = proc_expect(k, "register resource=huawei.com/Ascend910", WAIT_MS);
	assert_non_null(line);
	assert_non_null(strstr(line, "endpoint=huawei-Ascend910.sock"));
	node_fini(&node);
}

static void test_options_and_probe(void **state)
{
	(void)state;
	struct node node;
	node_init(&node, &(struct node_options){ .chips = 1 });
	struct proc *k = node_start_kubelet(&node);
	node_start_plugin(&node, NULL);
	assert_non_null(proc_expect(k, "capacity=1", WAIT_MS));

	struct gc_channel *ch = node_plugin_channel(&node);
	struct gc_result res;
	assert_int_equal(gc_unary(ch, DP_METHOD_GET_OPTIONS, NULL, 0, WAIT_MS, &res), 0);
	assert_int_equal(res.status, GRPC_STATUS_OK);
	V1beta1__DevicePluginOptions *o = v1beta1__device_plugin_options__unpack(NULL, res.len, res.body);
	assert_non_null(o);
	assert_false(o->pre_start_required);
	assert_true(o->get_preferred_allocation_available);
	v1beta1__device_plugin_options__free_unpacked(o, NULL);
	gc_result_clear(&res);
	gc_channel_close(ch);

	/* The liveness probe answers 0 while the plugin serves, 1 when it does not. */
	const char *probe[] = { PLUGIN_BIN, "--probe", "--socket-dir", node.socket_dir, NULL };
	struct proc *pr = proc_start(probe, NULL);
	assert_int_equal(proc_wait(pr, EXIT_WAIT_MS), 0);
	proc_free(pr);
	const char *bad[] = { PLUGIN_BIN, "--probe", "--socket-dir", "/tmp", NULL };
	pr = proc_start(bad, NULL);
	assert_int_equal(proc_wait(pr, EXIT_WAIT_MS), 1);
	proc_free(pr);
	node_fini(&node);
}

/* The kubelet cancels its ListAndWatch right after accepting Register,
 * sometimes before the plugin's server has even read the request: every
 * time, the plugin must notice and register again, or the node stays at 0
 * allocatable for good. */
static void test_stream_cancelled_at_once(void **state)
{
	(void)state;
	struct node node;
	node_init(&node, &(struct node_options){ .chips = 2 });
	struct proc *k = node_start_kubelet(&node);
	node_start_plugin(&node, NULL);

	/* Every registration is answered at once by ending its stream, until
	 * eight have been ended. A slow machine may add a registration of the
	 * plugin's own (its watchdog) in between, so react to lines as they
	 * come rather than expecting a fixed sequence. */
	unsigned ended = 0;
	while (ended < 8) {
		const char *line = proc_expect(k, "", WAIT_MS);
		assert_non_null(line);
		if (strstr(line, "register resource=ascend.com/npu"))
			proc_send(k, "end-stream");
		else if (strstr(line, "stream-ended resource=ascend.com/npu"))
			ended++;
	}
	/* After the last one the plugin must still come back. */
	assert_non_null(proc_expect(k, "capacity=2 allocatable=2", WAIT_MS));
	node_fini(&node);
}

/* The kubelet lets go of a plugin's socket path only a while after the
 * stream through it ended, refuses a Register naming a path it still holds,
 * and after such a refusal holds that path for good (then may send a later
 * pod's allocation to it). However late it lets go, no registration of the
 * plugin is refused: each after the first names a path of its own, a link
 * of the served socket, which the next one removes. */
static void test_registers_again_under_a_fresh_path(void **state)
{
	(void)state;
	struct node node;
	node_init(&node, &(struct node_options){ .chips = 2 });
	struct proc *k = node_start_kubelet_with(&node, (const char *const[]){ "--let-go-ms", "60000", NULL });
	node_start_plugin(&node, NULL);
	const char *line = proc_expect(k, "register resource=ascend.com/npu", WAIT_MS);
	assert_non_null(line);
	assert_non_null(strstr(line, "endpoint=ascend-npu.sock "));
	assert_non_null(proc_expect(k, "capacity=2 allocatable=2", WAIT_MS));

	char previous[SOCKET_PATH_MAX] = "ascend-npu.sock";
	for (int i = 0; i < 3; i++) {
		proc_send(k, "end-stream");
		line = proc_expect_next(k, "register", "register resource=ascend.com/npu endpoint=ascend-npu~", WAIT_MS);
		assert_non_null(line);
		const char *at = strstr(line, "endpoint=") + strlen("endpoint=");
		char name[SOCKET_PATH_MAX];
		assert_int_equal(sscanf(at, "%107s", name), 1);
		assert_string_not_equal(name, previous);
		assert_non_null(proc_expect(k, "capacity=2 allocatable=2", WAIT_MS));
		/* The link serves (the kubelet-sim dialled through it) and the
		 * one before it is gone. */
		char path[SOCKET_PATH_MAX];
		struct stat st;
		assert_int_equal(path_join(path, sizeof(path), node.socket_dir, name), 0);
		assert_int_equal(stat(path, &st), 0);
		assert_true(S_ISSOCK(st.st_mode));
		if (i > 0) {
			assert_int_equal(path_join(path, sizeof(path), node.socket_dir, previous), 0);
			assert_int_equal(access(path, F_OK), -1);
		}
		memcpy(previous, name, sizeof(name));
	}
	node_fini(&node);
}

/* A kubelet stand-in that accepts Register and never dials back or watches. */
struct mute_kubelet {
	pthread_mutex_t lock;
	pthread_cond_t changed;
	unsigned registers;
};

static void mute_register(void *ctx, const uint8_t *req, size_t len, struct gs_reply *reply)
{
	(void)req, (void)len, (void)reply; /* an empty OK answer is a valid Empty */
	struct mute_kubelet *m = ctx;
	pthread_mutex_lock(&m->lock);
	m->registers++;
	pthread_cond_broadcast(&m->changed);
	pthread_mutex_unlock(&m->lock);
}

/* Accepted, but no stream follows: the watchdog registers again. */
static void test_watchdog_registers_again(void **state)
{
	(void)state;
	struct node node;
	node_init(&node, &(struct node_options){ .chips = 1 });
	struct mute_kubelet m = { .lock = PTHREAD_MUTEX_INITIALIZER, .changed = PTHREAD_COND_INITIALIZER };
	static const struct gs_method methods[] = { { .path = DP_METHOD_REGISTER, .unary = mute_register } };
	char kubelet_sock[256];
	assert_int_equal(path_join(kubelet_sock, sizeof(kubelet_sock), node.socket_dir, "kubelet.sock"), 0);
	struct gs_server *server;
	assert_int_equal(gs_server_start(kubelet_sock, methods, 1, &m, &server), 0);

	struct proc *p = node_start_plugin(&node, (const char *const[]){ "--log-level", "debug", NULL });
	expect_event(p, "plugin.registered", "resource", "ascend.com/npu");
	expect_event(p, "plugin.no-stream", "resource", "ascend.com/npu");

	struct timespec deadline;
	clock_gettime(CLOCK_REALTIME, &deadline);
	deadline.tv_sec += WAIT_MS / 1000;
	pthread_mutex_lock(&m.lock);
	while (m.registers < 2 && pthread_cond_timedwait(&m.changed, &m.lock, &deadline) == 0)
		;
	unsigned registers = m.registers;
	pthread_mutex_unlock(&m.lock);
	assert_true(registers >= 2);

	node_fini(&node);
	gs_server_stop(server);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_registers_and_advertises_every_chip),
		cmocka_unit_test(test_plugin_first_then_kubelet),
		cmocka_unit_test(test_device_ids_follow_phy_ids),
		cmocka_unit_test(test_custom_resource_name),
		cmocka_unit_test(test_options_and_probe),
		cmocka_unit_test(test_stream_cancelled_at_once),
		cmocka_unit_test(test_registers_again_under_a_fresh_path),
		cmocka_unit_test(test_watchdog_registers_again),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
