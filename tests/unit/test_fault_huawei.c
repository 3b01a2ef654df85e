/* SPDX-License-Identifier: Apache-2.0 */
/* Huawei's fault policy files read into the policy's configuration: the
 * fixtures in tests/fixtures/huawei/ have the structure Huawei publishes
 * (its README.md gives the public URLs of the files they follow), current
 * and older; then a directory as a mounted ConfigMap is, and every kind of
 * refusal with its line and key path, the configuration left as it was. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "base/file.h"
#include "fault/huawei.h"
#include "fault/policy.h"
#include "support/tmpdir.h"

#define FIXTURES TEST_SOURCE_DIR "/fixtures/huawei"
#define SECOND 1000LL

static struct fault_policy_config cfg, saved;
static char why[1024];
static char dir[64];

static int setup(void **state)
{
	(void)state;
	fault_policy_config_init(&cfg);
	why[0] = '\0';
	return 0;
}

static int setup_group(void **state)
{
	(void)state;
	return tmpdir_make(dir, sizeof(dir), "test_fault_huawei") == 0 ? 0 : -1;
}

static int teardown_group(void **state)
{
	(void)state;
	return tmpdir_remove(dir) == 0 ? 0 : -1;
}

static void write_text(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	assert_true(fputs(text, f) >= 0);
	assert_int_equal(fclose(f), 0);
}

/* The text must be refused with exactly this message, cfg unchanged. */
static void refused(bool codes, const char *text, int want, const char *message)
{
	saved = cfg;
	int r = codes ? fault_huawei_codes_parse(text, strlen(text), &cfg, why, sizeof(why))
		      : fault_huawei_customization_parse(text, strlen(text), &cfg, why, sizeof(why));
	if (r != want || strcmp(why, message) != 0)
		fail_msg("%s\n-> %d '%s'\nwant %d '%s'", text, r, why, want, message);
	assert_memory_equal(&cfg, &saved, sizeof(cfg));
}

static enum fault_level level_of(uint32_t code)
{
	return fault_policy_code_level(&cfg, code, NULL);
}

