#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# What the DRA driver costs the API server at fleet scale (make bench-fleet,
# docs/performance.md "Fleet"): one etcd and kube-apiserver from the cluster
# cache (tests/cluster/cluster.sh's functions, as scripts/bench.sh starts
# them) with an audit log of the drivers' requests, N Node objects, and N of
# our daemons in DRA mode, each with its own simulated 16-chip node, its own
# kubelet-sim (the kubelet's registration, which the daemon answers with a
# recheck of its slices) and its own client certificate (CN fleet:<node>,
# group fleet-drivers), so that the API server's per-client figures are real;
# then the same with upstream's DRA test driver (kubelet-plugin mode, the
# ResourceSlice controller of k8s.io/dynamic-resource-allocation) at the same
# N and devices per node. Phases: start, steady state, a roll of all N, a
# fault storm (ours only: the peer has no device health), and a roll under
# API Priority and Fairness pressure. Every figure comes from the API
# server's audit log (requests per identity), its /metrics (APF rejections)
# and etcd's /metrics (bytes received), and a watch of the slices (times to
# converge). A MISS is reported, never asserted.
#
# Usage: scripts/bench-fleet.sh BUILD_DIR [--nodes N] [--chips C] [--no-peer]
#                               [--steady-s S] [--pressure-s S]
set -euo pipefail

die() {
	printf 'bench-fleet: %s\n' "$*" >&2
	exit 1
}
note() { printf 'bench-fleet: %s\n' "$*" >&2; }

[[ $# -ge 1 ]] || die "usage: $0 BUILD_DIR [--nodes N] [--chips C] [--no-peer] [--steady-s S] [--pressure-s S]"
build=$(cd "$1" 2>/dev/null && pwd) || die "no build directory $1 (run: make build)"
shift
nodes=10 chips=16 peer_on=1 steady_s=60 pressure_s=20
while [[ $# -gt 0 ]]; do
	case $1 in
	--nodes) nodes=${2:-} && shift ;;
	--chips) chips=${2:-} && shift ;;
	--no-peer) peer_on=0 ;;
	--steady-s) steady_s=${2:-} && shift ;;
	--pressure-s) pressure_s=${2:-} && shift ;;
	*) printf 'bench-fleet: unknown option %s\n' "$1" >&2 && exit 2 ;;
	esac
	shift
done
for v in nodes chips steady_s pressure_s; do
	[[ ${!v} =~ ^[1-9][0-9]{0,3}$ ]] || { printf 'bench-fleet: --%s wants a number from 1 to 9999\n' "${v%_s}" >&2 && exit 2; }
done
((chips <= 64)) || { echo 'bench-fleet: --chips wants at most 64' >&2 && exit 2; }

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source=bench-lib.sh
. "$root/scripts/bench-lib.sh"
plugin_bin=$build/src/ascend-device-plugin
sim_bin=$build/tools/kubelet-sim/kubelet-sim
dcmi_lib=$build/tests/fake-dcmi/libdcmi.so
module=$build/src/libascend-kube.so
for f in "$plugin_bin" "$sim_bin" "$dcmi_lib" "$module"; do
	[[ -f $f ]] || die "$f is missing (run: make build)"
done
bins=$("$root/scripts/cluster-bins.sh" --dir 2>/dev/null) || die "the cluster's binaries are not built (make cluster-bins)"
for f in kube-apiserver etcd kubectl; do
	[[ -x $bins/$f ]] || die "$bins/$f is missing (make cluster-bins)"
done
peer_bin=$bins/dra-test-driver
if ((peer_on)) && [[ ! -x $peer_bin ]]; then
	note "no peer rows: upstream's DRA test driver is not built (make cluster-bins)"
	peer_on=0
