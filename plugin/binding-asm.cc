/* binding-asm.cc - the assembly that binds a module's hooks to the runtime.
 *
 * Every instrumented object carries the same COMDAT group, so the linker
 * keeps one copy per executable or shared library and the program needs no
 * extra link flags (x86-64's instructions shown; each target's are in
 * plugin/arch/<cpu>.cc):
 *
 *   __instr_enter:   jmp *__instr_hook_table+8*INSTR_SLOT_ENTER(%rip)
 *   __instr_exit:    jmp *__instr_hook_table+8*INSTR_SLOT_EXIT(%rip)
 *   __instr_landing: jmp *__instr_hook_table+8*INSTR_SLOT_LANDING(%rip)
 *   __instr_call:    jmp *__instr_hook_table+8*INSTR_SLOT_CALL(%rip)
 *   __instr_return:  jmp *__instr_hook_table+8*INSTR_SLOT_RETURN(%rip)
 *   instr_event:     jmp *__instr_hook_table+8*INSTR_SLOT_EVENT(%rip)
 *   instr_counter:   jmp *__instr_hook_table+8*INSTR_SLOT_COUNTER(%rip)
 *   instr_start:     jmp *__instr_hook_table+8*INSTR_SLOT_START(%rip)
 *   instr_stop:      jmp *__instr_hook_table+8*INSTR_SLOT_STOP(%rip)
 *   __instr_ending:  jmp *__instr_hook_table+8*INSTR_SLOT_ENDING(%rip)
 *   __instr_nop:     ret
 *   __instr_count_early: movb $0, (%rsi); ret   (count mode, see hook-abi.h)
 *   __instr_hook_table: INSTR_SLOT_COUNT x .quad __instr_nop, but
 *   __instr_on:         slot INSTR_SLOT_ON, .quad 0 (switchable's flag)
 *                       slot INSTR_SLOT_COUNT_ARM, .quad __instr_count_early
 *   .Linstr_main_ref:   .quad __instr_main_here  (weak: 0 unless main's
 *                       unit, instrumented, defines it)
 *   .Linstr_late_units: .quad __start_instr_units, __stop_instr_units
 *                       (weak: the threshold units' records, 0 without)
 *   .Linstr_deferred:   .byte 0
 *   constructor:     slot INSTR_SLOT_COUNT_ARM = __instr_nop
 *                    if (.Linstr_main_ref && allocator_defined_here ())
 *                        { .Linstr_deferred = 1; return; }  (hook-abi.h)
 *                    __instr_bind_body(ABI)
 *   __instr_bind_late: (first in main)
 *                    if (.Linstr_deferred)
 *                        { .Linstr_deferred = 0;
 *                          __instr_bind_body(ABI | INSTR_BIND_LATE);
 *                          each unit record: slot INSTR_SLOT_UNIT(record) }
 *   __instr_bind_body(abi): (local)
 *                    if (getauxval(AT_SECURE)) return;   (see below)
 *                    h = dlopen(runtime, RTLD_NOW|RTLD_GLOBAL);
 *                    bind = dlsym(h, INSTR_BIND_SYMBOL);
 *                    bind(__instr_hook_table, INSTR_SLOT_COUNT, abi)
 *
 * Everything is hidden, so each module binds its own table and calls to the
 * trampolines never go through a PLT.  The table starts out pointing at the
 * no-op, so a program whose runtime is missing runs unchanged.  When objects
 * were compiled with different runtime= paths, the linker keeps whichever
 * group it sees first.
 *
 * Secure execution (set-user-ID, set-group-ID, file capabilities: the
 * kernel sets AT_SECURE): the runtime records nothing there anyway, and
 * loading it would run code from a path the user may control (the runtime
 * next to a plugin in a user-writable build tree) with the raised
 * privileges.  So the constructor loads nothing, unless the plugin was
 * built with INSTR_RECORD_SETUID (the runtime then records such programs):
 * then it loads the runtime only if the file and every directory above it
 * are owned by root and writable by nobody else (bind_ctor). */
#include "binding-asm.h"

#include "arch.h"
#include "hook-abi.h"

#include <dlfcn.h>
#include <elf.h>
#include <stdio.h>

#define GROUP "__instr_binding"

/* A .string operand: quotes, backslashes and anything unprintable escaped
 * (octal, which GAS reads as at most three digits). */
