/* SPDX-License-Identifier: Apache-2.0 */
/* kubelet-sim's pod manifest reader: the shipped manifests read to what they
 * say, the API's defaults, the ignored list, every refusal and its message,
 * the limits, and the kubelet's $(VAR) expansion. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "base/macro.h"
#include "tools/kubelet-sim/podspec.h"

#define REPO TEST_SOURCE_DIR "/.."

/* The five lines every inline Pod below starts with. */
#define POD_HEAD "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\nspec:\n"
/* A container that needs nothing else, at lines 6-8. */
#define ONE_CONTAINER "  containers:\n    - name: c\n      image: busybox\n"

static struct podspec *load(const char *path)
{
	struct podspec *spec = NULL;
	char err[512] = "";
	int r = podspec_load(path, &spec, err, sizeof(err));
	if (r < 0)
		print_error("%s\n", err);
	assert_int_equal(r, 0);
	assert_non_null(spec);
	return spec;
}

static struct podspec *parse(const char *yaml)
{
	struct podspec *spec = NULL;
	char err[512] = "";
	int r = podspec_parse(yaml, strlen(yaml), &spec, err, sizeof(err));
	if (r < 0)
		print_error("%s\n", err);
	assert_int_equal(r, 0);
	assert_string_equal(err, "");
	return spec;
}

/* The refusal, its message, and no spec. */
static void expect_error(const char *yaml, int rc, const char *message)
{
	struct podspec *spec = (struct podspec *)(uintptr_t)0x1;
	char err[512] = "";
	int r = podspec_parse(yaml, strlen(yaml), &spec, err, sizeof(err));
	if (r != rc || strcmp(err, message) != 0)
		print_error("input:\n%s\ngot %d \"%s\"\n", yaml, r, err);
	assert_int_equal(r, rc);
	assert_string_equal(err, message);
	assert_ptr_equal(spec, (struct podspec *)(uintptr_t)0x1);
}

static void assert_ignored(const struct podspec *spec, const char *const *want, size_t n)
{
	for (size_t i = 0; i < spec->n_ignored && i < n; i++)
		assert_string_equal(spec->ignored[i], want[i]);
	assert_int_equal(spec->n_ignored, n);
	assert_int_equal(spec->n_ignored_more, 0);
}

static void assert_list(char *const *got, size_t n_got, const char *const *want, size_t n)
{
	assert_int_equal(n_got, n);
	for (size_t i = 0; i < n; i++)
		assert_string_equal(got[i], want[i]);
}

static const struct podspec_quantity *quantity(const struct podspec_quantity *list, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(list[i].name, name) == 0)
			return &list[i];
	fail_msg("no quantity %s", name);
	return NULL;
}

static const char *const plugin_probe[] = {
	"/usr/local/bin/ascend-device-plugin",
	"--probe",
	"--socket-dir=/var/lib/kubelet/device-plugins",
	"--resource-name=ascend.com/npu",
};

/* deploy/base as written or as kustomize renders it (keys sorted). */
static void check_plugin_daemonset(const struct podspec *spec)
{
	assert_string_equal(spec->kind, "DaemonSet");
	assert_string_equal(spec->name, "ascend-device-plugin");
	assert_string_equal(spec->namespace, "kube-system");
	assert_string_equal(spec->restart_policy, "Always");
	assert_int_equal(spec->termination_grace_s, 30);
	assert_false(spec->host_network || spec->host_pid || spec->host_ipc);
	assert_false(spec->has_run_as_user);
	/* The template's labels, not the DaemonSet's (the same here). */
	assert_int_equal(spec->n_labels, 3);
	for (size_t i = 0; i < spec->n_labels; i++)
		if (strcmp(spec->label_keys[i], "app.kubernetes.io/part-of") == 0)
			assert_string_equal(spec->label_values[i], "ascend-k8s");

	static const struct {
		const char *name, *path, *type;
		bool read_only;
	} volumes[] = {
		{ "device-plugins", "/var/lib/kubelet/device-plugins", "Directory", false },
		{ "dev", "/dev", "Directory", false },
		{ "driver", "/usr/local/Ascend/driver", "Directory", true },
		{ "pod-resources", "/var/lib/kubelet/pod-resources", "DirectoryOrCreate", true },
		{ "nfd-features", "/etc/kubernetes/node-feature-discovery/features.d", "DirectoryOrCreate", false },
	};
	assert_int_equal(spec->n_volumes, ELEMENTSOF(volumes));
	for (size_t i = 0; i < ELEMENTSOF(volumes); i++) {
		assert_string_equal(spec->volumes[i].name, volumes[i].name);
		assert_string_equal(spec->volumes[i].host_path, volumes[i].path);
		assert_string_equal(spec->volumes[i].host_path_type, volumes[i].type);
		assert_false(spec->volumes[i].empty_dir);
	}

	assert_int_equal(spec->n_init_containers, 0);
	assert_int_equal(spec->n_containers, 1);
	const struct podspec_container *c = &spec->containers[0];
	assert_string_equal(c->name, "ascend-device-plugin");
	assert_string_equal(c->image, "ascend-device-plugin:0.1.0");
	static const char *const command[] = { "/usr/local/bin/ascend-device-plugin" };
	assert_list(c->command, c->n_command, command, ELEMENTSOF(command));
	static const char *const args[] = { "--resource-name=ascend.com/npu",
					    "--socket-dir=/var/lib/kubelet/device-plugins", "--health-interval=5s" };
	assert_list(c->args, c->n_args, args, ELEMENTSOF(args));
	assert_null(c->working_dir);

	assert_int_equal(c->n_env, 2);
	assert_string_equal(c->env[0].name, "ASCEND_DRIVER_PATH");
	assert_string_equal(c->env[0].value, "/usr/local/Ascend/driver");
	assert_null(c->env[0].field_ref);
	assert_string_equal(c->env[1].name, "LD_LIBRARY_PATH");
	assert_string_equal(c->env[1].value, "$(ASCEND_DRIVER_PATH)/lib64/driver:$(ASCEND_DRIVER_PATH)/lib64/common:"
					     "$(ASCEND_DRIVER_PATH)/lib64");
	/* What the kubelet gives the container: earlier variables expanded. */
	char *names[] = { c->env[0].name }, *values[] = { c->env[0].value };
	char *expanded = NULL;
	assert_int_equal(podspec_expand(c->env[1].value, names, values, 1, &expanded), 0);
	assert_string_equal(expanded, "/usr/local/Ascend/driver/lib64/driver:/usr/local/Ascend/driver/lib64/common:"
				      "/usr/local/Ascend/driver/lib64");
	free(expanded);

	assert_int_equal(c->n_mounts, ELEMENTSOF(volumes));
	for (size_t i = 0; i < ELEMENTSOF(volumes); i++) {
		assert_string_equal(c->mounts[i].name, volumes[i].name);
		assert_string_equal(c->mounts[i].mount_path, volumes[i].path);
		assert_int_equal(c->mounts[i].read_only, volumes[i].read_only);
	}

	assert_int_equal(c->n_limits, 1);
	assert_string_equal(quantity(c->limits, c->n_limits, "memory")->text, "64Mi");
	assert_false(c->limits[0].is_integer);
	assert_int_equal(c->n_requests, 2);
	assert_string_equal(quantity(c->requests, c->n_requests, "cpu")->text, "10m");
	assert_string_equal(quantity(c->requests, c->n_requests, "memory")->text, "16Mi");

	assert_true(c->privileged);
	assert_true(c->read_only_root);
	assert_false(c->has_run_as_user || c->has_run_as_group || c->has_run_as_non_root);
	assert_int_equal(c->n_cap_add + c->n_cap_drop, 0);

	assert_true(c->liveness.set);
	assert_list(c->liveness.exec, c->liveness.n_exec, plugin_probe, ELEMENTSOF(plugin_probe));
	assert_int_equal(c->liveness.initial_delay_s, 10);
	assert_int_equal(c->liveness.period_s, 30);
	assert_int_equal(c->liveness.timeout_s, 5);
	assert_int_equal(c->liveness.success_threshold, 1);
	assert_int_equal(c->liveness.failure_threshold, 3);
	assert_true(c->readiness.set);
	assert_list(c->readiness.exec, c->readiness.n_exec, plugin_probe, ELEMENTSOF(plugin_probe));
	assert_int_equal(c->readiness.initial_delay_s, 0);
	assert_int_equal(c->readiness.period_s, 10);
	assert_int_equal(c->readiness.timeout_s, 5);
	assert_int_equal(c->readiness.success_threshold, 1);
	assert_int_equal(c->readiness.failure_threshold, 3);
}

