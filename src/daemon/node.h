/* SPDX-License-Identifier: Apache-2.0 */
/* The node session: the facts every resource shares, each with one owner
 * (whether the daemon serves, whether the kubelet's device-plugin directory
 * is there, which kubelet.sock the node has), and what every resource's
 * session (plugin/session.h) must hear when one of them changes. Like those
 * sessions it only decides, on the loop thread: the daemon feeds it events
 * and passes its decisions to every endpoint, so each (state, event) pair is
 * unit-tested.
 *
 *   STARTING --serve--> SERVING (the endpoints were started one by one)
 *   SERVING --dir gone--> NO_DIR, every resource told    (they stop serving)
 *   SERVING, NO_DIR --dir back--> SERVING, every resource told (they serve anew)
 *   SERVING --kubelet started, SIGHUP--> every resource told
 *   NO_DIR --kubelet started, SIGHUP--> nobody told: there is nowhere to
 *       serve, and the directory's return starts every resource over
 *   any --stop--> STOPPED, every resource told; then nothing more
 *
 * A resource built later (a reload, a vNPU template that appeared) joins in
 * the node's state: it serves at once, or waits for the directory with the
 * others instead of retrying a bind that cannot work. */
#pragma once

#include <stdbool.h>

#include "plugin/session.h"

enum node_state {
	NODE_STARTING, /* the endpoints are being started */
	NODE_SERVING,
	NODE_NO_DIR,   /* the device-plugins directory is gone */
	NODE_STOPPED,
	NODE_STATE_COUNT
};

enum node_event {
	NODE_EV_SERVE,           /* every endpoint started */
	NODE_EV_DIR_GONE,        /* the device-plugins directory was removed */
	NODE_EV_DIR_BACK,        /* it is there again (so our sockets are gone) */
	NODE_EV_KUBELET_STARTED, /* kubelet.sock was created; which one is given */
	NODE_EV_RELOAD,          /* SIGHUP */
	NODE_EV_STOP,            /* SIGTERM or SIGINT */
	NODE_EVENT_COUNT
};

struct node_session {
	enum node_state state;
	struct session_kubelet kubelet; /* the kubelet.sock last created, zero before one was seen */
};

void node_init(struct node_session *node);

/* Feeds one event (kubelet: which kubelet.sock, for
 * NODE_EV_KUBELET_STARTED). Returns true with what every resource's session
 * must hear in *ret_event and *ret_data, or false when none needs to. */
bool node_handle(struct node_session *node, enum node_event event, struct session_kubelet kubelet,
		 enum session_event *ret_event, struct session_event_data *ret_data);

/* Whether the endpoints were started (whatever the directory does since). */
static inline bool node_started(const struct node_session *node)
{
	return node->state == NODE_SERVING || node->state == NODE_NO_DIR;
}

/* How a resource built now joins: true with SESSION_EV_START while the node
 * serves, SESSION_EV_DIR_GONE while the directory is missing; false before
 * the node serves (it is started with the others) and after it stopped. */
bool node_join(const struct node_session *node, enum session_event *ret_event);

const char *node_state_name(enum node_state state);
const char *node_event_name(enum node_event event);
