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
#include <sys/signalfd.h>
#include <unistd.h>

#include <grpc/grpc.h>
#include <grpc/support/log.h>

#include "base/crash.h"
#include "base/log.h"
#include "base/parse.h"
#include "base/strbuf.h"
#include "daemon/cdi_keeper.h"
#include "daemon/carver.h"
#include "daemon/consumers.h"
#include "daemon/device_share.h"
#include "daemon/dra_front.h"
#include "daemon/dra_kube.h"
#include "daemon/endpoints.h"
#include "daemon/fault_inbox.h"
#include "daemon/fault_stage.h"
#include "daemon/holders.h"
#include "daemon/nfd_keeper.h"
#include "daemon/node.h"
#include "daemon/peers.h"
#include "daemon/prepare.h"
#include "daemon/reload.h"
#include "daemon/report.h"
#include "daemon/separations.h"
#include "daemon/serving.h"
#include "daemon/status_http.h"
#include "daemon/status_keeper.h"
#include "daemon/telemetry_cache.h"
#include "daemon/vnpu_resources.h"
#include "daemon/watch.h"
#include "loop/loop.h"
#include "npu/firmware.h"
#include "npu/inventory.h"
#include "plugin/endpoint.h"
#include "plugin/observe.h"
#include "plugin/resources.h"

struct daemon {
	struct config config;   /* the running configuration: SIGHUP may change parts of it */
	struct serving serving; /* what it implies: the resources, sockets and CDI names */
	daemon_reload_fn reload;
	void *reload_ctx;
	struct loop *loop;
	int signal_fd;
	struct watch watch;

	struct loop_timer *health_timer;
	struct loop_async *fault_async;
	struct loop_async *reload_async; /* the --config file changed: a reload, after what runs now */
	struct inventory *inventory;
	struct fault_stage fault_stage; /* the fault policy's state per chip, and the judged snapshot */
	struct separations separations; /* the record of separated chips, kept in step with the stage */
	struct fault_resets resets;     /* hot resets of chips whose faults ask for one */
	struct device_share share;      /* time-slicing and the chips' device-share mode */
	struct host_paths paths;
	struct host_files *files; /* the shared nodes and driver paths, as last scanned */

	struct node_session node;      /* what every resource shares: serving, the directory, the kubelet */
	struct endpoint_set endpoints; /* what is advertised, and how it is served */
	/* What the daemon shows without an API server: the metrics, who holds
	 * each chip, what each resource reports, the telemetry cache, the NFD
	 * features file, and /metrics and /healthz. */
	struct metrics *metrics;
	struct holders *holders;
	struct observe *observe;
	struct telemetry_cache telemetry;
	struct nfd_keeper nfd;
	struct status_http *status;
	struct status_keeper npu_status; /* the containers' live status files */
	/* Who hears each refresh's judged snapshot, registered at init. */
	struct snapshot_consumers consumers;

	struct fault_inbox faults; /* DCMI's fault events, for the loop */

	/* What was last logged, so each condition is reported once. */
	struct report report;
	bool refreshed_once;
	struct vnpu_resources vnpus; /* resources added for vNPU templates */
	char logged_endpoint_error[1024]; /* why a resource cannot be served, "" when all are */

	struct cdi_keeper cdi; /* the CDI spec, with the cdi strategy */
	struct peers peers;    /* other plugin processes of the node (a surge roll) */

	/* --front-end dra or both: the DRA driver serves the chips of
	 * --dra-chips, the device plugin the others (a chip is served by one
	 * front end at a time); with dra alone, the device plugin registers
	 * nothing. Each front end sees only its own view of a snapshot. */
	bool dra_on;
	struct dra_front dra;
	struct carver *carver; /* DCMI's side of the DRA driver's dynamic vNPUs */
	struct dra_kube *kube; /* the API server: claims read, ResourceSlices published */
	bool slices_on;        /* from the first telemetry read on, the refresh offers the slices */
	char firmware_version[NPU_FIRMWARE_VERSION_MAX + 1]; /* "" when unknown */
	struct {
		struct npu_snapshot *of; /* the snapshot split last, held so that its address stays its own */
		struct npu_snapshot *device_plugin, *dra;
	} views;
};

/* Splits snap between the front ends, unless it was the one split last.
 * Without memory the views stay those of the last split. */
