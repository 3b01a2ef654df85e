# SPDX-License-Identifier: Apache-2.0
# Step lifecycle of the cluster e2e; tests/cluster/e2e.sh sources this file.
# Kubernetes' own device plugin e2e cases on node 2: kubelet restart,
# plugin pod deleted, both, a pod deleted while the kubelet is down, init and
# sidecar containers, a container restart; pods keep their chips throughout.
# shellcheck shell=bash disable=SC2154 # bin, build, root, tmp: set by e2e.sh

needs lifecycle install

step_lifecycle() {
	local before after t0 ms uid pod
	run_npu_pod life-a "$N2" 2 && run_npu_pod life-b "$N2" 3 || { fail "5. pods on $N2" "not Ready"; return; }
	before=$(held "$N2")

	# a. kubelet restart
	uid=$(k get pod life-a -o jsonpath='{.metadata.uid}')
	t0=$(now_ms)
	restart_kubelet 2
	if k wait --for=condition=Ready node/"$N2" --timeout="$WAIT" >/dev/null && ms=$(registered_ms "$N2" "$t0"); then
		figure lifecycle "kubelet restart -> plugin re-registered, allocatable 8 in $ms ms"
		after=$(wait_held "$N2" "$before")
		[ "$before" = "$after" ] && [ "$(k get pod life-a -o jsonpath='{.metadata.uid}')" = "$uid" ] &&
			pass "5a. kubelet restart: re-registered; life-a, life-b keep running with the same chips ($(tr "\n" " " <<<"$after"))" ||
			fail "5a. same pods, same chips after a kubelet restart" "before: $before; after: $after"
	else
		fail "5a. re-registered after a kubelet restart" "allocatable $(alloc "$N2")"
	fi

	# b. plugin pod deleted: capacity stays, allocatable is 8 again once the
	# DaemonSet has recreated it. With the surge strategy the controller may
	# start the new pod while the old one terminates, and it registers on
	# its own socket first: then allocatable never drops.
	pod=$(plugin_pod "$N2")
	k get node "$N2" -w -o jsonpath="{.status.allocatable.$(esc $NPU)}{\" \"}{.status.capacity.$(esc $NPU)}{\"\n\"}" \
		>"$tmp/watch" 2>/dev/null &
	local wpid=$!
	t0=$(now_ms)
	k -n kube-system delete pod "$pod" --wait=true --timeout="$WAIT" >/dev/null
	k -n kube-system rollout status daemonset/ascend-device-plugin --timeout="$WAIT" >/dev/null
	ms=$(registered_ms "$N2" "$t0")
	kill "$wpid" 2>/dev/null
	wait "$wpid" 2>/dev/null
	local dipped="never dropped: the new pod registered before the old one left"
	grep -qx '0 8' "$tmp/watch" && dipped="0 with capacity 8 until the new pod registered"
	if ! grep -qvE '^[0-9]+ 8$' "$tmp/watch" && [ "$(alloc "$N2")" = 8 ] && [ "$(capacity "$N2")" = 8 ]; then
		pass "5b. plugin pod deleted: capacity 8 throughout, allocatable $dipped, 8 again in $ms ms"
		figure lifecycle "plugin pod deleted -> allocatable 8 in $ms ms (allocatable $dipped)"
	else
		fail "5b. capacity kept, allocatable back" "seen: $(tr '\n' '|' <"$tmp/watch"), now $(alloc "$N2")/$(capacity "$N2")"
	fi
	[ "$(held "$N2")" = "$before" ] && no_double "$N2" && pass "5b. running pods keep their chips, none held twice" ||
		fail "5b. chips kept" "$(held "$N2")"
	run_npu_pod life-c "$N2" 3 && no_double "$N2" &&
		pass "5b. a new pod gets 3 other chips: $(held "$N2" | tr '\n' ' ')" || fail "5b. a new pod after the plugin restart" "$(held "$N2")"
	delete_pods life-c

	# c. kubelet and plugin both restarted
	pod=$(plugin_pod "$N2")
	t0=$(now_ms)
	restart_kubelet 2 "k -n kube-system delete pod $pod --wait=false >/dev/null"
	k wait --for=condition=Ready node/"$N2" --timeout="$WAIT" >/dev/null
	k -n kube-system rollout status daemonset/ascend-device-plugin --timeout="$WAIT" >/dev/null
	if ms=$(registered_ms "$N2" "$t0") && [ "$(wait_held "$N2" "$before")" = "$before" ]; then
		pass "5c. kubelet and plugin restarted: allocatable 8 in $ms ms, the pods keep their chips"
	else
		fail "5c. kubelet and plugin restarted" "allocatable $(alloc "$N2"), held $(held "$N2")"
	fi

	# d. a pod deleted while the kubelet is down: its chips are free again after
	restart_kubelet 2 "k delete pod life-b --wait=false >/dev/null"
	# A pod the restarted kubelet admits before the plugin registered again
	# fails admission (UnexpectedAdmissionError, the kubelet's behaviour, not
	# the plugin's): the new pod comes once the kubelet serves again.
	if k wait --for=delete pod/life-b --timeout="$WAIT" >/dev/null && podres_ready "$N2" && wait_alloc "$N2" 8 &&
		run_npu_pod life-d "$N2" 6; then
		no_double "$N2" && pass "5d. a pod deleted while the kubelet was down is cleaned up: 6 chips free again ($(held "$N2" | tr '\n' ' '))" ||
			fail "5d. no stale assignment" "$(held "$N2")"
	else
		fail "5d. a pod deleted while the kubelet was down" "$(k get pods -o wide)"
	fi
	delete_pods life-a life-d

	# e. init, sidecar and regular containers
	k apply -f - >/dev/null <<EOF
apiVersion: v1
kind: Pod
metadata: {name: life-init, labels: {e2e: npu}}
spec:
  nodeSelector: {kubernetes.io/hostname: $N2}
  tolerations: [{key: ascend.com/npu, operator: Exists, effect: NoSchedule}]
  terminationGracePeriodSeconds: 1
  initContainers:
  - name: init
    image: $E2E_BUSYBOX_IMAGE
    command: ["/bin/sh", "-c", "echo \"init=\$ASCEND_VISIBLE_DEVICES\""]
    resources: {limits: {$NPU: "1"}}
  - name: sidecar
    image: $E2E_BUSYBOX_IMAGE
    restartPolicy: Always
    command: ["/bin/sh", "-c", "exec sleep infinity"]
    resources: {limits: {$NPU: "1"}}
  containers:
  - name: main
    image: $E2E_BUSYBOX_IMAGE
    command: ["/bin/sh", "-c", "exec sleep infinity"]
    resources: {limits: {$NPU: "1"}}
EOF
	if k wait --for=condition=Ready pod/life-init --timeout="$WAIT" >/dev/null; then
		local i s m
		i=$(k logs life-init -c init | sed -n 's/^init=//p')
		s=$(pod_devices life-init sidecar)
		m=$(pod_devices life-init main)
		if [ -n "$i" ] && [ -n "$s" ] && [ -n "$m" ] && [ "$s" != "$m" ]; then
			pass "5e. init container got $i, sidecar $s, regular container $m (sidecar and regular differ)"
		else
			fail "5e. init/sidecar/regular devices" "init=$i sidecar=$s main=$m"
		fi
	else
		fail "5e. a pod with init and sidecar containers" "$(k describe pod life-init | tail -n 10)"
	fi
	delete_pods life-init

	# f. a container restart keeps its devices: the first run notes its chips
	# in an emptyDir and exits 1; the restarted one compares.
	k apply -f - >/dev/null <<EOF
apiVersion: v1
kind: Pod
metadata: {name: life-restart, labels: {e2e: npu}}
spec:
  nodeSelector: {kubernetes.io/hostname: $N2}
  tolerations: [{key: ascend.com/npu, operator: Exists, effect: NoSchedule}]
  terminationGracePeriodSeconds: 1
  volumes: [{name: state, emptyDir: {}}]
  containers:
  - name: main
    image: $E2E_BUSYBOX_IMAGE
    volumeMounts: [{name: state, mountPath: /state}]
    command:
    - /bin/sh
    - -c
    - |
      if [ -f /state/first ]; then exec sleep infinity; fi
      echo "\$ASCEND_VISIBLE_DEVICES \$(ls /dev | grep '^davinci[0-9]' | tr '\\n' ' ')" >/state/first
      exit 1
    resources: {limits: {$NPU: "2"}}
EOF
	if k wait --for=jsonpath='{.status.containerStatuses[0].restartCount}'=1 pod/life-restart --timeout="$WAIT" >/dev/null &&
		k wait --for=condition=Ready pod/life-restart --timeout="$WAIT" >/dev/null; then
		local first again
		first=$(k exec life-restart -- cat /state/first)
		again=$(k exec life-restart -- sh -c 'echo "$ASCEND_VISIBLE_DEVICES $(ls /dev | grep "^davinci[0-9]" | tr "\n" " ")"')
		if [ -n "${first%% *}" ] && [ "$first" = "$again" ]; then
			pass "5f. a restarted container keeps its chips: $first"
		else
			fail "5f. a restarted container keeps its chips" "first run: $first; after the restart: $again"
		fi
	else
		fail "5f. a container that restarts" "$(k get pod life-restart -o wide)"
	fi
	delete_pods life-restart
}
