#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The device plugin carries no libcurl: the API-server side is a module
# (libascend-kube.so, src/kube/module.h) that only the DRA front end loads.
# Neither the plugin's NEEDED entries nor the mappings of a running plugin in
# device-plugin mode may name libcurl or the TLS libraries it brings; the
# module beside the plugin in the build tree is what does.
set -uo pipefail
plugin=$1
module=$(dirname "$plugin")/libascend-kube.so
tmp=$(mktemp -d)
holder=
cleanup() {
	[ -n "$holder" ] && kill "$holder" 2>/dev/null && wait "$holder" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

# What a process that loaded libcurl maps (Debian's OpenSSL flavour).
curlish='libcurl|libnghttp2|libssh2|libpsl|librtmp|libssl\.|libcrypto\.|libgssapi|libldap'
needed() { LC_ALL=C readelf -d "$1" | sed -n 's/.*(NEEDED).*\[\(.*\)\]$/\1/p'; }

libs=$(needed "$plugin")
if grep -qE "$curlish" <<<"$libs"; then
	fail "the plugin needs no libcurl" "$(tr '\n' ' ' <<<"$libs")"
else
	pass "the plugin needs no libcurl ($(wc -l <<<"$libs") libraries)"
fi
if needed "$module" | grep -q '^libcurl\.so'; then
	pass "the module needs libcurl"
else
	fail "the module needs libcurl" "$(needed "$module" | tr '\n' ' ')"
fi
exported=$(LC_ALL=C nm -D --defined-only "$module" | awk '{print $3}')
[ "$exported" = ascend_kube_module_v1 ] && pass "the module exports ascend_kube_module_v1 only" ||
	fail "the module exports ascend_kube_module_v1 only" "$(tr '\n' ' ' <<<"$exported")"

# run_plugin [env...]: starts a plugin in device-plugin mode (no kubelet:
# it keeps retrying its registration) and waits for its first failed
# registration, by which time it has set up everything it serves with.
run_plugin() {
	local line
	rm -f "$tmp/fifo" "$tmp/err"
	mkfifo "$tmp/fifo"
	env "$@" "$plugin" --socket-dir "$tmp/kubelet" --dev-dir "$tmp/dev" --backend devfs \
		--health-interval 1s 2>"$tmp/fifo" &
	holder=$!
	exec 3<"$tmp/fifo"
	while IFS= read -r -t 30 line <&3; do
		echo "$line" >>"$tmp/err"
		case $line in *"registration with the kubelet failed"*) return 0 ;; esac
	done
	return 1
}
stop_plugin() {
	kill -TERM "$holder"
	wait "$holder"
	exec 3<&-
	holder=
}
mkdir -p "$tmp/kubelet" "$tmp/dev"

if run_plugin; then
	mapped=$(grep -oE "/[^ ]*($curlish)[^ ]*" "/proc/$holder/maps" | sort -u)
	[ -z "$mapped" ] && pass "a running device plugin maps no libcurl" ||
		fail "a running device plugin maps no libcurl" "$mapped"
	stop_plugin
else
	fail "a running device plugin maps no libcurl" "it did not start:" "$(cat "$tmp/err")"
fi

# The check finds what it must: the same plugin with the module preloaded.
# (Not under a sanitizer: its runtime must come first in the process.)
if needed "$plugin" | grep -q 'lib[at]san'; then
	not_this_build "the maps check finds a preloaded libcurl" "a sanitizer build"
elif run_plugin LD_PRELOAD="$module"; then
	grep -qE "/[^ ]*libcurl" "/proc/$holder/maps" && pass "the maps check finds a preloaded libcurl" ||
		fail "the maps check finds a preloaded libcurl" "not in /proc/$holder/maps"
	stop_plugin
else
	fail "the maps check finds a preloaded libcurl" "the plugin did not start:" "$(cat "$tmp/err")"
fi

finish
