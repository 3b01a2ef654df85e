/* SPDX-License-Identifier: Apache-2.0 */
#include "daemon/status_http.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/log.h"
#include "base/parse.h"
#include "base/strbuf.h"

struct status_http {
	char metrics_addr[HTTP_ADDR_MAX];
	int64_t telemetry_interval_ms;
	char kubelet_socket[SOCKET_PATH_MAX];
	struct metrics *metrics;
	struct observe *observe;
	struct holders *holders;
	struct http_server *http;
	int http_error; /* the last bind error logged, 0 after a success */

	pthread_mutex_t lock; /* the DRA driver's registration */
	/* The DRA front end's registration (status_http_dra); dra_driver empty when off. */
	char dra_driver[256];
	bool dra_notified, dra_registered;
	char dra_error[256];
};

/* --- /metrics and /healthz (the HTTP thread) ------------------------------- */

static void on_metrics(void *ctx, struct http_reply *reply)
{
	struct status_http *o = ctx;
	char *text;
	size_t len;
	holders_want(o->holders);
	int r = metrics_render(o->metrics, &text, &len);
	if (r < 0) {
		reply->status = 500;
		reply->content_type = "text/plain; charset=utf-8";
		char msg[128];
		int n = snprintf(msg, sizeof(msg), "cannot render the metrics: %s\n", strerror(-r));
		reply->body = strdup(msg);
		reply->len = reply->body && n > 0 ? (size_t)n : 0;
		return;
	}
	reply->status = 200;
	reply->content_type = METRICS_CONTENT_TYPE;
	reply->body = text;
	reply->len = len;
}

static void on_healthz(void *ctx, struct http_reply *reply)
{
	struct status_http *o = ctx;
	char body[4096];
	struct strbuf sb;
	strbuf_init(&sb, body, sizeof(body), "...\n");
	bool ok = true;

	size_t serving = observe_healthz(o->observe, o->kubelet_socket, &sb, &ok);
	pthread_mutex_lock(&o->lock);
	if (o->dra_driver[0]) {
		/* Before the first notification the kubelet's plugin watcher has
		 * not found the socket yet: a wait, as for the device plugin. */
		if (o->dra_registered) {
			strbuf_printf(&sb, "%s (DRA): registered with the kubelet\n", o->dra_driver);
		} else if (!o->dra_notified) {
			strbuf_printf(&sb, "%s (DRA): waiting for the kubelet's plugin watcher\n", o->dra_driver);
		} else {
			ok = false;
			strbuf_printf(&sb, "%s (DRA): the kubelet refused it: %s\n", o->dra_driver, o->dra_error);
		}
	}
	pthread_mutex_unlock(&o->lock);
	if (!serving)
		strbuf_printf(&sb, "no resource to serve yet\n");

	size_t len = strlen(body);
	char *out = malloc(len + 16);
	if (!out)
		return; /* the 500 the server starts with */
	int head = snprintf(out, 16, "%s\n", ok ? "ok" : "unhealthy");
	memcpy(out + head, body, len);
	reply->status = ok ? 200 : 503;
	reply->content_type = "text/plain; charset=utf-8";
	reply->body = out;
	reply->len = (size_t)head + len;
}

static const struct http_route routes[] = {
	{ "/metrics", on_metrics },
	{ "/healthz", on_healthz },
};

void status_http_serve(struct status_http *o)
{
	if (o->http || !o->metrics_addr[0])
		return;
	int r = http_server_start(o->metrics_addr, routes, sizeof(routes) / sizeof(routes[0]), o, &o->http);
	if (r == 0) {
		log_event(LOG_LEVEL_INFO, LOG_EVENT_METRICS_SERVING,
			  &(struct log_fields){ .more = { LOG_STR("addr", o->metrics_addr),
							  LOG_NUM("port", http_server_port(o->http)) } },
			  "serving /metrics and /healthz on %s (port %u)", o->metrics_addr, http_server_port(o->http));
		o->http_error = 0;
	} else if (r != o->http_error) {
		log_error("cannot serve metrics on %s: %s; retrying every %llds", o->metrics_addr, strerror(-r),
			  (long long)(o->telemetry_interval_ms / 1000));
		o->http_error = r;
	}
}

int status_http_new(const struct status_http_options *opt, struct status_http **ret)
{
	struct status_http *o = calloc(1, sizeof(*o));
	if (!o)
		return -ENOMEM;
	pthread_mutex_init(&o->lock, NULL);
	o->telemetry_interval_ms = opt->retry_ms;
	o->metrics = opt->metrics;
	o->observe = opt->observe;
	o->holders = opt->holders;
	int r;
	if ((r = str_copy(o->metrics_addr, sizeof(o->metrics_addr), opt->addr)) < 0 ||
	    (r = str_copy(o->kubelet_socket, sizeof(o->kubelet_socket), opt->kubelet_socket)) < 0) {
		status_http_free(o);
		return r;
	}
	*ret = o;
	return 0;
}

void status_http_dra(struct status_http *o, const char *driver, bool notified, bool registered, const char *error)
{
	if (!o)
		return;
	pthread_mutex_lock(&o->lock);
	snprintf(o->dra_driver, sizeof(o->dra_driver), "%s", driver);
	o->dra_notified = notified;
	o->dra_registered = registered;
	snprintf(o->dra_error, sizeof(o->dra_error), "%s", error);
	pthread_mutex_unlock(&o->lock);
}

void status_http_free(struct status_http *o)
{
	if (!o)
		return;
	http_server_stop(o->http);
	pthread_mutex_destroy(&o->lock);
	free(o);
}
