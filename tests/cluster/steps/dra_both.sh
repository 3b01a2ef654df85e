# SPDX-License-Identifier: Apache-2.0
# Step dra_both of the cluster e2e; tests/cluster/e2e.sh sources this file.
# One daemon, both front ends, on the mixed node 3
# (--front-end=both --dra-chips=0,310P): the device plugin's share, the DRA
# driver's slices with chip 0's vNPUs, the vNPU example, a DRA pod beside a
# device-plugin pod, and time-slicing through DRA. It applies the DRA objects
# (DeviceClasses, ServiceAccount, RBAC) itself when step dra has not.
# shellcheck shell=bash disable=SC2154 # bin, build, root, tmp: set by e2e.sh

needs dra_both install

# o. One daemon, both front ends, on the mixed node 3 (chip 0 carved into
# two vNPUs, chips 1-3 910B, chips 4-5 310P): --front-end=both
# --dra-chips=0,310P gives the DRA driver chip 0 (its vNPUs) and the 310P
# chips, the device plugin chips 1-3. The DaemonSet is deploy/dra's (as the
# test overlay renders it) with the args, a name and labels of its own and
# the device-plugins mount the device plugin needs, as docs/dra.md says.
step_dra_both() {
	local out t0 pod devs
	# The DaemonSet below runs as the driver's ServiceAccount and serves its
	# DeviceClasses: step dra's objects (its 10b). Run without that step,
	# this one applies them; no node has the label npu-dra, so the driver's
	# own DaemonSet runs no pod.
	if ! k get deviceclass "$DRA" >/dev/null 2>&1; then
		check "10o. kubectl apply -k tests/cluster/dra (step dra's objects; no node has its label npu-dra)" \
			k apply -k "$root/tests/cluster/dra"
	fi
	k kustomize "$root/tests/cluster/dra" | k create --dry-run=client -o json -f - |
		jq 'select(.kind == "DaemonSet") | .metadata.name = "ascend-npu-both"
			| .spec.selector.matchLabels.name = "ascend-npu-both" | .spec.template.metadata.labels.name = "ascend-npu-both"
			| .spec.template.spec.nodeSelector = {"npu-both": "true"}
			| .spec.template.spec.containers[0].args = ["--front-end=both", "--dra-chips=0,310P",
				"--kubelet-dir=/var/lib/kubelet", "--health-interval=5s", "--config=/etc/ascend-npu-both/config.yaml"]
			| .spec.template.spec.containers[0].volumeMounts += [{name: "device-plugins", mountPath: "/var/lib/kubelet/device-plugins"},
				{name: "config", mountPath: "/etc/ascend-npu-both", readOnly: true}]
			| .spec.template.spec.volumes += [{name: "device-plugins", hostPath: {path: "/var/lib/kubelet/device-plugins", type: "Directory"}},
				{name: "config", configMap: {name: "ascend-npu-both"}}]' \
		>"$tmp/both.json" || { fail "10o. the DaemonSet with --front-end=both" "cannot render it"; return; }
	# The 310P chips time-sliced two ways (their own resource name): each
	# is a device that two claims may share.
	check "10o. kubectl create configmap ascend-npu-both: ascend.com/npu-310p for the 310P chips, time-sliced x2" \
		k -n kube-system create configmap ascend-npu-both --from-literal=config.yaml="version: v1
resources:
  - family: 310P
    name: ascend.com/npu-310p
sharing:
  timeSlicing:
    resources:
      - name: ascend.com/npu-310p
        replicas: 2"
	t0=$(now_ms)
	check "10o. kubectl label node $N3 npu- npu-both=true" k label node "$N3" npu- npu-both=true
	k -n kube-system wait --for=delete pod -l name=ascend-device-plugin --field-selector "spec.nodeName=$N3" --timeout="$WAIT" >/dev/null 2>&1
	check "10o. kubectl apply of deploy/dra's DaemonSet with --front-end=both --dra-chips=0,310P and the device-plugins mount" \
		k apply -f "$tmp/both.json"
	check "10o. kubectl -n kube-system rollout status daemonset/ascend-npu-both" \
		k -n kube-system rollout status daemonset/ascend-npu-both --timeout="$WAIT"
	pod=$(k -n kube-system get pods -l name=ascend-npu-both -o jsonpath='{.items[0].metadata.name}')
	if wait_capacity "$N3" 3 && wait_alloc "$N3" 3; then
		wait_alloc "$N3" 0 ascend.com/npu-vir04-3c 30s
		pass "10o. $N3's device plugin advertises ascend.com/npu 3 (chips 1-3) in $(($(now_ms) - t0)) ms; the vNPUs are the DRA driver's (ascend.com/npu-vir04-3c allocatable $(alloc "$N3" ascend.com/npu-vir04-3c))"
	else
		fail "10o. the device plugin's share of $N3" "capacity $(capacity "$N3"), allocatable $(alloc "$N3")"
	fi
	out=$(k -n kube-system logs "$pod" | grep 'front ends:' | tail -n 1 | sed 's/^[^ ]* *[a-z]* *//')
	[ -n "$out" ] && pass "10o. kubectl logs $pod: $out" || fail "10o. the split logged" "no 'front ends:' line"
	devs=$(ND=$N3 wait_devices 'split("\n") | map(select(. != "")) | length > 0' 60000 | awk '{print $1 "=" $3}' | tr '\n' ' ')
	# Chip 0 is carved, so it is withheld and its two vNPUs are devices
	# that consume its counters; a server without counters gets no vNPU
	# devices at all (they would look independent of each other).
	if has_api counters; then
		[[ $devs == *"npu-4=310P"* && $devs == *"npu-5=310P"* && $devs == *"vnpu-100="* && $devs == *"vnpu-101="* &&
			$devs != *"npu-0="* && $devs != *"npu-1="* && $devs != *"npu-2="* && $devs != *"npu-3="* ]] &&
			pass "10o. $N3's ResourceSlices list only the DRA driver's devices: $devs; counters: $(k get resourceslices --field-selector "spec.nodeName=$N3" -o json | jq -c '[.items[].spec.sharedCounters[]?] | map({(.name): .counters}) | add')" ||
			fail "10o. $N3's slices" "$devs"
	else
		[[ $devs == *"npu-4=310P"* && $devs == *"npu-5=310P"* && $devs != *"vnpu-"* &&
			$devs != *"npu-0="* && $devs != *"npu-1="* && $devs != *"npu-2="* && $devs != *"npu-3="* ]] &&
			pass "10o. $N3's ResourceSlices list the 310P chips and no vNPU (the server keeps no counters; carved chip 0 withheld): $devs" ||
			fail "10o. $N3's slices without counters" "$devs"
	fi

	# The vNPU example: the claim gets a vNPU of chip 0, the container sees
	# it as /dev/davinci<id> and nothing else.
	example dra/npu-claim-vnpu.yaml "apiVersion: v1
kind: Pod
metadata: {name: dra-vnpu}
spec: {nodeSelector: {kubernetes.io/hostname: $N3}}" >"$tmp/dra-vnpu.yaml"
	if ! skip_unless_api counters "10o. the vNPU example on $N3"; then
		:
	elif check "10o. kubectl apply -f examples/dra/npu-claim-vnpu.yaml (pinned to $N3)" k apply -f "$tmp/dra-vnpu.yaml" &&
		k wait --for=condition=Ready pod/dra-vnpu --timeout="$WAIT" >/dev/null; then
		devs=$(claim_devices "$(pod_claim dra-vnpu vnpu)")
		out=$(k exec dra-vnpu -c inference -- sh -c 'echo "$ASCEND_VISIBLE_DEVICES $ASCEND_RUNTIME_OPTIONS"; ls /dev | grep davinci | tr "\n" " "')
		[[ $devs =~ ^vnpu-(10[01])$ ]] && [[ $out == "${BASH_REMATCH[1]} VIRTUAL"*"davinci${BASH_REMATCH[1]} "* ]] &&
			[ "$(grep -o 'davinci[0-9][0-9]*' <<<"$out" | sort -u | wc -l)" = 1 ] &&
			pass "10o. dra-vnpu's claim got $devs ($(k get resourceslices --field-selector "spec.nodeName=$N3" -o json | jq -r --arg d "$devs" '.items[].spec.devices[]? | select(.name == $d) | "template \(.attributes.template.string), \(.capacity.aiCores.value) AI cores"')); the container: $(tr '\n' ' ' <<<"$out")" ||
			fail "10o. the vNPU in the container" "claim devices '$devs'; the container: $out"
		echo "    kubectl logs dra-vnpu:"
		k logs dra-vnpu | sed 's/^/    /'
	else
		fail "10o. dra-vnpu Ready" "$(k describe pod dra-vnpu | tail -n 15)"
	fi
	k delete -f "$tmp/dra-vnpu.yaml" --wait=true --timeout="$WAIT" >/dev/null 2>&1
	# A claim for a 310P chip, and beside it a device-plugin pod, on one node.
	{
		cat <<EOF
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: both-310p}
spec:
  devices:
    requests:
    - {name: npu, exactly: {deviceClassName: 310p.$DRA}}
---
EOF
		claim_pod both-dra "$N3" both-310p
	} | k apply -f - >/dev/null
	if k wait --for=condition=Ready pod/both-dra --timeout="$WAIT" >/dev/null && run_npu_pod both-dp "$N3" 2; then
		local a b
		a=$(pod_devices both-dra) b=$(pod_devices both-dp)
		[[ $a == 4 || $a == 5 ]] && [[ $b =~ ^[1-3],[1-3]$ ]] &&
			pass "10o. on $N3 side by side: both-dra's claim both-310p got 310P chip $a through DRA ($(claim_devices both-310p)), both-dp got chips $b through the device plugin" ||
			fail "10o. the chips of each front end" "both-dra $a, both-dp $b"
	else
		fail "10o. a DRA pod and a device-plugin pod on $N3" "$(k get pods -o wide | grep both-)"
	fi
	delete_pods both-dra both-dp
	k delete resourceclaim both-310p --ignore-not-found >/dev/null 2>&1

	# Time-slicing through DRA: npu-4 allows two allocations (its "shares"
	# capacity is the replicas); two claims for it share it, a third waits.
	local i
	skip_unless_api consumable "10o. time-slicing through DRA on $N3" && for i in 1 2 3; do
		{
			cat <<EOF
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: shared-npu4-$i}
spec:
  devices:
    requests:
    - name: npu
      exactly:
        deviceClassName: 310p.$DRA
        selectors: [{cel: {expression: 'device.attributes["$DRA"].physicalID == 4'}}]
