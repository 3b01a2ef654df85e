#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Several resources from one plugin, in real containers (`make e2e`, after
# walkthrough.sh): a private containerd (CRI) + runc runs every container,
# kubelet-sim plays the kubelet, as in walkthrough.sh.
#  1. a mixed node: chips 0-3 910B3 and 4-5 310P3, two vir04_3c vNPUs (ids
#     100 and 101) made on chip 0, their /dev/vdavinci10x made with mknod
#     with minors of their own (1:5 and 1:7; every davinci node is 1:3);
#  2. the DaemonSet as `kubectl kustomize deploy/overlays/config` renders it,
#     with the ConfigMap's config.yaml replaced by one naming the 310P family
#     ascend.com/npu-310p and time-slicing it with 2 replicas;
#  3. the plugin registers ascend.com/npu (chips 1-3: chip 0 carries the
#     vNPUs), ascend.com/npu-310p (4 replicas), ascend.com/npu-vir04-3c (2);
#  4. a pod on a vNPU sees one /dev/davinci10x with its vdavinci node's
#     numbers; a pod on ascend.com/npu-310p sees chip 4 or 5; a pod asking
#     for 3 ascend.com/npu gets chips 1-3, never chip 0;
#  5. the config updated as the kubelet updates a mounted ConfigMap, without
#     the 310P name: the plugin applies it, ascend.com/npu-310p's devices go
#     unhealthy and ascend.com/npu lists chips 1-5;
#  6. everything stops and nothing is left behind, on every path.
#
# kubelet-sim mounts hostPath volumes only (docs/kubelet-sim.md, "What the
# pod worker leaves out"), so the DaemonSet's configMap volume becomes a
# hostPath of the node's /etc/ascend-device-plugin, which this script fills
# from the rendered ConfigMap the way the kubelet projects one (config.yaml
# -> ..data/config.yaml, ..data -> a timestamped directory, swapped by a
# rename on update). The plugin sees the same files and the same update.
#
# Usage: sharing.sh BUILD_DIR. Needs root, the release build and
# build/image/ascend-device-plugin.tar (make image).
set -uo pipefail

readonly WAIT_S=${E2E_WAIT_S:-60}
readonly NPU=ascend.com/npu
readonly NPU310P=ascend.com/npu-310p
readonly VNPU=ascend.com/npu-vir04-3c
readonly CONFIG_DIR=/etc/ascend-device-plugin

if [ $# -lt 1 ]; then
	echo "usage: $0 BUILD_DIR" >&2
	exit 2
fi
build=$(cd "$1" && pwd)
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
	echo "skip: the sharing test needs root (mknod, containerd)"
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
demo=false
# A failure shows the plugin's log.
sim_dump_pods='kube-system_*'

# stop_all: as in walkthrough.sh, every path ends here.
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
		echo "FAIL 6. left behind after teardown:"
		sed 's/^/    /' "$tmp/clean"
		status=1
	fi
	rm -rf "$tmp"
	echo "sharing: $((SECONDS - started)) s"
	exit $status
}
trap cleanup EXIT
trap 'exit 130' INT TERM

step() { # one readable line per step
	pass "$1"
}
# pod_file NAME RESOURCE COUNT FILE: examples/npu-pod.yaml under another
# name, asking for COUNT of RESOURCE.
pod_file() {
	sed -e "s/name: inference-pod\$/name: $1/" -e "s|ascend.com/npu: \"1\"|$2: \"$3\"|" \
		"$root/examples/npu-pod.yaml" >"$4"
	grep -q "^ *$2: \"$3\"" "$4" || give_up "pod $1" "examples/npu-pod.yaml no longer asks for ascend.com/npu: \"1\""
}
# project DIR FILE: FILE as DIR/config.yaml, laid out and swapped in as the
# kubelet's atomic writer does for a ConfigMap volume: the data in a new
# timestamped directory, a ..data_tmp link to it renamed over ..data, and
# the old directory removed.
project() {
	local dir=$1 ts old=
	ts=..$(date -u +%Y_%m_%d_%H_%M_%S).$$$RANDOM
	[ -L "$dir/..data" ] && old=$(readlink "$dir/..data")
	install -d -m 0755 "$dir/$ts" && install -m 0644 "$2" "$dir/$ts/config.yaml" &&
		ln -s "$ts" "$dir/..data_tmp" && mv -T "$dir/..data_tmp" "$dir/..data" || return
	[ -L "$dir/config.yaml" ] || ln -s ..data/config.yaml "$dir/config.yaml" || return
	[ -z "$old" ] || rm -rf -- "${dir:?}/$old"
}
# await_devices WHAT RESOURCE CAPACITY ALLOCATABLE: a devices line (read
# now or before) says so.
await_devices() {
	await "$1" "devices resource=$2 " capacity="$3" allocatable="$4"
}
# ids_of RESOURCE: the resource's devices, as kubelet-sim lists them, in
# $ids (comma-separated).
ids_of() {
	send "use $1"
	need "use $1" "use resource=$1"
	send list
	ids=
	while need "list $1" ""; do
		case $line in
		"list end"*) break ;;
		"device id="*) ids+=${ids:+,}$(value_of "$line" id) ;;
		esac
	done
}

