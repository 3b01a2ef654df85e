#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The cluster e2e on every Kubernetes release from 1.34 (make e2e-matrix,
# docs/cluster.md "Release matrix"): for each release of K8S_MATRIX and the
# pin (tests/cluster/versions.env), its components built or taken from the
# cache (scripts/cluster-bins.sh with K8S=), then tests/cluster/e2e.sh on a
# fresh cluster of them. The steps that need a DRA field the release drops
# skip themselves (tests/cluster/lib/features.sh); everything else must
# pass. Each run's output goes to BUILD_DIR/e2e-matrix/<release>.log; the
# summary at the end has one line per release, as docs/cluster.md records it.
#
# Usage: scripts/e2e-matrix.sh BUILD_DIR [RELEASE...] [-- STEP...]
#   RELEASE   1.34, 1.34.4 or v1.34.4 (default: all of them, oldest first)
#   STEP      only those steps of the e2e (default: all)
set -uo pipefail

die() {
	printf 'e2e-matrix: %s\n' "$*" >&2
	exit 2
}
[[ $# -ge 1 ]] || die "usage: $0 BUILD_DIR [RELEASE...] [-- STEP...]"
build=$(cd "$1" 2>/dev/null && pwd) || die "no build directory $1 (run: make build)"
shift
root=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=../tests/cluster/versions.env
. "$root/tests/cluster/versions.env"

releases=() steps=()
while [[ $# -gt 0 && $1 != -- ]]; do
	read -ra words <<<"${1//,/ }"
	releases+=("${words[@]}")
	shift
done
[[ ${1-} != -- ]] || { shift; steps=("$@"); }
# shellcheck disable=SC2206 # the matrix is a list of words
((${#releases[@]})) || releases=($K8S_MATRIX "$K8S_VERSION")

out=$build/e2e-matrix
mkdir -p "$out"
summary=()
worst=0
for r in "${releases[@]}"; do
	t0=$SECONDS
	log=$out/${r#v}.log
	echo "== e2e-matrix: Kubernetes $r"
	if ! bin=$(K8S=$r "$root/scripts/cluster-bins.sh" | tail -n 1); then
		summary+=("$r: the components did not build (see above)")
		worst=1
		continue
	fi
	version=$("$bin/kube-apiserver" --version 2>/dev/null | awk '{print $2}')
	K8S=$r "$root/tests/cluster/e2e.sh" "$build" "${steps[@]}" 2>&1 | tee "$log"
	rc=${PIPESTATUS[0]}
	result=$(grep -E '^[0-9]+ passed, [0-9]+ failed' "$log" | tail -n 1)
	skips=$(sed -n 's/^skip \([0-9a-z]*\)\. .*/\1/p' "$log" | sort -u | paste -sd, -)
	line="${version:-$r}: ${result:-no result (exit $rc)} in $((SECONDS - t0)) s"
	[ -z "$skips" ] || line+="; skipped checks: $skips"
	summary+=("$line")
	((rc == 0)) || worst=1
done

echo "== e2e-matrix on $(date -u +%Y-%m-%d) ($(uname -m), simulated NPU nodes):"
printf '%s\n' "${summary[@]}"
exit "$worst"
