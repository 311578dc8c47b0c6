/* arch-inline.h (aarch64) - the tick read and what the dump header says of
 * this architecture (runtime/arch.h). */
#ifndef INSTR_RT_ARCH_INLINE_H
#define INSTR_RT_ARCH_INLINE_H

#include <stdint.h>

#define INSTR_RT_ARCH INSTR_ARCH_AARCH64
#define INSTR_RT_TICKS INSTR_TICKS_CNTVCT
/* stubs.c's rseq critical section: one 4-byte nop. */
#define INSTR_ARCH_RSEQ_CS_LEN 4

/* The generic timer's virtual count, at cntfrq_el0's rate (fixed by the
 * architecture; 24 MHz to 1 GHz, often 25-100 MHz: a tick of 10-40 ns,
 * against a TSC's fraction of a ns).  The isb keeps the read after the
 * instructions before it, as the kernel's own reads do: without it the
 * CPU may read the counter early, and at this resolution the hooks' cost
 * compensation (calibrate.c) needs reads in program order. */
static inline uint64_t instr__tsc(void)
{
    uint64_t v;
    __asm__ volatile("isb\n\tmrs\t%0, cntvct_el0" : "=r"(v));
    return v;
}

/* A TLS count record's cell offset from the thread pointer, from the
 * record's counter field (field: its address): two words whose bits 10-21
 * the linker filled as an add's immediate, the offset's low 12 bits and
 * its next 12 (plugin/arch/aarch64.cc, instr_arch_tls_offset). */
static inline intptr_t instr__count_tls_offset(const void *field)
{
    const uint32_t *w = field;
    return (intptr_t)((w[0] >> 10 & 0xfff) | (w[1] >> 10 & 0xfff) << 12);
}

#endif
