# SPDX-License-Identifier: Apache-2.0
# Step dra of the cluster e2e; tests/cluster/e2e.sh sources this file.
# Node 2 moves from the device plugin to the DRA driver (the step
# installs the driver: kubectl apply -k tests/cluster/dra) and back at the
# end: the objects validated by the API server, the driver's RBAC and
# admission policy, every example of examples/dra/ on the node, a claim too
# big to fit, a chip fault and recovery in the slices, driver, API server and
# kubelet restarts, an extended-resource pod served by DRA, and five surge
# rolls of the driver with claims prepared throughout.
# shellcheck shell=bash disable=SC2154 # bin, build, root, tmp: set by e2e.sh

needs dra install

slice_yaml() { # NAME NODE: a ResourceSlice of NODE's pool
	cat <<EOF
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: $1}
spec:
  driver: $DRA
  nodeName: $2
  pool: {name: $2, generation: 1, resourceSliceCount: 1}
  devices: [{name: npu-99}]
EOF
}

# A pod on the DRA node with a claim of one chip from the template dra-roll.
dra_roll_pod() { # NAME
	cat <<EOF
apiVersion: v1
kind: Pod
metadata: {name: $1, labels: {e2e: dra-roll}}
spec:
  nodeSelector: {kubernetes.io/hostname: $ND}
  tolerations: [{key: ascend.com/npu, operator: Exists, effect: NoSchedule}]
  terminationGracePeriodSeconds: 1
  restartPolicy: Never
  resourceClaims: [{name: npu, resourceClaimTemplateName: dra-roll}]
  containers:
  - {name: main, image: $E2E_BUSYBOX_IMAGE, command: [sleep, infinity], resources: {claims: [{name: npu}]}}
EOF
}

# Five surge rolls of the DRA driver, each with pods whose claims are
# prepared while it rolls: the new pod registers on sockets of its own
# beside the old one and shares its checkpoint, so the kubelet always has a
# driver to prepare with: every pod runs, and no prepare fails.
dra_rolls() {
	local r i made created=0 failed=0 running=0 pods t0 ms prep_failed
	k apply -f - >/dev/null <<EOF
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: dra-roll}
spec: {spec: {devices: {requests: [{name: npu, exactly: {deviceClassName: $DRA}}]}}}
EOF
	for r in 1 2 3 4 5; do
		t0=$(now_ms) made=0 i=0
		k -n kube-system rollout restart daemonset/ascend-dra-driver >/dev/null
		k -n kube-system rollout status daemonset/ascend-dra-driver --timeout=300s >"$tmp/dra-rollout" 2>&1 &
		local rpid=$!
		while kill -0 "$rpid" 2>/dev/null && ((i < 6)); do
			dra_roll_pod "dra-roll-$r-$i" | k apply -f - >/dev/null && made=$((made + 1))
			i=$((i + 1))
			k get pods -l e2e=dra-roll -o name >/dev/null
		done
		wait "$rpid" || fail "10r. roll $r: rollout status" "$(cat "$tmp/dra-rollout")"
		ms=$(($(now_ms) - t0))
		for ((i = 0; i < made; i++)); do
			k wait --for=jsonpath='{.status.phase}'=Running "pod/dra-roll-$r-$i" --timeout=60s >/dev/null 2>&1 || true
		done
		pods=$(k get pods -l e2e=dra-roll -o json | jq -r '.items[] | "\(.metadata.name) \(.status.phase) \(.status.reason // "-")"')
		failed=$((failed + $(awk '$2 == "Failed"' <<<"$pods" | wc -l)))
		running=$((running + $(awk '$2 == "Running"' <<<"$pods" | wc -l)))
		created=$((created + made))
		figure dra "roll $r of the driver in $ms ms, $made claim pods created meanwhile: $(awk '{print $2}' <<<"$pods" | sort | uniq -c | tr -s ' \n' ' ')"
		k delete pods -l e2e=dra-roll --wait=true --timeout="$WAIT" >/dev/null 2>&1
	done
	k delete resourceclaimtemplate dra-roll --ignore-not-found >/dev/null 2>&1
	((failed == 0 && running == created && created > 0)) &&
		pass "10r. 5 surge rolls of the DRA driver with $created claim pods created throughout: all ran, none failed" ||
		fail "10r. claim pods during the driver's rolls" "$running of $created ran, $failed failed"
	# The kubelet prefers a registration whose connection is up, so a
	# prepare in the instant the old pod leaves may still go to it, fail and
	# be retried: counted, not asserted (docs/upgrade.md).
	prep_failed=$(k get events -o json | jq '[.items[] | select(.reason == "FailedPrepareDynamicResources"
		and (.involvedObject.name | startswith("dra-roll-")))] | length')
	figure dra "$prep_failed prepares of the $created claim pods failed once during the rolls and were retried"
}

