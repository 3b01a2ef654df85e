/* SPDX-License-Identifier: Apache-2.0 */
/* Every way gs_server_start can fail once its socket is bound: the error
 * comes back, no socket file stays behind for a kubelet to dial, and no file
 * descriptor leaks. The failures are injected with the linker's --wrap on the
 * calls the server makes (tests/CMakeLists.txt), because a full fd table or a
 * thread limit cannot be aimed at one call. */
#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "grpc/cq.h"
#include "grpc/server.h"
#include "support/tmpdir.h"

/* Which call fails next, and with what; one failure per arming. */
enum fault { FAULT_NONE, FAULT_CHMOD, FAULT_LISTEN, FAULT_EVENTFD, FAULT_RUNNER, FAULT_THREAD };
static enum fault armed;
static int injected = EIO;

static bool take(enum fault f)
{
	if (armed != f)
		return false;
	armed = FAULT_NONE;
	return true;
}

int __real_chmod(const char *path, mode_t mode);
int __wrap_chmod(const char *path, mode_t mode);
int __wrap_chmod(const char *path, mode_t mode)
{
	if (take(FAULT_CHMOD)) {
		errno = injected;
		return -1;
	}
	return __real_chmod(path, mode);
}

int __real_listen(int fd, int backlog);
int __wrap_listen(int fd, int backlog);
int __wrap_listen(int fd, int backlog)
{
	if (take(FAULT_LISTEN)) {
		errno = injected;
		return -1;
	}
	return __real_listen(fd, backlog);
}

int __real_eventfd(unsigned int count, int flags);
int __wrap_eventfd(unsigned int count, int flags);
int __wrap_eventfd(unsigned int count, int flags)
{
	if (take(FAULT_EVENTFD)) {
		errno = injected;
		return -1;
	}
	return __real_eventfd(count, flags);
}

/* The accept thread is the first thread the server starts after its
 * completion-queue runner, and the first without attributes: gRPC's own
 * threads, started meanwhile when gRPC is linked statically, always pass
 * attributes. Arming FAULT_THREAD fails that one creation. */
static bool fail_next_thread;

int __real_cq_runner_start(struct cq_runner **ret_runner);
int __wrap_cq_runner_start(struct cq_runner **ret_runner);
int __wrap_cq_runner_start(struct cq_runner **ret_runner)
{
	if (take(FAULT_RUNNER))
		return -injected;
	int r = __real_cq_runner_start(ret_runner);
	if (r == 0 && take(FAULT_THREAD))
		fail_next_thread = true;
	return r;
}

int __real_pthread_create(pthread_t *thread, const pthread_attr_t *attr, void *(*fn)(void *), void *arg);
int __wrap_pthread_create(pthread_t *thread, const pthread_attr_t *attr, void *(*fn)(void *), void *arg);
int __wrap_pthread_create(pthread_t *thread, const pthread_attr_t *attr, void *(*fn)(void *), void *arg)
{
	if (fail_next_thread && !attr) {
		fail_next_thread = false;
		return injected;
	}
	return __real_pthread_create(thread, attr, fn, arg);
}

static void echo(void *ctx, const uint8_t *req, size_t len, struct gs_reply *reply)
{
	(void)ctx;
	(void)req;
	(void)len;
	(void)reply;
}

static const struct gs_method methods[] = {
	{ .path = "/test.Svc/Echo", .unary = echo },
};

static unsigned open_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	assert_non_null(d);
	unsigned n = 0;
	while (readdir(d))
		n++;
	closedir(d);
	return n;
}

struct fixture {
	char dir[64];
	char path[128];
};

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));
	assert_int_equal(tmpdir_make(f->dir, sizeof(f->dir), "grpc-unwind"), 0);
	snprintf(f->path, sizeof(f->path), "%s/s.sock", f->dir);
	/* gRPC starts its own threads and descriptors on first use: a server
	 * started and stopped once makes the descriptor counts comparable. */
	struct gs_server *server = NULL;
	assert_int_equal(gs_server_start(f->path, methods, 1, NULL, &server), 0);
	gs_server_stop(server);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;
	armed = FAULT_NONE;
	fail_next_thread = false;
	assert_int_equal(rmdir(f->dir), 0);
	free(f);
	return 0;
}

static void expect_clean_failure(struct fixture *f, enum fault fault)
{
	unsigned before = open_fds();
	struct gs_server *server = NULL;
	armed = fault;
	assert_int_equal(gs_server_start(f->path, methods, 1, NULL, &server), -injected);
	assert_int_equal(armed, FAULT_NONE); /* the fault was reached */
	assert_null(server);
	struct stat st;
	assert_int_equal(lstat(f->path, &st), -1);
	assert_int_equal(errno, ENOENT);
	assert_int_equal(open_fds(), before);

	/* Nothing is left that would stop the next start at the same path. */
	assert_int_equal(gs_server_start(f->path, methods, 1, NULL, &server), 0);
	gs_server_stop(server);
	assert_int_equal(lstat(f->path, &st), -1);
}

static void test_chmod_fails(void **state)
{
	expect_clean_failure(*state, FAULT_CHMOD);
}

static void test_listen_fails(void **state)
{
	expect_clean_failure(*state, FAULT_LISTEN);
}

static void test_eventfd_fails(void **state)
{
	expect_clean_failure(*state, FAULT_EVENTFD);
}

static void test_runner_fails(void **state)
{
	expect_clean_failure(*state, FAULT_RUNNER);
}

static void test_accept_thread_fails(void **state)
{
	injected = EAGAIN;
	expect_clean_failure(*state, FAULT_THREAD);
	injected = EIO;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_chmod_fails, setup, teardown),
		cmocka_unit_test_setup_teardown(test_listen_fails, setup, teardown),
		cmocka_unit_test_setup_teardown(test_eventfd_fails, setup, teardown),
		cmocka_unit_test_setup_teardown(test_runner_fails, setup, teardown),
		cmocka_unit_test_setup_teardown(test_accept_thread_fails, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
