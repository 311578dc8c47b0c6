/* compensate.h - probe-overhead compensation: the hooks' own cost taken
 * out of the intervals they bound (instr-report; --raw keeps raw values).
 *
 * The runtime measured at start what one hook of each kind adds to the
 * interval its event ends (before) and to the interval that starts there
 * (after): the dump's HOOK_COST records (dump-format.h).  The interval
 * between events a and b holds the cost after(a) + before(b):
 *
 *        call f       enter f              exit f      return
 *   main ---|------------|--------------------|-----------|--- main
 *           | after(call)| after(enter)       |after(exit)|
 *           | +before(en-| + f's own time     |+before(re-|
 *           |  ter)      | + before(exit)     | turn)     |
 *
 * so f's Elapsed Inclusive holds all four hooks' cost but before(call),
 * and main's all four.  Compensation charges each interval its length less
 * that cost.  The walk keeps costs in 1/1024 ticks (the records' mticks
 * rounded: a shift, not a division, on the walk's chain from one interval
 * to the next); the remainder below one tick carries to the next interval
 * of the thread, so what is subtracted adds up exactly.  An interval
 * shorter than its hooks' cost is charged 0 and counted (clamped), never
 * hidden; the rest of its cost (the deficit) is owed by the next intervals
 * of the thread, up to the cost of one whole call (the carry's cap), an
 * interval charged to nobody (an empty stack) or the thread's end; what is
 * left over is counted (unpaid).  The deficit is real time misplaced, not
 * a smaller cost: an out-of-order core reads a hook's TSC before the work
 * around it is done, or after, so the tick between two intervals moves and
 * what one interval lacks the next one holds.  On Lua (156 M intervals,
 * most of them shorter than their hooks' cost) clamping alone left about a
 * sixth of the hooks' cost in the values, and main's compensated Elapsed
 * Inclusive at 4.7-5.3x the uninstrumented run's time; with the carry,
 * 1.1-1.8x (bench/run-real.py).  The cost found in the intervals a frame
 * is charged is its Probe Overhead, measured whether or not it is
 * subtracted (inclusive like Elapsed: its own hooks' and its callees').
 *
 * The hook behind an event: ENTER, EXIT, CALL and RETURN their own; an
 * UNWIND (a pop inside some hook) costs as an EXIT; RUNTIME (the runtime's
 * own slow work, cut out of every value) is transparent; the other events
 * (marks, counters, thread end, fork re-entries) have no measured cost.
 * Zero-length intervals (the events of one hook) hold no cost.
 */
#ifndef INSTR_COMPENSATE_H
#define INSTR_COMPENSATE_H

#include <stdint.h>

#include "dump-reader.h"

#define INSTR_COMP_KINDS 8 /* cost slots: INSTR_EV_* of the hook kinds; 0 = no cost */
#define INSTR_COMP_TRANSPARENT 7u
#define INSTR_COMP_SHIFT 10 /* the walk's cost unit: 1/1024 tick */

/* One thread's walk. */
struct instr_compensator {
    uint32_t before[INSTR_COMP_KINDS], after[INSTR_COMP_KINDS]; /* 1/1024 ticks */
    int subtract;   /* the costs come off the charged values (else only measured) */
    unsigned prev;  /* cost slot of the event the current interval started at */
    uint64_t carry; /* 1/1024 ticks owed by the next interval: below one tick, or a clamped one's deficit */
    uint64_t cap;   /* most carried: one whole call's hooks */
    uint64_t unpaid; /* 1/1024 ticks owed that no interval took, until the thread's end
                        (here, not in out: a store less in the walk's loop) */
};

/* What compensation found (and did) in a profile. */
struct instr_compensation {
    int known;          /* the dump has hook costs */
    int applied;        /* ... and they were subtracted (not --raw) */
    uint64_t intervals; /* charged intervals holding a hook cost */
    uint64_t clamped;   /* of which shorter than that cost: charged 0 */
    uint64_t ticks;     /* the hook cost found in charged intervals (subtracted when applied) */
    uint64_t unpaid;    /* ticks of clamped intervals' deficits no later interval took (the cap, a thread's end) */
};

/* The dump's costs; raw (d->raw) or without HOOK_COST records nothing is
 * subtracted.  Sets out->known and out->applied. */
void instr_compensator_init(struct instr_compensator *c, struct instr_compensation *out, const struct instr_dump *d);

/* Whether d's hooks took the slow path for a part of the run its hook
 * costs do not hold: the switch went off on code not built switchable
 * (its hooks then filter, runtime/filter.c), and the runtime had measured
 * the fast path at start.  Part of the hooks' cost then stays in the
 * values; the report says so. */
int instr_comp_slow_unmeasured(const struct instr_dump *d);

/* A thread starts: no interval open yet. */
static inline void instr_compensator_thread(struct instr_compensator *c)
{
    c->prev = 0;
    c->carry = 0;
}

/* A thread ends: what it still owes is unpaid. */
static inline void instr_compensator_thread_end(struct instr_compensator *c, struct instr_compensation *out)
{
    out->unpaid += (c->unpaid + c->carry) >> INSTR_COMP_SHIFT;
    c->unpaid = c->carry = 0;
}

static inline unsigned instr_comp_slot(const struct instr_event *ev)
{
    if (ev->kind != INSTR_EV_EXT)
        return ev->kind;
    if (ev->ext == INSTR_EXT_UNWIND)
        return INSTR_EV_EXIT;
    return ev->ext == INSTR_EXT_RUNTIME ? INSTR_COMP_TRANSPARENT : 0;
}

/* The interval of d ticks that ev ends: returns the ticks to charge and
 * puts the hook cost inside it in *po.  charged: someone is charged with
 * it (a non-empty stack): counted in out. */
static inline uint64_t instr_compensate(struct instr_compensator *c, struct instr_compensation *out,
                                        const struct instr_event *ev, uint64_t d, int charged, uint64_t *po)
{
    unsigned k = instr_comp_slot(ev), p = c->prev;
    *po = 0;
    if (k == INSTR_COMP_TRANSPARENT)
        return d;
    c->prev = k;
    uint64_t mt = (uint64_t)c->after[p] + c->before[k];
    if (!d || !mt)
        return d;
    if (__builtin_expect(!charged, 0)) {
        /* nobody's interval (an empty stack): what was owed stays unpaid */
        c->unpaid += c->carry;
        c->carry = 0;
    }
    mt += c->carry;
    uint64_t cost = mt >> INSTR_COMP_SHIFT;
    c->carry = mt & ((1u << INSTR_COMP_SHIFT) - 1);
    if (cost > d) {
        uint64_t owed = mt - (d << INSTR_COMP_SHIFT);
        c->carry = owed < c->cap ? owed : c->cap;
        c->unpaid += owed - c->carry;
        cost = d;
        out->clamped += (uint64_t)(charged != 0);
    }
    if (charged) {
        out->intervals++;
        out->ticks += cost;
    }
    *po = cost;
    return c->subtract ? d - cost : d;
}

#endif
