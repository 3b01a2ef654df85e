# SPDX-License-Identifier: Apache-2.0
# Step multinode of the cluster e2e; tests/cluster/e2e.sh sources this file.
# Multi-node inference across nodes 1 and 2 (eight 910B3 each, RoCE
# addresses 192.168.<node>.1<phy>, npu-7 of node 2 with its link down): a
# two-pod Indexed Job whose pods get one HCCL rank table from the
# ascend-ranktable init container (examples/ranktable/), first through the
# device plugin, then through the DRA driver (both nodes moved to it and
# back). Each pod prints its table; the step holds every table against the
# simulator's truth (8 ranks, the right address per chip, the linkless chip
# never in it) and both pods' against each other. Then a member replaced
# while the other waits: the table names the replacement's node.
# shellcheck shell=bash disable=SC2154 # bin, build, root, tmp: set by e2e.sh

needs multinode install

# The patch the examples get here: nodes 1 and 2 only, 4 chips per pod, the
# init container's image as imported and the API server's address (no
# kube-proxy: tests/cluster/dra/kustomization.yaml says why).
multinode_patch() { # JOB CHIPS(0: a DRA job, which asks no ascend.com/npu)
	cat <<EOF
apiVersion: batch/v1
kind: Job
metadata: {name: $1}
spec:
  template:
    spec:
      affinity:
        nodeAffinity:
          requiredDuringSchedulingIgnoredDuringExecution:
            nodeSelectorTerms:
            - matchExpressions: [{key: kubernetes.io/hostname, operator: In, values: [$N1, $N2]}]
      initContainers:
      - name: ranktable
        imagePullPolicy: Never
        env:
        - {name: KUBERNETES_SERVICE_HOST, value: "$CLUSTER_CP_IP"}
        - {name: KUBERNETES_SERVICE_PORT, value: "6443"}
EOF
	if [ "$2" != 0 ]; then
		cat <<EOF
        resources: {limits: {$NPU: $2}}
      containers:
      - name: inference
        resources: {limits: {$NPU: $2}}
EOF
	fi
}

# The table a pod printed (its log after the RANK_SIZE line).
pod_table() { # NS POD
	k -n "$1" logs "$2" -c inference | sed '0,/^RANK_SIZE=/d'
}

# Why TABLE is not what the simulated nodes say, or nothing: HCCL's 1.0
# format for 910B, two servers (the nodes of pods 0 and 1, in that order),
# RANKS ranks 0.. in order, 4 per server, each chip's address
# 192.168.<node>.1<phy>, no chip whose link is down.
table_wrong() { # TABLE NODE_OF_POD0 NODE_OF_POD1
	[ -n "$1" ] || { echo "no table"; return; }
	jq -r --arg n0 "$2" --arg n1 "$3" --arg N1 "$N1" --arg N2 "$N2" '
		def k(n): if n == $N1 then "1" elif n == $N2 then "2" else "?" end;
		[.server_list[].device[]] as $devs
		| if type != "object" then "not a rank table"
		elif .status != "completed" then "status \(.status)"
		elif .version != "1.0" then "version \(.version)"
		elif .server_count != "2" or (.server_list | length) != 2 then "server_count \(.server_count)"
		elif [.server_list[].server_id] != [$n0, $n1] then "servers \([.server_list[].server_id])"
		elif ($devs | map(.rank_id)) != ([range(8)] | map(tostring)) then "ranks \($devs | map(.rank_id))"
		elif [.server_list[] | .device | length] != [4, 4] then "chips per server \([.server_list[] | .device | length])"
		elif [.server_list[] | . as $s | .device[] | select(.device_ip != "192.168.\(k($s.server_id)).1\(.device_id)")] != []
			then "addresses \([.server_list[] | .server_id as $s | .device[] | "\($s)/\(.device_id)=\(.device_ip)"])"
		elif [.server_list[] | select(.server_id == $N2) | .device[] | select(.device_id == "7")] != []
			then "npu-7 of \($N2), whose link is down, is in the table"
		else empty end' <<<"$1" 2>&1
}

