#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The guide on a real Kubernetes (make e2e, part of make test): the upstream
# API server, scheduler, controller manager and three kubelets with
# containerd 2 (tests/cluster/cluster.sh), our DaemonSet and examples applied
# with kubectl, every outcome read back through kubectl as a user would.
#
#   e2e.sh BUILD_DIR [STEP...]    steps: install schedule pending fault
#                                 lifecycle rollout sharing cdi metrics dra
#                                 (all by default; install always runs)
#
# One line per check ("ok ..." or "FAIL ..."), a figure where the step
# measures one, and the closing "N passed, M failed" line. It starts its own
# cluster (its own directory, network namespace and port, so a `make cluster`
# may run beside it) and removes it on every path, Ctrl-C included.
set -uo pipefail

if [ $# -lt 1 ]; then
	echo "usage: $0 BUILD_DIR [STEP...]" >&2
	exit 2
fi
build=$(cd "$1" && pwd)
shift
steps=" ${*:-install schedule pending fault lifecycle rollout sharing cdi metrics dra} "
root=$(cd "$(dirname "$0")/../.." && pwd)

if [ "$(id -u)" -ne 0 ]; then
	# No silent pass: make e2e and make test fail here (exit 77, as
	# tests/scripts/lib.sh's skip_test).
	echo "skip: the cluster e2e test needs root (namespaces, mounts, mknod)"
	exit 77
fi

export CLUSTER_DIR=${E2E_CLUSTER_DIR:-/tmp/ascend-k8s-e2e}
export CLUSTER_NETNS=${E2E_CLUSTER_NETNS:-ascend-k8s-e2e}
export CLUSTER_PORT=${E2E_CLUSTER_PORT:-16443}
# shellcheck source=cluster.sh
. "$root/tests/cluster/cluster.sh"
tmp=$(mktemp -d /tmp/e2e-cluster.XXXXXX)
# shellcheck source=../scripts/lib.sh
. "$root/tests/scripts/lib.sh"

readonly NPU=ascend.com/npu
readonly WAIT=${E2E_WAIT_S:-90}s
N1=$(cluster_node_name 1)
N2=$(cluster_node_name 2)
N3=$(cluster_node_name 3)
t_start=$SECONDS

finished=false
cleanup() {
	$finished && return
	finished=true
	trap - EXIT INT TERM
	if [ -n "${rss_pid-}" ]; then
		kill "$rss_pid" 2>/dev/null
		wait "$rss_pid" 2>/dev/null
		figure memory "peak resident memory of the cluster (control plane, 3 kubelets and containerds, plugins, pods): $(($(sort -n "$tmp/rss" | tail -n 1) / 1024)) MiB"
	fi
	if [ "${E2E_KEEP:-0}" = 1 ]; then
		echo "E2E_KEEP=1: the cluster stays up: export KUBECONFIG=$(cluster_kubeconfig)"
	else
		cluster_down >"$tmp/down.log" 2>&1 || { cat "$tmp/down.log"; fail "cleanup" "cluster_down failed"; }
		[ ! -e "$CLUSTER_DIR" ] || fail "cleanup" "$CLUSTER_DIR is left"
		! ip netns list | grep -qw "$CLUSTER_NETNS" || fail "cleanup" "network namespace $CLUSTER_NETNS is left"
	fi
	rm -rf "$tmp"
	echo "cluster e2e: $((SECONDS - t_start)) s"
	finish
	exit $?
}
trap cleanup EXIT
trap 'echo "interrupted"; failed=$((failed + 1)); cleanup' INT TERM

k() { "$bin/kubectl" --kubeconfig "$(cluster_kubeconfig)" "$@"; }
now_ms() { _e2e_now_ms; }
# figure STEP TEXT: a measured figure, on a line of its own
figure() { echo "figure $1: $2"; }
# give_up WHAT WHY: a failure that leaves the rest of the run meaningless
give_up() {
	fail "$1" "${*:2}"
	dump
	cleanup
}
dump() {
	echo "---- nodes"
	k get nodes -o wide 2>&1 | sed 's/^/    /'
	echo "---- pods"
	k get pods -A -o wide 2>&1 | sed 's/^/    /'
	echo "---- plugin logs (last 20 lines each)"
	for p in $(k -n kube-system get pods -l name=ascend-device-plugin -o name 2>/dev/null); do
		echo "  $p"
		k -n kube-system logs "$p" --tail=20 2>&1 | sed 's/^/    /'
	done
}

alloc() { k get node "$1" -o jsonpath="{.status.allocatable.$(esc "${2:-$NPU}")}" | sed 's/^$/0/'; } # NODE [RES]
capacity() { k get node "$1" -o jsonpath="{.status.capacity.$(esc "${2:-$NPU}")}" | sed 's/^$/0/'; } # NODE [RES]
plugin_pod() { k -n kube-system get pods -l name=ascend-device-plugin --field-selector "spec.nodeName=$1" -o jsonpath='{.items[0].metadata.name}'; }
# Kubernetes' jsonpath needs the dots of a resource name escaped.
esc() { echo "${1//./\\.}"; }
wait_alloc() { # NODE VALUE [RES] [TIMEOUT]: waits (a watch) until NODE's allocatable RES is VALUE
	k wait --for=jsonpath="{.status.allocatable.$(esc "${3:-$NPU}")}=$2" "node/$1" --timeout="${4:-$WAIT}" >/dev/null
}
wait_capacity() { # NODE VALUE [RES]
	k wait --for=jsonpath="{.status.capacity.$(esc "${3:-$NPU}")}=$2" "node/$1" --timeout="$WAIT" >/dev/null
}

# npu_pod NAME NODE COUNT [RES] [RESTART]: a busybox pod on NODE holding COUNT
# of RES that prints the chips it got and sleeps.
npu_pod() {
	local name=$1 node=$2 count=$3 res=${4:-$NPU} restart=${5:-Always}
	cat <<EOF
apiVersion: v1
kind: Pod
metadata:
  name: $name
  labels: {e2e: npu}
spec:
  nodeSelector: {kubernetes.io/hostname: $node}
  tolerations: [{key: ascend.com/npu, operator: Exists, effect: NoSchedule}]
  terminationGracePeriodSeconds: 1
  restartPolicy: $restart
  containers:
  - name: main
    image: $E2E_BUSYBOX_IMAGE
    command: ["/bin/sh", "-c", "echo \"devices=\$ASCEND_VISIBLE_DEVICES\"; exec sleep infinity"]
    resources:
      limits: {$res: "$count"}
EOF
}
run_npu_pod() { # NAME NODE COUNT [RES]: creates it and waits until Ready
	npu_pod "$@" | k apply -f - >/dev/null && k wait --for=condition=Ready "pod/$1" --timeout="$WAIT" >/dev/null
}
pod_devices() { k exec "$1" -c "${2:-main}" -- sh -c 'echo "$ASCEND_VISIBLE_DEVICES"'; } # POD [CONTAINER]
delete_pods() { k delete pod "$@" --ignore-not-found --wait=true --timeout="$WAIT" >/dev/null 2>&1; }

# The example files with the images a node can have: nothing can be pulled,
# so the examples' public images are replaced by kustomize's images: override,
# as an offline site points them at its own registry.
example() { # FILE [PATCH]: prints the example as applied here
	local d=$tmp/example.$RANDOM
	mkdir -p "$d" && cp "$root/examples/$1" "$d/" || return
	{
		echo "resources: [${1##*/}]"
		echo "images:"
		echo "- {name: debian, newName: ${E2E_BUSYBOX_IMAGE%:*}, newTag: \"${E2E_BUSYBOX_IMAGE##*:}\"}"
		echo "- {name: my-inference, newName: ${E2E_INFERENCE_IMAGE%:*}, newTag: \"${E2E_INFERENCE_IMAGE##*:}\"}"
		if [ -n "${2-}" ]; then
			printf '%s\n' "$2" >"$d/patch.yaml"
			echo "patches: [{path: patch.yaml}]"
		fi
	} >"$d/kustomization.yaml"
	k kustomize "$d"
}

# ---- the cluster -----------------------------------------------------------------

t0=$(now_ms)
if ! cluster_up "$build" >"$tmp/up.log" 2>&1; then
	cat "$tmp/up.log"
	for f in "$CLUSTER_DIR"/logs/*.log; do
		[ -f "$f" ] && { echo "---- $f"; tail -n 20 "$f"; }
	done
	give_up "cluster up" "see above"
fi
bin=$(cat "$CLUSTER_DIR/bin")
# The cluster's memory, sampled every 2 s for the peak figure.
(
	while [ -d "$CLUSTER_DIR" ]; do
		cluster_rss_kb
		sleep 2
	done
) >"$tmp/rss" 2>/dev/null &
rss_pid=$!
pass "cluster: etcd, kube-apiserver, kube-controller-manager, kube-scheduler and 3 kubelets ($("$bin/kubectl" version --client -o json | jq -r .clientVersion.gitVersion)) with containerd $("$bin/containerd" --version | awk '{print $3}') Ready"
figure cluster "up in $(($(now_ms) - t0)) ms"

# ---- 1. install ------------------------------------------------------------------

step_install() {
	local n pods ready t0 caps
	check "1. kubectl label nodes $N1 $N2 $N3 npu=true" k label nodes "$N1" "$N2" "$N3" npu=true
	check "1. kubectl taint nodes ... ascend.com/npu=true:NoSchedule" \
		k taint nodes "$N1" "$N2" "$N3" ascend.com/npu=true:NoSchedule
	for n in 1 2 3; do
		# The list whole, then grep: grep -q would close the pipe early, and
		# ctr killed by SIGPIPE fails the pipeline under pipefail.
		if grep -qx 'docker.io/library/ascend-device-plugin:0.1.0' <<<"$("$bin/ctr" --address \
			"$(cluster_node_dir "$n")/containerd/containerd.sock" -n k8s.io images ls -q 2>/dev/null)"; then
			pass "1. the plugin image imported on $(cluster_node_name "$n") (ctr -n k8s.io images import)"
		else
			fail "1. the plugin image imported on $(cluster_node_name "$n")" "not in ctr images ls"
		fi
	done
	t0=$(now_ms)
	check "1. kubectl apply -k deploy/" k apply -k "$root/deploy"
	check "1. kubectl -n kube-system rollout status daemonset/ascend-device-plugin" \
		k -n kube-system rollout status daemonset/ascend-device-plugin --timeout="$WAIT"
	pods=$(k get pods -n kube-system -l name=ascend-device-plugin \
		-o jsonpath='{range .items[*]}{.spec.nodeName} {.status.phase} {.status.containerStatuses[0].ready}{"\n"}{end}')
	ready=$(grep -c ' Running true$' <<<"$pods")
	if [ "$ready" = 3 ] && [ "$(awk '{print $1}' <<<"$pods" | sort -u | wc -l)" = 3 ]; then
		pass "1. kubectl get pods -n kube-system -l name=ascend-device-plugin: one Running, Ready pod on each of the 3 nodes"
	else
		give_up "1. one Running, Ready plugin pod per node" "$pods"
	fi
	for n in "$N1" "$N2"; do
		wait_capacity "$n" 8 && wait_alloc "$n" 8 || true
	done
	wait_capacity "$N3" 5 && wait_capacity "$N3" 2 ascend.com/npu-vir04-3c || true
	figure install "apply -> every node's capacity in $(($(now_ms) - t0)) ms"
	caps=$(k get nodes -o jsonpath='{.items[*].status.capacity}')
	echo "    kubectl get nodes -o jsonpath='{.items[*].status.capacity}':"
	jq -c '{"ascend.com/npu": .["ascend.com/npu"], "ascend.com/npu-vir04-3c": .["ascend.com/npu-vir04-3c"]}' <<<"$caps" |
		sed 's/^/    /'
	for n in "$N1" "$N2"; do
		[ "$(capacity "$n")" = 8 ] && [ "$(alloc "$n")" = 8 ] && pass "1. $n: ascend.com/npu capacity 8, allocatable 8" ||
			fail "1. $n: ascend.com/npu 8" "capacity $(capacity "$n"), allocatable $(alloc "$n")"
	done
	# Node 3: chips 1-5 (chip 0 carries the vNPUs and is never listed whole) and the two vNPUs.
	[ "$(capacity "$N3")" = 5 ] && [ "$(capacity "$N3" ascend.com/npu-vir04-3c)" = 2 ] &&
		pass "1. $N3 (mixed): ascend.com/npu 5 (chip 0 carries vNPUs), ascend.com/npu-vir04-3c 2" ||
		fail "1. $N3: ascend.com/npu 5, ascend.com/npu-vir04-3c 2" \
			"$(capacity "$N3"), $(capacity "$N3" ascend.com/npu-vir04-3c)"
}

# ---- 2. scheduling ------------------------------------------------------------------

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

step_schedule() {
	local nodes t0 st
	t0=$(now_ms)
	example npu-pod.yaml >"$tmp/npu-pod.yaml"
	check "2. kubectl apply -f examples/npu-pod.yaml" k apply -f "$tmp/npu-pod.yaml"
	if k wait --for=condition=Ready pod/inference-pod --timeout="$WAIT" >/dev/null; then
		figure schedule "npu-pod.yaml apply -> Ready in $(($(now_ms) - t0)) ms"
		check_devices "2. inference-pod" inference-pod 1
	else
		fail "2. inference-pod Ready" "$(k describe pod inference-pod | tail -n 15)"
	fi

	# The Deployment: two replicas, tolerating the taint, spread by pod anti-affinity.
	# Its requests (2 CPUs, 8 GiB each) are more than three simulated nodes
	# sharing 2 cores can give, so the test asks for less; nothing else changes.
	example inference-deployment.yaml 'apiVersion: apps/v1
kind: Deployment
metadata: {name: inference-app}
spec:
  template:
    spec:
      containers:
      - name: inference
        resources:
          requests: {cpu: 100m, memory: 64Mi}
          limits: {memory: 128Mi}' >"$tmp/deploy.yaml"
	check "2. kubectl apply -f examples/inference-deployment.yaml" k apply -f "$tmp/deploy.yaml"
	if k rollout status deployment/inference-app --timeout="$WAIT" >/dev/null; then
		nodes=$(k get pods -l app=inference-app -o jsonpath='{range .items[*]}{.spec.nodeName}{"\n"}{end}')
		echo "    kubectl get pods -l app=inference-app -o wide:"
		k get pods -l app=inference-app -o wide | awk '{print "    " $1, $2, $3, $7}'
		[ "$(sort -u <<<"$nodes" | wc -l)" = 2 ] && pass "2. the Deployment's 2 replicas run on 2 different nodes (pod anti-affinity)" ||
			fail "2. replicas on different nodes" "$nodes"
	else
		fail "2. kubectl rollout status deployment/inference-app" "$(k describe pods -l app=inference-app | tail -n 20)"
	fi

	# A pod without the toleration: every NPU node is tainted, so it never lands.
	k apply -f - >/dev/null <<EOF
apiVersion: v1
kind: Pod
metadata: {name: no-toleration}
spec:
  terminationGracePeriodSeconds: 1
  containers:
  - {name: main, image: $E2E_BUSYBOX_IMAGE, command: [sleep, infinity]}
EOF
	if k wait --for=condition=PodScheduled=false pod/no-toleration --timeout="$WAIT" >/dev/null &&
		[ -z "$(k get pod no-toleration -o jsonpath='{.spec.nodeName}')" ]; then
		pass "2. a pod without the toleration stays Pending: $(k get pod no-toleration -o jsonpath='{.status.conditions[?(@.type=="PodScheduled")].message}')"
	else
		fail "2. a pod without the toleration is not scheduled" "$(k get pod no-toleration -o wide)"
	fi
	delete_pods no-toleration

	# The smoke test Job.
	t0=$(now_ms)
	example npu-smoke-test.yaml >"$tmp/smoke.yaml"
	check "2. kubectl apply -f examples/npu-smoke-test.yaml" k apply -f "$tmp/smoke.yaml"
	st=0
	k wait --for=condition=complete job/npu-smoke-test --timeout="$WAIT" >/dev/null || st=$?
	if ((st == 0)) && k logs job/npu-smoke-test | grep -q '^SMOKE TEST PASSED: 1 NPU(s) usable'; then
		pass "2. the smoke-test Job succeeds: $(k logs job/npu-smoke-test | grep '^SMOKE TEST PASSED')"
		figure schedule "smoke-test Job apply -> complete in $(($(now_ms) - t0)) ms"
	else
		fail "2. the smoke-test Job succeeds" "$(k logs job/npu-smoke-test 2>&1 | tail -n 15)"
	fi
	k delete -f "$tmp/smoke.yaml" -f "$tmp/deploy.yaml" --wait=true --timeout="$WAIT" >/dev/null 2>&1
	delete_pods inference-pod
}

# ---- 3. pending -------------------------------------------------------------------

step_pending() {
	local msg sched out st codes
	npu_pod too-many "" 9 | sed '/nodeSelector/d' | k apply -f - >/dev/null
	if k wait --for=condition=PodScheduled=false pod/too-many --timeout="$WAIT" >/dev/null; then
		# The scheduler's words, as kubectl describe shows them in the event.
		msg=$(k describe pod too-many | sed -n '/^Events:/,$p' | grep FailedScheduling | tail -n 1)
		sched=$(k get pod too-many -o jsonpath='{.status.conditions[?(@.type=="PodScheduled")].message}')
		if grep -q '0/3 nodes are available: 3 Insufficient ascend.com/npu' <<<"$msg"; then
			pass "3. kubectl describe pod too-many (9 NPUs): FailedScheduling ${msg##*default-scheduler}"
		else
			fail "3. kubectl describe pod shows Insufficient ascend.com/npu" "$msg"
		fi
	else
		fail "3. a pod asking for 9 NPUs stays Pending" "$(k get pod too-many -o wide)"
	fi
	# ascend-doctor explain, reading this API server through this kubectl,
	# must come to the scheduler's own verdict, node by node.
	st=0
	PATH="$bin:$PATH" KUBECONFIG=$(cluster_kubeconfig) "$build/tools/ascend-doctor/ascend-doctor" explain default/too-many |
		sed 's/^/    /'
	out=$(PATH="$bin:$PATH" KUBECONFIG=$(cluster_kubeconfig) "$build/tools/ascend-doctor/ascend-doctor" --json explain \
		default/too-many 2>&1) || st=$?
	codes=$(jq -r '.nodes[] | "\(.name):\(.fits):\([.reasons[].code] | join(","))"' <<<"$out" 2>/dev/null | sort | tr '\n' ' ')
	if ((st == 2)) && [ "$codes" = "$N1:false:insufficient-npu $N2:false:insufficient-npu $N3:false:insufficient-npu " ] &&
		[ "$(jq -r .summary <<<"$out")" = "${sched%% preemption:*}" ]; then
		pass "3. ascend-doctor explain: FAIL, insufficient-npu on each node, and the scheduler's own summary: $(jq -r .summary <<<"$out")"
	else
		fail "3. ascend-doctor explain agrees with the scheduler" "exit $st; nodes: $codes; doctor: $(jq -r .summary <<<"$out" 2>/dev/null); scheduler: $sched"
	fi
	delete_pods too-many
}

# ---- 4. faults --------------------------------------------------------------------

# The status the kubelet gives a pod's devices (gate ResourceHealthStatus):
# "npu-3=Unhealthy ..." for the container's allocatedResourcesStatus.
resource_health() { # POD
	k get pod "$1" -o json | jq -r '[.status.containerStatuses[0].allocatedResourcesStatus[]?
		| .resources[]? | "\(.resourceID)=\(.health)"] | join(" ")'
}

step_fault() {
	local chip t0 ms pod health got
	run_npu_pod holder "$N1" 1 || { fail "4. a pod holding one chip of $N1" "not Ready"; return; }
	chip=$(pod_devices holder)
	pod=$(plugin_pod "$N1")
	# The fault: chip $chip turns critical in node 1's DCMI simulator.
	t0=$(now_ms)
	node_set_chip_health "$(cluster_node_dir 1)" "$chip" 3 80E01801 || { fail "4. fault" "cannot write the state"; return; }
	if wait_alloc "$N1" 7 "" 30s; then
		ms=$(($(now_ms) - t0))
		figure fault "chip fault -> node allocatable 7 in $ms ms"
		pass "4. chip $chip of $N1 critical: allocatable 7 in $ms ms, capacity $(capacity "$N1")"
		[ "$(capacity "$N1")" = 8 ] || fail "4. capacity stays 8" "$(capacity "$N1")"
	else
		fail "4. allocatable 7 after a fault" "still $(alloc "$N1")"
	fi
	got=$(k -n kube-system logs "$pod" | grep -E "npu-$chip.*(Unhealthy|unhealthy)" | tail -n 1)
	[ -n "$got" ] && pass "4. kubectl logs $pod: $got" || fail "4. the plugin logs the fault" "no line for npu-$chip"
	# ResourceHealthStatus: the pod holding the chip sees it Unhealthy.
	if k wait --for=jsonpath='{.status.containerStatuses[0].allocatedResourcesStatus[0].resources[0].health}'=Unhealthy \
		pod/holder --timeout=30s >/dev/null; then
		pass "4. pod holder's allocatedResourcesStatus: $(resource_health holder)"
	else
		fail "4. allocatedResourcesStatus shows the chip Unhealthy" "$(resource_health holder)"
	fi
	# No new pod gets the chip: 6 more fit (8 - 1 unhealthy - 1 held).
	if run_npu_pod taker "$N1" 6; then
		got=$(pod_devices taker)
		[[ ,$got, != *,$chip,* ]] && pass "4. a pod taking the 6 free chips gets $got, not $chip" ||
			fail "4. no new pod gets the faulty chip" "taker got $got"
	else
		fail "4. a pod taking the 6 free chips" "$(k describe pod taker | tail -n 5)"
	fi
	delete_pods taker
	t0=$(now_ms)
	node_set_chip_health "$(cluster_node_dir 1)" "$chip" 0 "" || fail "4. recovery" "cannot write the state"
	if wait_alloc "$N1" 8 "" 30s; then
		figure fault "recovery -> node allocatable 8 in $(($(now_ms) - t0)) ms"
		pass "4. recovery: allocatable 8 again"
	else
		fail "4. recovery: allocatable 8" "$(alloc "$N1")"
	fi
	k wait --for=jsonpath='{.status.containerStatuses[0].allocatedResourcesStatus[0].resources[0].health}'=Healthy \
		pod/holder --timeout=30s >/dev/null && pass "4. pod holder's allocatedResourcesStatus back to $(resource_health holder)" ||
		fail "4. allocatedResourcesStatus Healthy again" "$(resource_health holder)"
	delete_pods holder
}

# ---- 5. lifecycle ------------------------------------------------------------------

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

step_lifecycle() {
	local before after t0 ms uid pod restarts
	run_npu_pod life-a "$N2" 2 && run_npu_pod life-b "$N2" 3 || { fail "5. pods on $N2" "not Ready"; return; }
	before=$(held "$N2")

	# a. kubelet restart
	uid=$(k get pod life-a -o jsonpath='{.metadata.uid}')
	t0=$(now_ms)
	restart_kubelet 2
	if k wait --for=condition=Ready node/"$N2" --timeout="$WAIT" >/dev/null && ms=$(registered_ms "$N2" "$t0"); then
		figure lifecycle "kubelet restart -> plugin re-registered, allocatable 8 in $ms ms"
		after=$(wait_held "$N2" "$before")
		[ "$before" = "$after" ] && [ "$(k get pod life-a -o jsonpath='{.metadata.uid}')" = "$uid" ] &&
			pass "5a. kubelet restart: re-registered; life-a, life-b keep running with the same chips ($(tr "\n" " " <<<"$after"))" ||
			fail "5a. same pods, same chips after a kubelet restart" "before: $before; after: $after"
	else
		fail "5a. re-registered after a kubelet restart" "allocatable $(alloc "$N2")"
	fi

	# b. plugin pod deleted: capacity stays, allocatable is 8 again once the
	# DaemonSet has recreated it. With the surge strategy the controller may
	# start the new pod while the old one terminates, and it registers on
	# its own socket first: then allocatable never drops.
	pod=$(plugin_pod "$N2")
	k get node "$N2" -w -o jsonpath="{.status.allocatable.$(esc $NPU)}{\" \"}{.status.capacity.$(esc $NPU)}{\"\n\"}" \
		>"$tmp/watch" 2>/dev/null &
	local wpid=$!
	t0=$(now_ms)
	k -n kube-system delete pod "$pod" --wait=true --timeout="$WAIT" >/dev/null
	k -n kube-system rollout status daemonset/ascend-device-plugin --timeout="$WAIT" >/dev/null
	ms=$(registered_ms "$N2" "$t0")
	kill "$wpid" 2>/dev/null
	wait "$wpid" 2>/dev/null
	local dipped="never dropped: the new pod registered before the old one left"
	grep -qx '0 8' "$tmp/watch" && dipped="0 with capacity 8 until the new pod registered"
	if ! grep -qvE '^[0-9]+ 8$' "$tmp/watch" && [ "$(alloc "$N2")" = 8 ] && [ "$(capacity "$N2")" = 8 ]; then
		pass "5b. plugin pod deleted: capacity 8 throughout, allocatable $dipped, 8 again in $ms ms"
		figure lifecycle "plugin pod deleted -> allocatable 8 in $ms ms (allocatable $dipped)"
	else
		fail "5b. capacity kept, allocatable back" "seen: $(tr '\n' '|' <"$tmp/watch"), now $(alloc "$N2")/$(capacity "$N2")"
	fi
	[ "$(held "$N2")" = "$before" ] && no_double "$N2" && pass "5b. running pods keep their chips, none held twice" ||
		fail "5b. chips kept" "$(held "$N2")"
	run_npu_pod life-c "$N2" 3 && no_double "$N2" &&
		pass "5b. a new pod gets 3 other chips: $(held "$N2" | tr '\n' ' ')" || fail "5b. a new pod after the plugin restart" "$(held "$N2")"
	delete_pods life-c

	# c. kubelet and plugin both restarted
	pod=$(plugin_pod "$N2")
	t0=$(now_ms)
	restart_kubelet 2 "k -n kube-system delete pod $pod --wait=false >/dev/null"
	k wait --for=condition=Ready node/"$N2" --timeout="$WAIT" >/dev/null
	k -n kube-system rollout status daemonset/ascend-device-plugin --timeout="$WAIT" >/dev/null
	if ms=$(registered_ms "$N2" "$t0") && [ "$(wait_held "$N2" "$before")" = "$before" ]; then
		pass "5c. kubelet and plugin restarted: allocatable 8 in $ms ms, the pods keep their chips"
	else
		fail "5c. kubelet and plugin restarted" "allocatable $(alloc "$N2"), held $(held "$N2")"
	fi

	# d. a pod deleted while the kubelet is down: its chips are free again after
	restart_kubelet 2 "k delete pod life-b --wait=false >/dev/null"
	# A pod the restarted kubelet admits before the plugin registered again
	# fails admission (UnexpectedAdmissionError, the kubelet's behaviour, not
	# the plugin's): the new pod comes once the kubelet serves again.
	if k wait --for=delete pod/life-b --timeout="$WAIT" >/dev/null && podres_ready "$N2" && wait_alloc "$N2" 8 &&
		run_npu_pod life-d "$N2" 6; then
		no_double "$N2" && pass "5d. a pod deleted while the kubelet was down is cleaned up: 6 chips free again ($(held "$N2" | tr '\n' ' '))" ||
			fail "5d. no stale assignment" "$(held "$N2")"
	else
		fail "5d. a pod deleted while the kubelet was down" "$(k get pods -o wide)"
	fi
	delete_pods life-a life-d

	# e. init, sidecar and regular containers
	k apply -f - >/dev/null <<EOF
apiVersion: v1
kind: Pod
metadata: {name: life-init, labels: {e2e: npu}}
spec:
  nodeSelector: {kubernetes.io/hostname: $N2}
  tolerations: [{key: ascend.com/npu, operator: Exists, effect: NoSchedule}]
  terminationGracePeriodSeconds: 1
  initContainers:
  - name: init
    image: $E2E_BUSYBOX_IMAGE
    command: ["/bin/sh", "-c", "echo \"init=\$ASCEND_VISIBLE_DEVICES\""]
    resources: {limits: {$NPU: "1"}}
  - name: sidecar
    image: $E2E_BUSYBOX_IMAGE
    restartPolicy: Always
    command: ["/bin/sh", "-c", "exec sleep infinity"]
    resources: {limits: {$NPU: "1"}}
  containers:
  - name: main
    image: $E2E_BUSYBOX_IMAGE
    command: ["/bin/sh", "-c", "exec sleep infinity"]
    resources: {limits: {$NPU: "1"}}
EOF
	if k wait --for=condition=Ready pod/life-init --timeout="$WAIT" >/dev/null; then
		local i s m
		i=$(k logs life-init -c init | sed -n 's/^init=//p')
		s=$(pod_devices life-init sidecar)
		m=$(pod_devices life-init main)
		if [ -n "$i" ] && [ -n "$s" ] && [ -n "$m" ] && [ "$s" != "$m" ]; then
			pass "5e. init container got $i, sidecar $s, regular container $m (sidecar and regular differ)"
		else
			fail "5e. init/sidecar/regular devices" "init=$i sidecar=$s main=$m"
		fi
	else
		fail "5e. a pod with init and sidecar containers" "$(k describe pod life-init | tail -n 10)"
	fi
	delete_pods life-init

	# f. a container restart keeps its devices: the first run notes its chips
	# in an emptyDir and exits 1; the restarted one compares.
	k apply -f - >/dev/null <<EOF
apiVersion: v1
kind: Pod
metadata: {name: life-restart, labels: {e2e: npu}}
spec:
  nodeSelector: {kubernetes.io/hostname: $N2}
  tolerations: [{key: ascend.com/npu, operator: Exists, effect: NoSchedule}]
  terminationGracePeriodSeconds: 1
  volumes: [{name: state, emptyDir: {}}]
  containers:
  - name: main
    image: $E2E_BUSYBOX_IMAGE
    volumeMounts: [{name: state, mountPath: /state}]
    command:
    - /bin/sh
    - -c
    - |
      if [ -f /state/first ]; then exec sleep infinity; fi
      echo "\$ASCEND_VISIBLE_DEVICES \$(ls /dev | grep '^davinci[0-9]' | tr '\\n' ' ')" >/state/first
      exit 1
    resources: {limits: {$NPU: "2"}}
EOF
	if k wait --for=jsonpath='{.status.containerStatuses[0].restartCount}'=1 pod/life-restart --timeout="$WAIT" >/dev/null &&
		k wait --for=condition=Ready pod/life-restart --timeout="$WAIT" >/dev/null; then
		local first again
		first=$(k exec life-restart -- cat /state/first)
		again=$(k exec life-restart -- sh -c 'echo "$ASCEND_VISIBLE_DEVICES $(ls /dev | grep "^davinci[0-9]" | tr "\n" " ")"')
		if [ -n "${first%% *}" ] && [ "$first" = "$again" ]; then
			pass "5f. a restarted container keeps its chips: $first"
		else
			fail "5f. a restarted container keeps its chips" "first run: $first; after the restart: $again"
		fi
	else
		fail "5f. a container that restarts" "$(k get pod life-restart -o wide)"
	fi
	delete_pods life-restart
}

# ---- 6. rolling upgrade ------------------------------------------------------------

# roll_once ROUND: one roll of the plugin's DaemonSet with NPU pods created
# throughout; adds to the step's created, failed_adm, reasons and dup.
roll_once() {
	local round=$1 t0 ms i=0 n pods made=0 st failed
	t0=$(now_ms)
	# A change of the pod template, as an upgrade makes one.
	k -n kube-system patch daemonset ascend-device-plugin --type=merge \
		-p '{"spec":{"template":{"metadata":{"annotations":{"e2e/rolled":"'"$t0"'"}}}}}' >/dev/null
	# Pods asking for NPUs keep coming while the plugin rolls, one per node in
	# turn, fewer than the two nodes' 16 chips: a slow roll must not leave pods
	# Pending for want of chips, each of which the wait below would sit out.
	k -n kube-system rollout status daemonset/ascend-device-plugin --timeout=300s >"$tmp/rollout" 2>&1 &
	local rpid=$!
	while kill -0 "$rpid" 2>/dev/null && ((i < 14)); do
		n=$(( (i % 2) + 1 ))
		npu_pod "roll-$round-$i" "$(cluster_node_name "$n")" 1 "" Never | k apply -f - >/dev/null && made=$((made + 1))
		i=$((i + 1))
		# Paced by the API server's answer to this list, not by a sleep.
		k get pods -l e2e=npu -o name >/dev/null
	done
	st=0
	wait "$rpid" || st=$?
	ms=$(($(now_ms) - t0))
	((st == 0)) || fail "6. roll $round: rollout status" "$(cat "$tmp/rollout")"
	for n in "$N1" "$N2"; do
		wait_capacity "$n" 8 || fail "6. roll $round: capacity back on $n" "$(capacity "$n")"
	done
	# Every pod that was created: Running, or failed admission, and why.
	for ((i = 0; i < made; i++)); do
		k wait --for=jsonpath='{.status.phase}'=Running "pod/roll-$round-$i" --timeout=30s >/dev/null 2>&1 || true
	done
	pods=$(k get pods -l e2e=npu -o json | jq -r '.items[] | select(.metadata.name | startswith("roll-"))
		| "\(.metadata.name) \(.status.phase) \(.status.reason // "-") \(.status.message // "" | gsub("\n"; " "))"')
	failed=$(awk '$2 == "Failed"' <<<"$pods" | wc -l)
	reasons+=$(awk '$2 == "Failed" { $1 = ""; $2 = ""; print }' <<<"$pods")
	running=$((running + $(awk '$2 == "Running"' <<<"$pods" | wc -l)))
	figure rollout "roll $round: the DaemonSet rolled in $ms ms, $made NPU pods created meanwhile, $failed failed admission"
	for n in "$N1" "$N2"; do
		no_double "$n" || { dup=1; held "$n"; }
	done
	created=$((created + made)) failed_adm=$((failed_adm + failed))
	k delete pods -l e2e=npu --wait=true --timeout="$WAIT" >/dev/null 2>&1
}

# Five rolls of a surge roll (maxSurge 1, maxUnavailable 0): the new pod of
# a node registers on its own socket beside the old one, so that the kubelet
# has a plugin throughout and admits every pod.
step_rollout() {
	local created=0 failed_adm=0 reasons='' running=0 dup=0 r
	for r in 1 2 3 4 5; do
		roll_once "$r"
	done
	if ((failed_adm == 0)); then
		pass "6. 5 surge rolls of the plugin with $created NPU pods created throughout: none failed admission"
	else
		fail "6. pods failed admission during the rolls" "$failed_adm of $created: $(sort <<<"$reasons" | uniq -c | head -n 3)"
	fi
	((dup == 0)) && pass "6. during and after the rolls no chip is held by two running pods" ||
		fail "6. no chip held twice" "a chip was held twice (above)"
	((running > 0)) && pass "6. $running pods created during the rolls ran with their chips" ||
		fail "6. pods created during the rolls run" "none ran"
	# Each node's new pod serves on a socket of its own.
	local sock
	sock=$(find "$(cluster_node_dir 1)/var/lib/kubelet/device-plugins" -maxdepth 1 -name 'ascend-npu@*.sock' -printf '%f ')
	[ "$(wc -w <<<"$sock")" = 1 ] && pass "6. the plugin serves on its pod's own socket: $sock" ||
		fail "6. one instance socket on node 1" "$sock"
}

# ---- 7. sharing and isolation ---------------------------------------------------------

config_yaml() { # REPLICAS
	cat <<EOF
apiVersion: v1
kind: ConfigMap
metadata:
  name: ascend-device-plugin-config
  namespace: kube-system
data:
  config.yaml: |
    version: v1
    flags:
      healthInterval: 5s
      logLevel: info
    resources:
    - family: 310P
      name: ascend.com/npu-310p
    sharing:
      timeSlicing:
        resources:
        - name: ascend.com/npu
          replicas: $1
EOF
}

step_sharing() {
	local t0 ms uid pod got
	check "7. kubectl apply -k deploy/overlays/config" k apply -k "$root/deploy/overlays/config"
	k -n kube-system rollout status daemonset/ascend-device-plugin --timeout="$WAIT" >/dev/null
	t0=$(now_ms)
	config_yaml 4 >"$tmp/config.yaml"
	check "7. kubectl apply of the ConfigMap: time-slicing ascend.com/npu x4, ascend.com/npu-310p for the 310P chips" \
		k apply -f "$tmp/config.yaml"
	if wait_capacity "$N1" 32 && wait_capacity "$N2" 32; then
		ms=$(($(now_ms) - t0))
		pass "7. $N1 and $N2: ascend.com/npu capacity 32 (8 chips x 4 replicas)"
		figure sharing "ConfigMap edit -> capacity 32 in $ms ms (the kubelet's ConfigMap volume update)"
	else
		fail "7. capacity 32" "$(capacity "$N1") $(capacity "$N2")"
	fi
	if wait_capacity "$N3" 12 && wait_capacity "$N3" 2 ascend.com/npu-310p && wait_capacity "$N3" 2 ascend.com/npu-vir04-3c; then
		pass "7. $N3: ascend.com/npu 12 (chips 1-3 x 4), ascend.com/npu-310p 2, ascend.com/npu-vir04-3c 2"
	else
		fail "7. $N3's per-family names" "npu $(capacity "$N3"), 310p $(capacity "$N3" ascend.com/npu-310p), vir04-3c $(capacity "$N3" ascend.com/npu-vir04-3c)"
	fi
	# Edited again: no restart of the plugin pod.
	pod=$(plugin_pod "$N1")
	uid=$(k -n kube-system get pod "$pod" -o jsonpath='{.metadata.uid}')
	t0=$(now_ms)
	config_yaml 2 | k apply -f - >/dev/null
	if wait_capacity "$N1" 16 && [ "$(k -n kube-system get pod "$pod" -o jsonpath='{.metadata.uid} {.status.containerStatuses[0].restartCount}')" = "$uid 0" ]; then
		pass "7. the ConfigMap edited to 2 replicas: capacity 16, the plugin pod $pod neither replaced nor restarted"
		figure sharing "second ConfigMap edit -> capacity 16 in $(($(now_ms) - t0)) ms"
	else
		fail "7. a second edit applies without a restart" "capacity $(capacity "$N1")"
	fi
	# Two pods share one chip's replicas; a vNPU and a 310P chip on node 3.
	if run_npu_pod share-vnpu "$N3" 1 ascend.com/npu-vir04-3c; then
		got=$(k exec share-vnpu -- sh -c 'echo $ASCEND_VISIBLE_DEVICES; ls /dev | grep davinci')
		grep -qE '^10[01]$' <<<"$(head -n 1 <<<"$got")" && grep -qE '^davinci10[01]$' <<<"$got" &&
			pass "7. a pod asking for ascend.com/npu-vir04-3c gets vNPU $(head -n 1 <<<"$got") as /dev/davinci$(head -n 1 <<<"$got")" ||
			fail "7. the vNPU pod" "$got"
	else
		fail "7. a pod asking for a vNPU" "$(k describe pod share-vnpu | tail -n 5)"
	fi
	if run_npu_pod share-310p "$N3" 1 ascend.com/npu-310p; then
		got=$(pod_devices share-310p)
		[[ $got == 4 || $got == 5 ]] && pass "7. a pod asking for ascend.com/npu-310p gets 310P chip $got" ||
			fail "7. the 310P pod" "$got"
	else
		fail "7. a pod asking for ascend.com/npu-310p" "$(k describe pod share-310p | tail -n 5)"
	fi
	delete_pods share-vnpu share-310p
	# Back to the base for what follows.
	k apply -k "$root/deploy" >/dev/null && k -n kube-system delete configmap ascend-device-plugin-config >/dev/null
	k -n kube-system rollout status daemonset/ascend-device-plugin --timeout="$WAIT" >/dev/null
	wait_capacity "$N1" 8 || fail "7. back to 8" "$(capacity "$N1")"
}

# ---- 8. CDI ----------------------------------------------------------------------------

step_cdi() {
	local native cdi spec
	run_npu_pod cdi-native "$N1" 2 || { fail "8. a pod before CDI" "not Ready"; return; }
	native=$(inspect cdi-native | grep -v '^env=' | sed 's#/dev/davinci[0-9]* #/dev/davinciN #' | sort)
	delete_pods cdi-native
	check "8. kubectl apply -k deploy/overlays/cdi" k apply -k "$root/deploy/overlays/cdi"
	k -n kube-system rollout status daemonset/ascend-device-plugin --timeout="$WAIT" >/dev/null
	wait_alloc "$N1" 8
	if run_npu_pod cdi-pod "$N1" 2; then
		spec=$(ls "$(cluster_node_dir 1)/var/run/cdi/")
		cdi=$(inspect cdi-pod | grep -v '^env=' | sed 's#/dev/davinci[0-9]* #/dev/davinciN #' | sort)
		check_devices "8. with --device-list-strategy=cdi (containerd $("$bin/containerd" --version | awk '{print $3}') applied $spec)" cdi-pod 2
		[ "$native" = "$cdi" ] && pass "8. the CDI pod sees exactly what the native strategy gives" ||
			fail "8. CDI = native" "native: $native; cdi: $cdi"
		# The plugin answered with CDI names only, no device specs of its
		# own: its Allocate answer, as the kubelet checkpointed it.
		local uid resp
		uid=$(k get pod cdi-pod -o jsonpath='{.metadata.uid}')
		resp=$(jq -r --arg uid "$uid" '.Data.PodDeviceEntries[] | select(.PodUID == $uid) | .AllocResp' \
			"$(cluster_node_dir 1)/var/lib/kubelet/device-plugins/kubelet_internal_checkpoint" | base64 -d | tr -c '[:print:]' ' ')
		if grep -q 'ascend.com/npu=[0-9]' <<<"$resp" && ! grep -q '/dev/davinci' <<<"$resp"; then
			pass "8. the plugin's Allocate answer (the kubelet's checkpoint) names CDI devices ($(grep -o 'ascend.com/npu=[0-9]*' <<<"$resp" | sort -u | tr '\n' ' ')) and no device node"
		else
			fail "8. a CDI-only Allocate answer" "$resp"
		fi
	else
		fail "8. a pod through CDI" "$(k describe pod cdi-pod | tail -n 8)"
	fi
	delete_pods cdi-pod
	k apply -k "$root/deploy" >/dev/null
	k -n kube-system rollout status daemonset/ascend-device-plugin --timeout="$WAIT" >/dev/null
}

# ---- 9. metrics ---------------------------------------------------------------------------

step_metrics() {
	local pod out deadline ok=false
	run_npu_pod metrics-pod "$N1" 1 || { fail "9. a pod holding a chip" "not Ready"; return; }
	pod=$(plugin_pod "$N1")
	deadline=$(($(now_ms) + 60000))
	# The plugin lists pod resources every telemetry interval (15 s).
	while (($(now_ms) < deadline)); do
		out=$(k get --raw "/api/v1/namespaces/kube-system/pods/$pod:8084/proxy/metrics" 2>&1) || true
		if grep -q 'namespace="default",pod="metrics-pod",container="main"' <<<"$out"; then
			ok=true
			break
		fi
		k -n kube-system logs "$pod" --tail=1 -f --since=1s >/dev/null 2>&1 & local lp=$!
		# Woken by the plugin's next log line or after 5 s.
		timeout 5 tail --pid="$lp" -f /dev/null 2>/dev/null
		kill "$lp" 2>/dev/null
	done
	if $ok; then
		pass "9. /metrics of $pod (through the API server's pod proxy) labels the chip with namespace, pod and container of metrics-pod: $(grep 'pod="metrics-pod"' <<<"$out" | head -n 1)"
	else
		fail "9. metrics carry the pod's labels" "$(grep -m3 'pod=' <<<"$out")"
	fi
	if command -v promtool >/dev/null; then
		printf '%s\n' "$out" >"$tmp/metrics"
		check "9. promtool check metrics finds nothing" promtool check metrics <"$tmp/metrics"
	else
		fail "9. promtool" "not installed (scripts/deps.sh metrics)"
	fi
	delete_pods metrics-pod
}

# ---- 10. DRA ---------------------------------------------------------------------------

readonly DRA=npu.ascend.com
# The node moved to the DRA driver: node 2, eight 910B3 (one HCCS mesh) on
# cards 0-3 and 8-11. The mixed node 3 has no interconnect group (its chips
# are of two families), so the ring example could not run there.
readonly DK=2
ND=$(cluster_node_name $DK)
# The devices of the DRA node's pool as "name physicalID product interconnectGroup
# taint" lines, read from its ResourceSlices.
dra_devices() {
	k get resourceslices --field-selector "spec.nodeName=$ND,spec.driver=$DRA" -o json |
		jq -r '.items[].spec.devices[]? | "\(.name) \(.attributes.physicalID.int) \(.attributes.product.string // "-") \(.attributes.interconnectGroup.string // "-") \([.taints[]? | "\(.key)=\(.value):\(.effect)"] | join(",") | if . == "" then "-" else . end)"' |
		sort -V
}
dra_attr() { dra_devices | awk -v d="$1" -v f="$2" '$1 == d { print $f }'; } # DEVICE FIELD(2-5)
# wait_devices JQ_TEST [MS]: waits (a watch of the slices) until the jq test over
# dra_devices' lines (as a string) holds; prints the lines seen last.
wait_devices() {
	local deadline now
	deadline=$(($(now_ms) + ${2:-30000}))
	while now=$(dra_devices) && ! jq -e -R -s "$1" <<<"$now" >/dev/null && (($(now_ms) < deadline)); do
		# Woken by the next change of a slice, at most 5 s later.
		timeout 5 "$bin/kubectl" --kubeconfig "$(cluster_kubeconfig)" get resourceslices --watch-only -o name 2>/dev/null | head -n 1 >/dev/null
	done
	echo "$now"
}
# The claim a pod's resourceClaims entry NAME became, and what was allocated.
pod_claim() { # POD CLAIM: made from a template, or named by the pod
	local c
	c=$(k get pod "$1" -o jsonpath="{.status.resourceClaimStatuses[?(@.name==\"$2\")].resourceClaimName}")
	[ -n "$c" ] || c=$(k get pod "$1" -o jsonpath="{.spec.resourceClaims[?(@.name==\"$2\")].resourceClaimName}")
	echo "$c"
}
claim_devices() { k get resourceclaim "$1" -o jsonpath='{.status.allocation.devices.results[*].device}'; } # CLAIM
claim_uid() { k get resourceclaim "$1" -o jsonpath='{.metadata.uid}'; }
cdi_spec() { echo "$(cluster_node_dir $DK)/var/run/cdi/$DRA-claim_$1.json"; } # CLAIM_UID
# wait_file FILE: FILE exists within 60 s (woken by changes of its directory).
wait_file() {
	local deadline
	deadline=$(($(now_ms) + 60000))
	until [ -e "$1" ]; do
		(($(now_ms) < deadline)) || return 1
		inotifywait -qq -t 1 -e create,moved_to "$(dirname "$1")" >/dev/null 2>&1 || true
	done
}
# physical ids of DEVICES... on the DRA node, sorted, comma-separated
phys_of() {
	local d
	for d in "$@"; do dra_attr "$d" 2; done | sort -n | paste -sd, -
}
# dra_pod_check WHAT POD CLAIM [CONTAINER]: POD runs on the DRA node and CONTAINER
# sees exactly the chips of its claim CLAIM (ASCEND_VISIBLE_DEVICES, its
# /dev/davinciN and no other), through containerd's CDI.
dra_pod_check() {
	local what=$1 pod=$2 claim devs phys n env
	claim=$(pod_claim "$pod" "$3")
	devs=$(claim_devices "$claim")
	# shellcheck disable=SC2086
	phys=$(phys_of $devs)
	n=$(wc -w <<<"$devs")
	[ "$(k get pod "$pod" -o jsonpath='{.spec.nodeName}')" = "$ND" ] || { fail "$what" "not on $ND: $(k get pod "$pod" -o wide)"; return 1; }
	env=$(pod_devices "$pod" "${4:-$(k get pod "$pod" -o jsonpath='{.spec.containers[0].name}')}" | tr ',' '\n' | sort -n | paste -sd, -)
	if [ -n "$phys" ] && [ "$env" = "$phys" ]; then
		check_devices "$what: claim $claim allocated $devs (physicalID $phys) on $ND; the container" "$pod" "$n" ${4:+"$4"}
	else
		fail "$what" "claim $claim: devices '$devs' (physicalID '$phys'), the container's ASCEND_VISIBLE_DEVICES '$env'"
		return 1
	fi
}
slice_yaml() { # NAME NODE: a ResourceSlice of NODE's pool
	cat <<EOF
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: $1}
spec:
  driver: $DRA
  nodeName: $2
  pool: {name: $2, generation: 1, resourceSliceCount: 1}
  devices: [{name: npu-99}]
EOF
}
# claim_pod NAME NODE CLAIM: a busybox pod on NODE whose container uses the
# ResourceClaim CLAIM.
claim_pod() {
	cat <<EOF
apiVersion: v1
kind: Pod
metadata: {name: $1}
spec:
  nodeSelector: {kubernetes.io/hostname: $2}
  tolerations: [{key: ascend.com/npu, operator: Exists, effect: NoSchedule}]
  terminationGracePeriodSeconds: 1
  resourceClaims: [{name: npu, resourceClaimName: $3}]
  containers:
  - {name: main, image: $E2E_BUSYBOX_IMAGE, command: [sleep, infinity], resources: {claims: [{name: npu}]}}
EOF
}
# The status the kubelet gives a pod's claimed devices:
# "claim:npu: npu.ascend.com/npu-node-2/npu-3=Unhealthy".
dra_resource_health() { # POD
	k get pod "$1" -o json | jq -r '[.status.containerStatuses[0].allocatedResourcesStatus[]?
		| "\(.name): " + ([.resources[]? | "\(.resourceID)=\(.health)"] | join(" "))] | join("; ")'
}
dra_driver_pod() { k -n kube-system get pods -l name=ascend-dra-driver --field-selector "spec.nodeName=$ND" -o jsonpath='{.items[0].metadata.name}'; }

# A pod on the DRA node with a claim of one chip from the template dra-roll.
dra_roll_pod() { # NAME
	cat <<EOF
apiVersion: v1
kind: Pod
metadata: {name: $1, labels: {e2e: dra-roll}}
spec:
  nodeSelector: {kubernetes.io/hostname: $ND}
  tolerations: [{key: ascend.com/npu, operator: Exists, effect: NoSchedule}]
  terminationGracePeriodSeconds: 1
  restartPolicy: Never
  resourceClaims: [{name: npu, resourceClaimTemplateName: dra-roll}]
  containers:
  - {name: main, image: $E2E_BUSYBOX_IMAGE, command: [sleep, infinity], resources: {claims: [{name: npu}]}}
EOF
}

# Five surge rolls of the DRA driver, each with pods whose claims are
# prepared while it rolls: the new pod registers on sockets of its own
# beside the old one and shares its checkpoint, so the kubelet always has a
# driver to prepare with: every pod runs, and no prepare fails.
dra_rolls() {
	local r i made created=0 failed=0 running=0 pods t0 ms prep_failed
	k apply -f - >/dev/null <<EOF
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: dra-roll}
spec: {spec: {devices: {requests: [{name: npu, exactly: {deviceClassName: $DRA}}]}}}
EOF
	for r in 1 2 3 4 5; do
		t0=$(now_ms) made=0 i=0
		k -n kube-system rollout restart daemonset/ascend-dra-driver >/dev/null
		k -n kube-system rollout status daemonset/ascend-dra-driver --timeout=300s >"$tmp/dra-rollout" 2>&1 &
		local rpid=$!
		while kill -0 "$rpid" 2>/dev/null && ((i < 6)); do
			dra_roll_pod "dra-roll-$r-$i" | k apply -f - >/dev/null && made=$((made + 1))
			i=$((i + 1))
			k get pods -l e2e=dra-roll -o name >/dev/null
		done
		wait "$rpid" || fail "10r. roll $r: rollout status" "$(cat "$tmp/dra-rollout")"
		ms=$(($(now_ms) - t0))
		for ((i = 0; i < made; i++)); do
			k wait --for=jsonpath='{.status.phase}'=Running "pod/dra-roll-$r-$i" --timeout=60s >/dev/null 2>&1 || true
		done
		pods=$(k get pods -l e2e=dra-roll -o json | jq -r '.items[] | "\(.metadata.name) \(.status.phase) \(.status.reason // "-")"')
		failed=$((failed + $(awk '$2 == "Failed"' <<<"$pods" | wc -l)))
		running=$((running + $(awk '$2 == "Running"' <<<"$pods" | wc -l)))
		created=$((created + made))
		figure dra "roll $r of the driver in $ms ms, $made claim pods created meanwhile: $(awk '{print $2}' <<<"$pods" | sort | uniq -c | tr -s ' \n' ' ')"
		k delete pods -l e2e=dra-roll --wait=true --timeout="$WAIT" >/dev/null 2>&1
	done
	k delete resourceclaimtemplate dra-roll --ignore-not-found >/dev/null 2>&1
	((failed == 0 && running == created && created > 0)) &&
		pass "10r. 5 surge rolls of the DRA driver with $created claim pods created throughout: all ran, none failed" ||
		fail "10r. claim pods during the driver's rolls" "$running of $created ran, $failed failed"
	# The kubelet prefers a registration whose connection is up, so a
	# prepare in the instant the old pod leaves may still go to it, fail and
	# be retried: counted, not asserted (docs/upgrade.md).
	prep_failed=$(k get events -o json | jq '[.items[] | select(.reason == "FailedPrepareDynamicResources"
		and (.involvedObject.name | startswith("dra-roll-")))] | length')
	figure dra "$prep_failed prepares of the $created claim pods failed once during the rolls and were retried"
}

step_dra() {
	local f out t0 ms pod claim uid devs chip before tok server
	# a. The objects of deploy/dra and examples/dra, validated by the API
	# server itself (kubernetes-models has no resource.k8s.io schema: check.cjs).
	for f in "$root"/deploy/dra "$root"/tests/cluster/dra; do
		check "10a. kubectl apply --dry-run=server --validate=strict -k ${f#"$root"/}" \
			k apply --dry-run=server --validate=strict -k "$f"
	done
	for f in "$root"/examples/dra/*.yaml; do
		example "dra/${f##*/}" >"$tmp/dra-${f##*/}"
		check "10a. kubectl apply --dry-run=server --validate=strict -f examples/dra/${f##*/}" \
			k apply --dry-run=server --validate=strict -f "$tmp/dra-${f##*/}"
	done

	# b. Node 2 moves from the device plugin to the DRA driver.
	t0=$(now_ms)
	check "10b. kubectl label node $ND npu- npu-dra=true" k label node "$ND" npu- npu-dra=true
	k -n kube-system wait --for=delete pod -l name=ascend-device-plugin --field-selector "spec.nodeName=$ND" --timeout="$WAIT" >/dev/null 2>&1
	check "10b. kubectl apply -k tests/cluster/dra (deploy/dra/ with the test cluster's image and API server address)" \
		k apply -k "$root/tests/cluster/dra"
	check "10b. kubectl -n kube-system rollout status daemonset/ascend-dra-driver" \
		k -n kube-system rollout status daemonset/ascend-dra-driver --timeout="$WAIT"
	# The test overlay's reason (tests/cluster/dra/kustomization.yaml).
	if ! cluster_in_netns ip route get 10.96.0.1 >/dev/null 2>&1 &&
		grep -q "value: \"$CLUSTER_CP_IP\"" "$root/tests/cluster/dra/patch-driver.yaml"; then
		pass "10b. the kubernetes Service's ClusterIP $(k get service kubernetes -o jsonpath='{.spec.clusterIP}') is routed nowhere (no kube-proxy): the test overlay points the driver at $CLUSTER_CP_IP:6443"
	else
		fail "10b. the test overlay's API server address" "10.96.0.1 is routed, or patch-driver.yaml does not name $CLUSTER_CP_IP"
	fi
	out=$(k -n kube-system get pods -o wide --no-headers | awk '$1 ~ /^ascend-(device-plugin|dra-driver)-/ { print $1, $3, $7 }')
	if [ "$(grep -c "Running $ND$" <<<"$out")" = 1 ] && grep -q "^ascend-dra-driver-.* Running $ND$" <<<"$out" &&
		[ "$(grep -c '^ascend-device-plugin-.* Running' <<<"$out")" = 2 ]; then
		pass "10b. $ND runs the DRA driver only, $N1 and $N3 the device plugin: $(tr '\n' ';' <<<"$out")"
	else
		fail "10b. one front end per node" "$out"
	fi
	if k get deviceclasses -o name | sort | tr '\n' ' ' | grep -q 'deviceclass.resource.k8s.io/310p.npu.ascend.com deviceclass.resource.k8s.io/910b.npu.ascend.com deviceclass.resource.k8s.io/a3.npu.ascend.com deviceclass.resource.k8s.io/npu.ascend.com'; then
		pass "10b. kubectl get deviceclasses: $(k get deviceclasses -o name | sed 's#.*/##' | tr '\n' ' ')"
	else
		fail "10b. the DeviceClasses" "$(k get deviceclasses 2>&1)"
	fi
	out=$(wait_devices 'split("\n") | map(select(. != "")) | length > 0' "${WAIT%s}000")
	figure dra "label and apply -> node $DK's ResourceSlices in $(($(now_ms) - t0)) ms"
	echo "    kubectl get resourceslices --field-selector spec.nodeName=$ND (name physicalID product interconnectGroup taints):"
	sed 's/^/    /' <<<"$out"
	local want
	want=$(k get resourceslices --field-selector "spec.nodeName=$ND,spec.driver=$DRA" -o json |
		jq -r '[.items[].spec.devices[] | select(.attributes.family.string and .attributes.physicalID.int != null
			and .attributes.logicID.int != null and .attributes.interconnectGroup.string
			and .attributes.firmwareVersion.string == "7.1.0.11.220"
			and .capacity.memory.value and .capacity.aiCores.value)] | length')
	if [ -n "$out" ] && [ "$want" = "$(wc -l <<<"$out")" ]; then
		pass "10b. $ND's ResourceSlices list $want chips, each with family, product, physicalID, logicID, interconnectGroup, firmwareVersion (the node's firmware/version.info), memory and aiCores: $(awk '{print $1 "=" $3}' <<<"$out" | tr '\n' ' ')"
	else
		fail "10b. $ND's ResourceSlices with the attributes" "$want of $(wc -l <<<"$out") devices complete: $(k get resourceslices -o yaml 2>&1 | head -n 60)"
	fi
	k get resourceslices --field-selector "spec.nodeName=$ND" -o json | jq -c '.items[0].spec.devices[0]' | sed 's/^/    first device: /'

	# c. The driver's RBAC and admission policy: its token may write only
	# its own node's slices.
	pod=$(dra_driver_pod)
	server=https://127.0.0.1:$CLUSTER_PORT
	tok=$(k -n kube-system create token ascend-dra-driver --bound-object-kind=Pod --bound-object-name="$pod" --duration=10m)
	kt() { "$bin/kubectl" --kubeconfig=/dev/null --server="$server" --certificate-authority="$CLUSTER_DIR/pki/ca.crt" --token="$1" "${@:2}"; }
	slice_yaml e2e-own "$ND" >"$tmp/slice-own.yaml"
	slice_yaml e2e-other "$N1" >"$tmp/slice-other.yaml"
	if out=$(kt "$tok" create --dry-run=server -f "$tmp/slice-own.yaml" 2>&1); then
		pass "10c. the driver pod's token (bound to $pod on $ND) may create a slice of $ND: $out"
	else
		fail "10c. the driver's token writes its own node's slice" "$out"
	fi
	if out=$(kt "$tok" create --dry-run=server -f "$tmp/slice-other.yaml" 2>&1); then
		fail "10c. a slice of $N1 with the token of $ND's driver is denied" "$out"
	else
		grep -q "may not write the slices of node $N1" <<<"$out" && pass "10c. the same token for a slice of $N1: $out" ||
			fail "10c. denied by the admission policy" "$out"
	fi
	tok=$(k -n kube-system create token ascend-dra-driver --duration=10m)
	if out=$(kt "$tok" create --dry-run=server -f "$tmp/slice-own.yaml" 2>&1); then
		fail "10c. a token bound to no pod is denied" "$out"
	else
		grep -q 'names no node' <<<"$out" && pass "10c. a token of the ServiceAccount bound to no pod: $out" ||
			fail "10c. denied for want of a node" "$out"
	fi
	out=$(k create --dry-run=server -f "$tmp/slice-other.yaml" --as=system:serviceaccount:kube-system:ascend-dra-driver \
		--as-user-extra=authentication.kubernetes.io/node-name="$ND" 2>&1) &&
		fail "10c. impersonated driver of $ND writing $N1's slice" "$out" ||
		{ grep -q "may not write the slices of node $N1" <<<"$out" && pass "10c. kubectl --as the driver with node-name $ND for a slice of $N1: $out" || fail "10c. impersonated" "$out"; }
	# What the ServiceAccount may do beyond what every authenticated user may.
	out=$(k auth can-i --as=system:serviceaccount:kube-system:ascend-dra-driver --list 2>&1 |
		awk '$1 ~ /^(resourceslices|resourceclaims|nodes|pods|secrets)/ { v = $0; sub(/^[^[]*\[\][ ]+\[\][ ]+/, "", v); print $1, v }' | sort)
	if [ "$out" = "nodes [get]
resourceclaims.resource.k8s.io [get]
resourceslices.resource.k8s.io [get list create update delete]" ]; then
		pass "10c. kubectl auth can-i --list as the driver: exactly $(tr '\n' ';' <<<"$out")"
	else
		fail "10c. the driver's RBAC is what it uses" "$out"
	fi

	# d. One chip.
	example dra/npu-claim-1.yaml >"$tmp/dra-1.yaml"
	t0=$(now_ms)
	check "10d. kubectl apply -f examples/dra/npu-claim-1.yaml" k apply -f "$tmp/dra-1.yaml"
	if k wait --for=condition=Ready pod/dra-npu-1 --timeout="$WAIT" >/dev/null; then
		figure dra "npu-claim-1.yaml apply -> Ready in $(($(now_ms) - t0)) ms"
		dra_pod_check "10d. dra-npu-1" dra-npu-1 npu
		echo "    kubectl logs dra-npu-1:"
		k logs dra-npu-1 | sed 's/^/    /'
	else
		fail "10d. dra-npu-1 Ready" "$(k describe pod dra-npu-1 | tail -n 15)"
	fi
	claim=$(pod_claim dra-npu-1 npu)
	uid=$(claim_uid "$claim")

	# e. Side by side: a pod through the device plugin on node 1.
	if run_npu_pod dp-beside "$N1" 1 && [ "$(k get pod dra-npu-1 -o jsonpath='{.status.phase}')" = Running ]; then
		pass "10e. side by side: dp-beside on $N1 through the device plugin (ASCEND_VISIBLE_DEVICES=$(pod_devices dp-beside)) and dra-npu-1 on $ND through DRA, both Running"
	else
		fail "10e. a device-plugin pod beside the DRA pod" "$(k get pods -o wide)"
	fi
	delete_pods dp-beside

	# f. Two chips in one interconnect group.
	example dra/npu-claim-ring.yaml >"$tmp/dra-ring.yaml"
	check "10f. kubectl apply -f examples/dra/npu-claim-ring.yaml" k apply -f "$tmp/dra-ring.yaml"
	if k wait --for=condition=Ready pod/dra-npu-ring --timeout="$WAIT" >/dev/null; then
		dra_pod_check "10f. dra-npu-ring" dra-npu-ring npus
		devs=$(claim_devices "$(pod_claim dra-npu-ring npus)")
		# shellcheck disable=SC2086
		out=$(for f in $devs; do dra_attr "$f" 4; done | sort -u)
		[ "$(wc -l <<<"$out")" = 1 ] && [ "$out" != - ] && pass "10f. both chips ($devs) in interconnectGroup $out" ||
			fail "10f. one interconnect group" "$devs: $out"
	else
		fail "10f. dra-npu-ring Ready" "$(k describe pod dra-npu-ring | tail -n 15)"
	fi

	# g. A 910B3 with at least 64 GiB (CEL).
	example dra/npu-claim-hbm.yaml >"$tmp/dra-hbm.yaml"
	check "10g. kubectl apply -f examples/dra/npu-claim-hbm.yaml" k apply -f "$tmp/dra-hbm.yaml"
	if k wait --for=condition=Ready pod/dra-npu-hbm --timeout="$WAIT" >/dev/null; then
		devs=$(claim_devices "$(pod_claim dra-npu-hbm npu)")
		dra_pod_check "10g. dra-npu-hbm" dra-npu-hbm npu &&
			{ [ "$(dra_attr "$devs" 3)" = 910B3 ] && pass "10g. the CEL selector chose $devs, a $(dra_attr "$devs" 3) with $(k get resourceslices --field-selector "spec.nodeName=$ND" -o json | jq -r --arg d "$devs" '.items[].spec.devices[] | select(.name == $d) | .capacity.memory.value') HBM" ||
				fail "10g. a 910B3" "$devs is $(dra_attr "$devs" 3)"; }
	else
		fail "10g. dra-npu-hbm Ready" "$(k describe pod dra-npu-hbm | tail -n 15)"
	fi

	# h. One claim, two containers.
	example dra/npu-claim-shared.yaml >"$tmp/dra-shared.yaml"
	check "10h. kubectl apply -f examples/dra/npu-claim-shared.yaml" k apply -f "$tmp/dra-shared.yaml"
	if k wait --for=condition=Ready pod/dra-npu-shared --timeout="$WAIT" >/dev/null; then
		dra_pod_check "10h. dra-npu-shared (server)" dra-npu-shared npu server
		local a b
		a=$(pod_devices dra-npu-shared server)
		b=$(pod_devices dra-npu-shared sidecar)
		[ -n "$a" ] && [ "$a" = "$b" ] && pass "10h. both containers of dra-npu-shared see chip $a (claim npu-shared, $(claim_devices npu-shared))" ||
			fail "10h. the same chip in both containers" "server $a, sidecar $b"
	else
		fail "10h. dra-npu-shared Ready" "$(k describe pod dra-npu-shared | tail -n 15)"
	fi
	k delete -f "$tmp/dra-ring.yaml" -f "$tmp/dra-hbm.yaml" -f "$tmp/dra-shared.yaml" --wait=true --timeout="$WAIT" >/dev/null 2>&1

	# i. More chips than the node has: Pending, with the scheduler's reason.
	k apply -f - >/dev/null <<EOF
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: npu-9}
spec:
  spec:
    devices:
      requests:
      - {name: npu, exactly: {deviceClassName: $DRA, count: 9}}
