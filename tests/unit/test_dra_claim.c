/* SPDX-License-Identifier: Apache-2.0 */
/* The ResourceClaim reader (dra/claim.c): an allocated claim as the API
 * server writes it gives its uid and every result; an unallocated one
 * parses as such; every field it needs is checked (missing, wrong type, too
 * long), more results than the API allows and text that is not one JSON
 * object are refused with the reason, and the size bound holds. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "dra/claim.h"

/* Trimmed from a claim of the real cluster's kind: what the reader skips is there too. */
static const char allocated[] =
	"{\"apiVersion\":\"resource.k8s.io/v1\",\"kind\":\"ResourceClaim\","
	"\"metadata\":{\"name\":\"pod-npu-x7k\",\"namespace\":\"default\",\"uid\":\"6f1c-42\","
	"\"ownerReferences\":[{\"kind\":\"Pod\",\"name\":\"pod\"}]},"
	"\"spec\":{\"devices\":{\"requests\":[{\"name\":\"npu\",\"exactly\":{\"deviceClassName\":\"npu.ascend.com\","
	"\"count\":2}}]}},"
	"\"status\":{\"allocation\":{\"devices\":{\"results\":["
	"{\"request\":\"npu\",\"driver\":\"npu.ascend.com\",\"pool\":\"node-1\",\"device\":\"npu-0\"},"
	"{\"request\":\"npu\",\"driver\":\"npu.ascend.com\",\"pool\":\"node-1\",\"device\":\"npu-3\","
	"\"adminAccess\":null}]},"
	"\"nodeSelector\":{\"nodeSelectorTerms\":[]}},"
	"\"reservedFor\":[{\"resource\":\"pods\",\"name\":\"pod\",\"uid\":\"p1\"}]}}\n";

static int parse(const char *json, struct dra_claim *c, char *why, size_t size)
{
	return dra_claim_parse(json, strlen(json), c, why, size);
}

static void test_allocated(void **state)
{
	(void)state;
	struct dra_claim c;
	char why[256];
	assert_int_equal(parse(allocated, &c, why, sizeof(why)), 0);
	assert_string_equal(c.uid, "6f1c-42");
	assert_true(c.allocated);
	assert_int_equal(c.n_results, 2);
	assert_string_equal(c.results[1].request, "npu");
	assert_string_equal(c.results[1].driver, "npu.ascend.com");
	assert_string_equal(c.results[1].pool, "node-1");
	assert_string_equal(c.results[1].device, "npu-3");
	assert_false(c.results[1].admin_access); /* null: not asked */
	static const char admin[] = "{\"metadata\":{\"uid\":\"u\"},\"status\":{\"allocation\":{\"devices\":{\"results\":["
				    "{\"request\":\"r\",\"driver\":\"d\",\"pool\":\"p\",\"device\":\"npu-1\","
				    "\"adminAccess\":true}]}}}}";
	assert_int_equal(parse(admin, &c, why, sizeof(why)), 0);
	assert_true(c.results[0].admin_access);
	assert_string_equal(c.pod_claim_name, "");
	/* A claim made from a template names the pod's own name for it. */
	static const char templated[] = "{\"metadata\":{\"uid\":\"u\",\"annotations\":{\"a\":\"b\","
					"\"resource.kubernetes.io/pod-claim-name\":\"npu-claim\"}}}";
	assert_int_equal(parse(templated, &c, why, sizeof(why)), 0);
	assert_string_equal(c.pod_claim_name, "npu-claim");
}

static void test_not_allocated(void **state)
{
	(void)state;
	struct dra_claim c;
	char why[256];
	assert_int_equal(parse("{\"metadata\":{\"uid\":\"u\"},\"status\":{}}", &c, why, sizeof(why)), 0);
	assert_false(c.allocated);
	assert_int_equal(c.n_results, 0);
	assert_int_equal(parse("{\"metadata\":{\"uid\":\"u\"}}", &c, why, sizeof(why)), 0);
	assert_false(c.allocated);
}

