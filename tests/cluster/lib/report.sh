# SPDX-License-Identifier: Apache-2.0
# Sourced by tests/cluster/e2e.sh (not run): what a run prints besides
# the ok/FAIL lines of tests/scripts/lib.sh: figures, the state of the
# cluster when a step gives up, and comparisons that name what differed.
# shellcheck shell=bash disable=SC2154 # bin, build, root, tmp: set by e2e.sh

now_ms() { _e2e_now_ms; }
# figure STEP TEXT: a measured figure, on a line of its own
figure() { echo "figure $1: $2"; }
# give_up WHAT WHY: a failure that leaves the rest of the run meaningless
give_up() {
	fail "$1" "${*:2}"
	dump
	cleanup
}
dump() {
	echo "---- nodes"
	k get nodes -o wide 2>&1 | sed 's/^/    /'
	echo "---- pods"
	k get pods -A -o wide 2>&1 | sed 's/^/    /'
	echo "---- plugin logs (last 20 lines each)"
	for p in $(k -n kube-system get pods -l name=ascend-device-plugin -o name 2>/dev/null); do
		echo "  $p"
		k -n kube-system logs "$p" --tail=20 2>&1 | sed 's/^/    /'
	done
}
# expect WHAT OBJECT WANT GOT: passes (as WHAT) when GOT is WANT; the failure
# names the object read and both values.
expect() {
	if [ "$4" = "$3" ]; then
		pass "$1"
		return 0
	fi
	fail "$1" "$2: expected '$3', got '$4'"
	return 1
}
