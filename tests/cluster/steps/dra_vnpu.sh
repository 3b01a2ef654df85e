# SPDX-License-Identifier: Apache-2.0
# Step dra_vnpu of the cluster e2e; tests/cluster/e2e.sh sources this file.
# Dynamic vNPUs: node 2 moves to the DRA driver with chip 0 carved on demand
# (tests/cluster/dra-vnpu). Claims of different templates land on chip 0
# until its AI cores are used up, the next one and a whole-chip claim of
# chip 0 stay Pending, a deleted pod's vNPU goes and the Pending pod starts;
# a driver restart and a kubelet restart keep the vNPUs of running pods; a
# driver killed while DCMI creates a vNPU leaves no orphan once it is back;
# a sub-health chip is tainted with the effect None and still used, and a
# separated chip's pods are evicted by Kubernetes (NoExecute).
# Leaves node 2 on the device plugin.
# shellcheck shell=bash disable=SC2154 # bin, build, root, tmp: set by e2e.sh

needs dra_vnpu install

# A claim for one vNPU of TEMPLATE made on demand, and a pod on the DRA node
# using it, both named NAME.
vnpu_pod() { # NAME TEMPLATE
	cat <<EOF
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: $1}
spec:
  devices:
    requests:
    - name: vnpu
      exactly:
        deviceClassName: vnpu.$DRA
        selectors: [{cel: {expression: 'device.attributes["$DRA"].dynamic == true && device.attributes["$DRA"].template == "$2"'}}]
---
EOF
	claim_pod "$1" "$ND" "$1"
}
# The vnpu lines of the simulator's state on the DRA node, sorted.
state_vnpus() { grep '^vnpu ' "$(node_state_file "$(cluster_node_dir "$DK")")" | sort; }
# wait_vnpus N: the state holds N vNPUs within 60 s (woken by its changes).
wait_vnpus() {
	local deadline
	deadline=$(($(now_ms) + 60000))
	until [ "$(state_vnpus | grep -c .)" = "$1" ]; do
		(($(now_ms) < deadline)) || return 1
		inotifywait -qq -t 1 -e moved_to,close_write "$(dirname "$(node_state_file "$(cluster_node_dir "$DK")")")" >/dev/null 2>&1 || true
	done
}
ready() { k wait --for=condition=Ready "${@/#/pod/}" --timeout="$WAIT" >/dev/null 2>&1; } # POD...
# The pod's vNPU: its ASCEND_VISIBLE_DEVICES, checked to be a vNPU id the
# state lists on chip 0 and a /dev/davinci<id> in the container.
pod_vnpu() { # POD
	local id
	id=$(pod_devices "$1")
	[[ $id =~ ^[0-9]+$ ]] && ((id >= 100)) && state_vnpus | grep -q "^vnpu id=$id phy=0 " &&
		k exec "$1" -c main -- test -c "/dev/davinci$id" && echo "$id"
}
# until_ok CMD...: runs CMD until it succeeds, for 60 s at most, woken by
# the DRA node's kubelet log (after a kubelet restart, exec and the pods'
# state come back with it).
until_ok() {
	local deadline
	deadline=$(($(now_ms) + 60000))
	until "$@"; do
		(($(now_ms) < deadline)) || return 1
		inotifywait -qq -t 1 -e modify "$CLUSTER_DIR/logs/kubelet-n$DK.log" >/dev/null 2>&1 || true
	done
}
# wait_record TEXT: the driver's checkpoint on the DRA node holds TEXT
# within 60 s (woken by its replacement).
wait_record() {
	local f deadline
	f=$(cluster_node_dir "$DK")/var/lib/kubelet/plugins/$DRA/checkpoint.json
	deadline=$(($(now_ms) + 60000))
	until grep -q -- "$1" "$f" 2>/dev/null; do
		(($(now_ms) < deadline)) || return 1
		inotifywait -qq -t 1 -e moved_to,close_write "$(dirname "$f")" >/dev/null 2>&1 || true
	done
}
# Sets (or, with "", clears) a hang_ms= on chip 0's line of the state, by
# an atomic rename, keeping the vnpu lines the simulator wrote.
chip0_hang() { node_set_chip_attrs "$(cluster_node_dir "$DK")" 0 "hang_ms=$1"; } # VALUE

