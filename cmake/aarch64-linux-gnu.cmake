# SPDX-License-Identifier: Apache-2.0
# Cross-compiles for arm64 with Debian's aarch64-linux-gnu toolchain and the
# multiarch :arm64 -dev packages (`scripts/deps.sh arm64`), so no sysroot is
# needed: the cross compilers search /usr/lib/aarch64-linux-gnu and
# /usr/include/aarch64-linux-gnu by themselves. Used by `make build ARCH=arm64`.
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)

set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
set(CMAKE_CXX_COMPILER aarch64-linux-gnu-g++)

# Programs (protoc-c) run on the build machine; libraries, headers and
# packages come from the arm64 side only.
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_LIBRARY_ARCHITECTURE aarch64-linux-gnu)

# pkg-config must see the arm64 .pc files, never the host's: LIBDIR replaces
# the default search path rather than adding to it.
set(ENV{PKG_CONFIG_LIBDIR} "/usr/lib/aarch64-linux-gnu/pkgconfig:/usr/share/pkgconfig")
set(ENV{PKG_CONFIG_PATH} "")

# Lets try_run and the test suite (when built) run the arm64 binaries.
find_program(ASCEND_QEMU_AARCH64 qemu-aarch64-static)
if(ASCEND_QEMU_AARCH64)
    set(CMAKE_CROSSCOMPILING_EMULATOR ${ASCEND_QEMU_AARCH64})
endif()
