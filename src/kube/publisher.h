/* SPDX-License-Identifier: Apache-2.0 */
/* Keeps this node's ResourceSlices on the API server equal to the latest
 * snapshot, on a thread of its own: whoever has a new snapshot hands it over
 * with kube_publisher_offer, which only swaps a pointer under a lock, so the
 * kubelet's path never waits for the API server.
 *
 * A round reads the driver's slices of this node (fieldSelector
 * spec.nodeName and spec.driver) from the watch's copy of them (below; a
 * list when there is none), reads the Node (its uid, for the slices' owner
 * reference) only before it creates a slice and when no slice listed names
 * it, creates or replaces each wanted slice
 * (a 409 conflict: read it again and retry), deletes the ones left over, and
 * gives the pool a generation above every one listed, so that each change
 * is a new generation. A round runs when the devices' content changed, after
 * a failed round, when the watch saw someone else change the slices, and
 * every resync interval (the safety net). A failed round (unreachable, 5xx,
 * 401, a slow or garbled answer) is retried after a capped exponential
 * backoff with jitter (half to all of the step, at random) with the latest
 * snapshot: once the server is back, it gets the current truth, not a
 * history.
 *
 * A second thread watches the same selection, as upstream's ResourceSlice
 * controller holds an informer (k8s.io/dynamic-resource-allocation/
 * resourceslice). Its watch streams the list first (sendInitialEvents,
 * Kubernetes' streaming lists, on by default from 1.34) into a copy of the
 * slices (kube/slice_cache.h) that the rounds read instead of listing, the
 * answers to the publisher's own writes included; the rounds wait up to
 * 5 s for that list, and list themselves meanwhile if it takes longer. A
 * server that refuses streamed lists (422: the WatchList gate off, as in
 * 1.33) is listed by every round and watched from the list's
 * resourceVersion, as before. So a start costs a read of the Node and a
 * create, and a restart that finds its slices as wanted (a roll) costs no
 * request at all but the watch. Any event
 * but a bookmark and the echo of this publisher's own writes (the name and
 * resourceVersion it wrote) makes a round owed, which runs after the
 * coalescing window, so that a slice deleted or changed by someone else is
 * put back within a second rather than at the next resync. Above all the
 * kubelet's wipes: it deletes every slice of its node when it starts, in
 * the background and retried with backoff, and a driver's slices 30 s
 * after the last of its plugins went away (deregistered or disconnected)
 * unless one is back by then (Kubernetes 1.37 pkg/kubelet/cm/dra/plugin/
 * dra_plugin_manager.go, NewDRAPluginManager and sync; the delay is
 * pkg/kubelet/cm/dra/manager.go's defaultWipingDelay), so either can land
 * after the driver registered again. A slice written with a generation
 * above this publisher's is the exception: another instance's newer
 * publication of the pool (the two pods of a roll), left to this one's
 * next offer or resync so that the older view of a fault never overwrites
 * the newer (upstream's controller syncs 30 s after the last event, its
 * SyncDelay, which lets such a pair settle too). Owed rounds that keep
 * coming (a writer that disagrees without a new generation) back off from
 * one another. A watch lasts 5 to 10 minutes (at random) and is made again
 * from the last event's resourceVersion (bookmarks keep it fresh); a
 * version the server no longer has (410), or a stream that cannot be read,
 * makes a round owed, and the next watch streams the list again. A watch
 * that fails is made again after the same jittered backoff as a round.
 *
 * What the API server keeps: before the first write whose slices would carry
 * one of the fields behind feature gates (a healthy node of plain chips has
 * none, and never asks) the publisher asks the server which of the fields behind feature gates it would store (an older
 * or differently configured server drops them silently, kube/slices.h):
 * one server-side dry run (POST ...?dryRun=All) of kube_slice_probe's slice,
 * whose answer says what the server dropped; the slices are then built
 * without what it lacks. Until the probe is answered (a 403, a 5xx, a
 * refusal: it is tried again with the backoff of a failed round) the
 * publisher assumes the server lacks all of them, so that no slice it
 * writes meanwhile says more than any server keeps. The answer to every
 * write is read the same way: a field the server dropped there (a control
 * plane downgraded, a gate turned off since) marks it lacking too, and the
 * slices are rebuilt and written again at once. What is found lacking stays
 * so until the publisher is started again.
 *
 * Nothing here logs. Each cause of failure is reported once through the
 * report callback (again only after a success or a different cause), and
 * each publication, and each field found lacking; a watch's failures
 * likewise. The callback runs on the publisher's threads (the round's, and
 * the watch's for WATCH_FAILED, possibly at once) and should only log or
 * hand over. Stopping leaves the slices in place: a restarted driver takes
 * them over, and the Node's owner reference removes them with the Node. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kube/client.h"
#include "kube/slices.h"
#include "npu/inventory.h"

enum kube_publish_event {
	KUBE_PUBLISH_DONE,   /* the slices were written: generation, slices, devices */
	KUBE_PUBLISH_FAILED, /* a round failed: error, status, cause */
	KUBE_PUBLISH_LACKS,  /* the API server drops fields: lacking, by_write */
	/* The watch of the slices failed (error, status, cause): it is made
	 * again with backoff, and the resync still checks the slices. */
	KUBE_PUBLISH_WATCH_FAILED,
};

