/* SPDX-License-Identifier: Apache-2.0 */
/* The DCMI backend: the ownership check, the library search order, symbol
 * resolution, and the wrappers, first against an in-process table of mock
 * functions (to reach failures the simulator cannot produce), then against
 * the DCMI simulator (tests/fake-dcmi) loaded from copies of its library.
 *
 * Loaded libraries are never unloaded, so every simulator test loads its own
 * copy of the library (a new file is a new object with fresh global state)
 * and the tests that depend on the dynamic loader's own search run in a
 * re-executed child process with a controlled LD_LIBRARY_PATH. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <fcntl.h>
#include <poll.h>
#include <stdatomic.h>
#include <sys/eventfd.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "base/macro.h"
/* Included rather than linked so the tests can reach the static helpers and
 * fill a struct dcmi_lib with mock functions; the linker then takes no
 * object of ascend_core's copy. */
#include "npu/dcmi.c"

#include "integration/harness/wait.h"
#include "support/skip.h"
#include "support/tmpdir.h"

#ifndef FAKE_DCMI_LIB
#error "FAKE_DCMI_LIB must name the simulator's libdcmi.so"
#endif

#define SCENARIO_ENV "TEST_DCMI_SCENARIO"
#define ROOT_ENV "TEST_DCMI_ROOT"
#define STATE_ENV "ASCEND_FAKE_DCMI_STATE"

/* ---- file helpers ---------------------------------------------------- */

struct fixture {
	char root[64];
};

/* Creates every missing directory of root/rel with mode (umask ignored). */
static void make_dirs(const char *root, const char *rel, mode_t mode)
{
	char path[PATH_MAX];
	assert_int_equal(path_join(path, sizeof(path), root, rel), 0);
	for (char *p = path + strlen(root) + 1;; p++) {
		if (*p != '/' && *p != '\0')
			continue;
		char saved = *p;
		*p = '\0';
		if (mkdir(path, mode) < 0)
			assert_int_equal(errno, EEXIST);
		else
			assert_int_equal(chmod(path, mode), 0);
		*p = saved;
		if (saved == '\0')
			break;
	}
}

static void copy_file(const char *src, const char *dst, mode_t mode)
{
	int in = open(src, O_RDONLY | O_CLOEXEC);
	assert_true(in >= 0);
	int out = open(dst, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
	assert_true(out >= 0);
	char buf[65536];
	for (;;) {
		ssize_t n = read(in, buf, sizeof(buf));
		assert_true(n >= 0);
		if (n == 0)
			break;
		assert_int_equal(write(out, buf, (size_t)n), n);
	}
	close(in);
	assert_int_equal(fchmod(out, mode), 0);
	assert_int_equal(close(out), 0);
}

/* Copies a library to root/rel_dir/libdcmi.so, creating the directories. */
static void install_lib(const char *src, const char *root, const char *rel_dir, char *ret_path, size_t size)
{
	make_dirs(root, rel_dir, 0755);
	char dir[PATH_MAX];
	assert_int_equal(path_join(dir, sizeof(dir), root, rel_dir), 0);
	assert_int_equal(path_join(ret_path, size, dir, "libdcmi.so"), 0);
	copy_file(src, ret_path, 0755);
}

static void write_file(const char *path, const char *text, mode_t mode)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
	assert_true(fd >= 0);
	size_t len = strlen(text);
	assert_int_equal(write(fd, text, len), (ssize_t)len);
	assert_int_equal(fchmod(fd, mode), 0);
	assert_int_equal(close(fd), 0);
}

/* The simulator re-reads its state file when it is replaced, so write a
 * sibling and rename it over the old one. */
static void write_state(const char *root, const char *text)
{
	char path[PATH_MAX], tmp[PATH_MAX];
	assert_int_equal(path_join(path, sizeof(path), root, "state"), 0);
	assert_int_equal(path_join(tmp, sizeof(tmp), root, "state.new"), 0);
	write_file(tmp, text, 0644);
	assert_int_equal(rename(tmp, path), 0);
	assert_int_equal(setenv(STATE_ENV, path, 1), 0);
}

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));
	if (!f)
		return -1;
	if (tmpdir_make(f->root, sizeof(f->root), "test_dcmi") < 0 || chmod(f->root, 0755) < 0) {
		free(f);
		return -1;
	}
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;
	tmpdir_remove(f->root);
	free(f);
	return 0;
}

/* The ownership checks need root (to chown) and a /tmp like every Linux has. */
static bool can_test_ownership(void)
{
	struct stat st;
	return geteuid() == 0 && stat("/tmp", &st) == 0 && st.st_uid == 0 && (st.st_mode & S_ISVTX);
}

static void assert_contains(const char *haystack, const char *needle)
{
	if (!strstr(haystack, needle))
		fail_msg("\"%s\" does not contain \"%s\"", haystack, needle);
}

/* ---- dcmi_path_trusted --------------------------------------------- */

static void make_file(const char *root, const char *rel_dir, mode_t dir_mode, char *ret_path, size_t size)
{
	make_dirs(root, rel_dir, dir_mode);
	char dir[PATH_MAX];
	assert_int_equal(path_join(dir, sizeof(dir), root, rel_dir), 0);
	assert_int_equal(path_join(ret_path, size, dir, "lib.so"), 0);
	write_file(ret_path, "x", 0644);
}

static void test_trust_root_owned_tree(void **state)
{
	struct fixture *f = *state;
	char path[PATH_MAX];
	make_file(f->root, "a/b", 0755, path, sizeof(path));
	/* /tmp (sticky, world-writable) is one of the ancestors. */
	char why[256] = "";
	assert_int_equal(dcmi_path_trusted(path, why, sizeof(why)), 0);
}

static void expect_refusal(const char *path, const char *offender, const char *reason)
{
	char why[512] = "";
	char expected[PATH_MAX + 64];
	assert_int_equal(dcmi_path_trusted(path, why, sizeof(why)), -EPERM);
	assert_int_equal(str_printf(expected, sizeof(expected), "%s: %s", offender, reason), 0);
	assert_string_equal(why, expected);
}

/* A file in root/file_dir, and root/dir (file_dir or one above it) given
 * mode: the file is refused for dir. */
static void expect_writable_dir_refused(const char *root, const char *file_dir, const char *dir_rel, mode_t mode)
{
	char path[PATH_MAX], dir[PATH_MAX];
	make_file(root, file_dir, 0755, path, sizeof(path));
	assert_int_equal(path_join(dir, sizeof(dir), root, dir_rel), 0);
	assert_int_equal(chmod(dir, mode), 0);
	expect_refusal(path, dir, "directory is group or other writable");
}

static void test_trust_group_writable_dir(void **state)
{
	struct fixture *f = *state;
	expect_writable_dir_refused(f->root, "a/lib64", "a/lib64", 0775);
}

static void test_trust_other_writable_ancestor(void **state)
{
	struct fixture *f = *state;
	expect_writable_dir_refused(f->root, "a/b/c", "a", 0757);
}

static void test_trust_writable_file(void **state)
{
	struct fixture *f = *state;
	char path[PATH_MAX];
	make_file(f->root, "a", 0755, path, sizeof(path));
	assert_int_equal(chmod(path, 0664), 0);
	expect_refusal(path, path, "file is group or other writable");
	assert_int_equal(chmod(path, 0646), 0);
	expect_refusal(path, path, "file is group or other writable");
}

static void test_trust_not_root_owned(void **state)
{
	struct fixture *f = *state;
	char path[PATH_MAX], dir[PATH_MAX];
	make_file(f->root, "a/b", 0755, path, sizeof(path));
	assert_int_equal(path_join(dir, sizeof(dir), f->root, "a"), 0);
	assert_int_equal(chown(dir, 1, 0), 0);
	expect_refusal(path, dir, "owned by uid 1, not root");

	assert_int_equal(chown(dir, 0, 0), 0);
	assert_int_equal(chown(path, 1, 1), 0);
	expect_refusal(path, path, "owned by uid 1, not root");
}

static void test_trust_sticky_ancestor_only(void **state)
{
	struct fixture *f = *state;
	char path[PATH_MAX], dir[PATH_MAX];
	make_file(f->root, "shared/lib", 0755, path, sizeof(path));
	assert_int_equal(path_join(dir, sizeof(dir), f->root, "shared"), 0);
	assert_int_equal(chmod(dir, 01777), 0);
	char why[256] = "";
	assert_int_equal(dcmi_path_trusted(path, why, sizeof(why)), 0);

	/* A sticky directory is a safe ancestor, never a safe target. */
	expect_refusal(dir, dir, "directory is group or other writable");

	/* Others can create entries in it, so it must at least be root's. */
	assert_int_equal(chown(dir, 1, 0), 0);
	expect_refusal(path, dir, "owned by uid 1, not root");
}

static void test_trust_follows_symlinks(void **state)
{
	struct fixture *f = *state;
	char good[PATH_MAX], bad[PATH_MAX], bad_dir[PATH_MAX], link[PATH_MAX];
	make_file(f->root, "good", 0755, good, sizeof(good));
	make_file(f->root, "bad", 0755, bad, sizeof(bad));
	assert_int_equal(path_join(bad_dir, sizeof(bad_dir), f->root, "bad"), 0);
	assert_int_equal(chmod(bad_dir, 0777), 0);

	/* What counts is where the link leads, which is what dlopen maps. */
	assert_int_equal(path_join(link, sizeof(link), f->root, "bad/link.so"), 0);
	assert_int_equal(symlink(good, link), 0);
	char why[256] = "";
	assert_int_equal(dcmi_path_trusted(link, why, sizeof(why)), 0);

	assert_int_equal(path_join(link, sizeof(link), f->root, "good/link.so"), 0);
	assert_int_equal(symlink(bad, link), 0);
	expect_refusal(link, bad_dir, "directory is group or other writable");
}

