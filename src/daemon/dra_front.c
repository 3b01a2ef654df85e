/* SPDX-License-Identifier: Apache-2.0 */
#include "daemon/dra_front.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/inotify.h>
#include <time.h>
#include <unistd.h>

#include "base/file.h"
#include "base/log.h"
#include "dra/service.h"

/* --node-name, else $NODE_NAME (the DaemonSet's downward API), else the
 * host name: the pool must be the Node object's name. */
static int find_node_name(const struct config *c, char *buf, size_t size, char *why, size_t why_size)
{
	const char *env = getenv("NODE_NAME");
	char host[256];
	const char *name = c->node_name[0] ? c->node_name : env && env[0] ? env : NULL;
	if (!name) {
		if (gethostname(host, sizeof(host)) < 0)
			return why_invalid(why, why_size, "no node name: set --node-name or NODE_NAME");
		host[sizeof(host) - 1] = '\0';
		name = host;
	}
	if (k8s_dns_subdomain_check(name, strlen(name)) < 0 || str_copy(buf, size, name) < 0)
		return why_invalid(why, why_size, "node name '%s' is not a DNS subdomain; set --node-name", name);
	return 0;
}

static void report_registration(struct dra_front *f);

/* A gRPC thread recorded a NotifyRegistrationStatus: the loop reports it. */
static void on_notified_thread(void *ctx)
{
	loop_async_send(((struct dra_front *)ctx)->notified);
}

static void on_notified(void *ctx)
{
	report_registration(ctx);
}

int dra_front_init(struct dra_front *f, const struct dra_front_options *opt, char *why, size_t why_size)
{
	const struct config *c = opt->config;
	*f = (struct dra_front){ .loop = opt->loop,
				 .status = opt->status,
				 .registered = opt->registered,
				 .registered_ctx = opt->registered_ctx,
				 .inotify_fd = -1 };
	char reg_name[K8S_DNS_SUBDOMAIN_MAX + CONFIG_INSTANCE_MAX + 16], dra_name[CONFIG_INSTANCE_MAX + 16];
	/* With an instance (the pod's UID, a surge roll), both sockets carry
	 * it, as the kubelet's DRA plugin helper names them for rolling
	 * updates, so that two pods of one node register side by side. */
	bool shared = c->instance[0] != '\0';
	int r = find_node_name(c, f->node_name, sizeof(f->node_name), why, why_size);
	if (r < 0)
		return r;
	if (str_copy(f->kubelet_dir, sizeof(f->kubelet_dir), c->kubelet_dir) < 0 ||
	    path_join(f->plugins_dir, sizeof(f->plugins_dir), c->kubelet_dir, "plugins") < 0 ||
	    path_join(f->plugin_dir, sizeof(f->plugin_dir), f->plugins_dir, c->dra_driver_name) < 0 ||
	    path_join(f->registry_dir, sizeof(f->registry_dir), c->kubelet_dir, "plugins_registry") < 0 ||
	    str_printf(dra_name, sizeof(dra_name), "dra%s%s.sock", shared ? "-" : "", c->instance) < 0 ||
	    path_join(f->dra_socket, sizeof(f->dra_socket), f->plugin_dir, dra_name) < 0 ||
	    str_printf(reg_name, sizeof(reg_name), "%s%s%s-reg.sock", c->dra_driver_name, shared ? "-" : "",
		       c->instance) < 0 ||
	    path_join(f->lock_path, sizeof(f->lock_path), f->plugin_dir, DRA_LOCK_FILE) < 0 ||
	    path_join(f->reg_socket, sizeof(f->reg_socket), f->registry_dir, reg_name) < 0)
		return why_invalid(why, why_size, "--kubelet-dir %s: the DRA sockets' paths would be over %d characters",
				   c->kubelet_dir, SOCKET_PATH_MAX - 1);
	if ((r = mkdir_p(f->plugin_dir, 0750)) < 0) {
		snprintf(why, why_size, "cannot make the DRA plugin directory %s: %s", f->plugin_dir, strerror(-r));
		return r;
	}
	if ((r = loop_async_new(opt->loop, on_notified, f, &f->notified)) < 0) {
		snprintf(why, why_size, "cannot create a wakeup (eventfd): %s", strerror(-r));
		return r;
	}
	if ((r = dra_registration_init(&f->registration, c->dra_driver_name, f->dra_socket, on_notified_thread, f)) <
	    0) {
		snprintf(why, why_size, "DRA driver name %s is too long", c->dra_driver_name);
		return r;
	}
	f->registration_ready = true;
	const struct dra_driver_options o = {
		.driver_name = c->dra_driver_name,
		.node_name = f->node_name,
		.plugin_dir = f->plugin_dir,
		.cdi_dir = c->cdi_dir,
		.lock_path = shared ? f->lock_path : NULL,
		.paths = *opt->paths,
		.reader = opt->reader,
		.dynamic = config_dra_dynamic_vnpus(c),
		.carver = opt->carver,
		.status = opt->npu_status,
	};
	if (o.dynamic) {
		f->dynamic = *o.dynamic;
		f->has_dynamic = true;
	}
	char set_aside[PATH_MAX + 600];
	if ((r = dra_driver_new(&o, &f->driver, set_aside, sizeof(set_aside), why, why_size)) < 0)
		return r;
	if ((r = dra_health_new(&f->health)) < 0) {
		snprintf(why, why_size, "out of memory");
		return r;
	}
	if ((r = dra_service_new(f->driver, f->health, &f->service)) < 0) {
		snprintf(why, why_size, "out of memory");
		return r;
	}
	/* Without a record, which specs are stale is unknown, and a running
	 * kubelet never prepares its claims again: the pods' containers find
	 * their chips through these specs until the kubelet's next start. */
	if (set_aside[0]) {
		log_event(LOG_LEVEL_WARN, LOG_EVENT_DRA_CHECKPOINT_KEPT, NULL,
			  "DRA checkpoint %s; the CDI specs in %s are kept until the kubelet prepares their claims again",
			  set_aside, c->cdi_dir);
		return 0;
	}
	int swept = dra_driver_sweep(f->driver);
	if (swept > 0)
		log_info("removed %d CDI specs of claims the DRA checkpoint does not hold", swept);
	else if (swept < 0 && swept != -ENOENT)
		log_warn("cannot look for stale DRA CDI specs in %s: %s", c->cdi_dir, strerror(-swept));
	return 0;
}