# Runs the Job JOB of namespace NS (its pods 0 and 1) to completion and
# checks both pods' tables: WHAT names the front end in the lines.
multinode_job() { # NS JOB WHAT LABEL
	local ns=$1 job=$2 what=$3 label=$4 t0 p0 p1 n0 n1 t0txt t1txt why
	t0=$(now_ms)
	if ! k -n "$ns" wait --for=condition=Complete "job/$job" --timeout=180s >/dev/null; then
		fail "11. $what: job $job Complete" "$(k -n "$ns" get pods -o wide 2>&1; k -n "$ns" describe pods 2>&1 | tail -n 30;
			k -n "$ns" logs -l "app=$label" -c ranktable --tail=5 2>&1)"
		return 1
	fi
	figure multinode "$what: two-pod Indexed Job apply -> Complete in $(($(now_ms) - t0)) ms"
	p0=$(k -n "$ns" get pods -l "app=$label,batch.kubernetes.io/job-completion-index=0" -o jsonpath='{.items[0].metadata.name}')
	p1=$(k -n "$ns" get pods -l "app=$label,batch.kubernetes.io/job-completion-index=1" -o jsonpath='{.items[0].metadata.name}')
	n0=$(k -n "$ns" get pod "$p0" -o jsonpath='{.spec.nodeName}')
	n1=$(k -n "$ns" get pod "$p1" -o jsonpath='{.spec.nodeName}')
	t0txt=$(pod_table "$ns" "$p0")
	t1txt=$(pod_table "$ns" "$p1")
	echo "    kubectl -n $ns logs $p0 -c ranktable:"
	k -n "$ns" logs "$p0" -c ranktable | sed 's/^/    /'
	if [ "$t0txt" != "$t1txt" ]; then
		fail "11. $what: both pods print one table" "$p0: $t0txt
$p1: $t1txt"
	elif why=$(table_wrong "$t0txt" "$n0" "$n1") && [ -z "$why" ]; then
		pass "11. $what: pods $p0 ($n0) and $p1 ($n1) print the same hccl.json: 8 ranks, 4 chips per node, each chip's RoCE address as DCMI gives it, npu-7 of $N2 (link down) left out"
		echo "    kubectl -n $ns logs $p0 (the table):"
		jq -c '.server_list[] | {server_id, device}' <<<"$t0txt" | sed 's/^/    /'
	else
		fail "11. $what: the table against the nodes' chips" "$why
$t0txt"
	fi
}

