/* SPDX-License-Identifier: Apache-2.0 */
/* Follows one plugin's ListAndWatch stream on a thread of its own, like the
 * kubelet's endpoint client: every answer replaces the resource's device list
 * (`devices` line, plus `devices-invalid` warnings), and when the stream ends
 * for any reason it prints `stream-ended` and marks every device unhealthy.
 *
 * Thread handoff: the follower is owned by exactly one slot (a resource's
 * `follower` field). Whoever wants it stopped detaches it from the slot under
 * sim->lock, drops the lock, then calls follower_stop(), which sets the stop
 * flag, cancels the stream (gc_stream_cancel: the blocked reader wakes up at
 * once), joins the thread and frees it. Only the thread reads from and closes
 * its stream (gc_stream_close). It touches the resource only under sim->lock
 * and only while its plugin is still the resource's registered one, so a
 * late follower never clobbers a newer registration's devices. */
#pragma once

#include <stdbool.h>

#include "sim.h"

struct follower;

/* Starts following plugin's stream for res (takes a plugin reference). May be
 * called with sim->lock held. Returns 0 or a negative errno. */
int follower_start(struct sim *sim, struct sim_resource *res, struct sim_plugin *plugin,
		   struct follower **ret_follower);

/* Ends the stream (if it is still open) with status CANCELLED and the given
 * details, waits for the thread and frees the follower. Call without sim->lock, after detaching it.
 * Returns true when this call ended the stream, false when it had already
 * ended by itself (and said so). Accepts NULL (returns false). */
bool follower_stop(struct follower *follower, const char *reason);
