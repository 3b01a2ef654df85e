/* SPDX-License-Identifier: Apache-2.0 */
#include "daemon/watch.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/inotify.h>
#include <unistd.h>

#include "base/log.h"
#include "base/parse.h"
#include "fault/separation.h"
#include "node/host_files.h"

#define DIR_GONE (IN_DELETE_SELF | IN_MOVE_SELF | IN_IGNORED)

static void watch_dev_dir(struct watch *w)
{
	w->dev_dir_wd = inotify_add_watch(w->fd, w->dev_dir,
					  IN_CREATE | IN_DELETE | IN_MOVED_FROM | IN_MOVED_TO | IN_ATTRIB | IN_DELETE_SELF |
						  IN_MOVE_SELF | IN_MASK_ADD);
}

static int watch_socket_dir(struct watch *w)
{
	w->socket_dir_wd = inotify_add_watch(w->fd, w->socket_dir,
					     IN_CREATE | IN_DELETE | IN_MOVED_FROM | IN_MOVED_TO | IN_DELETE_SELF |
						     IN_MOVE_SELF | IN_MASK_ADD);
	return w->socket_dir_wd < 0 ? -errno : 0;
}

/* While the kubelet's directory is gone, its parent tells when it is made
 * again (a parent that is gone too leaves it to watch_retry). */
static void watch_socket_parent(struct watch *w)
{
	w->socket_parent_wd = inotify_add_watch(w->fd, w->socket_parent, IN_CREATE | IN_MOVED_TO | IN_MASK_ADD);
}

/* Drops the parent's watch, unless another watch shares its descriptor
 * (the same directory): removing it would remove theirs. */
static void unwatch_socket_parent(struct watch *w)
{
	if (w->socket_parent_wd >= 0 && w->socket_parent_wd != w->dev_dir_wd && w->socket_parent_wd != w->config_dir_wd &&
	    w->socket_parent_wd != w->state_dir_wd)
		inotify_rm_watch(w->fd, w->socket_parent_wd);
	w->socket_parent_wd = -1;
}

/* The --config file is watched through its directory, which sees an editor's
 * rename over it, a writer closing it, and the kubelet's update of a mounted
 * ConfigMap (it renames a new "..data" link into place). Not IN_CREATE: a
 * file just created is still empty, and its writer's close follows. Not
 * watching it only means that a change waits for SIGHUP. IN_MASK_ADD: the
 * directory may be watched for another reason too, and the watches share
 * one descriptor. */
static void watch_config_dir(struct watch *w)
{
	if (!w->config_name)
		return;
	w->config_dir_wd = inotify_add_watch(w->fd, w->config_dir,
					     IN_CLOSE_WRITE | IN_MOVED_TO | IN_DELETE_SELF | IN_MOVE_SELF | IN_MASK_ADD);
	if (w->config_dir_wd < 0 && !w->logged_config_watch)
		log_warn("cannot watch %s for changes of %s: %s; send SIGHUP after changing it", w->config_dir,
			 w->config_name, strerror(errno));
	w->logged_config_watch = w->config_dir_wd < 0;
}

/* The record of separated chips is replaced by a rename (the plugin's and
 * ascend-doctor's writes), or written in place or removed by hand. A
 * directory not there yet (nothing was separated) is no problem: the plugin
 * makes it at its first separation. */
static void watch_state_dir(struct watch *w)
{
	w->state_dir_wd = inotify_add_watch(w->fd, w->state_dir,
					    IN_CLOSE_WRITE | IN_MOVED_TO | IN_MOVED_FROM | IN_DELETE | IN_DELETE_SELF |
						    IN_MOVE_SELF | IN_MASK_ADD);
	if (w->state_dir_wd < 0)
		w->state_watch_lost = true;
}

