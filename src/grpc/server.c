/* SPDX-License-Identifier: Apache-2.0 */
#include "grpc/server.h"

#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <grpc/byte_buffer.h>
#include <grpc/byte_buffer_reader.h>
#include <grpc/grpc.h>
#include <grpc/grpc_posix.h>
#include <grpc/grpc_security.h>
#include <grpc/slice.h>
#include <grpc/support/time.h>

#include "base/macro.h"
#include "base/parse.h"
#include "base/wait.h"
#include "grpc/cq.h"
#include "grpc/wire.h"

/* Bounds what one client connection can open at once. */
#define GS_MAX_CONCURRENT_STREAMS 64

/* gRPC's memory quota for all connections: read buffers shrink and, past
 * it, gRPC closes connections rather than grow. Far above what the kubelet's
 * few calls need. */
#define GS_MEMORY_QUOTA_BYTES (16 * 1024 * 1024)

/* How long the accept thread waits for quiet before trimming the heap. */
#define GS_TRIM_AFTER_MS 500

_Static_assert(sizeof(((struct sockaddr_un *)0)->sun_path) == SOCKET_PATH_MAX, "sun_path size");

/* A connection the server has handed to gRPC, known by its socket inode: the
 * fd number alone could be reused once gRPC closes it. */
struct conn {
	int fd;
	dev_t dev;
	ino_t ino;
	pid_t peer; /* 0 for a process outside our pid namespace */
};

struct gs_server {
	grpc_server *server;
	grpc_resource_quota *quota;

	/* The listening socket is ours, not gRPC's: gRPC 1.51 accepts every
	 * connection as fast as it comes and keeps each one's transport (some
	 * 14 KiB) until the peer goes, with no bound on their number. */
	char path[SOCKET_PATH_MAX];
	dev_t path_dev; /* the socket file we bound, to unlink only our own */
	ino_t path_ino;
	int listen_fd;
	int wake_fd; /* eventfd that stops the accept thread */
	pthread_t accept_thread;
	bool accepting;
	struct conn conns[GS_MAX_CONNECTIONS]; /* accept thread only */
	unsigned n_conns;
	unsigned long long rejected; /* connections closed at once: all slots taken */

	struct cq_runner *runner;
	const struct gs_method *methods;
	size_t n_methods;
	void *ctx;

	pthread_mutex_t lock;
	pthread_cond_t idle;
	unsigned live;       /* posted requests + calls not yet released */
	unsigned unary_live; /* unary calls not yet released (also in live) */
	bool stopping;
	bool shutdown_done;
	struct cq_tag shutdown_tag;
};

/* A generic request posted to the server: the next call on any method. */
struct request {
	struct cq_tag tag;
	struct gs_server *server;
	grpc_call *call;
	grpc_call_details details;
	grpc_metadata_array metadata;
};

enum call_kind { CALL_UNKNOWN, CALL_UNARY, CALL_STREAM };

/* The handle of a deferred call, inside its struct gs_stream. */
struct gs_call {
	struct gs_stream *stream;
};

/* One accepted call; for streaming methods this is the gs_stream. Every batch
 * in flight holds a reference, and so does whoever keeps the stream. */
struct gs_stream {
	struct gs_server *server;
	grpc_call *call;
	const struct gs_method *method;
	enum call_kind kind;

	pthread_mutex_t lock;
	unsigned refs;

	struct cq_tag recv_tag;   /* the request message */
	struct cq_tag final_tag;  /* status (+ message) of unary and unknown calls */
	struct cq_tag meta_tag;   /* initial metadata of a stream */
	struct cq_tag send_tag;   /* one stream message */
	struct cq_tag status_tag; /* a stream's closing status */
	struct cq_tag close_tag;  /* RECV_CLOSE_ON_SERVER of a stream or a deferred call */

	/* A deferred call: its handle, what its method returned, the time the
	 * client gave it; close_posted when RECV_CLOSE_ON_SERVER is a batch
	 * of its own (close_tag), which then tells of a cancellation. */
	struct gs_call handle;
	void *data;
	int64_t timeout_ms;
	bool close_posted;

	grpc_byte_buffer *recv_buf;
	grpc_byte_buffer *send_buf;
	grpc_byte_buffer *final_buf;
	grpc_slice status_details;
	bool has_status_details;
	int cancelled;

