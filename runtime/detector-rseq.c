/* detector-rseq.c - rseq_cs lazy-clear detector.
 *
 * glibc (>= 2.35) registers an rseq area for every thread.  User space may
 * store a pointer to a critical-section descriptor in its rseq_cs field; the
 * kernel sets the field back to 0 whenever it preempts the thread, delivers a
 * signal to it or migrates it while the instruction pointer is outside the
 * descriptor's range.  Our descriptor is valid but covers one instruction that
 * never runs, so the kernel never aborts anything: it only clears the field,
 * and a hook that finds 0 knows the kernel scheduled this thread in the
 * interval.  (See the research note on transitions, C.2.)
 *
 * Blind spots: non-blocking syscalls, non-blocking page faults, interrupts
 * that do not reschedule.  On kernels with the optimised ("V2") rseq
 * semantics a switch while blocked in a syscall is not seen: the start-up
 * self-test (nanosleep must clear the field) catches that and falls back.
 *
 * ABI rule: rseq_cs must not point at a descriptor that goes away.  The
 * runtime pins itself (RTLD_NODELETE, bind.c) and clears the field when a
 * thread ends.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "detector.h"

#define RSEQ_CS_FIELD_OFFSET 8 /* struct rseq { u32 cpu_id_start, cpu_id; u64 rseq_cs; ... } */

/* From glibc >= 2.35; weak so that an older glibc just gives 0 (no rseq). */
extern const ptrdiff_t __rseq_offset __attribute__((weak));
extern const unsigned int __rseq_size __attribute__((weak));

struct rseq_cs_desc {
    uint32_t version;
    uint32_t flags;
    uint64_t start_ip;
    uint64_t post_commit_offset;
    uint64_t abort_ip;
} __attribute__((aligned(32)));

/* The never-executed critical section (instr__rseq_start, one instruction)
 * and its abort handler, after the signature the kernel checks: arch.h. */

static const struct rseq_cs_desc rseq_desc = {
    .version = 0,
    .flags = 0,
    .start_ip = (uint64_t)(uintptr_t)instr__rseq_start,
    .post_commit_offset = INSTR_ARCH_RSEQ_CS_LEN,
    .abort_ip = (uint64_t)(uintptr_t)instr__rseq_abort,
};

static volatile uint64_t *rseq_word(void)
{
    return (volatile uint64_t *)((char *)__builtin_thread_pointer() + __rseq_offset +
                                 RSEQ_CS_FIELD_OFFSET);
}

int instr__rseq_on;

static int rseq_init(char *why, size_t n)
{
    if (&__rseq_size == NULL || &__rseq_offset == NULL || __rseq_size < 20) {
        snprintf(why, n, "rseq_cs off: glibc rseq not registered (__rseq_size=%u)",
                 &__rseq_size ? __rseq_size : 0u);
        return -1;
    }
    volatile uint64_t *w = rseq_word();
    uint64_t mine = (uint64_t)(uintptr_t)&rseq_desc;
    /* Self-test: a sleep always blocks (timer slack >= 50 us), so the kernel
     * must have cleared our pointer when the thread comes back.  Kernels
     * with the optimised (V2) rseq semantics clear it only on involuntary
     * preemption: they fail here. */
    int saved = errno, cleared = 0;
    for (int i = 0; i < 3 && !cleared; i++) {
        *w = mine;
        struct timespec ts = {0, 1000};
        nanosleep(&ts, NULL);
        cleared = *w == 0;
    }
    *w = 0;
    errno = saved;
    if (!cleared) {
        snprintf(why, n, "rseq_cs off: self-test failed (a sleep did not clear rseq_cs)");
        return -1;
    }
    instr__rseq_on = 1;
    return 0;
}

static void rseq_thread(struct instr__thread *t)
{
    t->det_word = rseq_word();
    t->det_armed = (uint64_t)(uintptr_t)&rseq_desc;
    *t->det_word = t->det_armed;
    t->det.on |= INSTR__DET_ON_RSEQ;
}

static void rseq_thread_end(struct instr__thread *t)
{
    if (*t->det_word == t->det_armed)
        *t->det_word = 0;
    t->det.on &= ~INSTR__DET_ON_RSEQ;
}

/* The SIGSYS that reports a syscall is itself a signal delivery, which
 * clears rseq_cs: put our pointer back so that a switch later in the same
 * interval (the syscall blocking) is still seen.  A switch before the
 * syscall is then reported as the syscall only; the interval is flagged
 * either way.  Someone else's descriptor is left alone. */
void instr__rseq_restore(void)
{
    if (!instr__rseq_on)
        return;
    volatile uint64_t *w = rseq_word();
    if (*w == 0)
        *w = (uint64_t)(uintptr_t)&rseq_desc;
}

/* rseq_cs stays armed in a fork child: the area is per thread, inherited. */
const struct instr__detector_ops instr__det_rseq = {
    .name = "rseq_cs",
    .id = INSTR_DETECTOR_RSEQ_CS,
    .is_kind = 1,
    /* A signal clears rseq_cs like a switch; told apart only with sud (the
     * handler returns through rt_sigreturn) or perf (no switch record).
     * Kernel task_work on return to user clears it too. */
    .sees = INSTR_OS_SCHED | INSTR_OS_SIGNAL | INSTR_OS_UNKNOWN,
    .init = rseq_init,
    .thread = rseq_thread,
    .thread_end = rseq_thread_end,
};
