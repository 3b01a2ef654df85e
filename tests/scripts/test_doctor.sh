#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# ascend-doctor, the built binary, against fixtures (tests/doctor/fixtures/):
# simulated driver trees, DCMI simulator states (broken ones too), device
# directories made here (good, missing, wrong type, wrong mode), kubectl
# JSON of realistic clusters, and a live plugin with kubelet-sim. Each case
# compares the whole output (paths under the scratch directory shown as
# TMP) with tests/doctor/fixtures/expected/<case>.txt, whose first line is
# the exit status. DOCTOR_UPDATE=1 rewrites those files from this run
# (review the diff before committing).
#
# Usage: test_doctor.sh PLUGIN KUBELET_SIM FAKE_DCMI_LIB [ASCEND_DOCTOR]
set -uo pipefail
plugin=$1 sim=$2 fake_dcmi=$3
doctor=${4:-$(dirname "$plugin")/../tools/ascend-doctor/ascend-doctor}
root=$(cd "$(dirname "$0")/../.." && pwd)
fixtures=$root/tests/doctor/fixtures
tmp=$(mktemp -d)
# The DCMI loader wants every parent of the library root-owned and not
# writable by others.
chmod 755 "$tmp"
pids=()
cleanup() {
	local p
	for p in "${pids[@]}"; do
		kill "$p" 2>/dev/null && wait "$p" 2>/dev/null
	done
	rm -rf "$tmp"
}
trap cleanup EXIT
# shellcheck source=tests/scripts/lib.sh
. "$(dirname "$0")/lib.sh"

[ -x "$doctor" ] || { echo "FAIL: no ascend-doctor at $doctor"; exit 1; }

# expect CASE WANT_EXIT COMMAND...: runs ascend-doctor with the arguments and
# compares exit status and output with the case's expected file.
expect() {
	local name=$1 want=$2
	shift 2
	local file=$fixtures/expected/$name.txt
	timeout 60 "$@" >"$tmp/got.raw" 2>&1
	local got=$?
	{ echo "exit $got"; sed "s#$tmp#TMP#g" "$tmp/got.raw"; } >"$tmp/got"
	if [ "${DOCTOR_UPDATE:-}" = 1 ]; then
		cp "$tmp/got" "$file"
	fi
	if [ "$got" -ne "$want" ]; then
		fail "$name" "exit $got, want $want:" "$(sed 's/^/    /' "$tmp/got")"
	elif ! diff -u "$file" "$tmp/got" >"$tmp/diff" 2>&1; then
		fail "$name" "output differs from ${file#"$root"/}:" "$(sed 's/^/    /' "$tmp/diff")"
	else
		pass "$name"
	fi
}

# make_node DIR TREE STATE DEV: a simulated node under DIR: the driver tree
# as its root (with the DCMI simulator as the driver's libdcmi.so), the
# state file, DIR/dev of kind DEV (ok, broken, none) and DIR/kubelet.
make_node() {
	local dir=$1 tree=$2 state=$3 dev=$4 n
	mkdir -p "$dir/dev" "$dir/kubelet"
	cp -r "$fixtures/trees/$tree" "$dir/root"
	if [ "$tree" != no-driver ]; then
		mkdir -p "$dir/root/usr/local/Ascend/driver/lib64/driver"
		cp "$fake_dcmi" "$dir/root/usr/local/Ascend/driver/lib64/driver/libdcmi.so"
	fi
	chmod -R go-w "$dir"
	cp "$fixtures/states/$state" "$dir/state"
	n=$(grep -c '^chip ' "$dir/state")
	case $dev in
	ok)
		# Character devices the driver's user may open: /dev/null stands in.
		for ((i = 0; i < n; i++)); do ln -s /dev/null "$dir/dev/davinci$i"; done
		for f in davinci_manager devmm_svm hisi_hdc dvpp_cmdlist; do ln -s /dev/null "$dir/dev/$f"; done
		;;
	broken)
		# davinci2 missing, hisi_hdc a regular file, davinci_manager only
		# root's (crw-------), dvpp_cmdlist (optional) missing.
		for ((i = 0; i < n; i++)); do [ "$i" -eq 2 ] || ln -s /dev/null "$dir/dev/davinci$i"; done
		ln -s /dev/null "$dir/dev/devmm_svm"
		touch "$dir/dev/hisi_hdc"
		mknod -m 600 "$dir/dev/davinci_manager" c 1 3
		;;
	esac
}

