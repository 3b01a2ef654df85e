/* SPDX-License-Identifier: Apache-2.0 */
/* The fault policy; see policy.h. */
#include "fault/policy.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/macro.h"

static const char *const level_names[FAULT_LEVEL_COUNT] = {
	[FAULT_LEVEL_NONE] = "none",
	[FAULT_LEVEL_NOT_HANDLE] = "NotHandleFault",
	[FAULT_LEVEL_SUB_HEALTH] = "SubHealthFault",
	[FAULT_LEVEL_RESTART_REQUEST] = "RestartRequest",
	[FAULT_LEVEL_RESTART_BUSINESS] = "RestartBusiness",
	[FAULT_LEVEL_FREE_RESTART_NPU] = "FreeRestartNPU",
	[FAULT_LEVEL_RESTART_NPU] = "RestartNPU",
	[FAULT_LEVEL_PRE_SEPARATE_NPU] = "PreSeparateNPU",
	[FAULT_LEVEL_SEPARATE_NPU] = "SeparateNPU",
	[FAULT_LEVEL_MANUALLY_SEPARATE_NPU] = "ManuallySeparateNPU",
};

/* The built-in table: the code -> level facts of faultCode.json as Huawei's
 * MindCluster device plugin publishes it,
 * https://github.com/Ascend/mind-cluster/blob/018a2e0d5a7213b9902057f01ae93182daea0a5c/component/ascend-device-plugin/build/faultCode.json
 * (PreSeparateNPUCodes is empty there). Sorted by code for bsearch. The file
 * lists A2301001 as RestartBusiness and SeparateNPU: like Huawei's lookup,
 * which tries the severe levels first, the table keeps SeparateNPU. */
