/* x86_64.cc - the instructions the plugin emits for x86-64 targets
 * (plugin/arch.h).  The trampolines, the no-op and the constructors begin
 * with endbr64: the table holds the runtime's addresses and the
 * trampolines are only called directly, but the no-op and the constructors
 * are reached indirectly, and a landing pad for IBT costs nothing
 * elsewhere. */
#include "../arch.h"

#include "hook-abi.h"

#include <elf.h>
#include <stdio.h>

const char *const instr_arch_name = "x86-64";

static std::string slot_operand(unsigned slot)
{
    return std::string(INSTR_HOOK_TABLE "+") + std::to_string(8 * slot) + "(%rip)";
}

std::string instr_arch_slot_jump(unsigned slot)
{
    return "\tendbr64\n\tjmp\t*" + slot_operand(slot) + "\n";
}

std::string instr_arch_nop(void)
{
    return "\tendbr64\n\tret\n";
}

std::string instr_arch_count_early(void)
{
    return "\tendbr64\n\tmovb\t$0, (%rsi)\n\tret\n";
}

/* Entered with %rsp 8 below a 16-byte boundary (the return address); the
 * frames keep the calls aligned. */
std::string instr_arch_bind_ctor(void)
{
    return "\tendbr64\n"
           /* From here on, unbound is for good: count mode's arming slot
            * stops undoing its callers' arming (hook-abi.h). */
           "\tleaq\t" INSTR_HOOK_NOP "(%rip), %rax\n"
           "\tmovq\t%rax, " + slot_operand(INSTR_SLOT_COUNT_ARM) + "\n"
           /* Main instrumented elsewhere, or not at all: bind now. */
           "\tcmpq\t$0, .Linstr_main_ref(%rip)\n"
           "\tje\t.Linstr_bind_now\n"
           /* %rbx: the allocator's name, %r12: dlsym (RTLD_DEFAULT). */
           "\tpushq\t%rbx\n"
           "\tpushq\t%r12\n"
           "\tsubq\t$8, %rsp\n"
           "\tleaq\t.Linstr_alloc_names(%rip), %rbx\n"
           ".Linstr_bind_probe:\n"
           "\txorl\t%edi, %edi\n" /* RTLD_DEFAULT */
           "\tmovq\t%rbx, %rsi\n"
           "\tcall\tdlsym@PLT\n"
           "\tmovq\t%rax, %r12\n"
           "\tmovq\t$-1, %rdi\n" /* RTLD_NEXT */
           "\tmovq\t%rbx, %rsi\n"
           "\tcall\tdlsym@PLT\n"
           "\tcmpq\t%rax, %r12\n"
           "\tjne\t.Linstr_bind_defer\n"
           ".Linstr_bind_skip:\n"
           "\taddq\t$1, %rbx\n"
           "\tcmpb\t$0, -1(%rbx)\n"
           "\tjne\t.Linstr_bind_skip\n"
           "\tcmpb\t$0, (%rbx)\n"
           "\tjne\t.Linstr_bind_probe\n"
           "\taddq\t$8, %rsp\n"
           "\tpopq\t%r12\n"
           "\tpopq\t%rbx\n"
           ".Linstr_bind_now:\n"
           "\tmovl\t$" + std::to_string(INSTR_HOOK_ABI_VERSION) + ", %edi\n"
           "\tjmp\t__instr_bind_body\n"
           ".Linstr_bind_defer:\n"
           "\tmovb\t$1, .Linstr_deferred(%rip)\n"
           "\taddq\t$8, %rsp\n"
           "\tpopq\t%r12\n"
           "\tpopq\t%rbx\n"
           "\tret\n";
}

/* Then the threshold records the units' constructors sent to the unbound
 * table: %rbx walks .Linstr_late_units' array up to %r12. */
std::string instr_arch_bind_late(void)
{
    return "\tendbr64\n"
           "\tcmpb\t$0, .Linstr_deferred(%rip)\n"
           "\tjne\t.Linstr_bind_late\n"
           "\tret\n"
           ".Linstr_bind_late:\n"
           "\tmovb\t$0, .Linstr_deferred(%rip)\n"
           "\tpushq\t%rbx\n"
           "\tpushq\t%r12\n"
           "\tsubq\t$8, %rsp\n"
           "\tmovl\t$" + std::to_string(INSTR_HOOK_ABI_VERSION | INSTR_BIND_LATE) + ", %edi\n"
           "\tcall\t__instr_bind_body\n"
           "\tmovq\t.Linstr_late_units(%rip), %rbx\n"
           "\tmovq\t.Linstr_late_units+8(%rip), %r12\n"
           ".Linstr_bind_unit:\n"
           "\tcmpq\t%r12, %rbx\n"
           "\tjae\t.Linstr_bind_units_done\n"
           "\tmovq\t(%rbx), %rdi\n"
           "\tcall\t*" + slot_operand(INSTR_SLOT_UNIT) + "\n"
           "\taddq\t$8, %rbx\n"
           "\tjmp\t.Linstr_bind_unit\n"
           ".Linstr_bind_units_done:\n"
           "\taddq\t$8, %rsp\n"
           "\tpopq\t%r12\n"
           "\tpopq\t%rbx\n"
           "\tret\n";
}