fi
command -v jq >/dev/null || die "jq is missing (apt-get install jq)"
# Each of our daemons holds 3 inotify instances (device nodes, the DCMI
# simulator's state file, the kubelet's directory) and each kubelet-sim one,
# all of one user here: the default limit of 128 stops the fleet at about
# 30 nodes with "cannot create an inotify instance".
# As root the bench raises the limit for its run and puts it back at the end.
inotify_need=$((nodes * 4 + 32))
inotify_max=$(cat /proc/sys/fs/inotify/max_user_instances)
inotify_restore=''
if ((inotify_max < inotify_need)); then
	[[ $(id -u) == 0 ]] && echo "$inotify_need" >/proc/sys/fs/inotify/max_user_instances ||
		die "$nodes nodes need about $inotify_need inotify instances, fs.inotify.max_user_instances is $inotify_max (sysctl -w fs.inotify.max_user_instances=$inotify_need)"
	inotify_restore=$inotify_max
	note "fs.inotify.max_user_instances raised from $inotify_max to $inotify_need for this run"
fi

work=''
# Every process the bench starts, by pid, to stop them all on exit.
declare -a fleet_pids=()
cleanup() {
	local status=$?
	trap - EXIT INT TERM
	[[ -z ${watch_pid:-} ]] || kill "$watch_pid" 2>/dev/null || true
	((${#fleet_pids[@]} == 0)) || _e2e_kill_wait KILL 5000 "${fleet_pids[@]}" || true
	if [[ -n $work ]]; then
		_cl_stop kube-apiserver || true
		_cl_stop etcd || true
		if ((status != 0)) && [[ -f $CLUSTER_DIR/logs/kube-apiserver.log ]]; then
			tail -n 5 "$CLUSTER_DIR/logs/kube-apiserver.log" >&2
		fi
		rm -rf -- "$work"
	fi
	[[ -z $inotify_restore ]] || echo "$inotify_restore" >/proc/sys/fs/inotify/max_user_instances
	exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

work=$(mktemp -d /tmp/ascend-fleet-XXXXXX)
# Root-owned and not group/world-writable: the plugin's ownership check of
# each node's libdcmi.so passes.
chmod 755 "$work"
api_port=$(free_port) && etcd_port=$(free_port) && etcd_peer=$(free_port) || die "no free ports"
export CLUSTER_HOST_NET=1 CLUSTER_DIR=$work/cp CLUSTER_PORT=$api_port
mkdir -p "$CLUSTER_DIR/pids" "$CLUSTER_DIR/logs"
# shellcheck source=../tests/cluster/cluster.sh
. "$root/tests/cluster/cluster.sh"

# Only the drivers' requests are audited, at Metadata level: who, which
# verb on which resource, and the answer's code (a 429 of APF included).
cat >"$work/audit-policy.yaml" <<'EOF'
apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived]
rules:
- level: Metadata
  userGroups: [fleet-drivers]
- level: None
EOF
audit=$work/audit.log
export CLUSTER_APISERVER_EXTRA="--audit-policy-file=$work/audit-policy.yaml --audit-log-path=$audit --audit-log-maxbackup=0"
_cl_pki >/dev/null || die "cannot make the cluster's certificates"
cluster_etcd_start "$bins" "$etcd_port" "$etcd_peer" >>"$CLUSTER_DIR/logs/control-plane.log" 2>&1 ||
	die "etcd did not start"
cluster_apiserver_start "$bins" "$api_port" "$etcd_port" >>"$CLUSTER_DIR/logs/control-plane.log" 2>&1 ||
	die "kube-apiserver did not start: $(tail -n 3 "$CLUSTER_DIR/logs/kube-apiserver.log")"
kc=("$bins/kubectl" --kubeconfig "$(cluster_kubeconfig)")

node_name() { printf 'fleet-%04d' "$1"; }

# The drivers' rights, as their DaemonSets' RBAC gives them (deploy/), to
# the group of every node's certificate.
"${kc[@]}" apply -f - >/dev/null <<'EOF' || die "cannot make the drivers' RBAC"
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: fleet-driver}
rules:
- apiGroups: [resource.k8s.io]
  resources: [resourceslices]
  verbs: [get, list, watch, create, update, patch, delete, deletecollection]
- apiGroups: [resource.k8s.io]
  resources: [resourceclaims, resourceclaims/status, deviceclasses]
  verbs: [get, list, watch, patch, update]
- apiGroups: [""]
  resources: [nodes]
  verbs: [get, list, watch]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: fleet-driver}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: fleet-driver}
