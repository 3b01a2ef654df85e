/* SPDX-License-Identifier: Apache-2.0 */
#include "plugin/endpoint.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/log.h"
#include "base/parse.h"
#include "grpc/server.h"
#include "plugin/registrar.h"
#include "plugin/service.h"

#define REBIND_RETRY_MS 1000

struct endpoint {
	struct resource_def def;
	char kubelet_socket[SOCKET_PATH_MAX];
	char who[RESOURCE_NAME_MAX + 3]; /* "<name>: " in logs, or "" */
	struct loop_timer *rebind_timer;
	struct loop_timer *watchdog_timer;
	struct loop_async *stream_async;
	struct service *service;
	struct gs_server *server;
	struct registrar *registrar;
	struct session session;
	bool session_ready;
	struct npu_snapshot *published;   /* the view last sent, NULL before the first */
	struct host_files *published_files;
	struct observe_resource *observe;

	bool bind_failed;
	bool retry_start; /* a failed first bind is retried by the session, not the caller's to handle */
	bool registered_once;
	int64_t register_started_ms;
	uint64_t attempts;           /* Register calls named so far */
	char alias[SOCKET_PATH_MAX]; /* the link the latest call named, "" when none */
	char named[SOCKET_PATH_MAX]; /* the file name the latest call gave */
};

/* --- the name each Register call gives --------------------------------------- */

static void drop_alias(struct endpoint *e)
{
	if (e->alias[0])
		(void)unlink(e->alias); /* gone already when the kubelet restarted */
	e->alias[0] = '\0';
}

/* The kubelet (v1.37 on) keeps a device plugin's client under its socket path
 * and refuses a Register naming a path it still holds ("device plugin already
 * connected"). Worse, the refusal drops that path's live client without the
 * path: the kubelet then never lets go of it and, once another registration
 * of the resource ends, may pick it as the resource's endpoint, so every
 * allocation dials a socket that is gone (pkg/kubelet/cm/devicemanager,
 * PluginConnected and PluginDisconnected). The kubelet lets go of a path some
 * time after the stream ends, and the plugin cannot see when. So each call
 * after the endpoint's first names a fresh hard link of the served socket
 * ("ascend-npu~2.sock"), a path the kubelet cannot hold yet; the previous
 * link goes, which leaves connections made through it alone. A hard link,
 * unlike a symbolic one, is a socket file the kubelet's cleanup removes. */
static int name_attempt(void *ctx, uint64_t tag, char *endpoint, size_t size)
{
	(void)tag;
	struct endpoint *e = ctx;
	const char *base = e->def.endpoint;
	size_t stem = strlen(base) - (strlen(base) > 5 ? 5 : 0); /* without ".sock" */
	char name[RESOURCE_ENDPOINT_MAX + 24], path[SOCKET_PATH_MAX], dir[SOCKET_PATH_MAX];
	drop_alias(e);
	if (e->attempts++ == 0)
		return str_copy(endpoint, size, base);
	/* The socket's directory: its path less the file name. */
	size_t dir_len = strlen(e->def.socket_path) - strlen(base);
	if (str_printf(name, sizeof(name), "%.*s~%llu.sock", (int)stem, base, (unsigned long long)e->attempts) < 0 ||
	    str_printf(dir, sizeof(dir), "%.*s", (int)dir_len, e->def.socket_path) < 0 ||
	    path_join(path, sizeof(path), dir, name) < 0 || str_copy(endpoint, size, name) < 0)
		return str_copy(endpoint, size, base); /* no room for a link's name: as before */
	(void)unlink(path); /* a leftover of a process that had this instance name */
	if (link(e->def.socket_path, path) < 0)
		return str_copy(endpoint, size, base);
	memcpy(e->alias, path, sizeof(path));
	return 0;
}

/* --- the session's operations -------------------------------------------- */

static void op_unbind(void *ctx)
{
	struct endpoint *e = ctx;
	registrar_cancel(e->registrar);
	drop_alias(e);
	service_forget_kubelet_stream(e->service);
	/* The old server must be gone before a new one binds: stopping it
	 * unlinks the socket path. */
	gs_server_stop(e->server);
	e->server = NULL;
}

static int op_bind(void *ctx)
{
	struct endpoint *e = ctx;
	size_t n_methods;
	const struct gs_method *methods = service_methods(&n_methods);
	return gs_server_start(e->def.socket_path, methods, n_methods, e->service, &e->server);
}

