/* SPDX-License-Identifier: Apache-2.0 */
/* The plugin's gRPC server under clients that misbehave, over its real unix
 * socket: unknown methods answered UNIMPLEMENTED at once, garbage bytes and
 * oversized requests refused without harm, several ListAndWatch clients
 * served side by side (each gets the full list at once and every change), a
 * monitoring client that leaves is not mistaken for the kubelet (no
 * re-registration), and the bound on concurrent streams holds exactly and
 * frees its slots. After each abuse the plugin still serves. */
#include <errno.h>
#include <poll.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cmocka.h>

#include "base/macro.h"
#include "base/parse.h"
#include "deviceplugin.pb-c.h"
#include "grpc/server.h"
#include "harness/harness.h"
#include "plugin/service.h"

#define METHOD_OPTIONS "/v1beta1.DevicePlugin/GetDevicePluginOptions"
#define METHOD_ALLOCATE "/v1beta1.DevicePlugin/Allocate"
#define METHOD_WATCH "/v1beta1.DevicePlugin/ListAndWatch"
/* Long enough to tell "answered" from "hung until the deadline". */
#define PROMPT_MS 5000

/* --- nodes -------------------------------------------------------------- */

/* Builds the node and waits until kubelet-sim lists all its chips healthy,
 * which also means kubelet-sim's own ListAndWatch stream is open. */
static void start_node(struct node *node, unsigned chips)
{
	node_init(node, &(struct node_options){ .chips = chips });
	node_start_registered(node, NULL);
}

static bool plugin_alive(struct node *node)
{
	return proc_wait(node->plugin, 0) == -1;
}

/* GetDevicePluginOptions answers, from a fresh connection. */
static void expect_plugin_serves(struct node *node)
{
	struct gc_channel *ch = node_plugin_channel(node);
	struct gc_result res;
	assert_int_equal(gc_unary(ch, METHOD_OPTIONS, NULL, 0, WAIT_MS, &res), 0);
	if (res.status != GRPC_STATUS_OK)
		fail_msg("GetDevicePluginOptions: status %d: %s", (int)res.status, res.details);
	static const uint8_t empty[1];
	V1beta1__DevicePluginOptions *o =
		v1beta1__device_plugin_options__unpack(NULL, res.len, res.body ? res.body : empty);
	assert_non_null(o);
	assert_true(o->get_preferred_allocation_available);
	v1beta1__device_plugin_options__free_unpacked(o, NULL);
	gc_result_clear(&res);
	gc_channel_close(ch);
	assert_true(plugin_alive(node));
}

/* kubelet-sim's registration still stands and reaches the plugin. */
static void expect_kubelet_still_registered(struct proc *k)
{
	proc_send(k, "options");
	assert_non_null(proc_expect(k, "options preferred_allocation=1 pre_start=0", WAIT_MS));
}

/* --- ListAndWatch clients ----------------------------------------------- */

static struct gc_stream *open_watch(struct gc_channel *ch)
{
	struct gc_stream *s;
	assert_int_equal(gc_stream_open(ch, METHOD_WATCH, NULL, 0, &s), 0);
	return s;
}

/* Checks that msg lists exactly npu-0..npu-(chips-1), each "Healthy" but
 * npu-<unhealthy> "Unhealthy"; false when the health differs. Anything
 * other than a full list with exact health strings fails the test. */
static bool list_matches(const V1beta1__ListAndWatchResponse *msg, unsigned chips, int unhealthy)
{
	assert_int_equal(msg->n_devices, chips);
	bool seen[64] = { false };
	bool matches = true;
	assert_true(chips <= 64);
	for (size_t i = 0; i < msg->n_devices; i++) {
		const V1beta1__Device *d = msg->devices[i];
		uint32_t phy;
		assert_non_null(d->id);
		assert_int_equal(strncmp(d->id, "npu-", 4), 0);
		assert_int_equal(parse_u32(d->id + 4, 10, chips - 1, &phy), 0);
		assert_false(seen[phy]);
		seen[phy] = true;
		bool healthy = strcmp(d->health, "Healthy") == 0;
		if (!healthy && strcmp(d->health, "Unhealthy") != 0)
			fail_msg("%s has health \"%s\"", d->id, d->health);
		if (healthy != ((int)phy != unhealthy))
			matches = false;
	}
	return matches;
}

