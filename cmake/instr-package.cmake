# `cpack -G DEB` in the build directory: build/instr_<version>_<arch>.deb,
# the tree of cmake/instr-install.cmake under /usr.
#
# Dependencies:
#  - the shared libraries the installed ELF files link, read from them by
#    dpkg-shlibdeps (CPACK_DEBIAN_PACKAGE_SHLIBDEPS): libc6, libstdc++6 and
#    libgcc-s1 (the plugins are C++), zlib1g (the pprof and perfetto exports) and libdw1
#    (the line tables of --view lines) for the tools, libunwind8 for
#    instr-sample's unwinder (when the build found it).  The tools link
#    libiberty statically (Debian ships only libiberty.a).
#  - the GCC the plugin was built for, exactly: a plugin runs inside cc1
#    and checks (plugin/instr-plugin.cc, plugin_default_version_check)
#    the version, date stamp, revision and configure arguments of the GCC
#    whose plugin headers it was built with.  Debian's configure arguments
#    hold the package version (--with-pkgversion='Debian 12.2.0-14+deb12u1'),
#    so any other build of gcc-12, even 12.2.0-14, refuses the plugin:
#    Depends: gcc-12 (= <version of gcc-12-plugin-dev at build time>).
#  - the other GCCs the build found plugin headers for (gcc-11): optional,
#    so Suggests, with their exact version for the same reason.

set(CPACK_PACKAGE_NAME instr)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY
    "auto-instrumenting profiler for C and C++ (GCC plugin)")
set(CPACK_PACKAGE_DESCRIPTION
    "A GCC plugin adds entry, exit and call-site hooks to every function of a
program; its runtime records per-thread event streams into a dump per
process, and instr-report computes for every function, thread, module and
process the four values of the Visual Studio instrumentation profiler:
Elapsed and Application time, inclusive and exclusive.")
set(INSTR_PACKAGE_MAINTAINER "instr maintainers <maintainers@users.noreply.a-seed-b64f9e83.example>" CACHE STRING
    "Maintainer field of the Debian package (the authors of the project's commits)")
set(CPACK_PACKAGE_CONTACT "${INSTR_PACKAGE_MAINTAINER}")
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_STRIP_FILES ON)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION devel)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)

# instr_debian_gcc_dependency(<gcc> <out-var>): "gcc-N (= V)", V being the
# version of the Debian package holding <gcc>'s plugin headers; empty when
# they do not come from a Debian package.
function(instr_debian_gcc_dependency gcc out)
  set(${out} "" PARENT_SCOPE)
  instr_gcc_plugin_info(${gcc} major dir gxx)
  find_program(INSTR_DPKG_QUERY dpkg-query)
  if(NOT dir OR NOT INSTR_DPKG_QUERY)
    return()
  endif()
  execute_process(COMMAND ${INSTR_DPKG_QUERY} -S ${dir}/include/plugin-version.h
                  OUTPUT_VARIABLE owner RESULT_VARIABLE rc ERROR_QUIET)
  string(REGEX MATCH "^[^:,]+" owner "${owner}")
  if(NOT rc EQUAL 0 OR NOT owner MATCHES "^gcc-[0-9]+-plugin-dev$")
    return()
  endif()
  execute_process(COMMAND ${INSTR_DPKG_QUERY} -W -f=\${Version} ${owner}
                  OUTPUT_VARIABLE version RESULT_VARIABLE rc ERROR_QUIET)
  if(rc EQUAL 0 AND version)
    set(${out} "gcc-${major} (= ${version})" PARENT_SCOPE)
  endif()
endfunction()

