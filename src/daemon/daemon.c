/* SPDX-License-Identifier: Apache-2.0 */
#include "daemon/daemon.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stddef.h>
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
#include "base/macro.h"
#include "base/parse.h"
#include "base/strbuf.h"
#include "daemon/cdi_keeper.h"
#include "daemon/report.h"
#include "daemon/vnpu_resources.h"
#include "daemon/watch.h"
#include "deviceplugin_api.h"
#include "grpc/client.h"
#include "grpc/server.h"
#include "loop/loop.h"
#include "npu/inventory.h"
#include "plugin/cdi.h"
#include "plugin/observe.h"
#include "plugin/endpoint.h"
#include "plugin/resources.h"

struct daemon {
	struct config config; /* the running configuration: SIGHUP may change parts of it */
	daemon_reload_fn reload;
	void *reload_ctx;
	struct loop *loop;
	int signal_fd;
	struct watch watch;

	struct loop_timer *health_timer;
	struct loop_async *fault_async;

	struct inventory *inventory;
	struct host_paths paths;
	struct host_files *files; /* the shared nodes and driver paths, as last scanned */

	/* What is advertised: the configuration's resources, then one per vNPU
	 * template seen since the start (or the last reload), each served by
	 * the endpoint of the same index once built. */
	struct resource_set resources;
	struct endpoint *endpoints[RESOURCES_MAX];
	struct observe *observe; /* metrics, /healthz, pod labels, NFD labels */
	bool serving; /* endpoints are started as they are built */
	bool publish_due; /* an endpoint was built or the resources changed: publish even if the devices did not */

	/* Fault events: written on DCMI's thread, read on the loop. */
	pthread_mutex_t fault_lock;
	struct dcmi_dms_fault_event last_fault;
	unsigned fault_count;

	/* What was last logged, so each condition is reported once. */
	struct report report;
	bool refreshed_once;
	struct vnpu_resources vnpus; /* resources added for vNPU templates */
	char logged_endpoint_error[1024]; /* why a resource cannot be served, "" when all are */

