#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# A command line the plugin, kubelet-sim or ascend-doctor cannot use ends
# the GNU way: nothing on stdout and exactly two lines on stderr, the
# message naming the flag and value and "Try 'PROG --help' for more
# information.", then exit 2 (3 for ascend-doctor, whose 2 is a FAIL
# verdict). The usage is printed by --help only: after an error it pushed the
# message out of sight. A bad --config file is no usage error: its one line
# names the file, line and key, without the hint. A control character in a
# value (a newline, say) is written escaped, as the log writes it, so that
# every fatal error at start is one line.
set -uo pipefail
plugin=$1 sim=$2
doctor=${4:-$(dirname "$plugin")/../tools/ascend-doctor/ascend-doctor}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# shellcheck source=tests/scripts/lib.sh
. "$(dirname "$0")/lib.sh"

# expect_lines WHAT WANT_EXIT WANT_STDERR COMMAND...: the exit status, an
# empty stdout and the whole of stderr. stdin is empty (kubelet-sim would
# read commands) and the run is bounded (a plugin that started would not
# stop by itself).
expect_lines() {
	local what=$1 want=$2 want_err=$3 got=0
	shift 3
	timeout 20 "$@" </dev/null >"$tmp/stdout" 2>"$tmp/stderr" || got=$?
	if [ "$got" -eq "$want" ] && [ ! -s "$tmp/stdout" ] && [ "$(cat "$tmp/stderr")" = "$want_err" ]; then
		pass "$what"
	else
		fail "$what" "exit $got (want $want), stdout:" "$(sed 's/^/    /' "$tmp/stdout")" "stderr:" \
			"$(sed 's/^/    /' "$tmp/stderr")" "want stderr:" "$(sed 's/^/    /' <<<"$want_err")"
	fi
}
# expect_usage_error PROG WANT_EXIT MESSAGE COMMAND...: "PROG: MESSAGE" and the hint.
expect_usage_error() {
	local prog=$1 want=$2 message=$3
	shift 3
	expect_lines "$prog$(printf ' %q' "${@:2}")" "$want" "$prog: $message
Try '$prog --help' for more information." "$@"
}
# expect_help PROG COMMAND...: the usage on stdout, nothing on stderr, exit 0.
expect_help() {
	local prog=$1 got=0
	shift
	"$@" </dev/null >"$tmp/stdout" 2>"$tmp/stderr" || got=$?
	if [ "$got" -eq 0 ] && grep -q "^Usage: $prog" "$tmp/stdout" && [ ! -s "$tmp/stderr" ]; then
		pass "$prog --help"
	else
		fail "$prog --help" "exit $got, stderr:" "$(sed 's/^/    /' "$tmp/stderr")"
	fi
}
# A directory whose socket paths are too long: 100 bytes.
long=/$(printf 'd%.0s' {1..99})

# ---- ascend-device-plugin --------------------------------------------------------
p=ascend-device-plugin
expect_help $p "$plugin" --help
expect_usage_error $p 2 "unknown flag '--bogus'" "$plugin" --bogus
expect_usage_error $p 2 "unknown flag '--bogus'" "$plugin" --bogus=1
expect_usage_error $p 2 "unexpected argument 'stray'" "$plugin" stray
expect_usage_error $p 2 "--dev-dir needs a value (DIR)" "$plugin" --dev-dir
expect_usage_error $p 2 "--help takes no value" "$plugin" --help=yes
expect_usage_error $p 2 "--health-interval: 'fast' is not a duration between 100ms and 24h (e.g. 500ms, 5s, 1m)" \
	"$plugin" --health-interval=fast
expect_usage_error $p 2 "--driver-path: 'driver' is not an absolute path" "$plugin" --driver-path driver
expect_usage_error $p 2 "--driver-path (from ASCEND_DRIVER_PATH): 'relative' is not an absolute path" \
	env ASCEND_DRIVER_PATH=relative "$plugin"
# A control character in a quoted value is written escaped: the error stays one line.
expect_usage_error $p 2 "--log-level: 'info\\nerror' is not one of error, warn, info, debug" \
	"$plugin" --log-level $'info\nerror'
expect_usage_error $p 2 "--backend: 'x\\x1b[2Jy' is not one of auto, dcmi, devfs" "$plugin" --backend $'x\e[2Jy'
# The socket directory: the longest socket path in it, whole, and its length.
expect_usage_error $p 2 \
	"--socket-dir: the socket path $long/ascend-npu.sock would be 116 bytes; unix socket paths must stay under 108" \
	"$plugin" --socket-dir "$long"
expect_usage_error $p 2 \
	"--socket-dir: the socket path $long/kubelet.sock would be 113 bytes; unix socket paths must stay under 108" \
	"$plugin" --socket-dir "$long/" --resource-name a.io/n