# ---- usage ------------------------------------------------------------------
check "--help exits 0 and names the commands" bash -c '"$1" --help | grep -q "^  explain "' _ "$doctor"
check "--version" bash -c '"$1" --version | grep -Eq "^ascend-doctor [0-9]+\.[0-9]+\.[0-9]+$"' _ "$doctor"
expect usage-no-command 3 "$doctor"
expect usage-unknown-command 3 "$doctor" doctor
expect usage-unknown-flag 3 "$doctor" node --nope
expect usage-relative-path 3 "$doctor" node --dev-dir dev
expect usage-explain-without-pod 3 "$doctor" explain
mkdir -p "$tmp/empty-path"
expect usage-explain-no-kubectl 3 env PATH="$tmp/empty-path" "$doctor" explain mypod

# ---- explain: kubectl JSON ----------------------------------------------------
ex=$fixtures/explain
explain_case() { # CASE WANT_EXIT POD
	local c=$1 want=$2 pod=$3
	expect "explain-$c" "$want" "$doctor" explain "$pod" --nodes "$ex/$c/nodes.json" --pods "$ex/$c/pods.json"
}
explain_case insufficient-10-nodes 2 inference/llm-infer-0
explain_case untolerated-taint 2 resnet-infer
explain_case cordoned 2 resnet-infer
explain_case not-ready 2 default/resnet-infer
explain_case mixed-910b-310p 2 llm-2
explain_case unhealthy-chips 2 c
explain_case init-containers 2 c
explain_case affinity-selector 2 c
explain_case no-npu-capacity 2 c
explain_case fits 1 c
explain_case bad-quantity 2 c
# The pod asks for a vNPU template's resource: that is the one counted.
explain_case vnpu-template 2 ocr-1
# An explicit --resource-name is counted even when the pod asks for another.
expect explain-other-resource 1 "$doctor" explain ocr-1 --resource-name ascend.com/npu \
	--nodes "$ex/vnpu-template/nodes.json" --pods "$ex/vnpu-template/pods.json"
# The pod from a file of its own, named by nothing else.
expect explain-pod-file 1 "$doctor" explain --pod "$ex/fits/pod.json" --nodes "$ex/fits/nodes.json" --pods "$ex/fits/pods.json"
expect explain-pod-not-found 2 "$doctor" explain nosuchpod --nodes "$ex/fits/nodes.json" --pods "$ex/fits/pods.json"
printf '{"items": [' >"$tmp/truncated.json"
expect explain-bad-json 2 "$doctor" explain c --nodes "$tmp/truncated.json" --pods "$ex/fits/pods.json"

# --json: the documented document.
json_doc() {
	"$doctor" --json explain inference/llm-infer-0 --nodes "$ex/insufficient-10-nodes/nodes.json" \
		--pods "$ex/insufficient-10-nodes/pods.json" >"$tmp/doc.json"
	[ $? -eq 2 ] || { echo "exit status is not 2"; return 1; }
	jq -e '.pod == "inference/llm-infer-0" and .request["ascend.com/npu"] == 2
		and (.nodes | length) == 10 and .nodes[0].name == "npu-node-01" and .nodes[0].fits == false
		and .nodes[0].reasons[0].code == "insufficient-npu"
		and (.nodes[0].reasons[0].detail | test("8 taken by 4 pod"))
		and .summary == "0/10 nodes are available: 10 Insufficient ascend.com/npu."
		and (.fix | test("add NPU nodes")) and .verdict == "FAIL" and .exit_code == 2
		and .command == "explain" and (.checks | length) == 12' "$tmp/doc.json" >/dev/null ||
		{ cat "$tmp/doc.json"; return 1; }
}
if command -v jq >/dev/null; then
	check "explain --json: pod, request, nodes, reasons, summary, fix" json_doc
