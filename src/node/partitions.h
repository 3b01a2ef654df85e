/* SPDX-License-Identifier: Apache-2.0 */
/* The vNPUs a chip can be carved into on demand (dynamic vNPUs, DRA): for
 * each template its family supports (npu/vnpu.h), as many placements as fit
 * the chip's AI cores and, where both are known, its HBM. A placement is a
 * name the scheduler can allocate, not a place on the chip: every placement
 * consumes its template's share of the chip's counters, so the scheduler
 * never allocates more than the chip holds, and the vNPU is created only
 * when a claim with it is prepared. The DRA driver publishes the placements
 * and, at prepare, reads the chip and template back from the name:
 * "npu-<phy>-<template, '_' as '-'>-<k>" ("npu-3-vir05-1c-8g-0"). */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "npu/chip.h"
#include "npu/vnpu.h"

/* Placements of one chip: at most 16 vNPUs of the smallest template on
 * the largest chip, for each of at most 8 templates. */
#define PARTITIONS_MAX 128
/* "npu-<phy>-<label>-<k>": a DNS label, at most 63 characters. */
#define PARTITION_NAME_MAX 64

struct partition {
	const char *template_name; /* static (npu_vnpu_templates) */
	uint32_t index;            /* k: 0 .. how many fit - 1 */
	struct npu_vnpu_size size;
	char name[PARTITION_NAME_MAX];
};

/* The placements of chip (its family, product and AI cores; hbm_bytes 0
 * when unknown), template by template in the family's order. A chip
 * without templates or whose AI cores are unknown has none. Returns the
 * count; at most max are written. */
size_t partitions_of_chip(const struct npu_chip *chip, uint64_t hbm_bytes, struct partition *out, size_t max);

/* Reads a placement's name: its chip's physical id and the template (one
 * of npu_vnpu_templates, any family). Returns 0, or -EINVAL when name is
 * not a placement's. */
int partition_parse(const char *name, uint32_t *ret_phy, const char **ret_template);
