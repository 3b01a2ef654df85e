# SPDX-License-Identifier: Apache-2.0
# Step install of the cluster e2e; tests/cluster/e2e.sh sources this file.
# The guide's install (docs/install.md): nodes labelled and tainted, the
# plugin image on every node, kubectl apply -k deploy/, one Ready plugin pod per
# node and each node's ascend.com/npu capacity (8, 8, and 5 plus 2 vNPUs on
# the mixed node 3). Every other step starts from the cluster it leaves.
# shellcheck shell=bash disable=SC2154 # bin, build, root, tmp: set by e2e.sh

needs install

step_install() {
	local n pods ready t0 caps
	check "1. kubectl label nodes $N1 $N2 $N3 npu=true" k label nodes "$N1" "$N2" "$N3" npu=true
	check "1. kubectl taint nodes ... ascend.com/npu=true:NoSchedule" \
		k taint nodes "$N1" "$N2" "$N3" ascend.com/npu=true:NoSchedule
	for n in 1 2 3; do
		# The list whole, then grep: grep -q would close the pipe early, and
		# ctr killed by SIGPIPE fails the pipeline under pipefail.
		if grep -qx 'docker.io/library/ascend-device-plugin:0.1.0' <<<"$("$bin/ctr" --address \
			"$(cluster_node_dir "$n")/containerd/containerd.sock" -n k8s.io images ls -q 2>/dev/null)"; then
			pass "1. the plugin image imported on $(cluster_node_name "$n") (ctr -n k8s.io images import)"
		else
			fail "1. the plugin image imported on $(cluster_node_name "$n")" "not in ctr images ls"
		fi
	done
	t0=$(now_ms)
	check "1. kubectl apply -k deploy/" k apply -k "$root/deploy"
	check "1. kubectl -n kube-system rollout status daemonset/ascend-device-plugin" \
		k -n kube-system rollout status daemonset/ascend-device-plugin --timeout="$WAIT"
	pods=$(k get pods -n kube-system -l name=ascend-device-plugin \
		-o jsonpath='{range .items[*]}{.spec.nodeName} {.status.phase} {.status.containerStatuses[0].ready}{"\n"}{end}')
	ready=$(grep -c ' Running true$' <<<"$pods")
	if [ "$ready" = 3 ] && [ "$(awk '{print $1}' <<<"$pods" | sort -u | wc -l)" = 3 ]; then
		pass "1. kubectl get pods -n kube-system -l name=ascend-device-plugin: one Running, Ready pod on each of the 3 nodes"
	else
		give_up "1. one Running, Ready plugin pod per node" "$pods"
	fi
	for n in "$N1" "$N2"; do
		wait_capacity "$n" 8 && wait_alloc "$n" 8 || true
	done
	wait_capacity "$N3" 5 && wait_capacity "$N3" 2 ascend.com/npu-vir04-3c || true
	figure install "apply -> every node's capacity in $(($(now_ms) - t0)) ms"
	caps=$(k get nodes -o jsonpath='{.items[*].status.capacity}')
	echo "    kubectl get nodes -o jsonpath='{.items[*].status.capacity}':"
	jq -c '{"ascend.com/npu": .["ascend.com/npu"], "ascend.com/npu-vir04-3c": .["ascend.com/npu-vir04-3c"]}' <<<"$caps" |
		sed 's/^/    /'
	for n in "$N1" "$N2"; do
		[ "$(capacity "$n")" = 8 ] && [ "$(alloc "$n")" = 8 ] && pass "1. $n: ascend.com/npu capacity 8, allocatable 8" ||
			fail "1. $n: ascend.com/npu 8" "capacity $(capacity "$n"), allocatable $(alloc "$n")"
	done
	# Node 3: chips 1-5 (chip 0 carries the vNPUs and is never listed whole) and the two vNPUs.
	[ "$(capacity "$N3")" = 5 ] && [ "$(capacity "$N3" ascend.com/npu-vir04-3c)" = 2 ] &&
		pass "1. $N3 (mixed): ascend.com/npu 5 (chip 0 carries vNPUs), ascend.com/npu-vir04-3c 2" ||
		fail "1. $N3: ascend.com/npu 5, ascend.com/npu-vir04-3c 2" \
			"$(capacity "$N3"), $(capacity "$N3" ascend.com/npu-vir04-3c)"
}