static void test_trust_missing(void **state)
{
	struct fixture *f = *state;
	char path[PATH_MAX];
	assert_int_equal(path_join(path, sizeof(path), f->root, "nothing/here.so"), 0);
	char why[256] = "";
	assert_int_equal(dcmi_path_trusted(path, why, sizeof(why)), -ENOENT);
	assert_contains(why, path);
	assert_int_equal(dcmi_path_trusted(NULL, why, sizeof(why)), -EINVAL);
	/* why is optional. */
	assert_int_equal(dcmi_path_trusted(path, NULL, 0), -ENOENT);
}

/* ---- mock DCMI: failures the simulator cannot produce ------------------ */

struct mock_chip {
	int card;
	int device;
	int logic;
	unsigned int phy;
	const char *name;
	bool name_fills_buffer; /* all 32 bytes, no terminator */
	int board_rc;
	unsigned int board_id;
	const char *fail_call; /* identity call that fails for this chip */
	int fail_code;
};

static struct {
	int card_list_rc;
	int card_num; /* what dcmi_get_card_list reports */
	int cards[DCMI_MAX_CARDS];
	int device_num_override; /* when non-zero, every card reports this */
	const struct mock_chip *chips;
	size_t chip_count;
	int health_rc;
	unsigned int health;
	int error_count;
	int subscribe_rc;
	int subscribe_calls;
	dcmi_fault_event_callback subscribe_handler;
	int version_rc;
	bool version_fills_buffer;
} mock;

static const struct mock_chip *mock_find(int card, int device)
{
	for (size_t i = 0; i < mock.chip_count; i++)
		if (mock.chips[i].card == card && mock.chips[i].device == device)
			return &mock.chips[i];
	return NULL;
}

static bool mock_fails(const struct mock_chip *chip, const char *call)
{
	return chip->fail_call && strcmp(chip->fail_call, call) == 0;
}

static int mock_get_card_list(int *card_num, int *card_list, int list_len)
{
	if (mock.card_list_rc)
		return mock.card_list_rc;
	for (int i = 0; i < mock.card_num && i < list_len && i < DCMI_MAX_CARDS; i++)
		card_list[i] = mock.cards[i];
	*card_num = mock.card_num;
	return 0;
}

static int mock_get_device_num_in_card(int card_id, int *device_num)
{
	if (mock.device_num_override) {
		*device_num = mock.device_num_override;
		return 0;
	}
	int n = 0;
	for (size_t i = 0; i < mock.chip_count; i++)
		if (mock.chips[i].card == card_id)
			n++;
	if (n == 0)
		return DCMI_ERR_INVALID_DEVICE_ID;
	*device_num = n;
	return 0;
}

static int mock_get_device_logic_id(int *device_logic_id, int card_id, int device_id)
{
	const struct mock_chip *chip = mock_find(card_id, device_id);
	if (!chip)
		return DCMI_ERR_INVALID_DEVICE_ID;
	if (mock_fails(chip, "logic"))
		return chip->fail_code;
	*device_logic_id = chip->logic;
	return 0;
}

static int mock_get_device_phyid_from_logicid(unsigned int logicid, unsigned int *phyid)
{
	for (size_t i = 0; i < mock.chip_count; i++) {
		const struct mock_chip *chip = &mock.chips[i];
		if ((unsigned int)chip->logic != logicid)
			continue;
		if (mock_fails(chip, "phy"))
			return chip->fail_code;
		*phyid = chip->phy;
		return 0;
	}
	return DCMI_ERR_INVALID_DEVICE_ID;
}

static int mock_get_device_chip_info(int card_id, int device_id, struct dcmi_chip_info *chip_info)
{
	const struct mock_chip *chip = mock_find(card_id, device_id);
	if (!chip)
		return DCMI_ERR_INVALID_DEVICE_ID;
	if (mock_fails(chip, "info"))
		return chip->fail_code;
	memset(chip_info, 0, sizeof(*chip_info));
	memcpy(chip_info->chip_type, "Ascend", sizeof("Ascend"));
	if (chip->name_fills_buffer)
		memset(chip_info->chip_name, 'N', sizeof(chip_info->chip_name));
	else
		memcpy(chip_info->chip_name, chip->name, strlen(chip->name) + 1);
	chip_info->aicore_cnt = 20;
	return 0;
}

static int mock_get_device_board_info(int card_id, int device_id, struct dcmi_board_info *board_info)
{
	const struct mock_chip *chip = mock_find(card_id, device_id);
	if (!chip)
		return DCMI_ERR_INVALID_DEVICE_ID;
	if (chip->board_rc)
		return chip->board_rc;
	board_info->board_id = chip->board_id;
	return 0;
}

static int mock_get_device_health(int card_id, int device_id, unsigned int *health)
{
	(void)card_id;
	(void)device_id;
	if (mock.health_rc)
		return mock.health_rc;
	*health = mock.health;
	return 0;
}

static int mock_get_device_errorcode_v2(int card_id, int device_id, int *error_count, unsigned int *error_code_list,
					unsigned int list_len)
{
	(void)card_id;
	(void)device_id;
	assert_int_equal(list_len, DCMI_MAX_ERROR_CODES);
	for (unsigned int i = 0; i < list_len; i++)
		error_code_list[i] = 0x80E00000u + i;
	/* A vendor that reports more than it could write must not make us
	 * read past the buffer. */
	*error_count = mock.error_count;
	return 0;
}

static void noop_handler(void *ctx, const struct dcmi_event *event)
{
	(void)ctx, (void)event;
}

static void count_calls(void *ctx, const struct dcmi_event *event)
{
	(void)event;
	(*(int *)ctx)++;
}

static int mock_subscribe_fault_event(int card_id, int device_id, struct dcmi_event_filter filter,
				      dcmi_fault_event_callback handler)
{
	static const struct dcmi_event_filter zero;
	assert_int_equal(card_id, -1);
	assert_int_equal(device_id, -1);
	assert_memory_equal(&filter, &zero, sizeof(zero));
	assert_non_null(handler);
	mock.subscribe_handler = handler;
	mock.subscribe_calls++;
	return mock.subscribe_rc;
}

static int mock_get_dcmi_version(char *buf, int len)
{
	if (mock.version_rc)
		return mock.version_rc;
	if (mock.version_fills_buffer)
		memset(buf, 'v', (size_t)len);
	else
		memcpy(buf, "24.1.rc1", sizeof("24.1.rc1"));
	return 0;
}

static struct dcmi_ip_addr mock_ip, mock_mask;

static int mock_get_device_ip(int card_id, int device_id, enum dcmi_port_type input_type, int port_id,
			      struct dcmi_ip_addr *ip, struct dcmi_ip_addr *mask)
{
	(void)card_id, (void)device_id;
	assert_int_equal(input_type, DCMI_ROCE_PORT);
	assert_int_equal(port_id, 0);
	*ip = mock_ip;
	*mask = mock_mask;
	return 0;
}

static struct dcmi_lib mock_lib(void)
{
	struct dcmi_lib lib = {
		.fn = {
			.dcmi_get_card_list = mock_get_card_list,
			.dcmi_get_device_num_in_card = mock_get_device_num_in_card,
			.dcmi_get_device_logic_id = mock_get_device_logic_id,
			.dcmi_get_device_phyid_from_logicid = mock_get_device_phyid_from_logicid,
			.dcmi_get_device_chip_info = mock_get_device_chip_info,
			.dcmi_get_device_health = mock_get_device_health,
			.dcmi_get_device_board_info = mock_get_device_board_info,
			.dcmi_get_dcmi_version = mock_get_dcmi_version,
			.dcmi_get_device_errorcode_v2 = mock_get_device_errorcode_v2,
			.dcmi_subscribe_fault_event = mock_subscribe_fault_event,
		},
		.last_lock = PTHREAD_MUTEX_INITIALIZER,
	};
	return lib;
}

static void mock_set(const int *cards, int card_num, const struct mock_chip *chips, size_t chip_count)
{
	memset(&mock, 0, sizeof(mock));
	for (int i = 0; i < card_num && i < DCMI_MAX_CARDS; i++)
		mock.cards[i] = cards[i];
	mock.card_num = card_num;
	mock.chips = chips;
	mock.chip_count = chip_count;
}

static void test_mock_enumerate_layout(void **state)
{
	(void)state;
	/* Cards 2 and 7 (not contiguous); logic ids differ from phy ids. */
	static const struct mock_chip chips[] = {
		{ .card = 7, .device = 0, .logic = 0, .phy = 6, .name = "910B3", .board_id = 0x33 },
		{ .card = 2, .device = 0, .logic = 3, .phy = 1, .name = "910B3", .board_id = 0xb2 },
		{ .card = 2, .device = 1, .logic = 1, .phy = 0, .name = "310P3", .board_rc = DCMI_ERR_NOT_SUPPORTED },
	};
	static const int cards[] = { 7, 2 };
	mock_set(cards, 2, chips, 3);
	struct dcmi_lib lib = mock_lib();

	struct npu_chip out[4];
	size_t count = 0;
	assert_int_equal(dcmi_enumerate(&lib, out, 4, &count), 0);
	assert_int_equal(count, 3);
	assert_int_equal(dcmi_last_error(&lib).code, 0);

	assert_int_equal(out[0].phy_id, 0);
	assert_int_equal(out[0].logic_id, 1);
	assert_int_equal(out[0].card_id, 2);
	assert_int_equal(out[0].device_id, 1);
	assert_string_equal(out[0].name, "310P3");
	assert_false(out[0].has_board_id);
	assert_int_equal(out[0].family, NPU_FAMILY_310P);

	assert_int_equal(out[1].phy_id, 1);
	assert_int_equal(out[1].logic_id, 3);
	assert_int_equal(out[1].card_id, 2);
	assert_int_equal(out[1].device_id, 0);
	assert_true(out[1].has_board_id);
	assert_int_equal(out[1].board_id, 0xb2);
	/* The A3 board id beats the 910B name. */
	assert_int_equal(out[1].family, NPU_FAMILY_A3);

	assert_int_equal(out[2].phy_id, 6);
	assert_int_equal(out[2].card_id, 7);
	assert_int_equal(out[2].family, NPU_FAMILY_910B);
	assert_int_equal(out[2].aicore_count, 20);
}

