/* detector.h - PRIVATE: "did the OS act on this thread since the last hook?"
 *
 * One interface for every detector:
 *   instr__detector_init()         once per process: choose (INSTR_DETECTOR),
 *                                  probe and self-test; fills the header fields;
 *   instr__detector_thread(t)      once per thread: arm;
 *   instr__detector_check(t)       at every event: transition bits, re-armed.
 *
 * The check is the same two loads and a compare for every detector, with no
 * indirect call: a thread watches one word (t->det_word) that holds
 * t->det_armed while nothing happened.  rseq_cs points det_word at the
 * thread's rseq area, where the kernel clears our descriptor pointer on
 * preemption, signal delivery or migration; "none" points it at a private
 * word that nobody else writes, so the check never fires.
 */
#ifndef INSTR_RT_DETECTOR_H
#define INSTR_RT_DETECTOR_H

#include "internal.h"

struct instr__detector_info {
    uint32_t kind;   /* INSTR_DETECTOR_* */
    uint32_t sees;   /* INSTR_OS_* */
    char detail[128];
};

extern struct instr__detector_info instr__detector;

void instr__detector_init(void);
void instr__detector_thread(struct instr__thread *t);
void instr__detector_thread_end(struct instr__thread *t);

/* detector-rseq.c / detector-none.c */
int instr__detector_rseq_init(struct instr__detector_info *info);
void instr__detector_rseq_thread(struct instr__thread *t);
void instr__detector_rseq_thread_end(struct instr__thread *t);
void instr__detector_none_init(struct instr__detector_info *info, const char *why);
void instr__detector_none_thread(struct instr__thread *t);

static inline unsigned instr__detector_check(struct instr__thread *t)
{
    uint64_t v = *t->det_word;
    if (INSTR_LIKELY(v == t->det_armed))
        return 0;
    *t->det_word = t->det_armed;
    /* 0: the kernel cleared it (switch, preemption, signal or migration);
     * anything else: a library's own rseq critical section overwrote it. */
    return v == 0 ? INSTR_OS_SCHED : INSTR_OS_UNKNOWN;
}

/* Discard whatever happened since the last check (the runtime's own work). */
static inline void instr__detector_rearm(struct instr__thread *t)
{
    *t->det_word = t->det_armed;
}

#endif
