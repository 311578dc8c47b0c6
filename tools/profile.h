/* profile.h - stack rebuilding and value aggregation for one process.
 *
 * Each thread's events are walked interval by interval.  The interval that
 * an event ends has the stack left by the previous event and the os flag of
 * this event:
 *
 *      enter f        enter g        exit          exit (os=sched)
 *   ------|--------------|-------------|----------------|------
 *         |   stack [f]  |  stack [f g] |   stack [f]    |
 *         |  Δ1 → f excl |  Δ2 → g excl | Δ3 → f excl,   |
 *         |              |              |  flagged: not   |
 *         |              |              |  Application    |
 *
 * Each Δ is added to the exclusive values of the top node of a call tree
 * (node = parent node + frame); inclusive values are derived afterwards
 * bottom-up, and a function's inclusive values are the sum over its
 * outermost nodes (nodes with no ancestor of the same function), so a
 * recursive function counts each interval once.  Memory grows with the
 * number of distinct call paths, never with the number of events.
 *
 * Repairs, each counted (see struct instr_repairs):
 *  - EXT UNWIND pops the top frame (an exception or longjmp went through it);
 *  - EXIT / RETURN on an empty stack is ignored;
 *  - frames still open at the end of a thread are closed at its end tick:
 *    its THREAD_END event, else the process end tick if the dump is
 *    COMPLETE and it is later than the thread's last event (that last
 *    interval counts as Application: nothing says the OS acted), else the
 *    last event.
 *  - EXIT and RETURN pop whatever frame is on top (generic: the runtime
 *    reports mismatches itself as UNWIND mismatch).
 */
#ifndef INSTR_PROFILE_H
#define INSTR_PROFILE_H

#include <stddef.h>
#include <stdint.h>

#include "dump-reader.h"

/* The four values plus calls and flagged intervals, all in ticks. */
struct instr_values {
    uint64_t ei;        /* elapsed inclusive */
    uint64_t ee;        /* elapsed exclusive */
    uint64_t ai;        /* application inclusive */
    uint64_t ae;        /* application exclusive */
    uint64_t calls;     /* ENTER (or CALL) events */
    uint64_t flagged_n; /* flagged intervals with this frame on top */
    uint64_t flagged_t; /* their total ticks */
};

#define INSTR_UNWIND_REASONS 4 /* index = INSTR_UNWIND_*, 0 = unknown reason */

struct instr_repairs {
    uint64_t unwound[INSTR_UNWIND_REASONS]; /* frames popped by EXT UNWIND, by reason */
    uint64_t unmatched_exits;               /* EXIT/RETURN on an empty stack, ignored */
    uint64_t incomplete;                    /* frames closed at a thread's end */
    uint64_t bad_chunks;                    /* chunks whose decoding stopped on invalid bytes */
    uint64_t dropped;                       /* events lost, from DROPPED events */
    uint64_t clock_back;                    /* chunk bases earlier than the previous event */
};

/* Frame keys: a function id, or a call-site id with this bit set. */
#define INSTR_KEY_SITE (1ull << 63)

struct instr_pfunc {
    uint64_t key;                     /* function id, or call-site id | INSTR_KEY_SITE */
    const struct instr_function *fn;  /* metadata, NULL if missing or a call site */
    uint32_t module;                  /* index into modules (nmodules - 1 = unknown) */
    struct instr_values v;
};

struct instr_pthread {
    uint32_t index;
    uint64_t tid;
    const char *name;     /* may be NULL */
    uint64_t first_tick;  /* first event */
    uint64_t end_tick;    /* the tick its open frames were closed at (or last event) */
    uint64_t events;
    struct instr_values v; /* inclusive = intervals with a non-empty stack; exclusive = same */
};

struct instr_pmodule {
    const char *path; /* NULL for the unknown module */
    struct instr_values v;
};

struct instr_profile {
    const struct instr_dump *dump;
    struct instr_pfunc *funcs;
    size_t nfuncs;
    struct instr_pthread *threads;
    size_t nthreads;
    struct instr_pmodule *modules; /* dump modules in order, then "unknown" */
    size_t nmodules;
    struct instr_values total; /* process: ei = non-empty intervals, ai = those not flagged */
    struct instr_repairs repairs;
    uint64_t events;
    size_t max_nodes; /* largest call tree of a thread */
};

int instr_profile_build(struct instr_profile *p, const struct instr_dump *d, char *err, size_t errlen);
void instr_profile_free(struct instr_profile *p);

#endif
