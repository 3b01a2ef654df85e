#include "plugin/daemon.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/inotify.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/log.h"
#include "base/parse.h"
#include "grpc/client.h"
#include "grpc/server.h"
#include "loop/loop.h"
#include "npu/inventory.h"
#include "plugin/registrar.h"
#include "plugin/service.h"

#define REBIND_RETRY_MS 1000

struct daemon {
	const struct config *config;
	struct loop *loop;
	int signal_fd;
	int inotify_fd;
	int socket_dir_wd;
	int dev_dir_wd;

	struct loop_timer *health_timer;
	struct loop_timer *rebind_timer;
	struct loop_async *fault_async;
	struct loop_async *stream_ended_async;

	struct inventory *inventory;
	struct service *service;
	struct gs_server *server;
	struct registrar *registrar;

	/* What was last logged, so each condition is reported once. */
	struct npu_snapshot *logged;
	struct inventory_status logged_status;
	bool logged_once;
	bool bind_failed;
	bool registered_once;
	int64_t register_started_ms;
	/* The kubelet.sock we are registered with, so that an inotify event for
	 * a kubelet we already registered with does not start over. */
	bool registered;
	dev_t kubelet_dev;
	ino_t kubelet_ino;
};

/* DCMI calls its fault handler on a vendor thread without a context pointer. */
static struct loop_async *fault_wakeup;
static pthread_mutex_t fault_lock = PTHREAD_MUTEX_INITIALIZER;
static struct dcmi_dms_fault_event last_fault;
static unsigned fault_count;

static void on_dcmi_fault(struct dcmi_event *event)
{
	if (event && event->type == DCMI_EVENT_TYPE_DMS_FAULT) {
		pthread_mutex_lock(&fault_lock);
		last_fault = event->event_t.dms_event;
		fault_count++;
		pthread_mutex_unlock(&fault_lock);
	}
	if (fault_wakeup)
		loop_async_send(fault_wakeup);
}

/* --- reporting ---------------------------------------------------------- */

static void report_status(struct daemon *d, const struct inventory_status *st)
{
	struct inventory_status *old = &d->logged_status;
	bool first = !d->logged_once;
	const struct config *c = d->config;

	if (first || st->source != old->source || strcmp(st->dcmi_why, old->dcmi_why) != 0) {
		if (st->source == INVENTORY_SOURCE_DCMI)
			log_info("using DCMI from %s (driver %s)", st->dcmi_path,
				 st->driver_version[0] ? st->driver_version : "version unknown");
		else if (st->source == INVENTORY_SOURCE_DEVFS && c->backend == NPU_BACKEND_AUTO)
			log_warn("DCMI unavailable (%s); using device files under %s, health = node present; "
				 "retrying DCMI every %lldms",
				 st->dcmi_why, c->dev_dir, (long long)c->health_interval_ms);
		else if (st->source == INVENTORY_SOURCE_DEVFS)
			log_info("using device files under %s", c->dev_dir);
		else
			log_warn("DCMI unavailable (%s); no devices until it loads, retrying every %lldms",
				 st->dcmi_why, (long long)c->health_interval_ms);
	}
	if (st->source == INVENTORY_SOURCE_DCMI &&
	    (first || old->source != INVENTORY_SOURCE_DCMI || st->events != old->events)) {
		if (st->events)
			log_info("subscribed to DCMI fault events");
		else
			log_warn("DCMI fault events unavailable (%d); polling health every %lldms", st->events_error,
				 (long long)c->health_interval_ms);
	}
	if ((first && !st->driver_ready) || (!first && st->driver_ready != old->driver_ready)) {
		if (st->driver_ready)
			log_info("driver ready: %s/davinci_manager is present", c->dev_dir);
		else
			log_warn("driver not ready: %s/davinci_manager is missing; every device is Unhealthy",
				 c->dev_dir);
	}
	if (st->discovery_error.code != old->discovery_error.code ||
	    (st->discovery_error.call != old->discovery_error.call && st->discovery_error.code)) {
		if (st->discovery_error.code)
			log_warn("%s failed with %d; serving the chips that answered",
				 st->discovery_error.call ? st->discovery_error.call : "DCMI",
				 st->discovery_error.code);
	}
	if (st->devfs_error != old->devfs_error && st->devfs_error)
		log_warn("cannot read %s: %s", c->dev_dir, strerror(-st->devfs_error));
	*old = *st;
}

