/* SPDX-License-Identifier: Apache-2.0 */
/* Keeps this node's ResourceSlices on the API server equal to the latest
 * snapshot, on a thread of its own: whoever has a new snapshot hands it over
 * with kube_publisher_offer, which only swaps a pointer under a lock, so the
 * kubelet's path never waits for the API server.
 *
 * A round lists the driver's slices of this node (fieldSelector
 * spec.nodeName and spec.driver), reads the Node (its uid, for the slices'
 * owner reference: at a resync, and before any write, not at a recheck's
 * checks), creates or replaces each wanted slice
 * (a 409 conflict: read it again and retry), deletes the ones left over, and
 * gives the pool a generation above every one listed, so that each change
 * is a new generation. A round runs when the devices' content changed, after
 * a failed round, and every resync interval (someone may have deleted a
 * slice). A failed round (unreachable, 5xx, 401, a slow or garbled answer)
 * is retried after a capped exponential backoff with jitter (half to all of
 * the step, at random) with the latest snapshot:
 * once the server is back, it gets the current truth, not a history.
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
 * each publication, and each field found lacking; the callback runs on the publisher's thread and should
 * only log or hand over. Stopping leaves the slices in place: a restarted
 * driver takes them over, and the Node's owner reference removes them with
 * the Node. */
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
	kube_publish_report_fn report;
	void *report_ctx;
};

struct kube_publisher;

/* How long a change of the devices waits for more before it is written: the
 * faults of one burst within it are one write per node, not one per chip,
 * which at fleet scale is what a rack losing power costs the API server.
 * It adds at most this to fault -> ResourceSlice (the bench's 1 s target). */
#define KUBE_PUBLISH_COALESCE_MS 250

/* Starts the thread; it waits for a first snapshot. Returns 0, -EINVAL (no
 * client or node name, a node name that is not a DNS subdomain, a driver
 * name kube_driver_name_ok refuses), -ENOMEM or the errno of
 * pthread_create. */
int kube_publisher_start(const struct kube_publisher_options *options, struct kube_publisher **ret_publisher);

/* Hands over the latest snapshot (a new reference is taken) and the facts
 * of its devices by index (HBM bytes, time-slicing shares; copied; NULL:
 * none known). Never blocks on the server. -ENOMEM leaves the previous
 * snapshot in place. */
int kube_publisher_offer(struct kube_publisher *publisher, struct npu_snapshot *snapshot,
			 const struct kube_device_facts *facts);

/* Says that someone else may have deleted this node's slices: the kubelet
 * deletes every slice of its node when it starts, and a driver's slices
 * 30 s after the driver went away, in the background, so a wipe can land
 * just after the driver registered again. The publisher lists the slices
 * at once, and again every few seconds during the next for_ms, writing
 * back what is missing. Never blocks on the server. */
void kube_publisher_recheck(struct kube_publisher *publisher, int for_ms);
/* Stops the thread and frees the publisher; a round in progress ends after
 * its current request (which takes at most the client's timeout). NULL is
 * fine. */
void kube_publisher_stop(struct kube_publisher *publisher);
