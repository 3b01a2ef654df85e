/* SPDX-License-Identifier: Apache-2.0 */
/* An API server that hangs, cancels or throttles must never stall the DRA
 * driver: the daemon with --front-end=dra against the stand-in API server
 * (harness/standin.h) on a simulated 8-chip node, called as the kubelet
 * calls it, straight on dra.sock.
 *   - With claim reads held, an unprepare and a prepare of a claim
 *     prepared already answer within a second, the health stream still
 *     says a chip's fault, and the claims of one call are read at once;
 *   - the claims of a call get one deadline for the call, not one each;
 *   - a call the kubelet cancels, or whose deadline passes, stops its read;
 *   - a 429 with Retry-After is retried after the time asked, and not
 *     waited for when that is past the call's deadline;
 *   - SIGTERM with claims in flight (reads held, a Retry-After waited for,
 *     the publisher's request held) ends the daemon within 2 s;
 *   - claims waiting for reads are bounded: past the bound they fail at
 *     once. */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "base/macro.h"
#include "base/parse.h"
#include "base/wait.h"
#include "dra.pb-c.h"
#include "dra_api.h"
#include "dra_health.pb-c.h"
#include "grpc/client.h"
#include "harness/dra.h"
#include "harness/harness.h"
#include "harness/standin.h"
#include "support/async_call.h"

#define NODE_NAME "node-1"
#define CHIPS 8
/* What the kubelet gives a DRA call (its DRA plugin client: 45 s); longer
 * than any bound of the driver's own. */
#define KUBELET_CALL_MS 60000
/* An answer that does not wait on the API server. */
#define QUICK_MS 1000
/* SIGTERM to exit, whatever the API server does. */
#define EXIT_MS 2000
/* The driver's deadline for the claims of one prepare, the claims one call
 * may name, and how many may wait for reads at once (dra/service.h). */
#define PREPARE_DEADLINE_MS 5000
#define MAX_CLAIMS 128
#define CLAIMS_IN_FLIGHT 512
#define REQUEST_MAX (MAX_CLAIMS * 128)

struct hang_node {
	struct node node;
	char kubelet_dir[96], dra_socket[192], cdi_dir[96], kubeconfig[96];
	struct standin *api;
	struct proc *plugin;
	struct gc_channel *ch;
	struct cq_runner *runner;
};

/* The node, the stand-in and the daemon serving dra.sock; the claims are
 * the test's to add. */
static void start(struct hang_node *d, bool hold_publisher)
{
	node_init(&d->node, &(struct node_options){ .chips = CHIPS });
	snprintf(d->kubelet_dir, sizeof(d->kubelet_dir), "%s/kubelet-root", d->node.root);
	snprintf(d->dra_socket, sizeof(d->dra_socket), "%s/plugins/npu.ascend.com/dra.sock", d->kubelet_dir);
	snprintf(d->cdi_dir, sizeof(d->cdi_dir), "%s/cdi", d->node.root);
	snprintf(d->kubeconfig, sizeof(d->kubeconfig), "%s/kubeconfig", d->node.root);
	d->api = standin_start();
	standin_kubeconfig(d->api, d->kubeconfig);
	standin_hold_all(d->api, hold_publisher);
	const char *const flags[] = { "--front-end", "dra", "--kubelet-dir", d->kubelet_dir, "--node-name", NODE_NAME,
				      "--cdi-dir", d->cdi_dir, "--kubeconfig", d->kubeconfig, "--health-interval",
				      "1h", NULL };
	d->plugin = node_start_plugin(&d->node, flags);
	expect_event(d->plugin, "dra.serving", "driver", "npu.ascend.com");
	assert_int_equal(gc_channel_open(d->dra_socket, &d->ch), 0);
	assert_int_equal(cq_runner_start(&d->runner), 0);
}

static void finish(struct hang_node *d)
{
	gc_channel_close(d->ch);
	node_fini(&d->node);
	cq_runner_stop(d->runner);
	standin_stop(d->api);
}

/* A request naming the claims (names[i] with uid "uid-" names[i]); both
 * requests are `repeated Claim claims = 1`. Returns its length in buf. */