/* The next message: must arrive within the deadline and be a full list. */
static bool next_matches(struct gc_stream *s, unsigned chips, int unhealthy)
{
	uint8_t *body = NULL;
	size_t len = 0;
	int r = gc_stream_next(s, WAIT_MS, &body, &len);
	if (r == -EPIPE) {
		grpc_status_code status;
		const char *details;
		gc_stream_status(s, &status, &details);
		fail_msg("the stream ended: status %d: %s", (int)status, details);
	}
	assert_int_equal(r, 0);
	static const uint8_t empty[1];
	V1beta1__ListAndWatchResponse *msg = v1beta1__list_and_watch_response__unpack(NULL, len, body ? body : empty);
	free(body);
	assert_non_null(msg);
	bool matches = list_matches(msg, chips, unhealthy);
	v1beta1__list_and_watch_response__free_unpacked(msg, NULL);
	return matches;
}

/* The first message is the full current list. */
static void expect_first_list(struct gc_stream *s, unsigned chips, int unhealthy)
{
	assert_true(next_matches(s, chips, unhealthy));
}

/* Reads until a list shows this health (the plugin sends on changes only,
 * but the API allows repeats). */
static void expect_list(struct gc_stream *s, unsigned chips, int unhealthy)
{
	int64_t deadline = now_ms() + WAIT_MS;
	while (!next_matches(s, chips, unhealthy))
		if (now_ms() > deadline)
			fail_msg("no list with npu-%d the only Unhealthy device", unhealthy);
}

/* Waits for the stream's first event: true when it got the list, false when
 * the server refused it with RESOURCE_EXHAUSTED. */
static bool watch_accepted(struct gc_stream *s, unsigned chips)
{
	uint8_t *body = NULL;
	size_t len = 0;
	int r = gc_stream_next(s, WAIT_MS, &body, &len);
	if (r == 0) {
		static const uint8_t empty[1];
		V1beta1__ListAndWatchResponse *msg =
			v1beta1__list_and_watch_response__unpack(NULL, len, body ? body : empty);
		free(body);
		assert_non_null(msg);
		assert_int_equal(msg->n_devices, chips);
		v1beta1__list_and_watch_response__free_unpacked(msg, NULL);
		return true;
	}
	assert_int_equal(r, -EPIPE);
	grpc_status_code status;
	const char *details;
	gc_stream_status(s, &status, &details);
	if (status != GRPC_STATUS_RESOURCE_EXHAUSTED)
		fail_msg("the stream ended with status %d: %s", (int)status, details);
	assert_non_null(strstr(details, "too many ListAndWatch streams"));
	return false;
}

/* Opens a stream the server accepts. Closed streams free their slots once
 * the server has seen the cancellation, which trails the client's close: a
 * refusal is retried, each attempt waiting on the server's answer. */
static struct gc_stream *open_accepted(struct gc_channel *ch, unsigned chips)
{
	int64_t deadline = now_ms() + WAIT_MS;
	for (;;) {
		struct gc_stream *s = open_watch(ch);
		if (watch_accepted(s, chips))
			return s;
		gc_stream_close(s);
		if (now_ms() > deadline)
			fail_msg("the server kept refusing ListAndWatch streams");
	}
}

/* --- tests -------------------------------------------------------------- */

