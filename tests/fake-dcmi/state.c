/* SPDX-License-Identifier: Apache-2.0 */
/* The DCMI simulator's state file parser (see state.h for the contract and
 * docs/fake-dcmi.md for the format). One directive per line; `chip` lines are
 * key=value lists driven by the chip_keys table, so a new key is one parser
 * function and one table row. */
#include "state.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "base/parse.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* A broken generator can produce thousands of bad lines; past this many
 * diagnostics the parser says so once and stays quiet, so stderr stays usable. */
#define FAKE_STATE_MAX_DIAGS 100

/* Marks ids not given on a chip line; real ids are at most FAKE_STATE_MAX_ID. */
#define ID_UNSET UINT32_MAX

struct parser {
	struct fake_state *state;
	fake_state_diag_fn diag;
	void *userdata;
	unsigned line;
	unsigned diag_count;
	unsigned card_count; /* distinct cards among the accepted chips */
	/* Line of each accepted chip, so duplicates can point at the first one. */
	unsigned chip_line[FAKE_STATE_MAX_CHIPS];
};

static void report(struct parser *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void report(struct parser *p, const char *fmt, ...)
{
	if (!p->diag || p->diag_count > FAKE_STATE_MAX_DIAGS)
		return;
	p->diag_count++;
	if (p->diag_count > FAKE_STATE_MAX_DIAGS) {
		p->diag(p->userdata, p->line, "too many problems, not reporting more");
		return;
	}
	char message[256];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(message, sizeof(message), fmt, ap);
	va_end(ap);
	p->diag(p->userdata, p->line, message);
}

bool fake_health_is_healthy(uint32_t health)
{
	return health == 0 || health == 1;
}

void fake_state_init(struct fake_state *state)
{
	memset(state, 0, sizeof(*state));
	memcpy(state->driver, "unknown", sizeof("unknown"));
	state->subscribe = true;
}

/* ---- chip keys ---- */

static int parse_id(const char *value, uint32_t *ret)
{
	return parse_u32(value, 10, FAKE_STATE_MAX_ID, ret);
}

static int key_phy(struct fake_chip *chip, const char *value)
{
	return parse_id(value, &chip->phy);
}

static int key_card(struct fake_chip *chip, const char *value)
{
	return parse_id(value, &chip->card);
}

static int key_device(struct fake_chip *chip, const char *value)
{
	return parse_u32(value, 10, FAKE_STATE_MAX_DEVICE, &chip->device);
}

static int key_logic(struct fake_chip *chip, const char *value)
{
	return parse_id(value, &chip->logic);
}

static int key_name(struct fake_chip *chip, const char *value)
{
	/* Tokens never hold blanks or control characters, only the length is left to check. */
	if (value[0] == '\0')
		return -EINVAL;
	return str_copy(chip->name, sizeof(chip->name), value);
}

static int key_health(struct fake_chip *chip, const char *value)
{
	if (strcmp(value, "absent") == 0) {
		chip->health = FAKE_HEALTH_ABSENT;
		return 0;
	}
	return parse_u32(value, 10, 3, &chip->health);
}

static int key_errors(struct fake_chip *chip, const char *value)
{
	uint32_t codes[FAKE_STATE_MAX_ERRORS];
	uint32_t count = 0;
	const char *item = value;

	for (;;) {
		size_t n = strcspn(item, ",");
		/* "0x" plus 8 digits fits easily; longer items can only be bogus. */
		char hex[24];
		if (n == 0 || n >= sizeof(hex) || count == FAKE_STATE_MAX_ERRORS)
			return -EINVAL;
		memcpy(hex, item, n);
		hex[n] = '\0';
		int r = parse_u32(hex, 16, UINT32_MAX, &codes[count]);
		if (r < 0)
			return r;
		count++;
		if (item[n] == '\0')
			break;
		item += n + 1;
	}
	memcpy(chip->errors, codes, count * sizeof(codes[0]));
	chip->error_count = count;
	return 0;
}

/* A DCMI return code: 0 or a negative number down to -9999 (-8012 "not ready"
 * is what a card that dropped off the bus answers). */
static int key_health_rc(struct fake_chip *chip, const char *value)
{
	uint32_t magnitude;
	if (strcmp(value, "0") == 0) {
		chip->health_rc = 0;
		return 0;
	}
	if (value[0] != '-')
		return -EINVAL;
	int r = parse_u32(value + 1, 10, 9999, &magnitude);
	if (r < 0 || magnitude == 0)
		return r < 0 ? r : -EINVAL;
	chip->health_rc = -(int32_t)magnitude;
	return 0;
}

static int key_aicore(struct fake_chip *chip, const char *value)
{
	return parse_u32(value, 10, 65535, &chip->aicore);
}

static int key_hbm_mb(struct fake_chip *chip, const char *value)
{
	return parse_u64(value, 10, UINT32_MAX, &chip->hbm_mb);
}

/* Degrees Celsius, -100 to 200. */
static int key_temp(struct fake_chip *chip, const char *value)
{
	bool negative = value[0] == '-';
	uint32_t v;
	int r = parse_u32(value + negative, 10, negative ? 100 : 200, &v);
	if (r < 0)
		return r;
	chip->temp = negative ? -(int32_t)v : (int32_t)v;
	chip->has_temp = true;
	return 0;
}

/* Watts with at most one decimal ("92.5"), up to 10000. */
static int key_power(struct fake_chip *chip, const char *value)
{
	char whole[8];
	size_t n = strcspn(value, ".");
	uint32_t w, tenth = 0;
	if (n == 0 || n >= sizeof(whole))
		return -EINVAL;
	memcpy(whole, value, n);
	whole[n] = '\0';
	int r = parse_u32(whole, 10, 10000, &w);
	if (r < 0)
		return r;
	if (value[n] == '.') {
		const char *frac = value + n + 1;
		if (frac[0] < '0' || frac[0] > '9' || frac[1] != '\0')
			return -EINVAL;
		tenth = (uint32_t)(frac[0] - '0');
	}
	chip->power_tenths = w * 10 + tenth;
	chip->has_power = true;
	return 0;
}

static int key_util(struct fake_chip *chip, const char *value)
{
	int r = parse_u32(value, 10, 100, &chip->util);
	if (r == 0)
		chip->has_util = true;
	return r;
}

static int key_hbm_used_mb(struct fake_chip *chip, const char *value)
{
	int r = parse_u64(value, 10, UINT32_MAX, &chip->hbm_used_mb);
	if (r == 0)
		chip->has_hbm_used = true;
	return r;
}

/* Each call's DCMI name and the short name fail= and hang= also take: the
 * name without its "dcmi_get_device_", "dcmi_set_device_", "dcmi_set_" or
 * "dcmi_" prefix. */
static const struct {
	const char *name, *short_name;
} calls[FAKE_CALL_COUNT] = {
	[FAKE_CALL_HEALTH] = { "dcmi_get_device_health", "health" },
	[FAKE_CALL_ERRORCODE] = { "dcmi_get_device_errorcode_v2", "errorcode_v2" },
	[FAKE_CALL_HBM] = { "dcmi_get_device_hbm_info", "hbm_info" },
	[FAKE_CALL_TEMPERATURE] = { "dcmi_get_device_temperature", "temperature" },
	[FAKE_CALL_POWER] = { "dcmi_get_device_power_info", "power_info" },
	[FAKE_CALL_UTILIZATION] = { "dcmi_get_device_utilization_rate", "utilization_rate" },
	[FAKE_CALL_PRE_RESET] = { "dcmi_set_device_pre_reset", "pre_reset" },
	[FAKE_CALL_RESET] = { "dcmi_set_device_reset", "reset" },
	[FAKE_CALL_IP] = { "dcmi_get_device_ip", "ip" },
	[FAKE_CALL_NETWORK_HEALTH] = { "dcmi_get_device_network_health", "network_health" },
	[FAKE_CALL_INFO] = { "dcmi_get_device_info", "info" },
	[FAKE_CALL_CREATE_VDEVICE] = { "dcmi_create_vdevice", "create_vdevice" },
	[FAKE_CALL_DESTROY_VDEVICE] = { "dcmi_set_destroy_vdevice", "destroy_vdevice" },
	[FAKE_CALL_GET_SHARE] = { "dcmi_get_device_share_enable", "get_device_share_enable" },
	[FAKE_CALL_SET_SHARE] = { "dcmi_set_device_share_enable", "set_device_share_enable" },
	[FAKE_CALL_RESOURCE_INFO] = { "dcmi_get_device_resource_info", "resource_info" },
};

const char *fake_call_name(enum fake_call call)
{
	return call < FAKE_CALL_COUNT ? calls[call].name : "?";
}

/* Walks "CALL[:ARG],...": CALL is a DCMI function's name or its short name
 * ("temperature", "reset", "create_vdevice"); item gets the call and ARG
 * (NULL when there is none) and says whether it is valid. */
static int each_call(const char *value, int (*item)(enum fake_call call, const char *arg, void *ctx), void *ctx)
{
	const char *p = value;
	for (;;) {
		size_t n = strcspn(p, ",");
		char buf[64];
		if (n == 0 || n >= sizeof(buf))
			return -EINVAL;
		memcpy(buf, p, n);
		buf[n] = '\0';
		char *colon = strchr(buf, ':');
		if (colon)
			*colon = '\0';
		size_t i = 0;
		while (i < FAKE_CALL_COUNT && strcmp(calls[i].name, buf) != 0 && strcmp(calls[i].short_name, buf) != 0)
			i++;
		if (i == FAKE_CALL_COUNT)
			return -EINVAL;
		int r = item((enum fake_call)i, colon ? colon + 1 : NULL, ctx);
		if (r < 0)
			return r;
		if (p[n] == '\0')
			return 0;
		p += n + 1;
	}
}

/* fail=: each named call fails with CODE (a negative DCMI code, default
 * -8005, an inner error). */
static int fail_item(enum fake_call call, const char *arg, void *ctx)
{
	int32_t *rc = ctx;
	uint32_t magnitude = 8005;
	if (arg && (arg[0] != '-' || parse_u32(arg + 1, 10, 9999, &magnitude) < 0 || magnitude == 0))
		return -EINVAL;
	rc[call] = -(int32_t)magnitude;
	return 0;
}

static int key_fail(struct fake_chip *chip, const char *value)
{
	int32_t rc[FAKE_CALL_COUNT] = { 0 };
	int r = each_call(value, fail_item, rc);
	if (r == 0)
		memcpy(chip->fail_rc, rc, sizeof(rc));
	return r;
}

/* hang= and hang_ms=: each named call blocks for ARG units (1 up to an
 * hour) before it answers. */
struct hang_items {
	uint32_t unit_ms;
	uint32_t ms[FAKE_CALL_COUNT];
};

static int hang_item(enum fake_call call, const char *arg, void *ctx)
{
	struct hang_items *h = ctx;
	uint32_t n;
	if (!arg || parse_u32(arg, 10, FAKE_HANG_MAX_MS / h->unit_ms, &n) < 0 || n == 0)
		return -EINVAL;
	h->ms[call] = n * h->unit_ms;
	return 0;
}

/* The two keys may name different calls of one chip: each sets only the
 * calls it names. */
static int hang_in(struct fake_chip *chip, const char *value, uint32_t unit_ms)
{
	struct hang_items h = { .unit_ms = unit_ms };
	int r = each_call(value, hang_item, &h);
	if (r < 0)
		return r;
	for (size_t i = 0; i < FAKE_CALL_COUNT; i++)
		if (h.ms[i])
			chip->hang_ms[i] = h.ms[i];
	return 0;
}

static int key_hang(struct fake_chip *chip, const char *value)
{
	return hang_in(chip, value, 1000);
}

static int key_hang_ms(struct fake_chip *chip, const char *value)
{
	return hang_in(chip, value, 1);
}

static int key_busy(struct fake_chip *chip, const char *value)
{
	uint32_t v;
	int r = parse_u32(value, 10, 1, &v);
	if (r == 0)
		chip->busy = v == 1;
	return r;
}

static int key_board(struct fake_chip *chip, const char *value)
{
	int r = parse_u32(value, 16, UINT32_MAX, &chip->board);
	if (r < 0)
		return r;
	chip->has_board = true;
	return 0;
}

/* The chip's PCI address as sysfs names it ("0000:3b:00.0"): the plugin
 * finds the chip's NUMA node under /sys/bus/pci/devices/<pci>. */
static int key_pci(struct fake_chip *chip, const char *value)
{
	int r = pci_address_parse(value, &chip->pci);
	if (r < 0)
		return r;
	chip->has_pci = true;
	return 0;
}

/* ip=ADDR/PREFIX: the RoCE port's address, IPv4 or IPv6, and its mask as a
 * prefix length. */
static int key_ip(struct fake_chip *chip, const char *value)
{
	char addr[INET6_ADDRSTRLEN];
	const char *slash = strchr(value, '/');
	size_t n = slash ? (size_t)(slash - value) : 0;
	if (!slash || n == 0 || n >= sizeof(addr))
		return -EINVAL;
	memcpy(addr, value, n);
	addr[n] = '\0';
	uint8_t ip[16] = { 0 };
	bool v6 = strchr(addr, ':') != NULL;
	if (inet_pton(v6 ? AF_INET6 : AF_INET, addr, ip) != 1)
		return -EINVAL;
	uint32_t prefix;
	int r = parse_u32(slash + 1, 10, v6 ? 128 : 32, &prefix);
	if (r < 0)
		return r;
	chip->has_ip = true;
	chip->ipv6 = v6;
	memcpy(chip->ip, ip, sizeof(ip));
	chip->prefix_len = (uint8_t)prefix;
	return 0;
}

/* link=up|down|init|N: what the driver's network detection reports (0 OK,
 * 3 unreachable, 6 not started, or any result code 0-255). */
static int key_link(struct fake_chip *chip, const char *value)
{
	static const struct {
		const char *name;
		uint32_t code;
	} names[] = { { "up", 0 }, { "down", 3 }, { "init", 6 } };
	for (size_t i = 0; i < ARRAY_SIZE(names); i++)
		if (strcmp(value, names[i].name) == 0) {
			chip->has_link = true;
			chip->link = names[i].code;
			return 0;
		}
	int r = parse_u32(value, 10, 255, &chip->link);
	if (r == 0)
		chip->has_link = true;
	return r;
}

static int key_spod(struct fake_chip *chip, uint32_t *field, const char *value)
{
	int r = parse_u32(value, 10, UINT32_MAX, field);
	if (r == 0)
		chip->has_spod = true;
	return r;
}

static int key_super_pod(struct fake_chip *chip, const char *value)
{
	return key_spod(chip, &chip->super_pod_id, value);
}

static int key_sdid(struct fake_chip *chip, const char *value)
{
	return key_spod(chip, &chip->sdid, value);
}

static int key_server_index(struct fake_chip *chip, const char *value)
{
	return key_spod(chip, &chip->server_index, value);
}

/* reset=: how the chip comes back from dcmi_set_device_reset. */
static int key_reset(struct fake_chip *chip, const char *value)
{
	static const char *const names[] = { [FAKE_RESET_CLEAN] = "clean", [FAKE_RESET_FAULTY] = "faulty",
					     [FAKE_RESET_NEVER] = "never" };
	for (size_t i = 0; i < ARRAY_SIZE(names); i++)
		if (strcmp(value, names[i]) == 0) {
			chip->reset = (enum fake_reset_outcome)i;
			return 0;
		}
	return -EINVAL;
}

static int key_reset_ms(struct fake_chip *chip, const char *value)
{
	return parse_u32(value, 10, FAKE_RESET_MAX_MS, &chip->reset_ms);
}

static int key_reset_group(struct fake_chip *chip, const char *value)
{
	int r = parse_id(value, &chip->reset_group);
	if (r == 0)
		chip->has_reset_group = true;
	return r;
}

static int key_brother(struct fake_chip *chip, const char *value)
{
	int r = parse_id(value, &chip->brother);
	if (r == 0)
		chip->has_brother = true;
	return r;
}

/* procs=PID:MB,...: the chip's processes, each a pid (1-4194304, the
 * kernel's limit) and the device memory it uses in megabytes. */
static int key_procs(struct fake_chip *chip, const char *value)
{
	int32_t pids[FAKE_STATE_MAX_PROCS];
	uint64_t mem[FAKE_STATE_MAX_PROCS];
	uint32_t count = 0;
	const char *item = value;
	for (;;) {
		size_t n = strcspn(item, ",");
		char text[48];
		if (n == 0 || n >= sizeof(text) || count == FAKE_STATE_MAX_PROCS)
			return -EINVAL;
		memcpy(text, item, n);
		text[n] = '\0';
		char *colon = strchr(text, ':');
		uint32_t pid;
		if (!colon)
			return -EINVAL;
		*colon = '\0';
		int r = parse_u32(text, 10, 4194304, &pid);
		if (r == 0 && pid == 0)
			r = -EINVAL;
		if (r == 0)
			r = parse_u64(colon + 1, 10, UINT32_MAX, &mem[count]);
		if (r < 0)
			return r;
		pids[count++] = (int32_t)pid;
		if (item[n] == '\0')
			break;
		item += n + 1;
	}
	memcpy(chip->proc_pid, pids, count * sizeof(pids[0]));
	memcpy(chip->proc_mem_mb, mem, count * sizeof(mem[0]));
	chip->proc_count = count;
	return 0;
}

/* Each parser writes only its own field and returns 0 or a negative errno;
 * `expect` completes the diagnostic for a bad value. */
static const struct chip_key {
	const char *name;
	int (*parse)(struct fake_chip *chip, const char *value);
	const char *expect;
} chip_keys[] = {
	{ "phy", key_phy, "a number 0-65535" },
	{ "card", key_card, "a number 0-65535" },
	{ "device", key_device, "a number 0-3" },
	{ "logic", key_logic, "a number 0-65535" },
	{ "name", key_name, "1-31 characters" },
	{ "health", key_health, "0-3 or absent" },
	{ "health_rc", key_health_rc, "0 or a negative DCMI code such as -8012" },
	{ "errors", key_errors, "up to 128 hex codes separated by commas" },
	{ "aicore", key_aicore, "a number 0-65535" },
	{ "hbm_mb", key_hbm_mb, "a number of megabytes" },
	{ "board", key_board, "a hex number such as 0xb0" },
	{ "temp", key_temp, "degrees Celsius, -100 to 200" },
	{ "power", key_power, "watts with at most one decimal, up to 10000" },
	{ "util", key_util, "a percentage 0-100" },
	{ "hbm_used_mb", key_hbm_used_mb, "a number of megabytes" },
	{ "fail", key_fail,
	  "calls separated by commas, each a DCMI name or its short name (health, reset, create_vdevice...), "
	  "optionally :CODE" },
	{ "pci", key_pci, "a PCI address such as 0000:3b:00.0" },
	{ "hang", key_hang, "calls separated by commas, each as for fail= with :SECONDS (1-3600)" },
	{ "hang_ms", key_hang_ms, "calls separated by commas, each as for fail= with :MILLISECONDS (1-3600000)" },
	{ "busy", key_busy, "0 or 1" },
	{ "reset", key_reset, "clean, faulty or never" },
	{ "reset_ms", key_reset_ms, "milliseconds, 0-3600000" },
	{ "ip", key_ip, "an IPv4 or IPv6 address with a prefix length such as 192.168.1.8/24" },
	{ "link", key_link, "up, down, init or a detection result 0-255" },
	{ "super_pod", key_super_pod, "a number" },
	{ "sdid", key_sdid, "a number" },
	{ "server_index", key_server_index, "a number" },
	{ "reset_group", key_reset_group, "a number 0-65535" },
	{ "brother", key_brother, "a card number 0-65535" },
	{ "procs", key_procs, "up to 32 PID:MB pairs separated by commas" },
};

/* Duplicate keys are tracked in a bit mask. */
_Static_assert(ARRAY_SIZE(chip_keys) <= 32, "chip key mask too small");

static const struct chip_key *find_chip_key(const char *name, uint32_t *ret_bit)
{
	for (size_t i = 0; i < ARRAY_SIZE(chip_keys); i++) {
		if (strcmp(chip_keys[i].name, name) == 0) {
			*ret_bit = 1u << i;
			return &chip_keys[i];
		}
	}
	return NULL;
}

/* ---- lines ---- */

/* Splits the next blank-separated token off *cursor (the line is modified in
 * place). Returns NULL at the end of the line. */
static char *next_token(char **cursor)
{
	char *s = *cursor + strspn(*cursor, " \t\r");
	if (*s == '\0') {
		*cursor = s;
		return NULL;
	}
	char *end = s + strcspn(s, " \t\r");
	if (*end != '\0')
		*end++ = '\0';
	*cursor = end;
	return s;
}

/* The next token at *cursor as a key (*ret_key) and its value
 * (*ret_value): 1, or 0 at the end of the line, or -1 (reported) for a
 * token that is no key=value. */
static int next_pair(struct parser *p, char **cursor, char **ret_key, const char **ret_value)
{
	char *token = next_token(cursor);
	if (!token)
		return 0;
	char *eq = strchr(token, '=');
	if (!eq || eq == token) {
		report(p, "expected key=value, got '%.64s', line ignored", token);
		return -1;
	}
	*eq = '\0';
	*ret_key = token;
	*ret_value = eq + 1;
	return 1;
}

static void add_chip(struct parser *p, const struct fake_chip *chip)
{
	struct fake_state *s = p->state;

	if (s->chip_count == FAKE_STATE_MAX_CHIPS) {
		report(p, "more than %d chips, line ignored", FAKE_STATE_MAX_CHIPS);
		return;
	}
	bool known_card = false;
	for (size_t i = 0; i < s->chip_count; i++) {
		const struct fake_chip *c = &s->chips[i];
		known_card |= c->card == chip->card;
		if (c->phy == chip->phy) {
			report(p, "phy %u already defined on line %u, line ignored", chip->phy, p->chip_line[i]);
			return;
		}
		if (c->card == chip->card && c->device == chip->device) {
			report(p, "card %u device %u already defined on line %u, line ignored", chip->card,
			       chip->device, p->chip_line[i]);
			return;
		}
		if (c->logic == chip->logic) {
			report(p, "logic %u already defined on line %u, line ignored", chip->logic,
			       p->chip_line[i]);
			return;
		}
		if (c->has_pci && chip->has_pci && pci_address_equal(&c->pci, &chip->pci)) {
			char name[PCI_ADDRESS_SIZE];
			(void)pci_address_format(&chip->pci, name, sizeof(name));
			report(p, "pci %s already defined on line %u, line ignored", name, p->chip_line[i]);
			return;
		}
	}
	if (!known_card && p->card_count == FAKE_STATE_MAX_CARDS) {
		report(p, "more than %d cards, line ignored", FAKE_STATE_MAX_CARDS);
		return;
	}
	p->card_count += known_card ? 0 : 1;
	p->chip_line[s->chip_count] = p->line;
	s->chips[s->chip_count++] = *chip;
}

static void parse_chip(struct parser *p, char *cursor)
{
	struct fake_chip chip;
	memset(&chip, 0, sizeof(chip));
	chip.phy = chip.card = chip.logic = ID_UNSET;
	memcpy(chip.name, "910B3", sizeof("910B3"));
	chip.reset_ms = FAKE_RESET_DEFAULT_MS;

	uint32_t seen = 0;
	char *token;
	const char *value;
	int more;
	while ((more = next_pair(p, &cursor, &token, &value)) > 0) {
		uint32_t bit;
		const struct chip_key *key = find_chip_key(token, &bit);
		if (!key) {
			/* Only the key is dropped: state files written for a newer
			 * simulator keep working, minus the new detail. */
			report(p, "unknown key '%.64s' ignored", token);
			continue;
		}
		if (seen & bit) {
			report(p, "duplicate key '%s', line ignored", key->name);
			return;
		}
		if (key->parse(&chip, value) < 0) {
			report(p, "bad value '%.64s' for '%s' (expected %s), line ignored", value, key->name,
			       key->expect);
			return;
		}
		seen |= bit;
	}
	if (more < 0)
		return;
	if (chip.phy == ID_UNSET) {
		report(p, "chip without phy=, line ignored");
		return;
	}
	if (chip.card == ID_UNSET)
		chip.card = chip.phy;
	if (chip.logic == ID_UNSET)
		chip.logic = chip.phy;
	add_chip(p, &chip);
}

/* For directives that take exactly one value; NULL after reporting otherwise. */
static const char *single_value(struct parser *p, const char *directive, char *cursor)
{
	const char *value = next_token(&cursor);
	if (!value || next_token(&cursor)) {
		report(p, "'%s' takes exactly one value, line ignored", directive);
		return NULL;
	}
	return value;
}

static void parse_driver(struct parser *p, char *cursor)
{
	const char *value = single_value(p, "driver", cursor);
	if (!value)
		return;
	if (str_copy(p->state->driver, sizeof(p->state->driver), value) < 0)
		report(p, "driver version longer than %d bytes, line ignored", FAKE_STATE_DRIVER_SIZE - 1);
}

static void parse_subscribe(struct parser *p, char *cursor)
{
	const char *value = single_value(p, "subscribe", cursor);
	if (!value)
		return;
	if (strcmp(value, "on") == 0)
		p->state->subscribe = true;
	else if (strcmp(value, "off") == 0)
		p->state->subscribe = false;
	else
		report(p, "bad value '%.64s' for 'subscribe' (expected on or off), line ignored", value);
}

/* "vnpu id=<n> phy=<p> template=<t>": every key required. The chip must be
 * defined on an earlier line, and the id in its range [phy*16+100,
 * phy*16+115], as the driver numbers vNPUs. */
static void parse_vnpu(struct parser *p, char *cursor)
{
	struct fake_state *s = p->state;
	struct fake_vnpu v = { .id = ID_UNSET, .phy = ID_UNSET };
	char *token;
	const char *value;
	int more;

	while ((more = next_pair(p, &cursor, &token, &value)) > 0) {
		int r;
		if (strcmp(token, "id") == 0)
			r = v.id != ID_UNSET ? -EEXIST : parse_u32(value, 10, FAKE_STATE_MAX_ID, &v.id);
		else if (strcmp(token, "phy") == 0)
			r = v.phy != ID_UNSET ? -EEXIST : parse_u32(value, 10, FAKE_STATE_MAX_ID, &v.phy);
		else if (strcmp(token, "template") == 0)
			r = v.template_name[0] ? -EEXIST
			    : !value[0]       ? -EINVAL
					      : str_copy(v.template_name, sizeof(v.template_name), value);
		else {
			report(p, "unknown key '%.64s' in a vnpu line, line ignored", token);
			return;
		}
		if (r == -EEXIST) {
			report(p, "duplicate key '%s', line ignored", token);
			return;
		}
		if (r < 0) {
			report(p, "bad value '%.64s' for '%s', line ignored", value, token);
			return;
		}
	}
	if (more < 0)
		return;
	if (v.id == ID_UNSET || v.phy == ID_UNSET || !v.template_name[0]) {
		report(p, "a vnpu line needs id=, phy= and template=, line ignored");
		return;
	}
	bool chip_known = false;
	for (size_t i = 0; i < s->chip_count; i++)
		chip_known |= s->chips[i].phy == v.phy;
	if (!chip_known) {
		report(p, "vnpu %u: no chip phy=%u on an earlier line, line ignored", v.id, v.phy);
		return;
	}
	uint32_t first = v.phy * FAKE_STATE_VNPUS_PER_CHIP + 100;
	if (v.id < first || v.id >= first + FAKE_STATE_VNPUS_PER_CHIP) {
		report(p, "vnpu %u: ids of chip %u are %u-%u, line ignored", v.id, v.phy, first,
		       first + FAKE_STATE_VNPUS_PER_CHIP - 1);
		return;
	}
	for (size_t i = 0; i < s->vnpu_count; i++) {
		if (s->vnpus[i].id == v.id) {
			report(p, "vnpu %u already defined, line ignored", v.id);
			return;
		}
	}
	if (s->vnpu_count == FAKE_STATE_MAX_VNPUS) {
		report(p, "more than %d vnpus, line ignored", FAKE_STATE_MAX_VNPUS);
		return;
	}
	v.line = p->line;
	s->vnpus[s->vnpu_count++] = v;
}

/* "share phy=<p> mode=on|off": the device-share mode of a chip defined on
 * an earlier line, at most one line per chip. Real chips ship with it off;
 * here it is on without a line, so that a state file written before the
 * mode existed still shares its chips (docs/fake-dcmi.md). */
static void parse_share(struct parser *p, char *cursor)
{
	uint32_t phy = ID_UNSET;
	int off = -1;
	char *token;
	const char *value;
	int more;

	while ((more = next_pair(p, &cursor, &token, &value)) > 0) {
		int r = 0;
		if (strcmp(token, "phy") == 0)
			r = phy != ID_UNSET ? -EEXIST : parse_u32(value, 10, FAKE_STATE_MAX_ID, &phy);
		else if (strcmp(token, "mode") == 0 && off >= 0)
			r = -EEXIST;
		else if (strcmp(token, "mode") == 0 && (strcmp(value, "off") == 0 || strcmp(value, "on") == 0))
			off = strcmp(value, "off") == 0;
		else if (strcmp(token, "mode") == 0)
			r = -EINVAL;
		else {
			report(p, "unknown key '%.64s' in a share line, line ignored", token);
			return;
		}
		if (r == -EEXIST) {
			report(p, "duplicate key '%s', line ignored", token);
			return;
		}
		if (r < 0) {
			report(p, "bad value '%.64s' for '%s', line ignored", value, token);
			return;
		}
	}
	if (more < 0)
		return;
	if (phy == ID_UNSET || off < 0) {
		report(p, "a share line needs phy= and mode= (on or off), line ignored");
		return;
	}
	struct fake_chip *chip = NULL;
	for (size_t i = 0; i < p->state->chip_count && !chip; i++)
		if (p->state->chips[i].phy == phy)
			chip = &p->state->chips[i];
	if (!chip) {
		report(p, "share: no chip phy=%u on an earlier line, line ignored", phy);
		return;
	}
	if (chip->share_line) {
		report(p, "share: chip %u has a share line already (line %u), line ignored", phy, chip->share_line);
		return;
	}
	chip->share_off = off == 1;
	chip->share_line = p->line;
}

static const struct directive {
	const char *name;
	void (*parse)(struct parser *p, char *cursor);
} directives[] = {
	{ "driver", parse_driver },
	{ "subscribe", parse_subscribe },
	{ "chip", parse_chip },
	{ "vnpu", parse_vnpu },
	{ "share", parse_share },
};

/* Rejects control characters (NUL included) so that tokens and the
 * diagnostics quoting them stay printable. Tabs and CRs count as blanks. */
static bool has_control_chars(const char *line, size_t len)
{
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)line[i];
		if ((c < 0x20 && c != '\t' && c != '\r') || c == 0x7f)
			return true;
	}
	return false;
}

