/* SPDX-License-Identifier: Apache-2.0 */
/* ascend-doctor's scheduling rules (fit.h) on small clusters written as
 * kubectl JSON: the pod's request (init containers, sidecars, requests over
 * limits), each filter and its reason code, and the scheduler-style summary. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>
#include <json-c/json.h>

#include "fit.h"

#define RES "ascend.com/npu"

static struct json_object *parse(const char *text)
{
	struct json_object *o = json_tokener_parse(text);
	if (!o)
		fail_msg("bad test JSON: %s", text);
	return o;
}

static int64_t request_of(const char *pod_json)
{
	struct json_object *pod = parse(pod_json);
	int64_t v = -1;
	char why[256];
	int r = fit_pod_request(pod, RES, &v, why, sizeof(why));
	json_object_put(pod);
	return r < 0 ? r : v;
}

static void test_request(void **state)
{
	(void)state;
	/* Limits alone count (requests default to them); requests win when both. */
	assert_int_equal(request_of("{\"spec\":{\"containers\":[{\"resources\":{\"limits\":{\"" RES "\":\"2\"}}}]}}"), 2);
	assert_int_equal(request_of("{\"spec\":{\"containers\":[{\"resources\":{\"limits\":{\"" RES "\":4},"
				    "\"requests\":{\"" RES "\":\"3\"}}}]}}"),
			 3);
	/* Containers add up; an init container counts alone: max(1 + 1, 4). */
	assert_int_equal(request_of("{\"spec\":{\"containers\":[{\"resources\":{\"limits\":{\"" RES "\":\"1\"}}},"
				    "{\"resources\":{\"limits\":{\"" RES "\":\"1\"}}}],"
				    "\"initContainers\":[{\"resources\":{\"limits\":{\"" RES "\":\"4\"}}}]}}"),
			 4);
	/* A sidecar (restartPolicy Always) runs on beside the rest: 1 + 2 = 3
	 * for the containers, 2 + 2 = 4 for the init container after it. */
	assert_int_equal(request_of("{\"spec\":{\"containers\":[{\"resources\":{\"limits\":{\"" RES "\":\"1\"}}}],"
				    "\"initContainers\":[{\"restartPolicy\":\"Always\",\"resources\":{\"limits\":{\"" RES
				    "\":\"2\"}}},{\"resources\":{\"limits\":{\"" RES "\":\"2\"}}}]}}"),
			 4);
	assert_int_equal(request_of("{\"spec\":{\"containers\":[{\"name\":\"a\"}]}}"), 0);
	assert_int_equal(request_of("{\"spec\":{\"containers\":[{\"resources\":{\"limits\":{\"" RES "\":\"2000m\"}}}]}}"),
			 -EINVAL);
	assert_int_equal(request_of("{\"spec\":{\"containers\":[{\"resources\":{\"limits\":{\"" RES "\":1.5}}}]}}"),
			 -EINVAL);
}

/* Evaluates the pod against nodes and pods (JSON texts). */
static void evaluate(const char *pod_json, const char *nodes_json, const char *pods_json, struct fit_cluster *c)
{
	struct json_object *pod = parse(pod_json), *nodes = parse(nodes_json);
	struct json_object *pods = pods_json ? parse(pods_json) : NULL;
	char why[256] = "";
	int r = fit_cluster_evaluate(pod, nodes, pods, RES, c, why, sizeof(why));
	if (r < 0)
		fail_msg("evaluate: %d %s", r, why);
	json_object_put(pod);
	json_object_put(nodes);
	json_object_put(pods);
}

static bool has_reason(const struct fit_node *n, enum fit_code code, const char *detail)
{
	for (size_t i = 0; i < n->n_reasons; i++)
		if (n->reasons[i].code == code && (!detail || strstr(n->reasons[i].detail, detail)))
			return true;
	return false;
}

#define READY "\"conditions\":[{\"type\":\"Ready\",\"status\":\"True\"}]"
#define NPU(n) "\"capacity\":{\"" RES "\":\"" #n "\"},\"allocatable\":{\"" RES "\":\"" #n "\"}"
#define POD2 "{\"metadata\":{\"name\":\"p\",\"namespace\":\"ns\"},\"spec\":{\"containers\":[{\"resources\":{\"limits\":{\"" RES "\":\"2\"}}}]"

