/* SPDX-License-Identifier: Apache-2.0 */
/* Fuzzes the reader of Huawei's faultCustomization.json: the input is the
 * file's text. A refusal says why and leaves the configuration as it was;
 * what is taken are windows within the policy's bounds, whose codes lie in
 * the shared pool, sorted and each once; and a chip driven through a day
 * of faults under them stays within the step's bounds. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fault/huawei.h"
#include "fault/policy.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_windows(const struct fault_policy_config *c, const struct fault_window *w, size_t n, bool frequency)
{
	for (size_t i = 0; i < n; i++) {
		if (w[i].all_codes || w[i].n_codes == 0 || w[i].first_code > c->n_rule_codes ||
		    w[i].n_codes > c->n_rule_codes - w[i].first_code || w[i].level <= FAULT_LEVEL_NONE ||
		    w[i].level >= FAULT_LEVEL_COUNT || w[i].window_ms < 0 || w[i].window_ms > FAULT_POLICY_MAX_WINDOW_MS ||
		    w[i].hold_ms < 0 || w[i].hold_ms > FAULT_POLICY_MAX_RELEASE_MS)
			abort();
		if (frequency && (w[i].count < 1 || w[i].count > FAULT_POLICY_MAX_COUNT))
			abort();
		if (!frequency && w[i].level == FAULT_LEVEL_MANUALLY_SEPARATE_NPU)
			abort();
		for (uint32_t k = 1; k < w[i].n_codes; k++)
			if (c->rule_codes[w[i].first_code + k - 1] >= c->rule_codes[w[i].first_code + k])
				abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct fault_policy_config config, before;
	static struct fault_state chip;
	char why[1024] = "";

	fault_policy_config_init(&config);
	before = config;
	if (fault_huawei_customization_parse((const char *)data, size, &config, why, sizeof(why)) < 0) {
		if (why[0] == '\0' || memcmp(&config, &before, sizeof(config)) != 0)
			abort();
		return 0;
	}
	if (!config.builtin_codes || config.n_codes || config.n_frequency > FAULT_POLICY_MAX_RULES ||
	    config.n_duration > FAULT_POLICY_MAX_RULES || config.n_rule_codes > FAULT_POLICY_MAX_RULE_CODES)
		abort();
	check_windows(&config, config.frequency, config.n_frequency, true);
	check_windows(&config, config.duration, config.n_duration, false);

	/* The rules' first codes come and go for a day, a minute apart. */
	fault_state_init(&chip);
	size_t n = config.n_rule_codes < 8 ? config.n_rule_codes : 8;
	for (int64_t t = 0; t < 24 * 60; t++) {
		struct fault_step step;
		const struct fault_input in = { .codes = config.rule_codes, .n_codes = (size_t)t % (n + 1),
						.dcmi_health = 2 };
		if (fault_policy_step(&config, &chip, &in, t * 60000, &step) < 0 ||
		    step.n_decisions > FAULT_STEP_MAX_DECISIONS || step.healthy == fault_level_unhealthy(step.level) ||
		    (step.separated && step.level != FAULT_LEVEL_MANUALLY_SEPARATE_NPU))
			abort();
	}
	return 0;
}
