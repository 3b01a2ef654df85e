/* SPDX-License-Identifier: Apache-2.0 */
/* Unit tests of the DCMI simulator's state-file parser
 * (tests/fake-dcmi/state.c, included whole to keep the simulator out of
 * ascend_core): defaults, every key, bad values, unknown keys and
 * directives, duplicates, every limit, and the lookups the library uses.
 * pci= is the one key that takes a PCI address. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fake-dcmi/state.c"
#include "fake-dcmi/vdev.c"

#define MAX_DIAGS 200

struct diags {
	unsigned count;
	unsigned line[MAX_DIAGS];
	char message[MAX_DIAGS][256];
};

static void record_diag(void *userdata, unsigned line, const char *message)
{
	struct diags *d = userdata;
	if (d->count < MAX_DIAGS) {
		d->line[d->count] = line;
		snprintf(d->message[d->count], sizeof(d->message[0]), "%s", message);
	}
	d->count++;
}

/* The state is large (about 150 KiB): keep it off the stack. */
static struct fake_state state;
static struct diags diags;

static int parse_text(const char *text)
{
	memset(&diags, 0, sizeof(diags));
	return fake_state_parse(&state, text, strlen(text), record_diag, &diags);
}

/* Exactly one diagnostic, on the given line, containing the given text. */
static void assert_one_diag(unsigned line, const char *needle)
{
	if (diags.count != 1 || !strstr(diags.message[0], needle))
		print_error("diagnostics: %u, first: %u: %s (wanted %u: %s)\n", diags.count, diags.line[0],
			    diags.message[0], line, needle);
	assert_int_equal(diags.count, 1);
	assert_int_equal(diags.line[0], line);
	assert_non_null(strstr(diags.message[0], needle));
}

/* text parses with exactly one diagnostic, as assert_one_diag says; a
 * failure names the input. */
static void parse_one_diag(const char *text, unsigned line, const char *needle)
{
	assert_int_equal(parse_text(text), 0);
	if (diags.count != 1 || diags.line[0] != line || !strstr(diags.message[0], needle))
		print_error("input: %s", text);
	assert_one_diag(line, needle);
}

/* The identity and health of a parsed chip. */
static void expect_chip(const struct fake_chip *c, uint32_t phy, uint32_t card, uint32_t device, uint32_t logic,
			const char *name, uint32_t health)
{
	assert_int_equal(c->phy, phy);
	assert_int_equal(c->card, card);
	assert_int_equal(c->device, device);
	assert_int_equal(c->logic, logic);
	assert_string_equal(c->name, name);
	assert_int_equal(c->health, health);
}

static void test_empty_input_is_an_empty_node(void **unused)
{
	(void)unused;
	assert_int_equal(parse_text(""), 0);
	assert_string_equal(state.driver, "unknown");
	assert_true(state.subscribe);
	assert_int_equal(state.chip_count, 0);
	assert_int_equal(diags.count, 0);

	/* A NULL diag callback is allowed. */
	assert_int_equal(fake_state_parse(&state, "chp\n", 4, NULL, NULL), 0);
	assert_int_equal(state.chip_count, 0);
}

static void test_documented_example(void **unused)
{
	(void)unused;
	const char *text = "driver 24.1.rc1                      # what dcmi_get_dcmi_version reports\n"
			   "subscribe on\n"
			   "chip phy=0 card=0 device=0 logic=0 name=910B3 health=0 aicore=20 hbm_mb=65536\n"
			   "chip phy=1 card=1 device=0 logic=1 name=910B3 health=2 errors=80E01801\n"
			   "chip phy=2 card=2 device=0 logic=2 name=910B3 health=absent\n";
	assert_int_equal(parse_text(text), 0);
	assert_int_equal(diags.count, 0);
	assert_string_equal(state.driver, "24.1.rc1");
	assert_true(state.subscribe);
	assert_int_equal(state.chip_count, 3);

	assert_int_equal(state.chips[0].aicore, 20);
	assert_int_equal(state.chips[0].hbm_mb, 65536);
	assert_int_equal(state.chips[0].health, 0);
	assert_int_equal(state.chips[1].health, 2);
	assert_int_equal(state.chips[1].error_count, 1);
	assert_int_equal(state.chips[1].errors[0], 0x80E01801u);
	assert_int_equal(state.chips[2].health, FAKE_HEALTH_ABSENT);
}

static void test_chip_defaults(void **unused)
{
	(void)unused;
	assert_int_equal(parse_text("chip phy=5\n"), 0);
	assert_int_equal(diags.count, 0);
	assert_int_equal(state.chip_count, 1);
	const struct fake_chip *c = &state.chips[0];
	expect_chip(c, 5, 5, 0, 5, "910B3", 0);
	assert_int_equal(c->aicore, 0);
	assert_int_equal(c->hbm_mb, 0);
	assert_false(c->has_board);
	assert_false(c->has_pci);
	assert_int_equal(c->error_count, 0);
	assert_int_equal(c->reset, FAKE_RESET_CLEAN);
	assert_int_equal(c->reset_ms, FAKE_RESET_DEFAULT_MS);
}

