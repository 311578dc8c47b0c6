/* detector.h - PRIVATE: "did the OS act on this thread since the last hook?"
 *
 * A detector set: up to three backends watched at once, each a word the
 * kernel (or our SIGSYS handler) changes when something happened.
 *   rseq_cs  det_word -> the rseq area's rseq_cs field; the kernel clears our
 *            descriptor pointer on preemption, blocking, signal delivery,
 *            migration (detector-rseq.c);
 *   sud      instr__sud_state[0], this thread's Syscall User Dispatch
 *            selector (static TLS, so it outlives the thread state): armed BLOCK, the
 *            first syscall of the interval traps and our SIGSYS handler sets
 *            ALLOW (detector-sud.c);
 *   perf     pf_word -> data_head of a per-thread perf ring that receives a
 *            sample per page fault and a record per context switch
 *            (detector-perf.c).
 *   rdpmc    the thread's kernel-mode instruction count, read with rdpmc
 *            (detector-rdpmc.c): needs a PMU, so it is off on most VMs and
 *            its check costs one predictable branch on a global when off.
 * A backend that is off points its word at t->det.self (nobody writes it)
 * and the selector rests at BLOCK, so the check is the same for every set:
 * three loads compared against what the hook left there, one branch, no
 * indirect call.  Anything else is out of line (instr__detector_fired).
 *
 *   instr__detector_init()       once per process: INSTR_DETECTOR, probes,
 *                                self-tests; fills the header fields;
 *   instr__detector_thread(t)    once per thread: arm;
 *   instr__detector_check(t)     at every event: transition bits, re-armed;
 *   instr__detector_rearm(t)     forget what the runtime itself caused.
 */
#ifndef INSTR_RT_DETECTOR_H
#define INSTR_RT_DETECTOR_H

#include <signal.h>
#include <stddef.h>

#include "internal.h"

#define INSTR__SUD_ALLOW 0 /* PR_SYS_DISPATCH_FILTER_ALLOW */
#define INSTR__SUD_BLOCK 1 /* PR_SYS_DISPATCH_FILTER_BLOCK */

/* t->det.on */
#define INSTR__DET_ON_RSEQ 0x1u
#define INSTR__DET_ON_SUD 0x2u
#define INSTR__DET_ON_PERF 0x4u
#define INSTR__DET_ON_SUD_PAUSED 0x8u /* SIGSYS blocked on this thread, or over budget: SUD off for now */
#define INSTR__DET_ON_RDPMC 0x10u

/* [0] the SUD selector, [1] INSTR_OS_* bits left by the SIGSYS handler. */
extern __thread volatile uint8_t instr__sud_state[2] __attribute__((tls_model("initial-exec")));

struct instr__detector_info {
    uint32_t kind;   /* INSTR_DETECTOR_*: the main backend (header `detector`) */
    uint32_t set;    /* 1 << INSTR_DETECTOR_* per active backend */
    uint32_t sees;   /* INSTR_OS_* */
    char detail[128];
};

extern struct instr__detector_info instr__detector;

void instr__detector_init(void);
void instr__detector_withdraw(void); /* no recording after all (no dump): init undone */
void instr__detector_thread(struct instr__thread *t);
void instr__detector_thread_end(struct instr__thread *t);
/* lifecycle.c, the forking thread in a fork child: at the fork, and when it records again. */
void instr__detector_fork_forget(struct instr__thread *t);
void instr__detector_fork_child(struct instr__thread *t);
unsigned instr__detector_fired(struct instr__thread *t, uint64_t v, uint64_t p);

/* One detector backend: one file (detector-NAME.c) defines its operations,
 * and one row of detector.c's table lists it.  The hot-path check and
 * re-arm below read every backend's word without an indirect call (that is
 * the point of the words); the table drives everything else. */
struct instr__detector_ops {
    const char *name;      /* in INSTR_DETECTOR and the report's detail */
    unsigned id;           /* INSTR_DETECTOR_* */
    int is_kind;           /* can be the header's main `detector` (first in table order) */
    uint32_t sees;         /* INSTR_OS_* it reports */
    int (*init)(char *why, size_t n);               /* probe and self-test: 0, or -1 and why */
    void (*thread)(struct instr__thread *t);        /* arm on a new thread */
    void (*thread_end)(struct instr__thread *t);    /* disarm (NULL: nothing to undo) */
    void (*fork_child)(struct instr__thread *t);    /* in a fork child (NULL: see restart) */
    void (*withdraw)(void);                         /* the process will not record after all: undo what
                                                       init left the program able to see (NULL: nothing) */
    uint8_t on;            /* INSTR__DET_ON_* bit it sets in t->det.on when armed */
    uint8_t restart;       /* fork child, no fork_child: end the parent's (if armed), start anew;
                              0: inherited as is */
    uint8_t absent;        /* this architecture has no such backend (runtime/arch.h): auto skips it,
                              INSTR_DETECTOR naming it is told why */
};
/* detector.c calls every operation with the program's errno kept: the
 * backends need not save it. */

