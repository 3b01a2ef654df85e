#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The Helm chart (deploy/helm/ascend-k8s) and deploy/ are one truth:
#
# - `helm lint --strict` passes on the chart, with its defaults and with
#   every choice below;
# - for each choice, `helm template` renders the objects `kubectl kustomize`
#   renders from the matching part of deploy/ (the base, each overlay, the
#   DRA driver, both DaemonSets), compared by tests/manifests/same-objects.cjs
#   --helm: only Helm's own labels (which release manages an object) and the
#   configuration file's comments are set aside, so check.cjs's rules for
#   deploy/ (test_manifests.sh) hold for the chart too;
# - the comparison itself is checked: a chart value deploy/ does not have
#   must make it fail;
# - values.schema.json and the chart's own checks refuse wrong values at
#   `helm template` (so at `helm install`), each naming the value;
# - against a real kube-apiserver (the cluster's etcd and API server, no
#   nodes, as tests/integration/test_kube_apiserver runs them): `helm
#   install` of every front end, the config file, the fault policy, the
#   metrics Service and NetworkPolicies is accepted, `helm upgrade` too, and
#   `helm uninstall` leaves no object of the chart.
#
# Helm and kubectl are the cached builds of scripts/cluster-bins.sh (make
# cluster-bins); Node.js and the npm packages come from scripts/deps.sh
# manifests. Without them the test is skipped, saying which is missing.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
chart=$root/deploy/helm/ascend-k8s
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# shellcheck source=tests/scripts/lib.sh
. "$(dirname "$0")/lib.sh"

