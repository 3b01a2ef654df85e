# SPDX-License-Identifier: Apache-2.0
# Sourced by tests/cluster/e2e.sh (not run): kubectl against the test
# cluster and the objects every step makes: a node's NPU figures and waits
# on them, a busybox pod holding NPUs, the examples as applied offline.
# Reads $bin, $tmp, $root and the cluster's variables from the runner.
# shellcheck shell=bash disable=SC2154 # bin, build, root, tmp: set by e2e.sh

readonly NPU=ascend.com/npu
readonly WAIT=${E2E_WAIT_S:-90}s

k() { "$bin/kubectl" --kubeconfig "$(cluster_kubeconfig)" "$@"; }

alloc() { k get node "$1" -o jsonpath="{.status.allocatable.$(esc "${2:-$NPU}")}" | sed 's/^$/0/'; } # NODE [RES]
capacity() { k get node "$1" -o jsonpath="{.status.capacity.$(esc "${2:-$NPU}")}" | sed 's/^$/0/'; } # NODE [RES]
plugin_pod() { k -n kube-system get pods -l name=ascend-device-plugin --field-selector "spec.nodeName=$1" -o jsonpath='{.items[0].metadata.name}'; }
# Kubernetes' jsonpath needs the dots of a resource name escaped.
esc() { echo "${1//./\\.}"; }
wait_alloc() { # NODE VALUE [RES] [TIMEOUT]: waits (a watch) until NODE's allocatable RES is VALUE
	k wait --for=jsonpath="{.status.allocatable.$(esc "${3:-$NPU}")}=$2" "node/$1" --timeout="${4:-$WAIT}" >/dev/null
}
wait_capacity() { # NODE VALUE [RES]
	k wait --for=jsonpath="{.status.capacity.$(esc "${3:-$NPU}")}=$2" "node/$1" --timeout="$WAIT" >/dev/null
}

# npu_pod NAME NODE COUNT [RES] [RESTART]: a busybox pod on NODE holding COUNT
# of RES that prints the chips it got and sleeps.
npu_pod() {
	local name=$1 node=$2 count=$3 res=${4:-$NPU} restart=${5:-Always}
	cat <<EOF
apiVersion: v1
kind: Pod
metadata:
  name: $name
  labels: {e2e: npu}
spec:
  nodeSelector: {kubernetes.io/hostname: $node}
  tolerations: [{key: ascend.com/npu, operator: Exists, effect: NoSchedule}]
  terminationGracePeriodSeconds: 1
  restartPolicy: $restart
  containers:
  - name: main
    image: $E2E_BUSYBOX_IMAGE
    command: ["/bin/sh", "-c", "echo \"devices=\$ASCEND_VISIBLE_DEVICES\"; exec sleep infinity"]
    resources:
      limits: {$res: "$count"}
EOF
}
run_npu_pod() { # NAME NODE COUNT [RES]: creates it and waits until Ready
	npu_pod "$@" | k apply -f - >/dev/null && k wait --for=condition=Ready "pod/$1" --timeout="$WAIT" >/dev/null
}
pod_devices() { k exec "$1" -c "${2:-main}" -- sh -c 'echo "$ASCEND_VISIBLE_DEVICES"'; } # POD [CONTAINER]
# wait_status_file POD CONTAINER FILTER MS: reads the container's live NPU
# status file ($ASCEND_NPU_STATUS) through kubectl exec, again at once, until
# the jq FILTER holds or MS pass; prints the last text read.
wait_status_file() {
	local text deadline=$(($(now_ms) + $4))
	while :; do
		text=$(k exec "$1" -c "$2" -- sh -c 'cat "$ASCEND_NPU_STATUS"' 2>&1)
		if jq -e "$3" <<<"$text" >/dev/null 2>&1; then
			echo "$text"
			return 0
		fi
		(($(now_ms) < deadline)) || break
	done
	echo "$text"
	return 1
}
delete_pods() { k delete pod "$@" --ignore-not-found --wait=true --timeout="$WAIT" >/dev/null 2>&1; }

# The example files with the images a node can have: nothing can be pulled,
# so the examples' public images are replaced by kustomize's images: override,
# as an offline site points them at its own registry.
example() { # FILE [PATCH]: prints the example as applied here
	local d=$tmp/example.$RANDOM
	mkdir -p "$d" && cp "$root/examples/$1" "$d/" || return
	{
		echo "resources: [${1##*/}]"
		echo "images:"
		echo "- {name: debian, newName: ${E2E_BUSYBOX_IMAGE%:*}, newTag: \"${E2E_BUSYBOX_IMAGE##*:}\"}"
		echo "- {name: my-inference, newName: ${E2E_INFERENCE_IMAGE%:*}, newTag: \"${E2E_INFERENCE_IMAGE##*:}\"}"
		if [ -n "${2-}" ]; then
			printf '%s\n' "$2" >"$d/patch.yaml"
			echo "patches: [{path: patch.yaml}]"
		fi
	} >"$d/kustomization.yaml"
	k kustomize "$d"
}
