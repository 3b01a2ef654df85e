#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The arm64 build, run: the cross-built plugin and DCMI simulator under
# qemu-user, against the native kubelet-sim. One round trip through what an
# arm64 node needs: the plugin loads the arm64 libdcmi.so, subscribes to its
# fault events, registers, lists 8 chips, answers Allocate, reports a chip
# fault and its recovery, and exits 0 on SIGTERM.
#
# Usage: roundtrip.sh ARM64_BUILD_DIR NATIVE_BUILD_DIR (`make test-arm64`).
# Not under tests/scripts/: those run in every ctest tree, this needs the
# arm64 tree. Every wait has a deadline; under qemu a gRPC call is several
# times slower than native, so nothing here measures time.
set -uo pipefail

readonly WAIT_S=60 # deadline of each wait; generous for qemu on a busy machine
readonly CHIPS=8
readonly FAULTY=3
readonly RESOURCE=ascend.com/npu

if [ $# -ne 2 ]; then
	echo "usage: $0 ARM64_BUILD_DIR NATIVE_BUILD_DIR" >&2
	exit 2
fi
arm64=$1 native=$2
plugin=$arm64/src/ascend-device-plugin
dcmi=$arm64/tests/fake-dcmi/libdcmi.so
sim=$native/tools/kubelet-sim/kubelet-sim
qemu=$(command -v qemu-aarch64-static) || {
	echo "qemu-aarch64-static is missing (scripts/deps.sh arm64)" >&2
	exit 1
}
for f in "$plugin" "$dcmi" "$sim"; do
	[ -f "$f" ] || {
		echo "$f is missing (make build-arm64 build)" >&2
		exit 1
	}
done

tmp=$(mktemp -d)
# The plugin takes a DCMI library only from a root-owned directory that group
# and others cannot write (as Huawei's loader does).
chmod 755 "$tmp"
plugin_pid='' sim_pid=''
stop() { # pid: TERM, then KILL if it is still there after 10 s
	local timer
	kill -TERM "$1" 2>/dev/null || return 0
	sleep 10 &
	timer=$!
	wait -n "$1" "$timer" 2>/dev/null
	kill -KILL "$1" 2>/dev/null
	kill "$timer" 2>/dev/null
	wait "$1" "$timer" 2>/dev/null
}
cleanup() {
	[ -n "$plugin_pid" ] && stop "$plugin_pid"
	[ -n "$sim_pid" ] && stop "$sim_pid"
	rm -rf "$tmp"
}
trap cleanup EXIT
# shellcheck source=tests/scripts/lib.sh
. "$(dirname "$0")/../scripts/lib.sh"

# A failed wait ends the run: every later step builds on the earlier ones.
# Shows the last lines of both processes first.
give_up() { # what, why
	fail "$1" "$2"
	echo "--- plugin (last lines):"
	tail -n 20 "$tmp/plugin.log" | sed 's/^/    /'
	echo "--- kubelet-sim (last lines):"
	tail -n 20 "$tmp/sim.log" | sed 's/^/    /'
	finish
	exit 1
}

# expect FD LOG NEEDLE: reads lines from FD (copying them to LOG) until one
# holds NEEDLE, with a deadline of WAIT_S for the whole wait. The line is left
# in $line.
line=''
expect() {
	local fd=$1 log=$2 needle=$3 deadline left rc
	deadline=$((SECONDS + WAIT_S))
	while left=$((deadline - SECONDS)) && [ "$left" -gt 0 ]; do
		rc=0
		IFS= read -r -t "$left" -u "$fd" line || rc=$?
		if [ "$rc" -gt 128 ]; then
			continue # timed out: the deadline check decides
		elif [ "$rc" -ne 0 ]; then
			line="(end of output)"
			return 1
		fi
		echo "$line" >>"$log"
		case $line in *"$needle"*) return 0 ;; esac
	done
	line="(nothing within ${WAIT_S}s)"
	return 1
}
sim_expect() { # what needle
	expect "$sim_out" "$tmp/sim.log" "$2" || give_up "$1" "no '$2' from kubelet-sim: $line"
}
plugin_expect() { # what needle
	expect "$plugin_fd" "$tmp/plugin.log" "$2" || give_up "$1" "no '$2' in the plugin log: $line"
}
# wait_exit FD LOG PID: waits (bounded) for the end of the process's output,
# which comes when it exits, then reaps it. Status in $status; 1 when the
# output did not end within WAIT_S (the cleanup kills the process).
wait_exit() {
	local fd=$1 log=$2 pid=$3 deadline left rc
	deadline=$((SECONDS + WAIT_S))
	while left=$((deadline - SECONDS)) && [ "$left" -gt 0 ]; do
		rc=0
		IFS= read -r -t "$left" -u "$fd" line || rc=$?
		if [ "$rc" -eq 0 ]; then
			echo "$line" >>"$log"
		elif [ "$rc" -le 128 ]; then
			status=0
			wait "$pid" || status=$?
			return 0
		fi
	done
	return 1
}
sim_send() { printf '%s\n' "$*" >&"$sim_in"; echo "> $*" >>"$tmp/sim.log"; }
# The value of key=VALUE in a kubelet-sim line.
value_of() { # line key
	local rest=" $1 "
	rest=${rest#* "$2"=}
	echo "${rest%% *}"
}
is_aarch64() { # file; shows its machine when it is another one
	local machine
	machine=$(readelf -h "$1" | grep -E '^ *Machine:')
	[[ $machine =~ AArch64$ ]] || { echo "$machine"; return 1; }
}

check "the plugin is an AArch64 binary" is_aarch64 "$plugin"
check "libdcmi.so is an AArch64 library" is_aarch64 "$dcmi"
# The arm64 kubelet-sim is built too; it has to start under qemu.
check "kubelet-sim is an AArch64 binary" is_aarch64 "$arm64/tools/kubelet-sim/kubelet-sim"
check "the arm64 kubelet-sim runs under qemu" "$qemu" "$arm64/tools/kubelet-sim/kubelet-sim" --help

# The node: 8 chips, their device nodes, the simulator's state file.
mkdir -p "$tmp/dev" "$tmp/kubelet" "$tmp/lib" "$tmp/node"
for ((i = 0; i < CHIPS; i++)); do : >"$tmp/dev/davinci$i"; done
: >"$tmp/dev/davinci_manager"
: >"$tmp/dev/devmm_svm"
: >"$tmp/dev/hisi_hdc"
install -m 755 "$dcmi" "$tmp/lib/libdcmi.so"
state=$tmp/node/state
write_state() { # health of the faulty chip
	local i
	for ((i = 0; i < CHIPS; i++)); do
		if ((i == FAULTY)); then
			echo "chip phy=$i name=910B3 health=$1"
		else
			echo "chip phy=$i name=910B3 health=0"
		fi
	done >"$state.tmp"
	mv -f "$state.tmp" "$state"
}
write_state 0
: >"$tmp/plugin.log"
: >"$tmp/sim.log"

coproc SIM { exec "$sim" --dir "$tmp/kubelet" 2>>"$tmp/sim.err"; }
# shellcheck disable=SC2153 # SIM_PID is set by coproc
sim_pid=$SIM_PID
sim_out=${SIM[0]} sim_in=${SIM[1]}
sim_expect "kubelet-sim starts" "ready dir="

# A long health interval: the fault and the recovery must come through the
# DCMI fault subscription, not through polling.
mkfifo "$tmp/plugin.fifo"
ASCEND_FAKE_DCMI_STATE=$state "$qemu" "$plugin" \
	--socket-dir "$tmp/kubelet" --dev-dir "$tmp/dev" --backend dcmi \
	--dcmi-lib "$tmp/lib/libdcmi.so" --health-interval 1h \
	</dev/null >/dev/null 2>"$tmp/plugin.fifo" &
plugin_pid=$!
exec {plugin_fd}<"$tmp/plugin.fifo"

plugin_expect "the plugin loads the arm64 DCMI simulator" "using DCMI from $tmp/lib/libdcmi.so"
pass "the plugin loads the arm64 DCMI simulator"
plugin_expect "the plugin subscribes to DCMI fault events" "subscribed to DCMI fault events"
pass "the plugin subscribes to DCMI fault events"

sim_expect "registration" "register resource=$RESOURCE"
pass "registration: $line"
sim_expect "first device list" "devices resource=$RESOURCE"
if [ "$(value_of "$line" capacity)/$(value_of "$line" allocatable)" = "$CHIPS/$CHIPS" ]; then
	pass "capacity and allocatable are $CHIPS/$CHIPS"
else
	fail "capacity and allocatable are $CHIPS/$CHIPS" "$line"
fi

# Allocate: two IDs, a device spec per chip, and the visible-devices variable
# naming the same chips.
sim_send "allocate 2"
sim_expect "allocate 2" "allocate "
case $line in
"allocate ok"*) ;;
*) give_up "allocate 2" "$line" ;;
esac
ids=$(value_of "$line" ids)
IFS=, read -r -a id_list <<<"$ids"
if [ "${#id_list[@]}" -eq 2 ]; then
	pass "allocate 2 grants 2 devices: $ids"
