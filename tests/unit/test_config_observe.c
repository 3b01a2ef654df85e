/* SPDX-License-Identifier: Apache-2.0 */
/* The observability flags: defaults, what each accepts and refuses (with a
 * message naming the flag), empty disabling, and the same settings from
 * the --config file in camelCase. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "config/config.h"

static struct config cfg;
static char why[1024];

static int parse(int argc, const char **argv)
{
	why[0] = '\0';
	return config_parse(argc, (char **)(uintptr_t)argv, NULL, &cfg, NULL, why, sizeof(why));
}

#define PARSE(...) parse((int)(sizeof((const char *[]){ "p", __VA_ARGS__ }) / sizeof(char *)), \
			 (const char *[]){ "p", __VA_ARGS__ })

static void expect_bad(int rc, const char *needle)
{
	assert_int_equal(rc, -EINVAL);
	if (!strstr(why, needle))
		fail_msg("message '%s' does not mention '%s'", why, needle);
}

static void test_defaults(void **state)
{
	(void)state;
	const char *argv[] = { "p" };
	assert_int_equal(parse(1, argv), 0);
	assert_string_equal(cfg.metrics_addr, ":8084");
	assert_int_equal(cfg.telemetry_interval_ms, 15000);
	assert_string_equal(cfg.pod_resources_socket, "/var/lib/kubelet/pod-resources/kubelet.sock");
	assert_string_equal(cfg.nfd_features_file, "/etc/kubernetes/node-feature-discovery/features.d/ascend");
	assert_int_equal(cfg.log_format, LOG_FORMAT_TEXT);
}

static void test_values(void **state)
{
	(void)state;
	assert_int_equal(PARSE("--metrics-addr=127.0.0.1:9000", "--telemetry-interval", "1m", "--log-format=json",
			       "--pod-resources-socket=/run/pr.sock", "--nfd-features-file=/tmp/f/ascend"),
			 0);
	assert_string_equal(cfg.metrics_addr, "127.0.0.1:9000");
	assert_int_equal(cfg.telemetry_interval_ms, 60000);
	assert_int_equal(cfg.log_format, LOG_FORMAT_JSON);
	assert_string_equal(cfg.pod_resources_socket, "/run/pr.sock");
	assert_string_equal(cfg.nfd_features_file, "/tmp/f/ascend");
	assert_int_equal(PARSE("--metrics-addr=[::1]:1", "--metrics-addr", ":0"), 0);
	assert_string_equal(cfg.metrics_addr, ":0");
	assert_int_equal(PARSE("--metrics-addr=localhost:8084"), 0);

	/* Empty disables. */
	assert_int_equal(PARSE("--metrics-addr=", "--pod-resources-socket=", "--nfd-features-file="), 0);
	assert_string_equal(cfg.metrics_addr, "");
	assert_string_equal(cfg.pod_resources_socket, "");
	assert_string_equal(cfg.nfd_features_file, "");
}

static void test_refused(void **state)
{
	(void)state;
	expect_bad(PARSE("--metrics-addr=8084"), "--metrics-addr");
	expect_bad(PARSE("--metrics-addr=example.com:8084"), "--metrics-addr");
	expect_bad(PARSE("--metrics-addr=:65536"), "--metrics-addr");
	expect_bad(PARSE("--metrics-addr=[::1:80"), "--metrics-addr");
	expect_bad(PARSE("--telemetry-interval=500ms"), "--telemetry-interval");
	expect_bad(PARSE("--telemetry-interval=soon"), "--telemetry-interval");
	expect_bad(PARSE("--log-format=yaml"), "--log-format");
	expect_bad(PARSE("--pod-resources-socket=relative.sock"), "--pod-resources-socket");
	expect_bad(PARSE("--nfd-features-file=/etc/features.d/"), "--nfd-features-file");
	expect_bad(PARSE("--nfd-features-file=ascend"), "--nfd-features-file");
}

static void test_config_file(void **state)
{
	(void)state;
	char path[] = "/tmp/config-observe-XXXXXX";
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	const char *yaml = "version: v1\n"
			   "flags:\n"
			   "  metricsAddr: \"127.0.0.1:9100\"\n"
			   "  telemetryInterval: 30s\n"
			   "  logFormat: json\n"
			   "  nfdFeaturesFile: \"\"\n"
			   "  podResourcesSocket: /run/pr.sock\n";
	assert_int_equal(write(fd, yaml, strlen(yaml)), (ssize_t)strlen(yaml));
	close(fd);
	assert_int_equal(PARSE("--config", path), 0);
	assert_string_equal(cfg.metrics_addr, "127.0.0.1:9100");
	assert_int_equal(cfg.telemetry_interval_ms, 30000);
	assert_int_equal(cfg.log_format, LOG_FORMAT_JSON);
	assert_string_equal(cfg.nfd_features_file, "");
	assert_string_equal(cfg.pod_resources_socket, "/run/pr.sock");
	/* The command line still wins. */
	assert_int_equal(PARSE("--config", path, "--log-format=text"), 0);
	assert_int_equal(cfg.log_format, LOG_FORMAT_TEXT);
	unlink(path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_defaults),
		cmocka_unit_test(test_values),
		cmocka_unit_test(test_refused),
		cmocka_unit_test(test_config_file),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