bins=$("$root/scripts/cluster-bins.sh" --dir 2>/dev/null) || bins=
helm=$bins/helm kubectl=$bins/kubectl
[ -x "$helm" ] || helm=$(command -v helm) || skip_test "no helm (make cluster-bins builds it)"
[ -x "$kubectl" ] || kubectl=$(command -v kubectl) || skip_test "no kubectl (make cluster-bins builds it)"
command -v node >/dev/null || skip_test "no node (run: scripts/deps.sh manifests)"
"$root/tests/manifests/install.sh" npm >"$tmp/npm" 2>&1 || skip_test "the npm packages of tests/manifests: $(tail -n 3 "$tmp/npm")"
echo "helm $("$helm" version --template '{{.Version}}'), $("$kubectl" version --client -o json | sed -n 's/^ *"gitVersion": *"\([^"]*\)".*/\1/p' | head -n 1)"
# Helm keeps its caches and configuration under HOME: a scratch one.
export HOME=$tmp/home XDG_CACHE_HOME=$tmp/home/cache XDG_CONFIG_HOME=$tmp/home/config XDG_DATA_HOME=$tmp/home/data

# template OUT VALUES...: the chart as `helm install -n kube-system` renders it.
template() {
	local out=$1
	shift
	"$helm" template ascend-k8s "$chart" --namespace kube-system "$@" >"$out"
}
# kustomize OUT DIR...: the renders of deploy/DIR..., one after the other.
kustomize() {
	local out=$1 d
	shift
	: >"$out"
	for d in "$@"; do
		{ "$kubectl" kustomize "$root/deploy/$d" && echo ---; } >>"$out" || return
	done
}
same_objects() { flock -s "$root/tests/manifests/package.json" node "$root/tests/manifests/same-objects.cjs" --helm "$@"; }

check "helm lint --strict deploy/helm/ascend-k8s" "$helm" lint --strict "$chart"

# The choices: a name, the part of deploy/ that makes it, the chart's values.
choices=(
	"device plugin (the defaults)|.|"
	"overlay cdi|overlays/cdi|--set devicePlugin.deviceListStrategy=cdi"
	"overlay config|overlays/config|--set-json config={\"version\":\"v1\",\"flags\":{\"logLevel\":\"info\"}}"
	"overlay devfs|overlays/devfs|--set devicePlugin.backend=devfs"
	"overlay driver-path|overlays/driver-path|--set driverPath=/opt/Ascend/driver"
	"overlay health-interval|overlays/health-interval|--set healthInterval=2s"
	"overlay host-tools|overlays/host-tools|--set devicePlugin.hostTools=true"
	"overlay kubelet-dir|overlays/kubelet-dir|--set kubeletDir=/data/kubelet"
	"overlay metrics-networkpolicy|overlays/metrics-networkpolicy|--set metrics.networkPolicy.enabled=true"
	"overlay resource-name|overlays/resource-name|--set devicePlugin.resourceName=huawei.com/Ascend910"
	"the DRA driver|dra|--set devicePlugin.enabled=false --set dra.enabled=true"
	"the device plugin and the DRA driver|. dra|--set dra.enabled=true"
)
# Every overlay of deploy/ has its choice here.
for d in "$root"/deploy/overlays/*/; do
	d=${d%/}
	[[ " ${choices[*]} " == *"|overlays/${d##*/}|"* ]] && pass "deploy/overlays/${d##*/} has a chart choice" ||
		fail "deploy/overlays/${d##*/} has a chart choice" "add it to choices in $0"
done
n=0
for c in "${choices[@]}"; do
	IFS='|' read -r name dirs values <<<"$c"
	read -ra dirs <<<"$dirs"
	read -ra values <<<"$values"
	n=$((n + 1))
	if ! template "$tmp/chart-$n.yaml" "${values[@]}" 2>"$tmp/err"; then
		fail "$name: helm template ${values[*]}" "$(cat "$tmp/err")"
		continue
	fi
	check "$name: helm lint --strict ${values[*]}" "$helm" lint --strict "$chart" "${values[@]}"
	check "$name: kubectl kustomize deploy/${dirs[*]}" kustomize "$tmp/kust-$n.yaml" "${dirs[@]}"
	check "$name: the chart renders the objects deploy/${dirs[*]} does" same_objects "$tmp/kust-$n.yaml" "$tmp/chart-$n.yaml"
done

# The comparison sees a difference: the defaults against the health-interval
# overlay, and the chart with its metrics Service against deploy/.
kustomize "$tmp/hi.yaml" overlays/health-interval
template "$tmp/svc.yaml" --set metrics.service.enabled=true
! same_objects "$tmp/hi.yaml" "$tmp/chart-1.yaml" >"$tmp/diff" && grep -q 'args/2' "$tmp/diff" &&
	pass "the comparison catches a changed argument ($(head -n 1 "$tmp/diff"))" ||
	fail "the comparison catches a changed argument" "$(cat "$tmp/diff")"
! same_objects "$tmp/kust-1.yaml" "$tmp/svc.yaml" >"$tmp/diff" && grep -q 'Service kube-system/ascend-k8s-metrics only in' "$tmp/diff" &&
	pass "the comparison catches an object deploy/ lacks" || fail "the comparison catches an object deploy/ lacks" "$(cat "$tmp/diff")"

# What deploy/ has no overlay for renders, passes lint and says what it should.
template "$tmp/both.yaml" --set devicePlugin.enabled=false --set both.enabled=true --set 'both.draChips=0\,310P'
grep -q -- '--front-end=both' "$tmp/both.yaml" && grep -q -- '--dra-chips=0,310P' "$tmp/both.yaml" &&
	grep -q 'name: ascend-npu-both' "$tmp/both.yaml" && grep -q 'kind: ValidatingAdmissionPolicy$' "$tmp/both.yaml" &&
	pass "both.enabled: one DaemonSet with --front-end=both --dra-chips=0,310P and the driver's RBAC" ||
	fail "both.enabled renders the DaemonSet ascend-npu-both" "$(grep -n 'front-end\|dra-chips\|kind:' "$tmp/both.yaml")"
full=(--set metrics.serviceMonitor.enabled=true --set metrics.networkPolicy.enabled=true --set dra.enabled=true
	--set image.registry=mirror.example:5000/ascend --set image.tag=0.1.1
	--set-json 'faultPolicy.files={"faultCode.json":"{\"NotHandleFaultCodes\":[]}"}')
check "helm lint --strict with a ServiceMonitor, NetworkPolicies, a mirror and a fault policy" "$helm" lint --strict "$chart" "${full[@]}"
template "$tmp/full.yaml" "${full[@]}"
grep -q 'image: mirror.example:5000/ascend/ascend-device-plugin:0.1.1' "$tmp/full.yaml" && pass "image.registry and image.tag make the image's name" ||
	fail "image.registry and image.tag make the image's name" "$(grep 'image:' "$tmp/full.yaml")"
grep -q 'huaweiFiles: /etc/ascend-fault' "$tmp/full.yaml" && grep -q 'name: ascend-fault-policy' "$tmp/full.yaml" &&
	grep -q -- '--config=/etc/ascend-device-plugin/config.yaml' "$tmp/full.yaml" &&
	pass "faultPolicy.files: the ConfigMap ascend-fault-policy, named by the config file's faultPolicy.huaweiFiles" ||
	fail "faultPolicy.files makes its ConfigMap and names it in the config file" "$(grep -n 'fault\|config' "$tmp/full.yaml")"
[ "$(grep -c '^kind: NetworkPolicy$' "$tmp/full.yaml")" = 2 ] && grep -q '^kind: ServiceMonitor$' "$tmp/full.yaml" &&
	pass "a NetworkPolicy per DaemonSet and the ServiceMonitor" ||
	fail "a NetworkPolicy per DaemonSet and the ServiceMonitor" "$(grep '^kind:' "$tmp/full.yaml")"

# Wrong values fail at render time, each naming the value (the schema's
# errors name it as a JSON pointer).
bad=(
	"/image/pullPolicy|--set image.pullPolicy=Sometimes"
	"healthInterval|--set healthInterval=soon"
	"/devicePlugin/backend|--set devicePlugin.backend=nvml"
	"devicePlugn|--set devicePlugn.enabled=true"
	"/config/version|--set config.version=v2"
	"/both/draChips|--set both.enabled=true --set both.draChips=0;3"
	"kubeletDir|--set kubeletDir=var/lib/kubelet"
	"/devicePlugin/resourceName|--set devicePlugin.resourceName=npu"
	"/image/digest|--set image.digest=latest"
	"enable at least one front end|--set devicePlugin.enabled=false"
	"picks every node of|--set dra.enabled=true --set-json dra.nodeSelector={\"npu\":\"true\"}"
)
for b in "${bad[@]}"; do
	IFS='|' read -r key values <<<"$b"
	read -ra values <<<"$values"
	if template "$tmp/bad.yaml" "${values[@]}" 2>"$tmp/err"; then
		fail "${values[*]} is refused" "helm template rendered it"
	elif grep -qF -- "$key" "$tmp/err"; then
		pass "${values[*]} is refused: $(grep -F -- "$key" "$tmp/err" | head -n 1 | cut -c1-160)"
	else
		fail "${values[*]} is refused naming $key" "$(cat "$tmp/err")"
	fi
done

# ---- a real API server -----------------------------------------------------------
# etcd and kube-apiserver on the host's loopback, under $tmp/api, stopped on exit.
free_port() { node -e "const s=require('net').createServer().listen(0,'127.0.0.1',()=>{console.log(s.address().port);s.close()})"; }
api() {
	CLUSTER_HOST_NET=1 CLUSTER_DIR=$tmp/api CLUSTER_PORT=$api_port bash -c ". '$root/tests/cluster/cluster.sh' && $1" >>"$tmp/api.log" 2>&1
}
if [ ! -x "$bins/kube-apiserver" ] || [ ! -x "$bins/etcd" ] || ! command -v openssl curl setsid >/dev/null; then
	skip "helm install against a real kube-apiserver" "etcd or kube-apiserver not built (make cluster-bins), or openssl, curl or setsid missing"
else
	api_port=$(free_port) etcd_port=$(free_port) peer_port=$(free_port)
	trap 'api "_cl_stop kube-apiserver; _cl_stop etcd" || true; rm -rf "$tmp"' EXIT
	if api "mkdir -p \"\$CLUSTER_DIR\"/pids \"\$CLUSTER_DIR\"/logs && _cl_pki && cluster_etcd_start '$bins' $etcd_port $peer_port && cluster_apiserver_start '$bins' $api_port $etcd_port"; then
		pass "etcd and kube-apiserver $("$kubectl" --kubeconfig "$tmp/api/kubeconfig" version -o json | jq -r .serverVersion.gitVersion) up"
		real=(--kubeconfig "$tmp/api/kubeconfig" --namespace kube-system)
		server=(--set dra.enabled=true --set both.enabled=true --set metrics.service.enabled=true
			--set metrics.networkPolicy.enabled=true --set image.registry=mirror.example:5000/ascend
			--set-json 'config={"version":"v1","flags":{"logLevel":"info"}}'
			--set-json 'faultPolicy.files={"faultCode.json":"{\"NotHandleFaultCodes\":[]}"}')
		# refused_for KIND ARGS...: helm ARGS fails, naming KIND.
		refused_for() {
			local kind=$1
			shift
			! "$helm" "$@" >"$tmp/refused" 2>&1 && grep -q "$kind" "$tmp/refused" || { cat "$tmp/refused"; return 1; }
		}
		check "helm install --dry-run=server with a ServiceMonitor but no Prometheus Operator CRDs: refused, naming the kind" \
			refused_for ServiceMonitor install ascend-k8s "$chart" "${real[@]}" --set metrics.serviceMonitor.enabled=true --dry-run=server
		check "helm install (device plugin, DRA driver, both, config file, fault policy, metrics Service, NetworkPolicies) accepted by the API server" \
			"$helm" install ascend-k8s "$chart" "${real[@]}" "${server[@]}"
		check "helm upgrade to another image tag accepted" "$helm" upgrade ascend-k8s "$chart" "${real[@]}" "${server[@]}" --set image.tag=0.1.2
		made=$("$kubectl" --kubeconfig "$tmp/api/kubeconfig" get daemonsets,configmaps,serviceaccounts,services,networkpolicies,clusterroles,clusterrolebindings,validatingadmissionpolicies,validatingadmissionpolicybindings,deviceclasses \
			-A -l app.kubernetes.io/instance=ascend-k8s -o name 2>&1 | sort | tr '\n' ' ')
		[ "$(wc -w <<<"$made")" = 19 ] && pass "the release's 19 objects are in the API: $made" || fail "the release's objects in the API" "$made"
		check "helm uninstall ascend-k8s" "$helm" uninstall ascend-k8s "${real[@]}"
		left=$("$kubectl" --kubeconfig "$tmp/api/kubeconfig" get daemonsets,configmaps,serviceaccounts,services,networkpolicies,clusterroles,clusterrolebindings,validatingadmissionpolicies,validatingadmissionpolicybindings,deviceclasses,secrets \
			-A -l 'app.kubernetes.io/part-of=ascend-k8s' -o name 2>/dev/null) || left="kubectl get failed"
		left+=$("$kubectl" --kubeconfig "$tmp/api/kubeconfig" -n kube-system get secrets -l owner=helm -o name 2>/dev/null)
		[ -z "$left" ] && pass "after helm uninstall no object of the chart and no release secret is left" || fail "nothing left after helm uninstall" "$left"
	else
		fail "etcd and kube-apiserver start" "$(tail -n 20 "$tmp/api.log" "$tmp/api/logs/kube-apiserver.log" 2>&1)"
	fi
fi
finish