---
apiVersion: v1
kind: Pod
metadata: {name: dra-too-many}
spec:
  tolerations: [{key: ascend.com/npu, operator: Exists, effect: NoSchedule}]
  terminationGracePeriodSeconds: 1
  resourceClaims: [{name: npu, resourceClaimTemplateName: npu-9}]
  containers:
  - {name: main, image: $E2E_BUSYBOX_IMAGE, command: [sleep, infinity], resources: {claims: [{name: npu}]}}
EOF
	if k wait --for=condition=PodScheduled=false pod/dra-too-many --timeout="$WAIT" >/dev/null &&
		[ -z "$(k get pod dra-too-many -o jsonpath='{.spec.nodeName}')" ]; then
		out=$(k get pod dra-too-many -o jsonpath='{.status.conditions[?(@.type=="PodScheduled")].message}')
		grep -q 'cannot allocate all claims' <<<"$out" && pass "10i. a claim for 9 chips stays Pending: $out" ||
			fail "10i. the scheduler's reason names the claim" "$out"
	else
		fail "10i. a claim for 9 chips stays Pending" "$(k get pod dra-too-many -o wide)"
	fi
	k delete pod dra-too-many --wait=true --timeout="$WAIT" >/dev/null 2>&1
	k delete resourceclaimtemplate npu-9 >/dev/null 2>&1

	# j. A chip fault taints its device; recovery removes the taint.
	# The chip dra-npu-1 holds: NoSchedule keeps new claims off it and
	# leaves the pod running.
	chip=$(dra_attr "$(claim_devices "$claim")" 2)
	t0=$(now_ms)
	if [[ ! $chip =~ ^[0-9]+$ ]]; then
		fail "10j. a chip fault" "dra-npu-1 holds no chip"
	elif node_set_chip_health "$(cluster_node_dir $DK)" "$chip" 3 80E01801; then
		out=$(wait_devices "split(\"\n\") | map(select(startswith(\"npu-$chip \"))) | .[0] | test(\"npu.ascend.com/unhealthy=.*:NoSchedule\")")
		if grep -q "^npu-$chip .*npu.ascend.com/unhealthy=.*:NoSchedule$" <<<"$out"; then
			ms=$(($(now_ms) - t0))
			figure dra "chip fault -> device tainted in its ResourceSlice in $ms ms"
			pass "10j. chip $chip of $ND critical: its device tainted in $ms ms: $(grep "^npu-$chip " <<<"$out")"
		else
			fail "10j. the faulty chip tainted" "$out"
		fi
		# The driver's health stream (NodeWatchResources): the kubelet
		# shows the pod that holds the chip its device Unhealthy.
		if k wait --for=jsonpath='{.status.containerStatuses[0].allocatedResourcesStatus[0].resources[0].health}'=Unhealthy \
			pod/dra-npu-1 --timeout=30s >/dev/null; then
			pass "10j. pod dra-npu-1's allocatedResourcesStatus through the driver's health stream: $(dra_resource_health dra-npu-1)"
		else
			fail "10j. dra-npu-1's allocatedResourcesStatus shows the chip Unhealthy" "$(dra_resource_health dra-npu-1)"
		fi
		t0=$(now_ms)
		node_set_chip_health "$(cluster_node_dir $DK)" "$chip" 0 "" || fail "10j. recovery" "cannot write the state"
		out=$(wait_devices "split(\"\n\") | map(select(startswith(\"npu-$chip \"))) | .[0] | endswith(\" -\")")
		if grep -q "^npu-$chip .* -$" <<<"$out"; then
			figure dra "recovery -> taint removed in $(($(now_ms) - t0)) ms"
			pass "10j. recovery: the taint is gone: $(grep "^npu-$chip " <<<"$out")"
		else
			fail "10j. recovery removes the taint" "$out"
		fi
		k wait --for=jsonpath='{.status.containerStatuses[0].allocatedResourcesStatus[0].resources[0].health}'=Healthy \
			pod/dra-npu-1 --timeout=30s >/dev/null &&
			pass "10j. pod dra-npu-1's allocatedResourcesStatus back to $(dra_resource_health dra-npu-1)" ||
			fail "10j. dra-npu-1's allocatedResourcesStatus Healthy again" "$(dra_resource_health dra-npu-1)"
	else
		fail "10j. fault" "cannot write the state"
	fi

	# k. Driver pod restart, kube-apiserver restart, then kubelet restart:
	# the pod keeps its chip, a new claim works, the slices are right.
	before=$(pod_devices dra-npu-1 inference)
	pod=$(dra_driver_pod)
	# The claim's CDI spec goes while the driver pod is replaced (a CDI
	# directory emptied under a running kubelet, which never prepares a
	# claim again once it saw it prepared): the new driver writes it again
	# from its checkpoint, and the pod's container, killed, comes back with
	# its chip.
	rm -f "$(cdi_spec "$uid")"
	k -n kube-system delete pod "$pod" --wait=true --timeout="$WAIT" >/dev/null
	k -n kube-system rollout status daemonset/ascend-dra-driver --timeout="$WAIT" >/dev/null
	if wait_file "$(cdi_spec "$uid")"; then
		pass "10k. the claim's CDI spec, removed while the driver pod was replaced, written again by the new driver: $(k -n kube-system logs "$(dra_driver_pod)" | grep -o 'wrote the CDI specs of .*')"
	else
		fail "10k. the new driver writes the CDI spec of its prepared claim again" "$(ls "$(cluster_node_dir $DK)/var/run/cdi/")"
	fi
	f=$(k get pod dra-npu-1 -o jsonpath='{.status.containerStatuses[0].containerID}')
	"$bin/ctr" --address "$(cluster_node_dir $DK)/containerd/containerd.sock" -n k8s.io task kill -s SIGKILL "${f#containerd://}" >/dev/null 2>&1
	if k wait --for=jsonpath='{.status.containerStatuses[0].restartCount}'=1 pod/dra-npu-1 --timeout="$WAIT" >/dev/null &&
		k wait --for=condition=Ready pod/dra-npu-1 --timeout="$WAIT" >/dev/null &&
		[ "$(pod_devices dra-npu-1 inference)" = "$before" ]; then
		pass "10k. dra-npu-1's container killed (ctr task kill): the kubelet started it again through the CDI spec, chip $before"
	else
		fail "10k. the killed container back with its chip" "$(k describe pod dra-npu-1 | tail -n 8 | tr '\n' ' ')"
	fi
	# The API server goes for a few seconds, and chip 7 faults meanwhile:
	# the driver's publisher fails, says so once, and publishes the
	# current truth (chip 7 tainted) once the server is back.
	pod=$(dra_driver_pod)
	t0=$(now_ms)
	_cl_stop kube-apiserver 10000
	node_set_chip_health "$(cluster_node_dir $DK)" 7 3 80E01801 || fail "10k. a fault while the API server is away" "cannot write the state"
	if cluster_apiserver_start "$bin" 6443 2379; then
		pass "10k. kube-apiserver stopped, chip 7 of $ND faulted meanwhile, kube-apiserver ready again in $(($(now_ms) - t0)) ms"
	else
		fail "10k. kube-apiserver restart" "$(tail -n 5 "$CLUSTER_DIR/logs/kube-apiserver.log")"
	fi
	# The publisher's backoff doubles up to 30 s while the server is away.
	out=$(wait_devices 'split("\n") | map(select(startswith("npu-7 "))) | .[0] | test("npu.ascend.com/unhealthy=.*:NoSchedule")' 60000)
	if grep -q "^npu-7 .*:NoSchedule$" <<<"$out" &&
		[ "$(k -n kube-system get pod "$pod" -o jsonpath='{.status.containerStatuses[0].restartCount}')" = 0 ]; then
		pass "10k. the driver $pod (not restarted) published the fault once the API server was back: $(grep '^npu-7 ' <<<"$out"); its log: $(k -n kube-system logs "$pod" | grep -E 'cannot publish|works again' | sed 's/^[^ ]* //' | cut -c1-160 | tr '\n' '|')"
	else
		fail "10k. the slices after the kube-apiserver restart" "$(k -n kube-system get pod "$pod" -o wide 2>&1); $out"
	fi
	node_set_chip_health "$(cluster_node_dir $DK)" 7 0 "" || fail "10k. recovery of chip 7" "cannot write the state"
	out=$(wait_devices 'split("\n") | map(select(startswith("npu-7 "))) | .[0] | endswith(" -")')
	grep -q "^npu-7 .* -$" <<<"$out" || fail "10k. chip 7's taint removed" "$out"
	pod=$(dra_driver_pod)
	t0=$(now_ms)
	restart_kubelet $DK
	k wait --for=condition=Ready node/"$ND" --timeout="$WAIT" >/dev/null
	# A restarted kubelet serves exec for a pod once it has taken it in again.
	local deadline
	deadline=$(($(now_ms) + 60000))
	until k exec dra-npu-1 -c inference -- true >/dev/null 2>&1 || (($(now_ms) > deadline)); do
		inotifywait -qq -t 1 -e modify "$CLUSTER_DIR/logs/kubelet-n$DK.log" >/dev/null 2>&1 || true
	done
	# The new kubelet's plugin watcher registers the driver again: the
	# driver's log line for it, against the time the old kubelet was told
	# to stop (as lifecycle's figure for the device plugin).
	f=$(k -n kube-system logs "$pod" | grep 'the kubelet registered DRA driver' | tail -n 1 | cut -d' ' -f1)
	if [ -n "$f" ] && ms=$(($(date -d "$f" +%s%3N) - t0)) && ((ms > 0)); then
		figure dra "kubelet restart -> driver registered again in $ms ms"
	else
		fail "10k. the driver registered again after the kubelet restart" "last registration line: '$f'"
	fi
	if [ "$(k get pod dra-npu-1 -o jsonpath='{.status.phase} {.status.containerStatuses[0].restartCount}')" = "Running 1" ] &&
		[ -n "$before" ] && [ "$(pod_devices dra-npu-1 inference)" = "$before" ]; then
		pass "10k. driver pod replaced, kube-apiserver and $ND's kubelet restarted: dra-npu-1 still Running, restarted only by the kill, chip $before"
	else
		fail "10k. the pod survives the restarts" "$(k get pod dra-npu-1 -o wide); devices $(pod_devices dra-npu-1 inference) (before $before)"
	fi
	sed 's/name: dra-npu-1$/name: dra-npu-1b/' "$tmp/dra-1.yaml" | k apply -f - >/dev/null
	if k wait --for=condition=Ready pod/dra-npu-1b --timeout="$WAIT" >/dev/null &&
		dra_pod_check "10k. after the restarts, a new claim" dra-npu-1b npu; then
		[ "$(pod_devices dra-npu-1b inference)" != "$before" ] &&
			pass "10k. after the restarts a new pod dra-npu-1b gets chip $(pod_devices dra-npu-1b inference), not dra-npu-1's $before" ||
			fail "10k. a chip held twice" "dra-npu-1b got $(pod_devices dra-npu-1b inference)"
	else
		fail "10k. a new claim after the restarts" "$(k describe pod dra-npu-1b | tail -n 15)"
	fi
	# The kubelet deletes its node's slices when it starts: the driver must
	# publish them again.
	out=$(dra_devices)
	[ "$(wc -l <<<"$out")" = 8 ] && pass "10k. after the restarts $ND's ResourceSlices list its 8 chips" ||
		fail "10k. $ND's ResourceSlices after the kubelet restart" "$(k get resourceslices 2>&1 | tr '\n' ' ')"
	delete_pods dra-npu-1b

	# l. Pod deletion unprepares: the claim's CDI spec on node $DK goes.
	if [ -n "$uid" ] && [ -f "$(cdi_spec "$uid")" ]; then
		pass "10l. while dra-npu-1 runs, $ND has its claim's CDI spec ${CLUSTER_DIR}/nodes/n$DK/var/run/cdi/$(basename "$(cdi_spec "$uid")")"
	else
		fail "10l. the claim's CDI spec on $ND" "$(ls "$(cluster_node_dir $DK)/var/run/cdi/")"
	fi
	delete_pods dra-npu-1
	k wait --for=delete "resourceclaim/$claim" --timeout="$WAIT" >/dev/null 2>&1
	if [ ! -e "$(cdi_spec "$uid")" ]; then
		pass "10l. kubectl delete pod dra-npu-1: the claim $claim is gone and so is its CDI spec (left: $(ls "$(cluster_node_dir $DK)/var/run/cdi/" | tr '\n' ' '))"
	else
		fail "10l. unprepared" "$(cdi_spec "$uid") is still there"
	fi
	k delete -f "$tmp/dra-1.yaml" --ignore-not-found >/dev/null 2>&1

	# m. A pod that asks for ascend.com/npu as for the device plugin, on
	# the DRA node: DeviceClass npu.ascend.com's extendedResourceName
	# (DRAExtendedResource, GA in 1.37) has the scheduler make it a claim,
	# and the driver prepares it. The node's own ascend.com/npu is 0 or
	# absent: with --front-end=dra the device plugin never registers.
	if run_npu_pod dra-extended "$ND" 2; then
		claim=$(k get pod dra-extended -o jsonpath='{.status.extendedResourceClaimStatus.resourceClaimName}')
		devs=$(claim_devices "$claim")
		# shellcheck disable=SC2086
		out=$(phys_of $devs)
		if [ -n "$claim" ] && [ "$(wc -w <<<"$devs")" = 2 ] &&
			[ "$(pod_devices dra-extended | tr ',' '\n' | sort -n | paste -sd, -)" = "$out" ]; then
			check_devices "10m. pod dra-extended (limits ascend.com/npu: 2, no claim of its own) on $ND (ascend.com/npu from a device plugin: '$(capacity "$ND")'): the scheduler's claim $claim allocated $devs; the container" dra-extended 2
		else
			fail "10m. the extended-resource claim" "claim '$claim', devices '$devs', the container's $(pod_devices dra-extended)"
		fi
	else
		fail "10m. dra-extended Ready" "$(k describe pod dra-extended | tail -n 15)"
	fi
	delete_pods dra-extended

	# r. Five rolls of the DRA driver with claims prepared throughout.
	dra_rolls

	# n. Back to the device plugin.
	t0=$(now_ms)
	check "10n. kubectl label node $ND npu-dra- npu=true" k label node "$ND" npu-dra- npu=true
	k -n kube-system wait --for=delete pod -l name=ascend-dra-driver --timeout="$WAIT" >/dev/null 2>&1
	if wait_capacity "$ND" 8 && wait_alloc "$ND" 8; then
		pass "10n. $ND back on the device plugin: ascend.com/npu 8 in $(($(now_ms) - t0)) ms, the DRA driver pod gone"
	else
		fail "10n. back on the device plugin" "capacity $(capacity "$ND"), allocatable $(alloc "$ND")"
	fi
	out=$(wait_devices 'split("\n") | map(select(. != "")) | length == 0' 60000)
	[ -z "$out" ] && pass "10n. the kubelet removed $ND's ResourceSlices of $DRA" ||
		fail "10n. $ND's slices after the driver left" "$out"

	step_dra_both
}