# Checked before the daemon starts, --probe included.
expect_usage_error $p 2 \
	"--socket-dir: the socket path $long/ascend-npu.shared.sock would be 123 bytes; unix socket paths must stay under 108" \
	"$plugin" --probe --socket-dir="$long" --resource-name=ascend.com/npu.shared
# The --config file's problems name the file, line and key; --help would not help.
expect_lines "$p: a missing --config file" 2 "$p: $tmp/none.yaml: cannot open: No such file or directory" \
	"$plugin" --config "$tmp/none.yaml"
printf 'version: v1\nflags:\n  healthInterval: soon\n' >"$tmp/bad.yaml"
expect_lines "$p: a bad --config value" 2 \
	"$p: $tmp/bad.yaml: line 3: flags.healthInterval: 'soon' is not a duration between 100ms and 24h (e.g. 500ms, 5s, 1m)" \
	"$plugin" --config "$tmp/bad.yaml"
# A value with a newline in it, from the file or a flag, is written escaped:
# every fatal error at start is one line.
printf 'version: v1\nflags:\n  resourceName: "a.io/x\\ny"\n' >"$tmp/nl-resource.yaml"
expect_lines "$p: a newline in flags.resourceName" 2 \
	"$p: $tmp/nl-resource.yaml: line 3: flags.resourceName: 'a.io/x\\ny' is invalid: the name after '/' must be 1-63 characters of [A-Za-z0-9-_.], starting and ending alphanumeric" \
	"$plugin" --config "$tmp/nl-resource.yaml"
printf 'version: v1\nflags:\n  nodeName: "x\\ny"\n' >"$tmp/nl-node.yaml"
expect_lines "$p: a newline in flags.nodeName" 2 \
	"$p: $tmp/nl-node.yaml: line 3: flags.nodeName: 'x\\ny' is not a node name (a DNS subdomain)" \
	"$plugin" --config "$tmp/nl-node.yaml" --front-end=dra
printf 'version: v1\nfaultPolicy:\n  huaweiFiles: "/x\\r\\ny"\n' >"$tmp/nl-huawei.yaml"
expect_lines "$p: a newline in faultPolicy.huaweiFiles" 2 \
	"$p: $tmp/nl-huawei.yaml: line 3: faultPolicy.huaweiFiles: /x\\r\\ny: cannot open: No such file or directory" \
	"$plugin" --config "$tmp/nl-huawei.yaml"
expect_lines "$p: a newline in --kubeconfig" 2 \
	"$p: kubeconfig $tmp/a\\nb: cannot open: No such file or directory" \
	env ASCEND_KUBE_MODULE="$(dirname "$plugin")/libascend-kube.so" "$plugin" --front-end=dra --kubeconfig "$tmp/a"$'\n'b
# A bad flag beside a good file is still a usage error.
printf 'version: v1\n' >"$tmp/good.yaml"
expect_usage_error $p 2 "unknown flag '--bogus'" "$plugin" --config "$tmp/good.yaml" --bogus

# ---- kubelet-sim -----------------------------------------------------------------
k=kubelet-sim
expect_help $k "$sim" --help
expect_usage_error $k 2 "unknown option '--bogus'" "$sim" --bogus
expect_usage_error $k 2 "unexpected argument 'stray'" "$sim" stray
expect_usage_error $k 2 "option '--dir' needs a value" "$sim" --dir
expect_usage_error $k 2 "--dir is required" "$sim" --timestamps
expect_usage_error $k 2 "option '--timestamps=1' takes no value" "$sim" --dir "$tmp/dp" --timestamps=1
expect_usage_error $k 2 "bad --log-level 'loud' (error, warn, info or debug)" "$sim" --dir "$tmp/dp" --log-level loud
expect_usage_error $k 2 "--dir: the socket path $long/kubelet.sock would be 113 bytes; unix socket paths must stay under 108" \
	"$sim" --dir "$long"
[ ! -e "$long" ] && pass "$k: no directory made for a bad --dir" || fail "$k: no directory made for a bad --dir" "$long exists"

# ---- ascend-doctor ----------------------------------------------------------------
d=ascend-doctor
expect_help $d "$doctor" --help
expect_usage_error $d 3 "no command: node, explain, versions, pods or release" "$doctor"
expect_usage_error $d 3 "unknown command 'doctor' (node, explain, versions, pods or release)" "$doctor" doctor
expect_usage_error $d 3 "unknown flag '--bogus'" "$doctor" node --bogus
expect_usage_error $d 3 "--json takes no value" "$doctor" --json=1 node
expect_usage_error $d 3 "--timeout needs a value" "$doctor" node --timeout
expect_usage_error $d 3 "--timeout: 'soon' is not a duration such as 10s" "$doctor" node --timeout=soon
expect_usage_error $d 3 "--socket-dir: 'dp' is not an absolute path" "$doctor" node --socket-dir dp
expect_usage_error $d 3 "unexpected argument 'extra'" "$doctor" node extra
expect_usage_error $d 3 "explain needs a POD (or --pod FILE)" "$doctor" explain
finish
