/* SPDX-License-Identifier: Apache-2.0 */
#include "plugin/registrar.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/parse.h"
#include "deviceplugin.pb-c.h"
#include "deviceplugin_api.h"
#include "grpc/client.h"
#include "grpc/cq.h"

#define REGISTER_TIMEOUT_MS 30000
#define BACKOFF_FIRST_MS 100
#define BACKOFF_MAX_MS 5000

/* One Register call: its channel, its handle, and its result once done. */
struct attempt {
	struct attempt *next;
	struct registrar *registrar;
	unsigned generation;
	struct gc_channel *channel;
	struct gc_async *async; /* under the registrar's lock; NULL once done */
	grpc_status_code status;
	char details[512];
};

struct registrar {
	struct registrar_options o;
	char kubelet_socket[SOCKET_PATH_MAX];

	struct loop_async *completed_async;
	struct loop_timer *backoff;
	int64_t backoff_ms;
	unsigned failures;
	unsigned generation; /* attempts of older generations are stale */
	uint64_t tag;        /* the caller's name for the current registration */

	pthread_mutex_t lock;
	pthread_cond_t drained;    /* pending became empty */
	struct attempt *pending;   /* in flight */
	struct attempt *completed; /* done, waiting for the loop */
};

static void attempt_free(struct attempt *a)
{
	gc_channel_close(a->channel);
	free(a);
}

/* gRPC thread: park the result and wake the loop. */
static void on_done(void *ctx, struct gc_result *result)
{
	struct attempt *a = ctx;
	struct registrar *r = a->registrar;

	a->status = result->status;
	snprintf(a->details, sizeof(a->details), "%s", result->details);
	gc_result_clear(result);

	pthread_mutex_lock(&r->lock);
	struct gc_async *async = a->async;
	a->async = NULL;
	for (struct attempt **p = &r->pending; *p; p = &(*p)->next) {
		if (*p == a) {
			*p = a->next;
			break;
		}
	}
	a->next = r->completed;
	r->completed = a;
	/* Under the lock: once registrar_free sees nothing pending, no
	 * callback touches the registrar any more. */
	loop_async_send(r->completed_async);
	if (!r->pending)
		pthread_cond_broadcast(&r->drained);
	pthread_mutex_unlock(&r->lock);

	gc_async_unref(async);
}

/* The RegisterRequest naming endpoint, packed into a new buffer. */
static int pack_request(const struct registrar *r, const char *endpoint, uint8_t **ret_buf, size_t *ret_len)
{
	V1beta1__DevicePluginOptions options;
	V1beta1__RegisterRequest req;
	static char version[] = DP_API_VERSION;

	/* The init functions, unlike the INIT macros, do not cast away const. */
	v1beta1__device_plugin_options__init(&options);
	v1beta1__register_request__init(&req);

	options.pre_start_required = 0;
	options.get_preferred_allocation_available = r->o.preferred_allocation;
	req.version = version;
	req.endpoint = (char *)(uintptr_t)endpoint;
	req.resource_name = (char *)(uintptr_t)r->o.resource_name;
	req.options = &options;

	size_t len = v1beta1__register_request__get_packed_size(&req);
	uint8_t *buf = malloc(len);
	if (!buf)
		return -ENOMEM;
	v1beta1__register_request__pack(&req, buf);
	*ret_buf = buf;
	*ret_len = len;
	return 0;
}

static int start_attempt(struct registrar *r)
{
	char endpoint[SOCKET_PATH_MAX];
	uint8_t *request = NULL;
	size_t request_len = 0;
	struct attempt *a = NULL;
	int ret = r->o.attempting(r->o.ctx, r->tag, endpoint, sizeof(endpoint));
	if (ret < 0)
		return ret;
	if ((ret = pack_request(r, endpoint, &request, &request_len)) < 0)
		return ret;
	if (!(a = calloc(1, sizeof(*a)))) {
		ret = -ENOMEM;
		goto out;
	}
	a->registrar = r;
	a->generation = r->generation;
	if ((ret = gc_channel_open(r->kubelet_socket, &a->channel)) < 0) {
		free(a);
		goto out;
	}
	/* Publish the attempt before the call can complete. */
	pthread_mutex_lock(&r->lock);
	a->next = r->pending;
	r->pending = a;
	ret = gc_unary_start(a->channel, r->o.runner, DP_METHOD_REGISTER, request, request_len, REGISTER_TIMEOUT_MS,
			     on_done, a, &a->async);
	if (ret < 0)
		r->pending = a->next;
	pthread_mutex_unlock(&r->lock);
	if (ret < 0)
		attempt_free(a);
out:
	free(request);
	return ret;
}