static void test_daemonset(void **state)
{
	(void)state;
	struct podspec *spec = load(REPO "/deploy/base/ascend-device-plugin.yaml");
	check_plugin_daemonset(spec);
	static const char *const ignored[] = {
		"spec.updateStrategy",
		"spec.template.spec.nodeSelector",
		"spec.template.spec.tolerations",
		"spec.template.spec.priorityClassName",
		"spec.template.spec.automountServiceAccountToken",
		"spec.template.spec.enableServiceLinks",
		"spec.template.spec.securityContext.seccompProfile",
		"spec.template.spec.containers[0].imagePullPolicy",
		"spec.template.spec.containers[0].ports",
	};
	assert_ignored(spec, ignored, ELEMENTSOF(ignored));
	podspec_free(spec);
}

/* What `kubectl apply -k deploy/` would send. kubectl comes with
 * `scripts/deps.sh manifests`, not with the build: skipped without it. */
static void test_kustomize_output(void **state)
{
	(void)state;
	if (system("command -v kubectl >/dev/null 2>&1") != 0)
		skip();
	FILE *f = popen("kubectl kustomize " REPO "/deploy/ 2>/dev/null", "r");
	assert_non_null(f);
	static char buf[PODSPEC_FILE_MAX];
	size_t len = fread(buf, 1, sizeof(buf), f);
	assert_int_equal(pclose(f), 0);
	assert_true(len > 0 && len < sizeof(buf));

	struct podspec *spec = NULL;
	char err[512] = "";
	assert_int_equal(podspec_parse(buf, len, &spec, err, sizeof(err)), 0);
	check_plugin_daemonset(spec);
	assert_int_equal(spec->n_ignored, 9); /* as the base's, in kustomize's key order */
	podspec_free(spec);
}

static void test_pod(void **state)
{
	(void)state;
	struct podspec *spec = load(REPO "/examples/npu-pod.yaml");
	assert_string_equal(spec->kind, "Pod");
	assert_string_equal(spec->name, "inference-pod");
	assert_string_equal(spec->namespace, "default");
	assert_string_equal(spec->restart_policy, "Always");
	assert_int_equal(spec->n_labels, 1);
	assert_string_equal(spec->label_keys[0], "app");
	assert_string_equal(spec->label_values[0], "inference-pod");
	assert_int_equal(spec->n_volumes, 0);
	assert_int_equal(spec->n_containers, 1);
	const struct podspec_container *c = &spec->containers[0];
	assert_string_equal(c->name, "inference");
	assert_string_equal(c->image, "debian:12-slim");
	assert_int_equal(c->n_command, 3);
	assert_string_equal(c->command[1], "-c");
	assert_true(strncmp(c->command[2], "echo \"ASCEND_VISIBLE_DEVICES=${ASCEND_VISIBLE_DEVICES:-<not set>}\"\n", 66) == 0);
	assert_int_equal(c->n_limits, 1);
	assert_string_equal(c->limits[0].name, "ascend.com/npu");
	assert_string_equal(c->limits[0].text, "1");
	assert_true(c->limits[0].is_integer);
	assert_int_equal(c->limits[0].value, 1);
	assert_false(c->liveness.set || c->readiness.set);
	static const char *const ignored[] = { "spec.tolerations" };
	assert_ignored(spec, ignored, ELEMENTSOF(ignored));
	podspec_free(spec);
}

static void check_smoke_test(const struct podspec *spec, const char *name)
{
	assert_string_equal(spec->kind, "Job");
	assert_string_equal(spec->name, name);
	assert_string_equal(spec->restart_policy, "Never");
	assert_int_equal(spec->n_containers, 1);
	const struct podspec_container *c = &spec->containers[0];
	assert_string_equal(c->name, "smoke-test");
	assert_int_equal(c->n_env, 2);
	assert_string_equal(c->env[0].name, "EXPECTED_NPUS");
	assert_string_equal(c->env[0].value, "1");
	assert_int_equal(c->n_limits, 1);
	assert_string_equal(c->limits[0].name, "ascend.com/npu");
	assert_true(c->limits[0].is_integer);
	assert_int_equal(c->limits[0].value, 1);
	assert_int_equal(c->n_command, 3);
	assert_non_null(strstr(c->command[2], "SMOKE TEST PASSED"));
}

