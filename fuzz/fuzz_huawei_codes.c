/* SPDX-License-Identifier: Apache-2.0 */
/* Fuzzes the reader of Huawei's faultCode.json: the input is the file's
 * text. A refusal says why and leaves the configuration as it was; what is
 * taken is a table the policy can use: sorted, each code once, every level
 * one a code may have, and a chip judged by it reports a level from it. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fault/huawei.h"
#include "fault/policy.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct fault_policy_config config, before;
	static struct fault_state chip;
	char why[1024] = "";

	fault_policy_config_init(&config);
	/* A code set before: the file must replace it. */
	if (fault_policy_config_set_code(&config, 0xFFFFFFFFu, FAULT_LEVEL_MANUALLY_SEPARATE_NPU) < 0)
		abort();
	before = config;
	if (fault_huawei_codes_parse((const char *)data, size, &config, why, sizeof(why)) < 0) {
		if (why[0] == '\0' || memcmp(&config, &before, sizeof(config)) != 0)
			abort();
		return 0;
	}
	if (config.builtin_codes || config.n_codes > FAULT_POLICY_MAX_CODES || config.n_frequency || config.n_duration)
		abort();
	for (size_t i = 0; i < config.n_codes; i++) {
		const struct fault_code_level *e = &config.codes[i];
		if (e->code == 0 || e->level <= FAULT_LEVEL_NONE || e->level >= FAULT_LEVEL_MANUALLY_SEPARATE_NPU ||
		    (i > 0 && config.codes[i - 1].code >= e->code))
			abort();
	}
	/* Each of the first codes alone: the chip has exactly its level. */
	config.recovery_hold_ms = 0;
	for (size_t i = 0; i < config.n_codes && i < 64; i++) {
		struct fault_step step;
		const struct fault_input in = { .codes = &config.codes[i].code, .n_codes = 1, .dcmi_health = 2 };
		fault_state_init(&chip);
		if (fault_policy_step(&config, &chip, &in, 0, &step) < 0 || step.level != config.codes[i].level ||
		    step.healthy == fault_level_unhealthy(step.level))
			abort();
	}
	return 0;
}
