/* sample-unwind.h - DWARF CFI unwinding of a sampled user stack, after the
 * fact, with libunwind's remote interface.
 *
 * The kernel hands instr-sample, with each sample, the user registers and a
 * copy of the top of the user stack.  libunwind walks that copy: its memory
 * reads are served from the copy (stack addresses) or from the module files
 * (the .eh_frame_hdr and .eh_frame of the mapped ELF files), so code built
 * without frame pointers (Debian's libc, libstdc++) unwinds correctly.
 */
#ifndef INSTR_SAMPLE_UNWIND_H
#define INSTR_SAMPLE_UNWIND_H

#include <stddef.h>
#include <stdint.h>

#include "elf-file.h"
/* What each architecture gives (tools/sample/arch/<arch>/sample-regs.h,
 * the one folder per CPU; a new architecture is a new folder):
 *   INSTR_UREGS_MASK  perf's sample_regs_user for the registers unwinding needs;
 *   INSTR_UREGS       how many values that mask gives, in bit order;
 *   INSTR_UREG_SP, INSTR_UREG_IP  the stack pointer's and the pc's index;
 *   INSTR_UREGS_ARCH  the architecture's name;
 *   instr_ureg_of_unw(reg)  libunwind's register number -> index, or -1. */
#include "sample-regs.h"

/* A module file, shared by every mapping of it. */
struct instr_ufile {
    char *path;
    int ok;                /* opened */
    struct instr_elf elf;
    uint64_t ehdr_vaddr;   /* .eh_frame_hdr address in the file's numbering */
    uint64_t ehdr_size;
    int has_ehdr;
};

/* An executable mapping of a file in one process image. */
struct instr_umap {
    uint64_t start, end, pgoff;
    uint64_t bias;         /* address - bias = the file's virtual address */
    int bias_ok;
    struct instr_ufile *file;
    uint32_t module;       /* the dump's module id */
};

struct instr_usample {
    uint64_t regs[INSTR_UREGS]; /* perf's order for INSTR_UREGS_MASK (sample-regs.h) */
    const uint8_t *stack;  /* copy of [sp, sp + stack_size) */
    uint64_t stack_size;
    const struct instr_umap *maps; /* sorted by start */
    size_t nmaps;
};

struct instr_unwinder;

int instr_unwinder_new(struct instr_unwinder **u);
void instr_unwinder_free(struct instr_unwinder *u);
/* Forget cached unwind information (the process's mappings changed). */
void instr_unwinder_flush(struct instr_unwinder *u);

/* Frames of the sample, leaf first (frames[0] = IP), at most max.  Returns
 * the count; *truncated is set when the walk stopped before the outermost
 * frame (a read outside the stack copy, a frame without CFI). */
size_t instr_unwind(struct instr_unwinder *u, const struct instr_usample *s, uint64_t *frames, size_t max,
                    int *truncated);

/* "libunwind 1.6 (DWARF CFI ...)", and the kernel's frame-pointer chain
 * when it was asked for: what the dump's SAMPLING record says. */
const char *instr_unwinder_name(int fp_chain);

/* Fills f->ehdr_* from its file (called once per file). */
void instr_ufile_prepare(struct instr_ufile *f);

#endif
