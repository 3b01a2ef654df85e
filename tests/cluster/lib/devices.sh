# SPDX-License-Identifier: Apache-2.0
# Sourced by tests/cluster/e2e.sh (not run): what a container sees of
# its NPUs: the device nodes, ASCEND_VISIBLE_DEVICES and the driver mount,
# read with kubectl exec and checked against what it was given.
# shellcheck shell=bash disable=SC2154 # bin, build, root, tmp: set by e2e.sh

# The devices a container sees, as "ls -ln /dev" lines of the davinci nodes,
# its ASCEND_VISIBLE_DEVICES, and whether the driver is read-only.
inspect() { # POD [CONTAINER]
	k exec "$1" -c "${2:-$(k get pod "$1" -o jsonpath='{.spec.containers[0].name}')}" -- sh -c '
		echo "env=$ASCEND_VISIBLE_DEVICES"
		for f in /dev/davinci* /dev/devmm_svm /dev/hisi_hdc; do
			[ -e "$f" ] && stat -c "dev %n %F %t:%T" "$f"
		done
		if touch /usr/local/Ascend/driver/lib64/.e2e 2>/dev/null; then echo "driver=rw"; else echo "driver=ro"; fi
		[ -f /usr/local/Ascend/driver/version.info ] && echo "version.info=yes"
		true'
}

# check_devices WHAT POD COUNT [CONTAINER]: the container has exactly COUNT
# /dev/davinciN (character devices with the node's numbers), the shared
# nodes, the driver read-only, and ASCEND_VISIBLE_DEVICES naming exactly those.
check_devices() {
	local what=$1 pod=$2 count=$3 c=${4-} out env ids nodes
	out=$(inspect "$pod" $c 2>&1) || { fail "$what" "kubectl exec: $out"; return 1; }
	env=$(sed -n 's/^env=//p' <<<"$out")
	ids=$(tr ',' '\n' <<<"$env" | sort -n | tr '\n' ' ')
	nodes=$(awk '$1 == "dev" && $2 ~ /^\/dev\/davinci[0-9]+$/ { sub("/dev/davinci", "", $2); print $2 }' <<<"$out" | sort -n | tr '\n' ' ')
	if [ -n "$env" ] && [ "$ids" = "$nodes" ] && [ "$(wc -w <<<"$nodes")" = "$count" ] &&
		! grep '^dev /dev/davinci[0-9]' <<<"$out" | grep -qv "character special file 1:3$" &&
		grep -q '^dev /dev/davinci_manager character special file 1:3$' <<<"$out" &&
		grep -q '^dev /dev/devmm_svm character special file 1:3$' <<<"$out" &&
		grep -q '^dev /dev/hisi_hdc character special file 1:3$' <<<"$out" &&
		grep -qx 'driver=ro' <<<"$out" && grep -qx 'version.info=yes' <<<"$out"; then
		pass "$what: /dev/davinci{${nodes% }} (c 1:3 as on the node), the shared nodes, the driver read-only, ASCEND_VISIBLE_DEVICES=$env"
		return 0
	fi
	fail "$what" "$(sed 's/^/    /' <<<"$out")"
	return 1
}
