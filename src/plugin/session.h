/* SPDX-License-Identifier: Apache-2.0 */
/* The registration lifecycle as one explicit state machine: when the plugin
 * binds its socket, when it registers with the kubelet, when it starts over,
 * and which registration the kubelet's ListAndWatch stream belongs to. It runs
 * on the daemon's loop thread and only decides: the daemon feeds it events
 * (inotify, signals, the registrar's results, the service's stream reports,
 * timers) and carries out its decisions through session_ops. It has no
 * sockets or timers of its own, so every (state, event) pair is unit-tested.
 *
 *   UNBOUND --start/retry/dir back--> bind ok: REGISTERING, else UNBOUND (retry timer)
 *   REGISTERING --Register accepted--> REGISTERED (watchdog armed)
 *   REGISTERING, REGISTERED --kubelet's stream opened--> WATCHED
 *   WATCHED --a newer stream of the same registration--> WATCHED (that one)
 *   WATCHED --its stream ended before the Register answer--> REGISTERING
 *   REGISTERED --watchdog: no stream in time--> REGISTERING (register again)
 *   bound --socket deleted, new kubelet, stream ended--> restart:
 *       stop the server fully, bind anew, register (the kubelet never
 *       reconnects by itself, and gRPC unlinks the path of a stopped server)
 *   bound --SIGHUP--> unchanged: a registration that stands or is under
 *       way already announces this endpoint, and the kubelet's stream
 *       carries what the reload changed. A second registration on the same
 *       socket would overlap the first: the kubelet (v1.36 on) refuses it
 *       while the first is connected, and until it lands the node would
 *       have no devices (kubelets before make the old stream end first);
 *   UNBOUND --SIGHUP--> bind now (as the retry timer would)
 *   any --device-plugins directory removed--> NO_DIR until it is back
 *       (a bind can only fail meanwhile, so retries wait for it too)
 *   any --SIGTERM--> STOPPED
 *
 * Every registration gets a new tag. The service reports each of the
 * kubelet's streams opening and ending, in order, with the registration it
 * followed and its own number for the stream. The session decides what they
 * mean: the newest stream of the current registration is the one it
 * watches; only that very stream ending, once the kubelet answered the
 * Register call, starts over. A report of an older
 * registration (a Register call superseded while the kubelet was dialling
 * back) or of another stream of the same one changes nothing. */
#pragma once

#include <stdbool.h>
#include <stdint.h>

/* How long the kubelet may take to open its stream after accepting us. A
 * kubelet opens it within milliseconds; the margin keeps a slow node from
 * registering twice, since overlapping registrations are where the kubelet's
 * stream is hardest to tell from an older one. */
#define SESSION_WATCHDOG_MS 3000

enum session_state {
	SESSION_UNBOUND,     /* not serving: before start, or after a failed bind (retry timer armed) */
	SESSION_NO_DIR,      /* not serving: the device-plugins directory is gone */
	SESSION_REGISTERING, /* serving; a Register call is in flight or backing off */
	SESSION_REGISTERED,  /* the kubelet accepted us; its stream is awaited (watchdog armed) */
	SESSION_WATCHED,     /* the kubelet's ListAndWatch stream is open */
	SESSION_STOPPED,     /* shutting down: every event is ignored */
	SESSION_STATE_COUNT
};

enum session_event {
	SESSION_EV_START,           /* the daemon starts serving */
	SESSION_EV_BIND_RETRY,      /* the retry timer after a failed bind */
	SESSION_EV_SOCKET_DELETED,  /* our socket file was removed by someone else */
	SESSION_EV_KUBELET_STARTED, /* kubelet.sock was created; data.kubelet says which */
	SESSION_EV_DIR_GONE,        /* the device-plugins directory was removed */
	SESSION_EV_DIR_BACK,        /* it exists again (so our socket is gone) */
	SESSION_EV_REGISTERED,      /* a Register call was accepted; data.tag */
	SESSION_EV_STREAM_OPENED,   /* a kubelet's stream opened; data.tag, data.stream */
	SESSION_EV_STREAM_ENDED,    /* it ended or was cancelled; data.tag, data.stream */
	SESSION_EV_WATCHDOG,        /* SESSION_WATCHDOG_MS after SESSION_REGISTERED, still no stream */
	SESSION_EV_RELOAD,          /* SIGHUP */
	SESSION_EV_STOP,            /* SIGTERM or SIGINT */
	SESSION_EVENT_COUNT
};

/* Which kubelet.sock: a kubelet that restarts creates a new file. All zero
 * when there is none. */
struct session_kubelet {
	uint64_t dev;
	uint64_t ino;
};

struct session_event_data {
	uint64_t tag;                  /* registration events and stream reports */
	uint64_t stream;               /* stream reports: which stream */
	struct session_kubelet kubelet; /* SESSION_EV_KUBELET_STARTED */
};

/* What the owner does for the session; all called on the loop thread. */
struct session_ops {
	/* Stop serving: cancel registering, forget the kubelet's stream, stop
	 * the server and wait until it is gone. Must accept "not serving". */
	void (*unbind)(void *ctx);
	/* Serve on the socket. Returns 0 or a negative errno. */
	int (*bind)(void *ctx);
	/* Start registering under tag (the registrar retries by itself). */
	void (*register_start)(void *ctx, uint64_t tag);
	/* Try bind again later. */
	void (*arm_bind_retry)(void *ctx);
	/* Arm (or disarm) the SESSION_WATCHDOG_MS timer. */
	void (*watchdog)(void *ctx, bool arm);
	/* Told after every event: handled false when it was ignored (stale or
	 * meaningless in that state); error is a failed bind's errno or 0. */
	void (*transition)(void *ctx, enum session_state from, enum session_event event, enum session_state to,
			   bool handled, int error);
};

struct session {
	const struct session_ops *ops;
	void *ctx;
	enum session_state state;
	uint64_t tag;                  /* the current registration */
	uint64_t stream;               /* the kubelet's stream it watches (WATCHED), else 0 */
	bool answered;                 /* the kubelet accepted the current registration */
	struct session_kubelet kubelet; /* the kubelet.sock its latest attempt dialled */
};

void session_init(struct session *session, const struct session_ops *ops, void *ctx);

/* Feeds one event. Returns 0, or the negative errno of a failed bind on
 * SESSION_EV_START (the daemon cannot start); later bind failures are retried. */
int session_handle(struct session *session, enum session_event event, const struct session_event_data *data);

/* The registrar is about to dial kubelet (one attempt of the current
 * registration): a kubelet.sock created with this identity needs no new
 * registration, the attempt already reaches it. */
void session_attempting(struct session *session, struct session_kubelet kubelet);

/* Whether the plugin serves its socket in this state (REGISTERING,
 * REGISTERED, WATCHED). */
bool session_serving(enum session_state state);

const char *session_state_name(enum session_state state);
const char *session_event_name(enum session_event event);
