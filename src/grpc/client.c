/* SPDX-License-Identifier: Apache-2.0 */
#include "grpc/client.h"

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <grpc/grpc.h>
#include <grpc/grpc_posix.h>
#include <grpc/grpc_security.h>
#include <grpc/slice.h>
#include <grpc/support/time.h>

#include "base/macro.h"
#include "base/parse.h"
#include "grpc/wire.h"

/* Reconnect quickly: a kubelet that restarts is back within milliseconds, and
 * gRPC's default first backoff of one second would dominate re-registration. */
#define GC_RECONNECT_BACKOFF_MS 100
#define GC_MAX_RECONNECT_BACKOFF_MS 1000
/* gRPC takes GRPC_ARG_MIN_RECONNECT_BACKOFF_MS as the least time a connection
 * attempt gets to see the server's SETTINGS frame, not as a backoff. At
 * 100 ms a loaded machine failed calls with "connection attempt timed out
 * before receiving SETTINGS frame"; a refused or missing socket still fails
 * at once, so a generous bound costs nothing on the fast path. */
#define GC_CONNECT_TIMEOUT_MS 5000

struct gc_channel {
	grpc_channel *channel;
	char path[SOCKET_PATH_MAX];
};

void gc_result_clear(struct gc_result *result)
{
	if (!result)
		return;
	free(result->body);
	result->body = NULL;
	result->len = 0;
}

int gc_channel_open(const char *socket_path, struct gc_channel **ret_channel)
{
	char target[128];
	int r = str_printf(target, sizeof(target), "unix:%s", socket_path);
	if (r < 0 || strlen(socket_path) >= SOCKET_PATH_MAX)
		return -ENAMETOOLONG;

	struct gc_channel *ch = calloc(1, sizeof(*ch));
	if (!ch)
		return -ENOMEM;
	memcpy(ch->path, socket_path, strlen(socket_path) + 1);

	/* grpc_arg wants mutable strings; these arrays give it some. */
	static char authority_key[] = GRPC_ARG_DEFAULT_AUTHORITY, authority[] = "localhost";
	static char initial_key[] = GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS;
	static char min_key[] = GRPC_ARG_MIN_RECONNECT_BACKOFF_MS;
	static char max_key[] = GRPC_ARG_MAX_RECONNECT_BACKOFF_MS;
	static char pool_key[] = GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL;
	static char retries_key[] = GRPC_ARG_ENABLE_RETRIES;

	grpc_init();
	grpc_arg args[] = {
		{ .type = GRPC_ARG_STRING, .key = authority_key, .value.string = authority },
		{ .type = GRPC_ARG_INTEGER, .key = initial_key, .value.integer = GC_RECONNECT_BACKOFF_MS },
		{ .type = GRPC_ARG_INTEGER, .key = min_key, .value.integer = GC_CONNECT_TIMEOUT_MS },
		{ .type = GRPC_ARG_INTEGER, .key = max_key, .value.integer = GC_MAX_RECONNECT_BACKOFF_MS },
		/* A private subchannel pool keeps a failed connection's backoff from
		 * leaking into the next channel to the same socket. */
		{ .type = GRPC_ARG_INTEGER, .key = pool_key, .value.integer = 1 },
		{ .type = GRPC_ARG_INTEGER, .key = retries_key, .value.integer = 0 },
	};
	grpc_channel_args channel_args = { .num_args = ELEMENTSOF(args), .args = args };
	grpc_channel_credentials *creds = grpc_insecure_credentials_create();
	ch->channel = grpc_channel_create(target, creds, &channel_args);
	grpc_channel_credentials_release(creds);

	*ret_channel = ch;
	return 0;
}

void gc_channel_close(struct gc_channel *ch)
{
	if (!ch)
		return;
	grpc_channel_destroy(ch->channel);
	free(ch);
	grpc_shutdown();
}

static gpr_timespec deadline_after(int64_t timeout_ms)
{
	if (timeout_ms < 0)
		return gpr_inf_future(GPR_CLOCK_MONOTONIC);
	return gpr_time_add(gpr_now(GPR_CLOCK_MONOTONIC), gpr_time_from_millis(timeout_ms, GPR_TIMESPAN));
}

/* What one client call owns, unary or streaming. */
struct call_io {
	grpc_call *call;
	grpc_byte_buffer *send_buf;
	grpc_byte_buffer *recv_buf;
	grpc_metadata_array initial_md;
	grpc_metadata_array trailing_md;
	grpc_status_code status;
	grpc_slice details;
	bool has_status;
};