static void stop_servers(struct dra_front *f)
{
	/* Registration first: the kubelet must not find it without the
	 * service behind it. */
	gs_server_stop(f->reg_server);
	gs_server_stop(f->dra_server);
	f->reg_server = f->dra_server = NULL;
}

/* Watches every directory on the sockets' paths for what removes a socket:
 * the socket itself, or a directory on its path. Added again after every
 * serve, since a directory made anew needs a watch of its own (adding a
 * watch that exists changes nothing); one that cannot be added is left to
 * the refresh's check. */
static void watch_dirs(struct dra_front *f)
{
	const uint32_t mask = IN_DELETE | IN_MOVED_FROM | IN_DELETE_SELF | IN_MOVE_SELF | IN_ONLYDIR;
	const char *dirs[] = { f->kubelet_dir, f->plugins_dir, f->plugin_dir, f->registry_dir };
	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++)
		(void)inotify_add_watch(f->inotify_fd, dirs[i], mask);
}

static int serve(struct dra_front *f, char *why, size_t why_size)
{
	size_t n_dra, n_reg;
	const struct gs_method *dra = dra_service_methods(&n_dra), *reg = dra_registration_methods(&n_reg);
	int r;
	r = mkdir_p(f->plugin_dir, 0750);
	if (r == 0)
		r = mkdir_p(f->registry_dir, 0750);
	/* Watched before the sockets exist: one removed right after it was
	 * made is seen too. */
	watch_dirs(f);
	if (r < 0) {
		snprintf(why, why_size, "cannot make %s or %s: %s", f->plugin_dir, f->registry_dir, strerror(-r));
		return r;
	}
	/* The DRA socket first, so that the kubelet, once it sees the
	 * registration socket, finds the endpoint it names. */
	if ((r = gs_server_start(f->dra_socket, dra, n_dra, f->service, &f->dra_server)) < 0) {
		snprintf(why, why_size, "cannot serve %s: %s", f->dra_socket, strerror(-r));
		return r;
	}
	if ((r = gs_server_start(f->reg_socket, reg, n_reg, &f->registration, &f->reg_server)) < 0) {
		snprintf(why, why_size, "cannot serve %s: %s", f->reg_socket, strerror(-r));
		stop_servers(f);
		return r;
	}
	return 0;
}

/* Serves the sockets anew when one is gone. */
static void check_sockets(struct dra_front *f)
{
	if (f->dra_server && f->reg_server && path_exists(f->dra_socket) && path_exists(f->reg_socket))
		return;
	/* Stop fully, then bind anew, so that stopping the old server cannot
	 * unlink the new socket (gRPC removes the path it bound when it stops). */
	stop_servers(f);
	char why[PATH_MAX + 256];
	int r = serve(f, why, sizeof(why));
	if (r < 0) {
		if (r != f->serve_error)
			log_error("DRA: %s; retrying at every refresh", why);
		f->serve_error = r;
		return;
	}
	f->serve_error = 0;
	log_event(LOG_LEVEL_INFO, LOG_EVENT_DRA_SOCKETS_RESTORED, NULL, "DRA sockets were gone; serving %s and %s anew",
		  f->dra_socket, f->reg_socket);
}

