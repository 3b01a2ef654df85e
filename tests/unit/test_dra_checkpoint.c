/* SPDX-License-Identifier: Apache-2.0 */
/* The DRA driver's checkpoint (dra/checkpoint.c): what is saved loads back
 * the same; no file is -ENOENT; a cut, garbled or wrong-version file, a
 * duplicated uid and more claims than the bound are refused with the reason
 * and leave the checkpoint empty; put replaces an entry of the same uid and
 * stops at the bound; drop keeps the order of the others. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "base/file.h"
#include "base/parse.h"
#include "dra/checkpoint.h"
#include "support/tmpdir.h"

static struct dra_prepared *entry(const char *uid, size_t n)
{
	struct dra_prepared *p = dra_prepared_new(n);
	assert_non_null(p);
	snprintf(p->uid, sizeof(p->uid), "%s", uid);
	snprintf(p->namespace, sizeof(p->namespace), "ns");
	snprintf(p->name, sizeof(p->name), "claim-%s", uid);
	for (size_t i = 0; i < n; i++) {
		snprintf(p->devices[i].request, sizeof(p->devices[i].request), "npu");
		snprintf(p->devices[i].pool, sizeof(p->devices[i].pool), "node-1");
		snprintf(p->devices[i].device, sizeof(p->devices[i].device), "npu-%zu", i);
	}
	return p;
}

static void test_round_trip(void **state)
{
	(void)state;
	char dir[64], path[128], why[256];
	assert_int_equal(tmpdir_make(dir, sizeof(dir), "dra-checkpoint"), 0);
	snprintf(path, sizeof(path), "%s/checkpoint.json", dir);

	struct dra_checkpoint cp = { 0 }, back = { 0 };
	assert_int_equal(dra_checkpoint_load(path, &back, why, sizeof(why)), -ENOENT);
	assert_int_equal(dra_checkpoint_put(&cp, entry("a", 2)), 0);
	assert_int_equal(dra_checkpoint_put(&cp, entry("b", 0)), 0);
	assert_int_equal(dra_checkpoint_put(&cp, entry("c", 1)), 0);
	/* A monitoring claim's device, and a dynamic vNPU's. */
	cp.claims[0]->devices[1].admin_access = true;
	snprintf(cp.claims[2]->devices[0].device, sizeof(cp.claims[2]->devices[0].device), "npu-2-vir05-1c-8g-0");
	cp.claims[2]->devices[0].vnpu_id = 132;
	cp.claims[2]->devices[0].vnpu_created = true;
	/* A claim made from a template keeps the pod's name for it. */
	snprintf(cp.claims[1]->pod_claim, sizeof(cp.claims[1]->pod_claim), "npu");
	/* A save that is not durable replaces the file all the same. */
	assert_int_equal(dra_checkpoint_save(path, &cp, false), 0);
	assert_int_equal(dra_checkpoint_load(path, &back, why, sizeof(why)), 0);
	assert_int_equal(back.count, 3);
	dra_checkpoint_clear(&back);
	assert_int_equal(dra_checkpoint_save(path, &cp, true), 0);
	assert_int_equal(dra_checkpoint_load(path, &back, why, sizeof(why)), 0);
	assert_int_equal(back.count, 3);
	for (size_t i = 0; i < 3; i++) {
		const struct dra_prepared *x = cp.claims[i], *y = back.claims[i];
		assert_string_equal(x->uid, y->uid);
		assert_string_equal(x->namespace, y->namespace);
		assert_string_equal(x->name, y->name);
		assert_string_equal(x->pod_claim, y->pod_claim);
		assert_int_equal(x->n_devices, y->n_devices);
		for (size_t j = 0; j < x->n_devices; j++) {
			assert_string_equal(x->devices[j].request, y->devices[j].request);
			assert_string_equal(x->devices[j].pool, y->devices[j].pool);
			assert_string_equal(x->devices[j].device, y->devices[j].device);
			assert_int_equal(x->devices[j].admin_access, y->devices[j].admin_access);
			assert_int_equal(x->devices[j].vnpu_id, y->devices[j].vnpu_id);
			assert_int_equal(x->devices[j].vnpu_created, y->devices[j].vnpu_created);
		}
	}
	/* Drop keeps the others in order. */
	assert_true(dra_checkpoint_drop(&cp, "a"));
	assert_false(dra_checkpoint_drop(&cp, "a"));
	assert_string_equal(cp.claims[0]->uid, "b");
	assert_string_equal(cp.claims[1]->uid, "c");
	/* Put replaces the entry of the same uid. */
	assert_int_equal(dra_checkpoint_put(&cp, entry("b", 3)), 0);
	assert_int_equal(cp.count, 2);
	assert_int_equal(dra_checkpoint_find(&cp, "b")->n_devices, 3);

	dra_checkpoint_clear(&cp);
	dra_checkpoint_clear(&back);
	assert_int_equal(unlink(path), 0);
	assert_int_equal(rmdir(dir), 0);
}