static void expect_refused(const char *json, const char *reason)
{
	struct dra_claim c;
	char why[256];
	assert_int_equal(parse(json, &c, why, sizeof(why)), -EINVAL);
	if (!strstr(why, reason))
		fail_msg("'%s' does not say '%s'", why, reason);
}

#define RESULT(fields) "{\"metadata\":{\"uid\":\"u\"},\"status\":{\"allocation\":{\"devices\":{\"results\":[" fields "]}}}}"

static void test_refused(void **state)
{
	(void)state;
	expect_refused("", "not JSON");
	expect_refused("[1]", "not a JSON object");
	expect_refused("{\"metadata\":{}}", "metadata.uid is missing");
	expect_refused("{\"metadata\":{\"uid\":7}}", "metadata.uid is not a string");
	expect_refused("{\"metadata\":[]}", "metadata is not an object");
	expect_refused("{\"metadata\":{\"uid\":\"u\"}} x", "text after the object");
	expect_refused("{\"metadata\":{\"uid\":\"u\"}", "not JSON");
	expect_refused("{\"metadata\":{\"uid\":\"u\"},\"status\":{\"allocation\":[]}}",
		       "status.allocation is not an object");
	expect_refused(RESULT("{\"request\":\"r\",\"driver\":\"d\",\"pool\":\"p\"}"), "results[0].device is missing");
	expect_refused(RESULT("{\"request\":\"r\",\"driver\":\"d\",\"pool\":1,\"device\":\"x\"}"),
		       "results[0].pool is not a string");
	expect_refused(RESULT("3"), "results[0] is not an object");
	/* It names a directory in the container. */
	expect_refused("{\"metadata\":{\"uid\":\"u\",\"annotations\":{\"resource.kubernetes.io/pod-claim-name\":\"../x\"}}}",
		       "is not a DNS label");
	expect_refused("{\"metadata\":{\"uid\":\"u\",\"annotations\":{\"resource.kubernetes.io/pod-claim-name\":7}}}",
		       "is not a DNS label");
	expect_refused("{\"metadata\":{\"uid\":\"u\"},\"status\":{\"allocation\":{\"devices\":{\"results\":{}}}}}",
		       "results is not an array");
}

static void test_bounds(void **state)
{
	(void)state;
	char *json = malloc(64 * 1024);
	assert_non_null(json);
	/* 33 results: one more than the API allows. */
	size_t n = (size_t)snprintf(json, 64 * 1024, "{\"metadata\":{\"uid\":\"u\"},\"status\":{\"allocation\":"
						       "{\"devices\":{\"results\":[");
	for (int i = 0; i <= DRA_CLAIM_RESULTS_MAX; i++)
		n += (size_t)snprintf(json + n, 64 * 1024 - n,
				      "%s{\"request\":\"r\",\"driver\":\"d\",\"pool\":\"p\",\"device\":\"npu-%d\"}",
				      i ? "," : "", i);
	snprintf(json + n, 64 * 1024 - n, "]}}}}");
	expect_refused(json, "more than 32 results");

	/* A device name over 63 characters. */
	char long_name[100];
	memset(long_name, 'a', 64);
	long_name[64] = '\0';
	snprintf(json, 64 * 1024, RESULT("{\"request\":\"r\",\"driver\":\"d\",\"pool\":\"p\",\"device\":\"%s\"}"),
		 long_name);
	expect_refused(json, "results[0].device is longer than 63 characters");

	/* Nesting beyond the bound. */
	n = (size_t)snprintf(json, 64 * 1024, "{\"metadata\":{\"uid\":\"u\"},\"x\":");
	for (int i = 0; i < 100; i++)
		json[n++] = '[';
	for (int i = 0; i < 100; i++)
		json[n++] = ']';
	snprintf(json + n, 64 * 1024 - n, "}");
	expect_refused(json, "not JSON");
	free(json);

	struct dra_claim c;
	char why[128];
	assert_int_equal(dra_claim_parse("{}", DRA_CLAIM_JSON_MAX + 1, &c, why, sizeof(why)), -E2BIG);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_allocated),
		cmocka_unit_test(test_not_allocated),
		cmocka_unit_test(test_refused),
		cmocka_unit_test(test_bounds),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
