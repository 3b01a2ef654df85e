/* SPDX-License-Identifier: Apache-2.0 */
/* Discovery as the kubelet sees it: --backend auto falls back to the device
 * files when DCMI cannot be loaded and switches to DCMI once it can; dcmi
 * waits for the library; devfs names devices after /dev/davinci<phy>. Nothing
 * is fatal: a missing, unloadable or untrusted library, no chips or a driver
 * loaded late all mean "zero devices for now", said once with the reason,
 * while the plugin stays registered and picks the chips up later without a
 * restart. Large nodes (16, 128 and 256 chips, the bound) register whole. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cmocka.h>

#include "harness/harness.h"

#define INTERVAL "200ms"
/* Several intervals: retries surely ran within it on an idle machine. */
#define RETRY_WINDOW_MS 800
/* The DCMI state for chips 0..n-1, with attrs[phy] instead of "health=0"
 * where given. */
static void write_state(struct node *node, unsigned n, const char *const attrs[])
{
	node_write_chip_state(node, &(struct chip_state){ .chips = n, .attrs = attrs });
}

static struct proc *start_plugin(struct node *node, const char *backend, const char *dcmi_lib)
{
	const char *flags[8] = { "--health-interval", INTERVAL, "--backend", backend };
	size_t n = 4;
	if (dcmi_lib) {
		flags[n++] = "--dcmi-lib";
		flags[n++] = dcmi_lib;
	}
	flags[n] = NULL;
	return node_start_plugin(node, flags);
}

/* Lets the plugin retry a failing DCMI load for a few intervals. This one
 * wait is timed: a retry that fails like the one before is silent by design
 * (the reason is said once) and does not even open the library, so there is
 * nothing to wait for. It asserts nothing by itself: what must not have
 * happened meanwhile is checked against a sentinel afterwards
 * (expect_next_devices, and the warning counted after it). */
static void let_retries_run(struct node *node)
{
	/* The plugin writes nothing on stdout: this only waits. */
	assert_false(proc_sees_within(node->plugin, "\n", RETRY_WINDOW_MS));
	assert_int_equal(proc_wait(node->plugin, 0), -1);
}

/* The sentinel for "no device update while retrying": the update the fix
 * brings must be the kubelet's first since the last one expected. */
static void expect_next_devices(struct node *node, unsigned capacity, unsigned allocatable, const char *unhealthy)
{
	char line[128];
	assert_non_null(proc_expect_next(node->kubelet, "devices ",
					 devices_line(line, sizeof(line), capacity, allocatable, unhealthy), WAIT_MS));
}

/* DCMI failing to load: the kubelet's first update has zero devices, and
 * the plugin says why; the warning is returned for the reason. */
static const char *expect_dcmi_unavailable(struct node *node)
{
	char line[128];
	assert_non_null(proc_expect(node->kubelet, devices_line(line, sizeof(line), 0, 0, "-"), WAIT_MS));
	return expect_event(node->plugin, "dcmi.unavailable");
}

/* Once the cause is gone: the chips, all Healthy, in the kubelet's next
 * update (expect_next_devices), DCMI in use, and its failure said once. */
static void expect_dcmi_taken_up(struct node *node, unsigned chips)
{
	expect_next_devices(node, chips, chips, "-");
	expect_event(node->plugin, "dcmi.loaded");
	assert_int_equal(count_events(node->plugin, "dcmi.unavailable"), 1);
}

/* auto without a loadable DCMI: the device files, one warning saying why,
 * then DCMI as soon as the library is installed (seen by a DCMI-only fault). */
static void test_auto_falls_back_to_devfs_then_switches(void **state)
{
	struct node *node = *state;
	node_init(node, &(struct node_options){ .chips = 8, .no_dcmi = true });
	const char *faulty[8] = { [3] = "health=2" };
	write_state(node, 8, faulty);
	struct proc *k = node_start_kubelet(node);
	struct proc *p = start_plugin(node, "auto", NULL);
	char line[128];

	char reason[512];
	const char *warning = expect_event(p, "dcmi.unavailable", "fallback", "devfs", "path", node->dev_dir);
	assert_non_null(strstr(event_field(warning, "reason", reason, sizeof(reason)), "libdcmi.so not found"));
	/* Health from the device files: every node is there. */
	assert_non_null(proc_expect(k, devices_line(line, sizeof(line), 8, 8, "-"), WAIT_MS));
	proc_send(k, "list");
	for (int i = 0; i < 8; i++) {
		char want[64];
		snprintf(want, sizeof(want), "device id=npu-%d health=Healthy", i);
		assert_non_null(proc_expect(k, want, WAIT_MS));
	}
	let_retries_run(node);
	assert_int_equal(count_events(p, "dcmi.loaded"), 0);

	node_install_dcmi(node, true);
	char path[512];
	const char *using = expect_event(p, "dcmi.loaded");
	assert_non_null(strstr(event_field(using, "path", path, sizeof(path)), node->dcmi_dir));
	/* Only DCMI knows chip 3 is faulty. */
	expect_next_devices(node, 8, 7, "npu-3");
	assert_int_equal(count_events(p, "dcmi.unavailable"), 1);
	node_fini(node);
}