step_dra_vnpu() {
	local out ids id t0 p pid gone
	# Placements consume their chip's counters: without them the driver
	# publishes none, and there is nothing to carve.
	skip_unless_api counters "13. dynamic vNPUs through DRA (the whole step)" || return 0
	# a. Node 2 on the DRA driver, chip 0 carved on demand.
	check "13a. kubectl label node $ND npu- npu-dra=true" k label node "$ND" npu- npu-dra=true
	k -n kube-system wait --for=delete pod -l name=ascend-device-plugin --field-selector "spec.nodeName=$ND" --timeout="$WAIT" >/dev/null 2>&1
	check "13a. kubectl apply -k tests/cluster/dra-vnpu (--dra-dynamic-vnpus=0)" k apply -k "$root/tests/cluster/dra-vnpu"
	check "13a. kubectl -n kube-system rollout status daemonset/ascend-dra-driver" \
		k -n kube-system rollout status daemonset/ascend-dra-driver --timeout="$WAIT"
	out=$(wait_devices 'split("\n") | map(select(startswith("npu-0-"))) | length == 16' "${WAIT%s}000")
	if [ "$(grep -c '^npu-0-' <<<"$out")" = 16 ] && grep -q '^npu-0 ' <<<"$out" && grep -q '^npu-1 ' <<<"$out"; then
		pass "13a. $ND's slices: npu-0 whole and its 16 placements ($(grep '^npu-0-' <<<"$out" | awk '{print $1}' | sed 's/-[0-9]*$//' | sort | uniq -c | awk '{print $2 "x" $1}' | tr '\n' ' ')), npu-1..7 whole"
	else
		fail "13a. the placements of chip 0" "$out"
	fi

	# b. Three templates on chip 0: 10 + 5 + 5 AI cores of its 20.
	t0=$(now_ms)
	for p in "vp1 vir10_3c_32g" "vp2 vir05_1c_8g" "vp3 vir05_1c_8g"; do
		# shellcheck disable=SC2086
		vnpu_pod $p | k apply -f - >/dev/null
	done
	if ready vp1 vp2 vp3 && wait_vnpus 3; then
		ids=""
		for p in vp1 vp2 vp3; do
			id=$(pod_vnpu "$p") && ids="$ids $p=$id" || ids="$ids $p=?"
		done
		if ! grep -q '?' <<<"$ids"; then
			pass "13b. three claims (vir10_3c_32g, vir05_1c_8g twice) Running on chip 0 in $(($(now_ms) - t0)) ms, each container with its vNPU as /dev/davinci<id>:$ids; the simulator: $(state_vnpus | tr '\n' ';')"
		else
			fail "13b. the vNPUs in the containers" "$ids; $(state_vnpus | tr '\n' ';')"
		fi
	else
		fail "13b. three vNPU pods" "$(k get pods -o wide 2>&1 | tail -n 5); $(state_vnpus | tr '\n' ';')"
	fi

	# c. Chip 0 full: a fourth vNPU and a whole-chip claim of chip 0 wait.
	vnpu_pod vp4 vir05_1c_8g | k apply -f - >/dev/null
	chip_claim whole0 0 | k apply -f - >/dev/null
	claim_pod whole0 "$ND" whole0 | k apply -f - >/dev/null
	if k wait --for=jsonpath='{.status.conditions[?(@.type=="PodScheduled")].reason}'=Unschedulable pod/vp4 pod/whole0 --timeout=60s >/dev/null 2>&1; then
		pass "13c. chip 0 full: vp4 (vir05_1c_8g) and whole0 (chip 0 whole) Pending: $(k get pod vp4 -o jsonpath='{.status.conditions[?(@.type=="PodScheduled")].message}')"
	else
		fail "13c. vp4 and whole0 Pending" "$(k get pods vp4 whole0 -o wide 2>&1)"
	fi

	# d. A pod goes: its vNPU goes, and vp4 starts in its place.
	id=$(pod_vnpu vp2)
	delete_pods vp2
	k delete resourceclaim vp2 --wait=false >/dev/null 2>&1
	# The id is free again, so vp4 may well get it: the driver's log says
	# what was destroyed.
	if ready vp4 && wait_vnpus 3 && k -n kube-system logs "$(dra_driver_pod)" | grep -q "destroyed vNPU $id "; then
		pass "13d. vp2 deleted: its vNPU $id destroyed (its log line), vp4 Running with vNPU $(pod_vnpu vp4); whole0 still Pending ($(k get pod whole0 -o jsonpath='{.status.phase}'))"
	else
		fail "13d. vp4 after vp2" "$(k get pods -o wide 2>&1 | tail -n 5); $(state_vnpus | tr '\n' ';')"
	fi

	# e. A driver restart and a kubelet restart keep the running pods' vNPUs.
	out=$(state_vnpus)
	k -n kube-system delete pod "$(dra_driver_pod)" --wait=true --timeout="$WAIT" >/dev/null 2>&1
	k -n kube-system rollout status daemonset/ascend-dra-driver --timeout="$WAIT" >/dev/null 2>&1
	restart_kubelet "$DK"
	k wait --for=condition=Ready "node/$ND" --timeout="$WAIT" >/dev/null 2>&1
	if ready vp1 vp3 vp4 && [ "$(state_vnpus)" = "$out" ] && until_ok pod_vnpu vp1 >/dev/null &&
		until_ok pod_vnpu vp4 >/dev/null; then
		pass "13e. after a driver restart and a kubelet restart: vp1, vp3, vp4 Running on the same vNPUs ($(tr '\n' ';' <<<"$out"))"
	else
		fail "13e. vNPUs across restarts" "before: $out; now: $(state_vnpus | tr '\n' ';'); $(k get pods -o wide 2>&1 | tail -n 5)"
	fi

	# f. The driver killed while DCMI creates a vNPU: once back, the pod
	# runs and no vNPU is left without a pod.
	delete_pods vp3 vp4 whole0
	k delete resourceclaim vp3 vp4 whole0 --wait=false >/dev/null 2>&1
	wait_vnpus 1 || fail "13f. vp3's and vp4's vNPUs destroyed" "$(state_vnpus | tr '\n' ';')"
	chip0_hang create_vdevice:8000
	vnpu_pod vp5 vir05_1c_16g | k apply -f - >/dev/null
	# The record names the vNPU before DCMI is asked to create it.
	if wait_record '"vnpu":{"id":[0-9]*,"created":false}'; then
		pid=$(pgrep -f -- '--dra-dynamic-vnpus=0' | head -n 1)
		kill -9 "$pid"
		chip0_hang ""
		if ready vp5 && wait_vnpus 2; then
			gone=""
			for p in vp1 vp5; do
				id=$(pod_vnpu "$p") || gone="$gone $p"
			done
			[ -z "$gone" ] && [ "$(state_vnpus | grep -c .)" = 2 ] &&
				pass "13f. the driver killed (pid $pid) while DCMI created vp5's vNPU: back, vp5 Running with vNPU $(pod_vnpu vp5); the simulator holds exactly the vNPUs of vp1 and vp5 ($(state_vnpus | tr '\n' ';'))" ||
				fail "13f. no orphan" "pods without their vNPU:$gone; $(state_vnpus | tr '\n' ';')"
		else
			fail "13f. vp5 after the kill" "$(k get pod vp5 -o wide 2>&1); $(k describe pod vp5 | tail -n 6); $(state_vnpus | tr '\n' ';')"
		fi
	else
		chip0_hang ""
		fail "13f. the driver's create for vp5" "no record of a vNPU to create: $(cat "$(cluster_node_dir "$DK")/var/lib/kubelet/plugins/$DRA/checkpoint.json" 2>&1)"
	fi

	# h. Taint effects by fault level: chip 1 at SubHealthFault is tainted
	# with the effect None and a pod still gets it; chip 0 at SeparateNPU
	# (--dra-no-execute-levels) is tainted NoExecute, has its pods evicted
	# by Kubernetes itself, their vNPUs going with them, and a new claim of
	# it waits until it recovers.
	node_set_chip_health "$(cluster_node_dir "$DK")" 1 1 80818C06
	out=$(wait_devices 'split("\n") | map(select(startswith("npu-1 "))) | .[0] | test("sub-health=SubHealthFault-80818C06:None")' 60000)
	chip_claim sub1 1 | k apply -f - >/dev/null
	claim_pod sub1 "$ND" sub1 | k apply -f - >/dev/null
	if grep -q '^npu-1 .*npu.ascend.com/sub-health=SubHealthFault-80818C06:None$' <<<"$out" && ready sub1; then
		pass "13h. chip 1 at SubHealthFault: $(grep '^npu-1 ' <<<"$out"); pod sub1 Running on it"
	else
		fail "13h. a sub-health chip in service" "$(grep '^npu-1 ' <<<"$out"); $(k get pod sub1 -o wide 2>&1 | tail -n 1)"
	fi
	# 80E18402 (HBM rows isolated) is SeparateNPU in the built-in table.
	t0=$(now_ms)
	node_set_chip_health "$(cluster_node_dir "$DK")" 0 3 80E18402
	if skip_unless_api taints "13h. chip 0's taint at SeparateNPU"; then
		out=$(wait_devices 'split("\n") | map(select(startswith("npu-0 "))) | .[0] | test(":NoExecute$")' 60000)
		expect "13h. chip 0 at SeparateNPU: its slice entry tainted NoExecute, the value naming the level and the code ($(grep '^npu-0 ' <<<"$out"))" \
			"$ND's ResourceSlices" "npu.ascend.com/unhealthy=SeparateNPU-80E18402:NoExecute" "$(awk '$1 == "npu-0" { print $5 }' <<<"$out")"
	fi
	if k wait --for=delete pod/vp1 pod/vp5 --timeout=90s >/dev/null 2>&1 && wait_vnpus 0; then
		pass "13h. chip 0 at SeparateNPU: Kubernetes evicted vp1 and vp5 in $(($(now_ms) - t0)) ms and their vNPUs were destroyed"
	else
		fail "13h. eviction from a separated chip" "$(dra_devices | grep '^npu-0 '); $(k get pods vp1 vp5 -o wide 2>&1 | tail -n 2); $(state_vnpus | tr '\n' ';')"
	fi
	# The chip free now, only the taint keeps a new claim of it waiting.
	chip_claim sep0 0 | k apply -f - >/dev/null
	claim_pod sep0 "$ND" sep0 | k apply -f - >/dev/null
	if k wait --for=jsonpath='{.status.conditions[?(@.type=="PodScheduled")].reason}'=Unschedulable pod/sep0 --timeout=60s >/dev/null 2>&1; then
		pass "13h. a new claim of chip 0 whole stays Pending while chip 0 is tainted: $(k get pod sep0 -o jsonpath='{.status.conditions[?(@.type=="PodScheduled")].message}')"
	else
		fail "13h. a new claim of the separated chip stays Pending" "$(k get pod sep0 -o wide 2>&1 | tail -n 1)"
	fi
	node_set_chip_health "$(cluster_node_dir "$DK")" 0 0 ""
	node_set_chip_health "$(cluster_node_dir "$DK")" 1 0 ""
	ready sep0 && pass "13h. chip 0 recovered: pod sep0 runs with chip 0 whole ($(claim_devices sep0))" ||
		fail "13h. the Pending claim of chip 0 runs once it recovered" "$(k get pod sep0 -o wide 2>&1 | tail -n 1); $(dra_devices | grep '^npu-0 ')"
	delete_pods sub1 sep0
	k delete resourceclaim sub1 sep0 --wait=false >/dev/null 2>&1

	# g. Back to the device plugin: every vNPU destroyed with its pod.
	delete_pods vp1 vp5
	k delete resourceclaim vp1 vp5 --wait=false >/dev/null 2>&1
	wait_vnpus 0 && pass "13g. every pod gone: no vNPU left on $ND" || fail "13g. no vNPU left" "$(state_vnpus | tr '\n' ';')"
	k label node "$ND" npu-dra- npu=true >/dev/null
	k -n kube-system wait --for=delete pod -l name=ascend-dra-driver --timeout="$WAIT" >/dev/null 2>&1
	wait_capacity "$ND" 8 && wait_alloc "$ND" 8 && pass "13g. $ND back on the device plugin: ascend.com/npu 8" ||
		fail "13g. back on the device plugin" "capacity $(capacity "$ND"), allocatable $(alloc "$ND")"
	# The driver as the other steps have it.
	k apply -k "$root/tests/cluster/dra" >/dev/null
}
