/* SPDX-License-Identifier: Apache-2.0 */
/* The --config file: a good file parsed whole, every kind of error with its
 * line and key path, the limits, the sections refused until the daemon acts
 * on them, and the precedence command line > environment > file > defaults. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "config/config.h"
#include "config/file.h"
#include "daemon/serving.h"
#include "support/tmpdir.h"

static char why[1024];
static char dir[64];
static char path[256];

static int parse(const char *text, struct config_file **ret)
{
	why[0] = '\0';
	return config_file_parse(text, strlen(text), ret, why, sizeof(why));
}

/* The text must be refused with exactly this message. */
static void refused(const char *text, int want, const char *message)
{
	struct config_file *f = NULL;
	int r = parse(text, &f);
	if (r != want || strcmp(why, message) != 0)
		fail_msg("%s\n-> %d '%s'\nwant %d '%s'", text, r, why, want, message);
	assert_null(f);
}

static void write_file(const char *text)
{
	FILE *fp = fopen(path, "w");
	assert_non_null(fp);
	assert_int_equal(fputs(text, fp) >= 0, 1);
	assert_int_equal(fclose(fp), 0);
}

static int setup(void **state)
{
	(void)state;
	if (tmpdir_make(dir, sizeof(dir), "test_config_file") < 0)
		return -1;
	snprintf(path, sizeof(path), "%s/config.yaml", dir);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	return tmpdir_remove(dir) == 0 ? 0 : -1;
}

static void test_good_file(void **state)
{
	(void)state;
	struct config_file *f = NULL;
	assert_int_equal(parse("version: v1\n"
			       "flags:\n"
			       "  resourceName: huawei.com/Ascend910\n"
			       "  healthInterval: 2s\n"
			       "  devDir: /host/dev\n"
			       "  backend: devfs\n"
			       "  logLevel: \"debug\"\n"
			       "sharing:\n"
			       "  timeSlicing:\n"
			       "    renameByDefault: true\n"
			       "    failRequestsGreaterThanOne: yes\n"
			       "    enableDeviceShare: true\n"
			       "    resources:\n"
			       "    - name: ascend.com/npu\n"
			       "      replicas: 4\n"
			       "resources:\n"
			       "- family: 910B\n"
			       "  name: huawei.com/Ascend910\n"
			       "- family: 310P\n"
			       "  name: huawei.com/Ascend310P\n",
			       &f),
			 0);
	assert_non_null(f);
	assert_null(f->path);
	assert_int_equal(f->n_flags, 5);
	assert_string_equal(f->flags[0].key, "resourceName");
	assert_string_equal(f->flags[0].flag, "resource-name");
	assert_string_equal(f->flags[0].value, "huawei.com/Ascend910");
	assert_int_equal(f->flags[0].line, 3);
	assert_string_equal(f->flags[1].flag, "health-interval");
	assert_string_equal(f->flags[2].flag, "dev-dir");
	assert_string_equal(f->flags[4].value, "debug");
	assert_int_equal(f->time_slicing.line, 9);
	assert_true(f->time_slicing.rename_by_default);
	assert_true(f->time_slicing.fail_requests_greater_than_one);
	assert_true(f->time_slicing.enable_device_share);
	assert_int_equal(f->time_slicing.n_resources, 1);
	assert_string_equal(f->time_slicing.resources[0].name, "ascend.com/npu");
	assert_int_equal(f->time_slicing.resources[0].replicas, 4);
	assert_int_equal(f->time_slicing.resources[0].line, 14);
	assert_int_equal(f->resources_line, 16);
	assert_int_equal(f->n_resources, 2);
	assert_int_equal(f->resources[0].family, NPU_FAMILY_910B);
	assert_string_equal(f->resources[0].name, "huawei.com/Ascend910");
	assert_int_equal(f->resources[1].family, NPU_FAMILY_310P);
	assert_int_equal(f->resources[1].line, 19);
	config_file_free(f);

	/* Scalars of other types are text to the flags; empty sections are fine. */
	assert_int_equal(parse("version: v1\nflags:\n  healthInterval: 5\nsharing:\n  timeSlicing: {}\nresources: []\n",
			       &f),
			 0);
	assert_string_equal(f->flags[0].value, "5");
	assert_int_equal(f->time_slicing.n_resources, 0);
	assert_int_equal(f->n_resources, 0);
	config_file_free(f);

	assert_int_equal(parse("version: v1\nflags:\nsharing:\nresources:\n", &f), 0);
	assert_int_equal(f->n_flags, 0);
	config_file_free(f);

	assert_int_equal(parse("version: v1\nresources:\n- family: 910\n  name: huawei.com/Ascend910\n", &f), 0);
	assert_int_equal(f->resources[0].family, NPU_FAMILY_910);
	config_file_free(f);

	/* Time-slicing of two resources: each keeps its line for config_parse's messages. */
	assert_int_equal(parse("version: v1\nsharing:\n  timeSlicing:\n    resources:\n"
			       "    - name: ascend.com/npu\n      replicas: 2\n"
			       "    - name: ascend.com/npu2\n      replicas: 3\n",
			       &f),
			 0);
	assert_int_equal(f->time_slicing.n_resources, 2);
	assert_int_equal(f->time_slicing.resources[1].line, 7);
	assert_int_equal(f->time_slicing.resources[1].replicas, 3);
	config_file_free(f);
	config_file_free(NULL);
}