else
	skip "explain --json" "no jq"
fi

# kubectl run by the tool: a stand-in that answers from the fixtures, and
# ones that never answer (the deadline must stop them).
mkdir -p "$tmp/bin" "$tmp/slowbin"
cat >"$tmp/bin/kubectl" <<KUBECTL
#!/bin/sh
echo "\$*" >>"$tmp/kubectl.log"
case "\$*" in
"get pod llm-infer-0 -n inference -o json") cat "$ex/insufficient-10-nodes/pod.json" ;;
"get nodes -o json") cat "$ex/insufficient-10-nodes/nodes.json" ;;
"get pods --all-namespaces -o json") cat "$ex/insufficient-10-nodes/pods.json" ;;
*) echo "Error from server (NotFound): pods \"\$3\" not found" >&2; exit 1 ;;
esac
KUBECTL
printf '#!/bin/sh\nexec sleep 30\n' >"$tmp/slowbin/kubectl"
# And one that closes its output at once and then hangs.
mkdir -p "$tmp/closedbin"
printf '#!/bin/sh\nexec >&- 2>&-\nexec sleep 30\n' >"$tmp/closedbin/kubectl"
chmod 755 "$tmp/bin/kubectl" "$tmp/slowbin/kubectl" "$tmp/closedbin/kubectl"
expect explain-kubectl 2 env PATH="$tmp/bin:$PATH" "$doctor" explain -n inference llm-infer-0
check "kubectl was asked for the pod, the nodes and all pods" diff -u - "$tmp/kubectl.log" <<'EOF2'
get pod llm-infer-0 -n inference -o json
get nodes -o json
get pods --all-namespaces -o json
EOF2
expect explain-kubectl-not-found 2 env PATH="$tmp/bin:$PATH" "$doctor" explain -n inference nosuchpod
expect explain-kubectl-timeout 2 env PATH="$tmp/slowbin:$PATH" "$doctor" explain --timeout 1s mypod
expect explain-kubectl-no-exit 2 env PATH="$tmp/closedbin:$PATH" "$doctor" explain --timeout 1s mypod
# With --json, a run without a verdict is still a document.
expect explain-json-error 2 env PATH="$tmp/bin:$PATH" "$doctor" --json explain -n inference nosuchpod

# ---- explain: ResourceClaims (a real 1.37 control plane's objects) -------------
cl=$fixtures/claims/cluster
claim_files=(--claims "$cl/claims.json" --classes "$cl/classes.json" --slices "$cl/slices.json"
	--taint-rules "$cl/rules.json")
claim_case() { # CLAIM WANT_EXIT
	expect "explain-claim-$1" "$2" "$doctor" explain claim "default/$1" "${claim_files[@]}"
}
claim_case whole0 1    # chip 0 whole: its counters taken by vNPUs; the other node fits
claim_case vp4 2       # a fourth vNPU of chip 0: allocated or short of counters
claim_case want3 2     # chip 3: allocated to hold3
claim_case want5 2     # chip 5: the driver's unhealthy taint
claim_case want7 2     # chip 7: a DeviceTaintRule's taint
claim_case shared-3 1  # a third share of a chip time-sliced by 2
claim_case hbm 2       # a selector in part not evaluated, and false where evaluated
claim_case noclass 2   # a DeviceClass that does not exist
claim_case either 1    # firstAvailable: the whole chip on the other node
claim_case vp1 0       # allocated: nothing to wait for
# The pod's claim, made from its template, found through the pod's status.
expect explain-claim-pod 2 "$doctor" explain dra-too-many --pods "$cl/pods.json" --nodes "$cl/nodes.json" \
	"${claim_files[@]}"
