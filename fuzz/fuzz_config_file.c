/* SPDX-License-Identifier: Apache-2.0 */
/* Fuzzes the --config file reader: the input is the file's text. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "config/config.h"
#include "config/file.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct config config;
	struct config_file *file = NULL;
	char why[1024] = "";

	if (config_file_parse((const char *)data, size, &file, why, sizeof(why)) < 0) {
		if (why[0] == '\0')
			abort(); /* a refusal always says why */
		return 0;
	}
	if (file->n_flags > CONFIG_FILE_MAX_ENTRIES || file->n_resources > CONFIG_FILE_MAX_ENTRIES ||
	    file->time_slicing.n_resources > CONFIG_FILE_MAX_ENTRIES)
		abort();
	/* What was accepted is what the command line accepts. */
	for (size_t i = 0; i < file->n_flags; i++)
		if (config_flag_apply(&config, file->flags[i].flag, file->flags[i].value, why, sizeof(why)) < 0)
			abort();
	for (size_t i = 0; i < file->time_slicing.n_resources; i++) {
		uint32_t n = file->time_slicing.resources[i].replicas;
		if (n < CONFIG_FILE_REPLICAS_MIN || n > CONFIG_FILE_REPLICAS_MAX)
			abort();
	}
	/* faultPolicy: within the policy's bounds, and mergeable over the defaults. */
	const struct config_fault_policy *fp = &file->fault_policy;
	if (fp->rules) {
		static struct fault_policy_config merged;
		fault_policy_config_init(&merged);
		if (fp->rules->n_codes > CONFIG_FILE_MAX_ENTRIES || fp->rules->n_frequency > CONFIG_FILE_MAX_ENTRIES ||
		    fp->rules->n_duration > CONFIG_FILE_MAX_ENTRIES || fault_policy_config_merge(&merged, fp->rules) < 0)
			abort();
	} else if (fp->line || fp->huawei_files) {
		abort();
	}
	if (fp->huawei_files && fp->huawei_files[0] != '/')
		abort();
	config_file_free(file);
	return 0;
}
