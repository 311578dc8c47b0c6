/* arch.h - PRIVATE: what each architecture's folder gives the portable runtime.
 *
 * Everything that differs by CPU lives in runtime/arch/<arch>/ (x86_64,
 * aarch64).  The build compiles the target's folder only and puts it on
 * the include path (runtime/CMakeLists.txt, INSTR_ARCH), so a new
 * architecture is one folder and one line of the build:
 *
 *   arch-inline.h  INSTR_RT_ARCH and INSTR_RT_TICKS (dump-format.h), the
 *                  tick read instr__tsc() (inline: every event reads it),
 *                  INSTR_ARCH_RSEQ_CS_LEN (the bytes stubs.c's never-run
 *                  rseq critical section covers), instr__count_tls_offset
 *                  (a count-mode TLS record's offset, as the plugin's
 *                  plugin/arch/<cpu>.cc wrote it);
 *   stubs.c        the assembly the portable code calls by name:
 *                  instr__own_syscall, the rseq_cs section, calibrate.c's
 *                  trampolines;
 *   count-arm.c    instr__count_arm_entry, count mode's arming slot;
 *   cpu.c          the functions declared below;
 *   detectors      backends only this CPU has (x86-64: sud, rdpmc); every
 *                  backend of detector.c's table is defined on every
 *                  architecture, where it is absent as one whose start-up
 *                  says why it cannot run (aarch64/detectors-absent.c).
 */
#ifndef INSTR_RT_ARCH_H
#define INSTR_RT_ARCH_H

#include <stdint.h>
#include <ucontext.h>

#include "arch-inline.h"

/* A system call that never traps with sud (x86-64's detector-sud.c
 * allows this stub's range); raw: returns -errno. */
long instr__own_syscall(long nr, long a, long b, long c) __attribute__((visibility("hidden")));
extern const char instr__own_syscall_end[] __attribute__((visibility("hidden")));

/* The never-run rseq critical section and its abort handler (detector-rseq.c). */
extern const char instr__rseq_start[] __attribute__((visibility("hidden")));
extern const char instr__rseq_abort[] __attribute__((visibility("hidden")));

/* Count mode's arming slot (bind.c): instr__count_arm (count.c), same
 * arguments, with the caller's whole register file, vector state
 * included, kept. */
struct instr_count_module;
void instr__count_arm_entry(const struct instr_count_module *m, uint8_t *armed, uintptr_t tp);

/* The ticks convert to time with one rate whatever the CPU's power state
 * (the dump header's INSTR_DUMP_TSC_INVARIANT). */
int instr__tsc_invariant(void);
/* This CPU's model, for the calibration cache's key (calib-cache.c). */
uint32_t instr__cpu_signature(void);
/* The tick counter's rate when the CPU says it (aarch64's cntfrq_el0), else 0:
 * measure it against CLOCK_MONOTONIC. */
uint64_t instr__tick_hz(void);
/* A fatal signal at pc: its address, and the length of the tick read
 * there if one of ours faulted because the OS took the counter from the
 * thread (x86-64: rdtsc under PR_SET_TSC or seccomp strict mode; 0: not
 * such a fault).  instr__tick_emulate makes the instruction give tick and
 * steps over it (fatal-signals.c). */
uintptr_t instr__signal_pc(const ucontext_t *uc);
unsigned instr__tick_fault_len(uintptr_t pc);
void instr__tick_emulate(ucontext_t *uc, unsigned len, uint64_t tick);

#endif
