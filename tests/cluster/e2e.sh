#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The guide on a real Kubernetes (make e2e, part of make test): the upstream
# API server, scheduler, controller manager and three kubelets with
# containerd 2 (tests/cluster/cluster.sh), our DaemonSet and examples applied
# with kubectl, every outcome read back through kubectl as a user would.
#
#   e2e.sh BUILD_DIR [STEP...]    make e2e [STEP=dra,metrics]
#
# This file is the runner: it brings the cluster up, runs the steps and
# tears the cluster down. Each step is a file of steps/ (what it proves in
# its top comment) over the helpers of lib/; a step names the steps it needs
# (needs STEP PREREQ...), and those run first, so any step runs alone on a
# fresh cluster. STEPs may be given as words or comma-separated; all of them,
# in the order below, by default.
#
# One line per check ("ok ..." or "FAIL ..."), a figure where the step
# measures one, and the closing "N passed, M failed" line. It starts its own
# cluster (its own directory, network namespace and port, so a `make cluster`
# may run beside it) and removes it on every path, Ctrl-C included.
set -uo pipefail

readonly ORDER=(install schedule pending fault reset lifecycle rollout sharing cdi metrics dra dra_both multinode dra_vnpu helm)

if [ $# -lt 1 ]; then
	echo "usage: $0 BUILD_DIR [STEP...]" >&2
	exit 2
fi
build=$(cd "$1" && pwd) || exit 2
shift
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)

# The steps asked for (all by default), each checked against ORDER.
declare -A asked=() needed=()
read -ra list <<<"${*//,/ }"
for s in "${list[@]}"; do
	[[ " ${ORDER[*]} " == *" $s "* ]] || { echo "e2e.sh: unknown step '$s' (steps: ${ORDER[*]})" >&2; exit 2; }
	asked[$s]=1