# A cross build's package is the target's (cmake/instr-cross-tools.cmake
# names its Debian architecture: arm64).  Its plugin is the one built for
# the target's own GCC (plugin-target/, from INSTR_TARGET_ROOT: then
# Depends: gcc-12 (= the version of those headers), as for a native
# package), never the cross compiler's, an x86-64 object; without those
# headers the package holds no plugin and says so.
if(CMAKE_CROSSCOMPILING)
  set(CPACK_DEBIAN_PACKAGE_ARCHITECTURE ${INSTR_CROSS_DEB_ARCH})
  if(INSTR_TARGET_PLUGIN_FILES)
    string(APPEND CPACK_PACKAGE_DESCRIPTION "

This ${INSTR_CROSS_DEB_ARCH} package was cross-built; its plugin is built for Debian's
${INSTR_CROSS_DEB_ARCH} gcc-${INSTR_PLUGIN_MAJOR} ${INSTR_TARGET_GCC_VERSION}.")
  else()
    string(APPEND CPACK_PACKAGE_DESCRIPTION "

This ${INSTR_CROSS_DEB_ARCH} package was cross-built and holds the runtime
and the report tools, but no GCC plugin: programs are instrumented by
the plugin of an x86-64 machine's cross compiler (instr's cross build),
and their dumps are read here.  lib/instr/instr.so, named by instr.pc
and instrConfig.cmake, is absent.")
  endif()
  if(NOT TARGET instr-report)
    string(APPEND CPACK_PACKAGE_DESCRIPTION "
The tools were not built (their ${INSTR_CROSS_DEB_ARCH} libraries were missing).")
  endif()
endif()

instr_debian_gcc_dependency(${INSTR_GCC} INSTR_DEB_DEPENDS)
# A cross build's target libraries are unpacked (INSTR_TARGET_ROOT), not
# installed: dpkg-shlibdeps finds no package of them, so the Depends are
# the libraries the ELF files link, named here (the versions of Debian 12's
# arm64 packages built against).
if(CMAKE_CROSSCOMPILING)
  set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS OFF)
  set(deps "libc6 (>= 2.36)")
  if(TARGET instr-report)
    list(APPEND deps "libdw1 (>= 0.188)" "libelf1 (>= 0.188)" "zlib1g (>= 1:1.2.0)")
  endif()
  if(TARGET instr-sample)
    list(APPEND deps "libunwind8 (>= 1.6)")
  endif()
  if(INSTR_TARGET_PLUGIN_FILES AND INSTR_TARGET_GCC_VERSION)
    list(APPEND deps "libstdc++6 (>= 12)" "libgcc-s1 (>= 3.0)" "gcc-${INSTR_PLUGIN_MAJOR} (= ${INSTR_TARGET_GCC_VERSION})")
  endif()
  list(JOIN deps ", " INSTR_DEB_DEPENDS)
endif()
set(CPACK_DEBIAN_PACKAGE_DEPENDS "${INSTR_DEB_DEPENDS}")
if(INSTR_PLUGIN_GCC11)
  instr_debian_gcc_dependency(gcc-11 INSTR_DEB_SUGGESTS)
  set(CPACK_DEBIAN_PACKAGE_SUGGESTS "${INSTR_DEB_SUGGESTS}")
endif()

# What Debian wants of every package (lintian): the copyright file and a
# changelog, gzip'd (-n: the same bytes for the same text), in
# share/doc/instr; and no ldconfig in the maintainer scripts, which CPack
# adds for any library under usr/lib, private directory (lib/instr) or not:
# cmake/debian/postinst and postrm, which do nothing, stand in for its own.
string(TIMESTAMP INSTR_CHANGELOG_DATE "%a, %d %b %Y %H:%M:%S +0000" UTC)
configure_file(${CMAKE_SOURCE_DIR}/cmake/debian/changelog.in ${CMAKE_BINARY_DIR}/debian/changelog @ONLY)
add_custom_command(OUTPUT ${CMAKE_BINARY_DIR}/debian/changelog.gz
  COMMAND gzip -9n -c ${CMAKE_BINARY_DIR}/debian/changelog > ${CMAKE_BINARY_DIR}/debian/changelog.gz
  DEPENDS ${CMAKE_BINARY_DIR}/debian/changelog VERBATIM)
add_custom_target(instr-debian-changelog ALL DEPENDS ${CMAKE_BINARY_DIR}/debian/changelog.gz)
install(FILES ${CMAKE_SOURCE_DIR}/cmake/debian/copyright ${CMAKE_BINARY_DIR}/debian/changelog.gz
        DESTINATION share/doc/instr)
set(CPACK_DEBIAN_PACKAGE_CONTROL_EXTRA ${CMAKE_SOURCE_DIR}/cmake/debian/postinst
                                       ${CMAKE_SOURCE_DIR}/cmake/debian/postrm)
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)
# Everything but the "mpi" component (instr-report-mpi, linked to one MPI):
# the package depends on no MPI.
set(CPACK_INSTALL_CMAKE_PROJECTS "${CMAKE_BINARY_DIR};${PROJECT_NAME};Unspecified;/")

include(CPack)
