/* SPDX-License-Identifier: Apache-2.0 */
/* The daemon's configuration: command-line flags (--flag=value or --flag
 * value) with defaults, the environment and the --config file
 * (config/file.h), validated as a whole. A bad flag or value is reported with
 * a message naming it; main exits 2 on it. */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "base/k8s_names.h"
#include "base/log.h"
#include "base/parse.h"
#include "npu/inventory.h"
#include "plugin/allocate.h"
#include "plugin/cdi.h"
#include "plugin/resources.h"

#define CONFIG_PATH_MAX 4096

enum config_action {
	CONFIG_ACTION_RUN,
	CONFIG_ACTION_HELP,
	CONFIG_ACTION_VERSION,
	CONFIG_ACTION_PROBE,
};

struct config {
	enum config_action action;
	char resource_name[RESOURCE_NAME_MAX];
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
	char config_file[CONFIG_PATH_MAX]; /* --config; empty: none */
	unsigned device_list_strategies; /* a set of ALLOCATE_STRATEGY_* */
	char cdi_dir[CONFIG_PATH_MAX];   /* where the cdi strategy writes its spec */
	struct cdi_names cdi;            /* derived from resource_name with the cdi strategy */
	/* sharing.timeSlicing of the --config file for the default resource:
	 * replicas 0 when off. With renameByDefault resource_name (and so
	 * endpoint) ends in ".shared"; the CDI names stay the chip's. */
	struct replica_options sharing;
	bool rename_by_default;
	/* What the plugin advertises when it starts: defs[0] is the default
	 * resource above (resource_name, endpoint, socket_path, sharing), then
	 * the config file's per-family names, each with its time-slicing. The
	 * daemon adds a resource per vNPU template it finds. */
	struct resource_set resources;
	char vnpu_base[RESOURCE_NAME_MAX]; /* --resource-name before ".shared": what vNPU names start with */
	/* Observability (docs/metrics.md): empty strings disable. */
	char metrics_addr[128];                     /* --metrics-addr HOST:PORT */
	int64_t telemetry_interval_ms;              /* --telemetry-interval */
	char pod_resources_socket[SOCKET_PATH_MAX]; /* --pod-resources-socket */
	char nfd_features_file[CONFIG_PATH_MAX];    /* --nfd-features-file */
	enum log_format log_format;                 /* --log-format */
};

/* Parses argv (and ASCEND_DRIVER_PATH from env_driver_path, may be NULL).
 * With --config FILE, the file's flags come first: command line >
 * environment > file > defaults. Returns 0, or a negative errno (-EINVAL
 * for a bad flag or value, -EOPNOTSUPP for a file asking for what this
 * version does not do) with a message naming the flag, or the file, line and
 * key, in why. On failure *in_file (in_file may be NULL) tells whether the
 * problem is in the --config file (why then starts with its path) rather
 * than on the command line or in the environment: only those are usage
 * errors, which main answers with a pointer to --help. */
int config_parse(int argc, char **argv, const char *env_driver_path, struct config *ret_config, bool *in_file,
		 char *why, size_t why_size);

/* Sets the flag called name ("health-interval") as --name=value would, by
 * the same rule and with the same message. -ENOENT when there is no such
 * flag, -EOPNOTSUPP for switches and --config, which take no setting. */
int config_flag_apply(struct config *c, const char *name, const char *value, char *why, size_t why_size);

void config_usage(FILE *out, const char *program);

/* A setting flag whose value differs between two configurations. */
struct config_change {
	const char *flag;      /* "health-interval" */
	bool reloadable;       /* a running daemon takes it; otherwise it waits for a restart */
	const char *was, *now; /* the values of a string setting; NULL for the others */
};
typedef void (*config_change_fn)(void *ctx, const struct config_change *change);

/* Calls fn for each setting flag whose value differs between running and
 * next, in --help's order. Which flags a running daemon takes is a column of
 * the flag table, the one list of them. */
void config_changes(const struct config *running, const struct config *next, config_change_fn fn, void *ctx);

/* Copies the value of every reloadable flag from next into running (the
 * resources and time-slicing of the file are the caller's to take). */
void config_take_reloadable(struct config *running, const struct config *next);