static void test_every_key(void **unused)
{
	(void)unused;
	assert_int_equal(parse_text("chip phy=9 card=4 device=3 logic=12 name=310P3 health=3 errors=1,0xA,80e01801 "
				    "aicore=8 hbm_mb=24576 board=0xb0 pci=0000:3B:00.1\n"),
			 0);
	assert_int_equal(diags.count, 0);
	assert_int_equal(state.chip_count, 1);
	const struct fake_chip *c = &state.chips[0];
	expect_chip(c, 9, 4, 3, 12, "310P3", 3);
	assert_int_equal(c->error_count, 3);
	assert_int_equal(c->errors[0], 1);
	assert_int_equal(c->errors[1], 10);
	assert_int_equal(c->errors[2], 0x80E01801u);
	assert_int_equal(c->aicore, 8);
	assert_int_equal(c->hbm_mb, 24576);
	assert_true(c->has_board);
	assert_int_equal(c->board, 0xb0);
	assert_true(c->has_pci);
	assert_true(pci_address_equal(&c->pci, &(struct pci_address){ .bus = 0x3b, .function = 1 }));

	assert_int_equal(c->health_rc, 0);
	assert_int_equal(parse_text("chip phy=1 health_rc=-8012\n"), 0);
	assert_int_equal(state.chips[0].health_rc, -8012);

	assert_int_equal(parse_text("chip phy=1 reset=faulty reset_ms=250 fail=pre_reset,dcmi_set_device_reset:-8015\n"),
			 0);
	assert_int_equal(diags.count, 0);
	assert_int_equal(state.chips[0].reset, FAKE_RESET_FAULTY);
	assert_int_equal(state.chips[0].reset_ms, 250);
	assert_int_equal(state.chips[0].fail_rc[FAKE_CALL_PRE_RESET], -8005);
	assert_int_equal(state.chips[0].fail_rc[FAKE_CALL_RESET], -8015);
	assert_int_equal(parse_text("chip phy=1 reset=never\n"), 0);
	assert_int_equal(state.chips[0].reset, FAKE_RESET_NEVER);

	/* The network identity: the RoCE port, its link, the super pod. */
	assert_int_equal(parse_text("chip phy=2 ip=10.1.2.3/20 link=down super_pod=7 sdid=42 server_index=3 "
				    "fail=ip,network_health:-8012,info\n"),
			 0);
	assert_int_equal(diags.count, 0);
	c = &state.chips[0];
	assert_true(c->has_ip);
	assert_false(c->ipv6);
	assert_memory_equal(c->ip, ((uint8_t[]){ 10, 1, 2, 3 }), 4);
	assert_int_equal(c->prefix_len, 20);
	assert_true(c->has_link);
	assert_int_equal(c->link, 3);
	assert_true(c->has_spod);
	assert_int_equal(c->super_pod_id, 7);
	assert_int_equal(c->sdid, 42);
	assert_int_equal(c->server_index, 3);
	assert_int_equal(c->fail_rc[FAKE_CALL_IP], -8005);
	assert_int_equal(c->fail_rc[FAKE_CALL_NETWORK_HEALTH], -8012);
	assert_int_equal(c->fail_rc[FAKE_CALL_INFO], -8005);
	assert_int_equal(parse_text("chip phy=2 ip=fd00::1:2/128 link=init\nchip phy=3 link=8 sdid=0\n"), 0);
	assert_int_equal(diags.count, 0);
	assert_true(state.chips[0].ipv6);
	assert_int_equal(state.chips[0].ip[13], 1);
	assert_int_equal(state.chips[0].ip[15], 2);
	assert_int_equal(state.chips[0].prefix_len, 128);
	assert_int_equal(state.chips[0].link, 6);
	assert_false(state.chips[0].has_spod);
	assert_int_equal(state.chips[1].link, 8);
	assert_true(state.chips[1].has_spod);
	assert_false(state.chips[1].has_ip);

	/* vNPU carving: a chip used whole, the two calls by short and full
	 * name; hang= in seconds and hang_ms= in milliseconds, each setting
	 * only the calls it names. */
	assert_int_equal(parse_text("chip phy=4 busy=1 fail=create_vdevice:-8020,dcmi_set_destroy_vdevice "
				    "hang=health:2,destroy_vdevice:1 hang_ms=dcmi_create_vdevice:250\n"),
			 0);
	assert_int_equal(diags.count, 0);
	c = &state.chips[0];
	assert_true(c->busy);
	assert_int_equal(c->fail_rc[FAKE_CALL_CREATE_VDEVICE], -8020);
	assert_int_equal(c->fail_rc[FAKE_CALL_DESTROY_VDEVICE], -8005);
	assert_int_equal(c->hang_ms[FAKE_CALL_HEALTH], 2000);
	assert_int_equal(c->hang_ms[FAKE_CALL_DESTROY_VDEVICE], 1000);
	assert_int_equal(c->hang_ms[FAKE_CALL_CREATE_VDEVICE], 250);
	assert_int_equal(c->hang_ms[FAKE_CALL_RESET], 0);
	assert_string_equal(fake_call_name(FAKE_CALL_DESTROY_VDEVICE), "dcmi_set_destroy_vdevice");
	assert_int_equal(parse_text("chip phy=4 busy=0 hang_ms=info:3600000\n"), 0);
	assert_false(state.chips[0].busy);
	assert_int_equal(state.chips[0].hang_ms[FAKE_CALL_INFO], 3600000);

	/* Keys come in any order; board takes hex with or without 0x. */
	assert_int_equal(parse_text("chip board=d1 health=1 phy=3\n"), 0);
	assert_int_equal(state.chips[0].board, 0xd1);
	assert_int_equal(state.chips[0].health, 1);
	assert_int_equal(state.chips[0].card, 3);
}

