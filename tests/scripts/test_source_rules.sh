#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Rules of the house that a grep can check in src/ and tools/:
# - no C library call that writes or parses without a bound, or keeps hidden
#   state (sprintf, strcpy, strcat, atoi, gets, strtok and friends).
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

finish