struct kube_publish_report {
	enum kube_publish_event event;
	int64_t generation;
	size_t slices, devices;
	bool recovered; /* DONE after a failure */
	int error;      /* FAILED: a negative errno (-EREMOTEIO: the server answered status) */
	long status;    /* FAILED with -EREMOTEIO: the HTTP status */
	char cause[KUBE_CAUSE_MAX + 128];
	/* LACKS: the KUBE_LACKS_* bits newly found (each is reported once), by
	 * the answer to a write rather than by the probe. */
	unsigned lacking;
	bool by_write;
};

typedef void (*kube_publish_report_fn)(void *ctx, const struct kube_publish_report *report);

struct kube_publisher_options {
	struct kube_client *client; /* borrowed; outlives the publisher */
	const char *driver;         /* NULL: KUBE_DRIVER_DEFAULT */
	const char *node_name;
	const char *driver_version;   /* NULL: unknown */
	const char *firmware_version; /* NULL: unknown */
	int backoff_initial_ms;       /* 0: 500 */
	int backoff_max_ms;           /* 0: 30000 */
	int resync_ms;                /* 0: 600000 (10 minutes) */
	int coalesce_ms;              /* 0: KUBE_PUBLISH_COALESCE_MS; negative: none */
	/* A watch's timeoutSeconds; 0 (or out of 1 .. KUBE_WATCH_TIMEOUT_MAX_S):
	 * 300 to 600, at random. */
	int watch_timeout_s;
	kube_publish_report_fn report;
	void *report_ctx;
};

struct kube_publisher;

/* How long a change of the devices waits for more before it is written: the
 * faults of one burst within it are one write per node, not one per chip,
 * which at fleet scale is what a rack losing power costs the API server.
 * It adds at most this to fault -> ResourceSlice (the bench's 1 s target). */
#define KUBE_PUBLISH_COALESCE_MS 250

/* Starts the threads; they wait for a first snapshot (the watch for the
 * first list). Returns 0, -EINVAL (no client or node name, a node name that
 * is not a DNS subdomain, a driver name kube_driver_name_ok refuses),
 * -ENOMEM or the errno of eventfd or pthread_create. */
int kube_publisher_start(const struct kube_publisher_options *options, struct kube_publisher **ret_publisher);

/* Hands over the latest snapshot (a new reference is taken) and the facts
 * of its devices by index (HBM bytes, time-slicing shares; copied; NULL:
 * none known). Never blocks on the server. -ENOMEM leaves the previous
 * snapshot in place. */
int kube_publisher_offer(struct kube_publisher *publisher, struct npu_snapshot *snapshot,
			 const struct kube_device_facts *facts);

/* Says that the kubelet registered the driver, which may have wiped this
 * node's slices or may do so shortly (see above): the watch sees such a
 * wipe, so this costs no request; a watch waiting out its backoff after a
 * failure is made at once. for_ms is not used (the call was a window of
 * lists every few seconds before the watch; the module's table keeps its
 * type). Never blocks on the server. */
void kube_publisher_recheck(struct kube_publisher *publisher, int for_ms);
/* Stops the threads and frees the publisher; a round in progress ends after
 * its current request (which takes at most the client's timeout), a watch
 * at once. NULL is fine. */
void kube_publisher_stop(struct kube_publisher *publisher);
