/* SPDX-License-Identifier: Apache-2.0 */
/* The plugin processes of one node that share its files. During a surge
 * roll the old and the new pod run side by side, each on sockets of its own
 * (config_set_instance), and both write the same CDI spec and NFD features
 * file. A process that stops removes them only when it is the last: each
 * holds a shared flock on <state dir>/instances.lock while it runs, and at
 * its stop asks for the exclusive lock without waiting. The kernel drops a
 * killed process's lock, so a crash never leaves a peer behind in the
 * count. */
#pragma once

#include <stdbool.h>

#define PEERS_LOCK_FILE "instances.lock"

struct peers {
	int fd; /* the lock file, -1 when none could be had */
};

/* Takes this process's shared lock in state_dir (made when missing).
 * Returns 0 or a negative errno (the directory cannot be made or written);
 * peers_alone then says true, as for a process with no peers. */
int peers_join(struct peers *peers, const char *state_dir);

/* Whether no other process holds the lock now. */
bool peers_alone(struct peers *peers);

/* Drops the lock. Accepts a peers that never joined. */
void peers_leave(struct peers *peers);
