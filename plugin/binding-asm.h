/* binding-asm.h - the per-module code that binds hooks to the runtime. */
#ifndef INSTR_PLUGIN_BINDING_ASM_H
#define INSTR_PLUGIN_BINDING_ASM_H

#include <string>

/* The assembly (trampolines, hook table, no-op, binding constructor, all in
 * one COMDAT group) that an instrumented object carries; see hook-abi.h. */
std::string instr_binding_asm(const std::string &runtime_path);

/* The definition of INSTR_MAIN_HERE, for the unit whose main is
 * instrumented (hook-abi.h, "Deferred binding"). */
std::string instr_main_here_asm(void);

/* The unit's threshold record (struct instr_unit_desc) and its constructor;
 * emitted after instr_binding_asm, which defines the hook table. */
std::string instr_unit_asm(unsigned threshold, unsigned left_out, unsigned instrumented,
                           const std::string &file);

#endif