static void on_inotify(void *ctx, uint32_t events)
{
	(void)events;
	struct dra_front *f = ctx;
	_Alignas(struct inotify_event) char buf[4096];
	/* What changed does not matter, only whether the sockets are there. */
	while (read(f->inotify_fd, buf, sizeof(buf)) > 0)
		;
	check_sockets(f);
}

int dra_front_start(struct dra_front *f, char *why, size_t why_size)
{
	f->inotify_fd = inotify_init1(IN_CLOEXEC | IN_NONBLOCK);
	int r = f->inotify_fd < 0 ? -errno : loop_add_fd(f->loop, f->inotify_fd, EPOLLIN, on_inotify, f);
	if (r < 0) {
		snprintf(why, why_size, "cannot watch the DRA sockets' directories (inotify): %s", strerror(-r));
		return r;
	}
	char failure[768] = "";
	size_t failed = 0;
	int restored = dra_driver_restore(f->driver, &failed, failure, sizeof(failure));
	if (restored > 0)
		log_event(LOG_LEVEL_INFO, LOG_EVENT_DRA_CHECKPOINT_RESTORED,
			  &(struct log_fields){ .more = { LOG_NUM("claims", restored) } },
			  "wrote the CDI specs of %d prepared claims from the DRA checkpoint", restored);
	if (failed > 0)
		log_error("cannot write the CDI specs of %zu prepared claims from the DRA checkpoint; the first: %s",
			  failed, failure);
	if ((r = serve(f, why, why_size)) < 0)
		return r;
	f->started = true;
	log_event(LOG_LEVEL_INFO, LOG_EVENT_DRA_SERVING,
		  &(struct log_fields){ .more = { LOG_STR("driver", f->registration.driver_name),
						  LOG_STR("node", f->node_name),
						  LOG_NUM("claims", dra_driver_prepared_count(f->driver)) } },
		  "DRA driver %s serving %s (registration %s), node %s, %zu prepared claims from the checkpoint",
		  f->registration.driver_name, f->dra_socket, f->reg_socket, f->node_name,
		  dra_driver_prepared_count(f->driver));
	return 0;
}

/* What the kubelet said since the last look. */
static void report_registration(struct dra_front *f)
{
	struct dra_registration_status st;
	dra_registration_status(&f->registration, &st);
	status_http_dra(f->status, f->registration.driver_name, st.notifications > 0, st.registered, st.error);
	if (st.notifications == f->notifications_seen)
		return;
	f->notifications_seen = st.notifications;
	if (st.registered) {
		log_event(LOG_LEVEL_INFO, LOG_EVENT_DRA_REGISTERED,
			  &(struct log_fields){ .more = { LOG_STR("driver", f->registration.driver_name) } },
			  "the kubelet registered DRA driver %s", f->registration.driver_name);
		if (f->registered)
			f->registered(f->registered_ctx);
	} else
		log_error("the kubelet refused DRA driver %s: %s", f->registration.driver_name, st.error);
}

/* The kubelet's default when a plugin gives none. */
#define HEALTH_TIMEOUT_MIN_S 30

void dra_front_refresh(struct dra_front *f, struct npu_snapshot *snap, struct host_files *files,
		       int64_t health_interval_ms, const struct resource_set *resources)
{
	/* Without memory for it no device is shared: prepare then refuses a
	 * second claim of a time-sliced chip until the next refresh. */
	unsigned *shares = snap->count ? calloc(snap->count, sizeof(*shares)) : NULL;
	for (size_t i = 0; shares && i < snap->count; i++)
		shares[i] = resource_set_shares(resources, &snap->devices[i]);
	dra_driver_publish(f->driver, snap, files, shares);
	free(shares);
	/* Three refreshes may be missed before the kubelet calls it unknown. */
	int64_t timeout_s = 3 * health_interval_ms / 1000;
	if (dra_health_publish(f->health, snap, f->node_name, f->has_dynamic ? &f->dynamic : NULL, (int64_t)time(NULL),
			       timeout_s > HEALTH_TIMEOUT_MIN_S ? timeout_s : HEALTH_TIMEOUT_MIN_S) < 0)
		log_error("cannot publish the chips' health to the kubelet: out of memory");
	/* The safety net behind inotify (a watch that could not be added). */
	if (f->started)
		check_sockets(f);
}

void dra_front_fini(struct dra_front *f)
{
	if (!f->loop)
		return; /* never initialised */
	if (f->inotify_fd >= 0) {
		loop_remove_fd(f->loop, f->inotify_fd);
		close(f->inotify_fd);
		f->inotify_fd = -1;
	}
	stop_servers(f);
	/* After the servers: no gRPC thread wakes it any more, and no call
	 * waits for a claim reader. */
	loop_async_free(f->notified);
	f->notified = NULL;
	dra_service_free(f->service);
	f->service = NULL;
	dra_driver_free(f->driver);
	f->driver = NULL;
	dra_health_free(f->health);
	f->health = NULL;
	if (f->registration_ready)
		dra_registration_fini(&f->registration);
	f->registration_ready = false;
}