static std::string asm_string(const std::string &s)
{
    std::string out = "\"";
    for (unsigned char c : s) {
        if (c == '"' || c == '\\') {
            out += '\\';
            out += (char)c;
        } else if (c < 0x20 || c >= 0x7f) {
            char oct[8];
            snprintf(oct, sizeof oct, "\\%03o", c);
            out += oct;
        } else {
            out += (char)c;
        }
    }
    return out + "\"";
}

static std::string hidden_weak(const char *sym, const char *type)
{
    return std::string("\t.weak\t") + sym + "\n\t.hidden\t" + sym + "\n\t.type\t" + sym +
           ", " + type + "\n";
}

static std::string trampoline(const char *sym, unsigned slot)
{
    return hidden_weak(sym, "@function") + sym + ":\n" + instr_arch_slot_jump(slot) + "\t.size\t" + sym +
           ", .-" + sym + "\n";
}

/* The constructor, the late binding and the body they share
 * (plugin/arch/<cpu>.cc).  Any failure means no binding: the runtime
 * reports its own problems, and a missing runtime is a normal way to run
 * an instrumented program. */
static std::string bind_code(unsigned dlopen_flags)
{
    return "\t.type\t__instr_bind_ctor, @function\n__instr_bind_ctor:\n" + instr_arch_bind_ctor() +
           "\t.size\t__instr_bind_ctor, .-__instr_bind_ctor\n" + hidden_weak(INSTR_BIND_LATE_HOOK, "@function") +
           INSTR_BIND_LATE_HOOK ":\n" + instr_arch_bind_late() + "\t.size\t" INSTR_BIND_LATE_HOOK
           ", .-" INSTR_BIND_LATE_HOOK "\n\t.type\t__instr_bind_body, @function\n__instr_bind_body:\n" +
           instr_arch_bind_body(dlopen_flags) + "\t.size\t__instr_bind_body, .-__instr_bind_body\n";
}

/* Defined in the unit of an instrumented main only: the binding of its
 * module may defer to main (hook-abi.h, "Deferred binding").  Weak and
 * hidden, as the group's reference to it. */
std::string instr_main_here_asm(void)
{
    return "\t/* instr: main is instrumented in this module, see hook-abi.h */\n"
           "\t.pushsection .rodata\n" +
           hidden_weak(INSTR_MAIN_HERE, "@object") + INSTR_MAIN_HERE ":\n\t.byte\t1\n\t.size\t" INSTR_MAIN_HERE
           ", 1\n\t.popsection\n";
}

/* The unit's threshold record and the constructor that hands it to the
 * runtime (hook-abi.h, INSTR_SLOT_UNIT).  Local to the unit, not COMDAT:
 * every unit has its own.  The constructor jumps straight through the hook
 * table with the descriptor as the only argument, so the stack it runs on
 * is the one its caller aligned. */
std::string instr_unit_asm(unsigned threshold, unsigned left_out, unsigned instrumented,
                           const std::string &file)
{
    char init_array[64];
    snprintf(init_array, sizeof init_array, ".init_array.%05u", INSTR_UNIT_PRIORITY);
    std::string s = "\t/* instr: threshold record of this unit, see hook-abi.h */\n";
    s += "\t.pushsection .text\n";
    s += ".Linstr_unit_ctor:\n" + instr_arch_unit_ctor(INSTR_SLOT_UNIT);
    s += "\t.section .rodata\n\t.p2align 3\n.Linstr_unit:\n";
    s += "\t.byte\t" + std::to_string(INSTR_HOOK_ABI_VERSION) + ", 0, 0, 0\n";
    s += "\t.long\t" + std::to_string(threshold) + ", " + std::to_string(left_out) + ", " +
         std::to_string(instrumented) + "\n";
    s += "\t.string\t" + asm_string(file) + "\n";
    s += std::string("\t.section ") + init_array + ",\"aw\",@init_array\n";
    s += "\t.p2align 3\n\t.quad\t.Linstr_unit_ctor\n";
    /* For a late binding, which sends them again (hook-abi.h). */
    s += "\t.section " INSTR_UNIT_SECTION ",\"aw\"\n\t.p2align 3\n\t.quad\t.Linstr_unit\n";
    s += "\t.popsection\n";
    return s;
}