static void test_current_format(void **state)
{
	(void)state;
	assert_int_equal(fault_huawei_load(FIXTURES "/mindcluster/faultCode.json", &cfg, why, sizeof(why)), 0);
	assert_string_equal(why, "");
	assert_false(cfg.builtin_codes);
	assert_int_equal(level_of(0x80E01801), FAULT_LEVEL_RESTART_BUSINESS);
	assert_int_equal(level_of(0x80E18402), FAULT_LEVEL_SEPARATE_NPU);
	assert_int_equal(level_of(0x81078603), FAULT_LEVEL_NOT_HANDLE);
	assert_int_equal(level_of(0x80C98008), FAULT_LEVEL_RESTART_REQUEST);
	assert_int_equal(level_of(0x8C0E4E00), FAULT_LEVEL_FREE_RESTART_NPU);
	assert_int_equal(level_of(0x40F84E00), FAULT_LEVEL_RESTART_NPU);
	assert_int_equal(level_of(0x81A3880C), FAULT_LEVEL_SUB_HEALTH);
	/* In two lists: the severe one; written in lower case: the same code. */
	assert_int_equal(level_of(0xA2301001), FAULT_LEVEL_SEPARATE_NPU);
	assert_int_equal(level_of(0x80818C00), FAULT_LEVEL_SEPARATE_NPU);
	/* The file replaces the built-in table: a code it leaves out (the
	 * built-in table has 80A18008 as RestartNPU) has the default level. */
	enum fault_rule rule;
	assert_int_equal(fault_policy_code_level(&cfg, 0x80A18008, &rule), FAULT_POLICY_DEFAULT_LEVEL);
	assert_int_equal(rule, FAULT_RULE_DEFAULT_LEVEL);
	/* Each code once: B4060011 and 80818C00 are listed twice, A2301001 in
	 * two lists. */
	assert_int_equal(cfg.n_codes, 22 + 10 + 26 + 10 + 16 + 14 + 10 - 1);

	assert_int_equal(fault_huawei_load(FIXTURES "/mindcluster/faultCustomization.json", &cfg, why, sizeof(why)), 0);
	assert_int_equal(cfg.n_frequency, 3);
	assert_int_equal(cfg.frequency[0].n_codes, 17);
	assert_int_equal(cfg.frequency[0].count, 2);
	assert_int_equal(cfg.frequency[0].window_ms, 86400 * SECOND);
	assert_int_equal(cfg.frequency[0].level, FAULT_LEVEL_MANUALLY_SEPARATE_NPU);
	assert_int_equal(cfg.frequency[0].hold_ms, 0);
	assert_int_equal(cfg.frequency[2].count, 5);
	assert_int_equal(cfg.frequency[2].hold_ms, 172800 * SECOND);
	assert_int_equal(cfg.rule_codes[cfg.frequency[2].first_code], 0x81078603);
	assert_int_equal(cfg.n_duration, 1);
	assert_int_equal(cfg.duration[0].window_ms, 20 * SECOND);
	assert_int_equal(cfg.duration[0].hold_ms, 60 * SECOND);
	assert_int_equal(cfg.duration[0].level, FAULT_LEVEL_PRE_SEPARATE_NPU);

	/* The policy they make: two HBM ECC faults within a day separate the
	 * chip; a RoCE link down for more than 20 s takes it out of new work. */
	struct fault_state chip;
	struct fault_step s;
	fault_state_init(&chip);
	const uint32_t ecc = 0x80E01801, link = 0x81078603;
	const struct fault_input with_ecc = { .codes = &ecc, .n_codes = 1, .dcmi_health = 2 };
	const struct fault_input with_link = { .codes = &link, .n_codes = 1, .dcmi_health = 1 };
	const struct fault_input none = { 0 };
	assert_int_equal(fault_policy_step(&cfg, &chip, &with_ecc, 0, &s), 0);
	assert_int_equal(s.level, FAULT_LEVEL_RESTART_BUSINESS);
	/* Clean for the default recovery hold. */
	assert_int_equal(fault_policy_step(&cfg, &chip, &none, 60 * SECOND, &s), 0);
	assert_true(s.holding);
	assert_int_equal(fault_policy_step(&cfg, &chip, &none, 65 * SECOND, &s), 0);
	assert_true(s.healthy);
	assert_int_equal(fault_policy_step(&cfg, &chip, &with_ecc, 3600 * SECOND, &s), 0);
	assert_true(s.separated);
	fault_state_init(&chip);
	assert_int_equal(fault_policy_step(&cfg, &chip, &with_link, 0, &s), 0);
	assert_true(s.healthy);
	assert_int_equal(fault_policy_step(&cfg, &chip, &with_link, 21 * SECOND, &s), 0);
	assert_false(s.healthy);
	assert_true(s.pods_may_finish);
}

static void test_older_format(void **state)
{
	(void)state;
	assert_int_equal(fault_huawei_load(FIXTURES "/older/faultCode.json", &cfg, why, sizeof(why)), 0);
	assert_int_equal(level_of(2162169857u), FAULT_LEVEL_RESTART_BUSINESS); /* 80E01801 */
	assert_int_equal(level_of(0x40F84E00), FAULT_LEVEL_RESTART_NPU);       /* 1090014720 */
	/* RecoverRestartBusinessCodes: RestartBusiness. */
	assert_int_equal(level_of(2350927360u), FAULT_LEVEL_RESTART_BUSINESS);
	assert_int_equal(level_of(3020292113u), FAULT_LEVEL_RESTART_BUSINESS);
	assert_int_equal(level_of(2721058817u), FAULT_LEVEL_SEPARATE_NPU);
	assert_int_equal(level_of(2349354496u), FAULT_LEVEL_NOT_HANDLE);

	/* The FaultFrequency rule with no EventId applies to no code;
	 * WaitFlushingCMTime is taken. */
	assert_int_equal(fault_huawei_load(FIXTURES "/older/faultCustomization.json", &cfg, why, sizeof(why)), 0);
	assert_int_equal(cfg.n_frequency, 0);
	assert_int_equal(cfg.n_duration, 1);
	assert_int_equal(cfg.duration[0].window_ms, 30 * SECOND);
}

/* The network lists: codes of the chip's RoCE link, judged apart from the
 * chip's level (the most severe network list wins); not in the chip's
 * table. */