static void op_register_start(void *ctx, uint64_t tag)
{
	struct endpoint *e = ctx;
	e->register_started_ms = now_ms();
	registrar_register(e->registrar, tag);
}

static void op_arm_bind_retry(void *ctx)
{
	struct endpoint *e = ctx;
	loop_timer_arm(e->rebind_timer, REBIND_RETRY_MS, 0);
}

static void op_watchdog(void *ctx, bool arm)
{
	struct endpoint *e = ctx;
	if (arm)
		loop_timer_arm(e->watchdog_timer, SESSION_WATCHDOG_MS, 0);
	else
		loop_timer_disarm(e->watchdog_timer);
}

/* One debug line per event, and the lines an operator needs at info level.
 * The directory's and the kubelet's events concern every resource alike:
 * the daemon says those once. */
static void op_transition(void *ctx, enum session_state from, enum session_event ev, enum session_state to,
			  bool handled, int error)
{
	struct endpoint *e = ctx;

	/* The kubelet watches exactly while the session does: a report the
	 * session ignores (an older stream's end) changes nothing. Before the
	 * line below, which says the state is reached. */
	if (handled && (to == SESSION_WATCHED) != (from == SESSION_WATCHED))
		observe_kubelet_stream(e->observe, to == SESSION_WATCHED);
	const struct log_fields about = { .resource = e->def.name };
	const struct log_fields step = { .resource = e->def.name,
					 .more = { LOG_STR("from", session_state_name(from)),
						   LOG_STR("on", session_event_name(ev)), LOG_STR("to", session_state_name(to)),
						   LOG_NUM("handled", handled) } };
	log_event(LOG_LEVEL_DEBUG, LOG_EVENT_PLUGIN_SESSION, &step, "%ssession: %s + %s -> %s%s", e->who,
		  session_state_name(from), session_event_name(ev), session_state_name(to), handled ? "" : " (ignored)");
	if (!handled)
		return;
	switch (ev) {
	case SESSION_EV_SOCKET_DELETED:
		log_event(LOG_LEVEL_INFO, LOG_EVENT_PLUGIN_SOCKET_REMOVED, &about, "%s was removed; serving anew",
			  e->def.socket_path);
		break;
	case SESSION_EV_STREAM_ENDED:
		log_event(LOG_LEVEL_INFO, LOG_EVENT_PLUGIN_STREAM_ENDED, &about,
			  "%sthe kubelet's ListAndWatch stream ended; serving anew and registering again", e->who);
		break;
	case SESSION_EV_WATCHDOG:
		log_event(LOG_LEVEL_WARN, LOG_EVENT_PLUGIN_NO_STREAM, &about,
			  "%sthe kubelet accepted the registration but opened no ListAndWatch stream within %dms; "
			  "registering again",
			  e->who, SESSION_WATCHDOG_MS);
		break;
	case SESSION_EV_REGISTERED: {
		long long took = (long long)(now_ms() - e->register_started_ms);
		if (!e->registered_once)
			log_event(LOG_LEVEL_INFO, LOG_EVENT_PLUGIN_REGISTERED, &about,
				  "registered %s with the kubelet (endpoint %s)", e->def.name, e->named);
		else
			log_event(LOG_LEVEL_INFO, LOG_EVENT_PLUGIN_REREGISTERED, &about,
				  "%sregistered again with the kubelet in %lldms (endpoint %s)", e->who, took, e->named);
		e->registered_once = true;
		break;
	}
	default:
		break;
	}
	/* A failed bind at the daemon's start is the caller's to report; later
	 * ones are retried, and said once. */
	if (error < 0 && (ev != SESSION_EV_START || e->retry_start)) {
		if (!e->bind_failed)
			log_event(LOG_LEVEL_ERROR, LOG_EVENT_PLUGIN_SERVE_FAILED,
				  &(struct log_fields){ .resource = e->def.name,
							.more = { LOG_STR("path", e->def.socket_path),
								  LOG_STR("error", strerror(-error)),
								  LOG_NUM("retry_ms", REBIND_RETRY_MS) } },
				  "cannot serve on %s: %s; retrying every %dms", e->def.socket_path, strerror(-error),
				  REBIND_RETRY_MS);
		e->bind_failed = true;
	} else if (session_serving(to) && e->bind_failed) {
		log_event(LOG_LEVEL_INFO, LOG_EVENT_PLUGIN_SERVING, &about, "serving on %s", e->def.socket_path);
		e->bind_failed = false;
	}
	if (to == SESSION_REGISTERING && from != SESSION_REGISTERING)
		log_event(LOG_LEVEL_DEBUG, LOG_EVENT_PLUGIN_REGISTERING, &about, "serving on %s; registering",
			  e->def.socket_path);
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
	struct endpoint *e = ctx;
	session_handle(&e->session, SESSION_EV_BIND_RETRY, NULL);
}