# 1. containerd, the images, the node.
containerd_start "$rt" >"$tmp/containerd.out" 2>&1 || {
	cat "$tmp/containerd.out"
	give_up "1. containerd starts" "see above"
}
images_build "$tmp/images" >"$tmp/images.out" 2>&1 || give_up "1. test images" "$(tail -n 5 "$tmp/images.out")"
images_import "$rt/containerd.sock" "$plugin_tar" "$tmp/images/pause.tar" "$tmp/images/busybox.tar" \
	>"$tmp/import.out" 2>&1 || give_up "1. image import" "$(tail -n 5 "$tmp/import.out")"
node_create "$node" "$build" >"$tmp/node.out" 2>&1 || give_up "1. node" "$(tail -n 5 "$tmp/node.out")"
# Six chips, not node.sh's eight: 4 and 5 are 310P3. The vNPU nodes get
# minors of their own so that a container's /dev/davinci10x can be told
# from a chip's node.
rm -f "$node/dev/davinci6" "$node/dev/davinci7"
state=$(node_state_file "$node")
{
	echo "driver 24.1.rc1"
	echo "subscribe on"
	for i in 0 1 2 3; do
		echo "chip phy=$i card=$i logic=$i name=910B3 health=0 aicore=20 hbm_mb=65536"
	done
	echo "chip phy=4 card=4 logic=4 name=310P3 health=0"
	echo "chip phy=5 card=5 logic=5 name=310P3 health=0"
	echo "vnpu id=100 phy=0 template=vir04_3c"
	echo "vnpu id=101 phy=0 template=vir04_3c"
} >"$state.tmp" || give_up "1. node" "cannot write $state.tmp"
if ! { chmod 0644 "$state.tmp" && mv -f "$state.tmp" "$state"; }; then
	give_up "1. node" "cannot replace $state"
fi
if ! { mknod -m 0660 "$node/dev/vdavinci100" c "$E2E_NPU_MAJOR" 5 &&
	mknod -m 0660 "$node/dev/vdavinci101" c "$E2E_NPU_MAJOR" 7 &&
	chown "0:$E2E_NPU_GID" "$node/dev/vdavinci100" "$node/dev/vdavinci101"; }; then
	give_up "1. node" "cannot make /dev/vdavinci100, 101"
fi
npu_dev=$(stat -c %t:%T "$node/dev/davinci0")
step "1. node: chips 0-3 910B3, 4-5 310P3 (c $npu_dev), vNPUs 100, 101 (vir04_3c of chip 0; c $(stat -c %t:%T "$node/dev/vdavinci100"), c $(stat -c %t:%T "$node/dev/vdavinci101")); plugin image in containerd"

# 2. The DaemonSet with the config overlay, its ConfigMap's config.yaml
# replaced, its configMap volume a hostPath (see the top of this file).
cat >"$tmp/config.yaml" <<EOF
version: v1
flags:
  healthInterval: 5s
  logLevel: info
sharing:
  timeSlicing:
    resources:
    - name: $NPU310P
      replicas: 2
resources:
- family: 310P
  name: $NPU310P
EOF
kubectl kustomize "$root/deploy/overlays/config" >"$tmp/rendered.yaml" 2>"$tmp/kustomize.err" ||
	give_up "2. kubectl kustomize deploy/overlays/config" "$(cat "$tmp/kustomize.err")"
awk -v cfg="$tmp/config.yaml" -v dir="$CONFIG_DIR" '
	skip && /^    / { next }
	{ skip = 0 }
	$0 == "  config.yaml: |" {
		print
		while ((getline l < cfg) > 0)
			print "    " l
		skip = 1
		data++
		next
	}
	$0 == "      - configMap:" {
		getline n1
		getline n2
		if (n1 == "          name: ascend-device-plugin-config" && n2 == "        name: config") {
			print "      - hostPath:"
			print "          path: " dir
			print "          type: Directory"
			print n2
			volume++
		} else {
			print
			print n1
			print n2
		}
		next
	}
	{ print }
	END { exit !(data == 1 && volume == 1) }' "$tmp/rendered.yaml" >"$tmp/daemonset.yaml" ||
	give_up "2. the rendered overlay" "no ConfigMap config.yaml or configMap volume 'config' where expected"
# What the kubelet would write into the volume: the rendered ConfigMap's config.yaml.
awk 'inside && /^    / { print substr($0, 5); next } { inside = 0 } $0 == "  config.yaml: |" { inside = 1 }' \
	"$tmp/daemonset.yaml" >"$tmp/projected.yaml"
