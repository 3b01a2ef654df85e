# SPDX-License-Identifier: Apache-2.0
# Sourced by tests/cluster/e2e.sh (not run): the kubelet's side of a
# node: which container holds which chip (its pod-resources API, read on the
# node by ascend-doctor), restarts of a kubelet, and waits on a node's files.
# shellcheck shell=bash disable=SC2154 # bin, build, root, tmp: set by e2e.sh

# Which container holds which chip on NODE, as the kubelet records it: its pod
# resources API, read on the node by ascend-doctor pods. Prints
# "pod/container=npu-a,npu-b" lines, sorted.
node_k() { local k; for k in 1 2 3; do [ "$(cluster_node_name "$k")" != "$1" ] || echo "$k"; done; }
holders() { # NODE: "npu-3 default/pod/container" lines
	cluster_in_node "$(node_k "$1")" "$build/tools/ascend-doctor/ascend-doctor" pods |
		sed -n 's#^OK \(npu-[0-9]*\): default/\(.*\)$#\1 \2#p'
}
# podres_ready NODE: waits until the kubelet's pod resources API answers
# (a restarted kubelet serves it a moment after its node is Ready).
podres_ready() {
	local k dir deadline
	k=$(node_k "$1")
	dir=$(cluster_node_dir "$k")/var/lib/kubelet/pod-resources
	deadline=$(($(now_ms) + 60000))
	until cluster_in_node "$k" "$build/tools/ascend-doctor/ascend-doctor" pods --timeout 2s >/dev/null 2>&1; do
		(($(now_ms) < deadline)) || return 1
		# Woken when the kubelet makes its socket; the timeout bounds a socket
		# that is there but not served yet.
		inotifywait -qq -t 1 -e create "$dir" >/dev/null 2>&1 || true
	done
}
held() { # NODE
	podres_ready "$1" || { echo "pod-resources-unreachable"; return; }
	holders "$1" | awk '{ a[$2] = a[$2] (a[$2] ? "," : "") $1 } END { for (c in a) print c "=" a[c] }' | sort
}
# wait_held NODE EXPECTED: waits until held NODE prints EXPECTED (a restarted
# kubelet lists a pod's devices once it has taken the pod in again); prints
# what it saw last.
wait_held() {
	local k now deadline
	k=$(node_k "$1")
	deadline=$(($(now_ms) + 60000))
	while now=$(held "$1") && [ "$now" != "$2" ] && (($(now_ms) < deadline)); do
		# Woken by the kubelet's next log line (it logs each pod it syncs).
		inotifywait -qq -t 1 -e modify "$CLUSTER_DIR/logs/kubelet-n$k.log" >/dev/null 2>&1 || true
	done
	echo "$now"
}
no_double() { # NODE: no chip held by two containers
	[ -z "$(holders "$1" | awk '{ print $1 }' | sort | uniq -d)" ]
}
registered_ms() { # NODE T0_MS: waits for allocatable 8 and prints the time since T0
	wait_alloc "$1" 8 && echo $(($(now_ms) - $2))
}
# restart_kubelet K [BETWEEN]: stops node K's kubelet, runs BETWEEN, starts it
restart_kubelet() {
	cluster_kubelet_stop "$1"
	[ -z "${2-}" ] || eval "$2"
	cluster_kubelet_start "$1" "$bin"
}
# wait_file FILE: FILE exists within 60 s (woken by changes of its directory).
wait_file() {
	local deadline
	deadline=$(($(now_ms) + 60000))
	until [ -e "$1" ]; do
		(($(now_ms) < deadline)) || return 1
		inotifywait -qq -t 1 -e create,moved_to "$(dirname "$1")" >/dev/null 2>&1 || true
	done
}
