#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The container image (scripts/image.sh, `make image`): two builds give the
# same digest, two checkouts in two directories too, and another
# SOURCE_DATE_EPOCH a different one; the image holds
# exactly the stripped plugin, ascend-doctor, ascend-ranktable and the API-server module, their
# loader and scripts/image-libs.txt (no shell); labels, entrypoint and tag are right;
# the Dockerfile builds the same file set; and, where podman can run
# containers, the loaded image runs the plugin and ascend-doctor. Skips in
# sanitizer builds, whose binary is not the release one.
set -uo pipefail
plugin=$1
doctor=${4:-$(dirname "$plugin")/../tools/ascend-doctor/ascend-doctor}
root=$(cd "$(dirname "$0")/../.." && pwd)
tmp=$(mktemp -d)
# shellcheck source=tests/scripts/lib.sh
. "$(dirname "$0")/lib.sh"

# podman keeps all its state under $tmp/podman (vfs storage: no overlay
# mounts); anything still mounted there is unmounted before removal.
podman_cmd=(podman --root "$tmp/podman/root" --runroot "$tmp/podman/run" --tmpdir "$tmp/podman/tmp"
	--storage-driver vfs --cgroup-manager cgroupfs --events-backend file --runtime runc)
cleanup() {
	if [ -d "$tmp/podman" ]; then
		"${podman_cmd[@]}" rm -af >/dev/null 2>&1
		"${podman_cmd[@]}" rmi -af >/dev/null 2>&1
		awk -v t="$tmp/" 'index($5, t) == 1 { print $5 }' /proc/self/mountinfo | sort -r |
			while read -r m; do umount -l "$m"; done
	fi
	rm -rf "$tmp"
}
trap cleanup EXIT

# Not `readelf | grep -q`: with pipefail, grep leaving early kills readelf with
# SIGPIPE, the pipeline fails, and a sanitizer build was not skipped.
# (tests/CMakeLists.txt runs it on the release build only.)
if grep -Eq 'lib(asan|ubsan|tsan)' <<<"$(LC_ALL=C readelf -d "$plugin")"; then
	skip_test "$plugin is a sanitizer build; the image takes the release binary"
fi
for tool in umoci skopeo jq; do
	command -v $tool >/dev/null || skip_test "no $tool (scripts/deps.sh image)"
done

version=$(sed -n 's/^project([^ ]* VERSION \([0-9][0-9.]*\).*/\1/p' "$root/CMakeLists.txt")
triplet=$(gcc -dumpmachine)
arch=amd64
[ "${triplet%%-*}" = aarch64 ] && arch=arm64
triplet=${triplet/-pc-/-}
epoch=$(git -C "$root" log -1 --format=%ct)

# manifest_digest LAYOUT TAG
manifest_digest() {
	jq -r --arg t "$2" '.manifests[] | select(.annotations["org.opencontainers.image.ref.name"] == $t) | .digest' "$1/index.json"
}
build() { # OUT [env...]: builds from $plugin into OUT
	local out=$1
	shift
	env "$@" "$root/scripts/image.sh" build --out "$out" "$plugin" >"$tmp/build.log" 2>&1 ||
		{ sed 's/^/    /' "$tmp/build.log"; return 1; }
}

# ---- reproducible digests ----------------------------------------------------
check "first build" build "$tmp/a" -u SOURCE_DATE_EPOCH
check "second build" build "$tmp/b" -u SOURCE_DATE_EPOCH
check "third build, another SOURCE_DATE_EPOCH" build "$tmp/c" SOURCE_DATE_EPOCH=$((epoch + 1))
da=$(manifest_digest "$tmp/a/oci" "$version-$arch")
db=$(manifest_digest "$tmp/b/oci" "$version-$arch")
dc=$(manifest_digest "$tmp/c/oci" "$version-$arch")
echo "# digests: $da $db (SOURCE_DATE_EPOCH+1: $dc)"
check "digest is a sha256" grep -Eq '^sha256:[0-9a-f]{64}$' <<<"$da"
check "same digest twice" test "$da" = "$db"
check "same index twice" test "$(manifest_digest "$tmp/a/oci" "$version")" = "$(manifest_digest "$tmp/b/oci" "$version")"
check "same docker-archive twice" cmp "$tmp/a/ascend-device-plugin.tar" "$tmp/b/ascend-device-plugin.tar"
check "the time is in the digest" test "$da" != "$dc"