#define NH FAULT_LEVEL_NOT_HANDLE
#define SH FAULT_LEVEL_SUB_HEALTH
#define RQ FAULT_LEVEL_RESTART_REQUEST
#define RB FAULT_LEVEL_RESTART_BUSINESS
#define FR FAULT_LEVEL_FREE_RESTART_NPU
#define RN FAULT_LEVEL_RESTART_NPU
#define SP FAULT_LEVEL_SEPARATE_NPU
static const struct fault_code_level builtin[] = {
	{ 0x40F84E00, RN }, { 0x4C1F8608, NH }, { 0x4C4BA00C, SP }, { 0x80818200, NH }, { 0x80818201, NH },
	{ 0x80818202, NH }, { 0x80818203, NH }, { 0x80818204, NH }, { 0x80818205, NH }, { 0x80818C00, SP },
	{ 0x80818C05, SP }, { 0x80818C06, SH }, { 0x80A18005, NH }, { 0x80A18006, NH }, { 0x80A18008, RN },
	{ 0x80A38003, NH }, { 0x80A38006, NH }, { 0x80A38008, RN }, { 0x80A58003, NH }, { 0x80A58006, NH },
	{ 0x80A58008, RN }, { 0x80B58000, RN }, { 0x80B78000, RN }, { 0x80B78005, NH }, { 0x80B78006, NH },
	{ 0x80B98000, RN }, { 0x80B98006, NH }, { 0x80B98008, RN }, { 0x80BB8000, RQ }, { 0x80BB8003, RQ },
	{ 0x80BB8008, RQ }, { 0x80BB8009, RQ }, { 0x80BB800A, RQ }, { 0x80BD8000, RQ }, { 0x80BD8003, RQ },
	{ 0x80BD8006, NH }, { 0x80BD8008, RN }, { 0x80BD8009, RQ }, { 0x80C78008, RN }, { 0x80C98000, RQ },
	{ 0x80C98001, RN }, { 0x80C98002, RQ }, { 0x80C98003, RQ }, { 0x80C98006, NH }, { 0x80C98008, RQ },
	{ 0x80C98009, RQ }, { 0x80C9800A, RQ }, { 0x80CB8001, RN }, { 0x80CB8002, RQ }, { 0x80CB8006, NH },
	{ 0x80CB8008, RQ }, { 0x80CB8009, RQ }, { 0x80CB800A, RQ }, { 0x80CD8003, NH }, { 0x80CD8006, NH },
	{ 0x80CD8008, RN }, { 0x80CF8000, RN }, { 0x80CF8003, RQ }, { 0x80CF8008, RN }, { 0x80CF8009, RN },
	{ 0x80D38009, NH }, { 0x80D58000, RQ }, { 0x80D58009, RQ }, { 0x80D98008, RQ }, { 0x80DB8000, RQ },
	{ 0x80DB800A, RQ }, { 0x80DD8000, RQ }, { 0x80DD8003, RQ }, { 0x80DD8007, NH }, { 0x80DD8008, NH },
	{ 0x80DE0200, NH }, { 0x80DE0207, SH }, { 0x80DE1801, RN }, { 0x80DE1803, NH }, { 0x80DE1805, NH },
	{ 0x80DF8000, RN }, { 0x80DF8006, NH }, { 0x80DF8008, RN }, { 0x80DF8009, RN }, { 0x80DF800A, RN },
	{ 0x80DF8400, NH }, { 0x80DF8401, NH }, { 0x80DF8402, SP }, { 0x80E00209, NH }, { 0x80E0020B, SP },
	{ 0x80E01801, RB }, { 0x80E01805, NH }, { 0x80E01809, NH }, { 0x80E18000, RN }, { 0x80E18005, RN },
	{ 0x80E18006, NH }, { 0x80E18008, RN }, { 0x80E1800A, RN }, { 0x80E1800F, NH }, { 0x80E18400, NH },
	{ 0x80E18401, NH }, { 0x80E18402, SP }, { 0x80E18404, RN }, { 0x80E18405, SH }, { 0x80E20207, SH },
	{ 0x80E21007, NH }, { 0x80E21008, RN }, { 0x80E2120D, RN }, { 0x80E21E01, RN }, { 0x80E24E00, RN },
	{ 0x80E38003, NH }, { 0x80E38008, RN }, { 0x80E39200, RN }, { 0x80E3A201, SP }, { 0x80E3A202, RN },
	{ 0x80E3A203, RN }, { 0x80E3A207, RN }, { 0x80E44E00, RN }, { 0x80E58005, RN }, { 0x80E58009, RN },
	{ 0x80E58E02, RN }, { 0x80E58E03, RN }, { 0x80E78000, RN }, { 0x80E78008, RN }, { 0x80F18000, RN },
	{ 0x80F18003, NH }, { 0x80F18006, NH }, { 0x80F18008, RN }, { 0x80F1800A, RN }, { 0x80F2180D, RN },
	{ 0x80F38003, NH }, { 0x80F38006, NH }, { 0x80F38008, RN }, { 0x80F38009, NH }, { 0x80F78003, RN },
	{ 0x80F78006, NH }, { 0x80F78008, RN }, { 0x80F78009, RN }, { 0x80F78C02, RN }, { 0x80F78C03, RN },
	{ 0x80F78C04, RN }, { 0x80FA4E00, RN }, { 0x80FB8000, NH }, { 0x80FB8005, RN }, { 0x81078603, NH },
	{ 0x81078605, SH }, { 0x812E4E00, RN }, { 0x812F8000, RN }, { 0x81318006, NH }, { 0x81318008, RQ },
	{ 0x81338002, RN }, { 0x81338004, NH }, { 0x81338006, NH }, { 0x81338008, RN }, { 0x8139800A, RN },
	{ 0x813B8002, RN }, { 0x813B8004, NH }, { 0x813B8006, NH }, { 0x813B8008, RN }, { 0x813F800A, RN },
	{ 0x8145800A, RN }, { 0x81478002, RN }, { 0x81478004, NH }, { 0x81478006, NH }, { 0x81478008, RN },
	{ 0x81498004, RN }, { 0x814D8006, NH }, { 0x814F8002, SP }, { 0x814F8004, NH }, { 0x814F8006, NH },
	{ 0x814F8008, RN }, { 0x81578002, RN }, { 0x81578004, NH }, { 0x81578006, NH }, { 0x81578008, RN },
	{ 0x815F8002, RN }, { 0x815F8004, NH }, { 0x815F8006, NH }, { 0x815F8008, RN }, { 0x816F8002, SP },
	{ 0x816F8004, NH }, { 0x816F8006, NH }, { 0x816F8008, RN }, { 0x817F8002, SP }, { 0x817F8004, NH },
	{ 0x817F8006, NH }, { 0x817F8008, RN }, { 0x81938002, RN }, { 0x81938004, NH }, { 0x81938006, NH },
	{ 0x81938008, RN }, { 0x81958002, RN }, { 0x81958004, NH }, { 0x81958006, NH }, { 0x81958008, RN },
	{ 0x81978002, RN }, { 0x81978004, NH }, { 0x81978006, NH }, { 0x81978008, RN }, { 0x81998006, NH },
	{ 0x81998008, RN }, { 0x81998009, RN }, { 0x819B8003, NH }, { 0x819B8006, NH }, { 0x819B800A, RN },
	{ 0x819B800D, NH }, { 0x819B8605, SH }, { 0x819D8000, NH }, { 0x81A3880C, SH }, { 0x81AB8003, RQ },
	{ 0x81AB8008, RQ }, { 0x81AB800D, RQ }, { 0x81AD8605, SH }, { 0x81B38004, RB }, { 0x81B38008, RN },
	{ 0x81B38009, RB }, { 0x81C5800A, RN }, { 0x81C7800A, RN }, { 0x81C9800A, RN }, { 0x8C03A000, RN },
	{ 0x8C044E00, FR }, { 0x8C064E00, FR }, { 0x8C084E00, FR }, { 0x8C0A4E00, FR }, { 0x8C0C4E00, FR },
	{ 0x8C0E4E00, FR }, { 0x8C104E00, FR }, { 0x8C124E00, FR }, { 0x8C17A005, FR }, { 0x8C19A005, FR },
	{ 0x8C1DA005, FR }, { 0x8C1F8608, NH }, { 0x8C1F8609, NH }, { 0x8C1F860A, SH }, { 0x8C1F860B, NH },
	{ 0x8C1FA006, RN }, { 0x8C204E00, RB }, { 0x8C2FA001, SH }, { 0x8C2FA009, NH }, { 0x8C464E00, FR },
	{ 0x8C4BA00C, RN }, { 0x9419321B, SP }, { 0xA2140007, NH }, { 0xA2140008, NH }, { 0xA2140009, NH },
	{ 0xA214000A, NH }, { 0xA214000B, NH }, { 0xA214000D, NH }, { 0xA2141004, RN }, { 0xA2141006, RN },
	{ 0xA2142004, RN }, { 0xA2142006, RN }, { 0xA2145004, RN }, { 0xA2301000, SP }, { 0xA2301001, SP },
	{ 0xA2301002, RB }, { 0xA2302001, SP }, { 0xA2303001, RB }, { 0xA4025021, NH }, { 0xA4025041, NH },
	{ 0xA4025061, NH }, { 0xA4025081, NH }, { 0xA40250E1, NH }, { 0xA4025101, NH }, { 0xA4028801, NH },
	{ 0xA4140007, NH }, { 0xA4140008, NH }, { 0xA4140009, NH }, { 0xA414000A, NH }, { 0xA414000B, NH },
	{ 0xA414000C, NH }, { 0xA414000D, NH }, { 0xA4183200, RN }, { 0xA4192C1A, SP }, { 0xA4193216, SP },
	{ 0xA4193217, FR }, { 0xA4193218, FR }, { 0xA419321B, SP }, { 0xA419321C, SP }, { 0xA42A0000, FR },
	{ 0xA42F390F, SP }, { 0xA42F3916, SP }, { 0xA42F3917, FR }, { 0xA42F3918, FR }, { 0xA42F391A, SP },
	{ 0xA4302003, RB }, { 0xA4302004, RB }, { 0xA4302005, RB }, { 0xA4302006, RB }, { 0xA4302009, RB },
	{ 0xA430200A, RB }, { 0xA4303002, NH }, { 0xA6023001, RN }, { 0xA6023002, RN }, { 0xA6023003, RN },
	{ 0xA6023004, RN }, { 0xA60250A1, RB }, { 0xA60250C1, NH }, { 0xA6060000, RN }, { 0xA6060001, RN },
	{ 0xA6060002, RN }, { 0xA6060003, RN }, { 0xA6060004, RN }, { 0xA6060005, RN }, { 0xA606000A, RN },
	{ 0xA606000B, RN }, { 0xA606000C, RN }, { 0xA606000F, RN }, { 0xA606009D, RN }, { 0xA6060FFF, RN },
	{ 0xA607FFFF, RN }, { 0xA6140001, RN }, { 0xA6140002, RN }, { 0xA6140003, RN }, { 0xA6140004, RN },
	{ 0xA6140005, RN }, { 0xA6140006, RN }, { 0xA6141003, RN }, { 0xA6142003, RN }, { 0xA6143003, RN },
	{ 0xA6144003, RN }, { 0xA6145003, RN }, { 0xA6183207, SP }, { 0xA6192D15, RN }, { 0xA6193206, RN },
	{ 0xA6193215, RN }, { 0xA6193248, RN }, { 0xA62F3905, RN }, { 0xA62F3934, SP }, { 0xA62FFFFF, RN },
	{ 0xA6301002, RB }, { 0xA6303003, RN }, { 0xA6303004, RN }, { 0xA6360000, RN }, { 0xA6361000, RN },
	{ 0xA6362000, RN }, { 0xA8021004, RN }, { 0xA8028801, SP }, { 0xA8028802, RB }, { 0xA8060FFF, RN },
	{ 0xA807FFFF, RN }, { 0xA819320F, SP }, { 0xA8193234, SP }, { 0xA8193235, SP }, { 0xA82A0000, RN },
	{ 0xB4060006, RB }, { 0xB4060007, RB }, { 0xB4060008, RB }, { 0xB4060009, RB }, { 0xB406000D, RB },
	{ 0xB406000E, RB }, { 0xB4060010, RB }, { 0xB4060011, RB }, { 0xB4060014, RB }, { 0xB406009C, RB },
};
#undef NH
#undef SH
#undef RQ
#undef RB
#undef FR
#undef RN
#undef SP

