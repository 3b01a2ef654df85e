# syntax=docker/dockerfile:1
# SPDX-License-Identifier: Apache-2.0
#
# The ascend-device-plugin image, for those who build with Docker: built with
# the project's own dependency script and CMake build on Debian 12, shipped on
# an empty image holding only the stripped plugin and ascend-doctor (`kubectl
# exec` into the plugin's pod runs `ascend-doctor node`), their dynamic loader and the
# shared libraries of scripts/image-libs.txt. `make image` builds the same file
# set without a daemon (scripts/image.sh; docs/install.md): both run
# `scripts/image.sh rootfs`, and tests/scripts/test_image.sh checks that this
# file still does. No shell, no package manager and no -dev package reach the
# final image.
#
#   docker build -t ascend-device-plugin:0.1.0 \
#     --build-arg REVISION="$(git rev-parse HEAD)" .
#
# The tag must match the image in deploy/base/ascend-device-plugin.yaml
# (docs/install.md shows how to point the manifests at your registry).

# ---- build -------------------------------------------------------------------
FROM debian:12 AS build
WORKDIR /src
# The dependency script alone first, so that editing a source file does not
# reinstall the build dependencies.
COPY scripts/deps.sh scripts/deps.sh
RUN scripts/deps.sh && rm -rf /var/lib/apt/lists/*
COPY . .
# Only the daemon, ascend-doctor (the troubleshooting tool shipped beside it),
# ascend-ranktable (the rank-table init container of multi-node jobs) and the
# API-server module the DRA front end loads; tests, fuzzers and the
# other tools are not built.
RUN cmake -S . -B /build -DCMAKE_BUILD_TYPE=RelWithDebInfo -DWERROR=ON -DBUILD_TESTING=OFF -DSTATIC_GRPC=ON \
    && cmake --build /build --target ascend-device-plugin ascend-doctor ascend-ranktable ascend-kube -j "$(nproc)" \
    && scripts/image.sh rootfs /build/src/ascend-device-plugin /rootfs

# ---- runtime -----------------------------------------------------------------
# Empty: the plugin needs glibc only (gRPC, abseil, protobuf-c and libstdc++
# are linked statically). /rootfs also holds libstdc++, libgcc_s and glibc's
# libpthread/libdl/librt, for the node's libdcmi.so, a C++ library the plugin
# dlopens from the host's driver, and libcurl with its libraries, for the
# API-server module the DRA front end dlopens (scripts/image-libs.txt says
# why).
FROM scratch
ARG VERSION=0.1.0
ARG REVISION=unknown
ARG SOURCE=unknown
LABEL org.opencontainers.image.title="ascend-device-plugin" \
      org.opencontainers.image.description="Kubernetes device plugin for Huawei Ascend NPUs" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.revision="${REVISION}" \
      org.opencontainers.image.source="${SOURCE}" \
      org.opencontainers.image.licenses="Apache-2.0"
COPY --from=build /rootfs/ /
# Fails the build should a runtime library be missing (exec form: there is no
# shell in the image).
RUN ["/usr/local/bin/ascend-device-plugin", "--version"]
RUN ["/usr/local/bin/ascend-doctor", "--version"]
RUN ["/usr/local/bin/ascend-ranktable", "--version"]
# The image runs as root, because the plugin must: it creates its socket in
# the kubelet's device-plugins directory and dials kubelet.sock, both owned by
# root and writable only by root. The manifests take away what root does not
# need: no capabilities and no privilege unless DCMI needs device access
# (deploy/base/ascend-device-plugin.yaml explains, deploy/overlays/devfs has
# none).
ENTRYPOINT ["/usr/local/bin/ascend-device-plugin"]
