#!/usr/bin/env bash
# Installs the Debian 12 packages the project builds and tests with. As root it
# runs apt-get; otherwise it prints the command to run and fails.
set -euo pipefail

packages=(
	cmake make gcc pkg-config
	libgrpc-dev protobuf-c-compiler libprotobuf-c-dev protobuf-compiler
	libcmocka-dev
)
# Extra groups: `deps.sh fuzz` adds clang for libFuzzer builds.
for extra in "$@"; do
	case "$extra" in
	fuzz) packages+=(clang) ;;
	*) echo "deps.sh: unknown group '$extra'" >&2; exit 2 ;;
	esac
done

missing=()
for p in "${packages[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

cmd="apt-get install -y --no-install-recommends ${missing[*]}"
if [ "$(id -u)" -ne 0 ]; then
	echo "Missing packages: ${missing[*]}" >&2
	echo "Install them with: sudo apt-get update && sudo $cmd" >&2
	exit 1
fi
echo "Installing: ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
$cmd
