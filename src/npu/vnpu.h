/* SPDX-License-Identifier: Apache-2.0 */
/* What a vNPU template's name says of its size. Huawei names the static
 * templates after what they hold: "vir<NN>" AI cores, then '_'-separated
 * parts of which "<N>c" counts AI CPUs and "<N>g" GiB of HBM ("vir10_3c_16g"
 * is 10 AI cores, 3 AI CPUs, 16 GiB); other parts ("ndvpp", "dvpp", "m",
 * "nm") say which media engines come along. The older templates ("vir04",
 * "vir04_3c") name no memory: it is then unknown here, since the share of
 * HBM the driver gives them is not in the name. */
#pragma once

#include <stdint.h>

struct npu_vnpu_size {
	uint32_t aicores;      /* > 0 */
	uint32_t aicpus;       /* 0: not in the name */
	uint64_t memory_bytes; /* 0: not in the name */
};

/* Reads template_name. Returns 0, or -EINVAL for a name that is not
 * "vir<NN>[_part]..." with NN > 0 (an empty name: the template is unknown),
 * or whose counts are out of range. */
int npu_vnpu_template_size(const char *template_name, struct npu_vnpu_size *ret_size);
