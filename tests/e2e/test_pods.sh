#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# kubelet-sim's pod semantics against a real containerd (CRI) + runc: what a
# pod runner must do the way the kubelet does it, each pod a small manifest
# written here and run side by side with the others:
#  1. restartPolicy Always and a failing command: exit code and reason,
#     CrashLoopBackOff with a growing back-off, new attempts, phase Running;
#  2. OnFailure (exit 0 ends the pod, exit 3 restarts it) and Never (Failed);
#  3. exec liveness (Unhealthy, killed, restarted) and readiness probes, with
#     their thresholds;
#  4. env values, $(VAR) expansion and $$, fieldRefs, command and args,
#     workingDir, runAsUser/runAsGroup/supplementalGroups, a read-only root
#     and capabilities, as the container sees them;
#  5. hostPath volumes by type (the kubelet's FailedMount, DirectoryOrCreate,
#     FileOrCreate, File, CharDevice, read-only mounts), all under the node
#     root;
#  6. an image that is not there (ErrImageNeverPull), --image-alias;
#  7. the pod's own network namespace (CNI) and hostNetwork;
#  8. logs by stream, exec, deletion with and without a grace period;
#  9. `pods`; the device plugin's DaemonSet and NPU pods whose devices come
#     back when they end; quit deletes every pod; nothing is left.
# Usage: test_pods.sh BUILD_DIR. Needs root and scripts/deps.sh e2e; the
# NPU part needs BUILD_DIR/image/ascend-device-plugin.tar (make image) and
# kubectl, and is skipped without them. E2E_WAIT_S bounds each wait (20 s);
# E2E_KEEP_LOG=FILE keeps kubelet-sim's output.

# $(VAR) in single quotes is the kubelet's expansion, not the shell's.
# shellcheck disable=SC2016
set -uo pipefail

readonly WAIT_S=${E2E_WAIT_S:-20}
readonly RESOURCE=ascend.com/npu
readonly BUSYBOX=docker.io/local/busybox:1

