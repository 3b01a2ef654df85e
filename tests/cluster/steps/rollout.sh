# SPDX-License-Identifier: Apache-2.0
# Step rollout of the cluster e2e; tests/cluster/e2e.sh sources this file.
# Rolling upgrades of the plugin (a surge roll) while NPU pods keep
# being created: none fails admission and no chip is held twice.
# shellcheck shell=bash disable=SC2154 # bin, build, root, tmp: set by e2e.sh

needs rollout install

# roll_once ROUND: one roll of the plugin's DaemonSet with NPU pods created
# throughout; adds to the step's created, failed_adm, reasons and dup.
roll_once() {
	local round=$1 t0 ms i=0 n pods made=0 st failed
	t0=$(now_ms)
	# A change of the pod template, as an upgrade makes one.
	k -n kube-system patch daemonset ascend-device-plugin --type=merge \
		-p '{"spec":{"template":{"metadata":{"annotations":{"e2e/rolled":"'"$t0"'"}}}}}' >/dev/null
	# Pods asking for NPUs keep coming while the plugin rolls, one per node in
	# turn, fewer than the two nodes' 16 chips: a slow roll must not leave pods
	# Pending for want of chips, each of which the wait below would sit out.
	k -n kube-system rollout status daemonset/ascend-device-plugin --timeout=300s >"$tmp/rollout" 2>&1 &
	local rpid=$!
	while kill -0 "$rpid" 2>/dev/null && ((i < 14)); do
		n=$(( (i % 2) + 1 ))
		npu_pod "roll-$round-$i" "$(cluster_node_name "$n")" 1 "" Never | k apply -f - >/dev/null && made=$((made + 1))
		i=$((i + 1))
		# Paced by the API server's answer to this list, not by a sleep.
		k get pods -l e2e=npu -o name >/dev/null
	done
	st=0
	wait "$rpid" || st=$?
	ms=$(($(now_ms) - t0))
	((st == 0)) || fail "6. roll $round: rollout status" "$(cat "$tmp/rollout")"
	for n in "$N1" "$N2"; do
		wait_capacity "$n" 8 || fail "6. roll $round: capacity back on $n" "$(capacity "$n")"
	done
	# Every pod that was created: Running, or failed admission, and why.
	for ((i = 0; i < made; i++)); do
		k wait --for=jsonpath='{.status.phase}'=Running "pod/roll-$round-$i" --timeout=30s >/dev/null 2>&1 || true
	done
	pods=$(k get pods -l e2e=npu -o json | jq -r '.items[] | select(.metadata.name | startswith("roll-"))
		| "\(.metadata.name) \(.status.phase) \(.status.reason // "-") \(.status.message // "" | gsub("\n"; " "))"')
	failed=$(awk '$2 == "Failed"' <<<"$pods" | wc -l)
	reasons+=$(awk '$2 == "Failed" { $1 = ""; $2 = ""; print }' <<<"$pods")
	running=$((running + $(awk '$2 == "Running"' <<<"$pods" | wc -l)))
	figure rollout "roll $round: the DaemonSet rolled in $ms ms, $made NPU pods created meanwhile, $failed failed admission"
	for n in "$N1" "$N2"; do
		no_double "$n" || { dup=1; held "$n"; }
	done
	created=$((created + made)) failed_adm=$((failed_adm + failed))
	# A kubelet before 1.37 follows one registration per resource and drops
	# the new pod's when the old pod's stream ends: the new pod registers
	# again, and says so in its log.
	local p
	for p in $(k -n kube-system get pods -l name=ascend-device-plugin -o name); do
		k -n kube-system logs "$p" | grep -q 'registered again with the kubelet' && dropped=$((dropped + 1))
	done
	k delete pods -l e2e=npu --wait=true --timeout="$WAIT" >/dev/null 2>&1
}

# Five rolls of a surge roll (maxSurge 1, maxUnavailable 0): the new pod of
# a node registers on its own socket beside the old one, so that the kubelet
# has a plugin throughout and admits every pod.
step_rollout() {
	local created=0 failed_adm=0 reasons='' running=0 dup=0 dropped=0 r
	for r in 1 2 3 4 5; do
		roll_once "$r"
	done
	if ((failed_adm == 0)); then
		pass "6. 5 surge rolls of the plugin with $created NPU pods created throughout: none failed admission"
	elif ((dropped > 0)); then
		# Seamless only where the kubelet keeps a registration per socket
		# (kubernetes/kubernetes#135437, 1.37): counted, not asserted.
		figure rollout "$failed_adm of $created pods failed admission in the instant a kubelet dropped the new plugin's registration ($dropped times the new pod registered again): $(sort <<<"$reasons" | uniq -c | head -n 1)"
		skip "6. no pod fails admission during the rolls" "this kubelet drops the new plugin's registration when the old one's stream ends (it follows one per resource; from 1.37 one per socket, kubernetes/kubernetes#135437); docs/upgrade.md"
	else
		fail "6. pods failed admission during the rolls" "$failed_adm of $created: $(sort <<<"$reasons" | uniq -c | head -n 3)"
	fi
	((dup == 0)) && pass "6. during and after the rolls no chip is held by two running pods" ||
		fail "6. no chip held twice" "a chip was held twice (above)"
	((running > 0)) && pass "6. $running pods created during the rolls ran with their chips" ||
		fail "6. pods created during the rolls run" "none ran"
	# Each node's new pod serves on a socket of its own. A registration
	# after the plugin's first names a hard link of that socket
	# (ascend-npu@<UID part>~2.sock, docs/upgrade.md): one instance still.
	local sock instances
	sock=$(find "$(cluster_node_dir 1)/var/lib/kubelet/device-plugins" -maxdepth 1 -name 'ascend-npu@*.sock' -printf '%f ')
	instances=$(tr ' ' '\n' <<<"$sock" | sed -n 's/^\(ascend-npu@[^~.]*\).*\.sock$/\1/p' | sort -u | wc -l)
	[ "$instances" = 1 ] && pass "6. the plugin serves on its pod's own socket: $sock" ||
		fail "6. one instance socket on node 1" "$sock"
}
