/* SPDX-License-Identifier: Apache-2.0 */
/* Whole files and directories, the way every module here needs them: a file
 * from outside (a configuration file, a manifest) read whole and bounded
 * (only a regular file, so a FIFO or a device never holds the caller, and at
 * most max bytes); a file others read (a CDI spec, an NFD feature file, a
 * checkpoint) replaced atomically, so that a reader sees the old content or
 * the new, never a part; and directories made as `mkdir -p` makes them. */
#pragma once

#include <dirent.h>
#include <stddef.h>
#include <sys/types.h>

/* Reads path into a malloc'd buffer of *ret_len bytes plus a terminating
 * NUL, so that text can be used as a string at once (a NUL inside the file
 * is the caller's to refuse). Returns 0 with *ret_buf and *ret_len set, or a
 * negative errno with a short message in why ("cannot open: ...", "cannot
 * read: ...", "not a regular file", "larger than N bytes", "out of memory"). */
int file_read_bounded(const char *path, size_t max, char **ret_buf, size_t *ret_len, char *why, size_t why_size);

/* file_write_atomic's flags. */
enum {
	/* fsync the file before the rename and its directory after it, so that
	 * the new content survives a crash. It costs milliseconds, which a file
	 * written anew at every start does not need to pay. */
	FILE_WRITE_SYNC = 1 << 0,
};

/* Replaces path with len bytes of data, atomically: they are written to
 * "<dir>/.<name>.tmp" (a dot-file, which readers of a directory skip, not
 * ending in the final name's suffix), given mode exactly (the umask does not
 * narrow it: readers may run as other users), then renamed over path. A
 * temp file a crash left behind is replaced. Returns 0, or a negative errno
 * with path as it was and no temp file left (-EINVAL when path ends in '/',
 * -ENAMETOOLONG when the temp file's path is longer than PATH_MAX). */
int file_write_atomic(const char *path, const void *data, size_t len, mode_t mode, unsigned flags);

/* Removes path and the temp file of file_write_atomic that a crash may have
 * left beside it. Returns 0 when neither is there any more (also when
 * neither was), or the first negative errno other than -ENOENT. */
int file_remove_atomic(const char *path);

/* Makes the directory path with mode (less the umask) unless it exists:
 * the directory itself, not its parents. Returns 0 when path is a
 * directory afterwards (or a link to one), -ENOTDIR when it is something
 * else, or a negative errno of mkdir(2) or stat(2) (-ENOENT: a parent is
 * missing). */
int mkdir_ensure(const char *path, mode_t mode);

/* `mkdir -p`: every missing directory on path, each made with mode (less
 * the umask). Returns 0 when path is a directory afterwards, -ENOTDIR when
 * it or a parent is something else, -ENAMETOOLONG beyond PATH_MAX, or
 * another negative errno of mkdir(2). What was made before a failure stays. */
int mkdir_p(const char *path, mode_t mode);

/* opendir(3) through open(2) and fdopendir(3), so the directory is O_CLOEXEC
 * and ThreadSanitizer sees its descriptor made: it does not see the one
 * glibc's opendir makes inside itself, and a number last held by another
 * thread's socket (closed inside the uninstrumented gRPC library) then
 * looks like a race at closedir(3). Returns 0 with *ret set, or a negative
 * errno of open(2) or fdopendir(3). */
int dir_open(const char *path, DIR **ret);