	/* Stream state, under lock. */
	bool opened;  /* stream_open accepted it: stream_closed is owed */
	bool closed;  /* the client side is gone */
	bool sending;
	uint8_t *pending;
	size_t pending_len;
	bool has_pending;
	bool finishing; /* a status is queued or sent */
	bool status_sent;
	grpc_status_code finish_status;
	char finish_details[512];
};

static void server_release(struct gs_server *server, bool unary)
{
	pthread_mutex_lock(&server->lock);
	server->live--;
	if (unary)
		server->unary_live--;
	pthread_cond_broadcast(&server->idle);
	pthread_mutex_unlock(&server->lock);
}

void gs_stream_ref(struct gs_stream *s)
{
	pthread_mutex_lock(&s->lock);
	s->refs++;
	pthread_mutex_unlock(&s->lock);
}

void gs_stream_unref(struct gs_stream *s)
{
	pthread_mutex_lock(&s->lock);
	unsigned left = --s->refs;
	pthread_mutex_unlock(&s->lock);
	if (left > 0)
		return;

	struct gs_server *server = s->server;
	bool unary = s->kind == CALL_UNARY;
	if (s->recv_buf)
		grpc_byte_buffer_destroy(s->recv_buf);
	if (s->send_buf)
		grpc_byte_buffer_destroy(s->send_buf);
	if (s->final_buf)
		grpc_byte_buffer_destroy(s->final_buf);
	if (s->has_status_details)
		grpc_slice_unref(s->status_details);
	free(s->pending);
	grpc_call_unref(s->call);
	pthread_mutex_destroy(&s->lock);
	free(s);
	server_release(server, unary);
}

void gs_reply_error(struct gs_reply *reply, grpc_status_code status, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(reply->details, sizeof(reply->details), fmt, ap);
	va_end(ap);
	reply->status = status;
}

void gs_reply_message(struct gs_reply *reply, const ProtobufCMessage *msg)
{
	size_t len = protobuf_c_message_get_packed_size(msg);
	if (len == 0)
		return;
	reply->body = malloc(len);
	if (!reply->body) {
		gs_reply_error(reply, GRPC_STATUS_RESOURCE_EXHAUSTED, "out of memory");
		return;
	}
	protobuf_c_message_pack(msg, reply->body);
	reply->len = len;
}

static void set_status_details(struct gs_stream *s, const char *details)
{
	if (s->has_status_details)
		grpc_slice_unref(s->status_details);
	s->status_details = grpc_slice_from_copied_string(details);
	s->has_status_details = true;
}

/* Starts a batch holding a reference for it; drops the reference if gRPC
 * refuses the batch (which only happens on our own misuse). */
static bool start_batch(struct gs_stream *s, const grpc_op *ops, size_t n, struct cq_tag *tag)
{
	gs_stream_ref(s);
	if (cq_start_batch(s->call, ops, n, tag) != GRPC_CALL_OK) {
		gs_stream_unref(s);
		return false;
	}
	return true;
}

static void on_batch_released(struct cq_tag *tag, bool ok)
{
	(void)ok;
	struct gs_stream *s = container_of(tag, struct gs_stream, final_tag);
	gs_stream_unref(s);
}

/* Ends a unary or unknown call: initial metadata, the message if any, the
 * status, and RECV_CLOSE_ON_SERVER (unless a batch of its own waits for it)
 * so the call is fully done when it completes. Any thread. */
static void send_final(struct gs_stream *s, grpc_status_code status, const char *details, const uint8_t *body,
		       size_t len, bool with_message)
{
	grpc_op ops[4];
	size_t n = 0;

	memset(ops, 0, sizeof(ops));
	ops[n++].op = GRPC_OP_SEND_INITIAL_METADATA;
	if (with_message) {
		s->final_buf = wire_buffer_from(body, len);
		ops[n].op = GRPC_OP_SEND_MESSAGE;
		ops[n++].data.send_message.send_message = s->final_buf;
	}
	set_status_details(s, details);
	ops[n].op = GRPC_OP_SEND_STATUS_FROM_SERVER;
	ops[n].data.send_status_from_server.status = status;
	ops[n++].data.send_status_from_server.status_details = &s->status_details;
	if (!s->close_posted) {
		ops[n].op = GRPC_OP_RECV_CLOSE_ON_SERVER;
		ops[n++].data.recv_close_on_server.cancelled = &s->cancelled;
	}

	s->final_tag.done = on_batch_released;
	start_batch(s, ops, n, &s->final_tag);
}