static void test_unknown_methods_are_unimplemented(void **state)
{
	(void)state;
	struct node node;
	start_node(&node, 2);
	struct gc_channel *ch = node_plugin_channel(&node);
	static const char *const unknown[] = {
		"/v1beta1.DevicePlugin/Nope",
		/* Served methods under another service or with another case. */
		"/v1beta1.DevicePlugin/GetPreferredAllocations",
		"/v1beta1.DevicePlugin/getPreferredAllocation",
		"/v1alpha.DevicePlugin/GetPreferredAllocation",
		"/v1beta1.Registration/Register",
		"/grpc.health.v1.Health/Check",
		"/",
	};
	for (size_t i = 0; i < ELEMENTSOF(unknown); i++) {
		struct gc_result res;
		int64_t started = now_ms();
		assert_int_equal(gc_unary(ch, unknown[i], NULL, 0, PROMPT_MS, &res), 0);
		if (res.status != GRPC_STATUS_UNIMPLEMENTED)
			fail_msg("%s answered status %d (%s) after %lldms", unknown[i], (int)res.status, res.details,
				 (long long)(now_ms() - started));
		gc_result_clear(&res);
	}

	/* A streaming call to an unknown method ends the same way. */
	struct gc_stream *s;
	assert_int_equal(gc_stream_open(ch, "/v1beta1.DevicePlugin/WatchMore", NULL, 0, &s), 0);
	uint8_t *body = NULL;
	size_t len = 0;
	assert_int_equal(gc_stream_next(s, PROMPT_MS, &body, &len), -EPIPE);
	grpc_status_code status;
	gc_stream_status(s, &status, NULL);
	assert_int_equal(status, GRPC_STATUS_UNIMPLEMENTED);
	gc_stream_close(s);

	/* A ListAndWatch whose request is not an Empty message is refused and
	 * takes no watcher slot (test_stream_bound_and_churn counts them). */
	static const uint8_t not_empty[] = { 0x0a, 0x05, 'a', 'b' };
	assert_int_equal(gc_stream_open(ch, METHOD_WATCH, not_empty, sizeof(not_empty), &s), 0);
	assert_int_equal(gc_stream_next(s, PROMPT_MS, &body, &len), -EPIPE);
	gc_stream_status(s, &status, NULL);
	assert_int_equal(status, GRPC_STATUS_INVALID_ARGUMENT);
	gc_stream_close(s);

	/* The served methods still answer on the same connection. */
	struct gc_result res;
	assert_int_equal(gc_unary(ch, "/v1beta1.DevicePlugin/PreStartContainer", NULL, 0, PROMPT_MS, &res), 0);
	assert_int_equal(res.status, GRPC_STATUS_OK);
	gc_result_clear(&res);
	assert_int_equal(gc_unary(ch, "/v1beta1.DevicePlugin/PreStartContainer", not_empty, sizeof(not_empty),
				  PROMPT_MS, &res),
			 0);
	assert_int_equal(res.status, GRPC_STATUS_INVALID_ARGUMENT);
	gc_result_clear(&res);
	/* GetPreferredAllocation is served: a body that is no request is refused
	 * as such, and so is an empty one (no container requests). */
	assert_int_equal(gc_unary(ch, "/v1beta1.DevicePlugin/GetPreferredAllocation", not_empty, sizeof(not_empty),
				  PROMPT_MS, &res),
			 0);
	assert_int_equal(res.status, GRPC_STATUS_INVALID_ARGUMENT);
	assert_non_null(strstr(res.details, "malformed PreferredAllocationRequest"));
	gc_result_clear(&res);
	assert_int_equal(gc_unary(ch, "/v1beta1.DevicePlugin/GetPreferredAllocation", NULL, 0, PROMPT_MS, &res), 0);
	assert_int_equal(res.status, GRPC_STATUS_INVALID_ARGUMENT);
	assert_non_null(strstr(res.details, "no container requests"));
	gc_result_clear(&res);
	gc_channel_close(ch);
	expect_plugin_serves(&node);
	node_fini(&node);
}

/* Connects a raw stream socket to path. */
static int raw_connect(const char *path)
{
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	assert_true(fd >= 0);
	struct sockaddr_un addr = { .sun_family = AF_UNIX };
	assert_int_equal(str_copy(addr.sun_path, sizeof(addr.sun_path), path), 0);
	assert_int_equal(connect(fd, (const struct sockaddr *)&addr, sizeof(addr)), 0);
	return fd;
}

/* Writes what the server takes (it may hang up part way), then reads until
 * it closes the connection; fails if it does not within the deadline. */
static void send_garbage_until_closed(const char *path, const uint8_t *garbage, size_t len)
{
	int fd = raw_connect(path);
	size_t sent = 0;
	while (sent < len) {
		ssize_t n = send(fd, garbage + sent, len - sent, MSG_NOSIGNAL);
		if (n < 0)
			break;
		sent += (size_t)n;
	}

	int64_t deadline = now_ms() + WAIT_MS;
	char buf[4096];
	for (;;) {
		int64_t left = deadline - now_ms();
		if (left <= 0)
			fail_msg("the server kept a connection open after %zu garbage bytes", len);
		struct pollfd pfd = { .fd = fd, .events = POLLIN };
		if (poll(&pfd, 1, (int)left) <= 0)
			continue;
		ssize_t n = recv(fd, buf, sizeof(buf), 0);
		if (n == 0 || (n < 0 && errno != EINTR && errno != EAGAIN))
			break;
	}
	close(fd);
}

