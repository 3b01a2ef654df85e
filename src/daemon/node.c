/* SPDX-License-Identifier: Apache-2.0 */
#include "daemon/node.h"

#include "base/macro.h"

static const char *const state_names[] = {
	[NODE_STARTING] = "STARTING",
	[NODE_SERVING] = "SERVING",
	[NODE_NO_DIR] = "NO_DIR",
	[NODE_STOPPED] = "STOPPED",
};

static const char *const event_names[] = {
	[NODE_EV_SERVE] = "serve",
	[NODE_EV_DIR_GONE] = "dir-gone",
	[NODE_EV_DIR_BACK] = "dir-back",
	[NODE_EV_KUBELET_STARTED] = "kubelet-started",
	[NODE_EV_RELOAD] = "reload",
	[NODE_EV_STOP] = "stop",
};

const char *node_state_name(enum node_state state)
{
	return (unsigned)state < ELEMENTSOF(state_names) ? state_names[state] : "?";
}

const char *node_event_name(enum node_event event)
{
	return (unsigned)event < ELEMENTSOF(event_names) ? event_names[event] : "?";
}

void node_init(struct node_session *node)
{
	*node = (struct node_session){ .state = NODE_STARTING };
}

bool node_handle(struct node_session *n, enum node_event ev, struct session_kubelet kubelet,
		 enum session_event *ret_event, struct session_event_data *ret_data)
{
	enum node_state st = n->state;
	enum session_event tell;

	if (ev == NODE_EV_KUBELET_STARTED)
		n->kubelet = kubelet; /* a fact whatever the state */
	if (st == NODE_STOPPED)
		return false;
	switch (ev) {
	case NODE_EV_SERVE:
		if (st == NODE_STARTING)
			n->state = NODE_SERVING;
		return false;
	case NODE_EV_STOP:
		n->state = NODE_STOPPED;
		/* Before the start nothing serves: the daemon frees what it built. */
		if (st == NODE_STARTING)
			return false;
		tell = SESSION_EV_STOP;
		break;
	case NODE_EV_DIR_GONE:
		if (st != NODE_SERVING)
			return false;
		n->state = NODE_NO_DIR;
		tell = SESSION_EV_DIR_GONE;
		break;
	case NODE_EV_DIR_BACK:
		if (st == NODE_STARTING)
			return false;
		n->state = NODE_SERVING;
		tell = SESSION_EV_DIR_BACK;
		break;
	case NODE_EV_KUBELET_STARTED:
		if (st != NODE_SERVING)
			return false;
		tell = SESSION_EV_KUBELET_STARTED;
		break;
	case NODE_EV_RELOAD:
		if (st != NODE_SERVING)
			return false;
		tell = SESSION_EV_RELOAD;
		break;
	default:
		return false;
	}
	*ret_event = tell;
	*ret_data = (struct session_event_data){ .kubelet = n->kubelet };
	return true;
}

bool node_join(const struct node_session *n, enum session_event *ret_event)
{
	switch (n->state) {
	case NODE_SERVING:
		*ret_event = SESSION_EV_START;
		return true;
	case NODE_NO_DIR:
		*ret_event = SESSION_EV_DIR_GONE;
		return true;
	default:
		return false;
	}
}
