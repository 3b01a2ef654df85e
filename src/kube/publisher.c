/* SPDX-License-Identifier: Apache-2.0 */
/* The ResourceSlice publisher's thread (see publisher.h). */
#include "kube/publisher.h"

#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include "base/k8s_names.h"
#include "base/parse.h"
#include "base/wait.h"
#include "kube/objects.h"
#include "kube/slice_cache.h"
#include "kube/slices.h"

#define SLICES_PATH "/apis/resource.k8s.io/v1/resourceslices"
/* Conflicting writes of one slice before the round gives up (and backs off). */
#define CONFLICT_RETRIES 3
/* How long a watch of the slices lasts, unless the options say: at random
 * between this and twice it, as client-go's reflector does
 * (k8s.io/client-go/tools/cache/reflector.go, defaultMinWatchTimeout), so
 * that a fleet's watches, started together, do not end together. */
#define WATCH_TIMEOUT_S 300
/* A watch the server ends sooner than this counts as a failure (backed off
 * from): one that ends every watch at once would be watched again in a
 * loop otherwise. */
#define WATCH_MIN_MS 1000
/* How long a round waits for a streamed list of the slices (the watch's
 * initial events) before it lists them itself: the watch answers within a
 * round trip when all is well, and a round that waited longer would delay
 * a fault's taint. */
#define SYNC_WAIT_MS 5000

struct kube_publisher {
	struct kube_client *client;
	char *driver, *node_name, *driver_version, *firmware_version;
	int backoff_initial_ms, backoff_max_ms, resync_ms, coalesce_ms;
	kube_publish_report_fn report;
	void *report_ctx;
	pthread_t thread;

	pthread_mutex_t lock;
	pthread_cond_t cond;
	bool stop;
	struct npu_snapshot *snapshot; /* the latest offered, NULL before the first */
	struct kube_device_facts *facts; /* per device of snapshot, NULL: none known */
	bool offered;                  /* a snapshot arrived since the thread took one */
	int64_t offered_at;            /* when the first of those arrived */
	uint64_t jitter_state;         /* xorshift64 for the backoffs' jitter (both threads, under lock) */

	/* The watch of the slices (watch_run's thread) and what it shares with
	 * the round's, under lock. */
	pthread_t watcher;
	pthread_cond_t watch_cond; /* the watch thread's waits */
	int watch_abort;           /* eventfd: a stop ends the watch under way at once */
	int watch_timeout_s;       /* 0: WATCH_TIMEOUT_S to twice it, at random */
	char listed_version[KUBE_META_VERSION_MAX]; /* the last list's resourceVersion */
	uint64_t lists;            /* lists that succeeded so far */
	bool in_round;             /* written[] is the round's: the watch's events wait */
	bool owed;                 /* the watch saw someone else's change: a round is owed */
	int64_t owed_at;           /* when the first of those was seen */
	bool watch_now;            /* kube_publisher_recheck: end the watch's backoff */
	/* The slices as the watch says them, read by the rounds instead of a
	 * list once synced; the watch streams its list first unless the server
	 * refused that once (then it watches from the rounds' lists). */
	struct kube_slice_cache cache;
	bool stream_refused;
	int64_t syncing_until; /* a streamed list under way: rounds wait for it until then */

	/* The thread's own. */
	char node_uid[KUBE_META_UID_MAX];
	int64_t generation;   /* last published */
	char *published;      /* the devices' content last published, NULL: none yet */
	int last_error;       /* of the last failed round, 0 after a success */
	long last_status;
	/* What the API server was found to drop (KUBE_LACKS_*), by the probe
	 * once it answered (probed) and by the answers to writes. */
	unsigned lacking;
	bool probed;
	/* The slices as this publisher last wrote them (name and the
	 * resourceVersion the server answered with): a resync that lists
	 * exactly these has nothing to do. */
	struct kube_meta written[KUBE_LIST_MAX_ITEMS];
	size_t n_written;
	size_t written_devices;
};

/* The outcome of a failed step: error, status and cause, for the report. */
struct failure {
	int error;
	long status;
	char cause[KUBE_CAUSE_MAX + 128];
};

