/* SPDX-License-Identifier: Apache-2.0 */
/* Scratch directories; see tmpdir.h. */
#include "support/tmpdir.h"

#include <errno.h>
#include <ftw.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/parse.h"

int tmpdir_make(char *dir, size_t size, const char *name)
{
	char path[PATH_MAX];
	int r = str_printf(path, sizeof(path), "/tmp/%s-XXXXXX", name);
	if (r < 0)
		return r;
	/* Checked before the directory exists, so that none is left behind. */
	if (strlen(path) >= size)
		return -ENAMETOOLONG;
	if (!mkdtemp(path))
		return -errno;
	memcpy(dir, path, strlen(path) + 1);
	return 0;
}

/* nftw's callback has no context: the walk's first failure, per thread. */
static _Thread_local int remove_error;

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	if (remove(path) < 0 && remove_error == 0)
		remove_error = -errno;
	return 0;
}

int tmpdir_remove(const char *path)
{
	if (!path || !path[0])
		return -EINVAL;
	remove_error = 0;
	/* Depth first, so a directory is emptied before it goes; FTW_PHYS
	 * reports a link as itself, so nothing outside the tree is touched. */
	if (nftw(path, remove_entry, 16, FTW_DEPTH | FTW_PHYS) < 0)
		return -errno;
	return remove_error;
}
