/* SPDX-License-Identifier: Apache-2.0 */
/* ascend-ranktable's command line and environment (docs/ranktable.md):
 * flags override the downward API's POD_NAME and POD_NAMESPACE and
 * ASCEND_HCCL_GROUP_SIZE. Parsing only: nothing is read or checked against
 * the cluster here. */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "gather.h"

/* MindCluster's hccl-controller and ascend-operator mount the table here,
 * and the training and serving scripts written for them read it there
 * (Ascend/mind-cluster's documentation): a job moved from them keeps its
 * scripts. */
#define RT_OUTPUT_DEFAULT "/user/serverid/devindex/config/hccl.json"
#define RT_ENV_FILE_NAME "hccl.env"
#define RT_DRIVER_DEFAULT "npu.ascend.com"
#define RT_TIMEOUT_DEFAULT_MS (10 * 60 * 1000)
#define RT_TIMEOUT_MAX_MS (24LL * 3600 * 1000)
#define RT_WATCH_DEFAULT_S 60
#define RT_PATH_MAX 1024

struct rt_options {
	const char *pod_name, *namespace_;
	const char *label_key;
	const char *driver;
	char output[RT_PATH_MAX];
	char env_file[RT_PATH_MAX];
	const char *kubeconfig; /* NULL: in-cluster */
	uint32_t size;          /* 0: from the owner */
	int64_t timeout_ms;
	int watch_s;
	enum rt_mode mode;
	bool help, version;
};

/* Parses argv (and the environment) into *ret. Returns 0, or -EINVAL with
 * why naming the flag or variable and what is wrong. */
int rt_options_parse(int argc, char **argv, struct rt_options *ret, char *why, size_t why_size);

void rt_options_usage(FILE *out);
