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
# is interrupted.
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

work=''
cleanup() {
	local status=$?
	trap - EXIT INT TERM
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

"$bench_bin" --plugin "$plugin_bin" --kubelet-sim "$sim_bin" --dcmi-lib "$dcmi_lib" --work-dir "$work" "$@"