static void test_garbage_bytes_on_the_socket(void **state)
{
	(void)state;
	struct node node;
	start_node(&node, 4);
	struct proc *k = node.kubelet;

	static const char http1[] = "GET / HTTP/1.1\r\nHost: localhost\r\n\r\n";
	send_garbage_until_closed(node.plugin_socket, (const uint8_t *)http1, sizeof(http1) - 1);

	uint8_t *ff = malloc(4096);
	assert_non_null(ff);
	memset(ff, 0xff, 4096);
	send_garbage_until_closed(node.plugin_socket, ff, 4096);

	/* A proper HTTP/2 preface, then a frame header claiming 16 MiB of a
	 * frame type that does not exist. */
	static const char preface[] = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";
	uint8_t *h2 = malloc(sizeof(preface) - 1 + 4096);
	assert_non_null(h2);
	memcpy(h2, preface, sizeof(preface) - 1);
	memcpy(h2 + sizeof(preface) - 1, ff, 4096);
	send_garbage_until_closed(node.plugin_socket, h2, sizeof(preface) - 1 + 4096);
	free(h2);
	free(ff);

	/* A client that connects and leaves without a byte. */
	close(raw_connect(node.plugin_socket));

	expect_plugin_serves(&node);
	expect_kubelet_still_registered(k);
	/* kubelet-sim's stream was not disturbed: it still gets changes. */
	node_write_health(&node, 4, 1, 2);
	assert_non_null(proc_expect(k, "capacity=4 allocatable=3 unhealthy=npu-1", WAIT_MS));
	assert_int_equal(count_events(node.plugin, "plugin.stream-ended"), 0);
	node_fini(&node);
}

static void test_oversized_request(void **state)
{
	(void)state;
	struct node node;
	start_node(&node, 2);

	/* A well-formed AllocateRequest whose single ID is 5 MiB long. */
	size_t id_len = 5u << 20;
	char *id = malloc(id_len + 1);
	assert_non_null(id);
	memset(id, 'n', id_len);
	id[id_len] = '\0';
	V1beta1__ContainerAllocateRequest container = V1BETA1__CONTAINER_ALLOCATE_REQUEST__INIT;
	V1beta1__ContainerAllocateRequest *containers[1] = { &container };
	V1beta1__AllocateRequest req = V1BETA1__ALLOCATE_REQUEST__INIT;
	container.devices_ids = &id;
	container.n_devices_ids = 1;
	req.container_requests = containers;
	req.n_container_requests = 1;
	size_t len = v1beta1__allocate_request__get_packed_size(&req);
	assert_true(len > 4u << 20);
	uint8_t *body = malloc(len);
	assert_non_null(body);
	v1beta1__allocate_request__pack(&req, body);
	free(id);

	struct gc_channel *ch = node_plugin_channel(&node);
	struct gc_result res;
	for (int round = 0; round < 2; round++) {
		assert_int_equal(gc_unary(ch, METHOD_ALLOCATE, body, len, WAIT_MS, &res), 0);
		if (res.status != GRPC_STATUS_RESOURCE_EXHAUSTED)
			fail_msg("a %zu-byte Allocate answered status %d: %s", len, (int)res.status, res.details);
		gc_result_clear(&res);
	}
	free(body);

	/* The same connection still carries a good allocation. */
	V1beta1__ContainerAllocateRequest good = V1BETA1__CONTAINER_ALLOCATE_REQUEST__INIT;
	char *ids[] = { (char *)(uintptr_t)"npu-1" };
	good.devices_ids = ids;
	good.n_devices_ids = 1;
	containers[0] = &good;
	uint8_t small[64];
	assert_true(v1beta1__allocate_request__get_packed_size(&req) <= sizeof(small));
	len = v1beta1__allocate_request__pack(&req, small);
	assert_int_equal(gc_unary(ch, METHOD_ALLOCATE, small, len, WAIT_MS, &res), 0);
	assert_int_equal(res.status, GRPC_STATUS_OK);
	V1beta1__AllocateResponse *resp = v1beta1__allocate_response__unpack(NULL, res.len, res.body);
	assert_non_null(resp);
	assert_int_equal(resp->n_container_responses, 1);
	assert_string_equal(resp->container_responses[0]->envs[0]->key, "ASCEND_VISIBLE_DEVICES");
	assert_string_equal(resp->container_responses[0]->envs[0]->value, "1");
	v1beta1__allocate_response__free_unpacked(resp, NULL);
	gc_result_clear(&res);
	gc_channel_close(ch);

	expect_plugin_serves(&node);
	expect_kubelet_still_registered(node.kubelet);
	node_fini(&node);
}

