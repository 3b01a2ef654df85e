# SPDX-License-Identifier: Apache-2.0
# Step fault of the cluster e2e; tests/cluster/e2e.sh sources this file.
# A chip fault in node 1's DCMI simulator: allocatable drops, the plugin
# logs it, the holding pod's allocatedResourcesStatus turns Unhealthy, no new
# pod gets the chip; recovery undoes each.
# shellcheck shell=bash disable=SC2154 # bin, build, root, tmp: set by e2e.sh

needs fault install

# The status the kubelet gives a pod's devices (gate ResourceHealthStatus):
# "npu-3=Unhealthy ..." for the container's allocatedResourcesStatus.
resource_health() { # POD
	k get pod "$1" -o json | jq -r '[.status.containerStatuses[0].allocatedResourcesStatus[]?
		| .resources[]? | "\(.resourceID)=\(.health)"] | join(" ")'
}

step_fault() {
	local chip t0 ms pod got out
	run_npu_pod holder "$N1" 1 || { fail "4. a pod holding one chip of $N1" "not Ready"; return; }
	chip=$(pod_devices holder)
	got=$(k exec holder -- sh -c 'echo "$ASCEND_RT_VISIBLE_DEVICES $ASCEND_NPU_STATUS"')
	[ "$got" = "0 /var/run/ascend/npu-status/status.json" ] &&
		pass "4. pod holder: ASCEND_VISIBLE_DEVICES=$chip, ASCEND_RT_VISIBLE_DEVICES and ASCEND_NPU_STATUS: $got" ||
		fail "4. ASCEND_RT_VISIBLE_DEVICES=0 and the status file's path" "$got"
	pod=$(plugin_pod "$N1")
	# The fault: chip $chip turns critical in node 1's DCMI simulator.
	t0=$(now_ms)
	node_set_chip_health "$(cluster_node_dir 1)" "$chip" 3 80E01801 || { fail "4. fault" "cannot write the state"; return; }
	# The live status file: the container reads its chip's fault itself.
	if out=$(wait_status_file holder main '.version == 1 and .chips[0].healthy == false and .chips[0].level != "None"' 10000); then
		ms=$(($(now_ms) - t0))
		figure fault "chip fault -> the container reads it in its status file in $ms ms (kubectl exec included)"
		pass "4. pod holder reads \$ASCEND_NPU_STATUS $ms ms after the fault: $out"
	else
		fail "4. the container's status file shows the fault" "$out"
	fi
	if wait_alloc "$N1" 7 "" 30s; then
		ms=$(($(now_ms) - t0))
		figure fault "chip fault -> node allocatable 7 in $ms ms"
		pass "4. chip $chip of $N1 critical: allocatable 7 in $ms ms, capacity $(capacity "$N1")"
		[ "$(capacity "$N1")" = 8 ] || fail "4. capacity stays 8" "$(capacity "$N1")"
	else
		fail "4. allocatable 7 after a fault" "still $(alloc "$N1")"
	fi
	got=$(k -n kube-system logs "$pod" | grep -E "npu-$chip.*(Unhealthy|unhealthy)" | tail -n 1)
	[ -n "$got" ] && pass "4. kubectl logs $pod: $got" || fail "4. the plugin logs the fault" "no line for npu-$chip"
	# ResourceHealthStatus: the pod holding the chip sees it Unhealthy.
	if k wait --for=jsonpath='{.status.containerStatuses[0].allocatedResourcesStatus[0].resources[0].health}'=Unhealthy \
		pod/holder --timeout=30s >/dev/null; then
		pass "4. pod holder's allocatedResourcesStatus: $(resource_health holder)"
	else
		fail "4. allocatedResourcesStatus shows the chip Unhealthy" "$(resource_health holder)"
	fi
	# No new pod gets the chip: 6 more fit (8 - 1 unhealthy - 1 held).
	if run_npu_pod taker "$N1" 6; then
		got=$(pod_devices taker)
		[[ ,$got, != *,$chip,* ]] && pass "4. a pod taking the 6 free chips gets $got, not $chip" ||
			fail "4. no new pod gets the faulty chip" "taker got $got"
	else
		fail "4. a pod taking the 6 free chips" "$(k describe pod taker | tail -n 5)"
	fi
	delete_pods taker
	t0=$(now_ms)
	node_set_chip_health "$(cluster_node_dir 1)" "$chip" 0 "" || fail "4. recovery" "cannot write the state"
	if wait_alloc "$N1" 8 "" 30s; then
		figure fault "recovery -> node allocatable 8 in $(($(now_ms) - t0)) ms"
		pass "4. recovery: allocatable 8 again"
	else
		fail "4. recovery: allocatable 8" "$(alloc "$N1")"
	fi
	out=$(wait_status_file holder main '.chips[0].healthy == true and .chips[0].level == "None"' 30000) &&
		pass "4. pod holder's status file says the chip recovered: $out" ||
		fail "4. the status file shows the recovery" "$out"
	k wait --for=jsonpath='{.status.containerStatuses[0].allocatedResourcesStatus[0].resources[0].health}'=Healthy \
		pod/holder --timeout=30s >/dev/null && pass "4. pod holder's allocatedResourcesStatus back to $(resource_health holder)" ||
		fail "4. allocatedResourcesStatus Healthy again" "$(resource_health holder)"
	delete_pods holder
}