---
EOF
			claim_pod "shared-npu4-$i" "$N3" "shared-npu4-$i"
		} | k apply -f - >/dev/null
		[ "$i" = 3 ] || k wait --for=condition=Ready "pod/shared-npu4-$i" --timeout="$WAIT" >/dev/null
	done
	if ! has_api consumable; then
		:
	elif [ "$(pod_devices shared-npu4-1)" = 4 ] && [ "$(pod_devices shared-npu4-2)" = 4 ] &&
		k wait --for=condition=PodScheduled=false pod/shared-npu4-3 --timeout="$WAIT" >/dev/null; then
		pass "10o. time-slicing through DRA: shared-npu4-1 and shared-npu4-2 both run on npu-4 (shares $(k get resourceclaim shared-npu4-1 shared-npu4-2 -o jsonpath='{range .items[*]}{.status.allocation.devices.results[0].shareID}{" "}{end}')), shared-npu4-3 Pending: $(k get pod shared-npu4-3 -o jsonpath='{.status.conditions[?(@.type=="PodScheduled")].message}')"
	else
		fail "10o. two claims share npu-4, a third waits" "$(k get pods -o wide | grep shared-npu4); $(pod_devices shared-npu4-1) $(pod_devices shared-npu4-2)"
	fi
	delete_pods shared-npu4-1 shared-npu4-2 shared-npu4-3
	k delete resourceclaim shared-npu4-1 shared-npu4-2 shared-npu4-3 --ignore-not-found >/dev/null 2>&1

	# Back: node 3 on the device plugin alone.
	k -n kube-system delete daemonset ascend-npu-both --wait=true --timeout="$WAIT" >/dev/null 2>&1
	k -n kube-system delete configmap ascend-npu-both --ignore-not-found >/dev/null 2>&1
	check "10o. kubectl label node $N3 npu-both- npu=true" k label node "$N3" npu-both- npu=true
	if wait_capacity "$N3" 5 && wait_capacity "$N3" 2 ascend.com/npu-vir04-3c; then
		pass "10o. $N3 back on the device plugin alone: ascend.com/npu 5, ascend.com/npu-vir04-3c 2"
	else
		fail "10o. $N3 back on the device plugin" "npu $(capacity "$N3"), vir04-3c $(capacity "$N3" ascend.com/npu-vir04-3c)"
	fi
}