/* dcmi without a library: zero devices, registered anyway, no fallback to
 * the device files that do exist; the chips appear when the library does. */
static void test_dcmi_backend_waits_for_library(void **state)
{
	struct node *node = *state;
	node_init(node, &(struct node_options){ .chips = 8, .no_dcmi = true });
	struct proc *k = node_start_kubelet(node);
	struct proc *p = start_plugin(node, "dcmi", NULL);

	assert_non_null(proc_expect(k, "register resource=ascend.com/npu", WAIT_MS));
	char reason[512];
	assert_non_null(
		strstr(event_field(expect_dcmi_unavailable(node), "reason", reason, sizeof(reason)), "libdcmi.so not found"));
	expect_event(p, "plugin.registered", "resource", "ascend.com/npu");
	let_retries_run(node);

	node_install_dcmi(node, true);
	expect_dcmi_taken_up(node, 8);
	node_fini(node);
}

/* --dcmi-lib naming a file that does not exist: zero devices, the reason
 * names the path, once; the file appearing later is loaded. */
static void test_dcmi_lib_missing_then_installed(void **state)
{
	struct node *node = *state;
	node_init(node, &(struct node_options){ .chips = 4, .no_dcmi = true });
	char lib[300];
	snprintf(lib, sizeof(lib), "%s/libdcmi.so", node->dcmi_dir);
	node_start_kubelet(node);
	start_plugin(node, "dcmi", lib);

	assert_non_null(strstr(expect_dcmi_unavailable(node), lib));
	let_retries_run(node);

	node_install_dcmi(node, true);
	expect_dcmi_taken_up(node, 4);
	node_fini(node);
}

/* --dcmi-lib naming a file that is not a library: refused with the loader's
 * reason, retried, and loaded once replaced by a real one. */
static void test_dcmi_lib_unloadable_then_replaced(void **state)
{
	struct node *node = *state;
	node_init(node, &(struct node_options){ .chips = 4, .no_dcmi = true });
	node_touch(node, "usr/local/Ascend/driver/lib64/driver/libdcmi.so");
	char lib[300];
	snprintf(lib, sizeof(lib), "%s/libdcmi.so", node->dcmi_dir);
	/* Trusted whatever the umask: only loading it can fail. */
	assert_int_equal(chmod(lib, 0644), 0);
	node_start_kubelet(node);
	start_plugin(node, "dcmi", lib);

	const char *warning = expect_dcmi_unavailable(node);
	assert_non_null(strstr(warning, "cannot load"));
	assert_non_null(strstr(warning, lib));
	let_retries_run(node);

	node_install_dcmi(node, true);
	expect_dcmi_taken_up(node, 4);
	node_fini(node);
}

/* dcmi_init failing (the driver is not loaded yet: the simulator's state
 * directory does not exist) means zero devices for now, said once with the
 * code; the load is retried and succeeds once the driver is there. */
