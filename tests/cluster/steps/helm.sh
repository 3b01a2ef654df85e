# SPDX-License-Identifier: Apache-2.0
# Step helm of the cluster e2e; tests/cluster/e2e.sh sources this file.
# The chart (deploy/helm/ascend-k8s) the way a platform team runs it:
# `helm install` in place of the kubectl install, with the device plugin
# (CDI, a config file, the metrics Service and NetworkPolicy) and the DRA
# driver's objects; `helm upgrade` to a second image tag with NPU pods
# created throughout (none fails admission, no chip held twice, as step
# rollout checks a roll); `helm rollback` to the first; `helm uninstall`
# with nothing of ours left in the API or on the nodes. Then the guide's
# kubectl install again, as step install leaves the cluster.
# shellcheck shell=bash disable=SC2154 # bin, build, root, tmp: set by e2e.sh

needs helm install

# Helm against the test cluster, with its caches in the run's scratch
# directory.
H() {
	HELM_CACHE_HOME=$tmp/helm/cache HELM_CONFIG_HOME=$tmp/helm/config HELM_DATA_HOME=$tmp/helm/data \
		"$bin/helm" --kubeconfig "$(cluster_kubeconfig)" --namespace kube-system "$@"
}

# The second image: the plugin's archive under another tag, imported into
# every node as step install's was.
HELM_TAG2=0.1.0-helm2

# The kinds the chart makes with these values; each must be gone after the
# uninstall (the DeviceClasses and the cluster-wide RBAC included).
HELM_KINDS=daemonsets,configmaps,serviceaccounts,services,networkpolicies,clusterroles,clusterrolebindings,validatingadmissionpolicies,validatingadmissionpolicybindings,deviceclasses

# helm_pods_image: "node image" of each device-plugin pod that is Ready.
helm_pods_image() {
	k -n kube-system get pods -l name=ascend-device-plugin -o json |
		jq -r '.items[] | select(.metadata.deletionTimestamp == null)
			| select(any(.status.conditions[]?; .type == "Ready" and .status == "True"))
			| "\(.spec.nodeName) \(.spec.containers[0].image)"' | sort
}

