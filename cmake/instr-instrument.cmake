# instr_instrument(<target> [PLUGIN <path>] [ARGS <key=value>...])
#
# Compiles <target>'s C and C++ sources with the instr GCC plugin.  This is
# all a user's build needs: the plugin makes every object find and load the
# runtime by itself, so there is no extra link flag.  ARGS become
# -fplugin-arg-instr-<arg>.
#
# One definition for two users: the source tree's build (examples, tests),
# where INSTR_PLUGIN and INSTR_PLUGIN_TARGETS come from plugin/, and an
# installed instr, whose instrConfig.cmake sets INSTR_PLUGIN and
# INSTR_INCLUDE_DIRS before including this file.
function(instr_instrument target)
  cmake_parse_arguments(PARSE_ARGV 1 I "" "PLUGIN" "ARGS")
  if(NOT I_PLUGIN)
    set(I_PLUGIN ${INSTR_PLUGIN})
  endif()
  if(NOT I_PLUGIN)
    message(FATAL_ERROR "instr_instrument(${target}): no plugin: call find_package(instr) "
                        "in this directory or a parent, or pass PLUGIN <path>")
  endif()
  # C and C++ only: a target's assembly or other sources stay as they are.
  set(lang "$<COMPILE_LANGUAGE:C,CXX>")
  set(flags "$<${lang}:-fplugin=${I_PLUGIN}>")
  foreach(arg IN LISTS I_ARGS)
    list(APPEND flags "$<${lang}:-fplugin-arg-instr-${arg}>")
  endforeach()
  target_compile_options(${target} PRIVATE ${flags})
  if(INSTR_INCLUDE_DIRS)
    target_include_directories(${target} PRIVATE ${INSTR_INCLUDE_DIRS})
  endif()
  if(INSTR_PLUGIN_TARGETS)
    add_dependencies(${target} ${INSTR_PLUGIN_TARGETS} instr-rt)
  endif()
  # No OBJECT_DEPENDS on the plugin file: it is a source property, so it
  # would reach every target sharing a source, including uninstrumented
  # ones that do not wait for the plugin.  After changing the plugin,
  # rebuild instrumented targets with --clean-first.
endfunction()
