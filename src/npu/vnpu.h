/* SPDX-License-Identifier: Apache-2.0 */
/* What a vNPU template's name says of its size. Huawei names the static
 * templates after what they hold: "vir<NN>" AI cores, then '_'-separated
 * parts of which "<N>c" counts AI CPUs and "<N>g" GiB of HBM ("vir10_3c_16g"
 * is 10 AI cores, 3 AI CPUs, 16 GiB); other parts ("ndvpp", "dvpp", "m",
 * "nm") say which media engines come along. The older templates ("vir04",
 * "vir04_3c") name no memory: it is then unknown here, since the share of
 * HBM the driver gives them is not in the name. */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "npu/family.h"

struct npu_vnpu_size {
	uint32_t aicores;      /* > 0 */
	uint32_t aicpus;       /* 0: not in the name */
	uint64_t memory_bytes; /* 0: not in the name */
};

/* Reads template_name. Returns 0, or -EINVAL for a name that is not
 * "vir<NN>[_part]..." with NN > 0 (an empty name: the template is unknown),
 * or whose counts are out of range. */
int npu_vnpu_template_size(const char *template_name, struct npu_vnpu_size *ret_size);

/* The templates a chip can be carved by on demand, from Huawei's vNPU
 * documentation ("Virtualization Templates" of the Ascend virtualization
 * guide, MindCluster's template table): 910: vir02, vir04, vir08, vir16;
 * 310P: vir01, vir02, vir04, vir02_1c, vir04_3c, vir04_3c_ndvpp,
 * vir04_4c_dvpp; 910B training (910B1, 910B2): vir06_1c_16g, vir12_3c_32g;
 * 910B inference (910B3, 910B4): vir05_1c_8g, vir10_3c_16g, vir10_3c_16g_nm,
 * vir10_4c_16g_m, vir10_3c_32g, vir05_1c_16g; A3: vir06_1c_16g,
 * vir12_3c_32g, vir05_1c_16g, vir10_3c_32g. product is DCMI's chip name
 * ("910B3"); a 910B whose product is unknown gets the training set. Returns
 * how many (0 for a family without templates) and *ret_names, a static
 * array. */
size_t npu_vnpu_templates(enum npu_family family, const char *product, const char *const **ret_names);

/* The template name as it goes into a device name: '_' becomes '-'
 * ("vir05_1c_8g" -> "vir05-1c-8g"), or -ENAMETOOLONG. */
int npu_vnpu_template_label(const char *template_name, char *buf, size_t size);
