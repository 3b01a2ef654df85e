/* SPDX-License-Identifier: Apache-2.0 */
/* ascend-ranktable's pure parts (tools/ascend-ranktable): the chips from
 * ASCEND_NPU_NETWORK and from a claim's device status, a pod's place and
 * claims, the group rules, and the command line. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "group.h"
#include "member.h"
#include "options.h"

static int network(const char *text, struct rt_chips *chips, char *why)
{
	return rt_network_parse(text, strlen(text), chips, why, 256);
}

static void test_network(void **state)
{
	(void)state;
	struct rt_chips c;
	char why[256];
	assert_int_equal(network("[{\"device_id\":3,\"family\":\"A3\",\"device_ip\":\"192.168.1.11\",\"prefix_len\":24,"
				 "\"link\":\"up\",\"super_device_id\":106,\"super_pod_id\":3,\"server_index\":1},"
				 "{\"device_id\":4,\"family\":\"A3\",\"link\":\"down\"}]",
				 &c, why),
			 0);
	assert_int_equal(c.n, 2);
	assert_string_equal(c.family, "A3");
	assert_int_equal(c.chips[0].device_id, 3);
	assert_string_equal(c.chips[0].device_ip, "192.168.1.11");
	assert_ptr_equal(c.chips[0].device_ip, c.ips[0]); /* into the copy, not the parser's */
	assert_int_equal(c.chips[0].link, HCCL_LINK_UP);
	assert_true(c.chips[0].has_super_pod);
	assert_int_equal(c.chips[0].sdid, 106);
	assert_int_equal(c.chips[0].server_index, 1);
	assert_null(c.chips[1].device_ip);
	assert_int_equal(c.chips[1].link, HCCL_LINK_DOWN);
	assert_false(c.chips[1].has_super_pod);
	assert_int_equal(network("[{\"device_id\":0,\"family\":\"910B\",\"device_ip\":\"fe80::1\"}]", &c, why), 0);
	assert_int_equal(c.chips[0].link, HCCL_LINK_UNKNOWN);

	static const struct {
		const char *text, *why;
		int r;
	} bad[] = {
		{ "", "not one JSON array", -EINVAL },
		{ "{}", "not a JSON array", -EINVAL },
		{ "[]", "no chip", -EINVAL },
		{ "[1]", "not a JSON object", -EINVAL },
		{ "[{\"family\":\"910B\"}]", "without device_id", -EINVAL },
		{ "[{\"device_id\":-1,\"family\":\"910B\"}]", "out of range", -EINVAL },
		{ "[{\"device_id\":\"1\",\"family\":\"910B\"}]", "not an integer", -EINVAL },
		{ "[{\"device_id\":1}]", "no family", -EINVAL },
		{ "[{\"device_id\":1,\"family\":\"910B\",\"device_ip\":\"-.-.-.-\"}]", "no IPv4 or IPv6", -EINVAL },
		{ "[{\"device_id\":1,\"family\":\"910B\",\"link\":\"sideways\"}]", "none of up", -EINVAL },
		{ "[{\"device_id\":1,\"family\":\"A3\",\"super_pod_id\":1}]", "some without the others", -EINVAL },
		{ "[{\"device_id\":1,\"family\":\"910B\"},{\"device_id\":2,\"family\":\"910\"}]", "among chips of family",
		  -EINVAL },
		{ "[{\"device_id\":1,\"family\":\"910B\"}] x", "not one JSON array", -EINVAL },
		{ "[[[[[[[[[[1]]]]]]]]]]", "not one JSON array", -EINVAL },
		/* What is quoted stays on one line. */
		{ "[{\"device_id\":1,\"family\":\"910B\",\"device_ip\":\"\\n1.2.3.4\"}]",
		  "device_ip \"\\n1.2.3.4\" is no IPv4", -EINVAL },
		{ "[{\"device_id\":1,\"family\":\"910B\",\"link\":\"u\\rp\"}]", "link: \"u\\rp\"", -EINVAL },
		{ "[{\"device_id\":1,\"family\":\"910B\\n\"}]", "family is not a name", -EINVAL },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		why[0] = '\0';
		int r = network(bad[i].text, &c, why);
		if (r != bad[i].r || !strstr(why, bad[i].why) || strpbrk(why, "\n\r"))
			fail_msg("%s: %d '%s', not %d '%s'", bad[i].text, r, why, bad[i].r, bad[i].why);
	}
	/* 17 chips: over the bound. */
	char many[4096];
	size_t len = (size_t)snprintf(many, sizeof(many), "[");
	for (int i = 0; i < HCCL_RANKTABLE_MAX_CHIPS + 1; i++)
		len += (size_t)snprintf(many + len, sizeof(many) - len, "%s{\"device_id\":%d,\"family\":\"910B\"}",
					i ? "," : "", i);
	snprintf(many + len, sizeof(many) - len, "]");
	assert_int_equal(network(many, &c, why), -E2BIG);
	char huge[RT_NETWORK_MAX + 2];
	memset(huge, ' ', sizeof(huge) - 1);
	huge[sizeof(huge) - 1] = '\0';
	assert_int_equal(network(huge, &c, why), -E2BIG);
}

