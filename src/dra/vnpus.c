/* SPDX-License-Identifier: Apache-2.0 */
#include "dra/vnpus.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/parse.h"
#include "node/partitions.h"

bool dra_vnpu_placement(const struct dra_result *res, uint32_t *ret_phy, const char **ret_template)
{
	return partition_parse(res->device, ret_phy, ret_template) == 0;
}

/* The chip phy of snap, or NULL. */
static const struct npu_device *chip_of(const struct npu_snapshot *snap, uint32_t phy)
{
	char id[NPU_DEVICE_ID_MAX];
	snprintf(id, sizeof(id), "npu-%" PRIu32, phy);
	const struct npu_device *d = snap ? npu_snapshot_find(snap, id) : NULL;
	return d && d->kind == NPU_DEVICE_CHIP ? d : NULL;
}

bool dra_vnpu_recorded(const struct dra_checkpoint *cp, uint32_t id)
{
	for (size_t i = 0; i < cp->count; i++)
		for (size_t j = 0; j < cp->claims[i]->n_devices; j++)
			if (cp->claims[i]->devices[j].vnpu_id == id)
				return true;
	return false;
}

static bool id_taken(uint32_t id, const struct npu_snapshot *snap, const struct dra_checkpoint *cp,
		     const struct dra_prepared *p, size_t before)
{
	for (size_t i = 0; i < snap->count; i++)
		if (snap->devices[i].kind == NPU_DEVICE_VNPU && snap->devices[i].vnpu.id == id)
			return true;
	for (size_t j = 0; j < before; j++)
		if (p->devices[j].vnpu_id == id)
			return true;
	return dra_vnpu_recorded(cp, id);
}

/* Whether the chip has a placement of that name (its AI cores decide: the
 * HBM the published list also heeds is not known here). */
static bool has_placement(const struct npu_device *chip, const char *name)
{
	struct partition *parts = calloc(PARTITIONS_MAX, sizeof(*parts));
	bool found = false;
	size_t n = parts ? partitions_of_chip(&chip->chip, 0, parts, PARTITIONS_MAX) : 0;
	for (size_t i = 0; i < n && i < PARTITIONS_MAX && !found; i++)
		found = strcmp(parts[i].name, name) == 0;
	free(parts);
	return found;
}

int dra_vnpus_plan(struct dra_prepared *p, const struct npu_snapshot *snap, const struct npu_chip_select *dynamic,
		   const struct dra_checkpoint *cp, char *why, size_t why_size)
{
	for (size_t j = 0; j < p->n_devices; j++) {
		struct dra_result *res = &p->devices[j];
		uint32_t phy;
		const char *template_name;
		if (!dra_vnpu_placement(res, &phy, &template_name))
			continue;
		if (res->admin_access)
			return why_invalid(why, why_size,
					   "device %s: administrative access to a placement is not served (no vNPU to "
					   "look at until a workload's claim makes one): ask for the chip",
					   res->device);
		const struct npu_device *chip = chip_of(snap, phy);
		if (!chip)
			return why_invalid(why, why_size, "device %s: chip npu-%" PRIu32 " is not on this node", res->device,
					   phy);
		if (!dynamic || !npu_chip_select_has(dynamic, &chip->chip))
			return why_invalid(why, why_size,
					   "device %s: chip npu-%" PRIu32 " is not carved on demand (--dra-dynamic-vnpus)",
					   res->device, phy);
		if (!has_placement(chip, res->device))
			return why_invalid(why, why_size, "device %s: no such placement on chip npu-%" PRIu32 " (%s)",
					   res->device, phy, chip->chip.name);
		/* Never both on one chip: one an administrator made keeps it static. */
		for (size_t i = 0; i < snap->count; i++) {
			const struct npu_device *v = &snap->devices[i];
			if (v->kind == NPU_DEVICE_VNPU && v->vnpu.phy_id == phy && !dra_vnpu_recorded(cp, v->vnpu.id))
				return why_invalid(why, why_size,
						   "device %s: chip npu-%" PRIu32 " carries %s, which the driver did not make, "
						   "so it serves its static vNPUs only",
						   res->device, phy, v->id);
		}
		if (!chip->healthy) {
			char reason[256];
			npu_device_describe(chip, reason, sizeof(reason));
			return why_invalid(why, why_size, "device %s: chip npu-%" PRIu32 " is Unhealthy: %s", res->device,
					   phy, reason);
		}
		uint32_t id = phy * 16 + 100;
		while (id <= phy * 16 + 115 && id_taken(id, snap, cp, p, j))
			id++;
		if (id > phy * 16 + 115) {
			snprintf(why, why_size, "device %s: chip npu-%" PRIu32 " has no vNPU id left (%" PRIu32 "-%" PRIu32 ")",
				 res->device, phy, phy * 16 + 100, phy * 16 + 115);
			return -ENOSPC;
		}
		res->vnpu_id = id; /* seen by the next placement's search */
	}
	return 0;
}

