#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Builds the upstream components the real-cluster tests run, upstream's DRA
# test driver that `make bench` measures beside the DRA front end, and Helm,
# which the chart's tests and the e2e's helm step run, from the Go modules
# under tests/cluster/ (pinned in tests/cluster/versions.env), into a
# cache outside the clone keyed by component version and Go version, so a
# second run on the same machine builds nothing. Prints the cache directory
# that holds the binaries (bin/) on its last line.
#
#   scripts/cluster-bins.sh            build what is missing
#   scripts/cluster-bins.sh --dir      print the bin/ directory, building nothing
#                                      (fails when something is not built yet)
#   ASCEND_K8S_CACHE=DIR               cache root (default /var/cache/ascend-k8s)
#   K8S=1.34 (or 1.34.4, v1.34.4)      another release of K8S_MATRIX instead of the
#                                      pin: its Kubernetes, cached beside the pin's
#
# Kubernetes is built as upstream's hack/lib/golang.sh does: the control plane
# and kubectl without cgo, the kubelet with it, and version-stamped the way
# hack/lib/version.sh stamps a release, so `kubectl version` and the node's
# kubeletVersion name the pinned release.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=../tests/cluster/versions.env
. "$here/tests/cluster/versions.env"
cache_root=${ASCEND_K8S_CACHE:-/var/cache/ascend-k8s}
# The Go module that builds the chosen release: the pin's, or a matrix
# release's (scripts/cluster-gomod.sh writes both).
k8s_mod_dir=k8s
if [ -n "${K8S-}" ]; then
	want=v${K8S#v}
	match=
	for v in $K8S_VERSION $K8S_MATRIX; do
		case $v in "$want" | "$want".*) match=$v ;; esac
	done
	[ -n "$match" ] || {
		echo "cluster-bins: K8S=$K8S is neither the pin ($K8S_VERSION) nor in K8S_MATRIX ($K8S_MATRIX)" >&2
		exit 2
	}
	if [ "$match" != "$K8S_VERSION" ]; then
		minor=${match#v1.}
		k8s_mod_dir=k8s-v1.${minor%%.*}
	fi
	K8S_VERSION=$match
fi
command -v go >/dev/null || { echo "cluster-bins: no go on PATH: the cluster components are built with Go (1.26 or later)" >&2; exit 1; }
gover=$(go env GOVERSION)
keys=("kubernetes-$K8S_VERSION-$gover" "etcd-$ETCD_VERSION-$gover" "containerd-$CONTAINERD_VERSION-$gover")
# Only the bench runs upstream's DRA test driver, and only the chart's tests
# run Helm (they skip without it): --dir does not ask for them, so that a
# cache without them still serves the other tests.
# A matrix release has no bench, so no test driver either.
extra_keys=("helm-$HELM_VERSION-$gover")
[ "$k8s_mod_dir" != k8s ] || extra_keys+=("dra-test-driver-$K8S_VERSION-$gover")
bin="$cache_root/bin-k8s-$K8S_VERSION-etcd-$ETCD_VERSION-containerd-$CONTAINERD_VERSION-$gover"
if [ "${1-}" = --dir ]; then
	for k in "${keys[@]}"; do
		[ -f "$cache_root/$k/.complete" ] || { echo "cluster-bins: $k is not built (make cluster-bins)" >&2; exit 1; }
	done
	echo "$bin"
	exit 0
fi
export GOFLAGS="-mod=readonly -trimpath"

# Each component's binaries go to DIR.tmp first and are renamed to DIR only
# when all of them built, so an interrupted build never looks complete.
build_into() { # key, then a function that builds into $1
	local dir="$cache_root/$1" fn=$2
	if [ -f "$dir/.complete" ]; then
		return 0
	fi
	local t0=$SECONDS
	echo "cluster-bins: building $1" >&2
	rm -rf "$dir.tmp" && mkdir -p "$dir.tmp"
	"$fn" "$dir.tmp"
	echo "$((SECONDS - t0))" >"$dir.tmp/.build-seconds"
	touch "$dir.tmp/.complete"
	rm -rf "$dir" && mv "$dir.tmp" "$dir"
	echo "cluster-bins: $1 built in $((SECONDS - t0)) s" >&2
}

# The linker flags of a Kubernetes binary: stripped, version-stamped.
k8s_ldflags() {
	local minor=${K8S_VERSION#v1.} pkg ld="-s -w"
	minor=${minor%%.*}
	for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
		ld+=" -X $pkg.gitVersion=$K8S_VERSION -X $pkg.gitMajor=1 -X $pkg.gitMinor=$minor"
		ld+=" -X $pkg.gitTreeState=clean -X $pkg.buildDate=1970-01-01T00:00:00Z"
	done
	echo "$ld"
}

build_k8s() {
	local out=$1 ld
	ld=$(k8s_ldflags)
	cd "$here/tests/cluster/$k8s_mod_dir"
	CGO_ENABLED=0 go build -ldflags "$ld" -o "$out/" \
		k8s.io/kubernetes/cmd/kube-apiserver k8s.io/kubernetes/cmd/kube-controller-manager \
		k8s.io/kubernetes/cmd/kube-scheduler k8s.io/kubernetes/cmd/kubectl
	CGO_ENABLED=1 go build -ldflags "$ld" -o "$out/" k8s.io/kubernetes/cmd/kubelet
}

# Upstream's DRA test driver (test/e2e/dra/test-driver) of the same release:
# the peer `make bench` measures the DRA front end beside. A component of its
# own, so that adding it did not invalidate a built Kubernetes.
build_dra_test_driver() {
	cd "$here/tests/cluster/k8s"
	CGO_ENABLED=0 go build -ldflags "$(k8s_ldflags)" -o "$1/dra-test-driver" \
		k8s.io/kubernetes/test/e2e/dra/test-driver
}

# Helm as its Makefile builds a release: without cgo, stripped, and stamped
# with the version (no "+unreleased" suffix, as for a tagged build).
build_helm() {
	local pkg=helm.sh/helm/v4/internal/version
	cd "$here/tests/cluster/helm"
	CGO_ENABLED=0 go build -ldflags "-s -w -X $pkg.version=$HELM_VERSION -X $pkg.metadata= -X $pkg.gitTreeState=clean" \
		-o "$1/helm" helm.sh/helm/v4/cmd/helm
}

build_etcd() {
	cd "$here/tests/cluster/etcd"
	CGO_ENABLED=0 go build -ldflags "-s -w" -o "$1/etcd" go.etcd.io/etcd/server/v3
}

build_containerd() {
	local ld="-s -w -X github.com/containerd/containerd/v2/version.Version=$CONTAINERD_VERSION"
	cd "$here/tests/cluster/containerd"
	# no_btrfs: the btrfs snapshotter needs libbtrfs headers and the nodes
	# use overlayfs.
	CGO_ENABLED=1 go build -tags no_btrfs -ldflags "$ld" -o "$1/" \
		github.com/containerd/containerd/v2/cmd/containerd github.com/containerd/containerd/v2/cmd/ctr
	CGO_ENABLED=0 go build -tags no_btrfs -ldflags "$ld" -o "$1/" \
		github.com/containerd/containerd/v2/cmd/containerd-shim-runc-v2
}

build_into "${keys[0]}" build_k8s
build_into "${keys[1]}" build_etcd
build_into "${keys[2]}" build_containerd
build_into "helm-$HELM_VERSION-$gover" build_helm
[ "$k8s_mod_dir" != k8s ] || build_into "dra-test-driver-$K8S_VERSION-$gover" build_dra_test_driver

# One bin/ of links, so the tests put a single directory on PATH.
mkdir -p "$bin"
for d in "${keys[@]}" "${extra_keys[@]}"; do
	for f in "$cache_root/$d"/*; do
		ln -sfn "$f" "$bin/$(basename "$f")"
	done
done
echo "$bin"
