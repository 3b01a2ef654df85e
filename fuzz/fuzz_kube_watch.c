/* SPDX-License-Identifier: Apache-2.0 */
/* Fuzzes the watch stream's splitter and event reader (kube/watch.c): the
 * input is a watch's body. It is fed whole, and again in chunks whose size
 * the first byte picks (the transport cuts anywhere), with a small bound on
 * a line so that the oversize path is reached too; both must see the same
 * events up to the first failure, every failure must say why, and every
 * event's strings must be terminated within their room. Each event also
 * goes into the publisher's copy of the slices (kube/slice_cache.c), which
 * must stay within its bound and read back what it holds. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kube/slice_cache.h"
#include "kube/watch.h"

struct tally {
	size_t events;
	uint64_t sum; /* of the events' types, names and versions, to compare two runs */
	struct kube_slice_cache *cache; /* NULL: not fed */
};

static int count(void *ctx, const struct kube_watch_event *ev)
{
	struct tally *t = ctx;
	if (!memchr(ev->name, '\0', sizeof(ev->name)) || !memchr(ev->resource_version, '\0', sizeof(ev->resource_version)) ||
	    !memchr(ev->message, '\0', sizeof(ev->message)) || !ev->object || (unsigned)ev->type > KUBE_WATCH_ERROR)
		abort();
	t->events++;
	if (t->cache) {
		char why[160] = "";
		int r = kube_slice_cache_apply(t->cache, ev, why, sizeof(why));
		if ((r < 0 && (why[0] == '\0' || (r != -EBADMSG && r != -E2BIG && r != -EINVAL && r != -ENOMEM))) ||
		    (r == -EINVAL) != (ev->type == KUBE_WATCH_ERROR) ||
		    json_object_object_length(t->cache->slices) > KUBE_LIST_MAX_ITEMS)
			abort();
	}
	t->sum = t->sum * 31 + (uint64_t)ev->type + strlen(ev->name) * 7 + strlen(ev->resource_version) * 13 +
		 (uint64_t)ev->code;
	return 0;
}

/* Feeds data in chunks of step; the first failure, or kube_watch_end's. */
static int run(const char *data, size_t size, size_t step, size_t max, struct tally *t)
{
	struct kube_watch_lines w;
	char why[256] = "";
	int r = 0;
	kube_watch_lines_init(&w, max);
	for (size_t at = 0; at < size && r == 0; at += step)
		r = kube_watch_feed(&w, data + at, size - at < step ? size - at : step, count, t, why, sizeof(why));
	if (r == 0)
		r = kube_watch_end(&w, why, sizeof(why));
	if ((r < 0 && why[0] == '\0') || (r != 0 && r != -EBADMSG && r != -EMSGSIZE && r != -ENOMEM) ||
	    (w.buf && w.cap > w.max))
		abort();
	kube_watch_lines_fini(&w);
	return r;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *body = (const char *)data;
	size_t step = size ? (size_t)data[0] % 64 + 1 : 1;
	struct kube_slice_cache cache;
	if (kube_slice_cache_init(&cache) < 0)
		return 0;
	struct tally whole = { .cache = &cache }, cut = { 0 }, small = { 0 };
	int a = run(body, size, size ? size : 1, 0, &whole);
	/* Synced or not, what it holds reads back whole. */
	cache.synced = true;
	struct kube_slice_list list;
	json_object *items = NULL;
	if (kube_slice_cache_read(&cache, &list, &items) == 0 &&
	    (list.count != (size_t)json_object_object_length(cache.slices) ||
	     json_object_array_length(items) != list.count))
		abort();
	json_object_put(items);
	kube_slice_cache_fini(&cache);
	int b = run(body, size, step, 0, &cut);
	if (a != b || whole.events != cut.events || whole.sum != cut.sum)
		abort();
	/* A bound of 128 bytes: a longer line fails, the same way in any cut. */
	struct tally small_cut = { 0 };
	if (run(body, size, size ? size : 1, 128, &small) != run(body, size, step, 128, &small_cut) ||
	    small.events != small_cut.events)
		abort();
	return 0;
}
