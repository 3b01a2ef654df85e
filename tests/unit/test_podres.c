/* SPDX-License-Identifier: Apache-2.0 */
/* Which pod holds which chip: device IDs mapped back to chips, a List
 * answer decoded (other resources, bad names and duplicates left out), and
 * the client against kubelet-sim's pod resources server and against no
 * socket at all. Waits are on a condition variable with a deadline. */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "base/parse.h"
#include "podresources.pb-c.h"
#include "support/tmpdir.h"
#include "telemetry/podres.h"

#define WAIT_MS 10000

extern char **environ;

static void expect_chip(const char *id, const char *want)
{
	char chip[NPU_DEVICE_ID_MAX];
	if (!want) {
		assert_int_equal(pod_map_chip_of(id, chip), -EINVAL);
		return;
	}
	assert_int_equal(pod_map_chip_of(id, chip), 0);
	assert_string_equal(chip, want);
}

static void test_chip_of(void **state)
{
	(void)state;
	expect_chip("npu-0", "npu-0");
	expect_chip("npu-15", "npu-15");
	expect_chip("npu-3::0", "npu-3");
	expect_chip("npu-3::12", "npu-3");
	expect_chip("vnpu-100", "npu-0");
	expect_chip("vnpu-147", "npu-2"); /* 100 + 2 * 16 + 15 */
	expect_chip("vnpu-99", NULL);
	expect_chip("npu-03", NULL);
	expect_chip("npu-", NULL);
	expect_chip("npu-1x", NULL);
	expect_chip("GPU-1234", NULL);
	expect_chip("npu-123456", NULL);
}

/* A List answer: pods, containers, devices of several resources. */
static uint8_t *pack_answer(size_t *ret_len)
{
	char *ids_a[] = { (char *)(uintptr_t) "npu-0::1", (char *)(uintptr_t) "npu-0::2", (char *)(uintptr_t) "npu-1" };
	char *ids_b[] = { (char *)(uintptr_t) "GPU-abc" };
	char *ids_c[] = { (char *)(uintptr_t) "vnpu-116" };
	V1__ContainerDevices da = V1__CONTAINER_DEVICES__INIT, db = V1__CONTAINER_DEVICES__INIT,
			     dc = V1__CONTAINER_DEVICES__INIT;
	da.resource_name = (char *)(uintptr_t) "ascend.com/npu";
	da.device_ids = ids_a;
	da.n_device_ids = 3;
	db.resource_name = (char *)(uintptr_t) "nvidia.com/gpu";
	db.device_ids = ids_b;
	db.n_device_ids = 1;
	dc.resource_name = (char *)(uintptr_t) "ascend.com/npu-vir04";
	dc.device_ids = ids_c;
	dc.n_device_ids = 1;
	V1__ContainerDevices *devs1[] = { &da, &db };
	V1__ContainerDevices *devs2[] = { &dc };
	V1__ContainerResources c1 = V1__CONTAINER_RESOURCES__INIT, c2 = V1__CONTAINER_RESOURCES__INIT;
	c1.name = (char *)(uintptr_t) "main";
	c1.devices = devs1;
	c1.n_devices = 2;
	c2.name = (char *)(uintptr_t) "side";
	c2.devices = devs2;
	c2.n_devices = 1;
	V1__ContainerResources *ctrs[] = { &c1, &c2 };
	V1__PodResources p1 = V1__POD_RESOURCES__INIT, p2 = V1__POD_RESOURCES__INIT;
	p1.name = (char *)(uintptr_t) "train-0";
	p1.namespace_ = (char *)(uintptr_t) "ml";
	p1.containers = ctrs;
	p1.n_containers = 2;
	char longname[300];
	memset(longname, 'p', sizeof(longname) - 1);
	longname[sizeof(longname) - 1] = '\0';
	p2.name = longname; /* longer than a pod name can be: skipped */
	p2.namespace_ = (char *)(uintptr_t) "ml";
	p2.containers = ctrs;
	p2.n_containers = 1;
	V1__PodResources *pods[] = { &p1, &p2 };
	V1__ListPodResourcesResponse resp = V1__LIST_POD_RESOURCES_RESPONSE__INIT;
	resp.pod_resources = pods;
	resp.n_pod_resources = 2;
	size_t len = v1__list_pod_resources_response__get_packed_size(&resp);
	uint8_t *buf = malloc(len);
	v1__list_pod_resources_response__pack(&resp, buf);
	*ret_len = len;
	return buf;
}

