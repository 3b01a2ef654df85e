/* SPDX-License-Identifier: Apache-2.0 */
/* Scratch directories of the tests and the benchmark: made fresh under /tmp
 * and removed with everything in them, without a shell (a path with a
 * quote or a space in it is just a path) and without following symbolic
 * links out of the tree. Calls return 0 or a negative errno. */
#pragma once

#include <stddef.h>

/* Makes a fresh directory /tmp/<name>-XXXXXX (mkdtemp: mode 0700, owned
 * by the caller) and writes its path to dir[size]. */
int tmpdir_make(char *dir, size_t size, const char *name);

/* Removes path and everything below it; a symbolic link is removed, not
 * followed. What cannot be removed stays, and the first failure is
 * returned (-ENOENT when path does not exist, -EINVAL for ""). */
int tmpdir_remove(const char *path);