static size_t claims_request(const char *const names[], size_t n, uint8_t *buf, size_t size)
{
	K8s__Io__Kubelet__Pkg__Apis__Dra__V1__Claim claims[MAX_CLAIMS], *ptrs[MAX_CLAIMS];
	char uids[MAX_CLAIMS][64];
	assert_true(n <= MAX_CLAIMS);
	for (size_t i = 0; i < n; i++) {
		k8s__io__kubelet__pkg__apis__dra__v1__claim__init(&claims[i]);
		snprintf(uids[i], sizeof(uids[i]), "uid-%.40s", names[i]);
		claims[i].namespace_ = (char *)(uintptr_t) "default";
		claims[i].name = (char *)(uintptr_t)names[i];
		claims[i].uid = uids[i];
		ptrs[i] = &claims[i];
	}
	K8s__Io__Kubelet__Pkg__Apis__Dra__V1__NodePrepareResourcesRequest req;
	k8s__io__kubelet__pkg__apis__dra__v1__node_prepare_resources_request__init(&req);
	req.n_claims = n;
	req.claims = ptrs;
	size_t len = k8s__io__kubelet__pkg__apis__dra__v1__node_prepare_resources_request__get_packed_size(&req);
	assert_true(len <= size);
	return k8s__io__kubelet__pkg__apis__dra__v1__node_prepare_resources_request__pack(&req, buf);
}

/* The claim served on the stand-in as name, with uid "uid-" name. */
static void add_claim(struct hang_node *d, const char *name, const char *device, enum standin_mode mode,
		      unsigned throttles, unsigned retry_after_s)
{
	char uid[64];
	snprintf(uid, sizeof(uid), "uid-%.40s", name);
	standin_add_claim(d->api, name, uid, NODE_NAME, device, mode, throttles, retry_after_s);
}

/* A blocking call; its time in *ret_ms. */
static void call(struct hang_node *d, const char *method, const char *const names[], size_t n, int64_t timeout_ms,
		 struct gc_result *res, int64_t *ret_ms)
{
	uint8_t buf[REQUEST_MAX];
	size_t len = claims_request(names, n, buf, sizeof(buf));
	int64_t t0 = now_ms();
	assert_int_equal(gc_unary(d->ch, method, buf, len, timeout_ms, res), 0);
	if (ret_ms)
		*ret_ms = now_ms() - t0;
}

/* What the prepare answered for claim name: true with its device, or
 * false with its error, in out. */
static bool prepared(const struct gc_result *res, const char *name, char *out, size_t size)
{
	assert_int_equal(res->status, GRPC_STATUS_OK);
	K8s__Io__Kubelet__Pkg__Apis__Dra__V1__NodePrepareResourcesResponse *resp =
		k8s__io__kubelet__pkg__apis__dra__v1__node_prepare_resources_response__unpack(NULL, res->len, res->body);
	assert_non_null(resp);
	char uid[64];
	snprintf(uid, sizeof(uid), "uid-%.40s", name);
	bool found = false, ok = false;
	for (size_t i = 0; i < resp->n_claims; i++) {
		const K8s__Io__Kubelet__Pkg__Apis__Dra__V1__NodePrepareResourceResponse *c = resp->claims[i]->value;
		if (strcmp(resp->claims[i]->key, uid) != 0 || !c)
			continue;
		found = true;
		ok = !c->error || !c->error[0];
		snprintf(out, size, "%s", ok ? (c->n_devices == 1 ? c->devices[0]->device_name : "?") : c->error);
	}
	k8s__io__kubelet__pkg__apis__dra__v1__node_prepare_resources_response__free_unpacked(resp, NULL);
	if (!found)
		fail_msg("no answer for claim %s", name);
	return ok;
}

static void expect_prepared(const struct gc_result *res, const char *name, const char *device)
{
	char what[768];
	if (!prepared(res, name, what, sizeof(what)))
		fail_msg("claim %s: %s", name, what);
	assert_string_equal(what, device);
}

/* The claim failed; its error, which must contain each of the needles
 * (NULL-terminated). */
static void expect_failed(const struct gc_result *res, const char *name, const char *const needles[])
{
	char what[768];
	assert_false(prepared(res, name, what, sizeof(what)));
	for (size_t i = 0; needles[i]; i++)
		if (!strstr(what, needles[i]))
			fail_msg("claim %s: '%s' does not say '%s'", name, what, needles[i]);
}