static void test_health_values(void **unused)
{
	(void)unused;
	static const char *good[] = { "0", "1", "2", "3", "absent" };
	static const uint32_t value[] = { 0, 1, 2, 3, FAKE_HEALTH_ABSENT };
	for (size_t i = 0; i < ARRAY_SIZE(good); i++) {
		char line[64];
		snprintf(line, sizeof(line), "chip phy=0 health=%s\n", good[i]);
		assert_int_equal(parse_text(line), 0);
		assert_int_equal(diags.count, 0);
		assert_int_equal(state.chips[0].health, value[i]);
	}
	assert_true(fake_health_is_healthy(0));
	assert_true(fake_health_is_healthy(1));
	assert_false(fake_health_is_healthy(2));
	assert_false(fake_health_is_healthy(3));
	assert_false(fake_health_is_healthy(FAKE_HEALTH_ABSENT));
}

/* Each bad value drops the whole line with one diagnostic naming the key. */
static void test_bad_values_drop_the_line(void **unused)
{
	(void)unused;
	static const char *bad[] = {
		"phy=abc",	     "phy=65536",  "phy=-1",	    "phy=+1",	   "phy= ",	   "phy=1x",
		"phy=0 card=x",	     "phy=0 card=70000",	    "phy=0 device=4",  "phy=0 device=-0",
		"phy=0 logic=65536", "phy=0 name=",		    "phy=0 name=ABCDEFGHIJKLMNOPQRSTUVWXYZ012345",
		"phy=0 health=4",    "phy=0 health=-1",	    "phy=0 health=abs", "phy=0 health=",
		"phy=0 errors=",     "phy=0 errors=80E0180G",   "phy=0 errors=1,,2", "phy=0 errors=1,",
		"phy=0 errors=,1",   "phy=0 errors=100000000", "phy=0 errors=0000000000000000000000001",
		"phy=0 aicore=65536", "phy=0 aicore=ten",	    "phy=0 hbm_mb=4294967296", "phy=0 hbm_mb=1.5",
		"phy=0 board=zz",    "phy=0 board=0x100000000", "phy=0 board=",	    "phy=0 board=0x",
		"phy=0 health_rc=8012", "phy=0 health_rc=-0",	    "phy=0 health_rc=-10000", "phy=0 health_rc=-",
		"phy=0 pci=",	     "phy=0 pci=3b:00.0",	    "phy=0 pci=0000:3b:00",  "phy=0 pci=0000:3b:20.0",
		"phy=0 pci=0000:3b:00.8", "phy=0 pci=0000:3b:00.0,1", "phy=0 pci=80000000:00:00.0",
		"phy=0 reset=dirty", "phy=0 reset=", "phy=0 reset_ms=3600001", "phy=0 reset_ms=-1",
		"phy=0 ip=10.0.0.1", "phy=0 ip=10.0.0.1/33", "phy=0 ip=10.0.0.256/24", "phy=0 ip=/24",
		"phy=0 ip=fd00::1/129", "phy=0 ip=fd00:::1/64", "phy=0 ip=10.0.0.1/", "phy=0 ip=10.0.0.1/-1",
		"phy=0 link=sideways", "phy=0 link=256", "phy=0 link=", "phy=0 sdid=-1", "phy=0 super_pod=x",
		"phy=0 server_index=4294967296", "phy=0 fail=ipv4",
		"phy=0 busy=2", "phy=0 busy=", "phy=0 hang=create_vdevice", "phy=0 hang=health:3601",
		"phy=0 hang_ms=health:0", "phy=0 hang_ms=health:3600001", "phy=0 hang_ms=vdevice:5",
		"phy=0 fail=device_create_vdevice",
	};
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		char line[128];
		snprintf(line, sizeof(line), "# comment\nchip %s\n", bad[i]);
		assert_int_equal(parse_text(line), 0);
		if (state.chip_count != 0 || diags.count != 1)
			print_error("input: chip %s\n", bad[i]);
		assert_int_equal(state.chip_count, 0);
		/* "phy= " splits into "phy=" and nothing: an empty value. */
		assert_one_diag(2, "line ignored");
	}

	parse_one_diag("chip phy=0 health=7\n", 1, "bad value '7' for 'health' (expected 0-3 or absent), line ignored");
	parse_one_diag("chip phy=0 pci=0:3b:00.0\n", 1,
		       "bad value '0:3b:00.0' for 'pci' (expected a PCI address such as 0000:3b:00.0), line ignored");
	/* A NUMA node is the host's sysfs, not DCMI's: no such key. */
	parse_one_diag("chip phy=0 numa=1\n", 1, "unknown key 'numa' ignored");
	assert_int_equal(state.chip_count, 1);
}