static void test_jobs(void **state)
{
	(void)state;
	struct podspec *spec = load(REPO "/examples/npu-smoke-test.yaml");
	check_smoke_test(spec, "npu-smoke-test");
	assert_false(spec->has_run_as_user || spec->run_as_non_root);
	static const char *const ignored[] = {
		"spec.backoffLimit",
		"spec.activeDeadlineSeconds",
		"spec.template.spec.nodeSelector",
		"spec.template.spec.tolerations",
	};
	assert_ignored(spec, ignored, ELEMENTSOF(ignored));
	podspec_free(spec);

	spec = load(REPO "/examples/npu-smoke-test-nonroot.yaml");
	check_smoke_test(spec, "npu-smoke-test-nonroot");
	assert_true(spec->has_run_as_user);
	assert_int_equal(spec->run_as_user, 10001);
	assert_true(spec->has_run_as_group);
	assert_int_equal(spec->run_as_group, 10001);
	assert_true(spec->run_as_non_root);
	assert_int_equal(spec->n_supplemental_groups, 1);
	assert_int_equal(spec->supplemental_groups[0], 1000);
	const struct podspec_container *c = &spec->containers[0];
	static const char *const drop[] = { "ALL" };
	assert_list(c->cap_drop, c->n_cap_drop, drop, 1);
	assert_int_equal(c->n_cap_add, 0);
	assert_false(c->privileged || c->has_run_as_user);
	static const char *const ignored_nonroot[] = {
		"spec.backoffLimit",
		"spec.activeDeadlineSeconds",
		"spec.template.spec.nodeSelector",
		"spec.template.spec.tolerations",
		"spec.template.spec.containers[0].securityContext.allowPrivilegeEscalation",
	};
	assert_ignored(spec, ignored_nonroot, ELEMENTSOF(ignored_nonroot));
	podspec_free(spec);
}

static void test_deployment(void **state)
{
	(void)state;
	struct podspec *spec = load(REPO "/examples/inference-deployment.yaml");
	assert_string_equal(spec->kind, "Deployment");
	assert_string_equal(spec->name, "inference-app");
	assert_string_equal(spec->namespace, "default");
	assert_string_equal(spec->restart_policy, "Always");
	const struct podspec_container *c = &spec->containers[0];
	assert_string_equal(c->image, "my-inference:v1");
	assert_int_equal(c->n_limits, 2);
	assert_string_equal(quantity(c->limits, 2, "memory")->text, "16Gi");
	assert_int_equal(quantity(c->limits, 2, "ascend.com/npu")->value, 1);
	const struct podspec_quantity *cpu = quantity(c->requests, c->n_requests, "cpu");
	assert_string_equal(cpu->text, "2");
	assert_true(cpu->is_integer);
	assert_int_equal(cpu->value, 2);
	assert_false(quantity(c->requests, c->n_requests, "memory")->is_integer);
	/* An httpGet probe is not run, so not kept. */
	assert_false(c->readiness.set || c->liveness.set);
	static const char *const ignored[] = {
		"spec.replicas",
		"spec.template.spec.tolerations",
		"spec.template.spec.affinity",
		"spec.template.spec.containers[0].ports",
		"spec.template.spec.containers[0].startupProbe",
		"spec.template.spec.containers[0].readinessProbe (httpGet probe)",
		"Service/inference-app (not a workload)",
	};
	assert_ignored(spec, ignored, ELEMENTSOF(ignored));
	podspec_free(spec);
}

static void test_defaults(void **state)
{
	(void)state;
	struct podspec *spec = parse(POD_HEAD "  volumes:\n"
					      "    - name: scratch\n"
					      "      emptyDir: {}\n"
					      "    - name: host\n"
					      "      hostPath:\n"
					      "        path: /srv/..data/x..\n"
					      "  containers:\n"
					      "    - name: c\n"
					      "      image: busybox\n"
					      "      env:\n"
					      "        - name: EMPTY\n"
					      "      livenessProbe:\n"
					      "        exec:\n"
					      "          command: [\"true\"]\n"
					      "      readinessProbe:\n"
					      "        exec: {command: [\"true\"]}\n"
					      "        periodSeconds: 0\n"
					      "      volumeMounts:\n"
					      "        - {name: scratch, mountPath: /tmp}\n");
	assert_string_equal(spec->namespace, "default");
	assert_string_equal(spec->restart_policy, "Always");
	assert_int_equal(spec->termination_grace_s, 30);
	assert_int_equal(spec->n_labels, 0);
	assert_true(spec->volumes[0].empty_dir);
	assert_null(spec->volumes[0].host_path);
	assert_string_equal(spec->volumes[1].host_path, "/srv/..data/x..");
	assert_string_equal(spec->volumes[1].host_path_type, "");
	const struct podspec_container *c = &spec->containers[0];
	assert_string_equal(c->env[0].value, "");
	assert_false(c->mounts[0].read_only);
	assert_true(c->liveness.set);
	assert_int_equal(c->liveness.initial_delay_s, 0);
	assert_int_equal(c->liveness.period_s, 10);
	assert_int_equal(c->liveness.timeout_s, 1);
	assert_int_equal(c->liveness.success_threshold, 1);
	assert_int_equal(c->liveness.failure_threshold, 3);
	assert_true(c->readiness.set);
	assert_int_equal(c->readiness.initial_delay_s, 0);
	assert_int_equal(c->readiness.period_s, 10); /* 0 is "not set" */
	assert_int_equal(c->readiness.timeout_s, 1);
	assert_int_equal(c->readiness.success_threshold, 1);
	assert_int_equal(c->readiness.failure_threshold, 3);
	assert_int_equal(spec->n_ignored, 0);
	podspec_free(spec);
}