/* dcmi_enumerate into out (room for 8) succeeds with the n chips of phys,
 * in that order. */
static void expect_enumerated(struct dcmi_lib *lib, struct npu_chip out[static 8], size_t n, const unsigned *phys)
{
	size_t count = 0;
	assert_int_equal(dcmi_enumerate(lib, out, 8, &count), 0);
	assert_int_equal(count, n);
	for (size_t i = 0; i < n; i++)
		assert_int_equal(out[i].phy_id, phys[i]);
}

static void test_mock_enumerate_skips_broken_chip(void **state)
{
	(void)state;
	static const struct mock_chip chips[] = {
		{ .card = 0, .device = 0, .logic = 0, .phy = 0, .name = "910B3" },
		{ .card = 1, .device = 0, .logic = 1, .phy = 1, .name = "910B3", .fail_call = "phy",
		  .fail_code = DCMI_ERR_IOCTL },
		{ .card = 2, .device = 0, .logic = 2, .phy = 2, .name = "910B3", .fail_call = "info",
		  .fail_code = DCMI_ERR_NOT_READY },
		{ .card = 3, .device = 0, .logic = 3, .phy = 3, .name = "910B3", .fail_call = "logic",
		  .fail_code = DCMI_ERR_DEVICE_NOT_EXIST },
		{ .card = 4, .device = 0, .logic = -5, .phy = 4, .name = "910B3" },
		{ .card = 5, .device = 0, .logic = 5, .phy = 5, .name = "910B3" },
	};
	static const int cards[] = { 0, 1, 2, 3, 4, 5, 9 /* no chips: device count fails */ };
	mock_set(cards, 7, chips, 6);
	struct dcmi_lib lib = mock_lib();

	struct npu_chip out[8];
	expect_enumerated(&lib, out, 2, (const unsigned[]){ 0, 5 });
	/* The last failure is remembered for the caller's log line. */
	struct dcmi_error err = dcmi_last_error(&lib);
	assert_int_equal(err.code, DCMI_ERR_INVALID_DEVICE_ID);
	assert_string_equal(err.call, "dcmi_get_device_num_in_card");

	/* Only card 2, failing chip info. */
	static const int card2[] = { 2 };
	mock_set(card2, 1, chips, 6);
	expect_enumerated(&lib, out, 0, NULL);
	err = dcmi_last_error(&lib);
	assert_int_equal(err.code, DCMI_ERR_NOT_READY);
	assert_string_equal(err.call, "dcmi_get_device_chip_info");

	/* A later successful call clears it. */
	static const int card0[] = { 0 };
	mock_set(card0, 1, chips, 6);
	expect_enumerated(&lib, out, 1, (const unsigned[]){ 0 });
	assert_int_equal(dcmi_last_error(&lib).code, 0);
	assert_null(dcmi_last_error(&lib).call);
}

static void test_mock_enumerate_card_list_fails(void **state)
{
	(void)state;
	mock_set(NULL, 0, NULL, 0);
	mock.card_list_rc = DCMI_ERR_NOT_READY;
	struct dcmi_lib lib = mock_lib();
	struct npu_chip out[2];
	size_t count = 99;
	assert_int_equal(dcmi_enumerate(&lib, out, 2, &count), -EIO);
	assert_int_equal(count, 99);
	assert_int_equal(dcmi_last_error(&lib).code, DCMI_ERR_NOT_READY);
	assert_string_equal(dcmi_last_error(&lib).call, "dcmi_get_card_list");
}

static void test_mock_enumerate_clamps_vendor_counts(void **state)
{
	(void)state;
	static const struct mock_chip chips[] = {
		{ .card = 0, .device = 0, .logic = 0, .phy = 0, .name = "910" },
		{ .card = 0, .device = 3, .logic = 3, .phy = 3, .name = "910" },
		{ .card = 0, .device = 4, .logic = 4, .phy = 4, .name = "910" },
	};
	int cards[DCMI_MAX_CARDS] = { 0 };
	/* 1000 cards claimed, 64 written (all card 0): duplicates collapse. */
	mock_set(cards, DCMI_MAX_CARDS, chips, 3);
	mock.card_num = 1000;
	/* Devices beyond 4 per card are never asked for. */
	mock.device_num_override = 9;
	struct dcmi_lib lib = mock_lib();
	struct npu_chip out[8];
	expect_enumerated(&lib, out, 2, (const unsigned[]){ 0, 3 });

	/* A card claiming no devices still gets device 0 asked. */
	mock.device_num_override = -3;
	mock.card_num = 1;
	expect_enumerated(&lib, out, 1, (const unsigned[]){ 0 });

	mock.card_num = -1;
	expect_enumerated(&lib, out, 0, NULL);
}

static void test_mock_enumerate_duplicate_phy_keeps_first(void **state)
{
	(void)state;
	static const struct mock_chip chips[] = {
		{ .card = 4, .device = 0, .logic = 0, .phy = 2, .name = "910B3" },
		{ .card = 1, .device = 0, .logic = 1, .phy = 2, .name = "910B4" },
		{ .card = 1, .device = 1, .logic = 2, .phy = 1, .name = "910B4" },
	};
	static const int cards[] = { 4, 1 };
	mock_set(cards, 2, chips, 3);
	struct dcmi_lib lib = mock_lib();
	struct npu_chip out[4];
	size_t count = 0;
	assert_int_equal(dcmi_enumerate(&lib, out, 4, &count), 0);
	assert_int_equal(count, 2);
	assert_int_equal(out[0].phy_id, 1);
	assert_int_equal(out[1].phy_id, 2);
	assert_int_equal(out[1].card_id, 4);
	assert_string_equal(out[1].name, "910B3");
}

static void test_mock_enumerate_too_many(void **state)
{
	(void)state;
	static const struct mock_chip chips[] = {
		{ .card = 0, .device = 0, .logic = 0, .phy = 0, .name = "910B3" },
		{ .card = 0, .device = 1, .logic = 1, .phy = 1, .name = "910B3" },
		{ .card = 0, .device = 2, .logic = 2, .phy = 2, .name = "910B3" },
	};
	static const int cards[] = { 0 };
	mock_set(cards, 1, chips, 3);
	struct dcmi_lib lib = mock_lib();
	struct npu_chip out[3];
	size_t count = 99;
	assert_int_equal(dcmi_enumerate(&lib, out, 2, &count), -E2BIG);
	assert_int_equal(count, 99);
	assert_int_equal(dcmi_enumerate(&lib, NULL, 0, &count), -E2BIG);
	assert_int_equal(dcmi_enumerate(&lib, out, 3, &count), 0);
	assert_int_equal(count, 3);
	assert_int_equal(dcmi_enumerate(&lib, NULL, 1, &count), -EINVAL);
}

static void test_mock_enumerate_unterminated_name(void **state)
{
	(void)state;
	static const struct mock_chip chips[] = {
		{ .card = 0, .device = 0, .logic = 0, .phy = 0, .name_fills_buffer = true },
	};
	static const int cards[] = { 0 };
	mock_set(cards, 1, chips, 1);
	struct dcmi_lib lib = mock_lib();
	struct npu_chip out[1];
	size_t count = 0;
	assert_int_equal(dcmi_enumerate(&lib, out, 1, &count), 0);
	assert_int_equal(count, 1);
	assert_int_equal(strlen(out[0].name), sizeof(out[0].name) - 1);
	assert_int_equal(out[0].family, NPU_FAMILY_UNKNOWN);
}

static void test_vendor_name_copy(void **state)
{
	(void)state;
	char dst[8];
	const unsigned char control[] = { '9', '1', '0', '\n', 0x80, 'B', '\0', 'Z' };
	copy_vendor_name(dst, sizeof(dst), control, sizeof(control));
	assert_string_equal(dst, "910??B");
	const unsigned char full[4] = { 'a', 'b', 'c', 'd' };
	copy_vendor_name(dst, sizeof(dst), full, sizeof(full));
	assert_string_equal(dst, "abcd");
	const unsigned char longer[12] = "0123456789A";
	copy_vendor_name(dst, sizeof(dst), longer, sizeof(longer));
	assert_string_equal(dst, "0123456");
}

static void test_mock_health(void **state)
{
	(void)state;
	mock_set(NULL, 0, NULL, 0);
	struct dcmi_lib lib = mock_lib();
	struct npu_chip chip = { .card_id = 3, .device_id = 1 };
	unsigned int health = 77;

	mock.health = 2;
	assert_int_equal(dcmi_chip_health(&lib, &chip, &health), 0);
	assert_int_equal(health, 2);

	mock.health = DCMI_HEALTH_ABSENT;
	assert_int_equal(dcmi_chip_health(&lib, &chip, &health), 0);
	assert_int_equal(health, DCMI_HEALTH_ABSENT);

	health = 77;
	mock.health_rc = DCMI_ERR_NOT_READY;
	assert_int_equal(dcmi_chip_health(&lib, &chip, &health), -EIO);
	assert_int_equal(health, 77);
	assert_int_equal(dcmi_last_error(&lib).code, DCMI_ERR_NOT_READY);
	assert_string_equal(dcmi_last_error(&lib).call, "dcmi_get_device_health");

	/* A chip found by devfs has no DCMI address. */
	struct npu_chip devfs_chip = { .phy_id = 0, .card_id = -1, .device_id = -1 };
	assert_int_equal(dcmi_chip_health(&lib, &devfs_chip, &health), -EINVAL);
}

