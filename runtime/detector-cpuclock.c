/* detector-cpuclock.c - exact off-CPU time of flagged intervals.
 *
 * The other backends say *that* the OS acted in an interval; this one says
 * for how long the thread was off the CPU in it (waiting, sleeping,
 * preempted), without reading a clock at every hook.  An interval nobody
 * flagged was on the CPU throughout (a switch would have flagged it), so
 * the thread's CPU clock, read only at flagged hooks, is enough:
 *
 *   on-CPU(flagged interval) = (cpu now - cpu at the last flagged hook)
 *                              - wall time of the clean intervals between
 *   off-CPU(flagged interval) = its wall time - its on-CPU time
 *
 * The clean intervals' ticks are summed on the hot path (one add, see
 * instr__put_head); the clock (CLOCK_THREAD_CPUTIME_ID, a system call of
 * ~0.2 us) is read only where an event is flagged anyway, and not where
 * the only flag is a system call (no switch: off-CPU 0).  The result goes
 * after the transition byte (INSTR_OS_OFFCPU_FOLLOWS).  It is exact up to
 * the kernel's CPU accounting (the thread clock counts kernel time on the
 * CPU as on-CPU: a system call that does not block has no off-CPU time).
 * The research note measured the clock exact on this kind of machine
 * (nanosleep ~60 us off, compute ~0).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <time.h>

#include "detector.h"

static int thread_cpu_ns(uint64_t *ns)
{
    struct timespec ts;
    if (!instr__may_syscall() || clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts))
        return -1;
    *ns = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
    return 0;
}

/* Whether a sleep of ns is off the CPU by the thread's clock: the CPU time
 * the clock counts over it must be under half the wall time it took. */
static int sleep_is_off_cpu(long ns)
{
    uint64_t c0, c1, w0 = instr__mono_ns(), w1;
    struct timespec ts = {0, ns};
    if (thread_cpu_ns(&c0))
        return 0;
    nanosleep(&ts, NULL);
    w1 = instr__mono_ns();
    return thread_cpu_ns(&c1) == 0 && c1 - c0 <= (w1 - w0) / 2;
}

/* Self-test: a sleep is off the CPU, and the clock must say so.  A sleep
 * of 1 us first, as rseq's self-test sleeps: the timer slack (50 us by
 * default) makes it 50-60 us of wall time, against a few us of CPU for
 * the system calls (a tenth of the margin); then, in case a program set
 * its slack to nothing or the machine was too busy for that margin, 2 ms
 * before giving up.  The test was one 2-ms sleep: 2 ms of wall time added
 * to every process start (docs/performance.md, "Many short processes"). */
static int cpuclock_init(char *why, size_t n)
{
    uint64_t c;
    if (thread_cpu_ns(&c)) {
        snprintf(why, n, "cpuclock off: no thread CPU clock");
        return -1;
    }
    if (!sleep_is_off_cpu(1000) && !sleep_is_off_cpu(2000000)) {
        snprintf(why, n, "cpuclock off: self-test failed (a sleep counted as CPU time)");
        return -1;
    }
    return 0;
}

static void cpuclock_thread(struct instr__thread *t)
{
    t->det.offcpu_on = thread_cpu_ns(&t->det.cpu_last) == 0;
    t->det.clean_ticks = 0;
}

/* Ticks per ns from the run's start to now (the header's start pair). */
static double ticks_per_ns(void)
{
    const struct instr_dump_header *h = instr__rt.header;
    if (!h)
        return 0;
    uint64_t tsc = instr__tsc(), mono = instr__mono_ns();
    if (mono <= h->start_mono_ns + 1000 || tsc <= h->start_tsc)
        return 0;
    return (double)(tsc - h->start_tsc) / (double)(mono - h->start_mono_ns);
}

/* The off-CPU ticks of the flagged interval of `delta` ticks that just
 * ended (or of the runtime's own stretch: instr__put_runtime): 0 and *off,
 * or -1 if not known (then nothing is written). */
int instr__offcpu_ticks(struct instr__thread *t, uint64_t delta, uint64_t *off)
{
    if (!instr__may_syscall()) /* sandbox.c */
        return -1;
    int saved = errno;
    uint64_t cpu;
    /* The clock read is a system call of ours: with sud it must not trap,
     * and the kernel instructions it runs must not flag the program's next
     * interval (rdpmc).  But a context switch during the read is real: the
     * next interval starts at this event, before the read, so it owns the
     * switch.  Re-arming rseq_cs or perf here would discard it (a missed
     * switch after every read: Application far above CPU time on a busy
     * machine); the check that flagged this event has re-armed them already. */
    instr__sud_state[0] = INSTR__SUD_ALLOW;
    int rc = thread_cpu_ns(&cpu);
    instr__detector_rearm_own_syscall(t);
    errno = saved;
    double tpn = ticks_per_ns();
    uint64_t clean = t->det.clean_ticks;
    uint64_t last = t->det.cpu_last;
    t->det.clean_ticks = 0;
    if (rc)
        return -1;
    t->det.cpu_last = cpu;
    if (!(tpn > 0) || cpu < last)
        return -1;
    double on = (double)(cpu - last) - (double)clean / tpn; /* ns on the CPU in this interval */
    double wall = (double)delta / tpn;
    double off_ns = wall - (on > 0 ? on : 0);
    if (off_ns < 0)
        off_ns = 0;
    *off = (uint64_t)(off_ns * tpn + 0.5);
    if (*off > delta)
        *off = delta;
    return 0;
}

uint8_t *instr__put_bits(struct instr__thread *t, uint8_t *p, unsigned bits, uint64_t delta)
{
    uint64_t off;
    if (t->det.offcpu_on && bits == INSTR_OS_SYSCALL && (t->det.on & (INSTR__DET_ON_RSEQ | INSTR__DET_ON_PERF))) {
        /* System calls and nothing else: no switch (rseq_cs or perf would
         * have said sched), so the thread was on the CPU throughout, its
         * kernel time included: off-CPU 0, known without the clock read (a
         * system call of ours after each interval of the program's that
         * made one: a server's every request).  The interval counts as
         * clean for the next reading. */
        t->det.clean_ticks += delta;
        *p++ = (uint8_t)(bits | INSTR_OS_OFFCPU_FOLLOWS);
        return instr_put_varint(p, 0);
    }
    if (t->det.offcpu_on && instr__offcpu_ticks(t, delta, &off) == 0) {
        *p++ = (uint8_t)(bits | INSTR_OS_OFFCPU_FOLLOWS);
        return instr_put_varint(p, off);
    }
    *p++ = (uint8_t)bits;
    return p;
}

/* Not a detector of its own: exact off-CPU time where the others fire.  A
 * fork child's CPU clock starts anew. */
const struct instr__detector_ops instr__det_cpuclock = {
    .name = "cpuclock",
    .id = INSTR_DETECTOR_CPUCLOCK,
    .init = cpuclock_init,
    .thread = cpuclock_thread,
    .fork_child = cpuclock_thread,
};
