#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Rules of the house that a grep can check in src/ and tools/:
# - no C library call that writes or parses without a bound, or keeps hidden
#   state (sprintf, strcpy, strcat, atoi, gets, strtok and friends);
# - the include arrows between the folders of src/ run one way, from the
#   composition root down to base (no folder includes one of its own rank or
#   above); config/ holds settings as given and uses nothing of plugin/
#   (what they imply together is daemon/serving.c's); the two front ends,
#   plugin/ (the device plugin) and dra/ (the DRA driver), are siblings of
#   one rank over node/ (what a node's chips are, how they group and what a
#   container needs to use them), and neither uses the other; fault/ (the fault
#   policy and its readers) uses base/ and npu/ only, so that config/ can
#   hold its settings and ascend-doctor may use it as well; hccl/ (what
#   HCCL must be told: the rank table) is a pure core over base/ and json-c,
#   so that whatever gathers a job's members can use it; the
#   tools use nothing above telemetry/.
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# shellcheck source=tests/scripts/lib.sh
. "$(dirname "$0")/lib.sh"
cd "$root" || exit 1

# ---- banned calls ------------------------------------------------------------------
# Word matches of a call, outside comments: a line whose first non-blank is a
# comment marker is a comment line in this tree's style.
banned='sprintf|vsprintf|strcpy|stpcpy|strcat|strncat|atoi|atol|atoll|atof|gets|strtok|tmpnam|tempnam|mktemp|alloca'
calls=$(grep -rnE "\\b($banned)[[:space:]]*\\(" src tools --include='*.c' --include='*.h' |
	grep -vE '^[^:]+:[0-9]+:[[:space:]]*(/\*|\*|//)')
if [ -z "$calls" ]; then
	pass "no $banned in src/ and tools/"
else
	fail "banned calls in src/ and tools/" "$(sed 's/^/    /' <<<"$calls")"
fi
# The check itself finds what it must: a planted call in a scratch copy.
mkdir -p "$tmp/src"
printf 'int f(char *d, const char *s)\n{\n\treturn sprintf(d, "%%s", s) + atoi(s);\n}\n' >"$tmp/src/planted.c"
planted=$(grep -rnE "\\b($banned)[[:space:]]*\\(" "$tmp/src" | wc -l)
[ "$planted" = 1 ] && pass "the banned-call grep finds a planted sprintf/atoi line" ||
	fail "the banned-call grep" "found $planted lines in a file with one"

# ---- include arrows --------------------------------------------------------------
# rank FOLDER: its place in src/, bottom up.
rank() {
	case $1 in
	base) echo 0 ;;
	loop | grpc | npu | http | hccl) echo 1 ;;
	telemetry | fault | node) echo 2 ;;
	plugin | dra) echo 3 ;;
	config) echo 4 ;;
	kube) echo 5 ;;
	daemon) echo 6 ;;
	main.c) echo 7 ;;
	*) echo -1 ;;
	esac
}
# arrows_up ROOT: "file: folder/header.h" for each include of src/ that goes
# sideways or up.
arrows_up() {
	local file from to r_from r_to
	while IFS=: read -r file to; do
		from=${file#"$1"/src/}
		from=${from%%/*}
		r_from=$(rank "$from")
		r_to=$(rank "$to")
		if ((r_from < 0)); then
			echo "$file: src/$from/ has no rank in test_source_rules.sh"
		elif ((r_to >= 0)) && [ "$to" != "$from" ] && ((r_to >= r_from)); then
			echo "$file: includes $to/"
		fi
	done < <(grep -rEo '^#include "[a-z_]+/' "$1/src" --include='*.c' --include='*.h' |
		sed -E 's/:#include "([a-z_]+)\/$/:\1/')
}
up=$(arrows_up "$root")
[ -z "$up" ] && pass "src/: base <- loop, grpc, npu, http, hccl <- telemetry, fault, node <- plugin, dra <- config <- kube <- daemon <- main.c" ||
	fail "includes against the arrows" "$(sed 's/^/    /' <<<"$up")"
config_plugin=$(grep -rnE '^#include "plugin/' src/config --include='*.c' --include='*.h')
[ -z "$config_plugin" ] && pass "src/config/ includes nothing from plugin/" ||
	fail "config/ includes plugin/" "$(sed 's/^/    /' <<<"$config_plugin")"
fault_up=$(grep -rnE '^#include "[a-z_]+/' src/fault --include='*.c' --include='*.h' |
	grep -vE ':#include "(base|npu|fault)/')
[ -z "$fault_up" ] && pass "src/fault/ includes only base/, npu/ and fault/" ||
	fail "fault/ includes more than base/ and npu/" "$(sed 's/^/    /' <<<"$fault_up")"
hccl_up=$(grep -rnE '^#include "[a-z_]+/' src/hccl --include='*.c' --include='*.h' |
	grep -vE ':#include "(base|hccl)/')
[ -z "$hccl_up" ] && pass "src/hccl/ includes only base/ and hccl/" ||
	fail "hccl/ includes more than base/" "$(sed 's/^/    /' <<<"$hccl_up")"
tools_up=$(grep -rnE '^#include "(plugin|config|daemon)/' tools --include='*.c' --include='*.h')
[ -z "$tools_up" ] && pass "tools/ include nothing from plugin/, config/ or daemon/" ||
	fail "tools/ include the daemon's layers" "$(sed 's/^/    /' <<<"$tools_up")"
# The check finds what it must: plugin/ including daemon/, and the DRA
# front end including its sibling, in a scratch tree.
mkdir -p "$tmp/tree/src/plugin" "$tmp/tree/src/dra"
printf '#include "daemon/daemon.h"\n#include "npu/inventory.h"\n' >"$tmp/tree/src/plugin/x.c"
printf '#include "plugin/allocate.h"\n#include "node/cdi.h"\n' >"$tmp/tree/src/dra/y.c"
planted=$(arrows_up "$tmp/tree" | sort)
[ "$planted" = "$tmp/tree/src/dra/y.c: includes plugin/
$tmp/tree/src/plugin/x.c: includes daemon/" ] &&
	pass "the arrow check finds a planted plugin/ -> daemon/ and dra/ -> plugin/ include" ||
	fail "the arrow check" "found: $planted"

finish
