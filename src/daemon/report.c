/* SPDX-License-Identifier: Apache-2.0 */
#include "daemon/report.h"

#include <stdio.h>
#include <string.h>

#include "base/log.h"
#include "base/strbuf.h"
#include "plugin/allocate.h"
#include "plugin/replica.h"

void report_status(struct report *rep, const struct inventory_status *st, const struct config *c)
{
	struct inventory_status *old = &rep->status;
	bool first = !rep->once;

	if (first || st->source != old->source || strcmp(st->dcmi_why, old->dcmi_why) != 0) {
		if (st->source == INVENTORY_SOURCE_DCMI)
			log_event(LOG_LEVEL_INFO, LOG_EVENT_DCMI_LOADED,
				  &(struct log_fields){ .more = { LOG_STR("path", st->dcmi_path),
								  LOG_STR("driver", st->driver_version) } },
				  "using DCMI from %s (driver %s)", st->dcmi_path,
				  st->driver_version[0] ? st->driver_version : "version unknown");
		else if (st->source == INVENTORY_SOURCE_DEVFS && c->backend == NPU_BACKEND_AUTO)
			log_event(LOG_LEVEL_WARN, LOG_EVENT_DCMI_UNAVAILABLE,
				  &(struct log_fields){ .more = { LOG_STR("reason", st->dcmi_why),
								  LOG_STR("fallback", "devfs"), LOG_STR("path", c->dev_dir) } },
				  "DCMI unavailable (%s); using device files under %s, health = node present; "
				  "retrying DCMI every %lldms",
				  st->dcmi_why, c->dev_dir, (long long)c->health_interval_ms);
		else if (st->source == INVENTORY_SOURCE_DEVFS)
			log_event(LOG_LEVEL_INFO, LOG_EVENT_DEVFS_USED, &(struct log_fields){ .more = { LOG_STR("path", c->dev_dir) } },
				  "using device files under %s", c->dev_dir);
		else
			log_event(LOG_LEVEL_WARN, LOG_EVENT_DCMI_UNAVAILABLE,
				  &(struct log_fields){ .more = { LOG_STR("reason", st->dcmi_why), LOG_STR("fallback", "none") } },
				  "DCMI unavailable (%s); no devices until it loads, retrying every %lldms", st->dcmi_why,
				  (long long)c->health_interval_ms);
	}
	if (st->source == INVENTORY_SOURCE_DCMI &&
	    (first || old->source != INVENTORY_SOURCE_DCMI || st->events != old->events)) {
		if (st->events)
			log_event(LOG_LEVEL_INFO, LOG_EVENT_DCMI_EVENTS_SUBSCRIBED, NULL, "subscribed to DCMI fault events");
		else
			log_event(LOG_LEVEL_WARN, LOG_EVENT_DCMI_EVENTS_UNAVAILABLE, NULL,
				  "DCMI fault events unavailable (%s); polling health every %lldms",
				  strerror(-st->events_error), (long long)c->health_interval_ms);
	}
	if ((first && !st->driver_ready) ||
	    (!first && (st->driver_ready != old->driver_ready || st->devfs_error != old->devfs_error))) {
		if (st->driver_ready)
			log_event(LOG_LEVEL_INFO, LOG_EVENT_DRIVER_READY, NULL, "driver ready: %s/davinci_manager is present",
				  c->dev_dir);
		else if (st->devfs_error)
			log_warn("cannot check %s/davinci_manager: %s; every device is Unhealthy", c->dev_dir,
				 strerror(-st->devfs_error));
		else
			log_event(LOG_LEVEL_WARN, LOG_EVENT_DRIVER_NOT_READY, NULL,
				  "driver not ready: %s/davinci_manager is missing; every device is Unhealthy", c->dev_dir);
	}
	if (st->discovery_error.code != old->discovery_error.code ||
	    (st->discovery_error.call != old->discovery_error.call && st->discovery_error.code)) {
		if (st->discovery_error.code)
			log_warn("%s failed with %d; serving the chips that answered",
				 st->discovery_error.call ? st->discovery_error.call : "DCMI",
				 st->discovery_error.code);
	}
	if (st->devfs_error != old->devfs_error && st->devfs_error && st->driver_ready)
		log_warn("cannot read %s: %s", c->dev_dir, strerror(-st->devfs_error));
	*old = *st;
	rep->once = true;
}

/* The NUMA node of each chip, and why the first unknown one is unknown:
 * what the kubelet's topology manager will align pods with. */
