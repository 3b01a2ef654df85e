/* SPDX-License-Identifier: Apache-2.0 */
/* The daemon's configuration: command-line flags (--flag=value or --flag
 * value) with defaults, the environment and the --config file
 * (config/file.h), each value checked by its flag's rule. A bad flag or
 * value is reported with a message naming it; main exits 2 on it. These are
 * settings as given: what they imply together (the resources, their sockets,
 * the CDI names) is the daemon's to derive (daemon/serving.h). */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "base/k8s_names.h"
#include "base/log.h"
#include "base/parse.h"
#include "config/file.h"
#include "fault/policy.h"
#include "fault/reset.h"
#include "npu/chip_select.h"
#include "npu/inventory.h"

#define CONFIG_PATH_MAX 4096
/* Characters of the instance that name sockets (config_set_instance). */
#define CONFIG_INSTANCE_MAX 8

enum config_action {
	CONFIG_ACTION_RUN,
	CONFIG_ACTION_HELP,
	CONFIG_ACTION_VERSION,
	CONFIG_ACTION_PROBE,
};

/* The ways containers get their NPUs (--device-list-strategy), a set. */
enum config_strategy {
	CONFIG_STRATEGY_NATIVE = 1u << 0,         /* device specs and mounts in the Allocate answer */
	CONFIG_STRATEGY_ASCEND_RUNTIME = 1u << 1, /* ASCEND_VISIBLE_DEVICES for Ascend Docker Runtime */
	CONFIG_STRATEGY_CDI = 1u << 2,            /* CDI device names and a CDI spec */
};

/* "native,cdi" for a set of CONFIG_STRATEGY_*, in --help's order. Returns
 * 0, or -ENOBUFS when it does not fit buf[size]. */
int config_strategies_format(unsigned strategies, char *buf, size_t size);

/* Which front ends run (--front-end). A chip is served by one front end at
 * a time: --dra-chips says which go to the DRA driver. */
enum config_front_end {
	CONFIG_FRONT_END_DEVICE_PLUGIN, /* the device plugin API alone (the default) */
	CONFIG_FRONT_END_DRA,           /* the DRA driver alone: the device plugin registers nothing */
	CONFIG_FRONT_END_BOTH,          /* the DRA driver the chips of --dra-chips, the device plugin the rest */
};

/* The --config file's resources and time-slicing, as written: what the
 * resource set is built from once the command line has settled the
 * default name (daemon/serving.h). */
struct config_resources {
	struct config_family_name names[CONFIG_FILE_MAX_ENTRIES];
	size_t n_names;
	struct config_slice sliced[CONFIG_FILE_MAX_ENTRIES];
	size_t n_sliced;
	bool rename_by_default;               /* sharing.timeSlicing.renameByDefault */
	bool fail_requests_greater_than_one; /* sharing.timeSlicing.failRequestsGreaterThanOne */
	bool enable_device_share;            /* sharing.timeSlicing.enableDeviceShare */
};