static void test_mock_error_codes(void **state)
{
	(void)state;
	mock_set(NULL, 0, NULL, 0);
	struct dcmi_lib lib = mock_lib();
	struct npu_chip chip = { .card_id = 0, .device_id = 0 };
	unsigned int codes[DCMI_MAX_ERROR_CODES + 8];
	size_t count = 99;

	mock.error_count = 2;
	assert_int_equal(dcmi_chip_error_codes(&lib, &chip, codes, 8, &count), 0);
	assert_int_equal(count, 2);
	assert_int_equal(codes[0], 0x80E00000u);
	assert_int_equal(codes[1], 0x80E00001u);

	mock.error_count = 1000;
	assert_int_equal(dcmi_chip_error_codes(&lib, &chip, codes, ELEMENTSOF(codes), &count), 0);
	assert_int_equal(count, DCMI_MAX_ERROR_CODES);
	assert_int_equal(dcmi_chip_error_codes(&lib, &chip, codes, 3, &count), 0);
	assert_int_equal(count, 3);

	mock.error_count = -4;
	assert_int_equal(dcmi_chip_error_codes(&lib, &chip, codes, 8, &count), 0);
	assert_int_equal(count, 0);

	lib.fn.dcmi_get_device_errorcode_v2 = NULL;
	count = 99;
	assert_int_equal(dcmi_chip_error_codes(&lib, &chip, codes, 8, &count), 0);
	assert_int_equal(count, 0);
}

static void test_mock_subscribe(void **state)
{
	(void)state;
	mock_set(NULL, 0, NULL, 0);
	struct dcmi_lib lib = mock_lib();

	int events = 0;
	struct dcmi_event event = { .type = DCMI_EVENT_TYPE_DMS_FAULT };
	assert_int_equal(dcmi_subscribe_faults(&lib, count_calls, &events), 0);
	assert_int_equal(mock.subscribe_calls, 1);
	mock.subscribe_handler(&event);
	assert_int_equal(events, 1);
	/* One subscriber at a time; once it is dropped, DCMI's calls reach nobody. */
	assert_int_equal(dcmi_subscribe_faults(&lib, noop_handler, NULL), -EBUSY);
	dcmi_unsubscribe_faults();
	mock.subscribe_handler(&event);
	assert_int_equal(events, 1);

	assert_int_equal(dcmi_subscribe_faults(&lib, noop_handler, NULL), 0);
	assert_int_equal(mock.subscribe_calls, 2);

	mock.subscribe_rc = DCMI_ERR_NOT_SUPPORTED;
	assert_int_equal(dcmi_subscribe_faults(&lib, noop_handler, NULL), -EOPNOTSUPP);

	mock.subscribe_rc = DCMI_ERR_INNER;
	assert_int_equal(dcmi_subscribe_faults(&lib, noop_handler, NULL), -EIO);
	assert_int_equal(dcmi_last_error(&lib).code, DCMI_ERR_INNER);
	assert_string_equal(dcmi_last_error(&lib).call, "dcmi_subscribe_fault_event");

	lib.fn.dcmi_subscribe_fault_event = NULL;
	assert_int_equal(dcmi_subscribe_faults(&lib, noop_handler, NULL), -EOPNOTSUPP);
	assert_int_equal(mock.subscribe_calls, 4);
}

/* What DCMI gives for the RoCE port is checked before it is believed: a
 * mask that is no prefix, or an address type the header does not define,
 * is refused; an all-zero address is a port without one. */
static void test_mock_roce_address(void **state)
{
	(void)state;
	mock_set(NULL, 0, NULL, 0);
	struct dcmi_lib lib = mock_lib();
	struct npu_chip chip = { .card_id = 0, .device_id = 0 };
	struct npu_net net = { .link = NPU_LINK_UP };

	/* Without the symbol, as in older drivers. */
	assert_int_equal(dcmi_chip_roce_address(&lib, &chip, &net), -EOPNOTSUPP);
	lib.fn.dcmi_get_device_ip = mock_get_device_ip;

	mock_ip = (struct dcmi_ip_addr){ .u_addr.ip4 = { 10, 0, 3, 7 }, .ip_type = DCMI_IPADDR_TYPE_V4 };
	mock_mask = (struct dcmi_ip_addr){ .u_addr.ip4 = { 255, 255, 240, 0 }, .ip_type = DCMI_IPADDR_TYPE_V4 };
	assert_int_equal(dcmi_chip_roce_address(&lib, &chip, &net), 0);
	assert_true(net.has_ip);
	assert_false(net.ipv6);
	assert_memory_equal(net.ip, ((uint8_t[]){ 10, 0, 3, 7 }), 4);
	assert_int_equal(net.prefix_len, 20);
	assert_int_equal(net.link, NPU_LINK_UP); /* the other parts are left alone */

	struct npu_net before = net;
	mock_mask.u_addr.ip4[3] = 1; /* 255.255.240.1 */
	assert_int_equal(dcmi_chip_roce_address(&lib, &chip, &net), -EPROTO);
	assert_memory_equal(&net, &before, sizeof(net));
	mock_mask.u_addr.ip4[3] = 0;
	mock_ip.ip_type = 2; /* "any": not an address */
	assert_int_equal(dcmi_chip_roce_address(&lib, &chip, &net), -EPROTO);

	mock_ip = (struct dcmi_ip_addr){ .ip_type = DCMI_IPADDR_TYPE_V4 };
	mock_mask = (struct dcmi_ip_addr){ .ip_type = DCMI_IPADDR_TYPE_V4 };
	assert_int_equal(dcmi_chip_roce_address(&lib, &chip, &net), 0);
	assert_false(net.has_ip);

	mock_ip = (struct dcmi_ip_addr){ .u_addr.ip6 = { 0xfd, 0, [15] = 9 }, .ip_type = DCMI_IPADDR_TYPE_V6 };
	mock_mask = (struct dcmi_ip_addr){ .u_addr.ip6 = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff },
					   .ip_type = DCMI_IPADDR_TYPE_V6 };
	assert_int_equal(dcmi_chip_roce_address(&lib, &chip, &net), 0);
	assert_true(net.has_ip && net.ipv6);
	assert_int_equal(net.prefix_len, 64);
	assert_int_equal(net.ip[15], 9);
}

static void test_mock_driver_version(void **state)
{
	(void)state;
	mock_set(NULL, 0, NULL, 0);
	struct dcmi_lib lib = mock_lib();
	char version[64] = "";

	assert_int_equal(dcmi_driver_version(&lib, version, sizeof(version)), 0);
	assert_string_equal(version, "24.1.rc1");

	char small[4] = "old";
	assert_int_equal(dcmi_driver_version(&lib, small, sizeof(small)), -ENAMETOOLONG);
	assert_string_equal(small, "old");

	/* A vendor that fills the whole buffer still gives a bounded string. */
	mock.version_fills_buffer = true;
	char big[512];
	assert_int_equal(dcmi_driver_version(&lib, big, sizeof(big)), 0);
	assert_true(strlen(big) < 256);

	mock.version_rc = DCMI_ERR_INNER;
	assert_int_equal(dcmi_driver_version(&lib, version, sizeof(version)), -EIO);

	lib.fn.dcmi_get_dcmi_version = NULL;
	assert_int_equal(dcmi_driver_version(&lib, version, sizeof(version)), -EOPNOTSUPP);
}

/* ---- the search order ------------------------------------------------ */

/* dcmi_lib_open of search fails with err and opens nothing; why holds its
 * reason. */
static void expect_open_fails(const struct dcmi_search *search, int err, char *why, size_t why_size)
{
	struct dcmi_lib *lib = NULL;
	why[0] = '\0';
	assert_int_equal(dcmi_lib_open(search, &lib, why, why_size), err);
	assert_null(lib);
}

/* The same, its reason being exactly what fmt makes. */
static void __attribute__((format(printf, 3, 4)))
expect_open_refused(const struct dcmi_search *search, int err, const char *fmt, ...)
{
	char why[1024], expected[PATH_MAX + 64];
	expect_open_fails(search, err, why, sizeof(why));
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(expected, sizeof(expected), fmt, ap);
	va_end(ap);
	assert_true(n >= 0 && (size_t)n < sizeof(expected));
	assert_string_equal(why, expected);
}

static struct dcmi_search search_under(const char *root)
{
	return (struct dcmi_search){ .host_root = root, .driver_path = "/usr/local/Ascend/driver" };
}

/* A state file the simulator accepts, with one chip. */
static void simple_state(const char *root)
{
	write_state(root, "driver 24.1.rc1\nchip phy=0 card=0 device=0 logic=0 name=910B3\n");
}

static void expect_loaded(const struct dcmi_search *search, const char *expected_path)
{
	struct dcmi_lib *lib = NULL;
	char why[1024] = "";
	int r = dcmi_lib_open(search, &lib, why, sizeof(why));
	if (r < 0)
		fail_msg("dcmi_lib_open: %d: %s", r, why);
	assert_non_null(lib);
	char *real = realpath(expected_path, NULL);
	assert_non_null(real);
	assert_string_equal(dcmi_lib_path(lib), real);
	free(real);
	dcmi_lib_close(lib);
}

/* The default places, last in the search order first. */
static const char *const default_dirs[] = {
	"usr/local/dcmi",
	"usr/local/Ascend/driver/lib64",
	"usr/local/Ascend/driver/lib64/driver",
};

/* The simulator in the first n of default_dirs under f->root: the search
 * loads the last of them, the first in its order. */
static void expect_search_loads_nth(const struct fixture *f, size_t n)
{
	simple_state(f->root);
	char path[PATH_MAX];
	for (size_t i = 0; i < n; i++)
		install_lib(FAKE_DCMI_LIB, f->root, default_dirs[i], path, sizeof(path));
	struct dcmi_search search = search_under(f->root);
	expect_loaded(&search, path);
}

static void test_search_driver_lib64_driver(void **state)
{
	expect_search_loads_nth(*state, 3);
}

static void test_search_driver_lib64(void **state)
{
	expect_search_loads_nth(*state, 2);
}

static void test_search_usr_local_dcmi(void **state)
{
	expect_search_loads_nth(*state, 1);
}