/* --- streams ------------------------------------------------------------ */

static void stream_start_send_locked(struct gs_stream *s, uint8_t *body, size_t len);
static void stream_start_status_locked(struct gs_stream *s);

static void on_stream_sent(struct cq_tag *tag, bool ok)
{
	struct gs_stream *s = container_of(tag, struct gs_stream, send_tag);

	pthread_mutex_lock(&s->lock);
	s->sending = false;
	grpc_byte_buffer_destroy(s->send_buf);
	s->send_buf = NULL;
	if (!ok)
		s->closed = true;
	if (s->has_pending && !s->closed) {
		uint8_t *body = s->pending;
		size_t len = s->pending_len;
		s->pending = NULL;
		s->has_pending = false;
		stream_start_send_locked(s, body, len);
		free(body);
	} else if (s->finishing && !s->status_sent && !s->closed) {
		stream_start_status_locked(s);
	}
	pthread_mutex_unlock(&s->lock);
	gs_stream_unref(s);
}

static void stream_start_send_locked(struct gs_stream *s, uint8_t *body, size_t len)
{
	grpc_op op;
	memset(&op, 0, sizeof(op));
	s->send_buf = wire_buffer_from(body, len);
	op.op = GRPC_OP_SEND_MESSAGE;
	op.data.send_message.send_message = s->send_buf;
	s->send_tag.done = on_stream_sent;
	s->sending = true;
	/* The lock is held, so take the batch's reference by hand. */
	s->refs++;
	if (cq_start_batch(s->call, &op, 1, &s->send_tag) != GRPC_CALL_OK) {
		s->refs--;
		s->sending = false;
		grpc_byte_buffer_destroy(s->send_buf);
		s->send_buf = NULL;
	}
}

static void on_stream_status_sent(struct cq_tag *tag, bool ok)
{
	(void)ok;
	struct gs_stream *s = container_of(tag, struct gs_stream, status_tag);
	gs_stream_unref(s);
}

static void stream_start_status_locked(struct gs_stream *s)
{
	grpc_op op;
	memset(&op, 0, sizeof(op));
	set_status_details(s, s->finish_details);
	op.op = GRPC_OP_SEND_STATUS_FROM_SERVER;
	op.data.send_status_from_server.status = s->finish_status;
	op.data.send_status_from_server.status_details = &s->status_details;
	s->status_tag.done = on_stream_status_sent;
	s->status_sent = true;
	s->refs++;
	if (cq_start_batch(s->call, &op, 1, &s->status_tag) != GRPC_CALL_OK)
		s->refs--;
}

int gs_stream_send(struct gs_stream *s, const uint8_t *body, size_t len)
{
	int r = 0;

	pthread_mutex_lock(&s->lock);
	if (s->closed || s->finishing) {
		r = -EPIPE;
		goto out;
	}
	if (s->sending) {
		/* The latest state replaces whatever was still waiting. */
		uint8_t *copy = malloc(len ? len : 1);
		if (!copy) {
			r = -ENOMEM;
			goto out;
		}
		memcpy(copy, body, len);
		free(s->pending);
		s->pending = copy;
		s->pending_len = len;
		s->has_pending = true;
		goto out;
	}
	stream_start_send_locked(s, (uint8_t *)(uintptr_t)body, len);
out:
	pthread_mutex_unlock(&s->lock);
	return r;
}

void gs_stream_finish(struct gs_stream *s, grpc_status_code status, const char *details)
{
	pthread_mutex_lock(&s->lock);
	if (!s->closed && !s->finishing) {
		s->finishing = true;
		s->finish_status = status;
		snprintf(s->finish_details, sizeof(s->finish_details), "%s", details ? details : "");
		if (!s->sending)
			stream_start_status_locked(s);
	}
	pthread_mutex_unlock(&s->lock);
}