static void test_insufficient_counts_bound_pods(void **state)
{
	(void)state;
	struct fit_cluster c;
	const char *nodes = "{\"items\":[{\"metadata\":{\"name\":\"n1\"},\"status\":{" NPU(8) "," READY "}}]}";
	/* Two running pods hold 6; a finished one and one on another node do not count. */
	const char *pods = "{\"items\":["
			   "{\"metadata\":{\"name\":\"a\"},\"spec\":{\"nodeName\":\"n1\",\"containers\":[{\"resources\":{\"limits\":{\"" RES "\":\"4\"}}}]},\"status\":{\"phase\":\"Running\"}},"
			   "{\"metadata\":{\"name\":\"b\"},\"spec\":{\"nodeName\":\"n1\",\"containers\":[{\"resources\":{\"limits\":{\"" RES "\":\"2\"}}}]},\"status\":{\"phase\":\"Pending\"}},"
			   "{\"metadata\":{\"name\":\"c\"},\"spec\":{\"nodeName\":\"n1\",\"containers\":[{\"resources\":{\"limits\":{\"" RES "\":\"8\"}}}]},\"status\":{\"phase\":\"Succeeded\"}},"
			   "{\"metadata\":{\"name\":\"d\"},\"spec\":{\"nodeName\":\"n2\",\"containers\":[{\"resources\":{\"limits\":{\"" RES "\":\"8\"}}}]},\"status\":{\"phase\":\"Running\"}}]}";
	evaluate(POD2 "}}", nodes, pods, &c);
	assert_int_equal(c.n_fit, 1);
	assert_int_equal(c.nodes[0].used, 6);
	assert_int_equal(c.nodes[0].free, 2);
	assert_string_equal(c.summary, "1/1 nodes are available.");
	fit_cluster_clear(&c);

	evaluate("{\"metadata\":{\"name\":\"p\"},\"spec\":{\"containers\":[{\"resources\":{\"limits\":{\"" RES "\":\"3\"}}}]}}",
		 nodes, pods, &c);
	assert_int_equal(c.n_fit, 0);
	assert_true(has_reason(&c.nodes[0], FIT_INSUFFICIENT_NPU, "6 taken by 2 pod(s), 2 free, 3 requested"));
	assert_string_equal(c.summary, "0/1 nodes are available: 1 Insufficient ascend.com/npu.");
	assert_non_null(strstr(c.fix, "request at most 2"));
	fit_cluster_clear(&c);
}

static void test_filters(void **state)
{
	(void)state;
	struct fit_cluster c;
	const char *nodes =
		"{\"items\":["
		"{\"metadata\":{\"name\":\"tainted\"},\"spec\":{\"taints\":[{\"key\":\"ascend.com/npu\",\"value\":\"true\",\"effect\":\"NoSchedule\"}]},\"status\":{" NPU(8) "," READY "}},"
		"{\"metadata\":{\"name\":\"soft\"},\"spec\":{\"taints\":[{\"key\":\"x\",\"effect\":\"PreferNoSchedule\"}]},\"status\":{" NPU(8) "," READY "}},"
		"{\"metadata\":{\"name\":\"cordoned\"},\"spec\":{\"unschedulable\":true},\"status\":{" NPU(8) "," READY "}},"
		"{\"metadata\":{\"name\":\"down\"},\"status\":{" NPU(8) ",\"conditions\":[{\"type\":\"Ready\",\"status\":\"Unknown\",\"message\":\"Kubelet stopped posting node status.\"}]}},"
		"{\"metadata\":{\"name\":\"sick\"},\"status\":{\"capacity\":{\"" RES "\":\"8\"},\"allocatable\":{\"" RES "\":\"1\"}," READY "}},"
		"{\"metadata\":{\"name\":\"cpu\"},\"status\":{" READY "}}]}";
	evaluate(POD2 "}}", nodes, NULL, &c);
	assert_int_equal(c.n_nodes, 6);
	assert_int_equal(c.n_fit, 1);
	assert_true(c.nodes[1].fits); /* PreferNoSchedule does not filter */
	assert_true(has_reason(&c.nodes[0], FIT_UNTOLERATED_TAINT, "ascend.com/npu=true:NoSchedule"));
	assert_string_equal(c.nodes[0].scheduler_reason, "node(s) had untolerated taint {ascend.com/npu: true}");
	assert_true(has_reason(&c.nodes[2], FIT_UNSCHEDULABLE, NULL));
	assert_true(has_reason(&c.nodes[3], FIT_NOT_READY, "Ready is Unknown: Kubelet stopped posting"));
	assert_true(has_reason(&c.nodes[4], FIT_INSUFFICIENT_NPU, NULL));
	assert_true(has_reason(&c.nodes[4], FIT_UNHEALTHY_NPU, "capacity 8 > allocatable 1: 7 chip(s) Unhealthy"));
	assert_true(has_reason(&c.nodes[5], FIT_NO_NPU_CAPACITY, "advertises no ascend.com/npu"));
	assert_string_equal(c.summary, "1/6 nodes are available: 1 node(s) had untolerated taint {ascend.com/npu: true}, "
				       "1 node(s) were not ready, 1 node(s) were unschedulable, 2 Insufficient ascend.com/npu.");
	fit_cluster_clear(&c);

	/* A plugin that runs but found no chips advertises 0. */
	evaluate(POD2 "}}", "[{\"metadata\":{\"name\":\"zero\"},\"status\":{" NPU(0) "," READY "}}]", NULL, &c);
	assert_true(has_reason(&c.nodes[0], FIT_NO_NPU_CAPACITY, "advertises 0 ascend.com/npu: its device plugin runs"));
	assert_string_equal(c.summary, "0/1 nodes are available: 1 Insufficient ascend.com/npu.");
	fit_cluster_clear(&c);

	/* The toleration of the guide, and one with Exists, let it on. */
	evaluate(POD2 ",\"tolerations\":[{\"key\":\"ascend.com/npu\",\"operator\":\"Equal\",\"value\":\"true\",\"effect\":\"NoSchedule\"}]}}",
		 nodes, NULL, &c);
	assert_true(c.nodes[0].fits);
	fit_cluster_clear(&c);
	evaluate(POD2 ",\"tolerations\":[{\"operator\":\"Exists\"}]}}", nodes, NULL, &c);
	assert_true(c.nodes[0].fits);
	assert_true(c.nodes[2].fits); /* tolerating everything covers the cordon too */
	fit_cluster_clear(&c);
	/* The wrong value does not. */
	evaluate(POD2 ",\"tolerations\":[{\"key\":\"ascend.com/npu\",\"value\":\"false\",\"effect\":\"NoSchedule\"}]}}", nodes,
		 NULL, &c);
	assert_false(c.nodes[0].fits);
	fit_cluster_clear(&c);
}

