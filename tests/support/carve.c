/* SPDX-License-Identifier: Apache-2.0 */
#include "support/carve.h"

#include <stdio.h>
#include <string.h>

struct npu_snapshot *carve_snapshot(const struct npu_snapshot *chips, unsigned carved, unsigned per_chip,
				    const char *template_name)
{
	if (carved > chips->count || per_chip > NPU_VNPUS_PER_CHIP)
		return NULL;
	struct npu_snapshot *s = npu_snapshot_new(chips->count + carved * per_chip);
	if (!s)
		return NULL;
	memcpy(s->devices, chips->devices, chips->count * sizeof(s->devices[0]));
	size_t j = chips->count;
	for (size_t c = 0; c < carved; c++) {
		struct npu_device *chip = &s->devices[c];
		chip->vnpu_count = per_chip;
		for (unsigned k = 0; k < per_chip; k++, j++) {
			struct npu_device *v = &s->devices[j];
			*v = *chip;
			v->kind = NPU_DEVICE_VNPU;
			v->vnpu_count = 0;
			v->vnpu.id = NPU_VNPU_FIRST_ID + chip->chip.phy_id * NPU_VNPUS_PER_CHIP + k;
			v->vnpu.phy_id = chip->chip.phy_id;
			snprintf(v->vnpu.template_name, sizeof(v->vnpu.template_name), "%s", template_name);
			snprintf(v->id, sizeof(v->id), "vnpu-%u", v->vnpu.id);
		}
	}
	for (size_t i = 0; i < j; i++)
		s->healthy += s->devices[i].healthy;
	return s;
}
