/* SPDX-License-Identifier: Apache-2.0 */
/* The registration lifecycle's state machine without sockets: every
 * (state, event) pair, from a session put straight into that state, with
 * what it asks its owner to do and where it ends up; then the variants that
 * depend on the event's data (stale tags, another stream, the same kubelet) and on a bind
 * that fails. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "base/macro.h"
#include "plugin/session.h"

#define TAG 5
#define STREAM 7
static const struct session_kubelet kubelet = { .dev = 1, .ino = 2 };
static const struct session_kubelet other_kubelet = { .dev = 1, .ino = 3 };

/* What the session asked for, in order: U unbind, B bind, R register,
 * T bind retry timer, W+/W- watchdog armed/disarmed. */
struct owner {
	char did[64];
	int bind_result;
	uint64_t registered_tag;
	unsigned transitions;
	bool last_handled;
};

static void did(struct owner *o, const char *what)
{
	strncat(o->did, what, sizeof(o->did) - strlen(o->did) - 1);
}

static void op_unbind(void *ctx)
{
	did(ctx, "U");
}

static int op_bind(void *ctx)
{
	struct owner *o = ctx;
	did(o, "B");
	return o->bind_result;
}

static void op_register(void *ctx, uint64_t tag)
{
	struct owner *o = ctx;
	did(o, "R");
	o->registered_tag = tag;
}

static void op_retry(void *ctx)
{
	did(ctx, "T");
}

static void op_watchdog(void *ctx, bool arm)
{
	did(ctx, arm ? "W+" : "W-");
}

static void op_transition(void *ctx, enum session_state from, enum session_event ev, enum session_state to,
			  bool handled, int error)
{
	(void)from, (void)ev, (void)to, (void)error;
	struct owner *o = ctx;
	o->transitions++;
	o->last_handled = handled;
}

static const struct session_ops ops = {
	.unbind = op_unbind,
	.bind = op_bind,
	.register_start = op_register,
	.arm_bind_retry = op_retry,
	.watchdog = op_watchdog,
	.transition = op_transition,
};

/* A session in state, registered under TAG with kubelet; watched, it
 * watches STREAM. */
static void put_in(struct session *s, struct owner *o, enum session_state state)
{
	memset(o, 0, sizeof(*o));
	session_init(s, &ops, o);
	s->state = state;
	s->tag = TAG;
	s->stream = state == SESSION_WATCHED ? STREAM : 0;
	s->answered = state == SESSION_REGISTERED || state == SESSION_WATCHED;
	s->kubelet = kubelet;
}

#define IGNORED (-1)

struct expect {
	int next;         /* a state, or IGNORED */
	const char *did;  /* what the owner was asked to do */
};

/* Events carry the current tag, STREAM and, for kubelet-started, a new
 * kubelet. */