const char *fault_level_name(enum fault_level level)
{
	return (unsigned)level < FAULT_LEVEL_COUNT ? level_names[level] : "unknown";
}

int fault_level_parse(const char *name, enum fault_level *ret_level)
{
	if (!name)
		return -EINVAL;
	for (unsigned i = FAULT_LEVEL_NOT_HANDLE; i < FAULT_LEVEL_COUNT; i++)
		if (strcmp(name, level_names[i]) == 0) {
			*ret_level = (enum fault_level)i;
			return 0;
		}
	return -EINVAL;
}

bool fault_level_unhealthy(enum fault_level level)
{
	return level >= FAULT_LEVEL_RESTART_REQUEST;
}

int fault_code_parse(const char *text, uint32_t *ret_code)
{
	if (!text)
		return -EINVAL;
	if (text[0] == '0' && (text[1] == 'x' || text[1] == 'X'))
		text += 2;
	size_t n = strspn(text, "0123456789abcdefABCDEF");
	if (n == 0 || n > 8 || text[n] != '\0')
		return -EINVAL;
	uint32_t code = 0;
	for (const char *p = text; *p; p++) {
		unsigned digit = *p <= '9' ? (unsigned)(*p - '0') : (unsigned)((*p | 0x20) - 'a' + 10);
		code = code << 4 | digit;
	}
	if (code == 0)
		return -EINVAL;
	*ret_code = code;
	return 0;
}

static bool level_valid(enum fault_level level)
{
	return level > FAULT_LEVEL_NONE && level < FAULT_LEVEL_COUNT;
}

const char *fault_rule_name(enum fault_rule rule)
{
	switch (rule) {
	case FAULT_RULE_NONE:
		return "none";
	case FAULT_RULE_CODE_TABLE:
		return "code table";
	case FAULT_RULE_DEFAULT_LEVEL:
		return "default level";
	case FAULT_RULE_DCMI_HEALTH:
		return "DCMI health";
	case FAULT_RULE_FREQUENCY:
		return "frequency";
	case FAULT_RULE_DURATION:
		return "duration";
	case FAULT_RULE_RECOVERY:
		return "recovery";
	case FAULT_RULE_RECOVERY_HOLD:
		return "recovery hold";
	case FAULT_RULE_MANUAL_SEPARATION:
		return "manual separation";
	case FAULT_RULE_RELEASE:
		return "release";
	case FAULT_RULE_RELEASE_WINDOW:
		return "release window";
	}
	return "unknown";
}

/* What the operator can do about a chip at level. */
static const char *level_hint(enum fault_level level)
{
	switch (level) {
	case FAULT_LEVEL_NONE:
	case FAULT_LEVEL_COUNT:
		break;
	case FAULT_LEVEL_NOT_HANDLE:
		return "no action needed; the chip stays in service";
	case FAULT_LEVEL_SUB_HEALTH:
		return "the chip stays in service; have it checked if this persists";
	case FAULT_LEVEL_RESTART_REQUEST:
		return "out of service while the fault lasts; the job may retry its failed request";
	case FAULT_LEVEL_RESTART_BUSINESS:
		return "out of service while the fault lasts; restart the jobs that used the chip";
	case FAULT_LEVEL_FREE_RESTART_NPU:
		return "out of service while the fault lasts; reset the chip once no pod holds it";
	case FAULT_LEVEL_RESTART_NPU:
		return "out of service while the fault lasts; reset the chip or reboot the node";
	case FAULT_LEVEL_PRE_SEPARATE_NPU:
		return "takes no new pods, running pods may finish; then have the chip checked";
	case FAULT_LEVEL_SEPARATE_NPU:
		return "out of service while the fault lasts; move its pods away and have the chip checked";
	case FAULT_LEVEL_MANUALLY_SEPARATE_NPU:
		return "separated until released: check the chip, then release it";
	}
	return "the faults cleared; back in service";
}