static void test_search_custom_driver_path(void **state)
{
	struct fixture *f = *state;
	simple_state(f->root);
	char in_custom[PATH_MAX], in_dcmi[PATH_MAX];
	install_lib(FAKE_DCMI_LIB, f->root, "usr/local/dcmi", in_dcmi, sizeof(in_dcmi));
	install_lib(FAKE_DCMI_LIB, f->root, "opt/drv/lib64/driver", in_custom, sizeof(in_custom));
	struct dcmi_search search = { .host_root = f->root, .driver_path = "/opt/drv/" };
	expect_loaded(&search, in_custom);
}

static void test_search_ld_library_path_first(void **state)
{
	struct fixture *f = *state;
	simple_state(f->root);
	char in_driver[PATH_MAX], in_ld[PATH_MAX], ld_dir[PATH_MAX], empty_dir[PATH_MAX], ld_path[3 * PATH_MAX];
	install_lib(FAKE_DCMI_LIB, f->root, "usr/local/Ascend/driver/lib64/driver", in_driver, sizeof(in_driver));
	install_lib(FAKE_DCMI_LIB, f->root, "ld/lib", in_ld, sizeof(in_ld));
	make_dirs(f->root, "ld/empty", 0755);
	assert_int_equal(path_join(ld_dir, sizeof(ld_dir), f->root, "ld/lib"), 0);
	assert_int_equal(path_join(empty_dir, sizeof(empty_dir), f->root, "ld/empty"), 0);
	/* Empty entries are skipped, not read as the current directory. */
	assert_int_equal(str_printf(ld_path, sizeof(ld_path), "::%s::%s/:", empty_dir, ld_dir), 0);

	struct dcmi_search search = search_under(f->root);
	search.ld_library_path = ld_path;
	expect_loaded(&search, in_ld);
}

static void test_search_first_existing_decides(void **state)
{
	struct fixture *f = *state;
	simple_state(f->root);
	char in_driver[PATH_MAX], in_dcmi[PATH_MAX];
	install_lib(FAKE_DCMI_LIB, f->root, "usr/local/dcmi", in_dcmi, sizeof(in_dcmi));
	install_lib(FAKE_DCMI_LIB, f->root, "usr/local/Ascend/driver/lib64/driver", in_driver, sizeof(in_driver));
	assert_int_equal(chmod(in_driver, 0666), 0);

	/* An untrusted first candidate is a refusal, not a reason to go on. */
	struct dcmi_search search = search_under(f->root);
	expect_open_refused(&search, -EPERM, "%s: file is group or other writable", in_driver);
}

static void test_search_explicit_path(void **state)
{
	struct fixture *f = *state;
	simple_state(f->root);
	char in_driver[PATH_MAX], explicit_lib[PATH_MAX];
	install_lib(FAKE_DCMI_LIB, f->root, "usr/local/Ascend/driver/lib64/driver", in_driver, sizeof(in_driver));
	install_lib(FAKE_DCMI_LIB, f->root, "custom", explicit_lib, sizeof(explicit_lib));

	struct dcmi_search search = search_under(f->root);
	search.explicit_path = explicit_lib;
	expect_loaded(&search, explicit_lib);

	/* When set, it is the only candidate. */
	char missing[PATH_MAX];
	assert_int_equal(path_join(missing, sizeof(missing), f->root, "nope/libdcmi.so"), 0);
	search.explicit_path = missing;
	char why[1024];
	expect_open_fails(&search, -ENOENT, why, sizeof(why));
	assert_contains(why, missing);
}

static void test_load_lacking_symbols(void **state)
{
	struct fixture *f = *state;
	/* Any shared library that is not DCMI: the C math library will do. */
	void *libm = dlopen("libm.so.6", RTLD_NOW | RTLD_LOCAL);
	assert_non_null(libm);
	struct link_map *map = NULL;
	assert_int_equal(dlinfo(libm, RTLD_DI_LINKMAP, &map), 0);
	char fake[PATH_MAX];
	install_lib(map->l_name, f->root, "lib", fake, sizeof(fake));
	dlclose(libm);

	struct dcmi_search search = { .explicit_path = fake };
	expect_open_refused(&search, -ELIBBAD, "libdcmi.so at %s lacks required symbol dcmi_init", fake);
}

static void test_load_not_a_library(void **state)
{
	struct fixture *f = *state;
	char path[PATH_MAX];
	make_dirs(f->root, "lib", 0755);
	assert_int_equal(path_join(path, sizeof(path), f->root, "lib/libdcmi.so"), 0);
	write_file(path, "this is not an ELF file\n", 0755);

	struct dcmi_search search = { .explicit_path = path };
	char why[1024];
	expect_open_fails(&search, -ELIBBAD, why, sizeof(why));
	assert_contains(why, path);
}

static void test_load_init_fails(void **state)
{
	struct fixture *f = *state;
	char path[PATH_MAX], missing_state[PATH_MAX];
	install_lib(FAKE_DCMI_LIB, f->root, "lib", path, sizeof(path));
	/* The simulator's dcmi_init fails when its state directory is missing. */
	assert_int_equal(path_join(missing_state, sizeof(missing_state), f->root, "no-such-dir/state"), 0);
	assert_int_equal(setenv(STATE_ENV, missing_state, 1), 0);

	struct dcmi_search search = { .explicit_path = path };
	expect_open_refused(&search, -EIO, "dcmi_init of %s failed with code -8005", path);
}

/* ---- the dynamic loader's search, in a fresh process ------------------ */

/* This test's executable: argv[0] rather than /proc/self/exe, which names
 * the tool when running under valgrind. */
static const char *self_exe = "/proc/self/exe";

/* Runs this test binary again with only `scenario`, a clean environment for
 * the loader (LD_LIBRARY_PATH = ld_path or unset) and root in ROOT_ENV. */
static void run_child(const char *scenario, const char *root, const char *ld_path)
{
	static char scenario_var[128], root_var[128], ld_var[PATH_MAX + 32];
	assert_int_equal(str_printf(scenario_var, sizeof(scenario_var), SCENARIO_ENV "=%s", scenario), 0);
	assert_int_equal(str_printf(root_var, sizeof(root_var), ROOT_ENV "=%s", root), 0);
	if (ld_path)
		assert_int_equal(str_printf(ld_var, sizeof(ld_var), "LD_LIBRARY_PATH=%s", ld_path), 0);

	size_t n = 0;
	while (environ[n])
		n++;
	char **envp = calloc(n + 4, sizeof(*envp));
	assert_non_null(envp);
	size_t k = 0;
	for (size_t i = 0; i < n; i++) {
		if (strncmp(environ[i], "LD_LIBRARY_PATH=", 16) == 0 || strncmp(environ[i], "TEST_DCMI_", 10) == 0)
			continue;
		envp[k++] = environ[i];
	}
	envp[k++] = scenario_var;
	envp[k++] = root_var;
	if (ld_path)
		envp[k++] = ld_var;
	envp[k] = NULL;

	static char argv0[] = "test_dcmi_loader";
	char *const argv[] = { argv0, NULL };
	fflush(stdout);
	fflush(stderr);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		execve(self_exe, argv, envp);
		_exit(127);
	}
	free(envp);
	int status = 0;
	assert_int_equal(waitpid(pid, &status, 0), pid);
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
		fail_msg("child scenario %s failed (status 0x%x)", scenario, (unsigned)status);
}

static const char *child_root(void)
{
	const char *root = getenv(ROOT_ENV);
	assert_non_null(root);
	return root;
}

/* Child: nothing anywhere, so the loader's search fails too. */
static void child_not_found(void **state)
{
	(void)state;
	const char *root = child_root();
	struct dcmi_search search = search_under(root);
	search.ld_library_path = "/nonexistent-a::/nonexistent-b";
	struct dcmi_lib *lib = NULL;
	char why[2048] = "";
	assert_int_equal(dcmi_lib_open(&search, &lib, why, sizeof(why)), -ENOENT);
	assert_null(lib);
	char expected[3 * PATH_MAX];
	assert_int_equal(str_printf(expected, sizeof(expected),
				    "libdcmi.so not found (searched: /nonexistent-a/libdcmi.so, "
				    "/nonexistent-b/libdcmi.so, %s/usr/local/Ascend/driver/lib64/driver/libdcmi.so, "
				    "%s/usr/local/Ascend/driver/lib64/libdcmi.so, %s/usr/local/dcmi/libdcmi.so, "
				    "ldconfig cache: ",
				    root, root, root),
			 0);
	assert_int_equal(strncmp(why, expected, strlen(expected)), 0);

	/* A long search list is cut short visibly, and the end still says
	 * what the loader answered. */
	static char long_path[64 * 40];
	size_t len = 0;
	for (int i = 0; i < 60; i++) {
		int n = snprintf(long_path + len, sizeof(long_path) - len, "%s/nonexistent-dir-%02d", i ? ":" : "", i);
		assert_true(n > 0 && (size_t)n < sizeof(long_path) - len);
		len += (size_t)n;
	}
	search.ld_library_path = long_path;
	assert_int_equal(dcmi_lib_open(&search, &lib, why, sizeof(why)), -ENOENT);
	assert_contains(why, "/nonexistent-dir-00/libdcmi.so, ");
	assert_contains(why, ", ..., ldconfig cache: ");
	assert_null(strstr(why, "nonexistent-dir-59"));

	/* With the host's own root the paths join without a double slash. */
	if (path_exists("/usr/local/Ascend/driver/lib64/driver/libdcmi.so") ||
	    path_exists("/usr/local/Ascend/driver/lib64/libdcmi.so") || path_exists("/usr/local/dcmi/libdcmi.so"))
		return;
	search = (struct dcmi_search){ .host_root = "/" };
	assert_int_equal(dcmi_lib_open(&search, &lib, why, sizeof(why)), -ENOENT);
	assert_contains(why, "(searched: /usr/local/Ascend/driver/lib64/driver/libdcmi.so, "
			     "/usr/local/Ascend/driver/lib64/libdcmi.so, /usr/local/dcmi/libdcmi.so, ldconfig cache");
}

