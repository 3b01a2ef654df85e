/* SPDX-License-Identifier: Apache-2.0 */
/* The commands kubelet-sim reads on stdin, one per line (see
 * docs/kubelet-sim.md): allocations like the kubelet's device manager
 * (`allocate N`, with GetPreferredAllocation when advertised) and raw ones for
 * tests (`allocate-ids`, `allocate-none`, `allocate-many`), `release`,
 * `options`, `list`, `use`, `restart`, `end-stream` and `quit`. They run on
 * the main thread; RPCs are made without holding sim->lock. */
#pragma once

#include <stdbool.h>

#include "sim.h"

/* Longest command line accepted, newline included. */
#define COMMAND_LINE_MAX 4096

/* Runs one command line (split in place). Sets *ret_quit on `quit`;
 * everything else, errors included, is reported on stdout. */
void commands_run(struct sim *sim, char *line, bool *ret_quit);