std::string instr_binding_asm(const std::string &runtime_path)
{
    char init_array[64];
    snprintf(init_array, sizeof init_array, ".init_array.%05u", INSTR_BIND_PRIORITY);

    std::string s = "\t/* instr: hook binding, see hook-abi.h */\n";
    s += "\t.pushsection .text." GROUP ",\"axG\",@progbits," GROUP ",comdat\n";
    s += trampoline(INSTR_HOOK_ENTER, INSTR_SLOT_ENTER);
    s += trampoline(INSTR_HOOK_EXIT, INSTR_SLOT_EXIT);
    s += trampoline(INSTR_HOOK_LANDING, INSTR_SLOT_LANDING);
    s += trampoline(INSTR_HOOK_CALL, INSTR_SLOT_CALL);
    s += trampoline(INSTR_HOOK_RETURN, INSTR_SLOT_RETURN);
    /* The public API (include/instr/instr.h): weak, so a program that
     * defines its own instr_event keeps it. */
    s += trampoline(INSTR_API_EVENT, INSTR_SLOT_EVENT);
    s += trampoline(INSTR_API_COUNTER, INSTR_SLOT_COUNTER);
    s += trampoline(INSTR_API_START, INSTR_SLOT_START);
    s += trampoline(INSTR_API_STOP, INSTR_SLOT_STOP);
    s += trampoline(INSTR_HOOK_ENDING, INSTR_SLOT_ENDING);
    s += hidden_weak(INSTR_HOOK_NOP, "@function");
    s += INSTR_HOOK_NOP ":\n" + instr_arch_nop() + "\t.size\t" INSTR_HOOK_NOP ", .-" INSTR_HOOK_NOP "\n";
    /* Slot INSTR_SLOT_COUNT_ARM until the constructor runs: a count-mode
     * thread armed that early (an ifunc resolver, another module's
     * constructor calling in) is not armed yet: the byte goes back to 0. */
    s += hidden_weak(INSTR_COUNT_EARLY, "@function");
    s += INSTR_COUNT_EARLY ":\n" + instr_arch_count_early() + "\t.size\t" INSTR_COUNT_EARLY ", .-" INSTR_COUNT_EARLY
         "\n";

    s += bind_code(RTLD_NOW | RTLD_GLOBAL);

    s += "\t.section .rodata." GROUP ",\"aG\",@progbits," GROUP ",comdat\n";
    s += ".Linstr_runtime_path:\n\t.string\t" + asm_string(runtime_path) + "\n";
    s += ".Linstr_bind_symbol:\n\t.string\t" + asm_string(INSTR_BIND_SYMBOL) + "\n";
    /* The allocator's names, ended by an empty one: the ones the dynamic
     * linker calls while it loads a library. */
    s += ".Linstr_alloc_names:\n\t.string\t\"malloc\"\n\t.string\t\"calloc\"\n\t.string\t\"realloc\"\n"
         "\t.string\t\"free\"\n\t.byte\t0\n";

    /* Writable: the runtime fills it in, and its initial addresses need
     * relocating in PIE and shared objects. */
    s += "\t.section .data.rel.local." GROUP ",\"awG\",@progbits," GROUP ",comdat\n";
    s += "\t.p2align 3\n";
    s += hidden_weak(INSTR_HOOK_TABLE, "@object");
    s += INSTR_HOOK_TABLE ":\n";
    for (unsigned i = 0; i < INSTR_SLOT_COUNT; i++) {
        if (i == INSTR_SLOT_ON)
            s += hidden_weak(INSTR_SWITCH_ON, "@object") + INSTR_SWITCH_ON ":\n\t.quad\t0\n\t.size\t" INSTR_SWITCH_ON
                 ", 8\n";
        else if (i == INSTR_SLOT_COUNT_ARM)
            s += "\t.quad\t" INSTR_COUNT_EARLY "\n";
        else
            s += "\t.quad\t" INSTR_HOOK_NOP "\n";
    }
    s += "\t.size\t" INSTR_HOOK_TABLE ", " + std::to_string(8 * INSTR_SLOT_COUNT) + "\n";
    /* A weak undefined hidden symbol is 0 at link time: no dynamic
     * relocation, in an executable (PIE or not) or a shared object. */
    s += hidden_weak(INSTR_MAIN_HERE, "@object");
    s += ".Linstr_main_ref:\n\t.quad\t" INSTR_MAIN_HERE "\n";
    s += hidden_weak("__start_" INSTR_UNIT_SECTION, "@object") + hidden_weak("__stop_" INSTR_UNIT_SECTION, "@object");
    s += ".Linstr_late_units:\n\t.quad\t__start_" INSTR_UNIT_SECTION ", __stop_" INSTR_UNIT_SECTION "\n";
    s += ".Linstr_deferred:\n\t.byte\t0\n";

    s += std::string("\t.section ") + init_array + ",\"awG\",@init_array," GROUP ",comdat\n";
    s += "\t.p2align 3\n\t.quad\t__instr_bind_ctor\n";
    s += "\t.popsection\n";
    return s;
}
