/* SPDX-License-Identifier: Apache-2.0 */
/* The live status file (node/status_files.h): what it says of each device,
 * what its reader refuses, and the directories' life: made once per set,
 * rewritten only when the text changes (also a file put beside the status
 * file), pruned only when idle and unused. */
#include <errno.h>
#include <limits.h>
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

#include "node/status_files.h"
#include "support/tmpdir.h"

static struct npu_device chip(uint32_t phy, bool healthy)
{
	struct npu_device d = { .kind = NPU_DEVICE_CHIP, .healthy = healthy };
	snprintf(d.id, sizeof(d.id), "npu-%u", phy);
	d.chip.phy_id = phy;
	d.chip.family = NPU_FAMILY_910B;
	d.policy_judged = true;
	return d;
}

static void test_render(void **state)
{
	(void)state;
	struct npu_device a = chip(5, true), b = chip(2, false);
	b.fault = NPU_FAULT_POLICY;
	b.policy_level_name = "RestartBusiness";
	b.policy_code = 0x80E01801;
	b.dcmi_health = 2;
	snprintf(b.policy_note, sizeof(b.policy_note), "RestartBusiness (code table, code 80E01801)");
	b.since_ms = 1764929472345; /* 2025-12-05T10:11:12.345Z */
	b.has_numa = true;
	b.numa_node = 1;
	const struct npu_device *devs[] = { &a, &b };
	char *json = NULL;
	assert_int_equal(status_file_render(devs, 2, &json), 0);
	assert_string_equal(json,
			    "{\"version\":1,\"chips\":["
			    "{\"device\":\"npu-5\",\"logical_id\":0,\"phy_id\":5,\"family\":\"910B\",\"healthy\":true,"
			    "\"level\":\"None\",\"code\":\"\",\"interconnect_group\":\"hccs-mesh-0\"},"
			    "{\"device\":\"npu-2\",\"logical_id\":1,\"phy_id\":2,\"family\":\"910B\",\"healthy\":false,"
			    "\"level\":\"RestartBusiness\",\"code\":\"80E01801\",\"since\":\"2025-12-05T10:11:12.345Z\","
			    "\"reason\":\"DCMI health 2 (major); fault policy: RestartBusiness (code table, code 80E01801)\","
			    "\"numa_node\":1,\"interconnect_group\":\"hccs-mesh-0\"}]}\n");
	free(json);
	/* Not judged and Unhealthy: the level is not known. */
	b.policy_judged = false;
	b.fault = NPU_FAULT_ABSENT;
	assert_int_equal(status_file_render(devs, 2, &json), 0);
	assert_non_null(strstr(json, "\"level\":\"Unknown\""));
	free(json);
	assert_int_equal(status_file_render(devs, 0, &json), -EINVAL);
}

static void test_reader_refuses(void **state)
{
	(void)state;
	char ids[4][NPU_DEVICE_ID_MAX], why[128];
	size_t n = 0;
	static const struct {
		const char *text, *why;
	} bad[] = {
		{ "", "not a JSON object" },
		{ "[1]", "not a JSON object" },
		{ "{\"version\":2,\"chips\":[{\"device\":\"npu-1\"}]}", "version is not 1" },
		{ "{\"version\":1}", "chips is not a list" },
		{ "{\"version\":1,\"chips\":[]}", "chips lists 0 devices, not 1 to 4" },
		{ "{\"version\":1,\"chips\":[{},{},{},{},{}]}", "chips lists 5 devices, not 1 to 4" },
		{ "{\"version\":1,\"chips\":[{\"device\":\"npu-1\"},{\"device\":\"gpu-1\"}]}",
		  "chips[1].device is not a device id" },
		{ "{\"version\":1,\"chips\":[{\"device\":\"npu-\"}]}", "chips[0].device is not a device id" },
		{ "{\"version\":1,\"chips\":[{\"device\":\"../x\"}]}", "chips[0].device is not a device id" },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(status_file_devices(bad[i].text, strlen(bad[i].text), ids, 4, &n, why, sizeof(why)),
				 -EINVAL);
		assert_string_equal(why, bad[i].why);
	}
	const char good[] = "{\"version\":1,\"chips\":[{\"device\":\"npu-1\"},{\"device\":\"vnpu-100\"}]}";
	assert_int_equal(status_file_devices(good, strlen(good), ids, 4, &n, why, sizeof(why)), 0);
	assert_int_equal(n, 2);
	assert_string_equal(ids[1], "vnpu-100");
}

static bool all_unused(void *ctx, const char *name, char (*ids)[NPU_DEVICE_ID_MAX], size_t n)
{
	(void)ids;
	(void)n;
	return strcmp(name, (const char *)ctx) == 0;
}

