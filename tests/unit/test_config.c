/* SPDX-License-Identifier: Apache-2.0 */
/* Flags: defaults, both spellings, the environment, the socket paths and
 * CDI names they imply (daemon/serving.h, read as main reads them), and a
 * clear message naming the flag for every bad value. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "config/config.h"
#include "daemon/serving.h"
#include "plugin/allocate.h"

static struct config cfg;
static struct serving srv; /* what cfg serves */
static bool in_file; /* config_parse's: the problem is in the --config file */
static char why[512];

static int parse(const char *env_driver, int argc, const char **argv)
{
	why[0] = '\0';
	in_file = false;
	int r = config_parse(argc, (char **)(uintptr_t)argv, env_driver, &cfg, &in_file, why, sizeof(why));
	return r < 0 ? r : serving_build(&cfg, &srv, &in_file, why, sizeof(why));
}

#define PARSE(env, ...) parse(env, (int)(sizeof((const char *[]){ "p", __VA_ARGS__ }) / sizeof(char *)), \
			      (const char *[]){ "p", __VA_ARGS__ })

static void test_defaults(void **state)
{
	(void)state;
	const char *argv[] = { "p" };
	assert_int_equal(parse(NULL, 1, argv), 0);
	assert_int_equal(cfg.action, CONFIG_ACTION_RUN);
	assert_string_equal(cfg.resource_name, "ascend.com/npu");
	assert_string_equal(srv.resources.defs[0].endpoint, "ascend-npu.sock");
	assert_string_equal(srv.resources.defs[0].socket_path, "/var/lib/kubelet/device-plugins/ascend-npu.sock");
	assert_string_equal(srv.kubelet_socket, "/var/lib/kubelet/device-plugins/kubelet.sock");
	assert_string_equal(cfg.dev_dir, "/dev");
	assert_string_equal(cfg.driver_path, "/usr/local/Ascend/driver");
	assert_string_equal(cfg.host_root, "/");
	assert_string_equal(cfg.dcmi_lib, "");
	assert_int_equal(cfg.backend, NPU_BACKEND_AUTO);
	assert_int_equal(cfg.health_interval_ms, 5000);
	assert_int_equal(cfg.log_level, LOG_LEVEL_INFO);
	assert_int_equal(cfg.device_list_strategies, CONFIG_STRATEGY_NATIVE);
	assert_string_equal(cfg.cdi_dir, "/var/run/cdi");
	assert_int_equal(cfg.front_end, CONFIG_FRONT_END_DEVICE_PLUGIN);
	assert_true(cfg.dra_chips.all);
	assert_false(config_dra_on(&cfg));
	assert_true(config_device_plugin_on(&cfg));
}

/* Which front ends run, and which chips the DRA driver has. */
static void test_front_ends(void **state)
{
	(void)state;
	assert_int_equal(PARSE(NULL, "--front-end=dra"), 0);
	assert_true(config_dra_on(&cfg));
	assert_false(config_device_plugin_on(&cfg));
	assert_int_equal(PARSE(NULL, "--front-end", "both", "--dra-chips", "4-7,310P"), 0);
	assert_true(config_dra_on(&cfg));
	assert_true(config_device_plugin_on(&cfg));
	assert_string_equal(cfg.dra_chips_text, "4-7,310P");
	assert_true(npu_chip_select_has(&cfg.dra_chips, &(struct npu_chip){ .phy_id = 5 }));
	assert_false(npu_chip_select_has(&cfg.dra_chips, &(struct npu_chip){ .phy_id = 3 }));
	/* Neither chips carved on demand nor evicting taints unless asked. */
	assert_null(config_dra_dynamic_vnpus(&cfg));
	assert_int_equal(cfg.dra_no_execute_levels, 0);
	assert_int_equal(PARSE(NULL, "--dra-dynamic-vnpus=0,910B", "--dra-no-execute-levels", "SeparateNPU,RestartNPU"), 0);
	assert_true(npu_chip_select_has(config_dra_dynamic_vnpus(&cfg), &(struct npu_chip){ .phy_id = 0 }));
	assert_int_equal(cfg.dra_no_execute_levels, (1u << FAULT_LEVEL_SEPARATE_NPU) | (1u << FAULT_LEVEL_RESTART_NPU));
	assert_int_equal(PARSE(NULL, "--dra-dynamic-vnpus=none", "--dra-no-execute-levels=none"), 0);
	assert_null(config_dra_dynamic_vnpus(&cfg));
	assert_int_equal(cfg.dra_no_execute_levels, 0);
}