# ---- the docker-archive: tag, config, files ------------------------------------
tar=$tmp/a/ascend-device-plugin.tar
mkdir -p "$tmp/x" "$tmp/layer"
tar -xf "$tar" -C "$tmp/x"
cfg=$tmp/x/$(jq -r '.[0].Config' "$tmp/x/manifest.json")
deploy_image=$(sed -n 's/^ *image: *//p' "$root/deploy/base/ascend-device-plugin.yaml")
check "tag is ascend-device-plugin:$version" \
	test "$(jq -r '.[0].RepoTags | join(" ")' "$tmp/x/manifest.json")" = "docker.io/library/ascend-device-plugin:$version"
check "deploy/ uses that tag" test "$deploy_image" = "ascend-device-plugin:$version"
check "one layer" test "$(jq '.[0].Layers | length' "$tmp/x/manifest.json")" = 1
check "entrypoint" test "$(jq -c .config.Entrypoint "$cfg")" = '["/usr/local/bin/ascend-device-plugin"]'
check "no cmd, no env" test "$(jq -c '[.config.Cmd, .config.Env]' "$cfg")" = '[null,null]'
check "architecture" test "$(jq -r '.os + "/" + .architecture' "$cfg")" = "linux/$arch"
check "created is the commit time" test "$(jq -r .created "$cfg")" = "$(date -u -d "@$epoch" +%Y-%m-%dT%H:%M:%SZ)"
label() { jq -r --arg k "org.opencontainers.image.$1" '.config.Labels[$k] // "(none)"' "$cfg"; }
rev=$(git -C "$root" rev-parse HEAD)
check "label title" test "$(label title)" = ascend-device-plugin
check "label version" test "$(label version)" = "$version"
check "label licenses" test "$(label licenses)" = Apache-2.0
check "label revision" grep -Eqx "$rev(-dirty)?" <<<"$(label revision)"
check "label source" test "$(label source)" != "(none)"

tar -xf "$tmp/x/$(jq -r '.[0].Layers[0]' "$tmp/x/manifest.json")" -C "$tmp/layer"
list() { (cd "$1" && find . -mindepth 1 -printf '%y %m %U:%G %p\n' | sort); }
list "$tmp/layer" >"$tmp/files"
interp=$(LC_ALL=C readelf -l "$plugin" | sed -n 's/.*Requesting program interpreter: \(.*\)\]$/\1/p')
{
	for d in ./usr ./usr/local ./usr/local/bin ./usr/local/lib ./usr/local/lib/ascend-k8s "./${interp%/*}" ./lib \
		"./lib/$triplet"; do
		echo "d 755 0:0 ${d//\/\//\/}"
	done
	echo "f 755 0:0 ./usr/local/bin/ascend-device-plugin"
	echo "f 755 0:0 ./usr/local/bin/ascend-doctor"
	echo "f 755 0:0 ./usr/local/bin/ascend-ranktable"
	echo "f 644 0:0 ./usr/local/lib/ascend-k8s/libascend-kube.so"
	echo "f 755 0:0 .$interp"
	grep -v '^#' "$root/scripts/image-libs.txt" | grep -v '^$' | sed "s|^|f 644 0:0 ./lib/$triplet/|"
} | sort -u >"$tmp/want"
check "file list: the plugin, ascend-doctor, ascend-ranktable, the module, their loader and scripts/image-libs.txt" \
	diff -u "$tmp/want" "$tmp/files"
no_shell() { ! grep -E '/(sh|bash|busybox|apt|apt-get|dpkg)$|/etc/' "$tmp/files"; }
check "no shell, no package manager" no_shell
strip -o "$tmp/stripped" "$plugin"
check "the plugin is the stripped release binary" cmp "$tmp/stripped" "$tmp/layer/usr/local/bin/ascend-device-plugin"
strip -o "$tmp/stripped-doctor" "$doctor"
check "ascend-doctor is the stripped release binary" cmp "$tmp/stripped-doctor" "$tmp/layer/usr/local/bin/ascend-doctor"
strip -o "$tmp/stripped-ranktable" "$(dirname "$plugin")/../tools/ascend-ranktable/ascend-ranktable"
check "ascend-ranktable is the stripped release binary" cmp "$tmp/stripped-ranktable" \
	"$tmp/layer/usr/local/bin/ascend-ranktable"
strip -o "$tmp/stripped-module" "$(dirname "$plugin")/libascend-kube.so"
check "the module is the stripped release module" cmp "$tmp/stripped-module" \
	"$tmp/layer/usr/local/lib/ascend-k8s/libascend-kube.so"
check "libraries are this machine's" cmp "/lib/$triplet/libstdc++.so.6" "$tmp/layer/lib/$triplet/libstdc++.so.6"
size=$(du -sb "$tmp/layer" | cut -f1)
echo "# unpacked size: $size bytes"
# libcurl and its libraries (for the module) are about 16 MiB of it.
check "under 36 MiB unpacked" test "$size" -lt $((36 * 1024 * 1024))
mtimes=$(find "$tmp/layer" -mindepth 1 -printf '%T@\n' | cut -d. -f1 | sort -u)
check "every mtime is the commit time" test "$mtimes" = "$epoch"