static const char *decision_hint(const struct fault_decision *d)
{
	switch (d->kind) {
	case FAULT_DECISION_RELEASED:
		return d->rule == FAULT_RULE_RELEASE_WINDOW ? "released: the code stayed away for the release window"
							    : "released by an operator";
	case FAULT_DECISION_ESCALATION_ENDED:
		return "the escalation ended: the code stayed away long enough";
	case FAULT_DECISION_LEVEL:
	case FAULT_DECISION_ESCALATED:
	case FAULT_DECISION_SEPARATED:
		break;
	}
	return level_hint(d->level);
}

/* --- Configuration --- */

void fault_policy_config_init(struct fault_policy_config *config)
{
	memset(config, 0, sizeof(*config));
	config->recovery_hold_ms = FAULT_POLICY_DEFAULT_RECOVERY_HOLD_MS;
	config->default_level = FAULT_POLICY_DEFAULT_LEVEL;
	config->builtin_codes = true;
}

static bool windows_same(const struct fault_window *a, const struct fault_window *b, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (a[i].all_codes != b[i].all_codes || a[i].first_code != b[i].first_code ||
		    a[i].n_codes != b[i].n_codes || a[i].count != b[i].count || a[i].window_ms != b[i].window_ms ||
		    a[i].hold_ms != b[i].hold_ms || a[i].level != b[i].level)
			return false;
	return true;
}

bool fault_policy_config_same(const struct fault_policy_config *a, const struct fault_policy_config *b)
{
	if (a->recovery_hold_ms != b->recovery_hold_ms || a->default_level != b->default_level ||
	    a->release_window_ms != b->release_window_ms || a->builtin_codes != b->builtin_codes ||
	    a->n_codes != b->n_codes || a->n_frequency != b->n_frequency || a->n_duration != b->n_duration ||
	    a->n_rule_codes != b->n_rule_codes || a->n_network_codes != b->n_network_codes)
		return false;
	for (size_t i = 0; i < a->n_network_codes; i++)
		if (a->network_codes[i].code != b->network_codes[i].code ||
		    a->network_codes[i].level != b->network_codes[i].level)
			return false;
	for (size_t i = 0; i < a->n_codes; i++)
		if (a->codes[i].code != b->codes[i].code || a->codes[i].level != b->codes[i].level)
			return false;
	return memcmp(a->rule_codes, b->rule_codes, a->n_rule_codes * sizeof(a->rule_codes[0])) == 0 &&
	       windows_same(a->frequency, b->frequency, a->n_frequency) &&
	       windows_same(a->duration, b->duration, a->n_duration);
}

/* The index of the first entry of table[n] whose code is not below code. */
static size_t code_lower_bound(const struct fault_code_level *table, size_t n, uint32_t code)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (table[mid].code < code)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static const struct fault_code_level *code_find(const struct fault_code_level *table, size_t n, uint32_t code)
{
	size_t i = code_lower_bound(table, n, code);
	return i < n && table[i].code == code ? &table[i] : NULL;
}

int fault_policy_config_set_code(struct fault_policy_config *config, uint32_t code, enum fault_level level)
{
	if (!config || code == 0 || !level_valid(level))
		return -EINVAL;
	size_t i = code_lower_bound(config->codes, config->n_codes, code);
	if (i < config->n_codes && config->codes[i].code == code) {
		config->codes[i].level = level;
		return 0;
	}
	if (config->n_codes == FAULT_POLICY_MAX_CODES)
		return -E2BIG;
	memmove(&config->codes[i + 1], &config->codes[i], (config->n_codes - i) * sizeof(config->codes[0]));
	config->codes[i] = (struct fault_code_level){ .code = code, .level = level };
	config->n_codes++;
	return 0;
}

int fault_policy_config_set_network_code(struct fault_policy_config *config, uint32_t code, enum fault_level level)
{
	if (!config || code == 0 || !level_valid(level))
		return -EINVAL;
	size_t i = code_lower_bound(config->network_codes, config->n_network_codes, code);
	if (i < config->n_network_codes && config->network_codes[i].code == code) {
		if (level > config->network_codes[i].level)
			config->network_codes[i].level = level;
		return 0;
	}
	if (config->n_network_codes == FAULT_POLICY_MAX_NETWORK_CODES)
		return -E2BIG;
	memmove(&config->network_codes[i + 1], &config->network_codes[i],
		(config->n_network_codes - i) * sizeof(config->network_codes[0]));
	config->network_codes[i] = (struct fault_code_level){ .code = code, .level = level };
	config->n_network_codes++;
	return 0;
}

enum fault_level fault_policy_network_level(const struct fault_policy_config *config, uint32_t code)
{
	const struct fault_code_level *e = code_find(config->network_codes, config->n_network_codes, code);
	return e ? e->level : FAULT_LEVEL_NONE;
}

bool fault_level_network_down(enum fault_level level)
{
	return level >= FAULT_LEVEL_PRE_SEPARATE_NPU;
}

static int compare_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	return (x > y) - (x < y);
}

/* Appends rule to rules[*n_rules] with its codes sorted and each once in
 * the configuration's pool. */
static int add_window(struct fault_policy_config *config, struct fault_window *rules, size_t *n_rules,
		      const uint32_t *codes, size_t n_codes, const struct fault_window *rule)
{
	if (!rule->all_codes) {
		if (n_codes == 0 || !codes)
			return -EINVAL;
		for (size_t i = 0; i < n_codes; i++)
			if (codes[i] == 0)
				return -EINVAL;
	}
	if (*n_rules >= FAULT_POLICY_MAX_RULES)
		return -E2BIG;
	if (rule->all_codes)
		n_codes = 0;
	if (n_codes > FAULT_POLICY_MAX_RULE_CODES - config->n_rule_codes)
		return -E2BIG;
	uint32_t *pool = &config->rule_codes[config->n_rule_codes];
	if (n_codes)
		memcpy(pool, codes, n_codes * sizeof(*pool));
	qsort(pool, n_codes, sizeof(*pool), compare_u32);
	size_t unique = 0;
	for (size_t i = 0; i < n_codes; i++)
		if (unique == 0 || pool[unique - 1] != pool[i])
			pool[unique++] = pool[i];
	struct fault_window *w = &rules[(*n_rules)++];
	*w = *rule;
	/* Both fit: the pool holds at most FAULT_POLICY_MAX_RULE_CODES. */
	w->first_code = (uint32_t)config->n_rule_codes;
	w->n_codes = (uint32_t)unique;
	config->n_rule_codes += unique;
	return 0;
}

