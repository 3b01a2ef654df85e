/* SPDX-License-Identifier: Apache-2.0 */
/* Fuzzes the DRA checkpoint reader: a file that parses holds at most the
 * bound of claims, unique uids, and renders into text that parses back to
 * the same claims; one that does not leaves the checkpoint empty. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "dra/checkpoint.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct dra_checkpoint cp, back;
	char why[256], *text;
	if (dra_checkpoint_parse((const char *)data, size, &cp, why, sizeof(why)) < 0) {
		if (cp.count != 0 || !why[0])
			abort();
		return 0;
	}
	if (cp.count > DRA_CHECKPOINT_MAX_CLAIMS)
		abort();
	if (dra_checkpoint_render(&cp, &text) < 0)
		abort();
	if (dra_checkpoint_parse(text, strlen(text), &back, why, sizeof(why)) < 0 || back.count != cp.count)
		abort();
	for (size_t i = 0; i < cp.count; i++) {
		const struct dra_prepared *a = cp.claims[i], *b = back.claims[i];
		if (strcmp(a->uid, b->uid) != 0 || a->n_devices != b->n_devices)
			abort();
		for (size_t j = 0; j < a->n_devices; j++)
			if (strcmp(a->devices[j].device, b->devices[j].device) != 0 ||
			    strcmp(a->devices[j].pool, b->devices[j].pool) != 0 ||
			    strcmp(a->devices[j].request, b->devices[j].request) != 0)
				abort();
	}
	free(text);
	dra_checkpoint_clear(&cp);
	dra_checkpoint_clear(&back);
	return 0;
}
