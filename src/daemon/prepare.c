/* SPDX-License-Identifier: Apache-2.0 */
#include "daemon/prepare.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>

#include "base/file.h"

int prepare_open_files(char *why, size_t why_size)
{
	struct rlimit rl;
	if (getrlimit(RLIMIT_NOFILE, &rl) < 0)
		return 0;
	if (rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		if (setrlimit(RLIMIT_NOFILE, &rl) < 0 && getrlimit(RLIMIT_NOFILE, &rl) < 0)
			return 0;
	}
	if (rl.rlim_cur >= DAEMON_MIN_OPEN_FILES)
		return 0;
	snprintf(why, why_size, "the open-file limit (RLIMIT_NOFILE, ulimit -n) is %llu; at least %d are needed",
		 (unsigned long long)rl.rlim_cur, DAEMON_MIN_OPEN_FILES);
	return -EMFILE;
}

int prepare_dir(const char *what, const char *dir, mode_t mode, char *why, size_t why_size)
{
	int r = mkdir_ensure(dir, mode);
	if (r < 0)
		snprintf(why, why_size, "%s %s: %s", what, dir, strerror(-r));
	return r;
}
