/* SPDX-License-Identifier: Apache-2.0 */
/* The cdi device-list strategy with the real daemon, the DCMI simulator and
 * kubelet-sim: the CDI spec appears in --cdi-dir with every chip, is
 * rewritten when a chip goes or comes back (and not when health changes),
 * Allocate answers with CDI names, the cdi.k8s.io annotation and
 * ASCEND_VISIBLE_DEVICES only, SIGTERM removes the spec, and a second plugin
 * that cannot take the socket leaves the live one's spec alone. */
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>
#include <json-c/json.h>

#include "harness/harness.h"

#define SPEC_NAME "ascend.com-npu.json"

struct spec_dir {
	char dir[160];
	char path[200];
};

static void spec_dir_init(struct spec_dir *s, const struct node *node)
{
	snprintf(s->dir, sizeof(s->dir), "%s/cdi", node->root);
	snprintf(s->path, sizeof(s->path), "%s/" SPEC_NAME, s->dir);
}

/* The file names in the spec directory, sorted, comma separated. */
static const char *listing(const struct spec_dir *s, char *buf, size_t size)
{
	assert_int_equal(node_tree_list(s->dir, buf, size), 0);
	return buf;
}

/* The spec's device names, comma separated, after checking what every
 * spec of this node holds: version, kind, one /dev/davinci<name> node per
 * device, the shared nodes and the read-only driver mounts. */
static const char *spec_devices(const struct spec_dir *s, char *buf, size_t size)
{
	json_object *spec = json_object_from_file(s->path);
	if (!spec)
		fail_msg("%s is not readable JSON", s->path);
	json_object *v, *devices, *edits, *nodes, *mounts;
	assert_true(json_object_object_get_ex(spec, "cdiVersion", &v));
	assert_string_equal(json_object_get_string(v), "0.5.0");
	assert_true(json_object_object_get_ex(spec, "kind", &v));
	assert_string_equal(json_object_get_string(v), "ascend.com/npu");

	assert_true(json_object_object_get_ex(spec, "devices", &devices));
	buf[0] = '\0';
	for (size_t i = 0; i < json_object_array_length(devices); i++) {
		json_object *device = json_object_array_get_idx(devices, i), *name, *node, *path;
		assert_true(json_object_object_get_ex(device, "name", &name));
		assert_true(json_object_object_get_ex(device, "containerEdits", &edits));
		assert_true(json_object_object_get_ex(edits, "deviceNodes", &nodes));
		assert_int_equal(json_object_array_length(nodes), 1);
		node = json_object_array_get_idx(nodes, 0);
		assert_true(json_object_object_get_ex(node, "path", &path));
		char want[32];
		snprintf(want, sizeof(want), "/dev/davinci%s", json_object_get_string(name));
		assert_string_equal(json_object_get_string(path), want);
		size_t len = strlen(buf);
		snprintf(buf + len, size - len, "%s%s", len ? "," : "", json_object_get_string(name));
	}

	assert_true(json_object_object_get_ex(spec, "containerEdits", &edits));
	assert_true(json_object_object_get_ex(edits, "deviceNodes", &nodes));
	char shared[128] = "";
	for (size_t i = 0; i < json_object_array_length(nodes); i++) {
		json_object *path;
		assert_true(json_object_object_get_ex(json_object_array_get_idx(nodes, i), "path", &path));
		size_t len = strlen(shared);
		snprintf(shared + len, sizeof(shared) - len, "%s%s", len ? "," : "", json_object_get_string(path));
	}
	assert_string_equal(shared, "/dev/davinci_manager,/dev/devmm_svm,/dev/hisi_hdc");
	/* The simulated node's driver files: lib64, version.info, npu-smi, the install info. */
	assert_true(json_object_object_get_ex(edits, "mounts", &mounts));
	assert_int_equal(json_object_array_length(mounts), 4);
	json_object *host, *options;
	assert_true(json_object_object_get_ex(json_object_array_get_idx(mounts, 0), "hostPath", &host));
	assert_string_equal(json_object_get_string(host), "/usr/local/Ascend/driver/lib64");
	assert_true(json_object_object_get_ex(json_object_array_get_idx(mounts, 0), "options", &options));
	assert_string_equal(json_object_get_string(json_object_array_get_idx(options, 0)), "ro");
	json_object_put(spec);
	return buf;
}

