/* The gRPC layer over a real unix socket: unary calls, errors, unknown
 * methods, oversized requests, streams with latest-wins sends, client
 * disconnects, and server restarts at the same path. */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "grpc/client.h"
#include "grpc/server.h"

struct fixture {
	char dir[64];
	char path[128];
	struct gs_server *server;
	struct gc_channel *channel;

	pthread_mutex_t lock;
	pthread_cond_t cond;
	struct gs_stream *stream;
	unsigned opened, closed;
};

static void echo(void *ctx, const uint8_t *req, size_t len, struct gs_reply *reply)
{
	(void)ctx;
	if (len == 4 && memcmp(req, "fail", 4) == 0) {
		gs_reply_error(reply, GRPC_STATUS_INVALID_ARGUMENT, "bad request: %s", "fail");
		return;
	}
	if (len == 0)
		return;
	reply->body = malloc(len);
	memcpy(reply->body, req, len);
	reply->len = len;
}

static grpc_status_code watch_open(void *ctx, struct gs_stream *s, const uint8_t *req, size_t len,
				   struct gs_reply *reply)
{
	struct fixture *f = ctx;
	if (len == 6 && memcmp(req, "refuse", 6) == 0) {
		gs_reply_error(reply, GRPC_STATUS_RESOURCE_EXHAUSTED, "too many watchers");
		return reply->status;
	}
	gs_stream_ref(s);
	pthread_mutex_lock(&f->lock);
	f->stream = s;
	f->opened++;
	pthread_cond_broadcast(&f->cond);
	pthread_mutex_unlock(&f->lock);
	gs_stream_send(s, (const uint8_t *)"first", 5);
	return GRPC_STATUS_OK;
}

static void watch_closed(void *ctx, struct gs_stream *s)
{
	struct fixture *f = ctx;
	pthread_mutex_lock(&f->lock);
	if (f->stream == s)
		f->stream = NULL;
	f->closed++;
	pthread_cond_broadcast(&f->cond);
	pthread_mutex_unlock(&f->lock);
	gs_stream_unref(s);
}

static const struct gs_method methods[] = {
	{ .path = "/test.Svc/Echo", .unary = echo },
	{ .path = "/test.Svc/Watch", .stream_open = watch_open, .stream_closed = watch_closed },
};

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));
	snprintf(f->dir, sizeof(f->dir), "/tmp/grpc-test-XXXXXX");
	assert_non_null(mkdtemp(f->dir));
	snprintf(f->path, sizeof(f->path), "%s/s.sock", f->dir);
	pthread_mutex_init(&f->lock, NULL);
	pthread_cond_init(&f->cond, NULL);
	assert_int_equal(gs_server_start(f->path, methods, 2, f, &f->server), 0);
	assert_int_equal(gc_channel_open(f->path, &f->channel), 0);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;
	gc_channel_close(f->channel);
	gs_server_stop(f->server);
	rmdir(f->dir);
	pthread_cond_destroy(&f->cond);
	pthread_mutex_destroy(&f->lock);
	free(f);
	return 0;
}

static void test_unary_echo(void **state)
{
	struct fixture *f = *state;
	struct gc_result res;
	assert_int_equal(gc_unary(f->channel, "/test.Svc/Echo", (const uint8_t *)"hello", 5, 5000, &res), 0);
	assert_int_equal(res.status, GRPC_STATUS_OK);
	assert_int_equal(res.len, 5);
	assert_memory_equal(res.body, "hello", 5);
	gc_result_clear(&res);

	/* An empty message is a valid protobuf message. */
	assert_int_equal(gc_unary(f->channel, "/test.Svc/Echo", NULL, 0, 5000, &res), 0);
	assert_int_equal(res.status, GRPC_STATUS_OK);
	assert_int_equal(res.len, 0);
	gc_result_clear(&res);
}

static void test_unary_error(void **state)
{
	struct fixture *f = *state;
	struct gc_result res;
	assert_int_equal(gc_unary(f->channel, "/test.Svc/Echo", (const uint8_t *)"fail", 4, 5000, &res), 0);
	assert_int_equal(res.status, GRPC_STATUS_INVALID_ARGUMENT);
	assert_string_equal(res.details, "bad request: fail");
	assert_null(res.body);
}

