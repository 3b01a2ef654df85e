#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Runs every libFuzzer target built in BUILD_DIR (make fuzz) for FUZZ_SECONDS
# each (default 60), starting from a scratch copy of its seed corpus so the
# committed corpus only grows by hand. Crashes are left in the scratch dir.
set -euo pipefail
build=$(cd "${1:?usage: fuzz.sh BUILD_DIR}" && pwd)
seconds=${FUZZ_SECONDS:-60}
here=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d /tmp/ascend-fuzz-XXXXXX)
echo "fuzzing for ${seconds}s per target; work dir $work"
for target in "$build"/fuzz/fuzz_*; do
	[ -x "$target" ] || continue
	name=$(basename "$target")
	mkdir -p "$work/$name"
	cp -r "$here/fuzz/corpus/$name/." "$work/$name/" 2>/dev/null || true
	echo "== $name"
	(cd "$work" && "$target" -max_total_time="$seconds" -max_len=65536 "$work/$name")
done
echo "no crashes; work dir $work can be removed"
