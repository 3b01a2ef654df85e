/* SPDX-License-Identifier: Apache-2.0 */
#include "plugin/daemon.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/inotify.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <grpc/grpc.h>
#include <grpc/support/log.h>

#include "base/crash.h"
#include "base/log.h"
#include "base/parse.h"
#include "base/strbuf.h"
#include "deviceplugin_api.h"
#include "grpc/client.h"
#include "grpc/server.h"
#include "loop/loop.h"
#include "npu/inventory.h"
#include "plugin/cdi.h"
#include "plugin/registrar.h"
#include "plugin/session.h"
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
	struct loop_timer *watchdog_timer;
	struct loop_async *fault_async;
	struct loop_async *stream_async;

	struct inventory *inventory;
	struct host_paths paths;
	struct service *service;
	struct gs_server *server;
	struct registrar *registrar;
	struct session session;
	uint64_t seen_opened, seen_ended; /* the service's kubelet stream tags, as fed to the session */

	/* Fault events: written on DCMI's thread, read on the loop. */
	pthread_mutex_t fault_lock;
	struct dcmi_dms_fault_event last_fault;
	unsigned fault_count;

	/* What was last logged, so each condition is reported once. */
	struct npu_snapshot *logged;
	struct inventory_status logged_status;
	bool logged_once;
	bool bind_failed;
	bool registered_once;
	int64_t register_started_ms;

	/* The CDI spec (cdi strategy): kept up to date once the daemon serves,
	 * so that a second plugin that cannot take the socket leaves the live
	 * one's spec alone. */
	bool cdi_active;
	char *cdi_written; /* the text last written, NULL when there is no file */
	int cdi_error;     /* the last write error logged, 0 after a success */
	char cdi_path[CONFIG_PATH_MAX + CDI_KIND_MAX + 8];
};

/* DCMI's thread: copy the event and wake the loop, nothing more. The npu
 * layer guarantees no call once the inventory is freed. */
static void on_dcmi_fault(void *ctx, const struct dcmi_event *event)
{
	struct daemon *d = ctx;
	if (event->type == DCMI_EVENT_TYPE_DMS_FAULT) {
		pthread_mutex_lock(&d->fault_lock);
		d->last_fault = event->event_t.dms_event;
		d->fault_count++;
		pthread_mutex_unlock(&d->fault_lock);
	}
	loop_async_send(d->fault_async);
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
			log_warn("DCMI fault events unavailable (%s); polling health every %lldms",
				 strerror(-st->events_error), (long long)c->health_interval_ms);
	}
	if ((first && !st->driver_ready) ||
	    (!first && (st->driver_ready != old->driver_ready || st->devfs_error != old->devfs_error))) {
		if (st->driver_ready)
			log_info("driver ready: %s/davinci_manager is present", c->dev_dir);
		else if (st->devfs_error)
			log_warn("cannot check %s/davinci_manager: %s; every device is Unhealthy", c->dev_dir,
				 strerror(-st->devfs_error));
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
	if (st->devfs_error != old->devfs_error && st->devfs_error && st->driver_ready)
		log_warn("cannot read %s: %s", c->dev_dir, strerror(-st->devfs_error));
	*old = *st;
}

/* The NUMA node of each chip, and why the first unknown one is unknown:
 * what the kubelet's topology manager will align pods with. */
