/* SPDX-License-Identifier: Apache-2.0 */
/* The DCMI simulator's vNPU carving rules; see vdev.h. */
#include "vdev.h"

#include <stdbool.h>
#include <string.h>

#include "npu/dcmi_abi.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* The templates of Huawei's virtualisation guide (Ascend Virtual Instance)
 * for each family, with the AI CPUs each takes where the name does not say
 * it; "Ng" in a name is N GiB of HBM. */
static const struct fake_template templates_910[] = {
	{ "vir02", 2, 1, 0 },
	{ "vir04", 4, 1, 0 },
	{ "vir08", 8, 3, 0 },
	{ "vir16", 16, 7, 0 },
};
static const struct fake_template templates_310p[] = {
	{ "vir01", 1, 1, 0 },	      { "vir02", 2, 2, 0 },	   { "vir04", 4, 4, 0 },
	{ "vir02_1c", 2, 1, 0 },      { "vir04_3c", 4, 3, 0 },	   { "vir04_3c_ndvpp", 4, 3, 0 },
	{ "vir04_4c_dvpp", 4, 4, 0 },
};
/* Atlas A2 training (910B1, 910B2). */
static const struct fake_template templates_a2_training[] = {
	{ "vir06_1c_16g", 6, 1, 16 },
	{ "vir12_3c_32g", 12, 3, 32 },
};
/* Atlas A2 inference (910B3, 910B4). */
static const struct fake_template templates_a2_inference[] = {
	{ "vir05_1c_8g", 5, 1, 8 },	{ "vir10_3c_16g", 10, 3, 16 }, { "vir10_3c_16g_nm", 10, 3, 16 },
	{ "vir10_4c_16g_m", 10, 4, 16 }, { "vir10_3c_32g", 10, 3, 32 }, { "vir05_1c_16g", 5, 1, 16 },
};
/* Atlas A3 (910_93). */
static const struct fake_template templates_a3[] = {
	{ "vir06_1c_16g", 6, 1, 16 },
	{ "vir12_3c_32g", 12, 3, 32 },
	{ "vir05_1c_16g", 5, 1, 16 },
	{ "vir10_3c_32g", 10, 3, 32 },
};

struct family {
	const struct fake_template *templates;
	size_t count;
	uint32_t aicpus; /* what the templates may take of the chip's AI CPUs */
};

#define FAMILY(t, cpus) { t, ARRAY_SIZE(t), cpus }

static bool has_prefix(const char *s, const char *prefix)
{
	return strncmp(s, prefix, strlen(prefix)) == 0;
}

/* The family as the plugin tells it (src/npu/family.c): A3 by its board ids
 * or its 910_93 name, then by the name's prefix; 910B1/910B2 are the
 * training chips of A2, the other 910B the inference ones. */
static struct family family_of(const struct fake_chip *chip)
{
	bool a3_board = chip->has_board && ((chip->board >= 0xb0 && chip->board <= 0xb4) || chip->board == 0x81 ||
					    chip->board == 0x83 || chip->board == 0xd1 || chip->board == 0xd3);
	const char *name = chip->name;
	if (a3_board || has_prefix(name, "910_93"))
		return (struct family)FAMILY(templates_a3, 7);
	if (has_prefix(name, "910B1") || has_prefix(name, "910B2"))
		return (struct family)FAMILY(templates_a2_training, 7);
	if (has_prefix(name, "910B"))
		return (struct family)FAMILY(templates_a2_inference, 7);
	if (has_prefix(name, "910"))
		return (struct family)FAMILY(templates_910, 14);
	if (has_prefix(name, "310P"))
		return (struct family)FAMILY(templates_310p, 8);
	return (struct family){ NULL, 0, 0 };
}

const struct fake_template *fake_vdev_template(const struct fake_chip *chip, const char *name)
{
	struct family f = family_of(chip);
	for (size_t i = 0; i < f.count; i++)
		if (strcmp(f.templates[i].name, name) == 0)
			return &f.templates[i];
	return NULL;
}

uint32_t fake_vdev_aicpus(const struct fake_chip *chip)
{
	return family_of(chip).aicpus;
}

/* Megabytes of HBM the template takes of chip. */
static uint64_t memory_mb(const struct fake_chip *chip, const struct fake_template *t)
{
	if (t->memory_gib)
		return (uint64_t)t->memory_gib * 1024;
	return chip->aicore ? chip->hbm_mb * t->aicores / chip->aicore : chip->hbm_mb;
}

const struct fake_vnpu *fake_vdev_find(const struct fake_state *state, uint32_t phy, uint32_t id)
{
	for (size_t i = 0; i < state->vnpu_count; i++)
		if (state->vnpus[i].phy == phy && state->vnpus[i].id == id)
			return &state->vnpus[i];
	return NULL;
}

int fake_vdev_plan(const struct fake_state *state, const struct fake_chip *chip, const char *template_name,
		   uint32_t want_id, struct fake_vnpu *ret_vnpu)
{
	if (!family_of(chip).count)
		return DCMI_ERR_NOT_SUPPORTED;
	const struct fake_template *t = fake_vdev_template(chip, template_name);
	if (!t)
		return DCMI_ERR_INVALID_PARAMETER;
	if (chip->busy)
		return DCMI_ERR_NOT_PERMITTED;

	uint32_t first = chip->phy * FAKE_STATE_VNPUS_PER_CHIP + 100;
	uint32_t id = want_id;
	if (want_id == DCMI_VDEV_ID_ANY) {
		for (id = first; id < first + FAKE_STATE_VNPUS_PER_CHIP && fake_vdev_find(state, chip->phy, id); id++) {
		}
		if (id == first + FAKE_STATE_VNPUS_PER_CHIP)
			return DCMI_ERR_RESOURCE_OCCUPIED;
	} else if (want_id < first || want_id >= first + FAKE_STATE_VNPUS_PER_CHIP ||
		   fake_vdev_find(state, chip->phy, want_id)) {
		return DCMI_ERR_INVALID_PARAMETER;
	}
	if (state->vnpu_count == FAKE_STATE_MAX_VNPUS)
		return DCMI_ERR_RESOURCE_OCCUPIED;

	/* What the chip's vNPUs take already; one whose template the family
	 * lacks (a static line a test wrote) takes nothing. */
	uint64_t cores = t->aicores, cpus = t->aicpus, mem = memory_mb(chip, t);
	for (size_t i = 0; i < state->vnpu_count; i++) {
		const struct fake_template *u;
		if (state->vnpus[i].phy != chip->phy || !(u = fake_vdev_template(chip, state->vnpus[i].template_name)))
			continue;
		cores += u->aicores;
		cpus += u->aicpus;
		mem += memory_mb(chip, u);
	}
	if (cores > chip->aicore || cpus > fake_vdev_aicpus(chip) || mem > chip->hbm_mb)
		return DCMI_ERR_RESOURCE_OCCUPIED;

	struct fake_vnpu v = { .id = id, .phy = chip->phy };
	memcpy(v.template_name, t->name, strlen(t->name) + 1);
	*ret_vnpu = v;
	return DCMI_OK;
}