static void split_views(struct daemon *d, struct npu_snapshot *snap)
{
	if (!d->dra_on || d->views.of == snap)
		return;
	struct npu_snapshot *dra, *rest;
	if (npu_snapshot_split(snap, &d->config.dra_chips, &dra, &rest) < 0) {
		log_error("cannot split the chips between the front ends: out of memory");
		return;
	}
	npu_snapshot_unref(d->views.dra);
	npu_snapshot_unref(d->views.device_plugin);
	npu_snapshot_unref(d->views.of);
	d->views.dra = dra;
	d->views.device_plugin = rest;
	d->views.of = npu_snapshot_ref(snap);
	report_front_ends(&d->report, dra, rest, config_device_plugin_on(&d->config));
}

/* What the device plugin serves of snap: every device, or those the DRA
 * front end does not have. Borrowed, as snap is. */
static struct npu_snapshot *device_plugin_view(struct daemon *d, struct npu_snapshot *snap)
{
	split_views(d, snap);
	return d->dra_on ? d->views.device_plugin : snap;
}

/* What the DRA front end serves of snap. Borrowed. */
static struct npu_snapshot *dra_view(struct daemon *d, struct npu_snapshot *snap)
{
	split_views(d, snap);
	return d->views.dra;
}

/* DCMI's thread. The npu layer guarantees no call once the inventory is
 * freed. */
static void on_dcmi_fault(void *ctx, const struct dcmi_event *event)
{
	fault_inbox_post(&((struct daemon *)ctx)->faults, event);
}

/* Tells the node session; every resource hears what it decides. */
static void tell_node(struct daemon *d, enum node_event event, struct session_kubelet kubelet)
{
	enum session_event tell;
	struct session_event_data data;
	if (node_handle(&d->node, event, kubelet, &tell, &data))
		endpoint_set_broadcast(&d->endpoints, tell, &data);
}

/* --- inventory ---------------------------------------------------------- */

static void reload_config(struct daemon *d, bool signalled);
static void socket_dir_back(struct daemon *d);

/* What containers get besides their chips, looked at anew at each refresh.
 * Returns true when it changed, with what changed in change (said once the
 * new files are published, so that an Allocate after the line gets them);
 * *ret_new is true when the files are not those of the last scan, the
 * first scan too. */
static bool scan_host_files(struct daemon *d, char *change, size_t change_size, bool *ret_new)
{
	struct host_files *files;
	*ret_new = false;
	if (host_files_scan(&d->paths, &files) < 0) {
		log_error("cannot look for the shared device nodes and driver paths: out of memory");
		return false;
	}
	if (host_files_equal(files, d->files)) {
		host_files_unref(files);
		return false;
	}
	/* The first scan is no change: the start's lines say what there is. */
	bool changed = d->files != NULL;
	if (changed)
		(void)host_files_describe_change(d->files, files, change, change_size); /* cut with ",..." */
	host_files_unref(d->files);
	d->files = files;
	*ret_new = true;
	return changed;
}

