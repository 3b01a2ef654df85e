/* SPDX-License-Identifier: Apache-2.0 */
/* ascend-doctor's quantity reader: whole counts of an extended resource as
 * the API server writes them, fractions refused. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "base/macro.h"
#include "quantity.h"

static void test_whole_counts(void **state)
{
	(void)state;
	static const struct {
		const char *text;
		int64_t value;
	} good[] = {
		{ "0", 0 },	  { "2", 2 },	    { "+8", 8 },     { "16", 16 },	  { "1k", 1000 },
		{ "2Ki", 2048 },  { "1M", 1000000 }, { "1e3", 1000 }, { "1E2", 100 },	  { "1.0", 1 },
		{ "2.5e1", 25 },  { "0.5k", 500 },  { "-0", 0 },     { "1000000000", QUANTITY_MAX },
	};
	for (size_t i = 0; i < ELEMENTSOF(good); i++) {
		int64_t v = -1;
		if (quantity_parse_count(good[i].text, &v) != 0 || v != good[i].value)
			fail_msg("'%s': got %lld", good[i].text, (long long)v);
	}
}

static void test_refused(void **state)
{
	(void)state;
	static const struct {
		const char *text;
		int error;
	} bad[] = {
		{ "2000m", -EINVAL }, /* equals 2, but the API server refuses it for an extended resource */
		{ "1m", -EINVAL },    { "500u", -EINVAL }, { "3n", -EINVAL },	 { "0.5", -EINVAL },
		{ "1e-1", -EINVAL },  { "", -EINVAL },	    { "two", -EINVAL },	 { "2 ", -EINVAL },
		{ "2x", -EINVAL },    { "Ki", -EINVAL },    { "1.2.3", -EINVAL }, { "1e", -EINVAL },
		{ "-1", -ERANGE },    { "1000000001", -ERANGE }, { "1Ei", -ERANGE }, { "99999999999999999999", -ERANGE },
		{ "1e99", -ERANGE },
	};
	for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
		int64_t v = 7;
		int r = quantity_parse_count(bad[i].text, &v);
		if (r != bad[i].error || v != 7)
			fail_msg("'%s': got %d (value %lld), want %d", bad[i].text, r, (long long)v, bad[i].error);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_whole_counts),
		cmocka_unit_test(test_refused),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