static void test_network_lists(void **state)
{
	(void)state;
	static const char text[] = "{\"SeparateNPUCodes\": [\"80E01801\"],\n"
				   " \"NotHandleFaultNetworkCodes\": [\"81078603\", \"8107A603\"],\n"
				   " \"PreSeparateNPUNetworkCodes\": [\"8107A603\"],\n"
				   " \"SeparateNPUNetworkCodes\": [2164753923]}";
	assert_int_equal(fault_huawei_codes_parse(text, strlen(text), &cfg, why, sizeof(why)), 0);
	assert_int_equal(cfg.n_network_codes, 2);
	assert_int_equal(fault_policy_network_level(&cfg, 0x81078603), FAULT_LEVEL_SEPARATE_NPU);
	assert_int_equal(fault_policy_network_level(&cfg, 0x8107A603), FAULT_LEVEL_PRE_SEPARATE_NPU);
	assert_int_equal(fault_policy_network_level(&cfg, 0x80E01801), FAULT_LEVEL_NONE);
	assert_true(fault_level_network_down(FAULT_LEVEL_PRE_SEPARATE_NPU));
	assert_false(fault_level_network_down(FAULT_LEVEL_SUB_HEALTH));
	assert_int_equal(level_of(0x80E01801), FAULT_LEVEL_SEPARATE_NPU);
	/* A file without them clears them: the file is the whole table. */
	assert_int_equal(fault_huawei_codes_parse("{}", 2, &cfg, why, sizeof(why)), 0);
	assert_int_equal(cfg.n_network_codes, 0);
}

/* A directory, as a mounted ConfigMap: its keys are links into ..data. */
static void test_directory(void **state)
{
	(void)state;
	assert_int_equal(fault_huawei_load(FIXTURES "/mindcluster", &cfg, why, sizeof(why)), 0);
	assert_false(cfg.builtin_codes);
	assert_int_equal(cfg.n_frequency, 3);
	assert_int_equal(cfg.n_duration, 1);

	char data[256], path[300], link[300];
	snprintf(data, sizeof(data), "%s/..data", dir);
	assert_int_equal(mkdir(data, 0755), 0);
	snprintf(path, sizeof(path), "%s/faultCustomization.json", data);
	write_text(path, "{\"FaultDuration\": [{\"EventId\": [\"80E01801\"], \"FaultTimeout\": 5, "
			 "\"FaultHandling\": \"SeparateNPU\"}]}\n");
	snprintf(link, sizeof(link), "%s/faultCustomization.json", dir);
	assert_int_equal(symlink("..data/faultCustomization.json", link), 0);
	snprintf(path, sizeof(path), "%s/PollInterval", dir);
	write_text(path, "300");
	fault_policy_config_init(&cfg);
	assert_int_equal(fault_huawei_load(dir, &cfg, why, sizeof(why)), 0);
	assert_true(cfg.builtin_codes); /* no faultCode.json: the built-in table stays */
	assert_int_equal(cfg.n_duration, 1);
	assert_int_equal(cfg.duration[0].window_ms, 5 * SECOND);

	/* A bad file in it: named, with line and key; nothing taken. */
	snprintf(path, sizeof(path), "%s/faultCode.json", dir);
	write_text(path, "{\n  \"SeparateNPUCodes\": [\"80E18402\", \"nope\"]\n}\n");
	saved = cfg;
	assert_int_equal(fault_huawei_load(dir, &cfg, why, sizeof(why)), -EINVAL);
	char want[512];
	snprintf(want, sizeof(want),
		 "%s/faultCode.json: line 2: SeparateNPUCodes[1]: 'nope' is not a fault code (up to 8 hex digits such "
		 "as 80E01801)",
		 dir);
	assert_string_equal(why, want);
	assert_memory_equal(&cfg, &saved, sizeof(cfg));
	unlink(path);
	unlink(link);

	/* Neither file. */
	assert_int_equal(fault_huawei_load(dir, &cfg, why, sizeof(why)), -ENOENT);
	snprintf(want, sizeof(want), "%s: holds neither faultCode.json nor faultCustomization.json", dir);
	assert_string_equal(why, want);

	/* A file of another name, a missing path. */
	assert_int_equal(fault_huawei_load(FIXTURES "/README.md", &cfg, why, sizeof(why)), -EINVAL);
	assert_string_equal(why, FIXTURES "/README.md: neither a directory nor a file named faultCode.json or "
					  "faultCustomization.json");
	assert_int_equal(fault_huawei_load(FIXTURES "/nothing", &cfg, why, sizeof(why)), -ENOENT);
	assert_string_equal(why, FIXTURES "/nothing: cannot open: No such file or directory");
	assert_memory_equal(&cfg, &saved, sizeof(cfg));
}

