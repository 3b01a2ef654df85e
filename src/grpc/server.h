/* SPDX-License-Identifier: Apache-2.0 */
/* A gRPC server on a unix socket, built on the gRPC core C API. The server
 * owns its listening socket and hands each accepted connection to gRPC, so
 * that it can bound how many connections are live (gRPC 1.51 has no such
 * limit) and report why binding failed. It serves a
 * table of unary and server-streaming methods keyed by their full path, and
 * answers UNIMPLEMENTED at once for any other path (a generic request is always
 * posted, so no call waits for a deadline the kubelet never sets). Handlers run
 * on the server's completion-queue thread: they must not block. A unary method
 * whose answer has to wait (on another server, say) is a deferred one: its
 * handler hands the call to a thread of its own and answers from there, and
 * hears when the client cancels the call or its deadline passes. Messages are
 * opaque bytes here; (de)serialisation belongs to the caller. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <grpc/status.h>
#include <protobuf-c/protobuf-c.h>

/* Largest request accepted; larger ones get RESOURCE_EXHAUSTED from gRPC itself. */
#define GS_MAX_RECEIVE_BYTES (4 * 1024 * 1024)

/* Connections served at once. One more is accepted and closed at once, so a
 * flood of connections costs the plugin at most this many gRPC transports
 * (about 14 KiB each, idle) and never fills the listen backlog. The kubelet
 * needs one connection, a probe one more. */
#define GS_MAX_CONNECTIONS 32

/* Connections one peer process may hold (SO_PEERCRED's pid; every process
 * outside the plugin's pid namespace counts as one). The rest of the slots
 * stay free for others: a process that fills its share cannot keep the
 * liveness probe, run in the plugin's container, or a kubelet that is
 * another process, from connecting. */
#define GS_MAX_CONNECTIONS_PER_PEER 24

/* A connection with no call for this long is closed (GOAWAY): it frees the
 * slot of a client that connects and does nothing, so silent connections
 * hold the slots for seconds only. The kubelet's connection always has its
 * ListAndWatch stream open; a probe's makes its call at once. */
#define GS_MAX_IDLE_MS 5000

/* Mode of the socket file, whatever the umask: only root talks to it. */
#define GS_SOCKET_MODE 0600

struct gs_server;
struct gs_stream;
struct gs_call; /* a deferred unary call */

/* What a unary handler answers. On OK, body (malloc'd, may be NULL for an
 * empty message) is taken over by the server; on error, details say why. */
struct gs_reply {
	grpc_status_code status;
	char details[512];
	uint8_t *body;
	size_t len;
};

struct gs_method {
	const char *path; /* e.g. "/v1beta1.DevicePlugin/Allocate" */

	/* Unary method: fill *reply (status starts as OK, body NULL). */
	void (*unary)(void *ctx, const uint8_t *req, size_t len, struct gs_reply *reply);

	/* Server-streaming method: called once the request has arrived. Return
	 * GRPC_STATUS_OK to keep the stream open (gs_stream_send may be called
	 * from here and later from any thread), or an error status, with details
	 * in reply->details, to end it at once. */
	grpc_status_code (*stream_open)(void *ctx, struct gs_stream *stream, const uint8_t *req, size_t len,
					struct gs_reply *reply);

	/* The stream ended: client gone, call cancelled, or the server stopping.
	 * Called exactly once for each stream whose stream_open returned OK; the
	 * stream must not be used after this returns unless a reference was taken. */
	void (*stream_closed)(void *ctx, struct gs_stream *stream);

	/* Optional: a call to this streaming method ended before stream_open
	 * could run (cancelled before its request was read, or no request). */
	void (*stream_aborted)(void *ctx);
	/* Deferred unary method: called once the request has arrived. It
	 * answers exactly once, with gs_call_reply, from any thread, now or
	 * later; what it returns is the call's data for call_closed. */
	void *(*deferred)(void *ctx, struct gs_call *call, const uint8_t *req, size_t len);

	/* For a deferred method: called exactly once for each call handed to
	 * deferred, once the call is over for the client: answered, or
	 * cancelled before that (by the client, by its deadline passing, or by
	 * the server stopping), when cancelled is true and the answer is still
	 * owed. gs_server_stop waits for every answer: a cancelled call must
	 * be answered soon. */
	void (*call_closed)(void *ctx, void *data, bool cancelled);
};

/* Binds unix:<socket_path> with mode GS_SOCKET_MODE, starts the
 * completion-queue and accept threads and begins serving. The method table
 * and ctx must outlive the server. A socket file already at the path is
 * replaced only when nothing accepts on it any more (a stale socket). Returns
 * 0 or a negative errno saying why, among them:
 *   -ENAMETOOLONG  the path does not fit sun_path (SOCKET_PATH_MAX);
 *   -EADDRINUSE    a live server accepts on the path (it is left alone);
 *   -EEXIST        something other than a socket is at the path;
 *   -ENOENT        the directory does not exist;
 *   -ENOTDIR       a component of the directory is not a directory;
 *   -EACCES        the directory is not writable (or not searchable);
 *   -EROFS         the directory is on a read-only file system;
 *   -ENOMEM, -EMFILE and the like for a lack of resources. */
int gs_server_start(const char *socket_path, const struct gs_method *methods, size_t n_methods, void *ctx,
		    struct gs_server **ret_server);

/* How long gs_server_stop lets unary calls under way finish. */
#define GS_DRAIN_MS 500

/* Stops accepting, removes the socket file if it is still the one this
 * server bound (not one bound since by someone else), lets the unary calls
 * under way finish for up to GS_DRAIN_MS, cancels every call left (streams,
 * deferred calls still waiting), waits until all have ended (stream_closed
 * included, every deferred call answered), stops the threads and frees the
 * server. Accepts NULL. */
void gs_server_stop(struct gs_server *server);

/* How long the client gave a deferred call, from its arrival: the time
 * left to its deadline then, in ms (INT64_MAX: no deadline). */
int64_t gs_call_timeout_ms(const struct gs_call *call);

/* Answers a deferred call with reply (its body is taken over) and lets go
 * of the call, whether or not the client is still there. Any thread. */
void gs_call_reply(struct gs_call *call, struct gs_reply *reply);

/* Queues a message on the stream (the bytes are copied). At most one send is
 * in flight per stream; a message queued while one is in flight replaces any
 * message still waiting, so a slow client gets the latest state, not a
 * backlog. Thread-safe. Returns 0, -EPIPE once the stream has ended, -ENOMEM. */
int gs_stream_send(struct gs_stream *stream, const uint8_t *body, size_t len);

/* Ends the stream from the server side with a status. Thread-safe. */
void gs_stream_finish(struct gs_stream *stream, grpc_status_code status, const char *details);

void gs_stream_ref(struct gs_stream *stream);
void gs_stream_unref(struct gs_stream *stream);

/* Packs msg as the reply's body (nothing for an empty message); out of
 * memory makes the reply RESOURCE_EXHAUSTED. */
void gs_reply_message(struct gs_reply *reply, const ProtobufCMessage *msg);

/* Formats reply->details and sets the status. */
void gs_reply_error(struct gs_reply *reply, grpc_status_code status, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