static int failed(struct failure *f, int error, long status, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static int failed(struct failure *f, int error, long status, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(f->cause, sizeof(f->cause), fmt, ap);
	va_end(ap);
	f->error = error;
	f->status = status;
	return error;
}

/* A request whose transport failed is a failure; the caller judges the status. */
static int call(struct kube_publisher *p, const char *method, const char *path, const char *body,
		struct kube_response *resp, struct failure *f)
{
	/* A stop ends the round before its next request: it waits for one
	 * request at most, not for a round of them. */
	pthread_mutex_lock(&p->lock);
	bool stop = p->stop;
	pthread_mutex_unlock(&p->lock);
	if (stop)
		return failed(f, -ECANCELED, 0, "stopping");
	int r = kube_client_request(p->client, method, path, body, body ? strlen(body) : 0, resp);
	if (r < 0)
		return failed(f, r, 0, "%s", resp->cause);
	return 0;
}

/* The failure of an unexpected status, with the server's message. */
static int status_failure(struct failure *f, const char *what, const struct kube_response *resp)
{
	char msg[160];
	kube_status_message(resp->body, resp->len, msg, sizeof(msg));
	return failed(f, -EREMOTEIO, resp->status, "%s: HTTP %ld%s%s", what, resp->status, msg[0] ? ": " : "", msg);
}

static int fetch_node_uid(struct kube_publisher *p, struct failure *f)
{
	char path[320], why[160];
	struct kube_response resp = { 0 };
	struct kube_meta meta;
	snprintf(path, sizeof(path), "/api/v1/nodes/%s", p->node_name);
	int r = call(p, "GET", path, NULL, &resp, f);
	if (r < 0)
		return r;
	if (resp.status == 404)
		r = failed(f, -ENOENT, resp.status, "node %s: not found on the API server", p->node_name);
	else if (!kube_status_ok(resp.status))
		r = status_failure(f, "reading the node", &resp);
	else if ((r = kube_parse_meta(resp.body, resp.len, &meta, why, sizeof(why))) < 0)
		r = failed(f, r, 0, "node %s: %s", p->node_name, why);
	else
		memcpy(p->node_uid, meta.uid, sizeof(p->node_uid));
	kube_response_free(&resp);
	return r;
}

/* The collection of the node's slices of this driver, as listed and watched. */
static void selection(const struct kube_publisher *p, char path[768])
{
	snprintf(path, 768, SLICES_PATH "?fieldSelector=spec.nodeName%%3D%s%%2Cspec.driver%%3D%s", p->node_name,
		 p->driver);
}

/* A list succeeded: the watch starts from its resourceVersion when it
 * starts anew. */
static void listed(struct kube_publisher *p, const char *version)
{
	pthread_mutex_lock(&p->lock);
	memcpy(p->listed_version, version, sizeof(p->listed_version));
	p->lists++;
	pthread_cond_broadcast(&p->watch_cond);
	pthread_mutex_unlock(&p->lock);
}

/* The node's slices: their names, versions and generations in list, and
 * the listed objects whole in *ret_items (an array the caller puts; NULL
 * when the body cannot be parsed as a whole, which only costs a write). */
static int list_slices(struct kube_publisher *p, struct kube_slice_list *list, json_object **ret_items,
		       struct failure *f)
{
	char path[768], why[160];
	struct kube_response resp = { 0 };
	selection(p, path);
	int r = call(p, "GET", path, NULL, &resp, f);
	if (r < 0)
		return r;
	if (!kube_status_ok(resp.status))
		r = status_failure(f, "listing the node's ResourceSlices", &resp);
	else if ((r = kube_parse_slice_list(resp.body, resp.len, list, why, sizeof(why))) < 0)
		r = failed(f, r, 0, "listing the node's ResourceSlices: %s", why);
	else
		listed(p, list->resource_version);
	json_object *root = NULL, *items = NULL;
	if (r == 0 && kube_json_parse(resp.body, resp.len, &root, why, sizeof(why)) == 0 &&
	    json_object_object_get_ex(root, "items", &items) && json_object_is_type(items, json_type_array))
		*ret_items = json_object_get(items);
	json_object_put(root);
	kube_response_free(&resp);
	return r;
}

/* The node's slices as list_slices gives them: from the watch's cache
 * when it is synced (no request), else listed. */
static int read_slices(struct kube_publisher *p, struct kube_slice_list *list, json_object **ret_items,
		       struct failure *f)
{
	pthread_mutex_lock(&p->lock);
	int r = kube_slice_cache_read(&p->cache, list, ret_items);
	pthread_mutex_unlock(&p->lock);
	if (r == -ENOMEM)
		return failed(f, r, 0, "out of memory");
	return r == 0 ? 0 : list_slices(p, list, ret_items, f);
}

/* The Node's uid from the owner reference of a slice listed (the slices of
 * a driver that ran before, or of the other pod of a roll): a Node made
 * anew has a new uid, and the garbage collector removes the slices owned
 * by the old one, which the watch then sees; so a slice still there names
 * the Node of now, and a roll costs no read of it. */
static void adopt_node_uid(struct kube_publisher *p, json_object *items)
{
	for (size_t i = 0; items && i < json_object_array_length(items); i++) {
		json_object *refs = json_object_object_get(
			json_object_object_get(json_object_array_get_idx(items, i), "metadata"), "ownerReferences");
		for (size_t k = 0; json_object_is_type(refs, json_type_array) && k < json_object_array_length(refs);
		     k++) {
			json_object *ref = json_object_array_get_idx(refs, k);
			char kind[8], name[KUBE_META_NAME_MAX], uid[KUBE_META_UID_MAX];
			if (kube_json_string(ref, "kind", kind, sizeof(kind), NULL, 0, "") == 0 &&
			    strcmp(kind, "Node") == 0 &&
			    kube_json_string(ref, "name", name, sizeof(name), NULL, 0, "") == 0 &&
			    strcmp(name, p->node_name) == 0 &&
			    kube_json_string(ref, "uid", uid, sizeof(uid), NULL, 0, "") == 0 && uid[0]) {
				memcpy(p->node_uid, uid, sizeof(p->node_uid));
				return;
			}
		}
	}
}

/* A built slice's metadata.name ("" without one). */
static const char *slice_name(json_object *slice)
{
	const char *name = json_object_get_string(json_object_object_get(json_object_object_get(slice, "metadata"),
									 "name"));
	return name ? name : "";
}

/* Where list holds the slice named name; list->count when it does not. */
static size_t listed_at(const struct kube_slice_list *list, const char *name)
{
	size_t j = 0;
	while (j < list->count && strcmp(list->items[j].meta.name, name) != 0)
		j++;
	return j;
}

/* Whether writing wanted over list creates a slice (one of a name not
 * listed). */
static bool creates(const struct kube_slice_list *list, json_object *wanted)
{
	for (size_t i = 0; i < json_object_array_length(wanted); i++)
		if (listed_at(list, slice_name(json_object_array_get_idx(wanted, i))) == list->count)
			return true;
	return false;
}

/* A write's answer goes into the watch's cache, so that a round before
 * the write's echo does not see the slice as it was. */
static void cache_written(struct kube_publisher *p, json_object *stored, const char *deleted)
{
	pthread_mutex_lock(&p->lock);
	if (p->cache.synced) {
		if (deleted)
			kube_slice_cache_forget(&p->cache, deleted);
		else if (!stored || kube_slice_cache_store(&p->cache, stored, NULL, 0) < 0)
			/* Without the answer (unreadable, or no room for it) the
			 * cache would lie: rounds list until the watch has
			 * streamed the list again. */
			kube_slice_cache_restart(&p->cache);
	}
	pthread_mutex_unlock(&p->lock);
}

/* The slice's current resourceVersion, to replace it after a conflict. */
static int read_version(struct kube_publisher *p, const char *name, char *version, bool *ret_gone,
			struct failure *f)
{
	char path[512], why[160];
	struct kube_response resp = { 0 };
	struct kube_meta meta;
	snprintf(path, sizeof(path), SLICES_PATH "/%s", name);
	int r = call(p, "GET", path, NULL, &resp, f);
	if (r < 0)
		return r;
	if (resp.status == 404)
		*ret_gone = true;
	else if (!kube_status_ok(resp.status))
		r = status_failure(f, "reading a ResourceSlice", &resp);
	else if ((r = kube_parse_meta(resp.body, resp.len, &meta, why, sizeof(why))) < 0)
		r = failed(f, r, 0, "ResourceSlice %s: %s", name, why);
	else {
		memcpy(version, meta.resource_version, KUBE_META_VERSION_MAX);
		*ret_gone = false;
	}
	kube_response_free(&resp);
	return r;
}

/* What the slices are built without now: what the server was found to
 * drop, or everything until the probe has answered (see publisher.h). */
static unsigned lacking_now(const struct kube_publisher *p)
{
	return p->probed ? p->lacking : KUBE_LACKS_ALL;
}

/* Marks what the server drops, and reports what was not known yet. */
static void note_lacking(struct kube_publisher *p, unsigned found, bool by_write)
{
	unsigned fresh = found & ~p->lacking;
	p->lacking |= found;
	if (fresh && p->report) {
		const struct kube_publish_report rep = { .event = KUBE_PUBLISH_LACKS, .lacking = fresh, .by_write = by_write };
		p->report(p->report_ctx, &rep);
	}
}

#define PROBING "asking the API server which ResourceSlice fields it keeps (a dry run)"

/* The parameters the slices are built with: this node's pool at
 * generation, with facts, without what lacking says the server drops. */
static struct kube_slice_params params_of(const struct kube_publisher *p, const struct kube_device_facts *facts,
					  int64_t generation, unsigned lacking)
{
	return (struct kube_slice_params){
		.driver = p->driver,
		.node_name = p->node_name,
		.node_uid = p->node_uid,
		.generation = generation,
		.driver_version = p->driver_version,
		.firmware_version = p->firmware_version,
		.facts = facts,
		.lacking = lacking,
	};
}

/* The probe (see publisher.h): one server-side dry run of a slice that
 * carries every field a feature gate may drop; what the answer lacks, the
 * server drops. */
static int probe(struct kube_publisher *p, struct failure *f)
{
	const struct kube_slice_params params = params_of(p, NULL, p->generation, 0);
	json_object *slice = NULL, *answer = NULL;
	struct kube_response resp = { 0 };
	char why[160];
	int r = kube_slice_probe(&params, &slice);
	if (r < 0)
		return failed(f, r, 0, PROBING ": %s", strerror(-r));
	const char *body = json_object_to_json_string_ext(slice, JSON_C_TO_STRING_PLAIN);
	if (!body)
		r = failed(f, -ENOMEM, 0, "out of memory");
	else
		r = call(p, "POST", SLICES_PATH "?dryRun=All", body, &resp, f);
	if (r == 0 && !kube_status_ok(resp.status))
		r = status_failure(f, PROBING, &resp);
	else if (r == 0 && (r = kube_json_parse(resp.body, resp.len, &answer, why, sizeof(why))) < 0)
		r = failed(f, r, 0, PROBING ": %s", why);
	if (r == 0) {
		p->probed = true;
		note_lacking(p, kube_slice_dropped(slice, answer), false);
	}
	kube_response_free(&resp);
	json_object_put(answer);
	json_object_put(slice);
	return r;
}

/* Creates or replaces one slice; version is the listed resourceVersion, ""
 * when none was listed. What the server dropped of it (KUBE_LACKS_*) is
 * added to *dropped. */
static int write_slice(struct kube_publisher *p, json_object *slice, const char *version, struct kube_meta *ret_meta,
		       unsigned *dropped, struct failure *f)
{
	json_object *meta = json_object_object_get(slice, "metadata");
	char name[KUBE_NAME_MAX], rv[KUBE_META_VERSION_MAX], path[512];
	snprintf(name, sizeof(name), "%s", slice_name(slice));
	snprintf(rv, sizeof(rv), "%s", version);
	for (int attempt = 0; attempt <= CONFLICT_RETRIES; attempt++) {
		bool create = rv[0] == '\0';
		if (create) {
			json_object_object_del(meta, "resourceVersion");
			snprintf(path, sizeof(path), SLICES_PATH);
		} else {
			if (json_object_object_add(meta, "resourceVersion", json_object_new_string(rv)) < 0)
				return failed(f, -ENOMEM, 0, "out of memory");
			snprintf(path, sizeof(path), SLICES_PATH "/%s", name);
		}
		const char *body = json_object_to_json_string_ext(slice, JSON_C_TO_STRING_PLAIN);
		if (!body)
			return failed(f, -ENOMEM, 0, "out of memory");
		struct kube_response resp = { 0 };
		int r = call(p, create ? "POST" : "PUT", path, body, &resp, f);
		if (r < 0)
			return r;
		long status = resp.status;
		if (kube_status_ok(status)) {
			/* Without a readable answer the version stays empty, and
			 * the next resync writes the slice again. */
			if (kube_parse_meta(resp.body, resp.len, ret_meta, NULL, 0) < 0)
				*ret_meta = (struct kube_meta){ 0 };
			json_object *stored = NULL;
			if (kube_json_parse(resp.body, resp.len, &stored, NULL, 0) == 0)
				*dropped |= kube_slice_dropped(slice, stored);
			cache_written(p, stored, NULL);
			json_object_put(stored);
			kube_response_free(&resp);
			return 0;
		}
		/* 409: someone else wrote it (or it exists already); 404 on a
		 * replace: it was deleted meanwhile. Either way, read what is
		 * there now and go again. */
		if (status != 409 && !(status == 404 && !create)) {
			r = status_failure(f, create ? "creating a ResourceSlice" : "replacing a ResourceSlice", &resp);
			kube_response_free(&resp);
			return r;
		}
		kube_response_free(&resp);
		bool gone = false;
		r = read_version(p, name, rv, &gone, f);
		if (r < 0)
			return r;
		if (gone)
			rv[0] = '\0';
	}
	return failed(f, -EBUSY, 409, "ResourceSlice %s: still conflicting after %d retries", name, CONFLICT_RETRIES);
}

static int delete_slice(struct kube_publisher *p, const char *name, struct failure *f)
{
	char path[512];
	struct kube_response resp = { 0 };
	snprintf(path, sizeof(path), SLICES_PATH "/%s", name);
	int r = call(p, "DELETE", path, NULL, &resp, f);
	if (r < 0)
		return r;
	if (!kube_status_ok(resp.status) && resp.status != 404)
		r = status_failure(f, "deleting a ResourceSlice", &resp);
	else
		cache_written(p, NULL, name);
	kube_response_free(&resp);
	return r;
}

/* The content the devices would be published with, generation aside: what
 * decides whether a new snapshot needs a round. */
static int content_of(struct kube_publisher *p, struct npu_snapshot *snap, const struct kube_device_facts *facts,
		      char **ret)
{
	/* Without the Node's uid: a new uid is a change of its own. */
	struct kube_slice_params params = params_of(p, facts, 0, lacking_now(p));
	params.node_uid = NULL;
	json_object *slices;
	int r = kube_slices_build(snap, &params, &slices);
	if (r < 0)
		return r;
	const char *s = json_object_to_json_string_ext(slices, JSON_C_TO_STRING_PLAIN);
	char *copy = s ? strdup(s) : NULL;
	json_object_put(slices);
	if (!copy)
		return -ENOMEM;
	*ret = copy;
	return 0;
}

/* Whether the server's spec of a slice is ours: a copy of it with what the
 * server adds taken out (the time it stamps on each taint, which this
 * publisher never sets). */
static bool same_spec(json_object *ours, json_object *theirs)
{
	json_object *copy = NULL, *devices;
	if (!theirs || json_object_deep_copy(theirs, &copy, NULL) < 0)
		return false;
	if (json_object_object_get_ex(copy, "devices", &devices) && json_object_is_type(devices, json_type_array))
		for (size_t i = 0; i < json_object_array_length(devices); i++) {
			json_object *taints = json_object_object_get(json_object_array_get_idx(devices, i), "taints");
			for (size_t k = 0; json_object_is_type(taints, json_type_array) && k < json_object_array_length(taints);
			     k++)
				json_object_object_del(json_object_array_get_idx(taints, k), "timeAdded");
		}
	bool same = json_object_equal(ours, copy);
	json_object_put(copy);
	return same;
}

/* Whether the server holds slices as wanted, whoever wrote them: one of
 * each name of wanted, nothing else, each with the same owners and spec
 * but for the pool's generation, which is one for all. Another instance of
 * the driver on this node (a surge roll) publishes the same content: then
 * neither writes, and neither bumps the generation. On a match, the
 * server's versions become what this publisher wrote, in written[]. */
static bool server_as_wanted(struct kube_publisher *p, const struct kube_slice_list *list, json_object *items,
			     json_object *wanted, int64_t *ret_generation)
{
	size_t n = json_object_array_length(wanted);
	if (!items || n != list->count || n != json_object_array_length(items) || n == 0)
		return false;
	int64_t generation = list->items[0].generation;
	bool same = true;
	for (size_t i = 0; i < n && same; i++) {
		json_object *ours = json_object_array_get_idx(wanted, i), *theirs = NULL, *spec, *pool, *gen;
		const char *name = slice_name(ours);
		for (size_t k = 0; k < n && !theirs; k++)
			if (strcmp(list->items[k].meta.name, name) == 0 &&
			    list->items[k].generation == generation)
				theirs = json_object_array_get_idx(items, k);
		if (!theirs)
			return false;
		/* The generation aside: ours is set to theirs for the comparison. */
		spec = json_object_object_get(ours, "spec");
		pool = json_object_object_get(spec, "pool");
		gen = json_object_object_get(pool, "generation");
		int64_t own = json_object_get_int64(gen);
		if (!gen || json_object_set_int64(gen, generation) == 0)
			return false;
		same = same_spec(spec, json_object_object_get(theirs, "spec")) &&
		       json_object_equal(json_object_object_get(json_object_object_get(ours, "metadata"), "ownerReferences"),
					 json_object_object_get(json_object_object_get(theirs, "metadata"),
								"ownerReferences"));
		(void)json_object_set_int64(gen, own);
	}
	if (!same)
		return false;
	for (size_t i = 0; i < n; i++)
		p->written[i] = list->items[i].meta;
	p->n_written = n;
	*ret_generation = generation;
	return true;
}

/* Whether the server lists exactly the slices this publisher last wrote,
 * untouched since. */
static bool server_as_written(const struct kube_publisher *p, const struct kube_slice_list *list)
{
	if (p->n_written == 0 || list->count != p->n_written)
		return false;
	for (size_t i = 0; i < list->count; i++) {
		bool found = false;
		for (size_t j = 0; j < p->n_written && !found; j++)
			found = p->written[j].resource_version[0] &&
				strcmp(p->written[j].name, list->items[i].meta.name) == 0 &&
				strcmp(p->written[j].resource_version, list->items[i].meta.resource_version) == 0;
		if (!found)
			return false;
	}
	return true;
}

/* Writes each slice of wanted (over the listed one of its name, if any)
 * and deletes the listed slices not wanted; what the server dropped of
 * them goes to *dropped. */
static int write_slices(struct kube_publisher *p, const struct kube_slice_list *list, json_object *wanted,
			unsigned *dropped, struct failure *f)
{
	size_t n = json_object_array_length(wanted);
	bool kept[KUBE_LIST_MAX_ITEMS] = { false };
	int r;
	for (size_t i = 0; i < n; i++) {
		json_object *slice = json_object_array_get_idx(wanted, i);
		size_t j = listed_at(list, slice_name(slice));
		const char *version = "";
		if (j < list->count) {
			version = list->items[j].meta.resource_version;
			kept[j] = true;
		}
		if ((r = write_slice(p, slice, version, &p->written[i], dropped, f)) < 0) {
			p->n_written = 0;
			return r;
		}
	}
	p->n_written = n;
	for (size_t j = 0; j < list->count; j++)
		if (!kept[j] && (r = delete_slice(p, list->items[j].meta.name, f)) < 0)
			return r;
	return 0;
}

/* Above every generation on the server, whoever wrote it. */
static int64_t next_generation(const struct kube_publisher *p, const struct kube_slice_list *list)
{
	int64_t generation = p->generation;
	for (size_t i = 0; i < list->count; i++)
		if (list->items[i].generation > generation)
			generation = list->items[i].generation;
	return generation + 1;
}

/* Whether the slices of snap, built as if the server kept everything, would
 * carry a field behind a feature gate (a build that fails: as if they did). */
static bool gated_wanted(struct kube_publisher *p, struct npu_snapshot *snap, const struct kube_device_facts *facts)
{
	const struct kube_slice_params params = params_of(p, facts, p->generation, 0);
	json_object *slices;
	if (kube_slices_build(snap, &params, &slices) < 0)
		return true;
	bool wanted = kube_slices_gated(slices) != 0;
	json_object_put(slices);
	return wanted;
}

/* One reconciliation. Returns 0 when slices were written (the report's DONE
 * fields filled), 1 when the content is unchanged and the server still
 * holds what was written last, or a negative errno with f said. A probe
 * that failed fails the round too, after the slices were written without
 * everything it asks about, so that it is tried again with the backoff. */
static int reconcile(struct kube_publisher *p, struct npu_snapshot *snap, const struct kube_device_facts *facts,
		     bool changed, struct kube_publish_report *done, struct failure *f)
{
	struct kube_slice_list *list = malloc(sizeof(*list));
	json_object *slices = NULL, *items = NULL;
	struct failure probe_failure = { 0 };
	int r, probed = 0;
	bool node_read = false;
	if (!list)
		return failed(f, -ENOMEM, 0, "out of memory");
	char uid[KUBE_META_UID_MAX];
	memcpy(uid, p->node_uid, sizeof(uid));
	if ((r = read_slices(p, list, &items, f)) < 0)
		goto out;
	if (!p->node_uid[0])
		adopt_node_uid(p, items);
	/* The first round whose slices would carry a gated field asks before
	 * it writes; the probe's slice is owned by the Node as the real ones
	 * are, so the Node's uid must be known. A healthy node with plain
	 * chips needs none of them, and costs the API server no probe at
	 * start. */
	unsigned lacking = lacking_now(p);
	if (!p->probed && gated_wanted(p, snap, facts)) {
		if (!p->node_uid[0]) {
			if ((r = fetch_node_uid(p, f)) < 0)
				goto out;
			node_read = true;
		}
		if ((probed = probe(p, &probe_failure)) < 0 && probe_failure.error == -ECANCELED) {
			r = failed(f, -ECANCELED, 0, "stopping");
			goto out;
		}
	}
	changed |= lacking_now(p) != lacking || strcmp(uid, p->node_uid) != 0;
	if (!changed && server_as_written(p, list)) {
		r = 1;
		goto out;
	}
	int64_t generation = next_generation(p, list);
	size_t n, devices;
	/* Each pass finds at least one more field lacking (of three) or ends. */
	for (;;) {
		const struct kube_slice_params params = params_of(p, facts, generation, lacking_now(p));
		r = kube_slices_build(snap, &params, &slices);
		if (r < 0) {
			failed(f, r, 0, "building the ResourceSlices: %s", strerror(-r));
			goto out;
		}
		n = json_object_array_length(slices);
		devices = 0;
		if (n > KUBE_LIST_MAX_ITEMS) {
			r = failed(f, -E2BIG, 0, "%zu ResourceSlices wanted, more than %d", n, KUBE_LIST_MAX_ITEMS);
			goto out;
		}
		/* A slice of counter sets has no devices. */
		for (size_t i = 0; i < n; i++) {
			json_object *listed = json_object_object_get(
				json_object_object_get(json_object_array_get_idx(slices, i), "spec"), "devices");
			devices += listed ? json_object_array_length(listed) : 0;
		}
		int64_t theirs;
		unsigned dropped = 0;
		if (server_as_wanted(p, list, items, slices, &theirs)) {
			generation = theirs;
			break;
		}
		/* A slice created is owned by the Node as it is now: a Node made
		 * anew (a new uid) has had the old one's slices collected, so
		 * it is read before a create, and when no slice named it. A
		 * replace keeps the owner the slice has. */
		if (!node_read && (!p->node_uid[0] || creates(list, slices))) {
			char before[KUBE_META_UID_MAX];
			memcpy(before, p->node_uid, sizeof(before));
			if ((r = fetch_node_uid(p, f)) < 0)
				goto out;
			node_read = true;
			if (strcmp(before, p->node_uid) != 0) {
				json_object_put(slices);
				slices = NULL;
				continue;
			}
		}
		if ((r = write_slices(p, list, slices, &dropped, f)) < 0)
			goto out;
		if (!(dropped & ~p->lacking))
			break;
		/* The server stored less than it was sent (a control plane
		 * downgraded, a gate turned off since the probe): what it keeps
		 * now says more than is true, so it is rebuilt without that and
		 * written again at once, as the next generation. */
		note_lacking(p, dropped, true);
		json_object_put(slices);
		json_object_put(items);
		slices = items = NULL;
		if ((r = read_slices(p, list, &items, f)) < 0)
			goto out;
		generation = next_generation(p, list);
	}
	p->written_devices = devices;
	p->generation = generation;
	*done = (struct kube_publish_report){
		.event = KUBE_PUBLISH_DONE,
		.generation = generation,
		.slices = n,
		.devices = devices,
	};
	r = 0;
out:
	if (r >= 0 && probed < 0) {
		/* Until the probe answers, the slices say nothing a server could
		 * drop: they cannot promise more than it keeps, only less. */
		*f = probe_failure;
		size_t len = strlen(f->cause);
		snprintf(f->cause + len, sizeof(f->cause) - len,
			 "; until it answers, the slices go without device taints, counters and shared capacity");
		r = f->error;
	}
	json_object_put(items);
	json_object_put(slices);
	free(list);
	return r;
}

/* A wait of backoff_ms with "equal jitter": between half of it and all of
 * it, at random. Every driver of a fleet fails together when the API server
 * does (a restart, APF's 429s under a roll); without jitter they would
 * retry together too, in waves of every node at once. A xorshift64 is
 * enough: the point is that nodes differ, not unpredictability. */
static int64_t jittered(struct kube_publisher *p, int64_t backoff_ms)
{
	uint64_t x = p->jitter_state;
	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	p->jitter_state = x;
	int64_t half = backoff_ms / 2;
	return backoff_ms - half + (int64_t)(x % (uint64_t)(half + 1));
}

/* The rounds the watch asked for, one after another. */
struct repairs {
	int64_t last;    /* when the last one ran */
	int64_t backoff; /* before the next one, from last; 0: none */
};

/* When a round the watch asked for may run: after the coalescing window
 * from the first change seen, as for an offer (the kubelet's wipe deletes a
 * node's slices one by one, and a peer driver's write of a change is
 * usually followed by this one's own offer of it); and when such rounds
 * follow one another, after a backoff from the last that doubles up to
 * backoff_max_ms: two writers that disagree (a roll between versions that
 * publish differently), each putting back what the other wrote, then cost
 * a write per backoff_max_ms or so each, not one per round trip. Lock held. */
static int64_t repair_at(struct kube_publisher *p, const struct repairs *rp, int64_t now)
{
	int64_t at = p->owed_at + p->coalesce_ms;
	/* Quiet for twice the longest step: the next one is a new story. */
	if (rp->backoff > 0 && now - rp->last <= 2 * (int64_t)p->backoff_max_ms) {
		int64_t after = rp->last + jittered(p, rp->backoff);
		if (after > at)
			at = after;
	}
	return at;
}

static void repaired(const struct kube_publisher *p, struct repairs *rp, int64_t now)
{
	if (now - rp->last > 2 * (int64_t)p->backoff_max_ms)
		rp->backoff = 0;
	rp->backoff = !rp->backoff ? p->backoff_initial_ms
		      : rp->backoff * 2 > p->backoff_max_ms ? p->backoff_max_ms
							  : rp->backoff * 2;
	rp->last = now;
}

static void *run(void *arg)
{
	struct kube_publisher *p = arg;
	int64_t backoff = p->backoff_initial_ms, retry_at = 0, resync_at = 0;
	bool due = false; /* a round is owed whatever the content: after a failure, at a resync */
	/* A round the watch asked for is due at resync_at (brought forward). */
	bool owed = false;
	struct repairs repairs = { 0 };
	pthread_mutex_lock(&p->lock);
	while (!p->stop) {
		int64_t now = now_ms();
		if (p->owed) {
			p->owed = false;
			int64_t at = repair_at(p, &repairs, now);
			if (at < resync_at)
				resync_at = at;
			owed = true;
		}
		/* A change waits out the coalescing window from the first offer
		 * after the last round, so that a burst of faults (a rack's
		 * chips failing within a second) is one write, not one each;
		 * the first publication and a round owed anyway do not wait. */
		int64_t ready_at = retry_at;
		if (p->offered && !due && p->published && p->offered_at + p->coalesce_ms > ready_at)
			ready_at = p->offered_at + p->coalesce_ms;
		bool work = p->snapshot && (p->offered || due || now >= resync_at) && now >= retry_at &&
			    (!p->offered || due || now >= ready_at);
		/* The watch is streaming the list: the round reads that rather
		 * than listing, unless it takes longer than SYNC_WAIT_MS. */
		if (work && !p->cache.synced && now < p->syncing_until) {
			struct timespec ts = deadline_after_ms(p->syncing_until - now);
			pthread_cond_timedwait(&p->cond, &p->lock, &ts);
			continue;
		}
		if (!work) {
			int64_t until = -1;
			if (p->snapshot)
				until = due || p->offered ? ready_at : resync_at;
			if (until < 0) {
				pthread_cond_wait(&p->cond, &p->lock);
			} else if (until > now) {
				struct timespec ts = deadline_after_ms(until - now);
				pthread_cond_timedwait(&p->cond, &p->lock, &ts);
			}
			continue;
		}
		if (now >= resync_at)
			due = true;
		if (owed) {
			owed = false;
			repaired(p, &repairs, now);
		}
		struct npu_snapshot *snap = npu_snapshot_ref(p->snapshot);
		struct kube_device_facts *facts = NULL;
		bool facts_lost = p->facts && !(facts = malloc(snap->count * sizeof(*facts)));
		if (facts)
			memcpy(facts, p->facts, snap->count * sizeof(*facts));
		p->offered = false;
		p->in_round = true;
		pthread_mutex_unlock(&p->lock);

		struct failure f = { 0 };
		struct kube_publish_report done = { 0 };
		char *content = NULL;
		/* Without its facts the snapshot would be published as if the
		 * memory were unknown and no chip shared: a failed round instead. */
		unsigned lacking = lacking_now(p);
		int r = facts_lost ? -ENOMEM : content_of(p, snap, facts, &content);
		bool changed = r == 0 && (!p->published || strcmp(content, p->published) != 0);
		if (r < 0)
			failed(&f, r, 0, "building the ResourceSlices: %s", strerror(-r));
		else if (!due && !changed)
			r = 1; /* nothing changed */
		else {
			r = reconcile(p, snap, facts, changed, &done, &f);
		}
		if (r == 0 && lacking_now(p) != lacking) {
			/* The round found what the server drops, and published
			 * without it: that is the content published. Without
			 * memory for it, the next snapshot makes a round. */
			free(content);
			content = NULL;
			(void)content_of(p, snap, facts, &content);
		}
		npu_snapshot_unref(snap);
		free(facts);

		if (r == 1 && p->last_error) {
			/* Back, and the server held the truth all along. */
			done = (struct kube_publish_report){
				.event = KUBE_PUBLISH_DONE,
				.generation = p->generation,
				.slices = p->n_written,
				.devices = p->written_devices,
			};
			r = 0;
		}
		if (r == 0) {
			done.recovered = p->last_error != 0;
			p->last_error = 0;
			p->last_status = 0;
			free(p->published);
			p->published = content;
			content = NULL;
			if (p->report)
				p->report(p->report_ctx, &done);
		} else if (r < 0 && f.error != -ECANCELED) {
			if (p->report && (f.error != p->last_error || f.status != p->last_status)) {
				struct kube_publish_report rep = {
					.event = KUBE_PUBLISH_FAILED,
					.error = f.error,
					.status = f.status,
				};
				memcpy(rep.cause, f.cause, sizeof(rep.cause));
				p->report(p->report_ctx, &rep);
			}
			p->last_error = f.error;
			p->last_status = f.status;
		}
		free(content);

		pthread_mutex_lock(&p->lock);
		p->in_round = false;
		pthread_cond_broadcast(&p->watch_cond);
		now = now_ms();
		if (r < 0) {
			due = true;
			retry_at = now + jittered(p, backoff);
			backoff = backoff * 2 > p->backoff_max_ms ? p->backoff_max_ms : backoff * 2;
		} else {
			if (r == 0 || due)
				resync_at = now + p->resync_ms;
			due = false;
			retry_at = 0;
			backoff = p->backoff_initial_ms;
		}
	}
	pthread_mutex_unlock(&p->lock);
	return NULL;
}

/* Whether a watched event asks for a round: someone else's change, not
 * the echo of this publisher's own write (the name and resourceVersion of
 * a slice it wrote). A slice of a name it did not write that goes away is
 * one it deleted itself, or no loss. A slice written with a generation
 * above this publisher's is another instance's newer publication of the
 * pool (both pods of a surge roll publish it, each above every generation
 * listed): it is left to this one's next offer or resync, as before the
 * watch, so that a roll never puts back the older of two views of a
 * fault. Lock held, no round under way (written[] and generation are the
 * round thread's while one is). */
static bool foreign(const struct kube_publisher *p, const struct kube_watch_event *ev, int64_t generation)
{
	for (size_t j = 0; j < p->n_written; j++)
		if (strcmp(p->written[j].name, ev->name) == 0)
			return ev->type == KUBE_WATCH_DELETED ||
			       (strcmp(p->written[j].resource_version, ev->resource_version) != 0 &&
				generation <= p->generation);
	return ev->type != KUBE_WATCH_DELETED && generation <= p->generation;
}

/* The spec.pool.generation of a watched slice; -1 when it has none. */
static int64_t generation_of(json_object *slice)
{
	json_object *spec, *pool, *gen;
	if (json_object_object_get_ex(slice, "spec", &spec) && json_object_object_get_ex(spec, "pool", &pool) &&
	    json_object_object_get_ex(pool, "generation", &gen) && json_object_is_type(gen, json_type_int))
		return json_object_get_int64(gen);
	return -1;
}

/* A round is owed (it lists, and writes back what differs). Lock held. */
static void owe_round(struct kube_publisher *p)
{
	if (!p->owed)
		p->owed_at = now_ms();
	p->owed = true;
	pthread_cond_signal(&p->cond);
}

/* One watch's state: where the next one starts. */
struct watching {
	struct kube_publisher *p;
	bool streaming; /* this watch streams the list first, into the cache */
	char version[KUBE_META_VERSION_MAX];
	int last_error; /* of the last watch failure reported, 0 after a watch that worked */
	long last_status;
	char why[160]; /* why an event could not go into the cache */
};

static int on_watch_event(void *ctx, const struct kube_watch_event *ev)
{
	struct watching *w = ctx;
	struct kube_publisher *p = w->p;
	memcpy(w->version, ev->resource_version, sizeof(w->version));
	if (ev->type == KUBE_WATCH_BOOKMARK && !w->streaming)
		return 0;
	int64_t generation = generation_of(ev->object);
	pthread_mutex_lock(&p->lock);
	/* The echo of a round's writes can come before the round has noted
	 * what it wrote: judge it once the round is over. The stream waits in
	 * the socket meanwhile; a round is a bounded number of requests. */
	while (p->in_round && !p->stop)
		pthread_cond_wait(&p->watch_cond, &p->lock);
	int r = p->stop ? -ECANCELED : 0;
	/* The initial events of a streamed list are the state, not changes:
	 * they go into the cache alone, and rounds wait for their end. */
	bool initial = w->streaming && !p->cache.synced;
	if (r == 0 && w->streaming) {
		r = kube_slice_cache_apply(&p->cache, ev, w->why, sizeof(w->why));
		if (r == 1) {
			p->syncing_until = 0;
			pthread_cond_signal(&p->cond);
			r = 0;
		}
	}
	if (r == 0 && !initial && ev->type != KUBE_WATCH_BOOKMARK && foreign(p, ev, generation))
		owe_round(p);
	pthread_mutex_unlock(&p->lock);
	return r;
}

/* A watch that failed, reported once per cause (again only after a watch
 * that worked or another cause). Lock not held: the report may block. */
static void watch_failed(struct watching *w, int error, const struct kube_watch_outcome *out)
{
	struct kube_publisher *p = w->p;
	if (!p->report || (error == w->last_error && out->status == w->last_status))
		return;
	w->last_error = error;
	w->last_status = out->status;
	struct kube_publish_report rep = { .event = KUBE_PUBLISH_WATCH_FAILED, .error = error, .status = out->status };
	snprintf(rep.cause, sizeof(rep.cause), "watching the node's ResourceSlices: %s", out->cause);
	p->report(p->report_ctx, &rep);
}

/* The watch's thread. A thread of its own rather than the round's with a
 * poll of both: a round's requests are blocking calls of the client (one
 * transfer each, in its own multi handle), and a watch would have to be
 * ended and made anew around each of them, which costs a request. Idle,
 * it waits in the transfer's poll, or on watch_cond between watches. */
static void *watch_run(void *arg)
{
	struct kube_publisher *p = arg;
	struct watching w = { .p = p };
	char path[768];
	uint64_t lists_seen = 0;
	bool relist = true; /* stream the list, or start from the next round's */
	int64_t backoff = 0, retry_at = 0;
	selection(p, path);
	pthread_mutex_lock(&p->lock);
	while (!p->stop) {
		int64_t now = now_ms();
		if (p->watch_now) {
			p->watch_now = false;
			retry_at = 0;
		}
		/* A watch made anew streams the list first, into the cache;
		 * where the server refused that, it starts from a round's list. */
		bool stream = relist && !p->stream_refused;
		bool listed_since = !relist || stream || p->lists != lists_seen;
		if (!listed_since || now < retry_at) {
			if (listed_since) {
				struct timespec ts = deadline_after_ms(retry_at - now);
				pthread_cond_timedwait(&p->watch_cond, &p->lock, &ts);
			} else {
				pthread_cond_wait(&p->watch_cond, &p->lock);
			}
			continue;
		}
		if (stream) {
			w.version[0] = '\0';
			kube_slice_cache_restart(&p->cache);
			p->syncing_until = now + SYNC_WAIT_MS;
		} else if (relist) {
			memcpy(w.version, p->listed_version, sizeof(w.version));
			lists_seen = p->lists;
		}
		if (relist)
			w.streaming = stream;
		relist = false;
		int timeout_s = p->watch_timeout_s ? p->watch_timeout_s
						   : (int)(jittered(p, 2 * WATCH_TIMEOUT_S * 1000) / 1000);
		pthread_mutex_unlock(&p->lock);

		const struct kube_watch_request req = {
			.path = path,
			.resource_version = w.version,
			.timeout_s = timeout_s,
			.abort_fd = p->watch_abort,
			.on_event = on_watch_event,
			.ctx = &w,
			.send_initial_events = stream,
		};
		struct kube_watch_outcome out;
		int64_t started = now_ms();
		int r = kube_client_watch(p->client, &req, &out);
		bool worked = r == 0 && now_ms() - started >= WATCH_MIN_MS;
		if (r < 0 && r != -ESTALE && r != -ECANCELED)
			watch_failed(&w, r, &out);
		else if (worked)
			w.last_error = 0;

		pthread_mutex_lock(&p->lock);
		if (w.streaming && !p->cache.synced) {
			/* The streamed list did not end: rounds list meanwhile, and
			 * the next watch streams it again. A server without
			 * streamed lists (the WatchList gate off, as in 1.33)
			 * refuses the parameters: from then on, list and watch. */
			p->syncing_until = 0;
			pthread_cond_signal(&p->cond);
			relist = true;
			if (stream && r == -EREMOTEIO && (out.status == 422 || out.status == 400)) {
				p->stream_refused = true;
				w.streaming = false;
			}
		}
		/* Events may have been lost (the version is gone, a line could not
		 * be read, a version this client cannot send) or the server
		 * refused: list again, and watch from there. A connection
		 * refused, a 429 and a watch ended or cut short start again where
		 * the last left off: the server sends what came meanwhile, or says
		 * the version is gone; so does client-go's reflector
		 * (isWatchErrorRetriable). */
		if (r == -ESTALE || r == -EBADMSG || r == -EMSGSIZE || r == -EINVAL || r == -E2BIG ||
		    (r == -EREMOTEIO && out.status != 429)) {
			relist = true;
			owe_round(p);
		}
		if (worked) {
			backoff = 0;
			retry_at = 0;
		} else {
			backoff = !backoff ? p->backoff_initial_ms
				  : backoff * 2 > p->backoff_max_ms ? p->backoff_max_ms
								    : backoff * 2;
			retry_at = now_ms() + jittered(p, backoff);
		}
	}
	pthread_mutex_unlock(&p->lock);
	return NULL;
}

static void publisher_free(struct kube_publisher *p)
{
	if (p->watch_abort >= 0)
		close(p->watch_abort);
	kube_slice_cache_fini(&p->cache);
	pthread_cond_destroy(&p->watch_cond);
	pthread_mutex_destroy(&p->lock);
	pthread_cond_destroy(&p->cond);
	npu_snapshot_unref(p->snapshot);
	free(p->facts);
	free(p->published);
	free(p->driver);
	free(p->node_name);
	free(p->driver_version);
	free(p->firmware_version);
	free(p);
}

static char *dup_or_null(const char *s, bool *oom)
{
	if (!s || !*s)
		return NULL;
	char *d = strdup(s);
	*oom |= !d;
	return d;
}

/* Stops the threads: the round's after its current request, the watch at
 * once (its abort eventfd, which stays readable for a watch about to
 * start). */
static void halt(struct kube_publisher *p, bool watcher)
{
	uint64_t one = 1;
	pthread_mutex_lock(&p->lock);
	p->stop = true;
	pthread_cond_signal(&p->cond);
	pthread_cond_broadcast(&p->watch_cond);
	pthread_mutex_unlock(&p->lock);
	if (write(p->watch_abort, &one, sizeof(one)) != sizeof(one))
		abort(); /* an eventfd write of 1 cannot fail short of overflow */
	pthread_join(p->thread, NULL);
	if (watcher)
		pthread_join(p->watcher, NULL);
}

int kube_publisher_start(const struct kube_publisher_options *o, struct kube_publisher **ret_publisher)
{
	const char *driver = o->driver ? o->driver : KUBE_DRIVER_DEFAULT;
	if (!o->client || !o->node_name || k8s_dns_subdomain_check(o->node_name, strlen(o->node_name)) < 0 ||
	    !kube_driver_name_ok(driver))
		return -EINVAL;
	struct kube_publisher *p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	pthread_mutex_init(&p->lock, NULL);
	cond_init_monotonic(&p->cond);
	cond_init_monotonic(&p->watch_cond);
	p->watch_abort = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (p->watch_abort < 0) {
		int r = -errno;
		publisher_free(p);
		return r;
	}
	if (kube_slice_cache_init(&p->cache) < 0) {
		publisher_free(p);
		return -ENOMEM;
	}
	p->watch_timeout_s = o->watch_timeout_s > 0 && o->watch_timeout_s <= KUBE_WATCH_TIMEOUT_MAX_S
				     ? o->watch_timeout_s
				     : 0;
	bool oom = false;
	p->client = o->client;
	p->driver = dup_or_null(driver, &oom);
	p->node_name = dup_or_null(o->node_name, &oom);
	p->driver_version = dup_or_null(o->driver_version, &oom);
	p->firmware_version = dup_or_null(o->firmware_version, &oom);
	p->backoff_initial_ms = o->backoff_initial_ms > 0 ? o->backoff_initial_ms : 500;
	p->backoff_max_ms = o->backoff_max_ms > 0 ? o->backoff_max_ms : 30000;
	if (p->backoff_max_ms < p->backoff_initial_ms)
		p->backoff_max_ms = p->backoff_initial_ms;
	p->resync_ms = o->resync_ms > 0 ? o->resync_ms : 600000;
	p->coalesce_ms = o->coalesce_ms > 0 ? o->coalesce_ms : o->coalesce_ms < 0 ? 0 : KUBE_PUBLISH_COALESCE_MS;
	p->report = o->report;
	p->report_ctx = o->report_ctx;
	/* The first rounds read the watch's streamed list rather than listing
	 * (see watch_run), unless it takes too long. */
	p->syncing_until = now_ms() + SYNC_WAIT_MS;
	/* Nodes start at different nanoseconds, with different pids; never 0,
	 * which xorshift would keep. */
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	p->jitter_state = ((uint64_t)ts.tv_nsec << 20) ^ (uint64_t)ts.tv_sec ^ ((uint64_t)getpid() << 40) ^ (uintptr_t)p;
	if (!p->jitter_state)
		p->jitter_state = 0x9e3779b97f4a7c15u;
	if (oom) {
		publisher_free(p);
		return -ENOMEM;
	}
	int r = pthread_create(&p->thread, NULL, run, p);
	if (r != 0) {
		publisher_free(p);
		return -r;
	}
	r = pthread_create(&p->watcher, NULL, watch_run, p);
	if (r != 0) {
		halt(p, false);
		publisher_free(p);
		return -r;
	}
	*ret_publisher = p;
	return 0;
}

int kube_publisher_offer(struct kube_publisher *p, struct npu_snapshot *snapshot,
			 const struct kube_device_facts *facts)
{
	struct kube_device_facts *copy = NULL;
	if (facts && snapshot->count) {
		copy = malloc(snapshot->count * sizeof(*copy));
		if (!copy)
			return -ENOMEM;
		memcpy(copy, facts, snapshot->count * sizeof(*copy));
	}
	struct npu_snapshot *ref = npu_snapshot_ref(snapshot);
	pthread_mutex_lock(&p->lock);
	struct npu_snapshot *old = p->snapshot;
	struct kube_device_facts *old_facts = p->facts;
	p->snapshot = ref;
	p->facts = copy;
	if (!p->offered)
		p->offered_at = now_ms();
	p->offered = true;
	pthread_cond_signal(&p->cond);
	pthread_mutex_unlock(&p->lock);
	npu_snapshot_unref(old);
	free(old_facts);
	return 0;
}

/* A registration needs no check of its own, and every request at start
 * counts (each node of a fleet registers as it starts). The kubelet wipes
 * a node's slices when it starts and a driver's 30 s after the driver went
 * away (see publisher.h): both are deletions the watch sees, since it runs
 * from the resourceVersion of the first list on, and across watches from
 * the last event's (or from a new list when that is gone). What it can do
 * is end the backoff of a watch that failed: the kubelet being back is a
 * hint that the node's network is too. */
void kube_publisher_recheck(struct kube_publisher *p, int for_ms)
{
	(void)for_ms;
	pthread_mutex_lock(&p->lock);
	p->watch_now = true;
	pthread_cond_broadcast(&p->watch_cond);
	pthread_mutex_unlock(&p->lock);
}

void kube_publisher_stop(struct kube_publisher *p)
{
	if (!p)
		return;
	halt(p, true);
	publisher_free(p);
}