extern const struct instr__detector_ops instr__det_rseq, instr__det_sud, instr__det_perf,
    instr__det_rdpmc, instr__det_cpuclock;

/* Backends' other entry points (used by the check, the SIGSYS handler and
 * the cpuclock transition bytes). */
void instr__rseq_restore(void); /* async-signal-safe: our pointer back if the kernel cleared it */
extern int instr__rseq_on;

unsigned instr__sud_fired(struct instr__thread *t);
void instr__sud_altstack(struct instr__thread *t);
extern __thread uintptr_t instr__sud_alt[2] __attribute__((tls_model("initial-exec")));
uint8_t instr__sud_rest_alt(void);

/* instr__own_syscall, the system call that never traps with sud: arch.h. */

/* The selector's resting value: BLOCK, but ALLOW while the thread runs on
 * its alternate signal stack (detector-sud.c). */
static inline uint8_t instr__sud_rest(void)
{
    if (INSTR_LIKELY(!instr__sud_alt[1]))
        return INSTR__SUD_BLOCK;
    return instr__sud_rest_alt();
}
void instr__sud_resume(struct instr__thread *t);
uint64_t instr__sud_conflicts(void);

unsigned instr__perf_kinds(struct instr__thread *t, uint64_t from, uint64_t to);
/* detector-perf.c: thread t's event, pending (t->det.perf_due_ns), opened if
 * due: 1 if opened (or tried) now, 0 if not due.  Called at slow paths. */
int instr__perf_late(struct instr__thread *t);
/* What the running backends other than backend id see (INSTR_OS_*). */
unsigned instr__detector_sees_besides(unsigned id);

/* perf_event_open of an event of this thread, any CPU, close-on-exec; a
 * holds the event's own fields (the rest zero), this fills in the size,
 * type, config and exclude_hv.  The fd, or -1 (errno). */
struct perf_event_attr;
int instr__perf_open(struct perf_event_attr *a, uint32_t type, uint64_t config);

uint64_t instr__rdpmc_read(const volatile struct perf_event_mmap_page *pc);
extern int instr__rdpmc_on;
unsigned instr__rdpmc_fired(struct instr__thread *t, unsigned seen);

void instr__detector_none_thread(struct instr__thread *t);

static inline unsigned instr__detector_check(struct instr__thread *t)
{
    uint64_t v = *t->det_word, p = *t->det.pf_word;
    unsigned bits = 0;
    if (INSTR_UNLIKELY(((v ^ t->det_armed) | (p ^ t->det.pf_armed) |
                        (uint8_t)(instr__sud_state[0] ^ INSTR__SUD_BLOCK)) != 0))
        bits = instr__detector_fired(t, v, p);
    if (INSTR_UNLIKELY(instr__rdpmc_on) && t->det.pmc_page)
        bits = instr__rdpmc_fired(t, bits);
    return bits;
}

/* Discard whatever happened since the last check (the runtime's own work:
 * its syscalls trap once and set ALLOW, its page faults reach the ring). */
static inline void instr__detector_rearm(struct instr__thread *t)
{
    *t->det_word = t->det_armed;
    t->det.pf_armed = *t->det.pf_word;
    instr__sud_state[0] = instr__sud_rest();
    if (INSTR_UNLIKELY(instr__rdpmc_on) && t->det.pmc_page)
        t->det.pmc_armed = instr__rdpmc_read(t->det.pmc_page);
}

/* Blocks every signal on this thread around the runtime's own slow work
 * (chunk switch, registration); instr__signals_restore(old) unblocks.
 * SUD must not trap meanwhile: a SIGSYS while blocked would kill. */
static inline void instr__signals_block(sigset_t *old)
{
    sigset_t all;
    if (!instr__may_syscall())
        return; /* sandbox.c: no system call, not even this one */
    instr__sud_state[0] = INSTR__SUD_ALLOW;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, old);
}

static inline void instr__signals_restore(const sigset_t *old)
{
    if (!instr__may_syscall())
        return;
    instr__sud_state[0] = INSTR__SUD_ALLOW;
    pthread_sigmask(SIG_SETMASK, old, NULL);
    instr__sud_state[0] = instr__sud_rest();
}

/* After a system call of the runtime's own that must not hide the OS's
 * work around it (the cpuclock read): back to BLOCK, and its kernel
 * instructions forgotten; rseq_cs and the perf ring stay as they are. */
static inline void instr__detector_rearm_own_syscall(struct instr__thread *t)
{
    instr__sud_state[0] = instr__sud_rest();
    if (INSTR_UNLIKELY(instr__rdpmc_on) && t->det.pmc_page)
        t->det.pmc_armed = instr__rdpmc_read(t->det.pmc_page);
}

#endif
