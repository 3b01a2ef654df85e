/* SPDX-License-Identifier: Apache-2.0 */
/* The gRPC layer over a real unix socket: unary calls, errors, unknown
 * methods, oversized requests, deferred calls answered from another thread
 * (their deadline known, a cancellation or a stopping server heard at
 * once), streams with latest-wins sends, client disconnects, server
 * restarts at the same path, the socket file's mode and ownership, and the
 * errno of each way binding can fail. */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "base/macro.h"
#include "base/parse.h"
#include "base/wait.h"
#include "grpc/client.h"
#include "grpc/server.h"
#include "grpc/wire.h"
#include "support/async_call.h"
#include "support/tmpdir.h"

struct fixture {
	char dir[64];
	char path[128];
	struct gs_server *server;
	struct gc_channel *channel;

	pthread_mutex_t lock;
	pthread_cond_t cond;
	struct gs_stream *stream;
	unsigned opened, closed;

	/* The deferred call waiting for its answer, and what was seen of it. */
	struct gs_call *deferred;
	int64_t deferred_timeout_ms;
	unsigned deferred_closed, deferred_cancelled;
	bool answer_on_cancel; /* call_closed answers a cancelled call itself */
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

/* Keeps the call for the test to answer. */
static void *defer(void *ctx, struct gs_call *call, const uint8_t *req, size_t len)
{
	(void)req;
	(void)len;
	struct fixture *f = ctx;
	pthread_mutex_lock(&f->lock);
	f->deferred = call;
	f->deferred_timeout_ms = gs_call_timeout_ms(call);
	pthread_cond_broadcast(&f->cond);
	pthread_mutex_unlock(&f->lock);
	return f;
}

static void answer(struct gs_call *call, const char *text)
{
	struct gs_reply reply = { .status = GRPC_STATUS_OK, .body = (uint8_t *)strdup(text), .len = strlen(text) };
	gs_call_reply(call, &reply);
}

static void defer_closed(void *ctx, void *data, bool cancelled)
{
	struct fixture *f = ctx;
	assert_ptr_equal(data, f);
	pthread_mutex_lock(&f->lock);
	struct gs_call *owed = cancelled && f->answer_on_cancel ? f->deferred : NULL;
	if (owed)
		f->deferred = NULL;
	f->deferred_closed++;
	f->deferred_cancelled += cancelled;
	pthread_cond_broadcast(&f->cond);
	pthread_mutex_unlock(&f->lock);
	if (owed)
		answer(owed, "too late");
}

static const struct gs_method methods[] = {
	{ .path = "/test.Svc/Echo", .unary = echo },
	{ .path = "/test.Svc/Watch", .stream_open = watch_open, .stream_closed = watch_closed },
	{ .path = "/test.Svc/Later", .deferred = defer, .call_closed = defer_closed },
};

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));
	assert_int_equal(tmpdir_make(f->dir, sizeof(f->dir), "grpc-test"), 0);
	snprintf(f->path, sizeof(f->path), "%s/s.sock", f->dir);
	pthread_mutex_init(&f->lock, NULL);
	cond_init_monotonic(&f->cond);
	assert_int_equal(gs_server_start(f->path, methods, ELEMENTSOF(methods), f, &f->server), 0);
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
	struct timespec deadline = deadline_after_ms(5000);
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

/* --- deferred calls ------------------------------------------------------ */

static void later_start(struct fixture *f, struct cq_runner *runner, int64_t timeout_ms, struct async_call *a)
{
	assert_int_equal(async_call_start(a, f->channel, runner, "/test.Svc/Later", NULL, 0, timeout_ms), 0);
}

/* The call's status, once it ended (within 5 s). */
static grpc_status_code later_end(struct async_call *a)
{
	assert_int_equal(async_call_end(a, 5000), 0);
	return a->result.status;
}

/* Waits (5 s at most) for the deferred call. */
static void await_deferred(struct fixture *f)
{
	struct timespec until = deadline_after_ms(5000);
	pthread_mutex_lock(&f->lock);
	while (!f->deferred && pthread_cond_timedwait(&f->cond, &f->lock, &until) != ETIMEDOUT) {
	}
	bool came = f->deferred != NULL;
	pthread_mutex_unlock(&f->lock);
	assert_true(came);
}