static void report_numa(const struct npu_snapshot *snap, size_t chips)
{
	char nodes[1024], why[256] = "";
	struct strbuf sb;
	strbuf_init(&sb, nodes, sizeof(nodes), ",...");
	size_t known = 0;
	for (size_t i = 0; i < chips; i++) {
		const struct npu_device *dev = &snap->devices[i];
		if (dev->has_numa) {
			known++;
			strbuf_printf(&sb, "%s%s=%u", i ? "," : "", dev->id, dev->numa_node);
		} else {
			strbuf_printf(&sb, "%s%s=?", i ? "," : "", dev->id);
			if (!why[0]) {
				int n = snprintf(why, sizeof(why), "%s: ", dev->id);
				npu_device_describe_numa(dev, why + n, sizeof(why) - (size_t)n);
			}
		}
	}
	if (known == 0)
		log_info("NUMA node unknown for every chip, none advertised (%s)", why);
	else if (known < chips)
		log_event(LOG_LEVEL_INFO, LOG_EVENT_CHIPS_NUMA,
			  &(struct log_fields){ .more = { LOG_STR("numa", nodes), LOG_STR("unknown", why) } },
			  "NUMA node of each chip: %s (%s)", nodes, why);
	else
		log_event(LOG_LEVEL_INFO, LOG_EVENT_CHIPS_NUMA, &(struct log_fields){ .more = { LOG_STR("numa", nodes) } },
			  "NUMA node of each chip: %s", nodes);
}

void report_devices(struct report *rep, const struct npu_snapshot *snap, const struct resource_set *resources,
		    int64_t retry_ms)
{
	const struct npu_snapshot *old = rep->devices;
	bool same_ids = old && old->count == snap->count;
	for (size_t i = 0; same_ids && i < snap->count; i++)
		same_ids = strcmp(old->devices[i].id, snap->devices[i].id) == 0;

	size_t chips = 0;
	while (chips < snap->count && snap->devices[chips].kind == NPU_DEVICE_CHIP)
		chips++;
	if (!same_ids) {
		if (chips == 0) {
			log_event(LOG_LEVEL_WARN, LOG_EVENT_CHIPS_NONE, NULL,
				  "no NPU chips found; advertising 0 devices and retrying every %lldms", (long long)retry_ms);
		} else {
			char ids[1024];
			struct strbuf sb;
			strbuf_init(&sb, ids, sizeof(ids), ",...");
			for (size_t i = 0; i < chips; i++)
				if (strbuf_printf(&sb, "%s%s", i ? "," : "", snap->devices[i].id) < 0)
					break;
			/* A mixed node names each chip name and family once. */
			char kinds[256], families[128];
			struct strbuf kb, fb;
			strbuf_init(&kb, kinds, sizeof(kinds), ",...");
			strbuf_init(&fb, families, sizeof(families), ",...");
			for (size_t i = 0; i < chips; i++) {
				const struct npu_chip *chip = &snap->devices[i].chip;
				bool seen = false;
				for (size_t j = 0; j < i && !seen; j++)
					seen = strcmp(snap->devices[j].chip.name, chip->name) == 0 &&
					       snap->devices[j].chip.family == chip->family;
				if (!seen)
					strbuf_printf(&kb, "%s%s%s, family %s", i ? "; " : "", chip->name[0] ? "chip " : "",
						      chip->name[0] ? chip->name : "name unknown", npu_family_name(chip->family));
				bool family_seen = false;
				for (size_t j = 0; j < i && !family_seen; j++)
					family_seen = snap->devices[j].chip.family == chip->family;
				if (!family_seen)
					strbuf_printf(&fb, "%s%s", i ? "," : "", npu_family_name(chip->family));
			}
			log_event(LOG_LEVEL_INFO, LOG_EVENT_CHIPS_FOUND,
				  &(struct log_fields){ .more = { LOG_NUM("count", chips), LOG_STR("families", families),
								  LOG_STR("devices", ids) } },
				  "found %zu NPU chips (%s): %s", chips, kinds, ids);
			report_numa(snap, chips);
		}
		if (chips < snap->count) {
			char vnpus[1024];
			struct strbuf sb;
			strbuf_init(&sb, vnpus, sizeof(vnpus), ",...");
			for (size_t i = chips; i < snap->count; i++) {
				const struct npu_device *v = &snap->devices[i];
				if (strbuf_printf(&sb, "%s%s (%s of npu-%u)", i > chips ? ", " : "", v->id,
						  v->vnpu.template_name[0] ? v->vnpu.template_name : "template unknown",
						  v->chip.phy_id) < 0)
					break;
			}
			log_info("found %zu vNPUs: %s", snap->count - chips, vnpus);
		}
	}
	for (size_t i = 0; i < snap->count; i++) {
		const struct npu_device *dev = &snap->devices[i];
		const struct npu_device *before = old ? npu_snapshot_find(old, dev->id) : NULL;
		bool was_healthy = before ? before->healthy : true;
		char why[256];
		/* The resource that lists it, for --log-format json. */
		const char *resource = NULL;
		for (size_t k = 0; k < resources->count && !resource; k++)
			if (resource_lists(resources, &resources->defs[k], dev))
				resource = resources->defs[k].name;
		const struct log_fields about = { .resource = resource, .device = dev->id };
		if (!dev->healthy && (was_healthy || !before || before->fault != dev->fault)) {
			npu_device_describe(dev, why, sizeof(why));
			char code[16] = "";
			if (dev->n_fault_codes)
				(void)snprintf(code, sizeof(code), "%08X", dev->fault_codes[0]);
			const struct log_fields unhealthy = {
				.resource = resource,
				.device = dev->id,
				.more = { LOG_STR("fault", npu_fault_name(dev->fault)),
					  LOG_NUM(dev->fault == NPU_FAULT_HEALTH_LEVEL ? "health" : NULL, dev->dcmi_health),
					  LOG_NUM(dev->fault == NPU_FAULT_HEALTH_CALL ? "dcmi_error" : NULL, dev->dcmi_code),
					  LOG_STR("code", code), LOG_STR("reason", why),
					  LOG_STR(dev->fault == NPU_FAULT_VENDOR_TIMEOUT ? "call" : NULL, dev->overdue_call) },
			};
			log_event(LOG_LEVEL_WARN, LOG_EVENT_DEVICE_UNHEALTHY, &unhealthy, "%s is Unhealthy: %s", dev->id, why);
		} else if (dev->healthy && !was_healthy) {
			log_event(LOG_LEVEL_INFO, LOG_EVENT_DEVICE_HEALTHY, &about, "%s recovered: Healthy", dev->id);
		}
	}
	npu_snapshot_unref(rep->devices);
	rep->devices = npu_snapshot_ref((struct npu_snapshot *)(uintptr_t)snap);
}

