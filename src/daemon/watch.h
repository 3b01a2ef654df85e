/* SPDX-License-Identifier: Apache-2.0 */
/* What the daemon watches on the file system, through one inotify instance
 * on its loop, turned into a struct of what changed:
 *
 *   the device directory      davinci*, vdavinci* and the shared nodes
 *                             (node/host_files.h) came or went;
 *   the kubelet's directory   kubelet.sock created (a kubelet started), a
 *                             resource's socket deleted, the directory
 *                             removed; once removed, its parent is watched
 *                             so that its return is seen at once;
 *   the --config directory    the file written or renamed over, a mounted
 *                             ConfigMap's "..data" swapped; once the
 *                             directory is gone and watched again, the file
 *                             is to be read again (whatever was written
 *                             meanwhile sent no event);
 *   the --state-dir           the record of separated chips written or
 *                             removed (ascend-doctor release); watched once
 *                             the directory exists, and read again then.
 *
 * A watch that cannot be had is tried again by watch_retry, which the daemon
 * calls at every refresh. Part of the top level: it logs. */
#pragma once

#include <stdbool.h>

#include "config/config.h"
#include "plugin/resources.h"

struct watch {
	int fd;
	int socket_dir_wd;
	int socket_parent_wd; /* while the kubelet's directory is gone, -1 otherwise */
	int dev_dir_wd;
	int config_dir_wd; /* -1 when not watched */
	const char *socket_dir, *dev_dir, *kubelet_socket;
	char socket_parent[CONFIG_PATH_MAX];
	const char *socket_dir_name; /* in socket_dir */
	char config_dir[CONFIG_PATH_MAX];
	const char *config_name; /* in the config's config_file; NULL without --config */
	bool logged_config_watch;
	bool config_watch_lost; /* read the file once it is watched again */
	const char *state_dir;
	int state_dir_wd;      /* -1 when not watched */
	bool state_watch_lost; /* read the record once the directory is watched again */
};

struct watch_changes {
	bool overflow;         /* events were lost: everything below is set as a precaution */
	bool devices;          /* a device node or shared node came or went */
	bool kubelet_started;  /* kubelet.sock created */
	bool socket_dir_gone;  /* the kubelet's directory was removed */
	bool socket_dir_back;  /* ... and is there again, watched anew */
	bool config;           /* the --config file may have changed */
	bool separations;      /* the record of separated chips may have changed */
	bool socket_gone[RESOURCES_MAX]; /* the resource's socket file name was deleted */
};

/* Creates the inotify instance and watches the kubelet's directory (which
 * must exist); a NULL kubelet_socket (the device plugin off) leaves that
 * directory alone. The config's strings and kubelet_socket must outlive the
 * watch. Returns 0, or a
 * negative errno with why. */
int watch_init(struct watch *watch, const struct config *config, const char *kubelet_socket, char *why,
	       size_t why_size);

/* The inotify descriptor, for the loop. */
static inline int watch_fd(const struct watch *watch)
{
	return watch->fd;
}

void watch_fini(struct watch *watch);

/* Reads every pending event into *changes (zeroed first); resources name
 * the socket files to look for. */
void watch_read(struct watch *watch, const struct resource_set *resources, struct watch_changes *changes);

/* Watches what is not watched yet: the device directory, the kubelet's
 * directory (socket_dir_back set when it is watched again), the --config
 * directory (config set when it was lost and is watched again), the
 * --state-dir (separations set when it was lost or missing and is watched
 * now). */
void watch_retry(struct watch *watch, struct watch_changes *changes);