static void parse_line(struct parser *p, char *line)
{
	char *hash = strchr(line, '#');
	if (hash)
		*hash = '\0';

	char *cursor = line;
	const char *name = next_token(&cursor);
	if (!name)
		return;
	for (size_t i = 0; i < ARRAY_SIZE(directives); i++) {
		if (strcmp(directives[i].name, name) == 0) {
			directives[i].parse(p, cursor);
			return;
		}
	}
	report(p, "unknown directive '%.64s', line ignored", name);
}

int fake_state_parse(struct fake_state *state, const char *buf, size_t len, fake_state_diag_fn diag,
		     void *userdata)
{
	struct parser p = { .state = state, .diag = diag, .userdata = userdata };

	fake_state_init(state);
	if (len > FAKE_STATE_MAX_FILE) {
		report(&p, "file larger than %u bytes, ignored", FAKE_STATE_MAX_FILE);
		return -EFBIG;
	}

	char line[FAKE_STATE_MAX_LINE + 1];
	size_t pos = 0;
	while (pos < len) {
		const char *start = buf + pos;
		const char *nl = memchr(start, '\n', len - pos);
		size_t n = nl ? (size_t)(nl - start) : len - pos;
		pos += n + (nl ? 1 : 0);
		p.line++;

		if (n > FAKE_STATE_MAX_LINE) {
			report(&p, "line longer than %d bytes, ignored", FAKE_STATE_MAX_LINE);
			continue;
		}
		if (has_control_chars(start, n)) {
			report(&p, "control character in line, ignored");
			continue;
		}
		memcpy(line, start, n);
		line[n] = '\0';
		parse_line(&p, line);
	}
	return 0;
}

