/* SPDX-License-Identifier: Apache-2.0 */
/* Time-slicing and the chips' device-share mode (daemon/device_share.h),
 * straight from snapshots: a time-sliced chip whose mode is off is counted
 * served whole and said once, again once when its mode is on again; a chip
 * whose mode is on or unknown, or that no time-sliced resource lists, is
 * not; a library without the call is said once; without a library or
 * without enableDeviceShare no chip is switched. The log lines go to
 * stderr (direct mode, JSON), which the test points at a pipe. */
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "base/log.h"
#include "daemon/device_share.h"

static int pipe_fds[2];
static int saved_stderr;

static int setup(void **state)
{
	(void)state;
	assert_int_equal(pipe2(pipe_fds, O_CLOEXEC), 0);
	/* The reading end only: the log writes to a blocking stderr. */
	assert_int_equal(fcntl(pipe_fds[0], F_SETFL, O_NONBLOCK), 0);
	saved_stderr = dup(STDERR_FILENO);
	assert_true(saved_stderr >= 0);
	assert_true(dup2(pipe_fds[1], STDERR_FILENO) >= 0);
	log_set_format(LOG_FORMAT_JSON);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	dup2(saved_stderr, STDERR_FILENO);
	close(saved_stderr);
	close(pipe_fds[0]);
	close(pipe_fds[1]);
	log_set_format(LOG_FORMAT_TEXT);
	return 0;
}

/* What was logged since the last call (lines are in the pipe when the
 * call that logs them returns). */
static const char *logged(void)
{
	static char buf[1 << 16];
	ssize_t n = read(pipe_fds[0], buf, sizeof(buf) - 1);
	buf[n > 0 ? n : 0] = '\0';
	return buf;
}

/* How many lines of text carry the event, with device when not NULL. */
static unsigned count(const char *text, const char *event, const char *device)
{
	char want[96], dev[64];
	snprintf(want, sizeof(want), "\"event\":\"%s\"", event);
	snprintf(dev, sizeof(dev), "\"device\":\"%s\"", device ? device : "");
	unsigned n = 0;
	for (const char *p = text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
		const char *end = strchr(p, '\n');
		size_t len = end ? (size_t)(end - p) : strlen(p);
		char line[LOG_LINE_MAX + 1];
		snprintf(line, sizeof(line), "%.*s", (int)len, p);
		n += strstr(line, want) && (!device || strstr(line, dev));
	}
	return n;
}

/* What device_share_report reads, and what it keeps. */
struct fixture {
	struct npu_snapshot *snap; /* npu-0..npu-2, modes on, off and unknown */
	struct resource_set set;   /* the default resource, time-sliced by replicas */
	struct inventory_status status;
	struct device_share share;
};

/* replicas: 1 for a resource not shared. */
static void fixture_init(struct fixture *f, uint32_t replicas)
{
	static const enum npu_share modes[] = { NPU_SHARE_ON, NPU_SHARE_OFF, NPU_SHARE_UNKNOWN };
	*f = (struct fixture){ .snap = npu_snapshot_new(3) };
	assert_non_null(f->snap);
	for (size_t i = 0; i < 3; i++) {
		struct npu_device *d = &f->snap->devices[i];
		snprintf(d->id, sizeof(d->id), "npu-%zu", i);
		d->kind = NPU_DEVICE_CHIP;
		d->chip.phy_id = (uint32_t)i;
		d->chip.card_id = (int)i;
		d->chip.family = NPU_FAMILY_910B;
		d->healthy = true;
		d->share = modes[i];
		f->snap->healthy++;
	}
	const struct resource_plan_slice slice = { .name = "ascend.com/npu", .replicas = replicas, .line = 1 };
	const struct resource_plan plan = { .default_name = "ascend.com/npu",
					    .socket_dir = "/tmp",
					    .instance = "",
					    .source = "",
					    .sliced = replicas > 1 ? &slice : NULL,
					    .n_sliced = replicas > 1 };
	bool in_file;
	char why[256];
	assert_int_equal(resource_set_build(&plan, &f->set, &in_file, why, sizeof(why)), 0);
}

/* device_share_report of the fixture, with or without enableDeviceShare. */
static size_t report(struct fixture *f, bool enable)
{
	return device_share_report(&f->share, f->snap, &f->set, &f->status, enable);
}

static void test_off_is_served_whole_and_said_once(void **state)
{
	(void)state;
	struct fixture f;
	fixture_init(&f, 2);
	assert_int_equal(report(&f, false), 1);
	const char *text = logged();
	assert_int_equal(count(text, "device-share.off", "npu-1"), 1);
	assert_int_equal(count(text, "device-share.off", NULL), 1);
	/* Without enableDeviceShare the line says how to switch it on. */
	assert_non_null(strstr(text, "npu-smi set -t device-share -i 1 -c 0 -d 1"));
	assert_non_null(strstr(text, "sharing.timeSlicing.enableDeviceShare: true"));

	/* Still off at the next poll: counted, not said again. */
	assert_int_equal(report(&f, false), 1);
	assert_string_equal(logged(), "");

	/* Switched on (npu-smi): shared, said once. */
	f.snap->devices[1].share = NPU_SHARE_ON;
	assert_int_equal(report(&f, false), 0);
	text = logged();
	assert_int_equal(count(text, "device-share.on", "npu-1"), 1);
	assert_int_equal(count(text, "device-share.off", NULL), 0);
	assert_int_equal(report(&f, false), 0);
	assert_string_equal(logged(), "");
	npu_snapshot_unref(f.snap);
}

static void test_not_time_sliced_is_never_whole(void **state)
{
	(void)state;
	struct fixture f;
	fixture_init(&f, 1);
	assert_int_equal(report(&f, true), 0);
	assert_string_equal(logged(), "");
	npu_snapshot_unref(f.snap);
}

static void test_unknown_mode_said_once(void **state)
{
	(void)state;
	struct fixture f;
	fixture_init(&f, 2);
	f.snap->devices[1].share = NPU_SHARE_UNKNOWN;
	f.status.share_unsupported = true;
	assert_int_equal(report(&f, true), 0);
	assert_int_equal(count(logged(), "device-share.unknown", NULL), 1);
	assert_int_equal(report(&f, true), 0);
	assert_string_equal(logged(), "");
	npu_snapshot_unref(f.snap);
}

/* Without a library nothing is switched or remembered as tried; with
 * enableDeviceShare the off line names no knob to set. */
static void test_enable_without_library(void **state)
{
	(void)state;
	struct fixture f;
	fixture_init(&f, 2);
	assert_false(device_share_enable(&f.share, NULL, f.snap, &f.set, true));
	assert_false(device_share_enable(&f.share, NULL, f.snap, &f.set, false));
	assert_int_equal(f.share.n_tried, 0);
	assert_string_equal(logged(), "");
	assert_int_equal(report(&f, true), 1);
	const char *text = logged();
	assert_int_equal(count(text, "device-share.off", "npu-1"), 1);
	assert_null(strstr(text, "enableDeviceShare"));
	npu_snapshot_unref(f.snap);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_off_is_served_whole_and_said_once),
		cmocka_unit_test(test_not_time_sliced_is_never_whole),
		cmocka_unit_test(test_unknown_mode_said_once),
		cmocka_unit_test(test_enable_without_library),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