static void test_directories(void **state)
{
	(void)state;
	char root[PATH_MAX], base[PATH_MAX + 16], dir[PATH_MAX], why[256], name[STATUS_NAME_MAX + 1];
	assert_int_equal(tmpdir_make(root, sizeof(root), "status"), 0);
	snprintf(base, sizeof(base), "%s/a/b", root);
	struct status_dirs *dirs = NULL;
	assert_int_equal(status_dirs_new(base, &dirs, why, sizeof(why)), 0);

	struct npu_device a = chip(2, true), b = chip(5, true);
	const struct npu_device *devs[] = { &a, &b };
	assert_int_equal(status_set_name(devs, 2, name, sizeof(name)), 0);
	assert_string_equal(name, "set-npu-2+npu-5");
	assert_int_equal(status_dirs_ensure(dirs, name, devs, 2, dir, sizeof(dir)), 0);
	char want[PATH_MAX + 64];
	snprintf(want, sizeof(want), "%s/set-npu-2+npu-5", base);
	assert_string_equal(dir, want);

	/* Nothing changed: nothing written. npu-5 faults: one file rewritten;
	 * npu-5 gone: said so. */
	struct npu_snapshot *snap = npu_snapshot_new(2);
	snap->devices[0] = a;
	snap->devices[1] = b;
	size_t rewritten = 9, removed = 9;
	assert_int_equal(status_dirs_refresh(dirs, snap, &rewritten), 0);
	assert_int_equal(rewritten, 0);
	snap->devices[1].healthy = false;
	snap->devices[1].policy_level_name = "SeparateNPU";
	assert_int_equal(status_dirs_refresh(dirs, snap, &rewritten), 0);
	assert_int_equal(rewritten, 1);
	snap->count = 1;
	assert_int_equal(status_dirs_refresh(dirs, snap, &rewritten), 0);
	assert_int_equal(rewritten, 1);
	char file[PATH_MAX + 32], text[1024] = "";
	snprintf(file, sizeof(file), "%s/status.json", dir);
	FILE *f = fopen(file, "r");
	assert_non_null(f);
	assert_true(fread(text, 1, sizeof(text) - 1, f) > 0);
	fclose(f);
	assert_non_null(strstr(text, "{\"device\":\"npu-5\",\"logical_id\":1,\"healthy\":false,\"level\":\"Unknown\",\"code\":\"\","
				     "\"reason\":\"not on this node any more\"}"));

	/* A file put beside the status file (a set's device metadata) is
	 * written when its text changes only: the same text handed out again
	 * leaves the file (its inode, which a container's bind mount holds)
	 * as it is. */
	char put[PATH_MAX + 32], found[PATH_MAX + 32];
	struct stat first, again;
	assert_int_equal(status_dirs_lookup(dirs, name, "metadata.json", found, sizeof(found)), -ENOENT);
	assert_int_equal(status_dirs_put(dirs, name, "metadata.json", "{\"a\":1}\n", put, sizeof(put)), 0);
	/* Once put, it is found where it was put. */
	assert_int_equal(status_dirs_lookup(dirs, name, "metadata.json", found, sizeof(found)), 0);
	assert_string_equal(found, put);
	assert_int_equal(status_dirs_lookup(dirs, name, "../x", found, sizeof(found)), -EINVAL);
	assert_int_equal(status_dirs_lookup(dirs, "set-none", "metadata.json", found, sizeof(found)), -ENOENT);
	snprintf(want, sizeof(want), "%s/metadata.json", dir);
	assert_string_equal(put, want);
	assert_int_equal(stat(put, &first), 0);
	assert_int_equal(status_dirs_put(dirs, name, "metadata.json", "{\"a\":1}\n", put, sizeof(put)), 0);
	assert_int_equal(stat(put, &again), 0);
	assert_int_equal(again.st_ino, first.st_ino);
	assert_int_equal(status_dirs_put(dirs, name, "metadata.json", "{\"a\":12}\n", put, sizeof(put)), 0);
	assert_int_equal(stat(put, &again), 0);
	assert_int_not_equal(again.st_ino, first.st_ino);
	assert_int_equal(again.st_size, 9);
	assert_int_equal(status_dirs_put(dirs, name, "status.json", "x", put, sizeof(put)), -EINVAL);
	assert_int_equal(status_dirs_put(dirs, name, ".hidden", "x", put, sizeof(put)), -EINVAL);
	assert_int_equal(status_dirs_put(dirs, "set-none", "metadata.json", "x", put, sizeof(put)), -ENOENT);

	/* A directory touched a moment ago is not idle; one an hour old is
	 * removed when the caller says it is unused, and only then, with what
	 * was put beside its status file. */
	assert_int_equal(status_dirs_prune(dirs, 3600 * 1000, all_unused, name, &removed), 0);
	assert_int_equal(removed, 0);
	assert_int_equal(status_dirs_prune(dirs, -3600 * 1000, all_unused, (char[]){ "set-other" }, &removed), 0);
	assert_int_equal(removed, 0);
	assert_int_equal(status_dirs_prune(dirs, -3600 * 1000, all_unused, name, &removed), 0);
	assert_int_equal(removed, 1);
	assert_int_equal(access(dir, F_OK), -1);
	assert_int_equal(status_dirs_remove(dirs, name), 0);
	assert_int_equal(status_dirs_remove(dirs, "../x"), -EINVAL);

	npu_snapshot_unref(snap);
	status_dirs_free(dirs);
	assert_int_equal(tmpdir_remove(root), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_render),
		cmocka_unit_test(test_reader_refuses),
		cmocka_unit_test(test_directories),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