/* --- calls in flight ---------------------------------------------------- */

static void call_start(struct hang_node *d, struct async_call *a, const char *method, const char *const names[],
		       size_t n, int64_t timeout_ms)
{
	uint8_t buf[REQUEST_MAX];
	size_t len = claims_request(names, n, buf, sizeof(buf));
	assert_int_equal(async_call_start(a, d->ch, d->runner, method, buf, len, timeout_ms), 0);
}

/* Once the call ended (within WAIT_MS): frees it and its result. */
static void call_free(struct async_call *a)
{
	assert_int_equal(async_call_end(a, WAIT_MS), 0);
	gc_result_clear(&a->result);
}

/* --- the health stream -------------------------------------------------- */

/* Reads the stream until device has the health wanted; fails the test
 * when that does not come within WAIT_MS. */
static void await_health(struct gc_stream *st, const char *device, V1__HealthStatus want)
{
	int64_t deadline = now_ms() + WAIT_MS;
	for (bool found = false; !found;) {
		V1__NodeWatchResourcesResponse *resp = dra_health_next(st, deadline);
		for (size_t i = 0; i < resp->n_devices; i++)
			found = found || (strcmp(resp->devices[i]->device->device_name, device) == 0 &&
					  resp->devices[i]->health == want);
		v1__node_watch_resources_response__free_unpacked(resp, NULL);
	}
}

/* --- the tests ----------------------------------------------------------- */

static const char *const held[] = { "held-0", "held-1", "held-2", "held-3", "held-4", "held-5" };

static void test_hung_reads_hold_up_nothing(void **state)
{
	(void)state;
	struct hang_node d;
	start(&d, false);
	add_claim(&d, "ready-0", "npu-0", STANDIN_ANSWER, 0, 0);
	add_claim(&d, "ready-1", "npu-1", STANDIN_ANSWER, 0, 0);
	for (size_t i = 0; i < ELEMENTSOF(held); i++) {
		char device[16];
		snprintf(device, sizeof(device), "npu-%zu", i + 2);
		add_claim(&d, held[i], device, STANDIN_HOLD, 0, 0);
	}
	struct gc_result res;
	call(&d, DRA_METHOD_V1_PREPARE, (const char *const[]){ "ready-0", "ready-1" }, 2, WAIT_MS, &res, NULL);
	expect_prepared(&res, "ready-0", "npu-0");
	expect_prepared(&res, "ready-1", "npu-1");
	gc_result_clear(&res);
	struct gc_stream *st;
	assert_int_equal(gc_stream_open(d.ch, DRA_METHOD_HEALTH_V1_WATCH, NULL, 0, &st), 0);
	await_health(st, "npu-0", V1__HEALTH_STATUS__HEALTHY);

	/* A prepare whose claims the API server does not answer. */
	struct async_call stuck;
	call_start(&d, &stuck, DRA_METHOD_V1_PREPARE, held, ELEMENTSOF(held), KUBELET_CALL_MS);
	assert_true(standin_wait(d.api, STANDIN_HELD, 1, WAIT_MS));

	/* Unprepare needs no API server, nor does a claim prepared already. */
	int64_t took;
	call(&d, DRA_METHOD_V1_UNPREPARE, (const char *const[]){ "ready-0" }, 1, WAIT_MS, &res, &took);
	assert_int_equal(res.status, GRPC_STATUS_OK);
	gc_result_clear(&res);
	if (took >= QUICK_MS)
		fail_msg("the unprepare took %lld ms behind a prepare waiting on the API server", (long long)took);
	call(&d, DRA_METHOD_V1_PREPARE, (const char *const[]){ "ready-1" }, 1, WAIT_MS, &res, &took);
	expect_prepared(&res, "ready-1", "npu-1");
	gc_result_clear(&res);
	if (took >= QUICK_MS)
		fail_msg("the prepare of a prepared claim took %lld ms", (long long)took);

	/* The health stream says each fault meanwhile: a message goes out only
	 * once the gRPC thread has seen the one before it sent. */
	const char *faulty[CHIPS] = { [0] = "health=2 errors=80E01801" };
	node_write_chip_state(&d.node, &(struct chip_state){ .chips = CHIPS, .attrs = faulty });
	await_health(st, "npu-0", V1__HEALTH_STATUS__UNHEALTHY);
	faulty[1] = faulty[0];
	node_write_chip_state(&d.node, &(struct chip_state){ .chips = CHIPS, .attrs = faulty });
	await_health(st, "npu-1", V1__HEALTH_STATUS__UNHEALTHY);
	gc_stream_close(st);

	/* The stuck call's claims are all being read at once; answered, they
	 * are prepared. */
	assert_true(standin_wait(d.api, STANDIN_HELD, ELEMENTSOF(held), WAIT_MS));
	standin_release(d.api);
	assert_true(async_call_wait(&stuck, WAIT_MS));
	for (size_t i = 0; i < ELEMENTSOF(held); i++) {
		char device[16];
		snprintf(device, sizeof(device), "npu-%zu", i + 2);
		expect_prepared(&stuck.result, held[i], device);
	}
	call_free(&stuck);
	finish(&d);
}