static void test_both_spellings_and_env(void **state)
{
	(void)state;
	assert_int_equal(PARSE("/opt/driver", "--resource-name=huawei.com/Ascend910", "--socket-dir", "/run/dp/",
			       "--health-interval=500ms", "--backend", "devfs", "--log-level=debug"),
			 0);
	assert_string_equal(cfg.resource_name, "huawei.com/Ascend910");
	assert_string_equal(srv.resources.defs[0].endpoint, "huawei-Ascend910.sock");
	assert_string_equal(srv.resources.defs[0].socket_path, "/run/dp/huawei-Ascend910.sock");
	assert_string_equal(cfg.driver_path, "/opt/driver");
	assert_int_equal(cfg.health_interval_ms, 500);
	assert_int_equal(cfg.backend, NPU_BACKEND_DEVFS);
	assert_int_equal(cfg.log_level, LOG_LEVEL_DEBUG);

	/* The flag wins over ASCEND_DRIVER_PATH. */
	assert_int_equal(PARSE("/opt/driver", "--driver-path", "/srv/driver"), 0);
	assert_string_equal(cfg.driver_path, "/srv/driver");
	/* ...and then the environment is not judged at all, in either order. */
	assert_int_equal(PARSE("relative/driver", "--driver-path", "/srv/driver"), 0);
	assert_string_equal(cfg.driver_path, "/srv/driver");
	assert_int_equal(PARSE("relative/driver", "--version", "--driver-path=/srv/driver"), 0);
	assert_string_equal(cfg.driver_path, "/srv/driver");
	assert_int_equal(PARSE(NULL, "--health-interval", "2"), 0);
	assert_int_equal(cfg.health_interval_ms, 2000);
}

static void test_actions(void **state)
{
	(void)state;
	assert_int_equal(PARSE(NULL, "--help"), 0);
	assert_int_equal(cfg.action, CONFIG_ACTION_HELP);
	assert_int_equal(PARSE(NULL, "--version"), 0);
	assert_int_equal(cfg.action, CONFIG_ACTION_VERSION);
	assert_int_equal(PARSE(NULL, "--probe", "--socket-dir", "/x"), 0);
	assert_int_equal(cfg.action, CONFIG_ACTION_PROBE);
	assert_string_equal(srv.resources.defs[0].socket_path, "/x/ascend-npu.sock");
}

static void expect_bad(const char *needle, int rc)
{
	assert_int_equal(rc, -EINVAL);
	if (!strstr(why, needle))
		fail_msg("message '%s' does not mention '%s'", why, needle);
	/* A usage error: main points at --help. */
	assert_false(in_file);
}

