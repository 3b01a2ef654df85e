/* SPDX-License-Identifier: Apache-2.0 */
#include "support/gated_fields.h"

#include "kube/slices.h"

static void drop_from_device(json_object *device, unsigned drops)
{
	if (drops & KUBE_LACKS_TAINTS)
		json_object_object_del(device, "taints");
	if (drops & KUBE_LACKS_PARTITIONS)
		json_object_object_del(device, "consumesCounters");
	if (!(drops & KUBE_LACKS_SHARING))
		return;
	json_object_object_del(device, "allowMultipleAllocations");
	json_object *capacity = NULL;
	if (json_object_object_get_ex(device, "capacity", &capacity) && json_object_is_type(capacity, json_type_object)) {
		json_object_object_foreach(capacity, name, value)
		{
			(void)name;
			if (json_object_is_type(value, json_type_object))
				json_object_object_del(value, "requestPolicy");
		}
	}
}

void gated_fields_drop(json_object *slice, unsigned drops)
{
	json_object *spec = NULL, *devices = NULL;
	if (!json_object_object_get_ex(slice, "spec", &spec) || !json_object_is_type(spec, json_type_object))
		return;
	if (drops & KUBE_LACKS_PARTITIONS)
		json_object_object_del(spec, "sharedCounters");
	if (!json_object_object_get_ex(spec, "devices", &devices) || !json_object_is_type(devices, json_type_array))
		return;
	for (size_t i = 0; i < json_object_array_length(devices); i++) {
		json_object *device = json_object_array_get_idx(devices, i);
		if (json_object_is_type(device, json_type_object))
			drop_from_device(device, drops);
	}
}