static void test_unknown_method_answers_at_once(void **state)
{
	struct fixture *f = *state;
	struct gc_result res;
	/* No deadline: a server without a generic handler would hang here. */
	assert_int_equal(gc_unary(f->channel, "/test.Svc/Nope", NULL, 0, -1, &res), 0);
	assert_int_equal(res.status, GRPC_STATUS_UNIMPLEMENTED);
	/* The server keeps serving afterwards. */
	assert_int_equal(gc_unary(f->channel, "/test.Svc/Echo", (const uint8_t *)"x", 1, 5000, &res), 0);
	assert_int_equal(res.status, GRPC_STATUS_OK);
	gc_result_clear(&res);
}

static void test_oversized_request(void **state)
{
	struct fixture *f = *state;
	size_t len = GS_MAX_RECEIVE_BYTES + 1024;
	uint8_t *big = calloc(1, len);
	struct gc_result res;
	assert_int_equal(gc_unary(f->channel, "/test.Svc/Echo", big, len, 10000, &res), 0);
	assert_int_equal(res.status, GRPC_STATUS_RESOURCE_EXHAUSTED);
	free(big);
	assert_int_equal(gc_unary(f->channel, "/test.Svc/Echo", (const uint8_t *)"x", 1, 5000, &res), 0);
	assert_int_equal(res.status, GRPC_STATUS_OK);
	gc_result_clear(&res);
}

static void wait_count(struct fixture *f, unsigned *counter, unsigned want)
{
	struct timespec deadline;
	clock_gettime(CLOCK_REALTIME, &deadline);
	deadline.tv_sec += 5;
	pthread_mutex_lock(&f->lock);
	while (*counter < want)
		if (pthread_cond_timedwait(&f->cond, &f->lock, &deadline) == ETIMEDOUT)
			break;
	unsigned got = *counter;
	pthread_mutex_unlock(&f->lock);
	assert_int_equal(got, want);
}

static void expect_message(struct gc_stream *s, const char *want)
{
	uint8_t *body = NULL;
	size_t len = 0;
	assert_int_equal(gc_stream_next(s, 5000, &body, &len), 0);
	assert_int_equal(len, strlen(want));
	assert_memory_equal(body, want, len);
	free(body);
}

static void test_stream_send_and_close(void **state)
{
	struct fixture *f = *state;
	struct gc_stream *s;
	assert_int_equal(gc_stream_open(f->channel, "/test.Svc/Watch", NULL, 0, &s), 0);
	expect_message(s, "first");
	wait_count(f, &f->opened, 1);

	pthread_mutex_lock(&f->lock);
	struct gs_stream *server_side = f->stream;
	gs_stream_ref(server_side);
	pthread_mutex_unlock(&f->lock);

	assert_int_equal(gs_stream_send(server_side, (const uint8_t *)"second", 6), 0);
	expect_message(s, "second");

	/* Nothing more was sent: the reader times out and stays usable. */
	uint8_t *body = NULL;
	size_t len = 0;
	assert_int_equal(gc_stream_next(s, 50, &body, &len), -ETIMEDOUT);

	/* The client going away is noticed by the server. */
	gc_stream_close(s);
	wait_count(f, &f->closed, 1);
	assert_int_equal(gs_stream_send(server_side, (const uint8_t *)"late", 4), -EPIPE);
	gs_stream_unref(server_side);
}

static void test_stream_refused_and_finished(void **state)
{
	struct fixture *f = *state;
	struct gc_stream *s;
	uint8_t *body = NULL;
	size_t len = 0;
	grpc_status_code status;
	const char *details;

	assert_int_equal(gc_stream_open(f->channel, "/test.Svc/Watch", (const uint8_t *)"refuse", 6, &s), 0);
	assert_int_equal(gc_stream_next(s, 5000, &body, &len), -EPIPE);
	gc_stream_status(s, &status, &details);
	assert_int_equal(status, GRPC_STATUS_RESOURCE_EXHAUSTED);
	assert_string_equal(details, "too many watchers");
	gc_stream_close(s);

	assert_int_equal(gc_stream_open(f->channel, "/test.Svc/Watch", NULL, 0, &s), 0);
	expect_message(s, "first");
	pthread_mutex_lock(&f->lock);
	gs_stream_finish(f->stream, GRPC_STATUS_UNAVAILABLE, "going away");
	pthread_mutex_unlock(&f->lock);
	assert_int_equal(gc_stream_next(s, 5000, &body, &len), -EPIPE);
	gc_stream_status(s, &status, &details);
	assert_int_equal(status, GRPC_STATUS_UNAVAILABLE);
	gc_stream_close(s);
}

