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
# row, and kubectl to watch the slices with for the fault -> ResourceSlice row.
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

# free_port: a TCP port of 127.0.0.1 nothing listens on now.
free_port() {
	local p
	for _ in $(seq 100); do
		p=$((20000 + RANDOM % 20000))
		(exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null || { echo "$p"; return 0; }
	done
	return 1
}

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
	printf 'apiVersion: v1\nkind: Node\nmetadata:\n  name: bench-node\n' |
		"$bins/kubectl" --kubeconfig "$cp/kubeconfig" apply -f - >>"$cp/control-plane.log" 2>&1 ||
		die "cannot make the Node bench-node"
	# Claims allocated as the scheduler would (the integration tests' way,
	# tests/integration/test_dra_apiserver.c), made here so that no kubectl
	# run is inside the NodePrepareResources timing: one per line of
	# claims.txt, "NAME UID", spread over the 8 chips of the bench's node.
	kc=("$bins/kubectl" --kubeconfig "$cp/kubeconfig")
	claims=$cp/claims.txt
	for i in $(seq 0 $((dra_claims - 1))); do
		printf -- '---\napiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nmetadata:\n  name: bench-%d\n  namespace: default\nspec:\n  devices:\n    requests:\n    - name: npu\n      exactly:\n        deviceClassName: npu.ascend.com\n' "$i"
	done | "${kc[@]}" apply -f - >>"$cp/control-plane.log" 2>&1 || die "cannot make the bench's ResourceClaims"
	for i in $(seq 0 $((dra_claims - 1))); do
		"${kc[@]}" -n default patch resourceclaim "bench-$i" --subresource=status --type=merge -p \
			"{\"status\":{\"allocation\":{\"devices\":{\"results\":[{\"request\":\"npu\",\"driver\":\"npu.ascend.com\",\"pool\":\"bench-node\",\"device\":\"npu-$((i % 8))\"}]}}}}" \
			>>"$cp/control-plane.log" 2>&1 || die "cannot allocate the ResourceClaim bench-$i"
	done
	"${kc[@]}" -n default get resourceclaims \
		-o jsonpath='{range .items[*]}{.metadata.name} {.metadata.uid}{"\n"}{end}' >"$claims" ||
		die "cannot list the bench's ResourceClaims"
	dra=(--kubeconfig "$cp/kubeconfig" --kubectl "$bins/kubectl" --dra-claims "$claims")
	export ASCEND_KUBE_MODULE=$module
else
	echo "bench: no DRA row: the cluster's binaries are not built (make cluster-bins)" >&2
fi

"$bench_bin" --plugin "$plugin_bin" --kubelet-sim "$sim_bin" --dcmi-lib "$dcmi_lib" --work-dir "$work" "${dra[@]}" "$@"
