/* SPDX-License-Identifier: Apache-2.0 */
/* Tests of the DCMI simulator as the plugin sees it: the built libdcmi.so
 * (FAKE_DCMI_LIB) is loaded with dlopen and driven through the DCMI ABI
 * against state files in a private temporary directory. Covers the calls
 * before dcmi_init, enumeration, PCIe addresses, absent chips, error codes, fault and
 * recovery events after atomic renames and in-place writes, subscription
 * scopes, filters and `subscribe off`, and removal of the state file;
 * vNPUs carved and destroyed at run time (templates, room, busy chips, ids,
 * the state file's vnpu lines and the device nodes, failing and hanging
 * calls); and, with a second copy of the library, the default state file
 * next to it.
 *
 * The library is process-global, so the tests share one instance and run in
 * order; failing dcmi_init calls are checked in a forked child. Waits for
 * events use a condition variable with a deadline; the absence of an event
 * is shown with a "barrier" chip whose own event must arrive, since the
 * simulator delivers events in order. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "base/macro.h"
#include "npu/dcmi_abi.h"
#include "support/tmpdir.h"

#define EVENT_WAIT_MS 2000
#define MAX_EVENTS 64
/* The chip whose events mark "everything before has been delivered". */
#define BARRIER_CHIP "chip phy=7 card=7 logic=7 health=%u\n"
#define BARRIER_LOGIC 7

static struct {
#define DCMI_POINTER(name, required, ret, params) ret(*name) params;
	DCMI_SYMBOLS(DCMI_POINTER)
#undef DCMI_POINTER
} dcmi;

static void *lib;
/* Half of PATH_MAX, so every path built from it provably fits. */
static char dir[PATH_MAX / 2];
static char state_path[PATH_MAX];
static char dev_dir[PATH_MAX / 2 + 8];
static unsigned barrier_health;
static int64_t last_rename_us; /* when write_state last called rename() */

struct recorded {
	char handler;
	struct dcmi_event event;
	pthread_t thread;
	int64_t at_us;
	int reentry_rc;
	unsigned reentry_phy;
};

static pthread_mutex_t events_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t events_cond;
static struct recorded events[MAX_EVENTS];
static size_t event_count;

