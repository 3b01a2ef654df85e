/* SPDX-License-Identifier: Apache-2.0 */
/* DCMI's side of dynamic vNPUs, for the DRA driver (dra/driver.h's carver):
 * the driver's threads queue a create or a destroy and wait for it up to a
 * deadline; the loop starts them one at a time as background vendor calls
 * (npu/dcmi.h, dcmi_vnpu_create_start), takes each outcome when its call
 * returns, and refreshes the inventory so that the snapshot lists the
 * change before the next one starts. A start refused as busy (a chip reset
 * under way) is tried again every CARVER_RETRY_MS; a call still running at
 * its caller's deadline is given up (the library then stays stuck in it,
 * as with any overdue vendor call). Part of the top level: each create and
 * destroy is logged. */
#pragma once

#include "dra/driver.h"
#include "loop/loop.h"
#include "npu/inventory.h"

#define CARVER_RETRY_MS 100

struct carver_options {
	struct loop *loop;
	struct inventory *inventory;
	/* After each call that returned: refresh the inventory now (loop). */
	void (*refresh)(void *ctx);
	void *ctx;
};

struct carver;

int carver_new(const struct carver_options *options, struct carver **ret_carver);
/* Fails every request queued or under way (its DCMI call is given up) and
 * every later one, so that no caller waits on a loop that stopped. Accepts
 * NULL. */
void carver_stop(struct carver *carver);
/* Stops it, then frees it: no caller may be inside a carver call (stop
 * the DRA service first). Accepts NULL. */
void carver_free(struct carver *carver);

/* The driver's view of it. */
struct dra_carver carver_for_driver(struct carver *carver);
