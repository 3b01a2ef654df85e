/* SPDX-License-Identifier: Apache-2.0 */
/* Who holds a chip: the node's pod map (which pod and container holds
 * which chip, from the kubelet's pod resources API, telemetry/podres.h),
 * kept by one owner and read by whoever must know: the fault stage names
 * the holders of a faulty chip, the hot reset waits until none holds it,
 * and every list is handed to the metrics for their pod labels. A list is
 * taken on the daemon's loop when a reader asks for a newer one (a scrape,
 * the reset guard), at most every HOLDERS_REFRESH_MIN_MS, and after a burst
 * of Allocates once the kubelet had time to record them. A problem with
 * the pod resources socket is said once, and that it is over. Part of the
 * top level: it logs. Everything here tolerates a NULL holders, as when
 * --pod-resources-socket is empty. */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "loop/loop.h"
#include "telemetry/metrics.h"

struct holders;

/* What the pod map is made with, at init, never set after it. */
struct holders_options {
	struct loop *loop;
	const char *socket;      /* the kubelet's pod resources socket; empty: off */
	struct metrics *metrics; /* hears every list (pod labels) */
	/* The resource names whose devices count, into names (at most max);
	 * returns how many. On the loop. */
	size_t (*resources)(void *ctx, const char *names[], size_t max);
	void *resources_ctx;
};

/* Returns 0 with *ret_holders (NULL when the socket is empty), or a
 * negative errno (the loop's timer or wakeup, the client's thread). */
int holders_new(const struct holders_options *options, struct holders **ret_holders);

/* Cancels a list under way and frees. Accepts NULL. */
void holders_free(struct holders *holders);

/* A reader wants a newer list (a scrape). Any thread. */
void holders_want(struct holders *holders);

/* An Allocate was answered: a list follows once the burst settles. Any
 * thread. */
void holders_allocated(struct holders *holders);

/* The containers that hold chip_id ("npu-3") as the kubelet's pod
 * resources last said, "ns/pod/container, ..." in buf (cut with ",..."):
 * 0, or -ENOENT when none is known to (or pod resources are off). */
int holders_of(struct holders *holders, const char *chip_id, char *buf, size_t size);

/* Whether a container holds chip_id by a pod resources list that began at
 * or after since_ms (now_ms()'s clock), for a decision that must not act
 * on a chip in use: 0 when none does, 1 when some do (named in buf as by
 * holders_of; a newer list is asked for), -EAGAIN when no list that
 * recent has come yet (one is asked for: call again at the next refresh),
 * -ENODATA when pod resources is off or its last list failed (why in
 * buf). */
int holders_since(struct holders *holders, const char *chip_id, int64_t since_ms, char *buf, size_t size);