static const struct expect table[SESSION_STATE_COUNT][SESSION_EVENT_COUNT] = {
	[SESSION_UNBOUND] = {
		[SESSION_EV_START] = { SESSION_REGISTERING, "UBR" },
		[SESSION_EV_BIND_RETRY] = { SESSION_REGISTERING, "UBR" },
		[SESSION_EV_SOCKET_DELETED] = { IGNORED, "" },
		[SESSION_EV_KUBELET_STARTED] = { SESSION_REGISTERING, "UBR" },
		[SESSION_EV_DIR_GONE] = { SESSION_NO_DIR, "U" },
		[SESSION_EV_DIR_BACK] = { SESSION_REGISTERING, "UBR" },
		[SESSION_EV_REGISTERED] = { IGNORED, "" },
		[SESSION_EV_STREAM_OPENED] = { IGNORED, "" },
		[SESSION_EV_STREAM_ENDED] = { IGNORED, "" },
		[SESSION_EV_WATCHDOG] = { IGNORED, "" },
		[SESSION_EV_RELOAD] = { SESSION_REGISTERING, "UBR" },
		[SESSION_EV_STOP] = { SESSION_STOPPED, "U" },
	},
	/* Only the directory's return (or the end) gets it out of here. */
	[SESSION_NO_DIR] = {
		[SESSION_EV_START] = { IGNORED, "" },
		[SESSION_EV_BIND_RETRY] = { IGNORED, "" },
		[SESSION_EV_SOCKET_DELETED] = { IGNORED, "" },
		[SESSION_EV_KUBELET_STARTED] = { IGNORED, "" },
		[SESSION_EV_DIR_GONE] = { IGNORED, "" },
		[SESSION_EV_DIR_BACK] = { SESSION_REGISTERING, "UBR" },
		[SESSION_EV_REGISTERED] = { IGNORED, "" },
		[SESSION_EV_STREAM_OPENED] = { IGNORED, "" },
		[SESSION_EV_STREAM_ENDED] = { IGNORED, "" },
		[SESSION_EV_WATCHDOG] = { IGNORED, "" },
		[SESSION_EV_RELOAD] = { IGNORED, "" },
		[SESSION_EV_STOP] = { SESSION_STOPPED, "U" },
	},
	[SESSION_REGISTERING] = {
		[SESSION_EV_START] = { IGNORED, "" },
		[SESSION_EV_BIND_RETRY] = { IGNORED, "" },
		[SESSION_EV_SOCKET_DELETED] = { SESSION_REGISTERING, "UBR" },
		/* A new kubelet while registering: register again, no rebind. */
		[SESSION_EV_KUBELET_STARTED] = { SESSION_REGISTERING, "R" },
		[SESSION_EV_DIR_GONE] = { SESSION_NO_DIR, "U" },
		[SESSION_EV_DIR_BACK] = { SESSION_REGISTERING, "UBR" },
		[SESSION_EV_REGISTERED] = { SESSION_REGISTERED, "W+" },
		[SESSION_EV_STREAM_OPENED] = { SESSION_WATCHED, "" },
		/* Reports come in order: a stream that ends opened first, and
		 * its opening made the session watch it. */
		[SESSION_EV_STREAM_ENDED] = { IGNORED, "" },
		[SESSION_EV_WATCHDOG] = { IGNORED, "" },
		/* No second registration beside this one. */
		[SESSION_EV_RELOAD] = { IGNORED, "" },
		[SESSION_EV_STOP] = { SESSION_STOPPED, "U" },
	},
	[SESSION_REGISTERED] = {
		[SESSION_EV_START] = { IGNORED, "" },
		[SESSION_EV_BIND_RETRY] = { IGNORED, "" },
		[SESSION_EV_SOCKET_DELETED] = { SESSION_REGISTERING, "UBRW-" },
		[SESSION_EV_KUBELET_STARTED] = { SESSION_REGISTERING, "UBRW-" },
		[SESSION_EV_DIR_GONE] = { SESSION_NO_DIR, "UW-" },
		[SESSION_EV_DIR_BACK] = { SESSION_REGISTERING, "UBRW-" },
		[SESSION_EV_REGISTERED] = { IGNORED, "" },
		[SESSION_EV_STREAM_OPENED] = { SESSION_WATCHED, "W-" },
		[SESSION_EV_STREAM_ENDED] = { IGNORED, "" },
		/* Accepted, but no stream: register again. */
		[SESSION_EV_WATCHDOG] = { SESSION_REGISTERING, "RW-" },
		/* Accepted, its stream on the way: nothing more to do. */
		[SESSION_EV_RELOAD] = { IGNORED, "" },
		[SESSION_EV_STOP] = { SESSION_STOPPED, "UW-" },
	},
	[SESSION_WATCHED] = {
		[SESSION_EV_START] = { IGNORED, "" },
		[SESSION_EV_BIND_RETRY] = { IGNORED, "" },
		[SESSION_EV_SOCKET_DELETED] = { SESSION_REGISTERING, "UBR" },
		[SESSION_EV_KUBELET_STARTED] = { SESSION_REGISTERING, "UBR" },
		[SESSION_EV_DIR_GONE] = { SESSION_NO_DIR, "U" },
		[SESSION_EV_DIR_BACK] = { SESSION_REGISTERING, "UBR" },
		/* The stream may open before the Register answer arrives. */
		[SESSION_EV_REGISTERED] = { SESSION_WATCHED, "" },
		/* The very stream watched, told twice. */
		[SESSION_EV_STREAM_OPENED] = { IGNORED, "" },
		[SESSION_EV_STREAM_ENDED] = { SESSION_REGISTERING, "UBR" },
		[SESSION_EV_WATCHDOG] = { IGNORED, "" },
		/* A reload keeps the registration: the stream carries the news. */
		[SESSION_EV_RELOAD] = { IGNORED, "" },
		[SESSION_EV_STOP] = { SESSION_STOPPED, "U" },
	},
	[SESSION_STOPPED] = {
		[SESSION_EV_START] = { IGNORED, "" },
		[SESSION_EV_BIND_RETRY] = { IGNORED, "" },
		[SESSION_EV_SOCKET_DELETED] = { IGNORED, "" },
		[SESSION_EV_KUBELET_STARTED] = { IGNORED, "" },
		[SESSION_EV_DIR_GONE] = { IGNORED, "" },
		[SESSION_EV_DIR_BACK] = { IGNORED, "" },
		[SESSION_EV_REGISTERED] = { IGNORED, "" },
		[SESSION_EV_STREAM_OPENED] = { IGNORED, "" },
		[SESSION_EV_STREAM_ENDED] = { IGNORED, "" },
		[SESSION_EV_WATCHDOG] = { IGNORED, "" },
		[SESSION_EV_RELOAD] = { IGNORED, "" },
		[SESSION_EV_STOP] = { IGNORED, "" },
	},
};

