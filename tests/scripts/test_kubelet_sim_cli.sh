#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# kubelet-sim's command line and its start-up failures: a bad flag or value
# exits 2 naming it; a container runtime that cannot be used exits 1 naming
# the endpoint and why, before anything is served; without a runtime the pod
# commands say what is missing. (Pods on a real runtime: tests/e2e/.)
set -uo pipefail
sim=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# shellcheck source=tests/scripts/lib.sh
. "$(dirname "$0")/lib.sh"

# expect NAME WANT_EXIT NEEDLE ARGS...: the exit status and a line of
# stdout+stderr holding NEEDLE. stdin is empty: kubelet-sim quits at EOF.
expect() {
	local name=$1 want=$2 needle=$3 got=0
	shift 3
	"$sim" "$@" </dev/null >"$tmp/out" 2>&1 || got=$?
	if [ "$got" -eq "$want" ] && grep -qF -- "$needle" "$tmp/out"; then
		pass "$name"
	else
		fail "$name" "exit $got (want $want), output:$(sed 's/^/    /' "$tmp/out")"
	fi
}
dir=$tmp/dp
expect "usage names the pod options" 0 "--container-runtime-endpoint SOCKET" --help
expect "relist period too short" 2 "bad --relist-period '5ms'" --dir "$dir" --container-runtime-endpoint /x --relist-period 5ms
expect "image alias without =" 2 "bad --image-alias 'busybox' (FROM=TO)" --dir "$dir" --container-runtime-endpoint /x --image-alias busybox
expect "image alias with an empty side" 2 "bad --image-alias '=x'" --dir "$dir" --container-runtime-endpoint /x --image-alias =x
expect "node root needs a runtime" 2 "need --container-runtime-endpoint" --dir "$dir" --node-root /
expect "a relative node root" 2 "option --node-root needs an absolute path, not 'node'" --dir "$dir" --container-runtime-endpoint /x --node-root node
expect "a relist period without a runtime" 2 "need --container-runtime-endpoint" --dir "$dir" --relist-period 2s
expect "empty runtime endpoint" 2 "option --container-runtime-endpoint needs a non-empty value" --dir "$dir" --container-runtime-endpoint ""
expect "a relative runtime endpoint" 1 "cannot use the container runtime at run/containerd.sock" --dir "$dir" --container-runtime-endpoint run/containerd.sock
expect "a runtime endpoint nobody serves" 1 "the container runtime at $tmp/none.sock does not answer" --dir "$dir" --container-runtime-endpoint "$tmp/none.sock"
[ ! -e "$dir/kubelet.sock" ] && pass "no kubelet.sock after a failed start" || fail "no kubelet.sock after a failed start" "$dir/kubelet.sock exists"

# Without a runtime, each pod command says what is missing.
printf 'run x.yaml\npods\ndelete x\nlogs x c\nexec x c true\nprobe x c liveness\nruntime\nquit\n' |
	"$sim" --dir "$dir" >"$tmp/out" 2>&1
n=$(grep -cF 'error message="no container runtime: start kubelet-sim with --container-runtime-endpoint"' "$tmp/out")
[ "$n" = 7 ] && pass "pod commands without a runtime" || fail "pod commands without a runtime" "$(cat "$tmp/out")"
# Their usage is checked before anything else.
printf 'logs x\nprobe x c\nexec x\ndelete x y\nquit\n' | "$sim" --dir "$dir" >"$tmp/out" 2>&1
for u in "usage: logs POD CONTAINER" "usage: probe POD CONTAINER liveness|readiness" "usage: exec POD CONTAINER COMMAND..." "usage: delete POD [GRACE_SECONDS] (0..3600)"; do
	grep -qF -- "$u" "$tmp/out" && pass "$u" || fail "$u" "$(cat "$tmp/out")"
done
finish