if [ $# -lt 1 ]; then
	echo "usage: $0 BUILD_DIR" >&2
	exit 2
fi
build=$(cd "$1" && pwd)
root=$(cd "$(dirname "$0")/../.." && pwd)
sim=${E2E_KUBELET_SIM:-$build/tools/kubelet-sim/kubelet-sim}
plugin_tar=$build/image/ascend-device-plugin.tar

# shellcheck source=tests/scripts/lib.sh
. "$root/tests/scripts/lib.sh"
# shellcheck source=tests/e2e/node.sh
. "$root/tests/e2e/node.sh"
# shellcheck source=tests/e2e/sim.sh
. "$root/tests/e2e/sim.sh"

if [ "$(id -u)" -ne 0 ]; then
	echo "skip: test_pods needs root (mknod, containerd)"
	exit 0
fi
for tool in containerd runc ctr umoci skopeo jq inotifywait nsenter; do
	command -v $tool >/dev/null || { echo "skip: no $tool (scripts/deps.sh e2e)"; exit 0; }
done
[ -f "$sim" ] || { echo "$sim is missing (make build)" >&2; exit 1; }
npu=true
[ -f "$plugin_tar" ] && command -v kubectl >/dev/null || npu=false

# Short paths: unix sockets live under both directories.
tmp=$(mktemp -d /tmp/e2e.XXXXXX)
chmod 755 "$tmp"
node=$tmp/n
rt=$tmp/c
started=$SECONDS
# The hostPath volumes' directory: under the node root, never on the host.
hp=/var/lib/e2e-pods-${tmp##*.}

stopped=false
stop_all() {
	stopped=true
	sim_quit
	teardown "$rt" "$node" 2>"$tmp/teardown.err"
	node_assert_clean "$rt" "$node" >"$tmp/clean" 2>&1
}
cleanup() {
	local status=$?
	if ! $stopped && ! stop_all; then
		echo "FAIL 9. left behind after teardown:"
		sed 's/^/    /' "$tmp/clean"
		status=1
	fi
	[ -n "${E2E_KEEP_LOG:-}" ] && cp "$tmp/sim.log" "$E2E_KEEP_LOG"
	rm -rf "$tmp"
	echo "test_pods: $((SECONDS - started)) s"
	exit $status
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# expect_eq WHAT GOT WANT: one check.
expect_eq() {
	if [ "$2" = "$3" ]; then
		pass "$1"
	else
		fail "$1" "got '$2', want '$3'"
	fi
}
# ms A_US B_US: milliseconds from A to B (kubelet-sim's --timestamps).
ms() {
	echo $((($2 - $1) / 1000))
}
# secs MS: MS as seconds, one decimal.
secs() {
	printf '%d.%d' $(($1 / 1000)) $((($1 % 1000) / 100))
}
# next WHAT NEEDLE [KEY=VALUE...]: like await, but only a line not read yet.
next() {
	local what=$1 needle=$2
	shift 2
	while need "$what" "$needle"; do
		_sim_has "$line" "$@" && return 0
	done
}
# ex WHAT POD CONTAINER SCRIPT: exec; the exec line is left in $line.
ex() {
	send "exec $2 $3 $4"
	while need "$1" "exec "; do
		case $line in
		"exec done pod=$2 container=$3 "*) return 0 ;;
		"exec "*) give_up "$1" "$line" ;;
		esac
	done
}
# pods_now: `pods` into $tmp/pods, one "pod name=..." line each.
pods_now() {
	: >"$tmp/pods"
	send pods
	while need "pods" "pod"; do
		case $line in
		"pods end"*) return 0 ;;
		"pod name="*) echo "$line" >>"$tmp/pods" ;;
		esac
	done
}
# pod_row POD: POD's `pods` line as "phase ready restarts".
pod_row() {
	local l
	l=$(grep -F -m1 "pod name=$1 " "$tmp/pods") || { echo "(not listed)"; return; }
	echo "$(value_of "$l" phase) $(value_of "$l" ready) $(value_of "$l" restarts)"
}
# count NEEDLE: how many lines kubelet-sim printed with NEEDLE.
count() {
	grep -v '^> ' "$tmp/sim.log" | grep -c -F -- "$1"
}
# manifest NAME: the YAML on stdin as $tmp/NAME.yaml.
manifest() {
	cat >"$tmp/$1.yaml"
}

# ---- the node, containerd, kubelet-sim --------------------------------------------
containerd_start "$rt" >"$tmp/containerd.out" 2>&1 || {
	cat "$tmp/containerd.out"
	give_up "containerd starts" "see above"
}
images_build "$tmp/images" >"$tmp/images.out" 2>&1 || give_up "test images" "$(tail -n 5 "$tmp/images.out")"
tars=("$tmp/images/pause.tar" "$tmp/images/busybox.tar")
$npu && tars+=("$plugin_tar")
images_import "$rt/containerd.sock" "${tars[@]}" >"$tmp/import.out" 2>&1 ||
	give_up "image import" "$(tail -n 5 "$tmp/import.out")"
node_create "$node" "$build" >"$tmp/node.out" 2>&1 || give_up "node" "$(tail -n 5 "$tmp/node.out")"
[ ! -e "$hp" ] || give_up "5. $hp" "exists on the host before the test"
sim_start --dir "$node/var/lib/kubelet/device-plugins" --node-root "$node" \
	--container-runtime-endpoint "$rt/containerd.sock" --relist-period 200ms --timestamps \
	--image-alias "debian:12-slim=$BUSYBOX"
need "kubelet-sim starts" "ready dir="
pass "containerd $(containerd --version | awk '{ print $3 }'), node, kubelet-sim --relist-period 200ms ($((SECONDS - started)) s)"

