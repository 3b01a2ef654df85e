/* SPDX-License-Identifier: Apache-2.0 */
/* The record of separated chips (fault/separation.h): what is written reads
 * back the same; the file is replaced whole (a reader never sees a part,
 * and a failed write leaves the old file); a missing file is no record;
 * every kind of damage, an oversized file and one record too many make
 * the file unreadable, naming the line; matching follows the PCI address;
 * the writers' lock excludes a second writer. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "base/file.h"
#include "base/parse.h"
#include "fault/separation.h"
#include "support/tmpdir.h"

static char dir[64];
static char why[512];

static int setup_group(void **state)
{
	(void)state;
	return tmpdir_make(dir, sizeof(dir), "test_fault_separation") == 0 ? 0 : -1;
}

static int teardown_group(void **state)
{
	(void)state;
	return tmpdir_remove(dir) == 0 ? 0 : -1;
}

static struct fault_separations *new_set(void)
{
	struct fault_separations *set = calloc(1, sizeof(*set));
	assert_non_null(set);
	return set;
}

static int parse(const char *text, struct fault_separations *set)
{
	why[0] = '\0';
	return fault_separations_parse(text, strlen(text), set, why, sizeof(why));
}

/* Field by field: a record made on the stack has padding of its own. */
static void expect_record(const struct fault_separation_record *got, const struct fault_separation_record *want)
{
	assert_int_equal(got->phy, want->phy);
	assert_string_equal(got->pci_address, want->pci_address);
	assert_int_equal(got->code, want->code);
	assert_int_equal(got->rule, want->rule);
	assert_int_equal(got->since_s, want->since_s);
}

static void test_round_trip(void **state)
{
	(void)state;
	struct fault_separations *set = new_set(), *back = new_set();
	const struct fault_separation_record a = { .phy = 5, .pci_address = "0000:c1:00.0", .code = 0x80E01801,
						   .rule = FAULT_RULE_FREQUENCY, .since_s = 1796222400 };
	const struct fault_separation_record b = { .phy = 0, .code = 0, .rule = FAULT_RULE_MANUAL_SEPARATION,
						   .since_s = 0 };
	assert_int_equal(fault_separations_put(set, &a), 0);
	assert_int_equal(fault_separations_put(set, &b), 0);
	char *text;
	size_t len;
	assert_int_equal(fault_separations_format(set, &text, &len), 0);
	assert_non_null(strstr(text, "npu-5 level=ManuallySeparateNPU code=80E01801 rule=frequency "
				     "since=2026-12-02T14:40:00Z pci=0000:c1:00.0\n"));
	assert_non_null(strstr(text, "npu-0 level=ManuallySeparateNPU code=none rule=manual-separation "
				     "since=1970-01-01T00:00:00Z\n"));
	assert_int_equal(fault_separations_parse(text, len, back, why, sizeof(why)), 0);
	assert_int_equal(back->count, 2);
	expect_record(&back->records[0], &a);
	expect_record(&back->records[1], &b);
	free(text);

	/* Through the file, and every rule name survives. */
	char path[256];
	assert_int_equal(fault_separations_path(dir, path, sizeof(path)), 0);
	for (int r = FAULT_RULE_NONE; r <= FAULT_RULE_RELEASE_WINDOW; r++) {
		set->records[0].rule = (enum fault_rule)r;
		assert_int_equal(fault_separations_write(path, set), 0);
		assert_int_equal(fault_separations_read(path, back, why, sizeof(why)), 0);
		assert_int_equal(back->records[0].rule, r);
	}
	/* Keys a later version may add are skipped; CRLF and comments too. */
	assert_int_equal(parse("# x\r\n\nnpu-3 level=ManuallySeparateNPU code=0x80e01801 rule=duration "
			       "since=2026-01-01T00:00:00Z reason=later\r\n",
			       back),
			 0);
	assert_int_equal(back->count, 1);
	assert_int_equal(back->records[0].phy, 3);
	assert_int_equal(back->records[0].code, 0x80E01801);
	free(set);
	free(back);
}

static void test_missing_file_is_empty(void **state)
{
	(void)state;
	struct fault_separations *set = new_set();
	set->count = 7;
	char path[256];
	snprintf(path, sizeof(path), "%s/none/separated-chips", dir);
	assert_int_equal(fault_separations_read(path, set, why, sizeof(why)), 0);
	assert_int_equal(set->count, 0);
	free(set);
}

/* The file is replaced by a rename: a reader that opened the old one reads
 * it whole; a write that cannot be made leaves the old file. */
