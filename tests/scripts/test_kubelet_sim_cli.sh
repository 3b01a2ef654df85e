#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# kubelet-sim's command line and its start-up failures: a bad flag or value
# exits 2 naming it; a pod resources socket that cannot be served exits 1
# naming it and leaves no kubelet.sock behind. kubelet-sim runs no pods (the
# real kubelet does, tests/cluster/), so the pod runner's flags and commands
# are unknown.
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
expect "usage names the pod resources socket" 0 "--pod-resources-socket PATH" --help
expect "--dir is required" 2 "--dir is required" --timestamps
expect "a relative pod resources socket" 2 "option --pod-resources-socket needs an absolute path, not 'pr.sock'" --dir "$dir" --pod-resources-socket pr.sock
for flag in --container-runtime-endpoint --node-root --pod-log-dir --image-alias --relist-period; do
	expect "no $flag" 2 "unknown option '$flag'" --dir "$dir" "$flag" /x
done
expect "a pod resources socket that cannot be served" 1 "cannot serve the pod resources API on $tmp/none/pr.sock" --dir "$dir" --pod-resources-socket "$tmp/none/pr.sock"
[ ! -e "$dir/kubelet.sock" ] && pass "no kubelet.sock after a failed start" || fail "no kubelet.sock after a failed start" "$dir/kubelet.sock exists"

# The pod runner's commands are gone.
printf 'run x.yaml\npods\ndelete x\nlogs x c\nexec x c true\nprobe x c liveness\nruntime\nquit\n' |
	"$sim" --dir "$dir" >"$tmp/out" 2>&1
n=$(grep -cE '^error message="unknown command (run|pods|delete|logs|exec|probe|runtime)"$' "$tmp/out")
[ "$n" = 7 ] && pass "no pod commands" || fail "no pod commands" "$(cat "$tmp/out")"
finish
