/* SPDX-License-Identifier: Apache-2.0 */
/* The NFD features file: label values sanitised or dropped (never invalid),
 * the file's labels, and its atomic write and removal. */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "support/tmpdir.h"
#include "telemetry/nfd.h"

/* Kubernetes' rule for a label value (apimachinery IsValidLabelValue). */
static int valid_label_value(const char *v)
{
	size_t n = strlen(v);
	if (n == 0)
		return 1;
	if (n > 63)
		return 0;
	for (size_t i = 0; i < n; i++) {
		char c = v[i];
		int alnum = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
		if (!alnum && !((i > 0 && i < n - 1) && (c == '-' || c == '_' || c == '.')))
			return 0;
	}
	return 1;
}

static void expect_sanitized(const char *in, const char *want)
{
	char out[NFD_VALUE_MAX];
	if (!want) {
		assert_int_equal(nfd_label_value_sanitize(in, out), -EINVAL);
		return;
	}
	assert_int_equal(nfd_label_value_sanitize(in, out), 0);
	assert_string_equal(out, want);
	assert_true(valid_label_value(out));
}

static void test_sanitize(void **state)
{
	(void)state;
	expect_sanitized("24.1.rc1", "24.1.rc1");
	expect_sanitized("V100R001C15SPC006B220", "V100R001C15SPC006B220");
	expect_sanitized("[V100R001C30]", "V100R001C30");
	expect_sanitized("Ascend 910B3", "Ascend-910B3");
	expect_sanitized("a/b:c+d", "a-b-c-d");
	expect_sanitized("@ref", "ref"); /* nfd-master would take "@..." as a reference */
	expect_sanitized("--x--", "x");
	expect_sanitized("", NULL);
	expect_sanitized("[]//..", NULL);
	char longer[200];
	memset(longer, 'a', sizeof(longer) - 1);
	longer[sizeof(longer) - 1] = '\0';
	longer[62] = '.'; /* the cut would end on it: trimmed */
	char out[NFD_VALUE_MAX];
	assert_int_equal(nfd_label_value_sanitize(longer, out), 0);
	assert_int_equal(strlen(out), 62);
	assert_true(valid_label_value(out));
}

static void test_render(void **state)
{
	(void)state;
	char text[4096];
	struct nfd_info info = { .count = 8, .healthy = 7, .product = "910B3", .family = "910B", .memory_mib = 65536,
				 .aicore = 20, .topology = "hccs-mesh", .driver = "24.1.rc1" };
	assert_int_equal(nfd_render(&info, text, sizeof(text)), 0);
	assert_string_equal(text, "# Written by ascend-device-plugin, removed when it stops.\n"
				  "ascend.com/npu.present=true\n"
				  "ascend.com/npu.count=8\n"
				  "ascend.com/npu.healthy=7\n"
				  "ascend.com/npu.product=Ascend910B3\n"
				  "ascend.com/npu.family=910B\n"
				  "ascend.com/npu.memory=65536\n"
				  "ascend.com/npu.aicore=20\n"
				  "ascend.com/npu.topology=hccs-mesh\n"
				  "ascend.com/driver.version=24.1.rc1\n");

	/* Unknowns and invalid values are left out; sharing adds its two. */
	info = (struct nfd_info){ .count = 2, .healthy = 2, .driver = "[]", .replicas = 4 };
	assert_int_equal(nfd_render(&info, text, sizeof(text)), 0);
	assert_null(strstr(text, "product"));
	assert_null(strstr(text, "driver.version"));
	assert_null(strstr(text, "memory"));
	assert_non_null(strstr(text, "ascend.com/npu.replicas=4\n"));
	assert_non_null(strstr(text, "ascend.com/npu.sharing-strategy=time-slicing\n"));
	assert_null(strstr(text, "subhealth"));

	/* Sub-healthy chips (the fault policy's SubHealthFault) get a count. */
	struct nfd_info sub = { .count = 8, .healthy = 8, .subhealth = 2 };
	char subtext[1024];
	assert_int_equal(nfd_render(&sub, subtext, sizeof(subtext)), 0);
	assert_non_null(strstr(subtext, "ascend.com/npu.healthy=8\nascend.com/npu.subhealth=2\n"));

	/* Every value line is a valid label value. */
	for (char *save, *l = strtok_r(text, "\n", &save); l; l = strtok_r(NULL, "\n", &save))
		if (l[0] != '#')
			assert_true(valid_label_value(strchr(l, '=') + 1));

	char small[16];
	assert_int_equal(nfd_render(&info, small, sizeof(small)), -ENOBUFS);
}

static void test_write_and_remove(void **state)
{
	(void)state;
	char dir[32];
	assert_int_equal(tmpdir_make(dir, sizeof(dir), "nfd-test"), 0);
	char path[64], tmp[64];
	snprintf(path, sizeof(path), "%s/ascend", dir);
	snprintf(tmp, sizeof(tmp), "%s/.ascend.tmp", dir);
	/* A temp file a crash left behind is replaced. */
	int fd = open(tmp, O_WRONLY | O_CREAT, 0600);
	assert_true(fd >= 0);
	close(fd);
	mode_t old = umask(077);
	assert_int_equal(nfd_write(path, "a.b/c=1\n"), 0);
	umask(old);
	struct stat st;
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0644);
	assert_int_equal(access(tmp, F_OK), -1);
	char buf[32] = "";
	FILE *f = fopen(path, "r");
	assert_non_null(f);
	assert_non_null(fgets(buf, sizeof(buf), f));
	fclose(f);
	assert_string_equal(buf, "a.b/c=1\n");
	assert_int_equal(nfd_write(path, "a.b/c=2\n"), 0);
	assert_int_equal(nfd_remove(path), 0);
	assert_int_equal(access(path, F_OK), -1);
	assert_int_equal(nfd_remove(path), 0); /* gone already: fine */
	assert_int_equal(rmdir(dir), 0);
	/* No directory (NFD not installed): the errno says so. */
	assert_int_equal(nfd_write("/nonexistent-nfd/features.d/ascend", "x=1\n"), -ENOENT);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sanitize),
		cmocka_unit_test(test_render),
		cmocka_unit_test(test_write_and_remove),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