static void cancel_pending(struct registrar *r)
{
	r->generation++;
	loop_timer_disarm(r->backoff);
	pthread_mutex_lock(&r->lock);
	for (struct attempt *a = r->pending; a; a = a->next)
		if (a->async)
			gc_async_cancel(a->async);
	pthread_mutex_unlock(&r->lock);
}

static void fail_and_back_off(struct registrar *r, const char *why)
{
	r->failures++;
	r->o.failed(r->o.ctx, r->tag, why, r->failures);
	loop_timer_arm(r->backoff, r->backoff_ms, 0);
	r->backoff_ms = r->backoff_ms * 2 > BACKOFF_MAX_MS ? BACKOFF_MAX_MS : r->backoff_ms * 2;
}

/* An attempt that cannot even start fails like any other and is retried. */
static void attempt_or_back_off(struct registrar *r)
{
	int ret = start_attempt(r);
	if (ret < 0) {
		char why[128];
		snprintf(why, sizeof(why), "cannot start the Register call: %s", strerror(-ret));
		fail_and_back_off(r, why);
	}
}

static void on_backoff(void *ctx)
{
	attempt_or_back_off(ctx);
}


/* Loop thread: act on finished attempts of the current generation. */
static void on_completed(void *ctx)
{
	struct registrar *r = ctx;

	pthread_mutex_lock(&r->lock);
	struct attempt *done = r->completed;
	r->completed = NULL;
	pthread_mutex_unlock(&r->lock);

	while (done) {
		struct attempt *a = done;
		done = a->next;
		if (a->status == GRPC_STATUS_OK && r->o.accepted)
			r->o.accepted(r->o.ctx);
		if (a->generation == r->generation) {
			if (a->status == GRPC_STATUS_OK) {
				unsigned failures = r->failures;
				r->failures = 0;
				r->backoff_ms = BACKOFF_FIRST_MS;
				r->o.registered(r->o.ctx, r->tag, failures);
			} else {
				char why[600];
				snprintf(why, sizeof(why), "status %d: %s", a->status, a->details);
				fail_and_back_off(r, why);
			}
		}
		attempt_free(a);
	}
}

void registrar_register(struct registrar *r, uint64_t tag)
{
	cancel_pending(r);
	r->tag = tag;
	r->backoff_ms = BACKOFF_FIRST_MS;
	attempt_or_back_off(r);
}

void registrar_cancel(struct registrar *r)
{
	if (r)
		cancel_pending(r);
}

int registrar_new(const struct registrar_options *options, struct registrar **ret_registrar)
{
	struct registrar *r = calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	r->o = *options;
	r->backoff_ms = BACKOFF_FIRST_MS;
	pthread_mutex_init(&r->lock, NULL);
	pthread_cond_init(&r->drained, NULL);

	int ret = str_copy(r->kubelet_socket, sizeof(r->kubelet_socket), options->kubelet_socket);
	if (ret < 0)
		goto fail;
	ret = loop_async_new(options->loop, on_completed, r, &r->completed_async);
	if (ret < 0)
		goto fail;
	ret = loop_timer_new(options->loop, on_backoff, r, &r->backoff);
	if (ret < 0)
		goto fail;
	*ret_registrar = r;
	return 0;

fail:
	registrar_free(r);
	return ret;
}

void registrar_free(struct registrar *r)
{
	if (!r)
		return;
	if (r->backoff)
		cancel_pending(r);
	/* gRPC completes every cancelled call (promptly: nothing waits on the
	 * network), which moves it to the completed list; the shared queue
	 * serves other registrars meanwhile. */
	pthread_mutex_lock(&r->lock);
	while (r->pending)
		pthread_cond_wait(&r->drained, &r->lock);
	pthread_mutex_unlock(&r->lock);
	struct attempt *a = r->completed;
	while (a) {
		struct attempt *next = a->next;
		attempt_free(a);
		a = next;
	}
	loop_timer_free(r->backoff);
	loop_async_free(r->completed_async);
	pthread_cond_destroy(&r->drained);
	pthread_mutex_destroy(&r->lock);
	free(r);
}