subjects:
- {apiGroup: rbac.authorization.k8s.io, kind: Group, name: fleet-drivers}
EOF

t0=$SECONDS
note "making $nodes Nodes, certificates and simulated nodes of $chips chips"
for ((i = 1; i <= nodes; i++)); do
	printf -- '---\napiVersion: v1\nkind: Node\nmetadata:\n  name: %s\n' "$(node_name "$i")"
done | "${kc[@]}" apply -f - >/dev/null || die "cannot make the Nodes"
# state FILE FAULTED...: the DCMI simulator's state, the chips named faulty
# (health 2 with a chip error code), written beside and renamed into place.
state() {
	local f=$1 c s
	shift
	s="driver 24.1.rc1"$'\n'
	for ((c = 0; c < chips; c++)); do
		if [[ " $* " == *" $c "* ]]; then
			s+="chip phy=$c name=910B3 aicore=20 hbm_mb=65536 health=2 errors=80E01801"$'\n'
		else
			s+="chip phy=$c name=910B3 aicore=20 hbm_mb=65536 health=0"$'\n'
		fi
	done
	printf '%s' "$s" >"$f.tmp" && mv -f "$f.tmp" "$f"
}
make_node() { # I
	local i=$1 name d drv=/usr/local/Ascend/driver c
	name=$(node_name "$i")
	d=$work/nodes/$name
	_cl_cert "$name" "fleet:$name" fleet-drivers "" || return
	_cl_kubeconfig "$CLUSTER_DIR/$name.kubeconfig" "https://127.0.0.1:$api_port" "$name" || return
	install -d -m 0755 "$d" "$d/dev" "$d$drv" "$d$drv/lib64" "$d$drv/lib64/driver" "$d/usr/local/bin" "$d/etc" \
		"$d/sockets" "$d/kubelet-root/plugins_registry" "$d/peer/plugins/test-driver.cdi.k8s.io" "$d/peer/plugins_registry" || return
	for ((c = 0; c < chips; c++)); do : >"$d/dev/davinci$c"; done
	: >"$d/dev/davinci_manager" && : >"$d/dev/devmm_svm" && : >"$d/dev/hisi_hdc" && : >"$d$drv/version.info" &&
		: >"$d$drv/lib64/libascend_hal.so" && : >"$d/usr/local/bin/npu-smi" && : >"$d/etc/ascend_install.info" &&
		install -m 755 "$dcmi_lib" "$d$drv/lib64/driver/libdcmi.so" && state "$d/dcmi-state"
}
for ((i = 1; i <= nodes; i++)); do
	make_node "$i" || die "cannot make node $i"
done
note "made them in $((SECONDS - t0)) s"

