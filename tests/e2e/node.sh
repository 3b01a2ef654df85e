# SPDX-License-Identifier: Apache-2.0
# One simulated Ascend node with a real container runtime, for the e2e test
# and `make demo-containers` (sourced, not run; safe under `set -u`, and does
# not rely on `set -e`: every function returns non-zero on failure and says
# why on stderr). Needs root and `scripts/deps.sh e2e`.
#
# A node is a directory NODE standing for the host's root: kubelet-sim
# --node-root NODE resolves every host path under it, so the shipped DaemonSet
# runs unchanged. containerd (with its CRI plugin) runs from a directory DIR of
# its own; keep DIR short (mktemp -d /tmp/e2e.XXXXXX), as unix socket paths
# must stay under 108 bytes, and put NODE inside it (DIR/node), so that
# `teardown DIR` removes both.
#
# The device nodes: every NPU node (davinci0-7, davinci_manager, devmm_svm,
# hisi_hdc) is character device 1:3, the kernel's null device, so that a
# container allowed to use one can open it (reads see EOF, writes vanish).
# They are owned by root:E2E_NPU_GID (1000, standing for the gid of
# HwHiAiUser) with mode 0660, like a real driver's: a non-root container
# without that supplementary group gets "Permission denied".
#
# Images: images_build makes docker.io/local/pause:1 (the CRI plugin's
# sandbox_image) and docker.io/local/busybox:1 (busybox-static with every
# applet, standing in for the examples' debian:12-slim). scripts/image.sh
# names the plugin's archive docker.io/library/ascend-device-plugin:<version>,
# which is what the CRI plugin makes of the DaemonSet's
# "ascend-device-plugin:0.1.0" (Docker's normalisation), so it resolves as is.
#
# Outside DIR, only what containerd and CNI keep in fixed places is touched,
# and teardown removes this instance's part of it: shim sockets in
# /run/containerd/s and CNI results in /var/lib/cni/results. (`ctr run`
# needs --fifo-dir DIR/fifo and --runc-root DIR/runc to stay inside DIR.)

E2E_NPU_GID=1000
E2E_NPU_MAJOR=1
E2E_NPU_MINOR=3
E2E_PAUSE_IMAGE=docker.io/local/pause:1
E2E_BUSYBOX_IMAGE=docker.io/local/busybox:1
E2E_INFERENCE_IMAGE=docker.io/local/inference:1
E2E_CHIPS=8
_e2e_here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
_e2e_root=$(cd "$_e2e_here/../.." && pwd)
# containerd and its shims find runc, ip and nsenter here, whatever the caller's PATH.
_e2e_path=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin

_e2e_err() { # MESSAGE...: one line on stderr, prefixed; fails, for `cmd || _e2e_err why || return`
	echo "node.sh: $*" >&2
	return 1
}

_e2e_warn() { # MESSAGE...: one line on stderr, prefixed; succeeds (safe under set -e)
	echo "node.sh: $*" >&2
}