expect explain-claim-not-found 2 "$doctor" explain claim default/nosuch "${claim_files[@]}"
expect usage-explain-claim-no-name 3 "$doctor" explain claim
claim_json() {
	"$doctor" --json explain dra-too-many --pods "$cl/pods.json" --nodes "$cl/nodes.json" "${claim_files[@]}" \
		>"$tmp/claim.json"
	[ $? -eq 2 ] || { echo "exit status is not 2"; return 1; }
	jq -e '.pod == "default/dra-too-many" and (.claims | length) == 1
		and (.claims[0].claim | startswith("default/dra-too-many-npu-"))
		and .claims[0].requests[0].count == 9 and .claims[0].allocatable == 0
		and ([.claims[0].requests[0].nodes[] | {node, available}])
			== [{"node": "npu-node-2", "available": 4}, {"node": "npu-node-3", "available": 1}]
		and .claims[0].requests[0].nodes[0].causes.tainted.count == 2
		and .claims[0].requests[0].nodes[0].causes.allocated.count == 1
		and .claims[0].requests[0].nodes[0].causes["short-of-counters"].count == 1
		and .claims[0].requests[0].nodes[1].causes["short-of-shares"].count == 1
		and (.claims[0].fix | test("ask for at most 8"))' "$tmp/claim.json" >/dev/null ||
		{ cat "$tmp/claim.json"; return 1; }
}
if command -v jq >/dev/null; then
	check "explain --json for a pod's claim: nodes, causes, fix" claim_json
else
	skip "explain --json for claims" "no jq"
fi

# ---- versions -------------------------------------------------------------------
make_node "$tmp/v-ok" ok healthy.state ok
make_node "$tmp/v-mismatch" mismatch healthy.state ok
make_node "$tmp/v-none" no-driver healthy.state ok
make_node "$tmp/v-310p" ok duo-310p.state ok
# versions_cmd DIR: the command line for the node under DIR, in $cmd.
versions_cmd() {
	cmd=(env ASCEND_FAKE_DCMI_STATE="$1/state" "$doctor" versions --host-root "$1/root")
}
versions_cmd "$tmp/v-ok"
expect versions-ok 0 "${cmd[@]}" --soc-version Ascend910B3
expect versions-soc-mismatch 2 "${cmd[@]}" --soc-version Ascend910B4
versions_cmd "$tmp/v-mismatch"
expect versions-mismatch 2 "${cmd[@]}"
if command -v jq >/dev/null; then
	versions_json() {
		"$@" --json >"$tmp/versions.json"
		jq -e '.command == "versions" and .exit_code == 2 and (.checks | map(.check)) == ["driver", "firmware", "cann", "chip"]
			and .checks[1].verdict == "FAIL" and (.checks[1].fix | length) > 0 and .checks[0].fix == null' \
			"$tmp/versions.json" >/dev/null || { cat "$tmp/versions.json"; return 1; }
	}
	check "versions --json lists the checks" versions_json "${cmd[@]}"
fi
# CANN lists the driver, but the driver does not list CANN's release.
versions_cmd "$tmp/v-ok"
expect versions-driver-list 2 "${cmd[@]}" --toolkit-path "$fixtures/toolkits/cann-unlisted"
versions_cmd "$tmp/v-none"
expect versions-unknown 1 "${cmd[@]}" --soc-version Ascend910B3
versions_cmd "$tmp/v-310p"
expect versions-310p 0 "${cmd[@]}" --soc-version Ascend310P3 --toolkit-path "$tmp/v-310p/root/usr/local/Ascend/ascend-toolkit/latest"

