/* SPDX-License-Identifier: Apache-2.0 */
/* What the process and the node must offer before the daemon starts: room
 * for file descriptors, and the directories it serves and writes in. */
#pragma once

#include <stddef.h>
#include <sys/types.h>

/* gRPC aborts the process when it cannot get the fds it needs for itself, so
 * there must be room before it starts: raises the soft open-file limit to
 * the hard one, as systemd does for its services. Returns 0, or -EMFILE with
 * why when the limit stays below DAEMON_MIN_OPEN_FILES. */
#define DAEMON_MIN_OPEN_FILES 128
int prepare_open_files(char *why, size_t why_size);

/* Creates dir (mode) when only it is missing, as the kubelet's socket
 * directory on a node whose kubelet has not started yet, or the CDI
 * directory, which runtimes pick up when it appears. Whether a file can be
 * made in it is for its user to say. Returns 0, or a negative errno with
 * why ("<what> <dir>: <error>"). */
int prepare_dir(const char *what, const char *dir, mode_t mode, char *why, size_t why_size);
