/* SPDX-License-Identifier: Apache-2.0 */
/* Fuzzes the reader of vNPU template names (npu/vnpu.c), which come from
 * DCMI and end up in the ResourceSlices as AI cores and HBM: a name that
 * reads must give AI cores within the bound and memory in whole GiB; and
 * the reader of dynamic placements' device names (node/partitions.c),
 * which come from a claim's allocation: one that reads names a template
 * the driver knows, whose label is in the name. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "node/partitions.h"
#include "npu/vnpu.h"
#include "fuzz/fuzz_text.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = fuzz_text(data, size, 4096);
	if (!text)
		return 0;
	struct npu_vnpu_size v;
	if (npu_vnpu_template_size(text, &v) == 0 &&
	    (v.aicores == 0 || v.aicores > 1024 || v.aicpus > 256 || v.memory_bytes % (1ull << 30) != 0 ||
	     v.memory_bytes > (4096ull << 30)))
		abort();
	uint32_t phy;
	const char *template_name = NULL;
	char label[NPU_VNPU_TEMPLATE_MAX];
	if (partition_parse(text, &phy, &template_name) == 0 &&
	    (npu_vnpu_template_size(template_name, &v) != 0 ||
	     npu_vnpu_template_label(template_name, label, sizeof(label)) != 0 || !strstr(text, label)))
		abort();
	free(text);
	return 0;
}
