/* SPDX-License-Identifier: Apache-2.0 */
/* The configuration file (--config FILE): YAML laid out like the NVIDIA
 * Kubernetes device plugin's config file (version, flags, sharing,
 * resources), plus faultPolicy, read whole and bounded (size, depth, node
 * count, no aliases), every key checked. flags.<camelCase> sets
 * --<kebab-case> and is validated by the command line's own rule for that
 * flag (config_flag_apply), so there is one rule per flag. sharing.timeSlicing
 * and resources are checked here for form; config_parse (config/config.h)
 * checks what they name against the resources the plugin serves once the
 * command line is applied. faultPolicy is checked here whole but for
 * huaweiFiles, which config_parse reads (this reader does no I/O).
 *
 * Errors say where: "line 4: flags.healthInterval: 'soon' is not a duration
 * ...", prefixed with "PATH: " by config_file_load. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/arena.h"
#include "base/k8s_names.h"
#include "fault/policy.h"
#include "fault/reset.h"
#include "npu/family.h"

#define CONFIG_FILE_MAX_BYTES (1024 * 1024)
#define CONFIG_FILE_MAX_DEPTH 16
#define CONFIG_FILE_MAX_NODES 10000
/* Entries of any one mapping or list. */
#define CONFIG_FILE_MAX_ENTRIES 64
#define CONFIG_FILE_REPLICAS_MIN 2
#define CONFIG_FILE_REPLICAS_MAX 64

/* flags.<key>: <value>. */
struct config_file_flag {
	const char *key;   /* as written: "healthInterval" */
	const char *flag;  /* the command-line flag's name: "health-interval" */
	const char *value; /* a scalar's text: "5s", "5" */
	size_t line;
};

/* resources[]: advertise the chips of family as name (line: where the
 * file says so, for messages). Families are unique; several may share a
 * name. */
struct config_family_name {
	enum npu_family family;
	char name[RESOURCE_NAME_MAX]; /* an extended resource name */
	size_t line;
};

/* sharing.timeSlicing.resources[]: share each chip of the resource name
 * among replicas (CONFIG_FILE_REPLICAS_MIN..MAX). Names are unique. */
struct config_slice {
	char name[RESOURCE_NAME_MAX];
	uint32_t replicas;
	size_t line;
};

/* faultPolicy, as written (fault/policy.h has what each setting means). */
struct config_fault_policy {
	size_t line; /* of the faultPolicy key; 0 when absent */
	bool has_recovery_hold, has_default_level, has_release_window;
	int64_t recovery_hold_ms;
	enum fault_level default_level;
	int64_t release_window_ms;
	const char *huawei_files; /* huaweiFiles, an absolute path; NULL when absent */
	size_t huawei_files_line;
	/* codes, frequency and duration, in a configuration of their own
	 * (built from fault_policy_config_init); NULL without faultPolicy. */
	struct fault_policy_config *rules;
	/* reset: the hot reset's settings over fault_reset_config_init's. */
	bool has_reset;
	struct fault_reset_config reset;
};

struct config_file {
	struct arena arena;
	const char *path; /* for messages; NULL from config_file_parse */
	struct config_file_flag *flags;
	size_t n_flags;
	struct {
		size_t line; /* of the timeSlicing key; 0 when absent */
		bool rename_by_default;
		bool fail_requests_greater_than_one;
		bool enable_device_share; /* switch each shared chip's device-share mode on */
		struct config_slice *resources;
		size_t n_resources;
	} time_slicing;
	size_t resources_line; /* of the resources key; 0 when absent */
	struct config_family_name *resources;
	size_t n_resources;
	struct config_fault_policy fault_policy;
};

/* Parses len bytes of YAML. Returns 0, -EINVAL (bad YAML, key, type or
 * value), -E2BIG (a limit) or -ENOMEM, with "line N: key.path: problem" in
 * why. */
int config_file_parse(const char *data, size_t len, struct config_file **ret_file, char *why, size_t why_size);

/* Reads a regular file of at most CONFIG_FILE_MAX_BYTES and parses it; why
 * starts with the path. A FIFO or device is refused, never waited on. */
int config_file_load(const char *path, struct config_file **ret_file, char *why, size_t why_size);

/* Accepts NULL and half-built files. */
void config_file_free(struct config_file *file);
