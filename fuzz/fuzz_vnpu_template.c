/* SPDX-License-Identifier: Apache-2.0 */
/* Fuzzes the reader of vNPU template names (npu/vnpu.c), which come from
 * DCMI and end up in the ResourceSlices as AI cores and HBM: a name that
 * reads must give AI cores within the bound and memory in whole GiB. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

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
	free(text);
	return 0;
}
