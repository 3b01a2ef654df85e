/* SPDX-License-Identifier: Apache-2.0 */
/* Fuzzes the reader of the separation record (fault/separation.h): the
 * input is the file's text. A refusal says why and leaves the set as it
 * was; what is taken is bounded, each chip once, and written out reads back
 * the same. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fault/separation.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct fault_separations set, back;
	char why[512] = "";
	set.count = 3;
	if (fault_separations_parse((const char *)data, size, &set, why, sizeof(why)) < 0) {
		if (why[0] == '\0' || set.count != 3)
			abort();
		return 0;
	}
	if (set.count > FAULT_SEPARATION_MAX)
		abort();
	for (size_t i = 0; i < set.count; i++)
		for (size_t j = 0; j < i; j++)
			if (set.records[i].phy == set.records[j].phy)
				abort();
	char *text;
	size_t len;
	if (fault_separations_format(&set, &text, &len) < 0)
		abort();
	if (fault_separations_parse(text, len, &back, why, sizeof(why)) < 0 || back.count != set.count ||
	    memcmp(back.records, set.records, set.count * sizeof(set.records[0])) != 0)
		abort();
	free(text);
	return 0;
}
