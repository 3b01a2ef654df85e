/* SPDX-License-Identifier: Apache-2.0 */
/* Fuzzes the fault policy's step: the input drives one chip through a
 * sequence of steps under a policy with every kind of window. Each step is
 * two bytes and more: the time that passed (a byte, in seconds, scaled
 * by the next byte's top bits), DCMI health (its low bits) and which of
 * eight codes are present (a third byte); a byte 0xFF releases the chip
 * and 0xFE separates it. Whatever the sequence, a step stays within its
 * bounds, says Healthy exactly when its level allows, is separated only
 * at ManuallySeparateNPU, and a level only falls through a decision. */
#include <stdint.h>
#include <stdlib.h>

#include "fault/policy.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct fault_policy_config config;
	static struct fault_state chip;
	static const uint32_t palette[8] = { 0x80E01801, 0x81078603, 0x80C98008, 0x80E18402,
					     0x81A3880C, 0x12345678, 0x40F84E00, 0x8C0E4E00 };
	const uint32_t hbm[] = { 0x80E01801 }, link[] = { 0x81078603 };

	fault_policy_config_init(&config);
	config.release_window_ms = 600000;
	config.recovery_hold_ms = size % 2 ? 5000 : 0;
	if (fault_policy_config_set_code(&config, 0x12345678, FAULT_LEVEL_MANUALLY_SEPARATE_NPU) < 0 ||
	    fault_policy_config_add_frequency(&config, hbm, 1, false, 2, 3600000, FAULT_LEVEL_PRE_SEPARATE_NPU, 0) < 0 ||
	    fault_policy_config_add_frequency(&config, NULL, 0, true, 5, 3600000, FAULT_LEVEL_MANUALLY_SEPARATE_NPU, 0) <
		    0 ||
	    fault_policy_config_add_duration(&config, link, 1, false, 20000, FAULT_LEVEL_PRE_SEPARATE_NPU, 60000) < 0 ||
	    fault_policy_config_add_duration(&config, NULL, 0, true, 600000, FAULT_LEVEL_SEPARATE_NPU, 0) < 0)
		abort();
	fault_state_init(&chip);

	int64_t now = 0;
	for (size_t i = 0; i + 2 < size; i += 3) {
		if (data[i] == 0xFF) {
			(void)fault_policy_release(&chip, now);
			continue;
		}
		if (data[i] == 0xFE) {
			(void)fault_policy_separate(&chip, palette[data[i + 1] % 8], now);
			continue;
		}
		now += (int64_t)data[i] * 1000 * (1 + (data[i + 1] >> 4));
		uint32_t codes[8];
		size_t n = 0;
		for (unsigned b = 0; b < 8; b++)
			if (data[i + 2] & (1u << b))
				codes[n++] = palette[b];
		const struct fault_input in = { .codes = codes, .n_codes = n, .dcmi_health = data[i + 1] & 3u };
		enum fault_level before = chip.level;
		struct fault_step step;
		if (fault_policy_step(&config, &chip, &in, now, &step) < 0)
			abort();
		if (step.n_decisions > FAULT_STEP_MAX_DECISIONS || step.n_onsets > FAULT_STATE_MAX_CODES ||
		    step.healthy == fault_level_unhealthy(step.level) ||
		    (step.separated && step.level != FAULT_LEVEL_MANUALLY_SEPARATE_NPU) ||
		    step.changed != (step.level != before) || (step.changed && step.n_decisions == 0 && !step.decisions_dropped))
			abort();
		for (size_t d = 0; d < step.n_decisions; d++)
			if (!step.decisions[d].hint)
				abort();
	}
	return 0;
}
