/* arch-inline.h (x86-64) - the tick read and what the dump header says of
 * this architecture (runtime/arch.h). */
#ifndef INSTR_RT_ARCH_INLINE_H
#define INSTR_RT_ARCH_INLINE_H

#include <stdint.h>

#define INSTR_RT_ARCH INSTR_ARCH_X86_64
#define INSTR_RT_TICKS INSTR_TICKS_TSC
/* stubs.c's rseq critical section: one nop. */
#define INSTR_ARCH_RSEQ_CS_LEN 1

/* rdtsc, not ordered with the instructions around it: one event's
 * reordering by a few instructions is below what the hooks' cost
 * compensation resolves, and lfence would double the read's cost. */
static inline uint64_t instr__tsc(void) { return __builtin_ia32_rdtsc(); }

/* A TLS count record's cell offset from the thread pointer, from the
 * record's counter field (field: its address): the plugin wrote it with
 * .quad cell@tpoff. */
static inline intptr_t instr__count_tls_offset(const void *field) { return *(const intptr_t *)field; }

#endif
