#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The guide's walkthrough on one simulated Ascend node with a real container
# runtime (`make e2e`, part of `make test`; `make demo-containers` shows it
# to a person). A private containerd (CRI) + runc run every container;
# kubelet-sim plays the kubelet and runs the pods from the shipped YAML:
#  1. the plugin's image (make image) is imported into containerd;
#  2. a node: /dev/davinci0..7 and the shared device nodes made with mknod,
#     the driver tree with the DCMI simulator as lib64/driver/libdcmi.so;
#  3. the DaemonSet as `kubectl kustomize deploy/` renders it runs as a pod:
#     the plugin in its container finds the 8 chips, registers, passes its
#     liveness probe;
#  4. examples/npu-pod.yaml and a 2-NPU pod see exactly their NPUs, the
#     shared nodes and the read-only driver; the smoke-test Job succeeds;
#  5. a chip fault takes it out of allocatable and out of new pods; recovery;
#  6. a kubelet restart: the plugin in its container registers again;
#  7. refusals and failures with the messages docs/troubleshooting.md quotes;
#  8. everything stops and nothing is left behind, on every path.
# kubelet-sim's --node-root makes the node directory stand for the host's /,
# so the DaemonSet's hostPaths and the plugin's answers are used unchanged.
#
# Usage: walkthrough.sh BUILD_DIR [--demo]. Needs root, the release build
# and build/image/ascend-device-plugin.tar (make image).
set -uo pipefail

readonly WAIT_S=${E2E_WAIT_S:-60}
readonly CHIPS=8
readonly RESOURCE=ascend.com/npu

