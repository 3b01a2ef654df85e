#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The deployment artifacts: every YAML in deploy/ and examples/, the plugin's
# Dockerfile, the example inference image and the smoke-test Job's script.
#
# - kustomize renders deploy/ and each overlay (kubectl kustomize) with every
#   kubectl at hand: the one on PATH and Debian 12's own (kubectl 1.20, whose
#   kustomize v2.0.3 knows no directories in resources: and no inline
#   patches), which tests/manifests/install.sh takes out of the package
#   kubernetes-client once; where it cannot, that leg is skipped, saying why;
# - every kubectl renders the same objects (tests/manifests/same-objects.cjs);
# - tests/manifests/check.cjs parses every file, validates every object
#   against the Kubernetes API schemas (unknown fields included) and checks
#   the project's rules, on every kubectl's renders: see its header;
# - the checks themselves are checked: a broken label, a misspelt field, an
#   unknown flag and an overlay out of step must each make check.cjs fail, a
#   difference between two renders must be caught, and kubectl 1.20 must
#   really be the old kustomize (a directory in resources: fails);
# - the Dockerfile: built by the project's own scripts on debian:12, run on
#   an empty image with every library the binary links (ldd), no compiler
#   (tests/scripts/test_image.sh checks its file set);
# - the inference image's entrypoint and the smoke test's script run against
#   fake files and device nodes, the non-root smoke test's as its user with
#   and without its supplementary group.
#
# Usage: test_manifests.sh PLUGIN_BINARY   (ctest passes more; they are unused)
# Needs kubectl (any since 1.14) and Node.js: scripts/deps.sh manifests.
set -euo pipefail
plugin=${1:?usage: test_manifests.sh PATH_TO_ascend-device-plugin}
root=$(cd "$(dirname "$0")/../.." && pwd)
manifests=$root/tests/manifests
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# shellcheck source=tests/scripts/lib.sh
. "$(dirname "$0")/lib.sh"

version=$("$plugin" --version | awk '{print $2}')

# ---- tools ---------------------------------------------------------------------

# The kubectls to render with, their names ("kubectl v1.32.4") and their
# kustomize versions. kubectl 1.14 to 1.20 embed kustomize v2.0.3 and do not
# say so.
kubectls=() names=() kustomizes=()
# add_kubectl PATH: adds it unless a kubectl of its version is there already.
add_kubectl() {
	local json version kustomize name known
	json=$("$1" version --client -o json 2>&1) || { echo "$1 version --client: $json"; return 1; }
	version=$(sed -n 's/^ *"gitVersion": *"\([^"]*\)".*/\1/p' <<<"$json")
	kustomize=$(sed -n 's/^ *"kustomizeVersion": *"\([^"]*\)".*/\1/p' <<<"$json")
	[[ -z $kustomize && $version =~ ^v1\.(1[4-9]|20)\. ]] && kustomize=v2.0.3
	name="kubectl $version"
	for known in "${names[@]}"; do
		[[ $known == "$name" ]] && return 0
	done
	kubectls+=("$1")
	names+=("$name")
	kustomizes+=("${kustomize:-unknown}")
}
if command -v kubectl >/dev/null; then
	check "kubectl on PATH runs" add_kubectl "$(command -v kubectl)"
else
	skip "kubectl on PATH" "none (run: scripts/deps.sh manifests)"