# ---- node, without a kubelet or plugin ----------------------------------------------
make_node "$tmp/n-faulty" ok faulty.state ok
make_node "$tmp/n-broken" ok healthy.state broken
make_node "$tmp/n-none" no-driver healthy.state none
make_node "$tmp/n-untrusted" ok healthy.state ok
chmod 777 "$tmp/n-untrusted/root/usr/local/Ascend/driver/lib64"
# node_cmd DIR: the command line for the node under DIR, in $cmd.
node_cmd() {
	cmd=(env ASCEND_FAKE_DCMI_STATE="$1/state" "$doctor" node --host-root "$1/root" --dev-dir "$1/dev"
		--socket-dir "$1/kubelet" --state-dir "$1/state-dir")
}
node_cmd "$tmp/n-faulty"
expect node-faulty-chips 2 "${cmd[@]}"
node_cmd "$tmp/n-broken"
expect node-broken-devices 2 "${cmd[@]}"
node_cmd "$tmp/n-none"
expect node-no-driver 2 "${cmd[@]}"
node_cmd "$tmp/n-untrusted"
expect node-untrusted-dcmi 2 "${cmd[@]}"
# A record of separated chips damaged by hand: the plugin would not start.
make_node "$tmp/n-corrupt" ok healthy.state ok
mkdir "$tmp/n-corrupt/state-dir"
printf 'npu-2 level=ManuallySeparateNPU code=80E01801 rule=frequency since=yesterday\n' \
	>"$tmp/n-corrupt/state-dir/separated-chips"
node_cmd "$tmp/n-corrupt"
expect node-separated-unreadable 2 "${cmd[@]}"
expect usage-release-no-chip 3 "$doctor" release
expect usage-release-not-a-chip 3 "$doctor" release gpu-1
# A kubelet.sock that is no socket, and a plugin socket nobody serves (left
# by a plugin that died).
if command -v python3 >/dev/null; then
	make_node "$tmp/n-stale" ok healthy.state ok
	touch "$tmp/n-stale/kubelet/kubelet.sock"
	python3 -c 'import socket, sys; socket.socket(socket.AF_UNIX).bind(sys.argv[1])' "$tmp/n-stale/kubelet/ascend-npu.sock"
	node_cmd "$tmp/n-stale"
	expect node-stale-sockets 2 "${cmd[@]}"
else
	skip node-stale-sockets "no python3 to leave a stale socket"
fi

# ---- node, against the real plugin and kubelet-sim -----------------------------------
# kubelet-sim's events come through a FIFO on descriptor 8, each line also
# kept in sim.out. wait_for TEXT: reads them until one contains TEXT, for
# 20 s at most.
wait_for() {
	local line deadline=$((SECONDS + 20))
	while ((SECONDS < deadline)); do
		IFS= read -r -t $((deadline - SECONDS)) line <&8 || return 1
		echo "$line" >>"$tmp/sim.out"
		[[ $line == *"$1"* ]] && return 0
	done
	return 1
}
live=$tmp/live
make_node "$live" ok healthy.state ok
mkfifo "$tmp/sim.in" "$tmp/sim.fifo"
: >"$tmp/sim.out"
"$sim" --dir "$live/kubelet" --pod-resources-socket "$live/podres.sock" <"$tmp/sim.in" >"$tmp/sim.fifo" \
	2>"$tmp/sim.err" &
pids+=($!)
exec 7>"$tmp/sim.in" # keeps kubelet-sim's stdin open
exec 8<"$tmp/sim.fifo"
ASCEND_FAKE_DCMI_STATE="$live/state" "$plugin" --socket-dir "$live/kubelet" --dev-dir "$live/dev" \
	--host-root "$live/root" --state-dir "$live/state-dir" >"$tmp/plugin.out" 2>"$tmp/plugin.err" &