static void on_watchdog_timer(void *ctx)
{
	struct endpoint *e = ctx;
	session_handle(&e->session, SESSION_EV_WATCHDOG, NULL);
}

struct session_kubelet endpoint_kubelet_at(const char *kubelet_socket)
{
	struct stat st;
	if (stat(kubelet_socket, &st) < 0)
		return (struct session_kubelet){ 0 };
	return (struct session_kubelet){ .dev = (uint64_t)st.st_dev, .ino = (uint64_t)st.st_ino };
}

/* --- the registrar's and the service's reports ------------------------------ */

static int on_register_attempt(void *ctx, uint64_t tag, char *endpoint, size_t endpoint_size)
{
	struct endpoint *e = ctx;
	session_attempting(&e->session, endpoint_kubelet_at(e->kubelet_socket));
	service_register_started(e->service, tag);
	int r = name_attempt(e, tag, endpoint, endpoint_size);
	if (r == 0)
		(void)str_copy(e->named, sizeof(e->named), endpoint); /* same bound */
	return r;
}

static void on_registered(void *ctx, uint64_t tag, unsigned failures)
{
	struct endpoint *e = ctx;
	service_register_ended(e->service, tag, true);
	observe_registered(e->observe);
	if (failures && !e->registered_once)
		log_debug("%sthe kubelet accepted the registration after %u failed attempts", e->who, failures);
	session_handle(&e->session, SESSION_EV_REGISTERED, &(struct session_event_data){ .tag = tag });
}

static void on_register_accepted(void *ctx)
{
	struct endpoint *e = ctx;
	observe_registration_accepted(e->observe);
}

static void on_register_failed(void *ctx, uint64_t tag, const char *why, unsigned failures)
{
	struct endpoint *e = ctx;
	service_register_ended(e->service, tag, false);
	observe_register_failed(e->observe, why);
	/* While the kubelet restarts, a failed attempt or two is expected. */
	const struct log_fields about = { .resource = e->def.name, .more = { LOG_NUM("attempt", failures) } };
	if (failures == 1 && !e->registered_once)
		log_event(LOG_LEVEL_WARN, LOG_EVENT_PLUGIN_REGISTER_FAILED, &about,
			  "%sregistration with the kubelet failed (%s); retrying with backoff", e->who, why);
	else if (failures == 1)
		log_event(LOG_LEVEL_INFO, LOG_EVENT_PLUGIN_KUBELET_NOT_READY, &about,
			  "%sthe kubelet does not answer yet (%s); retrying with backoff", e->who, why);
	else
		log_event(LOG_LEVEL_DEBUG, LOG_EVENT_PLUGIN_REGISTER_RETRY, &about,
			  "%sregistration attempt %u failed (%s)", e->who, failures, why);
}

/* The service's reports, in the order they happened, each to the session
 * once. */
static void on_kubelet_stream(void *ctx)
{
	struct endpoint *e = ctx;
	struct service_report reports[SERVICE_REPORTS_MAX];
	bool lost;
	size_t n = service_take_reports(e->service, reports, SERVICE_REPORTS_MAX, &lost);
	for (size_t i = 0; i < n; i++) {
		bool opened = reports[i].kind == SERVICE_KUBELET_STREAM_OPENED;
		session_handle(&e->session, opened ? SESSION_EV_STREAM_OPENED : SESSION_EV_STREAM_ENDED,
			       &(struct session_event_data){ .tag = reports[i].tag, .stream = reports[i].stream });
	}
	/* Which stream is open is unknown: as if the one watched had ended. */
	if (lost)
		session_handle(&e->session, SESSION_EV_STREAM_ENDED,
			       &(struct session_event_data){ .tag = e->session.tag, .stream = e->session.stream });
}

