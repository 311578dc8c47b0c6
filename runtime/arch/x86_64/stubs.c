/* stubs.c (x86-64) - the assembly the portable runtime calls by name
 * (runtime/arch.h): the raw system call, rseq's never-run critical
 * section, and calibrate.c's trampolines. */
#include "internal.h"

/* The runtime's own system calls that must never trap whatever sud's
 * selector says: this stub is the region prctl always allows
 * (detector-sud.c).  (A task sharing our TLS must not touch the selector,
 * and a handler on a small alternate stack has no room for a SIGSYS
 * frame.)  Raw: returns -errno. */
__asm__(".text\n"
        ".globl instr__own_syscall\n"
        ".hidden instr__own_syscall\n"
        ".type instr__own_syscall, @function\n"
        "instr__own_syscall:\n"
        "    mov %rdi, %rax\n"
        "    mov %rsi, %rdi\n"
        "    mov %rdx, %rsi\n"
        "    mov %rcx, %rdx\n"
        "    syscall\n"
        "    ret\n"
        ".size instr__own_syscall, .-instr__own_syscall\n"
        ".globl instr__own_syscall_end\n"
        ".hidden instr__own_syscall_end\n"
        "instr__own_syscall_end:\n");

/* A never-executed one-byte rseq "critical section" (detector-rseq.c); the
 * abort handler must be preceded by the signature or the kernel kills the
 * thread. */
__asm__(".pushsection .text.instr_rseq,\"ax\",@progbits\n"
        ".globl instr__rseq_start\n"
        ".globl instr__rseq_abort\n"
        ".hidden instr__rseq_start\n"
        ".hidden instr__rseq_abort\n"
        "instr__rseq_start:\n\tnop\n"
        "\t.long 0x53053053\n"
        "instr__rseq_abort:\n\tud2\n"
        ".popsection\n");

/* The hooks as instrumented code reaches them: a direct call to a
 * trampoline that jumps through a table slot (hook-abi.h); the slots are
 * calibrate.c's instr__calib_slots. */
__asm__(".pushsection .text\n"
        ".p2align 4\n"
        ".globl instr__calib_call\n"
        ".hidden instr__calib_call\n"
        "instr__calib_call: jmp *instr__calib_slots(%rip)\n"
        ".p2align 4\n"
        ".globl instr__calib_enter\n"
        ".hidden instr__calib_enter\n"
        "instr__calib_enter: jmp *instr__calib_slots+8(%rip)\n"
        ".p2align 4\n"
        ".globl instr__calib_exit\n"
        ".hidden instr__calib_exit\n"
        "instr__calib_exit: jmp *instr__calib_slots+16(%rip)\n"
        ".p2align 4\n"
        ".globl instr__calib_return\n"
        ".hidden instr__calib_return\n"
        "instr__calib_return: jmp *instr__calib_slots+24(%rip)\n"
        ".popsection\n");
