/* SPDX-License-Identifier: Apache-2.0 */
/* The Kubernetes name limits (base/k8s_names.h): the longest extended
 * resource name the kubelet accepts fits RESOURCE_NAME_MAX, and one byte
 * more in the domain or in the name is refused before it could be cut.
 * The rules themselves are tested in test_parse. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "base/k8s_names.h"

/* "<domain of domain_len>/<name of name_len>" into buf. */
static void make_name(char *buf, size_t domain_len, size_t name_len)
{
	memset(buf, 'a', domain_len + 1 + name_len);
	/* Labels of at most 63 characters, as a DNS name has them. */
	for (size_t i = 60; i < domain_len - 1; i += 61)
		buf[i] = '.';
	buf[domain_len] = '/';
	buf[domain_len + 1 + name_len] = '\0';
}

static void test_longest_name_fits(void **state)
{
	(void)state;
	char name[RESOURCE_NAME_MAX + 16], why[160];
	/* The kubelet checks the domain behind "requests.": 244 characters. */
	size_t domain_max = K8S_DNS_SUBDOMAIN_MAX - strlen("requests.");
	make_name(name, domain_max, K8S_NAME_MAX);
	assert_int_equal(k8s_extended_resource_name_check(name, why, sizeof(why)), 0);
	assert_true(strlen(name) < RESOURCE_NAME_MAX);

	make_name(name, domain_max + 1, K8S_NAME_MAX);
	assert_int_equal(k8s_extended_resource_name_check(name, why, sizeof(why)), -EINVAL);
	make_name(name, domain_max, K8S_NAME_MAX + 1);
	assert_int_equal(k8s_extended_resource_name_check(name, why, sizeof(why)), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_longest_name_fits),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
