/* count-arm.c (aarch64) - the count-arm slot's entry: the runtime's slow
 * path run with the caller's FP/SIMD state kept.
 *
 * As on x86-64 (runtime/arch/x86_64/count-arm.c), count mode's arming
 * test sits at a function's entry where the compiler may keep values in
 * any register; the module's trampoline keeps the general registers and
 * the flags, and this entry the FP/SIMD state: q0-q31 whole (AAPCS64 lets
 * a callee change all of them but the low halves of v8-v15, and libc's
 * string routines use them) and FPCR/FPSR.  SVE's Z registers beyond 128
 * bits and its predicate registers are not kept: the runtime and the libc
 * routines it calls are built for the base ISA.
 *
 * The module's trampoline (plugin/arch/aarch64.cc, instr_arch_count_arm)
 * calls it with x9-x15 free to use: it saved them.  tests/budget's
 * count-simd.c checks the q registers across an arming whose libc call
 * writes them all. */
#include <stdint.h>

#include "internal.h"

/* x0-x2: instr__count_arm's arguments, untouched until the call.  Frame:
 * fp/lr, then FPCR/FPSR and the 512 bytes of q registers (16-byte aligned). */
__asm__(".text\n"
        "\t.p2align 2\n"
        "\t.globl\tinstr__count_arm_entry\n"
        "\t.hidden\tinstr__count_arm_entry\n"
        "\t.type\tinstr__count_arm_entry, %function\n"
        "instr__count_arm_entry:\n"
        "\t.cfi_startproc\n"
        "\tstp\tx29, x30, [sp, #-16]!\n"
        "\t.cfi_def_cfa_offset 16\n"
        "\t.cfi_offset x29, -16\n"
        "\t.cfi_offset x30, -8\n"
        "\tmov\tx29, sp\n"
        "\t.cfi_def_cfa_register x29\n"
        "\tsub\tsp, sp, #528\n"
        "\tstp\tq0, q1, [sp, #16]\n"
        "\tstp\tq2, q3, [sp, #48]\n"
        "\tstp\tq4, q5, [sp, #80]\n"
        "\tstp\tq6, q7, [sp, #112]\n"
        "\tstp\tq8, q9, [sp, #144]\n"
        "\tstp\tq10, q11, [sp, #176]\n"
        "\tstp\tq12, q13, [sp, #208]\n"
        "\tstp\tq14, q15, [sp, #240]\n"
        "\tstp\tq16, q17, [sp, #272]\n"
        "\tstp\tq18, q19, [sp, #304]\n"
        "\tstp\tq20, q21, [sp, #336]\n"
        "\tstp\tq22, q23, [sp, #368]\n"
        "\tstp\tq24, q25, [sp, #400]\n"
        "\tstp\tq26, q27, [sp, #432]\n"
        "\tstp\tq28, q29, [sp, #464]\n"
        "\tstp\tq30, q31, [sp, #496]\n"
        "\tmrs\tx9, fpcr\n"
        "\tmrs\tx10, fpsr\n"
        "\tstp\tx9, x10, [sp]\n"
        "\tbl\tinstr__count_arm\n"
        "\tldp\tx9, x10, [sp]\n"
        "\tmsr\tfpcr, x9\n"
        "\tmsr\tfpsr, x10\n"
        "\tldp\tq0, q1, [sp, #16]\n"
        "\tldp\tq2, q3, [sp, #48]\n"
        "\tldp\tq4, q5, [sp, #80]\n"
        "\tldp\tq6, q7, [sp, #112]\n"
        "\tldp\tq8, q9, [sp, #144]\n"
        "\tldp\tq10, q11, [sp, #176]\n"
        "\tldp\tq12, q13, [sp, #208]\n"
        "\tldp\tq14, q15, [sp, #240]\n"
        "\tldp\tq16, q17, [sp, #272]\n"
        "\tldp\tq18, q19, [sp, #304]\n"
        "\tldp\tq20, q21, [sp, #336]\n"
        "\tldp\tq22, q23, [sp, #368]\n"
        "\tldp\tq24, q25, [sp, #400]\n"
        "\tldp\tq26, q27, [sp, #432]\n"
        "\tldp\tq28, q29, [sp, #464]\n"
        "\tldp\tq30, q31, [sp, #496]\n"
        "\tmov\tsp, x29\n"
        "\tldp\tx29, x30, [sp], #16\n"
        "\t.cfi_def_cfa sp, 0\n"
        "\tret\n"
        "\t.cfi_endproc\n"
        "\t.size\tinstr__count_arm_entry, .-instr__count_arm_entry\n");