/* YAML 1.1 scalars as kubectl decodes them, and every kept field. */
static void test_types(void **state)
{
	(void)state;
	struct podspec *spec = parse("apiVersion: v1\n"
				     "kind: Pod\n"
				     "metadata:\n"
				     "  name: p\n"
				     "  namespace: work\n"
				     "  labels: {tier: \"1\", empty: null}\n"
				     "spec:\n"
				     "  hostNetwork: yes\n"
				     "  hostPID: off\n"
				     "  hostIPC: True\n"
				     "  terminationGracePeriodSeconds: 0\n"
				     "  restartPolicy: OnFailure\n"
				     "  securityContext:\n"
				     "    runAsUser: 0\n"
				     "    supplementalGroups: [5, 6]\n"
				     "  initContainers:\n"
				     "    - name: init\n"
				     "      image: busybox\n"
				     "      args: [\"1\", '2', !!str 3]\n"
				     "  containers:\n"
				     "    - name: c\n"
				     "      image: busybox\n"
				     "      workingDir: /w\n"
				     "      env:\n"
				     "        - name: POD\n"
				     "          valueFrom:\n"
				     "            fieldRef: {fieldPath: metadata.name, apiVersion: v1}\n"
				     "        - name: TIER\n"
				     "          value: \"\"\n"
				     "          valueFrom:\n"
				     "            fieldRef: {fieldPath: \"metadata.labels['tier']\"}\n"
				     "      resources:\n"
				     "        limits: {cpu: 1, memory: 1e3, example.com/dev: 2}\n"
				     "        requests: {cpu: 0.5, example.com/dev: \"2\"}\n"
				     "      securityContext:\n"
				     "        runAsUser: 1000\n"
				     "        runAsGroup: 2000\n"
				     "        runAsNonRoot: false\n"
				     "        privileged: false\n"
				     "        capabilities: {add: [NET_ADMIN], drop: []}\n");
	assert_string_equal(spec->namespace, "work");
	assert_int_equal(spec->n_labels, 2);
	assert_string_equal(spec->label_keys[0], "tier");
	assert_string_equal(spec->label_values[0], "1");
	assert_string_equal(spec->label_values[1], "");
	assert_true(spec->host_network);
	assert_false(spec->host_pid);
	assert_true(spec->host_ipc);
	assert_int_equal(spec->termination_grace_s, 0);
	assert_string_equal(spec->restart_policy, "OnFailure");
	assert_true(spec->has_run_as_user);
	assert_int_equal(spec->run_as_user, 0);
	assert_false(spec->has_run_as_group);
	assert_int_equal(spec->n_supplemental_groups, 2);
	assert_int_equal(spec->supplemental_groups[1], 6);

	assert_int_equal(spec->n_init_containers, 1);
	static const char *const args[] = { "1", "2", "3" };
	assert_list(spec->init_containers[0].args, spec->init_containers[0].n_args, args, 3);

	const struct podspec_container *c = &spec->containers[0];
	assert_string_equal(c->working_dir, "/w");
	assert_int_equal(c->n_env, 2);
	assert_null(c->env[0].value);
	assert_string_equal(c->env[0].field_ref, "metadata.name");
	assert_null(c->env[1].value);
	assert_string_equal(c->env[1].field_ref, "metadata.labels['tier']");

	const struct podspec_quantity *q = quantity(c->limits, c->n_limits, "cpu");
	assert_string_equal(q->text, "1");
	assert_true(q->is_integer);
	assert_int_equal(q->value, 1);
	q = quantity(c->limits, c->n_limits, "memory");
	assert_string_equal(q->text, "1e3");
	assert_false(q->is_integer);
	assert_int_equal(quantity(c->limits, c->n_limits, "example.com/dev")->value, 2);
	q = quantity(c->requests, c->n_requests, "cpu");
	assert_string_equal(q->text, "0.5");
	assert_false(q->is_integer);
	assert_int_equal(quantity(c->requests, c->n_requests, "example.com/dev")->value, 2);

	assert_true(c->has_run_as_user);
	assert_int_equal(c->run_as_user, 1000);
	assert_true(c->has_run_as_group);
	assert_int_equal(c->run_as_group, 2000);
	assert_true(c->has_run_as_non_root);
	assert_false(c->run_as_non_root);
	assert_false(c->privileged);
	static const char *const add[] = { "NET_ADMIN" };
	assert_list(c->cap_add, c->n_cap_add, add, 1);
	assert_int_equal(c->n_cap_drop, 0);
	assert_int_equal(spec->n_ignored, 0);
	podspec_free(spec);
}

static void test_ignored(void **state)
{
	(void)state;
	struct podspec *spec = parse("apiVersion: v1\n"
				     "kind: ConfigMap\n"
				     "metadata: {name: cm}\n"
				     "data: {a: b}\n"
				     "---\n"
				     "apiVersion: v1\n"
				     "kind: Pod\n"
				     "metadata:\n"
				     "  name: p\n"
				     "  annotations: {a: b}\n"
				     "spec:\n"
				     "  nodeName: n1\n"
				     "  volumes:\n"
				     "    - name: cfg\n"
				     "      configMap: {name: cm}\n"
				     "    - name: mem\n"
				     "      emptyDir: {medium: Memory, sizeLimit: 1Gi}\n"
				     "  containers:\n"
				     "    - name: c\n"
				     "      image: busybox\n"
				     "      imagePullPolicy: Always\n"
				     "      envFrom: [{configMapRef: {name: cm}}]\n"
				     "      env:\n"
				     "        - name: SECRET\n"
				     "          valueFrom:\n"
				     "            secretKeyRef: {name: s, key: k}\n"
				     "        - name: KEPT\n"
				     "          value: v\n"
				     "      volumeMounts:\n"
				     "        - {name: cfg, mountPath: /cfg, subPath: x}\n"
				     "      resources:\n"
				     "        claims: [{name: gpu}]\n"
				     "      securityContext:\n"
				     "        allowPrivilegeEscalation: false\n"
				     "        seccompProfile: {type: RuntimeDefault}\n"
				     "        capabilities: {add: [X], extra: 1}\n"
				     "      livenessProbe:\n"
				     "        grpc: {port: 1}\n"
				     "      readinessProbe:\n"
				     "        tcpSocket: {port: 1}\n"
				     "      startupProbe:\n"
				     "        exec: {command: [x]}\n"
				     "status: {phase: Running}\n"
				     "---\n"
				     "kind: Secret\n"
				     "---\n");
	static const char *const ignored[] = {
		"ConfigMap/cm (not a workload)",
		"metadata.annotations",
		/* Volumes are read first: mounts are checked against them. */
		"spec.volumes[0].configMap",
		"spec.volumes[1].emptyDir.medium",
		"spec.volumes[1].emptyDir.sizeLimit",
		"spec.nodeName",
		"spec.containers[0].imagePullPolicy",
		"spec.containers[0].envFrom",
		"spec.containers[0].env[0].valueFrom.secretKeyRef",
		"spec.containers[0].volumeMounts[0].subPath",
		"spec.containers[0].resources.claims",
		"spec.containers[0].securityContext.allowPrivilegeEscalation",
		"spec.containers[0].securityContext.seccompProfile",
		"spec.containers[0].securityContext.capabilities.extra",
		"spec.containers[0].livenessProbe (grpc probe)",
		"spec.containers[0].readinessProbe (tcpSocket probe)",
		"spec.containers[0].startupProbe",
		"status",
		"Secret (not a workload)",
	};
	assert_ignored(spec, ignored, ELEMENTSOF(ignored));
	/* The volume stays, so its mounts stay valid; the caller skips it. */
	assert_int_equal(spec->n_volumes, 2);
	assert_null(spec->volumes[0].host_path);
	assert_false(spec->volumes[0].empty_dir);
	assert_true(spec->volumes[1].empty_dir);
	const struct podspec_container *c = &spec->containers[0];
	/* An env entry whose value the kubelet would fetch is left out. */
	assert_int_equal(c->n_env, 1);
	assert_string_equal(c->env[0].name, "KEPT");
	assert_false(c->liveness.set || c->readiness.set);
	assert_string_equal(c->mounts[0].mount_path, "/cfg");
	podspec_free(spec);

	/* Past PODSPEC_MAX_IGNORED entries only a count is kept. */
	char yaml[4096] = POD_HEAD ONE_CONTAINER;
	size_t len = strlen(yaml);
	for (int i = 0; i < PODSPEC_MAX_IGNORED + 6; i++)
		len += (size_t)snprintf(yaml + len, sizeof(yaml) - len, "  unknown%d: 1\n", i);
	assert_true(len < sizeof(yaml));
	spec = parse(yaml);
	assert_int_equal(spec->n_ignored, PODSPEC_MAX_IGNORED);
	assert_int_equal(spec->n_ignored_more, 6);
	assert_string_equal(spec->ignored[0], "spec.unknown0");
	assert_string_equal(spec->ignored[PODSPEC_MAX_IGNORED - 1], "spec.unknown63");
	podspec_free(spec);
}