static int call_io_open(struct call_io *io, grpc_channel *channel, grpc_completion_queue *cq, const char *method,
			gpr_timespec deadline, const uint8_t *req, size_t len)
{
	memset(io, 0, sizeof(*io));
	grpc_slice path = grpc_slice_from_copied_string(method);
	io->call = grpc_channel_create_call(channel, NULL, GRPC_PROPAGATE_DEFAULTS, cq, path, NULL, deadline, NULL);
	grpc_slice_unref(path);
	if (!io->call)
		return -EIO;
	io->send_buf = wire_buffer_from(req, len);
	grpc_metadata_array_init(&io->initial_md);
	grpc_metadata_array_init(&io->trailing_md);
	return 0;
}

/* The opening of every call: metadata, the one request, half-close, and the
 * server's metadata. Fills ops[0..3] and returns 4. */
static size_t call_io_request_ops(struct call_io *io, grpc_op *ops)
{
	memset(ops, 0, 4 * sizeof(*ops));
	ops[0].op = GRPC_OP_SEND_INITIAL_METADATA;
	ops[1].op = GRPC_OP_SEND_MESSAGE;
	ops[1].data.send_message.send_message = io->send_buf;
	ops[2].op = GRPC_OP_SEND_CLOSE_FROM_CLIENT;
	ops[3].op = GRPC_OP_RECV_INITIAL_METADATA;
	ops[3].data.recv_initial_metadata.recv_initial_metadata = &io->initial_md;
	return 4;
}

static void call_io_recv_op(struct call_io *io, grpc_op *op)
{
	memset(op, 0, sizeof(*op));
	op->op = GRPC_OP_RECV_MESSAGE;
	op->data.recv_message.recv_message = &io->recv_buf;
}

static void call_io_status_op(struct call_io *io, grpc_op *op)
{
	memset(op, 0, sizeof(*op));
	op->op = GRPC_OP_RECV_STATUS_ON_CLIENT;
	op->data.recv_status_on_client.trailing_metadata = &io->trailing_md;
	op->data.recv_status_on_client.status = &io->status;
	op->data.recv_status_on_client.status_details = &io->details;
}

/* Frees what the call holds except the grpc_call itself. */
static void call_io_free_buffers(struct call_io *io)
{
	if (io->recv_buf)
		grpc_byte_buffer_destroy(io->recv_buf);
	io->recv_buf = NULL;
	grpc_byte_buffer_destroy(io->send_buf);
	io->send_buf = NULL;
	if (io->has_status)
		grpc_slice_unref(io->details);
	io->has_status = false;
	grpc_metadata_array_destroy(&io->initial_md);
	grpc_metadata_array_destroy(&io->trailing_md);
}

/* Starts a whole unary call as one batch. */
static int unary_begin(struct call_io *io, grpc_channel *channel, grpc_completion_queue *cq, const char *method,
		       const uint8_t *req, size_t len, int64_t timeout_ms, void *tag)
{
	int r = call_io_open(io, channel, cq, method, deadline_after(timeout_ms), req, len);
	if (r < 0)
		return r;

	grpc_op ops[6];
	size_t n = call_io_request_ops(io, ops);
	call_io_recv_op(io, &ops[n++]);
	call_io_status_op(io, &ops[n++]);
	if (cq_start_batch(io->call, ops, n, tag) != GRPC_CALL_OK) {
		call_io_free_buffers(io);
		grpc_call_unref(io->call);
		return -EIO;
	}
	return 0;
}

static void copy_details(char *dst, size_t size, grpc_slice details)
{
	size_t n = GRPC_SLICE_LENGTH(details);
	if (n >= size)
		n = size - 1;
	memcpy(dst, GRPC_SLICE_START_PTR(details), n);
	dst[n] = '\0';
}

/* Turns a completed unary call into a result and frees what the call held
 * but the grpc_call itself. */
static void unary_finish(struct call_io *io, struct gc_result *result)
{
	io->has_status = true;
	memset(result, 0, sizeof(*result));
	result->status = io->status;
	copy_details(result->details, sizeof(result->details), io->details);
	if (io->status == GRPC_STATUS_OK && io->recv_buf &&
	    wire_buffer_read(io->recv_buf, &result->body, &result->len) < 0) {
		result->status = GRPC_STATUS_RESOURCE_EXHAUSTED;
		snprintf(result->details, sizeof(result->details), "out of memory reading the response");
	}
	call_io_free_buffers(io);
}

static void drain_and_destroy(grpc_completion_queue *cq)
{
	grpc_completion_queue_shutdown(cq);
	while (grpc_completion_queue_next(cq, gpr_inf_future(GPR_CLOCK_MONOTONIC), NULL).type != GRPC_QUEUE_SHUTDOWN)
		;
	grpc_completion_queue_destroy(cq);
}

