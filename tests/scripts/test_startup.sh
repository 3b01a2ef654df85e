#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Every way the daemon can fail to start ends the same way: exit status 1
# (2 for a bad flag) and one error line that names the path or resource and
# the real reason; never a crash, a hang or silence. Run against both builds,
# so the ASan build also shows these paths leak nothing (LeakSanitizer would
# change the exit status).
set -uo pipefail
plugin=$1 fake_dcmi=$3
tmp=$(mktemp -d)
chmod 755 "$tmp"
holder=
cleanup() {
	[ -n "$holder" ] && kill "$holder" 2>/dev/null && wait "$holder" 2>/dev/null
	umount "$tmp/ro" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

mkdir -p "$tmp/dev" "$tmp/kubelet"
# An uid of its own for the unprivileged cases: nothing else runs as it.
uid=64123

# expect_start_failure WHAT STATUS NEEDLE [env NAME=VALUE...] -- COMMAND...
# Runs the command (bounded), then checks its status, that stderr holds the
# needle, and that there is exactly one error line.
expect_start_failure() {
	local what=$1 want=$2 needle=$3
	shift 3
	timeout 20 "$@" >"$tmp/stdout" 2>"$tmp/stderr"
	local got=$?
	local errors
	errors=$(grep -cE ' error |: fatal: ' "$tmp/stderr")
	if [ "$want" -eq 2 ]; then
		# A flag error is no log line: it is the message, then the hint to --help.
		errors=$(wc -l <"$tmp/stderr")
		[ "$errors" -eq 2 ] && [ "$(tail -n 1 "$tmp/stderr")" = "Try '${plugin##*/} --help' for more information." ] &&
			errors=1
	fi
	if [ "$got" -eq "$want" ] && grep -qF -- "$needle" "$tmp/stderr" && [ "$errors" -eq 1 ]; then
		pass "$what"
	else
		fail "$what" "exit $got (want $want), $errors error lines, stderr:" "$(sed 's/^/    /' "$tmp/stderr")"
	fi
}

common=(--dev-dir "$tmp/dev" --backend devfs --health-interval 1s)

expect_start_failure "socket dir missing" 1 "socket directory $tmp/missing/dir: No such file or directory" \
	"$plugin" --socket-dir "$tmp/missing/dir" "${common[@]}"

touch "$tmp/file"
expect_start_failure "socket dir is a file" 1 "socket directory $tmp/file: Not a directory" \
	"$plugin" --socket-dir "$tmp/file" "${common[@]}"

mkdir -p "$tmp/root-only"
chmod 755 "$tmp/root-only"
expect_start_failure "socket dir not writable" 1 "cannot serve on $tmp/root-only/ascend-npu.sock: Permission denied" \
	setpriv --reuid=$uid --regid=$uid --clear-groups "$plugin" --socket-dir "$tmp/root-only" "${common[@]}"

mkdir -p "$tmp/ro"
if unshare -m true 2>/dev/null; then
	expect_start_failure "socket dir on a read-only file system" 1 \
		"cannot serve on $tmp/ro/ascend-npu.sock: Read-only file system" \
		unshare -m sh -c 'mount -t tmpfs -o ro tmpfs "$1" && shift && exec "$@"' sh "$tmp/ro" \
		"$plugin" --socket-dir "$tmp/ro" "${common[@]}"
else
	skip "socket dir on a read-only file system" "no mount namespaces here"
fi

long=$tmp/$(printf 'd%.0s' {1..100})
expect_start_failure "socket path over sun_path" 2 \
	"--socket-dir: the socket path $long/ascend-npu.sock would be $((${#long} + 16)) bytes; unix socket paths must stay under 108" \
	"$plugin" --socket-dir "$long" "${common[@]}"

# A live plugin on the endpoint keeps it: a second one must not unlink and
# steal its socket.
# start_until NEEDLE COMMAND...: starts a plugin in the background (its PID
# in $holder, its stderr on fd 3) and reads its stderr until a line holds
# the needle (true) or 30 s pass without one (false).
start_until() {
	local needle=$1 line
	shift
	rm -f "$tmp/fifo" "$tmp/first.err"
	mkfifo "$tmp/fifo"
	"$@" 2>"$tmp/fifo" &
	holder=$!
	exec 3<"$tmp/fifo"
	while IFS= read -r -t 30 line <&3; do
		echo "$line" >>"$tmp/first.err"
		case $line in *"$needle"*) return 0 ;; esac
	done
	return 1
}
stop_holder() {
	kill -TERM "$holder"
	wait "$holder"
	local status=$?
	exec 3<&-
	holder=
	return $status
}