static void test_atomic_replace(void **state)
{
	(void)state;
	struct fault_separations *set = new_set(), *back = new_set();
	char sub[200], path[256];
	snprintf(sub, sizeof(sub), "%s/atomic", dir);
	assert_int_equal(mkdir(sub, 0755), 0);
	assert_int_equal(fault_separations_path(sub, path, sizeof(path)), 0);
	const struct fault_separation_record a = { .phy = 1, .code = 0x80E01801, .rule = FAULT_RULE_FREQUENCY };
	assert_int_equal(fault_separations_put(set, &a), 0);
	assert_int_equal(fault_separations_write(path, set), 0);
	FILE *old = fopen(path, "re");
	assert_non_null(old);
	set->count = 0;
	assert_int_equal(fault_separations_write(path, set), 0);
	char buf[1024];
	size_t n = fread(buf, 1, sizeof(buf) - 1, old);
	buf[n] = '\0';
	fclose(old);
	assert_non_null(strstr(buf, "npu-1 level=ManuallySeparateNPU"));
	assert_int_equal(fault_separations_read(path, back, why, sizeof(why)), 0);
	assert_int_equal(back->count, 0);

	/* No temp file stays beside it. */
	char tmp[300];
	snprintf(tmp, sizeof(tmp), "%s/.separated-chips.tmp", sub);
	assert_false(path_exists(tmp));
	/* A directory where the file should go: the write fails, nothing changes. */
	char blocked[256];
	snprintf(blocked, sizeof(blocked), "%s/blocked", dir);
	assert_int_equal(mkdir(blocked, 0755), 0);
	assert_int_equal(fault_separations_path(blocked, path, sizeof(path)), 0);
	assert_int_equal(mkdir(path, 0755), 0);
	assert_true(fault_separations_write(path, set) < 0);
	struct stat st;
	assert_int_equal(stat(path, &st), 0);
	assert_true(S_ISDIR(st.st_mode));
	free(set);
	free(back);
}

static void expect_refused(const char *text, const char *message)
{
	struct fault_separations *set = new_set();
	set->count = 9;
	assert_int_equal(parse(text, set), -EINVAL);
	if (!strstr(why, message))
		fail_msg("'%s': got '%s', wanted '%s'", text, why, message);
	assert_int_equal(set->count, 9);
	free(set);
}

static void test_corrupt(void **state)
{
	(void)state;
	const char *ok = " level=ManuallySeparateNPU code=80E01801 rule=frequency since=2026-12-02T14:40:00Z";
	char line[256];
	expect_refused("gpu-1 level=x\n", "line 1: 'gpu-1' is not a chip (npu-<phy>)");
	expect_refused("npu-01 code=none\n", "line 1: 'npu-01' is not a chip");
	expect_refused("\nnpu-1 code\n", "line 2: 'code' is not key=value");
	expect_refused("npu-1 level=SeparateNPU\n", "line 1: level 'SeparateNPU' is not ManuallySeparateNPU");
	expect_refused("npu-1 code=xyz\n", "line 1: code 'xyz' is not a fault code (hex) or none");
	expect_refused("npu-1 rule=guess\n", "line 1: rule 'guess' is not a rule of the fault policy");
	expect_refused("npu-1 since=2026-02-30T00:00:00Z\n", "since '2026-02-30T00:00:00Z' is not a UTC time");
	expect_refused("npu-1 since=2026-12-02 14:40\n", "is not a UTC time");
	expect_refused("npu-1 pci=zz\n", "line 1: pci 'zz' is not a PCI address");
	expect_refused("npu-1 level=ManuallySeparateNPU code=none rule=frequency\n", "line 1: npu-1 lacks since=");
	snprintf(line, sizeof(line), "npu-1%s\nnpu-1%s\n", ok, ok);
	expect_refused(line, "line 2: npu-1 is listed twice");
	snprintf(line, sizeof(line), "npu-1%s pci=0000:01:00.0\nnpu-2%s pci=0000:01:00.0\n", ok, ok);
	expect_refused(line, "line 2: npu-2 is listed twice");
	struct fault_separations *set = new_set();
	assert_int_equal(fault_separations_parse("npu-1\0", 6, set, why, sizeof(why)), -EINVAL);
	assert_string_equal(why, "a NUL byte: not a text file");
	free(set);
}

