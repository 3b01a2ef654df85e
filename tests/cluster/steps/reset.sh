# SPDX-License-Identifier: Apache-2.0
# Step reset of the cluster e2e; tests/cluster/e2e.sh sources this file.
# Chip resets by group, with the plugin of tests/cluster/reset
# (deploy/overlays/config with faultPolicy.reset on). Node 1's eight 910B3
# are one board, which a reset takes down whole (the simulator's
# reset_group=0, as the hardware does). A chip whose fault asks for a reset,
# no pod on the board: the plugin resets it, the simulator's reset log names
# all eight chips, the node's allocatable falls to 0 and comes back to 8. A
# pod on another chip of the board: the plugin holds the reset (its log line,
# ascend_npu_reset_decisions_total{reason="held-by-pod"}), and resets the
# board once the pod is deleted. Leaves the base deploy/ applied and node
# 1's chips as they were.
# shellcheck shell=bash disable=SC2154 # bin, build, root, tmp: set by e2e.sh

needs reset install

# 80E18005 (HBMC parity) is RestartNPU in the built-in table: it asks for a
# reset.
readonly RESET_CODE=80E18005
# Where tests/cluster/reset has the simulator log its resets, on the node.
readonly RESET_LOG=/var/lib/ascend-device-plugin/fake-dcmi-resets.log
readonly RESET_BOARD=0,1,2,3,4,5,6,7

reset_log() { cat "$(cluster_node_dir 1)$RESET_LOG" 2>/dev/null; }
# wait_reset_log N: node 1's reset log has N lines within 30 s (woken by
# the changes of its directory); prints it.
wait_reset_log() {
	local f deadline
	f=$(cluster_node_dir 1)$RESET_LOG
	deadline=$(($(now_ms) + 30000))
	until [ "$(reset_log | grep -c .)" -ge "$1" ]; do
		(($(now_ms) < deadline)) || break
		inotifywait -qq -t 1 -e create,modify "$(dirname "$f")" >/dev/null 2>&1 || true
	done
	reset_log
	[ "$(reset_log | grep -c .)" = "$1" ]
}
# The plugin pod of node 1 that is not going away (a roll's old pod may
# still be terminating when the roll is done).
reset_plugin_pod() {
	k -n kube-system get pods -l name=ascend-device-plugin --field-selector "spec.nodeName=$N1" -o json |
		jq -r '[.items[] | select(.metadata.deletionTimestamp == null)][0].metadata.name // ""'
}
# wait_plugin_line POD REGEX: the first line of POD's log matching the
# extended REGEX, within 30 s (woken by writes to the pods' log files on
# node 1); false without one.
wait_plugin_line() {
	local line deadline
	deadline=$(($(now_ms) + 30000))
	while :; do
		line=$(k -n kube-system logs "$1" 2>/dev/null | grep -m1 -E "$2") && { echo "$line"; return 0; }
		(($(now_ms) < deadline)) || return 1
		inotifywait -qq -r -t 1 -e modify "$(cluster_node_dir 1)/var/log/pods" >/dev/null 2>&1 || true
	done
}
# reset_decisions POD PHY REASON: the plugin's ascend_npu_reset_decisions_total
# for chip PHY and REASON, read from its /metrics through the API server's pod
# proxy ("" when the series is missing).
reset_decisions() {
	k get --raw "/api/v1/namespaces/kube-system/pods/$1:8084/proxy/metrics" 2>/dev/null |
		awk -v s="ascend_npu_reset_decisions_total{id=\"npu-$2\",phy=\"$2\",chip=\"910B3\",reason=\"$3\"}" '$1 == s { print $2 }'
}
# The plugin's line saying it resets chip PHY and its board.
reset_started_re() { echo "npu-$1: resetting the chip \(RestartNPU, code $RESET_CODE\) and with it its reset group \(board: npu-0\.\.npu-7\)"; } # PHY

