/* SPDX-License-Identifier: Apache-2.0 */
/* What a reload (SIGHUP, or the --config file changed) takes from the new
 * configuration into the running one: the resources (their sockets stay in
 * the running directory), time-slicing, the health interval and the log
 * level. Settings that only a restart can change (where the daemon looks,
 * how it answers) are reported with the value kept. Part of the top level:
 * it logs. */
#pragma once

#include "config/config.h"

/* Copies what a running daemon can change from next into running and
 * returns 0, or takes nothing (-ENAMETOOLONG: the default resource's socket
 * would not fit in the running socket directory). A per-family or vNPU
 * resource whose socket does not fit is left out of next. what names the
 * trigger in logs ("SIGHUP", "reload"). */
int reload_take(struct config *running, struct config *next, const char *what);