	struct cdi_keeper cdi; /* the CDI spec, with the cdi strategy */
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

/* --- resources and their endpoints ---------------------------------------- */

/* Builds (and, once the daemon serves, starts) the endpoint of every
 * resource that has none. A resource whose socket cannot be served is
 * tried again at the next refresh. */
static int ensure_endpoints(struct daemon *d, char *why, size_t why_size)
{
	const struct config *c = &d->config;
	int first_error = 0;
	for (size_t i = 0; i < d->resources.count; i++) {
		if (d->endpoints[i])
			continue;
		const struct resource_def *def = &d->resources.defs[i];
		struct observe_resource *observed;
		if (observe_resource(d->observe, def->name, def->sharing.replicas, &observed) < 0)
			observed = NULL; /* past the metrics' bound: served without them */
		const struct endpoint_options o = {
			.loop = d->loop,
			.def = def,
			.kubelet_socket = c->kubelet_socket,
			.allocate = { .strategies = c->device_list_strategies, .cdi = &c->cdi },
			.name_in_logs = !def->is_default,
			.observe = observed,
		};
		char problem[512];
		int r = endpoint_new(&o, &d->endpoints[i], problem, sizeof(problem));
		d->publish_due |= r == 0;
		if (r == 0 && d->serving) {
			r = endpoint_start(d->endpoints[i]);
			if (r < 0) {
				snprintf(problem, sizeof(problem), "cannot serve on %s: %s", def->socket_path, strerror(-r));
				endpoint_free(d->endpoints[i]);
				d->endpoints[i] = NULL;
			}
		}
		if (r < 0 && !first_error) {
			first_error = r;
			snprintf(why, why_size, "%s: %s", def->name, problem);
		}
	}
	return first_error;
}

/* Sends each resource its devices. */
static void publish(struct daemon *d, const struct npu_snapshot *snap)
{
	for (size_t i = 0; i < d->resources.count; i++) {
		struct npu_snapshot *view = NULL;
		if (!d->endpoints[i])
			continue;
		if (resource_view(&d->resources, &d->resources.defs[i], snap, &view) < 0 ||
		    endpoint_publish(d->endpoints[i], view, d->files) < 0)
			log_error("%s: cannot publish the device list: out of memory", d->resources.defs[i].name);
		npu_snapshot_unref(view);
	}
}

/* Feeds an event to every endpoint. */
static void broadcast(struct daemon *d, enum session_event event, const struct session_event_data *data)
{
	for (size_t i = 0; i < d->resources.count; i++)
		if (d->endpoints[i])
			endpoint_handle(d->endpoints[i], event, data);
}

/* --- inventory ---------------------------------------------------------- */

static void reload_config(struct daemon *d, bool signalled);
static void socket_dir_back(struct daemon *d);

/* What containers get besides their chips, looked at anew at each refresh:
 * a change reaches Allocate with the next publish. */
static void scan_host_files(struct daemon *d)
{
	struct host_files *files;
	if (host_files_scan(&d->paths, &files) < 0) {
		log_error("cannot look for the shared device nodes and driver paths: out of memory");
		return;
	}
	if (host_files_equal(files, d->files)) {
		host_files_unref(files);
		return;
	}
	if (d->files) {
		char change[1024];
		(void)host_files_describe_change(d->files, files, change, sizeof(change)); /* cut with ",..." */
		log_info("files for containers besides their chips: %s", change);
	}
	host_files_unref(d->files);
	d->files = files;
	d->publish_due = true;
}

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
	report_status(&d->report, inventory_status(d->inventory), &d->config);
	scan_host_files(d);
	struct npu_snapshot *snap = inventory_snapshot(d->inventory);
	if (changed || !d->refreshed_once) {
		log_debug("device list changed (%s): %zu devices, %zu healthy", reason, snap->count, snap->healthy);
		report_devices(&d->report, snap, &d->resources, d->config.health_interval_ms);
		vnpu_resources_add(&d->vnpus, &d->resources, snap, d->config.vnpu_base, d->config.socket_dir);
	}
	/* Before the daemon serves, daemon_run reports what cannot be built;
	 * later, each new reason is said once. */
	char why[1024];
	if (d->serving && ensure_endpoints(d, why, sizeof(why)) < 0) {
		if (strcmp(why, d->logged_endpoint_error) != 0)
			log_error("%s; retrying at every refresh", why);
		snprintf(d->logged_endpoint_error, sizeof(d->logged_endpoint_error), "%s", why);
	} else {
		d->logged_endpoint_error[0] = '\0';
	}
	/* Views are built only when there is news for them; each endpoint also
	 * drops a view equal to what it sent last. */
	if (changed || !d->refreshed_once || d->publish_due)
		publish(d, snap);
	d->publish_due = false;
	observe_node(d->observe, snap);
	cdi_keeper_sync(&d->cdi, &d->resources, snap, &d->paths, d->files);
	d->refreshed_once = true;
	npu_snapshot_unref(snap);
	struct watch_changes again;
	watch_retry(&d->watch, &again);
	if (again.socket_dir_back)
		socket_dir_back(d);
	/* Last: the reload refreshes again. */
	if (again.config)
		reload_config(d, false);
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

/* --- reloading: SIGHUP, or the --config file changed -------------------- */

/* The settings a running daemon cannot change: where it looks and how it
 * answers. A new value is reported and waits for a restart. */
static void warn_restart_only(const char *what, const struct config *running, const struct config *next)
{
	static const struct {
		const char *flag;
		size_t offset;
	} strings[] = {
		{ "socket-dir", offsetof(struct config, socket_dir) },
		{ "dev-dir", offsetof(struct config, dev_dir) },
		{ "driver-path", offsetof(struct config, driver_path) },
		{ "host-root", offsetof(struct config, host_root) },
		{ "dcmi-lib", offsetof(struct config, dcmi_lib) },
		{ "cdi-dir", offsetof(struct config, cdi_dir) },
		{ "metrics-addr", offsetof(struct config, metrics_addr) },
		{ "pod-resources-socket", offsetof(struct config, pod_resources_socket) },
		{ "nfd-features-file", offsetof(struct config, nfd_features_file) },
	};
	for (size_t i = 0; i < ELEMENTSOF(strings); i++) {
		const char *was = (const char *)running + strings[i].offset;
		const char *now = (const char *)next + strings[i].offset;
		if (strcmp(was, now) != 0)
			log_warn("%s: --%s changed to '%s'; it takes effect at the next restart, keeping '%s'", what,
				 strings[i].flag, now, was);
	}
	if (running->backend != next->backend)
		log_warn("%s: --backend changed; it takes effect at the next restart", what);
	if (running->device_list_strategies != next->device_list_strategies)
		log_warn("%s: --device-list-strategy changed; it takes effect at the next restart", what);
	else if ((running->device_list_strategies & ALLOCATE_STRATEGY_CDI) && strcmp(running->cdi.kind, next->cdi.kind) != 0)
		log_warn("%s: the CDI kind would be %s; it takes effect at the next restart, keeping %s", what,
			 next->cdi.kind, running->cdi.kind);
	if (running->telemetry_interval_ms != next->telemetry_interval_ms)
		log_warn("%s: --telemetry-interval changed; it takes effect at the next restart", what);
	if (running->log_format != next->log_format)
		log_warn("%s: --log-format changed; it takes effect at the next restart", what);
}

/* Takes what a running daemon can change from the new configuration (0),
 * or nothing (-ENAMETOOLONG: the plugin's resource would not fit in the
 * running socket directory): the
 * resources (their sockets stay in the running directory), time-slicing,
 * the health interval and the log level. Resources that stay as they were
 * keep their endpoint (and register again, as SIGHUP always did); those
 * that went or changed stop being served, which the kubelet sees as their
 * devices going away; new ones are served at the refresh that follows.
 * Allocations made are the kubelet's: nothing here touches them. The gRPC
 * threads never read d->config: each service holds copies of its settings
 * and the snapshots published to it. */
static int apply_config(struct daemon *d, const char *what, struct config *next)
{
	struct config *c = &d->config;
	warn_restart_only(what, c, next);
	/* The sockets stay in the running directory; a new resource whose
	 * socket does not fit there is left out, and a plugin resource name that
	 * does not fit keeps the running configuration. */
	struct resource_set *set = &next->resources;
	for (size_t i = 0; i < set->count;) {
		struct resource_def *def = &set->defs[i];
		char name[RESOURCE_NAME_MAX];
		memcpy(name, def->name, sizeof(name));
		if (resource_def_name(def, name, c->socket_dir) == 0) {
			i++;
			continue;
		}
		if (i == 0) {
			log_error("%s: keeping the running configuration: the socket path of %s under %s is too long",
				  what, name, c->socket_dir);
			return -ENAMETOOLONG;
		}
		log_warn("%s: %s: its socket path under %s is too long; not serving it", what, name, c->socket_dir);
		memmove(def, def + 1, (set->count - i - 1) * sizeof(*def));
		set->count--;
	}
	memcpy(c->resource_name, next->resource_name, sizeof(c->resource_name));
	memcpy(c->endpoint, next->resources.defs[0].endpoint, sizeof(c->endpoint));
	memcpy(c->socket_path, next->resources.defs[0].socket_path, sizeof(c->socket_path));
	memcpy(c->vnpu_base, next->vnpu_base, sizeof(c->vnpu_base));
	c->resources = next->resources;
	c->sharing = next->sharing;
	c->rename_by_default = next->rename_by_default;
	c->health_interval_ms = next->health_interval_ms;
	c->log_level = next->log_level;

	struct resource_set old = d->resources;
	struct endpoint *old_endpoints[RESOURCES_MAX];
	memcpy(old_endpoints, d->endpoints, sizeof(old_endpoints));
	memset(d->endpoints, 0, sizeof(d->endpoints));
	d->resources = c->resources;
	d->publish_due = true;
	struct npu_snapshot *snap = inventory_snapshot(d->inventory);
	vnpu_resources_add(&d->vnpus, &d->resources, snap, d->config.vnpu_base, d->config.socket_dir);
	npu_snapshot_unref(snap);

	for (size_t i = 0; i < old.count; i++) {
		int j = resource_set_find(&d->resources, old.defs[i].name);
		if (j >= 0 && resource_def_same(&old.defs[i], &d->resources.defs[j]) && old_endpoints[i]) {
			d->endpoints[j] = old_endpoints[i];
			continue;
		}
		if (old_endpoints[i])
			log_info("%s: %s %s; no longer serving it", what, old.defs[i].name,
				 j >= 0 ? "changed" : "is gone from the configuration");
		endpoint_free(old_endpoints[i]);
	}
	log_set_level(c->log_level);
	loop_timer_arm(d->health_timer, c->health_interval_ms, c->health_interval_ms);
	d->cdi.retry_ms = c->health_interval_ms;
	return 0;
}

/* signalled: SIGHUP, which also rediscovers and registers everything
 * again; otherwise the --config file changed, and only what changed in it
 * is acted on. */
static void reload_config(struct daemon *d, bool signalled)
{
	if (!signalled)
		log_info("%s changed; reading the configuration again", d->config.config_file);
	struct config *next = malloc(sizeof(*next));
	char why[CONFIG_PATH_MAX + 512];
	int r = next ? d->reload(d->reload_ctx, next, why, sizeof(why)) : -ENOMEM;
	if (r == -ENOMEM && !next)
		snprintf(why, sizeof(why), "out of memory");
	if (r < 0) {
		log_error("%s: keeping the running configuration: %s", signalled ? "SIGHUP" : "reload", why);
	} else if (apply_config(d, signalled ? "SIGHUP" : "reload", next) == 0) {
		char names[1024];
		struct strbuf sb;
		strbuf_init(&sb, names, sizeof(names), ",...");
		for (size_t i = 0; i < d->resources.count; i++)
			if (strbuf_printf(&sb, "%s%s", i ? ", " : "", d->resources.defs[i].name) < 0)
				break;
		log_info("%s: configuration %s applied: resources %s", signalled ? "SIGHUP" : "reload",
			 d->config.config_file[0] ? d->config.config_file : "(flags only)", names);
	}
	free(next);
	if (signalled) {
		broadcast(d, SESSION_EV_RELOAD, NULL);
		inventory_forget(d->inventory);
	}
	refresh(d, signalled ? "SIGHUP" : "configuration changed");
}

/* --- the file system's news ------------------------------------------ */

/* The kubelet's directory is there again: whatever was in it, our socket is
 * gone. */
static void socket_dir_back(struct daemon *d)
{
	log_info("%s is back; serving anew", d->config.socket_dir);
	broadcast(d, SESSION_EV_DIR_BACK, NULL);
}

/* Which kubelet.sock is there now (all zero when none). */
static struct session_kubelet kubelet_now(const struct daemon *d)
{
	struct stat st;
	if (stat(d->config.kubelet_socket, &st) < 0)
		return (struct session_kubelet){ 0 };
	return (struct session_kubelet){ .dev = (uint64_t)st.st_dev, .ino = (uint64_t)st.st_ino };
}

static void on_inotify(void *ctx, uint32_t events)
{
	(void)events;
	struct daemon *d = ctx;
	struct watch_changes ch;
	watch_read(&d->watch, &d->resources, &ch);
	if (ch.overflow)
		log_warn("the inotify queue overflowed; checking devices, sockets and the configuration anew");

	if (ch.devices)
		refresh(d, "device nodes changed");
	if (ch.socket_dir_gone) {
		log_warn("%s was removed; waiting for it to come back", d->config.socket_dir);
		broadcast(d, SESSION_EV_DIR_GONE, NULL);
		if (ch.socket_dir_back)
			socket_dir_back(d);
	} else {
		if (ch.socket_dir_back)
			socket_dir_back(d);
		/* Our own restarts delete and recreate a socket too: only a socket
		 * that is still missing now was removed by someone else. A
		 * starting kubelet deletes them and then creates kubelet.sock; each
		 * session knows whether the registration this leads to already
		 * reaches that kubelet. refresh() only appends resources, so the
		 * indices still hold. */
		for (size_t i = 0; i < d->resources.count; i++)
			if (ch.socket_gone[i] && d->endpoints[i] && !path_exists(d->resources.defs[i].socket_path))
				endpoint_socket_deleted(d->endpoints[i]);
		if (ch.kubelet_started) {
			if (!ch.overflow)
				log_info("kubelet.sock created: the kubelet (re)started");
			observe_kubelet_restarted(d->observe);
			broadcast(d, SESSION_EV_KUBELET_STARTED,
				  &(struct session_event_data){ .kubelet = kubelet_now(d) });
		}
	}
	/* Last: a reload reorders the resources. */
	if (ch.config)
		reload_config(d, false);
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
			broadcast(d, SESSION_EV_STOP, NULL);
			loop_quit(d->loop);
			return;
		case SIGHUP:
			log_info("received SIGHUP; reading the configuration, rediscovering and registering again");
			reload_config(d, true);
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
	cdi_keeper_stop(&d->cdi);
	inventory_free(d->inventory);
	for (size_t i = 0; i < RESOURCES_MAX; i++)
		endpoint_free(d->endpoints[i]);
	/* After the endpoints: their gRPC threads count Allocate calls in it. */
	observe_free(d->observe);
	report_fini(&d->report);
	host_files_unref(d->files);
	loop_async_free(d->fault_async);
	loop_timer_free(d->health_timer);
	watch_fini(&d->watch);
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

/* Builds every resource's endpoint, sends each its devices and starts
 * them: the first that cannot be had stops the start. */
static int start_serving(struct daemon *d, char *why, size_t why_size)
{
	int r = ensure_endpoints(d, why, why_size);
	if (r < 0)
		return r;
	struct npu_snapshot *snap = inventory_snapshot(d->inventory);
	publish(d, snap);
	d->publish_due = false;
	npu_snapshot_unref(snap);
	for (size_t i = 0; i < d->resources.count; i++) {
		r = endpoint_start(d->endpoints[i]);
		if (r < 0) {
			snprintf(why, why_size, "cannot serve on %s: %s", d->resources.defs[i].socket_path, strerror(-r));
			return r;
		}
	}
	d->serving = true;
	return 0;
}

/* Builds everything the daemon needs before it serves; on failure why says
 * what could not be had and why, and daemon_fini undoes the part built. */
static int daemon_init(struct daemon *d, const struct config *config, char *why, size_t why_size)
{
	sigset_t set;
	int r;

	*d = (struct daemon){ .config = *config,
			      .signal_fd = -1,
			      .watch = { .fd = -1 } };
	const struct config *c = &d->config;
	d->resources = c->resources;
	pthread_mutex_init(&d->fault_lock, NULL);

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
	if ((r = prepare_dir("socket directory", c->socket_dir, 0750, why, why_size)) < 0)
		return r;
	if ((c->device_list_strategies & ALLOCATE_STRATEGY_CDI) &&
	    ((r = prepare_dir("CDI directory", c->cdi_dir, 0755, why, why_size)) < 0 ||
	     (r = cdi_keeper_init(&d->cdi, c->cdi_dir, &c->cdi, c->health_interval_ms)) < 0)) {
		if (r == -ENAMETOOLONG)
			snprintf(why, why_size, "CDI directory %s: the spec's path is too long", c->cdi_dir);
		return r;
	}
	if ((r = watch_init(&d->watch, c, why, why_size)) < 0)
		return r;
	if ((r = loop_add_fd(d->loop, watch_fd(&d->watch), EPOLLIN, on_inotify, d)) < 0) {
		snprintf(why, why_size, "cannot watch the inotify instance (epoll): %s", strerror(-r));
		return r;
	}

	if ((r = loop_timer_new(d->loop, on_health_timer, d, &d->health_timer)) < 0 ||
	    (r = loop_async_new(d->loop, on_fault, d, &d->fault_async)) < 0) {
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

	const struct observe_options obs = {
		.loop = d->loop,
		.metrics_addr = c->metrics_addr,
		.telemetry_interval_ms = c->telemetry_interval_ms,
		.pod_resources_socket = c->pod_resources_socket,
		.nfd_file = c->nfd_features_file,
		.kubelet_socket = c->kubelet_socket,
		.replicas = c->sharing.replicas,
	};
	if ((r = observe_new(&obs, &d->observe)) < 0) {
		snprintf(why, why_size, "cannot set up the metrics: %s", strerror(-r));
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

int daemon_run(const struct config *config, daemon_reload_fn reload, void *reload_ctx)
{
	static struct daemon d; /* large (two copies of the resources); one daemon per process */
	char why[CONFIG_PATH_MAX + 512] = "";
	gpr_set_log_function(on_grpc_log);
	/* gRPC stays initialised until the process ends: the last grpc_shutdown
	 * waits up to 10 s for gRPC's own sockets to be cleaned up, which on a
	 * loaded node delayed the exit after SIGTERM by as much. The kernel
	 * reclaims everything at exit anyway. */
	grpc_init();
	int r = daemon_init(&d, config, why, sizeof(why));
	const struct config *c = &d.config;
	d.reload = reload;
	d.reload_ctx = reload_ctx;
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
			log_info("device-list strategy %s: CDI spec %s, kind %s", strategies, d.cdi.path, c->cdi.kind);
		else
			log_info("device-list strategy %s", strategies);
	}
	refresh(&d, "start");
	loop_timer_arm(d.health_timer, c->health_interval_ms, c->health_interval_ms);
	r = start_serving(&d, why, sizeof(why));
	if (r < 0)
		goto out;
	struct npu_snapshot *snap = inventory_snapshot(d.inventory);
	cdi_keeper_start(&d.cdi, &d.resources, snap, &d.paths, d.files);
	npu_snapshot_unref(snap);
	observe_start(d.observe, d.inventory);

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