# ---- the manifests ----------------------------------------------------------------
# pod NAME RESTART_POLICY SCRIPT [GRACE]: a one-container busybox pod in
# namespace e2e. Grace 0 unless given: most of these containers ignore
# SIGTERM (a shell as PID 1), and quit would wait for each.
pod() {
	manifest "$1" <<EOF
apiVersion: v1
kind: Pod
metadata:
  name: $1
  namespace: e2e
spec:
  restartPolicy: $2
  terminationGracePeriodSeconds: ${4:-0}
  containers:
    - name: c
      image: $BUSYBOX
      command: ["sh", "-c", "$3"]
EOF
}
pod crash Always "echo attempt; exit 1"
pod onfail-ok OnFailure "exit 0"
sed -i "s|image: $BUSYBOX|image: debian:12-slim|" "$tmp/onfail-ok.yaml"
pod onfail-3 OnFailure "exit 3"
pod never-3 Never "exit 3"
pod noimage Always "sleep 1000"
sed -i "s|image: $BUSYBOX|image: docker.io/local/nope:1|" "$tmp/noimage.yaml"
# Ignores SIGTERM: only the grace period ends it.
pod term Always "trap '' TERM; while :; do sleep 1; done" 30
pod host Always "trap '' TERM; while :; do sleep 1; done"
sed -i 's/^  restartPolicy: Always/&\n  hostNetwork: true/' "$tmp/host.yaml"

# Healthy for 2 s, then not: failureThreshold 2 at 1 s.
manifest live <<EOF
apiVersion: v1
kind: Pod
metadata: {name: live, namespace: e2e}
spec:
  terminationGracePeriodSeconds: 0
  containers:
    - name: c
      image: $BUSYBOX
      command: ["sh", "-c", "touch /tmp/healthy; sleep 2; rm /tmp/healthy; exec sleep 1000"]
      livenessProbe:
        exec: {command: [test, -f, /tmp/healthy]}
        periodSeconds: 1
        failureThreshold: 2
EOF
# Ready while /tmp/ready exists: 2 successes make it ready, 3 failures not.
manifest ready <<EOF
apiVersion: v1
kind: Pod
metadata: {name: ready, namespace: e2e}
spec:
  terminationGracePeriodSeconds: 0
  containers:
    - name: c
      image: $BUSYBOX
      command: ["sleep", "1000"]
      readinessProbe:
        exec: {command: [test, -f, /tmp/ready]}
        periodSeconds: 1
        successThreshold: 2
        failureThreshold: 3
EOF
# What a container is given, as it sees it. $(VAR) is the kubelet's
# expansion; $VAR and `cmd` are the shell's.
manifest env <<'EOF'
apiVersion: v1
kind: Pod
metadata: {name: env, namespace: e2e}
spec:
  restartPolicy: Never
  terminationGracePeriodSeconds: 0
  securityContext:
    runAsUser: 1234
    runAsGroup: 2345
    supplementalGroups: [3456, 4567]
  containers:
    - name: c
      image: docker.io/local/busybox:1
      workingDir: /usr
      env:
        - {name: GREETING, value: hello}
        - {name: PHRASE, value: "$(GREETING) world"}
        - {name: ESCAPED, value: "$$(GREETING)"}
        - {name: UNKNOWN, value: "$(NOPE)"}
        - {name: EARLY, value: "$(LATER)"}
        - {name: LATER, value: late}
        - name: POD_NAME
          valueFrom: {fieldRef: {fieldPath: metadata.name}}
        - name: POD_NAMESPACE
          valueFrom: {fieldRef: {fieldPath: metadata.namespace}}
        - name: POD_UID
          valueFrom: {fieldRef: {fieldPath: metadata.uid}}
      command:
        - sh
        - -c
        - |
          echo "cmd=$(PHRASE)"
          echo "args=$*"
          echo "env=$PHRASE|$ESCAPED|$UNKNOWN"
          echo "order=$EARLY|$LATER"
          echo "field=$POD_NAME|$POD_NAMESPACE|$POD_UID"
          echo "pwd=`pwd`"
          echo "ids=`id -u` `id -g` `id -G`"
          echo "rootfs=`touch /probe-file 2>&1`"
          grep ^CapBnd /proc/self/status
          echo "to stderr" >&2
        - sh
      args: ["arg=$(GREETING)", "esc=$$(GREETING)"]
      securityContext:
        readOnlyRootFilesystem: true
        capabilities: {drop: [ALL]}
    - name: caps
      image: docker.io/local/busybox:1
      command: ["sh", "-c", "grep ^CapEff /proc/self/status"]
      securityContext:
        runAsUser: 0
        capabilities: {drop: [ALL], add: [NET_BIND_SERVICE]}
