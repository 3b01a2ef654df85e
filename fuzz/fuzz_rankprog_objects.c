/* SPDX-License-Identifier: Apache-2.0 */
/* Fuzzes ascend-ranktable's readers of the API server's objects
 * (tools/ascend-ranktable/group.c and member.c): the input is read as a
 * pod (its place, claims and annotation; its group) and as a ResourceClaim
 * (its NPU devices' data). Every refusal has a one-line reason and leaves
 * the results as they were; what is read stays within its bounds. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_text.h"
#include "group.h"
#include "kube/objects.h"
#include "member.h"

#define INPUT_MAX (64 * 1024)

static void pod(const char *text, size_t size)
{
	json_object *o;
	char why[256] = "";
	if (kube_json_parse(text, size, &o, why, sizeof(why)) < 0)
		return;
	static struct rt_pod p;
	struct rt_group g;
	p.n_claims = 12345;
	why[0] = '\0';
	if (rt_pod_read(o, &p, why, sizeof(why)) < 0) {
		if (!why[0] || strchr(why, '\n') || p.n_claims != 12345)
			abort();
	} else if (p.n_claims + p.n_claims_pending > RT_POD_CLAIMS_MAX || (p.has_index && p.index >= RT_GROUP_MAX) ||
		   !memchr(p.network, '\0', sizeof(p.network))) {
		abort();
	}
	why[0] = '\0';
	g.size = 12345;
	if (rt_group_of(o, RT_GROUP_LABEL_DEFAULT, &g, why, sizeof(why)) < 0) {
		if (!why[0] || strchr(why, '\n') || g.size != 12345)
			abort();
	} else if (!g.selector[0] || g.size > RT_GROUP_MAX) {
		abort();
	}
	json_object_put(o);
}

static void claim(const char *text, size_t size)
{
	static struct rt_chips chips, before;
	char why[256] = "";
	chips = (struct rt_chips){ .n = 1, .family = "910B" };
	before = chips;
	int r = rt_claim_chips(text, size, "npu.ascend.com", &chips, why, sizeof(why));
	if (r < 0) {
		if (!why[0] || strchr(why, '\n') || memcmp(&chips, &before, sizeof(chips)) != 0)
			abort();
	} else if (chips.n < 2 || chips.n > HCCL_RANKTABLE_MAX_CHIPS) {
		abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = fuzz_text(data, size, INPUT_MAX);
	if (!text)
		return 0;
	pod(text, size);
	claim(text, size);
	free(text);
	return 0;
}
