/* SPDX-License-Identifier: Apache-2.0 */
/* kubelet-sim validates Register like the kubelet: the API version, the
 * resource name, and a dial-back to the plugin's endpoint before answering.
 * The plugin never sends such requests, so they are made here directly. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "base/parse.h"
#include "deviceplugin.pb-c.h"
#include "deviceplugin_api.h"
#include "base/macro.h"
#include "harness/harness.h"

static struct gc_result do_register(struct node *node, const char *version, const char *name, const char *endpoint)
{
	V1beta1__RegisterRequest req;
	v1beta1__register_request__init(&req);
	req.version = (char *)(uintptr_t)version;
	req.resource_name = (char *)(uintptr_t)name;
	req.endpoint = (char *)(uintptr_t)endpoint;
	uint8_t buf[1024];
	size_t len = v1beta1__register_request__pack(&req, buf);

	char path[200];
	assert_int_equal(str_printf(path, sizeof(path), "%s/kubelet.sock", node->socket_dir), 0);
	struct gc_channel *ch;
	assert_int_equal(gc_channel_open(path, &ch), 0);
	struct gc_result res;
	assert_int_equal(gc_unary(ch, DP_METHOD_REGISTER, buf, len, WAIT_MS, &res), 0);
	gc_channel_close(ch);
	return res;
}

static void test_rejects_like_the_kubelet(void **state)
{
	(void)state;
	struct node node;
	node_init(&node, &(struct node_options){ .chips = 0 });
	struct proc *k = node_start_kubelet(&node);

	struct gc_result res = do_register(&node, "v1alpha", "ascend.com/npu", "x.sock");
	assert_int_not_equal(res.status, GRPC_STATUS_OK);
	if (!strstr(res.details, "requested API version \"v1alpha\" is not supported by kubelet"))
		fail_msg("status %d, details '%s'", res.status, res.details);
	assert_non_null(proc_expect(k, "register-rejected", WAIT_MS));

	const char *bad_names[] = { "npu", "kubernetes.io/npu", "requests.ascend.com/npu", "Ascend.com/npu", "a.com/-x" };
	for (size_t i = 0; i < ELEMENTSOF(bad_names); i++) {
		res = do_register(&node, "v1beta1", bad_names[i], "x.sock");
		char want[128];
		snprintf(want, sizeof(want), "the ResourceName \"%s\" is invalid", bad_names[i]);
		if (res.status == GRPC_STATUS_OK || !strstr(res.details, want))
			fail_msg("'%s': status %d, details '%s'", bad_names[i], res.status, res.details);
	}

	/* A valid request whose endpoint nobody serves fails the dial-back. */
	res = do_register(&node, "v1beta1", "ascend.com/npu", "nobody.sock");
	assert_int_not_equal(res.status, GRPC_STATUS_OK);
	assert_non_null(proc_expect(k, "register-rejected resource=ascend.com/npu", WAIT_MS));
	node_fini(&node);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rejects_like_the_kubelet),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