EOF
# hostPath volumes by type. HP is under the node root.
manifest hp <<EOF
apiVersion: v1
kind: Pod
metadata: {name: hp, namespace: e2e}
spec:
  restartPolicy: Never
  terminationGracePeriodSeconds: 0
  containers:
    - name: c
      image: $BUSYBOX
      command:
        - sh
        - -c
        - |
          echo written >/made/out && echo "made=ok"
          echo "file=\`cat /file\`"
          echo "created=\`stat -c %s /created\`"
          echo "ro-dir=\`touch /ro/x 2>&1\`"
          echo "ro-file=\`sh -c 'echo x >/file' 2>&1\`"
          echo "char=\`stat -c %F:%t:%T /npu\`"
      volumeMounts:
        - {name: made, mountPath: /made}
        - {name: created, mountPath: /created}
        - {name: file, mountPath: /file, readOnly: true}
        - {name: ro, mountPath: /ro, readOnly: true}
        - {name: npu, mountPath: /npu}
  volumes:
    - name: made
      hostPath: {path: $hp/made, type: DirectoryOrCreate}
    - name: created
      hostPath: {path: $hp/created, type: FileOrCreate}
    - name: file
      hostPath: {path: $hp/file, type: File}
    - name: ro
      hostPath: {path: $hp/ro, type: Directory}
    - name: npu
      hostPath: {path: /dev/davinci0, type: CharDevice}
EOF
manifest hp-missing <<EOF
apiVersion: v1
kind: Pod
metadata: {name: hp-missing, namespace: e2e}
spec:
  restartPolicy: Never
  terminationGracePeriodSeconds: 0
  containers:
    - name: c
      image: $BUSYBOX
      command: ["ls", "/data"]
      volumeMounts:
        - {name: data, mountPath: /data}
  volumes:
    - name: data
      hostPath: {path: $hp/missing, type: Directory}
EOF
{ mkdir -p "$node$hp/ro" && echo "from the node" >"$node$hp/file"; } || give_up "5. hostPath files" "cannot write under $node"

# Everything side by side; the checks below await each pod's lines.
if $npu; then
	kubectl kustomize "$root/deploy" >"$tmp/daemonset.yaml" 2>"$tmp/kustomize.err" ||
		give_up "9. kubectl kustomize deploy/" "$(cat "$tmp/kustomize.err")"
	send "run $tmp/daemonset.yaml"
fi
for p in crash onfail-ok onfail-3 never-3 live ready env hp hp-missing noimage term host; do
	send "run $tmp/$p.yaml"
done

# ---- 1. restartPolicy Always, a command that fails ---------------------------------
# As the kubelet does it: the first exit restarts at once, later ones wait
# a back-off that doubles (kubelet-sim: from 1 s; the kubelet: from 10 s).
await "1. crash exits" "container-exited pod=e2e/crash container=c " exit_code=1 reason=Error
e0=$line_us
await "1. attempt 1" "container-started pod=e2e/crash container=c " attempt=1
s1=$line_us
await "1. CrashLoopBackOff" "container-waiting pod=e2e/crash container=c reason=CrashLoopBackOff"
b1=$line_us
expect_eq "1. the first CrashLoopBackOff" "$(value_of "$line" message)" "back-off 1s restarting failed container=c pod=crash"
await "1. attempt 2" "container-started pod=e2e/crash container=c " attempt=2
s2=$line_us
await "1. CrashLoopBackOff grows" "container-waiting pod=e2e/crash container=c reason=CrashLoopBackOff" \
	message="back-off 2s restarting failed container=c pod=crash"
b2=$line_us
await "1. attempt 3" "container-started pod=e2e/crash container=c " attempt=3
s3=$line_us
g0=$(ms "$e0" "$s1") g1=$(ms "$b1" "$s2") g2=$(ms "$b2" "$s3")
if ((s1 < b1 && g1 >= 950 && g2 >= 1950 && s2 < b2)); then
	pass "1. Always + exit 1: exit_code=1 reason=Error; attempt 1 at once ($(secs "$g0") s), CrashLoopBackOff 1s -> attempt 2 after $(secs "$g1") s, 2s -> attempt 3 after $(secs "$g2") s"