static void test_errors(void **state)
{
	(void)state;
	static const struct {
		const char *yaml, *message;
	} cases[] = {
		/* Types */
		{ POD_HEAD ONE_CONTAINER "      command: sleep 1\n",
		  "line 9: spec.containers[0].command must be a list of strings" },
		{ POD_HEAD ONE_CONTAINER "      args: [sleep, 1]\n",
		  "line 9: spec.containers[0].args must be a list of strings" },
		{ POD_HEAD "  securityContext:\n    runAsUser: abc\n" ONE_CONTAINER,
		  "line 7: spec.securityContext.runAsUser must be an integer" },
		{ POD_HEAD "  securityContext:\n    runAsUser: \"0\"\n" ONE_CONTAINER,
		  "line 7: spec.securityContext.runAsUser must be an integer" },
		{ POD_HEAD "  securityContext:\n    runAsUser: 0x10\n" ONE_CONTAINER,
		  "line 7: spec.securityContext.runAsUser must be a decimal integer" },
		{ POD_HEAD "  securityContext:\n    runAsUser: -1\n" ONE_CONTAINER,
		  "line 7: spec.securityContext.runAsUser must be an integer from 0 to 2147483647" },
		{ POD_HEAD "  securityContext:\n    supplementalGroups: 1000\n" ONE_CONTAINER,
		  "line 7: spec.securityContext.supplementalGroups must be a list of group ids" },
		{ POD_HEAD "  terminationGracePeriodSeconds: -1\n" ONE_CONTAINER,
		  "line 6: spec.terminationGracePeriodSeconds must be an integer from 0 to 9223372036854775807" },
		{ POD_HEAD ONE_CONTAINER "      env:\n        - {name: A, value: 1}\n",
		  "line 10: spec.containers[0].env[0].value must be a string" },
		{ POD_HEAD ONE_CONTAINER "      securityContext:\n        privileged: \"true\"\n",
		  "line 10: spec.containers[0].securityContext.privileged must be true or false" },
		{ POD_HEAD "  containers: {name: c}\n", "line 6: spec.containers must be a list of containers" },
		{ POD_HEAD "  containers:\n    - busybox\n", "line 7: spec.containers[0] must be a mapping" },
		{ "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: [1]\n", "line 4: spec must be a mapping" },
		{ POD_HEAD ONE_CONTAINER "      image: other\n",
		  "line 9: spec.containers[0]: the key \"image\" appears twice" },
		/* Required things */
		{ POD_HEAD "  hostNetwork: true\n", "line 6: spec.containers must list at least one container" },
		{ "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {}\n",
		  "line 4: spec.containers must list at least one container" },
		{ POD_HEAD "  containers:\n    - image: busybox\n", "line 7: spec.containers[0].name is missing" },
		{ POD_HEAD "  containers:\n    - name: c\n", "line 7: spec.containers[0].image is missing" },
		{ "apiVersion: v1\nkind: Pod\nmetadata: {name: ../../x}\nspec: {containers: [{name: c, image: i}]}\n",
		  "line 3: metadata.name \"../../x\" is not a lowercase RFC 1123 subdomain" },
		{ "apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: a.b}\nspec: {containers: [{name: c, image: i}]}\n",
		  "line 3: metadata.namespace \"a.b\" is not a lowercase RFC 1123 label" },
		{ POD_HEAD "  containers:\n    - name: My_Container\n      image: x\n",
		  "line 7: spec.containers[0].name \"My_Container\" is not a lowercase RFC 1123 label" },
		{ POD_HEAD "  initContainers:\n    - {name: c, image: busybox}\n" ONE_CONTAINER,
		  "line 9: spec.containers[0].name \"c\" is used by another container" },
		{ POD_HEAD ONE_CONTAINER "      volumeMounts:\n        - {name: data, mountPath: /data}\n",
		  "line 10: spec.containers[0].volumeMounts[0].name \"data\" is not a volume of the pod" },
		{ POD_HEAD "  volumes: [{name: v, emptyDir: {}}]\n" ONE_CONTAINER
			   "      volumeMounts: [{name: v, mountPath: /a}, {name: v}]\n",
		  "line 10: spec.containers[0].volumeMounts[1].mountPath is missing" },
		{ POD_HEAD "  volumes: [{name: v, emptyDir: {}}]\n" ONE_CONTAINER
			   "      volumeMounts: [{name: v, mountPath: /a}, {name: v, mountPath: /a}]\n",
		  "line 10: spec.containers[0].volumeMounts[1].mountPath \"/a\" is mounted twice" },
		{ POD_HEAD "  volumes:\n    - {name: v, emptyDir: {}}\n    - {name: v, emptyDir: {}}\n" ONE_CONTAINER,
		  "line 8: spec.volumes[1].name \"v\" is used by another volume" },
		{ POD_HEAD "  volumes:\n    - name: v\n      emptyDir: {}\n      hostPath: {path: /x}\n" ONE_CONTAINER,
		  "line 9: spec.volumes[0] has more than one volume source" },
		{ POD_HEAD "  volumes:\n    - name: v\n" ONE_CONTAINER, "line 7: spec.volumes[0] has no volume source" },
		{ POD_HEAD "  volumes:\n    - emptyDir: {}\n" ONE_CONTAINER, "line 7: spec.volumes[0].name is missing" },
		{ POD_HEAD "  volumes:\n    - name: v\n      hostPath: {type: File}\n" ONE_CONTAINER,
		  "line 8: spec.volumes[0].hostPath.path is missing" },
		{ POD_HEAD "  volumes:\n    - name: v\n      hostPath: {path: /var/../etc}\n" ONE_CONTAINER,
		  "line 8: spec.volumes[0].hostPath.path must not contain '..'" },
		{ POD_HEAD "  volumes:\n    - name: v\n      hostPath: {path: ..}\n" ONE_CONTAINER,
		  "line 8: spec.volumes[0].hostPath.path must not contain '..'" },
		{ POD_HEAD "  volumes:\n    - name: v\n      hostPath: {path: /x, type: Folder}\n" ONE_CONTAINER,
		  "line 8: spec.volumes[0].hostPath.type \"Folder\" is not a hostPath type" },
		{ "apiVersion: v1\nkind: Pod\nmetadata: {}\nspec: {}\n", "line 3: metadata.name is missing" },
		{ "kind: Pod\nspec:\n", "line 1: metadata.name is missing" },
		{ "kind: Pod\nmetadata: {name: p}\n", "line 1: spec is missing" },
		{ "kind: Deployment\nmetadata: {name: d}\nspec:\n  replicas: 1\n", "line 4: spec.template is missing" },
		{ "kind: Deployment\nmetadata: {name: d}\nspec:\n  template:\n    metadata: {labels: {a: b}}\n",
		  "line 5: spec.template.spec is missing" },
		/* Restart policies */
		{ POD_HEAD "  restartPolicy: Sometimes\n" ONE_CONTAINER,
		  "line 6: spec.restartPolicy \"Sometimes\" is not Always, OnFailure or Never" },
		{ "apiVersion: batch/v1\nkind: Job\nmetadata: {name: j}\nspec:\n  template:\n    spec:\n"
		  "      containers: [{name: c, image: busybox}]\n",
		  "line 7: spec.template.spec.restartPolicy must be OnFailure or Never in a Job" },
		{ "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\nspec:\n  template:\n    spec:\n"
		  "      restartPolicy: Never\n      containers: [{name: c, image: busybox}]\n",
		  "line 7: spec.template.spec.restartPolicy must be Always in a Deployment" },
		/* Probes */
		{ POD_HEAD ONE_CONTAINER "      livenessProbe:\n        exec: {command: [x]}\n        tcpSocket: {port: 1}\n",
		  "line 11: spec.containers[0].livenessProbe has more than one handler" },
		{ POD_HEAD ONE_CONTAINER "      livenessProbe:\n        periodSeconds: 5\n",
		  "line 10: spec.containers[0].livenessProbe has no handler (exec, httpGet, tcpSocket or grpc)" },
		{ POD_HEAD ONE_CONTAINER "      livenessProbe:\n        exec: {}\n",
		  "line 10: spec.containers[0].livenessProbe.exec.command is missing" },
		{ POD_HEAD ONE_CONTAINER "      livenessProbe:\n        exec: {command: [x]}\n        successThreshold: 2\n",
		  "line 10: spec.containers[0].livenessProbe.successThreshold must be 1 for a liveness probe" },
		{ POD_HEAD ONE_CONTAINER "      readinessProbe:\n        exec: {command: [x]}\n        periodSeconds: 1.5\n",
		  "line 11: spec.containers[0].readinessProbe.periodSeconds must be an integer" },
		/* Env */
		{ POD_HEAD ONE_CONTAINER "      env:\n        - value: x\n", "line 10: spec.containers[0].env[0].name is missing" },
		{ POD_HEAD ONE_CONTAINER "      env:\n        - name: A=B\n",
		  "line 10: spec.containers[0].env[0].name \"A=B\" is not a valid environment variable name" },
		{ POD_HEAD ONE_CONTAINER "      env:\n        - name: A\n          value: x\n"
					 "          valueFrom: {fieldRef: {fieldPath: metadata.name}}\n",
		  "line 12: spec.containers[0].env[0] has both value and valueFrom" },
		{ POD_HEAD ONE_CONTAINER "      env:\n        - name: A\n          valueFrom: {}\n",
		  "line 11: spec.containers[0].env[0].valueFrom must name exactly one source" },
		{ POD_HEAD ONE_CONTAINER "      env:\n        - name: A\n          valueFrom: {fieldRef: {}}\n",
		  "line 11: spec.containers[0].env[0].valueFrom.fieldRef.fieldPath is missing" },
		{ POD_HEAD ONE_CONTAINER "      env:\n        - name: A\n          valueFrom: {fieldRef: {fieldPath: spec.foo}}\n",
		  "line 11: spec.containers[0].env[0].valueFrom.fieldRef.fieldPath \"spec.foo\" is not a field the "
		  "kubelet resolves" },
		/* Resources */
		{ POD_HEAD ONE_CONTAINER "      resources:\n        limits: {ascend.com/npu: 500m}\n",
		  "line 10: spec.containers[0].resources.limits.ascend.com/npu must be a whole number, not \"500m\"" },
		{ POD_HEAD ONE_CONTAINER "      resources:\n        requests: {ascend.com/npu: 1}\n",
		  "line 10: spec.containers[0].resources.requests.ascend.com/npu must equal its limit: extended "
		  "resources cannot be overcommitted" },
		{ POD_HEAD ONE_CONTAINER "      resources:\n        limits: {ascend.com/npu: 2}\n"
					 "        requests: {ascend.com/npu: 1}\n",
		  "line 11: spec.containers[0].resources.requests.ascend.com/npu must equal its limit: extended "
		  "resources cannot be overcommitted" },
		{ POD_HEAD ONE_CONTAINER "      resources:\n        limits: {memory: lots}\n",
		  "line 10: spec.containers[0].resources.limits.memory \"lots\" is not a quantity" },
		{ POD_HEAD ONE_CONTAINER "      resources:\n        limits: {cpu: -1}\n",
		  "line 10: spec.containers[0].resources.limits.cpu \"-1\" is not a quantity" },
		{ POD_HEAD ONE_CONTAINER "      resources:\n        limits: {cpu: true}\n",
		  "line 10: spec.containers[0].resources.limits.cpu must be a quantity (\"1\", \"500m\", \"16Mi\")" },
		{ POD_HEAD ONE_CONTAINER "      resources:\n        limits: {kubernetes.io/x: 1, example.com/: 1}\n",
		  "line 10: spec.containers[0].resources.limits.example.com/: the name after '/' must be 1-63 "
		  "characters of [A-Za-z0-9-_.], starting and ending alphanumeric" },
		/* Documents */
		{ POD_HEAD ONE_CONTAINER "---\n" POD_HEAD ONE_CONTAINER,
		  "line 10: a second workload (Pod after Pod/p): one workload per file" },
		{ "kind: ConfigMap\nmetadata: {name: cm}\n",
		  "no Pod or workload (DaemonSet, Deployment, ReplicaSet, StatefulSet, Job)" },
		{ "", "no Pod or workload (DaemonSet, Deployment, ReplicaSet, StatefulSet, Job)" },
		{ "- a\n- b\n", "line 1: a document must be a mapping (a Kubernetes object)" },
		{ "metadata: {name: x}\n", "line 1: kind is missing" },
		{ "kind: [Pod]\n", "line 1: kind must be a string" },
		{ "? [a]\n: b\n", "line 1: a mapping key must be a scalar" },
		{ "kind: \"P\\0d\"\n", "line 1: a NUL character in a string" },
		{ "kind: Pod\nmetadata: {name: p\n",
		  "line 3: malformed YAML: did not find expected ',' or '}' (while parsing a flow mapping)" },
		{ "kind: Pod\n\tspec: {}\n",
		  "line 2: malformed YAML: found a tab character that violates indentation (while scanning a plain "
		  "scalar)" },
		{ "kind: \xff\n", "malformed YAML: invalid leading UTF-8 octet at byte 6" },
	};
	for (size_t i = 0; i < ELEMENTSOF(cases); i++)
		expect_error(cases[i].yaml, -EINVAL, cases[i].message);
}

