/* record.h - PRIVATE: the write protocol every recorded event follows.
 *
 *   guard   t->busy set to the hook's CFA: a hook that runs while it is
 *           held (a signal handler interrupting this one) must not touch
 *           the chunk or the stack: it leaves its event in t->def, and the
 *           next hook records it at its own tick (hooks.c: nesting)
 *   tick    rdtsc: the interval since the thread's previous event ends here
 *   detect  the detector's transition bits for that interval (and those a
 *           previous hook left pending because it wrote nothing)
 *   write   the caller's part: shadow-stack moves, event head(s) and payload
 *           at t->pos, with the interval's bits on the first head
 *   room    past t->limit: switch chunk
 *   release the guard
 *
 * instr__record runs it around a writer; always inlined, so with a constant
 * writer the hot path is the same straight line as hand-written code.  Bits
 * the writer did not consume (it wrote no event) stay pending for the next
 * event: the interval goes on.
 */
#ifndef INSTR_RT_RECORD_H
#define INSTR_RT_RECORD_H

#include "detector.h"
#include "internal.h"

#define instr__barrier() __asm__ volatile("" ::: "memory")

/* Writes the event(s) at p, returns the new end.  now and *bits come from
 * the protocol; arg is the writer's own. */
typedef uint8_t *instr__writer(struct instr__thread *t, uint8_t *p, uint64_t now, unsigned *bits,
                               const void *arg);

/* Full chunk after an event: switch, then release the guard (one call out
 * of line, so the hot path stays small). */
void instr__switch_release(struct instr__thread *t);

/* Records the deferred events (hooks.c), at their own ticks, before the
 * event of the hook now holding the guard. */
uint8_t *instr__deferred_flush(struct instr__thread *t, uint8_t *p, unsigned *bits);

/* The protocol on thread state t (never NULL, guard free).  owner: the
 * CFA of the hook (the guard's value: a hook that finds the guard held
 * compares its own CFA with it, see hooks.c).  pending: whether
 * t->go_slow may be set (the fast paths have checked it is not). */
static inline __attribute__((always_inline)) void
instr__record(struct instr__thread *t, uintptr_t owner, int pending, instr__writer *write,
              const void *arg)
{
    t->busy = owner;
    instr__barrier();
    uint64_t now = instr__tsc();
    unsigned bits = instr__detector_check(t), fired = bits;
    uint8_t *p = t->pos;
    if (pending && INSTR_UNLIKELY(t->go_slow)) {
        bits |= t->pending_bits & ~INSTR__FILTERING;
        t->pending_bits &= INSTR__FILTERING;
        if (__atomic_load_n(&t->def_n, __ATOMIC_RELAXED))
            p = instr__deferred_flush(t, p, &bits);
    }
    if (INSTR_UNLIKELY(bits & INSTR_OS_SYSCALL) && instr__sud_spent)
        p = instr__put_sud_gap(t, p, now, &bits);
    p = write(t, p, now, &bits, arg);
    if (INSTR_UNLIKELY(fired) && t->last_tsc == now)
        p = instr__put_detector_gap(t, p);
    if (INSTR_UNLIKELY(bits))
        t->pending_bits |= bits; /* nothing written: the interval goes on */
    t->pos = p;
    if (INSTR_UNLIKELY(p >= t->limit))
        return instr__switch_release(t);
    instr__barrier();
    t->busy = 0;
}

/* The thread state of the calling thread (created at its first hook, of
 * kind ev: INSTR_EV_*, counted if it is lost). */
static inline struct instr__thread *instr__record_thread(unsigned ev)
{
    struct instr__thread *t = instr__tls;
    if (INSTR_UNLIKELY(!t))
        t = instr__thread_create(ev);
    return t;
}

#endif