static void refresh(struct daemon *d, const char *reason)
{
	bool changed = false;
	/* Vendor code runs in here: if it kills the process, say so. */
	crash_guard_enter(DCMI_CRASH_WHAT);
	int r = inventory_refresh(d->inventory, &changed);
	if (r == 0) {
		/* A chip switched to device-share is read again at once, so that
		 * it is never advertised whole in between. */
		struct npu_snapshot *raw = inventory_snapshot(d->inventory);
		bool again = false;
		if (device_share_enable(&d->share, inventory_dcmi(d->inventory), raw, &d->serving.resources,
					d->config.file.enable_device_share))
			r = inventory_refresh(d->inventory, &again);
		changed |= again;
		npu_snapshot_unref(raw);
	}
	crash_guard_leave();
	if (r < 0) {
		log_error("cannot refresh the inventory (%s): out of memory", reason);
		return;
	}
	report_status(&d->report, inventory_status(d->inventory), &d->config);
	char files_change[1024];
	bool files_new;
	bool files_changed = scan_host_files(d, files_change, sizeof(files_change), &files_new);
	struct npu_snapshot *raw = inventory_snapshot(d->inventory);
	struct npu_snapshot *snap = fault_stage_judge(&d->fault_stage, &d->config.fault_policy, raw, &changed);
	npu_snapshot_unref(raw);
	separations_sync(&d->separations, snap);
	(void)device_share_report(&d->share, snap, &d->serving.resources, inventory_status(d->inventory),
				  d->config.file.enable_device_share);
	if (changed || !d->refreshed_once) {
		log_debug("device list changed (%s): %zu devices, %zu healthy", reason, snap->count, snap->healthy);
		report_devices(&d->report, snap, &d->endpoints.resources, d->config.health_interval_ms);
		struct resource_set grown = d->endpoints.resources;
		vnpu_resources_add(&d->vnpus, &grown, device_plugin_view(d, snap), d->serving.vnpu_base,
				   d->config.socket_dir, d->config.instance);
		endpoint_set_grow(&d->endpoints, &grown);
	}
	/* Before the daemon serves, daemon_run reports what cannot be built;
	 * later, each new reason is said once. */
	char why[1024];
	if (node_started(&d->node) && endpoint_set_ensure(&d->endpoints, why, sizeof(why)) < 0) {
		if (strcmp(why, d->logged_endpoint_error) != 0)
			log_error("%s; retrying at every refresh", why);
		snprintf(d->logged_endpoint_error, sizeof(d->logged_endpoint_error), "%s", why);
	} else {
		d->logged_endpoint_error[0] = '\0';
	}
	/* Every consumer registered at init hears it, in the order
	 * register_consumers gives (and says why). */
	const struct snapshot_news news = {
		.all = snap,
		.device_plugin = device_plugin_view(d, snap),
		.dra = d->dra_on ? dra_view(d, snap) : NULL,
		.files = d->files,
		.changed = changed || !d->refreshed_once,
		.files_changed = files_new,
	};
	snapshot_consumers_hand(&d->consumers, &news);
	if (files_changed)
		log_event(LOG_LEVEL_INFO, LOG_EVENT_HOST_FILES_CHANGED,
			  &(struct log_fields){ .more = { LOG_STR("change", files_change) } },
			  "files for containers besides their chips: %s", files_change);
	d->refreshed_once = true;
	npu_snapshot_unref(snap);
	struct watch_changes again;
	watch_retry(&d->watch, &again);
	if (again.socket_dir_back)
		socket_dir_back(d);
	if (again.separations)
		separations_reread(&d->separations); /* a change is judged at once, by the hold timer */
	/* A reload refreshes too: an event of its own, handled after this
	 * refresh, never a refresh inside it. */
	if (again.config)
		loop_async_send(d->reload_async);
}

static void on_health_timer(void *ctx)
{
	refresh(ctx, "health poll");
}

static void on_hold_timer(void *ctx)
{
	refresh(ctx, "recovery hold");
}

static void on_reset(void *ctx)
{
	refresh(ctx, "chip reset");
}

/* The DRA driver's prepared claims on a chip, for the reset guard. */
static int claims_on_chip(void *ctx, uint32_t phy, char *buf, size_t size)
{
	struct daemon *d = ctx;
	return d->dra.driver ? (int)dra_driver_claims_on_chip(d->dra.driver, phy, buf, size) : 0;
}

static void on_carved(void *ctx)
{
	refresh(ctx, "vNPU created or destroyed");
}

static void on_fault(void *ctx)
{
	struct daemon *d = ctx;
	fault_inbox_report(&d->faults);
	refresh(d, "fault event");
}

/* --- reloading: SIGHUP, or the --config file changed -------------------- */

/* Takes what a running daemon can change from the new configuration
 * (daemon/reload.h) and serves the resources it names: those that stay as
 * they were keep their endpoint (and register again, as SIGHUP always did);
 * those that went or changed stop being served, which the kubelet sees as
 * their devices going away; new ones are served at the refresh that
 * follows. Allocations made are the kubelet's: nothing here touches them.
 * The gRPC threads never read d->config: each service holds copies of its
 * settings and the snapshots published to it. */
static int apply_config(struct daemon *d, const char *what, struct config *next, struct serving *next_serving)
{
	const struct config *c = &d->config;
	int r = reload_take(&d->config, &d->serving, next, next_serving, what);
	if (r < 0)
		return r;
	struct resource_set resources = d->serving.resources;
	vnpu_resources_add(&d->vnpus, &resources, device_plugin_view(d, d->fault_stage.judged), d->serving.vnpu_base,
			   c->socket_dir, c->instance);
	endpoint_set_replace(&d->endpoints, &resources, what);
	log_set_level(c->log_level);
	loop_timer_arm(d->health_timer, c->health_interval_ms, c->health_interval_ms);
	return 0;
}