static void test_errors_list(void **unused)
{
	(void)unused;
	/* Exactly 128 codes fit; 129 do not. */
	char line[2048] = "chip phy=0 errors=";
	for (int i = 0; i < FAKE_STATE_MAX_ERRORS; i++) {
		char item[16];
		snprintf(item, sizeof(item), "%s%X", i ? "," : "", 0x80000000u + (unsigned)i);
		strncat(line, item, sizeof(line) - strlen(line) - 1);
	}
	assert_int_equal(parse_text(line), 0);
	assert_int_equal(diags.count, 0);
	assert_int_equal(state.chips[0].error_count, FAKE_STATE_MAX_ERRORS);
	assert_int_equal(state.chips[0].errors[127], 0x8000007Fu);

	strncat(line, ",1", sizeof(line) - strlen(line) - 1);
	assert_int_equal(parse_text(line), 0);
	assert_int_equal(state.chip_count, 0);
	assert_one_diag(1, "'errors'");

	assert_int_equal(parse_text("chip phy=0 errors=0x80E01801,0XFFFFFFFF,0\n"), 0);
	assert_int_equal(state.chips[0].error_count, 3);
	assert_int_equal(state.chips[0].errors[1], 0xFFFFFFFFu);
	assert_int_equal(state.chips[0].errors[2], 0);
}

static void test_unknown_key_is_ignored_with_one_warning(void **unused)
{
	(void)unused;
	parse_one_diag("\nchip phy=1 colour=red health=2\n", 2, "unknown key 'colour' ignored");
	assert_int_equal(state.chip_count, 1);
	assert_int_equal(state.chips[0].health, 2);

	assert_int_equal(parse_text("chip phy=1 a=1 b=2\n"), 0);
	assert_int_equal(diags.count, 2);
	assert_int_equal(state.chip_count, 1);
}

static void test_unknown_directive(void **unused)
{
	(void)unused;
	parse_one_diag("chip phy=0\n\n# c\nchp phy=1\nchip phy=2\n", 4, "unknown directive 'chp', line ignored");
	assert_int_equal(state.chip_count, 2);
	assert_int_equal(state.chips[1].phy, 2);
}

static void test_malformed_chip_lines(void **unused)
{
	(void)unused;
	parse_one_diag("chip phy=0 novalue\n", 1, "expected key=value, got 'novalue', line ignored");
	assert_int_equal(state.chip_count, 0);

	parse_one_diag("chip =5 phy=0\n", 1, "expected key=value");

	parse_one_diag("chip phy=0 phy=1\n", 1, "duplicate key 'phy', line ignored");

	parse_one_diag("chip card=1\n", 1, "chip without phy=, line ignored");

	parse_one_diag("chip\n", 1, "chip without phy=");
	assert_int_equal(state.chip_count, 0);
}

static void test_duplicates_keep_the_first(void **unused)
{
	(void)unused;
	parse_one_diag("chip phy=0 name=first\nchip phy=0 card=9 name=second\n", 2,
		       "phy 0 already defined on line 1, line ignored");
	assert_int_equal(state.chip_count, 1);
	assert_string_equal(state.chips[0].name, "first");

	parse_one_diag("chip phy=0 card=3 device=1\nchip phy=1 card=3 device=1\n", 2,
		       "card 3 device 1 already defined on line 1");
	assert_int_equal(state.chip_count, 1);

	/* Two chips cannot be one PCI device; chips without pci= never clash. */
	parse_one_diag("chip phy=0 pci=0000:3b:00.0\nchip phy=1 pci=0000:3B:00.0\nchip phy=2\nchip phy=3\n", 2,
		       "pci 0000:3b:00.0 already defined on line 1, line ignored");
	assert_int_equal(state.chip_count, 3);

	/* Default logic (= phy 1) clashes with chip 0's explicit logic 1. */
	parse_one_diag("chip phy=0 logic=1\nchip phy=1\n", 2, "logic 1 already defined on line 1");
	assert_int_equal(state.chip_count, 1);
}

