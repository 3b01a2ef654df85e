# SPDX-License-Identifier: Apache-2.0
# Step sharing of the cluster e2e; tests/cluster/e2e.sh sources this file.
# deploy/overlays/config and a ConfigMap with time-slicing: capacity
# follows the replicas without a restart of the plugin; the mixed node's
# per-family names and vNPUs serve pods. Leaves the base deploy/ applied.
# shellcheck shell=bash disable=SC2154 # bin, build, root, tmp: set by e2e.sh

needs sharing install

config_yaml() { # REPLICAS
	cat <<EOF
apiVersion: v1
kind: ConfigMap
metadata:
  name: ascend-device-plugin-config
  namespace: kube-system
data:
  config.yaml: |
    version: v1
    flags:
      healthInterval: 5s
      logLevel: info
    resources:
    - family: 310P
      name: ascend.com/npu-310p
    sharing:
      timeSlicing:
        resources:
        - name: ascend.com/npu
          replicas: $1
EOF
}

step_sharing() {
	local t0 ms uid pod got
	check "7. kubectl apply -k deploy/overlays/config" k apply -k "$root/deploy/overlays/config"
	k -n kube-system rollout status daemonset/ascend-device-plugin --timeout="$WAIT" >/dev/null
	t0=$(now_ms)
	config_yaml 4 >"$tmp/config.yaml"
	check "7. kubectl apply of the ConfigMap: time-slicing ascend.com/npu x4, ascend.com/npu-310p for the 310P chips" \
		k apply -f "$tmp/config.yaml"
	if wait_capacity "$N1" 32 && wait_capacity "$N2" 32; then
		ms=$(($(now_ms) - t0))
		pass "7. $N1 and $N2: ascend.com/npu capacity 32 (8 chips x 4 replicas)"
		figure sharing "ConfigMap edit -> capacity 32 in $ms ms (the kubelet's ConfigMap volume update)"
	else
		fail "7. capacity 32" "$(capacity "$N1") $(capacity "$N2")"
	fi
	if wait_capacity "$N3" 12 && wait_capacity "$N3" 2 ascend.com/npu-310p && wait_capacity "$N3" 2 ascend.com/npu-vir04-3c; then
		pass "7. $N3: ascend.com/npu 12 (chips 1-3 x 4), ascend.com/npu-310p 2, ascend.com/npu-vir04-3c 2"
	else
		fail "7. $N3's per-family names" "npu $(capacity "$N3"), 310p $(capacity "$N3" ascend.com/npu-310p), vir04-3c $(capacity "$N3" ascend.com/npu-vir04-3c)"
	fi
	# Edited again: no restart of the plugin pod.
	pod=$(plugin_pod "$N1")
	uid=$(k -n kube-system get pod "$pod" -o jsonpath='{.metadata.uid}')
	t0=$(now_ms)
	config_yaml 2 | k apply -f - >/dev/null
	if wait_capacity "$N1" 16 && [ "$(k -n kube-system get pod "$pod" -o jsonpath='{.metadata.uid} {.status.containerStatuses[0].restartCount}')" = "$uid 0" ]; then
		pass "7. the ConfigMap edited to 2 replicas: capacity 16, the plugin pod $pod neither replaced nor restarted"
		figure sharing "second ConfigMap edit -> capacity 16 in $(($(now_ms) - t0)) ms"
	else
		fail "7. a second edit applies without a restart" "capacity $(capacity "$N1")"
	fi
	# A chip whose device-share mode is off is served whole: one device,
	# not two, until the mode is on again.
	t0=$(now_ms)
	if node_set_share "$(cluster_node_dir 1)" 7 off && wait_capacity "$N1" 15; then
		got=$(k -n kube-system logs "$pod" | grep -m1 'device-share' | cut -c1-220)
		pass "7. chip 7 of $N1 with device-share off: capacity 15 (7 x 2 + 1) in $(($(now_ms) - t0)) ms; the plugin: $got"
	else
		fail "7. a chip with device-share off served whole" "capacity $(capacity "$N1")"
	fi
	if node_set_share "$(cluster_node_dir 1)" 7 on && wait_capacity "$N1" 16; then
		pass "7. device-share on again: capacity 16"
	else
		fail "7. device-share on again" "capacity $(capacity "$N1")"
	fi
	# Two pods share one chip's replicas; a vNPU and a 310P chip on node 3.
	if run_npu_pod share-vnpu "$N3" 1 ascend.com/npu-vir04-3c; then
		got=$(k exec share-vnpu -- sh -c 'echo $ASCEND_VISIBLE_DEVICES; ls /dev | grep davinci')
		grep -qE '^10[01]$' <<<"$(head -n 1 <<<"$got")" && grep -qE '^davinci10[01]$' <<<"$got" &&
			pass "7. a pod asking for ascend.com/npu-vir04-3c gets vNPU $(head -n 1 <<<"$got") as /dev/davinci$(head -n 1 <<<"$got")" ||
			fail "7. the vNPU pod" "$got"
	else
		fail "7. a pod asking for a vNPU" "$(k describe pod share-vnpu | tail -n 5)"
	fi
	if run_npu_pod share-310p "$N3" 1 ascend.com/npu-310p; then
		got=$(pod_devices share-310p)
		[[ $got == 4 || $got == 5 ]] && pass "7. a pod asking for ascend.com/npu-310p gets 310P chip $got" ||
			fail "7. the 310P pod" "$got"
	else
		fail "7. a pod asking for ascend.com/npu-310p" "$(k describe pod share-310p | tail -n 5)"
	fi
	delete_pods share-vnpu share-310p
	# Back to the base for what follows.
	k apply -k "$root/deploy" >/dev/null && k -n kube-system delete configmap ascend-device-plugin-config >/dev/null
	k -n kube-system rollout status daemonset/ascend-device-plugin --timeout="$WAIT" >/dev/null
	wait_capacity "$N1" 8 || fail "7. back to 8" "$(capacity "$N1")"
}