/* kubelet-sim's answer to one allocate command, `allocate ok` to `allocate end`. */
/* The lines every answer carries besides what a test here looks at: the
 * live status file's and the device metadata's mounts and variables, and
 * ASCEND_RT_VISIBLE_DEVICES (test_allocate checks them). */
static bool beside_the_point(const char *line)
{
	return strstr(line, " container=/var/run/ascend/npu-status ") ||
	       strncmp(line, "allocate env name=ASCEND_NPU_STATUS ", 36) == 0 ||
	       strstr(line, " container=/var/run/ascend/npu-metadata.json ") ||
	       strncmp(line, "allocate env name=ASCEND_NPU_METADATA ", 38) == 0 ||
	       strncmp(line, "allocate env name=ASCEND_RT_VISIBLE_DEVICES ", 44) == 0;
}

static void sim_allocate(struct proc *k, const char *command, char lines[][512], size_t max, size_t *ret_n)
{
	size_t n = 0;
	proc_send(k, command);
	for (;;) {
		const char *line = proc_expect(k, "allocate ", WAIT_MS);
		assert_non_null(line);
		if (strncmp(line, "allocate ", 9) != 0 || beside_the_point(line))
			continue;
		if (strncmp(line, "allocate error", 14) == 0)
			fail_msg("'%s' answered '%s'", command, line);
		assert_true(n < max);
		snprintf(lines[n++], 512, "%s", line);
		if (strcmp(line, "allocate end") == 0)
			break;
	}
	*ret_n = n;
}

/* The next write of the spec is of kind ascend.com/npu with count devices,
 * numbered as devices ("0,1"). */
static void expect_written(struct node *node, const char *count, const char *devices)
{
	char kind[64], got_count[16], got_devices[256];
	const char *line = expect_event(node->plugin, "cdi.written");
	event_field(line, "kind", kind, sizeof(kind));
	event_field(line, "count", got_count, sizeof(got_count));
	event_field(line, "devices", got_devices, sizeof(got_devices));
	if (strcmp(kind, "ascend.com/npu") != 0 || strcmp(got_count, count) != 0 || strcmp(got_devices, devices) != 0)
		fail_msg("the next write was '%s', not one of kind ascend.com/npu, %s devices %s", line, count, devices);
}