bool dra_vnpus_pending(const struct dra_prepared *p)
{
	for (size_t j = 0; j < p->n_devices; j++)
		if (p->devices[j].vnpu_id && !p->devices[j].vnpu_created)
			return true;
	return false;
}

int dra_vnpu_device(const struct dra_result *res, const struct npu_snapshot *snap, struct npu_device *ret_device)
{
	uint32_t phy;
	const char *template_name;
	const struct npu_device *chip = NULL;
	if (!res->vnpu_id || !dra_vnpu_placement(res, &phy, &template_name) || !(chip = chip_of(snap, phy)))
		return -ENOENT;
	struct npu_device d = *chip;
	d.kind = NPU_DEVICE_VNPU;
	d.vnpu_count = 0;
	d.vnpu = (struct npu_vnpu){ .id = res->vnpu_id, .phy_id = phy };
	(void)str_copy(d.vnpu.template_name, sizeof(d.vnpu.template_name), template_name); /* templates are short */
	snprintf(d.id, sizeof(d.id), "vnpu-%" PRIu32, res->vnpu_id);
	*ret_device = d;
	return 0;
}

int dra_vnpus_check_record(const struct dra_prepared *p, char *why, size_t why_size)
{
	for (size_t j = 0; j < p->n_devices; j++) {
		const struct dra_result *res = &p->devices[j];
		uint32_t phy;
		const char *t;
		bool placement = dra_vnpu_placement(res, &phy, &t);
		if (!placement && res->vnpu_id)
			return why_invalid(why, why_size, "device %s is no dynamic vNPU's placement, yet names vNPU %" PRIu32,
					   res->device, res->vnpu_id);
		if (placement && (res->vnpu_id < phy * 16 + 100 || res->vnpu_id > phy * 16 + 115))
			return why_invalid(why, why_size, "device %s names vNPU %" PRIu32 ", not one of chip npu-%" PRIu32,
					   res->device, res->vnpu_id, phy);
		for (size_t k = 0; k < j; k++)
			if (res->vnpu_id && p->devices[k].vnpu_id == res->vnpu_id)
				return why_invalid(why, why_size, "vNPU %" PRIu32 " is named twice", res->vnpu_id);
	}
	return 0;
}

size_t dra_vnpus_adopt(struct dra_prepared *p, const struct npu_snapshot *snap)
{
	size_t n = 0;
	for (size_t j = 0; j < p->n_devices; j++) {
		struct dra_result *res = &p->devices[j];
		if (!res->vnpu_id || res->vnpu_created)
			continue;
		for (size_t i = 0; snap && i < snap->count; i++) {
			const struct npu_device *v = &snap->devices[i];
			if (v->kind == NPU_DEVICE_VNPU && v->vnpu.id == res->vnpu_id) {
				res->vnpu_created = true;
				n++;
				break;
			}
		}
	}
	return n;
}