/* ---- lookups ---- */

const struct fake_chip *fake_state_find_device(const struct fake_state *state, uint32_t card, uint32_t device)
{
	for (size_t i = 0; i < state->chip_count; i++)
		if (state->chips[i].card == card && state->chips[i].device == device)
			return &state->chips[i];
	return NULL;
}

const struct fake_chip *fake_state_find_logic(const struct fake_state *state, uint32_t logic)
{
	for (size_t i = 0; i < state->chip_count; i++)
		if (state->chips[i].logic == logic)
			return &state->chips[i];
	return NULL;
}

const struct fake_chip *fake_state_find_phy(const struct fake_state *state, uint32_t phy)
{
	for (size_t i = 0; i < state->chip_count; i++)
		if (state->chips[i].phy == phy)
			return &state->chips[i];
	return NULL;
}

size_t fake_state_card_list(const struct fake_state *state, uint32_t *cards, size_t max)
{
	/* Insertion into a sorted, duplicate-free scratch list: at most 256 x 64 steps. */
	uint32_t sorted[FAKE_STATE_MAX_CARDS];
	size_t n = 0;

	for (size_t i = 0; i < state->chip_count; i++) {
		uint32_t card = state->chips[i].card;
		size_t at = 0;
		while (at < n && sorted[at] < card)
			at++;
		if (at < n && sorted[at] == card)
			continue;
		if (n == FAKE_STATE_MAX_CARDS)
			break; /* the parser never lets this happen */
		memmove(&sorted[at + 1], &sorted[at], (n - at) * sizeof(sorted[0]));
		sorted[at] = card;
		n++;
	}
	if (n > 0 && max > 0)
		memcpy(cards, sorted, (n < max ? n : max) * sizeof(sorted[0]));
	return n;
}

uint32_t fake_state_devices_in_card(const struct fake_state *state, uint32_t card)
{
	uint32_t n = 0;
	for (size_t i = 0; i < state->chip_count; i++)
		if (state->chips[i].card == card)
			n++;
	return n;
}

int fake_state_line_span(const char *buf, size_t len, unsigned line, size_t *ret_start, size_t *ret_end)
{
	size_t start = 0;
	for (unsigned n = 1; line > 0 && start < len; n++) {
		const char *nl = memchr(buf + start, '\n', len - start);
		size_t end = nl ? (size_t)(nl - buf) + 1 : len;
		if (n == line) {
			*ret_start = start;
			*ret_end = end;
			return 0;
		}
		start = end;
	}
	return -ENOENT;
}