static void test_chip_and_card_limits(void **unused)
{
	(void)unused;
	/* 64 cards of 4 devices: the full 256 chips, then one more. */
	static char text[256 * 64];
	size_t len = 0;
	for (int i = 0; i <= FAKE_STATE_MAX_CHIPS; i++)
		len += (size_t)snprintf(text + len, sizeof(text) - len, "chip phy=%d card=%d device=%d\n", i, i / 4,
					i % 4);
	assert_int_equal(parse_text(text), 0);
	assert_int_equal(state.chip_count, FAKE_STATE_MAX_CHIPS);
	assert_one_diag(FAKE_STATE_MAX_CHIPS + 1, "more than 256 chips, line ignored");

	/* The 65th distinct card is refused, a chip on a known card is not. */
	len = 0;
	for (int i = 0; i <= FAKE_STATE_MAX_CARDS; i++)
		len += (size_t)snprintf(text + len, sizeof(text) - len, "chip phy=%d card=%d\n", i, i);
	snprintf(text + len, sizeof(text) - len, "chip phy=100 card=0 device=1\n");
	assert_int_equal(parse_text(text), 0);
	assert_int_equal(state.chip_count, FAKE_STATE_MAX_CARDS + 1);
	assert_one_diag(FAKE_STATE_MAX_CARDS + 1, "more than 64 cards, line ignored");
	uint32_t cards[FAKE_STATE_MAX_CARDS];
	assert_int_equal(fake_state_card_list(&state, cards, ARRAY_SIZE(cards)), FAKE_STATE_MAX_CARDS);
}

static void test_line_length_limit(void **unused)
{
	(void)unused;
	static char text[3 * FAKE_STATE_MAX_LINE];
	/* A 4096-byte line is fine, a 4097-byte one is not; numbering goes on. */
	memset(text, 0, sizeof(text));
	text[0] = '#';
	memset(text + 1, 'x', FAKE_STATE_MAX_LINE - 1);
	size_t len = FAKE_STATE_MAX_LINE;
	text[len++] = '\n';
	memcpy(text + len, "chip", 4);
	memset(text + len + 4, ' ', FAKE_STATE_MAX_LINE - 3);
	len += FAKE_STATE_MAX_LINE + 1;
	text[len++] = '\n';
	memcpy(text + len, "chip phy=3\n", 11);
	assert_int_equal(parse_text(text), 0);
	assert_one_diag(2, "line longer than 4096 bytes, ignored");
	assert_int_equal(state.chip_count, 1);
	assert_int_equal(state.chips[0].phy, 3);
}

static void test_file_size_limit(void **unused)
{
	(void)unused;
	char *big = malloc(FAKE_STATE_MAX_FILE + 1);
	assert_non_null(big);
	/* Exactly the limit: parsed (all comment lines but the first). */
	memset(big, '\n', FAKE_STATE_MAX_FILE + 1);
	memcpy(big, "chip phy=1\n", 11);
	memset(&diags, 0, sizeof(diags));
	assert_int_equal(fake_state_parse(&state, big, FAKE_STATE_MAX_FILE, record_diag, &diags), 0);
	assert_int_equal(state.chip_count, 1);
	assert_int_equal(diags.count, 0);

	/* One byte more: refused as a whole, state left empty. */
	memset(&diags, 0, sizeof(diags));
	assert_int_equal(fake_state_parse(&state, big, FAKE_STATE_MAX_FILE + 1, record_diag, &diags), -EFBIG);
	assert_int_equal(state.chip_count, 0);
	assert_one_diag(0, "file larger than 1048576 bytes, ignored");
	free(big);
}

static void test_blanks_comments_and_control_characters(void **unused)
{
	(void)unused;
	static const char text[] = "   \n"
				   "\t# indented comment\n"
				   "chip\tphy=1 \t health=2   # trailing comment\r\n"
				   "driver 1.0#glued comment\n"
				   "chip phy=2\0 name=x\n"
				   "chip phy=3 name=a\x01"
				   "b\n"
				   "chip phy=4"; /* no final newline */
	memset(&diags, 0, sizeof(diags));
	assert_int_equal(fake_state_parse(&state, text, sizeof(text) - 1, record_diag, &diags), 0);
	assert_int_equal(state.chip_count, 2);
	assert_int_equal(state.chips[0].phy, 1);
	assert_int_equal(state.chips[0].health, 2);
	assert_int_equal(state.chips[1].phy, 4);
	assert_string_equal(state.driver, "1.0");
	assert_int_equal(diags.count, 2);
	assert_int_equal(diags.line[0], 5);
	assert_string_equal(diags.message[0], "control character in line, ignored");
	assert_int_equal(diags.line[1], 6);
}