#define CLAIM_HEAD                                                                                               \
	"{\"metadata\":{\"name\":\"c\"},\"status\":{\"allocation\":{\"devices\":{\"results\":["                     \
	"{\"request\":\"npu\",\"driver\":\"npu.ascend.com\",\"pool\":\"node-a\",\"device\":\"npu-1\"},"           \
	"{\"request\":\"nic\",\"driver\":\"nic.example.com\",\"pool\":\"node-a\",\"device\":\"eth0\"}]}}"

static int claim(const char *text, struct rt_chips *chips, char *why)
{
	return rt_claim_chips(text, strlen(text), "npu.ascend.com", chips, why, 256);
}

static void test_claim(void **state)
{
	(void)state;
	struct rt_chips c = { 0 };
	char why[256] = "";
	/* The NPU driver's device with its data; the NIC's is not ours. */
	assert_int_equal(claim(CLAIM_HEAD ",\"devices\":[{\"driver\":\"nic.example.com\",\"pool\":\"node-a\",\"device\":"
				"\"eth0\",\"data\":{}},{\"driver\":\"npu.ascend.com\",\"pool\":\"node-a\",\"device\":"
				"\"npu-1\",\"data\":{\"device_id\":1,\"family\":\"910B\",\"device_ip\":\"10.1.0.2\","
				"\"link\":\"up\"},\"networkData\":{\"ips\":[\"10.1.0.2/24\"]}}]}}",
			       &c, why),
			 0);
	assert_int_equal(c.n, 1);
	assert_string_equal(c.chips[0].device_ip, "10.1.0.2");
	/* A second claim adds to the first's. */
	assert_int_equal(claim(CLAIM_HEAD ",\"devices\":[{\"driver\":\"npu.ascend.com\",\"pool\":\"node-a\",\"device\":"
				"\"npu-1\",\"data\":{\"device_id\":2,\"family\":\"910B\"}}]}}",
			       &c, why),
			 0);
	assert_int_equal(c.n, 2);
	assert_string_equal(c.chips[0].device_ip, "10.1.0.2");

	struct rt_chips before = c;
	assert_int_equal(claim("{\"status\":{}}", &c, why), -EAGAIN);
	assert_non_null(strstr(why, "not allocated yet"));
	assert_int_equal(claim(CLAIM_HEAD "}}", &c, why), -EAGAIN);
	assert_non_null(strstr(why, "device npu-1 of pool node-a has no data yet (not prepared)"));
	assert_int_equal(claim(CLAIM_HEAD ",\"devices\":[{\"driver\":\"npu.ascend.com\",\"pool\":\"node-b\",\"device\":"
				"\"npu-1\",\"data\":{\"device_id\":2,\"family\":\"910B\"}}]}}",
			       &c, why),
			 -EAGAIN); /* another pool's device of that name */
	assert_int_equal(claim("{\"status\":{\"allocation\":{\"devices\":{\"results\":[{\"driver\":\"x\"}]}}}}", &c,
			       why),
			 -ENOENT);
	assert_int_equal(claim(CLAIM_HEAD ",\"devices\":[{\"driver\":\"npu.ascend.com\",\"pool\":\"node-a\",\"device\":"
				"\"npu-1\",\"data\":{\"device_id\":2}}]}}",
			       &c, why),
			 -EINVAL);
	assert_non_null(strstr(why, "device npu-1: chip 2: no family"));
	assert_int_equal(claim("{\"status\":{\"allocation\":{\"devices\":{\"results\":7}}}}", &c, why), -EBADMSG);
	assert_int_equal(claim("[]", &c, why), -EBADMSG);
	assert_memory_equal(&c, &before, offsetof(struct rt_chips, chips)); /* untouched on failure */
	assert_int_equal(c.n, 2);
}