cmp -s "$tmp/projected.yaml" "$tmp/config.yaml" || give_up "2. the ConfigMap's config.yaml" "$(diff "$tmp/config.yaml" "$tmp/projected.yaml")"
if ! { install -d -m 0755 "$node/etc" "$node$CONFIG_DIR" && project "$node$CONFIG_DIR" "$tmp/projected.yaml"; }; then
	give_up "2. the config volume" "cannot write $node$CONFIG_DIR"
fi
step "2. kubectl kustomize deploy/overlays/config: config.yaml with resources [310P: $NPU310P], time-slicing $NPU310P x2; in $CONFIG_DIR as a ConfigMap volume lays it out (hostPath)"

sim_start --dir "$node/var/lib/kubelet/device-plugins" --node-root "$node" \
	--container-runtime-endpoint "$rt/containerd.sock" --relist-period 200ms \
	--image-alias "debian:12-slim=$E2E_BUSYBOX_IMAGE"
need "2. kubelet-sim starts" "ready dir="
send "run $tmp/daemonset.yaml"
need "2. the plugin's pod is created" "pod-created pod=kube-system/ascend-device-plugin-"
ds_pod=$(value_of "$line" pod)
need "2. the plugin's container starts" "container-started pod=$ds_pod"
step "2. DaemonSet pod $ds_pod started"

# 3. Three resources, from one process.
await_devices "3. $NPU: chips 1-3" $NPU 3 3
await_devices "3. $NPU310P: 2 chips x 2 replicas" $NPU310P 4 4
await_devices "3. $VNPU: 2 vNPUs" $VNPU 2 2
for r in $NPU $NPU310P $VNPU; do
	await "3. $r registers" "register resource=$r "
done
ids_of $NPU
[ "$ids" = npu-1,npu-2,npu-3 ] || give_up "3. $NPU lists chips 1-3" "$ids"
npu_ids=$ids
ids_of $NPU310P
[ "$ids" = npu-4::0,npu-4::1,npu-5::0,npu-5::1 ] || give_up "3. $NPU310P lists 2 replicas of chips 4, 5" "$ids"
p310_ids=$ids
ids_of $VNPU
[ "$ids" = vnpu-100,vnpu-101 ] || give_up "3. $VNPU lists vNPUs 100, 101" "$ids"
step "3. registered: $NPU ($npu_ids), $NPU310P ($p310_ids), $VNPU ($ids)"
pod_log "$ds_pod" ascend-device-plugin
log_has "3. the plugin finds the vNPUs" "found 2 vNPUs"
step "3. plugin: \"${line#* info  }\""

# 4. Workloads. check_pod POD: what the container sees is what it was
# given: each chip or vNPU at /dev/davinci<id> with the numbers of the
# node's davinci<id> (vdavinci<id> for a vNPU), no other davinci<N>, no
# vdavinci node, the shared nodes, the driver read-only. The IDs given are
# left in $visible.
check_pod() {
	local pod=$1 ids id host n=0
	need "4. $pod admitted" "pod-allocated pod=default/$pod"
	ids=$(value_of "$line" ids)
	need "4. $pod starts" "container-started pod=default/$pod"
	visible=
	local script="t() { eval \"\$1\" || { echo \"failed: \$1\"; exit 1; }; };"
	for id in ${ids//,/ }; do
		host=$node/dev/davinci
		[[ $id == vnpu-* ]] && host=$node/dev/vdavinci
		id=${id#vnpu-}
		id=${id#npu-}
		id=${id%%::*}
		case ",$visible," in *",$id,"*) continue ;; esac
		visible+=${visible:+,}$id
		script+=" t '[ -c /dev/davinci$id ]';"
		script+=" t '[ \$(stat -c %t:%T /dev/davinci$id) = $(stat -c %t:%T "$host$id") ]';"
		n=$((n + 1))
	done
	script+=" t '[ \"\$ASCEND_VISIBLE_DEVICES\" = $visible ]';"
	script+=" t '[ \$(ls /dev | grep -c ^davinci[0-9]) = $n ]';"
	script+=" t '[ \$(ls /dev | grep -c ^vdavinci) = 0 ]';"
	script+=" for s in davinci_manager devmm_svm hisi_hdc; do t \"[ -c /dev/\$s ]\"; done;"
	script+=" t '[ -f /usr/local/Ascend/driver/version.info ]';"
	script+=" t '! touch /usr/local/Ascend/driver/lib64/x 2>/tmp/err';"
	script+=" t 'grep -q \"Read-only file system\" /tmp/err'"
	in_pod "default/$pod" inference "$script" || give_up "4. $pod sees what it was given ($ids)" "$line"
}
pod_file vnpu-pod $VNPU 1 "$tmp/vnpu-pod.yaml"
send "run $tmp/vnpu-pod.yaml"
check_pod vnpu-pod
case $visible in
100 | 101) ;;
*) give_up "4. vnpu-pod gets a vNPU" "ASCEND_VISIBLE_DEVICES=$visible" ;;
esac
[ "$(stat -c %t:%T "$node/dev/vdavinci$visible")" != "$npu_dev" ] || give_up "4. vNPU nodes differ from chips" "$npu_dev"
step "4. vnpu-pod ($VNPU: 1): only /dev/davinci$visible, c $(stat -c %t:%T "$node/dev/vdavinci$visible") as the node's /dev/vdavinci$visible, ASCEND_VISIBLE_DEVICES=$visible, shared nodes, driver read-only"

