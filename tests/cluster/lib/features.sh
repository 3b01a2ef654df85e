# SPDX-License-Identifier: Apache-2.0
# Sourced by tests/cluster/e2e.sh (not run): which of the DRA fields behind
# feature gates this API server keeps. A gate that is off does not make the
# server refuse an object: its registry drops the fields silently on create
# (pkg/registry/resource/*/strategy.go, dropDisabledFields), so the check is
# a server-side dry run of an object that carries them, read back. Never the
# version number: a cluster may turn a gate on early or off late.
#
#   taints      ResourceSlice device taints (DRADeviceTaints: beta in 1.36)
#   counters    sharedCounters/consumesCounters (DRAPartitionableDevices: beta in 1.36)
#   consumable  allowMultipleAllocations, requestPolicy (DRAConsumableCapacity: beta in 1.36)
#   extended    DeviceClass extendedResourceName (DRAExtendedResource: beta in 1.36)
#
# The steps that need one ask `has_api FEATURE`; those that cannot run
# without it say so with `skip_unless_api FEATURE WHAT`. On the pinned
# release (tests/cluster/versions.env) every feature must be there: a
# probe that found one missing there is a failure, not a skip.
# shellcheck shell=bash disable=SC2154 # root, N1: set by e2e.sh

declare -gA API_HAS=()
declare -gA _API_GATE=([taints]=DRADeviceTaints [counters]=DRAPartitionableDevices
	[consumable]=DRAConsumableCapacity [extended]=DRAExtendedResource)

_api_probe_slice() {
	cat <<EOF
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: e2e-feature-probe}
spec:
  driver: probe.e2e.example.com
  nodeName: $N1
  pool: {name: probe, generation: 1, resourceSliceCount: 2}
  devices:
  - name: d0
    taints: [{key: e2e.example.com/probe, value: x, effect: NoSchedule}]
    allowMultipleAllocations: true
    capacity:
      shares: {value: "2", requestPolicy: {default: "1", validRange: {min: "1", max: "1"}}}
    consumesCounters: [{counterSet: probe, counters: {units: {value: "1"}}}]
EOF
}
_api_probe_counters() {
	cat <<EOF
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: e2e-feature-probe-counters}
spec:
  driver: probe.e2e.example.com
  nodeName: $N1
  pool: {name: probe, generation: 1, resourceSliceCount: 2}
  sharedCounters: [{name: probe, counters: {units: {value: "1"}}}]
EOF
}
_api_probe_class() {
	cat <<EOF
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: e2e-feature-probe}
spec:
  extendedResourceName: example.com/e2e-probe
EOF
}

# api_probe: fills API_HAS and reports what the server keeps.
api_probe() {
	local slice counters class kept=() dropped=() f server pin
	slice=$(_api_probe_slice | k create --dry-run=server -o json -f - 2>&1)
	counters=$(_api_probe_counters | k create --dry-run=server -o json -f - 2>&1)
	class=$(_api_probe_class | k create --dry-run=server -o json -f - 2>&1)
	API_HAS[taints]=$(jq -r '.spec.devices[0].taints | length > 0' <<<"$slice" 2>/dev/null)
	API_HAS[consumable]=$(jq -r '.spec.devices[0].allowMultipleAllocations == true' <<<"$slice" 2>/dev/null)
	API_HAS[counters]=$(jq -r '.spec.devices[0].consumesCounters | length > 0' <<<"$slice" 2>/dev/null)
	# A server that keeps consumesCounters keeps the counter sets too; one
	# that refuses a slice of counters alone says so here.
	[ "${API_HAS[counters]}" != true ] || jq -e '.spec.sharedCounters | length > 0' <<<"$counters" >/dev/null 2>&1 ||
		{ API_HAS[counters]=false; echo "    the counter sets' slice: $counters"; }
	API_HAS[extended]=$(jq -r '.spec.extendedResourceName != null' <<<"$class" 2>/dev/null)
	for f in taints counters consumable extended; do
		if [ "${API_HAS[$f]}" = true ]; then
			kept+=("$f")
		else
			API_HAS[$f]=false
			dropped+=("$f (${_API_GATE[$f]})")
		fi
	done
	server=$(k version -o json 2>/dev/null | jq -r .serverVersion.gitVersion)
	pin=$(sed -n 's/^K8S_VERSION=//p' "$root/tests/cluster/versions.env")
	if ((${#dropped[@]} == 0)); then
		pass "features: the API server ($server) keeps every gated DRA field the driver uses: ${kept[*]}"
	elif [ "$server" = "$pin" ]; then
		fail "features: the pinned release $pin keeps every gated DRA field" "dropped: ${dropped[*]}; probe: $slice"
	else
		pass "features: the API server ($server) keeps ${kept[*]:-none of them}; drops ${dropped[*]}: the checks that need them are skipped"
	fi
}

has_api() { [ "${API_HAS[$1]-}" = true ]; } # FEATURE

# skip_unless_api FEATURE WHAT: true when the server has FEATURE; else
# reports WHAT as skipped, naming the gate, and is false.
skip_unless_api() {
	has_api "$1" && return 0
	skip "$2" "the API server drops the fields of ${_API_GATE[$1]} (off by default in this release)"
	return 1
}
