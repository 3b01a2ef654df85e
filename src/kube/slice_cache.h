/* SPDX-License-Identifier: Apache-2.0 */
/* The node's ResourceSlices as the publisher's watch last said them, so that
 * a round reads them here instead of listing them from the API server: the
 * local store of an informer (k8s.io/client-go/tools/cache), for one small
 * selection. It is filled by a watch that streams the list first
 * (sendInitialEvents, kube/client.h) and counts as synced from the bookmark
 * that ends those initial events; then each event keeps it current, and the
 * publisher's own writes go in as the server answered them, so that a round
 * right after a write does not see the slice as it was before it. Events of
 * one object come in the order of its versions, so until the echo of such a
 * write arrives (an event with the version the write was answered with, or
 * a deletion after a delete) the events about that slice are older than
 * what the cache holds, and are passed over: under load a watch runs
 * seconds behind, and a round that read a slice's older version would
 * only earn a conflict (409) and a second write.
 *
 * Every object comes from the server: each is checked as a list's item is
 * (kube_slice_item_of) before it is kept, and the number of slices is
 * bounded by KUBE_LIST_MAX_ITEMS, as a list is. Not locked: the publisher
 * holds its lock around every call. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include <json-c/json.h>

#include "kube/objects.h"
#include "kube/watch.h"

struct kube_slice_cache {
	json_object *slices; /* name -> the slice as stored */
	/* name -> the resourceVersion of this publisher's write whose echo has
	 * not come yet, or "" after a delete of its own */
	json_object *unechoed;
	bool synced;         /* the initial events are all in */
	char version[KUBE_META_VERSION_MAX]; /* of the last event or bookmark */
};

/* An empty cache, not synced. Returns 0 or -ENOMEM. */
int kube_slice_cache_init(struct kube_slice_cache *cache);
void kube_slice_cache_fini(struct kube_slice_cache *cache);

/* Forgets every slice: the next events are a new list's initial ones. */
void kube_slice_cache_restart(struct kube_slice_cache *cache);

/* One watch event: an ADDED or MODIFIED slice is kept (replacing the one of
 * its name), a DELETED one dropped, a BOOKMARK moves the version and, when it
 * ends the initial events, makes the cache synced. Returns 1 when this event
 * did that, 0 for any other event, or with why said: -EBADMSG (an object that
 * is not a slice), -E2BIG (a slice beyond KUBE_LIST_MAX_ITEMS), -ENOMEM. An
 * ERROR event is not for the cache: -EINVAL. After a failure the cache is
 * as it was. */
int kube_slice_cache_apply(struct kube_slice_cache *cache, const struct kube_watch_event *event, char *why,
			   size_t why_size);

/* The server's answer to this publisher's write of a slice (a create or a
 * replace): kept, and the slice's events passed over until its echo. Same
 * returns. */
int kube_slice_cache_store(struct kube_slice_cache *cache, json_object *slice, char *why, size_t why_size);

/* A slice this publisher deleted: dropped, and its events passed over
 * until the deletion's echo. */
void kube_slice_cache_forget(struct kube_slice_cache *cache, const char *name);

/* The slices as a list would give them: their metadata and generations in
 * *ret_list (its resource_version the cache's), and a copy of the objects
 * in *ret_items (an array the caller puts). Returns 0, -EAGAIN when the
 * cache is not synced, or -ENOMEM. */
int kube_slice_cache_read(const struct kube_slice_cache *cache, struct kube_slice_list *ret_list,
			  json_object **ret_items);
