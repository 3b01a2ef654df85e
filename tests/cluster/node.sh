# SPDX-License-Identifier: Apache-2.0
# The files of one simulated Ascend node and the test images, for the real
# cluster (tests/cluster/cluster.sh; sourced, not run; safe under `set -u`,
# and does not rely on `set -e`: every function returns non-zero on failure
# and says why on stderr). Needs root and `scripts/deps.sh e2e cluster`.
#
# A node is a directory NODE standing for the host's root: its dev/, the
# driver tree under usr/local/Ascend/driver with the DCMI simulator as
# libdcmi.so and its state file, and var/lib/kubelet. cluster.sh binds these
# over the host's paths in the node's own mount namespace.
#
# The device nodes: every NPU node (davinci0-7, davinci_manager, devmm_svm,
# hisi_hdc) is character device 1:3, the kernel's null device, so that a
# container allowed to use one can open it (reads see EOF, writes vanish).
# They are owned by root:E2E_NPU_GID (1000, standing for the gid of
# HwHiAiUser) with mode 0660, like a real driver's: a non-root container
# without that supplementary group gets "Permission denied".
#
# Images: images_build makes docker.io/local/pause:1 (containerd's sandbox
# image), docker.io/local/busybox:1 (busybox-static with every applet, for
# the examples' debian:12-slim) and docker.io/local/inference:1 (busybox's
# httpd answering /healthz on 8080, for the examples' my-inference:v1).
# scripts/image.sh names the plugin's archive
# docker.io/library/ascend-device-plugin:<version>, which is what the CRI
# plugin makes of the DaemonSet's "ascend-device-plugin:0.1.0" (Docker's
# normalisation), so it resolves as is.

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
	# DaemonSet), and a version.info as a 24.1.rc1 driver writes it; beside
	# it the firmware's, as the firmware package writes it.
	install -m 0755 -o 0 -g 0 "$lib" "$drv/lib64/driver/libdcmi.so" || return
	install -m 0644 -o 0 -g 0 "$_e2e_root/tests/fake-dcmi/example-910b.state" \
		"$drv/lib64/driver/fake-dcmi.state" || return
	printf '%s\n' "Version=24.1.rc1" "Innerversion=V100R001C15SPC006B220" "package_version=24.1.rc1" \
		>"$drv/version.info" && chmod 0644 "$drv/version.info" || return
	mkdir -p "$drv/../firmware" &&
		printf '%s\n' "Version=7.1.0.11.220" "compatible_version_drv=[23.0.rc3,23.0.rc3.],[24.1.0,24.1.rc1.]" \
			>"$drv/../firmware/version.info" && chmod 0644 "$drv/../firmware/version.info"
}

_e2e_npu_node() { # PATH: one NPU device node, root:E2E_NPU_GID 0660
	mknod -m 0660 "$1" c "$E2E_NPU_MAJOR" "$E2E_NPU_MINOR" && chown "0:$E2E_NPU_GID" "$1"
}

node_state_file() { # NODE: prints the path of NODE's DCMI simulator state file
	echo "${1:?node_state_file NODE}/usr/local/Ascend/driver/lib64/driver/fake-dcmi.state"
}