static void test_device_list_strategies(void **state)
{
	(void)state;
	assert_int_equal(PARSE(NULL, "--device-list-strategy=ascend-runtime"), 0);
	assert_int_equal(cfg.device_list_strategies, CONFIG_STRATEGY_ASCEND_RUNTIME);
	assert_int_equal(PARSE(NULL, "--device-list-strategy", "cdi,native", "--cdi-dir=/etc/cdi/"), 0);
	assert_int_equal(cfg.device_list_strategies, CONFIG_STRATEGY_CDI | CONFIG_STRATEGY_NATIVE);
	assert_string_equal(cfg.cdi_dir, "/etc/cdi");
	/* With cdi the CDI names come from the resource name. */
	assert_string_equal(srv.cdi.kind, "ascend.com/npu");
	assert_string_equal(srv.cdi.file_name, "ascend.com-npu.json");
	assert_string_equal(srv.cdi.annotation_key, "cdi.k8s.io/ascend.com_npu");
	assert_string_equal(srv.cdi.version, "0.5.0");
	assert_int_equal(PARSE(NULL, "--resource-name=huawei.com/Ascend910", "--device-list-strategy=native,ascend-runtime,cdi"),
			 0);
	assert_int_equal(cfg.device_list_strategies,
			 CONFIG_STRATEGY_NATIVE | CONFIG_STRATEGY_ASCEND_RUNTIME | CONFIG_STRATEGY_CDI);
	/* The names are the configuration's; what they ask of Allocate, the plugin's. */
	assert_int_equal(srv.strategies, ALLOCATE_STRATEGY_NATIVE | ALLOCATE_STRATEGY_ASCEND_RUNTIME | ALLOCATE_STRATEGY_CDI);
	char buf[64];
	/* Written in one order whatever the input's. */
	assert_int_equal(config_strategies_format(cfg.device_list_strategies, buf, sizeof(buf)), 0);
	assert_string_equal(buf, "native,ascend-runtime,cdi");
	assert_int_equal(config_strategies_format(CONFIG_STRATEGY_CDI, buf, sizeof(buf)), 0);
	assert_string_equal(buf, "cdi");
	assert_int_equal(config_strategies_format(CONFIG_STRATEGY_NATIVE | CONFIG_STRATEGY_CDI, buf, 8), -ENOBUFS);
	assert_string_equal(srv.cdi.file_name, "huawei.com-Ascend910.json");
	/* A resource name that is no CDI kind is fine until cdi is asked for. */
	assert_int_equal(PARSE(NULL, "--resource-name=1x.com/npu"), 0);

	expect_bad("--device-list-strategy: 'gpu' is not a comma list of native, ascend-runtime and cdi",
		   PARSE(NULL, "--device-list-strategy=gpu"));
	const char *bad[] = { "", ",", "native,", ",cdi", "native,,cdi", "cdi,cdi", "CDI", "native cdi", "cdi=1" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char want[96];
		snprintf(want, sizeof(want), "--device-list-strategy: '%s' is not", bad[i]);
		expect_bad(want, PARSE(NULL, "--device-list-strategy", bad[i]));
	}
	expect_bad("--device-list-strategy needs a value", PARSE(NULL, "--device-list-strategy"));
	expect_bad("--cdi-dir: 'cdi' is not an absolute path", PARSE(NULL, "--cdi-dir=cdi"));
	expect_bad("--device-list-strategy=cdi: --resource-name 1x.com/npu cannot name a CDI kind: CDI wants the vendor "
		   "('1x.com') and the class ('npu') to start with a letter",
		   PARSE(NULL, "--resource-name=1x.com/npu", "--device-list-strategy=cdi"));
	expect_bad("--device-list-strategy=cdi: --resource-name example.com/0npu cannot name a CDI kind",
		   PARSE(NULL, "--device-list-strategy=native,cdi", "--resource-name=example.com/0npu"));
}