/* signalled: SIGHUP, which also rediscovers and registers everything
 * again; otherwise the --config file changed, and only what changed in it
 * is acted on. */
static void reload_config(struct daemon *d, bool signalled)
{
	if (!signalled)
		log_event(LOG_LEVEL_INFO, LOG_EVENT_CONFIG_CHANGED,
			  &(struct log_fields){ .more = { LOG_STR("path", d->config.config_file) } },
			  "%s changed; reading the configuration again", d->config.config_file);
	struct reload_next *next = malloc(sizeof(*next));
	char why[CONFIG_PATH_MAX + 512];
	int r = next ? reload_read(d->reload, d->reload_ctx, next, why, sizeof(why)) : -ENOMEM;
	if (r == -ENOMEM && !next)
		snprintf(why, sizeof(why), "out of memory");
	if (r < 0) {
		log_event(LOG_LEVEL_ERROR, LOG_EVENT_CONFIG_REJECTED,
			  &(struct log_fields){ .more = { LOG_STR("trigger", signalled ? "SIGHUP" : "reload"),
							  LOG_STR("reason", why) } },
			  "%s: keeping the running configuration: %s", signalled ? "SIGHUP" : "reload", why);
	} else if (apply_config(d, signalled ? "SIGHUP" : "reload", &next->config, &next->serving) == 0) {
		char names[1024];
		struct strbuf sb;
		strbuf_init(&sb, names, sizeof(names), ",...");
		for (size_t i = 0; i < d->endpoints.resources.count; i++)
			if (strbuf_printf(&sb, "%s%s", i ? ", " : "", d->endpoints.resources.defs[i].name) < 0)
				break;
		log_event(LOG_LEVEL_INFO, LOG_EVENT_CONFIG_APPLIED,
			  &(struct log_fields){ .more = { LOG_STR("trigger", signalled ? "SIGHUP" : "reload"),
							  LOG_STR("resources", names) } },
			  "%s: configuration %s applied: resources %s", signalled ? "SIGHUP" : "reload",
			  d->config.config_file[0] ? d->config.config_file : "(flags only)", names);
	}
	free(next);
	if (signalled) {
		tell_node(d, NODE_EV_RELOAD, (struct session_kubelet){ 0 });
		inventory_rediscover(d->inventory);
	}
	refresh(d, signalled ? "SIGHUP" : "configuration changed");
}

static void on_reload_due(void *ctx)
{
	reload_config(ctx, false);
}

/* --- the file system's news ------------------------------------------ */

/* The kubelet's directory is there again: whatever was in it, our socket is
 * gone. */
static void socket_dir_back(struct daemon *d)
{
	log_event(LOG_LEVEL_INFO, LOG_EVENT_KUBELET_DIR_BACK, NULL, "%s is back; serving anew", d->config.socket_dir);
	tell_node(d, NODE_EV_DIR_BACK, (struct session_kubelet){ 0 });
}