static void on_stream_closed(struct cq_tag *tag, bool ok)
{
	(void)ok;
	struct gs_stream *s = container_of(tag, struct gs_stream, close_tag);

	pthread_mutex_lock(&s->lock);
	s->closed = true;
	free(s->pending);
	s->pending = NULL;
	s->has_pending = false;
	bool owed = s->opened;
	pthread_mutex_unlock(&s->lock);

	if (owed && s->method->stream_closed)
		s->method->stream_closed(s->server->ctx, s);
	gs_stream_unref(s);
}

static void on_meta_sent(struct cq_tag *tag, bool ok)
{
	(void)ok;
	struct gs_stream *s = container_of(tag, struct gs_stream, meta_tag);
	gs_stream_unref(s);
}

/* --- dispatch ----------------------------------------------------------- */

/* A deferred call is over for the client: answered, or cancelled first. */
static void on_deferred_closed(struct cq_tag *tag, bool ok)
{
	(void)ok;
	struct gs_stream *s = container_of(tag, struct gs_stream, close_tag);
	s->method->call_closed(s->server->ctx, s->data, s->cancelled != 0);
	gs_stream_unref(s);
}

/* Watches for the end of the call, which tells of a cancellation at once,
 * and hands the call to its method, with a reference that gs_call_reply
 * drops. Completion-queue thread: the close cannot be handled before the
 * method has returned the call's data. */
static void start_deferred(struct gs_stream *s, const uint8_t *req, size_t len)
{
	grpc_op close_op;
	memset(&close_op, 0, sizeof(close_op));
	close_op.op = GRPC_OP_RECV_CLOSE_ON_SERVER;
	close_op.data.recv_close_on_server.cancelled = &s->cancelled;
	s->close_tag.done = on_deferred_closed;
	s->close_posted = start_batch(s, &close_op, 1, &s->close_tag);
	gs_stream_ref(s);
	s->handle.stream = s;
	s->data = s->method->deferred(s->server->ctx, &s->handle, req, len);
	/* Refused, which only our own misuse can make it: closed is owed
	 * anyway, and the answer's batch waits for the close. */
	if (!s->close_posted)
		s->method->call_closed(s->server->ctx, s->data, false);
}

int64_t gs_call_timeout_ms(const struct gs_call *call)
{
	return call->stream->timeout_ms;
}

void gs_call_reply(struct gs_call *call, struct gs_reply *reply)
{
	struct gs_stream *s = call->stream;
	if (reply->status == GRPC_STATUS_OK)
		send_final(s, GRPC_STATUS_OK, "", reply->body, reply->len, true);
	else
		send_final(s, reply->status, reply->details, NULL, 0, false);
	free(reply->body);
	reply->body = NULL;
	gs_stream_unref(s);
}

/* The time left to a call's deadline, in ms (INT64_MAX: none). */
static int64_t time_left_ms(gpr_timespec deadline)
{
	gpr_timespec d = gpr_convert_clock_type(deadline, GPR_CLOCK_MONOTONIC);
	if (gpr_time_cmp(d, gpr_inf_future(GPR_CLOCK_MONOTONIC)) >= 0)
		return INT64_MAX;
	gpr_timespec left = gpr_time_sub(d, gpr_now(GPR_CLOCK_MONOTONIC));
	return left.tv_sec < 0 ? 0 : (int64_t)left.tv_sec * 1000 + left.tv_nsec / 1000000;
}