static void report_devices(struct daemon *d, const struct npu_snapshot *snap)
{
	const struct npu_snapshot *old = d->logged;
	bool same_ids = old && old->count == snap->count;
	for (size_t i = 0; same_ids && i < snap->count; i++)
		same_ids = strcmp(old->devices[i].id, snap->devices[i].id) == 0;

	if (!same_ids) {
		if (snap->count == 0) {
			log_warn("no NPU chips found; advertising 0 devices and retrying every %lldms",
				 (long long)d->config->health_interval_ms);
		} else {
			char ids[1024] = "";
			size_t used = 0;
			for (size_t i = 0; i < snap->count && used < sizeof(ids) - 16; i++)
				used += (size_t)snprintf(ids + used, sizeof(ids) - used, "%s%s", i ? "," : "",
							 snap->devices[i].id);
			const struct npu_chip *chip = &snap->devices[0].chip;
			log_info("found %zu NPU chips (%s%s, family %s): %s", snap->count, chip->name[0] ? "chip " : "",
				 chip->name[0] ? chip->name : "name unknown", npu_family_name(chip->family), ids);
		}
	}
	for (size_t i = 0; i < snap->count; i++) {
		const struct npu_device *dev = &snap->devices[i];
		const struct npu_device *before = old ? npu_snapshot_find(old, dev->id) : NULL;
		bool was_healthy = before ? before->healthy : true;
		char why[256];
		if (!dev->healthy && (was_healthy || !before || before->fault != dev->fault)) {
			npu_device_describe(dev, why, sizeof(why));
			log_warn("%s is Unhealthy: %s", dev->id, why);
		} else if (dev->healthy && !was_healthy) {
			log_info("%s recovered: Healthy", dev->id);
		}
	}
	npu_snapshot_unref(d->logged);
	d->logged = npu_snapshot_ref((struct npu_snapshot *)(uintptr_t)snap);
}

/* --- inventory ---------------------------------------------------------- */

static void watch_dev_dir(struct daemon *d);
static void watch_socket_dir_again(struct daemon *d);

static void refresh(struct daemon *d, const char *reason)
{
	bool changed = false;
	if (inventory_refresh(d->inventory, &changed) < 0) {
		log_error("cannot refresh the inventory (%s): out of memory", reason);
		return;
	}
	report_status(d, inventory_status(d->inventory));
	struct npu_snapshot *snap = inventory_snapshot(d->inventory);
	if (changed || !d->logged_once) {
		log_debug("device list changed (%s): %zu devices, %zu healthy", reason, snap->count, snap->healthy);
		report_devices(d, snap);
		if (service_publish(d->service, snap) < 0)
			log_error("cannot publish the device list: out of memory");
	}
	d->logged_once = true;
	npu_snapshot_unref(snap);
	if (d->dev_dir_wd < 0)
		watch_dev_dir(d);
	if (d->socket_dir_wd < 0)
		watch_socket_dir_again(d);
}

static void on_health_timer(void *ctx)
{
	refresh(ctx, "health poll");
}

static void on_fault(void *ctx)
{
	struct daemon *d = ctx;
	pthread_mutex_lock(&fault_lock);
	struct dcmi_dms_fault_event ev = last_fault;
	unsigned count = fault_count;
	fault_count = 0;
	pthread_mutex_unlock(&fault_lock);
	if (count)
		log_info("DCMI fault event: chip logic id %u %s, severity %u, event 0x%08X%s", ev.deviceid,
			 ev.assertion == DCMI_ASSERTION_RECOVERY ? "recovered" : "fault", ev.severity, ev.event_id,
			 count > 1 ? " (and more)" : "");
	refresh(d, "fault event");
}

/* --- serving and registering ---------------------------------------------- */