node_set_chip_health() { # NODE PHY HEALTH [ERRORS]: sets chip PHY's health (0-3|absent), and its error codes if given ("" clears them), by atomic rename
	local node=${1:?node_set_chip_health NODE PHY HEALTH [ERRORS]} phy=${2:?} health=${3:?} errors=${4-}
	[[ $health =~ ^([0-3]|absent)$ ]] || _e2e_err "HEALTH '$health' is not 0-3 or absent" || return
	[[ $errors =~ ^[0-9A-Fa-fx,]*$ ]] || _e2e_err "ERRORS '$errors' is not a list of hex codes" || return
	if [ $# -ge 4 ]; then
		node_set_chip_attrs "$node" "$phy" "health=$health" "errors=$errors"
	else
		node_set_chip_attrs "$node" "$phy" "health=$health"
	fi
}

node_set_chip_attrs() { # NODE PHY KEY=VALUE...: sets each KEY of chip PHY's line to VALUE (KEY= drops it), by atomic rename
	local node=${1:?node_set_chip_attrs NODE PHY KEY=VALUE...} phy=${2:?} state tmp st=0 a
	shift 2
	state=$(node_state_file "$node")
	[[ $phy =~ ^[0-9]+$ ]] || _e2e_err "PHY '$phy' is not a number" || return
	for a in "$@"; do
		[[ $a =~ ^[a-z_]+=[^[:space:]#]*$ ]] || _e2e_err "'$a' is not KEY=VALUE" || return
	done
	tmp=$state.tmp
	# The simulator re-reads the file when it is renamed into place, never
	# half-written. A comment on the chip's line stays at its end; the keys
	# set come last, in the order given.
	awk -v phy="$phy" -v attrs="$*" '
		BEGIN { n_set = split(attrs, set, " ") }
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
				if (f[i] == "")
					continue
				drop = 0
				for (j = 1; j <= n_set; j++)
					if (index(f[i], substr(set[j], 1, index(set[j], "="))) == 1)
						drop = 1
				if (!drop)
					line = line " " f[i]
			}
			for (j = 1; j <= n_set; j++)
				if (substr(set[j], index(set[j], "=") + 1) != "")
					line = line " " set[j]
			print line comment
		}
		END { exit found ? 0 : 3 }' "$state" >"$tmp" || st=$?
	case $st in
	0) chmod 0644 "$tmp" && mv -f "$tmp" "$state" ;;
	3) rm -f "$tmp"; _e2e_err "$state has no chip phy=$phy" ;;
	*) rm -f "$tmp"; _e2e_err "cannot rewrite $state" ;;
	esac
}

node_set_share() { # NODE PHY on|off: sets chip PHY's device-share mode (a "share" line), by atomic rename
	local node=${1:?node_set_share NODE PHY MODE} phy=${2:?} mode=${3:?} state
	state=$(node_state_file "$node")
	[[ $phy =~ ^[0-9]+$ ]] || _e2e_err "PHY '$phy' is not a number" || return
	[[ $mode =~ ^(on|off)$ ]] || _e2e_err "MODE '$mode' is not on or off" || return
	{ grep -v "^share phy=$phy " "$state"; echo "share phy=$phy mode=$mode"; } >"$state.tmp" &&
		chmod 0644 "$state.tmp" && mv -f "$state.tmp" "$state" || { rm -f "$state.tmp"; _e2e_err "cannot rewrite $state"; }
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
		--history.created_by "tests/cluster/node.sh images_build" "$bundle" &&
		umoci config --image "$oci:$kind" --no-history --created "$created" --os linux --architecture "$arch" \
			--config.env PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin "${cfg[@]}" \
			--config.label "org.opencontainers.image.title=$name" \
			--config.label "org.opencontainers.image.description=e2e test image (tests/cluster/node.sh): busybox-static" &&
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
	# A change made before it was live is never reported: make a new one each
	# second until one is.
	local seen=false tries=0
	while ((rc == 0)) && ! $seen; do
		((tries++ < 30)) || { _e2e_warn "no containerd events"; rc=1; break; }
		probe=e2e.probe=$BASHPID.${EPOCHREALTIME//[.,]/}
		"${ctr[@]}" namespaces label k8s.io "$probe" >/dev/null || { rc=1; break; }
		while read -r -t 1 -u "$fd" line; do
			[[ $line == *"/namespaces/update "*"${probe#*=}"* ]] && { seen=true; break; }
		done
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


_e2e_mounts_under() { # PREFIX...: prints the mount points under the PREFIXes, the last mounted first
	local prefix
	for prefix in "$@"; do
		awk '{ print $5 }' /proc/self/mountinfo | while read -r m; do
			m=$(printf '%b' "$m")
			if [ "$m" = "$prefix" ] || [[ $m == "$prefix"/* ]]; then echo "$m"; fi
		done
	done | tac
}