/* Answers the deferred call from the test's thread. */
static void answer_deferred(struct fixture *f, const char *text)
{
	pthread_mutex_lock(&f->lock);
	struct gs_call *call = f->deferred;
	f->deferred = NULL;
	pthread_mutex_unlock(&f->lock);
	answer(call, text);
}

static void test_deferred_answered_later(void **state)
{
	struct fixture *f = *state;
	struct cq_runner *runner;
	struct async_call a;
	assert_int_equal(cq_runner_start(&runner), 0);
	later_start(f, runner, 5000, &a);
	await_deferred(f);
	/* The client's deadline, as time left when the call came (gRPC's
	 * grpc-timeout header rounds it up a little). */
	assert_true(f->deferred_timeout_ms > 0 && f->deferred_timeout_ms <= 5100);
	/* Answered from this thread, not the server's. */
	answer_deferred(f, "later");
	assert_int_equal(later_end(&a), GRPC_STATUS_OK);
	assert_int_equal(a.result.len, 5);
	assert_memory_equal(a.result.body, "later", 5);
	gc_result_clear(&a.result);
	wait_count(f, &f->deferred_closed, 1);
	assert_int_equal(f->deferred_cancelled, 0);

	/* A client with no deadline; the server keeps serving meanwhile. */
	later_start(f, runner, -1, &a);
	await_deferred(f);
	assert_true(f->deferred_timeout_ms == INT64_MAX);
	struct gc_result res;
	assert_int_equal(gc_unary(f->channel, "/test.Svc/Echo", (const uint8_t *)"x", 1, 5000, &res), 0);
	assert_int_equal(res.status, GRPC_STATUS_OK);
	gc_result_clear(&res);
	answer_deferred(f, "done");
	assert_int_equal(later_end(&a), GRPC_STATUS_OK);
	gc_result_clear(&a.result);
	cq_runner_stop(runner);
}

static void test_deferred_cancelled(void **state)
{
	struct fixture *f = *state;
	struct cq_runner *runner;
	struct async_call a;
	assert_int_equal(cq_runner_start(&runner), 0);

	/* The client cancels: heard before any answer. */
	later_start(f, runner, -1, &a);
	await_deferred(f);
	gc_async_cancel(a.async);
	wait_count(f, &f->deferred_cancelled, 1);
	assert_int_equal(later_end(&a), GRPC_STATUS_CANCELLED);
	/* The answer is still owed, and goes nowhere. */
	answer_deferred(f, "nobody");

	/* The client's deadline passes: the same. */
	later_start(f, runner, 200, &a);
	await_deferred(f);
	wait_count(f, &f->deferred_cancelled, 2);
	assert_int_equal(later_end(&a), GRPC_STATUS_DEADLINE_EXCEEDED);
	answer_deferred(f, "nobody");
	assert_int_equal(f->deferred_closed, 2);
	cq_runner_stop(runner);
}