/* Two clients beside kubelet-sim's stream, each on a connection of its own. */
struct watchers {
	struct gc_channel *ch1, *ch2;
	struct gc_stream *s1, *s2;
};

/* A node of 4 chips, and two watchers that have its first list (all Healthy). */
static void start_with_watchers(struct node *node, struct watchers *w)
{
	start_node(node, 4);
	w->ch1 = node_plugin_channel(node);
	w->ch2 = node_plugin_channel(node);
	w->s1 = open_watch(w->ch1);
	w->s2 = open_watch(w->ch2);
	expect_first_list(w->s1, 4, -1);
	expect_first_list(w->s2, 4, -1);
}

static void test_concurrent_watchers_all_see_changes(void **state)
{
	(void)state;
	struct node node;
	struct watchers w;
	start_with_watchers(&node, &w);
	struct proc *k = node.kubelet;

	node_write_health(&node, 4, 2, 3);
	assert_non_null(proc_expect(k, "capacity=4 allocatable=3 unhealthy=npu-2", WAIT_MS));
	expect_list(w.s1, 4, 2);
	expect_list(w.s2, 4, 2);

	/* A client that joins now gets the current list at once. */
	struct gc_stream *s3 = open_watch(w.ch1);
	expect_first_list(s3, 4, 2);

	node_write_health(&node, 4, -1, 0);
	assert_non_null(proc_expect(k, "capacity=4 allocatable=4 unhealthy=-", WAIT_MS));
	expect_list(w.s1, 4, -1);
	expect_list(w.s2, 4, -1);
	expect_list(s3, 4, -1);

	gc_stream_close(s3);
	gc_stream_close(w.s2);
	gc_stream_close(w.s1);
	gc_channel_close(w.ch2);
	gc_channel_close(w.ch1);
	node_fini(&node);
}

/* Opens watchers on ch until the server refuses one: then every slot but
 * the kubelet's is taken, and a slot coming back (open_accepted) proves that
 * the server has seen a stream close. Returns how many were opened. */
static size_t fill_slots(struct gc_channel *ch, unsigned chips, struct gc_stream **streams, size_t max)
{
	for (size_t n = 0;; n++) {
		struct gc_stream *s = open_watch(ch);
		if (!watch_accepted(s, chips)) {
			gc_stream_close(s);
			return n;
		}
		assert_true(n < max);
		streams[n] = s;
	}
}

/* After a watcher's close was seen (its slot came back), a stream taken for
 * the kubelet's would already have been reported to the daemon's loop, and
 * a fault written now reaches that loop after the report. So kubelet-sim's
 * first device update must be the fault: a re-registration would first have
 * ended kubelet-sim's stream, which it reports as "allocatable=0". The
 * daemon logs the end before it handles the fault. */
static void expect_fault_first(struct node *node, struct proc *k, unsigned chips, unsigned phy)
{
	char want[128];
	snprintf(want, sizeof(want), "capacity=%u allocatable=%u unhealthy=npu-%u", chips, chips - 1, phy);
	node_write_health(node, chips, (int)phy, 2);
	assert_non_null(proc_expect_next(k, "devices ", want, WAIT_MS));
	assert_int_equal(count_events(node->plugin, "plugin.stream-ended"), 0);
}