else
	fail "1. back-off" "attempt 1 $g0 ms after the exit (at once), attempt 2 $g1 ms after back-off 1s, attempt 3 $g2 ms after back-off 2s"
fi
phases=$(grep -F "pod-phase pod=e2e/crash " "$tmp/sim.log" | while IFS= read -r l; do value_of "$l" phase; done | tr '\n' ' ')
expect_eq "1. the crash-looping pod stays Running" "$phases" "Pending Running "

# ---- 2. OnFailure and Never --------------------------------------------------------
await "2. OnFailure, exit 0" "pod-phase pod=e2e/onfail-ok " phase=Succeeded
await "2. exit 0 is Completed" "container-exited pod=e2e/onfail-ok container=c " exit_code=0 reason=Completed
await "2. OnFailure, exit 3, restarted" "container-started pod=e2e/onfail-3 container=c " attempt=1
await "2. OnFailure, exit 3" "container-exited pod=e2e/onfail-3 container=c " exit_code=3 reason=Error
await "2. Never, exit 3" "pod-phase pod=e2e/never-3 " phase=Failed
await "2. Never's exit code" "container-exited pod=e2e/never-3 container=c " exit_code=3 reason=Error
expect_eq "2. OnFailure + exit 0 is not restarted" "$(count "container-started pod=e2e/onfail-ok ")" 1
expect_eq "2. Never + exit 3 is not restarted" "$(count "container-started pod=e2e/never-3 ")" 1
pass "2. OnFailure: exit 0 -> Succeeded (Completed), exit 3 -> attempt 1; Never: exit 3 -> Failed, exit_code=3"

# ---- 3. probes ---------------------------------------------------------------------
await "3. the liveness probe fails" "probe pod=e2e/live container=c " probe=liveness result=failure
f1=$line_us
await "3. Unhealthy" "pod-event pod=e2e/live reason=Killing" \
	message="Container c failed liveness probe, will be restarted"
u=$line_us
await "3. killed" "container-exited pod=e2e/live container=c " exit_code=137
await "3. restarted" "container-started pod=e2e/live container=c " attempt=1
if (($(ms "$f1" "$u") >= 950)); then
	pass "3. liveness: first failure, Unhealthy $(secs "$(ms "$f1" "$u")") s later (failureThreshold 2, period 1 s), exit 137, attempt 1"
else
	fail "3. liveness failureThreshold 2" "Unhealthy $(ms "$f1" "$u") ms after the first failure"
fi

await "3. readiness starts failing" "probe pod=e2e/ready container=c " probe=readiness result=failure
pods_now
expect_eq "3. not ready without the file" "$(pod_row e2e/ready)" "Running 0/1 0"
ex "3. the file appears" e2e/ready c "touch /tmp/ready"
next "3. readiness succeeds" "probe pod=e2e/ready container=c " probe=readiness result=success
r1=$line_us
await "3. ready" "container-ready pod=e2e/ready container=c " ready=1
r2=$line_us
ex "3. the file goes" e2e/ready c "rm /tmp/ready"
next "3. readiness fails" "probe pod=e2e/ready container=c " probe=readiness result=failure
r3=$line_us
await "3. not ready" "container-ready pod=e2e/ready container=c " ready=0
r4=$line_us
if (($(ms "$r1" "$r2") >= 950 && $(ms "$r3" "$r4") >= 1950)); then
	pass "3. readiness: ready=1 $(secs "$(ms "$r1" "$r2")") s after the first success (successThreshold 2), ready=0 $(secs "$(ms "$r3" "$r4")") s after the first failure (failureThreshold 3)"
else
	fail "3. readiness thresholds" "ready $(ms "$r1" "$r2") ms after success (2 x 1 s), not ready $(ms "$r3" "$r4") ms after failure (3 x 1 s)"
fi