static void rebind(struct daemon *d, const char *why)
{
	const struct config *c = d->config;
	size_t n_methods;
	const struct gs_method *methods = service_methods(&n_methods);

	d->registered = false;
	registrar_cancel(d->registrar);
	service_forget_kubelet_stream(d->service);
	/* The old server must be gone first: stopping it unlinks the socket path. */
	gs_server_stop(d->server);
	d->server = NULL;

	int r = gs_server_start(c->socket_path, methods, n_methods, d->service, &d->server);
	if (r < 0) {
		if (!d->bind_failed)
			log_error("cannot serve on %s: %s; retrying every %dms", c->socket_path, strerror(-r),
				  REBIND_RETRY_MS);
		d->bind_failed = true;
		loop_timer_arm(d->rebind_timer, REBIND_RETRY_MS, 0);
		return;
	}
	if (d->bind_failed)
		log_info("serving on %s", c->socket_path);
	d->bind_failed = false;
	log_debug("serving on %s (%s); registering", c->socket_path, why);
	d->register_started_ms = now_ms();
	registrar_register(d->registrar);
}

static void on_rebind_timer(void *ctx)
{
	rebind(ctx, "retry");
}

static void on_registered(void *ctx, unsigned failures)
{
	struct daemon *d = ctx;
	const struct config *c = d->config;
	long long took = (long long)(now_ms() - d->register_started_ms);

	service_register_ended(d->service, true);
	struct stat st;
	d->registered = stat(c->kubelet_socket, &st) == 0;
	d->kubelet_dev = d->registered ? st.st_dev : 0;
	d->kubelet_ino = d->registered ? st.st_ino : 0;

	if (!d->registered_once)
		log_info("registered %s with the kubelet (endpoint %s)%s", c->resource_name, c->endpoint,
			 failures ? " after retrying" : "");
	else
		log_info("registered again with the kubelet in %lldms", took);
	d->registered_once = true;
}

static void on_register_attempt(void *ctx)
{
	struct daemon *d = ctx;
	service_register_started(d->service);
}

static void on_register_failed(void *ctx, const char *why, unsigned failures)
{
	struct daemon *d = ctx;
	service_register_ended(d->service, false);
	/* While the kubelet restarts, a failed attempt or two is expected. */
	if (failures == 1 && !d->registered_once)
		log_warn("registration with the kubelet failed (%s); retrying with backoff", why);
	else if (failures == 1)
		log_info("the kubelet does not answer yet (%s); retrying with backoff", why);
	else
		log_debug("registration attempt %u failed (%s)", failures, why);
}

static void on_stream_ended(void *ctx)
{
	struct daemon *d = ctx;
	log_info("the kubelet's ListAndWatch stream ended; serving anew and registering again");
	rebind(d, "kubelet stream ended");
}

/* --- watching the file system ------------------------------------------- */

static void watch_dev_dir(struct daemon *d)
{
	d->dev_dir_wd = inotify_add_watch(d->inotify_fd, d->config->dev_dir,
					  IN_CREATE | IN_DELETE | IN_MOVED_FROM | IN_MOVED_TO | IN_ATTRIB |
						  IN_DELETE_SELF | IN_MOVE_SELF);
}

static int watch_socket_dir(struct daemon *d)
{
	d->socket_dir_wd = inotify_add_watch(d->inotify_fd, d->config->socket_dir,
					     IN_CREATE | IN_DELETE | IN_MOVED_FROM | IN_MOVED_TO | IN_DELETE_SELF |
						     IN_MOVE_SELF);
	return d->socket_dir_wd < 0 ? -errno : 0;
}

/* The kubelet's directory was removed and comes back (with the health timer's
 * refresh asking): whatever was in it, our socket is gone, so serve anew. */
static void watch_socket_dir_again(struct daemon *d)
{
	if (watch_socket_dir(d) < 0)
		return;
	log_info("%s is back; serving anew", d->config->socket_dir);
	rebind(d, "socket directory back");
}