static void test_refusals(void **state)
{
	(void)state;
	/* Not JSON, or not an object. */
	refused(true, "", -EINVAL, "empty: a JSON object was expected");
	refused(true, "{\n  \"NotHandleFaultCodes\": [\"80E21007\",]\n}\n", -EINVAL,
		"line 2: malformed JSON: unexpected character");
	refused(true, "{\n  \"NotHandleFaultCodes\": [\n", -EINVAL,
		"line 3: malformed JSON: the text ends inside a value");
	refused(true, "{\"a\": 1}\n{\"b\": 2}\n", -EINVAL, "line 2: malformed JSON: unexpected character");
	refused(true, "\n[1, 2]\n", -EINVAL, "line 2: the top level must be an object, not a list");
	refused(false, "{\n\"FaultFrequency\": [[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]}", -E2BIG,
		"line 2: JSON nested deeper than 16 levels");
	char nul[] = "{\n\"GraceTolerance\": {}\0}";
	saved = cfg;
	assert_int_equal(fault_huawei_customization_parse(nul, sizeof(nul) - 1, &cfg, why, sizeof(why)), -EINVAL);
	assert_string_equal(why, "line 2: a NUL byte: not a JSON text");

	/* faultCode.json: types, codes, keys. */
	refused(true, "{\n  \"NotHandleFaultCodes\": \"80E21007\"\n}\n", -EINVAL,
		"line 2: NotHandleFaultCodes: must be a list of fault codes, not a string");
	refused(true, "{\n  \"RestartNPUCodes\": [\n    \"40F84E00\",\n    1.5\n  ]\n}\n", -EINVAL,
		"line 4: RestartNPUCodes[1]: must be a fault code (a string of hex digits such as \"80E01801\" or an "
		"integer), not a fraction");
	refused(true, "{\"RestartNPUCodes\": [4294967296]}", -EINVAL,
		"line 1: RestartNPUCodes[0]: must be a fault code from 1 to 4294967295");
	refused(true, "{\"RestartNPUCodes\": [\"0\"]}", -EINVAL,
		"line 1: RestartNPUCodes[0]: '0' is not a fault code (up to 8 hex digits such as 80E01801)");
	refused(true, "{\n\"SeparateNPUcodes\": []\n}", -EINVAL,
		"line 2: SeparateNPUcodes: unknown key: keys are case-sensitive here, write SeparateNPUCodes");
	refused(true, "{\n\n\"ManuallySeparateNPUCodes\": []\n}", -EINVAL,
		"line 3: ManuallySeparateNPUCodes: unknown key (faultCode.json takes NotHandleFaultCodes, "
		"SubHealthFaultCodes, RestartRequestCodes, RestartBusinessCodes, RecoverRestartBusinessCodes, "
		"FreeRestartNPUCodes, RestartNPUCodes, PreSeparateNPUCodes, SeparateNPUCodes and the four "
		"*NetworkCodes lists)");
	refused(true, "{\"SeparateNPUNetworkCodes\": [\"0\"]}", -EINVAL,
		"line 1: SeparateNPUNetworkCodes[0]: '0' is not a fault code (up to 8 hex digits such as 80E01801)");

	/* faultCustomization.json: rules. */
	refused(false, "{\n  \"FaultFrequency\": [\n    {\n      \"EventId\": [\"80E01801\"],\n      \"TimeWindow\": 86400,\n"
		       "      \"Times\": 2,\n      \"FaultHandling\": \"Separate\"\n    }\n  ]\n}\n",
		-EINVAL,
		"line 7: FaultFrequency[0].FaultHandling: 'Separate' is not one of NotHandleFault, SubHealthFault, "
		"RestartRequest, RestartBusiness, FreeRestartNPU, RestartNPU, PreSeparateNPU, SeparateNPU, "
		"ManuallySeparateNPU");
	refused(false, "{\"FaultFrequency\": [{\"EventId\": [\"80E01801\"], \"TimeWindow\": 86400, \"Times\": 40, "
		       "\"FaultHandling\": \"ManuallySeparateNPU\"}]}",
		-EINVAL,
		"line 1: FaultFrequency[0].Times: must be an integer from 1 to 32 here (this plugin remembers 32 "
		"occurrences of a code; Huawei's takes up to 100)");
	refused(false, "{\"FaultFrequency\": [{\"EventId\": [\"80E01801\"], \"TimeWindow\": 30, \"Times\": 2, "
		       "\"FaultHandling\": \"ManuallySeparateNPU\"}]}",
		-EINVAL, "line 1: FaultFrequency[0].TimeWindow: must be an integer from 60 to 864000");
	refused(false, "{\"FaultFrequency\": [{\"EventId\": [\"80E01801\"], \"TimeWindow\": \"60\", \"Times\": 2, "
		       "\"FaultHandling\": \"ManuallySeparateNPU\"}]}",
		-EINVAL, "line 1: FaultFrequency[0].TimeWindow: must be an integer from 60 to 864000");
	refused(false, "{\"FaultFrequency\": [{\"EventId\": [\"80E01801\"], \"TimeWindow\": 60, \"Times\": 2, "
		       "\"FaultHandling\": \"ManuallySeparateNPU\", \"ReleaseTimeWindow\": 30}]}",
		-EINVAL, "line 1: FaultFrequency[0].ReleaseTimeWindow: must be 0 (none) or from 60 to 4294967296");
	refused(false, "{\"FaultFrequency\": [{\"EventId\": [\"80E01801\"], \"TimeWindow\": 60, \"Times\": 2, "
		       "\"FaultHandling\": \"RestartNPU\"}]}",
		-EINVAL,
		"line 1: FaultFrequency[0].FaultHandling: RestartNPU needs a ReleaseTimeWindow (Huawei's plugin skips "
		"such a rule; only ManuallySeparateNPU goes without one)");
	refused(false, "{\"FaultFrequency\": [\n{\"EventId\": [\"80E01801\"], \"TimeWindow\": 60, \"Times\": 2, "
		       "\"FaultHandling\": \"ManuallySeparateNPU\"},\n{\"EventId\": [\"80e01801\"], \"TimeWindow\": 60, "
		       "\"Times\": 3, \"FaultHandling\": \"ManuallySeparateNPU\"}]}",
		-EINVAL,
		"line 3: FaultFrequency[1].EventId[0]: 80E01801 is listed twice in FaultFrequency (Huawei's plugin "
		"would skip all but the first)");
	refused(false, "{\"FaultFrequency\": [{\"EventId\": [\"80E01801\"], \"Times\": 2, "
		       "\"FaultHandling\": \"ManuallySeparateNPU\"}]}",
		-EINVAL, "line 1: FaultFrequency[0]: needs TimeWindow");
	/* An unquoted code is a number to JSON (80E01801 = 80e1801). */
	refused(false, "{\"FaultFrequency\": [{\"EventId\": [80E01801], \"TimeWindow\": 60, \"Times\": 2, "
		       "\"FaultHandling\": \"ManuallySeparateNPU\"}]}",
		-EINVAL,
		"line 1: FaultFrequency[0].EventId[0]: must be a fault code (a string of hex digits such as "
		"\"80E01801\"), not a fraction");
	refused(false, "{\"FaultFrequency\": [{\"EventId\": [2162169857], \"TimeWindow\": 60, \"Times\": 2, "
		       "\"FaultHandling\": \"ManuallySeparateNPU\"}]}",
		-EINVAL,
		"line 1: FaultFrequency[0].EventId[0]: must be a fault code (a string of hex digits such as "
		"\"80E01801\"), not an integer");
	refused(false, "{\"FaultDuration\": [{\"EventId\": [\"81078603\"], \"FaultTimeout\": 20, "
		       "\"FaultHandling\": \"ManuallySeparateNPU\"}]}",
		-EINVAL,
		"line 1: FaultDuration[0].FaultHandling: ManuallySeparateNPU is not a level a FaultDuration rule takes "
		"(Huawei's plugin skips such a rule); a FaultFrequency rule can separate the chip");
	refused(false, "{\"FaultDuration\": [{\"EventId\": [\"81078603\"], \"FaultTimeout\": 601, "
		       "\"FaultHandling\": \"PreSeparateNPU\"}]}",
		-EINVAL, "line 1: FaultDuration[0].FaultTimeout: must be an integer from 0 to 600");
	refused(false, "{\"FaultDuration\": [{\"EventId\": [\"81078603\"], \"RecoverTimeout\": -1, "
		       "\"FaultHandling\": \"PreSeparateNPU\"}]}",
		-EINVAL, "line 1: FaultDuration[0].RecoverTimeout: must be an integer from 0 to 86400");
	refused(false, "{\"FaultDuration\": [{\"EventId\": [\"81078603\"], \"ReleaseTimeWindow\": 60, "
		       "\"FaultHandling\": \"PreSeparateNPU\"}]}",
		-EINVAL,
		"line 1: FaultDuration[0].ReleaseTimeWindow: unknown key (a FaultDuration rule takes EventId, "
		"FaultTimeout, RecoverTimeout, FaultHandling)");
	refused(false, "{\"FaultDuration\": {}}", -EINVAL, "line 1: FaultDuration: must be a list of rules, not an object");
	refused(false, "{\"FaultDuration\": [7]}", -EINVAL, "line 1: FaultDuration[0]: must be an object, not an integer");
	refused(false, "{\n  \"GraceTolerance\": {\n    \"WaitDeviceResetTime\": true\n  }\n}\n", -EINVAL,
		"line 3: GraceTolerance.WaitDeviceResetTime: must be an integer from 0 to 2147483647");
	refused(false, "{\n  \"GraceTolerance\": {\n    \"WaitResetTime\": 5\n  }\n}\n", -EINVAL,
		"line 3: GraceTolerance.WaitResetTime: unknown key (GraceTolerance takes WaitProcessReadCMTime, "
		"WaitFlushingCMTime, WaitDeviceResetTime, WaitFaultSelfHealingTime)");
	refused(false, "{\"PollInterval\": 300}", -EINVAL,
		"line 1: PollInterval: unknown key (faultCustomization.json takes GraceTolerance, FaultFrequency, "
		"FaultDuration)");
}