# ---- 4. what the container is given ------------------------------------------------
await "4. env pod" "pod-created pod=e2e/env "
uid=$(value_of "$line" uid)
await "4. env pod ends" "pod-phase pod=e2e/env " phase=Succeeded
pod_log e2e/env c
cp "$tmp/podlog" "$tmp/env.log"
# text KEY: the value of the env pod's "KEY=..." stdout line.
text() {
	local l
	l=$(grep -F -m1 "stream=stdout text=\"$1=" "$tmp/env.log") || l=$(grep -F -m1 "stream=stdout text=$1=" "$tmp/env.log") || {
		echo "(no $1= line)"
		return
	}
	l=$(value_of "$l" text)
	echo "${l#"$1="}"
}
expect_eq "4. \$(VAR) in command, from an env value with \$(VAR)" "$(text cmd)" "hello world"
expect_eq "4. args: \$(VAR) expanded, \$\$ escapes" "$(text args)" 'arg=hello esc=$(GREETING)'
expect_eq "4. env: expanded, escaped, unknown kept" "$(text env)" 'hello world|$(GREETING)|$(NOPE)'
expect_eq "4. env: only variables defined before expand" "$(text order)" '$(LATER)|late'
expect_eq "4. fieldRef metadata.name/namespace/uid" "$(text field)" "env|e2e|$uid"
expect_eq "4. workingDir" "$(text pwd)" /usr
expect_eq "4. runAsUser, runAsGroup, supplementalGroups (id -u, -g, -G)" "$(text ids)" "1234 2345 2345 3456 4567"
expect_eq "4. readOnlyRootFilesystem" "$(text rootfs)" "touch: /probe-file: Read-only file system"
l=$(grep -F -m1 'text="CapBnd:' "$tmp/env.log")
expect_eq "4. capabilities drop ALL: no bounding set" "$(value_of "$l" text | sed 's/\\t//')" "CapBnd:0000000000000000"
pod_log e2e/env caps
l=$(grep -F -m1 'text="CapEff:' "$tmp/podlog")
expect_eq "4. root with drop ALL, add NET_BIND_SERVICE: CapEff" "$(value_of "$l" text | sed 's/\\t//')" "CapEff:0000000000000400"

# ---- 5. hostPath -------------------------------------------------------------------
await "5. a missing Directory" "pod-event pod=e2e/hp-missing reason=FailedMount"
expect_eq "5. FailedMount in the kubelet's words" "$(value_of "$line" message)" \
	"MountVolume.SetUp failed for volume \"data\" : hostPath type check failed: $hp/missing is not a directory"
mkdir "$node$hp/missing"
await "5. once it exists, the pod runs" "pod-phase pod=e2e/hp-missing " phase=Succeeded
await "5. hostPath pod" "pod-phase pod=e2e/hp " phase=Succeeded
pod_log e2e/hp c
cp "$tmp/podlog" "$tmp/hp.log"
hp_text() {
	local l
	l=$(grep -F -m1 "text=\"$1=" "$tmp/hp.log") || l=$(grep -F -m1 "text=$1=" "$tmp/hp.log") || {
		echo "(no $1= line)"
		return
	}
	l=$(value_of "$l" text)
	echo "${l#"$1="}"
}
expect_eq "5. DirectoryOrCreate: made under the node root, 0755, written through" \
	"$(stat -c %a "$node$hp/made") $(cat "$node$hp/made/out" 2>&1) $(hp_text made)" "755 written ok"
expect_eq "5. FileOrCreate: an empty file under the node root" \
	"$(stat -c '%a %s' "$node$hp/created" 2>&1) $(hp_text created)" "644 0 0"
expect_eq "5. File: the node's file" "$(hp_text file)" "from the node"
expect_eq "5. readOnly Directory: EROFS" "$(hp_text ro-dir)" "touch: /ro/x: Read-only file system"
expect_eq "5. CharDevice: the node's /dev/davinci0" "$(hp_text char)" "character special file:1:3"
expect_eq "5. readOnly File: EROFS" "$(hp_text ro-file)" "sh: can't create /file: Read-only file system"
if [ -e "$hp" ]; then
	fail "5. nothing on the real host" "$hp exists"