static json_object *parse(const char *text)
{
	json_object *o = json_tokener_parse(text);
	assert_non_null(o);
	return o;
}

static void test_pod(void **state)
{
	(void)state;
	static struct rt_pod p;
	char why[256] = "";
	json_object *o = parse(
		"{\"metadata\":{\"name\":\"infer-1\",\"uid\":\"u1\",\"labels\":{\"batch.kubernetes.io/"
		"job-completion-index\":\"1\"},\"annotations\":{\"ascend.com/npu-network\":\"[]\"},"
		"\"ownerReferences\":[{\"kind\":\"Job\",\"name\":\"infer\",\"uid\":\"j1\",\"controller\":true}]},"
		"\"spec\":{\"nodeName\":\"node-b\",\"resourceClaims\":[{\"name\":\"npu\",\"resourceClaimTemplateName\":"
		"\"t\"},{\"name\":\"direct\",\"resourceClaimName\":\"shared\"},{\"name\":\"later\","
		"\"resourceClaimTemplateName\":\"t\"}]},\"status\":{\"phase\":\"Pending\",\"hostIP\":\"10.0.0.2\","
		"\"resourceClaimStatuses\":[{\"name\":\"npu\",\"resourceClaimName\":\"infer-1-npu-x\"}]}}");
	assert_int_equal(rt_pod_read(o, &p, why, sizeof(why)), 0);
	assert_string_equal(p.name, "infer-1");
	assert_string_equal(p.node, "node-b");
	assert_string_equal(p.host_ip, "10.0.0.2");
	assert_string_equal(p.controller_uid, "j1");
	assert_true(p.has_index);
	assert_int_equal(p.index, 1);
	assert_false(p.gone);
	assert_true(p.uses_dra);
	assert_int_equal(p.n_claims, 2);
	assert_string_equal(p.claims[0], "infer-1-npu-x");
	assert_string_equal(p.claims[1], "shared");
	assert_int_equal(p.n_claims_pending, 1);
	assert_string_equal(p.network, "[]");
	json_object_put(o);

	/* Being deleted, or finished: not a member. */
	o = parse("{\"metadata\":{\"name\":\"a\",\"uid\":\"u\",\"deletionTimestamp\":\"2026-01-01T00:00:00Z\"}}");
	assert_int_equal(rt_pod_read(o, &p, why, sizeof(why)), 0);
	assert_true(p.gone);
	assert_false(p.has_index);
	json_object_put(o);
	o = parse("{\"metadata\":{\"name\":\"a\",\"uid\":\"u\"},\"status\":{\"phase\":\"Failed\"}}");
	assert_int_equal(rt_pod_read(o, &p, why, sizeof(why)), 0);
	assert_true(p.gone);
	json_object_put(o);

	static const struct {
		const char *text, *why;
	} bad[] = {
		{ "{\"metadata\":{\"name\":\"a\"}}", "no name or uid" },
		{ "{\"metadata\":{\"name\":7,\"uid\":\"u\"}}", "metadata.name: not a string" },
		{ "{\"metadata\":{\"name\":\"a\",\"uid\":\"u\",\"labels\":{\"ascend.com/hccl-index\":\"1024\"}}}",
		  "is no index in 0-1023" },
		{ "{\"metadata\":{\"name\":\"a\",\"uid\":\"u\",\"labels\":{\"apps.kubernetes.io/pod-index\":\"-1\"}}}",
		  "is no index" },
		{ "{\"metadata\":{\"name\":\"a\",\"uid\":\"u\"},\"spec\":{\"resourceClaims\":[{},{},{},{},{},{},{},{},{}]}}",
		  "more than 8 resource claims" },
		{ "[]", "not a JSON object" },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		o = parse(bad[i].text);
		why[0] = '\0';
		if (rt_pod_read(o, &p, why, sizeof(why)) >= 0 || !strstr(why, bad[i].why))
			fail_msg("%s: '%s', not '%s'", bad[i].text, why, bad[i].why);
		json_object_put(o);
	}
}