static void test_one_deadline_per_call(void **state)
{
	(void)state;
	struct hang_node d;
	start(&d, false);
	for (size_t i = 0; i < 4; i++) {
		char device[16];
		snprintf(device, sizeof(device), "npu-%zu", i);
		add_claim(&d, held[i], device, STANDIN_HOLD, 0, 0);
	}
	/* Four claims the server does not answer fail together at the call's
	 * deadline, not one after another. */
	struct gc_result res;
	int64_t took;
	call(&d, DRA_METHOD_V1_PREPARE, held, 4, KUBELET_CALL_MS, &res, &took);
	for (size_t i = 0; i < 4; i++)
		expect_failed(&res, held[i], (const char *const[]){ "cannot read ResourceClaim default/", NULL });
	gc_result_clear(&res);
	if (took < PREPARE_DEADLINE_MS - 100 || took > PREPARE_DEADLINE_MS + EXIT_MS)
		fail_msg("the call took %lld ms, its deadline is %d ms", (long long)took, PREPARE_DEADLINE_MS);
	finish(&d);
}

static void test_cancelled_call_stops_its_read(void **state)
{
	(void)state;
	struct hang_node d;
	start(&d, false);
	add_claim(&d, "held-0", "npu-0", STANDIN_HOLD, 0, 0);
	add_claim(&d, "held-1", "npu-1", STANDIN_HOLD, 0, 0);

	/* The kubelet's deadline passes: the read ends with it (and the answer
	 * that the claim failed may just beat the kubelet's giving up). */
	struct gc_result res;
	int64_t t0 = now_ms();
	call(&d, DRA_METHOD_V1_PREPARE, (const char *const[]){ "held-0" }, 1, QUICK_MS, &res, NULL);
	if (res.status == GRPC_STATUS_OK)
		expect_failed(&res, "held-0", (const char *const[]){ "cannot read ResourceClaim default/held-0", NULL });
	else
		assert_int_equal(res.status, GRPC_STATUS_DEADLINE_EXCEEDED);
	gc_result_clear(&res);
	assert_true(standin_wait(d.api, STANDIN_ABANDONED, 1, WAIT_MS));
	int64_t after = standin_last_abandoned_ms(d.api) - t0;
	if (after > QUICK_MS + 1500)
		fail_msg("the read went on %lld ms after a call whose deadline was %d ms", (long long)after, QUICK_MS);

	/* The kubelet cancels: the read ends at once. */
	struct async_call p;
	unsigned gets = standin_count(d.api, STANDIN_CLAIM_GETS);
	call_start(&d, &p, DRA_METHOD_V1_PREPARE, (const char *const[]){ "held-1" }, 1, KUBELET_CALL_MS);
	assert_true(standin_wait(d.api, STANDIN_CLAIM_GETS, gets + 1, WAIT_MS));
	int64_t t1 = now_ms();
	gc_async_cancel(p.async);
	assert_true(standin_wait(d.api, STANDIN_ABANDONED, 2, WAIT_MS));
	after = standin_last_abandoned_ms(d.api) - t1;
	if (after > QUICK_MS)
		fail_msg("the read went on %lld ms after its call was cancelled", (long long)after);
	assert_true(async_call_wait(&p, WAIT_MS));
	assert_int_equal(p.result.status, GRPC_STATUS_CANCELLED);
	call_free(&p);

	/* Nothing is left behind: once answered, the claim is prepared. */
	standin_release(d.api);
	call(&d, DRA_METHOD_V1_PREPARE, (const char *const[]){ "held-1" }, 1, WAIT_MS, &res, NULL);
	expect_prepared(&res, "held-1", "npu-1");
	gc_result_clear(&res);
	finish(&d);
}