else
	pass "5. nothing on the real host: $hp does not exist, $node$hp does"
fi

# ---- 6. the image that is not there -------------------------------------------
await "6. missing image" "container-waiting pod=e2e/noimage container=c reason=ErrImageNeverPull"
pass "6. ErrImageNeverPull: $(value_of "$line" message)"
await "6. --image-alias" "pod-note pod=e2e/onfail-ok " \
	note="container c: image debian:12-slim runs as $BUSYBOX (--image-alias)"
pass "6. --image-alias: $(value_of "$line" note)"

# ---- 7. the pod's network ----------------------------------------------------------
host_ns=$(readlink /proc/self/ns/net)
await "7. term runs" "container-started pod=e2e/term container=c "
ex "7. the pod's netns" e2e/term c "readlink /proc/self/ns/net; ip -o -4 addr show eth0"
pod_ns=$(value_of "$line" stdout)
if [[ $pod_ns == net:* && $pod_ns != "$host_ns"* && $pod_ns == *" inet 10.88."* ]]; then
	pass "7. hostNetwork false: ${pod_ns%%\\n*} (host $host_ns), eth0 from the e2e CNI: $(grep -o 'inet 10\.88\.[0-9.]*/16' <<<"$pod_ns")"
else
	fail "7. hostNetwork false" "pod: $pod_ns, host: $host_ns"
fi
await "7. host runs" "container-started pod=e2e/host container=c "
ex "7. the host's netns" e2e/host c "readlink /proc/self/ns/net"
expect_eq "7. hostNetwork true: the host's netns" "$(value_of "$line" stdout)" "$host_ns\\n"

# ---- 8. logs, exec, delete ---------------------------------------------------------
l=$(grep -F -m1 'text="to stderr"' "$tmp/env.log")
expect_eq "8. logs: stderr" "$(value_of "$l" stream)" stderr
l=$(grep -F -m1 'text="cmd=hello world"' "$tmp/env.log")
expect_eq "8. logs: stdout" "$(value_of "$l" stream)" stdout
ex "8. exec" e2e/term c "echo out; echo err >&2; exit 7"
expect_eq "8. exec: exit code, stdout, stderr" \
	"$(value_of "$line" exit_code) $(value_of "$line" stdout) $(value_of "$line" stderr)" '7 out\n err\n'

t0=$EPOCHREALTIME
send "delete e2e/host 0"
need "8. delete, grace 0" "pod-deleted pod=e2e/host"
d0=$(ms "${t0//[.,]/}" "${EPOCHREALTIME//[.,]/}")
t0=$EPOCHREALTIME
send "delete e2e/term 2"
need "8. delete, grace 2" "pod-deleted pod=e2e/term"
d2=$(ms "${t0//[.,]/}" "${EPOCHREALTIME//[.,]/}")
if ((d2 >= 1900 && d0 < d2)); then
	pass "8. delete of a container ignoring SIGTERM: grace 0 took $(secs "$d0") s, grace 2 took $(secs "$d2") s"
else
	fail "8. delete" "grace 0 took $d0 ms, grace 2 took $d2 ms"
fi

# ---- 9. pods, NPU pods, quit -------------------------------------------------------
# The restart count is the kubelet's: the attempt of the latest container
# (during a back-off, the one that exited). The crash-looping pod spends most
# of its time in back-off, and then the log is the exited container's.
pods_now
for p in crash onfail-3 live; do
	read -r phase ready restarts <<<"$(pod_row e2e/$p)"
	n=$(($(count "container-started pod=e2e/$p ") - 1))
	if [ "$phase" = Running ] && [ "$restarts" = "$n" ] && ((n >= 1)); then
		pass "9. pods: $p Running, ready $ready, restarts $restarts (the latest container's attempt)"
	else
		fail "9. pods: $p" "$(pod_row e2e/$p), want Running with restarts $n"
	fi
