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
	cache->unechoed = json_object_new_object();
	if (cache->slices && cache->unechoed)
		return 0;
	kube_slice_cache_fini(cache);
	return -ENOMEM;
}

void kube_slice_cache_fini(struct kube_slice_cache *cache)
{
	json_object_put(cache->slices);
	json_object_put(cache->unechoed);
	cache->slices = cache->unechoed = NULL;
}

/* Empties a map in place: nothing to allocate, so nothing can fail. */
static void empty(json_object *map)
{
	while (json_object_object_length(map) > 0) {
		struct lh_entry *first = json_object_get_object(map)->head;
		json_object_object_del(map, (const char *)lh_entry_k(first));
	}
}

void kube_slice_cache_restart(struct kube_slice_cache *cache)
{
	empty(cache->slices);
	empty(cache->unechoed);
	cache->synced = false;
	cache->version[0] = '\0';
}

/* Checks slice and keeps a copy of it; its name in *ret_item. */
static int keep(struct kube_slice_cache *cache, json_object *slice, struct kube_slice_item *ret_item, char *why,
		size_t why_size)
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
	*ret_item = item;
	return 0;
}

/* Marks the slice name as written by this publisher at version ("" for a
 * delete) until the echo. Without memory for the mark, the cache cannot
 * tell the echo from older events: it starts over (rounds list until the
 * watch streams the list again). */
static void unechoed(struct kube_slice_cache *cache, const char *name, const char *version)
{
	json_object *v = json_object_new_string(version);
	if (!v || json_object_object_add(cache->unechoed, name, v) < 0) {
		json_object_put(v);
		kube_slice_cache_restart(cache);
	}
}

int kube_slice_cache_store(struct kube_slice_cache *cache, json_object *slice, char *why, size_t why_size)
{
	struct kube_slice_item item;
	int r = keep(cache, slice, &item, why, why_size);
	if (r == 0)
		unechoed(cache, item.meta.name, item.meta.resource_version);
	return r;
}

void kube_slice_cache_forget(struct kube_slice_cache *cache, const char *name)
{
	json_object_object_del(cache->slices, name);
	unechoed(cache, name, "");
}

/* Whether an event about a slice is older than the publisher's own write
 * the cache holds; its echo ends the wait. */
static bool stale(struct kube_slice_cache *cache, const struct kube_watch_event *event)
{
	json_object *mark;
	if (!json_object_object_get_ex(cache->unechoed, event->name, &mark))
		return false;
	const char *version = json_object_get_string(mark);
	bool echo = version[0] ? event->type != KUBE_WATCH_DELETED && strcmp(version, event->resource_version) == 0
			       : event->type == KUBE_WATCH_DELETED;
	if (echo)
		json_object_object_del(cache->unechoed, event->name);
	return !echo;
}

int kube_slice_cache_apply(struct kube_slice_cache *cache, const struct kube_watch_event *event, char *why,
			   size_t why_size)
{
	int r = 0;
	struct kube_slice_item item;
	switch (event->type) {
	case KUBE_WATCH_ADDED:
	case KUBE_WATCH_MODIFIED:
		if (!stale(cache, event))
			r = keep(cache, event->object, &item, why, why_size);
		break;
	case KUBE_WATCH_DELETED:
		if (!stale(cache, event))
			json_object_object_del(cache->slices, event->name);
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
