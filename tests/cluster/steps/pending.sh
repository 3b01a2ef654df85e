# SPDX-License-Identifier: Apache-2.0
# Step pending of the cluster e2e; tests/cluster/e2e.sh sources this file.
# A pod asking for more NPUs than any node has stays Pending with the
# scheduler's reason, and ascend-doctor explain comes to the same verdict.
# shellcheck shell=bash disable=SC2154 # bin, build, root, tmp: set by e2e.sh

needs pending install

step_pending() {
	local msg sched out st codes summary
	npu_pod too-many "" 9 | sed '/nodeSelector/d' | k apply -f - >/dev/null
	if k wait --for=condition=PodScheduled=false pod/too-many --timeout="$WAIT" >/dev/null; then
		# The scheduler's words, as kubectl describe shows them in the event.
		msg=$(k describe pod too-many | sed -n '/^Events:/,$p' | grep FailedScheduling | tail -n 1)
		sched=$(k get pod too-many -o jsonpath='{.status.conditions[?(@.type=="PodScheduled")].message}')
		if grep -q '0/3 nodes are available: 3 Insufficient ascend.com/npu' <<<"$msg"; then
			pass "3. kubectl describe pod too-many (9 NPUs): FailedScheduling ${msg##*default-scheduler}"
		else
			fail "3. kubectl describe pod shows Insufficient ascend.com/npu" "$msg"
		fi
	else
		fail "3. a pod asking for 9 NPUs stays Pending" "$(k get pod too-many -o wide)"
	fi
	# ascend-doctor explain, reading this API server through this kubectl,
	# must come to the scheduler's own verdict, node by node; the scheduler's
	# message starts with the doctor's summary (1.36 goes on with what its
	# DRA plugin tried, all releases with preemption).
	st=0
	PATH="$bin:$PATH" KUBECONFIG=$(cluster_kubeconfig) "$build/tools/ascend-doctor/ascend-doctor" explain default/too-many |
		sed 's/^/    /'
	out=$(PATH="$bin:$PATH" KUBECONFIG=$(cluster_kubeconfig) "$build/tools/ascend-doctor/ascend-doctor" --json explain \
		default/too-many 2>&1) || st=$?
	codes=$(jq -r '.nodes[] | "\(.name):\(.fits):\([.reasons[].code] | join(","))"' <<<"$out" 2>/dev/null | sort | tr '\n' ' ')
	if ((st == 2)) && [ "$codes" = "$N1:false:insufficient-npu $N2:false:insufficient-npu $N3:false:insufficient-npu " ] &&
		summary=$(jq -r .summary <<<"$out") && [ -n "$summary" ] && [[ $sched == "$summary"* ]]; then
		pass "3. ascend-doctor explain: FAIL, insufficient-npu on each node, and the scheduler's own summary: $(jq -r .summary <<<"$out")"
	else
		fail "3. ascend-doctor explain agrees with the scheduler" "exit $st; nodes: $codes; doctor: $(jq -r .summary <<<"$out" 2>/dev/null); scheduler: $sched"
	fi
	delete_pods too-many
}