int gc_unary(struct gc_channel *ch, const char *method, const uint8_t *req, size_t len, int64_t timeout_ms,
	     struct gc_result *ret_result)
{
	grpc_completion_queue *cq = grpc_completion_queue_create_for_next(NULL);
	struct call_io u;
	int tag;

	int r = unary_begin(&u, ch->channel, cq, method, req, len, timeout_ms, &tag);
	if (r < 0) {
		drain_and_destroy(cq);
		return r;
	}
	/* The call's own deadline bounds this wait. */
	grpc_event ev;
	do
		ev = grpc_completion_queue_next(cq, gpr_inf_future(GPR_CLOCK_MONOTONIC), NULL);
	while (ev.type != GRPC_OP_COMPLETE || ev.tag != &tag);

	unary_finish(&u, ret_result);
	grpc_call_unref(u.call);
	drain_and_destroy(cq);
	return 0;
}

/* --- asynchronous unary ------------------------------------------------- */

struct gc_async {
	struct cq_tag tag;
	grpc_channel *direct; /* this call's own connection */
	struct call_io u;
	gc_async_done_fn done;
	void *ctx;
	pthread_mutex_t lock;
	unsigned refs;
	bool completed;
};

void gc_async_unref(struct gc_async *a)
{
	if (!a)
		return;
	pthread_mutex_lock(&a->lock);
	unsigned left = --a->refs;
	pthread_mutex_unlock(&a->lock);
	if (left > 0)
		return;
	grpc_call_unref(a->u.call);
	grpc_channel_destroy(a->direct);
	grpc_shutdown();
	pthread_mutex_destroy(&a->lock);
	free(a);
}

static void on_async_done(struct cq_tag *tag, bool ok)
{
	(void)ok;
	struct gc_async *a = (struct gc_async *)tag;
	struct gc_result result;

	unary_finish(&a->u, &result);
	pthread_mutex_lock(&a->lock);
	a->completed = true;
	pthread_mutex_unlock(&a->lock);
	a->done(a->ctx, &result);
	gc_async_unref(a);
}

/* A channel over one connection made now, or a lame channel that fails
 * every call with UNAVAILABLE when nothing accepts. No subchannel is
 * involved: with a subchannel per call (a private pool, so that one failed
 * connection's backoff does not delay the next channel), gRPC 1.51
 * sometimes never closes the socket of one of several subchannels to the
 * same address once the server has gone (github.com/grpc/grpc/issues/38871):
 * the plugin leaked a socket every few dozen kubelet restarts. With the
 * shared pool instead, a new channel inherits the last one's failure and
 * fails at once. A connection of our own has neither problem. */
static grpc_channel *direct_channel(const char *path)
{
	char target[SOCKET_PATH_MAX + 8], why[SOCKET_PATH_MAX + 80];
	snprintf(target, sizeof(target), "unix:%s", path);

	struct sockaddr_un addr = { .sun_family = AF_UNIX };
	memcpy(addr.sun_path, path, strlen(path) + 1);
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd >= 0 && connect(fd, (const struct sockaddr *)&addr, sizeof(addr)) == 0) {
		static char authority_key[] = GRPC_ARG_DEFAULT_AUTHORITY, authority[] = "localhost";
		static char retries_key[] = GRPC_ARG_ENABLE_RETRIES;
		grpc_arg args[] = {
			{ .type = GRPC_ARG_STRING, .key = authority_key, .value.string = authority },
			{ .type = GRPC_ARG_INTEGER, .key = retries_key, .value.integer = 0 },
		};
		grpc_channel_args channel_args = { .num_args = ELEMENTSOF(args), .args = args };
		grpc_channel_credentials *creds = grpc_insecure_credentials_create();
		grpc_channel *channel = grpc_channel_create_from_fd(target, fd, creds, &channel_args);
		grpc_channel_credentials_release(creds);
		return channel;
	}
	/* EAGAIN: a full backlog; the caller retries like for a refusal. */
	snprintf(why, sizeof(why), "cannot connect to %s: %s", target, strerror(errno));
	if (fd >= 0)
		close(fd);
	return grpc_lame_client_channel_create(target, GRPC_STATUS_UNAVAILABLE, why);
}

int gc_unary_start(struct gc_channel *ch, struct cq_runner *runner, const char *method, const uint8_t *req,
		   size_t len, int64_t timeout_ms, gc_async_done_fn done, void *ctx, struct gc_async **ret_async)
{
	struct gc_async *a = calloc(1, sizeof(*a));
	if (!a)
		return -ENOMEM;
	a->tag.done = on_async_done;
	a->done = done;
	a->ctx = ctx;
	a->refs = 2; /* the operation's and the caller's */
	pthread_mutex_init(&a->lock, NULL);

	grpc_init();
	a->direct = direct_channel(ch->path);
	int r = unary_begin(&a->u, a->direct, cq_runner_queue(runner), method, req, len, timeout_ms, &a->tag);
	if (r < 0) {
		grpc_channel_destroy(a->direct);
		grpc_shutdown();
		pthread_mutex_destroy(&a->lock);
		free(a);
		return r;
	}
	*ret_async = a;
	return 0;
}

