#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# A real consumer of the CDI spec: the plugin, with --device-list-strategy=cdi,
# writes its spec for a node of device nodes made with mknod; kubelet-sim's
# Allocate gets the CDI name of chip 3; podman (4.3.1 on Debian 12, which
# reads specs from /etc/cdi and /var/run/cdi only) runs a busybox container
# with --device NAME, which must see exactly /dev/davinci3 with the node's
# numbers, the shared nodes, and the driver files read-only. SIGTERM must
# remove the spec.
#
# The spec goes into the real /var/run/cdi, so it is made for a resource
# name of its own (cdi-test-<pid>-<random>.ascend.com/npu): nothing another
# spec there names is touched, and the file is removed on every exit path.
# Needs root (mknod, /var/run/cdi, podman); skips without it or without
# podman, runc or busybox-static.
set -uo pipefail
plugin=$1 sim=$2
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
chmod 755 "$tmp"
# shellcheck source=tests/scripts/lib.sh
. "$here/lib.sh"

if [ "$(id -u)" -ne 0 ]; then
	rm -rf "$tmp"
	skip_test "needs root (mknod, /var/run/cdi, podman)"
fi
for tool in podman runc; do
	command -v $tool >/dev/null || { rm -rf "$tmp"; skip_test "no $tool (scripts/deps.sh image-run)"; }
done
if ! dpkg-query -W -f='${Status}' busybox-static 2>/dev/null | grep -q "install ok installed"; then
	rm -rf "$tmp"
	skip_test "no busybox-static (scripts/deps.sh e2e)"
fi

# shellcheck disable=SC2034 # used by sim.sh
WAIT_S=30 node=$tmp
# shellcheck source=tests/scripts/sim.sh
. "$here/sim.sh"

vendor=cdi-test-$$-$RANDOM.ascend.com
kind=$vendor/npu
cdi_dir=/var/run/cdi
spec=$cdi_dir/$vendor-npu.json
made_cdi_dir=false
[ -d "$cdi_dir" ] || made_cdi_dir=true
plugin_pid=''
podman_cmd=(podman --root "$tmp/podman/root" --runroot "$tmp/podman/run" --tmpdir "$tmp/podman/tmp"
	--storage-driver vfs --cgroup-manager cgroupfs --events-backend file --runtime runc)
cleanup() {
	[ -n "$plugin_pid" ] && kill -TERM "$plugin_pid" 2>/dev/null && wait "$plugin_pid" 2>/dev/null
	sim_quit
	# Only this test's names: the spec, and a temp file a crash may leave.
	rm -f "$spec" "$cdi_dir/.$vendor-npu.json.tmp"
	$made_cdi_dir && rmdir "$cdi_dir" 2>/dev/null
	if [ -d "$tmp/podman" ]; then
		"${podman_cmd[@]}" rm -af >/dev/null 2>&1
		"${podman_cmd[@]}" rmi -af >/dev/null 2>&1
		awk -v t="$tmp/" 'index($5, t) == 1 { print $5 }' /proc/self/mountinfo | sort -r |
			while read -r m; do umount -l "$m"; done
	fi
	rm -rf "$tmp"
}
trap cleanup EXIT

# A character-device major no driver has: the container gets a cgroup rule
# for these nodes, which then open nothing.
major=4000
while grep -Eq "^ *$major " /proc/devices; do major=$((major + 1)); done

# ---- the node ------------------------------------------------------------------
mkdir -p "$tmp/dev" "$tmp/kubelet" "$tmp/driver/lib64" "$tmp/image/bin"
for n in 3 5; do mknod -m 0660 "$tmp/dev/davinci$n" c $major $n; done
mknod -m 0660 "$tmp/dev/davinci_manager" c $major 100
mknod -m 0660 "$tmp/dev/devmm_svm" c $major 101
mknod -m 0660 "$tmp/dev/hisi_hdc" c $major 102
echo hal >"$tmp/driver/lib64/libascend_hal.so"
echo "Version=24.1.rc1" >"$tmp/driver/version.info"

# busybox-static alone makes the image.
install -m 0755 /bin/busybox "$tmp/image/bin/busybox"
ln -s busybox "$tmp/image/bin/sh"
tar -C "$tmp/image" -cf "$tmp/image.tar" .
mkdir -p "$tmp/podman"
check "podman import busybox" "${podman_cmd[@]}" import "$tmp/image.tar" localhost/cdi-test-busybox:1

# ---- the plugin and kubelet-sim ------------------------------------------------
sim_start --dir "$tmp/kubelet"
need "kubelet-sim ready" "ready"
# The plugin's log comes through a FIFO, read with deadlines.
mkfifo "$tmp/plugin.fifo"
"$plugin" --socket-dir "$tmp/kubelet" --backend devfs --dev-dir "$tmp/dev" --host-root / \
	--driver-path "$tmp/driver" --resource-name "$kind" --device-list-strategy cdi --cdi-dir "$cdi_dir" \
	2>"$tmp/plugin.fifo" &