/* Child: the simulator's state under root, and a search of root/empty
 * (where nothing is), which leaves the loader's own search to find
 * root/sys/libdcmi.so; sys is root/sys. */
static struct dcmi_search child_search_nothing(char *empty, char *sys)
{
	const char *root = child_root();
	char state_path[PATH_MAX];
	assert_int_equal(path_join(empty, PATH_MAX, root, "empty"), 0);
	assert_int_equal(path_join(state_path, sizeof(state_path), root, "state"), 0);
	assert_int_equal(path_join(sys, PATH_MAX, root, "sys"), 0);
	assert_int_equal(setenv(STATE_ENV, state_path, 1), 0);
	return search_under(empty);
}

/* Child: the loader finds the library through LD_LIBRARY_PATH = root/sys. */
static void child_loader_finds(void **state)
{
	(void)state;
	char empty[PATH_MAX], sys[PATH_MAX], expected[PATH_MAX];
	struct dcmi_search search = child_search_nothing(empty, sys);
	assert_int_equal(path_join(expected, sizeof(expected), sys, "libdcmi.so"), 0);
	expect_loaded(&search, expected);
}

/* Child: the loader finds it in a directory others can write to. */
static void child_loader_untrusted(void **state)
{
	(void)state;
	char empty[PATH_MAX], sys[PATH_MAX];
	struct dcmi_search search = child_search_nothing(empty, sys);
	expect_open_refused(&search, -EPERM, "%s: directory is group or other writable", sys);
}

static void test_loader_cache_not_found(void **state)
{
	struct fixture *f = *state;
	run_child("not_found", f->root, NULL);
}

/* What child_search_nothing expects: a state, an empty root/empty and the
 * simulator in root/sys, given sys_mode; then the child runs with
 * LD_LIBRARY_PATH = root/sys. */
static void run_child_with_sys(const struct fixture *f, const char *scenario, mode_t sys_mode)
{
	simple_state(f->root);
	char lib[PATH_MAX], dir[PATH_MAX];
	make_dirs(f->root, "empty", 0755);
	install_lib(FAKE_DCMI_LIB, f->root, "sys", lib, sizeof(lib));
	assert_int_equal(path_join(dir, sizeof(dir), f->root, "sys"), 0);
	assert_int_equal(chmod(dir, sys_mode), 0);
	run_child(scenario, f->root, dir);
}

static void test_loader_cache_finds(void **state)
{
	run_child_with_sys(*state, "loader_finds", 0755);
}

static void test_loader_cache_untrusted(void **state)
{
	run_child_with_sys(*state, "loader_untrusted", 0777);
}

/* ---- against the simulator -------------------------------------------- */

/* Loads a fresh copy of the simulator under f->root with the given state. */
static struct dcmi_lib *open_simulator(const struct fixture *f, const char *state_text)
{
	write_state(f->root, state_text);
	char path[PATH_MAX];
	install_lib(FAKE_DCMI_LIB, f->root, "usr/local/Ascend/driver/lib64/driver", path, sizeof(path));
	struct dcmi_search search = search_under(f->root);
	struct dcmi_lib *lib = NULL;
	char why[1024] = "";
	int r = dcmi_lib_open(&search, &lib, why, sizeof(why));
	if (r < 0)
		fail_msg("dcmi_lib_open: %d: %s", r, why);
	return lib;
}

/* Cards 1, 3 and 9; logic ids unrelated to phy ids; one absent chip. */
static const char layout_state[] = "driver 24.1.rc1\n"
				   "subscribe off\n"
				   "chip phy=4 card=3 device=0 logic=1 name=910B3 health=0 aicore=24 board=0x33\n"
				   "chip phy=0 card=1 device=0 logic=2 name=310P3 health=1\n"
				   "chip phy=2 card=1 device=1 logic=0 name=310P3 health=absent\n"
				   "chip phy=7 card=9 device=0 logic=3 name=910B4 health=3 board=0xb1 "
				   "errors=80E01801,80E18402\n";

/* The simulator with layout_state, its 4 chips enumerated into chips. */
static struct dcmi_lib *open_layout(const struct fixture *f, struct npu_chip chips[static 8])
{
	struct dcmi_lib *lib = open_simulator(f, layout_state);
	size_t count = 0;
	assert_int_equal(dcmi_enumerate(lib, chips, 8, &count), 0);
	assert_int_equal(count, 4);
	return lib;
}

static void test_sim_enumerate(void **state)
{
	struct npu_chip chips[8];
	struct dcmi_lib *lib = open_layout(*state, chips);

	static const struct {
		uint32_t phy, logic;
		int card, device;
		const char *name;
		enum npu_family family;
	} expected[] = {
		{ 0, 2, 1, 0, "310P3", NPU_FAMILY_310P },
		{ 2, 0, 1, 1, "310P3", NPU_FAMILY_310P },
		{ 4, 1, 3, 0, "910B3", NPU_FAMILY_910B },
		{ 7, 3, 9, 0, "910B4", NPU_FAMILY_A3 },
	};
	for (size_t i = 0; i < 4; i++) {
		assert_int_equal(chips[i].phy_id, expected[i].phy);
		assert_int_equal(chips[i].logic_id, expected[i].logic);
		assert_int_equal(chips[i].card_id, expected[i].card);
		assert_int_equal(chips[i].device_id, expected[i].device);
		assert_string_equal(chips[i].name, expected[i].name);
		assert_int_equal(chips[i].family, expected[i].family);
	}
	assert_int_equal(chips[2].aicore_count, 24);
	assert_true(chips[2].has_board_id);
	assert_int_equal(chips[2].board_id, 0x33);
	assert_true(chips[3].has_board_id);
	assert_int_equal(chips[3].board_id, 0xb1);

	size_t count = 0;
	assert_int_equal(dcmi_enumerate(lib, chips, 3, &count), -E2BIG);
	dcmi_lib_close(lib);
}

static void test_sim_health_and_errors(void **state)
{
	struct npu_chip chips[8];
	struct dcmi_lib *lib = open_layout(*state, chips);

	unsigned int health = 77;
	assert_int_equal(dcmi_chip_health(lib, &chips[0], &health), 0);
	assert_int_equal(health, 1);
	assert_int_equal(dcmi_chip_health(lib, &chips[1], &health), 0);
	assert_int_equal(health, DCMI_HEALTH_ABSENT);
	assert_int_equal(dcmi_chip_health(lib, &chips[3], &health), 0);
	assert_int_equal(health, 3);

	unsigned int codes[DCMI_MAX_ERROR_CODES];
	size_t n = 99;
	assert_int_equal(dcmi_chip_error_codes(lib, &chips[3], codes, DCMI_MAX_ERROR_CODES, &n), 0);
	assert_int_equal(n, 2);
	assert_int_equal(codes[0], 0x80E01801u);
	assert_int_equal(codes[1], 0x80E18402u);
	assert_int_equal(dcmi_chip_error_codes(lib, &chips[3], codes, 1, &n), 0);
	assert_int_equal(n, 1);
	assert_int_equal(dcmi_chip_error_codes(lib, &chips[2], codes, DCMI_MAX_ERROR_CODES, &n), 0);
	assert_int_equal(n, 0);

	/* An absent chip answers identity and health calls only. */
	n = 99;
	assert_int_equal(dcmi_chip_error_codes(lib, &chips[1], codes, DCMI_MAX_ERROR_CODES, &n), -EIO);
	assert_int_equal(n, 99);
	assert_int_equal(dcmi_last_error(lib).code, DCMI_ERR_DEVICE_NOT_EXIST);
	assert_string_equal(dcmi_last_error(lib).call, "dcmi_get_device_errorcode_v2");

	/* A chip DCMI does not know. */
	struct npu_chip ghost = { .phy_id = 9, .card_id = 42, .device_id = 0 };
	assert_int_equal(dcmi_chip_health(lib, &ghost, &health), -EIO);
	assert_true(dcmi_last_error(lib).code < 0);

	char version[64] = "";
	assert_int_equal(dcmi_driver_version(lib, version, sizeof(version)), 0);
	assert_string_equal(version, "24.1.rc1");

	/* "subscribe off" makes the simulator answer "not supported". */
	assert_int_equal(dcmi_subscribe_faults(lib, noop_handler, NULL), -EOPNOTSUPP);
	dcmi_lib_close(lib);
}

/* A chip's network identity through the simulator: a 910B with an IPv4
 * RoCE address and a link up, one with an IPv6 address whose link is down,
 * an A3 chip in a super pod whose detection has not started, and a 310P
 * without any of it; then a failing call. */