void gc_async_cancel(struct gc_async *a)
{
	pthread_mutex_lock(&a->lock);
	if (!a->completed)
		grpc_call_cancel(a->u.call, NULL);
	pthread_mutex_unlock(&a->lock);
}

/* --- server streams ----------------------------------------------------- */

struct gc_stream {
	grpc_completion_queue *cq;
	struct call_io io;
	char details_text[512];

	/* Tags are the addresses of these flags' owners. */
	int start_tag, status_tag, recv_tag;
	bool start_pending, status_pending, recv_pending;
	bool ended; /* the status has arrived */
	bool drained; /* the last receive returned no message */
};

int gc_stream_open(struct gc_channel *ch, const char *method, const uint8_t *req, size_t len,
		   struct gc_stream **ret_stream)
{
	struct gc_stream *s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;

	s->cq = grpc_completion_queue_create_for_next(NULL);
	int r = call_io_open(&s->io, ch->channel, s->cq, method, gpr_inf_future(GPR_CLOCK_MONOTONIC), req, len);
	if (r < 0) {
		drain_and_destroy(s->cq);
		free(s);
		return r;
	}

	grpc_op ops[4];
	size_t n = call_io_request_ops(&s->io, ops);
	s->start_pending = cq_start_batch(s->io.call, ops, n, &s->start_tag) == GRPC_CALL_OK;
	grpc_op status;
	call_io_status_op(&s->io, &status);
	s->status_pending = cq_start_batch(s->io.call, &status, 1, &s->status_tag) == GRPC_CALL_OK;

	if (!s->start_pending || !s->status_pending) {
		gc_stream_close(s);
		return -EIO;
	}
	*ret_stream = s;
	return 0;
}

/* Waits for one completion until the deadline; returns false on timeout. */
static bool stream_wait(struct gc_stream *s, gpr_timespec deadline)
{
	grpc_event ev = grpc_completion_queue_next(s->cq, deadline, NULL);
	if (ev.type != GRPC_OP_COMPLETE)
		return false;
	if (ev.tag == &s->start_tag) {
		s->start_pending = false;
	} else if (ev.tag == &s->status_tag) {
		s->status_pending = false;
		s->ended = true;
		s->io.has_status = true;
		copy_details(s->details_text, sizeof(s->details_text), s->io.details);
	} else if (ev.tag == &s->recv_tag) {
		s->recv_pending = false;
		if (!s->io.recv_buf)
			s->drained = true;
	}
	return true;
}

int gc_stream_next(struct gc_stream *s, int64_t timeout_ms, uint8_t **ret_body, size_t *ret_len)
{
	gpr_timespec deadline = deadline_after(timeout_ms);

	if (!s->recv_pending && !s->drained) {
		grpc_op op;
		call_io_recv_op(&s->io, &op);
		if (cq_start_batch(s->io.call, &op, 1, &s->recv_tag) != GRPC_CALL_OK)
			s->drained = true;
		else
			s->recv_pending = true;
	}

	for (;;) {
		if (!s->recv_pending && s->io.recv_buf) {
			grpc_byte_buffer *buf = s->io.recv_buf;
			s->io.recv_buf = NULL;
			int r = wire_buffer_read(buf, ret_body, ret_len);
			grpc_byte_buffer_destroy(buf);
			return r;
		}
		/* No more messages: report the end once the status is in. */
		if (s->drained && s->ended)
			return -EPIPE;
		if (!stream_wait(s, deadline))
			return -ETIMEDOUT;
	}
}

void gc_stream_status(struct gc_stream *s, grpc_status_code *ret_status, const char **ret_details)
{
	if (ret_status)
		*ret_status = s->ended ? s->io.status : GRPC_STATUS_UNKNOWN;
	if (ret_details)
		*ret_details = s->details_text;
}

void gc_stream_cancel(struct gc_stream *s)
{
	grpc_call_cancel(s->io.call, NULL);
}

void gc_stream_close(struct gc_stream *s)
{
	if (!s)
		return;
	grpc_call_cancel(s->io.call, NULL);
	while (s->start_pending || s->status_pending || s->recv_pending)
		stream_wait(s, gpr_inf_future(GPR_CLOCK_MONOTONIC));

	call_io_free_buffers(&s->io);
	grpc_call_unref(s->io.call);
	drain_and_destroy(s->cq);
	free(s);
}
