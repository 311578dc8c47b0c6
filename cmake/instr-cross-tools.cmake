# Whether a cross build can build the tools: the target's zlib and libdw
# (required by tools/) are found, and which optional libraries are not
# (libiberty: mangled C++ names; libunwind: no instr-sample), in the
# cross libc's root and INSTR_TARGET_ROOT (scripts/fetch-arm64-root.sh
# unpacks Debian's arm64 packages there).  Sets INSTR_CROSS_TOOLS; says in
# one line what is missing: its Debian package (e.g. libdw-dev:arm64).
set(INSTR_DEB_ARCH_aarch64 arm64)
set(INSTR_DEB_ARCH_x86_64 amd64)
set(INSTR_DEB_ARCH_riscv64 riscv64)
set(INSTR_CROSS_DEB_ARCH ${INSTR_DEB_ARCH_${CMAKE_SYSTEM_PROCESSOR}})
if(NOT INSTR_CROSS_DEB_ARCH)
  set(INSTR_CROSS_DEB_ARCH ${CMAKE_SYSTEM_PROCESSOR})
endif()

find_package(ZLIB QUIET)
find_package(PkgConfig QUIET)
if(PKG_CONFIG_FOUND)
  pkg_check_modules(INSTR_LIBDW QUIET IMPORTED_TARGET libdw)
endif()
find_library(INSTR_CROSS_LIBUNWIND NAMES unwind-${CMAKE_SYSTEM_PROCESSOR})
find_library(INSTR_CROSS_LIBIBERTY NAMES iberty)

set(missing)
if(NOT ZLIB_FOUND)
  list(APPEND missing zlib1g-dev:${INSTR_CROSS_DEB_ARCH})
endif()
if(NOT INSTR_LIBDW_FOUND)
  list(APPEND missing libdw-dev:${INSTR_CROSS_DEB_ARCH})
endif()
set(optional)
if(NOT INSTR_CROSS_LIBUNWIND)
  list(APPEND optional "libunwind-dev:${INSTR_CROSS_DEB_ARCH} (instr-sample)")
endif()
if(NOT INSTR_CROSS_LIBIBERTY)
  list(APPEND optional "libiberty-dev:${INSTR_CROSS_DEB_ARCH} (demangled C++ names)")
endif()
list(JOIN missing " " missing)
list(JOIN optional ", " optional)

if(missing)
  set(INSTR_CROSS_TOOLS OFF)
  message(STATUS "instr: cross build for ${CMAKE_SYSTEM_PROCESSOR}: the runtime and the plugin only; "
                 "the tools need ${missing} (scripts/fetch-arm64-root.sh DIR; cmake -DINSTR_TARGET_ROOT=DIR)")
else()
  set(INSTR_CROSS_TOOLS ON)
  message(STATUS "instr: cross build for ${CMAKE_SYSTEM_PROCESSOR}: the runtime, the plugin and the tools")
endif()
if(optional)
  message(STATUS "instr: not found for ${CMAKE_SYSTEM_PROCESSOR}: ${optional}")
endif()
