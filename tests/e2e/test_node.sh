#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Self-test of tests/e2e/node.sh with containerd and runc, through ctr (no
# kubelet-sim): the node's device nodes and driver, reproducible test images,
# containerd's start, the import and the names the CRI plugin resolves, a
# container given /dev/davinci3 (numbers, owner, mode; root may open it,
# "nobody" may not), the pause image, the plugin image run as the DaemonSet
# runs it (8 chips from the simulator's default state, a fault and its
# recovery by node_set_chip_health), then teardown after containerd and a
# shim were killed with containers running, and node_assert_clean.
#
#   tests/e2e/test_node.sh BUILD_DIR [PLUGIN_IMAGE_TAR]
#
# Needs root and scripts/deps.sh e2e; skips otherwise. The plugin part needs
# PLUGIN_IMAGE_TAR (make image: build/image/ascend-device-plugin.tar).
set -uo pipefail
build=$(cd "${1:?usage: test_node.sh BUILD_DIR [PLUGIN_IMAGE_TAR]}" && pwd)
plugin_tar=${2:-}
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
# shellcheck source=tests/scripts/lib.sh
. "$here/../scripts/lib.sh"
# shellcheck source=tests/e2e/node.sh
. "$here/node.sh"

[ "$(id -u)" -eq 0 ] || { echo "skip: needs root (mknod, containerd)"; exit 0; }
for tool in containerd runc ctr umoci skopeo jq inotifywait pidwait nsenter; do
	command -v $tool >/dev/null || { echo "skip: no $tool (scripts/deps.sh e2e)"; exit 0; }
done

dir=$(mktemp -d /tmp/e2e.XXXXXX)
node=$dir/node
sock=$dir/containerd.sock
cleanup() {
	teardown "$dir"
	rm -rf "$tmp"
}
trap cleanup EXIT
ctr_k8s=(timeout 60 ctr --address "$sock" -n k8s.io)
# run_in ID IMAGE [ctr run options...] -- COMMAND...: runs a container to its end
run_in() {
	local id=$1 image=$2 opts=()
	shift 2
	while [ "$1" != -- ]; do
		opts+=("$1")
		shift
	done
	shift
	"${ctr_k8s[@]}" run --rm --cgroup "" --runc-root "$dir/runc" --fifo-dir "$dir/fifo" "${opts[@]}" "$image" "$id" "$@"
}
fails() { # COMMAND...: succeeds when COMMAND fails
	! "$@"
}
# log_has FILE TEXT: waits (tail -F follows with inotify) up to 20 s for TEXT in FILE
log_has() {
	local fd pid rc
	# Not tail | grep -q: under pipefail, tail's SIGPIPE would fail it, and
	# the pipeline would wait for tail's next line. tail is stopped instead.
	exec {fd}< <(exec timeout 20 tail -n +1 -F "$1" 2>/dev/null)
	pid=$!
	grep -m1 -qF -- "$2" <&"$fd"
	rc=$?
	kill "$pid" 2>/dev/null
	exec {fd}<&-
	return $rc
}

# ---- the node -------------------------------------------------------------------
check "node_create" node_create "$node" "$build"
check "davinci3 is c 1:3 root:$E2E_NPU_GID 0660" test "$(stat -c '%F %t:%T %u:%g %a' "$node/dev/davinci3")" = \
	"character special file 1:3 0:$E2E_NPU_GID 660"
check "the state file is the example's" cmp "$(node_state_file "$node")" "$here/../fake-dcmi/example-910b.state"
check "version.info says 24.1.rc1" grep -qx "Version=24.1.rc1" "$node/usr/local/Ascend/driver/version.info"
check "set chip 3 unhealthy" node_set_chip_health "$node" 3 2 80E01801
check "chip 3's line" grep -qx \
	"chip phy=3 card=3 logic=3 name=910B3 aicore=20 hbm_mb=65536 hbm_used_mb=3072 temp=41 power=96.5 util=0 health=2 errors=80E01801" \
	"$(node_state_file "$node")"
check "set chip 3 healthy again" node_set_chip_health "$node" 3 0 ""
check "no chip 9" fails node_set_chip_health "$node" 9 0

# ---- images -----------------------------------------------------------------------
check "images_build" images_build "$tmp/a"
check "images_build again" images_build "$tmp/b"
check "same pause.tar twice" cmp "$tmp/a/pause.tar" "$tmp/b/pause.tar"
check "same busybox.tar twice" cmp "$tmp/a/busybox.tar" "$tmp/b/busybox.tar"