static void on_inotify(void *ctx, uint32_t events)
{
	(void)events;
	struct daemon *d = ctx;
	const struct config *c = d->config;
	char buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
	bool kubelet_started = false, socket_gone = false, devices_changed = false, socket_dir_gone = false;

	for (;;) {
		ssize_t n = read(d->inotify_fd, buf, sizeof(buf));
		if (n <= 0)
			break;
		for (char *p = buf; p < buf + n;) {
			const struct inotify_event *ev = (const struct inotify_event *)p;
			p += sizeof(*ev) + ev->len;
			const char *name = ev->len ? ev->name : "";
			if (ev->wd == d->socket_dir_wd) {
				if ((ev->mask & (IN_CREATE | IN_MOVED_TO)) && strcmp(name, "kubelet.sock") == 0)
					kubelet_started = true;
				if ((ev->mask & (IN_DELETE | IN_MOVED_FROM)) && strcmp(name, c->endpoint) == 0)
					socket_gone = true;
				if (ev->mask & (IN_DELETE_SELF | IN_MOVE_SELF | IN_IGNORED))
					socket_dir_gone = true;
			} else if (ev->wd == d->dev_dir_wd) {
				if (ev->mask & (IN_DELETE_SELF | IN_MOVE_SELF | IN_IGNORED))
					d->dev_dir_wd = -1;
				if (strncmp(name, "davinci", 7) == 0 || d->dev_dir_wd < 0)
					devices_changed = true;
			}
		}
	}

	if (devices_changed)
		refresh(d, "device nodes changed");
	if (socket_dir_gone) {
		inotify_rm_watch(d->inotify_fd, d->socket_dir_wd);
		d->socket_dir_wd = -1;
		log_warn("%s was removed; waiting for it to come back", c->socket_dir);
		d->registered = false;
		registrar_cancel(d->registrar);
		return;
	}
	/* A starting kubelet deletes our socket, then creates kubelet.sock; when
	 * the first event alone already led to registering with the new
	 * kubelet, the second must not start over. */
	struct stat st;
	if (kubelet_started && d->registered && stat(c->kubelet_socket, &st) == 0 && st.st_dev == d->kubelet_dev &&
	    st.st_ino == d->kubelet_ino) {
		log_debug("kubelet.sock created, and already registered with it");
		kubelet_started = false;
	}
	/* Our own restarts delete and recreate the socket too: only a socket
	 * that is still missing now was removed by someone else. */
	if (kubelet_started) {
		log_info("kubelet.sock created: the kubelet (re)started");
		rebind(d, "kubelet restarted");
	} else if (socket_gone && !path_exists(c->socket_path)) {
		log_info("%s was removed; serving anew", c->socket_path);
		rebind(d, "socket removed");
	}
}

/* --- signals ------------------------------------------------------------- */