done
if [ "$(pod_row e2e/crash | cut -d' ' -f2)" = 0/1 ]; then
	pod_log e2e/crash c
	if grep -q 'stream=stdout text="attempt"' "$tmp/podlog"; then
		pass "9. logs of a container in back-off: the exited container's"
	else
		fail "9. logs of a container in back-off" "$(cat "$tmp/podlog")"
	fi
else
	skip "9. logs of a container in back-off" "crash was running"
fi
await "9. live's second liveness kill" "container-started pod=e2e/live container=c " attempt=2
unhealthy=$(count "pod-event pod=e2e/live reason=Unhealthy")
if ((unhealthy >= 2)); then
	pass "9. an Unhealthy event for each liveness kill ($unhealthy)"
else
	fail "9. an Unhealthy event for each liveness kill" "$unhealthy for 2 kills"
fi
expect_eq "9. pods: onfail-ok" "$(pod_row e2e/onfail-ok)" "Succeeded 0/1 0"
expect_eq "9. pods: never-3" "$(pod_row e2e/never-3)" "Failed 0/1 0"
expect_eq "9. pods: env (2 containers)" "$(pod_row e2e/env)" "Succeeded 0/2 0"
expect_eq "9. pods: noimage" "$(pod_row e2e/noimage)" "Pending 0/1 0"
expect_eq "9. pods: ready (the file is gone)" "$(pod_row e2e/ready)" "Running 0/1 0"
expect_eq "9. pods: term and host are deleted" "$(pod_row e2e/term)/$(pod_row e2e/host)" "(not listed)/(not listed)"

if $npu; then
	await "9. the plugin's DaemonSet pod" "pod-created pod=kube-system/ascend-device-plugin-"
	await "9. the plugin registers" "register resource=$RESOURCE"
	await "9. 8 NPUs" "devices resource=$RESOURCE" capacity=8 allocatable=8
	# npu_pod NAME POLICY SCRIPT: a pod asking for every NPU.
	npu_pod() {
		pod "$1" "$2" "$3"
		printf '      resources:\n        limits:\n          %s: "8"\n' $RESOURCE >>"$tmp/$1.yaml"
	}
	npu_pod npu-job Never 'echo $ASCEND_VISIBLE_DEVICES'
	npu_pod npu-all Always 'exec sleep 1000'
	npu_pod npu-more Always 'exec sleep 1000'
	send "run $tmp/npu-job.yaml"
	await "9. an 8-NPU Job pod" "pod-phase pod=e2e/npu-job " phase=Succeeded
	send "run $tmp/npu-all.yaml"
	await "9. its NPUs were released when it ended" "pod-allocated pod=e2e/npu-all "
	await "9. the next 8-NPU pod runs" "container-started pod=e2e/npu-all "
	send "run $tmp/npu-more.yaml"
	await "9. while it runs, no NPU is left" "pod-phase pod=e2e/npu-more " phase=Failed
	expect_eq "9. UnexpectedAdmissionError" "$(value_of "$line" reason) $(value_of "$line" message)" \
		"UnexpectedAdmissionError Pod was rejected: Allocate failed due to requested number of devices unavailable for $RESOURCE. Requested: 8, Available: 0, which is unexpected"
	pass "9. DaemonSet: 8 NPUs; an 8-NPU pod that Succeeded gave them back; a running one holds them"
else
	skip "9. NPU pods" "no $plugin_tar or no kubectl"
fi

# Quit: every pod still listed is deleted through CRI, nothing remains in containerd.
pods_now
listed=$(wc -l <"$tmp/pods")
before=$(count "pod-deleted")
sim_quit
deleted=$(($(count "pod-deleted") - before))
expect_eq "9. kubelet-sim exits 0" "${sim_status:-none}" 0
expect_eq "9. quit deletes every pod ($listed)" "$deleted" "$listed"
left=$(timeout 10 ctr --address "$rt/containerd.sock" -n k8s.io containers ls -q 2>&1)
expect_eq "9. no container or sandbox left in containerd" "$left" ""
stop_all
if [ -s "$tmp/clean" ]; then
	fail "9. nothing left behind" "$(sed 's/^/    /' "$tmp/clean")"
else
	pass "9. teardown: no process, mount or file left"
fi
finish