# A workload pod holds a chip; a monitoring pod, whose namespace carries the
# admin-access label, gets the same chip through an adminAccess claim and
# both run; the API server refuses such a claim in a namespace without it.
dra_admin() {
	local phys out
	k apply -f - >/dev/null <<EOF
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: adm-work}
spec: {devices: {requests: [{name: npu, exactly: {deviceClassName: $DRA}}]}}
EOF
	claim_pod adm-work "$ND" adm-work | k apply -f - >/dev/null
	if ! k wait --for=condition=Ready pod/adm-work --timeout="$WAIT" >/dev/null 2>&1; then
		fail "10p. the workload pod" "$(k describe pod adm-work | tail -n 8)"
		return
	fi
	phys=$(phys_of "$(claim_devices adm-work)")
	if out=$(chip_claim adm-look "$phys" default admin | k apply -f - 2>&1); then
		fail "10p. an adminAccess claim in a namespace without the label is refused" "$out"
	else
		grep -q 'resource.kubernetes.io/admin-access' <<<"$out" &&
			pass "10p. kubectl apply of an adminAccess claim in default (no label): $out" ||
			fail "10p. the refusal names the label" "$out"
	fi
	k create namespace npu-monitoring >/dev/null 2>&1
	k label namespace npu-monitoring resource.kubernetes.io/admin-access=true --overwrite >/dev/null
	chip_claim adm-look "$phys" npu-monitoring admin | k apply -f - >/dev/null
	claim_pod adm-look "$ND" adm-look | k -n npu-monitoring apply -f - >/dev/null
	if k -n npu-monitoring wait --for=condition=Ready pod/adm-look --timeout="$WAIT" >/dev/null 2>&1 &&
		k -n npu-monitoring exec adm-look -c main -- test -c "/dev/davinci$phys" &&
		[ "$(pod_devices adm-work)" = "$phys" ]; then
		pass "10p. npu-monitoring/adm-look (adminAccess) and adm-work Running on chip $phys together: the monitoring container sees /dev/davinci$phys, the workload keeps its claim ($(k -n npu-monitoring get resourceclaim adm-look -o jsonpath='{.status.allocation.devices.results[0].device} adminAccess={.status.allocation.devices.results[0].adminAccess}'))"
	else
		fail "10p. a monitoring pod beside the workload" "$(k -n npu-monitoring describe pod adm-look | tail -n 8)"
	fi
	k -n npu-monitoring delete pod adm-look --wait=true --timeout="$WAIT" >/dev/null 2>&1
	delete_pods adm-work
	k delete namespace npu-monitoring --wait=false >/dev/null 2>&1
	k delete resourceclaim adm-work --wait=false >/dev/null 2>&1
}

# health_unshown POD: the kubelet told POD of its devices' health (its log
# names the pod) and the pod's status shows none at all. The kubelet of
# 1.34 looks the container's claim reference up by the ResourceClaim's own
# name, so a claim made from a template never shows there (1.35 matches the
# pod's claim entry); what the driver sent is in the kubelet's log.
health_unshown() {
	local uid
	uid=$(k get pod "$1" -o jsonpath='{.metadata.uid}')
	[ -z "$(k get pod "$1" -o jsonpath='{.status.containerStatuses[0].allocatedResourcesStatus}')" ] &&
		grep 'Sending health update notification for pods' "$CLUSTER_DIR/logs/kubelet-n$DK.log" | grep -q "$uid"
}

# faulty_published CHIP [LIMIT_MS]: waits until the faulty chip is
# published as this server allows: tainted NoSchedule, or left out of the
# slices where the server drops device taints (what the driver does then).
# Prints how it is published and is true, or prints the devices and is false.
faulty_published() {
	local out
	if has_api taints; then
		out=$(wait_devices "split(\"\n\") | map(select(startswith(\"npu-$1 \"))) | .[0] | test(\"npu.ascend.com/unhealthy=.*:NoSchedule\")" ${2-})
		grep "^npu-$1 .*npu.ascend.com/unhealthy=.*:NoSchedule$" <<<"$out" && return 0
	else
		out=$(wait_devices "split(\"\n\") | map(select(startswith(\"npu-$1 \"))) | length == 0" ${2-})
		grep -q "^npu-$1 " <<<"$out" ||
			{ echo "left out of the slices (the server keeps no device taints; the driver said: $(k -n kube-system logs "$(dra_driver_pod)" | grep -o 'the API server drops[^"]*' | head -n 1))"; return 0; }
	fi
	echo "$out"
	return 1
}

# pod_health WHAT POD HEALTH: POD's first device shows HEALTH in its
# allocatedResourcesStatus within 30 s, a skip where this kubelet shows none
# (health_unshown), else a failure.
pod_health() {
	if k wait --for=jsonpath="{.status.containerStatuses[0].allocatedResourcesStatus[0].resources[0].health}=$3" \
		"pod/$2" --timeout=30s >/dev/null; then
		pass "$1: $(dra_resource_health "$2")"
	elif health_unshown "$2"; then
		skip "$1" "the kubelet got the health change for the pod (its log) but shows no allocatedResourcesStatus for a claim made from a template (Kubernetes 1.34's kubelet matches the claim's own name)"
	else
		fail "$1" "$(dra_resource_health "$2")"
	fi
}