static void test_dcmi_init_fails_until_driver_loads(void **state)
{
	struct node *node = *state;
	node_init(node, &(struct node_options){ .chips = 4 });
	char dir[sizeof(node->state_file)];
	int w = snprintf(dir, sizeof(dir), "%s/driver-later", node->root);
	assert_true(w > 0 && (size_t)w < sizeof(dir));
	w = snprintf(node->state_file, sizeof(node->state_file), "%s/dcmi-state", dir);
	assert_true(w > 0 && (size_t)w < sizeof(node->state_file));
	node_start_kubelet(node);
	struct proc *p = start_plugin(node, "dcmi", NULL);

	char reason[512];
	event_field(expect_dcmi_unavailable(node), "reason", reason, sizeof(reason));
	assert_non_null(strstr(reason, "dcmi_init"));
	assert_non_null(strstr(reason, "-8005"));
	/* Here each retry is seen: the simulator's dcmi_init says why it
	 * fails every time it is called. Two more retries, silent ones. */
	for (int i = 0; i < 2; i++) /* the simulator's own line, not the plugin's log */
		assert_non_null(proc_expect_err(p, "fake-dcmi: directory of ASCEND_FAKE_DCMI_STATE", WAIT_MS));
	assert_int_equal(count_events(p, "dcmi.unavailable"), 1);

	assert_int_equal(mkdir(dir, 0755), 0);
	write_state(node, 4, NULL);
	expect_dcmi_taken_up(node, 4);
	node_fini(node);
}

/* A library in a directory others may write to is refused, naming the
 * directory; once the directory is fixed it loads. */
static void test_untrusted_directory_refused(void **state)
{
	struct node *node = *state;
	node_init(node, &(struct node_options){ .chips = 4 });
	assert_int_equal(chmod(node->dcmi_dir, 0777), 0);
	struct proc *k = node_start_kubelet(node);
	struct proc *p = start_plugin(node, "dcmi", NULL);
	char line[128], want[400];

	/* Loading it would have shown 4 chips. */
	assert_non_null(proc_expect(k, devices_line(line, sizeof(line), 0, 0, "-"), WAIT_MS));
	snprintf(want, sizeof(want), "%s: directory is group or other writable", node->dcmi_dir);
	char reason[512];
	assert_non_null(strstr(event_field(expect_event(p, "dcmi.unavailable"), "reason", reason, sizeof(reason)), want));
	let_retries_run(node);
	assert_int_equal(count_events(p, "dcmi.loaded"), 0);

	assert_int_equal(chmod(node->dcmi_dir, 0755), 0);
	expect_next_devices(node, 4, 4, "-");
	expect_event(p, "dcmi.loaded");
	assert_int_equal(count_events(p, "dcmi.unavailable"), 1);
	node_fini(node);
}

/* The same refusal in auto mode falls back to the device files and says
 * which path was refused. */
static void test_untrusted_library_auto_falls_back(void **state)
{
	struct node *node = *state;
	node_init(node, &(struct node_options){ .chips = 2 });
	char lib[300], want[400];
	snprintf(lib, sizeof(lib), "%s/libdcmi.so", node->dcmi_dir);
	assert_int_equal(chmod(lib, 0666), 0);
	struct proc *k = node_start_kubelet(node);
	struct proc *p = start_plugin(node, "auto", NULL);
	char line[128];

	snprintf(want, sizeof(want), "%s: file is group or other writable", lib);
	char reason[512];
	const char *warning = expect_event(p, "dcmi.unavailable", "fallback", "devfs");
	assert_non_null(strstr(event_field(warning, "reason", reason, sizeof(reason)), want));
	assert_non_null(proc_expect(k, devices_line(line, sizeof(line), 2, 2, "-"), WAIT_MS));
	assert_int_equal(count_events(p, "dcmi.loaded"), 0);
	node_fini(node);
}

/* DCMI loaded but reporting no chips (driver still coming up): capacity 0,
 * then the chips are picked up by the same process. */
static void test_zero_chips_then_chips_appear(void **state)
{
	struct node *node = *state;
	node_init(node, &(struct node_options){ .chips = 8 });
	write_state(node, 0, NULL);
	struct proc *k = node_start_kubelet(node);
	struct proc *p = start_plugin(node, "auto", NULL);
	char line[128];

	expect_event(p, "dcmi.loaded");
	expect_event(p, "chips.none");
	assert_non_null(proc_expect(k, devices_line(line, sizeof(line), 0, 0, "-"), WAIT_MS));
	let_retries_run(node);

	write_state(node, 8, NULL);
	expect_next_devices(node, 8, 8, "-");
	expect_event(p, "chips.found", "count", "8");
	assert_int_equal(count_events(p, "chips.none"), 1);
	/* The same process throughout. */
	assert_int_equal(proc_wait(p, 0), -1);
	node_fini(node);
}

/* devfs: one device per /dev/davinci<N> named npu-<N>, other nodes ignored,
 * DCMI not consulted even though it is installed; health is the node being
 * present, and nodes appearing later are new devices. */