static void test_errors_name_line_and_key(void **state)
{
	(void)state;
	/* The top level. */
	refused("", -EINVAL, "the file is empty; it must say at least 'version: v1'");
	refused("flags: {}\n", -EINVAL, "line 1: version: missing; the file must say 'version: v1'");
	refused("version: v2\n", -EINVAL, "line 1: version: 'v2' is not supported (only v1 is)");
	refused("- a\n", -EINVAL, "line 1: the top level: must be a mapping, not a list");
	refused("version: v1\nplugin: {}\n", -EINVAL,
		"line 2: plugin: unknown key (the file takes version, flags, sharing, resources, faultPolicy)");
	refused("version: v1\nversion: v1\n", -EINVAL,
		"line 2: version: the key appears twice (first on line 1)");
	refused("version: v1\n---\nversion: v1\n", -EINVAL, "line 2: a second YAML document: the file holds one");
	refused("version: v1\nflags: [\n", -EINVAL,
		"line 3: malformed YAML: did not find expected node content (while parsing a flow node)");

	/* Flags: unknown, not settable, wrong type, bad value by the flag's rule. */
	refused("version: v1\nflags:\n  healthInterval: soon\n", -EINVAL,
		"line 3: flags.healthInterval: 'soon' is not a duration between 100ms and 24h (e.g. 500ms, 5s, 1m)");
	refused("version: v1\nflags:\n  nope: 1\n", -EINVAL, "line 3: flags.nope: unknown flag (there is no --nope)");
	refused("version: v1\nflags:\n  health-interval: 5s\n", -EINVAL,
		"line 3: flags.health-interval: unknown flag (keys are flags in camelCase, e.g. healthInterval)");
	refused("version: v1\nflags:\n  probe: true\n", -EINVAL,
		"line 3: flags.probe: --probe cannot be set from the file");
	refused("version: v1\nflags:\n  config: /etc/x.yaml\n", -EINVAL,
		"line 3: flags.config: --config cannot be set from the file");
	refused("version: v1\nflags:\n  devDir: dev\n", -EINVAL, "line 3: flags.devDir: 'dev' is not an absolute path");
	refused("version: v1\nflags:\n  backend: cuda\n", -EINVAL,
		"line 3: flags.backend: 'cuda' is not one of auto, dcmi, devfs");
	refused("version: v1\nflags:\n  resourceName: npu\n", -EINVAL,
		"line 3: flags.resourceName: 'npu' is invalid: it must have the form <domain>/<name>");
	refused("version: v1\nflags:\n  logLevel:\n", -EINVAL, "line 3: flags.logLevel: needs a value");
	refused("version: v1\nflags:\n  logLevel: [debug]\n", -EINVAL,
		"line 3: flags.logLevel: must be a scalar, not a list");
	refused("version: v1\nflags: 5s\n", -EINVAL, "line 2: flags: must be a mapping, not a scalar");
	refused("version: v1\nflags:\n  logLevel: info\n  logLevel: debug\n", -EINVAL,
		"line 4: flags.logLevel: the key appears twice (first on line 3)");

	/* sharing.timeSlicing. */
	refused("version: v1\nsharing:\n  mps: {}\n", -EINVAL,
		"line 3: sharing.mps: unknown key (sharing takes timeSlicing)");
	refused("version: v1\nsharing:\n  timeSlicing:\n    renameByDefault: \"true\"\n", -EINVAL,
		"line 4: sharing.timeSlicing.renameByDefault: must be true or false");
	refused("version: v1\nsharing:\n  timeSlicing:\n    rename: true\n", -EINVAL,
		"line 4: sharing.timeSlicing.rename: unknown key (sharing.timeSlicing takes renameByDefault, "
		"failRequestsGreaterThanOne, enableDeviceShare, resources)");
	refused("version: v1\nsharing:\n  timeSlicing:\n    enableDeviceShare: \"yes\"\n", -EINVAL,
		"line 4: sharing.timeSlicing.enableDeviceShare: must be true or false");
	refused("version: v1\nsharing:\n  timeSlicing:\n    enableDeviceShare: 1\n", -EINVAL,
		"line 4: sharing.timeSlicing.enableDeviceShare: must be true or false");
	refused("version: v1\nsharing:\n  timeSlicing:\n    enableDeviceShare: [true]\n", -EINVAL,
		"line 4: sharing.timeSlicing.enableDeviceShare: must be true or false");
	refused("version: v1\nsharing:\n  timeSlicing:\n    resources:\n    - name: ascend.com/npu\n      replicas: 65\n",
		-EINVAL, "line 6: sharing.timeSlicing.resources[0].replicas: must be an integer from 2 to 64");
	refused("version: v1\nsharing:\n  timeSlicing:\n    resources:\n    - name: ascend.com/npu\n      replicas: 1\n",
		-EINVAL, "line 6: sharing.timeSlicing.resources[0].replicas: must be an integer from 2 to 64");
	refused("version: v1\nsharing:\n  timeSlicing:\n    resources:\n    - name: ascend.com/npu\n      replicas: \"4\"\n",
		-EINVAL, "line 6: sharing.timeSlicing.resources[0].replicas: must be an integer from 2 to 64");
	refused("version: v1\nsharing:\n  timeSlicing:\n    resources:\n    - replicas: 2\n", -EINVAL,
		"line 5: sharing.timeSlicing.resources[0]: needs a name");
	refused("version: v1\nsharing:\n  timeSlicing:\n    resources:\n    - name: npu\n      replicas: 2\n", -EINVAL,
		"line 5: sharing.timeSlicing.resources[0].name: 'npu' is invalid: it must have the form <domain>/<name>");
	refused("version: v1\nsharing:\n  timeSlicing:\n    resources:\n"
		"    - {name: a.com/x, replicas: 2}\n    - {name: a.com/x, replicas: 3}\n",
		-EINVAL, "line 6: sharing.timeSlicing.resources[1].name: 'a.com/x' is listed twice");

	/* resources. */
	refused("version: v1\nresources:\n- family: 910C\n  name: a.com/x\n", -EINVAL,
		"line 3: resources[0].family: '910C' is not one of 910, 910B, A3, 310, 310P, 310B");
	refused("version: v1\nresources:\n- name: a.com/x\n", -EINVAL, "line 3: resources[0]: needs a family");
	refused("version: v1\nresources:\n- family: A3\n  name: a.com/x\n  devices: all\n", -EINVAL,
		"line 5: resources[0].devices: unknown key (resources[0] takes family, name)");
	refused("version: v1\nresources:\n  family: A3\n", -EINVAL, "line 3: resources: must be a list, not a mapping");
	refused("version: v1\nresources:\n- {family: A3, name: a.com/x}\n- {family: A3, name: a.com/y}\n", -EINVAL,
		"line 4: resources[1].family: A3 is listed twice (first on line 3)");
}