static void test_retry_after(void **state)
{
	(void)state;
	struct hang_node d;
	start(&d, false);
	add_claim(&d, "busy-0", "npu-0", STANDIN_THROTTLE, 1, 1);
	add_claim(&d, "busy-1", "npu-1", STANDIN_THROTTLE, 1, 30);

	/* 429 with "Retry-After: 1": read again a second later, prepared. */
	struct gc_result res;
	call(&d, DRA_METHOD_V1_PREPARE, (const char *const[]){ "busy-0" }, 1, WAIT_MS, &res, NULL);
	expect_prepared(&res, "busy-0", "npu-0");
	gc_result_clear(&res);
	int64_t times[STANDIN_MAX_TIMES];
	assert_int_equal(standin_claim_reads(d.api, "busy-0", times), 2);
	int64_t gap = times[1] - times[0];
	if (gap < 990 || gap >= PREPARE_DEADLINE_MS)
		fail_msg("read again %lld ms after a 429 that said Retry-After: 1", (long long)gap);

	/* "Retry-After: 30" is past the call's deadline: not waited for, the
	 * claim fails saying why. */
	int64_t took;
	call(&d, DRA_METHOD_V1_PREPARE, (const char *const[]){ "busy-1" }, 1, WAIT_MS, &res, &took);
	expect_failed(&res, "busy-1", (const char *const[]){ "HTTP 429", "retry after 30 s", NULL });
	gc_result_clear(&res);
	assert_int_equal(standin_claim_reads(d.api, "busy-1", times), 1);
	if (took >= QUICK_MS)
		fail_msg("a 429 whose Retry-After is past the deadline took %lld ms to answer", (long long)took);
	finish(&d);
}

static void test_sigterm_with_claims_in_flight(void **state)
{
	(void)state;
	struct hang_node d;
	/* The publisher's requests are held too. */
	start(&d, true);
	const char *names[CHIPS];
	char name_buf[CHIPS][16];
	for (size_t i = 0; i < CHIPS; i++) {
		char device[16];
		snprintf(name_buf[i], sizeof(name_buf[i]), "held-%zu", i);
		snprintf(device, sizeof(device), "npu-%zu", i);
		names[i] = name_buf[i];
		add_claim(&d, names[i], device, STANDIN_HOLD, 0, 0);
	}
	add_claim(&d, "busy", "npu-0", STANDIN_THROTTLE, 1, 4);
	struct async_call reads, retry;
	call_start(&d, &reads, DRA_METHOD_V1_PREPARE, names, CHIPS, KUBELET_CALL_MS);
	call_start(&d, &retry, DRA_METHOD_V1_PREPARE, (const char *const[]){ "busy" }, 1, KUBELET_CALL_MS);
	/* Eight reads and the publisher's request held, the 429 answered. */
	assert_true(standin_wait(d.api, STANDIN_HELD, CHIPS + 1, WAIT_MS));
	assert_true(standin_wait(d.api, STANDIN_CLAIM_GETS, CHIPS + 1, WAIT_MS));
	int64_t times[STANDIN_MAX_TIMES];
	assert_int_equal(standin_claim_reads(d.api, "busy", times), 1);

	int64_t t0 = now_ms();
	proc_kill(d.plugin, SIGTERM);
	assert_int_equal(proc_wait(d.plugin, WAIT_MS), 0);
	int64_t took = now_ms() - t0;
	if (took >= EXIT_MS)
		fail_msg("the daemon took %lld ms to exit after SIGTERM", (long long)took);
	assert_int_equal(proc_free(d.plugin), 0);
	d.plugin = d.node.plugin = NULL;
	call_free(&reads);
	call_free(&retry);
	finish(&d);
}

/* Calls whose ends one condition variable tells of, in any order. */
#define FANOUT (CLAIMS_IN_FLIGHT / MAX_CLAIMS + 1)