static void test_watcher_leaving_does_not_disturb_others(void **state)
{
	(void)state;
	struct node node;
	struct watchers w;
	start_with_watchers(&node, &w);
	struct proc *k = node.kubelet;

	struct gc_channel *ch = node_plugin_channel(&node);
	struct gc_stream *fillers[SERVICE_MAX_STREAMS];
	size_t n_fillers = fill_slots(ch, 4, fillers, SERVICE_MAX_STREAMS);

	/* One monitoring client cancels its stream and goes away. That was not
	 * the kubelet's stream: no re-registration, and kubelet-sim's own
	 * stream stays open. */
	gc_stream_close(w.s1);
	gc_channel_close(w.ch1);
	struct gc_stream *newcomer = open_accepted(ch, 4);
	expect_fault_first(&node, k, 4, 0);
	expect_list(w.s2, 4, 0);
	expect_list(newcomer, 4, 0);
	node_write_health(&node, 4, -1, 0);
	assert_non_null(proc_expect(k, "capacity=4 allocatable=4 unhealthy=-", WAIT_MS));
	expect_list(w.s2, 4, -1);

	/* The older client leaves too (every slot is taken again): the
	 * newcomer keeps getting changes beside kubelet-sim. */
	gc_stream_close(w.s2);
	gc_channel_close(w.ch2);
	struct gc_stream *probe = open_accepted(ch, 4);
	expect_fault_first(&node, k, 4, 3);
	expect_list(newcomer, 4, 3);

	gc_stream_close(probe);
	gc_stream_close(newcomer);
	for (size_t i = 0; i < n_fillers; i++)
		gc_stream_close(fillers[i]);
	gc_channel_close(ch);
	expect_kubelet_still_registered(k);
	assert_int_equal(count_events(node.plugin, "plugin.stream-ended"), 0);
	node_fini(&node);
}

#define BURST 40
#define LOOPS 100

static void test_stream_bound_and_churn(void **state)
{
	(void)state;
	struct node node;
	start_node(&node, 2);
	struct proc *k = node.kubelet;
	struct gc_channel *ch = node_plugin_channel(&node);
	struct gc_stream *streams[BURST];

	/* 40 at once beside kubelet-sim's: exactly SERVICE_MAX_STREAMS - 1 fit. */
	for (size_t i = 0; i < BURST; i++)
		streams[i] = open_watch(ch);
	unsigned accepted = 0, refused = 0;
	for (size_t i = 0; i < BURST; i++) {
		if (watch_accepted(streams[i], 2))
			accepted++;
		else
			refused++;
	}
	assert_int_equal(accepted, SERVICE_MAX_STREAMS - 1);
	assert_int_equal(refused, BURST - (SERVICE_MAX_STREAMS - 1));
	for (size_t i = 0; i < BURST; i++)
		gc_stream_close(streams[i]);

	/* Churn: every closed stream gives its slot back. */
	for (int i = 0; i < LOOPS; i++)
		gc_stream_close(open_accepted(ch, 2));

	/* All slots but kubelet-sim's are free again, and the bound still holds.
	 * Taking every slot also proves the server has seen every close above. */
	for (size_t i = 0; i < SERVICE_MAX_STREAMS - 1; i++)
		streams[i] = open_accepted(ch, 2);
	struct gc_stream *extra = open_watch(ch);
	assert_false(watch_accepted(extra, 2));
	gc_stream_close(extra);

	/* None of this touched the kubelet's stream. */
	expect_fault_first(&node, k, 2, 1);
	for (size_t i = 0; i < SERVICE_MAX_STREAMS - 1; i++)
		gc_stream_close(streams[i]);
	gc_channel_close(ch);
	expect_plugin_serves(&node);
	expect_kubelet_still_registered(k);
	node_fini(&node);
}

/* Watchers that come while the kubelet is away are never taken for the
 * kubelet, and cannot take its slot: with every other slot full, one more
 * watcher is refused, and one leaving does not make the plugin think the
 * kubelet's stream ended. */
static void test_kubelet_keeps_its_slot(void **state)
{
	(void)state;
	struct node node;
	node_init(&node, &(struct node_options){ .chips = 2 });
	struct proc *p = node_start_plugin(&node, NULL);
	expect_event(p, "plugin.register-failed", "resource", "ascend.com/npu");

	struct gc_channel *ch = node_plugin_channel(&node);
	struct gc_stream *streams[SERVICE_MAX_STREAMS - 1];
	for (size_t i = 0; i < SERVICE_MAX_STREAMS - 1; i++)
		streams[i] = open_accepted(ch, 2);
	struct gc_stream *extra = open_watch(ch);
	assert_false(watch_accepted(extra, 2));
	gc_stream_close(extra);

	/* The slot comes back once the server has seen the close, and so the
	 * report, had the stream been taken for the kubelet's, is on its way to
	 * the daemon's loop. SIGHUP, then the failed registration attempt it
	 * leads to, are handled by that loop after it. */
	gc_stream_close(streams[0]);
	streams[0] = open_accepted(ch, 2);
	proc_kill(p, SIGHUP);
	expect_event(p, "config.sighup");
	expect_event(p, "plugin.register-retry", "resource", "ascend.com/npu");
	assert_int_equal(count_events(p, "plugin.stream-ended"), 0);

	/* The kubelet then registers as usual. */
	struct proc *k = node_start_kubelet(&node);
	assert_non_null(proc_expect(k, "register resource=ascend.com/npu", WAIT_MS));
	assert_non_null(proc_expect(k, "capacity=2 allocatable=2", WAIT_MS));

	for (size_t i = 0; i < SERVICE_MAX_STREAMS - 1; i++)
		gc_stream_close(streams[i]);
	gc_channel_close(ch);
	node_fini(&node);
}

