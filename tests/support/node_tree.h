/* SPDX-License-Identifier: Apache-2.0 */
/* The file tree of a simulated Ascend node, for the integration tests
 * (through tests/integration/harness) and the benchmark: under a root
 * directory, which the plugin takes as --host-root, device nodes as regular
 * files in dev/, the driver tree at NODE_TREE_DRIVER_PATH with the DCMI
 * simulator installed as its libdcmi.so, the files Allocate mounts, the
 * kubelet's socket directory, and the DCMI state file the simulator reads
 * (ASCEND_FAKE_DCMI_STATE). Calls return 0 or a negative errno. */
#pragma once

#include <stdbool.h>
#include <sys/types.h>

/* The driver's path on the host, as --driver-path gives it. */
#define NODE_TREE_DRIVER_PATH "/usr/local/Ascend/driver"
/* Below the root. */
#define NODE_TREE_DEV_DIR "dev"
#define NODE_TREE_SOCKET_DIR "kubelet"
#define NODE_TREE_DCMI_DIR "usr/local/Ascend/driver/lib64/driver"
#define NODE_TREE_STATE_FILE "dcmi-state"
/* In the socket directory. */
#define NODE_TREE_PLUGIN_SOCKET "ascend-npu.sock"

struct node_tree_options {
	unsigned chips;       /* dev/davinci0 .. davinci<chips-1> */
	bool no_manager;      /* no dev/davinci_manager */
	const char *dcmi_lib; /* installed as the driver tree's libdcmi.so; NULL: none */
};

/* Makes the tree under root, which exists: every directory (the DCMI
 * directory too when no library goes there), the device nodes and the
 * driver's files. The state file is the caller's (chip_state_write). */
int node_tree_build(const char *root, const struct node_tree_options *options);

/* An empty file at root/relative (emptied when it is there), and the
 * directories on its way. */
int node_tree_touch(const char *root, const char *relative);

/* Installs a copy of from at to with mode, atomically, as a library that a
 * running process has loaded must be replaced. */
int node_tree_install(const char *from, const char *to, mode_t mode);

/* The names in dir (without "." and ".."), sorted, comma separated, in buf;
 * -ENOBUFS when they do not fit. */
int node_tree_list(const char *dir, char *buf, size_t size);

/* A DCMI state file for chips phy 0..chips-1. */
struct chip_state {
	unsigned chips;
	const char *name;         /* chip name, default "910B3" */
	const char *head;         /* lines before the chips, e.g. "subscribe off\n"; may be NULL */
	const char *const *attrs; /* attrs[phy], e.g. "health=2 errors=80E01801", replaces
				   * "health=0" where not NULL; attrs may be NULL */
	const char *tail;         /* lines after the chips; may be NULL */
	unsigned per_card;        /* chips on one card; 0: one up to 64 chips, four beyond (DCMI
				   * lists at most 64 cards) */
};

/* Replaces path atomically with "driver 24.1.rc1", the head, one chip line
 * per chip and the tail. */
int chip_state_write(const char *path, const struct chip_state *state);
