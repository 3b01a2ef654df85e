#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Installs the Debian 12 packages the project builds and tests with. As root it
# runs apt-get; otherwise it prints the command to run and fails.
set -euo pipefail

packages=(
	cmake make gcc pkg-config
	libgrpc-dev protobuf-c-compiler libprotobuf-c-dev protobuf-compiler
	libcmocka-dev libyaml-dev libjson-c-dev libmicrohttpd-dev libcurl4-openssl-dev
)
# Extra groups: `deps.sh fuzz` adds clang for libFuzzer builds; `deps.sh
# manifests` adds what tests/scripts/test_manifests.sh needs: kubectl (an
# existing one is kept) and Node.js with npm, then the npm packages of
# tests/manifests/ and Debian's own kubectl 1.20, taken out of the package
# kubernetes-client into tests/manifests/.cache/ without installing it (the
# manifests are rendered with it too). `deps.sh arm64` adds the cross
# compilers, the arm64 (multiarch) builds of the -dev packages, and qemu to
# run the arm64 binaries (`make build ARCH=arm64`, `make test-arm64`).
# `deps.sh image` adds what `make image`
# builds the container image with (scripts/image.sh): umoci, skopeo and jq;
# `deps.sh image-run` adds podman and runc, which tests/scripts/test_image.sh
# runs the image with (podman's default crun cannot run on hosts with hybrid
# cgroups). `deps.sh e2e` adds busybox-static, umoci, skopeo and jq, from
# which the cluster's test images (tests/cluster/node.sh) and
# test_cdi_podman.sh's container are made. `deps.sh metrics` adds Prometheus, whose promtool
# the observability test runs on real scrapes (`promtool check metrics`; the
# package also installs the server, which nothing starts here). `deps.sh
# cluster` adds what tests/cluster/ runs a real Kubernetes with, besides the
# components scripts/cluster-bins.sh builds with Go: runc, the CNI plugins
# (bridge, host-local), socat (the host's way to the API server), openssl
# (the cluster's certificates), curl, iproute2 and util-linux (network and
# mount namespaces), and the test images' tools.
manifests=false
arm64=false
for extra in "$@"; do
	case "$extra" in
	fuzz) packages+=(clang) ;;
	metrics) packages+=(prometheus) ;;
	cluster) packages+=(runc containernetworking-plugins socat openssl curl iproute2 util-linux inotify-tools jq procps
		umoci skopeo busybox-static) ;;
	image) packages+=(umoci skopeo jq binutils) ;;
	image-run) packages+=(podman runc) ;;
	e2e) packages+=(umoci skopeo jq busybox-static) ;;
	manifests)
		manifests=true
		command -v kubectl >/dev/null || packages+=(kubernetes-client)
		command -v node >/dev/null || packages+=(nodejs)
		command -v npm >/dev/null || packages+=(npm)
		;;
	arm64)
		arm64=true
		# g++ too: the static gRPC link pulls in libstdc++. The -dev
		# packages carry an arch qualifier, which dpkg-query also takes
		# (plain `dpkg -s` is ambiguous once both arches are installed).
		packages+=(gcc-aarch64-linux-gnu g++-aarch64-linux-gnu qemu-user-static
			libgrpc-dev:arm64 libprotobuf-c-dev:arm64 libyaml-dev:arm64 libjson-c-dev:arm64
			libmicrohttpd-dev:arm64 libcurl4-openssl-dev:arm64)
		;;
	*) echo "deps.sh: unknown group '$extra'" >&2; exit 2 ;;
	esac
done

# apt-get only offers :arm64 packages once dpkg knows the architecture.
foreign_arch=false
if $arm64 && ! dpkg --print-foreign-architectures | grep -qx arm64; then
	foreign_arch=true
fi

missing=()
for p in "${packages[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
	cmd="apt-get -o DPkg::Lock::Timeout=600 install -y --no-install-recommends ${missing[*]}"
	if [ "$(id -u)" -ne 0 ]; then
		echo "Missing packages: ${missing[*]}" >&2
		if $foreign_arch; then
			echo "Install them with: sudo dpkg --add-architecture arm64 && sudo apt-get update && sudo $cmd" >&2
		else
			echo "Install them with: sudo apt-get update && sudo $cmd" >&2
		fi
		exit 1
	fi
	if $foreign_arch; then
		echo "Adding the arm64 architecture to dpkg" >&2
		dpkg --add-architecture arm64
	fi
	echo "Installing: ${missing[*]}" >&2
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq
	$cmd
fi
if $manifests; then
	# apt-get download needs the package lists, which images often lack.
	if [ "$(id -u)" -eq 0 ] && ! apt-cache show kubernetes-client >/dev/null 2>&1; then
		apt-get update -qq || true
	fi
	"$(dirname "$0")/../tests/manifests/install.sh"
fi