step_reset() {
	local n1 pod t0 ms out held faulty i
	n1=$(cluster_node_dir 1)
	rm -f "$n1$RESET_LOG"
	check "15a. kubectl apply -k tests/cluster/reset (faultPolicy.reset on, the simulator's reset log)" \
		k apply -k "$root/tests/cluster/reset"
	k -n kube-system rollout status daemonset/ascend-device-plugin --timeout="$WAIT" >/dev/null
	pod=$(reset_plugin_pod)
	# The board: one reset takes all eight chips down.
	for i in ${RESET_BOARD//,/ }; do
		node_set_chip_attrs "$n1" "$i" reset_group=0 ||
			{ fail "15a. node 1's chips as one reset group" "cannot write the state"; reset_restore; return; }
	done
	wait_alloc "$N1" 8 || fail "15a. $N1's allocatable 8 on the reset-enabled plugin" "$(alloc "$N1")"
	out=$(held "$N1")
	[ -z "$out" ] || fail "15a. no container holds a chip of $N1 before the reset" "$out"

	# a. No pod on the board: chip 3's fault resets all eight, which come
	# back Healthy. It is away 2 s, so that the node shows the board out.
	t0=$(now_ms)
	node_set_chip_attrs "$n1" 3 reset=clean reset_ms=2000 health=2 "errors=$RESET_CODE" ||
		{ fail "15a. fault" "cannot write the state"; reset_restore; return; }
	if wait_alloc "$N1" 0 "" 20s; then
		pass "15a. chip 3 of $N1 at RestartNPU ($RESET_CODE), no pod on its board: the whole board out of service during the reset, allocatable 0 in $(($(now_ms) - t0)) ms"
	else
		fail "15a. the whole board Unhealthy during the reset" "allocatable $(alloc "$N1")"
	fi
	out=$(wait_reset_log 1)
	expect "15a. the simulator's reset log on $N1: one reset, of chip 3, took down the whole board ($out)" \
		"$n1$RESET_LOG" "reset phy=3 chips=$RESET_BOARD" "$out"
	if out=$(wait_plugin_line "$pod" "$(reset_started_re 3)"); then
		pass "15a. kubectl logs $pod: ${out#* }"
	else
		fail "15a. the plugin logs the reset of chip 3 with its board" "$(k -n kube-system logs "$pod" | grep -E 'npu-3' | tail -n 3)"
	fi
	if wait_alloc "$N1" 8 "" 30s; then
		ms=$(($(now_ms) - t0))
		figure reset "chip fault -> board reset -> node allocatable 8 in $ms ms (the simulated reset takes 2000 ms)"
		pass "15a. the board back from the reset Healthy: allocatable 8 in $ms ms; $(k -n kube-system logs "$pod" | grep -m1 -o 'npu-3: reset 1 done.*')"
	else
		fail "15a. the board Healthy again after the reset" "allocatable $(alloc "$N1")"
	fi
	node_set_chip_attrs "$n1" 3 health=0 errors= reset= reset_ms= || fail "15a. chip 3 cleared" "cannot write the state"

	# b. A pod on one chip of the board: another chip's fault is not reset
	# while the pod runs, and is once it is deleted.
	if ! run_npu_pod reset-holder "$N1" 1; then
		fail "15b. a pod holding one chip of $N1" "$(k describe pod reset-holder | tail -n 5)"
		delete_pods reset-holder
		reset_restore
		return
	fi
	held=$(pod_devices reset-holder)
	faulty=5
	[ "$held" != 5 ] || faulty=6
	node_set_chip_attrs "$n1" "$faulty" reset=clean reset_ms=500 health=2 "errors=$RESET_CODE" ||
		fail "15b. fault" "cannot write the state"
	if out=$(wait_plugin_line "$pod" "npu-$faulty: RestartNPU, code $RESET_CODE asks for a reset, but default/reset-holder/main hold a chip of its reset group \(board: npu-0\.\.npu-7\)"); then
		pass "15b. pod reset-holder on chip $held; chip $faulty at RestartNPU: not reset, kubectl logs $pod: ${out#* }"
	else
		fail "15b. the plugin holds the reset while the pod runs" "$(k -n kube-system logs "$pod" | grep -E "npu-$faulty" | tail -n 3)"
	fi
	# Counted before the line is said, so the line seen, the count is there.
	expect "15b. /metrics of $pod: ascend_npu_reset_decisions_total{id=\"npu-$faulty\",reason=\"held-by-pod\"} 1; no reset meanwhile (the simulator's log still has one line) and pod reset-holder Running" \
		"pod $pod's /metrics and $n1$RESET_LOG" "1 1 Running" \
		"$(reset_decisions "$pod" "$faulty" held-by-pod) $(reset_log | grep -c .) $(k get pod reset-holder -o jsonpath='{.status.phase}')"
	t0=$(now_ms)
	delete_pods reset-holder
	out=$(wait_reset_log 2)
	expect "15b. pod reset-holder deleted: the board reset for chip $faulty (the simulator's log: $(tr '\n' ';' <<<"$out"))" \
		"$n1$RESET_LOG" "reset phy=$faulty chips=$RESET_BOARD" "$(tail -n 1 <<<"$out")"
	if out=$(wait_plugin_line "$pod" "$(reset_started_re "$faulty")") && wait_alloc "$N1" 8 "" 30s; then
		ms=$(($(now_ms) - t0))
		figure reset "holder pod deleted -> board reset -> node allocatable 8 in $ms ms"
		pass "15b. allocatable 8 again $ms ms after the pod's deletion; ascend_npu_reset_decisions_total{reason=\"reset\"} $(reset_decisions "$pod" "$faulty" reset); kubectl logs $pod: ${out#* }"
	else
		fail "15b. the board reset and Healthy after the pod's deletion" "allocatable $(alloc "$N1"); $(k -n kube-system logs "$pod" | grep -E "npu-$faulty" | tail -n 3)"
	fi
	node_set_chip_attrs "$n1" "$faulty" health=0 errors= reset= reset_ms= || fail "15b. chip $faulty cleared" "cannot write the state"
	reset_restore
}

# Node 1's chips without their reset group, and the base deploy/ for what
# follows.
reset_restore() {
	local i n1
	n1=$(cluster_node_dir 1)
	for i in ${RESET_BOARD//,/ }; do
		node_set_chip_attrs "$n1" "$i" reset_group= health=0 errors= reset= reset_ms= || fail "15. node 1's chips as they were" "cannot write the state"
	done
	k apply -k "$root/deploy" >/dev/null && k -n kube-system delete configmap ascend-device-plugin-config >/dev/null
	k -n kube-system rollout status daemonset/ascend-device-plugin --timeout="$WAIT" >/dev/null
	rm -f "$n1$RESET_LOG"
	# A reset that failed separates its chip, in a record that outlives the
	# plugin: said, and removed (which releases its chips) so that later
	# steps find every chip.
	if grep -qv '^[[:space:]]*\(#\|$\)' "$n1/var/lib/ascend-device-plugin/separated-chips" 2>/dev/null; then
		fail "15. no chip separated by a reset" "$(cat "$n1/var/lib/ascend-device-plugin/separated-chips")"
		rm -f "$n1/var/lib/ascend-device-plugin/separated-chips"
	fi
	wait_alloc "$N1" 8 || fail "15. back to the base plugin: allocatable 8" "$(alloc "$N1")"
}