static void test_labels(void **state)
{
	(void)state;
	struct fit_cluster c;
	const char *nodes =
		"[{\"metadata\":{\"name\":\"a\",\"labels\":{\"npu\":\"true\",\"chips\":\"8\",\"chip\":\"910B3\"}},\"status\":{" NPU(8) "," READY "}},"
		"{\"metadata\":{\"name\":\"b\",\"labels\":{\"npu\":\"true\",\"chips\":\"4\",\"chip\":\"310P3\"}},\"status\":{" NPU(8) "," READY "}},"
		"{\"metadata\":{\"name\":\"c\",\"labels\":{\"chips\":\"16\",\"old\":\"x\"}},\"status\":{" NPU(8) "," READY "}}]";
	static const struct {
		const char *term;
		bool fits[3];
	} cases[] = {
		{ "{\"key\":\"npu\",\"operator\":\"In\",\"values\":[\"true\"]}", { true, true, false } },
		{ "{\"key\":\"chip\",\"operator\":\"NotIn\",\"values\":[\"310P3\"]}", { true, false, true } },
		{ "{\"key\":\"old\",\"operator\":\"Exists\"}", { false, false, true } },
		{ "{\"key\":\"old\",\"operator\":\"DoesNotExist\"}", { true, true, false } },
		{ "{\"key\":\"chips\",\"operator\":\"Gt\",\"values\":[\"4\"]}", { true, false, true } },
		{ "{\"key\":\"chips\",\"operator\":\"Lt\",\"values\":[\"16\"]}", { true, true, false } },
		{ "{\"key\":\"chips\",\"operator\":\"Gt\",\"values\":[\"x\"]}", { false, false, false } },
		{ "{\"key\":\"chips\",\"operator\":\"Near\",\"values\":[\"4\"]}", { false, false, false } },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char pod[1024];
		snprintf(pod, sizeof(pod),
			 POD2 ",\"affinity\":{\"nodeAffinity\":{\"requiredDuringSchedulingIgnoredDuringExecution\":"
			      "{\"nodeSelectorTerms\":[{\"matchExpressions\":[%s]}]}}}}}",
			 cases[i].term);
		evaluate(pod, nodes, NULL, &c);
		for (size_t k = 0; k < 3; k++) {
			if (c.nodes[k].fits != cases[i].fits[k])
				fail_msg("%s on node %zu: fits %d", cases[i].term, k, c.nodes[k].fits);
			if (!c.nodes[k].fits && !has_reason(&c.nodes[k], FIT_NODE_AFFINITY_MISMATCH, NULL))
				fail_msg("%s on node %zu: no node-affinity-mismatch", cases[i].term, k);
		}
		fit_cluster_clear(&c);
	}
	/* Terms are ORed; matchFields names the node. */
	evaluate(POD2 ",\"affinity\":{\"nodeAffinity\":{\"requiredDuringSchedulingIgnoredDuringExecution\":"
		      "{\"nodeSelectorTerms\":[{\"matchFields\":[{\"key\":\"metadata.name\",\"operator\":\"In\",\"values\":[\"c\"]}]},"
		      "{\"matchExpressions\":[{\"key\":\"chip\",\"operator\":\"In\",\"values\":[\"310P3\"]}]}]}}}}}",
		 nodes, NULL, &c);
	assert_false(c.nodes[0].fits);
	assert_true(c.nodes[1].fits);
	assert_true(c.nodes[2].fits);
	fit_cluster_clear(&c);
	/* nodeSelector. */
	evaluate(POD2 ",\"nodeSelector\":{\"chip\":\"910B3\"}}}", nodes, NULL, &c);
	assert_true(c.nodes[0].fits);
	assert_true(has_reason(&c.nodes[1], FIT_NODE_SELECTOR_MISMATCH, "nodeSelector chip=910B3: the node has chip=310P3"));
	assert_true(has_reason(&c.nodes[2], FIT_NODE_SELECTOR_MISMATCH, "the node has no label chip"));
	assert_string_equal(c.nodes[1].scheduler_reason, "node(s) didn't match Pod's node affinity/selector");
	assert_non_null(strstr(c.fix, "none needed"));
	fit_cluster_clear(&c);
}