pod_file p310-pod $NPU310P 1 "$tmp/p310-pod.yaml"
send "run $tmp/p310-pod.yaml"
check_pod p310-pod
case $visible in
4 | 5) ;;
*) give_up "4. p310-pod gets a 310P chip" "ASCEND_VISIBLE_DEVICES=$visible" ;;
esac
step "4. p310-pod ($NPU310P: 1): only /dev/davinci$visible, ASCEND_VISIBLE_DEVICES=$visible"

pod_file npu3-pod $NPU 3 "$tmp/npu3-pod.yaml"
send "run $tmp/npu3-pod.yaml"
check_pod npu3-pod
[ "$visible" = 1,2,3 ] || give_up "4. npu3-pod gets chips 1-3, not chip 0" "ASCEND_VISIBLE_DEVICES=$visible"
step "4. npu3-pod ($NPU: 3): /dev/davinci{1,2,3}, no /dev/davinci0, ASCEND_VISIBLE_DEVICES=$visible"

# 5. The ConfigMap loses the 310P name (and the time-slicing of it, which
# would name a resource the plugin no longer has); the kubelet swaps ..data.
cat >"$tmp/config2.yaml" <<EOF
version: v1
flags:
  healthInterval: 5s
  logLevel: info
EOF
project "$node$CONFIG_DIR" "$tmp/config2.yaml" || give_up "5. update the config volume" "cannot write $node$CONFIG_DIR"
p310_gone=false npu_five=false
while ! $p310_gone || ! $npu_five; do
	need "5. the new configuration reaches kubelet-sim" "devices resource="
	r=$(value_of "$line" resource)
	cap=$(value_of "$line" capacity)/$(value_of "$line" allocatable)
	if [ "$r" = $NPU310P ] && [ "$cap" = 4/0 ]; then
		p310_gone=true
		unhealthy=$(value_of "$line" unhealthy)
	fi
	[ "$r" = $NPU ] && [ "$cap" = 5/5 ] && npu_five=true
done
[ "$unhealthy" = npu-4::0,npu-4::1,npu-5::0,npu-5::1 ] || give_up "5. every $NPU310P replica unhealthy" "$unhealthy"
ids_of $NPU
[ "$ids" = npu-1,npu-2,npu-3,npu-4,npu-5 ] || give_up "5. $NPU lists chips 1-5" "$ids"
# The plugin logs that it applied the file before it lists the chips anew;
# containerd may write the log a moment after kubelet-sim saw the list.
for _ in 1 2 3 4 5; do
	pod_log "$ds_pod" ascend-device-plugin
	grep -q -F "reload: configuration $CONFIG_DIR/config.yaml applied" "$tmp/podlog" && break
done
log_has "5. the plugin applies the new file" "reload: configuration $CONFIG_DIR/config.yaml applied"
step "5. ..data swapped: plugin \"${line#* info  }\"; $NPU310P: capacity 4, allocatable 0 ($unhealthy unhealthy); $NPU: $ids"

# 6. Stop: kubelet-sim deletes its pods through CRI when it quits. The
# workloads' sleep, as PID 1, ignores SIGTERM: deleted first without a
# grace period, as quit would wait a second for each.
for p in vnpu-pod p310-pod npu3-pod; do
	send "delete default/$p 0"
	need "6. delete $p" "pod-deleted pod=default/$p"
done
running=$(grep -c '^pod-created' "$tmp/sim.log")
stop_all
deleted=$(grep -c '^pod-deleted' "$tmp/sim.log")
[ "$sim_status" = 0 ] || fail "6. kubelet-sim exits 0" "exit status ${sim_status:-none}"
[ "$deleted" = "$running" ] || fail "6. every pod deleted" "$running created, $deleted deleted"
if [ -s "$tmp/clean" ]; then
	fail "6. nothing left behind" "$(sed 's/^/    /' "$tmp/clean")"
else
	step "6. kubelet-sim quit (exit 0, $deleted pods deleted through CRI), containerd stopped: no process, mount or file left"
fi
finish