/* Entered as a function (a call or a tail jump), bind's abi argument in %edi,
 * kept on the stack. */
std::string instr_arch_bind_body(unsigned dlopen_flags)
{
    std::string s;
#ifndef INSTR_RECORD_SETUID
    const char *abi = "(%rsp)";
    s += "\tpushq\t%rdi\n"
         "\tmovl\t$" + std::to_string(AT_SECURE) + ", %edi\n"
         "\tcall\tgetauxval@PLT\n"
         "\ttestq\t%rax, %rax\n"
         "\tjne\t.Linstr_bind_done\n"
         "\tleaq\t.Linstr_runtime_path(%rip), %rdi\n";
#else
    /* Built to record secure-execution programs: in one, the runtime is
     * loaded only from a path where only root can write.  The path is
     * resolved (realpath: symbolic links followed), then the file and
     * every directory above it must be owned by root and not writable by
     * group or others (stat by system call: its layout is the kernel's,
     * whatever the C library's version); the resolved path is loaded.
     *
     *   frame: 0(%rsp) resolved path [4096], 4096(%rsp) the path cut at
     *   its last '/' step by step [4096], 8192(%rsp) struct stat [144]
     *   (x86-64: st_mode at 24, st_uid at 28), 8344(%rsp) the saved %rbx,
     *   8352(%rsp) bind's abi argument;
     *   %rbx: the path given to dlopen. */
    const char *abi = "8352(%rsp)";
    s += "\tpushq\t%rdi\n"
         "\tpushq\t%rbx\n"
         "\tsubq\t$8344, %rsp\n"
         "\tleaq\t.Linstr_runtime_path(%rip), %rbx\n"
         "\tmovl\t$" + std::to_string(AT_SECURE) + ", %edi\n"
         "\tcall\tgetauxval@PLT\n"
         "\ttestq\t%rax, %rax\n"
         "\tje\t.Linstr_bind_load\n"
         "\tmovq\t%rbx, %rdi\n"
         "\tmovq\t%rsp, %rsi\n"
         "\tcall\trealpath@PLT\n"
         "\ttestq\t%rax, %rax\n"
         "\tje\t.Linstr_bind_done\n"
         "\tmovq\t%rsp, %rbx\n"
         "\tleaq\t4096(%rsp), %rdi\n"
         "\tmovq\t%rsp, %rsi\n"
         "\tcall\tstrcpy@PLT\n"
         ".Linstr_bind_check:\n"
         "\tmovl\t$4, %eax\n" /* SYS_stat */
         "\tleaq\t4096(%rsp), %rdi\n"
         "\tleaq\t8192(%rsp), %rsi\n"
         "\tsyscall\n"
         "\ttestq\t%rax, %rax\n"
         "\tjne\t.Linstr_bind_done\n"
         "\tcmpl\t$0, 8220(%rsp)\n"  /* st_uid: root */
         "\tjne\t.Linstr_bind_done\n"
         "\ttestl\t$0x12, 8216(%rsp)\n" /* st_mode: S_IWGRP | S_IWOTH */
         "\tjne\t.Linstr_bind_done\n"
         "\tleaq\t4096(%rsp), %rdi\n"
         "\tmovl\t$47, %esi\n" /* '/' */
         "\tcall\tstrrchr@PLT\n"
         "\tleaq\t4096(%rsp), %rdx\n"
         "\tcmpq\t%rdx, %rax\n"
         "\tjne\t.Linstr_bind_up\n"
         "\tcmpb\t$0, 4097(%rsp)\n" /* "/" itself checked: done */
         "\tje\t.Linstr_bind_load\n"
         "\tmovb\t$0, 4097(%rsp)\n" /* "/x": check "/" next */
         "\tjmp\t.Linstr_bind_check\n"
         ".Linstr_bind_up:\n"
         "\tmovb\t$0, (%rax)\n"
         "\tjmp\t.Linstr_bind_check\n"
         ".Linstr_bind_load:\n"
         "\tmovq\t%rbx, %rdi\n";
#endif
    char flags[32];
    snprintf(flags, sizeof flags, "$%#x", dlopen_flags);
    s += "\tmovl\t" + std::string(flags) + ", %esi\n"
         "\tcall\tdlopen@PLT\n"
         "\ttestq\t%rax, %rax\n"
         "\tje\t.Linstr_bind_done\n"
         "\tmovq\t%rax, %rdi\n"
         "\tleaq\t.Linstr_bind_symbol(%rip), %rsi\n"
         "\tcall\tdlsym@PLT\n"
         "\ttestq\t%rax, %rax\n"
         "\tje\t.Linstr_bind_done\n"
         "\tleaq\t" INSTR_HOOK_TABLE "(%rip), %rdi\n"
         "\tmovl\t$" + std::to_string(INSTR_SLOT_COUNT) + ", %esi\n"
         "\tmovl\t" + abi + ", %edx\n"
         "\tcall\t*%rax\n"
         ".Linstr_bind_done:\n";
#ifndef INSTR_RECORD_SETUID
    s += "\taddq\t$8, %rsp\n";
#else
    s += "\taddq\t$8344, %rsp\n"
         "\tpopq\t%rbx\n"
         "\taddq\t$8, %rsp\n";
#endif
    s += "\tret\n";
    return s;
}

