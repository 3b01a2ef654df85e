/* SPDX-License-Identifier: Apache-2.0 */
#include "daemon/vnpu_resources.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "base/log.h"

/* Adds a resource for each vNPU template of the snapshot that has none yet.
 * vNPUs no resource can list (their template unknown without DCMI, or not
 * a usable name) are reported when their number changes. */
void vnpu_resources_add(struct vnpu_resources *d, struct resource_set *set, const struct npu_snapshot *snap,
			const char *vnpu_base, const char *socket_dir, const char *instance)
{
	size_t unnamed = 0;
	char first_why[RESOURCE_NAME_MAX + 64] = "";

	for (size_t i = 0; i < snap->count; i++) {
		const struct npu_device *dev = &snap->devices[i];
		if (dev->kind != NPU_DEVICE_VNPU)
			continue;
		char name[RESOURCE_NAME_MAX], why[256];
		int r = -EINVAL;
		if (!dev->vnpu.template_name[0])
			snprintf(why, sizeof(why), "its template is unknown: only its device file was found");
		else
			r = resource_vnpu_name(vnpu_base, dev->vnpu.template_name, name, sizeof(name), why,
					       sizeof(why));
		if (r < 0) {
			if (!unnamed++)
				snprintf(first_why, sizeof(first_why), "%s: %s", dev->id, why);
			continue;
		}
		int k = resource_set_find(set, name);
		if (k >= 0 && set->defs[k].kind == RESOURCE_VNPUS &&
		    strcmp(set->defs[k].vnpu_template, dev->vnpu.template_name) == 0)
			continue;
		if (k >= 0) {
			if (!unnamed++)
				snprintf(first_why, sizeof(first_why), "%s: %s already names whole chips", dev->id, name);
			continue;
		}
		if (set->count == RESOURCES_MAX) {
			if (!d->logged_full)
				log_event(LOG_LEVEL_WARN, LOG_EVENT_VNPU_RESOURCE_REFUSED,
					  &(struct log_fields){ .resource = name, .device = dev->id },
					  "%s: cannot advertise %s: already %d resources", dev->id, name, RESOURCES_MAX);
			d->logged_full = true;
			continue;
		}
		struct resource_def *def = &set->defs[set->count];
		*def = (struct resource_def){ .kind = RESOURCE_VNPUS };
		memcpy(def->vnpu_template, dev->vnpu.template_name, sizeof(def->vnpu_template));
		const char *clash = NULL;
		if (resource_def_name(def, name, socket_dir, instance) < 0)
			clash = "its socket path is too long";
		for (size_t j = 0; j < set->count && !clash; j++)
			if (strcmp(set->defs[j].endpoint, def->endpoint) == 0)
				clash = "its socket would be another resource's";
		if (clash) {
			if (!unnamed++)
				snprintf(first_why, sizeof(first_why), "%s: %s: %s", dev->id, name, clash);
			continue;
		}
		set->count++;
		log_event(LOG_LEVEL_INFO, LOG_EVENT_VNPU_TEMPLATE_FOUND,
			  &(struct log_fields){ .resource = def->name, .more = { LOG_STR("template", def->vnpu_template) } },
			  "vNPU template %s found: advertising %s", def->vnpu_template, def->name);
	}
	if (unnamed != d->logged_unnamed && unnamed)
		log_event(LOG_LEVEL_WARN, LOG_EVENT_VNPU_UNADVERTISED,
			  &(struct log_fields){ .more = { LOG_NUM("count", unnamed), LOG_STR("first", first_why) } },
			  "%zu vNPUs are not advertised (%s)", unnamed, first_why);
	d->logged_unnamed = unnamed;
}