# kubelet-sim ends at the end of its stdin: a FIFO opened for reading and
# writing never ends.
hold=$work/hold
mkfifo "$hold"
declare -A sim_pid=() drv_pid=()
spawn() { # LOG CMD...: starts CMD in its own session; its pid in $spawned
	local log=$1
	shift
	setsid "$@" <>"$hold" >>"$log" 2>&1 &
	spawned=$!
	disown "$spawned"
	fleet_pids+=("$spawned")
}
start_driver() { # WHO I
	local who=$1 i=$2 name d
	name=$(node_name "$i")
	d=$work/nodes/$name
	if [[ $who == ours ]]; then
		spawn "$d/ours.log" env ASCEND_FAKE_DCMI_STATE="$d/dcmi-state" ASCEND_FAKE_DCMI_DEV_DIR="$d/dev" \
			ASCEND_KUBE_MODULE="$module" "$plugin_bin" --socket-dir "$d/sockets" --dev-dir "$d/dev" \
			--host-root "$d" --driver-path /usr/local/Ascend/driver --metrics-addr= --nfd-features-file= \
			--pod-resources-socket= --state-dir "$d/state" --front-end dra --kubelet-dir "$d/kubelet-root" \
			--node-name "$name" --cdi-dir "$d/cdi" --kubeconfig "$CLUSTER_DIR/$name.kubeconfig"
	else
		spawn "$d/peer.log" "$peer_bin" --kubeconfig "$CLUSTER_DIR/$name.kubeconfig" kubelet-plugin \
			--node-name "$name" --num-devices "$chips" --datadir "$d/peer/plugins" \
			--plugin-registration-path "$d/peer/plugins_registry" --cdi-dir "$d/cdi"
	fi
	drv_pid[$i]=$spawned
}
start_sim() { # WHO I
	local d
	d=$work/nodes/$(node_name "$2")
	if [[ $1 == ours ]]; then
		spawn "$d/sim-$1.log" "$sim_bin" --dir "$d/sockets" --dra-registry "$d/kubelet-root/plugins_registry"
	else
		spawn "$d/sim-$1.log" "$sim_bin" --dir "$d/peer/sockets" --dra-registry "$d/peer/plugins_registry"
	fi
	sim_pid[$2]=$spawned
}
stop_drivers() { # SIGTERM to every driver at once; waits for them all
	local pids=("${drv_pid[@]}")
	_e2e_kill_wait TERM 20000 "${pids[@]}" || _e2e_kill_wait KILL 5000 "${pids[@]}" || true
}

