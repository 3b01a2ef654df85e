/* SPDX-License-Identifier: Apache-2.0 */
/* ascend-device-plugin: serves the node's Ascend NPUs to the kubelet.
 * The table of contents: signals and the threads' address space,
 * configuration and what it serves, logging (a writer thread from here
 * on), then the daemon
 * (src/daemon/daemon.c) until SIGTERM, then the log's flush with a
 * deadline. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/cli.h"
#include "base/crash.h"
#include "base/log.h"
#include "base/threads.h"
#include "config/config.h"
#include "daemon/daemon.h"
#include "daemon/dra_kube.h"
#include "daemon/serving.h"
#include "plugin/probe.h"

struct args {
	int argc;
	char **argv;
};

/* The command line and the environment. */
static int parse(int argc, char **argv, struct config *ret_config, bool *in_file, char *why, size_t why_size)
{
	int r = config_parse(argc, argv, getenv("ASCEND_DRIVER_PATH"), ret_config, in_file, why, why_size);
	if (r == 0 && (r = config_set_instance(ret_config, getenv(CONFIG_INSTANCE_ENV), why, why_size)) < 0 && in_file)
		*in_file = false;
	return r;
}

/* SIGHUP: the configuration as at start, from the same command line. */
static int reparse(void *ctx, struct config *ret_config, char *why, size_t why_size)
{
	const struct args *a = ctx;
	return parse(a->argc, a->argv, ret_config, NULL, why, why_size);
}

/* A bad flag or value, or a --config file that says something wrong: one
 * line, and exit 2. The file's message names its line and key; --help would
 * not add to it. */
static int bad_configuration(bool in_file, const char *why)
{
	if (in_file)
		cli_error("ascend-device-plugin", "%s", why);
	else
		cli_usage_error("ascend-device-plugin", "%s", why);
	return 2;
}

int main(int argc, char **argv)
{
	static struct config config;
	static struct serving serving;
	/* Room for a message that quotes a whole --socket-dir. */
	char why[CONFIG_PATH_MAX + 1024];
	bool in_file = false;

	/* Before any thread exists, so that only the daemon's signalfd sees them. */
	if (daemon_block_signals() < 0) {
		fprintf(stderr, "ascend-device-plugin: cannot block signals\n");
		return 1;
	}
	/* Before any thread exists too: one malloc arena and small thread
	 * stacks keep the address space within an RLIMIT_AS (base/threads.h). */
	int r = threads_limit();
	if (r < 0) {
		fprintf(stderr, "ascend-device-plugin: cannot size the threads' stacks: %s\n", strerror(-r));
		return 1;
	}

	if (parse(argc, argv, &config, &in_file, why, sizeof(why)) < 0)
		return bad_configuration(in_file, why);
	if ((config.action == CONFIG_ACTION_RUN || config.action == CONFIG_ACTION_PROBE) &&
	    serving_build(&config, &serving, &in_file, why, sizeof(why)) < 0)
		return bad_configuration(in_file, why);
	switch (config.action) {
	case CONFIG_ACTION_HELP:
		config_usage(stdout, "ascend-device-plugin");
		return 0;
	case CONFIG_ACTION_VERSION:
		printf("ascend-device-plugin %s\n", ASCEND_VERSION);
		return 0;
	case CONFIG_ACTION_PROBE:
		if (probe_plugin(serving_default(&serving)->socket_path, why, sizeof(why)) < 0) {
			cli_error("ascend-device-plugin", "probe failed: %s", why);
			return 1;
		}
		return 0;
	case CONFIG_ACTION_RUN:
		break;
	}

	/* The DRA front end's API-server side, before anything is served: a
	 * module the image ships that will not load is a broken image (1), a
	 * kubeconfig that says something wrong is bad configuration (2). */
	static struct dra_kube kube;
	if (config_dra_on(&config)) {
		enum dra_kube_failure failure;
		if (dra_kube_open(&config, &kube, &failure, why, sizeof(why)) < 0) {
			cli_error("ascend-device-plugin", "%s", why);
			return failure == DRA_KUBE_CONFIG ? 2 : 1;
		}
	}

	log_set_level(config.log_level);
	log_set_format(config.log_format);
	/* From here on a stderr nobody reads cannot stall the daemon. */
	r = log_start(STDERR_FILENO, LOG_QUEUE_BYTES_DEFAULT);
	if (r < 0)
		log_warn("logging directly, a blocked stderr would block the daemon: %s", strerror(-r));
	if (crash_guard_install("ascend-device-plugin") < 0) {
		log_error("cannot install the crash handler");
		dra_kube_close(&kube);
		log_stop(LOG_STOP_TIMEOUT_MS);
		return 1;
	}
	/* The daemon logs why it could not start. */
	struct args args = { argc, argv };
	r = daemon_run(&config, &serving, config_dra_on(&config) ? &kube : NULL, reparse, &args);
	dra_kube_close(&kube);
	/* Flush, but never hang on exit because of a blocked stderr. */
	log_stop(LOG_STOP_TIMEOUT_MS);
	return r < 0 ? 1 : 0;
}