/* Splits path into the directory that holds it and the name in it. */
static void split_path(const char *path, char *dir, size_t dir_size, const char **ret_name)
{
	const char *slash = strrchr(path, '/');
	if (!slash) {
		(void)str_copy(dir, dir_size, ".");
		*ret_name = path;
		return;
	}
	size_t n = slash == path ? 1 : (size_t)(slash - path);
	if (n >= dir_size)
		n = dir_size - 1; /* never: the path fits the same size */
	memcpy(dir, path, n);
	dir[n] = '\0';
	*ret_name = slash + 1;
}

int watch_init(struct watch *w, const struct config *c, const char *kubelet_socket, char *why, size_t why_size)
{
	*w = (struct watch){
		.fd = -1,
		.socket_dir_wd = -1,
		.socket_parent_wd = -1,
		.dev_dir_wd = -1,
		.config_dir_wd = -1,
		.state_dir_wd = -1,
		.state_dir = c->state_dir,
		.socket_dir = c->socket_dir,
		.dev_dir = c->dev_dir,
		.kubelet_socket = kubelet_socket,
	};
	w->fd = inotify_init1(IN_CLOEXEC | IN_NONBLOCK);
	if (w->fd < 0) {
		int r = -errno;
		snprintf(why, why_size, "cannot create an inotify instance: %s%s", strerror(-r),
			 r == -EMFILE ? " (per-process fd limit, or fs.inotify.max_user_instances)" : "");
		return r;
	}
	/* "/a/b/" names b in /a: trailing slashes are not names. */
	char socket_dir[CONFIG_PATH_MAX];
	(void)str_copy(socket_dir, sizeof(socket_dir), c->socket_dir); /* same size */
	for (size_t n = strlen(socket_dir); n > 1 && socket_dir[n - 1] == '/'; n--)
		socket_dir[n - 1] = '\0';
	const char *name;
	split_path(socket_dir, w->socket_parent, sizeof(w->socket_parent), &name);
	w->socket_dir_name = c->socket_dir + (name - socket_dir);
	if (c->config_file[0])
		split_path(c->config_file, w->config_dir, sizeof(w->config_dir), &w->config_name);

	/* Without the device plugin there is no kubelet's directory to watch. */
	int r = kubelet_socket ? watch_socket_dir(w) : 0;
	if (r < 0) {
		snprintf(why, why_size, "cannot watch %s: %s%s", c->socket_dir, strerror(-r),
			 r == -ENOSPC ? " (fs.inotify.max_user_watches)" : "");
		return r;
	}
	return 0;
}

void watch_fini(struct watch *w)
{
	if (w->fd >= 0)
		close(w->fd);
	w->fd = -1;
}

/* The name of the kubelet's directory in its parent (no trailing slash). */
static bool is_socket_dir_name(const struct watch *w, const char *name)
{
	size_t n = strcspn(w->socket_dir_name, "/");
	return strncmp(name, w->socket_dir_name, n) == 0 && name[n] == '\0';
}