struct fanout {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	unsigned ended;
	bool done[FANOUT];
	struct gc_result results[FANOUT];
	struct gc_async *async[FANOUT];
};

struct fanout_slot {
	struct fanout *f;
	size_t i;
};

static void fanout_done(void *ctx, struct gc_result *result)
{
	struct fanout_slot *slot = ctx;
	struct fanout *f = slot->f;
	pthread_mutex_lock(&f->lock);
	f->results[slot->i] = *result;
	f->done[slot->i] = true;
	f->ended++;
	pthread_cond_broadcast(&f->cond);
	pthread_mutex_unlock(&f->lock);
}

static bool fanout_wait(struct fanout *f, unsigned ended, int timeout_ms)
{
	struct timespec until = deadline_after_ms(timeout_ms);
	pthread_mutex_lock(&f->lock);
	while (f->ended < ended && pthread_cond_timedwait(&f->cond, &f->lock, &until) != ETIMEDOUT) {
	}
	bool reached = f->ended >= ended;
	pthread_mutex_unlock(&f->lock);
	return reached;
}

/* Five calls of 128 claims whose reads the server holds: four fill the
 * bound on claims waiting for reads, the one that comes last has its claims
 * refused at once; once the server answers, calls are read again. */
static void test_claims_in_flight_bounded(void **state)
{
	(void)state;
	struct hang_node d;
	start(&d, true); /* reads of claims the stand-in does not have are held too */
	static char names[FANOUT][MAX_CLAIMS][24];
	const char *ptrs[MAX_CLAIMS];
	struct fanout f = { .ended = 0 };
	struct fanout_slot slots[FANOUT];
	pthread_mutex_init(&f.lock, NULL);
	cond_init_monotonic(&f.cond);
	static uint8_t buf[REQUEST_MAX];
	for (size_t c = 0; c < FANOUT; c++) {
		for (size_t i = 0; i < MAX_CLAIMS; i++) {
			snprintf(names[c][i], sizeof(names[c][i]), "many-%zu-%zu", c, i);
			ptrs[i] = names[c][i];
		}
		size_t len = claims_request(ptrs, MAX_CLAIMS, buf, sizeof(buf));
		slots[c] = (struct fanout_slot){ .f = &f, .i = c };
		assert_int_equal(gc_unary_start(d.ch, d.runner, DRA_METHOD_V1_PREPARE, buf, len, KUBELET_CALL_MS,
						fanout_done, &slots[c], &f.async[c]),
				 0);
	}
	assert_true(fanout_wait(&f, 1, WAIT_MS));
	size_t refused = FANOUT;
	for (size_t c = 0; c < FANOUT; c++)
		if (f.done[c])
			refused = c;
	char want[64];
	snprintf(want, sizeof(want), "wait for the API server already, at most %d", CLAIMS_IN_FLIGHT);
	for (size_t i = 0; i < MAX_CLAIMS; i++)
		expect_failed(&f.results[refused], names[refused][i], (const char *const[]){ want, NULL });

	/* Answered (404: the stand-in has no such claims), the calls end. */
	standin_release(d.api);
	assert_true(fanout_wait(&f, FANOUT, WAIT_MS));
	for (size_t c = 0; c < FANOUT; c++) {
		if (c != refused)
			expect_failed(&f.results[c], names[c][0], (const char *const[]){ "no such claim (HTTP 404)", NULL });
		gc_result_clear(&f.results[c]);
		gc_async_unref(f.async[c]);
	}
	add_claim(&d, "ready-0", "npu-0", STANDIN_ANSWER, 0, 0);
	struct gc_result res;
	call(&d, DRA_METHOD_V1_PREPARE, (const char *const[]){ "ready-0" }, 1, WAIT_MS, &res, NULL);
	expect_prepared(&res, "ready-0", "npu-0");
	gc_result_clear(&res);
	pthread_cond_destroy(&f.cond);
	pthread_mutex_destroy(&f.lock);
	finish(&d);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_hung_reads_hold_up_nothing),
		cmocka_unit_test(test_one_deadline_per_call),
		cmocka_unit_test(test_cancelled_call_stops_its_read),
		cmocka_unit_test(test_retry_after),
		cmocka_unit_test(test_sigterm_with_claims_in_flight),
		cmocka_unit_test(test_claims_in_flight_bounded),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