static void group_is(const char *pod, const char *label, int r, enum rt_group_kind kind, const char *selector,
		     uint32_t size, const char *describe)
{
	json_object *o = parse(pod);
	struct rt_group g;
	char why[256] = "", text[256];
	int got = rt_group_of(o, label, &g, why, sizeof(why));
	json_object_put(o);
	if (got != r)
		fail_msg("%s: %d (%s), not %d", pod, got, why, r);
	if (r < 0) {
		assert_non_null(strstr(why, selector));
		return;
	}
	assert_int_equal(g.kind, kind);
	assert_string_equal(g.selector, selector);
	assert_int_equal(g.size, size);
	rt_group_describe(&g, text, sizeof(text));
	assert_string_equal(text, describe);
}

static void test_group(void **state)
{
	(void)state;
	/* The label wins over any owner. */
	group_is("{\"metadata\":{\"labels\":{\"ascend.com/hccl-group\":\"g1\",\"leaderworkerset.sigs.k8s.io/"
		 "group-key\":\"k\"}}}",
		 RT_GROUP_LABEL_DEFAULT, 0, RT_GROUP_LABEL, "ascend.com/hccl-group=g1", 0,
		 "label ascend.com/hccl-group=g1");
	group_is("{\"metadata\":{\"labels\":{\"team/ring\":\"r\"}}}", "team/ring", 0, RT_GROUP_LABEL, "team/ring=r", 0,
		 "label team/ring=r");
	group_is("{\"metadata\":{\"labels\":{\"leaderworkerset.sigs.k8s.io/group-key\":\"abc\"},\"annotations\":{"
		 "\"leaderworkerset.sigs.k8s.io/size\":\"4\"},\"ownerReferences\":[{\"kind\":\"StatefulSet\","
		 "\"name\":\"s\",\"uid\":\"s1\",\"controller\":true}]}}",
		 RT_GROUP_LABEL_DEFAULT, 0, RT_GROUP_LWS, "leaderworkerset.sigs.k8s.io/group-key=abc", 4,
		 "LeaderWorkerSet group leaderworkerset.sigs.k8s.io/group-key=abc");
	group_is("{\"metadata\":{\"ownerReferences\":[{\"kind\":\"ReplicaSet\",\"uid\":\"x\"},{\"kind\":\"Job\","
		 "\"name\":\"infer\",\"uid\":\"j1\",\"controller\":true}]}}",
		 RT_GROUP_LABEL_DEFAULT, 0, RT_GROUP_JOB, "batch.kubernetes.io/controller-uid=j1", 0, "Job infer");
	/* A StatefulSet: the labels its pods share, not the per-pod ones. */
	group_is("{\"metadata\":{\"labels\":{\"app\":\"infer\",\"controller-revision-hash\":\"h\","
		 "\"apps.kubernetes.io/pod-index\":\"1\",\"statefulset.kubernetes.io/pod-name\":\"infer-1\"},"
		 "\"ownerReferences\":[{\"kind\":\"StatefulSet\",\"name\":\"infer\",\"uid\":\"s1\",\"controller\":true}]}}",
		 RT_GROUP_LABEL_DEFAULT, 0, RT_GROUP_STATEFULSET, "app=infer", 0, "StatefulSet infer");
	group_is("{\"metadata\":{}}", RT_GROUP_LABEL_DEFAULT, -ENOENT, RT_GROUP_LABEL,
		 "no group: the pod has no label ascend.com/hccl-group", 0, "");
	group_is("{\"metadata\":{\"ownerReferences\":[{\"kind\":\"ReplicaSet\",\"uid\":\"x\",\"controller\":true}]}}",
		 RT_GROUP_LABEL_DEFAULT, -ENOENT, RT_GROUP_LABEL, "no group", 0, "");
	group_is("{\"metadata\":{\"labels\":{\"leaderworkerset.sigs.k8s.io/group-key\":\"abc\"},\"annotations\":{"
		 "\"leaderworkerset.sigs.k8s.io/size\":\"0\"}}}",
		 RT_GROUP_LABEL_DEFAULT, -EINVAL, RT_GROUP_LWS, "is no size in 1-1024", 0, "");

	/* rt_group_has: a StatefulSet's members are its controller's. */
	struct rt_group g = { .kind = RT_GROUP_STATEFULSET, .owner_uid = "s1" };
	struct rt_pod p = { .controller_uid = "s1" };
	assert_true(rt_group_has(&g, &p));
	memcpy(p.controller_uid, "s2", 3);
	assert_false(rt_group_has(&g, &p));
	g.kind = RT_GROUP_LABEL;
	assert_true(rt_group_has(&g, &p));
}