done
((${#asked[@]})) || for s in "${ORDER[@]}"; do asked[$s]=1; done

# needs STEP PREREQ...: called by each step file as it is sourced; the
# prerequisites of an asked step are run before it, so each must come
# earlier in ORDER (its file sourced already).
declare -A prereqs=()
needs() {
	local p
	for p in "${@:2}"; do
		declare -F "step_$p" >/dev/null || { echo "e2e.sh: steps/$1.sh needs '$p', not a step before it" >&2; exit 2; }
	done
	prereqs[$1]="${*:2}"
}
for s in "${ORDER[@]}"; do
	# shellcheck source=/dev/null
	. "$here/steps/$s.sh" || exit 2
	declare -F "step_$s" >/dev/null || { echo "e2e.sh: steps/$s.sh defines no step_$s" >&2; exit 2; }
done
want() { # STEP: marks STEP and, first, what it needs
	local p
	[ -z "${needed[$1]-}" ] || return 0
	needed[$1]=1
	for p in ${prereqs[$1]-}; do want "$p"; done
}
for s in "${!asked[@]}"; do want "$s"; done

if [ "$(id -u)" -ne 0 ]; then
	# No silent pass: make e2e and make test fail here (exit 77, as
	# tests/scripts/lib.sh's skip_test).
	echo "skip: the cluster e2e test needs root (namespaces, mounts, mknod)"
	exit 77
fi

export CLUSTER_DIR=${E2E_CLUSTER_DIR:-/tmp/ascend-k8s-e2e}
export CLUSTER_NETNS=${E2E_CLUSTER_NETNS:-ascend-k8s-e2e}
export CLUSTER_PORT=${E2E_CLUSTER_PORT:-16443}
# shellcheck source=cluster.sh
. "$here/cluster.sh"
tmp=$(mktemp -d /tmp/e2e-cluster.XXXXXX)
# shellcheck source=../scripts/lib.sh
. "$root/tests/scripts/lib.sh"
for f in report kube devices kubelet dra features; do
	# shellcheck source=/dev/null
	. "$here/lib/$f.sh"
done

# The node names the steps use.
# shellcheck disable=SC2034
N1=$(cluster_node_name 1) N2=$(cluster_node_name 2) N3=$(cluster_node_name 3)
t_start=$SECONDS

finished=false
cleanup() {
	$finished && return
	finished=true
	trap - EXIT INT TERM
	if [ -n "${rss_pid-}" ]; then
		kill "$rss_pid" 2>/dev/null
		wait "$rss_pid" 2>/dev/null
		figure memory "peak resident memory of the cluster (control plane, 3 kubelets and containerds, plugins, pods): $(($(sort -n "$tmp/rss" | tail -n 1) / 1024)) MiB"
	fi
	if [ "${E2E_KEEP:-0}" = 1 ]; then
		echo "E2E_KEEP=1: the cluster stays up: export KUBECONFIG=$(cluster_kubeconfig)"
	else
		cluster_down >"$tmp/down.log" 2>&1 || { cat "$tmp/down.log"; fail "cleanup" "cluster_down failed"; }
		[ ! -e "$CLUSTER_DIR" ] || fail "cleanup" "$CLUSTER_DIR is left"
		! ip netns list | grep -qw "$CLUSTER_NETNS" || fail "cleanup" "network namespace $CLUSTER_NETNS is left"
	fi
	rm -rf "$tmp"
	echo "cluster e2e: $((SECONDS - t_start)) s"
	finish
	exit $?
}
trap cleanup EXIT
trap 'echo "interrupted"; failed=$((failed + 1)); cleanup' INT TERM

# ---- the cluster -----------------------------------------------------------------

t0=$(now_ms)
if ! cluster_up "$build" >"$tmp/up.log" 2>&1; then
	cat "$tmp/up.log"
	for f in "$CLUSTER_DIR"/logs/*.log; do
		[ -f "$f" ] && { echo "---- $f"; tail -n 20 "$f"; }
	done
	give_up "cluster up" "see above"
fi
bin=$(cat "$CLUSTER_DIR/bin")
# The cluster's memory, sampled every 2 s for the peak figure.
(
	while [ -d "$CLUSTER_DIR" ]; do
		cluster_rss_kb
		sleep 2
	done
) >"$tmp/rss" 2>/dev/null &
rss_pid=$!
pass "cluster: etcd, kube-apiserver, kube-controller-manager, kube-scheduler and 3 kubelets ($("$bin/kubectl" version --client -o json | jq -r .clientVersion.gitVersion)) with containerd $("$bin/containerd" --version | awk '{print $3}') Ready"
figure cluster "up in $(($(now_ms) - t0)) ms"
# What of DRA's gated fields this release keeps: the steps ask.
api_probe

for s in "${ORDER[@]}"; do
	[ -n "${needed[$s]-}" ] || continue
	t0=$(now_ms)
	"step_$s"
	figure "$s" "step took $(($(now_ms) - t0)) ms"
done

# Every registration the kubelets saw named a path they did not hold: a
# refused one ("device plugin already connected") leaves the kubelet holding
# that path for good, and later allocations can be sent to it.
refused=$(grep -c 'device plugin already connected' "$CLUSTER_DIR"/logs/kubelet-n*.log | awk -F: '{ n += $2 } END { print n + 0 }')
# Each refusal with the lines before it, for the failure's story.
[ "$refused" = 0 ] || grep -h -B4 'device plugin already connected' "$CLUSTER_DIR"/logs/kubelet-n*.log >&2 || true
expect "no kubelet refused a registration of ours as already connected" "the kubelets' logs" 0 "$refused"
# A run that failed leaves what explains it: the kubelets' device plugin
# lines (the plugins' own logs are printed by dump).
if [ "$failed" -gt 0 ]; then
	for f in "$CLUSTER_DIR"/logs/kubelet-n*.log; do
		echo "---- $(basename "$f"): device plugin lines (last 40)"
		grep -E 'device plugin|Device plugin|Registered client|Deregistered client|ListAndWatch|GetPreferredAllocation' "$f" |
			tail -n 40 | cut -c1-300 | sed 's/^/    /'
	done
	dump
fi
