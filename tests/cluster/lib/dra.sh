# SPDX-License-Identifier: Apache-2.0
# Sourced by tests/cluster/e2e.sh (not run): the DRA driver's objects as
# the steps dra and dra_both read them: a node's ResourceSlices, the claims
# of pods and what was allocated to them, their CDI specs on the node.
# shellcheck shell=bash disable=SC2154 # bin, build, root, tmp: set by e2e.sh

readonly DRA=npu.ascend.com
# The node moved to the DRA driver: node 2, eight 910B3 (one HCCS mesh) on
# cards 0-3 and 8-11. The mixed node 3 has no interconnect group (its chips
# are of two families), so the ring example could not run there.
readonly DK=2
ND=$(cluster_node_name $DK)
# The devices of the DRA node's pool as "name physicalID product interconnectGroup
# taint" lines, read from its ResourceSlices.
dra_devices() {
	k get resourceslices --field-selector "spec.nodeName=$ND,spec.driver=$DRA" -o json |
		jq -r '.items[].spec.devices[]? | "\(.name) \(.attributes.physicalID.int) \(.attributes.product.string // "-") \(.attributes.interconnectGroup.string // "-") \([.taints[]? | "\(.key)=\(.value):\(.effect)"] | join(",") | if . == "" then "-" else . end)"' |
		sort -V
}
dra_attr() { dra_devices | awk -v d="$1" -v f="$2" '$1 == d { print $f }'; } # DEVICE FIELD(2-5)
# wait_devices JQ_TEST [MS]: waits (a watch of the slices) until the jq test over
# dra_devices' lines (as a string) holds; prints the lines seen last.
wait_devices() {
	local deadline now
	deadline=$(($(now_ms) + ${2:-30000}))
	while now=$(dra_devices) && ! jq -e -R -s "$1" <<<"$now" >/dev/null && (($(now_ms) < deadline)); do
		# Woken by the next change of a slice, at most 5 s later.
		timeout 5 "$bin/kubectl" --kubeconfig "$(cluster_kubeconfig)" get resourceslices --watch-only -o name 2>/dev/null | head -n 1 >/dev/null
	done
	echo "$now"
}
# The claim a pod's resourceClaims entry NAME became, and what was allocated.
pod_claim() { # POD CLAIM: made from a template, or named by the pod
	local c
	c=$(k get pod "$1" -o jsonpath="{.status.resourceClaimStatuses[?(@.name==\"$2\")].resourceClaimName}")
	[ -n "$c" ] || c=$(k get pod "$1" -o jsonpath="{.spec.resourceClaims[?(@.name==\"$2\")].resourceClaimName}")
	echo "$c"
}
claim_devices() { k get resourceclaim "$1" -o jsonpath='{.status.allocation.devices.results[*].device}'; } # CLAIM
# claim_allocated CLAIM COUNT NODE: CLAIM's allocation has COUNT devices, all
# of NODE's pool (the driver names a node's pool after the node); if not,
# prints what the allocation has instead.
claim_allocated() {
	local got
	got=$(k get resourceclaim "$1" -o json 2>&1 |
		jq -r '[.status.allocation.devices.results[]?.pool] | "\(length) devices of pool \(unique | join(","))"' 2>&1)
	[ "$got" = "$2 devices of pool $3" ] && return 0
	echo "claim '$1': expected $2 devices of pool $3, got ${got:-nothing}"
	return 1
}
claim_uid() { k get resourceclaim "$1" -o jsonpath='{.metadata.uid}'; }
cdi_spec() { echo "$(cluster_node_dir $DK)/var/run/cdi/$DRA-claim_$1.json"; } # CLAIM_UID
# physical ids of DEVICES... on the DRA node, sorted, comma-separated
phys_of() {
	local d
	for d in "$@"; do dra_attr "$d" 2; done | sort -n | paste -sd, -
}
# dra_pod_check WHAT POD CLAIM [CONTAINER]: POD runs on the DRA node and CONTAINER
# sees exactly the chips of its claim CLAIM (ASCEND_VISIBLE_DEVICES, its
# /dev/davinciN and no other), through containerd's CDI.
dra_pod_check() {
	local what=$1 pod=$2 claim devs phys n env
	claim=$(pod_claim "$pod" "$3")
	devs=$(claim_devices "$claim")
	# shellcheck disable=SC2086
	phys=$(phys_of $devs)
	n=$(wc -w <<<"$devs")
	[ "$(k get pod "$pod" -o jsonpath='{.spec.nodeName}')" = "$ND" ] || { fail "$what" "not on $ND: $(k get pod "$pod" -o wide)"; return 1; }
	env=$(pod_devices "$pod" "${4:-$(k get pod "$pod" -o jsonpath='{.spec.containers[0].name}')}" | tr ',' '\n' | sort -n | paste -sd, -)
	if [ -n "$phys" ] && [ "$env" = "$phys" ]; then
		check_devices "$what: claim $claim allocated $devs (physicalID $phys) on $ND; the container" "$pod" "$n" ${4:+"$4"}
	else
		fail "$what" "claim $claim: devices '$devs' (physicalID '$phys'), the container's ASCEND_VISIBLE_DEVICES '$env'"
		return 1
	fi
}
# chip_claim NAME PHY [NAMESPACE [admin]]: a ResourceClaim of the DRA node's
# chip PHY whole, in NAMESPACE (default: kubectl's), for administrative
# access when the fourth word is admin.
chip_claim() {
	local ns="" admin=""
	[ -z "${3-}" ] || ns=", namespace: $3"
	[ "${4-}" != admin ] || admin=$'\n        adminAccess: true'
	cat <<EOF
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: $1$ns}
spec:
  devices:
    requests:
    - name: npu
      exactly:
        deviceClassName: $DRA$admin
        selectors: [{cel: {expression: 'device.attributes["$DRA"].physicalID == $2'}}]
