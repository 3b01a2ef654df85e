/* SPDX-License-Identifier: Apache-2.0 */
#include "daemon/device_share.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "base/log.h"
#include "plugin/replica.h"

static bool listed(const uint32_t *phys, size_t n, uint32_t phy)
{
	for (size_t i = 0; i < n; i++)
		if (phys[i] == phy)
			return true;
	return false;
}

/* The chips time-slicing would share: a chip a time-sliced resource lists. */
static bool sliced_chip(const struct resource_set *resources, const struct npu_device *d)
{
	return d->kind == NPU_DEVICE_CHIP && resource_set_sharing(resources, d) != NULL;
}

/* The fields every line of this module carries. */
#define CHIP_FIELDS(d)                                                                                      \
	LOG_NUM("phy", (d)->chip.phy_id), LOG_NUM("card", (d)->chip.card_id), LOG_NUM("chip", (d)->chip.device_id)

bool device_share_enable(struct device_share *s, struct dcmi_lib *lib, const struct npu_snapshot *snap,
			 const struct resource_set *resources, bool enable)
{
	bool switched = false;
	for (size_t i = 0; enable && lib && i < snap->count; i++) {
		const struct npu_device *d = &snap->devices[i];
		if (!sliced_chip(resources, d) || d->share != NPU_SHARE_OFF || listed(s->tried, s->n_tried, d->chip.phy_id) ||
		    s->n_tried == NPU_MAX_CHIPS)
			continue;
		int r = dcmi_chip_share_enable(lib, &d->chip);
		/* DCMI stuck in another call was not asked: ask at the next refresh. */
		if (r == -EBUSY)
			continue;
		s->tried[s->n_tried++] = d->chip.phy_id;
		const struct log_fields f = { .device = d->id, .more = { CHIP_FIELDS(d) } };
		if (r == 0) {
			log_event(LOG_LEVEL_INFO, LOG_EVENT_DEVICE_SHARE_ENABLED, &f,
				  "%s: switched its device-share mode on (sharing.timeSlicing.enableDeviceShare): "
				  "time-slicing shares it",
				  d->id);
			switched = true;
			continue;
		}
		struct dcmi_error e = dcmi_last_error(lib);
		char cause[160];
		if (r == -EOPNOTSUPP && e.code == 0)
			snprintf(cause, sizeof(cause), "the DCMI library lacks dcmi_set_device_share_enable");
		else if (r == -ETIMEDOUT)
			snprintf(cause, sizeof(cause), "dcmi_set_device_share_enable did not return within %d ms",
				 DCMI_CALL_DEADLINE_MS);
		else
			snprintf(cause, sizeof(cause), "dcmi_set_device_share_enable failed with %d", e.code);
		const struct log_fields ff = { .device = d->id,
					       .more = { CHIP_FIELDS(d), LOG_STR("cause", cause), LOG_NUM("code", e.code) } };
		log_event(LOG_LEVEL_WARN, LOG_EVENT_DEVICE_SHARE_ENABLE_FAILED, &ff,
			  "%s: cannot switch its device-share mode on: %s; it stays served whole (not tried again "
			  "until the plugin restarts)",
			  d->id, cause);
	}
	return switched;
}

size_t device_share_report(struct device_share *s, const struct npu_snapshot *snap,
			   const struct resource_set *resources, const struct inventory_status *status, bool enable)
{
	if (status->share_unsupported && !s->said_unknown) {
		log_event(LOG_LEVEL_INFO, LOG_EVENT_DEVICE_SHARE_UNKNOWN, NULL,
			  "the DCMI library cannot tell the chips' device-share mode (dcmi_get_device_share_enable is "
			  "missing or not supported): time-slicing serves them as configured");
		s->said_unknown = true;
	}
	uint32_t whole[NPU_MAX_CHIPS];
	size_t n = 0;
	for (size_t i = 0; i < snap->count && n < NPU_MAX_CHIPS; i++) {
		const struct npu_device *d = &snap->devices[i];
		const struct replica_options *sharing = d->kind == NPU_DEVICE_CHIP ? resource_set_sharing(resources, d) : NULL;
		if (!sharing || !replica_held_whole(sharing, d))
			continue;
		whole[n++] = d->chip.phy_id;
		if (listed(s->whole, s->n_whole, d->chip.phy_id))
			continue;
		const struct log_fields f = { .device = d->id, .more = { CHIP_FIELDS(d) } };
		log_event(LOG_LEVEL_WARN, LOG_EVENT_DEVICE_SHARE_OFF, &f,
			  "%s: time-slicing would share it in %u replicas, but its device-share mode is off: served "
			  "whole, to one container at a time; to share it run npu-smi set -t device-share -i %d -c %d "
			  "-d 1%s",
			  d->id, sharing->replicas, d->chip.card_id, d->chip.device_id,
			  enable ? "" : ", or set sharing.timeSlicing.enableDeviceShare: true");
	}
	for (size_t i = 0; i < s->n_whole; i++) {
		if (listed(whole, n, s->whole[i]))
			continue;
		char id[NPU_DEVICE_ID_MAX];
		snprintf(id, sizeof(id), "npu-%u", s->whole[i]);
		const struct npu_device *d = npu_snapshot_find(snap, id);
		if (!d || !sliced_chip(resources, d))
			continue; /* gone, or no longer time-sliced: nothing to say of its sharing */
		const struct log_fields f = { .device = d->id, .more = { CHIP_FIELDS(d) } };
		log_event(LOG_LEVEL_INFO, LOG_EVENT_DEVICE_SHARE_ON, &f,
			  "%s: its device-share mode is on again: time-slicing shares it", d->id);
	}
	memcpy(s->whole, whole, n * sizeof(whole[0]));
	s->n_whole = n;
	return n;
}