# o. One daemon, both front ends, on the mixed node 3 (chip 0 carved into
# two vNPUs, chips 1-3 910B, chips 4-5 310P): --front-end=both
# --dra-chips=0,310P gives the DRA driver chip 0 (its vNPUs) and the 310P
# chips, the device plugin chips 1-3. The DaemonSet is deploy/dra's (as the
# test overlay renders it) with the args, a name and labels of its own and
# the device-plugins mount the device plugin needs, as docs/dra.md says.
step_dra_both() {
	local out t0 pod devs
	k kustomize "$root/tests/cluster/dra" | k create --dry-run=client -o json -f - |
		jq 'select(.kind == "DaemonSet") | .metadata.name = "ascend-npu-both"
			| .spec.selector.matchLabels.name = "ascend-npu-both" | .spec.template.metadata.labels.name = "ascend-npu-both"
			| .spec.template.spec.nodeSelector = {"npu-both": "true"}
			| .spec.template.spec.containers[0].args = ["--front-end=both", "--dra-chips=0,310P",
				"--kubelet-dir=/var/lib/kubelet", "--health-interval=5s", "--config=/etc/ascend-npu-both/config.yaml"]
			| .spec.template.spec.containers[0].volumeMounts += [{name: "device-plugins", mountPath: "/var/lib/kubelet/device-plugins"},
				{name: "config", mountPath: "/etc/ascend-npu-both", readOnly: true}]
			| .spec.template.spec.volumes += [{name: "device-plugins", hostPath: {path: "/var/lib/kubelet/device-plugins", type: "Directory"}},
				{name: "config", configMap: {name: "ascend-npu-both"}}]' \
		>"$tmp/both.json" || { fail "10o. the DaemonSet with --front-end=both" "cannot render it"; return; }
	# The 310P chips time-sliced two ways (their own resource name): each
	# is a device that two claims may share.
	check "10o. kubectl create configmap ascend-npu-both: ascend.com/npu-310p for the 310P chips, time-sliced x2" \
		k -n kube-system create configmap ascend-npu-both --from-literal=config.yaml="version: v1
resources:
  - family: 310P
    name: ascend.com/npu-310p
sharing:
  timeSlicing:
    resources:
      - name: ascend.com/npu-310p
        replicas: 2"
	t0=$(now_ms)
	check "10o. kubectl label node $N3 npu- npu-both=true" k label node "$N3" npu- npu-both=true
	k -n kube-system wait --for=delete pod -l name=ascend-device-plugin --field-selector "spec.nodeName=$N3" --timeout="$WAIT" >/dev/null 2>&1
	check "10o. kubectl apply of deploy/dra's DaemonSet with --front-end=both --dra-chips=0,310P and the device-plugins mount" \
		k apply -f "$tmp/both.json"
	check "10o. kubectl -n kube-system rollout status daemonset/ascend-npu-both" \
		k -n kube-system rollout status daemonset/ascend-npu-both --timeout="$WAIT"
	pod=$(k -n kube-system get pods -l name=ascend-npu-both -o jsonpath='{.items[0].metadata.name}')
	if wait_capacity "$N3" 3 && wait_alloc "$N3" 3; then
		wait_alloc "$N3" 0 ascend.com/npu-vir04-3c 30s
		pass "10o. $N3's device plugin advertises ascend.com/npu 3 (chips 1-3) in $(($(now_ms) - t0)) ms; the vNPUs are the DRA driver's (ascend.com/npu-vir04-3c allocatable $(alloc "$N3" ascend.com/npu-vir04-3c))"
	else
		fail "10o. the device plugin's share of $N3" "capacity $(capacity "$N3"), allocatable $(alloc "$N3")"
	fi
	out=$(k -n kube-system logs "$pod" | grep 'front ends:' | tail -n 1 | sed 's/^[^ ]* *[a-z]* *//')
	[ -n "$out" ] && pass "10o. kubectl logs $pod: $out" || fail "10o. the split logged" "no 'front ends:' line"
	devs=$(ND=$N3 wait_devices 'split("\n") | map(select(. != "")) | length > 0' 60000 | awk '{print $1 "=" $3}' | tr '\n' ' ')
	# Chip 0 is carved, so it is withheld and its two vNPUs are devices
	# that consume its counters.
	[[ $devs == *"npu-4=310P"* && $devs == *"npu-5=310P"* && $devs == *"vnpu-100="* && $devs == *"vnpu-101="* &&
		$devs != *"npu-0="* && $devs != *"npu-1="* && $devs != *"npu-2="* && $devs != *"npu-3="* ]] &&
		pass "10o. $N3's ResourceSlices list only the DRA driver's devices: $devs; counters: $(k get resourceslices --field-selector "spec.nodeName=$N3" -o json | jq -c '[.items[].spec.sharedCounters[]?] | map({(.name): .counters}) | add')" ||
		fail "10o. $N3's slices" "$devs"

	# The vNPU example: the claim gets a vNPU of chip 0, the container sees
	# it as /dev/davinci<id> and nothing else.
	example dra/npu-claim-vnpu.yaml "apiVersion: v1
kind: Pod
metadata: {name: dra-vnpu}
spec: {nodeSelector: {kubernetes.io/hostname: $N3}}" >"$tmp/dra-vnpu.yaml"
	check "10o. kubectl apply -f examples/dra/npu-claim-vnpu.yaml (pinned to $N3)" k apply -f "$tmp/dra-vnpu.yaml"
	if k wait --for=condition=Ready pod/dra-vnpu --timeout="$WAIT" >/dev/null; then
		devs=$(claim_devices "$(pod_claim dra-vnpu vnpu)")
		out=$(k exec dra-vnpu -c inference -- sh -c 'echo "$ASCEND_VISIBLE_DEVICES $ASCEND_RUNTIME_OPTIONS"; ls /dev | grep davinci | tr "\n" " "')
		[[ $devs =~ ^vnpu-(10[01])$ ]] && [[ $out == "${BASH_REMATCH[1]} VIRTUAL"*"davinci${BASH_REMATCH[1]} "* ]] &&
			[ "$(grep -o 'davinci[0-9][0-9]*' <<<"$out" | sort -u | wc -l)" = 1 ] &&
			pass "10o. dra-vnpu's claim got $devs ($(k get resourceslices --field-selector "spec.nodeName=$N3" -o json | jq -r --arg d "$devs" '.items[].spec.devices[]? | select(.name == $d) | "template \(.attributes.template.string), \(.capacity.aiCores.value) AI cores"')); the container: $(tr '\n' ' ' <<<"$out")" ||
			fail "10o. the vNPU in the container" "claim devices '$devs'; the container: $out"
		echo "    kubectl logs dra-vnpu:"
		k logs dra-vnpu | sed 's/^/    /'
	else
		fail "10o. dra-vnpu Ready" "$(k describe pod dra-vnpu | tail -n 15)"
	fi
	k delete -f "$tmp/dra-vnpu.yaml" --wait=true --timeout="$WAIT" >/dev/null 2>&1
	# A claim for a 310P chip, and beside it a device-plugin pod, on one node.
	{
		cat <<EOF
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: both-310p}
spec:
  devices:
    requests:
    - {name: npu, exactly: {deviceClassName: 310p.$DRA}}
---
EOF
		claim_pod both-dra "$N3" both-310p
	} | k apply -f - >/dev/null
	if k wait --for=condition=Ready pod/both-dra --timeout="$WAIT" >/dev/null && run_npu_pod both-dp "$N3" 2; then
		local a b
		a=$(pod_devices both-dra) b=$(pod_devices both-dp)
		[[ $a == 4 || $a == 5 ]] && [[ $b =~ ^[1-3],[1-3]$ ]] &&
			pass "10o. on $N3 side by side: both-dra's claim both-310p got 310P chip $a through DRA ($(claim_devices both-310p)), both-dp got chips $b through the device plugin" ||
			fail "10o. the chips of each front end" "both-dra $a, both-dp $b"
	else
		fail "10o. a DRA pod and a device-plugin pod on $N3" "$(k get pods -o wide | grep both-)"
	fi
	delete_pods both-dra both-dp
	k delete resourceclaim both-310p --ignore-not-found >/dev/null 2>&1

	# Time-slicing through DRA: npu-4 allows two allocations (its "shares"
	# capacity is the replicas); two claims for it share it, a third waits.
	local i
	for i in 1 2 3; do
		{
			cat <<EOF
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: shared-npu4-$i}
spec:
  devices:
    requests:
    - name: npu
      exactly:
        deviceClassName: 310p.$DRA
        selectors: [{cel: {expression: 'device.attributes["$DRA"].physicalID == 4'}}]