int fault_policy_config_add_frequency(struct fault_policy_config *config, const uint32_t *codes, size_t n_codes,
				      bool all_codes, uint32_t count, int64_t window_ms, enum fault_level level,
				      int64_t hold_ms)
{
	if (!config || !level_valid(level) || count < 1 || count > FAULT_POLICY_MAX_COUNT || window_ms < 1 ||
	    window_ms > FAULT_POLICY_MAX_WINDOW_MS || hold_ms < 0 || hold_ms > FAULT_POLICY_MAX_RELEASE_MS)
		return -EINVAL;
	const struct fault_window rule = {
		.all_codes = all_codes, .count = count, .window_ms = window_ms, .hold_ms = hold_ms, .level = level,
	};
	return add_window(config, config->frequency, &config->n_frequency, codes, n_codes, &rule);
}

int fault_policy_config_add_duration(struct fault_policy_config *config, const uint32_t *codes, size_t n_codes,
				     bool all_codes, int64_t timeout_ms, enum fault_level level, int64_t recover_ms)
{
	if (!config || !level_valid(level) || timeout_ms < 0 || timeout_ms > FAULT_POLICY_MAX_WINDOW_MS ||
	    recover_ms < 0 || recover_ms > FAULT_POLICY_MAX_WINDOW_MS)
		return -EINVAL;
	const struct fault_window rule = {
		.all_codes = all_codes, .window_ms = timeout_ms, .hold_ms = recover_ms, .level = level,
	};
	return add_window(config, config->duration, &config->n_duration, codes, n_codes, &rule);
}

/* Appends from's windows, their codes moved to the end of into's pool. */
static void append_windows(struct fault_window *rules, size_t *n_rules, const struct fault_window *from,
			   size_t n_from, size_t pool_offset)
{
	for (size_t i = 0; i < n_from; i++) {
		rules[*n_rules] = from[i];
		/* Fits: the merged pool holds at most FAULT_POLICY_MAX_RULE_CODES. */
		rules[*n_rules].first_code = (uint32_t)(from[i].first_code + pool_offset);
		(*n_rules)++;
	}
}

int fault_policy_config_merge(struct fault_policy_config *into, const struct fault_policy_config *from)
{
	if (!into || !from)
		return -EINVAL;
	size_t added = 0, added_network = 0;
	for (size_t i = 0; i < from->n_codes; i++)
		added += !code_find(into->codes, into->n_codes, from->codes[i].code);
	for (size_t i = 0; i < from->n_network_codes; i++)
		added_network += !code_find(into->network_codes, into->n_network_codes, from->network_codes[i].code);
	if (into->n_codes + added > FAULT_POLICY_MAX_CODES ||
	    into->n_network_codes + added_network > FAULT_POLICY_MAX_NETWORK_CODES ||
	    into->n_frequency + from->n_frequency > FAULT_POLICY_MAX_RULES ||
	    into->n_duration + from->n_duration > FAULT_POLICY_MAX_RULES ||
	    into->n_rule_codes + from->n_rule_codes > FAULT_POLICY_MAX_RULE_CODES)
		return -E2BIG;
	/* Cannot fail now: every code fits, and from's codes and levels are valid. */
	for (size_t i = 0; i < from->n_codes; i++)
		(void)fault_policy_config_set_code(into, from->codes[i].code, from->codes[i].level);
	for (size_t i = 0; i < from->n_network_codes; i++)
		(void)fault_policy_config_set_network_code(into, from->network_codes[i].code,
							   from->network_codes[i].level);
	size_t offset = into->n_rule_codes;
	memcpy(&into->rule_codes[offset], from->rule_codes, from->n_rule_codes * sizeof(from->rule_codes[0]));
	into->n_rule_codes += from->n_rule_codes;
	append_windows(into->frequency, &into->n_frequency, from->frequency, from->n_frequency, offset);
	append_windows(into->duration, &into->n_duration, from->duration, from->n_duration, offset);
	return 0;
}

const struct fault_code_level *fault_policy_builtin(size_t *ret_count)
{
	*ret_count = ELEMENTSOF(builtin);
	return builtin;
}

enum fault_level fault_policy_code_level(const struct fault_policy_config *config, uint32_t code,
					 enum fault_rule *ret_rule)
{
	const struct fault_code_level *e = code_find(config->codes, config->n_codes, code);
	if (!e && config->builtin_codes)
		e = code_find(builtin, ELEMENTSOF(builtin), code);
	if (ret_rule)
		*ret_rule = e ? FAULT_RULE_CODE_TABLE : FAULT_RULE_DEFAULT_LEVEL;
	return e ? e->level : config->default_level;
}

static bool window_matches(const struct fault_policy_config *config, const struct fault_window *w, uint32_t code)
{
	if (w->all_codes)
		return true;
	if (w->first_code > config->n_rule_codes || w->n_codes > config->n_rule_codes - w->first_code)
		return false;
	return bsearch(&code, &config->rule_codes[w->first_code], w->n_codes, sizeof(code), compare_u32) != NULL;
}

/* Whether a duration window names code (not merely "*"): such a code
 * counts for frequency windows when it outlasts the timeout. */
static bool named_by_duration(const struct fault_policy_config *config, uint32_t code)
{
	for (size_t r = 0; r < config->n_duration; r++)
		if (!config->duration[r].all_codes && window_matches(config, &config->duration[r], code))
			return true;
	return false;
}

/* --- Per-chip state --- */

void fault_state_init(struct fault_state *state)
{
	memset(state, 0, sizeof(*state));
	state->lower_since_ms = -1;
}

