/* SPDX-License-Identifier: Apache-2.0 */
/* ascend-doctor's claim explanation: the simple CEL forms it evaluates on a
 * device as the driver publishes it, what it leaves unevaluated, and
 * amounts of HBM that a count could not hold. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <json-c/json.h>

#include "base/macro.h"
#include "claims.h"
#include "quantity.h"

#define D "npu.ascend.com"

/* A device of a ResourceSlice, as the driver publishes chip 3. */
static const char device_json[] =
	"{\"name\": \"npu-3\", \"attributes\": {\"type\": {\"string\": \"chip\"}, \"family\": {\"string\": \"910B\"},"
	" \"physicalID\": {\"int\": 3}, \"roceLinkUp\": {\"bool\": false},"
	" \"driverVersion\": {\"version\": \"24.1.0\"},"
	" \"resource.kubernetes.io/pcieRoot\": {\"string\": \"pci0000:3a\"}},"
	" \"capacity\": {\"memory\": {\"value\": \"64Gi\"}}}";

static void test_simple_forms(void **state)
{
	(void)state;
	struct json_object *device = json_tokener_parse(device_json);
	assert_non_null(device);
	static const struct {
		const char *expression;
		int want;
		bool evaluated;
	} cases[] = {
		{ "device.driver == \"" D "\"", 1, true },
		{ "device.driver != \"" D "\"", 0, true },
		{ "device.attributes[\"" D "\"].type == \"chip\" && device.attributes[\"" D "\"].family == '910B'", 1, true },
		{ "device.attributes[\"" D "\"].physicalID == 3", 1, true },
		{ "device.attributes[\"" D "\"].physicalID == 4", 0, true },
		{ "device.attributes[\"" D "\"].roceLinkUp == true", 0, true },
		{ "device.attributes[\"" D "\"].roceLinkUp", 0, true },
		{ "device.attributes[\"resource.kubernetes.io\"].pcieRoot == \"pci0000:3a\"", 1, true },
		{ "\"memory\" in device.capacity[\"" D "\"]", 1, true },
		{ "\"template\" in device.attributes[\"" D "\"]", 0, true },
		/* CEL errors: a missing attribute, a type mismatch. */
		{ "device.attributes[\"" D "\"].template == \"vir05_1c_8g\"", -1, true },
		{ "device.attributes[\"" D "\"].physicalID == \"3\"", -1, true },
		/* A false part decides, whatever the rest. */
		{ "device.attributes[\"" D "\"].physicalID == 4 && device.capacity[\"" D "\"].memory.compareTo(quantity(\"64Gi\")) >= 0", 0, false },
		/* Not evaluated: other forms, versions, a top-level ||, && inside a string. */
		{ "device.capacity[\"" D "\"].memory.compareTo(quantity(\"64Gi\")) >= 0", 2, false },
		{ "device.attributes[\"" D "\"].driverVersion == \"24.1.0\"", 2, true },
		{ "device.attributes[\"" D "\"].physicalID == 4 || device.attributes[\"" D "\"].physicalID == 3", 2, false },
		{ "device.attributes[\"" D "\"].family == \"a && b\"", 0, true },
	};
	for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
		bool evaluated = !cases[i].evaluated;
		int got = claims_selector_eval(cases[i].expression, D, device, &evaluated);
		if (got != cases[i].want || evaluated != cases[i].evaluated)
			fail_msg("%s: got %d (evaluated %d), want %d (%d)", cases[i].expression, got, evaluated,
				 cases[i].want, cases[i].evaluated);
	}
	json_object_put(device);
}

static void test_amounts(void **state)
{
	(void)state;
	int64_t v = 0;
	assert_int_equal(quantity_parse_amount("64Gi", &v), 0);
	assert_int_equal(v, 68719476736LL);
	/* A count stops far below a chip's HBM. */
	assert_int_equal(quantity_parse_count("64Gi", &v), -ERANGE);
	assert_int_equal(quantity_parse_amount("1000000000000000", &v), 0);
	assert_int_equal(quantity_parse_amount("1001T", &v), -ERANGE);
	assert_int_equal(quantity_parse_amount("500m", &v), -EINVAL);
}

/* Something that is no claim is refused with a reason. */
static void test_not_a_claim(void **state)
{
	(void)state;
	struct json_object *pod = json_tokener_parse("{\"kind\": \"Pod\", \"metadata\": {\"name\": \"p\"}}");
	struct claims_result res = { 0 };
	char why[128] = "";
	assert_int_equal(claims_explain(pod, NULL, NULL, NULL, NULL, D, &res, why, sizeof(why)), -EINVAL);
	assert_string_equal(why, "not a ResourceClaim");
	json_object_put(pod);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_simple_forms),
		cmocka_unit_test(test_amounts),
		cmocka_unit_test(test_not_a_claim),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