else
	fail "allocate 2 grants 2 devices" "$line"
fi
want_visible='' hosts=' ' visible=''
for id in "${id_list[@]}"; do
	want_visible+=${want_visible:+,}${id#npu-}
done
while sim_expect "the rest of the Allocate answer" "allocate " && [[ $line != "allocate end"* ]]; do
	case $line in
	"allocate device"*) hosts+="$(value_of "$line" host) " ;;
	"allocate env name=ASCEND_VISIBLE_DEVICES "*) visible=$(value_of "$line" value) ;;
	esac
done
missing=''
for id in "${id_list[@]}"; do
	[[ $hosts == *" $tmp/dev/davinci${id#npu-} "* || $hosts == *" /dev/davinci${id#npu-} "* ]] ||
		missing+=" davinci${id#npu-}"
done
if [ -n "$want_visible" ] && [ -z "$missing" ]; then
	pass "the answer has a device spec per granted chip:$hosts"
else
	fail "the answer has a device spec per granted chip" "missing$missing in:$hosts"
fi
if [ -n "$visible" ] && [ "$visible" = "$want_visible" ]; then
	pass "ASCEND_VISIBLE_DEVICES=$visible names the granted chips"
else
	fail "ASCEND_VISIBLE_DEVICES names the granted chips" "got '$visible', want '$want_visible'"