# ---- containerd -------------------------------------------------------------------
check "containerd_start" containerd_start "$dir"
check "DIR/containerd.pid is containerd" test "$(readlink "/proc/$(cat "$dir/containerd.pid")/exe")" = "$(command -v containerd)"
tars=("$tmp/a/pause.tar" "$tmp/a/busybox.tar")
[ -n "$plugin_tar" ] && tars+=("$plugin_tar")
images_import "$sock" "${tars[@]}" >"$tmp/names" 2>&1
check "images_import" test $? -eq 0
check "imported names" grep -qx "docker.io/local/busybox:1" "$tmp/names"

# ---- containers -------------------------------------------------------------------
run_in smoke "$E2E_BUSYBOX_IMAGE" --device "$node/dev/davinci3" -- \
	sh -c "stat -c '%t:%T %u:%g %a' $node/dev/davinci3 && : <>$node/dev/davinci3 && echo opened-as-root &&
		su -s /bin/sh nobody -c ': <>$node/dev/davinci3' 2>&1; ls /bin/sh /usr/bin/tr /bin/grep" >"$tmp/smoke" 2>&1
check "the container sees davinci3 as 1:3 0:$E2E_NPU_GID 0660" grep -qx "1:3 0:$E2E_NPU_GID 660" "$tmp/smoke"
check "root opens it" grep -qx "opened-as-root" "$tmp/smoke"
check "nobody may not" grep -q "Permission denied" "$tmp/smoke"
check "the pause image runs" "${ctr_k8s[@]}" run -d --cgroup "" --runc-root "$dir/runc" --fifo-dir "$dir/fifo" \
	"$E2E_PAUSE_IMAGE" pause
check "a shell keeps running" "${ctr_k8s[@]}" run -d --cgroup "" --runc-root "$dir/runc" --fifo-dir "$dir/fifo" \
	"$E2E_BUSYBOX_IMAGE" shell sh -c 'sleep 1000 & wait'

if [ -n "$plugin_tar" ]; then
	# As deploy/base/ascend-device-plugin.yaml runs it, with the node's paths.
	drv=/usr/local/Ascend/driver
	"${ctr_k8s[@]}" run -d --cgroup "" --runc-root "$dir/runc" --fifo-dir "$dir/fifo" --privileged --read-only \
		--mount "type=bind,src=$node/dev,dst=/dev,options=rbind:rw" \
		--mount "type=bind,src=$node$drv,dst=$drv,options=rbind:ro" \
		--mount "type=bind,src=$node/var/lib/kubelet/device-plugins,dst=/var/lib/kubelet/device-plugins,options=rbind:rw" \
		--env ASCEND_DRIVER_PATH=$drv --env "LD_LIBRARY_PATH=$drv/lib64/driver:$drv/lib64/common:$drv/lib64" \
		--log-uri "file://$dir/plugin.log" docker.io/library/ascend-device-plugin:0.1.0 plugin \
		/usr/local/bin/ascend-device-plugin --resource-name=ascend.com/npu \
		--socket-dir=/var/lib/kubelet/device-plugins --health-interval=5s >/dev/null
	check "the plugin finds the simulator" log_has "$dir/plugin.log" \
		"using DCMI from $drv/lib64/driver/libdcmi.so (driver 24.1.rc1)"
	check "and 8 chips" log_has "$dir/plugin.log" "found 8 NPU chips (chip 910B3, family 910B)"
	node_set_chip_health "$node" 5 2 80E01801
	check "a fault on the node reaches it" log_has "$dir/plugin.log" "npu-5 is Unhealthy"
	node_set_chip_health "$node" 5 0 ""
	check "and the recovery" log_has "$dir/plugin.log" "npu-5 recovered"
else
	skip "the plugin image" "no PLUGIN_IMAGE_TAR"
fi

# ---- teardown, the hard way --------------------------------------------------------
# The shell's shim too: its container is orphaned, its socket left behind.
shim_socket=/run/containerd/s/$(printf '%s' "$sock/k8s.io/shell" | sha256sum | cut -d' ' -f1)
check "the shell's shim has its socket" test -S "$shim_socket"
# shellcheck disable=SC2046
kill -KILL "$(cat "$dir/containerd.pid")" $(_e2e_pids_naming "-id shell -address $sock")
check "teardown after containerd and a shim were killed" teardown "$dir"
check "nothing is left" node_assert_clean "$dir"
check "nor the shim's socket" test ! -e "$shim_socket"
check "teardown twice" teardown "$dir"
finish