/* --- lifecycle ------------------------------------------------------------ */

int endpoint_new(const struct endpoint_options *o, struct endpoint **ret_endpoint, char *why, size_t why_size)
{
	struct endpoint *e = calloc(1, sizeof(*e));
	int r;
	if (!e) {
		snprintf(why, why_size, "out of memory");
		return -ENOMEM;
	}
	e->def = *o->def;
	e->observe = o->observe;
	session_init(&e->session, &session_ops, e);
	e->session_ready = true;
	if (o->name_in_logs)
		(void)str_printf(e->who, sizeof(e->who), "%s: ", e->def.name); /* fits */
	if ((r = str_copy(e->kubelet_socket, sizeof(e->kubelet_socket), o->kubelet_socket)) < 0) {
		snprintf(why, why_size, "socket path too long");
		goto fail;
	}
	if ((r = loop_timer_new(o->loop, on_rebind_timer, e, &e->rebind_timer)) < 0 ||
	    (r = loop_timer_new(o->loop, on_watchdog_timer, e, &e->watchdog_timer)) < 0 ||
	    (r = loop_async_new(o->loop, on_kubelet_stream, e, &e->stream_async)) < 0) {
		snprintf(why, why_size, "cannot create timers and wakeups (timerfd, eventfd): %s", strerror(-r));
		goto fail;
	}
	struct service_options svc = {
		.allocate = o->allocate, .kubelet_stream_changed = e->stream_async, .observe = e->observe
	};
	svc.allocate.sharing = e->def.sharing;
	svc.allocate.resource = e->def.name;
	if ((r = service_new(&svc, &e->service)) < 0) {
		snprintf(why, why_size, "cannot create the service: %s", strerror(-r));
		goto fail;
	}
	const struct registrar_options reg = {
		.loop = o->loop,
		.runner = o->registrar_runner,
		.kubelet_socket = e->kubelet_socket,
		.resource_name = e->def.name,
		.preferred_allocation = true, /* served by plugin/preferred.c */
		.attempting = on_register_attempt,
		.registered = on_registered,
		.accepted = on_register_accepted,
		.failed = on_register_failed,
		.ctx = e,
	};
	if ((r = registrar_new(&reg, &e->registrar)) < 0) {
		snprintf(why, why_size, "cannot start the registrar (gRPC client thread): %s", strerror(-r));
		goto fail;
	}
	*ret_endpoint = e;
	return 0;
fail:
	endpoint_free(e);
	return r;
}

void endpoint_free(struct endpoint *e)
{
	if (!e)
		return;
	if (e->session_ready)
		session_handle(&e->session, SESSION_EV_STOP, NULL);
	observe_resource_serving(e->observe, false);
	registrar_free(e->registrar);
	gs_server_stop(e->server);
	service_free(e->service);
	npu_snapshot_unref(e->published);
	host_files_unref(e->published_files);
	loop_async_free(e->stream_async);
	loop_timer_free(e->watchdog_timer);
	loop_timer_free(e->rebind_timer);
	free(e);
}

int endpoint_start(struct endpoint *e, bool retry)
{
	e->retry_start = retry;
	int r = session_handle(&e->session, SESSION_EV_START, NULL);
	if (r == 0)
		observe_resource_serving(e->observe, true);
	return r;
}

int endpoint_publish(struct endpoint *e, struct npu_snapshot *view, struct host_files *files)
{
	bool same_view = e->published && npu_snapshot_same(e->published, view);
	if (same_view && e->published_files == files)
		return 0;
	int r = service_publish(e->service, same_view ? e->published : view, files);
	if (r < 0)
		return r;
	host_files_unref(e->published_files);
	e->published_files = host_files_ref(files);
	if (same_view)
		return 0;
	npu_snapshot_unref(e->published);
	e->published = npu_snapshot_ref(view);
	observe_devices(e->observe, view);
	return 0;
}

void endpoint_handle(struct endpoint *e, enum session_event event, const struct session_event_data *data)
{
	session_handle(&e->session, event, data);
}

void endpoint_socket_deleted(struct endpoint *e)
{
	session_handle(&e->session, SESSION_EV_SOCKET_DELETED, NULL);
}

const struct resource_def *endpoint_def(const struct endpoint *e)
{
	return &e->def;
}