static void check(enum session_state state, enum session_event ev, const struct session_event_data *data,
		  int next, const char *expected, int bind_result)
{
	struct session s;
	struct owner o;
	put_in(&s, &o, state);
	o.bind_result = bind_result;

	int r = session_handle(&s, ev, data);
	int want_state = next == IGNORED ? (int)state : next;
	if (strcmp(o.did, expected) != 0 || (int)s.state != want_state || o.transitions != 1 ||
	    o.last_handled != (next != IGNORED))
		fail_msg("%s + %s: did \"%s\" and went to %s (handled %d); expected \"%s\" and %s",
			 session_state_name(state), session_event_name(ev), o.did, session_state_name(s.state),
			 o.last_handled, expected, next == IGNORED ? "ignored" : session_state_name(next));
	/* A new registration always has a new tag. */
	if (strchr(o.did, 'R'))
		assert_int_equal(o.registered_tag, TAG + 1);
	else
		assert_int_equal(s.tag, TAG);
	/* Only a bind that fails at start is an error for the caller. */
	assert_int_equal(r, ev == SESSION_EV_START && bind_result < 0 && next != IGNORED ? bind_result : 0);
}

static void test_every_state_and_event(void **state)
{
	(void)state;
	const struct session_event_data data = { .tag = TAG, .stream = STREAM, .kubelet = other_kubelet };
	for (int st = 0; st < SESSION_STATE_COUNT; st++)
		for (int ev = 0; ev < SESSION_EVENT_COUNT; ev++)
			check((enum session_state)st, (enum session_event)ev, &data, table[st][ev].next, table[st][ev].did,
			      0);
}

/* Reports of an older registration (an overlapping Register call whose
 * stream the kubelet ends when the newer one replaces it) change nothing. */
static void test_stale_tags_are_ignored(void **state)
{
	(void)state;
	const struct session_event_data stale = { .tag = TAG - 1 };
	const enum session_event tagged[] = { SESSION_EV_REGISTERED, SESSION_EV_STREAM_OPENED, SESSION_EV_STREAM_ENDED };
	for (int st = 0; st < SESSION_STATE_COUNT; st++)
		for (size_t i = 0; i < ELEMENTSOF(tagged); i++)
			check((enum session_state)st, tagged[i], &stale, IGNORED, "", 0);
}

/* The stream opened is the one watched: another stream of the same
 * registration ending (the kubelet replaced it) changes nothing, the
 * watched one ending starts over. */