static void track_forget_onsets(struct fault_track *t)
{
	t->n_onsets = 0;
	t->next_onset = 0;
	for (size_t l = 0; l < FAULT_LEVEL_COUNT; l++)
		t->fired_ms[l] = INT64_MIN;
}

static struct fault_track *track_find(struct fault_state *state, uint32_t code)
{
	for (size_t i = 0; i < FAULT_STATE_MAX_CODES; i++)
		if (state->tracks[i].used && state->tracks[i].code == code)
			return &state->tracks[i];
	return NULL;
}

/* A track for code: a free one, else the one absent longest (its onsets are
 * forgotten), else none when every track's code is present. */
static struct fault_track *track_add(struct fault_state *state, uint32_t code, int64_t now)
{
	struct fault_track *slot = NULL;
	for (size_t i = 0; i < FAULT_STATE_MAX_CODES && !slot; i++)
		if (!state->tracks[i].used)
			slot = &state->tracks[i];
	for (size_t i = 0; i < FAULT_STATE_MAX_CODES && !slot; i++) {
		struct fault_track *t = &state->tracks[i];
		if (!t->present && (!slot || t->since_ms < slot->since_ms))
			slot = t;
	}
	if (!slot)
		return NULL;
	memset(slot, 0, sizeof(*slot));
	slot->used = true;
	slot->code = code;
	slot->since_ms = now;
	track_forget_onsets(slot);
	return slot;
}

static void onset_push(struct fault_track *t, int64_t now)
{
	t->onsets[t->next_onset] = now;
	t->next_onset = (t->next_onset + 1) % FAULT_ONSETS_KEPT;
	if (t->n_onsets < FAULT_ONSETS_KEPT)
		t->n_onsets++;
}

/* Onsets within window_ms before now (inclusive) and after the last firing
 * of a rule of level. */
static uint32_t onsets_counted(const struct fault_track *t, int64_t now, int64_t window_ms, enum fault_level level)
{
	uint32_t n = 0;
	for (uint32_t i = 0; i < t->n_onsets; i++)
		if (t->onsets[i] >= now - window_ms && t->onsets[i] > t->fired_ms[level])
			n++;
	return n;
}

static struct fault_escalation *escalation_find(struct fault_state *state, uint32_t code, enum fault_rule rule,
						enum fault_level level)
{
	for (size_t i = 0; i < FAULT_STATE_MAX_ESCALATIONS; i++) {
		struct fault_escalation *e = &state->escalations[i];
		if (e->used && e->code == code && e->rule == rule && e->level == level)
			return e;
	}
	return NULL;
}

/* Records an escalation: in a free slot, else in place of the least severe
 * one when it is less severe than this. False when it does not fit: the
 * chip is already held at least as high by every other escalation. */
static bool escalation_add(struct fault_state *state, uint32_t code, enum fault_level level, enum fault_rule rule,
			   int64_t hold_ms, int64_t now)
{
	struct fault_escalation *slot = NULL;
	for (size_t i = 0; i < FAULT_STATE_MAX_ESCALATIONS && !slot; i++)
		if (!state->escalations[i].used)
			slot = &state->escalations[i];
	for (size_t i = 0; i < FAULT_STATE_MAX_ESCALATIONS && !slot; i++) {
		struct fault_escalation *e = &state->escalations[i];
		if (e->level < level && (!slot || e->level < slot->level))
			slot = e;
	}
	if (!slot)
		return false;
	*slot = (struct fault_escalation){
		.used = true, .code = code, .level = level, .rule = rule, .since_ms = now, .hold_ms = hold_ms,
		.absent_since_ms = -1,
	};
	return true;
}

static void separate(struct fault_state *state, uint32_t code, enum fault_rule rule, int64_t release_ms,
		     int64_t now)
{
	state->separation = (struct fault_separation){
		.active = true, .code = code, .rule = rule, .since_ms = now, .release_ms = release_ms,
		.absent_since_ms = -1,
	};
}

/* --- A step --- */

struct step {
	const struct fault_policy_config *config;
	struct fault_state *state;
	int64_t now;
	struct fault_step *out;
	uint32_t codes[FAULT_INPUT_MAX_CODES]; /* this step's, each once; 0: DCMI health without a code */
	size_t n_codes;
	bool health_only; /* codes[0] is 0: DCMI health 2 or 3 without a code */
	bool at_once;     /* a release or an escalation's end lowers the level without the hold */
	/* The codes that count for frequency windows in this step. */
	uint32_t counted[FAULT_STATE_MAX_CODES];
	size_t n_counted;
};

/* Records an occurrence of t's code for the frequency windows. */
static void count_occurrence(struct step *x, struct fault_track *t)
{
	t->counted = true;
	onset_push(t, x->now);
	x->counted[x->n_counted++] = t->code;
}

static bool has_code(const struct step *x, uint32_t code)
{
	for (size_t i = 0; i < x->n_codes; i++)
		if (x->codes[i] == code)
			return true;
	return false;
}

static void decide(struct step *x, enum fault_decision_kind kind, uint32_t code, enum fault_level level,
		   enum fault_rule rule)
{
	struct fault_step *o = x->out;
	if (o->n_decisions == FAULT_STEP_MAX_DECISIONS) {
		o->decisions_dropped++;
		return;
	}
	o->decisions[o->n_decisions++] = (struct fault_decision){
		.kind = kind, .code = code, .level = level, .rule = rule,
	};
}

/* The level of one of this step's codes and the rule that gives it. */
static enum fault_level step_code_level(const struct step *x, uint32_t code, enum fault_rule *ret_rule)
{
	if (code == 0 && x->health_only) {
		*ret_rule = FAULT_RULE_DCMI_HEALTH;
		return x->config->default_level;
	}
	return fault_policy_code_level(x->config, code, ret_rule);
}

/* The input's codes, each once, 0s skipped; DCMI health 2 or 3 without a
 * code becomes code 0. */
