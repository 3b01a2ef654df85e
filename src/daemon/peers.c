/* SPDX-License-Identifier: Apache-2.0 */
#include "daemon/peers.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include "base/file.h"
#include "base/parse.h"

int peers_join(struct peers *p, const char *state_dir)
{
	char path[4200];
	p->fd = -1;
	int r = path_join(path, sizeof(path), state_dir, PEERS_LOCK_FILE);
	if (r < 0)
		return r;
	/* The DaemonSet's hostPath makes it; a plugin started by hand may
	 * come first. */
	if ((r = mkdir_p(state_dir, 0755)) < 0)
		return r;
	int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0)
		return -errno;
	/* Only an exclusive holder can make this wait, and one holds it for
	 * an instant, at its stop. */
	if (flock(fd, LOCK_SH) < 0) {
		r = -errno;
		close(fd);
		return r;
	}
	p->fd = fd;
	return 0;
}

bool peers_alone(struct peers *p)
{
	if (p->fd < 0)
		return true;
	/* Converting the lock may drop the shared one first; the answer is
	 * only read at the stop, when it no longer matters. */
	return flock(p->fd, LOCK_EX | LOCK_NB) == 0;
}

void peers_leave(struct peers *p)
{
	if (p->fd >= 0)
		close(p->fd);
	p->fd = -1;
}