static void test_devfs_backend_names_devices_by_node(void **state)
{
	struct node *node = *state;
	/* DCMI would report no chips at all. */
	node_init(node, &(struct node_options){ .chips = 0 });
	node_touch(node, "dev/davinci0");
	node_touch(node, "dev/davinci3");
	node_touch(node, "dev/davinci12");
	node_touch(node, "dev/vdavinci1000"); /* a vNPU of chip 56, which is not here (see test_vnpu) */
	node_touch(node, "dev/davinci_manager_docker");
	struct proc *k = node_start_kubelet(node);
	struct proc *p = start_plugin(node, "devfs", NULL);
	char line[128];

	expect_event(p, "devfs.used", "path", node->dev_dir);
	assert_non_null(proc_expect(k, devices_line(line, sizeof(line), 3, 3, "-"), WAIT_MS));
	proc_send(k, "list");
	assert_non_null(proc_expect(k, "device id=npu-0 health=Healthy", WAIT_MS));
	assert_non_null(proc_expect(k, "device id=npu-3 health=Healthy", WAIT_MS));
	assert_non_null(proc_expect(k, "device id=npu-12 health=Healthy", WAIT_MS));

	node_remove(node, "dev/davinci3");
	assert_non_null(proc_expect(k, devices_line(line, sizeof(line), 3, 2, "npu-3"), WAIT_MS));
	node_touch(node, "dev/davinci3");
	assert_non_null(proc_expect(k, devices_line(line, sizeof(line), 3, 3, "-"), WAIT_MS));
	node_touch(node, "dev/davinci5");
	assert_non_null(proc_expect(k, devices_line(line, sizeof(line), 4, 4, "-"), WAIT_MS));
	/* No line at all speaks of DCMI, which no list of events can say. */
	assert_int_equal(proc_count_err(p, "DCMI"), 0);
	node_fini(node);
}

/* A node of n chips registers with every chip Healthy and listed. */
static void check_large_node(struct node *node, unsigned n)
{
	node_init(node, &(struct node_options){ .chips = n });
	write_state(node, n, NULL);
	struct proc *k = node_start_kubelet(node);
	struct proc *p = start_plugin(node, "auto", NULL);
	char line[128], want[64];

	assert_non_null(proc_expect(k, "register resource=ascend.com/npu", WAIT_MS));
	assert_non_null(proc_expect(k, devices_line(line, sizeof(line), n, n, "-"), WAIT_MS));
	snprintf(want, sizeof(want), "%u", n);
	expect_event(p, "chips.found", "count", want);
	proc_send(k, "list");
	assert_non_null(proc_expect(k, "device id=npu-0 health=Healthy", WAIT_MS));
	snprintf(want, sizeof(want), "device id=npu-%u health=Healthy", n - 1);
	assert_non_null(proc_expect(k, want, WAIT_MS));
	node_fini(node);
}

static void test_16_chip_node(void **state)
{
	check_large_node(*state, 16);
}

static void test_128_chip_node(void **state)
{
	check_large_node(*state, 128);
}

static void test_256_chip_node(void **state)
{
	check_large_node(*state, 256);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_auto_falls_back_to_devfs_then_switches, node_setup, node_teardown),
		cmocka_unit_test_setup_teardown(test_dcmi_backend_waits_for_library, node_setup, node_teardown),
		cmocka_unit_test_setup_teardown(test_dcmi_lib_missing_then_installed, node_setup, node_teardown),
		cmocka_unit_test_setup_teardown(test_dcmi_lib_unloadable_then_replaced, node_setup, node_teardown),
		cmocka_unit_test_setup_teardown(test_dcmi_init_fails_until_driver_loads, node_setup, node_teardown),
		cmocka_unit_test_setup_teardown(test_untrusted_directory_refused, node_setup, node_teardown),
		cmocka_unit_test_setup_teardown(test_untrusted_library_auto_falls_back, node_setup, node_teardown),
		cmocka_unit_test_setup_teardown(test_zero_chips_then_chips_appear, node_setup, node_teardown),
		cmocka_unit_test_setup_teardown(test_devfs_backend_names_devices_by_node, node_setup, node_teardown),
		cmocka_unit_test_setup_teardown(test_16_chip_node, node_setup, node_teardown),
		cmocka_unit_test_setup_teardown(test_128_chip_node, node_setup, node_teardown),
		cmocka_unit_test_setup_teardown(test_256_chip_node, node_setup, node_teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