static void test_extended_resource(void **state)
{
	(void)state;
	char name[64] = "untouched";
	struct json_object *pod = parse("{\"spec\":{\"containers\":[{\"resources\":{\"limits\":{\"cpu\":\"1\","
					"\"ascend.com/npu-vir04-3c\":\"1\",\"example.kubernetes.io/x\":\"1\","
					"\"kubernetes.io/y\":\"1\"}}}]}}");
	assert_int_equal(fit_pod_extended_resource(pod, name, sizeof(name)), 0);
	assert_string_equal(name, "ascend.com/npu-vir04-3c");
	assert_int_equal(fit_pod_extended_resource(pod, name, 8), -ENAMETOOLONG);
	json_object_put(pod);
	pod = parse("{\"spec\":{\"containers\":[{\"resources\":{\"limits\":{\"ascend.com/npu\":\"1\"}}}],"
		    "\"initContainers\":[{\"resources\":{\"requests\":{\"huawei.com/Ascend910\":\"1\"}}}]}}");
	assert_int_equal(fit_pod_extended_resource(pod, name, sizeof(name)), -E2BIG);
	json_object_put(pod);
	pod = parse("{\"spec\":{\"containers\":[{\"resources\":{\"limits\":{\"memory\":\"1Gi\"}}}]}}");
	assert_int_equal(fit_pod_extended_resource(pod, name, sizeof(name)), -ENOENT);
	json_object_put(pod);
	assert_string_equal(name, "ascend.com/npu-vir04-3c");
}

static void test_bad_input(void **state)
{
	(void)state;
	struct fit_cluster c = { 0 };
	char why[256] = "";
	struct json_object *pod = parse("{\"kind\":\"Pod\"}"), *nodes = parse("[]"), *num = parse("3");
	assert_int_equal(fit_cluster_evaluate(pod, nodes, NULL, RES, &c, why, sizeof(why)), -EINVAL);
	assert_non_null(strstr(why, "not a Pod"));
	json_object_put(pod);
	pod = parse(POD2 "}}");
	assert_int_equal(fit_cluster_evaluate(pod, num, NULL, RES, &c, why, sizeof(why)), -EINVAL);
	/* No nodes at all is an answer, not an error. */
	assert_int_equal(fit_cluster_evaluate(pod, nodes, num, RES, &c, why, sizeof(why)), 0);
	assert_string_equal(c.summary, "0/0 nodes are available.");
	fit_cluster_clear(&c);
	/* Wrong types everywhere are absent fields. */
	struct json_object *odd = parse("[{\"metadata\":7,\"spec\":{\"taints\":\"x\",\"unschedulable\":\"yes\"},"
					"\"status\":{\"capacity\":{\"" RES "\":[1]},\"conditions\":{}}}, 5, null]");
	assert_int_equal(fit_cluster_evaluate(pod, odd, odd, RES, &c, why, sizeof(why)), 0);
	assert_int_equal(c.n_nodes, 3);
	assert_int_equal(c.n_fit, 0);
	assert_string_equal(c.nodes[0].name, "?");
	fit_cluster_clear(&c);
	json_object_put(odd);
	json_object_put(pod);
	json_object_put(nodes);
	json_object_put(num);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_request),
		cmocka_unit_test(test_insufficient_counts_bound_pods),
		cmocka_unit_test(test_filters),
		cmocka_unit_test(test_labels),
		cmocka_unit_test(test_extended_resource),
		cmocka_unit_test(test_bad_input),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
