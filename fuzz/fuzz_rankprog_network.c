/* SPDX-License-Identifier: Apache-2.0 */
/* Fuzzes ascend-ranktable's reader of ASCEND_NPU_NETWORK and of the
 * annotation other pods publish (tools/ascend-ranktable/member.c): any
 * bytes are refused with a reason or give chips within the bounds, of one
 * family, whose addresses point into the result's own storage. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_text.h"
#include "member.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = fuzz_text(data, size, RT_NETWORK_MAX + 16);
	if (!text)
		return 0;
	static struct rt_chips chips;
	char why[256] = "";
	chips.n = 12345;
	if (rt_network_parse(text, size, &chips, why, sizeof(why)) < 0) {
		if (!why[0] || strchr(why, '\n') || chips.n != 12345)
			abort();
	} else {
		if (chips.n == 0 || chips.n > HCCL_RANKTABLE_MAX_CHIPS || !chips.family[0])
			abort();
		for (size_t i = 0; i < chips.n; i++)
			if (chips.chips[i].device_ip && chips.chips[i].device_ip != chips.ips[i])
				abort();
	}
	free(text);
	return 0;
}