static void read_event(struct watch *w, const struct inotify_event *ev, const struct resource_set *resources,
		       struct watch_changes *ch)
{
	const char *name = ev->len ? ev->name : "";
	/* An overflow (wd -1) lost events of every watch. */
	if (ev->mask & IN_Q_OVERFLOW)
		ch->overflow = true;
	if (ev->wd < 0)
		return;
	/* No else between these: one directory may hold several of them (the
	 * watches share its wd). */
	if (ev->wd == w->config_dir_wd) {
		if (ev->mask & DIR_GONE) {
			w->config_dir_wd = -1;
			w->config_watch_lost = true;
		} else if (strcmp(name, w->config_name) == 0 || strcmp(name, "..data") == 0) {
			ch->config = true;
		}
	}
	if (ev->wd == w->state_dir_wd) {
		if (ev->mask & DIR_GONE) {
			w->state_dir_wd = -1;
			w->state_watch_lost = true;
		} else if (strcmp(name, FAULT_SEPARATION_FILE) == 0) {
			ch->separations = true;
		}
	}
	if (ev->wd == w->socket_dir_wd) {
		if ((ev->mask & (IN_CREATE | IN_MOVED_TO)) && strcmp(name, "kubelet.sock") == 0)
			ch->kubelet_started = true;
		if (ev->mask & (IN_DELETE | IN_MOVED_FROM))
			for (size_t i = 0; i < resources->count; i++)
				ch->socket_gone[i] |= strcmp(name, resources->defs[i].endpoint) == 0;
		if (ev->mask & DIR_GONE)
			ch->socket_dir_gone = true;
	}
	if (ev->wd == w->socket_parent_wd && w->socket_dir_wd < 0 && (ev->mask & (IN_CREATE | IN_MOVED_TO)) &&
	    is_socket_dir_name(w, name) && watch_socket_dir(w) == 0) {
		ch->socket_dir_back = true;
		unwatch_socket_parent(w);
	}
	if (ev->wd == w->dev_dir_wd) {
		if (ev->mask & DIR_GONE)
			w->dev_dir_wd = -1;
		if (strncmp(name, "davinci", 7) == 0 || strncmp(name, "vdavinci", 8) == 0 ||
		    host_files_is_shared_node(name) || w->dev_dir_wd < 0)
			ch->devices = true;
	}
}

void watch_read(struct watch *w, const struct resource_set *resources, struct watch_changes *ch)
{
	char buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
	*ch = (struct watch_changes){ 0 };

	for (;;) {
		ssize_t n = read(w->fd, buf, sizeof(buf));
		if (n <= 0)
			break;
		for (char *p = buf; p < buf + n;) {
			const struct inotify_event *ev = (const struct inotify_event *)p;
			p += sizeof(*ev) + ev->len;
			read_event(w, ev, resources, ch);
		}
	}
	if (ch->overflow) {
		/* Everything the lost events could have been about; what did not
		 * change is ignored by the daemon (sockets still there, the same
		 * kubelet.sock the sessions dialled). */
		ch->devices = true;
		ch->config = w->config_name != NULL;
		ch->separations = true;
		ch->socket_dir_gone = w->socket_dir_wd >= 0 && !path_exists(w->socket_dir);
		for (size_t i = 0; i < resources->count; i++)
			ch->socket_gone[i] = true;
		ch->kubelet_started = w->kubelet_socket && path_exists(w->kubelet_socket);
	}
	if (ch->socket_dir_gone) {
		inotify_rm_watch(w->fd, w->socket_dir_wd);
		w->socket_dir_wd = -1;
		ch->socket_dir_back = false;
		watch_socket_parent(w);
		/* Made again before the parent was watched: no event will say so. */
		if (watch_socket_dir(w) == 0) {
			ch->socket_dir_back = true;
			unwatch_socket_parent(w);
		}
	}
}

void watch_retry(struct watch *w, struct watch_changes *ch)
{
	*ch = (struct watch_changes){ 0 };
	if (w->dev_dir_wd < 0)
		watch_dev_dir(w);
	if (w->socket_dir_wd < 0 && w->kubelet_socket) {
		if (watch_socket_dir(w) == 0) {
			ch->socket_dir_back = true;
			unwatch_socket_parent(w);
		} else if (w->socket_parent_wd < 0) {
			watch_socket_parent(w);
		}
	}
	if (w->state_dir_wd < 0) {
		watch_state_dir(w);
		if (w->state_dir_wd >= 0 && w->state_watch_lost) {
			w->state_watch_lost = false;
			ch->separations = true;
		}
	}
	if (w->config_dir_wd < 0 && w->config_name) {
		/* Whatever was written while the directory was not watched (it was
		 * removed and made again) sent no event: read the file now that it
		 * is watched again. */
		watch_config_dir(w);
		if (w->config_dir_wd >= 0 && w->config_watch_lost) {
			w->config_watch_lost = false;
			ch->config = true;
		}
	}
}
