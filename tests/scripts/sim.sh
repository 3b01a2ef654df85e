# SPDX-License-Identifier: Apache-2.0
# shellcheck shell=bash disable=SC2154 # sim, tmp, node: set by the sourcing script
# Driving kubelet-sim from a shell test (sourced, not run): kubelet-sim runs
# as a coproc; commands go to its stdin, and its event lines are read with a
# deadline on every wait and copied to $tmp/sim.log, which a failure shows.
# Used by test_cdi_podman.sh.
#
# The sourcing script sources tests/scripts/lib.sh first, and sets:
#   tmp     a scratch directory (sim.log and sim.err are written there)
#   WAIT_S  the deadline of one wait, in seconds
#   node    the node root
#   demo    optional: true echoes every line read and every command sent
# With kubelet-sim's --timestamps, every line read has its ts= prefix
# removed: $line holds the event, $line_us its time (CLOCK_MONOTONIC us).

# shellcheck disable=SC2034 # sim_status is for the sourcing script
sim_pid='' sim_in='' sim_out='' sim_status=''
line='' line_us=''

# sim_start ARG...: starts kubelet-sim ($sim) with ARGs, stderr in $tmp/sim.err.
sim_start() {
	coproc SIM { exec "$sim" "$@" 2>"$tmp/sim.err"; }
	# shellcheck disable=SC2153 # SIM_PID is set by coproc
	sim_pid=$SIM_PID
	sim_out=${SIM[0]} sim_in=${SIM[1]}
}

# _sim_strip: splits a ts= prefix off $line into $line_us.
_sim_strip() {
	line_us=''
	if [[ $line == ts=* ]]; then
		line_us=${line%% *}
		line_us=${line_us#ts=}
		line=${line#* }
	fi
}

# expect NEEDLE: reads kubelet-sim's lines (copying them to its log) until one
# holds NEEDLE, within WAIT_S. The line is left in $line.
expect() {
	local needle=$1 deadline left rc
	deadline=$((SECONDS + WAIT_S))
	while left=$((deadline - SECONDS)) && [ "$left" -gt 0 ]; do
		rc=0
		IFS= read -r -t "$left" -u "$sim_out" line || rc=$?
		if [ "$rc" -gt 128 ]; then
			continue
		elif [ "$rc" -ne 0 ]; then
			line="(end of output)"
			return 1
		fi
		echo "$line" >>"$tmp/sim.log"
		_sim_strip
		${demo:-false} && echo "    | $line"
		case $line in *"$needle"*) return 0 ;; esac
	done
	line="(nothing within ${WAIT_S}s)"
	return 1
}
# wait_exit FD LOG PID: the end of the output, then the exit status (in
# $sim_status).
wait_exit() {
	local fd=$1 log=$2 pid=$3 deadline left rc
	deadline=$((SECONDS + WAIT_S))
	while left=$((deadline - SECONDS)) && [ "$left" -gt 0 ]; do
		rc=0
		IFS= read -r -t "$left" -u "$fd" line || rc=$?
		if [ "$rc" -eq 0 ]; then
			echo "$line" >>"$log"
		elif [ "$rc" -le 128 ]; then
			sim_status=0
			wait "$pid" 2>/dev/null || sim_status=$?
			return 0
		fi
	done
	return 1
}
# sim_quit: kubelet-sim quits, or is killed when it does
# not within WAIT_S; $sim_status is its exit status then.
sim_quit() {
	if [ -n "$sim_pid" ] && kill -0 "$sim_pid" 2>/dev/null; then
		{ printf 'quit\n' >&"$sim_in"; } 2>/dev/null
		wait_exit "$sim_out" "$tmp/sim.log" "$sim_pid" || kill -KILL "$sim_pid" 2>/dev/null
	fi
}
# A failed wait ends the test: later steps build on it.
give_up() { # what why
	fail "$1" "$2"
	echo "--- kubelet-sim (last lines):"
	tail -n 25 "$tmp/sim.log" | sed 's/^/    /'
	[ -f "$tmp/sim.err" ] && { echo "--- kubelet-sim stderr:"; tail -n 10 "$tmp/sim.err" | sed 's/^/    /'; }
	finish
	exit 1
}
need() { # what needle
	expect "$2" || give_up "$1" "no '$2' from kubelet-sim: $line"
}
send() {
	${demo:-false} && echo "    > $*"
	echo "> $*" >>"$tmp/sim.log"
	printf '%s\n' "$*" >&"$sim_in"
}
value_of() { # line key: the value of key=VALUE, bare or quoted (unescaped)
	local re_quoted="(^| )$2=\"(([^\"\\\\]|\\\\.)*)\"" re_bare="(^| )$2=([^ ]*)" v
	if [[ $1 =~ $re_quoted ]]; then
		v=${BASH_REMATCH[2]}
		v=${v//\\\"/\"}
		echo "${v//\\\\/\\}"
	elif [[ $1 =~ $re_bare ]]; then
		echo "${BASH_REMATCH[2]}"
	fi
}
# _sim_has LINE KEY=VALUE...: each KEY of LINE has VALUE.
_sim_has() {
	local kv l=$1
	shift
	for kv in "$@"; do
		[ "$(value_of "$l" "${kv%%=*}")" = "${kv#*=}" ] || return 1
	done
}
# await WHAT NEEDLE [KEY=VALUE...]: like need, for a line that also has each
# KEY=VALUE; a line read before counts too, so that the events of pods
# running side by side may be awaited in any order. The first such line is
# left in $line (and its time in $line_us).
await() {
	local what=$1 needle=$2 l
	shift 2
	while IFS= read -r l; do
		line=$l
		_sim_strip
		[[ $line == *"$needle"* ]] && _sim_has "$line" "$@" && return 0
	done < <(grep -F -- "$needle" "$tmp/sim.log" | grep -v '^> ')
	while need "$what" "$needle"; do
		_sim_has "$line" "$@" && return 0
	done
}