_e2e_now_ms() { # prints the time in milliseconds (EPOCHREALTIME, any locale)
	local t=${EPOCHREALTIME//[.,]/}
	echo $((t / 1000))
}

_e2e_secs() { # MS: prints MS as seconds with a fraction, for timeout and read -t
	printf '%d.%03d' $(($1 / 1000)) $(($1 % 1000))
}

# ---- the node ----------------------------------------------------------------

node_create() { # NODE BUILD_DIR: makes the simulated node root NODE (must not exist or be empty)
	local node=${1:?node_create NODE BUILD_DIR} build=${2:?node_create NODE BUILD_DIR}
	local lib=$build/tests/fake-dcmi/libdcmi.so drv=$1/usr/local/Ascend/driver i
	[ -f "$lib" ] || _e2e_err "$lib: no DCMI simulator (build the fake_dcmi target)" || return
	[ ! -e "$node" ] || [ -z "$(ls -A "$node")" ] || _e2e_err "$node is not empty" || return
	# The plugin refuses a DCMI library in a directory that group or others
	# may write: fixed modes, whatever the caller's umask.
	install -d -m 0755 -o 0 -g 0 "$node" "$node/dev" "$node/dev/pts" "$node/dev/shm" "$node/dev/mqueue" \
		"$node/usr" "$node/usr/local" "$node/usr/local/Ascend" "$drv" "$drv/include" "$drv/lib64" \
		"$drv/lib64/common" "$drv/lib64/driver" "$node/var" "$node/var/lib" "$node/var/lib/kubelet" \
		"$node/var/lib/kubelet/device-plugins" "$node/var/log" "$node/var/log/pods" || return
	chmod 1777 "$node/dev/shm" || return

	# What a container's /dev has when runc does not make it (a bind-mounted
	# /dev, as in the DaemonSet).
	mknod -m 0666 "$node/dev/null" c 1 3 && mknod -m 0666 "$node/dev/zero" c 1 5 &&
		mknod -m 0666 "$node/dev/full" c 1 7 && mknod -m 0666 "$node/dev/random" c 1 8 &&
		mknod -m 0666 "$node/dev/urandom" c 1 9 && mknod -m 0666 "$node/dev/tty" c 5 0 &&
		ln -s pts/ptmx "$node/dev/ptmx" && ln -s /proc/self/fd "$node/dev/fd" &&
		ln -s /proc/self/fd/0 "$node/dev/stdin" && ln -s /proc/self/fd/1 "$node/dev/stdout" &&
		ln -s /proc/self/fd/2 "$node/dev/stderr" || return
	for ((i = 0; i < E2E_CHIPS; i++)); do
		_e2e_npu_node "$node/dev/davinci$i" || return
	done
	for i in davinci_manager devmm_svm hisi_hdc; do
		_e2e_npu_node "$node/dev/$i" || return
	done

	# The driver: the simulator as libdcmi.so, its state next to it (the
	# simulator's default when ASCEND_FAKE_DCMI_STATE is unset, as in the
	# DaemonSet), and a version.info as a 24.1.rc1 driver writes it.
	install -m 0755 -o 0 -g 0 "$lib" "$drv/lib64/driver/libdcmi.so" || return
	install -m 0644 -o 0 -g 0 "$_e2e_root/tests/fake-dcmi/example-910b.state" \
		"$drv/lib64/driver/fake-dcmi.state" || return
	printf '%s\n' "Version=24.1.rc1" "Innerversion=V100R001C15SPC006B220" "package_version=24.1.rc1" \
		>"$drv/version.info" && chmod 0644 "$drv/version.info"
}

_e2e_npu_node() { # PATH: one NPU device node, root:E2E_NPU_GID 0660
	mknod -m 0660 "$1" c "$E2E_NPU_MAJOR" "$E2E_NPU_MINOR" && chown "0:$E2E_NPU_GID" "$1"
}

node_state_file() { # NODE: prints the path of NODE's DCMI simulator state file
	echo "${1:?node_state_file NODE}/usr/local/Ascend/driver/lib64/driver/fake-dcmi.state"
}

node_set_chip_health() { # NODE PHY HEALTH [ERRORS]: sets chip PHY's health (0-3|absent), and its error codes if given ("" clears them), by atomic rename
	local node=${1:?node_set_chip_health NODE PHY HEALTH [ERRORS]} phy=${2:?} health=${3:?}
	local state tmp errors=${4-} set_errors=false st=0
	[ $# -ge 4 ] && set_errors=true
	state=$(node_state_file "$node")
	[[ $phy =~ ^[0-9]+$ ]] || _e2e_err "PHY '$phy' is not a number" || return
	[[ $health =~ ^([0-3]|absent)$ ]] || _e2e_err "HEALTH '$health' is not 0-3 or absent" || return
	[[ $errors =~ ^[0-9A-Fa-fx,]*$ ]] || _e2e_err "ERRORS '$errors' is not a list of hex codes" || return
	tmp=$state.tmp
	# The simulator re-reads the file when it is renamed into place, never
	# half-written. A comment on the chip's line stays at its end.
	awk -v phy="$phy" -v health="$health" -v errors="$errors" -v set_errors="$set_errors" '
		{
			text = $0
			comment = ""
			if ((c = index(text, "#")) > 0) {
				comment = " " substr(text, c)
				text = substr(text, 1, c - 1)
			}
			n = split(text, f, /[ \t]+/)
			first = f[1] == "" ? 2 : 1
			chip = 0
			for (i = first + 1; i <= n; i++)
				if (f[first] == "chip" && f[i] == "phy=" phy)
					chip = 1
			if (!chip) {
				print
				next
			}
			found = 1
			line = "chip"
			for (i = first + 1; i <= n; i++) {
				if (f[i] == "" || f[i] ~ /^health=/ || (set_errors == "true" && f[i] ~ /^errors=/))
					continue
				line = line " " f[i]
			}
			line = line " health=" health
			if (set_errors == "true" && errors != "")
				line = line " errors=" errors
			print line comment
		}
		END { exit found ? 0 : 3 }' "$state" >"$tmp" || st=$?
	case $st in
	0) chmod 0644 "$tmp" && mv -f "$tmp" "$state" ;;
	3) rm -f "$tmp"; _e2e_err "$state has no chip phy=$phy" ;;
	*) rm -f "$tmp"; _e2e_err "cannot rewrite $state" ;;
	esac
}