if [ $# -lt 1 ]; then
	echo "usage: $0 BUILD_DIR [--demo]" >&2
	exit 2
fi
build=$(cd "$1" && pwd)
demo=false
[ "${2:-}" = --demo ] && demo=true
root=$(cd "$(dirname "$0")/../.." && pwd)
sim=${E2E_KUBELET_SIM:-$build/tools/kubelet-sim/kubelet-sim}
plugin_tar=$build/image/ascend-device-plugin.tar

# shellcheck source=tests/scripts/lib.sh
. "$root/tests/scripts/lib.sh"
# shellcheck source=tests/e2e/node.sh
. "$root/tests/e2e/node.sh"
# shellcheck source=tests/e2e/sim.sh
. "$root/tests/e2e/sim.sh"

if [ "$(id -u)" -ne 0 ]; then
	echo "skip: the walkthrough needs root (mknod, containerd)"
	exit 0
fi
for f in "$sim" "$plugin_tar"; do
	[ -f "$f" ] || { echo "$f is missing (make build image)" >&2; exit 1; }
done

# Short paths: unix sockets live under both directories.
tmp=$(mktemp -d /tmp/e2e.XXXXXX)
chmod 755 "$tmp"
node=$tmp/n
rt=$tmp/c
started=$SECONDS
# A failure shows the plugin's log.
sim_dump_pods='kube-system_*'

# stop_all: quits kubelet-sim (which deletes its pods through CRI), tears
# containerd and the node down, and checks that nothing is left ($tmp/clean
# says what is). Every path ends here, also a failed step.
stopped=false
stop_all() {
	stopped=true
	sim_quit
	teardown "$rt" "$node" 2>"$tmp/teardown.err"
	node_assert_clean "$rt" "$node" >"$tmp/clean" 2>&1
}
cleanup() {
	local status=$?
	if ! $stopped && ! stop_all; then
		echo "FAIL 8. left behind after teardown:"
		sed 's/^/    /' "$tmp/clean"
		status=1
	fi
	rm -rf "$tmp"
	echo "walkthrough: $((SECONDS - started)) s"
	exit $status
}
trap cleanup EXIT
trap 'exit 130' INT TERM

step() { # one readable line per step
	pass "$1"
}
# wait_devices WHAT CAPACITY ALLOCATABLE: until a devices line says so.
wait_devices() {
	while need "$1" "devices resource=$RESOURCE "; do
		[ "$(value_of "$line" capacity)/$(value_of "$line" allocatable)" = "$2/$3" ] && return 0
	done
}
# pod_file NAME NPUS FILE: examples/npu-pod.yaml under another name and count.
pod_file() {
	sed -e "s/name: inference-pod\$/name: $1/" -e "s/ascend.com\/npu: \"1\"/ascend.com\/npu: \"$2\"/" \
		"$root/examples/npu-pod.yaml" >"$3"
}

# 1. The image, imported into a private containerd.
containerd_start "$rt" >"$tmp/containerd.out" 2>&1 || {
	cat "$tmp/containerd.out"
	give_up "1. containerd starts" "see above"
}
images_build "$tmp/images" >"$tmp/images.out" 2>&1 || give_up "1. test images" "$(tail -n 5 "$tmp/images.out")"
images_import "$rt/containerd.sock" "$plugin_tar" "$tmp/images/pause.tar" "$tmp/images/busybox.tar" \
	>"$tmp/import.out" 2>&1 || give_up "1. image import" "$(tail -n 5 "$tmp/import.out")"
# kubelet-sim's CRI client, call by call, against this containerd.
if [ -x "$build/tests/unit_test_cri" ]; then
	CRI_TEST_ENDPOINT=unix://$rt/containerd.sock CRI_TEST_IMAGE=$E2E_BUSYBOX_IMAGE \
		"$build/tests/unit_test_cri" --runtime >"$tmp/cri.out" 2>&1 ||
		give_up "1. the CRI client against containerd" "$(tail -n 20 "$tmp/cri.out")"
	step "1. kubelet-sim's CRI client: every call against containerd $(containerd --version | awk '{ print $3 }')"
fi
plugin_image=$(awk '/image: ascend-device-plugin:/ { print $2; exit }' "$root/deploy/base/ascend-device-plugin.yaml")
step "1. ascend-device-plugin.tar ($(du -m "$plugin_tar" | cut -f1) MiB) imported into containerd as $plugin_image"

# 2. The node.
node_create "$node" "$build" >"$tmp/node.out" 2>&1 || give_up "2. node" "$(tail -n 5 "$tmp/node.out")"
step "2. node: /dev/davinci0..$((CHIPS - 1)), davinci_manager, devmm_svm, hisi_hdc (mknod), driver with the DCMI simulator"

# 3. The DaemonSet, rendered as an operator would, run as a pod.
kubectl kustomize "$root/deploy" >"$tmp/daemonset.yaml" 2>"$tmp/kustomize.err" ||
	give_up "3. kubectl kustomize deploy/" "$(cat "$tmp/kustomize.err")"
sim_start --dir "$node/var/lib/kubelet/device-plugins" --node-root "$node" \
	--container-runtime-endpoint "$rt/containerd.sock" --relist-period 200ms \
	--image-alias "debian:12-slim=$E2E_BUSYBOX_IMAGE"
need "3. kubelet-sim starts" "ready dir="
send "run $tmp/daemonset.yaml"
need "3. the plugin's pod is created" "pod-created pod=kube-system/ascend-device-plugin-"
ds_pod=$(value_of "$line" pod)
need "3. the plugin's container starts" "container-started pod=$ds_pod"
need "3. the plugin registers from its container" "register resource=$RESOURCE"
need "3. the plugin lists the chips" "devices resource=$RESOURCE"
[ "$(value_of "$line" capacity)/$(value_of "$line" allocatable)" = "$CHIPS/$CHIPS" ] ||
	give_up "3. capacity" "$line"
pod_log "$ds_pod" ascend-device-plugin
log_has "3. the plugin uses the node's DCMI (the simulator) through its hostPath" "using DCMI from /usr/local/Ascend/driver/lib64/driver/libdcmi.so"
log_has "3. the plugin finds the chips" "found $CHIPS NPU chips"
chips_line=${line#* info  }
send "probe $ds_pod ascend-device-plugin liveness"
need "3. liveness probe" "probe pod=$ds_pod container=ascend-device-plugin probe=liveness"
[ "$(value_of "$line" result)" = success ] || give_up "3. liveness probe through ExecSync" "$line"
step "3. DaemonSet pod $ds_pod: \"$chips_line\", registered from its container, $RESOURCE: $CHIPS, liveness probe passes"

# 4. Workloads. check_pod POD N: what the container sees is what it was given.
check_pod() {
	local pod=$1 want=$2 ids
	need "4. $pod admitted" "pod-allocated pod=default/$pod"
	ids=$(value_of "$line" ids)
	need "4. $pod starts" "container-started pod=default/$pod"
	local visible=${ids//npu-/}
	# Each allocated chip: a character device with the node's numbers; no
	# other chip; the shared nodes; the driver, read-only. Each check says
	# what failed.
	local script="t() { eval \"\$1\" || { echo \"failed: \$1\"; exit 1; }; };"
	script+=" t '[ \"\$ASCEND_VISIBLE_DEVICES\" = $visible ]';"
	local n=0 id
	for id in ${visible//,/ }; do
		script+=" t '[ -c /dev/davinci$id ]';"
		script+=" t '[ \$(stat -c %t:%T /dev/davinci$id) = $(stat -c %t:%T "$node/dev/davinci$id") ]';"
		n=$((n + 1))
	done
	[ "$n" = "$want" ] || give_up "4. $pod gets $want NPUs" "got $ids"
	script+=" t '[ \$(ls /dev | grep -c ^davinci[0-9]) = $want ]';"
	script+=" for s in davinci_manager devmm_svm hisi_hdc; do t \"[ -c /dev/\$s ]\"; done;"
	script+=" t '[ -f /usr/local/Ascend/driver/version.info ]';"
	script+=" t '[ -f /usr/local/Ascend/driver/lib64/driver/libdcmi.so ]';"
	script+=" t '! touch /usr/local/Ascend/driver/lib64/x 2>/tmp/err';"
	script+=" t 'grep -q \"Read-only file system\" /tmp/err'"
	in_pod "default/$pod" inference "$script" || give_up "4. $pod sees its NPUs" "$line"
	step "4. $pod: ASCEND_VISIBLE_DEVICES=$visible, only /dev/davinci{$visible} (c $(stat -c %t:%T "$node/dev/davinci0")), shared nodes, driver read-only (EROFS)"
}
send "run $root/examples/npu-pod.yaml"
check_pod inference-pod 1
pod_file inference-pod-2npu 2 "$tmp/npu-pod-2.yaml"
send "run $tmp/npu-pod-2.yaml"
check_pod inference-pod-2npu 2

send "run $root/examples/npu-smoke-test.yaml"
need "4. smoke test created" "pod-created pod=default/npu-smoke-test-"
smoke=$(value_of "$line" pod)
wait_phase "4. smoke test ends" "$smoke" Succeeded
pod_log "$smoke" smoke-test
log_has "4. smoke test passes" "SMOKE TEST PASSED"
step "4. npu-smoke-test Job: Succeeded, \"$line\""

# 5. A chip fault: out of allocatable, out of new pods; then its recovery.
# The free chips now: 8 minus the 3 the two pods hold; the fault takes one
# of those, and a pod asking for all the others must not get it.
faulty=7
node_set_chip_health "$node" $faulty 3 80E01801 || give_up "5. fault" "cannot change the DCMI state"
wait_devices "5. the fault reaches kubelet-sim" $CHIPS $((CHIPS - 1))
[ "$(value_of "$line" unhealthy)" = "npu-$faulty" ] || give_up "5. the faulty chip is the unhealthy one" "$line"
pod_file inference-pod-4npu 4 "$tmp/npu-pod-4.yaml"
send "run $tmp/npu-pod-4.yaml"
need "5. a pod for every healthy free chip" "pod-allocated pod=default/inference-pod-4npu"
ids=$(value_of "$line" ids)
case ",$ids," in *",npu-$faulty,"*) give_up "5. the new pod does not get the faulty chip" "$line" ;; esac
need "5. that pod starts" "container-started pod=default/inference-pod-4npu"
step "5. chip $faulty faulty: capacity $CHIPS, allocatable $((CHIPS - 1)); a new 4-NPU pod got $ids, not npu-$faulty"
node_set_chip_health "$node" $faulty 0 "" || give_up "5. recovery" "cannot change the DCMI state"
wait_devices "5. recovery reaches kubelet-sim" $CHIPS $CHIPS
step "5. chip $faulty recovered: allocatable back to $CHIPS"

# 6. The kubelet restarts: the plugin, still in its container, registers again.
send restart
# The plugin may register on the new kubelet.sock before kubelet-sim has
# printed that it restarted: either order is right.
restarted=false registered=false
while ! $restarted || ! $registered; do
	need "6. kubelet-sim restarts and the plugin registers again" ""
	case $line in
	"restarted dir="*) restarted=true ;;
	"register resource=$RESOURCE "*) registered=true ;;
	esac
done
wait_devices "6. the devices are back" $CHIPS $CHIPS
step "6. kubelet restart: the plugin in its container registered again, $RESOURCE: $CHIPS"

# 7. What goes wrong, with the kubelet's and the container's own words.
# More NPUs than are healthy and free (1 left): refused at admission.
pod_file inference-pod-toomany 2 "$tmp/npu-pod-toomany.yaml"
send "run $tmp/npu-pod-toomany.yaml"
wait_phase "7. a pod asking for too many NPUs" default/inference-pod-toomany Failed
[ "$(value_of "$line" reason)" = UnexpectedAdmissionError ] || give_up "7. UnexpectedAdmissionError" "$line"
step "7. 2 NPUs with 1 free: $(value_of "$line" reason): $(value_of "$line" message)"
send "delete default/inference-pod-toomany"
need "7. delete" "pod-deleted pod=default/inference-pod-toomany"

# The driver at another path than the node's: the pod cannot start.
kubectl kustomize "$root/deploy/overlays/driver-path" >"$tmp/daemonset-driver.yaml" 2>"$tmp/kustomize.err" ||
	give_up "7. kubectl kustomize deploy/overlays/driver-path" "$(cat "$tmp/kustomize.err")"
send "run $tmp/daemonset-driver.yaml"
need "7. a DaemonSet with the wrong driver path" "pod-created pod=kube-system/ascend-device-plugin-"
bad_ds=$(value_of "$line" pod)
need "7. the wrong driver path is reported" "pod-event pod=$bad_ds reason=FailedMount"
step "7. wrong driver path: FailedMount: $(value_of "$line" message)"
send "delete $bad_ds 0"
need "7. delete" "pod-deleted pod=$bad_ds"

# Non-root: the shipped Job (with the driver's group) passes; without the
# supplementary group the device nodes cannot be opened.
send "delete default/inference-pod-4npu 0"
need "7. delete" "pod-deleted pod=default/inference-pod-4npu"
send "run $root/examples/npu-smoke-test-nonroot.yaml"
need "7. non-root smoke test" "pod-created pod=default/npu-smoke-test-nonroot-"
nonroot=$(value_of "$line" pod)
wait_phase "7. non-root smoke test with the driver's group" "$nonroot" Succeeded
step "7. npu-smoke-test-nonroot (uid 10001, supplementalGroups [$E2E_NPU_GID]): Succeeded"
grep -v 'supplementalGroups: \[' "$root/examples/npu-smoke-test-nonroot.yaml" >"$tmp/nonroot-nogroup.yaml"
send "run $tmp/nonroot-nogroup.yaml"
need "7. non-root smoke test without the group" "pod-created pod=default/npu-smoke-test-nonroot-"
nogroup=$(value_of "$line" pod)
wait_phase "7. non-root smoke test without the group fails" "$nogroup" Failed
pod_log "$nogroup" smoke-test
log_has "7. the non-root failure is explained" "SMOKE TEST FAILED"
step "7. without supplementalGroups: Failed, \"$line\""

# 8. Stop: kubelet-sim deletes its pods through CRI when it quits.
running=$(grep -c '^pod-created' "$tmp/sim.log")
stop_all
deleted=$(grep -c '^pod-deleted' "$tmp/sim.log")
[ "$sim_status" = 0 ] || fail "8. kubelet-sim exits 0" "exit status ${sim_status:-none}"
[ "$deleted" = "$running" ] || fail "8. every pod deleted" "$running created, $deleted deleted"
if [ -s "$tmp/clean" ]; then
	fail "8. nothing left behind" "$(sed 's/^/    /' "$tmp/clean")"
else
	step "8. kubelet-sim quit (exit 0, $deleted pods deleted through CRI), containerd stopped: no process, mount or file left"
fi
finish
