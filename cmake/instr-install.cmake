# What `cmake --install build --prefix P` puts under P:
#
#   bin/instr-report, bin/instr-dump,     the tools (INSTR_PROGRAMS below)
#   bin/instr-sample
#   bin/instr-report-mpi                  instr-report over MPI (where an MPI was found;
#                                         not in the Debian package)
#   lib/instr/instr.so                    the plugin users pass to -fplugin= (the
#   lib/instr/instr-gccNN.so              version shim) and the plugin per GCC
#   lib/instr/libinstr-rt.so              the runtime, beside the plugin
#   include/instr/instr.h                 the event and counter API
#   lib/cmake/instr/                      find_package(instr): instr::instr, instr_instrument()
#   lib/pkgconfig/instr.pc                pkg-config --variable=plugin instr
#   share/man/man1, share/man/man7        a page per tool (instr-report(1),
#                                         instr-dump(1), instr-sample(1)), instr(7)
#   share/bash-completion/completions/    completion for each tool
#
# The tree is relocatable: the plugin derives the runtime's path from its
# own location each time it compiles (plugin/options.cc), instrConfig.cmake
# from its own.  instr.pc alone holds P, written when it is installed, as
# every .pc file does: pkg-config prints paths as they are, so a prefix
# made from ${pcfiledir} would print lib/pkgconfig/../../lib/instr/instr.so.
# After moving the tree, `pkg-config --define-prefix` derives P from where
# instr.pc now is.
# `lib`, not GNUInstallDirs' multiarch `lib/x86_64-linux-gnu`: the same
# layout under every prefix keeps those relative paths fixed, and
# lib/instr/ is private to instr anyway.

set(INSTR_INSTALL_BINDIR bin)
set(INSTR_INSTALL_PLUGINDIR lib/instr)
set(INSTR_INSTALL_INCLUDEDIR include)
set(INSTR_INSTALL_CMAKEDIR lib/cmake/instr)
set(INSTR_INSTALL_PKGCONFIGDIR lib/pkgconfig)
set(INSTR_INSTALL_MANDIR share/man)
set(INSTR_INSTALL_COMPLETIONDIR share/bash-completion/completions)

# Every command users run, each with its man page docs/man/<name>.1 and
# its bash completion completion/<name>.bash.  A new tool is one more name
# here; a name whose target this build does not define is skipped, page,
# completion and all.
# Man pages are installed gzip'd (-n: no name or time inside, so the same
# page gives the same bytes), as man-db reads them and Debian wants them.
function(instr_install_man page section)
  set(gz ${CMAKE_BINARY_DIR}/man/${page}.gz)
  add_custom_command(OUTPUT ${gz}
    COMMAND ${CMAKE_COMMAND} -E make_directory ${CMAKE_BINARY_DIR}/man
    COMMAND gzip -9n -c ${CMAKE_SOURCE_DIR}/docs/man/${page} > ${gz}
    DEPENDS ${CMAKE_SOURCE_DIR}/docs/man/${page} VERBATIM)
  string(MAKE_C_IDENTIFIER "instr-man-${page}" target)
  add_custom_target(${target} ALL DEPENDS ${gz})
  install(FILES ${gz} DESTINATION ${INSTR_INSTALL_MANDIR}/man${section})
endfunction()

set(INSTR_PROGRAMS instr-report instr-dump instr-sample)
foreach(program IN LISTS INSTR_PROGRAMS)
  if(TARGET ${program})
    install(TARGETS ${program} RUNTIME DESTINATION ${INSTR_INSTALL_BINDIR})
    instr_install_man(${program}.1 1)
    # bash-completion loads share/bash-completion/completions/<command> on
    # first use from each directory of XDG_DATA_DIRS (default
    # /usr/local/share and /usr/share); another prefix adds P/share there,
    # or sources the file.
    install(FILES ${CMAKE_SOURCE_DIR}/completion/${program}.bash
            DESTINATION ${INSTR_INSTALL_COMPLETIONDIR} RENAME ${program})
  endif()
endforeach()

