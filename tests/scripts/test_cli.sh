#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The daemon's command line: --help and --version exit 0 on stdout; a bad flag
# or value exits 2 with a message naming it and the usage on stderr.
set -uo pipefail
plugin=$1
passed=0 failed=0
out=$(mktemp) err=$(mktemp)
trap 'rm -f "$out" "$err"' EXIT

check() { # name, expected exit code, stream needle (stdout|stderr), text, args...
	local name=$1 want=$2 stream=$3 needle=$4
	shift 4
	"$plugin" "$@" >"$out" 2>"$err"
	local got=$?
	local file=$out
	[ "$stream" = stderr ] && file=$err
	if [ "$got" -eq "$want" ] && grep -qF -- "$needle" "$file"; then
		passed=$((passed + 1))
	else
		failed=$((failed + 1))
		echo "FAIL: $name: exit $got (want $want), $stream:" >&2
		sed 's/^/    /' "$file" >&2
	fi
}

check "help" 0 stdout "Usage: ascend-device-plugin" --help
check "help lists flags" 0 stdout "--health-interval DURATION" --help
check "version" 0 stdout "ascend-device-plugin 0." --version
check "unknown flag" 2 stderr "unknown flag '--nope'" --nope
check "usage on error" 2 stderr "Usage: ascend-device-plugin" --nope
check "bad resource name" 2 stderr "--resource-name: 'npu' is invalid" --resource-name npu
check "bad duration" 2 stderr "--health-interval: 'fast'" --health-interval=fast
check "bad backend" 2 stderr "--backend: 'cuda'" --backend cuda
check "bad log level" 2 stderr "--log-level: 'verbose'" --log-level verbose
check "missing value" 2 stderr "--dev-dir needs a value" --dev-dir
check "relative path" 2 stderr "--driver-path: 'driver' is not an absolute path" --driver-path driver
ASCEND_DRIVER_PATH=relative check "env driver path" 2 stderr "ASCEND_DRIVER_PATH"
# The flag wins over the environment, which is then not validated at all.
ASCEND_DRIVER_PATH=relative check "flag over bad env" 0 stdout "ascend-device-plugin 0." --driver-path /x --version
ASCEND_DRIVER_PATH=relative check "flag over bad env, probe" 1 stderr "probe failed" \
	--driver-path /x --probe --socket-dir /nonexistent
check "probe with nothing there" 1 stderr "probe failed" --probe --socket-dir /nonexistent

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