static void test_driver_and_subscribe(void **unused)
{
	(void)unused;
	assert_int_equal(parse_text("subscribe off\ndriver 23.0.3\ndriver 24.1.rc1\n"), 0);
	assert_int_equal(diags.count, 0);
	assert_false(state.subscribe);
	assert_string_equal(state.driver, "24.1.rc1"); /* the last one wins */

	assert_int_equal(parse_text("subscribe off\nsubscribe on\n"), 0);
	assert_true(state.subscribe);

	parse_one_diag("subscribe maybe\n", 1, "bad value 'maybe' for 'subscribe' (expected on or off)");
	assert_true(state.subscribe);

	parse_one_diag("subscribe\n", 1, "'subscribe' takes exactly one value");

	parse_one_diag("driver 24.1 rc1\n", 1, "'driver' takes exactly one value, line ignored");
	assert_string_equal(state.driver, "unknown");

	char line[128];
	snprintf(line, sizeof(line), "driver %063d\n", 7);
	assert_int_equal(parse_text(line), 0);
	assert_int_equal(diags.count, 0);
	assert_int_equal(strlen(state.driver), 63);
	snprintf(line, sizeof(line), "driver %064d\n", 7);
	assert_int_equal(parse_text(line), 0);
	assert_one_diag(1, "driver version longer than 63 bytes");
	assert_string_equal(state.driver, "unknown");
}

static void test_diagnostics_are_capped(void **unused)
{
	(void)unused;
	static char text[300 * 8];
	size_t len = 0;
	for (int i = 0; i < 300; i++)
		len += (size_t)snprintf(text + len, sizeof(text) - len, "bogus\n");
	snprintf(text + len, sizeof(text) - len, "chip phy=0\n");
	assert_int_equal(parse_text(text), 0);
	/* 100 diagnostics, one notice, then silence; parsing goes on. */
	assert_int_equal(diags.count, FAKE_STATE_MAX_DIAGS + 1);
	assert_string_equal(diags.message[FAKE_STATE_MAX_DIAGS], "too many problems, not reporting more");
	assert_int_equal(state.chip_count, 1);
}

static void test_vnpus(void **unused)
{
	(void)unused;
	assert_int_equal(parse_text("chip phy=0\nchip phy=1\n"
				    "vnpu id=100 phy=0 template=vir04_3c\n"
				    "vnpu template=vir02 phy=1 id=117\n"),
			 0);
	assert_int_equal(diags.count, 0);
	assert_int_equal(state.vnpu_count, 2);
	assert_int_equal(state.vnpus[0].id, 100);
	assert_int_equal(state.vnpus[0].phy, 0);
	assert_string_equal(state.vnpus[0].template_name, "vir04_3c");
	assert_int_equal(state.vnpus[1].id, 117);
	assert_string_equal(state.vnpus[1].template_name, "vir02");
	/* Each knows its line, which the simulator removes to destroy it. */
	assert_int_equal(state.vnpus[0].line, 3);
	assert_int_equal(state.vnpus[1].line, 4);

	static const struct {
		const char *line;
		const char *diag;
	} bad[] = {
		{ "vnpu id=100 phy=0", "needs id=, phy= and template=" },
		{ "vnpu id=100 phy=2 template=vir02", "no chip phy=2 on an earlier line" },
		{ "vnpu id=116 phy=0 template=vir02", "ids of chip 0 are 100-115" },
		{ "vnpu id=100 phy=0 template=vir02 size=4", "unknown key 'size'" },
		{ "vnpu id=100 id=101 phy=0 template=vir02", "duplicate key 'id'" },
		{ "vnpu id=x phy=0 template=vir02", "bad value 'x' for 'id'" },
		{ "vnpu id=100 phy=0 template=vir0123456789abcdef", "bad value" },
		{ "vnpu id=100 phy=0 template", "expected key=value, got 'template', line ignored" },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char text[256];
		snprintf(text, sizeof(text), "chip phy=0\n%s\n", bad[i].line);
		assert_int_equal(parse_text(text), 0);
		assert_one_diag(2, bad[i].diag);
		assert_int_equal(state.vnpu_count, 0);
	}
	parse_one_diag("chip phy=0\nvnpu id=100 phy=0 template=a\nvnpu id=100 phy=0 template=b\n", 3,
		       "vnpu 100 already defined");
	assert_int_equal(state.vnpu_count, 1);
}

