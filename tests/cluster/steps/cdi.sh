# SPDX-License-Identifier: Apache-2.0
# Step cdi of the cluster e2e; tests/cluster/e2e.sh sources this file.
# deploy/overlays/cdi: a container gets its chips through containerd's CDI
# support, sees exactly what the native strategy gives, and the plugin's
# Allocate answer names CDI devices only. Leaves the base deploy/ applied.
# shellcheck shell=bash disable=SC2154 # bin, build, root, tmp: set by e2e.sh

needs cdi install

step_cdi() {
	local native cdi spec
	run_npu_pod cdi-native "$N1" 2 || { fail "8. a pod before CDI" "not Ready"; return; }
	native=$(inspect cdi-native | grep -v '^env=' | sed 's#/dev/davinci[0-9]* #/dev/davinciN #' | sort)
	delete_pods cdi-native
	check "8. kubectl apply -k deploy/overlays/cdi" k apply -k "$root/deploy/overlays/cdi"
	k -n kube-system rollout status daemonset/ascend-device-plugin --timeout="$WAIT" >/dev/null
	wait_alloc "$N1" 8
	if run_npu_pod cdi-pod "$N1" 2; then
		spec=$(ls "$(cluster_node_dir 1)/var/run/cdi/")
		cdi=$(inspect cdi-pod | grep -v '^env=' | sed 's#/dev/davinci[0-9]* #/dev/davinciN #' | sort)
		check_devices "8. with --device-list-strategy=cdi (containerd $("$bin/containerd" --version | awk '{print $3}') applied $spec)" cdi-pod 2
		[ "$native" = "$cdi" ] && pass "8. the CDI pod sees exactly what the native strategy gives" ||
			fail "8. CDI = native" "native: $native; cdi: $cdi"
		# The plugin answered with CDI names only, no device specs of its
		# own: its Allocate answer, as the kubelet checkpointed it.
		local uid resp
		uid=$(k get pod cdi-pod -o jsonpath='{.metadata.uid}')
		resp=$(jq -r --arg uid "$uid" '.Data.PodDeviceEntries[] | select(.PodUID == $uid) | .AllocResp' \
			"$(cluster_node_dir 1)/var/lib/kubelet/device-plugins/kubelet_internal_checkpoint" | base64 -d | tr -c '[:print:]' ' ')
		if grep -q 'ascend.com/npu=[0-9]' <<<"$resp" && ! grep -q '/dev/davinci' <<<"$resp"; then
			pass "8. the plugin's Allocate answer (the kubelet's checkpoint) names CDI devices ($(grep -o 'ascend.com/npu=[0-9]*' <<<"$resp" | sort -u | tr '\n' ' ')) and no device node"
		else
			fail "8. a CDI-only Allocate answer" "$resp"
		fi
	else
		fail "8. a pod through CDI" "$(k describe pod cdi-pod | tail -n 8)"
	fi
	delete_pods cdi-pod
	k apply -k "$root/deploy" >/dev/null
	k -n kube-system rollout status daemonset/ascend-device-plugin --timeout="$WAIT" >/dev/null
}