static void test_limits(void **state)
{
	(void)state;
	static char yaml[PODSPEC_FILE_MAX + 2];
	size_t len;

	memset(yaml, '#', sizeof(yaml) - 1);
	struct podspec *spec = NULL;
	char err[512];
	assert_int_equal(podspec_parse(yaml, PODSPEC_FILE_MAX + 1, &spec, err, sizeof(err)), -E2BIG);
	assert_string_equal(err, "larger than 1048576 bytes");
	assert_null(spec);

	len = (size_t)snprintf(yaml, sizeof(yaml), POD_HEAD "  containers:\n");
	for (int i = 0; i <= PODSPEC_MAX_CONTAINERS; i++)
		len += (size_t)snprintf(yaml + len, sizeof(yaml) - len, "    - {name: c%d, image: x}\n", i);
	expect_error(yaml, -E2BIG, "line 7: spec.containers has more than 16 entries");

	len = (size_t)snprintf(yaml, sizeof(yaml), POD_HEAD "  volumes:\n");
	for (int i = 0; i <= PODSPEC_MAX_VOLUMES; i++)
		len += (size_t)snprintf(yaml + len, sizeof(yaml) - len, "    - {name: v%d, emptyDir: {}}\n", i);
	snprintf(yaml + len, sizeof(yaml) - len, ONE_CONTAINER);
	expect_error(yaml, -E2BIG, "line 7: spec.volumes has more than 64 entries");

	len = (size_t)snprintf(yaml, sizeof(yaml), POD_HEAD ONE_CONTAINER "      args: [");
	for (int i = 0; i <= PODSPEC_MAX_ITEMS; i++)
		len += (size_t)snprintf(yaml + len, sizeof(yaml) - len, "a, ");
	snprintf(yaml + len, sizeof(yaml) - len, "]\n");
	expect_error(yaml, -E2BIG, "line 9: spec.containers[0].args has more than 256 entries");

	len = (size_t)snprintf(yaml, sizeof(yaml), POD_HEAD ONE_CONTAINER "      command: [");
	memset(yaml + len, 'a', PODSPEC_STRING_MAX + 1);
	len += PODSPEC_STRING_MAX + 1;
	snprintf(yaml + len, sizeof(yaml) - len, "]\n");
	expect_error(yaml, -E2BIG, "line 9: spec.containers[0].command is longer than 65536 bytes");
	/* The longest string is fine. */
	yaml[len - 1] = ']';
	yaml[len] = '\n';
	yaml[len + 1] = '\0';
	spec = parse(yaml);
	assert_int_equal(strlen(spec->containers[0].command[0]), PODSPEC_STRING_MAX);
	podspec_free(spec);

	len = (size_t)snprintf(yaml, sizeof(yaml), "metadata:\n  labels: {");
	for (int i = 0; i <= PODSPEC_MAX_ITEMS; i++)
		len += (size_t)snprintf(yaml + len, sizeof(yaml) - len, "l%d: v, ", i);
	snprintf(yaml + len, sizeof(yaml) - len, "}\n  name: p\nkind: Pod\n");
	expect_error(yaml, -E2BIG, "line 2: metadata.labels has more than 256 entries");

	/* Nesting, in a field that would only be ignored. */
	len = (size_t)snprintf(yaml, sizeof(yaml), POD_HEAD ONE_CONTAINER "  affinity: ");
	for (int i = 0; i < 100; i++)
		yaml[len++] = '[';
	for (int i = 0; i < 100; i++)
		yaml[len++] = ']';
	snprintf(yaml + len, sizeof(yaml) - len, "\n");
	expect_error(yaml, -E2BIG, "line 9: YAML nested deeper than 64 levels");

	/* Nodes, in a document that is not even a workload. */
	len = (size_t)snprintf(yaml, sizeof(yaml), "kind: ConfigMap\ndata: [");
	for (int i = 0; i < PODSPEC_MAX_NODES; i++)
		len += (size_t)snprintf(yaml + len, sizeof(yaml) - len, "0,");
	snprintf(yaml + len, sizeof(yaml) - len, "]\n");
	expect_error(yaml, -E2BIG, "line 2: more than 100000 YAML nodes in one document");
}