static void test_limits(void **state)
{
	(void)state;
	refused("version: v1\nx: &a 1\ny: *a\n", -EINVAL, "line 3: YAML aliases (*a) are not supported");

	char deep[256] = "version: v1\nsharing: ";
	for (int i = 0; i < 20; i++)
		strcat(deep, "[");
	refused(deep, -E2BIG, "line 2: YAML nested deeper than 16 levels");

	/* More entries than a mapping may hold. */
	char many[4096] = "version: v1\nflags:\n";
	for (int i = 0; i <= CONFIG_FILE_MAX_ENTRIES; i++) {
		char line[32];
		snprintf(line, sizeof(line), "  k%d: 1\n", i);
		strcat(many, line);
	}
	refused(many, -E2BIG, "line 3: flags: more than 64 entries");

	/* Too many nodes, and too many bytes. */
	size_t size = CONFIG_FILE_MAX_BYTES + 2;
	char *big = malloc(size);
	assert_non_null(big);
	size_t len = (size_t)snprintf(big, size, "version: v1\nx: [");
	while (len + 3 < size - 8 && len < 40000) {
		memcpy(big + len, "1, ", 3);
		len += 3;
	}
	memcpy(big + len, "1]\n", 4);
	refused(big, -E2BIG, "line 2: more than 10000 YAML nodes in one document");

	memset(big, '#', size - 1);
	big[size - 1] = '\0';
	struct config_file *f = NULL;
	assert_int_equal(config_file_parse(big, size - 1, &f, why, sizeof(why)), -E2BIG);
	assert_string_equal(why, "larger than 1048576 bytes");
	free(big);
}

static struct config cfg;
static struct serving srv; /* what cfg serves */
static bool in_file; /* config_parse's: the problem is in the --config file */

static int parse_args(const char *env, int argc, const char **argv)
{
	why[0] = '\0';
	in_file = false;
	int r = config_parse(argc, (char **)(uintptr_t)argv, env, &cfg, &in_file, why, sizeof(why));
	return r < 0 ? r : serving_build(&cfg, &srv, &in_file, why, sizeof(why));
}

#define ARGS(env, ...) parse_args(env, (int)(sizeof((const char *[]){ "p", __VA_ARGS__ }) / sizeof(char *)), \
				  (const char *[]){ "p", __VA_ARGS__ })

/* Per-family names and time-slicing of several resources become the set
 * of resources the plugin serves, each with its own socket and replicas. */
