#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Builds the ascend-device-plugin container image without a container daemon,
# with umoci and skopeo from Debian (`make image`).
#
#   scripts/image.sh build [--out DIR] [BINARY...]
#       One image per plugin binary, each for the architecture its ELF header
#       names (default: build/src/ascend-device-plugin, and
#       build-arm64/src/ascend-device-plugin when that tree exists). Writes
#         DIR/oci/                         an OCI image layout; tag <version> is
#                                          an index of all architectures, tags
#                                          <version>-<arch> the single images
#         DIR/ascend-device-plugin.tar     docker-archive of the first binary's
#                                          image, named ascend-device-plugin:<version>
#         DIR/ascend-device-plugin-<arch>.tar  the same for the others
#       DIR defaults to build/image.
#   scripts/image.sh rootfs BINARY DIR
#       Only the image's file set, into DIR: the stripped plugin and
#       ascend-doctor (the troubleshooting tool, from the same build tree:
#       <tree>/tools/ascend-doctor/ascend-doctor beside <tree>/src/BINARY) and
#       ascend-ranktable (the rank-table init container of multi-node jobs,
#       <tree>/tools/ascend-ranktable/ascend-ranktable) at /usr/local/bin, the API-server module that the DRA front end loads
#       (<tree>/src/libascend-kube.so) at /usr/local/lib/ascend-k8s, their
#       dynamic loader and the libraries of scripts/image-libs.txt. The Dockerfile uses this too, so that both
#       images hold the same files.
#
# The build is reproducible: every timestamp (file mtimes, layer, config and
# history) is SOURCE_DATE_EPOCH, or the time of the last commit when that is
# unset, and every file is owned by root, so two builds from the same binary
# and the same Debian libraries give the same image digest.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
name=ascend-device-plugin
entrypoint=/usr/local/bin/$name
doctor=ascend-doctor
ranktable=ascend-ranktable
libs_list=$root/scripts/image-libs.txt
module=libascend-kube.so
# Where the daemon looks for it: lib/ascend-k8s/ beside its bin/
# (src/daemon/kube_module.h).
module_dir=/usr/local/lib/ascend-k8s

die() {
	echo "image.sh: $*" >&2
	exit 1
}

# arch_of BINARY: prints "<OCI architecture> <multiarch triplet>".
arch_of() {
	local machine
	machine=$(LC_ALL=C readelf -h "$1" | sed -n 's/^ *Machine: *//p') || die "$1: not an ELF file"
	case "$machine" in
	*X86-64) echo "amd64 x86_64-linux-gnu" ;;
	AArch64) echo "arm64 aarch64-linux-gnu" ;;
	*) die "$1: unsupported machine '$machine'" ;;
	esac
}

needed() { # ELF: its DT_NEEDED sonames, one a line
	LC_ALL=C readelf -d "$1" | sed -n 's/.*(NEEDED).*\[\(.*\)\]$/\1/p'
}

# find_lib TRIPLET FILE: where this machine keeps FILE for TRIPLET
# (multiarch directories first, then the cross toolchain's sysroot).
find_lib() {
	local d
	for d in /lib/"$1" /usr/lib/"$1" /usr/"$1"/lib; do
		[ -e "$d/$2" ] && { echo "$d/$2"; return; }
	done
	die "$2 for $1 not found (install the ${1%%-*} libc6/libstdc++6/libgcc-s1 packages)"
}

# doctor_of BINARY: the ascend-doctor built in the plugin's tree.
doctor_of() {
	echo "$(cd "$(dirname "$1")/.." && pwd)/tools/ascend-doctor/$doctor"
}

# ranktable_of BINARY: the ascend-ranktable built in the plugin's tree.
ranktable_of() {
	echo "$(cd "$(dirname "$1")/.." && pwd)/tools/ascend-ranktable/$ranktable"
}