static void on_signal(void *ctx, uint32_t events)
{
	(void)events;
	struct daemon *d = ctx;
	struct signalfd_siginfo si;

	while (read(d->signal_fd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
		switch (si.ssi_signo) {
		case SIGTERM:
		case SIGINT:
			log_info("received %s; stopping", si.ssi_signo == SIGTERM ? "SIGTERM" : "SIGINT");
			loop_quit(d->loop);
			return;
		case SIGHUP:
			log_info("received SIGHUP; rediscovering and registering again");
			inventory_forget(d->inventory);
			refresh(d, "SIGHUP");
			rebind(d, "SIGHUP");
			break;
		default:
			break;
		}
	}
}

static void signal_set(sigset_t *set)
{
	sigemptyset(set);
	sigaddset(set, SIGTERM);
	sigaddset(set, SIGINT);
	sigaddset(set, SIGHUP);
}

int daemon_block_signals(void)
{
	sigset_t set;
	signal_set(&set);
	/* A peer closing a socket must not kill the daemon. */
	struct sigaction ignore = { .sa_handler = SIG_IGN };
	sigaction(SIGPIPE, &ignore, NULL);
	return -pthread_sigmask(SIG_BLOCK, &set, NULL);
}

/* --- lifecycle ------------------------------------------------------------ */

static int ensure_dir(const char *path)
{
	if (mkdir(path, 0750) == 0 || errno == EEXIST)
		return 0;
	return -errno;
}

static void daemon_fini(struct daemon *d)
{
	fault_wakeup = NULL;
	registrar_free(d->registrar);
	service_forget_kubelet_stream(d->service);
	gs_server_stop(d->server);
	service_free(d->service);
	inventory_free(d->inventory);
	npu_snapshot_unref(d->logged);
	loop_async_free(d->stream_ended_async);
	loop_async_free(d->fault_async);
	loop_timer_free(d->rebind_timer);
	loop_timer_free(d->health_timer);
	if (d->inotify_fd >= 0)
		close(d->inotify_fd);
	if (d->signal_fd >= 0)
		close(d->signal_fd);
	loop_free(d->loop);
}

static int daemon_init(struct daemon *d, const struct config *c)
{
	sigset_t set;
	int r;

	*d = (struct daemon){ .config = c, .signal_fd = -1, .inotify_fd = -1, .socket_dir_wd = -1, .dev_dir_wd = -1 };

	if ((r = loop_new(&d->loop)) < 0)
		return r;

	signal_set(&set);
	d->signal_fd = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
	if (d->signal_fd < 0)
		return -errno;
	if ((r = loop_add_fd(d->loop, d->signal_fd, EPOLLIN, on_signal, d)) < 0)
		return r;

	d->inotify_fd = inotify_init1(IN_CLOEXEC | IN_NONBLOCK);
	if (d->inotify_fd < 0)
		return -errno;
	if ((r = loop_add_fd(d->loop, d->inotify_fd, EPOLLIN, on_inotify, d)) < 0)
		return r;
	if ((r = ensure_dir(c->socket_dir)) < 0)
		return r;
	if ((r = watch_socket_dir(d)) < 0)
		return r;

	if ((r = loop_timer_new(d->loop, on_health_timer, d, &d->health_timer)) < 0 ||
	    (r = loop_timer_new(d->loop, on_rebind_timer, d, &d->rebind_timer)) < 0 ||
	    (r = loop_async_new(d->loop, on_fault, d, &d->fault_async)) < 0 ||
	    (r = loop_async_new(d->loop, on_stream_ended, d, &d->stream_ended_async)) < 0)
		return r;
	fault_wakeup = d->fault_async;

	const struct inventory_options inv = {
		.backend = c->backend,
		.dcmi = {
			.explicit_path = c->dcmi_lib[0] ? c->dcmi_lib : NULL,
			.ld_library_path = getenv("LD_LIBRARY_PATH"),
			.driver_path = c->driver_path,
			.host_root = c->host_root,
		},
		.dev_dir = c->dev_dir,
		.on_fault_event = on_dcmi_fault,
	};
	if ((r = inventory_new(&inv, &d->inventory)) < 0)
		return r;

	const struct service_options svc = {
		.paths = { .dev_dir = c->dev_dir, .host_root = c->host_root, .driver_path = c->driver_path },
		.kubelet_stream_ended = d->stream_ended_async,
	};
	if ((r = service_new(&svc, &d->service)) < 0)
		return r;

	const struct registrar_options reg = {
		.loop = d->loop,
		.kubelet_socket = c->kubelet_socket,
		.endpoint = c->endpoint,
		.resource_name = c->resource_name,
		.preferred_allocation = true, /* served by plugin/preferred.c */
		.attempting = on_register_attempt,
		.registered = on_registered,
		.failed = on_register_failed,
		.ctx = d,
	};
	return registrar_new(&reg, &d->registrar);
}

int daemon_run(const struct config *c)
{
	struct daemon d;
	int r = daemon_init(&d, c);
	if (r < 0)
		goto out;

	log_info("ascend-device-plugin %s starting: resource %s, socket %s, backend %s, health interval %lldms",
		 ASCEND_VERSION, c->resource_name, c->socket_path, npu_backend_mode_name(c->backend),
		 (long long)c->health_interval_ms);
	refresh(&d, "start");
	loop_timer_arm(d.health_timer, c->health_interval_ms, c->health_interval_ms);
	rebind(&d, "start");

	r = loop_run(d.loop);
out:
	daemon_fini(&d);
	if (r == 0)
		log_info("stopped");
	return r;
}

int daemon_probe(const struct config *c, char *why, size_t why_size)
{
	struct gc_channel *ch;
	struct gc_result res;
	int r = gc_channel_open(c->socket_path, &ch);
	if (r < 0) {
		snprintf(why, why_size, "%s: %s", c->socket_path, strerror(-r));
		return r;
	}
	r = gc_unary(ch, "/v1beta1.DevicePlugin/GetDevicePluginOptions", NULL, 0, 2000, &res);
	if (r == 0 && res.status != GRPC_STATUS_OK) {
		snprintf(why, why_size, "%s: status %d: %s", c->socket_path, res.status, res.details);
		r = -EIO;
	} else if (r < 0) {
		snprintf(why, why_size, "%s: %s", c->socket_path, strerror(-r));
	}
	gc_result_clear(&res);
	gc_channel_close(ch);
	return r;
}