static void test_resources(void **state)
{
	(void)state;
	char arg[300], want[600], dir_arg[200];
	snprintf(arg, sizeof(arg), "--config=%s", path);

	write_file("version: v1\n"
		   "sharing:\n"
		   "  timeSlicing:\n"
		   "    renameByDefault: true\n"
		   "    resources:\n"
		   "    - name: ascend.com/npu-310p\n"
		   "      replicas: 4\n"
		   "    - name: ascend.com/npu\n"
		   "      replicas: 2\n"
		   "resources:\n"
		   "- family: 910B\n"
		   "  name: huawei.com/Ascend910\n"
		   "- family: 910\n"
		   "  name: huawei.com/Ascend910\n"
		   "- family: 310P\n"
		   "  name: ascend.com/npu-310p\n"
		   "- family: 310\n"
		   "  name: ascend.com/npu\n");
	assert_int_equal(ARGS(NULL, arg, "--socket-dir=/dp"), 0);
	const struct resource_set *set = &srv.resources;
	assert_int_equal(set->count, 3);
	assert_true(set->defs[0].is_default);
	assert_string_equal(set->defs[0].name, "ascend.com/npu.shared");
	assert_string_equal(set->defs[0].socket_path, "/dp/ascend-npu.shared.sock");
	assert_int_equal(set->defs[0].sharing.replicas, 2);
	assert_int_equal(set->defs[0].families, 0); /* 310 named like the default stays in it */
	assert_string_equal(set->defs[1].name, "huawei.com/Ascend910");
	assert_string_equal(set->defs[1].endpoint, "huawei-Ascend910.sock");
	assert_int_equal(set->defs[1].families, (1u << NPU_FAMILY_910B) | (1u << NPU_FAMILY_910));
	assert_int_equal(set->defs[1].sharing.replicas, 0);
	assert_string_equal(set->defs[2].name, "ascend.com/npu-310p.shared");
	assert_int_equal(set->defs[2].families, 1u << NPU_FAMILY_310P);
	assert_int_equal(set->defs[2].sharing.replicas, 4);
	assert_string_equal(srv.resources.defs[0].name, "ascend.com/npu.shared");
	assert_string_equal(srv.vnpu_base, "ascend.com/npu");
	assert_int_equal(srv.resources.defs[0].sharing.replicas, 2);

	/* Time-slicing must name one of them. */
	write_file("version: v1\nsharing:\n  timeSlicing:\n    resources:\n"
		   "    - name: ascend.com/npu-vir04\n      replicas: 2\n"
		   "resources:\n- family: 310P\n  name: ascend.com/npu-310p\n");
	assert_int_equal(ARGS(NULL, arg), -EINVAL);
	snprintf(want, sizeof(want),
		 "%s: line 5: sharing.timeSlicing.resources[0].name: 'ascend.com/npu-vir04' is not a resource of this "
		 "plugin (ascend.com/npu, ascend.com/npu-310p; vNPU resources are not time-sliced)",
		 path);
	assert_string_equal(why, want);

	assert_true(in_file);

	/* Two names that give one socket file. */
	write_file("version: v1\nresources:\n- family: 310P\n  name: ascend.org/npu\n");
	assert_int_equal(ARGS(NULL, arg), -EINVAL);
	snprintf(want, sizeof(want),
		 "%s: resources: ascend.com/npu and ascend.org/npu would share the socket ascend-npu.sock", path);
	assert_string_equal(why, want);
	assert_true(in_file);

	/* A name of the file's too long for the socket directory the default
	 * resource and kubelet.sock fit in: the file's resource is named, with
	 * its whole socket path and that path's length. */
	const char *socket_dir = "/var/lib/kubelet/device-plugins/of-a-node-with-a-long-root-dir";
	const char *long_name = "ascend.com/npu-310p-named-at-length-for-this-test";
	snprintf(want, sizeof(want), "version: v1\nresources:\n- family: 310P\n  name: %s\n", long_name);
	write_file(want);
	snprintf(dir_arg, sizeof(dir_arg), "--socket-dir=%s", socket_dir);
	assert_int_equal(ARGS(NULL, arg, dir_arg), -EINVAL);
	snprintf(want, sizeof(want),
		 "%s: resources: %s: the socket path %s/ascend-npu-310p-named-at-length-for-this-test.sock would be "
		 "113 bytes; unix socket paths must stay under 108",
		 path, long_name, socket_dir);
	assert_string_equal(why, want);
	assert_true(in_file);
	/* When the directory is too long for the default resource too, it is
	 * the directory's fault, and the longest path is the one named. */
	socket_dir = "/var/lib/kubelet/device-plugins/of-a-node-with-a-much-longer-root-dir/than-that/and-longer-still";
	snprintf(dir_arg, sizeof(dir_arg), "--socket-dir=%s", socket_dir);
	assert_int_equal(ARGS(NULL, arg, dir_arg), -EINVAL);
	snprintf(want, sizeof(want),
		 "--socket-dir: the socket path %s/ascend-npu-310p-named-at-length-for-this-test.sock would be 147 "
		 "bytes; unix socket paths must stay under 108",
		 socket_dir);
	assert_string_equal(why, want);
	assert_false(in_file);
}