# ---- the OCI layout --------------------------------------------------------------
check "tag $version is an index naming linux/$arch" test "$(skopeo inspect --raw "oci:$tmp/a/oci:$version" |
	jq -r --arg d "$da" '.manifests[] | select(.digest == $d) | .platform.os + "/" + .platform.architecture')" = "linux/$arch"

# `make image` writes both architectures into the build tree's image/oci:
# its index names linux/amd64 and linux/arm64, and building again from the
# same two binaries gives the same index.
made=$(dirname "$plugin")/../image/oci
arm64_plugin=${ARM64_PLUGIN:-$root/build-arm64/src/ascend-device-plugin}
if [ -f "$made/index.json" ] && [ -f "$arm64_plugin" ]; then
	platforms() { skopeo inspect --raw "oci:$1:$version" | jq -r '[.manifests[].platform | .os + "/" + .architecture] | sort | join(" ")'; }
	check "make image: tag $version is an index of linux/amd64 and linux/arm64" test "$(platforms "$made")" = "linux/amd64 linux/arm64"
	env -u SOURCE_DATE_EPOCH "$root/scripts/image.sh" build --out "$tmp/both" "$plugin" "$arm64_plugin" >"$tmp/build.log" 2>&1
	# Only when make image ran on these binaries (a rebuild since makes its
	# output stale, not wrong).
	if [ "$(manifest_digest "$tmp/both/oci" "$version-$arch")" = "$(manifest_digest "$made" "$version-$arch")" ]; then
		check "make image: the same two binaries give the same index again" \
			test "$(manifest_digest "$tmp/both/oci" "$version")" = "$(manifest_digest "$made" "$version")"
	else
		skip "make image: the same index again" "$made is older than $plugin (run make image)"
	fi
else
	skip "make image's two-architecture index" "no $made or no $arm64_plugin (make image builds both)"
fi

# ---- the same image from another directory -------------------------------------------
# Two checkouts of this tree (its commit with the uncommitted changes to
# tracked files: `git stash create`; new files that git does not track are
# left out) in two directories whose paths differ in length, each building
# the image's three targets as `make image` does and its image with its own
# scripts/image.sh: the build path must not reach the digest. (It did through
# the GNU build-id, computed over debug information naming absolute paths.)
# Only the native image: the arm64 build takes the same compile options.
if ! git -C "$root" rev-parse --verify -q HEAD >/dev/null; then
	skip "the same digest from another directory" "$root is not a git checkout"
else
	rev=$(git -C "$root" stash create) && [ -n "$rev" ] || rev=$(git -C "$root" rev-parse HEAD)
	# checkout DIR: $rev in DIR, its binaries built in DIR/build, its image in DIR/image.
	checkout() {
		git clone -q --shared --no-checkout "$root" "$1" && git -C "$1" checkout -q --detach "$rev" &&
			cmake -S "$1" -B "$1/build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DWERROR=ON -DBUILD_TESTING=OFF >/dev/null &&
			cmake --build "$1/build" -j "$(nproc)" --target ascend-device-plugin ascend-doctor ascend-ranktable ascend-kube >/dev/null &&
			env -u SOURCE_DATE_EPOCH "$1/scripts/image.sh" build --out "$1/image" "$1/build/src/ascend-device-plugin" >/dev/null
	}
	short=$tmp/r/a long=$tmp/r/another-checkout-with-a-much-longer-path
	check "build in $short" checkout "$short"
	check "build in $long" checkout "$long"
	ds=$(manifest_digest "$short/image/oci" "$version-$arch")
	dl=$(manifest_digest "$long/image/oci" "$version-$arch")
	echo "# digests from two directories: $ds $dl"
	check "another directory gives a sha256" grep -Eq '^sha256:[0-9a-f]{64}$' <<<"$dl"
	# Each binary by itself first, so that a failure says which one.
	for f in src/ascend-device-plugin tools/ascend-doctor/ascend-doctor tools/ascend-ranktable/ascend-ranktable \
		src/libascend-kube.so; do
		strip -o "$tmp/short-bin" "$short/build/$f" && strip -o "$tmp/long-bin" "$long/build/$f"
		check "${f##*/}: the same stripped binary from another directory" cmp "$tmp/short-bin" "$tmp/long-bin"
	done
	check "the same digest from another directory" test "$ds" = "$dl"
fi