struct config {
	enum config_action action;
	char resource_name[RESOURCE_NAME_MAX]; /* --resource-name, as given */
	char socket_dir[CONFIG_PATH_MAX];
	char dev_dir[CONFIG_PATH_MAX];
	char driver_path[CONFIG_PATH_MAX];
	char host_root[CONFIG_PATH_MAX];
	char dcmi_lib[CONFIG_PATH_MAX]; /* empty: search */
	enum npu_backend_mode backend;
	int64_t health_interval_ms;
	enum log_level log_level;
	char config_file[CONFIG_PATH_MAX]; /* --config; empty: none */
	unsigned device_list_strategies; /* a set of CONFIG_STRATEGY_* */
	char cdi_dir[CONFIG_PATH_MAX];   /* where the cdi strategy writes its spec */
	struct config_resources file;    /* empty without --config */
	/* Observability (docs/metrics.md): empty strings disable. */
	char metrics_addr[128];                     /* --metrics-addr HOST:PORT */
	int64_t telemetry_interval_ms;              /* --telemetry-interval */
	char pod_resources_socket[SOCKET_PATH_MAX]; /* --pod-resources-socket */
	char nfd_features_file[CONFIG_PATH_MAX];    /* --nfd-features-file */
	enum log_format log_format;                 /* --log-format */
	/* faultPolicy of the --config file: the built-in defaults, then
	 * Huawei's files of huaweiFiles, then the file's own keys. */
	struct fault_policy_config fault_policy;
	struct fault_reset_config fault_reset; /* faultPolicy.reset */
	char fault_huawei_files[CONFIG_PATH_MAX]; /* faultPolicy.huaweiFiles as given; empty: none */
	char state_dir[CONFIG_PATH_MAX];          /* --state-dir: the record of separated chips */
	/* DRA (docs/dra.md). */
	enum config_front_end front_end;                    /* --front-end */
	char dra_chips_text[256];                           /* --dra-chips as given */
	struct npu_chip_select dra_chips;                   /* parsed: the DRA driver's chips */
	char dra_no_execute_text[256];                      /* --dra-no-execute-levels as given */
	uint32_t dra_no_execute_levels;                     /* 1u << enum fault_level */
	char dra_dynamic_vnpus_text[256];                   /* --dra-dynamic-vnpus as given */
	struct npu_chip_select dra_dynamic_vnpus;           /* parsed: chips carved on demand */
	char dra_driver_name[K8S_DNS_SUBDOMAIN_MAX + 1];    /* --dra-driver-name */
	char kubelet_dir[CONFIG_PATH_MAX];                  /* --kubelet-dir: plugins_registry/ and plugins/ */
	char node_name[K8S_DNS_SUBDOMAIN_MAX + 1];          /* --node-name; empty: $NODE_NAME, else the host name */
	char kubeconfig[CONFIG_PATH_MAX];                   /* --kubeconfig; empty: in-cluster */
	char instance[CONFIG_INSTANCE_MAX + 1];             /* config_set_instance; empty: none */
};

/* The environment variable that names this plugin process among others of
 * its node: the DaemonSet sets it to the pod's UID. */
#define CONFIG_INSTANCE_ENV "ASCEND_PLUGIN_INSTANCE"

/* Takes the instance (the value of CONFIG_INSTANCE_ENV, NULL or empty for
 * none) into c: its first CONFIG_INSTANCE_MAX characters go into every
 * socket's name, so that the old and the new pod of a roll serve side by
 * side. A pod UID's first characters are random hex. -EINVAL, with why,
 * when it holds anything but lowercase letters, digits and '-'. */
int config_set_instance(struct config *c, const char *value, char *why, size_t why_size);

/* Parses argv (and ASCEND_DRIVER_PATH from env_driver_path, may be NULL).
 * With --config FILE, the file's flags come first: command line >
 * environment > file > defaults. Returns 0, or a negative errno (-EINVAL
 * for a bad flag or value, -EOPNOTSUPP for a file asking for what this
 * version does not do) with a message naming the flag, or the file, line and
 * key, in why. On failure *in_file (in_file may be NULL) tells whether the
 * problem is in the --config file (why then starts with its path) rather
 * than on the command line or in the environment: only those are usage
 * errors, which main answers with a pointer to --help. */
/* Whether the DRA driver runs (--front-end dra or both). */
static inline bool config_dra_on(const struct config *c)
{
	return c->front_end != CONFIG_FRONT_END_DEVICE_PLUGIN;
}

/* The chips the DRA driver carves on demand (--dra-dynamic-vnpus), or NULL
 * for none. */
static inline const struct npu_chip_select *config_dra_dynamic_vnpus(const struct config *c)
{
	const struct npu_chip_select *s = &c->dra_dynamic_vnpus;
	return s->all || s->families || s->n_ranges ? s : NULL;
}

/* Whether the device plugin registers with the kubelet (--front-end
 * device-plugin or both). */
static inline bool config_device_plugin_on(const struct config *c)
{
	return c->front_end != CONFIG_FRONT_END_DRA;
}

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

/* Copies the value of every reloadable flag from next into running, and
 * the file's resources, time-slicing and fault policy. */
void config_take_reloadable(struct config *running, const struct config *next);
