/* SPDX-License-Identifier: Apache-2.0 */
/* The one ref/unref pair (base/refcount.h): ref and unref take NULL, the
 * last unref, and only it, frees, and references taken and dropped by
 * several threads at once leave the count where it was. The snapshot,
 * pod map and kubelet-sim plugin types are defined with it. */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "base/refcount.h"
#include "npu/inventory.h"

struct counted {
	atomic_uint refs;
	int value;
};

static unsigned frees;

static void counted_free(struct counted *c)
{
	frees++;
	free(c);
}

struct counted *counted_ref(struct counted *c);
void counted_unref(struct counted *c);
DEFINE_REFCOUNT(struct counted, counted, counted_free)

static struct counted *counted_new(void)
{
	struct counted *c = calloc(1, sizeof(*c));
	assert_non_null(c);
	atomic_init(&c->refs, 1);
	return c;
}

static void test_null_is_allowed(void **state)
{
	(void)state;
	frees = 0;
	assert_null(counted_ref(NULL));
	counted_unref(NULL);
	assert_int_equal(frees, 0);
	/* The real types follow the same rule. */
	assert_null(npu_snapshot_ref(NULL));
	npu_snapshot_unref(NULL);
}

static void test_last_unref_frees(void **state)
{
	(void)state;
	frees = 0;
	struct counted *c = counted_new();
	assert_ptr_equal(counted_ref(c), c);
	assert_ptr_equal(counted_ref(c), c);
	assert_int_equal(atomic_load(&c->refs), 3);
	counted_unref(c);
	counted_unref(c);
	assert_int_equal(frees, 0);
	assert_int_equal(atomic_load(&c->refs), 1);
	counted_unref(c);
	assert_int_equal(frees, 1);
}

#define ROUNDS 100000

static void *churn(void *arg)
{
	struct counted *c = arg;
	for (int i = 0; i < ROUNDS; i++)
		counted_unref(counted_ref(c));
	return NULL;
}

static void test_threads(void **state)
{
	(void)state;
	frees = 0;
	struct counted *c = counted_new();
	pthread_t threads[4];
	for (size_t i = 0; i < 4; i++)
		assert_int_equal(pthread_create(&threads[i], NULL, churn, c), 0);
	for (size_t i = 0; i < 4; i++)
		assert_int_equal(pthread_join(threads[i], NULL), 0);
	assert_int_equal(frees, 0);
	assert_int_equal(atomic_load(&c->refs), 1);
	counted_unref(c);
	assert_int_equal(frees, 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_null_is_allowed),
		cmocka_unit_test(test_last_unref_frees),
		cmocka_unit_test(test_threads),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