static void test_precedence(void **state)
{
	(void)state;
	write_file("version: v1\n"
		   "flags:\n"
		   "  healthInterval: 2s\n"
		   "  driverPath: /file/driver\n"
		   "  logLevel: debug\n"
		   "  socketDir: /file/dp\n");

	/* The file over the defaults. */
	assert_int_equal(ARGS(NULL, "--config", path), 0);
	assert_string_equal(cfg.config_file, path);
	assert_int_equal(cfg.health_interval_ms, 2000);
	assert_string_equal(cfg.driver_path, "/file/driver");
	assert_int_equal(cfg.log_level, LOG_LEVEL_DEBUG);
	assert_string_equal(srv.resources.defs[0].socket_path, "/file/dp/ascend-npu.sock");
	assert_string_equal(srv.resources.defs[0].name, "ascend.com/npu");

	/* The environment over the file, the command line over both, wherever
	 * --config stands on it. */
	assert_int_equal(ARGS("/env/driver", "--config", path), 0);
	assert_string_equal(cfg.driver_path, "/env/driver");
	assert_int_equal(ARGS("/env/driver", "--health-interval=1s", "--driver-path=/cli/driver", "--config=", path), -EINVAL);
	assert_string_equal(why, "--config: empty path");
	char arg[300];
	snprintf(arg, sizeof(arg), "--config=%s", path);
	assert_int_equal(ARGS("/env/driver", "--health-interval=1s", "--driver-path=/cli/driver", arg), 0);
	assert_int_equal(cfg.health_interval_ms, 1000);
	assert_string_equal(cfg.driver_path, "/cli/driver");
	assert_int_equal(cfg.log_level, LOG_LEVEL_DEBUG);

	/* A bad environment is judged only when it counts, as without a file. */
	assert_int_equal(ARGS("relative", "--driver-path=/cli/driver", arg), 0);
	assert_int_equal(ARGS("relative", arg), -EINVAL);
	assert_non_null(strstr(why, "ASCEND_DRIVER_PATH"));

	/* Errors name the file; a refused section stops the start. */
	write_file("version: v1\nflags:\n  healthInterval: soon\n");
	assert_int_equal(ARGS(NULL, arg, "--health-interval=1s"), -EINVAL);
	char want[512];
	snprintf(want, sizeof(want),
		 "%s: line 3: flags.healthInterval: 'soon' is not a duration between 100ms and 24h (e.g. 500ms, 5s, 1m)",
		 path);
	assert_string_equal(why, want);

	/* Time-slicing: the entry must name the final resource name. */
	write_file("version: v1\nflags:\n  logLevel: warn\nsharing:\n  timeSlicing:\n    resources:\n"
		   "    - name: ascend.com/npu\n      replicas: 4\n");
	assert_int_equal(ARGS(NULL, arg), 0);
	assert_int_equal(srv.resources.defs[0].sharing.replicas, 4);
	assert_false(srv.resources.defs[0].sharing.fail_requests_greater_than_one);
	assert_string_equal(srv.resources.defs[0].name, "ascend.com/npu");
	assert_string_equal(srv.resources.defs[0].endpoint, "ascend-npu.sock");
	assert_int_equal(ARGS(NULL, arg, "--resource-name=huawei.com/Ascend910"), -EINVAL);
	snprintf(want, sizeof(want),
		 "%s: line 7: sharing.timeSlicing.resources[0].name: 'ascend.com/npu' is not a resource of this plugin "
		 "(huawei.com/Ascend910; vNPU resources are not time-sliced)",
		 path);
	assert_string_equal(why, want);

	/* The file's own resourceName counts, and the command line's over it. */
	write_file("version: v1\nflags:\n  resourceName: huawei.com/Ascend910\nsharing:\n  timeSlicing:\n"
		   "    renameByDefault: true\n    failRequestsGreaterThanOne: true\n    resources:\n"
		   "    - name: huawei.com/Ascend910\n      replicas: 64\n");
	assert_int_equal(ARGS(NULL, arg, "--device-list-strategy=native,cdi"), 0);
	assert_int_equal(srv.resources.defs[0].sharing.replicas, 64);
	assert_true(srv.resources.defs[0].sharing.fail_requests_greater_than_one);
	assert_string_equal(srv.resources.defs[0].name, "huawei.com/Ascend910.shared");
	assert_string_equal(srv.resources.defs[0].endpoint, "huawei-Ascend910.shared.sock");
	assert_string_equal(srv.cdi.kind, "huawei.com/Ascend910"); /* the chips, not the replicas */
	assert_int_equal(ARGS(NULL, arg, "--resource-name=ascend.com/npu"), -EINVAL);

	/* A shared name that is no longer valid (too long) is refused. */
	char longname[400];
	snprintf(longname, sizeof(longname),
		 "version: v1\nsharing:\n  timeSlicing:\n    renameByDefault: true\n    resources:\n"
		 "    - name: ascend.com/%.63s\n      replicas: 2\n",
		 "nnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnn");
	write_file(longname);
	snprintf(longname, sizeof(longname), "--resource-name=ascend.com/%.63s",
		 "nnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnn");
	assert_int_equal(ARGS(NULL, arg, longname), -EINVAL);
	assert_non_null(strstr(why, "sharing.timeSlicing.renameByDefault"));
	assert_true(in_file);

	/* Without resources, renameByDefault changes nothing. */
	write_file("version: v1\nsharing:\n  timeSlicing:\n    renameByDefault: true\n");
	assert_int_equal(ARGS(NULL, arg), 0);
	assert_int_equal(srv.resources.defs[0].sharing.replicas, 0);
	assert_string_equal(srv.resources.defs[0].name, "ascend.com/npu");

	/* The file's socketDir still has to give a socket path that fits. */
	char longdir[200] = "version: v1\nflags:\n  socketDir: /";
	memset(longdir + strlen(longdir), 'd', 110);
	write_file(longdir);
	assert_int_equal(ARGS(NULL, arg), -EINVAL);
	assert_non_null(strstr(why, "--socket-dir: the socket path /ddd"));
	assert_non_null(strstr(why, "/ascend-npu.sock would be 127 bytes; unix socket paths must stay under 108"));

	/* Missing, not regular, too large. */
	unlink(path);
	assert_int_equal(ARGS(NULL, arg), -ENOENT);
	snprintf(want, sizeof(want), "%s: cannot open: No such file or directory", path);
	assert_string_equal(why, want);
	assert_true(in_file);
	assert_int_equal(ARGS(NULL, "--config", dir), -EINVAL);
	snprintf(want, sizeof(want), "%s: not a regular file", dir);
	assert_string_equal(why, want);
	FILE *fp = fopen(path, "w");
	assert_non_null(fp);
	/* One byte over the limit: a comment the parser never sees. */
	for (int i = 0; i < CONFIG_FILE_MAX_BYTES / 64; i++)
		fputs("# .............................................................\n", fp);
	fputs("version: v1\n", fp);
	assert_int_equal(fclose(fp), 0);
	assert_int_equal(ARGS(NULL, arg), -E2BIG);
	snprintf(want, sizeof(want), "%s: larger than 1048576 bytes", path);
	assert_string_equal(why, want);
}

/* faultPolicy: every key as written, then over the defaults and Huawei's
 * files in the configuration. */