# A label group (device plugin) whose second member is replaced while the
# first waits: the first pod's table names the replacement's node.
replaced_member() {
	local ns=hccl-dp why
	rt_pod() { # NAME INDEX NODESELECTOR
		cat <<EOF
apiVersion: v1
kind: Pod
metadata:
  name: $1
  labels: {ascend.com/hccl-group: rt, ascend.com/hccl-index: "$2", app: rt}
spec:
  serviceAccountName: ascend-ranktable
  restartPolicy: Never
  nodeSelector: {$3}
  tolerations: [{key: ascend.com/npu, operator: Exists, effect: NoSchedule}]
  initContainers:
  - name: ranktable
    image: ascend-device-plugin:0.1.0
    imagePullPolicy: Never
    command: [/usr/local/bin/ascend-ranktable, --size, "2", --timeout, 3m]
    env:
    - {name: POD_NAME, valueFrom: {fieldRef: {fieldPath: metadata.name}}}
    - {name: POD_NAMESPACE, valueFrom: {fieldRef: {fieldPath: metadata.namespace}}}
    - {name: KUBERNETES_SERVICE_HOST, value: "$CLUSTER_CP_IP"}
    - {name: KUBERNETES_SERVICE_PORT, value: "6443"}
    resources: {limits: {$NPU: 4}}
    volumeMounts: [{name: hccl, mountPath: /user/serverid/devindex/config}]
  containers:
  - name: inference
    image: $E2E_BUSYBOX_IMAGE
    command: [/bin/sh, -c, 'echo RANK_SIZE=; cat /user/serverid/devindex/config/hccl.json']
    resources: {limits: {$NPU: 4}}
    volumeMounts: [{name: hccl, mountPath: /user/serverid/devindex/config, readOnly: true}]
  volumes: [{name: hccl, emptyDir: {}}]
EOF
	}
	rt_pod rt-0 0 "kubernetes.io/hostname: $N1" | k -n "$ns" apply -f - >/dev/null
	# Index 1 first on no node at all: pod rt-0 waits for it.
	rt_pod rt-1a 1 "e2e-nowhere: \"true\"" | k -n "$ns" apply -f - >/dev/null
	local seen=
	if k -n "$ns" wait --for=jsonpath='{.status.initContainerStatuses[0].started}'=true pod/rt-0 --timeout="$WAIT" >/dev/null; then
		seen=$(timeout 60 "$bin/kubectl" --kubeconfig "$(cluster_kubeconfig)" -n "$ns" logs -f rt-0 -c ranktable |
			grep -m 1 'rt-1a.*not scheduled')
	fi
	if [ -z "$seen" ]; then
		fail "11c. rt-0 waits for the unscheduled rt-1a" "$(k -n "$ns" logs rt-0 -c ranktable 2>&1 | tail -n 5)"
		k -n "$ns" delete pods -l app=rt --wait=false >/dev/null 2>&1
		return
	fi
	k -n "$ns" delete pod rt-1a --wait=true --timeout="$WAIT" >/dev/null
	rt_pod rt-1b 1 "kubernetes.io/hostname: $N2" | k -n "$ns" apply -f - >/dev/null
	if k -n "$ns" wait --for=jsonpath='{.status.phase}'=Succeeded pod/rt-0 pod/rt-1b --timeout=120s >/dev/null &&
		why=$(table_wrong "$(pod_table "$ns" rt-0)" "$N1" "$N2") && [ -z "$why" ] &&
		[ "$(pod_table "$ns" rt-0)" = "$(pod_table "$ns" rt-1b)" ]; then
		pass "11c. rt-0 waited ($seen), rt-1a was replaced by rt-1b on $N2: both print one table with $N1 then $N2"
	else
		fail "11c. a member replaced mid-wait" "${why-}$(k -n "$ns" get pods -o wide 2>&1; k -n "$ns" logs rt-0 -c ranktable 2>&1 | tail -n 5)"
	fi
	k -n "$ns" delete pods -l app=rt --wait=true --timeout="$WAIT" >/dev/null 2>&1
}