static void test_deferred_server_stops(void **state)
{
	struct fixture *f = *state;
	struct cq_runner *runner;
	struct async_call a;
	assert_int_equal(cq_runner_start(&runner), 0);
	f->answer_on_cancel = true;
	later_start(f, runner, -1, &a);
	await_deferred(f);
	/* Stopping cancels the call and waits for its answer. */
	gs_server_stop(f->server);
	f->server = NULL;
	assert_int_equal(f->deferred_closed, 1);
	assert_int_equal(f->deferred_cancelled, 1);
	assert_true(later_end(&a) != GRPC_STATUS_OK);
	gc_result_clear(&a.result);
	cq_runner_stop(runner);
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
	assert_int_equal(gs_server_start(f->path, methods, ELEMENTSOF(methods), f, &f->server), 0);
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

/* --- binding: the socket file and each way it can fail -------------------- */

static void expect_echo(const char *path)
{
	struct gc_channel *ch;
	struct gc_result res;
	assert_int_equal(gc_channel_open(path, &ch), 0);
	assert_int_equal(gc_unary(ch, "/test.Svc/Echo", (const uint8_t *)"ping", 4, 10000, &res), 0);
	assert_int_equal(res.status, GRPC_STATUS_OK);
	assert_int_equal(res.len, 4);
	assert_memory_equal(res.body, "ping", 4);
	gc_result_clear(&res);
	gc_channel_close(ch);
}

static ino_t inode_of(const char *path)
{
	struct stat st;
	assert_int_equal(lstat(path, &st), 0);
	return st.st_ino;
}

static int start_at(const char *path)
{
	struct gs_server *server = NULL;
	int r = gs_server_start(path, methods, 2, NULL, &server);
	gs_server_stop(server);
	return r;
}

static void test_start_errno(void **state)
{
	struct fixture *f = *state;
	char path[256];

	/* One byte over the limit, then exactly at it. */
	memset(path, 0, sizeof(path));
	snprintf(path, sizeof(path), "%s/", f->dir);
	memset(path + strlen(path), 'a', SOCKET_PATH_MAX - strlen(path));
	assert_int_equal(strlen(path), SOCKET_PATH_MAX);
	assert_int_equal(start_at(path), -ENAMETOOLONG);
	path[SOCKET_PATH_MAX - 1] = '\0';
	assert_int_equal(start_at(path), 0);

	snprintf(path, sizeof(path), "%s/missing/s.sock", f->dir);
	assert_int_equal(start_at(path), -ENOENT);

	char file[128];
	snprintf(file, sizeof(file), "%s/file", f->dir);
	FILE *fp = fopen(file, "w");
	assert_non_null(fp);
	fclose(fp);
	snprintf(path, sizeof(path), "%s/s.sock", file);
	assert_int_equal(start_at(path), -ENOTDIR);
	/* Something that is not a socket is never replaced. */
	assert_int_equal(start_at(file), -EEXIST);
	assert_int_equal(unlink(file), 0);
}

/* Runs fn in a child process and returns its exit status: the child may
 * change its credentials or mounts without touching the test process. */
static int in_child(int (*fn)(const char *dir), const char *dir)
{
	fflush(NULL);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0)
		_exit(fn(dir));
	int status;
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	return WEXITSTATUS(status);
}

#define CHILD_SKIP 77

static int bind_unprivileged(const char *dir)
{
	char path[128];
	snprintf(path, sizeof(path), "%s/locked/s.sock", dir);
	if (geteuid() == 0 && (setresgid(65534, 65534, 65534) < 0 || setresuid(65534, 65534, 65534) < 0))
		return CHILD_SKIP;
	return -start_at(path);
}

static void test_start_eacces(void **state)
{
	struct fixture *f = *state;
	char locked[128];
	snprintf(locked, sizeof(locked), "%s/locked", f->dir);
	assert_int_equal(mkdir(locked, 0755), 0);
	/* The fixture's directory is 0700: let the unprivileged child reach locked/. */
	assert_int_equal(chmod(f->dir, 0711), 0);
	if (geteuid() != 0)
		assert_int_equal(chmod(locked, 0555), 0);
	int status = in_child(bind_unprivileged, f->dir);
	assert_int_equal(rmdir(locked), 0);
	if (status == CHILD_SKIP)
		skip();
	assert_int_equal(status, EACCES);
}

static int bind_read_only(const char *dir)
{
	char ro[128], path[160];
	snprintf(ro, sizeof(ro), "%s/ro", dir);
	snprintf(path, sizeof(path), "%s/s.sock", ro);
	if (unshare(CLONE_NEWNS) < 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0 ||
	    mount("tmpfs", ro, "tmpfs", MS_RDONLY, NULL) < 0)
		return CHILD_SKIP;
	return -start_at(path);
}

static void test_start_erofs(void **state)
{
	struct fixture *f = *state;
	char ro[128];
	snprintf(ro, sizeof(ro), "%s/ro", f->dir);
	assert_int_equal(mkdir(ro, 0755), 0);
	int status = in_child(bind_read_only, f->dir);
	assert_int_equal(rmdir(ro), 0);
	if (status == CHILD_SKIP) {
		print_message("cannot mount a read-only tmpfs here (needs CAP_SYS_ADMIN); skipped\n");
		skip();
	}
	assert_int_equal(status, EROFS);
}

