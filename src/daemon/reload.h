/* SPDX-License-Identifier: Apache-2.0 */
/* What a reload (SIGHUP, or the --config file changed) takes from the new
 * configuration into the running one: the resources (their sockets stay in
 * the running directory), time-slicing, the health interval and the log
 * level. Settings that only a restart can change (where the daemon looks,
 * how it answers) are reported with the value kept. Part of the top level:
 * it logs. */
#pragma once

#include "config/config.h"
#include "daemon/serving.h"

/* Reads the configuration anew for SIGHUP, as at start (command line,
 * environment, --config file). Returns 0, or a negative errno with why; the
 * daemon then keeps the running configuration. */
typedef int (*daemon_reload_fn)(void *ctx, struct config *ret_config, char *why, size_t why_size);

/* A configuration read anew, and what it would serve. */
struct reload_next {
	struct config config;
	struct serving serving;
};

/* Reads the configuration with read (and ctx) and what it serves into
 * next. Returns 0, or a negative errno with why. */
int reload_read(daemon_reload_fn read, void *ctx, struct reload_next *next, char *why, size_t why_size);

/* Copies what a running daemon can change from next (next_serving) into
 * running (running_serving) and returns 0, or takes nothing
 * (-ENAMETOOLONG: the default resource's socket would not fit in the
 * running socket directory). A per-family or vNPU resource whose socket does
 * not fit is left out of next_serving. The CDI names and the strategies stay
 * as they are: the gRPC threads hold them. what names the trigger in logs
 * ("SIGHUP", "reload"). */
int reload_take(struct config *running, struct serving *running_serving, const struct config *next,
		struct serving *next_serving, const char *what);
