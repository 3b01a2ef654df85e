# SPDX-License-Identifier: Apache-2.0
# Step schedule of the cluster e2e; tests/cluster/e2e.sh sources this file.
# Scheduling (docs/install.md): examples/npu-pod.yaml sees exactly its
# chips, the Deployment's replicas land on different nodes, a pod without
# the toleration stays Pending, and the smoke-test Job succeeds.
# shellcheck shell=bash disable=SC2154 # bin, build, root, tmp: set by e2e.sh

needs schedule install

step_schedule() {
	local nodes t0 st
	t0=$(now_ms)
	example npu-pod.yaml >"$tmp/npu-pod.yaml"
	check "2. kubectl apply -f examples/npu-pod.yaml" k apply -f "$tmp/npu-pod.yaml"
	if k wait --for=condition=Ready pod/inference-pod --timeout="$WAIT" >/dev/null; then
		figure schedule "npu-pod.yaml apply -> Ready in $(($(now_ms) - t0)) ms"
		check_devices "2. inference-pod" inference-pod 1
	else
		fail "2. inference-pod Ready" "$(k describe pod inference-pod | tail -n 15)"
	fi

	# The Deployment: two replicas, tolerating the taint, spread by pod anti-affinity.
	# Its requests (2 CPUs, 8 GiB each) are more than three simulated nodes
	# sharing 2 cores can give, so the test asks for less; nothing else changes.
	example inference-deployment.yaml 'apiVersion: apps/v1
kind: Deployment
metadata: {name: inference-app}
spec:
  template:
    spec:
      containers:
      - name: inference
        resources:
          requests: {cpu: 100m, memory: 64Mi}
          limits: {memory: 128Mi}' >"$tmp/deploy.yaml"
	check "2. kubectl apply -f examples/inference-deployment.yaml" k apply -f "$tmp/deploy.yaml"
	if k rollout status deployment/inference-app --timeout="$WAIT" >/dev/null; then
		nodes=$(k get pods -l app=inference-app -o jsonpath='{range .items[*]}{.spec.nodeName}{"\n"}{end}')
		echo "    kubectl get pods -l app=inference-app -o wide:"
		k get pods -l app=inference-app -o wide | awk '{print "    " $1, $2, $3, $7}'
		[ "$(sort -u <<<"$nodes" | wc -l)" = 2 ] && pass "2. the Deployment's 2 replicas run on 2 different nodes (pod anti-affinity)" ||
			fail "2. replicas on different nodes" "$nodes"
	else
		fail "2. kubectl rollout status deployment/inference-app" "$(k describe pods -l app=inference-app | tail -n 20)"
	fi

	# A pod without the toleration: every NPU node is tainted, so it never lands.
	k apply -f - >/dev/null <<EOF
apiVersion: v1
kind: Pod
metadata: {name: no-toleration}
spec:
  terminationGracePeriodSeconds: 1
  containers:
  - {name: main, image: $E2E_BUSYBOX_IMAGE, command: [sleep, infinity]}
EOF
	if k wait --for=condition=PodScheduled=false pod/no-toleration --timeout="$WAIT" >/dev/null &&
		[ -z "$(k get pod no-toleration -o jsonpath='{.spec.nodeName}')" ]; then
		pass "2. a pod without the toleration stays Pending: $(k get pod no-toleration -o jsonpath='{.status.conditions[?(@.type=="PodScheduled")].message}')"
	else
		fail "2. a pod without the toleration is not scheduled" "$(k get pod no-toleration -o wide)"
	fi
	delete_pods no-toleration

	# The smoke test Job.
	t0=$(now_ms)
	example npu-smoke-test.yaml >"$tmp/smoke.yaml"
	check "2. kubectl apply -f examples/npu-smoke-test.yaml" k apply -f "$tmp/smoke.yaml"
	st=0
	k wait --for=condition=complete job/npu-smoke-test --timeout="$WAIT" >/dev/null || st=$?
	if ((st == 0)) && k logs job/npu-smoke-test | grep -q '^SMOKE TEST PASSED: 1 NPU(s) usable'; then
		pass "2. the smoke-test Job succeeds: $(k logs job/npu-smoke-test | grep '^SMOKE TEST PASSED')"
		figure schedule "smoke-test Job apply -> complete in $(($(now_ms) - t0)) ms"
	else
		fail "2. the smoke-test Job succeeds" "$(k logs job/npu-smoke-test 2>&1 | tail -n 15)"
	fi
	k delete -f "$tmp/smoke.yaml" -f "$tmp/deploy.yaml" --wait=true --timeout="$WAIT" >/dev/null 2>&1
	delete_pods inference-pod
}