---
EOF
			claim_pod "shared-npu4-$i" "$N3" "shared-npu4-$i"
		} | k apply -f - >/dev/null
		[ "$i" = 3 ] || k wait --for=condition=Ready "pod/shared-npu4-$i" --timeout="$WAIT" >/dev/null
	done
	if [ "$(pod_devices shared-npu4-1)" = 4 ] && [ "$(pod_devices shared-npu4-2)" = 4 ] &&
		k wait --for=condition=PodScheduled=false pod/shared-npu4-3 --timeout="$WAIT" >/dev/null; then
		pass "10o. time-slicing through DRA: shared-npu4-1 and shared-npu4-2 both run on npu-4 (shares $(k get resourceclaim shared-npu4-1 shared-npu4-2 -o jsonpath='{range .items[*]}{.status.allocation.devices.results[0].shareID}{" "}{end}')), shared-npu4-3 Pending: $(k get pod shared-npu4-3 -o jsonpath='{.status.conditions[?(@.type=="PodScheduled")].message}')"
	else
		fail "10o. two claims share npu-4, a third waits" "$(k get pods -o wide | grep shared-npu4); $(pod_devices shared-npu4-1) $(pod_devices shared-npu4-2)"
	fi
	delete_pods shared-npu4-1 shared-npu4-2 shared-npu4-3
	k delete resourceclaim shared-npu4-1 shared-npu4-2 shared-npu4-3 --ignore-not-found >/dev/null 2>&1

	# Back: node 3 on the device plugin alone.
	k -n kube-system delete daemonset ascend-npu-both --wait=true --timeout="$WAIT" >/dev/null 2>&1
	k -n kube-system delete configmap ascend-npu-both --ignore-not-found >/dev/null 2>&1
	check "10o. kubectl label node $N3 npu-both- npu=true" k label node "$N3" npu-both- npu=true
	if wait_capacity "$N3" 5 && wait_capacity "$N3" 2 ascend.com/npu-vir04-3c; then
		pass "10o. $N3 back on the device plugin alone: ascend.com/npu 5, ascend.com/npu-vir04-3c 2"
	else
		fail "10o. $N3 back on the device plugin" "npu $(capacity "$N3"), vir04-3c $(capacity "$N3" ascend.com/npu-vir04-3c)"
	fi
}

for s in install schedule pending fault lifecycle rollout sharing cdi metrics dra; do
	[ "$s" = install ] || [[ $steps == *" $s "* ]] || continue
	t0=$(now_ms)
	"step_$s"
	figure "$s" "step took $(($(now_ms) - t0)) ms"
done
