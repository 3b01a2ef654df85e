/* SPDX-License-Identifier: Apache-2.0 */
/* Fuzzes --dra-chips (npu/chip_select.c): whatever parses is bounded and
 * its ranges run forwards, and a split of a small snapshot by it puts every
 * device in exactly one of the two halves. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "npu/chip_select.h"
#include "npu/inventory.h"
#include "fuzz/fuzz_text.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = fuzz_text(data, size, 4096);
	if (!text)
		return 0;
	struct npu_chip_select s;
	char why[160];
	if (npu_chip_select_parse(text, &s, why, sizeof(why)) == 0) {
		if (s.n_ranges > NPU_CHIP_SELECT_MAX_ENTRIES)
			abort();
		for (size_t i = 0; i < s.n_ranges; i++)
			if (s.ranges[i].last < s.ranges[i].first)
				abort();
		struct npu_snapshot *snap = npu_snapshot_new(8), *in, *out;
		if (!snap)
			abort();
		for (size_t i = 0; i < snap->count; i++) {
			snap->devices[i].chip.phy_id = (uint32_t)i * 3;
			snap->devices[i].chip.family = (enum npu_family)(i % 7);
			snap->devices[i].healthy = i % 2;
			snap->healthy += i % 2;
		}
		if (npu_snapshot_split(snap, &s, &in, &out) == 0) {
			if (in->count + out->count != snap->count || in->healthy + out->healthy != snap->healthy)
				abort();
			npu_snapshot_unref(in);
			npu_snapshot_unref(out);
		}
		npu_snapshot_unref(snap);
	}
	free(text);
	return 0;
}