static void test_only_the_watched_stream_counts(void **state)
{
	(void)state;
	struct session s;
	struct owner o;
	put_in(&s, &o, SESSION_REGISTERED);
	assert_int_equal(session_handle(&s, SESSION_EV_STREAM_OPENED,
					&(struct session_event_data){ .tag = TAG, .stream = STREAM + 1 }),
			 0);
	assert_int_equal(s.state, SESSION_WATCHED);
	assert_int_equal(s.stream, STREAM + 1);
	check(SESSION_WATCHED, SESSION_EV_STREAM_ENDED, &(struct session_event_data){ .tag = TAG, .stream = STREAM - 1 },
	      IGNORED, "", 0);
	o.did[0] = '\0';
	assert_int_equal(session_handle(&s, SESSION_EV_STREAM_ENDED,
					&(struct session_event_data){ .tag = TAG, .stream = STREAM + 1 }),
			 0);
	assert_int_equal(s.state, SESSION_REGISTERING);
	assert_string_equal(o.did, "UBR");
	/* A new registration watches no stream until the kubelet opens one. */
	assert_int_equal(s.stream, 0);
}

/* The kubelet keeps only its newest stream: a later one of the current
 * registration is watched instead, and the earlier one's end is no news. */
static void test_newer_stream_supersedes(void **state)
{
	(void)state;
	struct session s;
	struct owner o;
	put_in(&s, &o, SESSION_WATCHED);
	assert_int_equal(session_handle(&s, SESSION_EV_STREAM_OPENED,
					&(struct session_event_data){ .tag = TAG, .stream = STREAM + 1 }),
			 0);
	assert_int_equal(s.state, SESSION_WATCHED);
	assert_int_equal(s.stream, STREAM + 1);
	assert_int_equal(session_handle(&s, SESSION_EV_STREAM_ENDED,
					&(struct session_event_data){ .tag = TAG, .stream = STREAM }),
			 0);
	assert_int_equal(s.state, SESSION_WATCHED);
	assert_string_equal(o.did, "");
}

/* A stream that ends before the kubelet answered the Register call may have
 * been an older registration's, taken for this one (the kubelet dialled back
 * for the older call after this one was sent): the session waits for the
 * answer and the stream after it instead of cutting them by starting over. */
static void test_end_before_the_answer_waits(void **state)
{
	(void)state;
	struct session s;
	struct owner o;
	put_in(&s, &o, SESSION_REGISTERING);
	s.answered = false;
	const struct session_event_data older = { .tag = TAG, .stream = STREAM };
	const struct session_event_data newer = { .tag = TAG, .stream = STREAM + 1 };
	assert_int_equal(session_handle(&s, SESSION_EV_STREAM_OPENED, &older), 0);
	assert_int_equal(s.state, SESSION_WATCHED);
	assert_int_equal(session_handle(&s, SESSION_EV_STREAM_ENDED, &older), 0);
	assert_int_equal(s.state, SESSION_REGISTERING);
	assert_int_equal(s.stream, 0);
	assert_string_equal(o.did, "");
	assert_int_equal(session_handle(&s, SESSION_EV_REGISTERED, &(struct session_event_data){ .tag = TAG }), 0);
	assert_int_equal(s.state, SESSION_REGISTERED);
	assert_int_equal(session_handle(&s, SESSION_EV_STREAM_OPENED, &newer), 0);
	assert_int_equal(s.state, SESSION_WATCHED);
	assert_string_equal(o.did, "W+W-");
	/* Once answered, the watched stream ending starts over. */
	assert_int_equal(session_handle(&s, SESSION_EV_STREAM_ENDED, &newer), 0);
	assert_int_equal(s.state, SESSION_REGISTERING);
	assert_string_equal(o.did, "W+W-UBR");
	assert_false(s.answered);
}

/* kubelet.sock created, but the attempt under way or the registration that
 * stands already reaches that very kubelet: nothing to do. */
static void test_same_kubelet_is_ignored(void **state)
{
	(void)state;
	const struct session_event_data same = { .kubelet = kubelet };
	check(SESSION_REGISTERING, SESSION_EV_KUBELET_STARTED, &same, IGNORED, "", 0);
	check(SESSION_REGISTERED, SESSION_EV_KUBELET_STARTED, &same, IGNORED, "", 0);
	check(SESSION_WATCHED, SESSION_EV_KUBELET_STARTED, &same, IGNORED, "", 0);
	/* Not serving: a kubelet appearing is a reason to try binding again. */
	check(SESSION_UNBOUND, SESSION_EV_KUBELET_STARTED, &same, SESSION_REGISTERING, "UBR", 0);
}

