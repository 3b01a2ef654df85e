#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The daemon's command line: --help and --version exit 0 on stdout; a bad flag
# or value, or a bad --config file, exits 2 with a message naming it on
# stderr (tests/scripts/test_usage_errors.sh checks that it is the only line
# but for the hint to --help).
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
check "hint on error" 2 stderr "Try 'ascend-device-plugin --help' for more information." --nope
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

# --config: a missing, bad or not yet applicable file stops the start (exit
# 2); a good one's flags apply, below the command line's.
cfg=$(mktemp)
trap 'rm -f "$out" "$err" "$cfg"' EXIT
check "config file missing" 2 stderr "/nonexistent/config.yaml: cannot open" --config /nonexistent/config.yaml
printf 'version: v1\nflags:\n  healthInterval: soon\n' >"$cfg"
check "config file bad value" 2 stderr "$cfg: line 3: flags.healthInterval: 'soon' is not a duration" --config="$cfg"
printf 'version: v1\nflagz: {}\n' >"$cfg"
check "config file unknown key" 2 stderr "$cfg: line 2: flagz: unknown key" --config="$cfg"
printf 'version: v1\nsharing:\n  timeSlicing:\n    resources:\n    - {name: ascend.com/npu, replicas: 4}\n' >"$cfg"
check "config file time-slicing of another resource refused" 2 stderr \
	"$cfg: line 5: sharing.timeSlicing.resources[0].name: 'ascend.com/npu' is not a resource of this plugin (ascend.com/other;" \
	--config="$cfg" --resource-name=ascend.com/other
printf 'version: v1\nsharing:\n  timeSlicing:\n    resources:\n    - {name: ascend.com/npu, replicas: 4}\n    - {name: ascend.com/x, replicas: 2}\n' >"$cfg"
check "config file time-slicing of a resource not served refused" 2 stderr \
	"$cfg: line 6: sharing.timeSlicing.resources[1].name: 'ascend.com/x' is not a resource of this plugin (ascend.com/npu;" \
	--config="$cfg"
printf 'version: v1\nsharing:\n  timeSlicing:\n    renameByDefault: true\n    resources:\n    - {name: ascend.com/npu, replicas: 4}\n' >"$cfg"
check "config file time-slicing renames the socket" 1 stderr "/nonexistent-ts/ascend-npu.shared.sock" \
	--config "$cfg" --socket-dir=/nonexistent-ts --probe
printf 'version: v1\nflags:\n  socketDir: /nonexistent-from-file\n' >"$cfg"
check "config file flags apply" 1 stderr "/nonexistent-from-file/ascend-npu.sock" --config "$cfg" --probe
check "command line over config file" 1 stderr "/nonexistent-cli/ascend-npu.sock" \
	--socket-dir=/nonexistent-cli --config "$cfg" --probe

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