static void test_decode(void **state)
{
	(void)state;
	size_t len;
	uint8_t *buf = pack_answer(&len);
	const char *names[] = { "ascend.com/npu", "ascend.com/npu-vir04" };
	struct pod_map *map;
	assert_int_equal(pod_map_decode(buf, len, names, 2, &map), 0);
	/* npu-0 (two replicas: one holder), npu-1, and the vNPU's chip npu-1. */
	assert_int_equal(map->count, 3);
	assert_string_equal(map->holders[0].chip_id, "npu-0");
	assert_string_equal(map->holders[0].namespace_, "ml");
	assert_string_equal(map->holders[0].pod, "train-0");
	assert_string_equal(map->holders[0].container, "main");
	assert_string_equal(map->holders[1].chip_id, "npu-1");
	assert_string_equal(map->holders[1].container, "main");
	assert_string_equal(map->holders[2].chip_id, "npu-1");
	assert_string_equal(map->holders[2].container, "side");
	pod_map_unref(map);

	/* Only the resources asked for. */
	assert_int_equal(pod_map_decode(buf, len, names, 1, &map), 0);
	assert_int_equal(map->count, 2);
	pod_map_unref(map);

	assert_int_equal(pod_map_decode((const uint8_t *)"\xff\xff\xff", 3, names, 2, &map), -EBADMSG);
	free(buf);
}

struct done {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	bool called;
	int r;
	grpc_status_code status;
	struct pod_map *map;
};

static void on_done(void *ctx, int r, grpc_status_code status, const char *details, struct pod_map *map)
{
	(void)details;
	struct done *d = ctx;
	pthread_mutex_lock(&d->lock);
	d->called = true;
	d->r = r;
	d->status = status;
	d->map = map;
	pthread_cond_signal(&d->cond);
	pthread_mutex_unlock(&d->lock);
}

static void wait_done(struct done *d)
{
	struct timespec deadline;
	clock_gettime(CLOCK_REALTIME, &deadline);
	deadline.tv_sec += WAIT_MS / 1000;
	pthread_mutex_lock(&d->lock);
	while (!d->called)
		assert_int_equal(pthread_cond_timedwait(&d->cond, &d->lock, &deadline), 0);
	pthread_mutex_unlock(&d->lock);
}

/* kubelet-sim with its pod resources server; its stdout says when it is ready. */
static pid_t start_kubelet_sim(const char *dir, const char *socket, int *ret_out)
{
	int out[2];
	assert_int_equal(pipe(out), 0);
	posix_spawn_file_actions_t fa;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, out[1], STDOUT_FILENO);
	posix_spawn_file_actions_addclose(&fa, out[0]);
	/* stdin a pipe: its end (EOF) ends kubelet-sim. */
	int in[2];
	assert_int_equal(pipe(in), 0);
	posix_spawn_file_actions_adddup2(&fa, in[0], STDIN_FILENO);
	posix_spawn_file_actions_addclose(&fa, in[1]);
	char *argv[] = { (char *)(uintptr_t)KUBELET_SIM_BIN, (char *)(uintptr_t) "--dir", (char *)(uintptr_t)dir,
			 (char *)(uintptr_t) "--pod-resources-socket", (char *)(uintptr_t)socket, NULL };
	pid_t pid;
	assert_int_equal(posix_spawn(&pid, KUBELET_SIM_BIN, &fa, NULL, argv, environ), 0);
	posix_spawn_file_actions_destroy(&fa);
	close(out[1]);
	close(in[0]);
	char buf[512] = "";
	size_t len = 0;
	int64_t deadline = now_ms() + WAIT_MS;
	while (!strstr(buf, "ready")) {
		struct pollfd p = { .fd = out[0], .events = POLLIN };
		assert_true(poll(&p, 1, (int)(deadline - now_ms())) > 0);
		ssize_t n = read(out[0], buf + len, sizeof(buf) - 1 - len);
		assert_true(n > 0);
		len += (size_t)n;
		buf[len] = '\0';
	}
	*ret_out = in[1]; /* closing it ends kubelet-sim */
	close(out[0]);
	return pid;
}

static void test_client(void **state)
{
	(void)state;
	char dir[32];
	assert_int_equal(tmpdir_make(dir, sizeof(dir), "podres-test"), 0);
	char socket[64], kubelet_dir[64];
	snprintf(socket, sizeof(socket), "%s/pr.sock", dir);
	snprintf(kubelet_dir, sizeof(kubelet_dir), "%s/kubelet", dir);
	const char *names[] = { "ascend.com/npu" };

	struct podres *c;
	assert_int_equal(podres_new(socket, &c), 0);
	struct done d = { .lock = PTHREAD_MUTEX_INITIALIZER, .cond = PTHREAD_COND_INITIALIZER };
	/* Nothing there yet. */
	assert_int_equal(podres_list_start(c, names, 1, 2000, on_done, &d), -ENOENT);

	int stdin_fd;
	pid_t pid = start_kubelet_sim(kubelet_dir, socket, &stdin_fd);
	assert_int_equal(podres_list_start(c, names, 1, 2000, on_done, &d), 0);
	wait_done(&d);
	assert_int_equal(d.r, 0);
	assert_non_null(d.map);
	assert_int_equal(d.map->count, 0); /* no plugin, nothing allocated */
	pod_map_unref(d.map);

	close(stdin_fd);
	int status;
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	podres_free(c);
	assert_int_equal(tmpdir_remove(dir), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_chip_of),
		cmocka_unit_test(test_decode),
		cmocka_unit_test(test_client),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
