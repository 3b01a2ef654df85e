#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Runs the benchmark (bench/bench.c) against a build: the plugin, kubelet-sim
# and the DCMI simulator on simulated 8- and 128-chip nodes, and prints the
# table of RSS and latencies against targets (see docs/performance.md).
#
# Usage: scripts/bench.sh BUILD_DIR [ascend-bench options]    (or: make bench)
#
# The nodes live in a fresh temporary directory removed on exit, Ctrl-C
# included; the benchmark stops its children itself and kills them when it
# is interrupted. Where the cluster's binaries were built (make
# cluster-bins), a throwaway etcd and kube-apiserver on free ports of this
# machine (tests/cluster/cluster.sh's functions, as the integration tests
# start them) give the DRA front end's rows an API server to publish to, with
# ResourceClaims allocated on the bench's node for the NodePrepareResources
# rows (whole chips, and placements of dynamic vNPUs), and kubectl to watch
# the slices with for the fault -> ResourceSlice and start -> ResourceSlices
# rows; and upstream's DRA test driver of the same release, with claims of
# its own, is measured beside the DRA front end. Options such as
# --only dra-dynamic,dra-slices go to the benchmark (ascend-bench --help).
set -euo pipefail

die() {
	printf 'bench: %s\n' "$*" >&2
	exit 1
}

[[ $# -ge 1 ]] || die "usage: $0 BUILD_DIR [ascend-bench options]"
build=$(cd "$1" 2>/dev/null && pwd) || die "no build directory $1 (run: make build)"
shift
bench_bin=$build/bench/ascend-bench
plugin_bin=$build/src/ascend-device-plugin
sim_bin=$build/tools/kubelet-sim/kubelet-sim
dcmi_lib=$build/tests/fake-dcmi/libdcmi.so
for f in "$bench_bin" "$plugin_bin" "$sim_bin" "$dcmi_lib"; do
	[[ -f $f ]] || die "$f is missing (run: make build)"
done

work='' cp=''
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source=bench-lib.sh
. "$root/scripts/bench-lib.sh"
# control_plane SCRIPT: runs cluster.sh's functions for the control plane in $cp.
control_plane() {
	CLUSTER_HOST_NET=1 CLUSTER_DIR=$cp CLUSTER_PORT=$api_port \
		bash -c ". '$root/tests/cluster/cluster.sh' && $1" >>"$cp/control-plane.log" 2>&1
}
cleanup() {
	local status=$?
	trap - EXIT INT TERM
	[[ -n $cp ]] && { control_plane "_cl_stop kube-apiserver; _cl_stop etcd" || true; }
	[[ -n $work ]] && rm -rf -- "$work"
	exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

work=$(mktemp -d /tmp/ascend-bench-XXXXXX)
# Root-owned and not group/world-writable: the plugin's ownership check of
# each node's libdcmi.so passes.
chmod 755 "$work"

dra=()
dra_claims=50
module=$build/src/libascend-kube.so
bins=$("$root/scripts/cluster-bins.sh" --dir 2>/dev/null || true)
if [[ -f $module && -n $bins && -x $bins/kube-apiserver && -x $bins/etcd && -x $bins/kubectl ]]; then
	cp=$work/control-plane
	mkdir -p "$cp/pids" "$cp/logs"
	api_port=$(free_port) && etcd_port=$(free_port) && peer_port=$(free_port) ||
		die "no free ports for the control plane"
	control_plane "_cl_pki && cluster_etcd_start $bins $etcd_port $peer_port &&
		cluster_apiserver_start $bins $api_port $etcd_port" ||
		die "the control plane did not start: $(tail -n 5 "$cp/control-plane.log")"
	kc=("$bins/kubectl" --kubeconfig "$cp/kubeconfig")
	peer=$bins/dra-test-driver
	[[ -x $peer ]] || { peer=''; echo "bench: no peer rows: upstream's DRA test driver is not built (make cluster-bins)" >&2; }
	# One Node per driver and measurement (bench/bench.c names them), so that
	# no start sees slices of an earlier one.
	for node in bench-node bench-node-64 bench-node-16 bench-node-16-dynamic ${peer:+bench-peer bench-peer-64}; do
		printf -- '---\napiVersion: v1\nkind: Node\nmetadata:\n  name: %s\n' "$node"
	done | "${kc[@]}" apply -f - >>"$cp/control-plane.log" 2>&1 || die "cannot make the bench's Nodes"
	# make_claims PREFIX DRIVER NODE DEVICE_FORMAT FILE: claims allocated as the
	# scheduler would (the integration tests' way,
	# tests/integration/test_dra_apiserver.c), made here so that no kubectl
	# run is inside the NodePrepareResources timing: one per line of FILE,
	# "NAME UID", spread over the devices 0 to 7 of NODE (DEVICE_FORMAT of
	# the index names one); labelled with PREFIX to list them apart.
	make_claims() {
		local prefix=$1 driver=$2 node=$3 format=$4 file=$5 i device
		for i in $(seq 0 $((dra_claims - 1))); do
			printf -- '---\napiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nmetadata:\n  name: %s-%d\n  namespace: default\n  labels:\n    bench: %s\nspec:\n  devices:\n    requests:\n    - name: npu\n      exactly:\n        deviceClassName: %s\n' \
				"$prefix" "$i" "$prefix" "$driver"
		done | "${kc[@]}" apply -f - >>"$cp/control-plane.log" 2>&1 || die "cannot make the $prefix ResourceClaims"
		for i in $(seq 0 $((dra_claims - 1))); do
			# shellcheck disable=SC2059 # the format is the caller's
			device=$(printf "$format" $((i % 8)))
			"${kc[@]}" -n default patch resourceclaim "$prefix-$i" --subresource=status --type=merge -p \
				"{\"status\":{\"allocation\":{\"devices\":{\"results\":[{\"request\":\"npu\",\"driver\":\"$driver\",\"pool\":\"$node\",\"device\":\"$device\"}]}}}}" \
				>>"$cp/control-plane.log" 2>&1 || die "cannot allocate the ResourceClaim $prefix-$i"
		done
		"${kc[@]}" -n default get resourceclaims -l "bench=$prefix" \
			-o jsonpath='{range .items[*]}{.metadata.name} {.metadata.uid}{"\n"}{end}' >"$file" ||
			die "cannot list the $prefix ResourceClaims"
	}
	claims=$cp/claims.txt
	make_claims bench npu.ascend.com bench-node 'npu-%d' "$claims"
	# The same on the same node for a placement of a dynamic vNPU of each
	# chip, prepared where the driver carves its chips on demand.
	make_claims bench-dynamic npu.ascend.com bench-node 'npu-%d-vir05-1c-8g-0' "$cp/dynamic-claims.txt"
	dra=(--kubeconfig "$cp/kubeconfig" --kubectl "$bins/kubectl" --dra-claims "$claims"
		--dra-dynamic-claims "$cp/dynamic-claims.txt")
	if [[ -n $peer ]]; then
		# The peer's default driver name; its devices are device-00, -01, ...
		make_claims peer test-driver.cdi.k8s.io bench-peer 'device-%02d' "$cp/peer-claims.txt"
		dra+=(--peer-driver "$peer" --peer-claims "$cp/peer-claims.txt")
	fi
	export ASCEND_KUBE_MODULE=$module
else
	echo "bench: no DRA row: the cluster's binaries are not built (make cluster-bins)" >&2
fi

"$bench_bin" --plugin "$plugin_bin" --kubelet-sim "$sim_bin" --dcmi-lib "$dcmi_lib" --work-dir "$work" "${dra[@]}" "$@"
