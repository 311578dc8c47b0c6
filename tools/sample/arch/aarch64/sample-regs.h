/* sample-regs.h (aarch64) - the user registers instr-sample asks perf for
 * with each sample, and where libunwind's aarch64 unwinder finds each of
 * them (what every architecture gives: sample-unwind.h). */
#ifndef INSTR_SAMPLE_REGS_H
#define INSTR_SAMPLE_REGS_H

#include <libunwind.h>

/* perf's arm64 numbering (asm/perf_regs.h): PERF_REG_ARM64_X0..X28, X29
 * (the frame pointer), LR (X30), SP, PC: bits 0-32.  A sample holds the
 * values in bit order. */
#define INSTR_UREGS_MASK ((1ull << 33) - 1)
#define INSTR_UREGS 33
#define INSTR_UREG_SP 31
#define INSTR_UREG_IP 32
#define INSTR_UREGS_ARCH "aarch64"

/* libunwind's register number -> its value's index in a sample, or -1:
 * UNW_AARCH64_X0..X30, SP, PC are 0..32, perf's order. */
static inline int instr_ureg_of_unw(unw_regnum_t reg)
{
    return reg >= UNW_AARCH64_X0 && reg <= UNW_AARCH64_PC ? (int)reg : -1;
}

#endif