static void test_share_lines(void **unused)
{
	(void)unused;
	assert_int_equal(parse_text("chip phy=0\nchip phy=1\nchip phy=2\nshare phy=1 mode=off\nshare mode=on phy=2\n"), 0);
	assert_int_equal(diags.count, 0);
	/* On without a line: a state file written before the mode existed still shares. */
	assert_false(state.chips[0].share_off);
	assert_int_equal(state.chips[0].share_line, 0);
	assert_true(state.chips[1].share_off);
	assert_int_equal(state.chips[1].share_line, 4);
	assert_false(state.chips[2].share_off);
	assert_int_equal(state.chips[2].share_line, 5);

	static const struct {
		const char *line;
		const char *diag;
	} bad[] = {
		{ "share phy=0", "needs phy= and mode=" },
		{ "share mode=off", "needs phy= and mode=" },
		{ "share phy=0 mode=maybe", "bad value 'maybe' for 'mode'" },
		{ "share phy=0 mode=off mode=on", "duplicate key 'mode'" },
		{ "share phy=x mode=off", "bad value 'x' for 'phy'" },
		{ "share phy=3 mode=off", "no chip phy=3 on an earlier line" },
		{ "share phy=0 mode=off colour=red", "unknown key 'colour'" },
		{ "share phy=0 off", "expected key=value" },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char text[256];
		snprintf(text, sizeof(text), "chip phy=0\n%s\n", bad[i].line);
		assert_int_equal(parse_text(text), 0);
		assert_one_diag(2, bad[i].diag);
		assert_false(state.chips[0].share_off);
	}
	parse_one_diag("chip phy=0\nshare phy=0 mode=off\nshare phy=0 mode=on\n", 3, "has a share line already");
	assert_true(state.chips[0].share_off);
}

static void test_lookups(void **unused)
{
	(void)unused;
	assert_int_equal(parse_text("chip phy=0 card=5\n"
				    "chip phy=1 card=1 logic=7\n"
				    "chip phy=2 card=3\n"
				    "chip phy=3 card=1 device=1 logic=1\n"),
			 0);
	assert_int_equal(diags.count, 0);

	uint32_t cards[FAKE_STATE_MAX_CARDS];
	assert_int_equal(fake_state_card_list(&state, cards, ARRAY_SIZE(cards)), 3);
	assert_int_equal(cards[0], 1);
	assert_int_equal(cards[1], 3);
	assert_int_equal(cards[2], 5);
	/* A short buffer gets the first ids, the count stays true. */
	uint32_t one[1];
	assert_int_equal(fake_state_card_list(&state, one, 1), 3);
	assert_int_equal(one[0], 1);

	assert_int_equal(fake_state_devices_in_card(&state, 1), 2);
	assert_int_equal(fake_state_devices_in_card(&state, 5), 1);
	assert_int_equal(fake_state_devices_in_card(&state, 2), 0);

	const struct fake_chip *found = fake_state_find_device(&state, 1, 1);
	assert_non_null(found);
	assert_int_equal(found->phy, 3);
	assert_null(fake_state_find_device(&state, 1, 2));
	found = fake_state_find_logic(&state, 7);
	assert_non_null(found);
	assert_int_equal(found->phy, 1);
	assert_null(fake_state_find_logic(&state, 4));
	found = fake_state_find_phy(&state, 2);
	assert_non_null(found);
	assert_int_equal(found->card, 3);
	assert_null(fake_state_find_phy(&state, 9));
}

/* Where a line is, as the parser counts lines: the simulator cuts a
 * vNPU's line out of the text it parsed. */
static void test_line_span(void **unused)
{
	(void)unused;
	static const char text[] = "a\n\nccc\r\nlast";
	size_t start = 99, end = 99;
	assert_int_equal(fake_state_line_span(text, strlen(text), 1, &start, &end), 0);
	assert_int_equal(start, 0);
	assert_int_equal(end, 2);
	assert_int_equal(fake_state_line_span(text, strlen(text), 2, &start, &end), 0);
	assert_int_equal(start, 2);
	assert_int_equal(end, 3);
	assert_int_equal(fake_state_line_span(text, strlen(text), 3, &start, &end), 0);
	assert_int_equal(start, 3);
	assert_int_equal(end, 8);
	assert_int_equal(fake_state_line_span(text, strlen(text), 4, &start, &end), 0);
	assert_int_equal(start, 8);
	assert_int_equal(end, strlen(text));
	start = end = 99;
	assert_int_equal(fake_state_line_span(text, strlen(text), 5, &start, &end), -ENOENT);
	assert_int_equal(fake_state_line_span(text, strlen(text), 0, &start, &end), -ENOENT);
	assert_int_equal(fake_state_line_span("", 0, 1, &start, &end), -ENOENT);
	assert_int_equal(start, 99);
	assert_int_equal(end, 99);
}

