# syntax=docker/dockerfile:1
# SPDX-License-Identifier: Apache-2.0
#
# The ascend-device-plugin image: built with the project's own dependency
# script and CMake build on Debian 12, shipped on debian:12-slim. The binary
# links gRPC, abseil, protobuf-c and libstdc++ statically and needs only glibc
# from the image. No compiler or -dev package reaches the final image.
#
#   docker build -t ascend-device-plugin:0.1.0 .
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
# Only the daemon's target; tests, fuzzers and tools are not built.
RUN cmake -S . -B /build -DCMAKE_BUILD_TYPE=RelWithDebInfo -DWERROR=ON -DBUILD_TESTING=OFF -DSTATIC_GRPC=ON \
    && cmake --build /build --target ascend-device-plugin -j "$(nproc)" \
    && install -D -m 0755 -s /build/src/ascend-device-plugin /out/ascend-device-plugin

# ---- runtime -----------------------------------------------------------------
FROM debian:12-slim
ARG VERSION=0.1.0
ARG REVISION=unknown
LABEL org.opencontainers.image.title="ascend-device-plugin" \
      org.opencontainers.image.description="Kubernetes device plugin for Huawei Ascend NPUs" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.revision="${REVISION}" \
      org.opencontainers.image.base.name="debian:12-slim"
# Nothing to install: the binary needs glibc only (ldd). debian:12-slim rather
# than an empty image, because the driver's libdcmi.so, loaded at run time
# from the node's driver, and its libraries need glibc, and may need
# libstdc++ and libgcc_s, which debian:12-slim has.
COPY --from=build /out/ascend-device-plugin /usr/local/bin/ascend-device-plugin
# Fails the build should a runtime library be missing.
RUN /usr/local/bin/ascend-device-plugin --version
# The image runs as root, because the plugin must: it creates its socket in
# the kubelet's device-plugins directory and dials kubelet.sock, both owned by
# root and writable only by root. The manifests take away what root does not
# need: no capabilities and no privilege unless DCMI needs device access
# (deploy/base/ascend-device-plugin.yaml explains, deploy/overlays/devfs has
# none).
ENTRYPOINT ["/usr/local/bin/ascend-device-plugin"]