static void on_request_message(struct cq_tag *tag, bool ok)
{
	struct gs_stream *s = container_of(tag, struct gs_stream, recv_tag);
	struct gs_server *server = s->server;
	struct gs_reply reply = { .status = GRPC_STATUS_OK };
	uint8_t *req = NULL;
	size_t len = 0;

	if (!ok) {
		/* The call died before its message arrived (cancelled, shutdown). */
		send_final(s, GRPC_STATUS_CANCELLED, "call ended before its request arrived", NULL, 0, false);
		goto aborted;
	}
	if (!s->recv_buf) {
		send_final(s, GRPC_STATUS_INVALID_ARGUMENT, "missing request message", NULL, 0, false);
		goto aborted;
	}
	if (wire_buffer_read(s->recv_buf, &req, &len) < 0) {
		send_final(s, GRPC_STATUS_RESOURCE_EXHAUSTED, "out of memory reading the request", NULL, 0, false);
		goto aborted;
	}

	if (s->method->deferred) {
		start_deferred(s, req, len);
		goto out;
	}
	if (s->kind == CALL_UNARY) {
		s->method->unary(server->ctx, req, len, &reply);
		if (reply.status == GRPC_STATUS_OK)
			send_final(s, GRPC_STATUS_OK, "", reply.body, reply.len, true);
		else
			send_final(s, reply.status, reply.details, NULL, 0, false);
		free(reply.body);
		goto out;
	}

	/* A stream: metadata out now, watch for the client leaving, then hand it over. */
	grpc_op meta;
	memset(&meta, 0, sizeof(meta));
	meta.op = GRPC_OP_SEND_INITIAL_METADATA;
	s->meta_tag.done = on_meta_sent;
	start_batch(s, &meta, 1, &s->meta_tag);

	grpc_op close_op;
	memset(&close_op, 0, sizeof(close_op));
	close_op.op = GRPC_OP_RECV_CLOSE_ON_SERVER;
	close_op.data.recv_close_on_server.cancelled = &s->cancelled;
	s->close_tag.done = on_stream_closed;
	start_batch(s, &close_op, 1, &s->close_tag);

	grpc_status_code st = s->method->stream_open(server->ctx, s, req, len, &reply);
	pthread_mutex_lock(&s->lock);
	if (st == GRPC_STATUS_OK) {
		s->opened = true;
	} else if (!s->closed && !s->finishing) {
		s->finishing = true;
		s->finish_status = st;
		snprintf(s->finish_details, sizeof(s->finish_details), "%s", reply.details);
		if (!s->sending)
			stream_start_status_locked(s);
	}
	pthread_mutex_unlock(&s->lock);
	free(reply.body);
	goto out;

aborted:
	if (s->kind == CALL_STREAM && s->method->stream_aborted)
		s->method->stream_aborted(server->ctx);
out:
	free(req);
	gs_stream_unref(s); /* the receive batch's reference */
}

static const struct gs_method *find_method(struct gs_server *server, grpc_slice path)
{
	size_t len = GRPC_SLICE_LENGTH(path);
	const void *p = GRPC_SLICE_START_PTR(path);

	for (size_t i = 0; i < server->n_methods; i++) {
		const char *name = server->methods[i].path;
		if (strlen(name) == len && memcmp(name, p, len) == 0)
			return &server->methods[i];
	}
	return NULL;
}

static int post_request(struct gs_server *server);

static void accept_call(struct gs_server *server, grpc_call *call, const struct gs_method *method,
			gpr_timespec deadline)
{
	struct gs_stream *s = calloc(1, sizeof(*s));
	if (!s) {
		grpc_call_cancel_with_status(call, GRPC_STATUS_RESOURCE_EXHAUSTED, "out of memory", NULL);
		grpc_call_unref(call);
		return;
	}
	pthread_mutex_lock(&server->lock);
	server->live++;
	pthread_mutex_unlock(&server->lock);

	s->server = server;
	s->call = call;
	s->method = method;
	s->refs = 1;
	pthread_mutex_init(&s->lock, NULL);

	if (!method) {
		s->kind = CALL_UNKNOWN;
		send_final(s, GRPC_STATUS_UNIMPLEMENTED, "unknown method", NULL, 0, false);
		gs_stream_unref(s);
		return;
	}
	s->kind = method->unary || method->deferred ? CALL_UNARY : CALL_STREAM;
	s->timeout_ms = time_left_ms(deadline);
	if (s->kind == CALL_UNARY) {
		pthread_mutex_lock(&server->lock);
		server->unary_live++;
		pthread_mutex_unlock(&server->lock);
	}

	grpc_op op;
	memset(&op, 0, sizeof(op));
	op.op = GRPC_OP_RECV_MESSAGE;
	op.data.recv_message.recv_message = &s->recv_buf;
	s->recv_tag.done = on_request_message;
	/* The initial reference becomes the receive batch's. */
	if (cq_start_batch(call, &op, 1, &s->recv_tag) != GRPC_CALL_OK)
		gs_stream_unref(s);
}

static void on_request(struct cq_tag *tag, bool ok)
{
	struct request *req = (struct request *)tag;
	struct gs_server *server = req->server;

	if (ok) {
		/* Keep a request posted before handling this call, so no call ever waits. */
		post_request(server);
		accept_call(server, req->call, find_method(server, req->details.method), req->details.deadline);
	}
	grpc_call_details_destroy(&req->details);
	grpc_metadata_array_destroy(&req->metadata);
	free(req);
	server_release(server, false);
}