static void test_sim_network(void **state)
{
	struct fixture *f = *state;
	struct dcmi_lib *lib = open_simulator(
		f, "chip phy=0 name=910B3 ip=192.168.1.8/24 link=up\n"
		   "chip phy=1 name=910B3 ip=fd00::18/64 link=down\n"
		   "chip phy=2 name=910B3 board=0xb1 ip=192.168.1.10/24 link=init super_pod=3 sdid=106 server_index=1\n"
		   "chip phy=3 name=310P3\n"
		   "chip phy=4 name=910B3 ip=192.168.1.12/24 link=up fail=ip:-8005,network_health\n");
	struct npu_chip chips[8];
	size_t count = 0;
	assert_int_equal(dcmi_enumerate(lib, chips, 8, &count), 0);
	assert_int_equal(count, 5);

	struct npu_net net[5];
	memset(net, 0, sizeof(net));
	for (size_t i = 0; i < 3; i++) {
		assert_int_equal(dcmi_chip_roce_address(lib, &chips[i], &net[i]), 0);
		assert_int_equal(dcmi_chip_link(lib, &chips[i], &net[i]), 0);
	}
	assert_true(net[0].has_ip && !net[0].ipv6);
	assert_memory_equal(net[0].ip, ((uint8_t[]){ 192, 168, 1, 8 }), 4);
	assert_int_equal(net[0].prefix_len, 24);
	assert_int_equal(net[0].link, NPU_LINK_UP);
	assert_true(net[1].has_ip && net[1].ipv6);
	assert_int_equal(net[1].ip[0], 0xfd);
	assert_int_equal(net[1].ip[15], 0x18);
	assert_int_equal(net[1].prefix_len, 64);
	assert_int_equal(net[1].link, NPU_LINK_DOWN);
	assert_int_equal(net[1].link_code, 3);
	assert_int_equal(net[2].link, NPU_LINK_UNKNOWN);

	assert_int_equal(dcmi_chip_super_pod(lib, &chips[2], &net[2]), 0);
	assert_true(net[2].has_super_pod);
	assert_int_equal(net[2].super_pod_id, 3);
	assert_int_equal(net[2].sdid, 106);
	assert_int_equal(net[2].server_index, 1);
	assert_int_equal(dcmi_chip_super_pod(lib, &chips[0], &net[0]), -EOPNOTSUPP);
	assert_false(net[0].has_super_pod);

	/* A 310P has none of it: not supported, never invented. */
	assert_int_equal(dcmi_chip_roce_address(lib, &chips[3], &net[3]), -EOPNOTSUPP);
	assert_int_equal(dcmi_chip_link(lib, &chips[3], &net[3]), -EOPNOTSUPP);
	assert_int_equal(dcmi_chip_super_pod(lib, &chips[3], &net[3]), -EOPNOTSUPP);
	assert_false(net[3].has_ip);

	/* A failing call is an error with its code, not an empty answer. */
	assert_int_equal(dcmi_chip_roce_address(lib, &chips[4], &net[4]), -EIO);
	assert_int_equal(dcmi_last_error(lib).code, DCMI_ERR_INNER);
	assert_string_equal(dcmi_last_error(lib).call, "dcmi_get_device_ip");
	assert_int_equal(dcmi_chip_link(lib, &chips[4], &net[4]), -EIO);
	assert_string_equal(dcmi_last_error(lib).call, "dcmi_get_device_network_health");
	assert_false(net[4].has_ip);
	dcmi_lib_close(lib);
}

static void test_sim_device_share(void **state)
{
	struct fixture *f = *state;
	struct dcmi_lib *lib = open_simulator(f, "chip phy=0 name=910B3\n"
						 "chip phy=1 name=910B3\nshare phy=1 mode=off\n"
						 "chip phy=2 name=910B3 fail=get_device_share_enable:-8255\n"
						 "chip phy=3 name=910B3 fail=set_device_share_enable:-8002\n");
	struct npu_chip chips[8];
	size_t count = 0;
	assert_int_equal(dcmi_enumerate(lib, chips, 8, &count), 0);
	assert_int_equal(count, 4);

	bool on = false;
	assert_int_equal(dcmi_chip_share_mode(lib, &chips[0], &on), 0);
	assert_true(on);
	assert_int_equal(dcmi_chip_share_mode(lib, &chips[1], &on), 0);
	assert_false(on);
	on = true;
	assert_int_equal(dcmi_chip_share_mode(lib, &chips[2], &on), -EOPNOTSUPP);
	assert_true(on); /* untouched */
	assert_string_equal(dcmi_last_error(lib).call, "dcmi_get_device_share_enable");

	/* Switched on, it reads on; a refused switch is -EIO with DCMI's code. */
	assert_int_equal(dcmi_chip_share_enable(lib, &chips[1]), 0);
	assert_int_equal(dcmi_chip_share_mode(lib, &chips[1], &on), 0);
	assert_true(on);
	assert_int_equal(dcmi_chip_share_enable(lib, &chips[3]), -EIO);
	assert_int_equal(dcmi_last_error(lib).code, DCMI_ERR_NOT_PERMITTED);
	assert_string_equal(dcmi_last_error(lib).call, "dcmi_set_device_share_enable");

	struct npu_chip devfs_chip = { .phy_id = 0, .card_id = -1, .device_id = -1 };
	assert_int_equal(dcmi_chip_share_mode(lib, &devfs_chip, &on), -EINVAL);
	assert_int_equal(dcmi_chip_share_enable(lib, &devfs_chip), -EINVAL);
	dcmi_lib_close(lib);
}

/* Polls health until it equals want; the simulator notices a replaced state
 * file asynchronously, so give it the suite's deadline. */
static void wait_health(struct dcmi_lib *lib, const struct npu_chip *chip, unsigned int want)
{
	int64_t deadline = now_ms() + WAIT_MS;
	unsigned int health = 0;
	int r = 0;
	for (;;) {
		r = dcmi_chip_health(lib, chip, &health);
		if (r == 0 && health == want)
			return;
		if (now_ms() > deadline)
			break;
		nanosleep(&(struct timespec){ .tv_nsec = 10 * 1000 * 1000 }, NULL);
	}
	fail_msg("health of phy %u: r=%d health=%u, want %u", chip->phy_id, r, health, want);
}

static void test_sim_state_change(void **state)
{
	struct fixture *f = *state;
	struct dcmi_lib *lib = open_simulator(f, "chip phy=1 card=0 device=0 logic=5 name=910B3 health=0\n");
	struct npu_chip chips[2];
	size_t count = 0;
	assert_int_equal(dcmi_enumerate(lib, chips, 2, &count), 0);
	assert_int_equal(count, 1);
	wait_health(lib, &chips[0], 0);

	write_state(f->root, "chip phy=1 card=0 device=0 logic=5 name=910B3 health=2\n");
	wait_health(lib, &chips[0], 2);
	write_state(f->root, "chip phy=1 card=0 device=0 logic=5 name=910B3 health=absent\n");
	wait_health(lib, &chips[0], DCMI_HEALTH_ABSENT);
	dcmi_lib_close(lib);
}

static atomic_int fault_events;
static atomic_int fault_last_logic;

static void count_fault(void *ctx, const struct dcmi_event *event)
{
	(void)ctx;
	if (event->type == DCMI_EVENT_TYPE_DMS_FAULT)
		atomic_store(&fault_last_logic, event->event_t.dms_event.deviceid);
	atomic_fetch_add(&fault_events, 1);
}

static void test_sim_subscribe(void **state)
{
	struct fixture *f = *state;
	atomic_store(&fault_events, 0);
	atomic_store(&fault_last_logic, -1);
	struct dcmi_lib *lib = open_simulator(f, "subscribe on\nchip phy=3 card=2 device=0 logic=6 health=0\n");
	assert_int_equal(dcmi_subscribe_faults(lib, count_fault, NULL), 0);

	write_state(f->root, "subscribe on\nchip phy=3 card=2 device=0 logic=6 health=3\n");
	int64_t deadline = now_ms() + WAIT_MS;
	while (atomic_load(&fault_events) == 0 && now_ms() < deadline)
		nanosleep(&(struct timespec){ .tv_nsec = 10 * 1000 * 1000 }, NULL);
	assert_true(atomic_load(&fault_events) > 0);
	assert_int_equal(atomic_load(&fault_last_logic), 6);
	dcmi_unsubscribe_faults();
	dcmi_lib_close(lib);
}


/* ---- vNPUs carved in the background ------------------------------------ */

static void wake_eventfd(void *ctx)
{
	uint64_t one = 1;
	if (write(*(int *)ctx, &one, sizeof(one)) < 0)
		abort();
}

/* Waits for the background call's done callback, then takes its outcome. */
static struct dcmi_carve_outcome carve_wait(struct dcmi_lib *lib, int efd)
{
	struct pollfd p = { .fd = efd, .events = POLLIN };
	assert_int_equal(poll(&p, 1, WAIT_MS), 1);
	uint64_t n;
	assert_int_equal(read(efd, &n, sizeof(n)), sizeof(n));
	struct dcmi_carve_outcome out;
	assert_int_equal(dcmi_vnpu_take(lib, false, &out), 0);
	return out;
}

static bool vnode_exists(const struct fixture *f, unsigned id)
{
	char path[PATH_MAX];
	snprintf(path, sizeof(path), "%s/dev/vdavinci%u", f->root, id);
	return access(path, F_OK) == 0;
}