static void test_spec_follows_the_chips(void **state)
{
	struct node *node = *state;
	struct spec_dir s;
	char buf[256];
	node_init(node, &(struct node_options){ .chips = 4 });
	spec_dir_init(&s, node);

	/* The directory does not exist yet: the plugin makes it. */
	const char *flags[] = { "--device-list-strategy=cdi", "--cdi-dir", s.dir, "--health-interval=200ms", NULL };
	node_start_registered(node, flags);
	expect_written(node, "4", "0,1,2,3");
	assert_string_equal(spec_devices(&s, buf, sizeof(buf)), "0,1,2,3");
	assert_string_equal(listing(&s, buf, sizeof(buf)), SPEC_NAME); /* no temp file */
	struct stat st;
	assert_int_equal(stat(s.path, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0644);

	/* Allocate: CDI names, the annotation and the env; no DeviceSpecs, no mounts. */
	char lines[16][512];
	size_t n;
	sim_allocate(node->kubelet, "allocate-ids npu-3,npu-1", lines, 16, &n);
	const char *want[] = {
		"allocate ok ids=npu-3,npu-1",
		"allocate env name=ASCEND_VISIBLE_DEVICES value=1,3",
		"allocate annotation name=cdi.k8s.io/ascend.com_npu value=ascend.com/npu=1,ascend.com/npu=3",
		"allocate cdi name=ascend.com/npu=1",
		"allocate cdi name=ascend.com/npu=3",
		"allocate end",
	};
	for (size_t i = 0; i < n; i++)
		fprintf(stderr, "    | %s\n", lines[i]);
	assert_int_equal(n, sizeof(want) / sizeof(want[0]));
	for (size_t i = 0; i < n; i++)
		assert_string_equal(lines[i], want[i]);

	/* Chip 3 goes from DCMI's list: the spec loses it. */
	node_write_chips(node, 3, NULL);
	expect_written(node, "3", "0,1,2");
	assert_string_equal(spec_devices(&s, buf, sizeof(buf)), "0,1,2");
	assert_string_equal(listing(&s, buf, sizeof(buf)), SPEC_NAME);

	/* Health is not in the spec: chip 1 failing rewrites nothing. The
	 * sentinel: chip 3 coming back must be the next write. */
	node_write_health(node, 3, 1, 3);
	char line[128];
	assert_non_null(proc_expect(node->kubelet, devices_line(line, sizeof(line), 3, 2, "npu-1"), WAIT_MS));
	const char *const attrs[4] = { NULL, "health=3" };
	node_write_chip_state(node, &(struct chip_state){ .chips = 4, .attrs = attrs });
	expect_written(node, "4", "0,1,2,3");
	assert_string_equal(spec_devices(&s, buf, sizeof(buf)), "0,1,2,3");

	/* A clean stop removes the spec. */
	proc_kill(node->plugin, SIGTERM);
	assert_int_equal(proc_wait(node->plugin, EXIT_WAIT_MS), 0);
	assert_int_equal(count_events(node->plugin, "cdi.removed"), 1);
	assert_string_equal(listing(&s, buf, sizeof(buf)), "");
	node_fini(node);
}

/* A second plugin on the same node cannot take the socket and exits; the
 * spec of the one that serves must stay. */
static void test_second_plugin_leaves_the_spec(void **state)
{
	struct node *node = *state;
	struct spec_dir s;
	char buf[256], before[256];
	node_init(node, &(struct node_options){ .chips = 2 });
	spec_dir_init(&s, node);
	const char *flags[] = { "--device-list-strategy=native,cdi", "--cdi-dir", s.dir, NULL };
	node_start_registered(node, flags);
	expect_written(node, "2", "0,1");
	struct stat st_before;
	assert_int_equal(stat(s.path, &st_before), 0);
	snprintf(before, sizeof(before), "%s", spec_devices(&s, buf, sizeof(buf)));

	char state_env[200];
	snprintf(state_env, sizeof(state_env), "ASCEND_FAKE_DCMI_STATE=%s", node->state_file);
	const char *env[] = { state_env, NULL };
	const char *argv[] = { PLUGIN_BIN, "--socket-dir", node->socket_dir, "--dev-dir", node->dev_dir, "--host-root",
			       node->root, "--device-list-strategy=cdi", "--cdi-dir", s.dir, "--log-format", "json", NULL };
	struct proc *second = proc_start(argv, env);
	expect_event(second, "start.failed");
	assert_int_equal(proc_wait(second, EXIT_WAIT_MS), 1);
	assert_int_equal(count_events(second, "cdi.written"), 0);
	assert_int_equal(count_events(second, "cdi.removed"), 0);
	proc_free(second);

	struct stat st_after;
	assert_int_equal(stat(s.path, &st_after), 0);
	assert_true(st_after.st_ino == st_before.st_ino);
	assert_string_equal(spec_devices(&s, buf, sizeof(buf)), before);
	assert_string_equal(listing(&s, buf, sizeof(buf)), SPEC_NAME);
	node_fini(node);
	/* node_fini stopped the first plugin with SIGTERM: the spec went with it,
	 * and so did the node's tree. */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_spec_follows_the_chips, node_setup, node_teardown),
		cmocka_unit_test_setup_teardown(test_second_plugin_leaves_the_spec, node_setup, node_teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