plugin_pid=$!
exec {plugin_fd}<"$tmp/plugin.fifo"
plugin_expect() { # NEEDLE: reads the plugin's log until a line holds it, within WAIT_S
	local deadline=$((SECONDS + WAIT_S)) left l
	while left=$((deadline - SECONDS)) && [ "$left" -gt 0 ]; do
		IFS= read -r -t "$left" -u "$plugin_fd" l || break
		echo "$l" >>"$tmp/plugin.log"
		[[ $l == *"$1"* ]] && return 0
	done
	return 1
}
show_plugin() { sed 's/^/    /' "$tmp/plugin.log"; }

if plugin_expect "wrote the CDI spec $spec"; then
	pass "the plugin wrote $spec"
else
	fail "the plugin wrote $spec" "$(show_plugin)"
fi
check "the spec is 0644" test "$(stat -c %a "$spec")" = 644
check "the spec names both chips" grep -q '"name": "5"' "$spec"
need "registered" "register resource=$kind"
need "two chips" "devices resource=$kind capacity=2 allocatable=2"

# ---- Allocate: the CDI name --------------------------------------------------------
send "allocate-ids npu-3"
: >"$tmp/allocate"
while need "allocate" "allocate "; do
	echo "$line" >>"$tmp/allocate"
	[ "$line" = "allocate end" ] && break
	[[ $line == "allocate error"* ]] && break
done
check "Allocate: the CDI device" grep -qx "allocate cdi name=$kind=3" "$tmp/allocate"
check "Allocate: the annotation" grep -qx "allocate annotation name=cdi.k8s.io/${vendor}_npu value=$kind=3" "$tmp/allocate"
check "Allocate: no DeviceSpecs, no mounts but the live status file's and the metadata's" \
	bash -c "! grep -v -e ' container=/var/run/ascend/npu-status ' -e ' container=/var/run/ascend/npu-metadata.json ' '$tmp/allocate' | grep -Eq '^allocate (device|mount) '"
check "Allocate: the live status file's directory" grep -q "^allocate mount host=.*/npu-status/set-npu-3 container=/var/run/ascend/npu-status read_only=1" "$tmp/allocate"
check "Allocate: the device metadata's file" grep -q "^allocate mount host=.*/npu-status/set-npu-3/metadata.json container=/var/run/ascend/npu-metadata.json read_only=1" "$tmp/allocate"
name=$(sed -n 's/^allocate cdi name=//p' "$tmp/allocate")
[ -n "$name" ] || name=$kind=3

# ---- podman runs a container with it ------------------------------------------------
# shellcheck disable=SC2016 # expanded in the container, but for $tmp
script='
for n in davinci3 davinci5 davinci_manager devmm_svm hisi_hdc; do
	[ -e /dev/$n ] && busybox stat -c "node $n %F %t:%T %a" /dev/$n || echo "node $n absent"
done
echo "lib $(busybox cat '"$tmp"'/driver/lib64/libascend_hal.so)"
echo "version $(busybox cat '"$tmp"'/driver/version.info)"
busybox touch '"$tmp"'/driver/lib64/new 2>&1 | busybox sed "s/^/touch /"
busybox touch '"$tmp"'/driver/version.info 2>&1 | busybox sed "s/^/touch /"
'
run=("${podman_cmd[@]}" run --rm --network none --ulimit nofile=1024:1024 --ulimit nproc=1024:1024)
if "${run[@]}" --device "$name" localhost/cdi-test-busybox:1 /bin/busybox sh -c "$script" >"$tmp/run" 2>&1; then
	sed 's/^/    | /' "$tmp/run"
	hex() { printf '%x:%x' "$major" "$1"; }
	check "/dev/davinci3 with the node's numbers" grep -qx "node davinci3 character special file $(hex 3) 660" "$tmp/run"
	check "no /dev/davinci5" grep -qx "node davinci5 absent" "$tmp/run"
	check "/dev/davinci_manager" grep -qx "node davinci_manager character special file $(hex 100) 660" "$tmp/run"
	check "/dev/devmm_svm" grep -qx "node devmm_svm character special file $(hex 101) 660" "$tmp/run"
	check "/dev/hisi_hdc" grep -qx "node hisi_hdc character special file $(hex 102) 660" "$tmp/run"
	check "the driver's lib64 is there" grep -qx "lib hal" "$tmp/run"
	check "version.info is there" grep -qx "version Version=24.1.rc1" "$tmp/run"
	check "lib64 is read-only" grep -q "touch .*lib64/new: Read-only file system" "$tmp/run"
	check "version.info is read-only" grep -q "touch .*version.info: Read-only file system" "$tmp/run"
elif "${run[@]}" localhost/cdi-test-busybox:1 /bin/busybox true >"$tmp/plain" 2>&1; then
	fail "podman run --device $name" "$(sed 's/^/    /' "$tmp/run")"
else
	skip "podman run --device $name" "containers cannot run here: $(tail -1 "$tmp/plain")"
fi

# ---- SIGTERM removes the spec ----------------------------------------------------------
kill -TERM "$plugin_pid"
if wait_exit "$plugin_fd" "$tmp/plugin.log" "$plugin_pid"; then
	plugin_pid=''
	check "the plugin exits 0" test "$sim_status" = 0
else
	fail "the plugin exits after SIGTERM" "$(show_plugin)"
fi
check "the plugin says it removed the spec" grep -q "removed the CDI spec $spec" "$tmp/plugin.log"
check "the spec is gone" test ! -e "$spec"
check "no temp file left" test ! -e "$cdi_dir/.$vendor-npu.json.tmp"
finish
