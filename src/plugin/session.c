/* SPDX-License-Identifier: Apache-2.0 */
#include "plugin/session.h"

#include <errno.h>
#include <stddef.h>

#include "base/macro.h"

static const char *const state_names[] = {
	[SESSION_UNBOUND] = "UNBOUND",         [SESSION_NO_DIR] = "NO_DIR",
	[SESSION_REGISTERING] = "REGISTERING",
	[SESSION_REGISTERED] = "REGISTERED",   [SESSION_WATCHED] = "WATCHED",
	[SESSION_STOPPED] = "STOPPED",
};

static const char *const event_names[] = {
	[SESSION_EV_START] = "start",
	[SESSION_EV_BIND_RETRY] = "bind-retry",
	[SESSION_EV_SOCKET_DELETED] = "socket-deleted",
	[SESSION_EV_KUBELET_STARTED] = "kubelet-started",
	[SESSION_EV_DIR_GONE] = "dir-gone",
	[SESSION_EV_DIR_BACK] = "dir-back",
	[SESSION_EV_REGISTERED] = "registered",
	[SESSION_EV_STREAM_OPENED] = "stream-opened",
	[SESSION_EV_STREAM_ENDED] = "stream-ended",
	[SESSION_EV_WATCHDOG] = "watchdog",
	[SESSION_EV_RELOAD] = "reload",
	[SESSION_EV_STOP] = "stop",
};

const char *session_state_name(enum session_state state)
{
	return (unsigned)state < ELEMENTSOF(state_names) ? state_names[state] : "?";
}

const char *session_event_name(enum session_event event)
{
	return (unsigned)event < ELEMENTSOF(event_names) ? event_names[event] : "?";
}

void session_init(struct session *s, const struct session_ops *ops, void *ctx)
{
	*s = (struct session){ .ops = ops, .ctx = ctx, .state = SESSION_UNBOUND };
}

void session_attempting(struct session *s, struct session_kubelet kubelet)
{
	s->kubelet = kubelet;
}

bool session_serving(enum session_state st)
{
	return st == SESSION_REGISTERING || st == SESSION_REGISTERED || st == SESSION_WATCHED;
}

static bool same_kubelet(struct session_kubelet a, struct session_kubelet b)
{
	return a.dev == b.dev && a.ino == b.ino;
}

/* Every registration gets a new tag; starting one needs a server. */
static enum session_state register_anew(struct session *s)
{
	s->stream = 0;
	s->answered = false;
	s->tag++;
	s->kubelet = (struct session_kubelet){ 0 };
	s->ops->register_start(s->ctx, s->tag);
	return SESSION_REGISTERING;
}

/* Stop / bind / register: the only way back to a working registration once
 * the socket or the kubelet changed under us. */
static enum session_state restart(struct session *s, int *ret_error)
{
	s->stream = 0;
	s->ops->unbind(s->ctx);
	int r = s->ops->bind(s->ctx);
	if (r < 0) {
		*ret_error = r;
		s->ops->arm_bind_retry(s->ctx);
		return SESSION_UNBOUND;
	}
	return register_anew(s);
}

/* The next state, or -1 to ignore the event. Bound means every state that
 * serves: REGISTERING, REGISTERED and WATCHED. The first switch holds what
 * every state does alike, the second what only matters with the directory. */
static int next_state(struct session *s, enum session_event ev, const struct session_event_data *data,
		      int *ret_error)
{
	enum session_state st = s->state;
	bool bound = session_serving(st);
	bool current = data && data->tag == s->tag;

	if (st == SESSION_STOPPED)
		return -1;

	switch (ev) {
	case SESSION_EV_START:
		return st == SESSION_UNBOUND ? (int)restart(s, ret_error) : -1;
	case SESSION_EV_BIND_RETRY:
		return st == SESSION_UNBOUND ? (int)restart(s, ret_error) : -1;
	case SESSION_EV_SOCKET_DELETED:
		return bound ? (int)restart(s, ret_error) : -1;
	case SESSION_EV_DIR_GONE:
		if (st == SESSION_NO_DIR)
			return -1;
		s->ops->unbind(s->ctx);
		return SESSION_NO_DIR;
	case SESSION_EV_DIR_BACK:
		return (int)restart(s, ret_error);
	case SESSION_EV_RELOAD:
		/* Without the directory there is nowhere to serve; its return
		 * starts over anyway. A bound endpoint keeps its registration
		 * (session.h). */
		return st == SESSION_UNBOUND ? (int)restart(s, ret_error) : -1;
	case SESSION_EV_STOP:
		s->ops->unbind(s->ctx);
		return SESSION_STOPPED;
	default:
		break;
	}
	/* Without the directory nothing else matters until it is back. */
	if (st == SESSION_NO_DIR)
		return -1;

	switch (ev) {
	case SESSION_EV_KUBELET_STARTED:
		/* The attempt under way, or the registration that stands, may
		 * already reach this very kubelet: then there is nothing to do. */
		if (bound && same_kubelet(data->kubelet, s->kubelet))
			return -1;
		if (st == SESSION_REGISTERING)
			return (int)register_anew(s);
		return (int)restart(s, ret_error);
	case SESSION_EV_REGISTERED:
		if (!current)
			return -1;
		s->answered = true;
		if (st == SESSION_REGISTERING)
			return SESSION_REGISTERED;
		/* The kubelet's stream can open before its answer arrives. */
		return st == SESSION_WATCHED ? SESSION_WATCHED : -1;
	case SESSION_EV_STREAM_OPENED:
		/* A later stream of the current registration supersedes the one
		 * watched: the kubelet keeps only its newest, and the older one's
		 * end is then no news. */
		if (!current || !bound || (st == SESSION_WATCHED && data->stream == s->stream))
			return -1;
		s->stream = data->stream;
		return SESSION_WATCHED;
	case SESSION_EV_STREAM_ENDED:
		if (st != SESSION_WATCHED || !current || data->stream != s->stream)
			return -1;
		/* Before the kubelet answered the Register call, the stream that
		 * ended may have been an older registration's, taken for this one
		 * (the kubelet dialled back while this call was already on its
		 * way, and ended that stream on receiving it). The answer, and the
		 * watchdog after it, decide; starting over now would cut the
		 * stream the kubelet is about to open. */
		if (!s->answered) {
			s->stream = 0;
			return SESSION_REGISTERING;
		}
		return (int)restart(s, ret_error);
	case SESSION_EV_WATCHDOG:
		return st == SESSION_REGISTERED ? (int)register_anew(s) : -1;
	default:
		break;
	}
	return -1;
}

int session_handle(struct session *s, enum session_event ev, const struct session_event_data *data)
{
	static const struct session_event_data none;
	enum session_state from = s->state;
	int error = 0;
	int next = next_state(s, ev, data ? data : &none, &error);

	if (next < 0) {
		s->ops->transition(s->ctx, from, ev, from, false, 0);
		return 0;
	}
	s->state = (enum session_state)next;
	/* Leaving REGISTERED disarms the watchdog; each new registration
	 * accepted arms it afresh (staying, a deferred SIGHUP, leaves it be). */
	if (s->state == SESSION_REGISTERED && from != SESSION_REGISTERED)
		s->ops->watchdog(s->ctx, true);
	else if (from == SESSION_REGISTERED && s->state != SESSION_REGISTERED)
		s->ops->watchdog(s->ctx, false);
	s->ops->transition(s->ctx, from, ev, s->state, true, error);
	return ev == SESSION_EV_START ? error : 0;
}