static void expect_refused(const char *text, const char *reason)
{
	struct dra_checkpoint cp = { 0 };
	char why[256];
	assert_int_equal(dra_checkpoint_parse(text, strlen(text), &cp, why, sizeof(why)), -EINVAL);
	if (!strstr(why, reason))
		fail_msg("'%s' does not say '%s'", why, reason);
	assert_int_equal(cp.count, 0);
}

static void test_corrupt(void **state)
{
	(void)state;
	const char good[] = "{\"version\":1,\"claims\":[{\"uid\":\"a\",\"namespace\":\"ns\",\"name\":\"n\","
			    "\"devices\":[{\"request\":\"npu\",\"pool\":\"node-1\",\"device\":\"npu-0\"}]}]}\n";
	struct dra_checkpoint cp = { 0 };
	char why[256];
	assert_int_equal(dra_checkpoint_parse(good, strlen(good), &cp, why, sizeof(why)), 0);
	assert_int_equal(cp.count, 1);
	dra_checkpoint_clear(&cp);

	/* Every cut of the good file is refused (a torn write, were it possible). */
	for (size_t len = 0; len + 1 < strlen(good); len++) {
		char cut[sizeof(good)];
		memcpy(cut, good, len);
		cut[len] = '\0';
		assert_int_equal(dra_checkpoint_parse(cut, len, &cp, why, sizeof(why)), -EINVAL);
		assert_int_equal(cp.count, 0);
	}
	expect_refused("{\"version\":2,\"claims\":[]}", "version 2 is not 1");
	expect_refused("{\"claims\":[]}", "version is missing");
	expect_refused("{\"version\":1}", "claims is not an array");
	expect_refused("{\"version\":1,\"claims\":[{\"uid\":\"a\",\"devices\":[]},{\"uid\":\"a\",\"devices\":[]}]}",
		       "uid a is listed twice");
	expect_refused("{\"version\":1,\"claims\":[{\"uid\":\"a\",\"devices\":[{\"pool\":\"p\",\"device\":\"d\"}]}]}",
		       "claims[0].devices[0].request is missing");
	expect_refused("{\"version\":1,\"claims\":[{\"devices\":[]}]}", "claims[0].uid is missing");
	expect_refused("{\"version\":1,\"claims\":[]}garbage", "text after the object");
	expect_refused("\x01\x02\x03", "not JSON");
}

static void test_bound(void **state)
{
	(void)state;
	struct dra_checkpoint cp = { 0 };
	for (size_t i = 0; i < DRA_CHECKPOINT_MAX_CLAIMS; i++) {
		char uid[16];
		snprintf(uid, sizeof(uid), "u%zu", i);
		assert_int_equal(dra_checkpoint_put(&cp, entry(uid, 1)), 0);
	}
	struct dra_prepared *extra = entry("extra", 1);
	assert_int_equal(dra_checkpoint_put(&cp, extra), -ENOSPC);
	free(extra);

	/* A file with one claim more than the bound is refused. */
	char *text;
	assert_int_equal(dra_checkpoint_put(&cp, entry("u0", 1)), 0); /* a replacement still fits */
	assert_int_equal(dra_checkpoint_render(&cp, &text), 0);
	size_t len = strlen(text);
	char *more = malloc(len + 64);
	assert_non_null(more);
	/* Insert one claim at the front of the list. */
	const char *list = strstr(text, "\"claims\":[") + strlen("\"claims\":[");
	snprintf(more, len + 64, "%.*s{\"uid\":\"x\",\"devices\":[]},%s", (int)(list - text), text, list);
	struct dra_checkpoint back = { 0 };
	char why[128];
	assert_int_equal(dra_checkpoint_parse(more, strlen(more), &back, why, sizeof(why)), -EINVAL);
	assert_non_null(strstr(why, "more than 256 claims"));
	free(more);
	free(text);
	dra_checkpoint_clear(&cp);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_corrupt),
		cmocka_unit_test(test_bound),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