cmd_rootfs() { # BINARY DIR
	local bin=$1 dir=$2 arch triplet interp strip_prog so src doc mod rt
	[ -f "$bin" ] || die "$bin: no such file (run make build first)"
	doc=$(doctor_of "$bin")
	[ -f "$doc" ] || die "$doc: no such file (build the ascend-doctor target of the plugin's tree)"
	rt=$(ranktable_of "$bin")
	[ -f "$rt" ] || die "$rt: no such file (build the ascend-ranktable target of the plugin's tree)"
	mod=$(dirname "$bin")/$module
	[ -f "$mod" ] || die "$mod: no such file (build the ascend-kube target of the plugin's tree)"
	read -r arch triplet < <(arch_of "$bin")
	[ "$(arch_of "$doc")" = "$arch $triplet" ] || die "$doc is not built for $arch"
	[ "$(arch_of "$rt")" = "$arch $triplet" ] || die "$rt is not built for $arch"
	[ "$(arch_of "$mod")" = "$arch $triplet" ] || die "$mod is not built for $arch"
	interp=$(LC_ALL=C readelf -l "$bin" | sed -n 's/.*Requesting program interpreter: \(.*\)\]$/\1/p')
	[ -n "$interp" ] || die "$bin: no program interpreter (a static binary?)"
	mapfile -t libs < <(grep -v '^#' "$libs_list" | grep -v '^$')

	# Every library the plugin, ascend-doctor, the module or a shipped
	# library needs must be shipped.
	# A sanitizer build fails here (libasan is not in the list): the image
	# takes the release binary only.
	local shipped=" ${libs[*]} ${interp##*/} " missing=()
	for so in $(needed "$bin") $(needed "$doc"); do
		[[ $shipped == *" $so "* ]] || missing+=("$so (needed by $bin or $doc)")
	done
	for so in $(needed "$mod") $(needed "$rt"); do
		[[ $shipped == *" $so "* ]] || missing+=("$so (needed by $mod or $rt)")
	done
	for so in "${libs[@]}"; do
		src=$(find_lib "$triplet" "$so")
		for n in $(needed "$src"); do
			[[ $shipped == *" $n "* ]] || missing+=("$n (needed by $so)")
		done
	done
	[ ${#missing[@]} -eq 0 ] || die "not in scripts/image-libs.txt: ${missing[*]}"

	strip_prog="strip"
	command -v "$triplet-strip" >/dev/null && strip_prog=$triplet-strip
	mkdir -p "$dir${entrypoint%/*}" "$dir${interp%/*}" "$dir/lib/$triplet" "$dir$module_dir"
	"$strip_prog" -o "$dir$entrypoint" "$bin"
	"$strip_prog" -o "$dir${entrypoint%/*}/$doctor" "$doc"
	"$strip_prog" -o "$dir${entrypoint%/*}/$ranktable" "$rt"
	chmod 0755 "$dir$entrypoint" "$dir${entrypoint%/*}/$doctor" "$dir${entrypoint%/*}/$ranktable"
	"$strip_prog" -o "$dir$module_dir/$module" "$mod"
	chmod 0644 "$dir$module_dir/$module"
	# The loader: the path the binary names, from this machine's libc6 for
	# that architecture.
	if [ -e "$interp" ] && [ "$(arch_of "$(readlink -f "$interp")")" = "$arch $triplet" ]; then
		src=$interp
	else
		src=$(find_lib "$triplet" "${interp##*/}")
	fi
	cp -L "$src" "$dir$interp"
	chmod 0755 "$dir$interp"
	for so in "${libs[@]}"; do
		cp -L "$(find_lib "$triplet" "$so")" "$dir/lib/$triplet/$so"
		chmod 0644 "$dir/lib/$triplet/$so"
	done
	find "$dir" -type d -exec chmod 0755 {} +
	if [ "$(id -u)" -eq 0 ]; then
		chown -R 0:0 "$dir"
	fi
}

# Strings for the labels and timestamps.
version() {
	sed -n 's/^project([^ ]* VERSION \([0-9][0-9.]*\).*/\1/p' "$root/CMakeLists.txt"
}
revision() {
	local rev
	rev=$(git -C "$root" rev-parse HEAD 2>/dev/null) || { echo unknown; return; }
	# A build of uncommitted changes must not claim to be the commit.
	git -C "$root" diff --quiet HEAD -- 2>/dev/null || rev=$rev-dirty
	echo "$rev"
}
epoch() {
	if [ -n "${SOURCE_DATE_EPOCH:-}" ]; then
		[[ $SOURCE_DATE_EPOCH =~ ^[0-9]+$ ]] || die "SOURCE_DATE_EPOCH '$SOURCE_DATE_EPOCH' is not a number of seconds"
		echo "$SOURCE_DATE_EPOCH"
	else
		git -C "$root" log -1 --format=%ct 2>/dev/null || die "not a git checkout: set SOURCE_DATE_EPOCH"
	fi
}

# blob LAYOUT FILE: moves FILE into LAYOUT's blobs; prints "digest size".
blob() {
	local sum size
	sum=$(sha256sum "$2" | cut -d' ' -f1)
	size=$(stat -c %s "$2")
	mv "$2" "$1/blobs/sha256/$sum"
	echo "sha256:$sum $size"
}

cmd_build() {
	local out=$root/build/image bins=()
	while [ $# -gt 0 ]; do
		case "$1" in
		--out) out=${2:?--out needs a directory}; shift 2 ;;
		-*) die "unknown option '$1'" ;;
		*) bins+=("$1"); shift ;;
		esac
	done
	if [ ${#bins[@]} -eq 0 ]; then
		bins=("$root/build/src/$name")
		# Another architecture's tree joins the index when it has been built
		# (make build ARCH=arm64).
		[ -f "$root/build-arm64/src/$name" ] && bins+=("$root/build-arm64/src/$name")
	fi
	local ver rev src_url e created rootless=()
	ver=$(version)
	[ -n "$ver" ] || die "no project VERSION in CMakeLists.txt"
	rev=$(revision)
	# The repository the image is built from; override with IMAGE_SOURCE.
	src_url=${IMAGE_SOURCE:-$(git -C "$root" remote get-url origin 2>/dev/null || echo unknown)}
	e=$(epoch)
	created=$(date -u -d "@$e" +%Y-%m-%dT%H:%M:%SZ)
	[ "$(id -u)" -eq 0 ] || rootless=(--rootless)

	mkdir -p "$out"
	local work
	work=$(mktemp -d "$out/.work.XXXXXX")
	# shellcheck disable=SC2064 # expand now: $work is local
	trap "rm -rf '$work'" EXIT
	local oci=$work/oci bin arch triplet archs=() seen=" "
	umoci init --layout "$oci"
	for bin in "${bins[@]}"; do
		read -r arch triplet < <(arch_of "$bin")
		[[ $seen == *" $arch "* ]] && die "two binaries for $arch"
		seen+="$arch "
		archs+=("$arch")
		local tag=$ver-$arch bundle=$work/bundle-$arch
		umoci new --image "$oci:$tag"
		umoci unpack "${rootless[@]}" --image "$oci:$tag" "$bundle"
		cmd_rootfs "$bin" "$bundle/rootfs"
		find "$bundle/rootfs" -exec touch -h -d "@$e" {} +
		umoci repack --image "$oci:$tag" --history.created "$created" \
			--history.created_by "scripts/image.sh rootfs" "$bundle"
		umoci config --image "$oci:$tag" --no-history --created "$created" \
			--os linux --architecture "$arch" --config.entrypoint "$entrypoint" \
			--config.label "org.opencontainers.image.title=$name" \
			--config.label "org.opencontainers.image.description=Kubernetes device plugin for Huawei Ascend NPUs" \
			--config.label "org.opencontainers.image.version=$ver" \
			--config.label "org.opencontainers.image.revision=$rev" \
			--config.label "org.opencontainers.image.source=$src_url" \
			--config.label "org.opencontainers.image.licenses=Apache-2.0"
	done
	umoci gc --layout "$oci"

	# Tag <version>: an image index naming each architecture's manifest, so
	# that a registry copy (skopeo copy --all) serves every node its own.
	local entries=() d s
	for arch in "${archs[@]}"; do
		read -r d s < <(jq -r --arg t "$ver-$arch" \
			'.manifests[] | select(.annotations["org.opencontainers.image.ref.name"] == $t) | "\(.digest) \(.size)"' \
			"$oci/index.json")
		entries+=("$(jq -cn --arg d "$d" --argjson s "$s" --arg a "$arch" \
			'{mediaType: "application/vnd.oci.image.manifest.v1+json", digest: $d, size: $s,
			  platform: {architecture: $a, os: "linux"}}')")
	done
	printf '%s\n' "${entries[@]}" | jq -cs '{schemaVersion: 2, mediaType: "application/vnd.oci.image.index.v1+json", manifests: .}' \
		| tr -d '\n' >"$work/index"
	read -r d s < <(blob "$oci" "$work/index")
	jq -c --arg d "$d" --argjson s "$s" --arg t "$ver" \
		'.manifests += [{mediaType: "application/vnd.oci.image.index.v1+json", digest: $d, size: $s,
		  annotations: {"org.opencontainers.image.ref.name": $t}}] | .manifests |= sort_by(.annotations["org.opencontainers.image.ref.name"])' \
		"$oci/index.json" >"$work/index.json"
	mv "$work/index.json" "$oci/index.json"

	# One docker-archive per architecture for docker load, ctr import and
	# podman load.
	local tars=() file
	for arch in "${archs[@]}"; do
		file=$name.tar
		[ "$arch" = "${archs[0]}" ] || file=$name-$arch.tar
		skopeo copy --quiet "oci:$oci:$ver-$arch" "docker-archive:$work/$file:$name:$ver"
		tars+=("$file")
	done

	rm -rf "$out/oci"
	mv "$oci" "$out/oci"
	for file in "${tars[@]}"; do
		mv "$work/$file" "$out/$file"
	done
	for arch in "${archs[@]}"; do
		d=$(jq -r --arg t "$ver-$arch" \
			'.manifests[] | select(.annotations["org.opencontainers.image.ref.name"] == $t) | .digest' "$out/oci/index.json")
		s=$(du -sb "$work/bundle-$arch/rootfs" | cut -f1)
		echo "$name:$ver linux/$arch manifest $d, $((s / 1024)) KiB unpacked"
	done
	local shown=${out#"$root"/}
	echo "wrote $shown/oci (tag $ver) and ${tars[*]/#/$shown/}"
}

case "${1:-}" in
build) shift; cmd_build "$@" ;;
rootfs) [ $# -eq 3 ] || die "usage: image.sh rootfs BINARY DIR"; cmd_rootfs "$2" "$3" ;;
*) die "usage: image.sh build [--out DIR] [BINARY...] | image.sh rootfs BINARY DIR" ;;
esac