step_multinode() {
	local ns out t0
	# a. Through the device plugin: 4 chips per pod, the linkless chip left
	# for last by GetPreferredAllocation.
	ns=hccl-dp
	k create namespace "$ns" >/dev/null 2>&1
	check "11a. kubectl -n $ns apply -f deploy/ranktable/rbac-device-plugin.yaml" \
		k -n "$ns" apply -f "$root/deploy/ranktable/rbac-device-plugin.yaml"
	example ranktable/indexed-job-device-plugin.yaml "$(multinode_patch hccl-infer 4)" >"$tmp/mn-dp.yaml"
	check "11a. kubectl -n $ns apply -f examples/ranktable/indexed-job-device-plugin.yaml (4 chips per pod here)" \
		k -n "$ns" apply -f "$tmp/mn-dp.yaml"
	multinode_job "$ns" hccl-infer "device plugin" hccl-infer
	out=$(k -n "$ns" get pods -l app=hccl-infer -o json | jq -r '.items[] | .metadata.annotations["ascend.com/npu-network"] // empty' | head -n 1)
	[ -n "$out" ] && pass "11a. each member published its chips on its own pod: ascend.com/npu-network=$out" ||
		fail "11a. the members' annotation" "$(k -n "$ns" get pods -o yaml | grep -n npu-network)"
	k -n "$ns" delete job hccl-infer --wait=true --timeout="$WAIT" >/dev/null 2>&1
	k -n "$ns" delete pods -l app=hccl-infer --wait=true --timeout="$WAIT" >/dev/null 2>&1
	replaced_member
	k delete namespace "$ns" --wait=false >/dev/null 2>&1

	# b. Through the DRA driver on both nodes: a claim template of 4 chips
	# whose link is up; the driver writes their identity into the claims.
	t0=$(now_ms)
	check "11b. kubectl label node $N1 $N2 npu- npu-dra=true" k label node "$N1" "$N2" npu- npu-dra=true
	k -n kube-system wait --for=delete pod -l name=ascend-device-plugin --field-selector "spec.nodeName=$N1" --timeout="$WAIT" >/dev/null 2>&1
	k -n kube-system wait --for=delete pod -l name=ascend-device-plugin --field-selector "spec.nodeName=$N2" --timeout="$WAIT" >/dev/null 2>&1
	check "11b. kubectl apply -k tests/cluster/dra" k apply -k "$root/tests/cluster/dra"
	check "11b. kubectl -n kube-system rollout status daemonset/ascend-dra-driver" \
		k -n kube-system rollout status daemonset/ascend-dra-driver --timeout="$WAIT"
	local n
	for n in "$N1" "$N2"; do
		# Every chip with its address: the slices as the driver publishes them.
		out=$(ND=$n wait_devices 'split("\n") | map(select(. != "")) | length == 8' 60000 | wc -l)
		[ "$out" = 8 ] || fail "11b. $n's slices" "$out chips"
	done
	out=$(k get resourceslices --field-selector "spec.nodeName=$N2,spec.driver=$DRA" -o json |
		jq -r '.items[].spec.devices[] | select(.name == "npu-7") | "\(.attributes.roceIP.string) link \(.attributes.roceLink.string) roceLinkUp \(.attributes.roceLinkUp.bool)"')
	[ "$out" = "192.168.2.17 link down roceLinkUp false" ] &&
		pass "11b. $N1 and $N2 on the DRA driver in $(($(now_ms) - t0)) ms, every chip's roceIP in the slices; $N2's npu-7: $out" ||
		fail "11b. npu-7's network attributes" "$out"
	ns=hccl-dra
	k create namespace "$ns" >/dev/null 2>&1
	check "11b. kubectl -n $ns apply -f deploy/ranktable/rbac-dra.yaml" k -n "$ns" apply -f "$root/deploy/ranktable/rbac-dra.yaml"
	example ranktable/indexed-job-dra.yaml "$(multinode_patch hccl-infer-dra 0)" >"$tmp/mn-dra.yaml"
	# The claims go with their pods: what the driver wrote into them is
	# seen by watching them meanwhile.
	timeout 180 "$bin/kubectl" --kubeconfig "$(cluster_kubeconfig)" -n "$ns" get resourceclaims --watch -o json \
		>"$tmp/mn-claims.json" 2>/dev/null &
	local watch_pid=$!
	check "11b. kubectl -n $ns apply -f examples/ranktable/indexed-job-dra.yaml (a claim of 4 chips whose roceLinkUp is true)" \
		k -n "$ns" apply -f "$tmp/mn-dra.yaml"
	multinode_job "$ns" hccl-infer-dra "DRA" hccl-infer-dra
	kill "$watch_pid" 2>/dev/null
	wait "$watch_pid" 2>/dev/null
	out=$(jq -s -r '[.[] | .status.devices[]? | select(.data.device_ip and .networkData.ips[0]) | "\(.pool)/\(.device)"] | unique | length' "$tmp/mn-claims.json")
	[ "$out" = 8 ] && pass "11b. the driver wrote the 8 chips' identity into the claims' status.devices, e.g. $(jq -s -c '[.[] | .status.devices[]? | select(.data.device_ip)][0]' "$tmp/mn-claims.json")" ||
		fail "11b. the claims' device status" "$out of 8 chips: $(tail -c 2000 "$tmp/mn-claims.json")"
	k delete namespace "$ns" --wait=true --timeout=120s >/dev/null 2>&1

	# c. Back to the device plugin.
	check "11d. kubectl label node $N1 $N2 npu-dra- npu=true" k label node "$N1" "$N2" npu-dra- npu=true
	k -n kube-system wait --for=delete pod -l name=ascend-dra-driver --timeout="$WAIT" >/dev/null 2>&1
	if wait_alloc "$N1" 8 && wait_alloc "$N2" 8; then
		pass "11d. $N1 and $N2 back on the device plugin: ascend.com/npu 8 each"
	else
		fail "11d. back on the device plugin" "$N1 $(alloc "$N1"), $N2 $(alloc "$N2")"
	fi
	k delete namespace hccl-dp --wait=true --timeout=120s >/dev/null 2>&1
}
