#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Installs what the manifest tests need beyond Debian packages:
#
#   install.sh npm             the npm packages of package-lock.json, into
#                              tests/manifests/node_modules, and again only
#                              when the lock file changes;
#   install.sh debian-kubectl  Debian 12's own kubectl (package
#                              kubernetes-client: kubectl 1.20, kustomize
#                              v2.0.3), taken out of the package without
#                              installing it, into tests/manifests/.cache/;
#                              downloaded once. Prints the binary's path, or
#                              says on stderr why it cannot and exits 1;
#   install.sh                 both; the kubectl only warns when it fails.
#
# Run by `scripts/deps.sh manifests` and by tests/scripts/test_manifests.sh.
# Safe to run concurrently: the npm install takes an exclusive lock on
# package.json, and the tests that read node_modules hold the same lock
# shared; the kubectl download is locked by .cache/kubernetes-client.lock and
# moved into place complete.
set -euo pipefail
dir=$(cd "$(dirname "$0")" && pwd)

npm_packages() {
	local stamp=$dir/node_modules/.installed-package-lock.json
	command -v npm >/dev/null || { echo "install.sh: npm is missing (run: scripts/deps.sh manifests)" >&2; return 1; }
	exec 9<"$dir/package.json"
	flock -x 9
	if [[ -f $stamp ]] && cmp -s "$stamp" "$dir/package-lock.json"; then
		exec 9<&-
		return 0
	fi
	echo "Installing the manifest tests' npm packages into $dir/node_modules" >&2
	(cd "$dir" && npm ci --no-audit --no-fund --loglevel=error >&2)
	cp "$dir/package-lock.json" "$stamp"
	exec 9<&-
}

# .cache/kubernetes-client/ holds kubectl and version (the package's version).
debian_kubectl() {
	local cache=$dir/.cache dest work status=0
	dest=$cache/kubernetes-client
	mkdir -p "$cache"
	exec 8>"$cache/kubernetes-client.lock"
	flock -x 8
	if [[ ! -x $dest/kubectl ]]; then
		work=$(mktemp -d "$cache/download.XXXXXX")
		fetch_debian_kubectl "$work" "$dest" || status=$?
		rm -rf "$work"
	fi
	exec 8>&-
	((status == 0)) && echo "$dest/kubectl"
	return "$status"
}
fetch_debian_kubectl() { # WORK_DIR DEST
	local work=$1 dest=$2 deb
	if ! command -v apt-get >/dev/null || ! command -v dpkg-deb >/dev/null; then
		echo "no apt-get or dpkg-deb here: Debian's kubectl comes from its package" >&2
		return 1
	fi
	echo "Downloading Debian's kubectl (apt-get download kubernetes-client) into $dest" >&2
	if ! (cd "$work" && apt-get download kubernetes-client) >"$work/log" 2>&1; then
		echo "apt-get download kubernetes-client failed: $(grep -E '^(E|Err):' "$work/log" | head -3 | tr '\n' ' ')(apt-get update, or no network?)" >&2
		return 1
	fi
	deb=$(find "$work" -maxdepth 1 -name 'kubernetes-client_*.deb' | head -1)
	[[ -n $deb ]] || { echo "apt-get download kubernetes-client left no .deb" >&2; return 1; }
	dpkg-deb -x "$deb" "$work/root"
	mkdir "$work/out"
	mv "$work/root/usr/bin/kubectl" "$work/out/kubectl"
	dpkg-deb -f "$deb" Version >"$work/out/version"
	"$work/out/kubectl" version --client >/dev/null 2>&1 || { echo "the kubectl of $(basename "$deb") does not run here" >&2; return 1; }
	rm -rf "$dest"
	mv "$work/out" "$dest"
}

case ${1:-all} in
npm) npm_packages ;;
debian-kubectl) debian_kubectl ;;
all)
	npm_packages
	debian_kubectl >/dev/null || echo "install.sh: without Debian's kubectl, tests/scripts/test_manifests.sh skips its kubectl 1.20 leg" >&2
	;;
*)
	echo "usage: install.sh [npm|debian-kubectl]" >&2
	exit 2
	;;
esac