static void test_fault_policy(void **state)
{
	(void)state;
	struct config_file *f = NULL;
	assert_int_equal(parse("version: v1\n"
			       "faultPolicy:\n"
			       "  recoveryHold: 10s\n"
			       "  defaultLevel: RestartBusiness\n"
			       "  releaseWindow: 48h\n"
			       "  codes:\n"
			       "    80E01801: RestartNPU\n"
			       "    0x81078603: PreSeparateNPU\n"
			       "    \"8c2fa009\": NotHandleFault\n"
			       "  frequency:\n"
			       "  - codes: [80E01801, 80DE1801]\n"
			       "    count: 2\n"
			       "    window: 24h\n"
			       "    level: ManuallySeparateNPU\n"
			       "  - codes: \"*\"\n"
			       "    count: 10\n"
			       "    window: 1h\n"
			       "    level: PreSeparateNPU\n"
			       "    releaseWindow: 2h\n"
			       "  duration:\n"
			       "  - codes: [81078603]\n"
			       "    timeout: 20s\n"
			       "    level: PreSeparateNPU\n"
			       "    recover: 1m\n"
			       "  huaweiFiles: /etc/ascend-fault\n",
			       &f),
			 0);
	const struct config_fault_policy *fp = &f->fault_policy;
	assert_int_equal(fp->line, 2);
	assert_true(fp->has_recovery_hold && fp->has_default_level && fp->has_release_window);
	assert_int_equal(fp->recovery_hold_ms, 10000);
	assert_int_equal(fp->default_level, FAULT_LEVEL_RESTART_BUSINESS);
	assert_int_equal(fp->release_window_ms, 48LL * 3600 * 1000);
	assert_string_equal(fp->huawei_files, "/etc/ascend-fault");
	assert_int_equal(fp->huawei_files_line, 25);
	const struct fault_policy_config *rules = fp->rules;
	assert_int_equal(rules->n_codes, 3);
	assert_int_equal(fault_policy_code_level(rules, 0x80E01801, NULL), FAULT_LEVEL_RESTART_NPU);
	assert_int_equal(fault_policy_code_level(rules, 0x81078603, NULL), FAULT_LEVEL_PRE_SEPARATE_NPU);
	assert_int_equal(fault_policy_code_level(rules, 0x8C2FA009, NULL), FAULT_LEVEL_NOT_HANDLE);
	assert_int_equal(rules->n_frequency, 2);
	assert_int_equal(rules->frequency[0].n_codes, 2);
	assert_int_equal(rules->frequency[0].count, 2);
	assert_int_equal(rules->frequency[0].window_ms, 24LL * 3600 * 1000);
	assert_int_equal(rules->frequency[0].level, FAULT_LEVEL_MANUALLY_SEPARATE_NPU);
	assert_true(rules->frequency[1].all_codes);
	assert_int_equal(rules->frequency[1].hold_ms, 2LL * 3600 * 1000);
	assert_int_equal(rules->n_duration, 1);
	assert_int_equal(rules->duration[0].window_ms, 20000);
	assert_int_equal(rules->duration[0].hold_ms, 60000);
	/* The hot reset: off unless enabled, Huawei's limits unless given. */
	assert_false(fp->has_reset);
	config_file_free(f);

	assert_int_equal(parse("version: v1\nfaultPolicy:\n  reset:\n    enabled: true\n    maxResets: 2\n"
			       "    window: 1h\n    timeout: 30s\n",
			       &f),
			 0);
	assert_true(f->fault_policy.has_reset);
	assert_true(f->fault_policy.reset.enabled);
	assert_int_equal(f->fault_policy.reset.max_resets, 2);
	assert_int_equal(f->fault_policy.reset.window_ms, 3600 * 1000);
	assert_int_equal(f->fault_policy.reset.timeout_ms, 30 * 1000);
	config_file_free(f);
	assert_int_equal(parse("version: v1\nfaultPolicy:\n  reset:\n    enabled: true\n", &f), 0);
	assert_int_equal(f->fault_policy.reset.max_resets, FAULT_RESET_DEFAULT_MAX);
	assert_int_equal(f->fault_policy.reset.timeout_ms, FAULT_RESET_DEFAULT_TIMEOUT_MS);
	config_file_free(f);

	/* An empty section, or none. */
	assert_int_equal(parse("version: v1\nfaultPolicy:\n", &f), 0);
	assert_int_equal(f->fault_policy.line, 2);
	assert_false(f->fault_policy.has_recovery_hold);
	assert_int_equal(f->fault_policy.rules->n_codes, 0);
	config_file_free(f);
	assert_int_equal(parse("version: v1\n", &f), 0);
	assert_null(f->fault_policy.rules);
	config_file_free(f);

	/* Each refusal names its line and key. */
	refused("version: v1\nfaultPolicy:\n  recoveryHold: soon\n", -EINVAL,
		"line 3: faultPolicy.recoveryHold: 'soon' is not a duration from 0 to 240h (e.g. 500ms, 30s, 5m, 24h; a "
		"bare number means seconds)");
	refused("version: v1\nfaultPolicy:\n  recoveryHold: 241h\n", -EINVAL,
		"line 3: faultPolicy.recoveryHold: '241h' is not a duration from 0 to 240h (e.g. 500ms, 30s, 5m, 24h; a "
		"bare number means seconds)");
	refused("version: v1\nfaultPolicy:\n  defaultLevel: Healthy\n", -EINVAL,
		"line 3: faultPolicy.defaultLevel: 'Healthy' is not one of NotHandleFault, SubHealthFault, "
		"RestartRequest, RestartBusiness, FreeRestartNPU, RestartNPU, PreSeparateNPU, SeparateNPU, "
		"ManuallySeparateNPU");
	refused("version: v1\nfaultPolicy:\n  codes:\n    80E01801: restartNPU\n", -EINVAL,
		"line 4: faultPolicy.codes.80E01801: 'restartNPU' is not one of NotHandleFault, SubHealthFault, "
		"RestartRequest, RestartBusiness, FreeRestartNPU, RestartNPU, PreSeparateNPU, SeparateNPU, "
		"ManuallySeparateNPU");
	refused("version: v1\nfaultPolicy:\n  codes:\n    HBM: RestartNPU\n", -EINVAL,
		"line 4: faultPolicy.codes.HBM: 'HBM' is not a fault code (up to 8 hex digits such as 80E01801)");
	refused("version: v1\nfaultPolicy:\n  codes:\n    80E01801: RestartNPU\n    0x80e01801: SeparateNPU\n",
		-EINVAL, "line 5: faultPolicy.codes.0x80e01801: 80E01801 is listed twice (first on line 4)");
	refused("version: v1\nfaultPolicy:\n  codes: [80E01801]\n", -EINVAL,
		"line 3: faultPolicy.codes: must be a mapping, not a list");
	refused("version: v1\nfaultPolicy:\n  frequency:\n  - codes: 80E01801\n    count: 2\n    window: 1h\n"
		"    level: SeparateNPU\n",
		-EINVAL, "line 4: faultPolicy.frequency[0].codes: must be a list of fault codes, or \"*\" for every code");
	refused("version: v1\nfaultPolicy:\n  frequency:\n  - codes: []\n    count: 2\n    window: 1h\n"
		"    level: SeparateNPU\n",
		-EINVAL,
		"line 4: faultPolicy.frequency[0].codes: an empty list names no code; list fault codes, or write \"*\" "
		"for every code");
	refused("version: v1\nfaultPolicy:\n  frequency:\n  - codes: [80E01801, x]\n    count: 2\n    window: 1h\n"
		"    level: SeparateNPU\n",
		-EINVAL, "line 4: faultPolicy.frequency[0].codes[1]: 'x' is not a fault code (up to 8 hex digits such as "
			 "80E01801)");
	refused("version: v1\nfaultPolicy:\n  frequency:\n  - codes: \"*\"\n    count: 33\n    window: 1h\n"
		"    level: SeparateNPU\n",
		-EINVAL, "line 5: faultPolicy.frequency[0].count: must be an integer from 1 to 32");
	refused("version: v1\nfaultPolicy:\n  frequency:\n  - codes: \"*\"\n    count: 2\n    window: 0\n"
		"    level: SeparateNPU\n",
		-EINVAL, "line 6: faultPolicy.frequency[0].window: '0' is not a duration from 1ms to 240h (e.g. 500ms, "
			 "30s, 5m, 24h; a bare number means seconds)");
	refused("version: v1\nfaultPolicy:\n  frequency:\n  - codes: \"*\"\n    count: 2\n    level: SeparateNPU\n",
		-EINVAL, "line 4: faultPolicy.frequency[0]: needs window");
	refused("version: v1\nfaultPolicy:\n  frequency:\n  - codes: \"*\"\n    count: 2\n    window: 1h\n"
		"    level: SeparateNPU\n    times: 3\n",
		-EINVAL, "line 8: faultPolicy.frequency[0].times: unknown key (faultPolicy.frequency[0] takes codes, "
			 "count, window, level, releaseWindow)");
	refused("version: v1\nfaultPolicy:\n  duration:\n  - codes: \"*\"\n    timeout: 1m\n    level: SeparateNPU\n"
		"    releaseWindow: 1h\n",
		-EINVAL, "line 7: faultPolicy.duration[0].releaseWindow: unknown key (faultPolicy.duration[0] takes "
			 "codes, timeout, level, recover)");
	refused("version: v1\nfaultPolicy:\n  duration:\n  - codes: [81078603]\n    level: SeparateNPU\n", -EINVAL,
		"line 4: faultPolicy.duration[0]: needs timeout");
	refused("version: v1\nfaultPolicy:\n  huaweiFiles: etc/fault\n", -EINVAL,
		"line 3: faultPolicy.huaweiFiles: 'etc/fault' is not an absolute path");
	refused("version: v1\nfaultPolicy:\n  hotReset: 1\n", -EINVAL,
		"line 3: faultPolicy.hotReset: unknown key (faultPolicy takes recoveryHold, defaultLevel, releaseWindow, "
		"codes, frequency, duration, reset, huaweiFiles)");
	refused("version: v1\nfaultPolicy:\n  reset:\n    maxResets: 17\n", -EINVAL,
		"line 4: faultPolicy.reset.maxResets: must be an integer from 1 to 16");
	refused("version: v1\nfaultPolicy:\n  reset:\n    timeout: 2h\n", -EINVAL,
		"line 4: faultPolicy.reset.timeout: '2h' is not a duration from 1ms to 1h (e.g. 500ms, 30s, 5m, 24h; a "
		"bare number means seconds)");
	refused("version: v1\nfaultPolicy:\n  reset:\n    enabled: sometimes\n", -EINVAL, "line 4: faultPolicy.reset.enabled: must be true or false");
	refused("version: v1\nfaultPolicy:\n  reset:\n    channel: outband\n", -EINVAL,
		"line 4: faultPolicy.reset.channel: unknown key (faultPolicy.reset takes enabled, maxResets, window, "
		"timeout)");
	refused("version: v1\nfaultPolicy: strict\n", -EINVAL, "line 2: faultPolicy: must be a mapping, not a scalar");

	/* Into the configuration: the defaults without the section. */
	char arg[300], want[1024];
	snprintf(arg, sizeof(arg), "--config=%s", path);
	write_file("version: v1\n");
	assert_int_equal(ARGS(NULL, arg), 0);
	assert_true(cfg.fault_policy.builtin_codes);
	assert_int_equal(cfg.fault_policy.recovery_hold_ms, FAULT_POLICY_DEFAULT_RECOVERY_HOLD_MS);
	assert_int_equal(cfg.fault_policy.default_level, FAULT_POLICY_DEFAULT_LEVEL);
	assert_int_equal(cfg.fault_policy.n_codes + cfg.fault_policy.n_frequency + cfg.fault_policy.n_duration, 0);
	assert_string_equal(cfg.fault_huawei_files, "");
	assert_int_equal(fault_policy_code_level(&cfg.fault_policy, 0x80E01801, NULL), FAULT_LEVEL_RESTART_BUSINESS);
	assert_false(cfg.fault_reset.enabled);
	write_file("version: v1\nfaultPolicy:\n  reset:\n    enabled: true\n    maxResets: 5\n");
	assert_int_equal(ARGS(NULL, arg), 0);
	assert_true(cfg.fault_reset.enabled);
	assert_int_equal(cfg.fault_reset.max_resets, 5);

	/* Huawei's files, then the file's own keys over them. */
	write_file("version: v1\n"
		   "faultPolicy:\n"
		   "  recoveryHold: 0\n"
		   "  huaweiFiles: " TEST_SOURCE_DIR "/fixtures/huawei/mindcluster\n"
		   "  codes:\n"
		   "    80E01801: NotHandleFault\n"
		   "  duration:\n"
		   "  - codes: [80E18402]\n"
		   "    timeout: 1m\n"
		   "    level: SeparateNPU\n");
	assert_int_equal(ARGS(NULL, arg), 0);
	const struct fault_policy_config *p = &cfg.fault_policy;
	assert_string_equal(cfg.fault_huawei_files, TEST_SOURCE_DIR "/fixtures/huawei/mindcluster");
	assert_false(p->builtin_codes);
	assert_int_equal(p->recovery_hold_ms, 0);
	assert_int_equal(fault_policy_code_level(p, 0x80E01801, NULL), FAULT_LEVEL_NOT_HANDLE);
	assert_int_equal(fault_policy_code_level(p, 0x40F84E00, NULL), FAULT_LEVEL_RESTART_NPU);
	assert_int_equal(p->n_frequency, 3);
	assert_int_equal(p->n_duration, 2);
	assert_int_equal(p->rule_codes[p->duration[1].first_code], 0x80E18402);

	/* A reload takes the policy. */
	static struct config running;
	fault_policy_config_init(&running.fault_policy);
	config_take_reloadable(&running, &cfg);
	assert_memory_equal(&running.fault_policy, p, sizeof(*p));
	assert_string_equal(running.fault_huawei_files, cfg.fault_huawei_files);

	/* A bad Huawei file stops the start: the configuration file and its
	 * line, then Huawei's file, its line and key. */
	char huawei[300], code_file[400];
	snprintf(huawei, sizeof(huawei), "%s/huawei", dir);
	assert_int_equal(mkdir(huawei, 0755), 0);
	snprintf(code_file, sizeof(code_file), "%s/faultCode.json", huawei);
	FILE *fp2 = fopen(code_file, "w");
	assert_non_null(fp2);
	fputs("{\n  \"RestartNPUCodes\": [\"40F84E00\"],\n  \"SeparateNPUCodes\": \"80E18402\"\n}\n", fp2);
	assert_int_equal(fclose(fp2), 0);
	char text[600];
	snprintf(text, sizeof(text), "version: v1\nfaultPolicy:\n  huaweiFiles: %s\n", huawei);
	write_file(text);
	assert_int_equal(ARGS(NULL, arg), -EINVAL);
	snprintf(want, sizeof(want),
		 "%s: line 3: faultPolicy.huaweiFiles: %s: line 3: SeparateNPUCodes: must be a list of fault codes, not "
		 "a string",
		 path, code_file);
	assert_string_equal(why, want);
	assert_true(in_file);
	/* A reload that reads it keeps what ran: the configuration read last
	 * is untouched. */
	assert_memory_equal(&cfg.fault_policy, &running.fault_policy, sizeof(cfg.fault_policy));
	assert_string_equal(cfg.fault_huawei_files, TEST_SOURCE_DIR "/fixtures/huawei/mindcluster");
	unlink(code_file);
	assert_int_equal(ARGS(NULL, arg), -ENOENT);
	snprintf(want, sizeof(want),
		 "%s: line 3: faultPolicy.huaweiFiles: %s: holds neither faultCode.json nor faultCustomization.json",
		 path, huawei);
	assert_string_equal(why, want);
	rmdir(huawei);

	/* More entries than a mapping holds. */
	char many[4096] = "version: v1\nfaultPolicy:\n  codes:\n";
	for (int i = 0; i <= CONFIG_FILE_MAX_ENTRIES; i++) {
		char line[40];
		snprintf(line, sizeof(line), "    %X: SeparateNPU\n", 0x1000 + i);
		strcat(many, line);
	}
	refused(many, -E2BIG, "line 4: faultPolicy.codes: more than 64 entries");
}

static void test_flag_apply(void **state)
{
	(void)state;
	struct config c = { 0 };
	char msg[256];
	assert_int_equal(config_flag_apply(&c, "log-level", "warn", msg, sizeof(msg)), 0);
	assert_int_equal(c.log_level, LOG_LEVEL_WARN);
	assert_int_equal(config_flag_apply(&c, "log-level", "loud", msg, sizeof(msg)), -EINVAL);
	assert_string_equal(msg, "--log-level: 'loud' is not one of error, warn, info, debug");
	assert_int_equal(config_flag_apply(&c, "nope", "x", msg, sizeof(msg)), -ENOENT);
	assert_int_equal(config_flag_apply(&c, "help", NULL, msg, sizeof(msg)), -EOPNOTSUPP);
	assert_int_equal(config_flag_apply(&c, "config", "/x", msg, sizeof(msg)), -EOPNOTSUPP);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_good_file),
		cmocka_unit_test(test_errors_name_line_and_key),
		cmocka_unit_test(test_limits),
		cmocka_unit_test(test_precedence),
		cmocka_unit_test(test_flag_apply),
		cmocka_unit_test(test_resources),
		cmocka_unit_test(test_fault_policy),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