static void test_stream_ends_when_server_stops(void **state)
{
	struct fixture *f = *state;
	struct gc_stream *s;
	uint8_t *body = NULL;
	size_t len = 0;

	assert_int_equal(gc_stream_open(f->channel, "/test.Svc/Watch", NULL, 0, &s), 0);
	expect_message(s, "first");
	gs_server_stop(f->server);
	f->server = NULL;
	assert_int_equal(f->closed, 1);
	assert_int_equal(gc_stream_next(s, 5000, &body, &len), -EPIPE);
	gc_stream_close(s);

	/* Stopping unlinks the socket; a new server binds the same path. */
	struct stat st;
	assert_int_equal(stat(f->path, &st), -1);
	assert_int_equal(gs_server_start(f->path, methods, 2, f, &f->server), 0);
	struct gc_result res;
	assert_int_equal(gc_unary(f->channel, "/test.Svc/Echo", (const uint8_t *)"again", 5, 5000, &res), 0);
	assert_int_equal(res.status, GRPC_STATUS_OK);
	gc_result_clear(&res);
}

static void test_latest_wins(void **state)
{
	struct fixture *f = *state;
	struct gc_stream *s;
	assert_int_equal(gc_stream_open(f->channel, "/test.Svc/Watch", NULL, 0, &s), 0);
	expect_message(s, "first");

	pthread_mutex_lock(&f->lock);
	struct gs_stream *server_side = f->stream;
	gs_stream_ref(server_side);
	pthread_mutex_unlock(&f->lock);

	/* Many sends in a burst: the reader must end up at the last one. */
	char msg[16];
	for (int i = 0; i < 200; i++) {
		snprintf(msg, sizeof(msg), "m%d", i);
		assert_int_equal(gs_stream_send(server_side, (const uint8_t *)msg, strlen(msg)), 0);
	}
	uint8_t *body = NULL;
	size_t len = 0;
	char last[16] = "";
	while (strcmp(last, "m199") != 0) {
		assert_int_equal(gc_stream_next(s, 5000, &body, &len), 0);
		assert_true(len < sizeof(last));
		memcpy(last, body, len);
		last[len] = '\0';
		free(body);
	}
	gs_stream_unref(server_side);
	gc_stream_close(s);
}

static void test_unavailable_when_nobody_listens(void **state)
{
	(void)state;
	struct gc_channel *ch;
	struct gc_result res;
	assert_int_equal(gc_channel_open("/tmp/does-not-exist-ascend.sock", &ch), 0);
	assert_int_equal(gc_unary(ch, "/test.Svc/Echo", NULL, 0, 2000, &res), 0);
	assert_int_equal(res.status, GRPC_STATUS_UNAVAILABLE);
	gc_channel_close(ch);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_unary_echo, setup, teardown),
		cmocka_unit_test_setup_teardown(test_unary_error, setup, teardown),
		cmocka_unit_test_setup_teardown(test_unknown_method_answers_at_once, setup, teardown),
		cmocka_unit_test_setup_teardown(test_oversized_request, setup, teardown),
		cmocka_unit_test_setup_teardown(test_stream_send_and_close, setup, teardown),
		cmocka_unit_test_setup_teardown(test_stream_refused_and_finished, setup, teardown),
		cmocka_unit_test_setup_teardown(test_stream_ends_when_server_stops, setup, teardown),
		cmocka_unit_test_setup_teardown(test_latest_wins, setup, teardown),
		cmocka_unit_test(test_unavailable_when_nobody_listens),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
