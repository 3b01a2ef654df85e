/* SPDX-License-Identifier: Apache-2.0 */
/* Fuzzes the DCMI simulator's state-file parser (tests/fake-dcmi/state.c):
 * any input must parse without crashing, and the result must respect every
 * bound and uniqueness rule the simulator relies on. Its vNPU rules
 * (tests/fake-dcmi/vdev.c) run on what was parsed: the line each vNPU
 * came from is where the simulator cuts it out, and a carve they allow
 * must be one the parser would accept. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "npu/dcmi_abi.h"
#include "state.h"
#include "vdev.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_diag(void *userdata, unsigned line, const char *message)
{
	unsigned *count = userdata;
	(*count)++;
	/* Diagnostics are single printable lines the library prints as is. */
	if (strchr(message, '\n') || strlen(message) >= 256 || line > FAKE_STATE_MAX_FILE)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* One byte past the limit still exercises the oversize path. */
	if (size > FAKE_STATE_MAX_FILE + 1)
		return 0;
	static struct fake_state state;
	unsigned diags = 0;
	int r = fake_state_parse(&state, (const char *)data, size, check_diag, &diags);
	if ((r < 0) != (size > FAKE_STATE_MAX_FILE) || diags > 101)
		abort();
	if (state.chip_count > FAKE_STATE_MAX_CHIPS || strlen(state.driver) >= sizeof(state.driver))
		abort();

	uint32_t cards[FAKE_STATE_MAX_CARDS];
	size_t ncards = fake_state_card_list(&state, cards, FAKE_STATE_MAX_CARDS);
	if (ncards > FAKE_STATE_MAX_CARDS)
		abort();
	for (size_t i = 1; i < ncards; i++)
		if (cards[i - 1] >= cards[i])
			abort();

	for (size_t i = 0; i < state.chip_count; i++) {
		const struct fake_chip *c = &state.chips[i];
		if (c->phy > FAKE_STATE_MAX_ID || c->logic > FAKE_STATE_MAX_ID || c->card > FAKE_STATE_MAX_ID ||
		    c->device > FAKE_STATE_MAX_DEVICE || c->error_count > FAKE_STATE_MAX_ERRORS)
			abort();
		if (c->health > 3 && c->health != FAKE_HEALTH_ABSENT)
			abort();
		if (c->name[0] == '\0' || strlen(c->name) >= sizeof(c->name))
			abort();
		/* Every lookup must find this very chip: ids are unique. */
		if (fake_state_find_phy(&state, c->phy) != c || fake_state_find_logic(&state, c->logic) != c ||
		    fake_state_find_device(&state, c->card, c->device) != c)
			abort();
		if (fake_state_devices_in_card(&state, c->card) == 0)
			abort();
		for (size_t k = 0; k < FAKE_CALL_COUNT; k++)
			if (c->hang_ms[k] > FAKE_HANG_MAX_MS)
				abort();
		/* A carve the rules allow gets a free id of the chip. */
		static const char *const names[] = { "vir04", "vir05_1c_8g", "vir12_3c_32g", "vir02_1c", "x" };
		struct fake_vnpu v;
		uint32_t first = c->phy * FAKE_STATE_VNPUS_PER_CHIP + 100;
		if (fake_vdev_plan(&state, c, names[i % 5], i % 3 ? DCMI_VDEV_ID_ANY : first + (uint32_t)i % 17, &v) ==
			    DCMI_OK &&
		    (v.phy != c->phy || v.id < first || v.id >= first + FAKE_STATE_VNPUS_PER_CHIP ||
		     fake_vdev_find(&state, c->phy, v.id) || !fake_vdev_template(c, v.template_name) || c->busy))
			abort();
	}

	/* Each vNPU's line is one of the input's, and a vnpu line. */
	for (size_t i = 0; i < state.vnpu_count; i++) {
		size_t start, end;
		if (fake_state_line_span((const char *)data, size, state.vnpus[i].line, &start, &end) < 0 || end <= start ||
		    end > size)
			abort();
		const char *text = (const char *)data + start;
		size_t blank = strspn(text, " \t\r");
		if (blank + 4 > end - start || memcmp(text + blank, "vnpu", 4) != 0)
			abort();
	}
	return 0;
}