static int post_request(struct gs_server *server)
{
	pthread_mutex_lock(&server->lock);
	bool stopping = server->stopping;
	if (!stopping)
		server->live++;
	pthread_mutex_unlock(&server->lock);
	if (stopping)
		return -ESHUTDOWN;

	struct request *req = calloc(1, sizeof(*req));
	if (!req) {
		server_release(server, false);
		return -ENOMEM;
	}
	req->tag.done = on_request;
	req->server = server;
	grpc_call_details_init(&req->details);
	grpc_metadata_array_init(&req->metadata);
	grpc_completion_queue *cq = cq_runner_queue(server->runner);
	cq_handover(&req->tag);
	if (grpc_server_request_call(server->server, &req->call, &req->details, &req->metadata, cq, cq, &req->tag) !=
	    GRPC_CALL_OK) {
		grpc_call_details_destroy(&req->details);
		grpc_metadata_array_destroy(&req->metadata);
		free(req);
		server_release(server, false);
		return -EIO;
	}
	return 0;
}

static void on_shutdown(struct cq_tag *tag, bool ok)
{
	(void)ok;
	struct gs_server *server = container_of(tag, struct gs_server, shutdown_tag);
	pthread_mutex_lock(&server->lock);
	server->shutdown_done = true;
	pthread_cond_broadcast(&server->idle);
	pthread_mutex_unlock(&server->lock);
}

/* --- the listening socket ------------------------------------------------ */

/* Drops the connections gRPC has closed since the last look. */
static void sweep_conns(struct gs_server *server)
{
	unsigned kept = 0;
	for (unsigned i = 0; i < server->n_conns; i++) {
		struct conn *c = &server->conns[i];
		struct stat st;
		if (fstat(c->fd, &st) == 0 && st.st_dev == c->dev && st.st_ino == c->ino)
			server->conns[kept++] = *c;
	}
	server->n_conns = kept;
}

/* A free slot, and the peer below its share. */
static bool room_for(const struct gs_server *server, pid_t peer)
{
	unsigned from_peer = 0;
	for (unsigned i = 0; i < server->n_conns; i++)
		from_peer += server->conns[i].peer == peer;
	return server->n_conns < GS_MAX_CONNECTIONS && from_peer < GS_MAX_CONNECTIONS_PER_PEER;
}

static void accept_one(struct gs_server *server)
{
	int fd = accept4(server->listen_fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
	if (fd < 0)
		return; /* EAGAIN, or a peer that left before we got to it */

	struct stat st;
	struct ucred cred;
	socklen_t cred_len = sizeof(cred);
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &cred_len) < 0)
		cred.pid = 0;
	if (!room_for(server, cred.pid))
		sweep_conns(server);
	if (!room_for(server, cred.pid) || fstat(fd, &st) < 0) {
		/* Refusing at once costs nothing; a kubelet dials again. */
		close(fd);
		server->rejected++;
		return;
	}
	server->conns[server->n_conns++] =
		(struct conn){ .fd = fd, .dev = st.st_dev, .ino = st.st_ino, .peer = cred.pid };
	grpc_server_credentials *creds = grpc_insecure_server_credentials_create();
	grpc_server_add_channel_from_fd(server->server, fd, creds);
	grpc_server_credentials_release(creds);
}

/* Hands the heap's free memory back to the system. Under AddressSanitizer
 * or ThreadSanitizer the sanitizer's allocator owns the heap and glibc's
 * arenas were never set up; malloc_trim would then initialise them from
 * whichever thread comes first, and two servers' threads doing so at once
 * crashed a TSan run. There is nothing of glibc's to trim there anyway. */
static void trim_heap(void)
{
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
	return;
#else
	malloc_trim(0);
#endif
}

