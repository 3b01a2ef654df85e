# SPDX-License-Identifier: Apache-2.0
# Shared by the shell tests in this folder (sourced, not run): counters, one
# line per check, and the closing "N passed, N failed" line CI reads.
# The sourcing script sets $tmp to a scratch directory first.

passed=0 failed=0 skipped=0
failures=()

pass() {
	passed=$((passed + 1))
	echo "ok $1"
}
fail() { # what, why...
	failed=$((failed + 1))
	failures+=("$1")
	echo "FAIL $1: ${*:2}"
}
# A check that cannot run here. Where CI=true the README's make test has
# installed and built what every check needs, so a skip there is a failure.
skip() { # what, why...
	if [ "${CI:-}" = true ]; then
		fail "$1" "skipped under CI=true, where make test promises it: ${*:2}"
		return
	fi
	skipped=$((skipped + 1))
	echo "skip $1: ${*:2}"
}
# not_this_build WHAT WHY...: a check this build cannot make by design (a
# sanitizer build, for what only the release build ships); make test's
# release run makes it, so it is a skip even under CI=true.
not_this_build() {
	skipped=$((skipped + 1))
	echo "skip $1: ${*:2}"
}
# skip_test WHY...: the whole test cannot run here. Exits 77, which CTest
# reports as skipped (SKIP_RETURN_CODE), or 1 under CI=true, as skip says.
skip_test() {
	echo "skip: $*"
	if [ "${CI:-}" = true ]; then
		echo "FAIL: skipped under CI=true, where make test promises this test"
		exit 1
	fi
	exit 77
}
# check WHAT COMMAND...: passes when COMMAND succeeds; shows its output if not.
check() {
	local what=$1
	shift
	if "$@" >"$tmp/out" 2>&1; then
		pass "$what"
	else
		fail "$what" "$(sed 's/^/    /' "$tmp/out")"
	fi
}
# The closing line; the exit status of the test. A long run's log may be
# shown cut in the middle, so the names of the failed checks come again here.
finish() {
	local f
	for f in "${failures[@]}"; do
		echo "failed: $f"
	done
	echo "$passed passed, $failed failed$( ((skipped)) && echo ", $skipped skipped")"
	((failed == 0))
}