fi

# A critical fault on one chip, then its recovery, through fault events.
write_state 3
plugin_expect "the plugin receives the fault event" "DCMI fault event"
pass "the plugin receives the fault event"
sim_expect "the fault reaches the kubelet" "devices resource=$RESOURCE capacity=$CHIPS allocatable=$((CHIPS - 1))"
if [ "$(value_of "$line" unhealthy)" = "npu-$FAULTY" ]; then
	pass "chip fault: allocatable $((CHIPS - 1)), npu-$FAULTY unhealthy"
else
	fail "chip fault: only npu-$FAULTY is unhealthy" "$line"
fi
write_state 0
sim_expect "the recovery reaches the kubelet" "devices resource=$RESOURCE capacity=$CHIPS allocatable=$CHIPS"
pass "recovery: allocatable $CHIPS again"

# SIGTERM: a clean stop with status 0, seen by kubelet-sim as its stream ending.
kill -TERM "$plugin_pid"
wait_exit "$plugin_fd" "$tmp/plugin.log" "$plugin_pid" ||
	give_up "SIGTERM: the plugin exits 0" "still running ${WAIT_S}s after SIGTERM"
plugin_pid=''
if [ "$status" -eq 0 ]; then
	pass "SIGTERM: the plugin exits 0"
else
	fail "SIGTERM: the plugin exits 0" "exit status $status"
fi
sim_expect "kubelet-sim sees the plugin go" "stream-ended resource=$RESOURCE"
sim_send "quit"
wait_exit "$sim_out" "$tmp/sim.log" "$sim_pid" ||
	give_up "kubelet-sim exits 0" "still running ${WAIT_S}s after quit"
sim_pid=''
check "kubelet-sim exits 0" test "$status" -eq 0
finish