fi
leg120="the kubectl 1.20 leg (Debian 12's kubernetes-client, kustomize v2.0.3)"
if debian_kubectl=$("$manifests/install.sh" debian-kubectl 2>"$tmp/why"); then
	sed 's/^/  /' "$tmp/why"
	before=${#kubectls[@]} failed_before=$failed
	check "Debian's kubectl (kubernetes-client $(cat "${debian_kubectl%/*}/version")) runs" add_kubectl "$debian_kubectl"
	if ((${#kubectls[@]} == before && failed == failed_before)); then
		echo "note: the kubectl on PATH is Debian's version already: it is $leg120"
	fi
else
	debian_kubectl=
	skip "$leg120" "$(grep -v '^Downloading' "$tmp/why" | tr '\n' ' ')"
fi
check "at least one kubectl" test ${#kubectls[@]} -gt 0
for i in "${!kubectls[@]}"; do
	echo "rendering with ${names[i]} (kustomize ${kustomizes[i]}): ${kubectls[i]}"
done
node_ok() {
	command -v node >/dev/null || { echo "no node (run: scripts/deps.sh manifests)"; return 1; }
	"$manifests/install.sh" npm
}
check "npm packages of tests/manifests installed" node_ok
if ((failed)); then
	finish
	exit 1
fi

# ---- render and check -------------------------------------------------------------

mapfile -t overlays < <(find "$root/deploy/overlays" -mindepth 1 -maxdepth 1 -type d -printf '%f\n' | sort)

# render KUBECTL SRC OUT [VARIANT...]: KUBECTL kustomize of SRC/deploy
# (variant "deploy") and of SRC/deploy/overlays/<variant>/ into
# OUT/<variant>.yaml; all variants when none is named. kustomize v5 warns on
# stderr that bases, patchesStrategicMerge and patchesJson6902 are
# deprecated: they are what kustomize v2.0.3 reads.
render() {
	local kubectl=$1 src=$2 out=$3 variant dir
	shift 3
	mkdir -p "$out"
	(($#)) || set -- deploy "${overlays[@]}"
	for variant in "$@"; do
		dir=$src/deploy/overlays/$variant
		[[ $variant == deploy ]] && dir=$src/deploy
		"$kubectl" kustomize "$dir" >"$out/$variant.yaml" || { echo "kubectl kustomize ${dir#"$src"/} failed"; return 1; }
	done
}

# run_checks ROOT RENDER_DIR: check.cjs, holding the npm packages' lock shared.
run_checks() {
	flock -s "$manifests/package.json" node "$manifests/check.cjs" "$1" "$plugin" "$2"
}

# The first kubectl renders into $tmp/render, the others into $tmp/render-N.
render_dir() { if (($1)); then echo "$tmp/render-$1"; else echo "$tmp/render"; fi; }
for i in "${!kubectls[@]}"; do
	for variant in deploy "${overlays[@]}"; do
		check "${names[i]} renders $variant" render "${kubectls[i]}" "$root" "$(render_dir "$i")" "$variant"
	done
done
# same_objects A B: same-objects.cjs, holding the npm packages' lock shared.
same_objects() { flock -s "$manifests/package.json" node "$manifests/same-objects.cjs" "$@"; }
for ((i = 1; i < ${#kubectls[@]}; i++)); do
	for variant in deploy "${overlays[@]}"; do
		check "$variant: ${names[i]} renders the objects ${names[0]} does" \
			same_objects "$tmp/render/$variant.yaml" "$(render_dir "$i")/$variant.yaml"
	done
done

# check.cjs on the first kubectl's renders, one line per check; on the
# others', one line for all (a failed check is shown with the kubectl's name).
for i in "${!kubectls[@]}"; do
	set +e
	run_checks "$root" "$(render_dir "$i")" >"$tmp/checks" 2>&1
	status=$?
	set -e
	if ((i == 0)); then
		cat "$tmp/checks"
		passed=$((passed + $(grep -c '^ok ' "$tmp/checks" || true)))
	else
		grep '^FAIL ' "$tmp/checks" | sed "s/^FAIL /FAIL ${names[i]}: /" || true
		grep -q '^FAIL ' "$tmp/checks" || ((status != 0)) ||
			pass "${names[i]}: check.cjs passes on its renders ($(grep -c '^ok ' "$tmp/checks") checks)"
	fi
	failed=$((failed + $(grep -c '^FAIL ' "$tmp/checks" || true)))
	if ((status != 0)) && ! grep -q '^FAIL ' "$tmp/checks"; then
		fail "check.cjs on ${names[i]}'s renders" "exited with $status: $(tail -5 "$tmp/checks")"
	fi
done

# ---- the checks catch what they are for ----------------------------------------------

# mutation WHAT FILE SED_SCRIPT EXPECTED: on a copy of deploy/ and examples/
# with FILE edited by SED_SCRIPT, check.cjs must fail with a line containing
# EXPECTED.
mutation() {
	local what=$1 file=$2 script=$3 expected=$4 copy
	copy=$(mktemp -d "$tmp/mutation.XXXX")
	cp -r "$root/deploy" "$root/examples" "$tmp/render" "$copy/"
	sed -i "$script" "$copy/$file"
	if cmp -s "$root/$file" "$copy/$file"; then
		fail "$what" "the edit did not apply to $file"
		return
	fi
	# Render again only what the edit can change.
	case $file in
	deploy/overlays/*) render "${kubectls[0]}" "$copy" "$copy/render" "$(cut -d/ -f3 <<<"$file")" ;;
	deploy/*) render "${kubectls[0]}" "$copy" "$copy/render" ;;
	esac >/dev/null 2>&1 || true
	if run_checks "$copy" "$copy/render" >"$copy/out" 2>&1; then
		fail "$what" "check.cjs passed"
	elif grep '^FAIL ' "$copy/out" | grep -qF -- "$expected"; then
		pass "$what"
	else
		fail "$what" "no FAIL line with '$expected':" "$(grep '^FAIL ' "$copy/out" | head -5)"
	fi
}
mutation "a changed pod label is caught" deploy/base/ascend-device-plugin.yaml \
	'/^      labels:/,/^    spec:/ s/name: ascend-device-plugin/name: device-plugin/' \
	"pods labelled name=ascend-device-plugin"
mutation "a misspelt field is caught" examples/npu-smoke-test.yaml \
	's/activeDeadlineSeconds:/activeDeadlineSecond:/' \
	"unknown field /spec/activeDeadlineSecond"
mutation "a DRA example naming a DeviceClass deploy/dra lacks is caught" examples/dra/npu-claim-1.yaml \
	's/deviceClassName: npu.ascend.com/deviceClassName: gpu.example.com/' \
	'DeviceClass "gpu.example.com" is not in deploy/dra'
mutation "an unknown plugin flag is caught" deploy/base/ascend-device-plugin.yaml \
	's/- --health-interval=5s/- --health-intervall=5s/' \
	"--health-intervall is not a flag"
mutation "a non-root smoke test without its supplementary group is caught" examples/npu-smoke-test-nonroot.yaml \
	'/supplementalGroups:/d' \
	"supplementalGroups []"
mutation "a non-root smoke test whose script drifts from the root one is caught" examples/npu-smoke-test-nonroot.yaml \
	's/SMOKE TEST PASSED/SMOKE TEST OK/' \
	"the commands differ"
mutation "an overlay whose probe misses the new resource name is caught" deploy/overlays/resource-name/patch-strategic-merge.yaml \
	'/livenessProbe:/,/readinessProbe:/ s#--resource-name=huawei.com/Ascend910#--resource-name=ascend.com/npu#' \
	"livenessProbe runs --probe"
mutation "a --config file the plugin refuses is caught" deploy/overlays/config/configmap.yaml \
	's/healthInterval: 5s/healthInterval: soon/' \
	"flags.healthInterval: 'soon' is not a duration"
mutation "a setting of the --config file counts" deploy/overlays/config/configmap.yaml \
	's/healthInterval: 5s/healthInterval: 3s/' \
	"config: health interval 5s"

# Two renders that differ in one value are told apart.
render_difference_caught() {
	local copy out
	copy=$(mktemp -d "$tmp/difference.XXXX")
	sed 's/--health-interval=2s/--health-interval=3s/' "$tmp/render/health-interval.yaml" >"$copy/health-interval.yaml"
	if out=$(same_objects "$tmp/render/health-interval.yaml" "$copy/health-interval.yaml" 2>&1); then
		echo "same-objects.cjs found no difference"
		return 1
	fi
	grep -qF '/spec/template/spec/containers/0/args/2: "--health-interval=2s" vs "--health-interval=3s"' <<<"$out" ||
		{ echo "not the expected difference: $out"; return 1; }
}
check "a difference between two kubectls' renders is caught" render_difference_caught
# Debian's kubectl is the old kustomize this project keeps working with.
old_kustomize_caught() {
	local copy
	copy=$(mktemp -d "$tmp/old.XXXX")
	cp -r "$root/deploy" "$copy/"
	sed -i 's#^  - base/ascend-device-plugin.yaml$#  - base#' "$copy/deploy/kustomization.yaml"
	cmp -s "$root/deploy/kustomization.yaml" "$copy/deploy/kustomization.yaml" && { echo "the edit did not apply"; return 1; }
	if "$debian_kubectl" kustomize "$copy/deploy" >/dev/null 2>"$copy/err"; then
		echo "Debian's kubectl rendered a directory in resources:"
		return 1
	fi
	grep -q "must be a file" "$copy/err" || { echo "not the expected error: $(cat "$copy/err")"; return 1; }
}
if [[ -n $debian_kubectl ]]; then
	check "Debian's kubectl fails on a directory in resources: (kustomize v2.0.3)" old_kustomize_caught
else
	skip "Debian's kubectl fails on a directory in resources: (kustomize v2.0.3)" "no kubectl 1.20 leg"
fi

# ---- the plugin's Dockerfile -----------------------------------------------------------

dockerfile=$root/Dockerfile
# The lines of the runtime stage (after the last FROM).
runtime_stage() { awk '/^FROM /{n++} n==2' "$dockerfile"; }

check "Dockerfile: build on debian:12, run on an empty image" \
	diff <(grep '^FROM ' "$dockerfile") <(printf 'FROM debian:12 AS build\nFROM scratch\n')
build_stage() { awk '/^FROM /{n++} n==1' "$dockerfile"; }
uses_project_build() { build_stage | grep -q 'scripts/deps.sh' && build_stage | grep -q 'cmake --build'; }
check "Dockerfile: the build stage uses scripts/deps.sh and CMake" uses_project_build
check "Dockerfile: the image is built like the tested binary (release, static gRPC)" \
	grep -q -- '-DCMAKE_BUILD_TYPE=RelWithDebInfo .*-DSTATIC_GRPC=ON' "$dockerfile"
# The packages the runtime stage installs (none, while gRPC is linked statically).
runtime_packages=$(runtime_stage | grep -o 'apt-get install[^&]*' | tr ' ' '\n' | grep -Ev '^(apt-get|install|-.*|\\)?$' | sort -u || true)
no_build_tools() {
	! grep -E -- '-dev$|^(gcc|g\+\+|clang|cmake|make|pkg-config|build-essential|protobuf-c-compiler|protobuf-compiler)$' <<<"$runtime_packages"
}
check "Dockerfile: the runtime stage installs no compiler or -dev package" no_build_tools

# Every library the binary links (ldd) must be in the image: the loader, or a
# library of scripts/image-libs.txt, the list `scripts/image.sh rootfs` (the
# build stage's last step) copies into the empty runtime image.
libraries_covered() {
	local lib missing=()
	grep -qF 'scripts/image.sh rootfs' <(build_stage) || { echo "the build stage does not run scripts/image.sh rootfs"; return 1; }
	while read -r lib; do
		grep -qx "$lib" "$root/scripts/image-libs.txt" || missing+=("$lib")
	done < <(ldd "$plugin" | awk '/=> \//{print $1}')
	((${#missing[@]} == 0)) || { echo "not in scripts/image-libs.txt: ${missing[*]}"; return 1; }
}
# make test's second run passes a sanitizer build, linked differently from
# the image's binary (dynamically, with the sanitizer runtimes).
# Not `ldd | grep -q`: with pipefail, grep leaving early kills ldd with SIGPIPE.
if grep -qE 'lib(asan|ubsan|tsan)\.so' <<<"$(ldd "$plugin")"; then
	not_this_build "Dockerfile: the image has every library the binary links (ldd)" "a sanitizer build is not what the image ships"
else
	check "Dockerfile: the image has every library the binary links (ldd)" libraries_covered
fi
runs_the_binary() {
	build_stage | grep -q 'scripts/image.sh rootfs /build/src/ascend-device-plugin /rootfs$' &&
		runtime_stage | grep -qx 'COPY --from=build /rootfs/ /' &&
		runtime_stage | grep -qx 'ENTRYPOINT \["/usr/local/bin/ascend-device-plugin"\]'
}
check "Dockerfile: installs and runs /usr/local/bin/ascend-device-plugin" runs_the_binary
oci_labels() {
	local label
	for label in title description version revision; do
		grep -q "org.opencontainers.image.$label=" "$dockerfile" || { echo "no org.opencontainers.image.$label"; return 1; }
	done
	grep -qx "ARG VERSION=$version" "$dockerfile" || { echo "ARG VERSION is not $version"; return 1; }
}
check "Dockerfile: OCI labels, version $version" oci_labels
# .dockerignore must not hide a directory the CMake build adds.
context_complete() {
	local sub first
	for sub in $(sed -n 's/^add_subdirectory(\([^)]*\))/\1/p' "$root/CMakeLists.txt") scripts CMakeLists.txt; do
		first=${sub%%/*}
		if grep -qxE "/?($first|$sub)/?" "$root/.dockerignore"; then
			echo ".dockerignore excludes $sub, which the build needs"
			return 1
		fi
	done
}
check ".dockerignore keeps every directory the build needs" context_complete

# ---- the example inference image ---------------------------------------------------------

image=$root/examples/inference-image
copies_exist() {
	local src
	local src
	while read -r src; do
		[[ -f $image/$src ]] || { echo "COPY $src: no such file"; return 1; }
	done < <(awk '/^COPY /{print $2}' "$image/Dockerfile")
}
check "inference image: every COPY source exists" copies_exist
cann_base_and_env() {
	local line
	for line in '^ARG CANN_BASE=' '^FROM \$\{CANN_BASE\}$' '^ENV ASCEND_HOME=' '^ENV PATH=' '^ENV LD_LIBRARY_PATH='; do
		grep -qE "$line" "$image/Dockerfile" || { echo "no line matching $line"; return 1; }
	done
}
check "inference image: CANN base image as a build argument, CANN environment set" cann_base_and_env
no_driver_inside() { ! grep -E '^(RUN|COPY|ADD) .*\.run\b' "$image/Dockerfile"; }
check "inference image: no driver installed in the image" no_driver_inside
if command -v python3 >/dev/null; then
	check "inference image: the placeholder server is valid Python" \
		python3 -c 'import ast, sys; ast.parse(open(sys.argv[1]).read(), sys.argv[1])' "$image/inference_server.py"
else
	skip "inference image: the placeholder server is valid Python" "no python3"
fi

# version_check WHAT COMPATIBLE EXPECTED: the entrypoint with a driver of
# release V100R001C15 and a CANN whose compatible list is COMPATIBLE.
version_check() {
	local what=$1 compatible=$2 expected=$3 fake
	fake=$(mktemp -d "$tmp/versions.XXXX")
	mkdir -p "$fake/driver" "$fake/toolkit/aarch64-linux"
	printf 'Version=24.1.rc1\nInnerversion=V100R001C15SPC006B220\n' >"$fake/driver/version.info"
	[[ -n $compatible ]] && printf 'version=8.0.RC1\ncompatible_version=%s\n' "$compatible" >"$fake/toolkit/aarch64-linux/ascend_toolkit_install.info"
	local out
	out=$(ASCEND_DRIVER_PATH=$fake/driver ASCEND_TOOLKIT_HOME=$fake/toolkit sh "$image/check-driver-version.sh" echo server-started 2>&1) || true
	if grep -qF -- "$expected" <<<"$out" && grep -qx server-started <<<"$out"; then
		pass "$what"
	else
		fail "$what" "$out"
	fi
}
version_check "inference image: a matching driver is reported as such" "[V100R001C13],[V100R001C15]" "release V100R001C15 is in CANN's compatible list"
version_check "inference image: a mismatched driver warns and the server still starts" "[V100R001C30]" "WARNING: the driver's release V100R001C15 is not in CANN's compatible list"
version_check "inference image: no CANN install info is reported" "" "cannot tell the CANN version"

# ---- the smoke test's script ------------------------------------------------------------------

node -e '
	const YAML = require(process.argv[1]);
	const job = YAML.parse(require("fs").readFileSync(process.argv[2], "utf8"));
	process.stdout.write(job.spec.template.spec.containers[0].command[2]);
' "$manifests/node_modules/yaml" "$root/examples/npu-smoke-test.yaml" >"$tmp/smoke.sh"
check "smoke test: the script is valid sh" sh -n "$tmp/smoke.sh"
# As the pod runs it: sh -c SCRIPT.
script=$(cat "$tmp/smoke.sh")

# smoke WHAT EXPECTED_STATUS EXPECTED_TEXT COMMAND...: runs the script under COMMAND.
smoke() {
	local what=$1 want=$2 text=$3 got out
	shift 3
	set +e
	out=$("$@" 2>&1)
	got=$?
	set -e
	local status_ok=false
	if ((want == 0)); then ((got == 0)) && status_ok=true; else ((got != 0)) && status_ok=true; fi
	if $status_ok && grep -qF -- "$text" <<<"$out"; then
		pass "$what"
	else
		fail "$what" "exit $got:" "$out"
	fi
}
smoke "smoke test: fails without ASCEND_VISIBLE_DEVICES" 1 "SMOKE TEST FAILED: ASCEND_VISIBLE_DEVICES is not set" \
	env -u ASCEND_VISIBLE_DEVICES sh -c "$script"
smoke "smoke test: fails when an allocated device node is missing" 1 "SMOKE TEST FAILED: /dev/davinci977: Device not found" \
	env ASCEND_VISIBLE_DEVICES=977 sh -c "$script"

# fake_dev_run MODE[:GID] NPUS COMMAND...: COMMAND with ASCEND_VISIBLE_DEVICES=NPUS
# in a mount namespace of its own whose /dev holds stand-ins (copies of
# /dev/null) for davinci0, davinci1 and davinci_manager, with permissions MODE
# and group GID (default root), as the driver's nodes are crw-rw---- with the
# group HwHiAiUser on a node.
fake_dev_run() {
	local mode=${1%%:*} group=0 npus=$2
	[[ $1 == *:* ]] && group=${1#*:}
	shift 2
	unshare -m sh -c '
		set -e
		mount -t tmpfs -o mode=755 none /dev
		mknod -m 666 /dev/null c 1 3
		for n in davinci0 davinci1 davinci_manager; do mknod -m "$1" /dev/$n c 1 3; chgrp "$2" /dev/$n; done
		shift 2
		exec "$@"
	' fake "$mode" "$group" env ASCEND_VISIBLE_DEVICES="$npus" "$@"
}
if unshare -m sh -c 'mount -t tmpfs none /mnt 2>/dev/null' 2>/dev/null; then
	smoke "smoke test: passes with its NPUs present" 0 "SMOKE TEST PASSED: 2 NPU(s) usable: 0,1" \
		fake_dev_run 666 0,1 env EXPECTED_NPUS=2 sh -c "$script"
	smoke "smoke test: fails when the pod expected more NPUs" 1 "SMOKE TEST FAILED: got 1 NPUs, expected 2" \
		fake_dev_run 666 0 env EXPECTED_NPUS=2 sh -c "$script"
	if command -v setpriv >/dev/null; then
		smoke "smoke test: reports Permission denied" 1 "SMOKE TEST FAILED: /dev/davinci0: Permission denied for uid 65534" \
			fake_dev_run 600 0 env EXPECTED_NPUS=1 setpriv --reuid=65534 --regid=65534 --clear-groups sh -c "$script"
	else
		skip "smoke test: reports Permission denied" "no setpriv"
	fi
else
	skip "smoke test: passes with its NPUs present" "cannot make a mount namespace here"
	skip "smoke test: fails when the pod expected more NPUs" "cannot make a mount namespace here"
	skip "smoke test: reports Permission denied" "cannot make a mount namespace here"
fi

# The non-root Job: its user, group and supplementary group, from its YAML
# (check.cjs checks that its script is the root Job's). On device nodes
# crw-rw---- whose group is the supplementary group it passes; without that
# group it reports Permission denied, as on a node whose HwHiAiUser gid is
# not the one in the Job.
node -e '
	const YAML = require(process.argv[1]);
	const job = YAML.parse(require("fs").readFileSync(process.argv[2], "utf8"));
	const s = job.spec.template.spec.securityContext || {};
	console.log(s.runAsUser, s.runAsGroup, (s.supplementalGroups || []).join(","));
' "$manifests/node_modules/yaml" "$root/examples/npu-smoke-test-nonroot.yaml" >"$tmp/nonroot-ids"
read -r nr_uid nr_gid nr_groups <"$tmp/nonroot-ids"
nr_group=${nr_groups%%,*}
if unshare -m sh -c 'mount -t tmpfs none /mnt 2>/dev/null' 2>/dev/null && command -v setpriv >/dev/null; then
	smoke "non-root smoke test: passes with the device nodes' group as its supplementary group" 0 "SMOKE TEST PASSED: 1 NPU(s) usable: 0" \
		fake_dev_run "660:$nr_group" 0 setpriv --reuid="$nr_uid" --regid="$nr_gid" --groups="$nr_groups" sh -c "$script"
	smoke "non-root smoke test: Permission denied without that group" 1 "SMOKE TEST FAILED: /dev/davinci0: Permission denied for uid $nr_uid" \
		fake_dev_run "660:$nr_group" 0 setpriv --reuid="$nr_uid" --regid="$nr_gid" --clear-groups sh -c "$script"
else
	skip "non-root smoke test: passes with the device nodes' group as its supplementary group" "no mount namespace or no setpriv"
	skip "non-root smoke test: Permission denied without that group" "no mount namespace or no setpriv"
fi

finish