# ---- the Dockerfile builds the same files ------------------------------------------
# Its runtime stage is empty and takes /rootfs only, which its build stage
# fills with `scripts/image.sh rootfs`; that command's output is compared
# with the layer above.
dockerfile=$root/Dockerfile
runtime=$(awk '/^FROM /{stage = ""} {stage = stage $0 "\n"} END {printf "%s", stage}' "$dockerfile")
check "Dockerfile: runtime stage FROM scratch" grep -qx 'FROM scratch' <<<"$runtime"
check "Dockerfile: the only COPY is the build stage's /rootfs" \
	test "$(grep -E '^(COPY|ADD) ' <<<"$runtime")" = "COPY --from=build /rootfs/ /"
check "Dockerfile: the build stage runs image.sh rootfs" \
	grep -Eq '^ *&& scripts/image.sh rootfs /build/src/ascend-device-plugin /rootfs$' "$dockerfile"
check "Dockerfile: same entrypoint" grep -qxF 'ENTRYPOINT ["/usr/local/bin/ascend-device-plugin"]' <<<"$runtime"
check "Dockerfile: same labels" test "$(grep -o 'org\.opencontainers\.image\.[a-z]*' <<<"$runtime" | sort | tr '\n' ' ')" = \
	"$(jq -r '.config.Labels | keys[]' "$cfg" | sort | tr '\n' ' ')"
check "image.sh rootfs (the Dockerfile's step)" "$root/scripts/image.sh" rootfs "$plugin" "$tmp/rootfs"
# Docker sets its own mtimes and the Debian build stage its own libraries:
# compare types, modes, owners and paths.
list "$tmp/rootfs" >"$tmp/docker-files"
check "Dockerfile file list = make image file list" diff -u "$tmp/files" "$tmp/docker-files"

# ---- run it -------------------------------------------------------------------------
if ! command -v podman >/dev/null || ! command -v runc >/dev/null; then
	skip "podman run" "no podman or runc (scripts/deps.sh image-run)"
else
	mkdir -p "$tmp/podman"
	check "podman load" "${podman_cmd[@]}" load -i "$tar"
	id=$(jq -r '.[0].Config' "$tmp/x/manifest.json")
	id=${id%.json}
	check "podman names it" "${podman_cmd[@]}" image exists "docker.io/library/ascend-device-plugin:$version"
	if "${podman_cmd[@]}" run --rm --network none --ulimit nofile=1024:1024 --ulimit nproc=1024:1024 \
		"$id" --version >"$tmp/run" 2>&1; then
		check "--version in a container" grep -qx "ascend-device-plugin $version" "$tmp/run"
		# No shell: an entrypoint override to /bin/sh must fail.
		no_sh_runs() {
			! "${podman_cmd[@]}" run --rm --network none --ulimit nofile=1024:1024 --ulimit nproc=1024:1024 \
				--entrypoint /bin/sh "$id" -c true
		}
		check "no /bin/sh in a container" no_sh_runs
		# ascend-doctor runs in the image as `kubectl exec` runs it in the
		# plugin's pod: its help, and `versions` with nothing to read (every
		# fact unknown: WARN, exit 1, never a crash).
		doctor_runs() {
			"${podman_cmd[@]}" run --rm --network none --ulimit nofile=1024:1024 --ulimit nproc=1024:1024 \
				--entrypoint /usr/local/bin/ascend-doctor "$id" "$@"
		}
		doctor_help() {
			doctor_runs --help >"$tmp/doctor-help" 2>&1 && grep -q '^Usage: ascend-doctor' "$tmp/doctor-help" ||
				{ cat "$tmp/doctor-help"; return 1; }
		}
		check "ascend-doctor --help in a container" doctor_help
		doctor_versions() {
			doctor_runs versions >"$tmp/doctor-versions" 2>&1
			local got=$?
			[ "$got" -eq 1 ] && grep -q '^WARN driver: unknown: /usr/local/Ascend/driver/version.info' "$tmp/doctor-versions" ||
				{ echo "exit $got"; cat "$tmp/doctor-versions"; return 1; }
		}
		check "ascend-doctor versions in a container" doctor_versions
		# The module's libraries all resolve in the image: its dynamic
		# loader lists them (nothing "not found").
		module_resolves() {
			"${podman_cmd[@]}" run --rm --network none --ulimit nofile=1024:1024 --ulimit nproc=1024:1024 \
				--entrypoint "$interp" "$id" --list /usr/local/lib/ascend-k8s/libascend-kube.so \
				>"$tmp/module-libs" 2>&1 && grep -q libcurl "$tmp/module-libs" &&
				! grep -q 'not found' "$tmp/module-libs" || { cat "$tmp/module-libs"; return 1; }
		}
		check "the module's libraries resolve in a container" module_resolves
	else
		skip "podman run" "containers cannot run here: $(tail -1 "$tmp/run")"
	fi
fi
finish
