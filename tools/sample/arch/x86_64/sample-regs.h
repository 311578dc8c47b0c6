/* sample-regs.h (x86-64) - the user registers instr-sample asks perf for
 * with each sample, and where libunwind's x86-64 unwinder finds each of
 * them (what every architecture gives: sample-unwind.h). */
#ifndef INSTR_SAMPLE_REGS_H
#define INSTR_SAMPLE_REGS_H

#include <libunwind.h>

/* perf's x86-64 numbering (asm/perf_regs.h): AX BX CX DX SI DI BP SP IP
 * FLAGS CS SS (bits 0-11) and R8..R15 (bits 16-23); DS/ES/FS/GS are
 * refused for 64-bit tasks.  A sample holds the values in bit order. */
#define INSTR_UREGS_MASK (0xfffull | 0xffull << 16)
#define INSTR_UREGS 20
#define INSTR_UREG_SP 7
#define INSTR_UREG_IP 8
#define INSTR_UREGS_ARCH "x86-64"

/* libunwind's register number -> its value's index in a sample, or -1. */
static inline int instr_ureg_of_unw(unw_regnum_t reg)
{
    static const signed char map[17] = {0 /*RAX*/, 3 /*RDX*/, 2 /*RCX*/, 1 /*RBX*/, 4 /*RSI*/, 5 /*RDI*/,
                                        6 /*RBP*/, 7 /*RSP*/, 12,        13,        14,        15,
                                        16,        17,        18,        19,        8 /*RIP*/};
    return reg >= 0 && reg <= 16 ? map[reg] : -1;
}

#endif