/* What carving decides, family by family: the templates, and AI CPUs and
 * memory counted beside AI cores. */
static void test_vdev_plan(void **unused)
{
	(void)unused;
	assert_int_equal(parse_text("chip phy=0 name=910B4 board=0xb1 aicore=24 hbm_mb=65536\n"
				    "chip phy=1 name=910B3 aicore=20 hbm_mb=65536\n"
				    "vnpu id=116 phy=1 template=vir10_4c_16g_m\n"
				    "chip phy=2 name=910A aicore=32 hbm_mb=32768\n"
				    "vnpu id=132 phy=2 template=vir16\nvnpu id=133 phy=2 template=vir08\n"
				    "chip phy=3 name=910B1 aicore=24 hbm_mb=65536\n"
				    "vnpu id=148 phy=3 template=vir06_1c_16g\nvnpu id=149 phy=3 template=vir06_1c_16g\n"
				    "vnpu id=150 phy=3 template=vir06_1c_16g\n"),
			 0);
	assert_int_equal(diags.count, 0);
	struct fake_vnpu v;
	/* An A3 by its board, whatever its name says. */
	assert_int_equal(fake_vdev_plan(&state, &state.chips[0], "vir05_1c_8g", DCMI_VDEV_ID_ANY, &v),
			 DCMI_ERR_INVALID_PARAMETER);
	assert_int_equal(fake_vdev_plan(&state, &state.chips[0], "vir12_3c_32g", DCMI_VDEV_ID_ANY, &v), DCMI_OK);
	assert_int_equal(v.id, 100);
	assert_int_equal(v.phy, 0);
	assert_string_equal(v.template_name, "vir12_3c_32g");
	/* 10 AI cores are left, but 4 + 4 AI CPUs are more than the 7. */
	assert_int_equal(fake_vdev_plan(&state, &state.chips[1], "vir10_4c_16g_m", DCMI_VDEV_ID_ANY, &v),
			 DCMI_ERR_RESOURCE_OCCUPIED);
	assert_int_equal(fake_vdev_plan(&state, &state.chips[1], "vir10_3c_16g", DCMI_VDEV_ID_ANY, &v), DCMI_OK);
	assert_int_equal(v.id, 117);
	/* The 910's vir16 and vir08 take 24 cores and three quarters of the
	 * memory: a vir08 fits, a vir16 does not. */
	assert_int_equal(fake_vdev_plan(&state, &state.chips[2], "vir08", DCMI_VDEV_ID_ANY, &v), DCMI_OK);
	assert_int_equal(fake_vdev_plan(&state, &state.chips[2], "vir16", DCMI_VDEV_ID_ANY, &v),
			 DCMI_ERR_RESOURCE_OCCUPIED);
	/* Three 16 GiB vNPUs of a 64 GiB 910B1: a fourth fits in cores (24)
	 * and memory, and a vir12_3c_32g in neither. */
	assert_int_equal(fake_vdev_plan(&state, &state.chips[3], "vir06_1c_16g", 151, &v), DCMI_OK);
	assert_int_equal(fake_vdev_plan(&state, &state.chips[3], "vir12_3c_32g", DCMI_VDEV_ID_ANY, &v),
			 DCMI_ERR_RESOURCE_OCCUPIED);
	assert_non_null(fake_vdev_find(&state, 3, 150));
	assert_null(fake_vdev_find(&state, 2, 150));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_empty_input_is_an_empty_node),
		cmocka_unit_test(test_documented_example),
		cmocka_unit_test(test_chip_defaults),
		cmocka_unit_test(test_every_key),
		cmocka_unit_test(test_health_values),
		cmocka_unit_test(test_bad_values_drop_the_line),
		cmocka_unit_test(test_errors_list),
		cmocka_unit_test(test_unknown_key_is_ignored_with_one_warning),
		cmocka_unit_test(test_unknown_directive),
		cmocka_unit_test(test_malformed_chip_lines),
		cmocka_unit_test(test_duplicates_keep_the_first),
		cmocka_unit_test(test_chip_and_card_limits),
		cmocka_unit_test(test_line_length_limit),
		cmocka_unit_test(test_file_size_limit),
		cmocka_unit_test(test_blanks_comments_and_control_characters),
		cmocka_unit_test(test_driver_and_subscribe),
		cmocka_unit_test(test_diagnostics_are_capped),
		cmocka_unit_test(test_lookups),
		cmocka_unit_test(test_vnpus),
		cmocka_unit_test(test_share_lines),
		cmocka_unit_test(test_line_span),
		cmocka_unit_test(test_vdev_plan),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
