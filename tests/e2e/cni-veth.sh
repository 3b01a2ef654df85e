#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# A CNI plugin for the e2e node (tests/e2e/node.sh installs it as the CRI
# plugin's only network, type "e2e-veth"). containerd's CRI plugin needs every
# pod that does not use the host network to get an interface with an address
# from CNI. The usual plugins (bridge, ptp) change the host's network, which a
# shared test machine must not see; this one creates a veth pair with both
# ends inside the pod's network namespace (CNI_IFNAME and "<CNI_IFNAME>-peer"),
# gives CNI_IFNAME an address in 10.88.0.0/16 derived from the container id,
# and touches nothing outside the namespace. DEL and CHECK have nothing to do:
# the interfaces go away with the namespace. Spec:
# https://github.com/containernetworking/cni/blob/main/SPEC.md
set -euo pipefail

conf=$(cat)
version=$(jq -r '.cniVersion // "1.0.0"' <<<"$conf")

error() { # CODE MESSAGE: the error result the spec asks for, on stdout
	jq -cn --arg v "$version" --argjson c "$1" --arg m "$2" '{cniVersion: $v, code: $c, msg: $m}'
	exit 1
}

case "${CNI_COMMAND:-}" in
VERSION)
	echo '{"cniVersion":"1.0.0","supportedVersions":["0.3.0","0.3.1","0.4.0","1.0.0"]}'
	;;
ADD)
	netns=${CNI_NETNS:-}
	ifname=${CNI_IFNAME:-}
	{ [ -n "$netns" ] && [ -n "$ifname" ]; } || error 4 "CNI_NETNS and CNI_IFNAME are required"
	# Addresses need not be unique (nothing routes between pods here), only
	# stable for one container id.
	sum=$(printf '%s' "${CNI_CONTAINERID:-}" | cksum)
	host=$((${sum%% *} % 64000 + 2))
	address=10.88.$((host / 256)).$((host % 256))
	in_ns() { nsenter --net="$netns" "$@"; }
	out=$(in_ns ip link add "$ifname" type veth peer name "$ifname-peer" 2>&1 &&
		in_ns ip addr add "$address/16" dev "$ifname" 2>&1 &&
		in_ns ip link set "$ifname-peer" up 2>&1 &&
		in_ns ip link set "$ifname" up 2>&1) || error 11 "setting up $ifname in $netns: $out"
	mac=$(in_ns ip -j link show "$ifname" | jq -r '.[0].address')
	jq -cn --arg v "$version" --arg i "$ifname" --arg m "$mac" --arg n "$netns" --arg a "$address/16" '
		{cniVersion: $v, interfaces: [{name: $i, mac: $m, sandbox: $n}],
		 ips: [{address: $a, interface: 0} + (if $v | startswith("0.") then {version: "4"} else {} end)],
		 routes: [], dns: {}}'
	;;
DEL | CHECK) ;;
*) error 4 "unknown CNI_COMMAND '${CNI_COMMAND:-}'" ;;
esac