step_dra() {
	local f out t0 ms pod claim uid devs chip free before tok server why
	# a. The objects of deploy/dra and examples/dra, validated by the API
	# server itself (kubernetes-models has no resource.k8s.io schema: check.cjs).
	for f in "$root"/deploy/dra "$root"/tests/cluster/dra; do
		check "10a. kubectl apply --dry-run=server --validate=strict -k ${f#"$root"/}" \
			k apply --dry-run=server --validate=strict -k "$f"
	done
	for f in "$root"/examples/dra/*.yaml; do
		example "dra/${f##*/}" >"$tmp/dra-${f##*/}"
		check "10a. kubectl apply --dry-run=server --validate=strict -f examples/dra/${f##*/}" \
			k apply --dry-run=server --validate=strict -f "$tmp/dra-${f##*/}"
	done

	# b. Node 2 moves from the device plugin to the DRA driver.
	t0=$(now_ms)
	check "10b. kubectl label node $ND npu- npu-dra=true" k label node "$ND" npu- npu-dra=true
	k -n kube-system wait --for=delete pod -l name=ascend-device-plugin --field-selector "spec.nodeName=$ND" --timeout="$WAIT" >/dev/null 2>&1
	check "10b. kubectl apply -k tests/cluster/dra (deploy/dra/ with the test cluster's image and API server address)" \
		k apply -k "$root/tests/cluster/dra"
	check "10b. kubectl -n kube-system rollout status daemonset/ascend-dra-driver" \
		k -n kube-system rollout status daemonset/ascend-dra-driver --timeout="$WAIT"
	# The test overlay's reason (tests/cluster/dra/kustomization.yaml).
	if ! cluster_in_netns ip route get 10.96.0.1 >/dev/null 2>&1 &&
		grep -q "value: \"$CLUSTER_CP_IP\"" "$root/tests/cluster/dra/patch-driver.yaml"; then
		pass "10b. the kubernetes Service's ClusterIP $(k get service kubernetes -o jsonpath='{.spec.clusterIP}') is routed nowhere (no kube-proxy): the test overlay points the driver at $CLUSTER_CP_IP:6443"
	else
		fail "10b. the test overlay's API server address" "10.96.0.1 is routed, or patch-driver.yaml does not name $CLUSTER_CP_IP"
	fi
	out=$(k -n kube-system get pods -o wide --no-headers | awk '$1 ~ /^ascend-(device-plugin|dra-driver)-/ { print $1, $3, $7 }')
	if [ "$(grep -c "Running $ND$" <<<"$out")" = 1 ] && grep -q "^ascend-dra-driver-.* Running $ND$" <<<"$out" &&
		[ "$(grep -c '^ascend-device-plugin-.* Running' <<<"$out")" = 2 ]; then
		pass "10b. $ND runs the DRA driver only, $N1 and $N3 the device plugin: $(tr '\n' ';' <<<"$out")"
	else
		fail "10b. one front end per node" "$out"
	fi
	if k get deviceclasses -o name | sort | tr '\n' ' ' | grep -q 'deviceclass.resource.k8s.io/310p.npu.ascend.com deviceclass.resource.k8s.io/910b.npu.ascend.com deviceclass.resource.k8s.io/a3.npu.ascend.com deviceclass.resource.k8s.io/npu.ascend.com'; then
		pass "10b. kubectl get deviceclasses: $(k get deviceclasses -o name | sed 's#.*/##' | tr '\n' ' ')"
	else
		fail "10b. the DeviceClasses" "$(k get deviceclasses 2>&1)"
	fi
	out=$(wait_devices 'split("\n") | map(select(. != "")) | length > 0' "${WAIT%s}000")
	figure dra "label and apply -> node $DK's ResourceSlices in $(($(now_ms) - t0)) ms"
	echo "    kubectl get resourceslices --field-selector spec.nodeName=$ND (name physicalID product interconnectGroup taints):"
	sed 's/^/    /' <<<"$out"
	local want
	want=$(k get resourceslices --field-selector "spec.nodeName=$ND,spec.driver=$DRA" -o json |
		jq -r '[.items[].spec.devices[] | select(.attributes.family.string and .attributes.physicalID.int != null
			and .attributes.logicID.int != null and .attributes.interconnectGroup.string
			and .attributes.firmwareVersion.string == "7.1.0.11.220"
			and .capacity.memory.value and .capacity.aiCores.value)] | length')
	if [ -n "$out" ] && [ "$want" = "$(wc -l <<<"$out")" ]; then
		pass "10b. $ND's ResourceSlices list $want chips, each with family, product, physicalID, logicID, interconnectGroup, firmwareVersion (the node's firmware/version.info), memory and aiCores: $(awk '{print $1 "=" $3}' <<<"$out" | tr '\n' ' ')"
	else
		fail "10b. $ND's ResourceSlices with the attributes" "$want of $(wc -l <<<"$out") devices complete: $(k get resourceslices -o yaml 2>&1 | head -n 60)"
	fi
	k get resourceslices --field-selector "spec.nodeName=$ND" -o json | jq -c '.items[0].spec.devices[0]' | sed 's/^/    first device: /'

	# c. The driver's RBAC and admission policy: its token may write only
	# its own node's slices.
	pod=$(dra_driver_pod)
	server=https://127.0.0.1:$CLUSTER_PORT
	tok=$(k -n kube-system create token ascend-dra-driver --bound-object-kind=Pod --bound-object-name="$pod" --duration=10m)
	kt() { "$bin/kubectl" --kubeconfig=/dev/null --server="$server" --certificate-authority="$CLUSTER_DIR/pki/ca.crt" --token="$1" "${@:2}"; }
	slice_yaml e2e-own "$ND" >"$tmp/slice-own.yaml"
	slice_yaml e2e-other "$N1" >"$tmp/slice-other.yaml"
	if out=$(kt "$tok" create --dry-run=server -f "$tmp/slice-own.yaml" 2>&1); then
		pass "10c. the driver pod's token (bound to $pod on $ND) may create a slice of $ND: $out"
	else
		fail "10c. the driver's token writes its own node's slice" "$out"
	fi
	if out=$(kt "$tok" create --dry-run=server -f "$tmp/slice-other.yaml" 2>&1); then
		fail "10c. a slice of $N1 with the token of $ND's driver is denied" "$out"
	else
		grep -q "may not write the slices of node $N1" <<<"$out" && pass "10c. the same token for a slice of $N1: $out" ||
			fail "10c. denied by the admission policy" "$out"
	fi
	tok=$(k -n kube-system create token ascend-dra-driver --duration=10m)
	if out=$(kt "$tok" create --dry-run=server -f "$tmp/slice-own.yaml" 2>&1); then
		fail "10c. a token bound to no pod is denied" "$out"
	else
		grep -q 'names no node' <<<"$out" && pass "10c. a token of the ServiceAccount bound to no pod: $out" ||
			fail "10c. denied for want of a node" "$out"
	fi
	# The impersonation headers themselves: kubectl's --as-user-extra came
	# after 1.34.
	out=$(k create --dry-run=client -o json -f "$tmp/slice-other.yaml" |
		curl -sS --cacert "$CLUSTER_DIR/pki/ca.crt" --cert "$CLUSTER_DIR/pki/admin.crt" --key "$CLUSTER_DIR/pki/admin.key" \
			-H "Impersonate-User: system:serviceaccount:kube-system:ascend-dra-driver" \
			-H "Impersonate-Extra-authentication.kubernetes.io%2Fnode-name: $ND" -H 'Content-Type: application/json' \
			--data-binary @- "$server/apis/resource.k8s.io/v1/resourceslices?dryRun=All" 2>&1 | jq -r '.message // .kind' 2>&1)
	grep -q "may not write the slices of node $N1" <<<"$out" &&
		pass "10c. impersonating the driver with node-name $ND (Impersonate-User, Impersonate-Extra-authentication.kubernetes.io%2Fnode-name) for a slice of $N1: $out" ||
		fail "10c. impersonated driver of $ND writing $N1's slice" "$out"
	# What the ServiceAccount may do beyond what every authenticated user may.
	out=$(k auth can-i --as=system:serviceaccount:kube-system:ascend-dra-driver --list 2>&1 |
		awk '$1 ~ /^(resourceslices|resourceclaims|nodes|pods|secrets)/ {
			# The last two [...] columns: resource names and verbs.
			n = 0; v = $0
			while (match(v, /\[[^]]*\]/)) { g[++n] = substr(v, RSTART, RLENGTH); v = substr(v, RSTART + RLENGTH) }
			print $1, (g[n - 1] == "[]" ? "" : g[n - 1] " ") g[n] }' | sort)
	# The claims' device status: patch of the status subresource, and the
	# per-driver check for this driver's entries only (its resource name).
	if [ "$out" = "nodes [get]
resourceclaims.resource.k8s.io [get]
resourceclaims.resource.k8s.io/driver [npu.ascend.com] [associated-node:patch]
resourceclaims.resource.k8s.io/status [patch]
resourceslices.resource.k8s.io [get list watch create update delete]" ]; then
		pass "10c. kubectl auth can-i --list as the driver: exactly $(tr '\n' ';' <<<"$out")"
	else
		fail "10c. the driver's RBAC is what it uses" "$out"
	fi

	# d. One chip.
	example dra/npu-claim-1.yaml >"$tmp/dra-1.yaml"
	t0=$(now_ms)
	check "10d. kubectl apply -f examples/dra/npu-claim-1.yaml" k apply -f "$tmp/dra-1.yaml"
	if k wait --for=condition=Ready pod/dra-npu-1 --timeout="$WAIT" >/dev/null; then
		figure dra "npu-claim-1.yaml apply -> Ready in $(($(now_ms) - t0)) ms"
		dra_pod_check "10d. dra-npu-1" dra-npu-1 npu
		echo "    kubectl logs dra-npu-1:"
		k logs dra-npu-1 | sed 's/^/    /'
		# Device metadata (KEP-5304) at the path the pod spec gives: the
		# template's claim is "npu" in the pod, its request "npu".
		out=$(k exec dra-npu-1 -c inference -- cat \
			/var/run/kubernetes.io/dra-device-attributes/resourceclaimtemplates/npu/npu/npu.ascend.com-metadata.json 2>&1)
		if jq -s -e --arg nd "$ND" 'length == 2 and .[0].apiVersion == "metadata.resource.k8s.io/v1beta1"
			and .[1].apiVersion == "metadata.resource.k8s.io/v1alpha1" and .[0].podClaimName == "npu"
			and (.[0].requests[0].devices | length) == 1 and .[0].requests[0].devices[0].pool == $nd
			and .[0].requests[0].devices[0].attributes.containerLogicalID.int == 0
			and .[0].requests[0].devices[0].attributes.family.string != null' <<<"$out" >/dev/null; then
			pass "10d. dra-npu-1 reads its device metadata (KEP-5304): $(jq -s -c '.[0].requests' <<<"$out" | cut -c1-400)"
		else
			fail "10d. dra-npu-1's device metadata file" "$(head -c 1500 <<<"$out")"
		fi
	else
		fail "10d. dra-npu-1 Ready" "$(k describe pod dra-npu-1 | tail -n 15)"
	fi
	claim=$(pod_claim dra-npu-1 npu)
	uid=$(claim_uid "$claim")

	# e. Side by side: a pod through the device plugin on node 1.
	if run_npu_pod dp-beside "$N1" 1 && [ "$(k get pod dra-npu-1 -o jsonpath='{.status.phase}')" = Running ]; then
		pass "10e. side by side: dp-beside on $N1 through the device plugin (ASCEND_VISIBLE_DEVICES=$(pod_devices dp-beside)) and dra-npu-1 on $ND through DRA, both Running"
	else
		fail "10e. a device-plugin pod beside the DRA pod" "$(k get pods -o wide)"
	fi
	delete_pods dp-beside

	# f. Two chips in one interconnect group.
	example dra/npu-claim-ring.yaml >"$tmp/dra-ring.yaml"
	check "10f. kubectl apply -f examples/dra/npu-claim-ring.yaml" k apply -f "$tmp/dra-ring.yaml"
	if k wait --for=condition=Ready pod/dra-npu-ring --timeout="$WAIT" >/dev/null; then
		dra_pod_check "10f. dra-npu-ring" dra-npu-ring npus
		devs=$(claim_devices "$(pod_claim dra-npu-ring npus)")
		# shellcheck disable=SC2086
		out=$(for f in $devs; do dra_attr "$f" 4; done | sort -u)
		[ "$(wc -l <<<"$out")" = 1 ] && [ "$out" != - ] && pass "10f. both chips ($devs) in interconnectGroup $out" ||
			fail "10f. one interconnect group" "$devs: $out"
	else
		fail "10f. dra-npu-ring Ready" "$(k describe pod dra-npu-ring | tail -n 15)"
	fi

	# g. A 910B3 with at least 64 GiB (CEL).
	example dra/npu-claim-hbm.yaml >"$tmp/dra-hbm.yaml"
	check "10g. kubectl apply -f examples/dra/npu-claim-hbm.yaml" k apply -f "$tmp/dra-hbm.yaml"
	if k wait --for=condition=Ready pod/dra-npu-hbm --timeout="$WAIT" >/dev/null; then
		devs=$(claim_devices "$(pod_claim dra-npu-hbm npu)")
		dra_pod_check "10g. dra-npu-hbm" dra-npu-hbm npu &&
			{ [ "$(dra_attr "$devs" 3)" = 910B3 ] && pass "10g. the CEL selector chose $devs, a $(dra_attr "$devs" 3) with $(k get resourceslices --field-selector "spec.nodeName=$ND" -o json | jq -r --arg d "$devs" '.items[].spec.devices[] | select(.name == $d) | .capacity.memory.value') HBM" ||
				fail "10g. a 910B3" "$devs is $(dra_attr "$devs" 3)"; }
	else
		fail "10g. dra-npu-hbm Ready" "$(k describe pod dra-npu-hbm | tail -n 15)"
	fi

	# h. One claim, two containers.
	example dra/npu-claim-shared.yaml >"$tmp/dra-shared.yaml"
	check "10h. kubectl apply -f examples/dra/npu-claim-shared.yaml" k apply -f "$tmp/dra-shared.yaml"
	if k wait --for=condition=Ready pod/dra-npu-shared --timeout="$WAIT" >/dev/null; then
		dra_pod_check "10h. dra-npu-shared (server)" dra-npu-shared npu server
		local a b
		a=$(pod_devices dra-npu-shared server)
		b=$(pod_devices dra-npu-shared sidecar)
		[ -n "$a" ] && [ "$a" = "$b" ] && pass "10h. both containers of dra-npu-shared see chip $a (claim npu-shared, $(claim_devices npu-shared))" ||
			fail "10h. the same chip in both containers" "server $a, sidecar $b"
	else
		fail "10h. dra-npu-shared Ready" "$(k describe pod dra-npu-shared | tail -n 15)"
	fi
	k delete -f "$tmp/dra-ring.yaml" -f "$tmp/dra-hbm.yaml" -f "$tmp/dra-shared.yaml" --wait=true --timeout="$WAIT" >/dev/null 2>&1

	# i. More chips than the node has: Pending, with the scheduler's reason.
	k apply -f - >/dev/null <<EOF
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: npu-9}
spec:
  spec:
    devices:
      requests:
      - {name: npu, exactly: {deviceClassName: $DRA, count: 9}}