pids+=($!)
node_cmd "$live"
if wait_for "devices resource=ascend.com/npu capacity=8 allocatable=8"; then
	expect node-live-healthy 0 "${cmd[@]}"
	# npu-3 fails: the plugin advertises it Unhealthy, as DCMI says.
	sed 's/^chip phy=3 .*/chip phy=3 card=3 logic=3 name=910B3 health=2 errors=80E01801/' \
		"$fixtures/states/healthy.state" >"$live/state.tmp" && mv "$live/state.tmp" "$live/state"
	if wait_for "unhealthy=npu-3"; then
		expect node-live-unhealthy-chip 2 "${cmd[@]}"
	else
		fail "node-live-unhealthy-chip" "the plugin did not report npu-3:" "$(cat "$tmp/sim.out")"
	fi
	# The doctor sees another /dev than the plugin: without davinci5 there,
	# npu-5 should be Unhealthy, but the plugin advertises it Healthy.
	cp -a "$live/dev" "$tmp/other-dev"
	rm "$tmp/other-dev/davinci5"
	expect node-live-differs 2 env ASCEND_FAKE_DCMI_STATE="$live/state" "$doctor" node --host-root "$live/root" \
		--dev-dir "$tmp/other-dev" --socket-dir "$live/kubelet" --state-dir "$live/state-dir"
	# Another resource name: no such socket.
	expect node-live-other-resource 2 "${cmd[@]}" --resource-name huawei.com/Ascend910
	# pods: who holds which chip, from kubelet-sim's pod resources API.
	expect pods-none 0 "$doctor" pods --pod-resources-socket "$live/podres.sock"
	echo "allocate 2" >&7
	if wait_for "allocate ok"; then
		expect pods-two 0 "$doctor" pods --pod-resources-socket "$live/podres.sock"
		expect pods-json 0 "$doctor" --json pods --pod-resources-socket "$live/podres.sock"
		expect pods-other-resource 0 "$doctor" pods --pod-resources-socket "$live/podres.sock" \
			--resource-name huawei.com/Ascend910
	else
		fail "pods-two" "kubelet-sim allocated nothing:" "$(cat "$tmp/sim.out")"
	fi
	expect pods-no-socket 2 "$doctor" pods --pod-resources-socket "$live/nothing.sock"
	expect usage-pods-relative 3 "$doctor" pods --pod-resources-socket podres.sock
	# npu-6 separated by a record (as the plugin writes one): node lists it
	# with the release command, and the plugin's Unhealthy npu-6 is no
	# difference from DCMI; the release brings it back.
	mkdir "$live/state-dir"
	printf 'npu-6 level=ManuallySeparateNPU code=80E01801 rule=frequency since=2026-12-02T14:40:00Z\n' \
		>"$live/state-dir/.new" && mv "$live/state-dir/.new" "$live/state-dir/separated-chips"
	if wait_for "unhealthy=npu-3,npu-6"; then
		expect node-live-separated 2 "${cmd[@]}"
		expect release-ok 0 "$doctor" release npu-6 --state-dir "$live/state-dir"
		wait_for "unhealthy=npu-3" || fail "release" "the plugin did not take npu-6 back:" "$(cat "$tmp/sim.out")"
		expect release-not-separated 2 "$doctor" release npu-6 --state-dir "$live/state-dir"
	else
		fail "node-live-separated" "the plugin did not separate npu-6:" "$(cat "$tmp/sim.out" "$tmp/plugin.err")"
	fi
	# Registered again, the plugin names a link of its socket
	# (ascend-npu~2.sock): the doctor checks the plugin once, as before.
	echo "end-stream" >&7
	if wait_for "endpoint=ascend-npu~" && wait_for "unhealthy=npu-3"; then
		expect node-live-reregistered 2 "${cmd[@]}"
	else
		fail "node-live-reregistered" "the plugin did not register again:" "$(cat "$tmp/sim.out" "$tmp/plugin.err")"
	fi