/* A second server must not take the socket of one that still serves. */
static void test_start_refuses_live_socket(void **state)
{
	struct fixture *f = *state;
	ino_t before = inode_of(f->path);
	struct gs_server *second = NULL;
	assert_int_equal(gs_server_start(f->path, methods, 2, f, &second), -EADDRINUSE);
	assert_null(second);
	assert_int_equal(inode_of(f->path), before);
	expect_echo(f->path);
}

/* A socket nobody accepts on any more (a server that died) is replaced. */
static void test_start_replaces_stale_socket(void **state)
{
	struct fixture *f = *state;
	char path[128];
	snprintf(path, sizeof(path), "%s/stale.sock", f->dir);
	struct sockaddr_un addr = { .sun_family = AF_UNIX };
	memcpy(addr.sun_path, path, strlen(path) + 1);
	int fd = socket(AF_UNIX, SOCK_STREAM, 0);
	assert_true(fd >= 0);
	assert_int_equal(bind(fd, (struct sockaddr *)&addr, sizeof(addr)), 0);
	close(fd);

	struct gs_server *server;
	assert_int_equal(gs_server_start(path, methods, 2, f, &server), 0);
	expect_echo(path);
	gs_server_stop(server);
	/* Stopping removes the server's own socket file. */
	struct stat st;
	assert_int_equal(lstat(path, &st), -1);
	assert_int_equal(errno, ENOENT);
}

/* Stopping a server whose socket file was replaced leaves the new one alone. */
static void test_stop_leaves_a_successor_socket(void **state)
{
	struct fixture *f = *state;
	assert_int_equal(unlink(f->path), 0);
	struct gs_server *successor;
	assert_int_equal(gs_server_start(f->path, methods, 2, f, &successor), 0);
	ino_t ino = inode_of(f->path);

	gs_server_stop(f->server);
	f->server = NULL;
	assert_int_equal(inode_of(f->path), ino);
	expect_echo(f->path);
	f->server = successor;
}

/* The mode is 0600 even when the umask would let everyone in. */
static void test_socket_mode_ignores_umask(void **state)
{
	struct fixture *f = *state;
	char path[128];
	snprintf(path, sizeof(path), "%s/open.sock", f->dir);
	mode_t old = umask(0);
	struct gs_server *server;
	int r = gs_server_start(path, methods, 2, f, &server);
	umask(old);
	assert_int_equal(r, 0);
	struct stat st;
	assert_int_equal(lstat(path, &st), 0);
	assert_true(S_ISSOCK(st.st_mode));
	assert_int_equal(st.st_mode & 07777, GS_SOCKET_MODE);
	gs_server_stop(server);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_unary_echo, setup, teardown),
		cmocka_unit_test_setup_teardown(test_unary_error, setup, teardown),
		cmocka_unit_test_setup_teardown(test_unknown_method_answers_at_once, setup, teardown),
		cmocka_unit_test_setup_teardown(test_deferred_answered_later, setup, teardown),
		cmocka_unit_test_setup_teardown(test_deferred_cancelled, setup, teardown),
		cmocka_unit_test_setup_teardown(test_deferred_server_stops, setup, teardown),
		cmocka_unit_test_setup_teardown(test_oversized_request, setup, teardown),
		cmocka_unit_test_setup_teardown(test_stream_send_and_close, setup, teardown),
		cmocka_unit_test_setup_teardown(test_stream_refused_and_finished, setup, teardown),
		cmocka_unit_test_setup_teardown(test_stream_ends_when_server_stops, setup, teardown),
		cmocka_unit_test_setup_teardown(test_latest_wins, setup, teardown),
		cmocka_unit_test(test_unavailable_when_nobody_listens),
		cmocka_unit_test_setup_teardown(test_start_errno, setup, teardown),
		cmocka_unit_test_setup_teardown(test_start_eacces, setup, teardown),
		cmocka_unit_test_setup_teardown(test_start_erofs, setup, teardown),
		cmocka_unit_test_setup_teardown(test_start_refuses_live_socket, setup, teardown),
		cmocka_unit_test_setup_teardown(test_start_replaces_stale_socket, setup, teardown),
		cmocka_unit_test_setup_teardown(test_stop_leaves_a_successor_socket, setup, teardown),
		cmocka_unit_test_setup_teardown(test_socket_mode_ignores_umask, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