# Its first failed registration comes after its socket is bound.
if start_until "registration with the kubelet failed" "$plugin" --socket-dir "$tmp/kubelet" "${common[@]}"; then
	expect_start_failure "endpoint in use by a live server" 1 \
		"cannot serve on $tmp/kubelet/ascend-npu.sock: Address already in use" \
		"$plugin" --socket-dir "$tmp/kubelet" "${common[@]}"
	check "the live server keeps its socket" "$plugin" --probe --socket-dir "$tmp/kubelet"
else
	fail "endpoint in use by a live server" "the first plugin did not start:" "$(cat "$tmp/first.err")"
fi
check "the first plugin stops cleanly" stop_holder

# Not a start-up failure, but the same rule: an unreadable device directory is
# reported with its real reason, not as a driver that is not loaded.
mkdir -p "$tmp/private-dev" "$tmp/open-kubelet"
chmod 700 "$tmp/private-dev"
chmod 777 "$tmp/open-kubelet"
if start_until "davinci_manager" setpriv --reuid=$uid --regid=$uid --clear-groups \
	"$plugin" --socket-dir "$tmp/open-kubelet" --dev-dir "$tmp/private-dev" --backend devfs; then
	check "unreadable dev dir: the reason is the errno" \
		grep -qF "cannot check $tmp/private-dev/davinci_manager: Permission denied" "$tmp/first.err"
else
	fail "unreadable dev dir" "no line about davinci_manager:" "$(cat "$tmp/first.err")"
fi
stop_holder

# The kernel's inotify limits, set to 0 in a user namespace of our own.
if unshare -U -r true 2>/dev/null; then
	expect_start_failure "inotify instance limit" 1 "cannot create an inotify instance: Too many open files" \
		unshare -U -r sh -c 'echo 0 >/proc/sys/user/max_inotify_instances && exec "$@"' sh \
		"$plugin" --socket-dir "$tmp/kubelet" "${common[@]}"
	expect_start_failure "inotify watch limit" 1 "cannot watch $tmp/kubelet: No space left on device" \
		unshare -U -r sh -c 'echo 0 >/proc/sys/user/max_inotify_watches && exec "$@"' sh \
		"$plugin" --socket-dir "$tmp/kubelet" "${common[@]}"
else
	skip "inotify limits" "no user namespaces here"
fi

expect_start_failure "open-file limit" 1 "the open-file limit (RLIMIT_NOFILE, ulimit -n) is 16" \
	bash -c 'ulimit -n 16 && exec "$@"' bash "$plugin" --socket-dir "$tmp/kubelet" "${common[@]}"

# A vendor library that aborts (or faults) inside dcmi_init. It must sit in
# root-owned directories nobody else can write, as the loader demands.
mkdir -p "$tmp/driver"
chmod 755 "$tmp/driver"
cp "$fake_dcmi" "$tmp/driver/libdcmi.so"
for how in abort segv; do
	sig=SIGABRT
	[ "$how" = segv ] && sig=SIGSEGV
	expect_start_failure "DCMI crashes in dcmi_init ($how)" 1 \
		"fatal: $sig while loading or querying the DCMI library" \
		env ASCEND_FAKE_DCMI_CRASH=$how ASCEND_FAKE_DCMI_STATE="$tmp/state" \
		"$plugin" --socket-dir "$tmp/kubelet" --dev-dir "$tmp/dev" --dcmi-lib "$tmp/driver/libdcmi.so"
done

finish
