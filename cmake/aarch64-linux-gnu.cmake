# Cross build for aarch64 Linux with Debian's cross compiler:
#   cmake -S . -B build-arm64 -DCMAKE_TOOLCHAIN_FILE=cmake/aarch64-linux-gnu.cmake
# (apt-get install gcc-12-aarch64-linux-gnu g++-12-aarch64-linux-gnu
#  gcc-12-plugin-dev-aarch64-linux-gnu libc6-dev-arm64-cross;
#  INSTR_WITH_AARCH64=1 scripts/install-deps.sh).
# The runtime is built for aarch64; the plugin is an x86-64 shared object
# built with the host's g++ against the cross compiler's plugin headers,
# since the cross compiler's cc1 that loads it runs on the build machine.
# Programs run under qemu-aarch64-static -L /usr/aarch64-linux-gnu.
# The tools (instr-report, instr-dump, instr-sample) are built too when
# the arm64 -dev packages of their libraries are installed (multiarch:
# INSTR_WITH_AARCH64=1 scripts/install-deps.sh); configure names those
# missing and builds the rest.
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)

set(INSTR_CROSS_MAJOR 12 CACHE STRING "GCC major version of the aarch64 cross compiler")
set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc-${INSTR_CROSS_MAJOR})
set(CMAKE_CXX_COMPILER aarch64-linux-gnu-g++-${INSTR_CROSS_MAJOR})
# The plugin is for this compiler (plugin/CMakeLists.txt, INSTR_GCC)...
set(INSTR_GCC aarch64-linux-gnu-gcc-${INSTR_CROSS_MAJOR} CACHE STRING "")
# ...and built by the build machine's g++ of the same version.
set(INSTR_PLUGIN_HOST_CXX g++-${INSTR_CROSS_MAJOR} CACHE STRING "")

# The cross libc (libc6-dev-arm64-cross) under /usr/aarch64-linux-gnu, and
# Debian's multiarch arm64 packages (dpkg --add-architecture arm64;
# libdw-dev:arm64 ...: the tools' libraries) under /usr/lib/aarch64-linux-gnu
# and /usr/include: "/" as a root, searched with this library architecture.
set(CMAKE_FIND_ROOT_PATH /usr/aarch64-linux-gnu /)
set(CMAKE_LIBRARY_ARCHITECTURE aarch64-linux-gnu)
# pkg-config (libdw) reads the arm64 .pc files only.
set(ENV{PKG_CONFIG_LIBDIR} /usr/lib/aarch64-linux-gnu/pkgconfig:/usr/share/pkgconfig)
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)
set(CMAKE_CROSSCOMPILING_EMULATOR qemu-aarch64-static -L /usr/aarch64-linux-gnu)
