/* SPDX-License-Identifier: Apache-2.0 */
/* The node's ResourceSlices as the watch said them (see slice_cache.h). */
#include "kube/slice_cache.h"

#include <errno.h>
#include <string.h>

#include "base/parse.h"

int kube_slice_cache_init(struct kube_slice_cache *cache)
{
	*cache = (struct kube_slice_cache){ 0 };
	cache->slices = json_object_new_object();
	return cache->slices ? 0 : -ENOMEM;
}

void kube_slice_cache_fini(struct kube_slice_cache *cache)
{
	json_object_put(cache->slices);
	cache->slices = NULL;
}

void kube_slice_cache_restart(struct kube_slice_cache *cache)
{
	json_object *empty = json_object_new_object();
	/* Without memory for an empty map, emptying the old one does as well. */
	if (empty) {
		json_object_put(cache->slices);
		cache->slices = empty;
	} else {
		while (json_object_object_length(cache->slices) > 0) {
			struct lh_entry *first = json_object_get_object(cache->slices)->head;
			json_object_object_del(cache->slices, (const char *)lh_entry_k(first));
		}
	}
	cache->synced = false;
	cache->version[0] = '\0';
}

int kube_slice_cache_store(struct kube_slice_cache *cache, json_object *slice, char *why, size_t why_size)
{
	struct kube_slice_item item;
	int r = kube_slice_item_of(slice, &item, why, why_size, "");
	if (r < 0)
		return r;
	if (!json_object_object_get_ex(cache->slices, item.meta.name, NULL) &&
	    json_object_object_length(cache->slices) >= KUBE_LIST_MAX_ITEMS)
		return why_fail(why, why_size, -E2BIG, "more than %d ResourceSlices watched", KUBE_LIST_MAX_ITEMS);
	json_object *copy = NULL;
	/* A copy of its own: the event's tree goes when the event does, and
	 * json-c's reference counts are not for sharing between threads. */
	if (json_object_deep_copy(slice, &copy, NULL) < 0 ||
	    json_object_object_add(cache->slices, item.meta.name, copy) < 0) {
		json_object_put(copy);
		return why_fail(why, why_size, -ENOMEM, "out of memory");
	}
	return 0;
}

void kube_slice_cache_forget(struct kube_slice_cache *cache, const char *name)
{
	json_object_object_del(cache->slices, name);
}

int kube_slice_cache_apply(struct kube_slice_cache *cache, const struct kube_watch_event *event, char *why,
			   size_t why_size)
{
	int r = 0;
	switch (event->type) {
	case KUBE_WATCH_ADDED:
	case KUBE_WATCH_MODIFIED:
		r = kube_slice_cache_store(cache, event->object, why, why_size);
		break;
	case KUBE_WATCH_DELETED:
		kube_slice_cache_forget(cache, event->name);
		break;
	case KUBE_WATCH_BOOKMARK:
		if (event->initial_events_end && !cache->synced) {
			cache->synced = true;
			r = 1;
		}
		break;
	case KUBE_WATCH_ERROR:
	default:
		return why_fail(why, why_size, -EINVAL, "not an event for the cache");
	}
	if (r >= 0)
		memcpy(cache->version, event->resource_version, sizeof(cache->version));
	return r;
}

int kube_slice_cache_read(const struct kube_slice_cache *cache, struct kube_slice_list *ret_list,
			  json_object **ret_items)
{
	if (!cache->synced)
		return -EAGAIN;
	json_object *items = json_object_new_array();
	if (!items)
		return -ENOMEM;
	size_t n = 0;
	json_object_object_foreach(cache->slices, name, slice)
	{
		json_object *copy = NULL;
		/* Checked when it was kept: only memory can fail here. */
		if (n >= KUBE_LIST_MAX_ITEMS || kube_slice_item_of(slice, &ret_list->items[n], NULL, 0, "") < 0 ||
		    json_object_deep_copy(slice, &copy, NULL) < 0 || json_object_array_add(items, copy) < 0) {
			json_object_put(copy);
			json_object_put(items);
			return -ENOMEM;
		}
		(void)name;
		n++;
	}
	ret_list->count = n;
	memcpy(ret_list->resource_version, cache->version, sizeof(ret_list->resource_version));
	*ret_items = items;
	return 0;
}