static void report_numa(const struct npu_snapshot *snap)
{
	char nodes[1024], why[256] = "";
	struct strbuf sb;
	strbuf_init(&sb, nodes, sizeof(nodes), ",...");
	size_t known = 0;
	for (size_t i = 0; i < snap->count; i++) {
		const struct npu_device *dev = &snap->devices[i];
		if (dev->has_numa) {
			known++;
			strbuf_printf(&sb, "%s%s=%u", i ? "," : "", dev->id, dev->numa_node);
		} else {
			strbuf_printf(&sb, "%s%s=?", i ? "," : "", dev->id);
			if (!why[0]) {
				int n = snprintf(why, sizeof(why), "%s: ", dev->id);
				npu_device_describe_numa(dev, why + n, sizeof(why) - (size_t)n);
			}
		}
	}
	if (known == 0)
		log_info("NUMA node unknown for every chip, none advertised (%s)", why);
	else if (known < snap->count)
		log_info("NUMA node of each chip: %s (%s)", nodes, why);
	else
		log_info("NUMA node of each chip: %s", nodes);
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
			char ids[1024];
			struct strbuf sb;
			strbuf_init(&sb, ids, sizeof(ids), ",...");
			for (size_t i = 0; i < snap->count; i++)
				if (strbuf_printf(&sb, "%s%s", i ? "," : "", snap->devices[i].id) < 0)
					break;
			const struct npu_chip *chip = &snap->devices[0].chip;
			log_info("found %zu NPU chips (%s%s, family %s): %s", snap->count, chip->name[0] ? "chip " : "",
				 chip->name[0] ? chip->name : "name unknown", npu_family_name(chip->family), ids);
			report_numa(snap);
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

/* --- the CDI spec -------------------------------------------------------- */

/* Writes the spec when its text differs from the file's (chips appeared or
 * went, a device node went, came back or changed its numbers, a shared node
 * or driver path appeared or went; never health alone, which is not in it) or the file is gone. With no chips
 * there is no valid spec: the file is removed. A failed write is retried at
 * the next refresh. */
static void cdi_sync(struct daemon *d, const struct npu_snapshot *snap)
{
	const struct config *c = d->config;
	char *json = NULL;
	int r;

	if (!d->cdi_active)
		return;
	if (snap->count == 0) {
		r = cdi_spec_remove(c->cdi_dir, c->cdi.file_name);
		if (r < 0 && r != d->cdi_error)
			log_error("cannot remove the CDI spec %s: %s", d->cdi_path, strerror(-r));
		else if (r == 0 && d->cdi_written)
			log_info("removed the CDI spec %s: no chips", d->cdi_path);
		d->cdi_error = r;
		if (r == 0) {
			free(d->cdi_written);
			d->cdi_written = NULL;
		}
		return;
	}
	r = cdi_spec_render(&c->cdi, snap, &d->paths, &json);
	if (r < 0) {
		log_error("cannot build the CDI spec: %s", strerror(-r));
		return;
	}
	if (d->cdi_written && strcmp(json, d->cdi_written) == 0 && path_exists(d->cdi_path)) {
		free(json);
		return;
	}
	r = cdi_spec_write(c->cdi_dir, c->cdi.file_name, json);
	if (r < 0) {
		if (r != d->cdi_error)
			log_error("cannot write the CDI spec %s: %s; retrying every %lldms", d->cdi_path, strerror(-r),
				  (long long)c->health_interval_ms);
		d->cdi_error = r;
		free(json);
		return;
	}
	char names[1024];
	struct strbuf sb;
	strbuf_init(&sb, names, sizeof(names), ",...");
	for (size_t i = 0; i < snap->count; i++)
		if (strbuf_printf(&sb, "%s%u", i ? "," : "", snap->devices[i].chip.phy_id) < 0)
			break;
	log_info("wrote the CDI spec %s: kind %s, %zu devices %s", d->cdi_path, c->cdi.kind, snap->count, names);
	d->cdi_error = 0;
	free(d->cdi_written);
	d->cdi_written = json;
}

/* Starts keeping the spec, once the daemon serves on its socket. */
static void cdi_start(struct daemon *d)
{
	if (!(d->config->device_list_strategies & ALLOCATE_STRATEGY_CDI))
		return;
	d->cdi_active = true;
	struct npu_snapshot *snap = inventory_snapshot(d->inventory);
	cdi_sync(d, snap);
	npu_snapshot_unref(snap);
}

/* The plugin stops serving: no runtime should inject its devices anymore. */
static void cdi_stop(struct daemon *d)
{
	if (!d->cdi_active)
		return;
	int r = cdi_spec_remove(d->config->cdi_dir, d->config->cdi.file_name);
	if (r < 0)
		log_warn("cannot remove the CDI spec %s: %s", d->cdi_path, strerror(-r));
	else
		log_info("removed the CDI spec %s", d->cdi_path);
	d->cdi_active = false;
	free(d->cdi_written);
	d->cdi_written = NULL;
}

/* --- inventory ---------------------------------------------------------- */

static void watch_dev_dir(struct daemon *d);
static void watch_socket_dir_again(struct daemon *d);

static void refresh(struct daemon *d, const char *reason)
{
	bool changed = false;
	/* Vendor code runs in here: if it kills the process, say so. */
	crash_guard_enter("loading or querying the DCMI library (libdcmi.so); "
			  "check the driver installation, or run with --backend devfs");
	int r = inventory_refresh(d->inventory, &changed);
	crash_guard_leave();
	if (r < 0) {
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
	cdi_sync(d, snap);
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
	pthread_mutex_lock(&d->fault_lock);
	struct dcmi_dms_fault_event ev = d->last_fault;
	unsigned count = d->fault_count;
	d->fault_count = 0;
	pthread_mutex_unlock(&d->fault_lock);
	if (count)
		log_info("DCMI fault event: chip logic id %u %s, severity %u, event 0x%08X%s", ev.deviceid,
			 ev.assertion == DCMI_ASSERTION_RECOVERY ? "recovered" : "fault", ev.severity, ev.event_id,
			 count > 1 ? " (and more)" : "");
	refresh(d, "fault event");
}

/* --- the session's operations -------------------------------------------- */

static void op_unbind(void *ctx)
{
	struct daemon *d = ctx;
	registrar_cancel(d->registrar);
	service_forget_kubelet_stream(d->service);
	/* The old server must be gone before a new one binds: stopping it
	 * unlinks the socket path. */
	gs_server_stop(d->server);
	d->server = NULL;
}

static int op_bind(void *ctx)
{
	struct daemon *d = ctx;
	size_t n_methods;
	const struct gs_method *methods = service_methods(&n_methods);
	return gs_server_start(d->config->socket_path, methods, n_methods, d->service, &d->server);
}

static void op_register_start(void *ctx, uint64_t tag)
{
	struct daemon *d = ctx;
	d->register_started_ms = now_ms();
	registrar_register(d->registrar, tag);
}

static void op_arm_bind_retry(void *ctx)
{
	struct daemon *d = ctx;
	loop_timer_arm(d->rebind_timer, REBIND_RETRY_MS, 0);
}

static void op_watchdog(void *ctx, bool arm)
{
	struct daemon *d = ctx;
	if (arm)
		loop_timer_arm(d->watchdog_timer, SESSION_WATCHDOG_MS, 0);
	else
		loop_timer_disarm(d->watchdog_timer);
}

/* The daemon speaks for the session: one debug line per event, and the
 * lines an operator needs at info level. */
static void op_transition(void *ctx, enum session_state from, enum session_event ev, enum session_state to,
			  bool handled, int error)
{
	struct daemon *d = ctx;
	const struct config *c = d->config;

	log_debug("session: %s + %s -> %s%s", session_state_name(from), session_event_name(ev), session_state_name(to),
		  handled ? "" : " (ignored)");
	if (!handled)
		return;
	switch (ev) {
	case SESSION_EV_KUBELET_STARTED:
		log_info("kubelet.sock created: the kubelet (re)started");
		break;
	case SESSION_EV_SOCKET_DELETED:
		log_info("%s was removed; serving anew", c->socket_path);
		break;
	case SESSION_EV_DIR_GONE:
		log_warn("%s was removed; waiting for it to come back", c->socket_dir);
		break;
	case SESSION_EV_DIR_BACK:
		log_info("%s is back; serving anew", c->socket_dir);
		break;
	case SESSION_EV_STREAM_ENDED:
		log_info("the kubelet's ListAndWatch stream ended; serving anew and registering again");
		break;
	case SESSION_EV_WATCHDOG:
		log_warn("the kubelet accepted the registration but opened no ListAndWatch stream within %dms; "
			 "registering again",
			 SESSION_WATCHDOG_MS);
		break;
	case SESSION_EV_REGISTERED: {
		long long took = (long long)(now_ms() - d->register_started_ms);
		if (!d->registered_once)
			log_info("registered %s with the kubelet (endpoint %s)", c->resource_name, c->endpoint);
		else
			log_info("registered again with the kubelet in %lldms", took);
		d->registered_once = true;
		break;
	}
	default:
		break;
	}
	/* A failed bind at start is the caller's to report; later ones are
	 * retried, and said once. */
	if (error < 0 && ev != SESSION_EV_START) {
		if (!d->bind_failed)
			log_error("cannot serve on %s: %s; retrying every %dms", c->socket_path, strerror(-error),
				  REBIND_RETRY_MS);
		d->bind_failed = true;
	} else if (session_serving(to) && d->bind_failed) {
		log_info("serving on %s", c->socket_path);
		d->bind_failed = false;
	}
	if (to == SESSION_REGISTERING && from != SESSION_REGISTERING)
		log_debug("serving on %s; registering", c->socket_path);
}

static const struct session_ops session_ops = {
	.unbind = op_unbind,
	.bind = op_bind,
	.register_start = op_register_start,
	.arm_bind_retry = op_arm_bind_retry,
	.watchdog = op_watchdog,
	.transition = op_transition,
};

static void on_rebind_timer(void *ctx)
{
	struct daemon *d = ctx;
	session_handle(&d->session, SESSION_EV_BIND_RETRY, NULL);
}

static void on_watchdog_timer(void *ctx)
{
	struct daemon *d = ctx;
	session_handle(&d->session, SESSION_EV_WATCHDOG, NULL);
}

/* Which kubelet.sock is there now (all zero when none). */
static struct session_kubelet kubelet_now(const struct daemon *d)
{
	struct stat st;
	if (stat(d->config->kubelet_socket, &st) < 0)
		return (struct session_kubelet){ 0 };
	return (struct session_kubelet){ .dev = (uint64_t)st.st_dev, .ino = (uint64_t)st.st_ino };
}

/* --- the registrar's and the service's reports ------------------------------ */

static void on_register_attempt(void *ctx, uint64_t tag)
{
	struct daemon *d = ctx;
	session_attempting(&d->session, kubelet_now(d));
	service_register_started(d->service, tag);
}

static void on_registered(void *ctx, uint64_t tag, unsigned failures)
{
	struct daemon *d = ctx;
	service_register_ended(d->service, tag, true);
	if (failures && !d->registered_once)
		log_debug("the kubelet accepted the registration after %u failed attempts", failures);
	session_handle(&d->session, SESSION_EV_REGISTERED, &(struct session_event_data){ .tag = tag });
}

static void on_register_failed(void *ctx, uint64_t tag, const char *why, unsigned failures)
{
	struct daemon *d = ctx;
	service_register_ended(d->service, tag, false);
	/* While the kubelet restarts, a failed attempt or two is expected. */
	if (failures == 1 && !d->registered_once)
		log_warn("registration with the kubelet failed (%s); retrying with backoff", why);
	else if (failures == 1)
		log_info("the kubelet does not answer yet (%s); retrying with backoff", why);
	else
		log_debug("registration attempt %u failed (%s)", failures, why);
}

static void on_kubelet_stream(void *ctx)
{
	struct daemon *d = ctx;
	uint64_t opened, ended;
	service_kubelet_stream(d->service, &opened, &ended);
	if (opened != d->seen_opened) {
		d->seen_opened = opened;
		session_handle(&d->session, SESSION_EV_STREAM_OPENED, &(struct session_event_data){ .tag = opened });
	}
	if (ended != d->seen_ended) {
		d->seen_ended = ended;
		session_handle(&d->session, SESSION_EV_STREAM_ENDED, &(struct session_event_data){ .tag = ended });
	}
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

/* The kubelet's directory was removed and comes back (the health timer's
 * refresh asks): whatever was in it, our socket is gone. */
static void watch_socket_dir_again(struct daemon *d)
{
	if (watch_socket_dir(d) == 0)
		session_handle(&d->session, SESSION_EV_DIR_BACK, NULL);
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
		session_handle(&d->session, SESSION_EV_DIR_GONE, NULL);
		return;
	}
	/* Our own restarts delete and recreate the socket too: only a socket
	 * that is still missing now was removed by someone else. A starting
	 * kubelet deletes it and then creates kubelet.sock; the session knows
	 * whether the registration this leads to already reaches that kubelet. */
	if (socket_gone && !path_exists(c->socket_path))
		session_handle(&d->session, SESSION_EV_SOCKET_DELETED, NULL);
	if (kubelet_started)
		session_handle(&d->session, SESSION_EV_KUBELET_STARTED,
			       &(struct session_event_data){ .kubelet = kubelet_now(d) });
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
			session_handle(&d->session, SESSION_EV_STOP, NULL);
			loop_quit(d->loop);
			return;
		case SIGHUP:
			log_info("received SIGHUP; rediscovering and registering again");
			inventory_forget(d->inventory);
			refresh(d, "SIGHUP");
			session_handle(&d->session, SESSION_EV_RELOAD, NULL);
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

/* Tears down in reverse order whatever daemon_init got to build. The
 * inventory goes first: freeing it drops the DCMI fault subscription and
 * waits for a callback in progress, which uses fault_async. */
static void daemon_fini(struct daemon *d)
{
	cdi_stop(d);
	inventory_free(d->inventory);
	session_handle(&d->session, SESSION_EV_STOP, NULL);
	registrar_free(d->registrar);
	gs_server_stop(d->server);
	service_free(d->service);
	npu_snapshot_unref(d->logged);
	loop_async_free(d->stream_async);
	loop_async_free(d->fault_async);
	loop_timer_free(d->watchdog_timer);
	loop_timer_free(d->rebind_timer);
	loop_timer_free(d->health_timer);
	if (d->inotify_fd >= 0)
		close(d->inotify_fd);
	if (d->signal_fd >= 0)
		close(d->signal_fd);
	loop_free(d->loop);
	pthread_mutex_destroy(&d->fault_lock);
}

/* gRPC aborts the process when it cannot get the fds it needs for itself, so
 * make sure there is room before it starts: raise the soft open-file limit
 * to the hard one, as systemd does for its services, and refuse to start
 * below DAEMON_MIN_OPEN_FILES. */
#define DAEMON_MIN_OPEN_FILES 128

static int ensure_open_files(char *why, size_t why_size)
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

/* The socket directory must exist before it can be watched: it is created
 * when only it is missing, as on a node whose kubelet has not started yet.
 * Whether a socket can be made in it is for the bind to say (its errno, with
 * the socket's path). The CDI directory likewise: runtimes pick it up when it
 * appears. */
static int prepare_dir(const char *what, const char *dir, mode_t mode, char *why, size_t why_size)
{
	struct stat st;
	int r = 0;

	if (mkdir(dir, mode) < 0 && errno != EEXIST)
		r = -errno;
	else if (stat(dir, &st) < 0)
		r = -errno;
	else if (!S_ISDIR(st.st_mode))
		r = -ENOTDIR;
	if (r < 0)
		snprintf(why, why_size, "%s %s: %s", what, dir, strerror(-r));
	return r;
}

/* Builds everything the daemon needs before it serves; on failure why says
 * what could not be had and why, and daemon_fini undoes the part built. */
static int daemon_init(struct daemon *d, const struct config *c, char *why, size_t why_size)
{
	sigset_t set;
	int r;

	*d = (struct daemon){ .config = c, .signal_fd = -1, .inotify_fd = -1, .socket_dir_wd = -1, .dev_dir_wd = -1 };
	pthread_mutex_init(&d->fault_lock, NULL);
	session_init(&d->session, &session_ops, d);

	if ((r = ensure_open_files(why, why_size)) < 0)
		return r;

	if ((r = loop_new(&d->loop)) < 0) {
		snprintf(why, why_size, "cannot create the event loop (epoll): %s", strerror(-r));
		return r;
	}
	signal_set(&set);
	d->signal_fd = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
	if (d->signal_fd < 0 || (r = loop_add_fd(d->loop, d->signal_fd, EPOLLIN, on_signal, d)) < 0) {
		r = d->signal_fd < 0 ? -errno : r;
		snprintf(why, why_size, "cannot create a signalfd: %s", strerror(-r));
		return r;
	}
	d->inotify_fd = inotify_init1(IN_CLOEXEC | IN_NONBLOCK);
	if (d->inotify_fd < 0 || (r = loop_add_fd(d->loop, d->inotify_fd, EPOLLIN, on_inotify, d)) < 0) {
		r = d->inotify_fd < 0 ? -errno : r;
		snprintf(why, why_size, "cannot create an inotify instance: %s%s", strerror(-r),
			 r == -EMFILE ? " (per-process fd limit, or fs.inotify.max_user_instances)" : "");
		return r;
	}
	if ((r = prepare_dir("socket directory", c->socket_dir, 0750, why, why_size)) < 0)
		return r;
	if ((c->device_list_strategies & ALLOCATE_STRATEGY_CDI) &&
	    ((r = prepare_dir("CDI directory", c->cdi_dir, 0755, why, why_size)) < 0 ||
	     (r = path_join(d->cdi_path, sizeof(d->cdi_path), c->cdi_dir, c->cdi.file_name)) < 0)) {
		if (r == -ENAMETOOLONG)
			snprintf(why, why_size, "CDI directory %s: the spec's path is too long", c->cdi_dir);
		return r;
	}
	if ((r = watch_socket_dir(d)) < 0) {
		snprintf(why, why_size, "cannot watch %s: %s%s", c->socket_dir, strerror(-r),
			 r == -ENOSPC ? " (fs.inotify.max_user_watches)" : "");
		return r;
	}

	if ((r = loop_timer_new(d->loop, on_health_timer, d, &d->health_timer)) < 0 ||
	    (r = loop_timer_new(d->loop, on_rebind_timer, d, &d->rebind_timer)) < 0 ||
	    (r = loop_timer_new(d->loop, on_watchdog_timer, d, &d->watchdog_timer)) < 0 ||
	    (r = loop_async_new(d->loop, on_fault, d, &d->fault_async)) < 0 ||
	    (r = loop_async_new(d->loop, on_kubelet_stream, d, &d->stream_async)) < 0) {
		snprintf(why, why_size, "cannot create timers and wakeups (timerfd, eventfd): %s", strerror(-r));
		return r;
	}

	const struct inventory_options inv = {
		.backend = c->backend,
		.dcmi = {
			.explicit_path = c->dcmi_lib[0] ? c->dcmi_lib : NULL,
			.ld_library_path = getenv("LD_LIBRARY_PATH"),
			.driver_path = c->driver_path,
			.host_root = c->host_root,
		},
		.dev_dir = c->dev_dir,
		.host_root = c->host_root,
		.on_fault_event = on_dcmi_fault,
		.fault_ctx = d,
	};
	if ((r = inventory_new(&inv, &d->inventory)) < 0) {
		snprintf(why, why_size, "cannot create the inventory: %s", strerror(-r));
		return r;
	}

	d->paths = (struct host_paths){ .dev_dir = c->dev_dir, .host_root = c->host_root, .driver_path = c->driver_path };
	const struct service_options svc = {
		.allocate = { .paths = d->paths,
			      .strategies = c->device_list_strategies,
			      .cdi = &c->cdi,
			      .sharing = c->sharing },
		.kubelet_stream_changed = d->stream_async,
	};
	if ((r = service_new(&svc, &d->service)) < 0) {
		snprintf(why, why_size, "cannot create the service: %s", strerror(-r));
		return r;
	}

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
	if ((r = registrar_new(&reg, &d->registrar)) < 0) {
		snprintf(why, why_size, "cannot start the registrar (gRPC client thread): %s", strerror(-r));
		return r;
	}
	return 0;
}

/* gRPC's own messages are internals (our errors are reported where they
 * surface, with their cause), and gRPC would write them to stderr from its
 * threads, bypassing the log queue: route them through it, at debug level. */
static void on_grpc_log(gpr_log_func_args *args)
{
	log_debug("grpc: %s:%d: %s", args->file, args->line, args->message);
}

int daemon_run(const struct config *c)
{
	struct daemon d;
	char why[CONFIG_PATH_MAX + 512] = "";
	gpr_set_log_function(on_grpc_log);
	/* gRPC stays initialised until the process ends: the last grpc_shutdown
	 * waits up to 10 s for gRPC's own sockets to be cleaned up, which on a
	 * loaded node delayed the exit after SIGTERM by as much. The kernel
	 * reclaims everything at exit anyway. */
	grpc_init();
	int r = daemon_init(&d, c, why, sizeof(why));
	if (r < 0)
		goto out;

	log_info("ascend-device-plugin %s starting: resource %s, socket %s, backend %s, health interval %lldms",
		 ASCEND_VERSION, c->resource_name, c->socket_path, npu_backend_mode_name(c->backend),
		 (long long)c->health_interval_ms);
	if (replica_sharing(&c->sharing))
		log_info("time-slicing: each chip is advertised %u times (no memory or compute isolation)%s",
			 c->sharing.replicas,
			 c->sharing.fail_requests_greater_than_one ? ", a container may ask for one" : "");
	if (c->device_list_strategies != ALLOCATE_STRATEGY_NATIVE) {
		char strategies[64];
		(void)allocate_strategies_format(c->device_list_strategies, strategies, sizeof(strategies)); /* fits */
		if (c->device_list_strategies & ALLOCATE_STRATEGY_CDI)
			log_info("device-list strategy %s: CDI spec %s, kind %s", strategies, d.cdi_path, c->cdi.kind);
		else
			log_info("device-list strategy %s", strategies);
	}
	refresh(&d, "start");
	loop_timer_arm(d.health_timer, c->health_interval_ms, c->health_interval_ms);
	r = session_handle(&d.session, SESSION_EV_START, NULL);
	if (r < 0) {
		snprintf(why, sizeof(why), "cannot serve on %s: %s", c->socket_path, strerror(-r));
		goto out;
	}
	cdi_start(&d);

	r = loop_run(d.loop);
	if (r < 0)
		snprintf(why, sizeof(why), "the event loop failed (epoll_wait): %s", strerror(-r));
out:
	daemon_fini(&d);
	if (r < 0)
		log_error("cannot start: %s", why);
	else
		log_info("stopped");
	return r;
}

int daemon_probe(const struct config *c, char *why, size_t why_size)
{
	struct gc_channel *ch;
	struct gc_result res = { 0 };
	int r = gc_channel_open(c->socket_path, &ch);
	if (r < 0) {
		snprintf(why, why_size, "%s: %s", c->socket_path, strerror(-r));
		return r;
	}
	r = gc_unary(ch, DP_METHOD_GET_OPTIONS, NULL, 0, 2000, &res);
	if (r < 0) {
		/* The failed call wrote no result: nothing to clear. */
		snprintf(why, why_size, "%s: %s", c->socket_path, strerror(-r));
	} else {
		if (res.status != GRPC_STATUS_OK) {
			snprintf(why, why_size, "%s: status %d: %s", c->socket_path, res.status, res.details);
			r = -EIO;
		}
		gc_result_clear(&res);
	}
	gc_channel_close(ch);
	return r;
}
