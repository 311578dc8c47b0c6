/* arch.h - what the plugin emits that differs by the target's instruction set.
 *
 * The plugin runs inside cc1 and writes assembly for cc1's target, which
 * need not be the machine cc1 runs on (a cross compiler).  Each target is
 * one file, plugin/arch/<cpu>.cc; the build compiles the one of the GCC the
 * plugin is built for (plugin/CMakeLists.txt: the cpu of `gcc -dumpmachine`),
 * so a new target is one file and no line elsewhere.  The portable files
 * (binding-asm.cc, count-mode.cc) lay out sections, symbols and data; these
 * functions give the instructions.  Every string ends in a newline. */
#ifndef INSTR_PLUGIN_ARCH_H
#define INSTR_PLUGIN_ARCH_H

#include <string>

/* The target's name, for messages ("x86-64", "aarch64"). */
extern const char *const instr_arch_name;

/* The body of a trampoline: a tail jump through slot `slot` of
 * INSTR_HOOK_TABLE, every argument register untouched. */
std::string instr_arch_slot_jump(unsigned slot);
/* The body of INSTR_HOOK_NOP: return. */
std::string instr_arch_nop(void);
/* The body of INSTR_COUNT_EARLY: the byte at the second argument set to 0,
 * return. */
std::string instr_arch_count_early(void);
/* The binding (binding-asm.cc's diagram, hook-abi.h "Deferred binding").
 * The constructor's body: slot INSTR_SLOT_COUNT_ARM made INSTR_HOOK_NOP;
 * then, if the word .Linstr_main_ref is not 0 and for one of the
 * NUL-separated names at .Linstr_alloc_names (ended by an empty one)
 * dlsym (RTLD_DEFAULT) differs from dlsym (RTLD_NEXT), the byte
 * .Linstr_deferred set to 1 and return; else a tail jump to
 * __instr_bind_body with INSTR_HOOK_ABI_VERSION. */
std::string instr_arch_bind_ctor(void);
/* The body of INSTR_BIND_LATE_HOOK: if .Linstr_deferred is set, it
 * cleared, a call of __instr_bind_body with INSTR_HOOK_ABI_VERSION |
 * INSTR_BIND_LATE, then slot INSTR_SLOT_UNIT called with each address of
 * the array from .Linstr_late_units' first word to its second (the units'
 * threshold records, INSTR_UNIT_SECTION); else return. */
std::string instr_arch_bind_late(void);
/* The body of __instr_bind_body, entered as a function with bind's abi
 * argument as its first: unless getauxval (AT_SECURE),
 * dlopen(.Linstr_runtime_path, dlopen_flags), dlsym of
 * .Linstr_bind_symbol, and the call bind(INSTR_HOOK_TABLE,
 * INSTR_SLOT_COUNT, abi); any failure returns. */
std::string instr_arch_bind_body(unsigned dlopen_flags);
/* The body of the unit's constructor: a tail jump through slot `slot` with
 * the address of the local label .Linstr_unit as the only argument. */
std::string instr_arch_unit_ctor(unsigned slot);

/* The hard register of a call's first integer argument (RTL's regno):
 * pass-empty-sites.cc finds the site descriptor there.  A number, not
 * GCC's macro: these files build without GCC's headers too (the survival
 * tests' binding-gen prints the binding assembly). */
unsigned instr_arch_first_arg_regno(void);

/* Count mode (count-mode.cc, hook-abi.h "Count mode"): NULL where the
 * target has it, else why not (the plugin then refuses mode=count, and
 * the functions below are not called). */
const char *instr_arch_count_refusal(void);
/* An asm statement of count mode: its template, the constraint of its
 * memory operand %0 (NULL: none), how many scratch general registers it
 * needs, given to it as early-clobber outputs after the memory operand
 * (%1, %2...; from %0 where there is no memory operand) so that the
 * compiler allocates around them, and the registers it clobbers beside
 * the flags (a NULL-terminated list, or NULL). */
struct instr_arch_count_asm {
    const char *text;
    const char *mem;
    unsigned scratch;
    const char *const *clobbers;
};
/* The increment: adds 1 to the 64-bit memory operand %0 so that a signal
 * handler of the thread that counts between its load and its store loses
 * no count (x86-64: one instruction; aarch64: a load/store-exclusive loop
 * that retries). */
const struct instr_arch_count_asm *instr_arch_count_increment(void);
/* The arming test: if the TLS byte INSTR_COUNT_ARMED is 0, call
 * INSTR_COUNT_ARM, with every register but the scratch ones and the flags
 * kept. */
const struct instr_arch_count_asm *instr_arch_count_arming(void);
/* The 8-byte field of a count record holding sym's offset from the
 * thread pointer (lines of assembly; runtime/arch/<cpu>/arch-inline.h's
 * instr__count_tls_offset reads it back). */
std::string instr_arch_tls_offset(const char *sym);
/* The bodies of INSTR_COUNT_ARM (sets the byte, keeps the call-clobbered
 * registers and the flags, calls slot INSTR_SLOT_COUNT_ARM with
 * (INSTR_COUNT_MODULE, &byte, thread pointer)) and of INSTR_COUNT_THREAD
 * (a tail jump through slot INSTR_SLOT_COUNT_THREAD with
 * (INSTR_COUNT_MODULE, &INSTR_COUNT_DELTA)). */
std::string instr_arch_count_arm(void);
std::string instr_arch_count_thread(void);

#endif
