/* SPDX-License-Identifier: Apache-2.0 */
/* The DCMI simulator's vNPU carving rules (docs/fake-dcmi.md): the
 * templates each chip family offers and what each takes of a chip, and
 * whether a dcmi_create_vdevice fits a chip given the vNPUs the state
 * already has. Pure, like the state parser: no I/O, no globals; the
 * library (fake_dcmi.c) persists what is decided here. */
#pragma once

#include <stdint.h>

#include "state.h"

/* What a template takes of its chip. */
struct fake_template {
	const char *name;
	uint32_t aicores;
	uint32_t aicpus;
	uint32_t memory_gib; /* 0: a share of the chip's HBM, as its share of the AI cores */
};

/* The template of that name the chip's family offers; NULL when it offers
 * none of that name (or the family carves no vNPUs). */
const struct fake_template *fake_vdev_template(const struct fake_chip *chip, const char *name);

/* The AI CPUs of a chip of this family that templates may take (0: the
 * family carves no vNPUs). */
uint32_t fake_vdev_aicpus(const struct fake_chip *chip);

/* Decides a dcmi_create_vdevice of template_name with want_id
 * (DCMI_VDEV_ID_ANY: the lowest free id) on chip, which is state's. Returns
 * DCMI_OK with the vNPU to add in *ret_vnpu, or DCMI's answer: -8255 when
 * the family carves no vNPUs, -8001 for a template the family lacks or an
 * id outside the chip's range or taken, -8002 when the chip is busy, -8020
 * when the template's AI cores, AI CPUs or memory do not fit beside the
 * chip's vNPUs or no id is left. */
int fake_vdev_plan(const struct fake_state *state, const struct fake_chip *chip, const char *template_name,
		   uint32_t want_id, struct fake_vnpu *ret_vnpu);

/* The vNPU id of chip phy in state; NULL when there is none. */
const struct fake_vnpu *fake_vdev_find(const struct fake_state *state, uint32_t phy, uint32_t id);
