/* SPDX-License-Identifier: Apache-2.0 */
/* The node session without processes: every (state, event) pair, from a
 * session put straight into that state, with what every resource's session
 * is told and where the node ends up; how a resource built later joins; and
 * the kubelet it remembers. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "daemon/node.h"

#define NOTHING (-1) /* no resource is told anything */

struct expect {
	enum node_state next;
	int tell; /* a session event, or NOTHING */
};

static const struct expect table[NODE_STATE_COUNT][NODE_EVENT_COUNT] = {
	[NODE_STARTING] = {
		[NODE_EV_SERVE] = { NODE_SERVING, NOTHING },
		/* The directory was checked at start; its news waits for the serving node. */
		[NODE_EV_DIR_GONE] = { NODE_STARTING, NOTHING },
		[NODE_EV_DIR_BACK] = { NODE_STARTING, NOTHING },
		[NODE_EV_KUBELET_STARTED] = { NODE_STARTING, NOTHING },
		[NODE_EV_RELOAD] = { NODE_STARTING, NOTHING },
		/* Nothing serves yet: the daemon frees what it built. */
		[NODE_EV_STOP] = { NODE_STOPPED, NOTHING },
	},
	[NODE_SERVING] = {
		[NODE_EV_SERVE] = { NODE_SERVING, NOTHING },
		[NODE_EV_DIR_GONE] = { NODE_NO_DIR, SESSION_EV_DIR_GONE },
		/* Gone and back between two reads: our sockets went with it. */
		[NODE_EV_DIR_BACK] = { NODE_SERVING, SESSION_EV_DIR_BACK },
		[NODE_EV_KUBELET_STARTED] = { NODE_SERVING, SESSION_EV_KUBELET_STARTED },
		[NODE_EV_RELOAD] = { NODE_SERVING, SESSION_EV_RELOAD },
		[NODE_EV_STOP] = { NODE_STOPPED, SESSION_EV_STOP },
	},
	[NODE_NO_DIR] = {
		[NODE_EV_SERVE] = { NODE_NO_DIR, NOTHING },
		[NODE_EV_DIR_GONE] = { NODE_NO_DIR, NOTHING },
		[NODE_EV_DIR_BACK] = { NODE_SERVING, SESSION_EV_DIR_BACK },
		/* Nowhere to serve: the directory's return starts everything over. */
		[NODE_EV_KUBELET_STARTED] = { NODE_NO_DIR, NOTHING },
		[NODE_EV_RELOAD] = { NODE_NO_DIR, NOTHING },
		[NODE_EV_STOP] = { NODE_STOPPED, SESSION_EV_STOP },
	},
	[NODE_STOPPED] = {
		[NODE_EV_SERVE] = { NODE_STOPPED, NOTHING },
		[NODE_EV_DIR_GONE] = { NODE_STOPPED, NOTHING },
		[NODE_EV_DIR_BACK] = { NODE_STOPPED, NOTHING },
		[NODE_EV_KUBELET_STARTED] = { NODE_STOPPED, NOTHING },
		[NODE_EV_RELOAD] = { NODE_STOPPED, NOTHING },
		[NODE_EV_STOP] = { NODE_STOPPED, NOTHING },
	},
};

static const struct session_kubelet kubelet = { .dev = 3, .ino = 9 };

static void test_every_state_and_event(void **state)
{
	(void)state;
	for (int st = 0; st < NODE_STATE_COUNT; st++) {
		for (int ev = 0; ev < NODE_EVENT_COUNT; ev++) {
			struct node_session n;
			node_init(&n);
			n.state = (enum node_state)st;
			enum session_event tell = SESSION_EVENT_COUNT;
			struct session_event_data data = { .tag = 99 };
			bool told = node_handle(&n, (enum node_event)ev, kubelet, &tell, &data);
			const struct expect *e = &table[st][ev];
			if (n.state != e->next || told != (e->tell != NOTHING) || (told && (int)tell != e->tell))
				fail_msg("%s + %s: went to %s, told %s; expected %s, %s", node_state_name((enum node_state)st),
					 node_event_name((enum node_event)ev), node_state_name(n.state),
					 told ? session_event_name(tell) : "nothing", node_state_name(e->next),
					 e->tell == NOTHING ? "nothing" : session_event_name((enum session_event)e->tell));
			if (told) {
				/* Every resource hears which kubelet the node has: the
				 * one just created, or none seen yet. */
				bool created = ev == NODE_EV_KUBELET_STARTED;
				assert_int_equal(data.kubelet.dev, created ? kubelet.dev : 0);
				assert_int_equal(data.kubelet.ino, created ? kubelet.ino : 0);
				assert_int_equal(data.tag, 0);
			} else {
				/* Out-parameters are written only when there is news. */
				assert_int_equal(tell, SESSION_EVENT_COUNT);
				assert_int_equal(data.tag, 99);
			}
		}
	}
}

/* The kubelet.sock last created is remembered whatever the state, so the
 * directory's return tells the resources which kubelet is there. */
static void test_kubelet_is_remembered(void **state)
{
	(void)state;
	struct node_session n;
	node_init(&n);
	enum session_event tell;
	struct session_event_data data;
	assert_false(node_handle(&n, NODE_EV_SERVE, (struct session_kubelet){ 0 }, &tell, &data));
	assert_true(node_handle(&n, NODE_EV_DIR_GONE, (struct session_kubelet){ 0 }, &tell, &data));
	assert_false(node_handle(&n, NODE_EV_KUBELET_STARTED, kubelet, &tell, &data));
	assert_int_equal(n.kubelet.ino, kubelet.ino);
	assert_true(node_handle(&n, NODE_EV_DIR_BACK, (struct session_kubelet){ 0 }, &tell, &data));
	assert_int_equal(tell, SESSION_EV_DIR_BACK);
	assert_int_equal(data.kubelet.ino, kubelet.ino);
}

/* A resource built later joins in the node's state. */
static void test_join(void **state)
{
	(void)state;
	static const struct {
		enum node_state state;
		bool joins;
		enum session_event event;
	} cases[] = {
		{ NODE_STARTING, false, 0 },
		{ NODE_SERVING, true, SESSION_EV_START },
		{ NODE_NO_DIR, true, SESSION_EV_DIR_GONE },
		{ NODE_STOPPED, false, 0 },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct node_session n;
		node_init(&n);
		n.state = cases[i].state;
		enum session_event ev = SESSION_EVENT_COUNT;
		assert_int_equal(node_join(&n, &ev), cases[i].joins);
		assert_int_equal(ev, cases[i].joins ? cases[i].event : SESSION_EVENT_COUNT);
		assert_int_equal(node_started(&n), cases[i].joins);
	}
}

static void test_names(void **state)
{
	(void)state;
	for (int st = 0; st < NODE_STATE_COUNT; st++)
		assert_string_not_equal(node_state_name((enum node_state)st), "?");
	for (int ev = 0; ev < NODE_EVENT_COUNT; ev++)
		assert_string_not_equal(node_event_name((enum node_event)ev), "?");
	assert_string_equal(node_state_name(NODE_STATE_COUNT), "?");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_state_and_event),
		cmocka_unit_test(test_kubelet_is_remembered),
		cmocka_unit_test(test_join),
		cmocka_unit_test(test_names),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
