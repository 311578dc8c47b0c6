# instr_instrument(<target> [PLUGIN <path>] [ARGS <key=value>...])
#
# Compiles <target> with the instr GCC plugin.  This is all a user's build
# needs: the plugin makes every object find and load the runtime by itself,
# so there is no extra link flag.  ARGS become -fplugin-arg-instr-<arg>.
function(instr_instrument target)
  cmake_parse_arguments(PARSE_ARGV 1 I "" "PLUGIN" "ARGS")
  if(NOT I_PLUGIN)
    set(I_PLUGIN ${INSTR_PLUGIN})
  endif()
  set(flags -fplugin=${I_PLUGIN})
  foreach(arg IN LISTS I_ARGS)
    list(APPEND flags -fplugin-arg-instr-${arg})
  endforeach()
  target_compile_options(${target} PRIVATE ${flags})
  add_dependencies(${target} ${INSTR_PLUGIN_TARGETS} instr-rt)
  # No OBJECT_DEPENDS on the plugin file: it is a source property, so it
  # would reach every target sharing a source, including uninstrumented
  # ones that do not wait for the plugin.  After changing the plugin,
  # rebuild instrumented targets with --clean-first.
endfunction()