# The watch of the slices of a driver: one line per event, stamped with
# the time it arrived: "US TYPE NODE DEVICES TAINTED" (TAINTED: the names
# of the devices with a taint, comma-separated, or -).
watch_pid=''
watch_start() { # DRIVER FILE
	: >"$2"
	# kubectl ends its watch when the server drops it (at N=300 one did,
	# while the API server was busy with the start): watched again, it
	# lists every slice anew as ADDED, which is all converged needs.
	(
		while :; do "${kc[@]}" get resourceslices --watch --output-watch-events -o json --field-selector "spec.driver=$1"; done |
			jq -c --unbuffered -r '[.type, .object.spec.nodeName, (.object.spec.devices // [] | length),
				([.object.spec.devices[]? | select((.taints // []) | length > 0) | .name] | sort | join(",")
				 | if . == "" then "-" else . end)] | join(" ")' |
			while IFS= read -r line; do printf '%s %s\n' "${EPOCHREALTIME/[.,]/}" "$line"; done >"$2"
	) &
	watch_pid=$!
}
watch_stop() {
	[[ -n $watch_pid ]] || return 0
	local kids
	kids=$(_e2e_descendants "$watch_pid")
	kill "$watch_pid" 2>/dev/null || true
	# shellcheck disable=SC2086
	kill $kids 2>/dev/null || true
	wait "$watch_pid" 2>/dev/null || true
	watch_pid=''
}
# converged WATCH FROM_US WANT: the ms from FROM_US until every node's slice
# was as WANT says ("NODE DEVICES TAINTED" lines) for the last time, 0 when it
# was all along, or "never (K wrong)".
converged() {
	awk -v from="$2" -v n="$nodes" 'FNR == NR { want[$1] = $2 " " $3; next }
		function judge(node,   was) {
			was = right[node]
			right[node] = (node in state) && state[node] == want[node]
			ok += right[node] - was
		}
		{
			if ($2 == "DELETED") delete state[$3]; else state[$3] = $4 " " $5
			judge($3)
			if ($1 >= from && ok == n && last_ok != n) at = $1
			if ($1 < from && ok == n) at = from
			last_ok = ok
		}
		END {
			if (ok != n) printf "never (%d wrong)\n", n - ok
			else printf "%.1f\n", (at - from) / 1000
		}' "$1" "$watch_file"
}
want_file() { # FILE DEVICES, then "I TAINTED" lines on stdin
	local i t
	declare -A taint=()
	while read -r i t; do taint[$i]=$t; done
	for ((i = 1; i <= nodes; i++)); do printf '%s %s %s\n' "$(node_name "$i")" "$2" "${taint[$i]:--}"; done >"$1"
}
# wait_converged WANT FROM_US LIMIT_S: waits (at most LIMIT_S) for it.
wait_converged() {
	local deadline=$((SECONDS + $3)) r
	while :; do
		r=$(converged "$1" "$2")
		[[ $r != never* ]] && { echo "$r"; return 0; }
		((SECONDS < deadline)) || { echo "$r"; return 0; }
		read -r -t 0.25 <>"$hold" || true
	done
}

now_us() { echo "${EPOCHREALTIME/[.,]/}"; }
mark() { stat -c %s "$audit"; }
etcd_bytes() {
	curl -s --max-time 5 "http://127.0.0.1:$etcd_port/metrics" |
		awk '/^etcd_network_client_grpc_received_bytes_total/ { s += $2 } END { printf "%d\n", s }'
}
apf_rejected() {
	"${kc[@]}" get --raw /metrics | awk '/^apiserver_flowcontrol_rejected_requests_total\{.*priority_level="fleet-squeezed"/ { s += $2 } END { printf "%d\n", s }'
}
# audit FROM TO FROM_US AGENT: the drivers' requests in the audit log between
# two marks (byte offsets), from the client whose user agent starts with
# AGENT: a JSON object of per-node figures. A dry run (our driver's probe of
# what the API server keeps, at its start: docs/dra.md) is a request, but
# not a write: it stores nothing.
audit() {
	tail -c +$(($1 + 1)) "$audit" | head -c $(($2 - $1)) |
		jq -s -c --argjson n "$nodes" --argjson from "$3" --arg agent "$4" '
		def us: (.[0:19] + "Z" | fromdate) * 1000000 + (.[20:26] | tonumber);
		def dry: (.requestURI // "") | test("[?&]dryRun=");
		[ .[] | select((.userAgent // "") | startswith($agent))
		      | select((.stage == "ResponseComplete" and .verb != "watch") or (.stage == "ResponseStarted" and .verb == "watch")) ] as $e
		| ($e | map(select((.verb | IN("create", "update", "patch", "delete", "deletecollection")) and (dry | not)))) as $w
		| ($w | group_by(.user.username) | map(map(.requestReceivedTimestamp | us) | min - $from) | sort) as $first
		| { requests: ($e | length / $n), writes: ($w | length / $n),
		    max_requests: ($e | group_by(.user.username) | map(length) | max // 0),
		    max_writes: ($w | group_by(.user.username) | map(length) | max // 0),
		    watches: ($e | map(select(.verb == "watch")) | length / $n),
		    r429: ($e | map(select(.responseStatus.code == 429)) | length / $n),
		    dry_runs: ($e | map(select(dry)) | length / $n),
		    verbs: ($e | group_by(.verb + " " + .objectRef.resource + (if dry then " (dry run)" else "" end)) | map("\(.[0].verb) \(.[0].objectRef.resource)\(if .[0] | dry then " (dry run)" else "" end) \(length / $n * 100 | round / 100)") | join(", ")),
		    first_write_ms: (if ($first | length) > 0 then [($first[0] / 1000 | round), ($first[($first | length) / 2 | floor] / 1000 | round), ($first[-1] / 1000 | round)] else null end),
		    busiest_second: ($e | group_by(.user.username + (.requestReceivedTimestamp | .[0:19])) | map(length) | max // 0) }'
}
# rss_cpu: the drivers' mean VmRSS (MiB) and their user+system CPU (s) so far.
rss_cpu() {
	local pid kb=0 ticks=0 n=0 rest
	for pid in "${drv_pid[@]}"; do
		[[ -r /proc/$pid/status ]] || continue
		kb=$((kb + $(awk '/^VmRSS:/ { print $2 }' "/proc/$pid/status")))
		read -r rest <"/proc/$pid/stat"
		rest=${rest##*) }
		# shellcheck disable=SC2086
		set -- $rest
		ticks=$((ticks + ${12} + ${13}))
		n=$((n + 1))
	done
	((n)) || { echo "- -"; return; }
	awk -v kb="$kb" -v t="$ticks" -v n="$n" -v hz="$(getconf CLK_TCK)" 'BEGIN { printf "%.2f %.3f\n", kb / n / 1024, t / hz / n }'
}

rows=()
row() { rows+=("$(printf '%-58s %-10s %-10s %-10s %s' "$@")"); }
fmt() { jq -r "$1" <<<"$2"; }
# report WHO PHASE JSON BYTES: the rows of one phase's audit figures.
report() {
	local who=$1 phase=$2 j=$3 bytes=$4
	row "$who $phase: requests per node (max)" "$(fmt '"\(.requests) (\(.max_requests))"' "$j")" "" "" "$(fmt .verbs "$j")"
	row "$who $phase: writes per node (max)" "$(fmt '"\(.writes) (\(.max_writes))"' "$j")"
	row "$who $phase: dry runs per node (not writes)" "$(fmt .dry_runs "$j")"
	row "$who $phase: watches per node" "$(fmt .watches "$j")"
	row "$who $phase: etcd bytes received per node" "$((bytes / nodes))"
}

# run WHO AGENT DRIVER DEVICES: every phase for one driver.
run() {
	local who=$1 agent=$2 driver=$3 devices=$4 m0 m1 b0 b1 t j conv i k rc rel
	watch_file=$work/watch-$who
	watch_start "$driver" "$watch_file"
	want_file "$work/want-clean" "$devices" </dev/null
	read -r -t 2 <>"$hold" || true

	note "$who: starting $nodes drivers at once"
	for ((i = 1; i <= nodes; i++)); do start_sim "$who" "$i"; done
	m0=$(mark) b0=$(etcd_bytes) t=$(now_us)
	for ((i = 1; i <= nodes; i++)); do start_driver "$who" "$i"; done
	conv=$(wait_converged "$work/want-clean" "$t" 300)
	# What follows the publication: our kubelet's registration recheck.
	read -r -t 45 <>"$hold" || true
	m1=$(mark) b1=$(etcd_bytes)
	j=$(audit "$m0" "$m1" "$t" "$agent")
	row "$who start: all slices stored (ms)" "$conv" "<= 60000" "$( [[ $conv != never* ]] && awk -v c="$conv" 'BEGIN { print (c <= 60000 ? "PASS" : "MISS") }' || echo MISS)"
	row "$who start: first writes after the spawn, min/p50/max (ms)" "$(fmt '.first_write_ms | if . then join("/") else "none" end' "$j")"
	report "$who" "start (45 s)" "$j" "$((b1 - b0))"
	row "$who start: requests per node, target <= 3 bar the watch" "$(fmt '.requests - .watches' "$j")" "<= 3" "$(fmt 'if .requests - .watches <= 3 then "PASS" else "MISS" end' "$j")"
	read -r mib cpu <<<"$(rss_cpu)"
	row "$who RSS per driver (MiB)" "$mib"
	row "$who CPU per driver through the start (s)" "$cpu"

	note "$who: steady state for $steady_s s"
	m0=$(mark) b0=$(etcd_bytes) t=$(now_us)
	read -r -t "$steady_s" <>"$hold" || true
	m1=$(mark) b1=$(etcd_bytes)
	j=$(audit "$m0" "$m1" "$t" "$agent")
	report "$who" "steady ($steady_s s)" "$j" "$((b1 - b0))"
	row "$who steady: writes per node per hour" "$(fmt ".writes * 3600 / $steady_s" "$j")" "0" "$(fmt 'if .writes == 0 then "PASS" else "MISS" end' "$j")"
	read -r mib cpu2 <<<"$(rss_cpu)"
	row "$who CPU per driver in steady state (s per hour)" "$(awk -v a="$cpu" -v b="$cpu2" -v s="$steady_s" 'BEGIN { printf "%.2f", (b - a) * 3600 / s }')"

	note "$who: a roll of all $nodes"
	m0=$(mark) b0=$(etcd_bytes) t=$(now_us)
	stop_drivers
	rel=$(now_us)
	for ((i = 1; i <= nodes; i++)); do start_driver "$who" "$i"; done
	# The slices stayed; the roll is over when every driver has read them.
	read -r -t 45 <>"$hold" || true
	m1=$(mark) b1=$(etcd_bytes)
	j=$(audit "$m0" "$m1" "$rel" "$agent")
	row "$who roll: slices right at the end" "$(converged "$work/want-clean" "$t")"
	row "$who roll: stop of all (ms)" "$(((rel - t) / 1000))"
	report "$who" "roll (45 s)" "$j" "$((b1 - b0))"

	if [[ $who == ours ]]; then
		note "$who: fault storm, 30 % of the chips within 1 s, recovery 10 s later"
		local total=$((nodes * chips)) faults=() f plan
		declare -A faulted=() by_node=()
		k=$((total * 30 / 100))
		while ((${#faulted[@]} < k)); do
			f=$(((RANDOM * 32768 + RANDOM) % total))
			faulted[$f]=1
		done
		for f in "${!faulted[@]}"; do faults+=("$((RANDOM % 1000)) $((f / chips + 1)) $((f % chips))"); done
		plan=$(printf '%s\n' "${faults[@]}" | sort -n)
		for f in "${!faulted[@]}"; do by_node[$((f / chips + 1))]+=" $((f % chips))"; done
		for i in "${!by_node[@]}"; do
			printf '%s %s\n' "$i" "$(for c in ${by_node[$i]}; do echo "npu-$c"; done | sort | paste -sd,)"
		done | want_file "$work/want-faulty" "$devices"
		# Each node's faults from a writer of its own, all at once: one
		# loop over every fault in turn took 4.3 s to write the faults of
		# 100 nodes, not the 1 s the storm means.
		declare -A node_plan=()
		local ms node chip writers=()
		while read -r ms node chip; do node_plan[$node]+="$ms $chip"$'\n'; done <<<"$plan"
		m0=$(mark) b0=$(etcd_bytes) t=$(now_us)
		for node in "${!node_plan[@]}"; do
			(
				now_faulty=''
				while read -r ms chip; do
					while (($(now_us) < t + ms * 1000)); do read -r -t 0.005 <>"$hold" || true; done
					now_faulty+=" $chip"
					# shellcheck disable=SC2086 # a list of chips
					state "$work/nodes/$(node_name "$node")/dcmi-state" $now_faulty
				done <<<"${node_plan[$node]%$'\n'}"
			) &
			writers+=($!)
		done
		wait "${writers[@]}"
		local spent=$((($(now_us) - t) / 1000))
		conv=$(wait_converged "$work/want-faulty" "$t" 60)
		local fault_end
		fault_end=$(now_us)
		while (($(now_us) < t + 10000000)); do read -r -t 0.05 <>"$hold" || true; done
		m1=$(mark)
		j=$(audit "$m0" "$m1" "$t" "$agent")
		row "$who storm: $k faults written in (ms)" "$spent"
		row "$who storm: all faults on the slices (ms)" "$conv"
		report "$who" "storm faults" "$j" "$(($(etcd_bytes) - b0))"
		# The faults of a node come at random within 1 s: a 250 ms
		# coalescing window (KUBE_PUBLISH_COALESCE_MS) makes at most
		# 4 writes of them, one per window.
		row "$who storm: faults per node, mean (max)" "$(awk -v k="$k" -v n="$nodes" 'BEGIN { printf "%.1f", k / n }') ($(for i in "${!by_node[@]}"; do wc -w <<<"${by_node[$i]}"; done | sort -n | tail -n 1))"
		row "$who storm: writes per node, max (1 per 250 ms window)" "$(fmt .max_writes "$j")" "<= 4" "$(fmt 'if .max_writes <= 4 then "PASS" else "MISS" end' "$j")"
		m0=$(mark) b0=$(etcd_bytes) t=$(now_us)
		for ((i = 1; i <= nodes; i++)); do state "$work/nodes/$(node_name "$i")/dcmi-state"; done
		conv=$(wait_converged "$work/want-clean" "$t" 60)
		read -r -t 3 <>"$hold" || true
		m1=$(mark)
		j=$(audit "$m0" "$m1" "$t" "$agent")
		row "$who storm: all recovered on the slices (ms; 5 s recovery hold)" "$conv"
		report "$who" "storm recovery" "$j" "$(($(etcd_bytes) - b0))"
		: "$fault_end"
	fi

	note "$who: a roll under API Priority and Fairness pressure for $pressure_s s"
	"${kc[@]}" apply -f - >/dev/null <<'EOF' || die "cannot make the FlowSchema"
apiVersion: flowcontrol.apiserver.k8s.io/v1
kind: PriorityLevelConfiguration
metadata: {name: fleet-squeezed}
spec:
  type: Limited
  limited:
    nominalConcurrencyShares: 1
    lendablePercent: 0
    limitResponse: {type: Reject}
---
apiVersion: flowcontrol.apiserver.k8s.io/v1
kind: FlowSchema
metadata: {name: fleet-squeezed}
spec:
  priorityLevelConfiguration: {name: fleet-squeezed}
  matchingPrecedence: 100
  distinguisherMethod: {type: ByUser}
  rules:
  - subjects: [{kind: Group, group: {name: fleet-drivers}}]
    resourceRules: [{verbs: ["*"], apiGroups: ["*"], resources: ["*"], clusterScope: true, namespaces: ["*"]}]
    nonResourceRules: [{verbs: ["*"], nonResourceURLs: ["*"]}]
EOF
	read -r -t 2 <>"$hold" || true
	stop_drivers
	# Every slice gone, so that every driver has writes to make.
	"${kc[@]}" delete resourceslices --field-selector "spec.driver=$driver" --wait=false >/dev/null
	local r0
	r0=$(apf_rejected)
	m0=$(mark) b0=$(etcd_bytes) t=$(now_us)
	for ((i = 1; i <= nodes; i++)); do start_driver "$who" "$i"; done
	read -r -t "$pressure_s" <>"$hold" || true
	"${kc[@]}" delete flowschema fleet-squeezed >/dev/null
	"${kc[@]}" delete prioritylevelconfiguration fleet-squeezed >/dev/null
	local off
	off=$(now_us)
	local wrong
	wrong=$(converged "$work/want-clean" "$off")
	conv=$(wait_converged "$work/want-clean" "$off" 120)
	read -r -t 3 <>"$hold" || true
	m1=$(mark)
	j=$(audit "$m0" "$m1" "$t" "$agent")
	row "$who pressure: APF rejections per node" "$(awk -v a="$r0" -v b="$(apf_rejected)" -v n="$nodes" 'BEGIN { printf "%.2f", (b - a) / n }')"
	row "$who pressure: 429s seen per node (audit)" "$(fmt .r429 "$j")"
	row "$who pressure: busiest second of one driver (requests)" "$(fmt .busiest_second "$j")"
	row "$who pressure: slices right when it ended" "$wrong"
	row "$who pressure: all slices right after it ended (ms)" "$conv"
	report "$who" "pressure ($pressure_s s + after)" "$j" "$(($(etcd_bytes) - b0))"

	stop_drivers
	_e2e_kill_wait TERM 10000 "${sim_pid[@]}" || true
	watch_stop
	drv_pid=() sim_pid=()
}

run ours ascend-k8s/ npu.ascend.com "$chips"
((peer_on)) && run peer dra-test-driver test-driver.cdi.k8s.io "$chips"

printf '\nmachine: %s CPUs online, %s, %s\n' "$(nproc)" \
	"$(awk -F': ' '/^model name/ { print $2; exit }' /proc/cpuinfo)" "$(uname -srm)"
printf 'nodes: %d, chips per node: %d, peer: %s\n\n' "$nodes" "$chips" \
	"$( ((peer_on)) && echo "upstream's dra-test-driver ($(basename "$(readlink -f "$peer_bin")"))" || echo none)"
printf '%-58s %-10s %-10s %-10s %s\n' measurement measured target result "by verb and resource, per node"
printf '%s\n' "${rows[@]}"