static int64_t mono_us(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

static void record(char handler, struct dcmi_event *event)
{
	/* Calling back into DCMI from the handler must work: the simulator
	 * calls handlers without holding its lock. */
	unsigned phy = 0;
	int rc = dcmi.dcmi_get_device_phyid_from_logicid(event->event_t.dms_event.deviceid, &phy);

	pthread_mutex_lock(&events_lock);
	if (event_count < MAX_EVENTS) {
		events[event_count] = (struct recorded){
			.handler = handler,
			.event = *event,
			.thread = pthread_self(),
			.at_us = mono_us(),
			.reentry_rc = rc,
			.reentry_phy = phy,
		};
	}
	event_count++;
	pthread_cond_broadcast(&events_cond);
	pthread_mutex_unlock(&events_lock);
}

static void on_event_a(struct dcmi_event *event)
{
	record('a', event);
}

static void on_event_b(struct dcmi_event *event)
{
	record('b', event);
}

static size_t events_seen(void)
{
	pthread_mutex_lock(&events_lock);
	size_t n = event_count;
	pthread_mutex_unlock(&events_lock);
	return n;
}

static struct timespec deadline_after(int ms)
{
	struct timespec deadline;
	clock_gettime(CLOCK_MONOTONIC, &deadline);
	deadline.tv_sec += ms / 1000;
	deadline.tv_nsec += (ms % 1000) * 1000000L;
	if (deadline.tv_nsec >= 1000000000L) {
		deadline.tv_sec++;
		deadline.tv_nsec -= 1000000000L;
	}
	return deadline;
}

/* Waits until at least n events were recorded; false at the deadline. */
static bool wait_events(size_t n)
{
	struct timespec deadline = deadline_after(EVENT_WAIT_MS);
	pthread_mutex_lock(&events_lock);
	int rc = 0;
	while (event_count < n && rc == 0)
		rc = pthread_cond_timedwait(&events_cond, &events_lock, &deadline);
	bool ok = event_count >= n;
	pthread_mutex_unlock(&events_lock);
	return ok;
}

/* Waits until an event for the chip with this logic id is recorded at or
 * after index since; false at the deadline. */
static bool wait_event_for(size_t since, unsigned logic)
{
	struct timespec deadline = deadline_after(EVENT_WAIT_MS);
	pthread_mutex_lock(&events_lock);
	bool found = false;
	int rc = 0;
	for (;;) {
		for (size_t i = since; i < event_count && i < MAX_EVENTS && !found; i++)
			found = events[i].event.event_t.dms_event.deviceid == logic;
		if (found || rc != 0)
			break;
		rc = pthread_cond_timedwait(&events_cond, &events_lock, &deadline);
	}
	pthread_mutex_unlock(&events_lock);
	return found;
}

static const struct dcmi_dms_fault_event *event_at(size_t i)
{
	assert_true(i < MAX_EVENTS);
	return &events[i].event.event_t.dms_event;
}

/* Replaces the state file atomically, as the documentation tells test writers to. */
static void write_state(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static void write_state(const char *fmt, ...)
{
	char text[4096];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	assert_true(n >= 0 && (size_t)n < sizeof(text));

	char tmp[PATH_MAX];
	snprintf(tmp, sizeof(tmp), "%s/.state.tmp", dir);
	FILE *f = fopen(tmp, "we");
	assert_non_null(f);
	assert_int_equal(fwrite(text, 1, (size_t)n, f), (size_t)n);
	assert_int_equal(fclose(f), 0);
	last_rename_us = mono_us();
	assert_int_equal(rename(tmp, state_path), 0);
}

/* Makes the simulator read a just-renamed state file now: any DCMI call
 * does. Needed between quick successive writes whose intermediate states
 * matter, which the watcher alone might read only once. */
static void sync_state(void)
{
	int n, list[64];
	assert_int_equal(dcmi.dcmi_get_card_list(&n, list, 64), 0);
}

/* The state used by the event tests: chip 1 changes, the barrier flips. */
static void write_event_state(const char *subscribe, const char *chip1_health, const char *chip1_extra)
{
	write_state("subscribe %s\n"
		    "chip phy=0 card=0\n"
		    "chip phy=1 card=1 logic=5 health=%s %s\n" BARRIER_CHIP,
		    subscribe, chip1_health, chip1_extra, barrier_health);
}

/* Flips the barrier chip in the state last written by write_event_state and
 * waits for its event: afterwards every earlier event has been delivered. */
static void pass_barrier(const char *subscribe, const char *chip1_health, const char *chip1_extra)
{
	size_t before = events_seen();
	barrier_health = barrier_health == 0 ? 2 : 0;
	write_event_state(subscribe, chip1_health, chip1_extra);
	assert_true(wait_event_for(before, BARRIER_LOGIC));
}

/* Asserts that events since `since` are exactly the barrier's (one per
 * handler that hears it). */
static void assert_only_barrier_since(size_t since, size_t expected)
{
	pthread_mutex_lock(&events_lock);
	size_t n = event_count;
	pthread_mutex_unlock(&events_lock);
	for (size_t i = since; i < n && i < MAX_EVENTS; i++) {
		if (event_at(i)->deviceid != BARRIER_LOGIC)
			print_error("unexpected event: %s\n", event_at(i)->event_name);
		assert_int_equal(event_at(i)->deviceid, BARRIER_LOGIC);
	}
	assert_int_equal(n - since, expected);
}

static struct dcmi_event_filter no_filter(void)
{
	struct dcmi_event_filter filter;
	memset(&filter, 0, sizeof(filter));
	return filter;
}

/* ---- setup ---- */

static int group_setup(void **unused)
{
	(void)unused;
	pthread_condattr_t attr;
	pthread_condattr_init(&attr);
	pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
	pthread_cond_init(&events_cond, &attr);
	pthread_condattr_destroy(&attr);

	if (tmpdir_make(dir, sizeof(dir), "fake-dcmi-test") < 0)
		return -1;
	snprintf(state_path, sizeof(state_path), "%s/state.txt", dir);
	setenv("ASCEND_FAKE_DCMI_STATE", state_path, 1);
	snprintf(dev_dir, sizeof(dev_dir), "%s/dev", dir);
	if (mkdir(dev_dir, 0755) < 0)
		return -1;
	setenv("ASCEND_FAKE_DCMI_DEV_DIR", dev_dir, 1);

	lib = dlopen(FAKE_DCMI_LIB, RTLD_NOW | RTLD_LOCAL);
	if (!lib) {
		print_error("dlopen %s: %s\n", FAKE_DCMI_LIB, dlerror());
		return -1;
	}
#define DCMI_RESOLVE(name, required, ret, params)                                        \
	*(void **)(&dcmi.name) = dlsym(lib, #name);                                      \
	if (!dcmi.name) {                                                                \
		print_error("%s lacks %s\n", FAKE_DCMI_LIB, #name);                      \
		return -1;                                                               \
	}
	DCMI_SYMBOLS(DCMI_RESOLVE)
#undef DCMI_RESOLVE
	return 0;
}

static int group_teardown(void **unused)
{
	(void)unused;
	/* dlclose runs the library destructor, which stops the watcher thread:
	 * the sanitizer build then checks that nothing leaked. */
	if (lib)
		dlclose(lib);
	return tmpdir_remove(dir) == 0 ? 0 : -1;
}

static int init_dcmi(void **unused)
{
	(void)unused;
	assert_int_equal(dcmi.dcmi_init(), 0);
	return 0;
}

/* ---- tests ---- */

/* Runs in a forked child, before anything initialised the simulator: a
 * failed dcmi_init leaves it uninitialised and can be retried. Returns the
 * number of the failed check, 0 when all pass. */
static int check_init_failures(void)
{
	int n, list[64];
	unsetenv("ASCEND_FAKE_DCMI_STATE");
	if (dcmi.dcmi_init() != DCMI_ERR_INNER)
		return 1;
	setenv("ASCEND_FAKE_DCMI_STATE", "/nonexistent-fake-dcmi-dir/state", 1);
	if (dcmi.dcmi_init() != DCMI_ERR_INNER)
		return 2;
	if (dcmi.dcmi_get_card_list(&n, list, 64) != DCMI_ERR_INNER)
		return 3;
	setenv("ASCEND_FAKE_DCMI_STATE", state_path, 1);
	if (dcmi.dcmi_init() != 0)
		return 4;
	if (dcmi.dcmi_get_card_list(&n, list, 64) != 0 || n != 1)
		return 5;
	return 0;
}

static void test_init_failures_in_a_child(void **unused)
{
	(void)unused;
	write_state("chip phy=0\n");
	fflush(NULL);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		/* Silence the expected complaints; _exit skips the destructors,
		 * which belong to the parent's copy of the library. */
		int null_fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
		if (null_fd >= 0)
			dup2(null_fd, STDERR_FILENO);
		int failed = check_init_failures();
		/* Stops the child's watcher thread, so valgrind's leak check of
		 * the child stays clean. */
		dlclose(lib);
		_exit(failed);
	}
	int status = 0;
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
}

static void test_calls_before_init_fail(void **unused)
{
	(void)unused;
	write_state("chip phy=0\n");
	int n = 0, list[64];
	unsigned u = 0;
	char buf[64];
	struct dcmi_chip_info chip;
	struct dcmi_board_info board;
	struct dcmi_hbm_info hbm;
	struct dcmi_pcie_info_all pcie;
	assert_int_equal(dcmi.dcmi_get_card_list(&n, list, 64), DCMI_ERR_INNER);
	assert_int_equal(dcmi.dcmi_get_device_num_in_card(0, &n), DCMI_ERR_INNER);
	assert_int_equal(dcmi.dcmi_get_device_logic_id(&n, 0, 0), DCMI_ERR_INNER);
	assert_int_equal(dcmi.dcmi_get_device_phyid_from_logicid(0, &u), DCMI_ERR_INNER);
	assert_int_equal(dcmi.dcmi_get_device_chip_info(0, 0, &chip), DCMI_ERR_INNER);
	assert_int_equal(dcmi.dcmi_get_device_health(0, 0, &u), DCMI_ERR_INNER);
	assert_int_equal(dcmi.dcmi_get_device_board_info(0, 0, &board), DCMI_ERR_INNER);
	assert_int_equal(dcmi.dcmi_get_dcmi_version(buf, sizeof(buf)), DCMI_ERR_INNER);
	assert_int_equal(dcmi.dcmi_get_device_errorcode_v2(0, 0, &n, &u, 1), DCMI_ERR_INNER);
	assert_int_equal(dcmi.dcmi_subscribe_fault_event(-1, -1, no_filter(), on_event_a), DCMI_ERR_INNER);
	assert_int_equal(dcmi.dcmi_get_device_hbm_info(0, 0, &hbm), DCMI_ERR_INNER);
	assert_int_equal(dcmi.dcmi_get_device_pcie_info_v2(0, 0, &pcie), DCMI_ERR_INNER);

	assert_int_equal(dcmi.dcmi_init(), 0);
	assert_int_equal(dcmi.dcmi_init(), 0); /* idempotent */
	assert_int_equal(dcmi.dcmi_get_card_list(&n, list, 64), 0);
	assert_int_equal(n, 1);
}

static void test_enumeration(void **unused)
{
	(void)unused;
	write_state("driver 24.1.rc1\n"
		    "chip phy=4 card=2 device=0 logic=0 name=910B4 aicore=20 hbm_mb=32768 board=0xb0\n"
		    "chip phy=5 card=2 device=1 logic=1\n"
		    "chip phy=0 card=0 logic=2 name=310P3 aicore=8\n");

	int n = -1, list[64];
	assert_int_equal(dcmi.dcmi_get_card_list(&n, list, 64), 0);
	assert_int_equal(n, 2);
	assert_int_equal(list[0], 0);
	assert_int_equal(list[1], 2);
	assert_int_equal(dcmi.dcmi_get_card_list(&n, list, 1), DCMI_ERR_INVALID_PARAMETER);
	assert_int_equal(dcmi.dcmi_get_card_list(NULL, list, 64), DCMI_ERR_INVALID_PARAMETER);

	assert_int_equal(dcmi.dcmi_get_device_num_in_card(2, &n), 0);
	assert_int_equal(n, 2);
	assert_int_equal(dcmi.dcmi_get_device_num_in_card(0, &n), 0);
	assert_int_equal(n, 1);
	assert_int_equal(dcmi.dcmi_get_device_num_in_card(1, &n), DCMI_ERR_DEVICE_NOT_EXIST);
	assert_int_equal(dcmi.dcmi_get_device_num_in_card(-1, &n), DCMI_ERR_DEVICE_NOT_EXIST);
	assert_int_equal(dcmi.dcmi_get_device_num_in_card(2, NULL), DCMI_ERR_INVALID_PARAMETER);

	int logic = -1;
	assert_int_equal(dcmi.dcmi_get_device_logic_id(&logic, 2, 1), 0);
	assert_int_equal(logic, 1);
	assert_int_equal(dcmi.dcmi_get_device_logic_id(&logic, 2, 2), DCMI_ERR_DEVICE_NOT_EXIST);
	assert_int_equal(dcmi.dcmi_get_device_logic_id(NULL, 2, 1), DCMI_ERR_INVALID_PARAMETER);

	unsigned phy = 99;
	assert_int_equal(dcmi.dcmi_get_device_phyid_from_logicid(2, &phy), 0);
	assert_int_equal(phy, 0);
	assert_int_equal(dcmi.dcmi_get_device_phyid_from_logicid(0, &phy), 0);
	assert_int_equal(phy, 4);
	assert_int_equal(dcmi.dcmi_get_device_phyid_from_logicid(3, &phy), DCMI_ERR_DEVICE_NOT_EXIST);
	assert_int_equal(dcmi.dcmi_get_device_phyid_from_logicid(0, NULL), DCMI_ERR_INVALID_PARAMETER);

	struct dcmi_chip_info chip;
	assert_int_equal(dcmi.dcmi_get_device_chip_info(2, 0, &chip), 0);
	assert_string_equal((const char *)chip.chip_type, "Ascend");
	assert_string_equal((const char *)chip.chip_name, "910B4");
	assert_string_equal((const char *)chip.chip_ver, "V1");
	assert_int_equal(chip.aicore_cnt, 20);
	assert_int_equal(dcmi.dcmi_get_device_chip_info(0, 0, &chip), 0);
	assert_string_equal((const char *)chip.chip_name, "310P3");
	assert_int_equal(dcmi.dcmi_get_device_chip_info(3, 0, &chip), DCMI_ERR_DEVICE_NOT_EXIST);
	assert_int_equal(dcmi.dcmi_get_device_chip_info(2, 0, NULL), DCMI_ERR_INVALID_PARAMETER);

	struct dcmi_hbm_info hbm;
	assert_int_equal(dcmi.dcmi_get_device_hbm_info(2, 0, &hbm), 0);
	assert_int_equal(hbm.memory_size, 32768);

	struct dcmi_board_info board;
	assert_int_equal(dcmi.dcmi_get_device_board_info(2, 0, &board), 0);
	assert_int_equal(board.board_id, 0xb0);
	assert_int_equal(dcmi.dcmi_get_device_board_info(2, 1, &board), DCMI_ERR_NOT_SUPPORTED);

	unsigned health = 99;
	assert_int_equal(dcmi.dcmi_get_device_health(2, 1, &health), 0);
	assert_int_equal(health, 0);
	assert_int_equal(dcmi.dcmi_get_device_health(7, 0, &health), DCMI_ERR_DEVICE_NOT_EXIST);
	assert_int_equal(dcmi.dcmi_get_device_health(2, 1, NULL), DCMI_ERR_INVALID_PARAMETER);

	char version[16];
	assert_int_equal(dcmi.dcmi_get_dcmi_version(version, sizeof(version)), 0);
	assert_string_equal(version, "24.1.rc1");
	/* "24.1.rc1" needs 9 bytes with its NUL. */
	assert_int_equal(dcmi.dcmi_get_dcmi_version(version, 8), DCMI_ERR_INVALID_PARAMETER);
	assert_int_equal(dcmi.dcmi_get_dcmi_version(version, 9), 0);
	assert_int_equal(dcmi.dcmi_get_dcmi_version(NULL, 9), DCMI_ERR_INVALID_PARAMETER);

	write_state("chip phy=0\n");
	assert_int_equal(dcmi.dcmi_get_dcmi_version(version, sizeof(version)), 0);
	assert_string_equal(version, "unknown");
}

static void test_pcie_info(void **unused)
{
	(void)unused;
	write_state("chip phy=0 pci=0000:3b:00.0\nchip phy=1 pci=10000:C1:1f.7\nchip phy=2\n"
		    "chip phy=3 pci=0000:86:00.0 health=absent\n");

	struct dcmi_pcie_info_all pcie;
	memset(&pcie, 0xff, sizeof(pcie));
	assert_int_equal(dcmi.dcmi_get_device_pcie_info_v2(0, 0, &pcie), 0);
	assert_int_equal(pcie.venderid, 0x19e5);
	assert_int_equal(pcie.domain, 0);
	assert_int_equal(pcie.bdf_busid, 0x3b);
	assert_int_equal(pcie.bdf_deviceid, 0);
	assert_int_equal(pcie.bdf_funcid, 0);
	assert_int_equal(pcie.reserve[31], 0);
	assert_int_equal(dcmi.dcmi_get_device_pcie_info_v2(1, 0, &pcie), 0);
	assert_int_equal(pcie.domain, 0x10000);
	assert_int_equal(pcie.bdf_busid, 0xc1);
	assert_int_equal(pcie.bdf_deviceid, 0x1f);
	assert_int_equal(pcie.bdf_funcid, 7);
	/* Without pci=, "not supported"; an absent chip does not exist. */
	assert_int_equal(dcmi.dcmi_get_device_pcie_info_v2(2, 0, &pcie), DCMI_ERR_NOT_SUPPORTED);
	assert_int_equal(dcmi.dcmi_get_device_pcie_info_v2(3, 0, &pcie), DCMI_ERR_DEVICE_NOT_EXIST);
	assert_int_equal(dcmi.dcmi_get_device_pcie_info_v2(4, 0, &pcie), DCMI_ERR_DEVICE_NOT_EXIST);
	assert_int_equal(dcmi.dcmi_get_device_pcie_info_v2(0, 0, NULL), DCMI_ERR_INVALID_PARAMETER);
}

static void test_absent_chip_keeps_its_identity(void **unused)
{
	(void)unused;
	write_state("chip phy=0\nchip phy=2 card=2 logic=1 name=910B3 health=absent errors=80E01801 board=0xb0\n");

	int n, list[64];
	assert_int_equal(dcmi.dcmi_get_card_list(&n, list, 64), 0);
	assert_int_equal(n, 2);
	assert_int_equal(list[1], 2);
	assert_int_equal(dcmi.dcmi_get_device_num_in_card(2, &n), 0);
	assert_int_equal(n, 1);

	int logic;
	assert_int_equal(dcmi.dcmi_get_device_logic_id(&logic, 2, 0), 0);
	assert_int_equal(logic, 1);
	unsigned phy;
	assert_int_equal(dcmi.dcmi_get_device_phyid_from_logicid(1, &phy), 0);
	assert_int_equal(phy, 2);
	struct dcmi_chip_info chip;
	assert_int_equal(dcmi.dcmi_get_device_chip_info(2, 0, &chip), 0);
	assert_string_equal((const char *)chip.chip_name, "910B3");

	unsigned health = 0;
	assert_int_equal(dcmi.dcmi_get_device_health(2, 0, &health), 0);
	assert_int_equal(health, DCMI_HEALTH_ABSENT);

	unsigned codes[DCMI_MAX_ERROR_CODES];
	struct dcmi_board_info board;
	struct dcmi_hbm_info hbm;
	assert_int_equal(dcmi.dcmi_get_device_errorcode_v2(2, 0, &n, codes, DCMI_MAX_ERROR_CODES),
			 DCMI_ERR_DEVICE_NOT_EXIST);
	assert_int_equal(dcmi.dcmi_get_device_board_info(2, 0, &board), DCMI_ERR_DEVICE_NOT_EXIST);
	assert_int_equal(dcmi.dcmi_get_device_hbm_info(2, 0, &hbm), DCMI_ERR_DEVICE_NOT_EXIST);
}

static void test_error_codes(void **unused)
{
	(void)unused;
	write_state("chip phy=0\nchip phy=1 health=2 errors=80E01801,80C98008\n");
	unsigned codes[DCMI_MAX_ERROR_CODES];
	int n = -1;
	assert_int_equal(dcmi.dcmi_get_device_errorcode_v2(1, 0, &n, codes, DCMI_MAX_ERROR_CODES), 0);
	assert_int_equal(n, 2);
	assert_int_equal(codes[0], 0x80E01801u);
	assert_int_equal(codes[1], 0x80C98008u);
	assert_int_equal(dcmi.dcmi_get_device_errorcode_v2(1, 0, &n, codes, 1), DCMI_ERR_INVALID_PARAMETER);
	assert_int_equal(dcmi.dcmi_get_device_errorcode_v2(1, 0, NULL, codes, 1), DCMI_ERR_INVALID_PARAMETER);
	assert_int_equal(dcmi.dcmi_get_device_errorcode_v2(1, 0, &n, NULL, 4), DCMI_ERR_INVALID_PARAMETER);

	assert_int_equal(dcmi.dcmi_get_device_errorcode_v2(0, 0, &n, codes, DCMI_MAX_ERROR_CODES), 0);
	assert_int_equal(n, 0);
	assert_int_equal(dcmi.dcmi_get_device_errorcode_v2(3, 0, &n, codes, DCMI_MAX_ERROR_CODES),
			 DCMI_ERR_DEVICE_NOT_EXIST);
}

/* A reset chip keeps its identity but answers "not ready" for reset_ms,
 * then comes back as reset= says, with the reset-finished event; a new
 * state line for the chip takes over again. */
static void test_reset(void **unused)
{
	(void)unused;
	write_state("chip phy=0 health=2 errors=80E18005 reset_ms=100\n"
		    "chip phy=1 health=2 errors=80E18005 reset=faulty reset_ms=50\n"
		    "chip phy=2 health=2 errors=80E18005 reset=never reset_ms=0\n"
		    "chip phy=3 fail=reset:-8015\nchip phy=4 health=absent\n");
	assert_int_equal(dcmi.dcmi_subscribe_fault_event(-1, -1, no_filter(), on_event_a), 0);
	assert_int_equal(dcmi.dcmi_set_device_reset(0, 0, (enum dcmi_reset_channel)2), DCMI_ERR_INVALID_PARAMETER);
	assert_int_equal(dcmi.dcmi_set_device_pre_reset(3, 0), 0);
	assert_int_equal(dcmi.dcmi_set_device_reset(3, 0, INBAND_CHANNEL), -8015);
	assert_int_equal(dcmi.dcmi_set_device_reset(4, 0, INBAND_CHANNEL), DCMI_ERR_DEVICE_NOT_EXIST);
	assert_int_equal(dcmi.dcmi_set_device_reset(9, 0, INBAND_CHANNEL), DCMI_ERR_DEVICE_NOT_EXIST);

	size_t before = events_seen();
	for (int phy = 0; phy < 3; phy++) {
		assert_int_equal(dcmi.dcmi_set_device_pre_reset(phy, 0), 0);
		assert_int_equal(dcmi.dcmi_set_device_reset(phy, 0, INBAND_CHANNEL), 0);
	}
	unsigned health = 9;
	int n, logic;
	unsigned codes[DCMI_MAX_ERROR_CODES];
	/* Away, but still on its card. */
	assert_int_equal(dcmi.dcmi_get_device_health(0, 0, &health), DCMI_ERR_NOT_READY);
	assert_int_equal(dcmi.dcmi_get_device_errorcode_v2(0, 0, &n, codes, DCMI_MAX_ERROR_CODES), DCMI_ERR_NOT_READY);
	assert_int_equal(dcmi.dcmi_set_device_reset(0, 0, INBAND_CHANNEL), DCMI_ERR_NOT_READY);
	assert_int_equal(dcmi.dcmi_get_device_logic_id(&logic, 0, 0), 0);
	/* Back with the reset-finished event: chip 1 (faulty), then chip 0 (clean). */
	assert_true(wait_event_for(before, 0));
	assert_true(wait_event_for(before, 1));
	for (size_t i = before; i < before + 2; i++) {
		assert_int_equal(event_at(i)->event_id, 0x8C2FA009u);
		assert_int_equal(event_at(i)->assertion, DCMI_ASSERTION_ONE_OFF);
	}
	assert_int_equal(dcmi.dcmi_get_device_health(0, 0, &health), 0);
	assert_int_equal(health, 0);
	assert_int_equal(dcmi.dcmi_get_device_errorcode_v2(0, 0, &n, codes, DCMI_MAX_ERROR_CODES), 0);
	assert_int_equal(n, 0);
	assert_int_equal(dcmi.dcmi_get_device_health(1, 0, &health), 0);
	assert_int_equal(health, 2);
	assert_int_equal(dcmi.dcmi_get_device_errorcode_v2(1, 0, &n, codes, DCMI_MAX_ERROR_CODES), 0);
	assert_int_equal(n, 1);
	assert_int_equal(dcmi.dcmi_get_device_health(2, 0, &health), DCMI_ERR_NOT_READY);

	/* A new line for the chip that never came back: the file speaks again. */
	write_state("chip phy=0 health=2 errors=80E18005 reset_ms=100\nchip phy=1 health=2 errors=80E18005 "
		    "reset=faulty reset_ms=50\nchip phy=2\n");
	assert_int_equal(dcmi.dcmi_get_device_health(2, 0, &health), 0);
	assert_int_equal(health, 0);
	/* Chip 0's line did not change: still back clean. */
	assert_int_equal(dcmi.dcmi_get_device_health(0, 0, &health), 0);
	assert_int_equal(health, 0);

	/* Every chip healthy again, its recovery events delivered: the next
	 * test starts from a quiet simulator. */
	before = events_seen();
	write_state("chip phy=0\nchip phy=1\nchip phy=2\n");
	assert_true(wait_event_for(before, 0));
	assert_true(wait_event_for(before, 1));
}

static void test_fault_and_recovery_events(void **unused)
{
	(void)unused;
	barrier_health = 0;
	write_event_state("on", "0", "");
	assert_int_equal(dcmi.dcmi_subscribe_fault_event(-1, -1, no_filter(), on_event_a), 0);
	assert_int_equal(dcmi.dcmi_subscribe_fault_event(-2, 0, no_filter(), on_event_a), DCMI_ERR_INVALID_PARAMETER);
	assert_int_equal(dcmi.dcmi_subscribe_fault_event(-1, -1, no_filter(), NULL), DCMI_ERR_INVALID_PARAMETER);
	assert_int_equal(dcmi.dcmi_subscribe_fault_event(9, 0, no_filter(), on_event_a), DCMI_ERR_DEVICE_NOT_EXIST);

	struct {
		const char *health;
		const char *extra;
		unsigned char assertion;
		unsigned char severity;
		unsigned event_id;
	} steps[] = {
		/* Down with an error code, back up: the recovery carries the fault's id. */
		{ "2", "errors=80E01801,80C98008", DCMI_ASSERTION_OCCUR, 2, 0x80E01801u },
		{ "0", "", DCMI_ASSERTION_RECOVERY, 2, 0x80E01801u },
		/* Absent counts as critical; without errors the id is 0. */
		{ "absent", "", DCMI_ASSERTION_OCCUR, 3, 0 },
		{ "1", "", DCMI_ASSERTION_RECOVERY, 3, 0 },
	};
	int64_t worst_us = 0;
	for (size_t i = 0; i < ELEMENTSOF(steps); i++) {
		size_t before = events_seen();
		/* No DCMI call until the event arrives: this is the inotify path. */
		write_event_state("on", steps[i].health, steps[i].extra);
		assert_true(wait_events(before + 1));
		const struct recorded *r = &events[before];
		const struct dcmi_dms_fault_event *e = &r->event.event_t.dms_event;
		assert_int_equal(r->handler, 'a');
		assert_int_equal(r->event.type, DCMI_EVENT_TYPE_DMS_FAULT);
		assert_int_equal(e->deviceid, 5);
		assert_int_equal(e->assertion, steps[i].assertion);
		assert_int_equal(e->severity, steps[i].severity);
		assert_int_equal(e->event_id, steps[i].event_id);
		assert_true(strlen(e->event_name) > 0);
		assert_non_null(strstr(e->event_name, "phy 1"));
		assert_true(e->alarm_raised_time > 0);
		/* Delivered from the simulator's own thread, which allows re-entry. */
		assert_false(pthread_equal(r->thread, pthread_self()));
		assert_int_equal(r->reentry_rc, 0);
		assert_int_equal(r->reentry_phy, 1);
		int64_t latency_us = r->at_us - last_rename_us;
		worst_us = latency_us > worst_us ? latency_us : worst_us;
	}
	print_message("fake-dcmi: worst latency from rename to handler: %lld us\n", (long long)worst_us);
	pass_barrier("on", "1", "");
}

static void test_no_event_within_a_class_or_for_added_and_removed_chips(void **unused)
{
	(void)unused;
	write_event_state("on", "0", "");
	assert_int_equal(dcmi.dcmi_subscribe_fault_event(-1, -1, no_filter(), on_event_a), 0);
	size_t before = events_seen();

	write_event_state("on", "1", ""); /* 0 -> 1: still healthy */
	sync_state();
	int n, list[64];
	write_state("chip phy=0 card=0\nchip phy=1 card=1 logic=5 health=1\nchip phy=3 card=3 health=3\n" BARRIER_CHIP,
		    barrier_health); /* unhealthy chip added */
	assert_int_equal(dcmi.dcmi_get_card_list(&n, list, 64), 0);
	assert_int_equal(n, 4);
	write_state("chip phy=0 card=0\nchip phy=1 card=1 logic=5 health=1\n" BARRIER_CHIP,
		    barrier_health); /* and removed */
	assert_int_equal(dcmi.dcmi_get_card_list(&n, list, 64), 0);
	assert_int_equal(n, 3);
	pass_barrier("on", "1", "");
	assert_only_barrier_since(before, 1);

	/* 2 <-> 3 stays unhealthy: one occur event for 1 -> 2, nothing for 2 -> 3. */
	write_event_state("on", "2", "");
	assert_true(wait_events(before + 2));
	before = events_seen();
	write_event_state("on", "3", "");
	pass_barrier("on", "3", "");
	assert_only_barrier_since(before, 1);

	write_event_state("on", "0", "");
	assert_true(wait_events(before + 2));
}

static void test_device_subscription_and_replacement(void **unused)
{
	(void)unused;
	write_event_state("on", "0", "");
	/* A device's own handler plus the all-devices one; the barrier chip
	 * (card 7) is heard by the all-devices handler only. */
	assert_int_equal(dcmi.dcmi_subscribe_fault_event(-1, -1, no_filter(), on_event_a), 0);
	assert_int_equal(dcmi.dcmi_subscribe_fault_event(1, 0, no_filter(), on_event_b), 0);
	size_t before = events_seen();
	write_event_state("on", "2", "");
	assert_true(wait_events(before + 2));
	char heard[2] = { events[before].handler, events[before + 1].handler };
	assert_true((heard[0] == 'a' && heard[1] == 'b') || (heard[0] == 'b' && heard[1] == 'a'));

	/* Subscribing card 1 again with on_event_a replaces on_event_b; the
	 * same function subscribed twice hears each event once. */
	assert_int_equal(dcmi.dcmi_subscribe_fault_event(1, 0, no_filter(), on_event_a), 0);
	before = events_seen();
	write_event_state("on", "0", "");
	pass_barrier("on", "0", "");
	assert_int_equal(events_seen() - before, 2); /* chip 1's recovery, then the barrier */
	assert_int_equal(events[before].handler, 'a');
	assert_int_equal(event_at(before)->deviceid, 5);

	/* A filtered subscription: severity 3 and above only. */
	struct dcmi_event_filter filter = no_filter();
	filter.filter_flag = 1ULL << 1;
	filter.severity = 3;
	assert_int_equal(dcmi.dcmi_subscribe_fault_event(-1, -1, filter, on_event_b), 0);
	assert_int_equal(dcmi.dcmi_subscribe_fault_event(1, 0, filter, on_event_b), 0);
	before = events_seen();
	write_event_state("on", "2", ""); /* severity 2: filtered out */
	sync_state();
	write_event_state("on", "0", "");
	sync_state();
	write_event_state("on", "3", ""); /* severity 3: delivered */
	assert_true(wait_events(before + 1));
	assert_int_equal(event_at(before)->severity, 3);
	write_event_state("on", "0", "");
	assert_true(wait_events(before + 2));
	assert_int_equal(event_at(before + 1)->assertion, DCMI_ASSERTION_RECOVERY);
}

static void test_subscribe_off_stops_events(void **unused)
{
	(void)unused;
	write_event_state("on", "0", "");
	assert_int_equal(dcmi.dcmi_subscribe_fault_event(-1, -1, no_filter(), on_event_a), 0);
	assert_int_equal(dcmi.dcmi_subscribe_fault_event(1, 0, no_filter(), on_event_a), 0);
	size_t before = events_seen();

	/* The subscription is lost: the fault goes unannounced ... */
	write_event_state("off", "2", "errors=80E01801");
	assert_int_equal(dcmi.dcmi_subscribe_fault_event(-1, -1, no_filter(), on_event_a), DCMI_ERR_NOT_SUPPORTED);
	unsigned health;
	assert_int_equal(dcmi.dcmi_get_device_health(1, 0, &health), 0);
	assert_int_equal(health, 2); /* ... and only polling sees it */

	/* Back on, the recovery is not announced either: nobody is subscribed. */
	write_event_state("on", "0", "");
	assert_int_equal(dcmi.dcmi_get_device_health(1, 0, &health), 0);
	assert_int_equal(dcmi.dcmi_subscribe_fault_event(-1, -1, no_filter(), on_event_a), 0);
	pass_barrier("on", "0", "");
	assert_only_barrier_since(before, 1);
}

static void test_in_place_write_is_seen(void **unused)
{
	(void)unused;
	write_event_state("on", "0", "");
	assert_int_equal(dcmi.dcmi_subscribe_fault_event(-1, -1, no_filter(), on_event_a), 0);
	size_t before = events_seen();

	/* Same inode, new content: seen when the writer closes the file. */
	int fd = open(state_path, O_WRONLY | O_TRUNC | O_CLOEXEC);
	assert_true(fd >= 0);
	char text[256];
	int n = snprintf(text, sizeof(text), "chip phy=0 card=0\nchip phy=1 card=1 logic=5 health=3\n" BARRIER_CHIP,
			 barrier_health);
	assert_int_equal(write(fd, text, (size_t)n), n);
	assert_int_equal(close(fd), 0);
	assert_true(wait_events(before + 1));
	assert_int_equal(event_at(before)->deviceid, 5);
	assert_int_equal(event_at(before)->assertion, DCMI_ASSERTION_OCCUR);
	assert_int_equal(event_at(before)->severity, 3);
}

static void test_removed_file_means_zero_cards(void **unused)
{
	(void)unused;
	write_state("chip phy=0\nchip phy=1\n");
	int n = -1, list[64];
	assert_int_equal(dcmi.dcmi_get_card_list(&n, list, 64), 0);
	assert_int_equal(n, 2);

	/* Visible to the very next call, without waiting for the watcher. */
	assert_int_equal(unlink(state_path), 0);
	assert_int_equal(dcmi.dcmi_get_card_list(&n, list, 64), 0);
	assert_int_equal(n, 0);
	assert_int_equal(dcmi.dcmi_get_device_num_in_card(0, &n), DCMI_ERR_DEVICE_NOT_EXIST);
	unsigned health;
	assert_int_equal(dcmi.dcmi_get_device_health(0, 0, &health), DCMI_ERR_DEVICE_NOT_EXIST);

	write_state("chip phy=0\n");
	assert_int_equal(dcmi.dcmi_get_card_list(&n, list, 64), 0);
	assert_int_equal(n, 1);
}

static void test_malformed_line_is_reported_with_its_number(void **unused)
{
	(void)unused;
	char log_path[PATH_MAX];
	snprintf(log_path, sizeof(log_path), "%s/stderr.txt", dir);
	int log_fd = open(log_path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	assert_true(log_fd >= 0);
	fflush(stderr);
	int saved = dup(STDERR_FILENO);
	assert_true(saved >= 0);
	assert_true(dup2(log_fd, STDERR_FILENO) >= 0);

	write_state("# header\nchip phy=0\nchp phy=1\nchip phy=2 colour=red\n");
	int n = -1, list[64];
	int rc = dcmi.dcmi_get_card_list(&n, list, 64);

	fflush(stderr);
	dup2(saved, STDERR_FILENO);
	close(saved);
	assert_int_equal(rc, 0);
	assert_int_equal(n, 2);

	char text[2048] = "";
	ssize_t len = pread(log_fd, text, sizeof(text) - 1, 0);
	close(log_fd);
	unlink(log_path);
	assert_true(len > 0);
	text[len] = '\0';
	char want3[PATH_MAX + 128], want4[PATH_MAX + 128];
	snprintf(want3, sizeof(want3), "fake-dcmi: %s:3: unknown directive 'chp', line ignored\n", state_path);
	snprintf(want4, sizeof(want4), "fake-dcmi: %s:4: unknown key 'colour' ignored\n", state_path);
	if (strncmp(text, want3, strlen(want3)) != 0)
		print_error("stderr was:\n%s", text);
	/* The exact two lines, first; the watcher may not have read the file yet. */
	assert_int_equal(strncmp(text, want3, strlen(want3)), 0);
	assert_int_equal(strncmp(text + strlen(want3), want4, strlen(want4)), 0);
}


/* Copies the built library, so that a second instance can be loaded from a
 * directory of the test's choosing. */
static void copy_file(const char *from, const char *to)
{
	int in = open(from, O_RDONLY | O_CLOEXEC);
	assert_true(in >= 0);
	int out = open(to, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0755);
	assert_true(out >= 0);
	char buf[65536];
	ssize_t n;
	while ((n = read(in, buf, sizeof(buf))) > 0)
		assert_int_equal(write(out, buf, (size_t)n), n);
	assert_int_equal(n, 0);
	close(in);
	assert_int_equal(close(out), 0);
}

/* Writes text to path by rename, as the documentation asks. */
static void replace_file(const char *path, const char *text)
{
	char tmp[PATH_MAX];
	assert_true((size_t)snprintf(tmp, sizeof(tmp), "%s.tmp", path) < sizeof(tmp));
	FILE *f = fopen(tmp, "we");
	assert_non_null(f);
	assert_int_equal(fputs(text, f) >= 0, 1);
	assert_int_equal(fclose(f), 0);
	assert_int_equal(rename(tmp, path), 0);
}

static int restore_state_variable(void **unused)
{
	(void)unused;
	setenv("ASCEND_FAKE_DCMI_STATE", state_path, 1);
	return 0;
}

/* Without ASCEND_FAKE_DCMI_STATE, a copy of the library in a directory of its
 * own reads fake-dcmi.state from that directory, and follows it there; with
 * no such file, dcmi_init fails and names the file it looked for. The copy is
 * a separate instance (another inode), independent of the shared one. */
static void test_default_state_next_to_the_library(void **unused)
{
	(void)unused;
	/* Sized from dir (PATH_MAX / 2), so every path provably fits. */
	char lib_dir[PATH_MAX / 2 + 16], copy[PATH_MAX], state[PATH_MAX], log_path[PATH_MAX];
	snprintf(lib_dir, sizeof(lib_dir), "%s/driver", dir);
	snprintf(copy, sizeof(copy), "%s/libdcmi.so", lib_dir);
	snprintf(state, sizeof(state), "%s/fake-dcmi.state", lib_dir);
	snprintf(log_path, sizeof(log_path), "%s/stderr.txt", dir);
	assert_int_equal(mkdir(lib_dir, 0755), 0);
	copy_file(FAKE_DCMI_LIB, copy);
	unsetenv("ASCEND_FAKE_DCMI_STATE");

	void *other = dlopen(copy, RTLD_NOW | RTLD_LOCAL);
	if (!other)
		print_error("dlopen %s: %s\n", copy, dlerror());
	assert_non_null(other);
	assert_ptr_not_equal(other, lib);
	int (*init)(void);
	int (*card_list)(int *, int *, int);
	*(void **)(&init) = dlsym(other, "dcmi_init");
	*(void **)(&card_list) = dlsym(other, "dcmi_get_card_list");
	assert_non_null(init);
	assert_non_null(card_list);

	/* No file yet: dcmi_init fails and says which file it wanted. */
	int log_fd = open(log_path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	assert_true(log_fd >= 0);
	fflush(stderr);
	int saved = dup(STDERR_FILENO);
	assert_true(saved >= 0);
	assert_true(dup2(log_fd, STDERR_FILENO) >= 0);
	int rc = init();
	fflush(stderr);
	dup2(saved, STDERR_FILENO);
	close(saved);
	char text[2048] = "";
	ssize_t len = pread(log_fd, text, sizeof(text) - 1, 0);
	close(log_fd);
	unlink(log_path);
	assert_int_equal(rc, DCMI_ERR_INNER);
	assert_true(len > 0);
	text[len] = '\0';
	char want[PATH_MAX + 128];
	snprintf(want, sizeof(want),
		 "fake-dcmi: ASCEND_FAKE_DCMI_STATE is not set and %s (next to the library) cannot be used: ", state);
	if (!strstr(text, want))
		print_error("stderr was:\n%s", text);
	assert_non_null(strstr(text, want));

	/* With the file: its chips, and a replacement is seen by the next call. */
	replace_file(state, "chip phy=0\nchip phy=1\nchip phy=2\n");
	assert_int_equal(init(), 0);
	int n = -1, list[64];
	assert_int_equal(card_list(&n, list, 64), 0);
	assert_int_equal(n, 3);
	replace_file(state, "chip phy=5\n");
	assert_int_equal(card_list(&n, list, 64), 0);
	assert_int_equal(n, 1);
	assert_int_equal(list[0], 5);

	/* The shared instance is untouched by the copy. */
	write_state("chip phy=0\nchip phy=1\n");
	assert_int_equal(dcmi.dcmi_get_card_list(&n, list, 64), 0);
	assert_int_equal(n, 2);

	/* dlclose stops the copy's watcher thread. */
	assert_int_equal(dlclose(other), 0);
	assert_int_equal(unlink(state), 0);
	assert_int_equal(unlink(copy), 0);
	assert_int_equal(rmdir(lib_dir), 0);
}


/* ---- vNPUs carved at run time ---- */

/* The state file's text. */
static void read_state_text(char *buf, size_t size)
{
	int fd = open(state_path, O_RDONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	ssize_t n = read(fd, buf, size - 1);
	close(fd);
	assert_true(n >= 0 && (size_t)n < size - 1);
	buf[n] = '\0';
}

static bool node_exists(unsigned id)
{
	char path[PATH_MAX];
	snprintf(path, sizeof(path), "%s/vdavinci%u", dev_dir, id);
	return access(path, F_OK) == 0;
}

/* dcmi_create_vdevice on (card, 0); the id made in *ret_id. */
static int create_vdev(int card, const char *template_name, unsigned want_id, unsigned *ret_id)
{
	struct dcmi_create_vdev_res_stru in;
	struct dcmi_create_vdev_out out;
	memset(&in, 0, sizeof(in));
	memset(&out, 0xa5, sizeof(out));
	in.vdev_id = want_id;
	in.vfg_id = DCMI_VDEV_ID_ANY;
	snprintf(in.template_name, sizeof(in.template_name), "%s", template_name);
	int rc = dcmi.dcmi_create_vdevice(card, 0, &in, &out);
	if (rc == 0 && ret_id)
		*ret_id = out.vdev_id;
	return rc;
}

/* The vNPU ids DCMI lists for (card, 0), comma separated. */
static void listed_vnpus(int card, char *buf, size_t size)
{
	unsigned char info[DCMI_VDEV_QUERY_BYTES] = { 0 };
	unsigned int len = sizeof(info), count, id;
	assert_int_equal(dcmi.dcmi_get_device_info(card, 0, DCMI_MAIN_CMD_VDEV_MNG, DCMI_VMNG_SUB_CMD_GET_TOTAL_RESOURCE,
						   info, &len),
			 0);
	memcpy(&count, info, sizeof(count));
	buf[0] = '\0';
	for (unsigned i = 0; i < count; i++) {
		memcpy(&id, info + sizeof(count) * (1 + i), sizeof(id));
		size_t at = strlen(buf);
		snprintf(buf + at, size - at, "%s%u", i ? "," : "", id);
	}
}

/* The state the vNPU tests start from: its last line has no newline. */
#define VNPU_STATE                                                          \
	"# a 910B3, a busy one, a 310P3 with a static vNPU, a 310B\n"       \
	"chip phy=0 name=910B3 aicore=20 hbm_mb=65536\n"                   \
	"chip phy=1 name=910B3 aicore=20 hbm_mb=65536 busy=1\n"            \
	"chip phy=2 name=310P3 aicore=8 hbm_mb=24576\n"                    \
	"chip phy=3 name=310B1 aicore=8 hbm_mb=8192\n"                     \
	"vnpu id=132 phy=2 template=vir04"

static void test_vdevice_create_and_destroy(void **unused)
{
	(void)unused;
	write_state(VNPU_STATE);
	unsigned id = 0;
	char text[4096], ids[256];

	/* The driver's choice is the lowest free id; the line goes at the end,
	 * every other line as it was, and the node appears. */
	assert_int_equal(create_vdev(0, "vir10_3c_32g", DCMI_VDEV_ID_ANY, &id), 0);
	assert_int_equal(id, 100);
	assert_true(node_exists(100));
	read_state_text(text, sizeof(text));
	assert_string_equal(text, VNPU_STATE "\nvnpu id=100 phy=0 template=vir10_3c_32g\n");
	assert_int_equal(create_vdev(0, "vir10_3c_32g", DCMI_VDEV_ID_ANY, &id), 0);
	assert_int_equal(id, 101);
	listed_vnpus(0, ids, sizeof(ids));
	assert_string_equal(ids, "100,101");

	/* The chip's 20 AI cores are taken. */
	assert_int_equal(create_vdev(0, "vir05_1c_8g", DCMI_VDEV_ID_ANY, NULL), DCMI_ERR_RESOURCE_OCCUPIED);
	/* A template of another family, an empty name, a chip used whole, a
	 * family without vNPUs, no such chip, no arguments. */
	assert_int_equal(create_vdev(2, "vir10_3c_32g", DCMI_VDEV_ID_ANY, NULL), DCMI_ERR_INVALID_PARAMETER);
	assert_int_equal(create_vdev(0, "", DCMI_VDEV_ID_ANY, NULL), DCMI_ERR_INVALID_PARAMETER);
	assert_int_equal(create_vdev(1, "vir05_1c_8g", DCMI_VDEV_ID_ANY, NULL), DCMI_ERR_NOT_PERMITTED);
	assert_int_equal(create_vdev(3, "vir01", DCMI_VDEV_ID_ANY, NULL), DCMI_ERR_NOT_SUPPORTED);
	assert_int_equal(create_vdev(9, "vir01", DCMI_VDEV_ID_ANY, NULL), DCMI_ERR_DEVICE_NOT_EXIST);
	struct dcmi_create_vdev_out out;
	assert_int_equal(dcmi.dcmi_create_vdevice(0, 0, NULL, &out), DCMI_ERR_INVALID_PARAMETER);

	/* Ids: the chip's range only, each once. The 310P3 has 4 of its 8
	 * cores, 4 of its 8 AI CPUs and half its memory in the static vir04. */
	assert_int_equal(create_vdev(2, "vir04_3c", 131, NULL), DCMI_ERR_INVALID_PARAMETER);
	assert_int_equal(create_vdev(2, "vir04_3c", 148, NULL), DCMI_ERR_INVALID_PARAMETER);
	assert_int_equal(create_vdev(2, "vir04_3c", 132, NULL), DCMI_ERR_INVALID_PARAMETER);
	assert_int_equal(create_vdev(2, "vir04_3c", 147, &id), 0);
	assert_int_equal(id, 147);
	assert_true(node_exists(147));
	assert_int_equal(create_vdev(2, "vir01", DCMI_VDEV_ID_ANY, NULL), DCMI_ERR_RESOURCE_OCCUPIED);

	/* A re-read of the file (a restarted simulator reads the same) lists them. */
	read_state_text(text, sizeof(text));
	write_state("%s", text);
	sync_state();
	listed_vnpus(0, ids, sizeof(ids));
	assert_string_equal(ids, "100,101");
	listed_vnpus(2, ids, sizeof(ids));
	assert_string_equal(ids, "132,147");

	/* Destroyed: its line and node go, the others stay; the freed id is
	 * the lowest free again. */
	assert_int_equal(dcmi.dcmi_set_destroy_vdevice(0, 0, 100), 0);
	assert_false(node_exists(100));
	assert_true(node_exists(101));
	read_state_text(text, sizeof(text));
	assert_string_equal(text, VNPU_STATE "\nvnpu id=101 phy=0 template=vir10_3c_32g\n"
					     "vnpu id=147 phy=2 template=vir04_3c\n");
	assert_int_equal(dcmi.dcmi_set_destroy_vdevice(0, 0, 100), DCMI_ERR_INVALID_PARAMETER);
	assert_int_equal(dcmi.dcmi_set_destroy_vdevice(2, 0, 101), DCMI_ERR_INVALID_PARAMETER);
	assert_int_equal(create_vdev(0, "vir05_1c_16g", DCMI_VDEV_ID_ANY, &id), 0);
	assert_int_equal(id, 100);
	/* A static vNPU (the state's own line) goes the same way. */
	assert_int_equal(dcmi.dcmi_set_destroy_vdevice(2, 0, 132), 0);
	read_state_text(text, sizeof(text));
	assert_null(strstr(text, "id=132"));
	assert_non_null(strstr(text, "# a 910B3, a busy one"));
	for (unsigned v = 100; v <= 101; v++)
		assert_int_equal(dcmi.dcmi_set_destroy_vdevice(0, 0, v), 0);
	assert_int_equal(dcmi.dcmi_set_destroy_vdevice(2, 0, 147), 0);
	assert_false(node_exists(100) || node_exists(101) || node_exists(147));
}

static void test_vdevice_fail_and_hang(void **unused)
{
	(void)unused;
	write_state("chip phy=0 aicore=20 hbm_mb=65536 fail=create_vdevice:-8005,dcmi_set_destroy_vdevice\n"
		    "chip phy=1 aicore=20 hbm_mb=65536 hang_ms=create_vdevice:300,destroy_vdevice:200\n"
		    "vnpu id=100 phy=0 template=vir05_1c_16g\n");
	assert_int_equal(create_vdev(0, "vir05_1c_16g", DCMI_VDEV_ID_ANY, NULL), DCMI_ERR_INNER);
	assert_false(node_exists(101));
	assert_int_equal(dcmi.dcmi_set_destroy_vdevice(0, 0, 100), DCMI_ERR_INNER);
	char text[4096];
	read_state_text(text, sizeof(text));
	assert_non_null(strstr(text, "vnpu id=100 "));
	assert_null(strstr(text, "vnpu id=101 "));

	unsigned id = 0;
	int64_t start = mono_us();
	assert_int_equal(create_vdev(1, "vir05_1c_16g", DCMI_VDEV_ID_ANY, &id), 0);
	assert_true(mono_us() - start >= 300 * 1000);
	assert_int_equal(id, 116);
	start = mono_us();
	assert_int_equal(dcmi.dcmi_set_destroy_vdevice(1, 0, 116), 0);
	assert_true(mono_us() - start >= 200 * 1000);
	assert_false(node_exists(116));
}

/* ---- device-share ---- */

static int share_of(int card)
{
	int flag = -1;
	int rc = dcmi.dcmi_get_device_share_enable(card, 0, &flag);
	return rc == 0 ? flag : rc;
}

static void test_device_share(void **unused)
{
	(void)unused;
	write_state("chip phy=0\nchip phy=1\nshare phy=1 mode=off\nchip phy=2 fail=get_device_share_enable:-8255,"
		    "set_device_share_enable\nchip phy=3 hang_ms=dcmi_set_device_share_enable:200");
	char text[4096];
	assert_int_equal(share_of(0), DCMI_DEVICE_SHARE_ON);
	assert_int_equal(share_of(1), DCMI_DEVICE_SHARE_OFF);
	assert_int_equal(share_of(2), DCMI_ERR_NOT_SUPPORTED);
	assert_int_equal(share_of(9), DCMI_ERR_DEVICE_NOT_EXIST);
	assert_int_equal(dcmi.dcmi_get_device_share_enable(0, 0, NULL), DCMI_ERR_INVALID_PARAMETER);

	/* On drops the chip's line; off writes one, at the end. */
	assert_int_equal(dcmi.dcmi_set_device_share_enable(1, 0, DCMI_DEVICE_SHARE_ON), 0);
	assert_int_equal(share_of(1), DCMI_DEVICE_SHARE_ON);
	read_state_text(text, sizeof(text));
	assert_null(strstr(text, "share phy=1"));
	assert_int_equal(dcmi.dcmi_set_device_share_enable(0, 0, DCMI_DEVICE_SHARE_OFF), 0);
	assert_int_equal(share_of(0), DCMI_DEVICE_SHARE_OFF);
	read_state_text(text, sizeof(text));
	assert_non_null(strstr(text, "hang_ms=dcmi_set_device_share_enable:200\nshare phy=0 mode=off\n"));
	/* Off again rewrites the line in place; on twice is harmless. */
	assert_int_equal(dcmi.dcmi_set_device_share_enable(0, 0, DCMI_DEVICE_SHARE_OFF), 0);
	read_state_text(text, sizeof(text));
	assert_non_null(strstr(text, "share phy=0 mode=off\n"));
	assert_null(strstr(strstr(text, "share phy=0") + 1, "share phy=0"));
	assert_int_equal(dcmi.dcmi_set_device_share_enable(0, 0, DCMI_DEVICE_SHARE_ON), 0);
	assert_int_equal(dcmi.dcmi_set_device_share_enable(0, 0, DCMI_DEVICE_SHARE_ON), 0);
	assert_int_equal(share_of(0), DCMI_DEVICE_SHARE_ON);
	assert_int_equal(dcmi.dcmi_set_device_share_enable(0, 0, 2), DCMI_ERR_INVALID_PARAMETER);

	/* fail= and hang= as for any call. */
	assert_int_equal(dcmi.dcmi_set_device_share_enable(2, 0, DCMI_DEVICE_SHARE_ON), DCMI_ERR_INNER);
	int64_t start = mono_us();
	assert_int_equal(dcmi.dcmi_set_device_share_enable(3, 0, DCMI_DEVICE_SHARE_ON), 0);
	assert_true(mono_us() - start >= 200 * 1000);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_init_failures_in_a_child),
		cmocka_unit_test(test_calls_before_init_fail),
		cmocka_unit_test_setup(test_enumeration, init_dcmi),
		cmocka_unit_test_setup(test_pcie_info, init_dcmi),
		cmocka_unit_test_setup(test_absent_chip_keeps_its_identity, init_dcmi),
		cmocka_unit_test_setup(test_error_codes, init_dcmi),
		cmocka_unit_test_setup(test_reset, init_dcmi),
		cmocka_unit_test_setup(test_fault_and_recovery_events, init_dcmi),
		cmocka_unit_test_setup(test_no_event_within_a_class_or_for_added_and_removed_chips, init_dcmi),
		cmocka_unit_test_setup(test_device_subscription_and_replacement, init_dcmi),
		cmocka_unit_test_setup(test_subscribe_off_stops_events, init_dcmi),
		cmocka_unit_test_setup(test_in_place_write_is_seen, init_dcmi),
		cmocka_unit_test_setup(test_removed_file_means_zero_cards, init_dcmi),
		cmocka_unit_test_setup(test_malformed_line_is_reported_with_its_number, init_dcmi),
		cmocka_unit_test_setup(test_vdevice_create_and_destroy, init_dcmi),
		cmocka_unit_test_setup(test_vdevice_fail_and_hang, init_dcmi),
		cmocka_unit_test_setup(test_device_share, init_dcmi),
		cmocka_unit_test_setup_teardown(test_default_state_next_to_the_library, init_dcmi,
						restore_state_variable),
	};
	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