static void gather_codes(struct step *x, const struct fault_input *input)
{
	size_t limit = input->n_codes < FAULT_INPUT_MAX_CODES ? input->n_codes : FAULT_INPUT_MAX_CODES;
	for (size_t i = 0; i < limit; i++)
		if (input->codes[i] != 0 && !has_code(x, input->codes[i]))
			x->codes[x->n_codes++] = input->codes[i];
	if (x->n_codes == 0 && (input->dcmi_health == 2 || input->dcmi_health == 3)) {
		x->codes[x->n_codes++] = 0;
		x->health_only = true;
	}
}

/* Follows each code: the ones gone are absent from now, the new ones begin
 * (an onset). */
static void follow_codes(struct step *x)
{
	struct fault_state *s = x->state;
	for (size_t i = 0; i < FAULT_STATE_MAX_CODES; i++) {
		struct fault_track *t = &s->tracks[i];
		if (t->used && t->present && !has_code(x, t->code)) {
			t->present = false;
			t->since_ms = x->now;
		}
	}
	for (size_t i = 0; i < x->n_codes; i++) {
		struct fault_track *t = track_find(s, x->codes[i]);
		if (!t)
			t = track_add(s, x->codes[i], x->now);
		if (!t) {
			x->out->n_untracked++;
			continue;
		}
		if (t->present)
			continue;
		t->present = true;
		t->counted = false;
		t->since_ms = x->now;
		x->out->onsets[x->out->n_onsets++] = t->code;
		if (!named_by_duration(x->config, t->code))
			count_occurrence(x, t);
	}
}

/* Escalations whose code stayed away long enough end; so does a separation
 * past its release window. */
static void end_escalations(struct step *x)
{
	struct fault_state *s = x->state;
	for (size_t i = 0; i < FAULT_STATE_MAX_ESCALATIONS; i++) {
		struct fault_escalation *e = &s->escalations[i];
		if (!e->used)
			continue;
		if (has_code(x, e->code)) {
			e->absent_since_ms = -1;
			continue;
		}
		if (e->absent_since_ms < 0)
			e->absent_since_ms = x->now;
		if (x->now - e->absent_since_ms >= e->hold_ms) {
			decide(x, FAULT_DECISION_ESCALATION_ENDED, e->code, FAULT_LEVEL_NONE, e->rule);
			e->used = false;
			x->at_once = true;
		}
	}

	struct fault_separation *sep = &s->separation;
	if (!sep->active)
		return;
	if (has_code(x, sep->code)) {
		sep->absent_since_ms = -1;
		return;
	}
	if (sep->absent_since_ms < 0)
		sep->absent_since_ms = x->now;
	int64_t release = sep->release_ms ? sep->release_ms : x->config->release_window_ms;
	if (release > 0 && x->now - sep->absent_since_ms >= release) {
		decide(x, FAULT_DECISION_RELEASED, sep->code, FAULT_LEVEL_NONE, FAULT_RULE_RELEASE_WINDOW);
		sep->active = false;
		x->at_once = true;
	}
}

/* Escalates to level for code by rule: separates the chip for
 * ManuallySeparateNPU, else records an escalation unless one for the same
 * code, rule and level is in force. */
static void escalate(struct step *x, uint32_t code, enum fault_rule rule, enum fault_level level, int64_t hold_ms)
{
	struct fault_state *s = x->state;
	if (level == FAULT_LEVEL_MANUALLY_SEPARATE_NPU) {
		if (s->separation.active)
			return;
		separate(s, code, rule, hold_ms, x->now);
		decide(x, FAULT_DECISION_SEPARATED, code, level, rule);
		return;
	}
	if (!escalation_find(s, code, rule, level) && escalation_add(s, code, level, rule, hold_ms, x->now))
		decide(x, FAULT_DECISION_ESCALATED, code, level, rule);
}

/* Frequency windows, judged at each occurrence counted in this step. */
static void judge_frequency(struct step *x)
{
	const struct fault_policy_config *c = x->config;
	for (size_t i = 0; i < x->n_counted; i++) {
		struct fault_track *t = track_find(x->state, x->counted[i]);
		for (size_t r = 0; t && r < c->n_frequency; r++) {
			const struct fault_window *w = &c->frequency[r];
			if (!window_matches(c, w, t->code) || onsets_counted(t, x->now, w->window_ms, w->level) < w->count)
				continue;
			t->fired_ms[w->level] = x->now;
			/* A separation's hold is its release window, 0 meaning the
			 * configured one; another escalation holds for the window by
			 * default. */
			int64_t hold = (w->hold_ms || w->level == FAULT_LEVEL_MANUALLY_SEPARATE_NPU) ? w->hold_ms : w->window_ms;
			escalate(x, t->code, FAULT_RULE_FREQUENCY, w->level, hold);
		}
	}
}

/* Duration windows, judged at every step for the codes present; a code a
 * window names counts for the frequency windows once it outlasts it. */
static void judge_duration(struct step *x)
{
	const struct fault_policy_config *c = x->config;
	for (size_t i = 0; i < FAULT_STATE_MAX_CODES; i++) {
		struct fault_track *t = &x->state->tracks[i];
		if (!t->used || !t->present)
			continue;
		for (size_t r = 0; r < c->n_duration; r++) {
			const struct fault_window *w = &c->duration[r];
			if (!window_matches(c, w, t->code) || x->now - t->since_ms <= w->window_ms)
				continue;
			escalate(x, t->code, FAULT_RULE_DURATION, w->level,
				 w->level == FAULT_LEVEL_MANUALLY_SEPARATE_NPU ? 0 : w->hold_ms);
			if (!w->all_codes && !t->counted)
				count_occurrence(x, t);
		}
	}
}

/* A code whose own level is ManuallySeparateNPU separates the chip. */
static void judge_table_separation(struct step *x)
{
	for (size_t i = 0; i < x->n_codes && !x->state->separation.active; i++) {
		enum fault_rule rule;
		if (step_code_level(x, x->codes[i], &rule) == FAULT_LEVEL_MANUALLY_SEPARATE_NPU) {
			separate(x->state, x->codes[i], rule, 0, x->now);
			decide(x, FAULT_DECISION_SEPARATED, x->codes[i], FAULT_LEVEL_MANUALLY_SEPARATE_NPU, rule);
		}
	}
}