/* Every restart whose bind fails ends unbound with the retry timer armed;
 * only the start reports the error. */
static void test_bind_failure(void **state)
{
	(void)state;
	const struct session_event_data data = { .tag = TAG, .stream = STREAM, .kubelet = other_kubelet };
	for (int st = 0; st < SESSION_STATE_COUNT; st++) {
		for (int ev = 0; ev < SESSION_EVENT_COUNT; ev++) {
			const struct expect *e = &table[st][ev];
			const char *restart = strstr(e->did, "UBR");
			if (!restart)
				continue;
			char did[16];
			/* "UBR" becomes "UBT"; a watchdog disarm still follows. */
			snprintf(did, sizeof(did), "UBT%s", restart + 3);
			check((enum session_state)st, (enum session_event)ev, &data, SESSION_UNBOUND, did, -EACCES);
		}
	}
}

/* The attempt's kubelet is what kubelet-started is compared with, and a new
 * registration forgets the old one. */
static void test_attempting_records_the_kubelet(void **state)
{
	(void)state;
	struct session s;
	struct owner o;
	put_in(&s, &o, SESSION_UNBOUND);
	s.kubelet = (struct session_kubelet){ 0 };
	assert_int_equal(session_handle(&s, SESSION_EV_START, NULL), 0);
	assert_int_equal(s.state, SESSION_REGISTERING);
	session_attempting(&s, other_kubelet);
	o.did[0] = '\0';
	assert_int_equal(session_handle(&s, SESSION_EV_KUBELET_STARTED,
					&(struct session_event_data){ .kubelet = other_kubelet }),
			 0);
	assert_string_equal(o.did, "");
	assert_int_equal(session_handle(&s, SESSION_EV_KUBELET_STARTED,
					&(struct session_event_data){ .kubelet = kubelet }),
			 0);
	assert_string_equal(o.did, "R");
	assert_int_equal(o.registered_tag, TAG + 2);
}

/* Names exist for every state and event (they appear in debug logs). */
/* However many SIGHUPs come while a registration is under way or stands,
 * the one registration and its stream stay: none overlaps it. */
static void test_reload_keeps_the_registration(void **state)
{
	(void)state;
	struct session s;
	struct owner o;
	for (int st = SESSION_REGISTERING; st <= SESSION_WATCHED; st++) {
		put_in(&s, &o, (enum session_state)st);
		for (int i = 0; i < 3; i++)
			assert_int_equal(session_handle(&s, SESSION_EV_RELOAD, NULL), 0);
		assert_int_equal(s.state, st);
		assert_string_equal(o.did, "");
		assert_int_equal(s.tag, TAG);
	}
	/* The registration's stream is then watched as ever. */
	put_in(&s, &o, SESSION_REGISTERED);
	assert_int_equal(session_handle(&s, SESSION_EV_RELOAD, NULL), 0);
	assert_int_equal(session_handle(&s, SESSION_EV_STREAM_OPENED, &(struct session_event_data){ .tag = TAG }), 0);
	assert_int_equal(s.state, SESSION_WATCHED);
	assert_string_equal(o.did, "W-");
}

static void test_names(void **state)
{
	(void)state;
	for (int st = 0; st < SESSION_STATE_COUNT; st++)
		assert_string_not_equal(session_state_name((enum session_state)st), "?");
	for (int ev = 0; ev < SESSION_EVENT_COUNT; ev++)
		assert_string_not_equal(session_event_name((enum session_event)ev), "?");
	assert_string_equal(session_state_name(SESSION_STATE_COUNT), "?");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_state_and_event),
		cmocka_unit_test(test_stale_tags_are_ignored),
		cmocka_unit_test(test_only_the_watched_stream_counts),
		cmocka_unit_test(test_newer_stream_supersedes),
		cmocka_unit_test(test_end_before_the_answer_waits),
		cmocka_unit_test(test_same_kubelet_is_ignored),
		cmocka_unit_test(test_bind_failure),
		cmocka_unit_test(test_attempting_records_the_kubelet),
		cmocka_unit_test(test_reload_keeps_the_registration),
		cmocka_unit_test(test_names),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
