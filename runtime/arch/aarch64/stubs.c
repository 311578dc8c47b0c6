/* stubs.c (aarch64) - the assembly the portable runtime calls by name
 * (runtime/arch.h): the raw system call, rseq's never-run critical
 * section, and calibrate.c's trampolines. */
#include "internal.h"

/* The runtime's own raw system call (x86-64 needs its own range for sud;
 * here it is only the raw call): number in x8, arguments in x0-x2.
 * Returns -errno. */
__asm__(".text\n"
        ".p2align 2\n"
        ".globl instr__own_syscall\n"
        ".hidden instr__own_syscall\n"
        ".type instr__own_syscall, %function\n"
        "instr__own_syscall:\n"
        "\tmov\tx8, x0\n"
        "\tmov\tx0, x1\n"
        "\tmov\tx1, x2\n"
        "\tmov\tx2, x3\n"
        "\tsvc\t#0\n"
        "\tret\n"
        ".size instr__own_syscall, .-instr__own_syscall\n"
        ".globl instr__own_syscall_end\n"
        ".hidden instr__own_syscall_end\n"
        "instr__own_syscall_end:\n");

/* A never-executed one-instruction rseq "critical section"
 * (detector-rseq.c).  The abort handler must be preceded by the
 * signature, which on arm64 is the instruction `brk #0x45e0`
 * (0xd428bc00, glibc's and the kernel selftests' RSEQ_SIG). */
__asm__(".pushsection .text.instr_rseq,\"ax\",%progbits\n"
        ".p2align 2\n"
        ".globl instr__rseq_start\n"
        ".globl instr__rseq_abort\n"
        ".hidden instr__rseq_start\n"
        ".hidden instr__rseq_abort\n"
        "instr__rseq_start:\n\tnop\n"
        "\t.inst 0xd428bc00\n"
        "instr__rseq_abort:\n\tbrk\t#0\n"
        ".popsection\n");

/* The hooks as instrumented code reaches them: a direct call to a
 * trampoline that jumps through a table slot (hook-abi.h; the plugin's
 * arch/aarch64.cc emits the same shape), the slots being calibrate.c's
 * instr__calib_slots.  x16 is the intra-procedure-call scratch register
 * the ABI gives such veneers. */
#define CALIB_TRAMPOLINE(name, offset)                                                             \
    ".p2align 4\n"                                                                                 \
    ".globl " name "\n"                                                                            \
    ".hidden " name "\n" name ":\n"                                                                \
    "\tadrp\tx16, instr__calib_slots+" offset "\n"                                                 \
    "\tldr\tx16, [x16, #:lo12:instr__calib_slots+" offset "]\n"                                    \
    "\tbr\tx16\n"
__asm__(".pushsection .text\n" CALIB_TRAMPOLINE("instr__calib_call", "0")
            CALIB_TRAMPOLINE("instr__calib_enter", "8") CALIB_TRAMPOLINE("instr__calib_exit", "16")
                CALIB_TRAMPOLINE("instr__calib_return", "24") ".popsection\n");