static void test_aliases(void **state)
{
	(void)state;
	expect_error("kind: Pod\nmetadata: &m {name: p}\nx: *m\n", -EINVAL, "line 3: YAML aliases (*m) are not supported");
	/* The billion laughs never get past their first alias. */
	expect_error("a: &a [\"lol\", \"lol\", \"lol\", \"lol\"]\n"
		     "b: &b [*a, *a, *a, *a]\n"
		     "c: &c [*b, *b, *b, *b]\n"
		     "kind: Pod\n",
		     -EINVAL, "line 2: YAML aliases (*a) are not supported");
	/* A self-reference too. */
	expect_error("a: &a [*a]\n", -EINVAL, "line 1: YAML aliases (*a) are not supported");
	/* An anchor nobody refers to is harmless. */
	struct podspec *spec = parse(POD_HEAD "  containers: &c\n    - name: c\n      image: busybox\n");
	assert_string_equal(spec->containers[0].image, "busybox");
	podspec_free(spec);
}

/* The cases of Kubernetes' expansion tests (third_party/forked/golang/expansion). */
static void test_expand(void **state)
{
	(void)state;
	/* podspec_expand takes the spec's (writable) strings. */
#define S(literal) ((char *)(uintptr_t)(literal))
	char *names[] = { S("VAR_A"), S("VAR_B"), S("VAR_C"), S("VAR_REF"), S("VAR_EMPTY"), S("VAR_A") };
	char *values[] = { S("first"), S("B"), S("C"), S("$(VAR_A)"), S(""), S("A") };
	static const struct {
		const char *in, *out;
	} cases[] = {
		{ "$(VAR_A)", "A" }, /* the last definition wins */
		{ "___$(VAR_B)___", "___B___" },
		{ "$(VAR_A)-$(VAR_A)", "A-A" },
		{ "$(VAR_A)$(VAR_B)$(VAR_C)", "ABC" },
		{ "$(VAR_REF)", "$(VAR_A)" }, /* values are not expanded again */
		{ "f000-$$VAR_A", "f000-$VAR_A" },
		{ "foo\\$(VAR_C)bar", "foo\\Cbar" },
		{ "foo\\\\$(VAR_C)bar", "foo\\\\Cbar" },
		{ "$$(VAR_B)", "$(VAR_B)" },
		{ "$$$(VAR_B)", "$B" },
		{ "$$$$(VAR_B)", "$$(VAR_B)" },
		{ "$(VAR_EMPTY)", "" },
		{ "$(VAR_DNE)", "$(VAR_DNE)" },
		{ "$()", "$()" },
		{ "$(VAR_A", "$(VAR_A" }, /* unterminated */
		{ "$(VAR_A$(VAR_B)", "$(VAR_A$(VAR_B)" }, /* the name is "VAR_A$(VAR_B" */
		{ "$VAR_A", "$VAR_A" },
		{ "$", "$" },
		{ "$$", "$" },
		{ "foo$", "foo$" },
		{ "$)", "$)" },
		{ "", "" },
		{ "no refs", "no refs" },
	};
	for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
		char *out = NULL;
		assert_int_equal(podspec_expand(cases[i].in, names, values, ELEMENTSOF(names), &out), 0);
		if (strcmp(out, cases[i].out) != 0)
			fail_msg("\"%s\" expanded to \"%s\", not \"%s\"", cases[i].in, out, cases[i].out);
		free(out);
	}
	char *out = NULL;
	assert_int_equal(podspec_expand("$(VAR_A)", NULL, NULL, 0, &out), 0);
	assert_string_equal(out, "$(VAR_A)");
	free(out);

	/* Bounded: 17 references to a 64 KiB value exceed 1 MiB. */
	static char big[PODSPEC_STRING_MAX + 1];
	memset(big, 'x', PODSPEC_STRING_MAX);
	char *big_names[] = { S("X") }, *big_values[] = { big };
	char refs[17 * 4 + 1] = "";
	for (int i = 0; i < 17; i++)
		strcat(refs, "$(X)");
	out = (char *)(uintptr_t)0x1;
	assert_int_equal(podspec_expand(refs, big_names, big_values, 1, &out), -E2BIG);
	assert_ptr_equal(out, (char *)(uintptr_t)0x1);
	refs[16 * 4] = '\0';
	assert_int_equal(podspec_expand(refs, big_names, big_values, 1, &out), 0);
	assert_int_equal(strlen(out), 16 * PODSPEC_STRING_MAX);
	free(out);
}

