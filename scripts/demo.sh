#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# A guided tour of ascend-device-plugin on a simulated 8-chip Ascend 910B3
# node: the DCMI simulator stands in for the driver, kubelet-sim for the
# kubelet. Shows registration, capacity, an allocation, a chip fault and its
# recovery, and a kubelet restart. Takes a few seconds.
#
# Usage: scripts/demo.sh BUILD_DIR    (or: make demo)
#
# Every wait follows an event (a kubelet-sim line or a plugin log line) with a
# deadline; nothing sleeps to synchronise. On a terminal the steps are paced
# for reading (DEMO_PACE seconds before each heading, default 0.4; 0 turns it
# off). Everything lives in a fresh temporary directory that is removed on
# exit, Ctrl-C included.
set -euo pipefail

readonly WAIT_S=10   # deadline of each wait
readonly CHIPS=8
readonly FAULTY=3    # the chip that fails and recovers

die() {
	printf '\ndemo: %s\n' "$*" >&2
	exit 1
}

[[ $# -eq 1 ]] || die "usage: $0 BUILD_DIR"
build=$(cd "$1" 2>/dev/null && pwd) || die "no build directory $1 (run: make build)"
plugin_bin=$build/src/ascend-device-plugin
sim_bin=$build/tools/kubelet-sim/kubelet-sim
dcmi_lib=$build/tests/fake-dcmi/libdcmi.so
for f in "$plugin_bin" "$sim_bin" "$dcmi_lib"; do
	[[ -f $f ]] || die "$f is missing (run: make build)"
done

# --- presentation ----------------------------------------------------------

if [[ -t 1 ]]; then
	bold=$'\e[1m' dim=$'\e[2m' green=$'\e[32m' red=$'\e[31m' reset=$'\e[0m'
	pace=${DEMO_PACE:-0.4}
else
	bold='' dim='' green='' red='' reset=''
	pace=${DEMO_PACE:-0}
fi
[[ $pace =~ ^[0-9]+(\.[0-9]+)?$ ]] || die "DEMO_PACE must be a number of seconds"
step=0
heading() {
	# Presentation only: a pause for the reader, never to wait for anything.
	[[ $pace == 0 ]] || sleep "$pace"
	step=$((step + 1))
	printf '\n%s%d. %s%s\n' "$bold" "$step" "$*" "$reset"
}
say() { printf '   %s\n' "$*"; }
good() { printf '   %s%s%s\n' "$green" "$*" "$reset"; }
bad() { printf '   %s%s%s\n' "$red" "$*" "$reset"; }
# A plugin log line without its timestamp: "info  found 8 NPU chips ...".
show_log() { printf '   %splugin:%s %s\n' "$dim" "$reset" "${1#* }"; }
show_sim() { printf '   %skubelet:%s %s\n' "$dim" "$reset" "$1"; }

# --- the node and its processes, and their cleanup -----------------------------

root='' plugin_pid='' tail_pid='' sim_pid=''

# SIGTERM, then wait for the exit, or for a 5 s timer and SIGKILL.
stop_pid() { # pid
	local pid=$1 timer
	kill -TERM "$pid" 2>/dev/null || return 0
	sleep 5 >/dev/null 2>&1 &
	timer=$!
	wait -n "$pid" "$timer" 2>/dev/null || true
	kill -KILL "$pid" 2>/dev/null || true
	kill "$timer" 2>/dev/null || true
	wait "$timer" "$pid" 2>/dev/null || true
}

cleanup() {
	local status=$?
	trap - EXIT INT TERM
	[[ -n $sim_pid ]] && stop_pid "$sim_pid"
	[[ -n $plugin_pid ]] && stop_pid "$plugin_pid"
	if [[ -n $tail_pid ]]; then
		kill "$tail_pid" 2>/dev/null || true
		wait "$tail_pid" 2>/dev/null || true
	fi
	if [[ -n $root && -d $root ]]; then
		if ((status != 0 && status < 128)) && [[ -s $root/plugin.log ]]; then
			printf '\n--- last lines of the plugin log:\n' >&2
			tail -n 15 "$root/plugin.log" >&2
		fi
		rm -rf -- "$root"
	fi
	exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

root=$(mktemp -d /tmp/ascend-demo-XXXXXX)
# Root-owned and not group/world-writable: the plugin's ownership check of
# the driver tree's libdcmi.so passes.
chmod 755 "$root"
dev=$root/dev
sockets=$root/kubelet
driver=/usr/local/Ascend/driver
state=$root/dcmi-state
mkdir -p "$dev" "$sockets" "$root$driver/lib64/driver" "$root/usr/local/bin" "$root/etc"
for ((i = 0; i < CHIPS; i++)); do : >"$dev/davinci$i"; done
: >"$dev/davinci_manager"
: >"$dev/devmm_svm"
: >"$dev/hisi_hdc"
: >"$root$driver/version.info"
: >"$root$driver/lib64/libascend_hal.so"
: >"$root/usr/local/bin/npu-smi"
: >"$root/etc/ascend_install.info"
install -m 755 "$dcmi_lib" "$root$driver/lib64/driver/libdcmi.so"

# Writes the DCMI state (one line per chip; the faulty chip's health and
# error codes as given) and renames it into place, as the simulator expects.
write_state() { # health-of-faulty-chip [errors]
	local i extra
	{
		echo "driver 24.1.rc1"
		for ((i = 0; i < CHIPS; i++)); do
			extra=''
			if ((i == FAULTY)); then
				extra=" health=$1${2:+ errors=$2}"
			fi
			echo "chip phy=$i name=910B3 aicore=20 hbm_mb=65536${extra:- health=0}"
		done
	} >"$state.tmp"
	mv -f "$state.tmp" "$state"
}
write_state 0

# --- waiting for lines, with deadlines -------------------------------------------

# Microseconds of wall-clock time in $now, without forking a subshell.
now=0
clock() {
	now=${EPOCHREALTIME/[.,]/}
	now=$((10#$now))
}

# expect FD NEEDLE WHAT: reads lines from FD until one contains NEEDLE,
# leaving it in $line; fails after WAIT_S seconds, saying what was awaited.
line=''
expect() {
	local fd=$1 needle=$2 what=$3 deadline left timeout rc
	clock
	deadline=$((now + WAIT_S * 1000000))
	while :; do
		clock
		left=$((deadline - now))
		((left > 0)) || die "timed out after ${WAIT_S}s waiting for $what ('$needle')"
		printf -v timeout '%d.%06d' $((left / 1000000)) $((left % 1000000))
		rc=0
		IFS= read -r -t "$timeout" -u "$fd" line || rc=$?
		if ((rc > 128)); then
			continue # timed out: the deadline check above decides
		elif ((rc != 0)); then
			die "the stream ended while waiting for $what ('$needle')"
		fi
		[[ $line == *"$needle"* ]] && return 0
	done
}
sim_expect() { expect "$sim_out" "$@"; }
log_expect() { expect "$log_fd" "$@"; }
elapsed() { # from-us to-us: "1.234 ms"
	local us=$(($2 - $1))
	printf '%d.%03d ms' $((us / 1000)) $((us % 1000))
}
sim_send() { printf '%s\n' "$*" >&"$sim_in"; }

# The value of key=VALUE in a kubelet-sim line.
value_of() { # line key
	local rest=" $1 "
	rest=${rest#* "$2"=}
	echo "${rest%% *}"
}

# --- the tour ----------------------------------------------------------------------

printf '%sascend-device-plugin demo%s: a simulated %d-chip Ascend 910B3 node in %s\n' \
	"$bold" "$reset" "$CHIPS" "$root"

heading "Start the kubelet stand-in (kubelet-sim) and the plugin"
coproc SIM { exec "$sim_bin" --dir "$sockets" 2>"$root/kubelet-sim.log"; }
# shellcheck disable=SC2153 # SIM_PID is set by coproc
sim_pid=$SIM_PID
sim_out=${SIM[0]} sim_in=${SIM[1]}
sim_expect "ready" "kubelet-sim to listen on kubelet.sock"
say "kubelet-sim serves Registration on $sockets/kubelet.sock"

: >"$root/plugin.log"
ASCEND_FAKE_DCMI_STATE=$state "$plugin_bin" \
	--socket-dir "$sockets" --dev-dir "$dev" --host-root "$root" --driver-path "$driver" \
	2>>"$root/plugin.log" </dev/null >/dev/null &
plugin_pid=$!
# Follow the log as it grows (tail -f wakes on inotify, so no polling here).
exec {log_fd}< <(exec tail -n +1 -f "$root/plugin.log")
tail_pid=$!
say "ascend-device-plugin started (pid $plugin_pid; log: plugin.log)"
log_expect "using DCMI from" "the plugin to load DCMI"
show_log "$line"
log_expect "subscribed to DCMI fault events" "the plugin to subscribe to fault events"
show_log "$line"
log_expect "found $CHIPS NPU chips" "the plugin to discover the chips"
show_log "$line"

heading "Registration"
sim_expect "register resource=ascend.com/npu" "the plugin's Register call"
show_sim "$line"
log_expect "registered ascend.com/npu with the kubelet" "the plugin to log its registration"
show_log "$line"

heading "Capacity as the kubelet sees it (ListAndWatch)"
sim_expect "devices resource=ascend.com/npu" "the first device list"
capacity=$(value_of "$line" capacity)
allocatable=$(value_of "$line" allocatable)
[[ $capacity == "$CHIPS" ]] || die "capacity is $capacity, expected $CHIPS"
good "capacity: ascend.com/npu: $capacity  allocatable: $allocatable"

heading "A container asks for 2 NPUs (Allocate)"
sim_send "allocate 2"
sim_expect "allocate " "the Allocate answer"
[[ $line == "allocate ok"* ]] || die "Allocate failed: $line"
say "granted: $(value_of "$line" ids)"
while :; do
	sim_expect "allocate " "the rest of the Allocate answer"
	case $line in
	"allocate end"*) break ;;
	"allocate device"*) say "device  $(value_of "$line" host) -> $(value_of "$line" container) ($(value_of "$line" permissions))" ;;
	"allocate mount"*)
		ro=$(value_of "$line" read_only)
		say "mount   $(value_of "$line" host) -> $(value_of "$line" container)$([[ $ro == 1 ]] && echo ' (read-only)')"
		;;
	"allocate env"*) say "env     $(value_of "$line" name)=$(value_of "$line" value)" ;;
	*) say "${line#allocate }" ;;
	esac
done

heading "Chip $FAULTY fails (DCMI health 2, major)"
write_state 2 80E01801
clock
changed=$now
say "state file: chip phy=$FAULTY health=2 errors=80E01801"
log_expect "DCMI fault event" "the simulator's fault event"
show_log "$line"
log_expect "npu-$FAULTY is Unhealthy" "the plugin to mark npu-$FAULTY Unhealthy"
show_log "$line"
sim_expect "allocatable=$((CHIPS - 1))" "the kubelet to see $((CHIPS - 1)) allocatable NPUs"
clock
seen=$now
bad "capacity: ascend.com/npu: $(value_of "$line" capacity)  allocatable: $(value_of "$line" allocatable)  unhealthy: $(value_of "$line" unhealthy)"
say "the kubelet had the new list within $(elapsed "$changed" "$seen") (make bench measures it precisely)"

heading "Chip $FAULTY recovers"
write_state 0
clock
changed=$now
say "state file: chip phy=$FAULTY health=0"
log_expect "npu-$FAULTY recovered" "the plugin to notice the recovery"
show_log "$line"
sim_expect "allocatable=$CHIPS" "the kubelet to see $CHIPS allocatable NPUs again"
clock
seen=$now
good "capacity: ascend.com/npu: $(value_of "$line" capacity)  allocatable: $(value_of "$line" allocatable)"
say "the kubelet had the new list after $(elapsed "$changed" "$seen"): the fault policy keeps a chip out until it"
say "has stayed clean for its recovery hold (5 s by default, faultPolicy.recoveryHold), so a flapping chip"
say "is reported once, not at every flap"

heading "The kubelet restarts"
sim_send "restart"
say "kubelet-sim drops its streams, deletes the sockets in kubelet/ and serves kubelet.sock anew"
sim_expect "allocatable=0" "the kubelet to mark the devices unhealthy as the stream ends"
bad "capacity: ascend.com/npu: $(value_of "$line" capacity)  allocatable: $(value_of "$line" allocatable)  (stream gone)"
log_expect "kubelet.sock created" "the plugin to see the new kubelet.sock"
show_log "$line"
log_expect "registered again with the kubelet" "the plugin to register again"
show_log "$line"
sim_expect "register resource=ascend.com/npu" "the kubelet to accept the new registration"
show_sim "$line"
sim_expect "allocatable=$CHIPS" "the device list after the restart"
good "capacity: ascend.com/npu: $(value_of "$line" capacity)  allocatable: $(value_of "$line" allocatable)"

heading "Stop"
kill -TERM "$plugin_pid"
log_expect "stopped" "the plugin to stop after SIGTERM"
show_log "$line"
status=0
wait "$plugin_pid" || status=$?
plugin_pid=''
((status == 0)) || die "the plugin exited with status $status"
sim_send "quit"
wait "$sim_pid" 2>/dev/null || true
sim_pid=''
good "done: the plugin exited 0; removing $root"