else
	fail "plugin registration" "kubelet-sim saw no devices:" "$(cat "$tmp/sim.out" "$tmp/plugin.err")"
fi
kill "${pids[@]}" 2>/dev/null
wait "${pids[@]}" 2>/dev/null
pids=()
exec 7>&- 8<&-

# ---- node, against a plugin time-slicing a chip whose device-share is off ----------
# npu-2's mode is off: the plugin serves it whole (npu-2::0 alone), the
# doctor says so with the npu-smi command and the knob that fix it.
shared=$tmp/shared
make_node "$shared" ok healthy.state ok
echo "share phy=2 mode=off" >>"$shared/state"
printf 'version: v1\nsharing:\n  timeSlicing:\n    resources:\n    - name: ascend.com/npu\n      replicas: 2\n' \
	>"$shared/config.yaml"
mkfifo "$tmp/sim2.in" "$tmp/sim2.fifo"
"$sim" --dir "$shared/kubelet" <"$tmp/sim2.in" >"$tmp/sim2.fifo" 2>"$tmp/sim2.err" &
pids+=($!)
exec 7>"$tmp/sim2.in"
exec 8<"$tmp/sim2.fifo"
ASCEND_FAKE_DCMI_STATE="$shared/state" "$plugin" --socket-dir "$shared/kubelet" --dev-dir "$shared/dev" \
	--host-root "$shared/root" --state-dir "$shared/state-dir" --config "$shared/config.yaml" \
	>"$tmp/plugin2.out" 2>"$tmp/plugin2.err" &
pids+=($!)
node_cmd "$shared"
if wait_for "devices resource=ascend.com/npu capacity=15 allocatable=15"; then
	expect node-live-device-share-off 1 "${cmd[@]}"
else
	fail "node-live-device-share-off" "kubelet-sim saw no devices:" "$(cat "$tmp/sim.out" "$tmp/plugin2.err")"
fi
kill "${pids[@]}" 2>/dev/null
wait "${pids[@]}" 2>/dev/null
pids=()
exec 7>&- 8<&-

# ---- node, against a plugin serving four resources --------------------------------
# Per-family names (one in another domain), a vNPU template, and another
# vendor's plugin socket that answers nothing (left alone).
mixed=$tmp/mixed
make_node "$mixed" ok mixed-vnpu.state ok
ln -s /dev/null "$mixed/dev/vdavinci164"
ln -s /dev/null "$mixed/dev/vdavinci165"
if command -v python3 >/dev/null; then
	python3 -c 'import socket, sys; socket.socket(socket.AF_UNIX).bind(sys.argv[1])' "$mixed/kubelet/nvidia-gpu.sock"
fi
mkfifo "$tmp/sim2.in" "$tmp/sim2.fifo"
"$sim" --dir "$mixed/kubelet" <"$tmp/sim2.in" >"$tmp/sim2.fifo" 2>"$tmp/sim2.err" &
pids+=($!)
exec 7>"$tmp/sim2.in"
exec 8<"$tmp/sim2.fifo"
ASCEND_FAKE_DCMI_STATE="$mixed/state" "$plugin" --socket-dir "$mixed/kubelet" --dev-dir "$mixed/dev" \
	--host-root "$mixed/root" --state-dir "$mixed/state-dir" --config "$fixtures/mixed-resources.yaml" \
	>"$tmp/plugin2.out" 2>"$tmp/plugin2.err" &
pids+=($!)
node_cmd "$mixed"
if wait_for "devices resource=ascend.com/npu-vir04-3c capacity=2"; then
	expect node-live-resources 2 "${cmd[@]}"
	# Only the one named.
	expect node-live-one-resource 2 "${cmd[@]}" --resource-name ascend.com/npu-310p
else
	fail "plugin with four resources" "kubelet-sim saw no vNPU resource:" "$(cat "$tmp/sim.out" "$tmp/plugin2.err")"
fi
exec 7>&- 8<&-

finish
