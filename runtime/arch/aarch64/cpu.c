/* cpu.c (aarch64) - what the runtime asks of the CPU (runtime/arch.h):
 * the generic timer's rate and constancy, and the CPU's model. */
#define _GNU_SOURCE
#include <signal.h>
#include <stdint.h>
#include <sys/auxv.h>
#include <ucontext.h>

#include "internal.h"

#ifndef HWCAP_CPUID
#define HWCAP_CPUID (1ul << 11)
#endif

/* The architecture fixes the generic timer's rate (cntfrq_el0) whatever
 * the cores' clocks do: the ticks always convert to time with one rate. */
int instr__tsc_invariant(void)
{
    return 1;
}

/* MIDR_EL1 (implementer, part, revision), which Linux lets user space read
 * (it emulates the read) where it says HWCAP_CPUID; else 0: the
 * calibration cache is then keyed by the boot and the detectors only. */
uint32_t instr__cpu_signature(void)
{
    uint64_t midr = 0;
    if (getauxval(AT_HWCAP) & HWCAP_CPUID)
        __asm__ volatile("mrs\t%0, midr_el1" : "=r"(midr));
    return (uint32_t)midr;
}

uint64_t instr__tick_hz(void)
{
    uint64_t hz;
    __asm__ volatile("mrs\t%0, cntfrq_el0" : "=r"(hz));
    return hz;
}

uintptr_t instr__signal_pc(const ucontext_t *uc)
{
    return (uintptr_t)uc->uc_mcontext.pc;
}

/* Linux gives no way to take the virtual counter from one thread (no
 * PR_SET_TSC on arm64; where the counter must trap, the kernel emulates
 * the read itself): our reads never fault. */
unsigned instr__tick_fault_len(uintptr_t pc)
{
    (void)pc;
    return 0;
}

void instr__tick_emulate(ucontext_t *uc, unsigned len, uint64_t tick)
{
    (void)uc, (void)len, (void)tick;
}