static void test_sim_carve(void **state)
{
	struct fixture *f = *state;
	char dev[PATH_MAX];
	snprintf(dev, sizeof(dev), "%s/dev", f->root);
	assert_int_equal(mkdir(dev, 0755), 0);
	assert_int_equal(setenv("ASCEND_FAKE_DCMI_DEV_DIR", dev, 1), 0);
	struct dcmi_lib *lib = open_simulator(f, "chip phy=0 card=0 name=910B3 aicore=20 hbm_mb=65536 "
						 "hang_ms=destroy_vdevice:300\n"
						 "chip phy=1 card=1 name=910B3 aicore=20 hbm_mb=65536 busy=1\n");
	unsetenv("ASCEND_FAKE_DCMI_DEV_DIR");
	struct npu_chip chips[2];
	size_t count = 0;
	assert_int_equal(dcmi_enumerate(lib, chips, 2, &count), 0);
	assert_int_equal(count, 2);
	assert_true(dcmi_can_carve(lib));
	int efd = eventfd(0, EFD_CLOEXEC);
	assert_true(efd >= 0);
	struct dcmi_carve_outcome out;
	unsigned health;

	/* The driver's choice; the library is busy until it is taken. */
	assert_int_equal(dcmi_vnpu_take(lib, false, &out), -ENOENT);
	assert_int_equal(dcmi_vnpu_create_start(lib, &chips[0], "vir10_3c_32g", DCMI_VNPU_ID_ANY, wake_eventfd, &efd), 0);
	assert_int_equal(dcmi_vnpu_create_start(lib, &chips[0], "vir10_3c_32g", 105, wake_eventfd, &efd), -EBUSY);
	assert_int_equal(dcmi_chip_health(lib, &chips[0], &health), -EBUSY);
	out = carve_wait(lib, efd);
	assert_int_equal(out.result, 0);
	assert_int_equal(out.vnpu_id, 100);
	assert_true(vnode_exists(f, 100));
	assert_int_equal(dcmi_vnpu_take(lib, false, &out), -ENOENT);
	assert_int_equal(dcmi_chip_health(lib, &chips[0], &health), 0);
	/* An id asked for. */
	assert_int_equal(dcmi_vnpu_create_start(lib, &chips[0], "vir10_3c_32g", 105, wake_eventfd, &efd), 0);
	out = carve_wait(lib, efd);
	assert_int_equal(out.result, 0);
	assert_int_equal(out.vnpu_id, 105);

	/* DCMI's refusals come back with the call and its code: no room left,
	 * a chip in use. */
	assert_int_equal(dcmi_vnpu_create_start(lib, &chips[0], "vir05_1c_8g", DCMI_VNPU_ID_ANY, wake_eventfd, &efd), 0);
	out = carve_wait(lib, efd);
	assert_int_equal(out.result, -EIO);
	assert_int_equal(out.error.code, DCMI_ERR_RESOURCE_OCCUPIED);
	assert_string_equal(out.error.call, "dcmi_create_vdevice");
	assert_int_equal(dcmi_vnpu_create_start(lib, &chips[1], "vir05_1c_8g", DCMI_VNPU_ID_ANY, wake_eventfd, &efd), 0);
	out = carve_wait(lib, efd);
	assert_int_equal(out.result, -EIO);
	assert_int_equal(out.error.code, DCMI_ERR_NOT_PERMITTED);

	/* Bad arguments never reach DCMI. */
	struct npu_chip no_address = chips[0];
	no_address.card_id = -1;
	assert_int_equal(dcmi_vnpu_create_start(lib, &chips[0], "", DCMI_VNPU_ID_ANY, NULL, NULL), -EINVAL);
	assert_int_equal(dcmi_vnpu_create_start(lib, &chips[0], NULL, DCMI_VNPU_ID_ANY, NULL, NULL), -EINVAL);
	assert_int_equal(dcmi_vnpu_create_start(lib, &chips[0], "vir10_3c_16g_nm1", DCMI_VNPU_ID_ANY, NULL, NULL),
			 -EINVAL);
	assert_int_equal(dcmi_vnpu_create_start(lib, &no_address, "vir05_1c_8g", DCMI_VNPU_ID_ANY, NULL, NULL), -EINVAL);
	assert_int_equal(dcmi_vnpu_destroy_start(lib, &no_address, 100, NULL, NULL), -EINVAL);
	assert_int_equal(dcmi_vnpu_take(lib, false, NULL), -EINVAL);

	/* A destruction takes 300 ms here: in progress, then done. */
	assert_int_equal(dcmi_vnpu_destroy_start(lib, &chips[0], 100, wake_eventfd, &efd), 0);
	assert_int_equal(dcmi_vnpu_take(lib, false, &out), -EINPROGRESS);
	out = carve_wait(lib, efd);
	assert_int_equal(out.result, 0);
	assert_int_equal(out.vnpu_id, 100);
	assert_false(vnode_exists(f, 100));
	/* An unknown id. */
	assert_int_equal(dcmi_vnpu_destroy_start(lib, &chips[0], 100, wake_eventfd, &efd), 0);
	out = carve_wait(lib, efd);
	assert_int_equal(out.result, -EIO);
	assert_int_equal(out.error.code, DCMI_ERR_INVALID_PARAMETER);
	assert_string_equal(out.error.call, "dcmi_set_destroy_vdevice");

	/* Given up: the library stays stuck in it until DCMI returns. One the
	 * worker had not begun yet is taken back instead, with nothing stuck
	 * and nothing done: then it is started again. */
	int64_t deadline = now_ms() + WAIT_MS;
	int r;
	do {
		assert_true(now_ms() < deadline);
		assert_int_equal(dcmi_vnpu_destroy_start(lib, &chips[0], 105, wake_eventfd, &efd), 0);
		assert_int_equal(dcmi_vnpu_take(lib, true, &out), -ETIMEDOUT);
		r = dcmi_chip_health(lib, &chips[0], &health);
		assert_true(r == -EBUSY || r == 0);
	} while (r == 0);
	wait_health(lib, &chips[0], 0);
	assert_false(vnode_exists(f, 105));
	close(efd);
	dcmi_lib_close(lib);
}

/* A driver without the calls (older than vNPUs at run time). */
static void test_mock_carve_unsupported(void **state)
{
	(void)state;
	struct dcmi_lib lib = mock_lib();
	const struct npu_chip chip = { .card_id = 0, .device_id = 0 };
	assert_false(dcmi_can_carve(&lib));
	assert_false(dcmi_can_carve(NULL));
	assert_int_equal(dcmi_vnpu_create_start(&lib, &chip, "vir05_1c_8g", DCMI_VNPU_ID_ANY, NULL, NULL), -EOPNOTSUPP);
	assert_int_equal(dcmi_vnpu_destroy_start(&lib, &chip, 100, NULL, NULL), -EOPNOTSUPP);
	struct dcmi_carve_outcome out;
	assert_int_equal(dcmi_vnpu_take(&lib, false, &out), -EINVAL);
}

/* ---- main ------------------------------------------------------------- */

static int run_scenario(const char *name)
{
	static const struct {
		const char *name;
		struct CMUnitTest test;
	} scenarios[] = {
		{ "not_found", cmocka_unit_test(child_not_found) },
		{ "loader_finds", cmocka_unit_test(child_loader_finds) },
		{ "loader_untrusted", cmocka_unit_test(child_loader_untrusted) },
	};
	for (size_t i = 0; i < ELEMENTSOF(scenarios); i++) {
		if (strcmp(scenarios[i].name, name) != 0)
			continue;
		const struct CMUnitTest tests[] = { scenarios[i].test };
		return cmocka_run_group_tests_name(name, tests, NULL, NULL);
	}
	fprintf(stderr, "unknown scenario %s\n", name);
	return 1;
}

#define FIXTURE_TEST(f) cmocka_unit_test_setup_teardown(f, setup, teardown)

/* The tests that need can_test_ownership(): run by a CTest entry of their
 * own (--root-only), which exits as tests/support/skip.h says when they cannot run so
 * that CTest reports them as skipped rather than passed. */
static const struct CMUnitTest root_tests[] = {
	FIXTURE_TEST(test_trust_root_owned_tree),
	FIXTURE_TEST(test_trust_group_writable_dir),
	FIXTURE_TEST(test_trust_other_writable_ancestor),
	FIXTURE_TEST(test_trust_writable_file),
	FIXTURE_TEST(test_trust_not_root_owned),
	FIXTURE_TEST(test_trust_sticky_ancestor_only),
	FIXTURE_TEST(test_trust_follows_symlinks),
	/* These re-execute the binary, so copies of the simulator
	 * loaded by other tests cannot answer for the loader's search. */
	FIXTURE_TEST(test_loader_cache_finds),
	FIXTURE_TEST(test_loader_cache_untrusted),
	FIXTURE_TEST(test_search_driver_lib64_driver),
	FIXTURE_TEST(test_search_driver_lib64),
	FIXTURE_TEST(test_search_usr_local_dcmi),
	FIXTURE_TEST(test_search_custom_driver_path),
	FIXTURE_TEST(test_search_ld_library_path_first),
	FIXTURE_TEST(test_search_first_existing_decides),
	FIXTURE_TEST(test_search_explicit_path),
	FIXTURE_TEST(test_load_lacking_symbols),
	FIXTURE_TEST(test_load_not_a_library),
	FIXTURE_TEST(test_load_init_fails),
	FIXTURE_TEST(test_sim_enumerate),
	FIXTURE_TEST(test_sim_health_and_errors),
	FIXTURE_TEST(test_sim_state_change),
	FIXTURE_TEST(test_sim_subscribe),
	FIXTURE_TEST(test_sim_network),
	FIXTURE_TEST(test_sim_device_share),
	FIXTURE_TEST(test_sim_carve),
};

static const struct CMUnitTest tests[] = {
	FIXTURE_TEST(test_trust_missing),
	cmocka_unit_test(test_mock_enumerate_layout),
	cmocka_unit_test(test_mock_enumerate_skips_broken_chip),
	cmocka_unit_test(test_mock_enumerate_card_list_fails),
	cmocka_unit_test(test_mock_enumerate_clamps_vendor_counts),
	cmocka_unit_test(test_mock_enumerate_duplicate_phy_keeps_first),
	cmocka_unit_test(test_mock_enumerate_too_many),
	cmocka_unit_test(test_mock_enumerate_unterminated_name),
	cmocka_unit_test(test_vendor_name_copy),
	cmocka_unit_test(test_mock_health),
	cmocka_unit_test(test_mock_error_codes),
	cmocka_unit_test(test_mock_subscribe),
	cmocka_unit_test(test_mock_driver_version),
	cmocka_unit_test(test_mock_roce_address),
	cmocka_unit_test(test_mock_carve_unsupported),
	FIXTURE_TEST(test_loader_cache_not_found),
};

int main(int argc, char **argv)
{
	if (argc > 0 && strchr(argv[0], '/'))
		self_exe = argv[0];
	const char *scenario = getenv(SCENARIO_ENV);
	if (scenario)
		return run_scenario(scenario);

	if (argc > 1 && strcmp(argv[1], "--root-only") == 0) {
		if (!can_test_ownership())
			return test_skip("the ownership checks need root and a root-owned sticky /tmp");
		return cmocka_run_group_tests_name("root-only", root_tests, NULL, NULL);
	}
	if (argc > 1) {
		fprintf(stderr, "usage: %s [--root-only]\n", argv[0]);
		return 2;
	}
	return cmocka_run_group_tests(tests, NULL, NULL);
}