static void test_limits(void **state)
{
	(void)state;
	/* Larger than 1 MiB: refused before parsing, and as a file. */
	size_t size = FAULT_HUAWEI_MAX_BYTES + 2;
	char *big = malloc(size);
	assert_non_null(big);
	memset(big, ' ', size - 1);
	big[0] = '{';
	big[size - 2] = '}';
	big[size - 1] = '\0';
	refused(true, big, -E2BIG, "larger than 1048576 bytes");
	char path[300];
	snprintf(path, sizeof(path), "%s/faultCode.json", dir);
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	assert_int_equal(fwrite(big, 1, size - 1, f), size - 1);
	assert_int_equal(fclose(f), 0);
	assert_int_equal(fault_huawei_load(path, &cfg, why, sizeof(why)), -E2BIG);
	char want[400];
	snprintf(want, sizeof(want), "%s: larger than 1048576 bytes", path);
	assert_string_equal(why, want);
	unlink(path);

	/* More codes than the table holds. */
	size_t len = (size_t)snprintf(big, size, "{\"RestartNPUCodes\": [");
	for (unsigned i = 1; i <= FAULT_POLICY_MAX_CODES + 1; i++)
		len += (size_t)snprintf(big + len, size - len, "%s%u", i > 1 ? "," : "", i);
	snprintf(big + len, size - len, "]}");
	refused(true, big, -E2BIG, "line 1: RestartNPUCodes[4096]: more than 4096 codes");
	/* As many as it holds. */
	len = (size_t)snprintf(big, size, "{\"RestartNPUCodes\": [");
	for (unsigned i = 1; i <= FAULT_POLICY_MAX_CODES; i++)
		len += (size_t)snprintf(big + len, size - len, "%s\"%X\"", i > 1 ? "," : "", i);
	snprintf(big + len, size - len, "]}");
	assert_int_equal(fault_huawei_codes_parse(big, strlen(big), &cfg, why, sizeof(why)), 0);
	assert_int_equal(cfg.n_codes, FAULT_POLICY_MAX_CODES);

	/* More rules than the configuration holds. */
	fault_policy_config_init(&cfg);
	len = (size_t)snprintf(big, size, "{\"FaultDuration\": [");
	for (unsigned i = 1; i <= FAULT_POLICY_MAX_RULES + 1; i++)
		len += (size_t)snprintf(big + len, size - len,
					"%s{\"EventId\": [\"%X\"], \"FaultHandling\": \"RestartNPU\"}", i > 1 ? "," : "",
					i);
	snprintf(big + len, size - len, "]}");
	refused(false, big, -E2BIG, "line 1: FaultDuration[64]: more than 64 FaultDuration rules");
	free(big);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_current_format, setup),
		cmocka_unit_test_setup(test_older_format, setup),
		cmocka_unit_test_setup(test_network_lists, setup),
		cmocka_unit_test_setup(test_directory, setup),
		cmocka_unit_test_setup(test_refusals, setup),
		cmocka_unit_test_setup(test_limits, setup),
	};
	return cmocka_run_group_tests(tests, setup_group, teardown_group);
}