# ---- containerd ----------------------------------------------------------------

containerd_start() { # DIR: writes DIR/config.toml, starts containerd (CRI) on DIR/containerd.sock, waits until it serves; DIR/containerd.pid, DIR/containerd.log
	local dir=${1:?containerd_start DIR} sock pid started fd line deadline now wpid st rc=0
	sock=$dir/containerd.sock
	((${#sock} < 108)) || _e2e_err "$sock: longer than a unix socket path may be; use a shorter DIR" || return
	[ ! -e "$dir/containerd.pid" ] || _e2e_err "$dir already has a containerd" || return
	command -v inotifywait >/dev/null || _e2e_err "no inotifywait (scripts/deps.sh e2e)" || return
	mkdir -p "$dir/root" "$dir/state" "$dir/runc" "$dir/opt" "$dir/cni/bin" "$dir/cni/net.d" || return
	# Pods that do not use the host network need CNI: a private one, whose
	# plugin does not touch the host's network (tests/e2e/cni-veth.sh).
	ln -sf /usr/lib/cni/loopback "$dir/cni/bin/loopback" &&
		ln -sf "$_e2e_here/cni-veth.sh" "$dir/cni/bin/e2e-veth" &&
		echo '{"cniVersion":"1.0.0","name":"e2e","plugins":[{"type":"e2e-veth"}]}' \
			>"$dir/cni/net.d/10-e2e.conflist" || return
	_e2e_config "$dir" >"$dir/config.toml" && grep -q "^\[plugins.\"io.containerd.grpc.v1.cri\"\]" "$dir/config.toml" ||
		_e2e_err "could not write $dir/config.toml" || return

	# Wait for the socket with inotify, watching before containerd starts so
	# that its creation cannot be missed.
	mkfifo "$dir/.watch" || return
	inotifywait -m -e create --format %f "$dir" >"$dir/.watch" 2>&1 </dev/null &
	wpid=$!
	exec {fd}<"$dir/.watch"
	rm -f "$dir/.watch"
	started=$(_e2e_now_ms)
	deadline=$((started + 30000))
	while :; do
		read -r -t 5 -u "$fd" line || { rc=1; break; }
		[ "$line" = "Watches established." ] && break
	done
	if ((rc == 0)); then
		# Its own session: a Ctrl-C meant for the test does not stop it before
		# teardown has removed its containers.
		# root, state and address on the command line as well: should the
		# file be unreadable, containerd would otherwise take the host's
		# /var/lib/containerd and /run/containerd.
		PATH=$_e2e_path setsid containerd --config "$dir/config.toml" --root "$dir/root" --state "$dir/state" \
			--address "$sock" </dev/null >>"$dir/containerd.log" 2>&1 &
		pid=$!
		# Out of the job table: no "Killed" notice when teardown stops it.
		disown "$pid" 2>/dev/null || true
		echo "$pid" >"$dir/containerd.pid"
		while [ ! -S "$sock" ]; do
			now=$(_e2e_now_ms)
			((now < deadline)) || { _e2e_warn "containerd did not serve $sock within 30 s"; rc=1; break; }
			kill -0 "$pid" 2>/dev/null || { _e2e_warn "containerd exited"; rc=1; break; }
			# Woken by every file created in DIR; the timeout only bounds
			# how late an early exit of containerd is noticed.
			st=0
			read -r -t 0.5 -u "$fd" line || st=$?
			((st == 0 || st > 128)) || { _e2e_warn "inotifywait stopped"; rc=1; break; }
		done
	else
		_e2e_warn "inotifywait did not start"
	fi
	kill "$wpid" 2>/dev/null || true
	wait "$wpid" 2>/dev/null || true
	exec {fd}<&-
	# containerd serves even when a plugin failed to load: the CRI plugin must be there.
	if ((rc == 0)) && [ "$(timeout 10 ctr --address "$sock" plugins ls 2>&1 | awk '$2 == "cri" { print $4 }')" != ok ]; then
		_e2e_warn "containerd on $sock runs without its CRI plugin:"
		grep -E 'level=(warning|error)' "$dir/containerd.log" >&2 || true
		rc=1
	fi
	if ((rc != 0)); then
		tail -n 20 "$dir/containerd.log" >&2 || true
		return 1
	fi
	echo "containerd $(cat "$dir/containerd.pid") serves $sock (started in $(($(_e2e_now_ms) - started)) ms)"
}

_e2e_config() { # DIR: prints containerd's configuration
	local d=$1
	cat <<EOF
# Written by tests/e2e/node.sh: containerd for one simulated node, with
# everything under $d.
version = 2
root = "$d/root"
state = "$d/state"
# Not needed here; aufs, btrfs, devmapper and zfs only probe and warn.
disabled_plugins = [
  "io.containerd.snapshotter.v1.aufs",
  "io.containerd.snapshotter.v1.btrfs",
  "io.containerd.snapshotter.v1.devmapper",
  "io.containerd.snapshotter.v1.zfs",
  "io.containerd.tracing.processor.v1.otlp",
  "io.containerd.internal.v1.tracing",
]

[grpc]
  address = "$d/containerd.sock"

[plugins."io.containerd.internal.v1.opt"]
  path = "$d/opt"

[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "$E2E_PAUSE_IMAGE"
  # runc cannot join the cgroups here (RunPodSandbox fails with "can't get
  # final child's PID from pipe: EOF"), and there is no AppArmor.
  disable_cgroup = true
  disable_apparmor = true
  restrict_oom_score_adj = true
  # Network namespaces are mounted under state, not /run/netns.
  netns_mounts_under_state_dir = true

  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "$d/cni/bin"
    conf_dir = "$d/cni/net.d"

  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"

  [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
    runtime_type = "io.containerd.runc.v2"

  [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
    # runc's state under DIR, not /run/containerd/runc.
    Root = "$d/runc"
EOF
}

# ---- images --------------------------------------------------------------------

images_build() { # OUT_DIR: builds OUT_DIR/pause.tar (docker.io/local/pause:1), OUT_DIR/busybox.tar (docker.io/local/busybox:1) and OUT_DIR/inference.tar (docker.io/local/inference:1), reproducibly
	local out=${1:?images_build OUT_DIR} work epoch created arch rootless=() rc=0
	for t in umoci skopeo jq; do
		command -v $t >/dev/null || _e2e_err "no $t (scripts/deps.sh e2e)" || return
	done
	# busybox-static: the images have no libc.
	dpkg-query -W -f='${Status}' busybox-static 2>/dev/null | grep -q "install ok installed" ||
		_e2e_err "busybox-static is not installed (scripts/deps.sh e2e)" || return
	if [ -n "${SOURCE_DATE_EPOCH:-}" ]; then
		epoch=$SOURCE_DATE_EPOCH
	else
		epoch=$(git -C "$_e2e_root" log -1 --format=%ct 2>/dev/null) ||
			_e2e_err "not a git checkout: set SOURCE_DATE_EPOCH" || return
	fi
	created=$(date -u -d "@$epoch" +%Y-%m-%dT%H:%M:%SZ) || return
	arch=$(dpkg --print-architecture) || return
	[ "$(id -u)" -eq 0 ] || rootless=(--rootless)
	mkdir -p "$out" || return
	work=$(mktemp -d "$out/.images.XXXXXX") || return
	_e2e_build_image "$work" "$epoch" "$created" "$arch" pause "$E2E_PAUSE_IMAGE" "${rootless[@]}" &&
		_e2e_build_image "$work" "$epoch" "$created" "$arch" busybox "$E2E_BUSYBOX_IMAGE" "${rootless[@]}" &&
		_e2e_build_image "$work" "$epoch" "$created" "$arch" inference "$E2E_INFERENCE_IMAGE" "${rootless[@]}" &&
		mv -f "$work/pause.tar" "$out/pause.tar" && mv -f "$work/busybox.tar" "$out/busybox.tar" &&
		mv -f "$work/inference.tar" "$out/inference.tar" || rc=1
	rm -rf "$work"
	((rc == 0)) || return 1
	echo "$out/pause.tar: $E2E_PAUSE_IMAGE"
	echo "$out/busybox.tar: $E2E_BUSYBOX_IMAGE"
	echo "$out/inference.tar: $E2E_INFERENCE_IMAGE"
}

_e2e_build_image() { # WORK EPOCH CREATED ARCH KIND NAME [--rootless]: WORK/KIND.tar
	local work=$1 epoch=$2 created=$3 arch=$4 kind=$5 name=$6 oci=$1/oci bundle=$1/bundle-$5 rootfs
	local cfg=() applet
	shift 6
	[ -d "$oci" ] || umoci init --layout "$oci" || return
	umoci new --image "$oci:$kind" && umoci unpack "$@" --image "$oci:$kind" "$bundle" || return
	rootfs=$bundle/rootfs
	install -d -m 0755 "$rootfs/bin" && install -m 0755 /bin/busybox "$rootfs/bin/busybox" || return
	if [ "$kind" = pause ]; then
		# Killed with SIGKILL by the CRI plugin (StopPodSandbox), so no signal handling is needed.
		cfg=(--config.entrypoint /bin/busybox --config.entrypoint sleep --config.entrypoint 2147483647)
	else
		# Every applet where Debian's busybox --install -s would put it
		# (/bin/sh, /usr/bin/tr, ...), like a small distribution image.
		install -d -m 0755 "$rootfs/sbin" "$rootfs/usr" "$rootfs/usr/bin" "$rootfs/usr/sbin" "$rootfs/etc" \
			"$rootfs/root" "$rootfs/tmp" && chmod 1777 "$rootfs/tmp" && chmod 0700 "$rootfs/root" || return
		while read -r applet; do
			[ "$applet" = bin/busybox ] || ln -s /bin/busybox "$rootfs/$applet" || return
		done < <(/bin/busybox --list-full)
		printf '%s\n' "root:x:0:0:root:/root:/bin/sh" "nobody:x:65534:65534:nobody:/nonexistent:/bin/false" \
			>"$rootfs/etc/passwd" &&
			printf '%s\n' "root:x:0:" "nogroup:x:65534:" >"$rootfs/etc/group" || return
		cfg=(--config.cmd /bin/sh)
		if [ "$kind" = inference ]; then
			# Stands in for the examples' my-inference:v1: answers GET
			# /healthz on port 8080, as their probes expect.
			install -d -m 0755 "$rootfs/www" && echo ok >"$rootfs/www/healthz" || return
			cfg=(--config.cmd /bin/busybox --config.cmd httpd --config.cmd -f --config.cmd -p --config.cmd 8080 --config.cmd -h --config.cmd /www)
		fi
	fi
	find "$rootfs" -exec touch -h -d "@$epoch" {} + || return
	umoci repack --image "$oci:$kind" --history.created "$created" \
		--history.created_by "tests/e2e/node.sh images_build" "$bundle" &&
		umoci config --image "$oci:$kind" --no-history --created "$created" --os linux --architecture "$arch" \
			--config.env PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin "${cfg[@]}" \
			--config.label "org.opencontainers.image.title=$name" \
			--config.label "org.opencontainers.image.description=e2e test image (tests/e2e/node.sh): busybox-static" &&
		umoci gc --layout "$oci" &&
		skopeo copy --quiet "oci:$oci:$kind" "docker-archive:$work/$kind.tar:$name"
}

images_import() { # SOCK TAR...: imports docker-archives into the k8s.io namespace (the CRI plugin's), replacing images of the same names, unpacks them and waits until the CRI plugin has taken each in; prints each image name
	local sock=${1:?images_import SOCK TAR...} tar names=() name wanted=" " fd epid line json probe deadline left st
	local ctr=(timeout 120 ctr --address "$sock" -n k8s.io) rc=0
	shift
	for tar in "$@"; do
		mapfile -t -O ${#names[@]} names < <(tar -xOf "$tar" manifest.json 2>/dev/null | jq -r '.[].RepoTags[]?')
	done
	for name in "${names[@]}"; do
		wanted+="$name "
	done
	[ ${#names[@]} -gt 0 ] || _e2e_err "no image names in $*" || return
	# The CRI plugin learns of an image from containerd's events, after the
	# import returns; once it has, it labels the image "managed". Watch for
	# that label, subscribed before importing: a fresh name gets the label
	# by an update event. An image already there would not, so it goes first.
	for name in "${names[@]}"; do
		"${ctr[@]}" images rm "$name" >/dev/null 2>&1 || true
	done
	mkfifo "$sock.events" || return
	ctr --address "$sock" events >"$sock.events" 2>&1 </dev/null &
	epid=$!
	exec {fd}<"$sock.events"
	rm -f "$sock.events"
	deadline=$(($(_e2e_now_ms) + 120000))
	# The subscription is live once it reports a change made after it started.
	probe=e2e.probe=$BASHPID.${EPOCHREALTIME//[.,]/}
	"${ctr[@]}" namespaces label k8s.io "$probe" >/dev/null || rc=1
	while ((rc == 0)); do
		read -r -t 10 -u "$fd" line || { _e2e_warn "no containerd events"; rc=1; break; }
		[[ $line == *"/namespaces/update "*"${probe#*=}"* ]] && break
	done
	"${ctr[@]}" namespaces label k8s.io "${probe%%=*}=" >/dev/null || true
	if ((rc == 0)); then
		for tar in "$@"; do
			"${ctr[@]}" images import "$tar" >/dev/null || { _e2e_warn "importing $tar failed"; rc=1; break; }
		done
	fi
	while ((rc == 0)) && [ "$wanted" != " " ]; do
		left=$((deadline - $(_e2e_now_ms)))
		((left > 0)) || { _e2e_warn "the CRI plugin did not take in:$wanted"; rc=1; break; }
		st=0
		read -r -t "$(_e2e_secs "$left")" -u "$fd" line || st=$?
		((st == 0 || st > 128)) || { _e2e_warn "containerd's event stream ended"; rc=1; break; }
		[[ $line == *" /images/update {"* ]] || continue
		json=${line#* /images/update }
		name=$(jq -r 'select(.labels["io.cri-containerd.image"] == "managed") | .name' <<<"$json" 2>/dev/null) || name=
		[ -z "$name" ] || wanted=${wanted/ $name / }
	done
	kill "$epid" 2>/dev/null || true
	wait "$epid" 2>/dev/null || true
	exec {fd}<&-
	((rc == 0)) || return 1
	printf '%s\n' "${names[@]}"
}

# ---- teardown ------------------------------------------------------------------

_e2e_ancestors() { # prints this shell and its ancestors, whose command lines may name DIR
	local p=$BASHPID key value
	while [ -n "$p" ] && [ "$p" -gt 1 ]; do
		echo "$p"
		key=
		{ while read -r key value; do
			[ "$key" != PPid: ] || break
		done <"/proc/$p/status"; } 2>/dev/null || break
		[ "$key" = PPid: ] || break
		p=$value
	done
}

_e2e_pids_naming() { # TEXT...: prints the processes whose command line contains a TEXT (not this shell's ancestors)
	local f p text skip args=()
	skip=" $(_e2e_ancestors | tr '\n' ' ') "
	for f in /proc/[0-9]*/cmdline; do
		p=${f#/proc/}
		p=${p%/cmdline}
		[[ $skip == *" $p "* ]] && continue
		# Read by bash itself: no process per process, and no helper
		# process carrying TEXT in its own arguments.
		mapfile -d '' -t args 2>/dev/null <"$f" || continue
		for text in "$@"; do
			if [[ " ${args[*]} " == *"$text"* ]]; then
				echo "$p"
				break
			fi
		done
	done
}

_e2e_pids_naming_path() { # PATH...: prints the processes whose command line names a PATH or a file under it
	local p texts=()
	for p in "$@"; do
		texts+=("$p/" "$p ")
	done
	_e2e_pids_naming "${texts[@]}"
}

_e2e_pids_rooted() { # PREFIX...: prints the processes whose root is a mount naming a PREFIX (containers on our snapshots)
	local f p prefix root
	for f in /proc/[0-9]*/mountinfo; do
		p=${f#/proc/}
		p=${p%/mountinfo}
		# -ef compares the namespaces' inodes, without a process per process.
		[[ /proc/$p/ns/mnt -ef /proc/$BASHPID/ns/mnt ]] && continue
		# Only the root mount: another namespace that merely copied ours
		# while our mounts existed (a service with PrivateTmp) is not ours.
		root=$(awk '$5 == "/"' "$f" 2>/dev/null) || continue
		for prefix in "$@"; do
			if [[ $root == *"$prefix/"* ]]; then
				echo "$p"
				break
			fi
		done
	done
}

_e2e_descendants() { # PID...: prints every descendant of the PIDs
	local -A children=()
	local stat p pp queue=("$@") rest
	for stat in /proc/[0-9]*/stat; do
		# Field 4 is the parent; the name in field 2 may hold spaces, so cut after its ")".
		read -r rest 2>/dev/null <"$stat" || continue
		p=${rest%% *}
		rest=${rest##*) }
		pp=${rest#* }
		pp=${pp%% *}
		children[$pp]+=" $p"
	done
	while [ ${#queue[@]} -gt 0 ]; do
		p=${queue[0]}
		queue=("${queue[@]:1}")
		for pp in ${children[$p]-}; do
			echo "$pp"
			queue+=("$pp")
		done
	done
}

_e2e_wait_exit() { # DEADLINE_MS PIDFILE PID...: waits (pidwait, no polling) until the PIDs exit or the deadline passes; 1 if one is left
	local deadline=$1 pidfile=$2 p left st
	shift 2
	for p in "$@"; do
		left=$((deadline - $(_e2e_now_ms)))
		((left > 0)) || left=1
		echo "$p" >"$pidfile"
		st=0
		timeout "$(_e2e_secs "$left")" pidwait -F "$pidfile" >/dev/null 2>&1 || st=$?
		[ $st -ne 124 ] || { rm -f "$pidfile"; return 1; }
	done
	rm -f "$pidfile"
}

_e2e_kill_wait() { # SIGNAL MS PID...: signals the PIDs and waits up to MS for them to exit
	local sig=$1 ms=$2 pidfile
	shift 2
	[ $# -gt 0 ] || return 0
	kill -s "$sig" "$@" 2>/dev/null || true
	pidfile=$(mktemp) || return
	_e2e_wait_exit $(($(_e2e_now_ms) + ms)) "$pidfile" "$@"
}

_e2e_unix_sockets() { # PID: prints the paths of the unix sockets PID has open
	local fd inode
	for fd in /proc/"$1"/fd/*; do
		inode=$(readlink "$fd" 2>/dev/null) || continue
		[[ $inode == socket:\[*\] ]] || continue
		inode=${inode#socket:[}
		awk -v i="${inode%]}" '$7 == i && $8 != "" && $8 !~ /^@/ { print $8 }' /proc/net/unix
	done
}

_e2e_mounts_under() { # PREFIX...: prints the mount points under the PREFIXes, the last mounted first
	local prefix
	for prefix in "$@"; do
		awk '{ print $5 }' /proc/self/mountinfo | while read -r m; do
			m=$(printf '%b' "$m")
			if [ "$m" = "$prefix" ] || [[ $m == "$prefix"/* ]]; then echo "$m"; fi
		done
	done | tac
}

_e2e_is_containerd() { # PID DIR: whether PID is the containerd of DIR
	local args=()
	[[ $1 =~ ^[0-9]+$ ]] || return 1
	mapfile -d '' -t args 2>/dev/null <"/proc/$1/cmdline" || return 1
	[[ " ${args[*]} " == *" --config $2/config.toml "* ]]
}

teardown() { # DIR [NODE...]: removes containerd's containers, stops containerd and its shims, kills what is left, unmounts and deletes DIR and the NODEs; idempotent
	local dir=${1:?teardown DIR [NODE...]} sock ns id pid pids shims sockets=() m rc=0
	shift
	local prefixes=("$dir" "$@") p
	for p in "${prefixes[@]}"; do
		[[ $p == /?*/?* && $p != */ && $p != *..* ]] ||
			_e2e_err "teardown: refusing to remove '$p' (not an absolute path two levels deep, without .. or a final /)" || return
	done
	sock=$dir/containerd.sock
	pid=
	if [ -f "$dir/containerd.pid" ]; then
		pid=$(cat "$dir/containerd.pid")
		# Only if the PID is still ours (a zombie has no command line).
		_e2e_is_containerd "$pid" "$dir" || pid=
	fi

	# Ask containerd first: it kills the containers and removes their
	# snapshots and runc state. Bounded, in case it hangs. (ctr would wait
	# for its whole timeout on the socket of a dead containerd.)
	if [ -n "$pid" ] && [ -S "$sock" ] && timeout 5 ctr --address "$sock" version >/dev/null 2>&1; then
		for ns in $(timeout 5 ctr --address "$sock" namespaces ls -q 2>/dev/null); do
			for id in $(timeout 5 ctr --address "$sock" -n "$ns" tasks ls -q 2>/dev/null); do
				timeout 15 ctr --address "$sock" -n "$ns" tasks rm -f "$id" >/dev/null 2>&1 ||
					_e2e_warn "teardown: could not delete task $ns/$id"
			done
			for id in $(timeout 5 ctr --address "$sock" -n "$ns" containers ls -q 2>/dev/null); do
				timeout 15 ctr --address "$sock" -n "$ns" containers rm "$id" >/dev/null 2>&1 ||
					_e2e_warn "teardown: could not delete container $ns/$id"
			done
		done
	fi

	# containerd itself: TERM, then KILL.
	if [ -n "$pid" ]; then
		_e2e_kill_wait TERM 10000 "$pid" || _e2e_kill_wait KILL 5000 "$pid" ||
			{ _e2e_warn "teardown: containerd $pid does not exit"; rc=1; }
	fi

	# Whatever is left (containerd dead or not answering): the shims of this
	# instance (their -address names our socket) with every process under
	# them, and any process naming DIR or a NODE (kubelet-sim, a plugin run by
	# hand).
	shims=$(_e2e_pids_naming "-address $sock")
	for pid in $shims; do
		mapfile -t -O ${#sockets[@]} sockets < <(_e2e_unix_sockets "$pid")
	done
	# shellcheck disable=SC2046,SC2086 # word splitting of PID lists is intended
	_e2e_kill_wait KILL 5000 $(_e2e_descendants $shims) || { _e2e_warn "teardown: container processes do not exit"; rc=1; }
	# shellcheck disable=SC2086
	_e2e_kill_wait KILL 5000 $shims || { _e2e_warn "teardown: shims do not exit"; rc=1; }
	pids=$(_e2e_pids_naming_path "${prefixes[@]}")
	# shellcheck disable=SC2086
	_e2e_kill_wait TERM 5000 $pids || _e2e_kill_wait KILL 5000 $pids ||
		{ _e2e_warn "teardown: processes naming $dir do not exit"; rc=1; }
	# Containers that outlived their shim, found by their root file system.
	# shellcheck disable=SC2046
	_e2e_kill_wait KILL 5000 $(_e2e_pids_rooted "${prefixes[@]}") ||
		{ _e2e_warn "teardown: orphaned container processes do not exit"; rc=1; }
	# A shim killed before it could clean up leaves its socket in
	# /run/containerd/s, named sha256(<containerd address>/<namespace>/<id>)
	# (containerd's runtime/v2/shim SocketAddress), whatever state is set to.
	for p in "${sockets[@]}"; do
		[[ $p != /run/containerd/s/* ]] || rm -f -- "$p"
	done
	for p in "$dir"/state/io.containerd.runtime.v2.task/*/*; do
		[ -d "$p" ] || continue
		id=${p##*/}
		ns=${p%/*}
		ns=${ns##*/}
		id=$(printf '%s' "$sock/$ns/$id" | sha256sum)
		rm -f -- "/run/containerd/s/${id%% *}"
	done
	# CNI caches each sandbox's result in /var/lib/cni/results (libcni's
	# fixed place) until the sandbox is stopped: "<network>-<sandbox id>-<if>".
	for p in "$dir"/root/io.containerd.grpc.v1.cri/sandboxes/*; do
		id=${p##*/}
		[[ ! $id =~ ^[0-9a-f]{64}$ ]] || rm -f -- /var/lib/cni/results/*-"$id"-*
	done

	# Mounts (rootfs overlays, sandbox /dev/shm, network namespaces), the
	# last first; lazily when busy. Then the files, but never through a mount.
	for _ in 1 2 3; do
		m=$(_e2e_mounts_under "${prefixes[@]}")
		[ -n "$m" ] || break
		while read -r p; do
			umount "$p" 2>/dev/null || umount -l "$p" 2>/dev/null || true
		done <<<"$m"
	done
	m=$(_e2e_mounts_under "${prefixes[@]}")
	if [ -n "$m" ]; then
		_e2e_warn "teardown: still mounted, not removing files:" "${m//$'\n'/ }"
		return 1
	fi
	for p in "${prefixes[@]}"; do
		rm -rf --one-file-system -- "$p" || rc=1
	done
	return $rc
}

node_assert_clean() { # DIR [NODE...]: fails, listing them on stderr, if a process, container, mount or file of DIR or a NODE is left
	local p pids m rc=0
	for p in "$@"; do
		pids=$(_e2e_pids_naming_path "$p")
		[ -z "$pids" ] || { _e2e_warn "processes naming $p:" "${pids//$'\n'/ }"; rc=1; }
		pids=$(_e2e_pids_rooted "$p")
		[ -z "$pids" ] || { _e2e_warn "containers rooted in $p:" "${pids//$'\n'/ }"; rc=1; }
		m=$(_e2e_mounts_under "$p")
		[ -z "$m" ] || { _e2e_warn "mounts under $p:" "${m//$'\n'/ }"; rc=1; }
		[ ! -e "$p" ] || { _e2e_warn "$p still exists"; rc=1; }
	done
	return $rc
}