static void test_bad_input_names_the_flag(void **state)
{
	(void)state;
	expect_bad("unknown flag '--bogus'", PARSE(NULL, "--bogus"));
	expect_bad("unknown flag '--bogus'", PARSE(NULL, "--bogus=1"));
	expect_bad("unexpected argument 'stray'", PARSE(NULL, "stray"));
	expect_bad("--socket-dir needs a value", PARSE(NULL, "--socket-dir"));
	expect_bad("--help takes no value", PARSE(NULL, "--help=yes"));
	expect_bad("--resource-name: 'npu' is invalid", PARSE(NULL, "--resource-name", "npu"));
	expect_bad("--resource-name: 'kubernetes.io/npu' is invalid", PARSE(NULL, "--resource-name=kubernetes.io/npu"));
	expect_bad("--backend: 'gpu'", PARSE(NULL, "--backend=gpu"));
	expect_bad("--health-interval: '0'", PARSE(NULL, "--health-interval=0"));
	expect_bad("--health-interval: '10ms'", PARSE(NULL, "--health-interval=10ms"));
	expect_bad("--health-interval: 'soon'", PARSE(NULL, "--health-interval=soon"));
	expect_bad("--log-level: 'loud'", PARSE(NULL, "--log-level=loud"));
	expect_bad("--dev-dir: 'dev' is not an absolute path", PARSE(NULL, "--dev-dir=dev"));
	expect_bad("--host-root: 'x'", PARSE(NULL, "--host-root", "x"));
	expect_bad("ASCEND_DRIVER_PATH", PARSE("relative/driver"));
	expect_bad("--front-end: 'kubelet' is not one of device-plugin, dra, both", PARSE(NULL, "--front-end=kubelet"));
	expect_bad("--dra-chips: '0-x' is not a physical id", PARSE(NULL, "--dra-chips=0-x"));
	expect_bad("--dra-no-execute-levels: 'SubHealthFault' is not a level that takes a chip out of service",
		   PARSE(NULL, "--dra-no-execute-levels=SeparateNPU,SubHealthFault"));
	expect_bad("--dra-no-execute-levels: an empty or overlong entry", PARSE(NULL, "--dra-no-execute-levels=SeparateNPU,,"));
	expect_bad("--dra-no-execute-levels: an empty or overlong entry", PARSE(NULL, "--dra-no-execute-levels=SeparateNPU,"));
	expect_bad("--dra-dynamic-vnpus: 'x' is not a physical id", PARSE(NULL, "--dra-dynamic-vnpus=x"));

	/* The message names the whole socket path that does not fit and its length. */
	char long_dir[200], want[512];
	memset(long_dir, 'a', sizeof(long_dir));
	long_dir[0] = '/';
	long_dir[sizeof(long_dir) - 1] = '\0';
	assert_int_equal(PARSE(NULL, "--socket-dir", long_dir), -EINVAL);
	snprintf(want, sizeof(want),
		 "--socket-dir: the socket path %s/ascend-npu.sock would be 215 bytes; "
		 "unix socket paths must stay under 108",
		 long_dir);
	assert_string_equal(why, want);
	assert_false(in_file);
}

/* Of the sockets in --socket-dir, the message names the longest: the
 * resource's, or kubelet.sock when the resource's name is shorter. */
static void test_socket_dir_names_the_longest_socket(void **state)
{
	(void)state;
	char dir[100], want[512];
	memset(dir, 'd', sizeof(dir));
	dir[0] = '/';
	dir[sizeof(dir) - 1] = '\0'; /* 99 bytes: kubelet.sock makes 112, ascend-npu.sock 115 */
	assert_int_equal(PARSE(NULL, "--socket-dir", dir), -EINVAL);
	snprintf(want, sizeof(want),
		 "--socket-dir: the socket path %s/ascend-npu.sock would be 115 bytes; "
		 "unix socket paths must stay under 108",
		 dir);
	assert_string_equal(why, want);

	assert_int_equal(PARSE(NULL, "--socket-dir", dir, "--resource-name=a.io/n"), -EINVAL);
	snprintf(want, sizeof(want),
		 "--socket-dir: the socket path %s/kubelet.sock would be 112 bytes; "
		 "unix socket paths must stay under 108",
		 dir);
	assert_string_equal(why, want);

	/* Trailing slashes are not counted; 94 bytes of directory leave room for both. */
	dir[94] = '\0';
	assert_int_equal(PARSE(NULL, "--socket-dir", dir, "--resource-name=a.io/n"), 0);
	dir[94] = '/';
	dir[95] = '\0';
	assert_int_equal(PARSE(NULL, "--socket-dir", dir, "--resource-name=a.io/n"), 0);
	assert_int_equal(strlen(srv.kubelet_socket), 107);
}

/* Every setting flag, changed alone, is one change with its own name, and
 * reload takes exactly the three a running daemon can change: the table is
 * the one list of them. */
static void record_change(void *ctx, const struct config_change *change)
{
	char *seen = ctx;
	size_t n = strlen(seen);
	snprintf(seen + n, 512 - n, "%s%s%s", n ? " " : "", change->reloadable ? "+" : "", change->flag);
	if (change->was)
		assert_string_not_equal(change->was, change->now);
}