static void *accept_thread(void *arg)
{
	struct gs_server *server = arg;
	bool trim_owed = false;

	for (;;) {
		struct pollfd p[2] = {
			{ .fd = server->listen_fd, .events = POLLIN },
			{ .fd = server->wake_fd, .events = POLLIN },
		};
		/* Quiet for GS_TRIM_AFTER_MS after accepting: hand the memory
		 * of the connections gone since back to the system. glibc keeps
		 * freed memory of gRPC's threads in their arenas otherwise, so
		 * a burst of connections would raise RSS for good. */
		int n = poll(p, 2, trim_owed ? GS_TRIM_AFTER_MS : -1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 || p[1].revents)
			break;
		if (n == 0) {
			sweep_conns(server);
			trim_heap();
			trim_owed = false;
			continue;
		}
		if (p[0].revents & POLLIN) {
			accept_one(server);
			trim_owed = true;
		}
	}
	return NULL;
}

/* An existing socket file at path: refuses to take it over from a server that
 * still accepts, and removes it when nothing listens there any more. */
static int claim_path(const struct sockaddr_un *addr)
{
	struct stat st;
	if (lstat(addr->sun_path, &st) < 0)
		return errno == ENOENT ? 0 : -errno;
	if (!S_ISSOCK(st.st_mode))
		return -EEXIST;

	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return -errno;
	int r = connect(fd, (const struct sockaddr *)addr, sizeof(*addr)) == 0 ? 0 : -errno;
	close(fd);
	/* Connected, or a backlog full of connections: a live server. */
	if (r == 0 || r == -EAGAIN || r == -EINPROGRESS)
		return -EADDRINUSE;
	/* ENOENT: someone removed it meanwhile (a restarting kubelet does). */
	if (r == -ENOENT)
		return 0;
	if (r != -ECONNREFUSED)
		return r;
	if (unlink(addr->sun_path) < 0 && errno != ENOENT)
		return -errno;
	return 0;
}

static void unlink_own_path(struct gs_server *server)
{
	struct stat st;
	if (lstat(server->path, &st) == 0 && st.st_dev == server->path_dev && st.st_ino == server->path_ino)
		unlink(server->path);
}

static int listen_on(struct gs_server *server, const char *socket_path)
{
	struct sockaddr_un addr = { .sun_family = AF_UNIX };
	if (strlen(socket_path) >= sizeof(addr.sun_path))
		return -ENAMETOOLONG;
	memcpy(addr.sun_path, socket_path, strlen(socket_path) + 1);
	memcpy(server->path, socket_path, strlen(socket_path) + 1);

	int r = claim_path(&addr);
	if (r < 0)
		return r;
	server->listen_fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (server->listen_fd < 0)
		return -errno;
	if (bind(server->listen_fd, (const struct sockaddr *)&addr, sizeof(addr)) < 0)
		return -errno;
	/* The file's mode came from the umask; nobody can connect before
	 * listen(), so setting it now leaves no window.
	 * A restarting kubelet deletes every socket in its directory: if it
	 * deleted this one right after bind(), nobody can reach it; serve on
	 * anyway, as gRPC did, and let the caller notice the deletion. */
	struct stat st;
	if (lstat(socket_path, &st) == 0) {
		server->path_dev = st.st_dev;
		server->path_ino = st.st_ino;
		if (chmod(socket_path, GS_SOCKET_MODE) < 0 && errno != ENOENT) {
			r = -errno;
			goto fail_unlink;
		}
	} else if (errno != ENOENT) {
		r = -errno;
		goto fail_unlink;
	}
	if (listen(server->listen_fd, SOMAXCONN) < 0) {
		r = -errno;
		goto fail_unlink;
	}
	return 0;

fail_unlink:
	unlink_own_path(server);
	return r;
}

int gs_server_start(const char *socket_path, const struct gs_method *methods, size_t n_methods, void *ctx,
		    struct gs_server **ret_server)
{
	if (strlen(socket_path) >= SOCKET_PATH_MAX)
		return -ENAMETOOLONG;

	struct gs_server *server = calloc(1, sizeof(*server));
	if (!server)
		return -ENOMEM;
	server->methods = methods;
	server->n_methods = n_methods;
	server->ctx = ctx;
	server->listen_fd = -1;
	server->wake_fd = -1;
	pthread_mutex_init(&server->lock, NULL);
	cond_init_monotonic(&server->idle);
	server->shutdown_tag.done = on_shutdown;