/* Connections that send the HTTP/2 preface and SETTINGS, then nothing, in
 * every slot and more: one process gets GS_MAX_CONNECTIONS_PER_PEER of them,
 * so the probe and a restarted kubelet still connect meanwhile; the server
 * closes each within GS_MAX_IDLE_MS (it opened no call), so they hold the
 * slots for seconds, not for as long as the client likes; then a newcomer
 * is served again, and the kubelet's connection, which has its stream,
 * stays. */
#define SILENT_CONNS (GS_MAX_CONNECTIONS + 28)
static void test_silent_connections_are_closed(void **state)
{
	(void)state;
	struct node node;
	node_init(&node, &(struct node_options){ .chips = 2 });
	node_start_registered(&node, NULL);
	static const uint8_t hello[] = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
				       "\x00\x00\x00\x04\x00\x00\x00\x00\x00";
	struct pollfd p[SILENT_CONNS];
	for (size_t i = 0; i < SILENT_CONNS; i++) {
		p[i] = (struct pollfd){ .fd = raw_connect(node.plugin_socket), .events = POLLIN };
		/* The server may close an extra one at once: a short write then. */
		(void)send(p[i].fd, hello, sizeof(hello) - 1, MSG_NOSIGNAL);
	}
	/* While they hold this process's share of the slots, the liveness probe
	 * (another process) is served, and so is a kubelet that starts anew. */
	const char *probe[] = { PLUGIN_BIN, "--probe", "--socket-dir", node.socket_dir, NULL };
	struct proc *pr = proc_start(probe, NULL);
	assert_int_equal(proc_wait(pr, EXIT_WAIT_MS), 0);
	proc_free(pr);
	proc_send(node.kubelet, "quit");
	assert_int_equal(proc_wait(node.kubelet, EXIT_WAIT_MS), 0);
	proc_free(node.kubelet);
	node.kubelet = node_start_kubelet(&node);
	assert_non_null(proc_expect(node.kubelet, "register resource=ascend.com/npu", WAIT_MS));
	assert_non_null(proc_expect(node.kubelet, "capacity=2 allocatable=2", WAIT_MS));
	/* Each ends (EOF) by the server's doing: GS_MAX_IDLE_MS, plus slack. */
	int64_t deadline = now_ms() + GS_MAX_IDLE_MS + WAIT_MS;
	size_t open_conns = SILENT_CONNS;
	while (open_conns > 0 && now_ms() < deadline) {
		int n = poll(p, SILENT_CONNS, (int)(deadline - now_ms()));
		for (size_t i = 0; i < SILENT_CONNS && n > 0; i++) {
			char buf[256];
			if (p[i].fd >= 0 && (p[i].revents & (POLLIN | POLLHUP | POLLERR)) &&
			    recv(p[i].fd, buf, sizeof(buf), MSG_DONTWAIT) <= 0) {
				close(p[i].fd);
				p[i].fd = -1;
				open_conns--;
			}
		}
	}
	for (size_t i = 0; i < SILENT_CONNS; i++)
		if (p[i].fd >= 0)
			close(p[i].fd);
	if (open_conns)
		fail_msg("%zu of %d silent connections still open", open_conns, SILENT_CONNS);
	expect_plugin_serves(&node);
	expect_kubelet_still_registered(node.kubelet);
	node_fini(&node);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_kubelet_keeps_its_slot),
		cmocka_unit_test(test_unknown_methods_are_unimplemented),
		cmocka_unit_test(test_garbage_bytes_on_the_socket),
		cmocka_unit_test(test_oversized_request),
		cmocka_unit_test(test_concurrent_watchers_all_see_changes),
		cmocka_unit_test(test_watcher_leaving_does_not_disturb_others),
		cmocka_unit_test(test_stream_bound_and_churn),
		cmocka_unit_test(test_silent_connections_are_closed),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
