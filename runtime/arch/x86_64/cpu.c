/* cpu.c (x86-64) - what the runtime asks of the CPU (runtime/arch.h):
 * whether the TSC is invariant, the CPU's model, and our rdtsc's fault
 * when the OS took the TSC from a thread. */
#define _GNU_SOURCE
#include <cpuid.h>
#include <signal.h>
#include <stdint.h>
#include <ucontext.h>

#include "internal.h"

/* CPUID 0x80000007 EDX bit 8: the TSC runs at a constant rate in all
 * P-/C-states, so ticks convert to time with one rate.  Asked once per
 * process tree: a fork child's dump takes its parent's answer (on a
 * virtual machine each CPUID traps to the hypervisor; issue 39). */
int instr__tsc_invariant(void)
{
    static int known = -1; /* -1: not asked yet */
    if (known >= 0)
        return known;
    unsigned a, b, c, d;
    if (__get_cpuid_max(0x80000000u, NULL) < 0x80000007u) {
        known = 0;
        return 0;
    }
    __cpuid(0x80000007u, a, b, c, d);
    known = (d >> 8) & 1;
    return known;
}

/* CPUID 1 EAX: family, model, stepping (every x86-64 CPU has leaf 1). */
uint32_t instr__cpu_signature(void)
{
    unsigned a, b, c, d;
    __cpuid(1, a, b, c, d);
    (void)b, (void)c, (void)d;
    return a;
}

/* The TSC's rate is nowhere the runtime can read it cheaply: measured. */
uint64_t instr__tick_hz(void)
{
    return 0;
}

uintptr_t instr__signal_pc(const ucontext_t *uc)
{
    return (uintptr_t)uc->uc_mcontext.gregs[REG_RIP];
}

unsigned instr__tick_fault_len(uintptr_t pc)
{
    const uint8_t *op = (const uint8_t *)pc;
    return op[0] == 0x0f && op[1] == 0x31                    ? 2  /* rdtsc */
           : op[0] == 0x0f && op[1] == 0x01 && op[2] == 0xf9 ? 3  /* rdtscp */
                                                             : 0;
}

void instr__tick_emulate(ucontext_t *uc, unsigned len, uint64_t tick)
{
    uc->uc_mcontext.gregs[REG_RAX] = (greg_t)(uint32_t)tick;
    uc->uc_mcontext.gregs[REG_RDX] = (greg_t)(tick >> 32);
    if (len == 3)
        uc->uc_mcontext.gregs[REG_RCX] = 0; /* TSC_AUX */
    uc->uc_mcontext.gregs[REG_RIP] += len;
}