EOF
}
# free_chip [PHY...]: the physical id of a whole chip of the DRA node's
# slices that no claim has allocated, other than PHY...; nothing when none.
free_chip() {
	local used d p
	used=$(k get resourceclaims -A -o json |
		jq -r --arg nd "$ND" '.items[].status.allocation.devices.results[]? | select(.pool == $nd) | .device')
	while read -r d p _; do
		if [[ $d =~ ^npu-[0-9]+$ ]] && ! grep -qx -- "$d" <<<"$used" && [[ " $* " != *" $p "* ]]; then
			echo "$p"
			return
		fi
	done < <(dra_devices)
}
# claim_pod NAME NODE CLAIM: a busybox pod on NODE whose container uses the
# ResourceClaim CLAIM.
claim_pod() {
	cat <<EOF
apiVersion: v1
kind: Pod
metadata: {name: $1}
spec:
  nodeSelector: {kubernetes.io/hostname: $2}
  tolerations: [{key: ascend.com/npu, operator: Exists, effect: NoSchedule}]
  terminationGracePeriodSeconds: 1
  resourceClaims: [{name: npu, resourceClaimName: $3}]
  containers:
  - {name: main, image: $E2E_BUSYBOX_IMAGE, command: [sleep, infinity], resources: {claims: [{name: npu}]}}
EOF
}
# The status the kubelet gives a pod's claimed devices:
# "claim:npu: npu.ascend.com/npu-node-2/npu-3=Unhealthy".
dra_resource_health() { # POD
	k get pod "$1" -o json | jq -r '[.status.containerStatuses[0].allocatedResourcesStatus[]?
		| "\(.name): " + ([.resources[]? | "\(.resourceID)=\(.health)"] | join(" "))] | join("; ")'
}
dra_driver_pod() { k -n kube-system get pods -l name=ascend-dra-driver --field-selector "spec.nodeName=$ND" -o jsonpath='{.items[0].metadata.name}'; }
