/* SPDX-License-Identifier: Apache-2.0 */
/* Fuzzes the ResourceClaim reader: any bytes from the API server either
 * parse into a claim within its bounds (a uid, at most
 * DRA_CLAIM_RESULTS_MAX results, every field non-empty and terminated) or
 * are refused with a reason. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "dra/claim.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct dra_claim c;
	char why[256];
	if (dra_claim_parse((const char *)data, size, &c, why, sizeof(why)) < 0) {
		if (!why[0])
			abort();
		return 0;
	}
	if (!c.uid[0] || strlen(c.uid) >= sizeof(c.uid) || c.n_results > DRA_CLAIM_RESULTS_MAX)
		abort();
	for (size_t i = 0; i < c.n_results; i++) {
		const struct dra_result *r = &c.results[i];
		if (!r->request[0] || !r->driver[0] || !r->pool[0] || !r->device[0] ||
		    strlen(r->device) >= sizeof(r->device) || strlen(r->pool) >= sizeof(r->pool))
			abort();
	}
	return 0;
}