static void on_inotify(void *ctx, uint32_t events)
{
	(void)events;
	struct daemon *d = ctx;
	struct watch_changes ch;
	watch_read(&d->watch, &d->endpoints.resources, &ch);
	if (ch.overflow)
		log_event(LOG_LEVEL_WARN, LOG_EVENT_CONFIG_INOTIFY_OVERFLOW, NULL,
			  "the inotify queue overflowed; checking devices, sockets and the configuration anew");

	if (ch.separations)
		separations_reread(&d->separations); /* a change is judged at once, by the hold timer */
	if (ch.devices)
		refresh(d, "device nodes changed");
	if (ch.socket_dir_gone) {
		log_event(LOG_LEVEL_WARN, LOG_EVENT_KUBELET_DIR_REMOVED, NULL, "%s was removed; waiting for it to come back",
			  d->config.socket_dir);
		tell_node(d, NODE_EV_DIR_GONE, (struct session_kubelet){ 0 });
		if (ch.socket_dir_back)
			socket_dir_back(d);
	} else {
		if (ch.socket_dir_back)
			socket_dir_back(d);
		endpoint_set_sockets_deleted(&d->endpoints, ch.socket_gone);
		if (ch.kubelet_started) {
			if (!ch.overflow)
				log_info("kubelet.sock created: the kubelet (re)started");
			metrics_count_kubelet_restart(d->metrics);
			tell_node(d, NODE_EV_KUBELET_STARTED, endpoint_kubelet_at(d->serving.kubelet_socket));
		}
	}
	/* A reload reorders the resources: after everything above. */
	if (ch.config)
		loop_async_send(d->reload_async);
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
			tell_node(d, NODE_EV_STOP, (struct session_kubelet){ 0 });
			loop_quit(d->loop);
			return;
		case SIGHUP:
			log_event(LOG_LEVEL_INFO, LOG_EVENT_CONFIG_SIGHUP, NULL,
				  "received SIGHUP; reading the configuration, rediscovering and registering again");
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
 * waits for a callback in progress, which uses the fault inbox. */
static void daemon_fini(struct daemon *d)
{
	/* The CDI spec and the NFD file are the node's: a newer pod of a
	 * surge roll, still serving, keeps them. */
	bool alone = peers_alone(&d->peers);
	if (!alone)
		log_event(LOG_LEVEL_INFO, LOG_EVENT_INSTANCE_STANDBY, NULL,
			  "another plugin process of this node serves on; leaving the CDI spec and the NFD file to it");
	cdi_keeper_stop(&d->cdi, alone);
	if (d->kube)
		dra_kube_stop(d->kube);
	/* Before the DRA service stops: a prepare waiting for a vNPU returns. */
	carver_stop(d->carver);
	dra_front_fini(&d->dra);
	carver_free(d->carver);
	npu_snapshot_unref(d->views.of);
	npu_snapshot_unref(d->views.dra);
	npu_snapshot_unref(d->views.device_plugin);
	inventory_free(d->inventory);
	/* After the inventory: no reset in its library can wake it now. */
	fault_resets_fini(&d->resets);
	fault_stage_fini(&d->fault_stage);
	endpoint_set_fini(&d->endpoints);
	/* After both front ends: Allocate and prepare make its directories. */
	status_keeper_fini(&d->npu_status);
	/* After the endpoints: their gRPC threads count Allocate calls in
	 * these. The HTTP thread first: it reads everything below. */
	status_http_free(d->status);
	holders_free(d->holders);
	nfd_keeper_stop(&d->nfd, alone);
	telemetry_cache_fini(&d->telemetry);
	observe_free(d->observe);
	metrics_free(d->metrics);
	report_fini(&d->report);
	host_files_unref(d->files);
	if (d->fault_async)
		fault_inbox_fini(&d->faults);
	loop_async_free(d->fault_async);
	loop_async_free(d->reload_async);
	loop_timer_free(d->health_timer);
	watch_fini(&d->watch);
	if (d->signal_fd >= 0)
		close(d->signal_fd);
	loop_free(d->loop);
	peers_leave(&d->peers);
}

/* --- wiring: what each module hears from the others --------------------- */

/* A kubelet that registers the driver may have wiped the node's slices. */
static void on_dra_registered(void *ctx)
{
	dra_kube_recheck(ctx);
}

/* The pod map counts the devices of every resource the plugin served. */
static size_t served_names(void *ctx, const char *names[], size_t max)
{
	return observe_resource_names(((struct daemon *)ctx)->observe, names, max);
}

/* A successful Allocate (a gRPC thread): the pod map is due. */
static void on_allocated(void *ctx)
{
	holders_allocated(((struct daemon *)ctx)->holders);
}

/* The telemetry interval's chores besides the read. */
static void on_telemetry_tick(void *ctx)
{
	struct daemon *d = ctx;
	nfd_keeper_sync(&d->nfd);
	status_http_serve(d->status);
}

static void consume_metrics(void *ctx, const struct snapshot_news *news)
{
	metrics_publish_chips(ctx, news->all);
}

static void consume_telemetry(void *ctx, const struct snapshot_news *news)
{
	telemetry_cache_node(ctx, news->all);
}

static void consume_nfd(void *ctx, const struct snapshot_news *news)
{
	nfd_keeper_node(ctx, news->all);
}

static void consume_cdi(void *ctx, const struct snapshot_news *news)
{
	struct daemon *d = ctx;
	cdi_keeper_sync(&d->cdi, &d->endpoints.resources, news->device_plugin, &d->paths, news->files);
}

static void consume_npu_status(void *ctx, const struct snapshot_news *news)
{
	status_keeper_refresh(ctx, news->all);
}

static void consume_dra(void *ctx, const struct snapshot_news *news)
{
	struct daemon *d = ctx;
	dra_front_refresh(&d->dra, news->dra, news->files, d->config.health_interval_ms, &d->serving.resources);
}

/* From the first telemetry read on (daemon_run): the slices carry HBM. */
static void consume_slices(void *ctx, const struct snapshot_news *news)
{
	struct daemon *d = ctx;
	if (!d->slices_on)
		return;
	const struct dra_kube_offer offer = {
		.node_name = d->dra.node_name,
		.driver = d->config.dra_driver_name,
		.driver_version = inventory_status(d->inventory)->driver_version,
		.firmware_version = d->firmware_version[0] ? d->firmware_version : NULL,
		.telemetry = &d->telemetry,
		.resources = &d->serving.resources,
		.carve_on_demand = config_dra_dynamic_vnpus(&d->config),
		.claims = d->dra.driver,
		.no_execute_levels = d->config.dra_no_execute_levels,
	};
	dra_kube_offer(d->kube, news->dra, &offer);
}

/* Who hears each refresh, in this order: the metrics first, so that
 * whoever hears the new list from the kubelet then finds them saying the
 * same; the telemetry cache before the features file, whose labels take
 * new chips' HBM from it; the DRA driver before the slices, so that a
 * claim on a device the slices offer finds it known to the driver. The
 * device plugin's endpoints and the CDI keeper keep the order refresh()
 * always had. */
static int register_consumers(struct daemon *d)
{
	struct snapshot_consumers *c = &d->consumers;
	int r;
	if ((r = snapshot_consumers_add(c, consume_metrics, d->metrics)) < 0 ||
	    (r = snapshot_consumers_add(c, consume_telemetry, &d->telemetry)) < 0 ||
	    (r = snapshot_consumers_add(c, consume_nfd, &d->nfd)) < 0 ||
	    (r = snapshot_consumers_add(c, endpoint_set_consume, &d->endpoints)) < 0 ||
	    (r = snapshot_consumers_add(c, consume_cdi, d)) < 0)
		return r;
	if (d->dra_on && ((r = snapshot_consumers_add(c, consume_dra, d)) < 0 ||
			  (r = snapshot_consumers_add(c, consume_slices, d)) < 0))
		return r;
	return snapshot_consumers_add(c, consume_npu_status, &d->npu_status);
}

/* What the daemon shows without an API server (daemon_fini frees it). */
static int observers_init(struct daemon *d)
{
	const struct config *c = &d->config;
	/* First: everything below is made with it. */
	int r = metrics_new(ASCEND_VERSION, &d->metrics);
	if (r < 0)
		return r;
	const struct holders_options pods = {
		.loop = d->loop,
		.socket = c->pod_resources_socket,
		.metrics = d->metrics,
		.resources = served_names,
		.resources_ctx = d,
	};
	const struct observe_options obs = {
		.loop = d->loop,
		.metrics = d->metrics,
		.allocated = on_allocated,
		.allocated_ctx = d,
	};
	const struct telemetry_cache_options tel = {
		.loop = d->loop,
		.interval_ms = c->telemetry_interval_ms,
		.inventory = d->inventory,
		.metrics = d->metrics,
		.tick = on_telemetry_tick,
		.ctx = d,
	};
	const struct nfd_keeper_options nfd = {
		.file = c->nfd_features_file,
		.replicas = serving_default(&d->serving)->sharing.replicas,
		.inventory = d->inventory,
		.telemetry = &d->telemetry,
	};
	if ((r = holders_new(&pods, &d->holders)) < 0 || (r = observe_new(&obs, &d->observe)) < 0 ||
	    (r = telemetry_cache_init(&d->telemetry, &tel)) < 0 || (r = nfd_keeper_init(&d->nfd, &nfd)) < 0)
		return r;
	const struct status_http_options http = {
		.addr = c->metrics_addr,
		.retry_ms = c->telemetry_interval_ms,
		.kubelet_socket = d->serving.kubelet_socket,
		.metrics = d->metrics,
		.observe = d->observe,
		.holders = d->holders,
	};
	return status_http_new(&http, &d->status);
}

/* --- lifecycle, continued ------------------------------------------------- */

/* Builds everything the daemon needs before it serves; on failure why says
 * what could not be had and why, and daemon_fini undoes the part built. */
static int daemon_init(struct daemon *d, const struct config *config, const struct serving *serving,
		       struct dra_kube *kube, daemon_reload_fn reload, void *reload_ctx, char *why, size_t why_size)
{
	sigset_t set;
	int r;

	*d = (struct daemon){ .config = *config,
			      .serving = *serving,
			      .reload = reload,
			      .reload_ctx = reload_ctx,
			      .signal_fd = -1,
			      .watch = { .fd = -1 },
			      .peers = { .fd = -1 } };
	const struct config *c = &d->config;
	const struct serving *s = &d->serving;
	node_init(&d->node);

	if ((r = prepare_open_files(why, why_size)) < 0)
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
	if (config_device_plugin_on(c) &&
	    (r = prepare_dir("socket directory", c->socket_dir, 0750, why, why_size)) < 0)
		return r;
	/* The DRA front end writes a CDI spec per claim there. */
	bool cdi = (s->strategies & ALLOCATE_STRATEGY_CDI) || config_dra_on(c);
	if (cdi && (r = prepare_dir("CDI directory", c->cdi_dir, 0755, why, why_size)) < 0)
		return r;
	if ((s->strategies & ALLOCATE_STRATEGY_CDI) && (r = cdi_keeper_init(&d->cdi, c->cdi_dir, &s->cdi)) < 0) {
		if (r == -ENAMETOOLONG)
			snprintf(why, why_size, "CDI directory %s: the spec's path is too long", c->cdi_dir);
		return r;
	}
	if ((r = watch_init(&d->watch, c, config_device_plugin_on(c) ? s->kubelet_socket : NULL, why, why_size)) < 0)
		return r;
	if ((r = loop_add_fd(d->loop, watch_fd(&d->watch), EPOLLIN, on_inotify, d)) < 0) {
		snprintf(why, why_size, "cannot watch the inotify instance (epoll): %s", strerror(-r));
		return r;
	}

	if ((r = loop_timer_new(d->loop, on_health_timer, d, &d->health_timer)) < 0 ||
	    (r = loop_async_new(d->loop, on_fault, d, &d->fault_async)) < 0 ||
	    (r = loop_async_new(d->loop, on_reload_due, d, &d->reload_async)) < 0) {
		snprintf(why, why_size, "cannot create timers and wakeups (timerfd, eventfd): %s", strerror(-r));
		return r;
	}
	fault_inbox_init(&d->faults, d->fault_async);
	/* It keeps the stage's address only: the stage is made below, with
	 * the separations as its restore hook. */
	if ((r = separations_init(&d->separations, c->state_dir, &d->fault_stage, why, why_size)) < 0)
		return r;
	/* Without the lock (a read-only state directory) the daemon stops as a
	 * lone one would: its shared files go with it. */
	(void)peers_join(&d->peers, c->state_dir);

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

	if ((r = observers_init(d)) < 0) {
		snprintf(why, why_size, "cannot set up the metrics: %s", strerror(-r));
		return r;
	}
	status_keeper_init(&d->npu_status, c->state_dir, d->holders);
	const struct fault_resets_options resets = {
		.loop = d->loop,
		.config = &d->config.fault_reset,
		.inventory = d->inventory,
		.metrics = d->metrics,
		.holders = d->holders,
		.claims = claims_on_chip,
		.refresh = on_reset,
		.ctx = d,
	};
	const struct fault_stage_options stage = {
		.loop = d->loop,
		.due = on_hold_timer,
		.ctx = d,
		.metrics = d->metrics,
		.holders = d->holders,
		.restore = separations_restore,
		.restore_ctx = &d->separations,
		.resets = &d->resets,
	};
	if ((r = fault_resets_init(&d->resets, &resets)) < 0 || (r = fault_stage_init(&d->fault_stage, &stage)) < 0) {
		snprintf(why, why_size, "cannot create timers and wakeups (timerfd, eventfd): %s", strerror(-r));
		return r;
	}
	if (config_dra_on(c)) {
		/* Empty until the first refresh splits a snapshot. */
		d->views.dra = npu_snapshot_new(0);
		d->views.device_plugin = npu_snapshot_new(0);
		if (!d->views.dra || !d->views.device_plugin) {
			snprintf(why, why_size, "out of memory");
			return -ENOMEM;
		}
		const struct carver_options carving = {
			.loop = d->loop, .inventory = d->inventory, .refresh = on_carved, .ctx = d
		};
		if ((r = carver_new(&carving, &d->carver)) < 0) {
			snprintf(why, why_size, "cannot create timers and wakeups (timerfd, eventfd): %s", strerror(-r));
			return r;
		}
		const struct dra_front_options dra = {
			.config = c,
			.carver = carver_for_driver(d->carver),
			.reader = dra_kube_reader(kube),
			.paths = &d->paths,
			.loop = d->loop,
			.status = d->status,
			.npu_status = d->npu_status.dirs,
			.registered = on_dra_registered,
			.registered_ctx = kube,
		};
		if ((r = dra_front_init(&d->dra, &dra, why, why_size)) < 0)
			return r;
		/* Read once: a firmware upgrade takes a reboot, and so a restart. */
		char fw_why[512];
		if (npu_firmware_version(c->driver_path, d->firmware_version, sizeof(d->firmware_version), fw_why,
					 sizeof(fw_why)) < 0)
			log_info("firmware version unknown, the slices carry none: %s", fw_why);
		d->kube = kube;
		d->dra_on = true;
	}
	const struct endpoint_set_options eps = {
		.loop = d->loop,
		.kubelet_socket = s->kubelet_socket,
		.allocate = { .strategies = s->strategies, .cdi = &s->cdi, .status = d->npu_status.dirs },
		.observe = d->observe,
		.node = &d->node,
	};
	if ((r = endpoint_set_init(&d->endpoints, &eps, &s->resources)) < 0) {
		snprintf(why, why_size, "cannot start the registration thread (gRPC completion queue): %s", strerror(-r));
		return r;
	}
	return register_consumers(d);
}

/* gRPC's own messages are internals (our errors are reported where they
 * surface, with their cause), and gRPC would write them to stderr from its
 * threads, bypassing the log queue: route them through it, at debug level. */
static void on_grpc_log(gpr_log_func_args *args)
{
	log_debug("grpc: %s:%d: %s", args->file, args->line, args->message);
}

int daemon_run(const struct config *config, const struct serving *serving, struct dra_kube *kube,
	       daemon_reload_fn reload, void *reload_ctx)
{
	static struct daemon d; /* large (two copies of the resources); one daemon per process */
	char why[CONFIG_PATH_MAX + 512] = "";
	gpr_set_log_function(on_grpc_log);
	/* gRPC stays initialised until the process ends: the last grpc_shutdown
	 * waits up to 10 s for gRPC's own sockets to be cleaned up, which on a
	 * loaded node delayed the exit after SIGTERM by as much. The kernel
	 * reclaims everything at exit anyway. */
	grpc_init();
	int r = daemon_init(&d, config, serving, kube, reload, reload_ctx, why, sizeof(why));
	const struct config *c = &d.config;
	if (r < 0)
		goto out;

	report_start(c, &d.serving, d.cdi.path);
	refresh(&d, "start");
	loop_timer_arm(d.health_timer, c->health_interval_ms, c->health_interval_ms);
	/* With the DRA driver alone the device plugin never serves: its node
	 * session stays STARTING, which no event but serve leaves, so no
	 * resource registers, not even an empty one that would keep the
	 * node's ascend.com/npu from DRA's extended-resource mapping. */
	if (config_device_plugin_on(c)) {
		r = endpoint_set_start(&d.endpoints, device_plugin_view(&d, d.fault_stage.judged), d.files, why,
				       sizeof(why));
		if (r < 0)
			goto out;
		tell_node(&d, NODE_EV_SERVE, (struct session_kubelet){ 0 });
		cdi_keeper_start(&d.cdi, &d.endpoints.resources, device_plugin_view(&d, d.fault_stage.judged),
				 &d.paths, d.files);
	}
	if (d.dra_on) {
		if ((r = dra_front_start(&d.dra, why, sizeof(why))) < 0)
			goto out;
	}
	telemetry_cache_start(&d.telemetry);
	nfd_keeper_start(&d.nfd);
	status_http_serve(d.status);
	/* Only now, with the first telemetry read in: the first slices have
	 * the chips' HBM, rather than a generation without it. */
	if (d.dra_on) {
		d.slices_on = true;
		consume_slices(&d, &(struct snapshot_news){ .dra = dra_view(&d, d.fault_stage.judged) });
	}

	r = loop_run(d.loop);
	if (r < 0)
		snprintf(why, sizeof(why), "the event loop failed (epoll_wait): %s", strerror(-r));
out:
	daemon_fini(&d);
	if (r < 0)
		log_event(LOG_LEVEL_ERROR, LOG_EVENT_START_FAILED,
			  &(struct log_fields){ .more = { LOG_STR("reason", why) } }, "cannot start: %s", why);
	else
		log_info("stopped");
	return r;
}
