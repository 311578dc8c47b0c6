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
# their arm64 libraries are unpacked in INSTR_TARGET_ROOT
# (scripts/fetch-arm64-root.sh); configure names those missing and builds
# the rest.
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)

set(INSTR_CROSS_MAJOR 12 CACHE STRING "GCC major version of the aarch64 cross compiler")
set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc-${INSTR_CROSS_MAJOR})
set(CMAKE_CXX_COMPILER aarch64-linux-gnu-g++-${INSTR_CROSS_MAJOR})
# The plugin is for this compiler (plugin/CMakeLists.txt, INSTR_GCC)...
set(INSTR_GCC aarch64-linux-gnu-gcc-${INSTR_CROSS_MAJOR} CACHE STRING "")
# ...and built by the build machine's g++ of the same version.
set(INSTR_PLUGIN_HOST_CXX g++-${INSTR_CROSS_MAJOR} CACHE STRING "")

# The cross libc (libc6-dev-arm64-cross) under /usr/aarch64-linux-gnu;
# with INSTR_TARGET_ROOT (-D, a directory scripts/fetch-arm64-root.sh
# filled with Debian's arm64 packages, unpacked) the tools' libraries
# there too, and arm64's own GCC headers for its plugin
# (plugin/CMakeLists.txt).  Not multiarch-installed -dev:arm64 packages:
# their libc6:arm64 breaks qemu -L /usr/aarch64-linux-gnu (fetch-arm64-root.sh).
set(CMAKE_FIND_ROOT_PATH /usr/aarch64-linux-gnu)
# try_compile reads this file again, in this process: the same answer there.
set(CMAKE_TRY_COMPILE_PLATFORM_VARIABLES INSTR_TARGET_ROOT)
if(INSTR_TARGET_ROOT)
  list(APPEND CMAKE_FIND_ROOT_PATH ${INSTR_TARGET_ROOT})
  set(CMAKE_LIBRARY_ARCHITECTURE aarch64-linux-gnu)
  # pkg-config (libdw) reads the root's arm64 .pc files, its paths under the root.
  set(ENV{PKG_CONFIG_LIBDIR} ${INSTR_TARGET_ROOT}/usr/lib/aarch64-linux-gnu/pkgconfig:${INSTR_TARGET_ROOT}/usr/share/pkgconfig)
  set(ENV{PKG_CONFIG_SYSROOT_DIR} ${INSTR_TARGET_ROOT})
  # Its headers after the cross libc's (zconf.h, libunwind.h and gmp.h sit
  # in the multiarch include directory).
  string(APPEND CMAKE_C_FLAGS_INIT " -idirafter ${INSTR_TARGET_ROOT}/usr/include"
         " -idirafter ${INSTR_TARGET_ROOT}/usr/include/aarch64-linux-gnu")
  # libdw.so.1's own dependencies (libelf, zlib, liblzma...) for the linker.
  string(APPEND CMAKE_EXE_LINKER_FLAGS_INIT " -Wl,-rpath-link,${INSTR_TARGET_ROOT}/usr/lib/aarch64-linux-gnu"
         " -Wl,-rpath-link,${INSTR_TARGET_ROOT}/lib/aarch64-linux-gnu")
else()
  set(ENV{PKG_CONFIG_LIBDIR} /nonexistent)
endif()
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)
set(CMAKE_CROSSCOMPILING_EMULATOR qemu-aarch64-static -L /usr/aarch64-linux-gnu)