# helm_roll WHAT: creates NPU pods on nodes 1 and 2 while the DaemonSet rolls
# (after `helm upgrade` or `helm rollback`), then checks what step rollout
# checks: the roll completes, no pod fails admission, no chip is held twice.
helm_roll() {
	local what=$1 rpid st i=0 made=0 n pods failed
	k -n kube-system rollout status daemonset/ascend-device-plugin --timeout=300s >"$tmp/helm-rollout" 2>&1 &
	rpid=$!
	while kill -0 "$rpid" 2>/dev/null && ((i < 10)); do
		n=$(((i % 2) + 1))
		npu_pod "helm-$what-$i" "$(cluster_node_name "$n")" 1 "" Never | k apply -f - >/dev/null && made=$((made + 1))
		i=$((i + 1))
		# Paced by the API server's answer, not by a sleep.
		k get pods -l e2e=npu -o name >/dev/null
	done
	st=0
	wait "$rpid" || st=$?
	((st == 0)) && pass "14. $what: kubectl rollout status daemonset/ascend-device-plugin" ||
		fail "14. $what: rollout status" "$(cat "$tmp/helm-rollout")"
	for ((i = 0; i < made; i++)); do
		k wait --for=jsonpath='{.status.phase}'=Running "pod/helm-$what-$i" --timeout=30s >/dev/null 2>&1 || true
	done
	pods=$(k get pods -l e2e=npu -o json | jq -r --arg p "helm-$what-" '.items[] | select(.metadata.name | startswith($p))
		| "\(.metadata.name) \(.status.phase) \(.status.reason // "-")"')
	failed=$(awk '$2 == "Failed"' <<<"$pods" | wc -l)
	((failed == 0)) && pass "14. $what: $made NPU pods created during the roll, none failed admission" ||
		fail "14. $what: pods failed admission" "$(awk '$2 == "Failed"' <<<"$pods")"
	for n in "$N1" "$N2"; do
		no_double "$n" && pass "14. $what: no chip of $n held by two running pods" ||
			{ fail "14. $what: no chip of $n held twice" "above"; held "$n"; }
	done
	k delete pods -l e2e=npu --wait=true --timeout="$WAIT" >/dev/null 2>&1
}

step_helm() {
	local values n imgs left sock cdi tar2 t0
	values=(--set image.pullPolicy=Never --set dra.enabled=true --set devicePlugin.deviceListStrategy=cdi
		--set metrics.service.enabled=true --set metrics.networkPolicy.enabled=true
		--set-json 'config={"version":"v1","flags":{"logLevel":"info"}}'
		--set-json 'extraEnv=[{"name":"KUBERNETES_SERVICE_HOST","value":"10.224.0.1"},{"name":"KUBERNETES_SERVICE_PORT","value":"6443"}]')
	check "14. helm version: $("$bin/helm" version --template '{{.Version}}' 2>&1)" "$bin/helm" version

	# The second tag on every node.
	tar2=$tmp/ascend-device-plugin-$HELM_TAG2.tar
	if skopeo copy --quiet "docker-archive:$build/image/ascend-device-plugin.tar" \
		"docker-archive:$tar2:docker.io/library/ascend-device-plugin:$HELM_TAG2" >"$tmp/helm-skopeo" 2>&1; then
		for n in 1 2 3; do
			check "14. the plugin image as ascend-device-plugin:$HELM_TAG2 imported on $(cluster_node_name "$n")" \
				images_import "$(cluster_node_dir "$n")/containerd/containerd.sock" "$tar2"
		done
	else
		fail "14. the plugin image under the tag $HELM_TAG2" "$(cat "$tmp/helm-skopeo")"
	fi

	# The kubectl install goes first: Helm installs no object another tool
	# made. Steps dra and multinode leave deploy/dra's objects applied.
	k delete -k "$root/tests/cluster/dra" --ignore-not-found --wait=true --timeout="$WAIT" >/dev/null 2>&1
	check "14. kubectl delete -k deploy/ (the guide's install makes way for the chart)" \
		k delete -k "$root/deploy" --wait=true --timeout="$WAIT"
	k -n kube-system wait --for=delete pod -l name=ascend-device-plugin --timeout="$WAIT" >/dev/null 2>&1

	t0=$(now_ms)
	check "14. helm install ascend-k8s deploy/helm/ascend-k8s --wait (device plugin with CDI and a config file, DRA driver objects, metrics Service, NetworkPolicies)" \
		H install ascend-k8s "$root/deploy/helm/ascend-k8s" "${values[@]}" --wait --timeout 5m
	for n in "$N1" "$N2"; do
		wait_capacity "$n" 8 && wait_alloc "$n" 8 || true
	done
	wait_capacity "$N3" 5 || true
	[ "$(capacity "$N1")" = 8 ] && [ "$(capacity "$N2")" = 8 ] && [ "$(capacity "$N3")" = 5 ] &&
		pass "14. helm install: $NPU capacity 8, 8 and 5 again in $(($(now_ms) - t0)) ms" ||
		fail "14. helm install: every node's capacity" "$(capacity "$N1") $(capacity "$N2") $(capacity "$N3")"
	imgs=$(helm_pods_image)
	[ "$(grep -c " ascend-device-plugin:0.1.0$" <<<"$imgs")" = 3 ] &&
		pass "14. one Ready plugin pod per node, image ascend-device-plugin:0.1.0" || fail "14. the installed pods" "$imgs"
	cdi=$(find "$(cluster_node_dir 1)/var/run/cdi" -maxdepth 1 -name 'ascend.com-npu*' -printf '%f ' 2>/dev/null)
	[ -n "$cdi" ] && pass "14. the device plugin's CDI spec on $N1: $cdi" ||
		fail "14. the CDI spec on $N1" "$(ls "$(cluster_node_dir 1)/var/run/cdi/" 2>&1)"

	# helm upgrade to the second tag: a surge roll, pods created throughout.
	if H upgrade ascend-k8s "$root/deploy/helm/ascend-k8s" "${values[@]}" --set image.tag="$HELM_TAG2" >"$tmp/helm-out" 2>&1; then
		pass "14. helm upgrade ascend-k8s --set image.tag=$HELM_TAG2"
		helm_roll upgrade
	else
		fail "14. helm upgrade to $HELM_TAG2" "$(cat "$tmp/helm-out")"
	fi
	imgs=$(helm_pods_image)
	[ "$(grep -c " ascend-device-plugin:$HELM_TAG2$" <<<"$imgs")" = 3 ] &&
		pass "14. after the upgrade every node's plugin pod runs ascend-device-plugin:$HELM_TAG2" || fail "14. the upgraded pods" "$imgs"

	# helm rollback to the first release: the first tag again, the same checks.
	if H rollback ascend-k8s 1 >"$tmp/helm-out" 2>&1; then
		pass "14. helm rollback ascend-k8s 1"
		helm_roll rollback
	else
		fail "14. helm rollback ascend-k8s 1" "$(cat "$tmp/helm-out")"
	fi
	imgs=$(helm_pods_image)
	[ "$(grep -c " ascend-device-plugin:0.1.0$" <<<"$imgs")" = 3 ] &&
		pass "14. after the rollback every node's plugin pod runs ascend-device-plugin:0.1.0 again" || fail "14. the rolled-back pods" "$imgs"
	[ "$(H history ascend-k8s -o json | jq -r 'map(.status) | join(" ")')" = "superseded superseded deployed" ] &&
		pass "14. helm history ascend-k8s: revisions 1 and 2 superseded, 3 (the rollback) deployed" ||
		fail "14. helm history" "$(H history ascend-k8s 2>&1)"

	# helm uninstall: nothing of ours left in the API, nor on the nodes.
	check "14. helm uninstall ascend-k8s --wait" H uninstall ascend-k8s --wait --timeout 5m
	k -n kube-system wait --for=delete pod -l app.kubernetes.io/part-of=ascend-k8s --timeout="$WAIT" >/dev/null 2>&1
	# kubectl says "No resources found" on stderr; a failed get is a failure.
	left=$(k get "$HELM_KINDS" -A -l app.kubernetes.io/part-of=ascend-k8s -o name 2>"$tmp/helm-err") &&
		left+=$(k get pods -A -l app.kubernetes.io/part-of=ascend-k8s -o name 2>"$tmp/helm-err") &&
		left+=$(k -n kube-system get secrets -l owner=helm,name=ascend-k8s -o name 2>"$tmp/helm-err") ||
		left="kubectl get failed: $(cat "$tmp/helm-err")"
	[ -z "$left" ] && pass "14. after helm uninstall no object of ours in the API (pods, $HELM_KINDS, Helm's release secrets)" ||
		fail "14. nothing left in the API" "$left"
	for n in 1 2 3; do
		# The kubelet zeroes the allocatable of a plugin that went at once
		# (the capacity only after its grace period).
		wait_alloc "$(cluster_node_name "$n")" 0 "$NPU" 60s || true
		sock=$(find "$(cluster_node_dir "$n")/var/lib/kubelet/device-plugins" "$(cluster_node_dir "$n")/var/lib/kubelet/plugins_registry" \
			-maxdepth 1 \( -name 'ascend*' -o -name 'npu.ascend.com*' \) -printf '%f ' 2>/dev/null)
		cdi=$(find "$(cluster_node_dir "$n")/var/run/cdi" -maxdepth 1 \( -name 'ascend.com-npu*' -o -name 'npu.ascend.com*' \) -printf '%f ' 2>/dev/null)
		[ -z "$sock$cdi" ] && pass "14. $(cluster_node_name "$n"): no socket and no CDI spec of ours left, $NPU allocatable $(alloc "$(cluster_node_name "$n")")" ||
			fail "14. $(cluster_node_name "$n"): nothing of ours left on the node" "sockets: $sock; CDI specs: $cdi"
	done

	# The cluster as step install leaves it, for any step after this one.
	check "14. kubectl apply -k deploy/ (the guide's install again)" k apply -k "$root/deploy"
	k -n kube-system rollout status daemonset/ascend-device-plugin --timeout="$WAIT" >/dev/null 2>&1
	for n in "$N1" "$N2"; do
		wait_capacity "$n" 8 || fail "14. capacity back on $n" "$(capacity "$n")"
	done
}
