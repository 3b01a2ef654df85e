/* SPDX-License-Identifier: Apache-2.0 */
#include "output.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "base/file.h"
#include "base/parse.h"

/* The directory of path made, unless path has none. */
static int make_dir_of(const char *path)
{
	char dir[4096];
	const char *slash = strrchr(path, '/');
	if (!slash || slash == path)
		return 0;
	if (str_printf(dir, sizeof(dir), "%.*s", (int)(slash - path), path) < 0)
		return -ENAMETOOLONG;
	return mkdir_p(dir, 0755);
}

static int write_one(const char *path, const char *data, char *why, size_t why_size)
{
	int r = make_dir_of(path);
	if (r == 0)
		r = file_write_atomic(path, data, strlen(data), 0644, 0);
	if (r < 0)
		return why_fail(why, why_size, r, "cannot write %s: %s", path, strerror(-r));
	return 0;
}

int rt_output_write(const char *table_path, const char *env_path, const char *json, size_t ranks, char *why,
		    size_t why_size)
{
	/* Single quotes keep the path whole in a shell; one inside could not be. */
	if (strchr(table_path, '\'') || strchr(table_path, '\n'))
		return why_invalid(why, why_size, "%s: a path with a quote or newline cannot go into %s", table_path,
				   env_path);
	char env[4200];
	if (str_printf(env, sizeof(env), "RANK_TABLE_FILE='%s'\nRANK_SIZE=%zu\n", table_path, ranks) < 0)
		return why_fail(why, why_size, -ENAMETOOLONG, "%s: too long", table_path);
	int r = write_one(table_path, json, why, why_size);
	if (r == 0)
		r = write_one(env_path, env, why, why_size);
	return r;
}