---
apiVersion: v1
kind: Pod
metadata: {name: dra-too-many}
spec:
  tolerations: [{key: ascend.com/npu, operator: Exists, effect: NoSchedule}]
  terminationGracePeriodSeconds: 1
  resourceClaims: [{name: npu, resourceClaimTemplateName: npu-9}]
  containers:
  - {name: main, image: $E2E_BUSYBOX_IMAGE, command: [sleep, infinity], resources: {claims: [{name: npu}]}}
EOF
	if k wait --for=condition=PodScheduled=false pod/dra-too-many --timeout="$WAIT" >/dev/null &&
		[ -z "$(k get pod dra-too-many -o jsonpath='{.spec.nodeName}')" ]; then
		out=$(k get pod dra-too-many -o jsonpath='{.status.conditions[?(@.type=="PodScheduled")].message}')
		grep -q 'cannot allocate all claims' <<<"$out" && pass "10i. a claim for 9 chips stays Pending: $out" ||
			fail "10i. the scheduler's reason names the claim" "$out"
	else
		fail "10i. a claim for 9 chips stays Pending" "$(k get pod dra-too-many -o wide)"
	fi
	# ascend-doctor explain, reading this cluster through this kubectl,
	# names the pod's claim and why no node can allocate it: the DRA
	# node has 8 chips of the class, 9 are asked for.
	local doc st=0
	PATH="$bin:$PATH" KUBECONFIG=$(cluster_kubeconfig) "$build/tools/ascend-doctor/ascend-doctor" explain default/dra-too-many |
		sed 's/^/    /'
	doc=$(PATH="$bin:$PATH" KUBECONFIG=$(cluster_kubeconfig) "$build/tools/ascend-doctor/ascend-doctor" --json explain \
		default/dra-too-many 2>&1) || st=$?
	if ((st == 2)) && jq -e --arg nd "$ND" '.pod == "default/dra-too-many" and (.claims | length) == 1
		and (.claims[0].claim | startswith("default/dra-too-many-npu-")) and .claims[0].allocatable == 0
		and .claims[0].requests[0].count == 9
		and ([.claims[0].requests[0].nodes[] | select(.node == $nd and .fits == false and .ofClass == 8)] | length) == 1
		and (.claims[0].fix | test("ask for at most 8"))' <<<"$doc" >/dev/null; then
		pass "10i. ascend-doctor explain names the claim and the reason: $(jq -r '.claims[0].summary + "; fix: " + .claims[0].fix' <<<"$doc" | cut -c1-200)"
	else
		fail "10i. ascend-doctor explain on the Pending claim" "exit $st: $(head -c 2000 <<<"$doc")"
	fi
	k delete pod dra-too-many --wait=true --timeout="$WAIT" >/dev/null 2>&1
	k delete resourceclaimtemplate npu-9 >/dev/null 2>&1

	# j. A chip fault taints its device; recovery removes the taint.
	# The chip dra-npu-1 holds: NoSchedule keeps new claims off it and
	# leaves the pod running.
	chip=$(dra_attr "$(claim_devices "$claim")" 2)
	t0=$(now_ms)
	if [[ ! $chip =~ ^[0-9]+$ ]]; then
		fail "10j. a chip fault" "dra-npu-1 holds no chip"
	elif node_set_chip_health "$(cluster_node_dir $DK)" "$chip" 3 80E01801; then
		if out=$(faulty_published "$chip"); then
			ms=$(($(now_ms) - t0))
			figure dra "chip fault -> device $(has_api taints && echo tainted in its ResourceSlice || echo left out of the ResourceSlices) in $ms ms"
			pass "10j. chip $chip of $ND critical, published as faulty in $ms ms: $out"
		else
			fail "10j. the faulty chip tainted (or left out where taints are dropped)" "$out"
		fi
		# The claim's live status file: the container reads the fault.
		if out=$(wait_status_file dra-npu-1 inference '.chips[0].healthy == false and .chips[0].code == "80E01801"' 10000); then
			pass "10j. pod dra-npu-1 reads \$ASCEND_NPU_STATUS ($(k exec dra-npu-1 -c inference -- sh -c 'echo $ASCEND_NPU_STATUS')) $(($(now_ms) - t0)) ms after the fault: $out"
		else
			fail "10j. the claim's status file shows the fault" "$out"
		fi
		# The driver's health stream (NodeWatchResources): the kubelet
		# shows the pod that holds the chip its device Unhealthy.
		pod_health "10j. pod dra-npu-1's allocatedResourcesStatus shows the chip Unhealthy through the driver's health stream" dra-npu-1 Unhealthy
		# NoSchedule on a pod: a chip no claim holds, faulty too, and a new
		# claim that only it can satisfy (its physicalID) stays Pending.
		# 80E01801 is RestartBusiness in the built-in table: the taint's
		# value names both.
		free=$(free_chip "$chip")
		if [[ $free =~ ^[0-9]+$ ]] && node_set_chip_health "$(cluster_node_dir $DK)" "$free" 3 80E01801 &&
			out=$(faulty_published "$free"); then
			if skip_unless_api taints "10j. the taint's value names the fault level and the code"; then
				expect "10j. chip $free's taint names the fault level and the code: $out" "$ND's ResourceSlices" \
					"npu.ascend.com/unhealthy=RestartBusiness-80E01801:NoSchedule" "$(awk '{ print $5 }' <<<"$out")"
			fi
			chip_claim pin-faulty "$free" | k apply -f - >/dev/null
			claim_pod pin-faulty "$ND" pin-faulty | k apply -f - >/dev/null
			if k wait --for=jsonpath='{.status.conditions[?(@.type=="PodScheduled")].reason}'=Unschedulable \
				pod/pin-faulty --timeout=60s >/dev/null 2>&1; then
				pass "10j. a new claim of chip $free alone (physicalID $free) stays Pending while the chip is $(has_api taints && echo tainted NoSchedule || echo left out): $(k get pod pin-faulty -o jsonpath='{.status.conditions[?(@.type=="PodScheduled")].message}')"
			else
				fail "10j. a new claim of the faulty chip alone stays Pending" "$(k get pod pin-faulty -o wide 2>&1 | tail -n 1)"
			fi
		else
			fail "10j. a second chip fault, on a chip no claim holds" "chip '$free': $out"
		fi
		t0=$(now_ms)
		[ -z "$free" ] || node_set_chip_health "$(cluster_node_dir $DK)" "$free" 0 "" || fail "10j. recovery" "cannot write the state"
		node_set_chip_health "$(cluster_node_dir $DK)" "$chip" 0 "" || fail "10j. recovery" "cannot write the state"
		out=$(wait_devices "split(\"\n\") | map(select(startswith(\"npu-$chip \"))) | .[0] | endswith(\" -\")")
		if grep -q "^npu-$chip .* -$" <<<"$out"; then
			figure dra "recovery -> taint removed in $(($(now_ms) - t0)) ms"
			pass "10j. recovery: the chip is published untainted again: $(grep "^npu-$chip " <<<"$out")"
		else
			fail "10j. recovery publishes the chip untainted" "$out"
		fi
		pod_health "10j. pod dra-npu-1's allocatedResourcesStatus Healthy again" dra-npu-1 Healthy
		# The chip in service again, the Pending claim gets it.
		if k get pod pin-faulty >/dev/null 2>&1; then
			if k wait --for=condition=Ready pod/pin-faulty --timeout="$WAIT" >/dev/null 2>&1; then
				pass "10j. chip $free recovered: pod pin-faulty runs with its claim ($(claim_devices pin-faulty))"
			else
				fail "10j. the Pending claim runs once its chip recovered" "$(k get pod pin-faulty -o wide 2>&1 | tail -n 1)"
			fi
			delete_pods pin-faulty
			k delete resourceclaim pin-faulty --wait=false >/dev/null 2>&1
		fi
	else
		fail "10j. fault" "cannot write the state"
	fi

	# k. Driver pod restart, kube-apiserver restart, then kubelet restart:
	# the pod keeps its chip, a new claim works, the slices are right.
	before=$(pod_devices dra-npu-1 inference)
	pod=$(dra_driver_pod)
	# The claim's CDI spec goes while the driver pod is replaced (a CDI
	# directory emptied under a running kubelet, which never prepares a
	# claim again once it saw it prepared): the new driver writes it again
	# from its checkpoint, and the pod's container, killed, comes back with
	# its chip.
	rm -f "$(cdi_spec "$uid")"
	k -n kube-system delete pod "$pod" --wait=true --timeout="$WAIT" >/dev/null
	k -n kube-system rollout status daemonset/ascend-dra-driver --timeout="$WAIT" >/dev/null
	if wait_file "$(cdi_spec "$uid")"; then
		pass "10k. the claim's CDI spec, removed while the driver pod was replaced, written again by the new driver: $(k -n kube-system logs "$(dra_driver_pod)" | grep -o 'wrote the CDI specs of .*')"
	else
		fail "10k. the new driver writes the CDI spec of its prepared claim again" "$(ls "$(cluster_node_dir $DK)/var/run/cdi/")"
	fi
	f=$(k get pod dra-npu-1 -o jsonpath='{.status.containerStatuses[0].containerID}')
	"$bin/ctr" --address "$(cluster_node_dir $DK)/containerd/containerd.sock" -n k8s.io task kill -s SIGKILL "${f#containerd://}" >/dev/null 2>&1
	if k wait --for=jsonpath='{.status.containerStatuses[0].restartCount}'=1 pod/dra-npu-1 --timeout="$WAIT" >/dev/null &&
		k wait --for=condition=Ready pod/dra-npu-1 --timeout="$WAIT" >/dev/null &&
		[ "$(pod_devices dra-npu-1 inference)" = "$before" ]; then
		pass "10k. dra-npu-1's container killed (ctr task kill): the kubelet started it again through the CDI spec, chip $before"
	else
		fail "10k. the killed container back with its chip" "$(k describe pod dra-npu-1 | tail -n 8 | tr '\n' ' ')"
	fi
	# The API server goes for a few seconds, and chip 7 faults meanwhile:
	# the driver's publisher fails, says so once, and publishes the
	# current truth (chip 7 tainted) once the server is back.
	pod=$(dra_driver_pod)
	t0=$(now_ms)
	_cl_stop kube-apiserver 10000
	node_set_chip_health "$(cluster_node_dir $DK)" 7 3 80E01801 || fail "10k. a fault while the API server is away" "cannot write the state"
	if cluster_apiserver_start "$bin" 6443 2379; then
		pass "10k. kube-apiserver stopped, chip 7 of $ND faulted meanwhile, kube-apiserver ready again in $(($(now_ms) - t0)) ms"
	else
		fail "10k. kube-apiserver restart" "$(tail -n 5 "$CLUSTER_DIR/logs/kube-apiserver.log")"
	fi
	# The publisher's backoff doubles up to 30 s while the server is away.
	if out=$(faulty_published 7 60000) &&
		[ "$(k -n kube-system get pod "$pod" -o jsonpath='{.status.containerStatuses[0].restartCount}')" = 0 ]; then
		pass "10k. the driver $pod (not restarted) published the fault once the API server was back: $out; its log: $(k -n kube-system logs "$pod" | grep -E 'cannot publish|works again' | sed 's/^[^ ]* //' | cut -c1-160 | tr '\n' '|')"
	else
		fail "10k. the slices after the kube-apiserver restart" "$(k -n kube-system get pod "$pod" -o wide 2>&1); $out"
	fi
	node_set_chip_health "$(cluster_node_dir $DK)" 7 0 "" || fail "10k. recovery of chip 7" "cannot write the state"
	out=$(wait_devices 'split("\n") | map(select(startswith("npu-7 "))) | .[0] | endswith(" -")')
	grep -q "^npu-7 .* -$" <<<"$out" || fail "10k. chip 7's taint removed" "$out"
	pod=$(dra_driver_pod)
	t0=$(now_ms)
	restart_kubelet $DK
	k wait --for=condition=Ready node/"$ND" --timeout="$WAIT" >/dev/null
	# A restarted kubelet serves exec for a pod once it has taken it in again.
	local deadline
	deadline=$(($(now_ms) + 60000))
	until k exec dra-npu-1 -c inference -- true >/dev/null 2>&1 || (($(now_ms) > deadline)); do
		inotifywait -qq -t 1 -e modify "$CLUSTER_DIR/logs/kubelet-n$DK.log" >/dev/null 2>&1 || true
	done
	# The new kubelet's plugin watcher registers the driver again: the
	# driver's log line for it, against the time the old kubelet was told
	# to stop (as lifecycle's figure for the device plugin).
	f=$(k -n kube-system logs "$pod" | grep 'the kubelet registered DRA driver' | tail -n 1 | cut -d' ' -f1)
	if [ -n "$f" ] && ms=$(($(date -d "$f" +%s%3N) - t0)) && ((ms > 0)); then
		figure dra "kubelet restart -> driver registered again in $ms ms"
	else
		fail "10k. the driver registered again after the kubelet restart" "last registration line: '$f'"
	fi
	if [ "$(k get pod dra-npu-1 -o jsonpath='{.status.phase} {.status.containerStatuses[0].restartCount}')" = "Running 1" ] &&
		[ -n "$before" ] && [ "$(pod_devices dra-npu-1 inference)" = "$before" ]; then
		pass "10k. driver pod replaced, kube-apiserver and $ND's kubelet restarted: dra-npu-1 still Running, restarted only by the kill, chip $before"
	else
		fail "10k. the pod survives the restarts" "$(k get pod dra-npu-1 -o wide); devices $(pod_devices dra-npu-1 inference) (before $before)"
	fi
	sed 's/name: dra-npu-1$/name: dra-npu-1b/' "$tmp/dra-1.yaml" | k apply -f - >/dev/null
	if k wait --for=condition=Ready pod/dra-npu-1b --timeout="$WAIT" >/dev/null &&
		dra_pod_check "10k. after the restarts, a new claim" dra-npu-1b npu; then
		[ "$(pod_devices dra-npu-1b inference)" != "$before" ] &&
			pass "10k. after the restarts a new pod dra-npu-1b gets chip $(pod_devices dra-npu-1b inference), not dra-npu-1's $before" ||
			fail "10k. a chip held twice" "dra-npu-1b got $(pod_devices dra-npu-1b inference)"
	else
		fail "10k. a new claim after the restarts" "$(k describe pod dra-npu-1b | tail -n 15)"
	fi
	# The kubelet deletes its node's slices when it starts: the driver must
	# publish them again.
	out=$(dra_devices)
	expect "10k. after the restarts $ND's ResourceSlices list its 8 chips" "devices of $ND's ResourceSlices" 8 "$(grep -c . <<<"$out")"
	delete_pods dra-npu-1b

	# l. Pod deletion unprepares: the claim's CDI spec on node $DK goes.
	if [ -n "$uid" ] && [ -f "$(cdi_spec "$uid")" ]; then
		pass "10l. while dra-npu-1 runs, $ND has its claim's CDI spec ${CLUSTER_DIR}/nodes/n$DK/var/run/cdi/$(basename "$(cdi_spec "$uid")")"
	else
		fail "10l. the claim's CDI spec on $ND" "$(ls "$(cluster_node_dir $DK)/var/run/cdi/")"
	fi
	delete_pods dra-npu-1
	k wait --for=delete "resourceclaim/$claim" --timeout="$WAIT" >/dev/null 2>&1
	if [ ! -e "$(cdi_spec "$uid")" ]; then
		pass "10l. kubectl delete pod dra-npu-1: the claim $claim is gone and so is its CDI spec (left: $(ls "$(cluster_node_dir $DK)/var/run/cdi/" | tr '\n' ' '))"
	else
		fail "10l. unprepared" "$(cdi_spec "$uid") is still there"
	fi
	k delete -f "$tmp/dra-1.yaml" --ignore-not-found >/dev/null 2>&1

	# m. A pod that asks for ascend.com/npu as for the device plugin, on
	# the DRA node: DeviceClass npu.ascend.com's extendedResourceName
	# (DRAExtendedResource, GA in 1.37) has the scheduler make it a claim,
	# and the driver prepares it. The node's own ascend.com/npu is 0 or
	# absent: with --front-end=dra the device plugin never registers.
	if ! skip_unless_api extended "10m. a pod asking for ascend.com/npu served by the DRA driver"; then
		:
	elif run_npu_pod dra-extended "$ND" 2; then
		claim=$(k get pod dra-extended -o jsonpath='{.status.extendedResourceClaimStatus.resourceClaimName}')
		devs=$(claim_devices "$claim")
		# shellcheck disable=SC2086
		out=$(phys_of $devs)
		if ! why=$(claim_allocated "$claim" 2 "$ND"); then
			fail "10m. the scheduler's claim for dra-extended" "$why"
		elif [ "$(pod_devices dra-extended | tr ',' '\n' | sort -n | paste -sd, -)" != "$out" ]; then
			fail "10m. dra-extended sees its claim's chips" "claim $claim: $devs (physicalID $out); the container's ASCEND_VISIBLE_DEVICES: $(pod_devices dra-extended)"
		else
			check_devices "10m. pod dra-extended (limits ascend.com/npu: 2, no claim of its own) on $ND (ascend.com/npu from a device plugin: '$(capacity "$ND")'): the scheduler's claim $claim allocated $devs; the container" dra-extended 2
		fi
	else
		fail "10m. dra-extended Ready" "$(k describe pod dra-extended | tail -n 15)"
	fi
	delete_pods dra-extended

	# p. Administrative access: a monitoring pod beside the workload on its chip.
	dra_admin

	# r. Five rolls of the DRA driver with claims prepared throughout.
	dra_rolls

	# n. Back to the device plugin.
	t0=$(now_ms)
	check "10n. kubectl label node $ND npu-dra- npu=true" k label node "$ND" npu-dra- npu=true
	k -n kube-system wait --for=delete pod -l name=ascend-dra-driver --timeout="$WAIT" >/dev/null 2>&1
	if wait_capacity "$ND" 8 && wait_alloc "$ND" 8; then
		pass "10n. $ND back on the device plugin: ascend.com/npu 8 in $(($(now_ms) - t0)) ms, the DRA driver pod gone"
	else
		fail "10n. back on the device plugin" "capacity $(capacity "$ND"), allocatable $(alloc "$ND")"
	fi
	out=$(wait_devices 'split("\n") | map(select(. != "")) | length == 0' 60000)
	[ -z "$out" ] && pass "10n. the kubelet removed $ND's ResourceSlices of $DRA" ||
		fail "10n. $ND's slices after the driver left" "$out"
}