	int r = listen_on(server, socket_path);
	if (r < 0)
		goto fail_listen;
	server->wake_fd = eventfd(0, EFD_CLOEXEC);
	if (server->wake_fd < 0) {
		r = -errno;
		goto fail_listen;
	}

	r = cq_runner_start(&server->runner);
	if (r < 0)
		goto fail_listen;

	server->quota = grpc_resource_quota_create("gs_server");
	grpc_resource_quota_resize(server->quota, GS_MEMORY_QUOTA_BYTES);

	static char receive_key[] = GRPC_ARG_MAX_RECEIVE_MESSAGE_LENGTH;
	static char streams_key[] = GRPC_ARG_MAX_CONCURRENT_STREAMS;
	static char idle_key[] = GRPC_ARG_MAX_CONNECTION_IDLE_MS;
	static char quota_key[] = GRPC_ARG_RESOURCE_QUOTA;
	grpc_arg args[] = {
		{ .type = GRPC_ARG_INTEGER, .key = receive_key, .value.integer = GS_MAX_RECEIVE_BYTES },
		{ .type = GRPC_ARG_INTEGER, .key = streams_key, .value.integer = GS_MAX_CONCURRENT_STREAMS },
		{ .type = GRPC_ARG_INTEGER, .key = idle_key, .value.integer = GS_MAX_IDLE_MS },
		{ .type = GRPC_ARG_POINTER,
		  .key = quota_key,
		  .value.pointer = { .p = server->quota, .vtable = grpc_resource_quota_arg_vtable() } },
	};
	grpc_channel_args channel_args = { .num_args = ELEMENTSOF(args), .args = args };
	server->server = grpc_server_create(&channel_args, NULL);
	grpc_server_register_completion_queue(server->server, cq_runner_queue(server->runner), NULL);
	grpc_server_start(server->server);

	r = post_request(server);
	if (r < 0)
		goto fail_stop;
	r = -pthread_create(&server->accept_thread, NULL, accept_thread, server);
	if (r < 0)
		goto fail_stop;
	server->accepting = true;

	*ret_server = server;
	return 0;

fail_stop:
	gs_server_stop(server);
	return r;

fail_listen:
	/* Whatever failed after bind() leaves no socket file behind that a
	 * kubelet could find and dial. */
	unlink_own_path(server);
	if (server->listen_fd >= 0)
		close(server->listen_fd);
	if (server->wake_fd >= 0)
		close(server->wake_fd);
	pthread_cond_destroy(&server->idle);
	pthread_mutex_destroy(&server->lock);
	free(server);
	return r;
}

void gs_server_stop(struct gs_server *server)
{
	if (!server)
		return;

	/* No new connection from here on. */
	if (server->accepting) {
		uint64_t one = 1;
		if (write(server->wake_fd, &one, sizeof(one)) != sizeof(one))
			abort(); /* an eventfd write of 1 cannot fail */
		pthread_join(server->accept_thread, NULL);
	}
	close(server->listen_fd);
	close(server->wake_fd);
	unlink_own_path(server);

	pthread_mutex_lock(&server->lock);
	server->stopping = true;
	pthread_mutex_unlock(&server->lock);

	cq_handover(&server->shutdown_tag);
	grpc_server_shutdown_and_notify(server->server, cq_runner_queue(server->runner), &server->shutdown_tag);
	/* Unary calls under way (an Allocate for a pod being admitted) may
	 * finish, for a bounded time; streams never end by themselves and are
	 * cancelled with whatever is left. */
	struct timespec until = deadline_after_ms(GS_DRAIN_MS);
	pthread_mutex_lock(&server->lock);
	while (server->unary_live > 0 && pthread_cond_timedwait(&server->idle, &server->lock, &until) != ETIMEDOUT) {
	}
	pthread_mutex_unlock(&server->lock);
	grpc_server_cancel_all_calls(server->server);

	pthread_mutex_lock(&server->lock);
	while (!server->shutdown_done || server->live > 0)
		pthread_cond_wait(&server->idle, &server->lock);
	pthread_mutex_unlock(&server->lock);

	grpc_server_destroy(server->server);
	grpc_resource_quota_unref(server->quota);
	cq_runner_stop(server->runner);
	pthread_cond_destroy(&server->idle);
	pthread_mutex_destroy(&server->lock);
	free(server);
	/* What the connections held goes back to the system too. */
	trim_heap();
}
