#!/usr/bin/env bash
# Installs the npm packages of the manifest tests (package-lock.json) into
# tests/manifests/node_modules, and again only when the lock file changes.
# Run by `scripts/deps.sh manifests` and by tests/scripts/test_manifests.sh.
#
# Safe to run concurrently: installs take an exclusive lock on package.json,
# and the tests that read node_modules hold the same lock shared.
set -euo pipefail
dir=$(cd "$(dirname "$0")" && pwd)
stamp=$dir/node_modules/.installed-package-lock.json

command -v npm >/dev/null || { echo "install.sh: npm is missing (run: scripts/deps.sh manifests)" >&2; exit 1; }
exec 9<"$dir/package.json"
flock -x 9
if [[ -f $stamp ]] && cmp -s "$stamp" "$dir/package-lock.json"; then
	exit 0
fi
echo "Installing the manifest tests' npm packages into $dir/node_modules" >&2
(cd "$dir" && npm ci --no-audit --no-fund --loglevel=error >&2)
cp "$dir/package-lock.json" "$stamp"
