# SPDX-License-Identifier: Apache-2.0
# Sourced by scripts/bench.sh and scripts/bench-fleet.sh (not run): what both
# need to start a control plane of their own on this machine's network.
# shellcheck shell=bash

# free_port: a TCP port of 127.0.0.1 nothing listens on now (a race with
# another process taking it is possible, and shows as the server's bind error).
free_port() {
	local p
	for _ in $(seq 100); do
		p=$((20000 + RANDOM % 20000))
		(exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null || { echo "$p"; return 0; }
	done
	return 1
}
