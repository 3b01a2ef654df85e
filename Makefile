# SPDX-License-Identifier: Apache-2.0
# Entry points. Each target installs missing Debian packages first
# (scripts/deps.sh), so a fresh Debian 12 machine needs nothing else.
BUILD      ?= build
ARM64_BUILD ?= build-arm64
ASAN_BUILD ?= build-asan
TSAN_BUILD ?= build-tsan
JOBS       ?= $(shell nproc)
CMAKE_ARGS ?=
comma      := ,

.PHONY: all deps test-deps build build-native build-arm64 asan tsan tsan-build test test-arm64 test-fast demo bench bench-fleet fuzz image e2e e2e-matrix cluster-bins cluster cluster-down clean

# ARCH=arm64 makes `make build` cross-compile for arm64 into $(ARM64_BUILD)
# (see build-arm64); empty or the machine's own architecture builds natively.
ARCH ?=
ifneq ($(filter-out $(shell dpkg --print-architecture) arm64,$(ARCH)),)
$(error ARCH=$(ARCH): only arm64 (or the machine's own architecture) is supported)
endif

all: build

deps:
	@scripts/deps.sh

# The manifest tests also need kubectl, Node.js and their npm packages; the
# image test umoci, skopeo and podman; the test images busybox, umoci and
# skopeo; the observability test promtool (Debian's prometheus); the real
# cluster runc, CNI plugins, socat and openssl.
test-deps:
	@scripts/deps.sh manifests image image-run e2e metrics cluster

ifeq ($(ARCH),arm64)
build: build-arm64
else
build: build-native
endif

build-native: deps
	@cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo -DWERROR=ON $(CMAKE_ARGS) >/dev/null
	@cmake --build $(BUILD) -j $(JOBS)

# The plugin, ascend-doctor and the API-server module (they go into the
# image), the DCMI simulator and kubelet-sim for arm64, with Debian's cross
# compilers and multiarch -dev packages (release, static gRPC, as the native
# build). The test programs are
# not built: test-arm64 runs the plugin under qemu instead.
build-arm64:
	@scripts/deps.sh arm64
	@cmake -S . -B $(ARM64_BUILD) -DCMAKE_TOOLCHAIN_FILE=$(CURDIR)/cmake/aarch64-linux-gnu.cmake \
	 -DCMAKE_BUILD_TYPE=RelWithDebInfo -DWERROR=ON -DBUILD_TESTING=OFF $(CMAKE_ARGS) >/dev/null
	@cmake --build $(ARM64_BUILD) -j $(JOBS) --target ascend-device-plugin ascend-doctor ascend-ranktable ascend-kube fake_dcmi kubelet-sim

asan: deps
	@cmake -S . -B $(ASAN_BUILD) -DCMAKE_BUILD_TYPE=Debug -DWERROR=ON -DSANITIZE=ON $(CMAKE_ARGS) >/dev/null
	@cmake --build $(ASAN_BUILD) -j $(JOBS)

tsan-build: deps
	@cmake -S . -B $(TSAN_BUILD) -DCMAKE_BUILD_TYPE=Debug -DWERROR=ON -DSANITIZE_THREAD=ON $(CMAKE_ARGS) >/dev/null
	@cmake --build $(TSAN_BUILD) -j $(JOBS)

# The unit and integration suites under ThreadSanitizer; a race fails the
# test (halt_on_error). The suppressions cover gRPC's own internals only.
# setarch -R: TSan's shadow layout does not fit every address the kernel may
# pick when vm.mmap_rnd_bits is high ("unexpected memory mapping").
TSAN_RUN = TSAN_OPTIONS=halt_on_error=1:exitcode=66:second_deadlock_stack=1:suppressions=$(CURDIR)/tests/tsan.supp \
	 setarch $$(uname -m) -R ctest --test-dir $(TSAN_BUILD) --output-on-failure -j $(JOBS) -L 'unit|integration'

tsan: tsan-build
	@echo "== unit and integration suites (ThreadSanitizer)"
	@$(TSAN_RUN)

# The arm64 plugin and DCMI simulator under qemu-user against the native
# kubelet-sim: registration, Allocate, a chip fault and its recovery.
ARM64_RUN = tests/arm64/roundtrip.sh $(ARM64_BUILD) $(BUILD)

test-arm64: build-native build-arm64
	@echo "== arm64 round trip (qemu-user)"
	@$(ARM64_RUN)

# The guide on a real Kubernetes: upstream etcd, kube-apiserver,
# kube-controller-manager, kube-scheduler and three kubelets with containerd 2,
# built from their Go modules (tests/cluster/, cached outside the clone by
# scripts/cluster-bins.sh), three simulated NPU nodes on this machine
# (tests/cluster/cluster.sh), the DaemonSet and examples applied with kubectl
# (tests/cluster/e2e.sh). Needs root; skips without it. cluster-bins also
# builds upstream's DRA test driver, which `make bench` measures beside ours.
# K8S=1.34 (or another release of K8S_MATRIX) builds that release instead.
cluster-bins:
	@scripts/deps.sh cluster
	@scripts/cluster-bins.sh >/dev/null

E2E_RUN = tests/cluster/e2e.sh $(BUILD)

# STEP=dra,metrics runs those steps of tests/cluster/steps/ (and the steps
# they need) on a fresh cluster; without it, every step.
STEP ?=
e2e: image cluster-bins
	@scripts/deps.sh e2e cluster metrics
	@echo "== e2e: the guide on a real Kubernetes (3 simulated NPU nodes)"
	@$(E2E_RUN) $(STEP)

# The e2e on every Kubernetes release from 1.34 (K8S_MATRIX and the pin of
# tests/cluster/versions.env), one after another, each with its own build of
# the components (make cluster-bins K8S=1.34 builds one alone). RELEASES=
# 1.34,1.36 runs some; STEP= as for e2e. Not part of make test: each
# release's first build takes about 25 minutes on two cores.
RELEASES ?=
e2e-matrix: image
	@scripts/deps.sh e2e cluster metrics
	@scripts/e2e-matrix.sh $(BUILD) $(subst $(comma), ,$(RELEASES)) -- $(subst $(comma), ,$(STEP))

# The same cluster, left running for a person: prints the KUBECONFIG to export.
cluster: image cluster-bins
	@scripts/deps.sh e2e cluster
	@tests/cluster/cluster.sh up $(BUILD)

cluster-down:
	@tests/cluster/cluster.sh down

# The whole suite, the whole suite again under ASan+UBSan, then the unit and
# integration suites under TSan, then the arm64 round trip and the guide on
# a real Kubernetes. The suites run with the cluster's kubectl first on PATH.
CLUSTER_PATH = PATH="$$(scripts/cluster-bins.sh --dir):$$PATH"

test: test-deps build-native asan tsan-build build-arm64 image cluster-bins
	@echo "== test suite (release build)"
	@$(CLUSTER_PATH) ctest --test-dir $(BUILD) --output-on-failure -j $(JOBS)
	@echo "== test suite (ASan + UBSan)"
	@ASAN_OPTIONS=detect_leaks=1:abort_on_error=0:halt_on_error=1 \
	 LSAN_OPTIONS=suppressions=$(CURDIR)/tests/lsan.supp:print_suppressions=0 \
	 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
	 $(CLUSTER_PATH) ctest --test-dir $(ASAN_BUILD) --output-on-failure -j $(JOBS)
	@echo "== unit and integration suites (ThreadSanitizer)"
	@$(TSAN_RUN)
	@echo "== arm64 round trip (qemu-user)"
	@$(ARM64_RUN)
	@echo "== e2e: the guide on a real Kubernetes (3 simulated NPU nodes)"
	@$(E2E_RUN)

# Only the release-build suite, for quick iterations.
test-fast: test-deps build-native
	@ctest --test-dir $(BUILD) --output-on-failure -j $(JOBS)

demo: build
	@scripts/demo.sh $(BUILD)

bench: build
	@scripts/bench.sh $(BUILD)

# The DRA driver's cost to the API server at fleet scale, beside upstream's
# DRA test driver (docs/performance.md#fleet): NODES simulated nodes (one
# list of them: 10,100,300) against one kube-apiserver of the cluster cache.
# Not part of `make test`; the larger runs take minutes and GiBs.
NODES ?= 10
bench-fleet: build cluster-bins
	@for n in $$(echo $(NODES) | tr , ' '); do scripts/bench-fleet.sh $(BUILD) --nodes $$n || exit; done

# The container image from the release builds, without a Docker daemon, for
# linux/amd64 and linux/arm64 (both builds are made here): one OCI index in
# build/image/oci/ and the native image as build/image/ascend-device-plugin.tar
# (docker-archive).
image: build-native build-arm64
	@scripts/deps.sh image
	@scripts/image.sh build --out $(BUILD)/image $(BUILD)/src/ascend-device-plugin $(ARM64_BUILD)/src/ascend-device-plugin

fuzz:
	@scripts/deps.sh fuzz
	@CC=clang cmake -S . -B build-fuzz -DCMAKE_BUILD_TYPE=Debug -DFUZZ_LIBFUZZER=ON >/dev/null
	@cmake --build build-fuzz -j $(JOBS)
	@scripts/fuzz.sh build-fuzz

clean:
	rm -rf $(BUILD) $(ASAN_BUILD) $(TSAN_BUILD) $(ARM64_BUILD) build-fuzz