static void test_reload_follows_the_flag_table(void **state)
{
	(void)state;
	static const struct {
		const char *flag, *value, *expect;
	} settings[] = {
		{ "resource-name", "example.com/npu", "+resource-name" },
		{ "socket-dir", "/tmp/sockets", "socket-dir" },
		{ "dev-dir", "/tmp/dev", "dev-dir" },
		{ "driver-path", "/opt/driver", "driver-path" },
		{ "host-root", "/host", "host-root" },
		{ "dcmi-lib", "/opt/libdcmi.so", "dcmi-lib" },
		{ "backend", "devfs", "backend" },
		{ "health-interval", "7s", "+health-interval" },
		{ "device-list-strategy", "cdi", "device-list-strategy" },
		{ "cdi-dir", "/tmp/cdi", "cdi-dir" },
		{ "metrics-addr", "127.0.0.1:9", "metrics-addr" },
		{ "telemetry-interval", "30s", "telemetry-interval" },
		{ "pod-resources-socket", "/tmp/podres.sock", "pod-resources-socket" },
		{ "nfd-features-file", "/tmp/nfd", "nfd-features-file" },
		{ "log-level", "debug", "+log-level" },
		{ "log-format", "json", "log-format" },
	};
	static struct config base, next, running;
	const char *argv[] = { "p" };
	assert_int_equal(parse(NULL, 1, argv), 0);
	base = cfg;
	for (size_t i = 0; i < sizeof(settings) / sizeof(settings[0]); i++) {
		next = base;
		char msg[256], seen[512] = "";
		assert_int_equal(config_flag_apply(&next, settings[i].flag, settings[i].value, msg, sizeof(msg)), 0);
		config_changes(&base, &next, record_change, seen);
		assert_string_equal(seen, settings[i].expect);
		running = base;
		config_take_reloadable(&running, &next);
		seen[0] = '\0';
		config_changes(&running, &next, record_change, seen);
		/* Taken: no difference left; kept: the same difference. */
		assert_string_equal(seen, settings[i].expect[0] == '+' ? "" : settings[i].expect);
	}
	/* Switches and --config are no settings. */
	char msg[256];
	assert_int_equal(config_flag_apply(&next, "probe", "", msg, sizeof(msg)), -EOPNOTSUPP);
}

/* The pod's UID names the sockets: its first group, or the first 8
 * characters; anything but a UID's characters is refused without echoing
 * it (a newline would split the one-line error). */
static void test_instance(void **state)
{
	(void)state;
	struct config c = { 0 };
	char problem[256];
	assert_int_equal(config_set_instance(&c, "0a1b2c3d-1111-2222-3333-444455556666", problem, sizeof(problem)), 0);
	assert_string_equal(c.instance, "0a1b2c3d");
	assert_int_equal(config_set_instance(&c, "abc", problem, sizeof(problem)), 0);
	assert_string_equal(c.instance, "abc");
	assert_int_equal(config_set_instance(&c, "0123456789abcdef", problem, sizeof(problem)), 0);
	assert_string_equal(c.instance, "01234567");
	assert_int_equal(config_set_instance(&c, NULL, problem, sizeof(problem)), 0);
	assert_string_equal(c.instance, "");
	assert_int_equal(config_set_instance(&c, "bad\nuid", problem, sizeof(problem)), -EINVAL);
	assert_null(strchr(problem, '\n'));
	assert_non_null(strstr(problem, "ASCEND_PLUGIN_INSTANCE"));
	assert_int_equal(config_set_instance(&c, "ABC", problem, sizeof(problem)), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_defaults),
		cmocka_unit_test(test_front_ends),
		cmocka_unit_test(test_both_spellings_and_env),
		cmocka_unit_test(test_actions),
		cmocka_unit_test(test_device_list_strategies),
		cmocka_unit_test(test_bad_input_names_the_flag),
		cmocka_unit_test(test_socket_dir_names_the_longest_socket),
		cmocka_unit_test(test_reload_follows_the_flag_table),
		cmocka_unit_test(test_instance),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