/* "npu-0,npu-1" into sb, or "none". */
static void put_ids(struct strbuf *sb, const struct npu_snapshot *snap)
{
	if (snap->count == 0)
		(void)strbuf_printf(sb, "none");
	for (size_t i = 0; i < snap->count; i++)
		if (strbuf_printf(sb, "%s%s", i ? "," : "", snap->devices[i].id) < 0)
			return;
}

void report_front_ends(struct report *rep, const struct npu_snapshot *dra, const struct npu_snapshot *device_plugin,
		       bool device_plugin_on)
{
	char now[sizeof(rep->front_ends)], dra_ids[sizeof(now)], other_ids[sizeof(now)];
	struct strbuf sb, dra_sb, other_sb;
	strbuf_init(&sb, now, sizeof(now), ",...");
	strbuf_init(&dra_sb, dra_ids, sizeof(dra_ids), ",...");
	strbuf_init(&other_sb, other_ids, sizeof(other_ids), ",...");
	put_ids(&sb, dra);
	put_ids(&dra_sb, dra);
	put_ids(&other_sb, device_plugin);
	if (device_plugin_on) {
		(void)strbuf_printf(&sb, "; the device plugin: ");
		put_ids(&sb, device_plugin);
	} else if (device_plugin->count) {
		(void)strbuf_printf(&sb, "; served by neither (not in --dra-chips): ");
		put_ids(&sb, device_plugin);
	}
	if (strcmp(now, rep->front_ends) == 0)
		return;
	/* The chips neither serves are the device plugin's share while it is off. */
	const struct log_fields f = { .more = { LOG_STR("dra", dra_ids),
						LOG_STR(device_plugin_on ? "device_plugin" : NULL, other_ids),
						LOG_STR(!device_plugin_on && device_plugin->count ? "neither" : NULL,
							other_ids) } };
	log_event(LOG_LEVEL_INFO, LOG_EVENT_FRONT_ENDS, &f, "front ends: the DRA driver: %s", now);
	memcpy(rep->front_ends, now, sizeof(now));
}

void report_fini(struct report *rep)
{
	npu_snapshot_unref(rep->devices);
	rep->devices = NULL;
}

void report_start(const struct config *c, const struct serving *s, const char *cdi_path)
{
	const struct resource_def *def = serving_default(s);
	log_info("ascend-device-plugin %s starting: resource %s, socket %s, backend %s, health interval %lldms",
		 ASCEND_VERSION, def->name, def->socket_path, npu_backend_mode_name(c->backend),
		 (long long)c->health_interval_ms);
	if (replica_sharing(&def->sharing))
		log_event(LOG_LEVEL_INFO, LOG_EVENT_TIME_SLICING,
			  &(struct log_fields){ .resource = def->name,
						.more = { LOG_NUM("replicas", def->sharing.replicas),
							  LOG_NUM("one_per_container",
								  def->sharing.fail_requests_greater_than_one) } },
			  "time-slicing: each chip is advertised %u times (no memory or compute isolation)%s",
			  def->sharing.replicas,
			  def->sharing.fail_requests_greater_than_one ? ", a container may ask for one" : "");
	if (c->device_list_strategies != CONFIG_STRATEGY_NATIVE) {
		char strategies[64];
		(void)config_strategies_format(c->device_list_strategies, strategies, sizeof(strategies)); /* fits */
		if (s->strategies & ALLOCATE_STRATEGY_CDI)
			log_info("device-list strategy %s: CDI spec %s, kind %s", strategies, cdi_path, s->cdi.kind);
		else
			log_info("device-list strategy %s", strategies);
	}
}