std::string instr_arch_unit_ctor(unsigned slot)
{
    return "\tendbr64\n\tleaq\t.Linstr_unit(%rip), %rdi\n\tjmp\t*" + slot_operand(slot) + "\n";
}

const char *instr_arch_count_refusal(void)
{
    return NULL;
}

/* One `addq $1, mem` at every optimisation level: -O0 would load, add and
 * store.  The TLS form's operand is %fs:cell@tpoff, the per-thread
 * copies' (cell + d) in a register. */
const struct instr_arch_count_asm *instr_arch_count_increment(void)
{
    static const instr_arch_count_asm a = {"addq\t$1, %0", "m", 0, NULL};
    return &a;
}

/* Only the compare and a branch on the common path; the call steps over
 * the 128-byte red zone, since a leaf function may keep data below the
 * stack pointer, and the trampoline keeps the general registers, the
 * flags and xmm0-15 (hook-abi.h). */
const struct instr_arch_count_asm *instr_arch_count_arming(void)
{
    static const instr_arch_count_asm a = {"cmpb\t$0, %%fs:" INSTR_COUNT_ARMED "@tpoff\n\t"
                                           "jne\t1f\n\t"
                                           "leaq\t-128(%%rsp), %%rsp\n\t"
                                           "call\t" INSTR_COUNT_ARM "\n\t"
                                           "leaq\t128(%%rsp), %%rsp\n"
                                           "1:",
                                           NULL, 0, NULL};
    return &a;
}

std::string instr_arch_tls_offset(const char *sym)
{
    return std::string("\t.quad\t") + sym + "@tpoff\n";
}

/* The general registers the ABI lets a call change, the flags and
 * xmm0-15; the runtime's entry keeps the rest of the extended state
 * (runtime/arch/x86_64/count-arm.c). */
std::string instr_arch_count_arm(void)
{
    static const char *const regs[] = {"rax", "rcx", "rdx", "rsi", "rdi", "r8", "r9", "r10", "r11"};
    std::string s = "\tendbr64\n"
                    "\tmovb\t$1, %fs:" INSTR_COUNT_ARMED "@tpoff\n"
                    "\tpushfq\n\tpushq\t%rbp\n\tmovq\t%rsp, %rbp\n";
    for (const char *r : regs)
        s += std::string("\tpushq\t%") + r + "\n";
    s += "\tandq\t$-16, %rsp\n\tsubq\t$256, %rsp\n";
    for (int i = 0; i < 16; i++)
        s += "\tmovdqa\t%xmm" + std::to_string(i) + ", " + std::to_string(16 * i) + "(%rsp)\n";
    s += "\tleaq\t" INSTR_COUNT_MODULE "(%rip), %rdi\n"
         "\tmovq\t%fs:0, %rdx\n"
         "\tleaq\t" INSTR_COUNT_ARMED "@tpoff(%rdx), %rsi\n"
         "\tcall\t*" + slot_operand(INSTR_SLOT_COUNT_ARM) + "\n";
    for (int i = 0; i < 16; i++)
        s += "\tmovdqa\t" + std::to_string(16 * i) + "(%rsp), %xmm" + std::to_string(i) + "\n";
    s += "\tleaq\t-" + std::to_string(8 * 9) + "(%rbp), %rsp\n";
    for (int i = 8; i >= 0; i--)
        s += std::string("\tpopq\t%") + regs[i] + "\n";
    s += "\tpopq\t%rbp\n\tpopfq\n\tret\n";
    return s;
}

std::string instr_arch_count_thread(void)
{
    return "\tendbr64\n"
           "\tleaq\t" INSTR_COUNT_MODULE "(%rip), %rdi\n"
           "\tmovq\t%fs:0, %rsi\n"
           "\taddq\t" INSTR_COUNT_DELTA "@gottpoff(%rip), %rsi\n"
           "\tjmp\t*" + slot_operand(INSTR_SLOT_COUNT_THREAD) + "\n";
}

unsigned instr_arch_first_arg_regno(void)
{
    return 5; /* GCC's DI_REG, SysV: %rdi */
}
