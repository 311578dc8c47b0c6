/* count-arm.c - the count-arm slot's entry: the runtime's slow path run
 * with the caller's whole register file kept.
 *
 * Count mode's arming test is an asm statement at a function's entry
 * (hook-abi.h, "Count mode"): the compiler keeps values in any register
 * across it, the function's vector arguments among them.  The module's
 * trampoline saves the general registers, the flags and xmm0-15; the
 * runtime is built without AVX, but the libc it calls is not: glibc's
 * AVX2 string and memory routines end in vzeroupper, which zeroes the
 * upper halves of ymm0-15, and its EVEX ones write ymm16-31.  A function
 * taking an __m256 returned a wrong result when a thread armed in it
 * (tests/budget/count-vectors.c, with a vzeroupper on the arming path).
 *
 * So the slot holds instr__count_arm_entry, which saves the extended state
 * with XSAVE (x87, SSE, AVX, and AVX-512's mask and upper registers: what
 * XCR0 enables of them) on its stack, calls instr__count_arm and restores
 * it, as the dynamic linker's lazy binding does (_dl_runtime_resolve_xsave).
 * Where the OS has not enabled XSAVE (no AVX either) FXSAVE keeps x87 and
 * SSE.  Once per thread and module: its cost (4 KiB of stack, a
 * microsecond; the CPUID leaves once per process) does not matter. */
#define _GNU_SOURCE
#include <cpuid.h>
#include <stdint.h>

#include "internal.h"

/* XCR0 bits saved: x87, SSE, AVX, opmask, ZMM_Hi256, Hi16_ZMM. */
#define XSTATE_WANTED 0xe7u
/* The entry's stack area: the standard format's end for those components
 * is 2688 bytes. */
#define XSTATE_AREA 4096
#define STR_(x) #x
#define STR(x) STR_(x)

/* What XSAVE saves here; 0: FXSAVE; UINT32_MAX until the first arming
 * asks (instr__xstate_setup): CPUID traps to the hypervisor in a VM (3 µs
 * a leaf on this project's), so not at every process's start. */
__attribute__((used)) uint32_t instr__xstate_mask = UINT32_MAX;

/* Called by the entry before anything is saved: general registers only,
 * so that the vector state it is about to save is still the caller's.
 * Returns the mask (also in instr__xstate_mask; two threads arming at
 * once find the same). */
__attribute__((used, target("general-regs-only"))) uint32_t instr__xstate_setup(void)
{
    unsigned a, b, c, d;
    uint32_t mask = 0;
    if (__get_cpuid(1, &a, &b, &c, &d) && (c & bit_OSXSAVE)) {
        uint32_t lo, hi;
        __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
        mask = lo & XSTATE_WANTED;
        /* Every component's end in the standard format within the area. */
        for (unsigned i = 2; i < 32 && mask; i++)
            if ((mask >> i & 1) && (!__get_cpuid_count(0xd, i, &a, &b, &c, &d) || a + b > XSTATE_AREA))
                mask = 0;
    }
    __atomic_store_n(&instr__xstate_mask, mask, __ATOMIC_RELAXED);
    return mask;
}

/* rdi, rsi, rdx: instr__count_arm's arguments, kept across the save.  The
 * XSAVE header (bytes 512-575) is zeroed first: XRSTOR faults on a header
 * whose reserved bytes are not zero. */
__asm__(".text\n"
        "\t.globl\tinstr__count_arm_entry\n"
        "\t.hidden\tinstr__count_arm_entry\n"
        "\t.type\tinstr__count_arm_entry, @function\n"
        "instr__count_arm_entry:\n"
        "\t.cfi_startproc\n"
        "\tendbr64\n"
        "\tpushq\t%rbp\n"
        "\t.cfi_def_cfa_offset 16\n"
        "\t.cfi_offset %rbp, -16\n"
        "\tmovq\t%rsp, %rbp\n"
        "\t.cfi_def_cfa_register %rbp\n"
        "\tpushq\t%rdi\n"
        "\tpushq\t%rsi\n"
        "\tpushq\t%rdx\n"
        "\tsubq\t$" STR(XSTATE_AREA) ", %rsp\n"
        "\tandq\t$-64, %rsp\n"
        "\tmovl\tinstr__xstate_mask(%rip), %eax\n"
        "\tcmpl\t$-1, %eax\n"
        "\tjne\t1f\n"
        "\tcall\tinstr__xstate_setup\n"
        "1:\ttestl\t%eax, %eax\n"
        "\tjz\t2f\n"
        "\txorl\t%edx, %edx\n"
        "\tmovq\t%rdx, 512(%rsp)\n"
        "\tmovq\t%rdx, 520(%rsp)\n"
        "\tmovq\t%rdx, 528(%rsp)\n"
        "\tmovq\t%rdx, 536(%rsp)\n"
        "\tmovq\t%rdx, 544(%rsp)\n"
        "\tmovq\t%rdx, 552(%rsp)\n"
        "\tmovq\t%rdx, 560(%rsp)\n"
        "\tmovq\t%rdx, 568(%rsp)\n"
        "\txsave\t(%rsp)\n"
        "\tjmp\t3f\n"
        "2:\tfxsave\t(%rsp)\n"
        "3:\tmovq\t-8(%rbp), %rdi\n"
        "\tmovq\t-16(%rbp), %rsi\n"
        "\tmovq\t-24(%rbp), %rdx\n"
        "\tcall\tinstr__count_arm\n"
        "\tmovl\tinstr__xstate_mask(%rip), %eax\n"
        "\ttestl\t%eax, %eax\n"
        "\tjz\t4f\n"
        "\txorl\t%edx, %edx\n"
        "\txrstor\t(%rsp)\n"
        "\tjmp\t5f\n"
        "4:\tfxrstor\t(%rsp)\n"
        "5:\tleave\n"
        "\t.cfi_def_cfa %rsp, 8\n"
        "\tret\n"
        "\t.cfi_endproc\n"
        "\t.size\tinstr__count_arm_entry, .-instr__count_arm_entry\n");