static void test_load(void **state)
{
	(void)state;
	struct podspec *spec = NULL;
	char err[512];
	assert_int_equal(podspec_load(TEST_BINARY_DIR "/no-such.yaml", &spec, err, sizeof(err)), -ENOENT);
	assert_string_equal(err, TEST_BINARY_DIR "/no-such.yaml: cannot open: No such file or directory");
	assert_null(spec);

	char path[] = "/tmp/test_podspec_XXXXXX";
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	static const char bad[] = POD_HEAD "  containers: oops\n";
	assert_int_equal(write(fd, bad, sizeof(bad) - 1), (ssize_t)sizeof(bad) - 1);
	char want[512];
	snprintf(want, sizeof(want), "%s: line 6: spec.containers must be a list of containers", path);
	assert_int_equal(podspec_load(path, &spec, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, want);

	/* One byte past the limit. */
	static char block[PODSPEC_FILE_MAX];
	memset(block, '#', sizeof(block));
	assert_int_equal(write(fd, block, sizeof(block)), (ssize_t)sizeof(block));
	snprintf(want, sizeof(want), "%s: larger than 1048576 bytes", path);
	assert_int_equal(podspec_load(path, &spec, err, sizeof(err)), -E2BIG);
	assert_string_equal(err, want);
	assert_null(spec);
	close(fd);
	unlink(path);

	/* A FIFO nobody writes to must not block the reader. */
	assert_int_equal(mkfifo(path, 0600), 0);
	snprintf(want, sizeof(want), "%s: not a regular file", path);
	assert_int_equal(podspec_load(path, &spec, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, want);
	unlink(path);

	/* No room for a message is fine too. */
	assert_int_equal(podspec_parse("x", 1, &spec, NULL, 0), -EINVAL);
	podspec_free(NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_daemonset), cmocka_unit_test(test_kustomize_output),
		cmocka_unit_test(test_pod),	  cmocka_unit_test(test_jobs),
		cmocka_unit_test(test_deployment), cmocka_unit_test(test_defaults),
		cmocka_unit_test(test_types),	  cmocka_unit_test(test_ignored),
		cmocka_unit_test(test_errors),	  cmocka_unit_test(test_limits),
		cmocka_unit_test(test_aliases),	  cmocka_unit_test(test_expand),
		cmocka_unit_test(test_load),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
