# SPDX-License-Identifier: Apache-2.0
# Step metrics of the cluster e2e; tests/cluster/e2e.sh sources this file.
# The plugin's /metrics, read through the API server's pod proxy, labels a
# chip with the pod holding it; promtool finds nothing wrong with it.
# shellcheck shell=bash disable=SC2154 # bin, build, root, tmp: set by e2e.sh

needs metrics install

step_metrics() {
	local pod out deadline ok=false
	run_npu_pod metrics-pod "$N1" 1 || { fail "9. a pod holding a chip" "not Ready"; return; }
	pod=$(plugin_pod "$N1")
	deadline=$(($(now_ms) + 60000))
	# The plugin lists pod resources every telemetry interval (15 s).
	while (($(now_ms) < deadline)); do
		out=$(k get --raw "/api/v1/namespaces/kube-system/pods/$pod:8084/proxy/metrics" 2>&1) || true
		if grep -q 'namespace="default",pod="metrics-pod",container="main"' <<<"$out"; then
			ok=true
			break
		fi
		k -n kube-system logs "$pod" --tail=1 -f --since=1s >/dev/null 2>&1 & local lp=$!
		# Woken by the plugin's next log line or after 5 s.
		timeout 5 tail --pid="$lp" -f /dev/null 2>/dev/null
		kill "$lp" 2>/dev/null
	done
	if $ok; then
		pass "9. /metrics of $pod (through the API server's pod proxy) labels the chip with namespace, pod and container of metrics-pod: $(grep 'pod="metrics-pod"' <<<"$out" | head -n 1)"
	else
		fail "9. metrics carry the pod's labels" "$(grep -m3 'pod=' <<<"$out")"
	fi
	if command -v promtool >/dev/null; then
		printf '%s\n' "$out" >"$tmp/metrics"
		check "9. promtool check metrics finds nothing" promtool check metrics <"$tmp/metrics"
	else
		fail "9. promtool" "not installed (scripts/deps.sh metrics)"
	fi
	delete_pods metrics-pod
}
