/* SPDX-License-Identifier: Apache-2.0 */
/* The daemon's configuration: command-line flags (--flag=value or --flag
 * value) with defaults and the environment, validated as a whole. A bad flag
 * or value is reported with a message naming it; main exits 2 on it. */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "base/log.h"
#include "base/parse.h"
#include "npu/inventory.h"
#include "plugin/allocate.h"
#include "plugin/cdi.h"

#define CONFIG_PATH_MAX 4096

enum config_action {
	CONFIG_ACTION_RUN,
	CONFIG_ACTION_HELP,
	CONFIG_ACTION_VERSION,
	CONFIG_ACTION_PROBE,
};

struct config {
	enum config_action action;
	char resource_name[320];
	char endpoint[128];      /* socket file name: "ascend-npu.sock" */
	char socket_dir[CONFIG_PATH_MAX];
	char socket_path[SOCKET_PATH_MAX];  /* <socket_dir>/<endpoint> */
	char kubelet_socket[SOCKET_PATH_MAX]; /* <socket_dir>/kubelet.sock */
	char dev_dir[CONFIG_PATH_MAX];
	char driver_path[CONFIG_PATH_MAX];
	char host_root[CONFIG_PATH_MAX];
	char dcmi_lib[CONFIG_PATH_MAX]; /* empty: search */
	enum npu_backend_mode backend;
	int64_t health_interval_ms;
	enum log_level log_level;
	unsigned device_list_strategies; /* a set of ALLOCATE_STRATEGY_* */
	char cdi_dir[CONFIG_PATH_MAX];   /* where the cdi strategy writes its spec */
	struct cdi_names cdi;            /* derived from resource_name with the cdi strategy */
};

/* Parses argv (and ASCEND_DRIVER_PATH from env_driver_path, may be NULL).
 * Returns 0, or -EINVAL with a message naming the flag in why. */
int config_parse(int argc, char **argv, const char *env_driver_path, struct config *ret_config, char *why,
		 size_t why_size);

void config_usage(FILE *out, const char *program);