/* Bounded: a line, the file, the number of records. */
static void test_bounds(void **state)
{
	(void)state;
	struct fault_separations *set = new_set();
	char *big = malloc(FAULT_SEPARATION_FILE_MAX + 2);
	assert_non_null(big);
	memset(big, '#', FAULT_SEPARATION_LINE_MAX + 1);
	big[FAULT_SEPARATION_LINE_MAX + 1] = '\0';
	assert_int_equal(parse(big, set), -EINVAL);
	assert_string_equal(why, "line 1: longer than 512 bytes");
	memset(big, '\n', FAULT_SEPARATION_FILE_MAX + 1);
	assert_int_equal(fault_separations_parse(big, FAULT_SEPARATION_FILE_MAX + 1, set, why, sizeof(why)), -EINVAL);
	assert_string_equal(why, "larger than 65536 bytes");
	/* A huge file on disk is refused by the read, not loaded. */
	char path[256];
	snprintf(path, sizeof(path), "%s/huge", dir);
	FILE *f = fopen(path, "we");
	assert_non_null(f);
	assert_int_equal(fwrite(big, 1, FAULT_SEPARATION_FILE_MAX + 1, f), FAULT_SEPARATION_FILE_MAX + 1);
	assert_int_equal(fclose(f), 0);
	assert_true(fault_separations_read(path, set, why, sizeof(why)) < 0);
	assert_non_null(strstr(why, "larger than"));

	/* FAULT_SEPARATION_MAX records fit, one more does not. */
	size_t len = 0;
	for (unsigned i = 0; i <= FAULT_SEPARATION_MAX; i++)
		len += (size_t)snprintf(big + len, FAULT_SEPARATION_FILE_MAX + 2 - len,
					"npu-%u level=ManuallySeparateNPU code=none rule=frequency since=2026-01-01T00:00:00Z\n",
					i);
	assert_int_equal(fault_separations_parse(big, len, set, why, sizeof(why)), -EINVAL);
	assert_string_equal(why, "line 257: more than 256 chips");
	char *last = big + len - 1;
	while (last > big && last[-1] != '\n')
		last--;
	assert_int_equal(fault_separations_parse(big, (size_t)(last - big), set, why, sizeof(why)), 0);
	assert_int_equal(set->count, FAULT_SEPARATION_MAX);
	const struct fault_separation_record more = { .phy = 999 };
	assert_int_equal(fault_separations_put(set, &more), -E2BIG);
	free(big);
	free(set);
}

/* A record stands for the chip at its PCI address when both know one. */
static void test_find(void **state)
{
	(void)state;
	struct fault_separations *set = new_set();
	const struct fault_separation_record a = { .phy = 5, .pci_address = "0000:c1:00.0" };
	const struct fault_separation_record b = { .phy = 6 };
	assert_int_equal(fault_separations_put(set, &a), 0);
	assert_int_equal(fault_separations_put(set, &b), 0);
	assert_int_equal(fault_separations_find(set, 5, "0000:c1:00.0"), 0);
	assert_int_equal(fault_separations_find(set, 7, "0000:c1:00.0"), 0); /* renumbered: still that chip */
	assert_int_equal(fault_separations_find(set, 5, "0000:81:00.0"), -1); /* another board at phy 5 */
	assert_int_equal(fault_separations_find(set, 5, ""), 0);
	assert_int_equal(fault_separations_find(set, 6, "0000:82:00.0"), 1);
	assert_int_equal(fault_separations_find_phy(set, 6), 1);
	fault_separations_remove(set, 0);
	assert_int_equal(set->count, 1);
	assert_int_equal(fault_separations_find_phy(set, 6), 0);
	free(set);
}

static void test_lock(void **state)
{
	(void)state;
	int a, b;
	assert_int_equal(fault_separations_lock(dir, false, &a), 0);
	/* flock locks belong to the open file: a second open is a second writer. */
	assert_int_equal(fault_separations_lock(dir, false, &b), -EWOULDBLOCK);
	close(a);
	assert_int_equal(fault_separations_lock(dir, true, &b), 0);
	close(b);
	char missing[256];
	snprintf(missing, sizeof(missing), "%s/missing", dir);
	assert_int_equal(fault_separations_lock(missing, false, &a), -ENOENT);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_round_trip),  cmocka_unit_test(test_missing_file_is_empty),
		cmocka_unit_test(test_atomic_replace), cmocka_unit_test(test_corrupt),
		cmocka_unit_test(test_bounds),      cmocka_unit_test(test_find),
		cmocka_unit_test(test_lock),
	};
	return cmocka_run_group_tests(tests, setup_group, teardown_group);
}