static int options(struct rt_options *o, char *why, ...)
{
	static char args[16][64];
	char *argv[16] = { args[0] };
	int argc = 1;
	va_list ap;
	va_start(ap, why);
	snprintf(args[0], sizeof(args[0]), "ascend-ranktable");
	for (const char *a; argc < 15 && (a = va_arg(ap, const char *)); argc++) {
		snprintf(args[argc], sizeof(args[argc]), "%s", a);
		argv[argc] = args[argc];
	}
	va_end(ap);
	why[0] = '\0';
	return rt_options_parse(argc, argv, o, why, 256);
}

static void test_options(void **state)
{
	(void)state;
	struct rt_options o;
	char why[256];
	setenv("POD_NAME", "infer-0", 1);
	setenv("POD_NAMESPACE", "ml", 1);
	setenv("ASCEND_HCCL_GROUP_SIZE", "4", 1);
	assert_int_equal(options(&o, why, NULL), 0);
	assert_string_equal(o.pod_name, "infer-0");
	assert_string_equal(o.namespace_, "ml");
	assert_int_equal(o.size, 4);
	assert_string_equal(o.output, RT_OUTPUT_DEFAULT);
	assert_string_equal(o.env_file, "/user/serverid/devindex/config/hccl.env");
	assert_int_equal(o.timeout_ms, RT_TIMEOUT_DEFAULT_MS);
	assert_int_equal(o.mode, RT_MODE_AUTO);
	assert_null(o.kubeconfig);
	/* Flags override the environment. */
	assert_int_equal(options(&o, why, "--pod", "x-1", "--namespace", "n2", "--size", "2", "--mode", "dra",
				 "--timeout", "30s", "--output", "/etc/hccl/hccl.json", "--group-label", "a/b", NULL),
			 0);
	assert_string_equal(o.pod_name, "x-1");
	assert_int_equal(o.size, 2);
	assert_int_equal(o.mode, RT_MODE_DRA);
	assert_int_equal(o.timeout_ms, 30000);
	assert_string_equal(o.env_file, "/etc/hccl/hccl.env");
	assert_string_equal(o.label_key, "a/b");
	assert_int_equal(options(&o, why, "--output", "hccl.json", NULL), 0);
	assert_string_equal(o.env_file, "hccl.env");

	static const struct {
		const char *a, *b, *why;
	} bad[] = {
		{ "--size", "0", "--size: '0' is not a group size" },
		{ "--size", "1025", "is not a group size in 1-1024" },
		{ "--mode", "both", "--mode: 'both' is none of" },
		{ "--timeout", "forever", "--timeout: 'forever'" },
		{ "--timeout", "0s", "--timeout" },
		{ "--pod", "Not_A_Name", "--pod (or POD_NAME): not a pod name" },
		{ "--group-label", "a=b", "--group-label: not a label key" },
		{ "--output", "", "--output: empty" },
		{ "--frobnicate", NULL, "--frobnicate: unknown flag" },
		{ "--size", NULL, "--size: needs a value" },
		{ "extra", NULL, "'extra': no arguments" },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		int r = options(&o, why, bad[i].a, bad[i].b, NULL);
		if (r != -EINVAL || !strstr(why, bad[i].why))
			fail_msg("%s %s: %d '%s', not '%s'", bad[i].a, bad[i].b ? bad[i].b : "", r, why, bad[i].why);
	}
	setenv("ASCEND_HCCL_GROUP_SIZE", "many", 1);
	assert_int_equal(options(&o, why, NULL), -EINVAL);
	assert_non_null(strstr(why, "ASCEND_HCCL_GROUP_SIZE: 'many'"));
	unsetenv("ASCEND_HCCL_GROUP_SIZE");
	unsetenv("POD_NAME");
	assert_int_equal(options(&o, why, NULL), -EINVAL);
	assert_non_null(strstr(why, "--pod (or POD_NAME): not given"));
	assert_int_equal(options(&o, why, "--help", NULL), 0);
	assert_true(o.help);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_network), cmocka_unit_test(test_claim), cmocka_unit_test(test_pod),
		cmocka_unit_test(test_group),	cmocka_unit_test(test_options),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