# instr-report over MPI (tools/, where an MPI's mpicc is found), in the
# install tree; component "mpi", which the Debian package leaves out so
# that it depends on no MPI (instr-package.cmake).
if(TARGET instr-report-mpi)
  install(TARGETS instr-report-mpi RUNTIME DESTINATION ${INSTR_INSTALL_BINDIR} COMPONENT mpi)
  set(gz ${CMAKE_BINARY_DIR}/man/instr-report-mpi.1.gz)
  add_custom_command(OUTPUT ${gz}
    COMMAND ${CMAKE_COMMAND} -E make_directory ${CMAKE_BINARY_DIR}/man
    COMMAND gzip -9n -c ${CMAKE_SOURCE_DIR}/docs/man/instr-report-mpi.1 > ${gz}
    DEPENDS ${CMAKE_SOURCE_DIR}/docs/man/instr-report-mpi.1 VERBATIM)
  add_custom_target(instr-man-instr-report-mpi ALL DEPENDS ${gz})
  install(FILES ${gz} DESTINATION ${INSTR_INSTALL_MANDIR}/man1 COMPONENT mpi)
  install(FILES ${CMAKE_SOURCE_DIR}/completion/instr-report.bash
          DESTINATION ${INSTR_INSTALL_COMPLETIONDIR} RENAME instr-report-mpi COMPONENT mpi)
endif()

# Not executable: cc1 dlopen()s plugins, and Debian wants 0644 for them.
# Files, not targets, so stripped here when the install strips targets
# (`cmake --install --strip`, cpack: CPACK_STRIP_FILES).
# A cross build's plugins are for the cross compiler, a program of the
# build machine (cmake/aarch64-linux-gnu.cmake): not for the target's
# install tree, whose GCC loads only a plugin built for it, the one of
# plugin-target/ when INSTR_TARGET_ROOT gave its headers
# (plugin/CMakeLists.txt), else none.
set(INSTR_INSTALLED_PLUGINS ${INSTR_PLUGIN_FILES})
if(CMAKE_CROSSCOMPILING)
  set(INSTR_INSTALLED_PLUGINS ${INSTR_TARGET_PLUGIN_FILES})
endif()
install(FILES ${INSTR_INSTALLED_PLUGINS} DESTINATION ${INSTR_INSTALL_PLUGINDIR})
foreach(plugin IN LISTS INSTR_INSTALLED_PLUGINS)
  get_filename_component(name ${plugin} NAME)
  if(CMAKE_STRIP)
    install(CODE "if(CMAKE_INSTALL_DO_STRIP)
  execute_process(COMMAND \"${CMAKE_STRIP}\" --strip-unneeded
                  \"\$ENV{DESTDIR}\${CMAKE_INSTALL_PREFIX}/${INSTR_INSTALL_PLUGINDIR}/${name}\")
endif()")
  endif()
endforeach()
install(TARGETS instr-rt LIBRARY DESTINATION ${INSTR_INSTALL_PLUGINDIR})
install(FILES ${CMAKE_SOURCE_DIR}/include/instr/instr.h DESTINATION ${INSTR_INSTALL_INCLUDEDIR}/instr)

# find_package(instr).  The config file finds the prefix by walking up
# from its own directory, as many levels as INSTR_INSTALL_CMAKEDIR has.
include(CMakePackageConfigHelpers)
string(REGEX REPLACE "[^/]+" ".." INSTR_CMAKEDIR_TO_PREFIX "${INSTR_INSTALL_CMAKEDIR}")
configure_file(${CMAKE_SOURCE_DIR}/cmake/instrConfig.cmake.in
               ${CMAKE_BINARY_DIR}/install/instrConfig.cmake @ONLY)
# 0.x: a minor release may change what users see, so it must match.
write_basic_package_version_file(${CMAKE_BINARY_DIR}/install/instrConfigVersion.cmake
                                 VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_BINARY_DIR}/install/instrConfig.cmake
              ${CMAKE_BINARY_DIR}/install/instrConfigVersion.cmake
              ${CMAKE_SOURCE_DIR}/cmake/instr-instrument.cmake
        DESTINATION ${INSTR_INSTALL_CMAKEDIR})

# Configured at install time: CMAKE_INSTALL_PREFIX is then the prefix
# being installed to (`cmake --install --prefix P`, cpack's /usr).
set(INSTR_PC_PREFIX "@INSTR_PC_PREFIX@")  # left for the install-time pass
configure_file(${CMAKE_SOURCE_DIR}/cmake/instr.pc.in ${CMAKE_BINARY_DIR}/install/instr.pc.in @ONLY)
install(CODE "
  set(INSTR_PC_PREFIX \"\${CMAKE_INSTALL_PREFIX}\")
  configure_file(\"${CMAKE_BINARY_DIR}/install/instr.pc.in\"
                 \"${CMAKE_BINARY_DIR}/install/instr.pc\" @ONLY)")
install(FILES ${CMAKE_BINARY_DIR}/install/instr.pc DESTINATION ${INSTR_INSTALL_PKGCONFIGDIR})

instr_install_man(instr.7 7)
