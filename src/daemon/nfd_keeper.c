/* SPDX-License-Identifier: Apache-2.0 */
#include "daemon/nfd_keeper.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/log.h"
#include "base/parse.h"
#include "fault/policy.h"
#include "npu/family.h"
#include "telemetry/nfd.h"

static const char *topology_of(enum npu_family family)
{
	switch (family) {
	case NPU_FAMILY_910:
		return "hccs-ring";
	case NPU_FAMILY_910B:
		return "hccs-mesh";
	case NPU_FAMILY_A3:
		return "die-pairs";
	case NPU_FAMILY_310:
	case NPU_FAMILY_310P:
	case NPU_FAMILY_310B:
		return "pcie";
	default:
		return NULL;
	}
}

void nfd_keeper_sync(struct nfd_keeper *o)
{
	if (!o->nfd_file[0] || !o->devices || !o->started)
		return;
	const struct npu_snapshot *s = o->devices;
	struct nfd_info info = { .replicas = o->replicas };
	const struct npu_chip *first = NULL;
	bool same_name = true, same_family = true;
	for (size_t i = 0; i < s->count; i++) {
		const struct npu_device *dev = &s->devices[i];
		if (dev->kind != NPU_DEVICE_CHIP)
			continue;
		info.count++;
		info.healthy += dev->healthy;
		info.subhealth += dev->policy_judged && dev->policy_level == FAULT_LEVEL_SUB_HEALTH;
		if (!first)
			first = &dev->chip;
		same_name &= strcmp(dev->chip.name, first->name) == 0;
		same_family &= dev->chip.family == first->family;
	}
	if (first && same_name)
		info.product = first->name;
	if (first && same_family && first->family != NPU_FAMILY_UNKNOWN) {
		info.family = npu_family_name(first->family);
		info.topology = topology_of(first->family);
	}
	/* Per chip: the smallest, so that a selector never promises too much. */
	for (size_t i = 0; i < s->count; i++) {
		if (s->devices[i].kind != NPU_DEVICE_CHIP)
			continue;
		uint32_t aicore = s->devices[i].chip.aicore_count;
		if (aicore && (!info.aicore || aicore < info.aicore))
			info.aicore = aicore;
		const struct telemetry_reading *t = telemetry_cache_find(o->telemetry, s->devices[i].id);
		uint64_t mib = t && t->has_hbm ? t->hbm_total_bytes / (1024 * 1024) : 0;
		if (mib && (!info.memory_mib || mib < info.memory_mib))
			info.memory_mib = mib;
	}
	info.driver = inventory_status(o->inventory)->driver_version;

	char text[4096];
	if (info.count == 0) {
		/* No chips: no NPU labels at all. */
		int r = nfd_remove(o->nfd_file);
		if (r == 0 && o->nfd_written)
			log_info("removed the NFD features file %s: no chips", o->nfd_file);
		free(o->nfd_written);
		o->nfd_written = NULL;
		return;
	}
	if (nfd_render(&info, text, sizeof(text)) < 0)
		return; /* cannot happen: a dozen short lines */
	if (o->nfd_written && strcmp(text, o->nfd_written) == 0 && path_exists(o->nfd_file))
		return;
	int r = nfd_write(o->nfd_file, text);
	if (r < 0) {
		if (r != o->nfd_error)
			log_warn("cannot write the NFD features file %s: %s%s; node labels will follow once it can be "
				 "written",
				 o->nfd_file, strerror(-r),
				 r == -ENOENT ? " (is Node Feature Discovery installed, its features.d mounted?)" : "");
		o->nfd_error = r;
		return;
	}
	if (!o->nfd_written || o->nfd_error)
		log_event(LOG_LEVEL_INFO, LOG_EVENT_NFD_WRITTEN,
			  &(struct log_fields){ .more = { LOG_STR("path", o->nfd_file), LOG_NUM("chips", info.count),
							  LOG_NUM("healthy", info.healthy) } },
			  "wrote the NFD features file %s: %zu chips, %zu healthy", o->nfd_file, info.count, info.healthy);
	else
		log_event(LOG_LEVEL_DEBUG, LOG_EVENT_NFD_REWRITTEN,
			  &(struct log_fields){ .more = { LOG_STR("path", o->nfd_file), LOG_NUM("chips", info.count),
							  LOG_NUM("healthy", info.healthy) } },
			  "rewrote the NFD features file %s: %zu chips, %zu healthy", o->nfd_file, info.count,
			  info.healthy);
	o->nfd_error = 0;
	free(o->nfd_written);
	o->nfd_written = strdup(text);
}

int nfd_keeper_init(struct nfd_keeper *o, const struct nfd_keeper_options *options)
{
	*o = (struct nfd_keeper){ .replicas = options->replicas,
				  .inventory = options->inventory,
				  .telemetry = options->telemetry };
	return str_copy(o->nfd_file, sizeof(o->nfd_file), options->file);
}

void nfd_keeper_start(struct nfd_keeper *o)
{
	o->started = true;
	nfd_keeper_sync(o);
}

void nfd_keeper_node(struct nfd_keeper *o, struct npu_snapshot *snapshot)
{
	npu_snapshot_unref(o->devices);
	o->devices = npu_snapshot_ref(snapshot);
	nfd_keeper_sync(o);
}

void nfd_keeper_stop(struct nfd_keeper *o, bool remove_files)
{
	if (o->nfd_written && remove_files) {
		int r = nfd_remove(o->nfd_file);
		if (r < 0)
			log_warn("cannot remove the NFD features file %s: %s", o->nfd_file, strerror(-r));
		else
			log_info("removed the NFD features file %s", o->nfd_file);
	}
	free(o->nfd_written);
	o->nfd_written = NULL;
	npu_snapshot_unref(o->devices);
	o->devices = NULL;
}