struct verdict {
	enum fault_level level;
	uint32_t code;
	enum fault_rule rule;
};

static void consider(struct verdict *v, enum fault_level level, uint32_t code, enum fault_rule rule)
{
	if (level > v->level)
		*v = (struct verdict){ .level = level, .code = code, .rule = rule };
}

/* The most severe of the separation, the escalations and the codes; the
 * first of equals, in that order. */
static struct verdict judge_level(const struct step *x)
{
	const struct fault_state *s = x->state;
	struct verdict v = { .level = FAULT_LEVEL_NONE, .code = 0, .rule = FAULT_RULE_NONE };
	if (s->separation.active)
		consider(&v, FAULT_LEVEL_MANUALLY_SEPARATE_NPU, s->separation.code, s->separation.rule);
	for (size_t i = 0; i < FAULT_STATE_MAX_ESCALATIONS; i++)
		if (s->escalations[i].used)
			consider(&v, s->escalations[i].level, s->escalations[i].code, s->escalations[i].rule);
	for (size_t i = 0; i < x->n_codes; i++) {
		enum fault_rule rule;
		enum fault_level level = step_code_level(x, x->codes[i], &rule);
		consider(&v, level, x->codes[i], rule);
	}
	return v;
}

static bool decided(const struct step *x, uint32_t code, enum fault_level level)
{
	for (size_t i = 0; i < x->out->n_decisions; i++) {
		const struct fault_decision *d = &x->out->decisions[i];
		if (d->code == code && d->level == level &&
		    (d->kind == FAULT_DECISION_ESCALATED || d->kind == FAULT_DECISION_SEPARATED))
			return true;
	}
	return false;
}

/* The level rises at once and falls after the recovery hold (or at once,
 * after a release or an escalation's end). */
static void settle(struct step *x, const struct verdict *v)
{
	struct fault_state *s = x->state;
	if (v->level >= s->level) {
		if (v->level > s->level && !decided(x, v->code, v->level))
			decide(x, FAULT_DECISION_LEVEL, v->code, v->level, v->rule);
		s->level = v->level;
		s->code = v->code;
		s->rule = v->rule;
		s->lower_since_ms = -1;
		return;
	}
	if (s->lower_since_ms < 0)
		s->lower_since_ms = x->now;
	int64_t hold = x->config->recovery_hold_ms;
	if (!x->at_once && hold > 0 && x->now - s->lower_since_ms < hold)
		return;
	if (!x->at_once)
		decide(x, FAULT_DECISION_LEVEL, s->code, v->level, hold > 0 ? FAULT_RULE_RECOVERY_HOLD : FAULT_RULE_RECOVERY);
	s->level = v->level;
	s->code = v->code;
	s->rule = v->rule;
	s->lower_since_ms = -1;
}

int fault_policy_step(const struct fault_policy_config *config, struct fault_state *state,
		      const struct fault_input *input, int64_t now_ms, struct fault_step *ret_step)
{
	if (!config || !state || !input || !ret_step || (input->n_codes && !input->codes))
		return -EINVAL;
	struct fault_step out;
	memset(&out, 0, sizeof(out));
	if (state->started && now_ms < state->last_ms)
		now_ms = state->last_ms;
	state->started = true;
	state->last_ms = now_ms;
	struct step x = { .config = config, .state = state, .now = now_ms, .out = &out };
	enum fault_level before = state->level;

	gather_codes(&x, input);
	follow_codes(&x);
	if (state->released) {
		decide(&x, FAULT_DECISION_RELEASED, state->released_code, FAULT_LEVEL_NONE, FAULT_RULE_RELEASE);
		state->released = false;
		x.at_once = true;
	}
	end_escalations(&x);
	judge_duration(&x);
	judge_frequency(&x);
	judge_table_separation(&x);
	struct verdict v = judge_level(&x);
	settle(&x, &v);

	/* What ended or was released tells the chip's level after it. */
	for (size_t i = 0; i < out.n_decisions; i++) {
		struct fault_decision *d = &out.decisions[i];
		if (d->kind == FAULT_DECISION_ESCALATION_ENDED || d->kind == FAULT_DECISION_RELEASED)
			d->level = state->level;
		d->hint = decision_hint(d);
	}
	out.level = state->level;
	out.code = state->code;
	out.rule = state->rule;
	out.healthy = !fault_level_unhealthy(state->level);
	out.pods_may_finish = state->level == FAULT_LEVEL_PRE_SEPARATE_NPU;
	out.separated = state->separation.active;
	out.holding = state->lower_since_ms >= 0;
	out.changed = state->level != before;
	*ret_step = out;
	return 0;
}

int fault_policy_release(struct fault_state *state, int64_t now_ms)
{
	if (!state)
		return -EINVAL;
	uint32_t code = 0;
	bool any = state->separation.active;
	if (any)
		code = state->separation.code;
	for (size_t i = 0; i < FAULT_STATE_MAX_ESCALATIONS; i++)
		if (state->escalations[i].used && !any) {
			any = true;
			code = state->escalations[i].code;
		}
	if (!any)
		return -ENOENT;
	state->released = true;
	state->released_code = code;
	memset(&state->separation, 0, sizeof(state->separation));
	memset(state->escalations, 0, sizeof(state->escalations));
	/* The operator vouches for the chip: windows count afresh from now. */
	for (size_t i = 0; i < FAULT_STATE_MAX_CODES; i++) {
		struct fault_track *t = &state->tracks[i];
		track_forget_onsets(t);
		t->counted = false;
		if (t->present)
			t->since_ms = now_ms;
	}
	return 0;
}

int fault_policy_separate(struct fault_state *state, uint32_t code, int64_t now_ms)
{
	if (!state)
		return -EINVAL;
	if (state->separation.active)
		return -EALREADY;
	separate(state, code, FAULT_RULE_MANUAL_SEPARATION, 0, now_ms);
	return 0;
}
