/* profile.c - the walk of each thread's events: the stack rebuilt interval
 * by interval (profile.h), each interval charged to the frame on top; the
 * call tree it grows is profile-tree.c's. */
#include "profile.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arrays.h"
#include "profile-walker.h"

/* A suspended stack: the walker's stack, state, depth and capstack. */
struct saved_stack {
    uint64_t id;
    uint32_t *stack;
    uint8_t *state;
    uint32_t depth;
    size_t cap;
};


#define INSTR_PROFILE_UNLIKELY(x) __builtin_expect(!!(x), 0)

/* Stack entry states (call sites, see walk_thread). */
enum {
    ST_FRAME,         /* a function frame, or a call site's pseudo-frame */
    ST_MERGED,        /* a call site and the entry of its callee: one frame */
    ST_MERGED_EXITED, /* ... whose callee exited: the call site's return pops it */
    ST_PENDING,       /* a call site whose next event is not seen yet (no node) */
};
#define PENDING_NODE UINT32_MAX

/* ---- the walk of one thread ------------------------------------------------
 *
 * Each event goes through four named steps:
 *
 *   decode (walk_thread)       the next event of the thread's chunks, its tick;
 *   charge                     the interval it ends, to the frame on top;
 *   resolve_pending            a call site on top becomes the callee's frame
 *                              (merged) or a pseudo-frame, now that the next
 *                              event is known;
 *   apply_event                the event on the stack: push_frame, push_site,
 *                              pop_frame, with the repairs (profile.h).
 *
 * A CALL whose next event is its callee's ENTER or its own RETURN (most of
 * them) takes a shortcut with the same result: call_then_next makes the
 * frame that event decides at once and charges its interval to it, so
 * neither push_site nor resolve_pending runs.
 *
 * push_frame, resolve_pending, call_then_next and pop_frame are the only
 * places a frame opens or closes, and they tell the timeline observer
 * (w->tl): an export of the timeline is this same walk, with the same
 * numbering of threads and functions, not a second one.  The observer sees timeline ticks: the
 * dump's ticks less the runtime's own work so far in the thread (EXT
 * RUNTIME, which no value is charged with either), so a call's duration on
 * the timeline is its Elapsed Inclusive in the report. */

/* Grows the walk's stack and its states together (doubling). */
int instr_pwalk_grow_stack(struct walker *w)
{
    size_t nc = w->capstack * 2;
    uint32_t *s = realloc(w->stack, nc * sizeof *s);
    if (!s)
        return INSTR_ENOMEM;
    w->stack = s;
    uint8_t *st = realloc(w->state, nc);
    if (!st)
        return INSTR_ENOMEM;
    w->state = st;
    w->capstack = nc;
    return 0;
}

/* The timeline tick the observer is told for timeline tick t: never
 * earlier than the last one told in the thread.  The timeline goes back
 * where a chunk's base is earlier than the event before it (a clock that
 * went back, counted in clock_back): told as is, a call open across it
 * would close before it opened, its caller could end before it, and an
 * export that keeps the longest calls would keep a callee without its
 * caller.  Held still there, calls nest on the timeline as on the stack. */
static inline uint64_t observed_tick(struct walker *w, uint64_t t)
{
    if (t < w->tl_last)
        return w->tl_last;
    return w->tl_last = t;
}

/* The observer: a frame of node n opens or closes at timeline tick t. */
static inline int observe_open(struct walker *w, uint32_t n, uint64_t t)
{
    if (INSTR_PROFILE_UNLIKELY(w->tl != NULL) && w->tl->frame_open)
        return w->tl->frame_open(w->tl->ctx, w->thread, w->nodes[n].fn, observed_tick(w, t));
    return 0;
}

static inline int observe_close(struct walker *w, uint32_t n, uint64_t t, int incomplete)
{
    if (INSTR_PROFILE_UNLIKELY(w->tl != NULL) && w->tl->frame_close)
        return w->tl->frame_close(w->tl->ctx, w->thread, w->nodes[n].fn, observed_tick(w, t), incomplete);
    return 0;
}

/* CPU time of the interval: all of it but its exact off-CPU ticks (the
 * cpuclock backend writes them after a flagged event's bits; an interval
 * nobody flagged was on the CPU throughout).  Whether the values are known
 * at all is the session's business (every dump ran cpuclock); a flagged
 * interval without off-CPU ticks is counted on the CPU, and counted. */
static inline void charge_cpu(struct walker *w, struct node *n, unsigned os, unsigned bits, uint64_t d,
                              uint64_t off)
{
    n->ce += d - off;
    if (INSTR_PROFILE_UNLIKELY(os) && !(bits & INSTR_OS_OFFCPU_FOLLOWS))
        w->p->offcpu_unknown++;
}

/* Each kind of a flagged interval gets it (--flagged, per kind), whether
 * or not --os-events counts that kind. */
static void charge_kinds(struct flagged *f, unsigned bits, uint64_t d)
{
    for (int k = 0; k < INSTR_OS_NKINDS; k++)
        if (bits & instr_os_kinds[k].bit) {
            f->kind_n[k]++;
            f->kind_t[k] += d;
        }
}

/* The observer: the interval (from, to] with the current top function.
 * Under a call site whose frame is not decided yet (the callee's, merged,
 * or the site's pseudo-frame: resolve_pending), the intervals wait for
 * the decision, so a sample in an uninstrumented callee lands on its
 * pseudo-frame, not on the caller.  More than fit: the last one grows. */
static int observe_interval(struct walker *w, uint64_t from, uint64_t to)
{
    uint32_t d = w->depth;
    if (d && w->stack[d] == PENDING_NODE) {
        if (w->pend_niv < 8) {
            w->pend_iv[w->pend_niv][0] = from;
            w->pend_iv[w->pend_niv++][1] = to;
        } else {
            w->pend_iv[7][1] = to;
        }
        return 0;
    }
    return w->iv->interval(w->iv->ctx, w->thread, from, to, d ? w->nodes[w->stack[d]].fn : UINT32_MAX);
}

/* The intervals held while the call site pended, now that it has a frame. */
static int observe_pending(struct walker *w)
{
    int n = w->pend_niv, rc = 0;
    w->pend_niv = 0;
    for (int i = 0; i < n && rc == 0; i++)
        rc = observe_interval(w, w->pend_iv[i][0], w->pend_iv[i][1]);
    return rc;
}

/* The rest of charge for an interval the OS acted in (os, its transition
 * bits and off-CPU ticks), or under an excluded frame.  Scalars, not the
 * event: the walk's event never has its address taken. */
static void charge_flagged(struct walker *w, struct node *n, unsigned os, unsigned bits, uint64_t offcpu,
                           uint64_t d)
{
    /* never more than the interval; the hooks' cost came off the on-CPU part */
    uint64_t off = offcpu < d ? offcpu : d;
    struct flagged *f = instr_ptree_flagged_of(w, n);
    if (os)
        charge_kinds(f, bits, d);
    if ((!os || !instr_os_counts(bits, w->os_ignored)) && !n->excluded) {
        n->ae += d;
    } else {
        f->n++;
        f->t += d;
        f->offcpu_t += off;
    }
    charge_cpu(w, n, os, bits, d, off);
}

/* The observer: the interval of d ticks ending at dump tick `tick`, as
 * charge decided it (a frame is on top). */
static void observe_charged(struct walker *w, uint64_t tick, uint64_t d, unsigned os, unsigned bits,
                            uint64_t offcpu, int excluded)
{
    uint64_t off = os ? (offcpu < d ? offcpu : d) : 0;
    int app = (!os || !instr_os_counts(bits, w->os_ignored)) && !excluded;
    unsigned kinds = os ? (bits & INSTR_OS_ALL_KINDS) ? bits & INSTR_OS_ALL_KINDS : INSTR_OS_UNKNOWN : 0;
    /* Not observed_tick, which holds the tick still: a pending call
     * site's frame is told after its intervals, from an earlier tick. */
    w->tl->charged(w->tl->ctx, w->thread, tick - w->cut, d, app ? d : 0, d - off, kinds);
}

/* Charges the interval of d ticks that ev ends to the frame on top (the
 * pending call site's time is held in w->pend), less the hooks' cost
 * (compensate.h), which the timeline cuts too.  It is Application time
 * unless the OS acted in it (in a kind --os-events counts) or the frame is
 * excluded (--not-application). */
static inline __attribute__((always_inline)) void charge(struct walker *w, const struct instr_event *ev, uint64_t d,
                                                         uint64_t tick)
{
    uint64_t po, c = instr_compensate(&w->comp, &w->p->comp, ev, d, w->depth != 0, &po);
    w->cut += d - c;
    d = c;
    if (!w->depth)
        return;
    uint32_t top = w->stack[w->depth];
    struct node *n = top == PENDING_NODE ? &w->pend : &w->nodes[top];
    if (INSTR_PROFILE_UNLIKELY(w->tl != NULL) && w->tl->charged)
        observe_charged(w, tick, d, ev->os, ev->bits, ev->offcpu, n->excluded);
    n->ee += d;
    n->po += po;
    if (INSTR_PROFILE_UNLIKELY(ev->os || n->excluded)) {
        if (INSTR_PROFILE_UNLIKELY(w->notyet) && ev->offcpu)
            w->notyet_off += ev->offcpu < d ? ev->offcpu : d; /* no page fault off the CPU */
        charge_flagged(w, n, ev->os, ev->bits, ev->offcpu, d);
        return;
    }
    n->ae += d; /* nothing flagged it: Application time, on the CPU throughout */
    n->ce += d;
}

/* ---- Wall Inclusive steps (wall.h): frames open and close in dump ticks,
 * and the time the runtime took for itself is cut out of every open one. */

static void wall_opened(struct walker *w, uint32_t fn, uint64_t tick)
{
    if (w->depth == 1)
        instr_wall_root_open(w->wall, tick);
    instr_wall_open(w->wall, fn, tick);
}

static void wall_closed(struct walker *w, uint32_t fn, uint64_t tick)
{
    instr_wall_close(w->wall, fn, tick);
    if (w->depth == 1)
        instr_wall_root_close(w->wall, tick);
}

/* A pending call site's frame opens when it is resolved, from its own
 * tick, less the gaps met meanwhile. */
static void wall_resolved(struct walker *w, uint32_t fn)
{
    instr_wall_open(w->wall, fn, w->pend_raw);
    for (int g = 0; g < w->pend_ngaps; g++)
        instr_wall_split(w->wall, fn, w->pend_gap[g][0], w->pend_gap[g][1]);
}

/* From tick to resume the thread's time is nobody's (EXT RUNTIME, or a
 * clock that jumped): every open frame's segment ends and starts again. */
static void wall_gap(struct walker *w, uint64_t tick, uint64_t resume)
{
    if (!w->depth)
        return;
    instr_wall_root_split(w->wall, tick, resume);
    for (uint32_t i = 1; i <= w->depth; i++) {
        if (w->stack[i] != PENDING_NODE) {
            instr_wall_split(w->wall, w->nodes[w->stack[i]].fn, tick, resume);
        } else if (w->pend_ngaps < 4) {
            w->pend_gap[w->pend_ngaps][0] = tick;
            w->pend_gap[w->pend_ngaps++][1] = resume;
        } else {
            w->pend_gap[3][1] = resume; /* more gaps than kept: the last one widens (rare) */
        }
    }
}

/* Opens a frame for key above the top; count: a call (ENTER, not REENTER). */
static inline int push_frame(struct walker *w, uint64_t key, int count, uint64_t tick)
{
    if (w->depth + 1 >= w->capstack && instr_pwalk_grow_stack(w) < 0)
        return INSTR_ENOMEM;
    uint32_t c = child(w, w->stack[w->depth], key);
    if (c == UINT32_MAX)
        return INSTR_ENOMEM;
    w->stack[++w->depth] = c;
    w->state[w->depth] = ST_FRAME;
    w->nodes[c].calls += (uint64_t)count;
    if (INSTR_PROFILE_UNLIKELY(w->wall != NULL))
        wall_opened(w, w->nodes[c].fn, tick);
    return observe_open(w, c, tick - w->cut);
}

/* Pushes a call site whose frame is not known yet (resolve_pending). */
static inline int push_site(struct walker *w, uint64_t site, int reenter, uint64_t tick)
{
    if (w->depth + 1 >= w->capstack && instr_pwalk_grow_stack(w) < 0)
        return INSTR_ENOMEM;
    w->stack[++w->depth] = PENDING_NODE;
    w->state[w->depth] = ST_PENDING;
    w->pend.ee = w->pend.ae = w->pend.ce = w->pend.po = 0;
    w->pend.flagged = 0;
    w->pend.excluded = w->nodes[w->stack[w->depth - 1]].excluded;
    w->pending = 1;
    w->pend_site = site;
    w->pend_reenter = reenter;
    w->pend_tick = tick - w->cut;
    w->pend_raw = tick;
    w->pend_ngaps = 0;
    w->pend_niv = 0;
    if (INSTR_PROFILE_UNLIKELY(w->wall != NULL) && w->depth == 1)
        instr_wall_root_open(w->wall, tick);
    return 0;
}

/* Closes the frame on top; incomplete: by a repair at the thread's end. */
static inline int pop_frame(struct walker *w, uint64_t tick, int incomplete)
{
    int rc = observe_close(w, w->stack[w->depth], tick - w->cut, incomplete);
    if (INSTR_PROFILE_UNLIKELY(w->wall != NULL))
        wall_closed(w, w->nodes[w->stack[w->depth]].fn, tick);
    w->depth--;
    return rc;
}

/* Closes every open frame at tick (a thread's end), counted as repaired. */
static int pop_all(struct walker *w, uint64_t tick)
{
    w->p->repairs.incomplete += w->depth;
    int rc = 0;
    while (w->depth && rc == 0)
        rc = pop_frame(w, tick, 1);
    w->depth = 0;
    return rc;
}

/* The frame key of a call site's pseudo-frame: its name's index, or (no
 * CALLSITE record) the site id itself with bit 62, named "[site N]". */
static uint64_t site_key(const struct instr_profile *p, uint64_t site)
{
    uint32_t k = instr_sitemap_pseudo_dense(&p->sites, p->dump, site);
    return INSTR_KEY_SITE | (k == UINT32_MAX ? INSTR_KEY_UNNAMED | (site & (INSTR_KEY_UNNAMED - 1)) : k);
}

/* The pending call site on top gets its frame from the event after it (its
 * kind, ext and arg; kind 0 at the thread's end): the callee's entry makes one frame with the
 * call site (the event is then consumed: returns 1), anything else a
 * pseudo-frame (returns 0).  The call site's time so far goes with it.
 * At the thread's end (its THREAD_END, or the end of its events: the
 * process exited while the thread was between
 * the call-site hook and the callee's entry hook), a site that calls an
 * instrumented function becomes that function's frame: the call was made,
 * and a pseudo-frame of an instrumented function would be a row no run
 * without the exit has. */
static int resolve_pending(struct walker *w, unsigned kind, unsigned ext, uint64_t arg)
{
    struct instr_profile *p = w->p;
    int merged = 0;
    if ((kind == INSTR_EV_ENTER && !w->pend_reenter) ||
        (kind == INSTR_EV_EXT && ext == INSTR_EXT_REENTER && w->pend_reenter))
        merged = instr_sitemap_merges_memo(&p->sites, p->dump, w->pend_site, arg);
    int ends = kind == 0 || (kind == INSTR_EV_EXT && ext == INSTR_EXT_THREAD_END);
    /* An entry naming no function after a call site: the entry hook was
     * cut while it wrote its event (seen at exit: "enter 0", the id's byte
     * still zero).  It is the callee's entry, consumed as one. */
    int torn = !merged && kind == INSTR_EV_ENTER && !w->pend_reenter && !instr_dump_function(p->dump, arg);
    uint64_t callee = ends || torn ? instr_sitemap_callee(&p->sites, p->dump, w->pend_site) : UINT64_MAX;
    if (torn && callee != UINT64_MAX)
        merged = 1;
    uint64_t key = callee != UINT64_MAX ? callee : merged ? arg & ~INSTR_KEY_SITE : site_key(p, w->pend_site);
    uint32_t c = child(w, w->stack[w->depth - 1], key);
    if (c == UINT32_MAX)
        return INSTR_ENOMEM;
    struct node *n = &w->nodes[c];
    n->ee += w->pend.ee;
    n->ae += n->excluded ? 0 : w->pend.ae; /* an excluded callee: the call was not Application */
    n->ce += w->pend.ce;
    n->po += w->pend.po;
    if (INSTR_PROFILE_UNLIKELY(w->pend.flagged))
        instr_ptree_add_flagged(w, n, &w->flagged[w->pend.flagged]);
    n->calls += (uint64_t)!w->pend_reenter;
    w->stack[w->depth] = c;
    w->state[w->depth] = merged || callee != UINT64_MAX ? ST_MERGED : ST_FRAME;
    w->pending = 0;
    if (INSTR_PROFILE_UNLIKELY(w->wall != NULL))
        wall_resolved(w, n->fn);
    int rc = observe_open(w, c, w->pend_tick);
    if (rc == 0 && INSTR_PROFILE_UNLIKELY(w->iv != NULL))
        rc = observe_pending(w);
    return rc < 0 ? rc : merged;
}

/* CALL site at tick, and in the chunk at *qp the next event, when that is
 * the ENTER of the function the site calls (most calls) or the site's
 * RETURN (a call of an uninstrumented function that called nothing back):
 * the frame resolve_pending would give the site when that event came is
 * made at once, the event's interval is charged to it, and a RETURN pops
 * it; *qp, *tick and *prev move past the event, which is consumed.
 * Returns 1 if so, 0 when the general way must go on (push_site: another
 * next event, the end of the chunk, or a frame excluded from Application
 * time otherwise than its caller, which the pending time tells apart), or
 * a negative error.  The caller leaves out the interval observer, for
 * which a pending site's time is its caller's. */
static inline __attribute__((always_inline)) int call_then_next(struct walker *w, uint64_t site,
                                                                 const uint8_t **qp, const uint8_t *end,
                                                                 uint64_t *tick, uint64_t *prev)
{
    const uint8_t *q = *qp;
    struct instr_event nx = {0};
    if (instr_decode_event(&q, end, &nx) <= 0)
        return 0;
    int merged;
    if (nx.kind == INSTR_EV_ENTER)
        merged = 1;
    else if (nx.kind == INSTR_EV_RETURN)
        merged = 0;
    else
        return 0;
    if (merged && !instr_sitemap_merges_memo(&w->p->sites, w->p->dump, site, nx.arg))
        return 0;
    if (w->depth + 1 >= w->capstack && instr_pwalk_grow_stack(w) < 0)
        return INSTR_ENOMEM;
    uint32_t parent = w->stack[w->depth];
    uint32_t c = child(w, parent, merged ? nx.arg & ~INSTR_KEY_SITE : site_key(w->p, site));
    if (c == UINT32_MAX)
        return INSTR_ENOMEM;
    if (w->nodes[c].excluded != w->nodes[parent].excluded)
        return 0; /* the same child is found again when the event resolves the site */
    w->stack[++w->depth] = c;
    w->state[w->depth] = merged ? ST_MERGED : ST_FRAME;
    w->nodes[c].calls++;
    if (INSTR_PROFILE_UNLIKELY(w->wall != NULL)) {
        if (w->depth == 1)
            instr_wall_root_open(w->wall, *tick);
        instr_wall_open(w->wall, w->nodes[c].fn, *tick);
    }
    int rc = observe_open(w, c, *tick - w->cut);
    if (rc < 0)
        return rc;
    *tick += nx.delta;
    uint64_t d = *tick - *prev;
    *prev = *tick;
    charge(w, &nx, d, *tick);
    *qp = q;
    if (!merged && (rc = pop_frame(w, *tick, 0)) < 0) /* the RETURN, as apply_event does it */
        return rc;
    return 1;
}

/* EXIT, RETURN and UNWIND: the frame on top ends.  A merged frame (call
 * site + callee) is two runtime frames: the first of its two ends (EXIT,
 * or the first UNWIND) only marks it; RETURN (or the second UNWIND) pops. */
enum { ENDED_POPPED, ENDED_MERGED_HALF, ENDED_UNMATCHED };
static inline int end_frame(struct walker *w, int ends_merged_half, uint64_t tick)
{
    if (!w->depth) {
        w->p->repairs.unmatched_exits++; /* a repair: ignored */
        return ENDED_UNMATCHED;
    }
    if (ends_merged_half && w->state[w->depth] == ST_MERGED) {
        w->state[w->depth] = ST_MERGED_EXITED;
        return ENDED_MERGED_HALF;
    }
    return pop_frame(w, tick, 0); /* ENDED_POPPED, or an observer's error */
}

static int switch_stack(struct walker *w, uint64_t id, uint64_t tick);
static int close_saved_stacks(struct walker *w, uint64_t tick);

/* The span the detectors saw less in (EXT UNSEEN: paused, or not watching
 * yet) ends at tick. */
static void unseen_span(struct walker *w, struct instr_pthread *th, uint64_t tick)
{
    if (tick > w->unseen_at) {
        if (w->unseen)
            th->unseen_ticks += tick - w->unseen_at;
        if (w->notyet) { /* on the CPU: off it, a thread takes no page fault */
            uint64_t span = tick - w->unseen_at;
            th->notyet_ticks += span - (w->notyet_off < span ? w->notyet_off : span);
        }
    }
    w->notyet_off = 0;
    w->unseen_at = tick;
}

/* Applies ev, at tick, to the stack.  *tick and *prev move on a RESYNC. */
static inline __attribute__((always_inline)) int apply_event(struct walker *w, struct instr_pthread *th,
                                                              const struct instr_event *ev, uint64_t *tick,
                                                              uint64_t *prev)
{
    struct instr_repairs *rep = &w->p->repairs;
    const struct instr_timeline *tl = w->tl;
    int rc;
    switch (ev->kind) {
    case INSTR_EV_ENTER:
        return push_frame(w, ev->arg & ~INSTR_KEY_SITE, 1, *tick);
    case INSTR_EV_CALL:
        return push_site(w, ev->arg, 0, *tick);
    case INSTR_EV_EXIT: /* a merged frame stays until its call site returns */
        rc = end_frame(w, 1, *tick);
        return rc < 0 ? rc : 0;
    case INSTR_EV_RETURN:
        rc = end_frame(w, 0, *tick);
        return rc < 0 ? rc : 0;
    case INSTR_EV_EXT:
        break;
    default:
        return 0;
    }
    switch (ev->ext) {
    case INSTR_EXT_UNWIND:
        /* An exception or longjmp went through the frame on top. */
        rc = end_frame(w, 1, *tick);
        if (rc == ENDED_POPPED)
            rep->unwound[ev->arg < INSTR_UNWIND_REASONS ? ev->arg : 0]++;
        return rc < 0 ? rc : 0;
    case INSTR_EXT_THREAD_END:
        th->end_tick = *tick;
        return pop_all(w, *tick);
    case INSTR_EXT_REENTER: /* pushed again after an unwind: no call counted */
        return push_frame(w, ev->arg & ~INSTR_KEY_SITE, 0, *tick);
    case INSTR_EXT_REENTER_SITE:
        return push_site(w, ev->arg, 1, *tick);
    case INSTR_EXT_RESYNC:
        if (w->wall)
            wall_gap(w, *tick, ev->arg);
        *tick = *prev = ev->arg;
        return 0;
    case INSTR_EXT_STACK_SWITCH:
        return switch_stack(w, ev->arg, *tick);
    case INSTR_EXT_DROPPED:
        rep->dropped += ev->arg;
        th->dropped += ev->arg;
        return 0;
    case INSTR_EXT_UNSEEN:
        unseen_span(w, th, *tick);
        w->unseen = (unsigned)ev->arg & 0xffu;
        w->notyet = (unsigned)(ev->arg >> 8) & 0xffu;
        th->unseen_kinds |= w->unseen;
        th->notyet_kinds |= w->notyet;
        return 0;
    case INSTR_EXT_SWITCH: { /* process-wide: the windows are made after the walk */
        struct instr_switch *a = instr_grow(w->p->switches, &w->p->capswitches, w->p->nswitches + 1, sizeof *a, 16);
        if (!a)
            return INSTR_ENOMEM;
        w->p->switches = a;
        a[w->p->nswitches++] = (struct instr_switch){*tick, ev->arg != 0};
        return 0;
    }
    case INSTR_EXT_MARK: /* MARK, COUNTER: they only split an interval */
        return tl && tl->mark ? tl->mark(tl->ctx, w->thread, ev->arg, observed_tick(w, *tick - w->cut)) : 0;
    case INSTR_EXT_COUNTER:
        return tl && tl->counter ? tl->counter(tl->ctx, w->thread, ev->arg, ev->value, observed_tick(w, *tick - w->cut))
                               : 0;
    default:
        return 0;
    }
}

/* Of the last interval (d ticks, from the thread's last event to the
 * process's end), the ticks off the CPU: what the thread's CPU clock read
 * at the end (EXIT_CPU, after the last event) leaves for it once the
 * thread's CPU time so far is counted (every on-CPU tick charged, and the
 * ticks cut as the runtime's or the hooks' own: the clock saw those too).
 * Without the record, none: the interval is counted on the CPU. */
static uint64_t last_offcpu(const struct walker *w, const struct instr_thread_info *ti, uint64_t prev, uint64_t d)
{
    double hz = w->p->dump->tick_hz;
    if (!ti || !ti->has_exit_cpu || ti->exit_cpu_tick < prev || !(hz > 0))
        return 0;
    uint64_t used = w->cut + w->pend.ce;
    for (uint32_t i = 0; i < w->nnodes; i++)
        used += w->nodes[i].ce;
    double clock = (double)ti->exit_cpu_ns * hz / 1e9;
    double left = clock > (double)used ? clock - (double)used : 0;
    return left >= (double)d ? 0 : d - (uint64_t)left;
}

/* The end of a thread: a call site still pending becomes a pseudo-frame;
 * open frames are closed (a repair) at the process's end when the dump
 * says it ended and that is later (the last interval is charged: on the
 * CPU for what the thread's CPU clock at the end allows, the rest off the
 * CPU and flagged sched, as a wait the detectors would have flagged),
 * else at the last event. */
static int close_thread(struct walker *w, const struct instr_thread_info *ti, struct instr_pthread *th,
                        uint64_t prev)
{
    int rc;
    if (prev > th->end_tick)
        th->end_tick = prev;
    unseen_span(w, th, th->end_tick);
    w->unseen = w->notyet = 0;
    if (w->pending && (rc = resolve_pending(w, 0, 0, 0)) < 0)
        return rc;
    if (!w->depth)
        return close_saved_stacks(w, prev);
    /* Where the thread was when its record ends: how a process that did
     * not finish ended, when that was a call that does not return. */
    th->open_top = w->nodes[w->stack[w->depth]].fn;
    th->open_caller = w->depth > 1 ? w->nodes[w->stack[w->depth - 1]].fn : UINT32_MAX;
    const struct instr_dump_header *h = &w->p->dump->hdr;
    uint64_t close_at = prev;
    /* A record cut short (the file truncated, a chunk damaged, events
     * dropped): the thread's last event is not where it was at the end.
     * Its open frames close at that event, and the rest of the run is
     * time nobody knows of, said as such (never Application or CPU). */
    int cut = w->thread_cut || w->p->dump->truncated || h->dropped_events;
    if (cut && (h->flags & (INSTR_DUMP_COMPLETE | INSTR_DUMP_SIGNALED)) && h->end_tsc > prev) {
        w->p->repairs.cut_threads++;
        w->p->repairs.unrecorded_ticks += h->end_tsc - prev;
    } else if ((h->flags & (INSTR_DUMP_COMPLETE | INSTR_DUMP_SIGNALED)) && h->end_tsc > prev) {
        struct node *n = &w->nodes[w->stack[w->depth]];
        uint64_t d = h->end_tsc - prev, off = last_offcpu(w, ti, prev, d);
        n->ee += d;
        if (INSTR_PROFILE_UNLIKELY(w->tl != NULL) && w->tl->charged)
            observe_charged(w, h->end_tsc, d, off ? 1 : 0, off ? INSTR_OS_SCHED | INSTR_OS_OFFCPU_FOLLOWS : 0, off,
                            n->excluded);
        if (off || n->excluded)
            charge_flagged(w, n, off ? 1 : 0, off ? INSTR_OS_SCHED | INSTR_OS_OFFCPU_FOLLOWS : 0, off, d);
        else {
            n->ae += d;
            n->ce += d;
        }
        th->end_tick = close_at = h->end_tsc;
    }
    if ((rc = pop_all(w, close_at)) < 0)
        return rc;
    return close_saved_stacks(w, close_at);
}

/* The start of a thread's walk: an empty stack; prev: the first tick. */
static uint64_t thread_start(struct walker *w, const struct instr_thread_info *ti, struct instr_pthread *th)
{
    struct instr_profile *p = w->p;
    instr_ptree_thread(w);
    w->stack[0] = 0;
    w->depth = 0;
    w->pending = 0;
    w->cut = 0;
    w->tl_last = 0;
    w->unseen = w->notyet = 0;
    w->notyet_off = 0;
    w->thread_cut = 0;
    instr_compensator_thread(&w->comp);
    w->nsaved = 0;
    w->running = 0;
    w->thread = (uint32_t)(th - p->threads);
    uint64_t prev = ti->nchunks ? ti->chunks[0].base_tsc : 0;
    th->first_tick = prev;
    th->open_top = th->open_caller = UINT32_MAX;
    if (ti->nchunks) {
        /* The first event's tick, decoded once outside the hot loop. */
        struct instr_event ev0;
        const uint8_t *q0 = ti->chunks[0].payload;
        if (instr_decode_event(&q0, q0 + ti->chunks[0].len, &ev0) > 0)
            th->first_tick = ti->chunks[0].base_tsc + ev0.delta;
    }
    return prev;
}

/* Walks one chunk of a thread: decode each event, charge the interval it
 * ends, then resolve a pending call site and apply the event.  No
 * allocation unless the stack gets deeper than ever or a new call path
 * appears.  *prevp: the last event's tick; *eventsp: events so far. */
static inline __attribute__((always_inline)) int walk_chunk(struct walker *w, struct instr_pthread *th,
                                                            const struct instr_chunk_ref *ch, uint64_t *prevp,
                                                            uint64_t *eventsp)
{
    struct instr_profile *p = w->p;
    struct instr_repairs *rep = &p->repairs;
    uint64_t prev = *prevp, events = *eventsp;
    int rc;
    const uint8_t *q = ch->payload, *end = ch->payload + ch->len;
    uint64_t tick = ch->base_tsc;
    if (tick < prev) {
        /* A base earlier than the last event: count the first delta
         * only, never a negative interval. */
        if (w->wall)
            wall_gap(w, prev, tick);
        prev = tick;
        rep->clock_back++;
    }
    struct instr_event ev = {0};
    int r;
    while ((r = instr_decode_event(&q, end, &ev)) > 0) {
        tick += ev.delta;
        uint64_t d = tick - prev;
        prev = tick;
        events++;
        if (INSTR_PROFILE_UNLIKELY(w->iv != NULL) && (rc = observe_interval(w, tick - d, tick)) < 0)
            return rc;
        charge(w, &ev, d, tick);
        /* kind alone first: testing kind and ext together made GCC load
         * them as one 16-bit word just after the decoder stored them as
         * two bytes, a store-forwarding stall on every event. */
        if (INSTR_PROFILE_UNLIKELY(ev.kind == INSTR_EV_EXT) && ev.ext == INSTR_EXT_RUNTIME) {
            /* The runtime worked on itself from here: nobody is charged,
             * the timeline cuts it, and a pending call site still looks
             * at the next event. */
            if (INSTR_PROFILE_UNLIKELY(w->wall != NULL))
                wall_gap(w, tick, tick + ev.arg);
            tick += ev.arg;
            prev = tick;
            w->cut += ev.arg;
            rep->runtime_ticks += ev.arg;
            continue;
        }
        if (INSTR_PROFILE_UNLIKELY(w->pending) && ev.kind == INSTR_EV_EXT && ev.ext == INSTR_EXT_UNSEEN) {
            /* What the detectors watch changed (written after a hook's
             * event, a CALL's too): bookkeeping, as RUNTIME, so the
             * pending call site still looks at the next event. */
            if ((rc = apply_event(w, th, &ev, &tick, &prev)) < 0)
                return rc;
            continue;
        }
        if (INSTR_PROFILE_UNLIKELY(w->pending)) {
            if ((rc = resolve_pending(w, ev.kind, ev.ext, ev.arg)) < 0)
                return rc;
            if (rc)
                continue; /* the callee's entry: one frame with its call site */
        }
        if (ev.kind == INSTR_EV_CALL && !w->iv) {
            if ((rc = call_then_next(w, ev.arg, &q, end, &tick, &prev)) < 0)
                return rc;
            if (rc) {
                events++;
                continue;
            }
        }
        if ((rc = apply_event(w, th, &ev, &tick, &prev)) < 0)
            return rc;
    }
    if (r < 0 || (q < end && !ch->open)) {
        rep->bad_chunks++;
        w->thread_cut = 1;
    }
    instr_dump_chunk_done(p->dump, ch);
    *prevp = prev;
    *eventsp = events;
    return 0;
}

/* The end of a thread's walk: its open frames closed (close_thread), its
 * counts into the profile; the fold of its tree is the caller's. */
static int thread_finish(struct walker *w, const struct instr_thread_info *ti, struct instr_pthread *th,
                         uint64_t prev, uint64_t events)
{
    struct instr_profile *p = w->p;
    int rc;
    if ((rc = close_thread(w, ti, th, prev)) < 0)
        return rc;
    instr_compensator_thread_end(&w->comp, &p->comp);
    if (w->wall)
        instr_wall_thread_end(w->wall);
    th->events = events;
    p->events += events;
    if (w->nnodes > p->max_nodes)
        p->max_nodes = w->nnodes;
    return 0;
}

/* Walks one thread, chunk after chunk, and folds its tree. */
static int walk_thread(struct walker *w, const struct instr_thread_info *ti, struct instr_pthread *th)
{
    uint64_t prev = thread_start(w, ti, th), events = 0;
    int rc;
    for (size_t ci = 0; ci < ti->nchunks; ci++)
        if ((rc = walk_chunk(w, th, &ti->chunks[ci], &prev, &events)) < 0)
            return rc;
    if ((rc = thread_finish(w, ti, th, prev, events)) < 0)
        return rc;
    return instr_ptree_fold(w, th);
}

/* ---- the merged walk: every thread at once, in time order (wall.h) ------
 *
 * Wall Inclusive with several threads of one process: each thread has a
 * walker of its own (stack, tree, pending call site, compensator state;
 * the function map and the fold's counters are the build's, handed from
 * walker to walker), the thread whose position is lowest walks its next
 * chunk, and the changes its frames queue are applied up to the lowest
 * position of any thread not finished.  Trees fold in thread order and
 * the functions are numbered as the walk of one thread after the other
 * numbers them (renumber), so the profile is the sequential walk's. */
struct live {
    struct walker w;
    struct instr_wall wall;
    size_t ci;             /* the next chunk */
    uint64_t prev, events;
    int state;             /* 0 not begun, 1 walking, 2 walked (tree not folded), 3 folded */
};

static void share(struct walker *to, const struct walker *from)
{
    to->fnmap = from->fnmap;
    to->originmap = from->originmap;
    to->fncount = from->fncount;
    to->extcount = from->extcount;
    to->capfncount = from->capfncount;
    to->modcount = from->modcount;
}

/* No change the thread queues from now on is earlier than this. */
static uint64_t live_pos(const struct live *t, const struct instr_thread_info *ti)
{
    if (t->state == 0)
        return ti->nchunks ? ti->chunks[0].base_tsc : 0;
    uint64_t pos = t->prev;
    if (t->ci < ti->nchunks && ti->chunks[t->ci].base_tsc < pos)
        pos = ti->chunks[t->ci].base_tsc; /* the clock went back: the gap ends there */
    if (t->w.pending && t->w.pend_raw < pos)
        pos = t->w.pend_raw; /* its frame opens at its call site's tick */
    return pos;
}

static void live_free(struct live *t)
{
    instr_ptree_free_thread(&t->w);
    free(t->w.stack);
    free(t->w.state);
    for (size_t i = 0; i < t->w.capsaved; i++) {
        free(t->w.saved[i].stack);
        free(t->w.saved[i].state);
    }
    free(t->w.saved);
    t->w.stack = NULL;
    t->w.state = NULL;
    t->w.saved = NULL;
    t->w.capsaved = 0;
    instr_wall_free(&t->wall);
}

/* The functions numbered in the order the sequential walk meets them:
 * threads in order, each tree's nodes in the order they were made. */
static int renumber(struct instr_profile *p)
{
    uint32_t *to = malloc((p->nfuncs ? p->nfuncs : 1) * sizeof *to);
    struct instr_pfunc *f = malloc((p->nfuncs ? p->nfuncs : 1) * sizeof *f);
    uint64_t *len = calloc(p->nfuncs ? p->nfuncs : 1, sizeof *len);
    if (!to || !f || !len) {
        free(to);
        free(f);
        free(len);
        return INSTR_ENOMEM;
    }
    for (size_t i = 0; i < p->nfuncs; i++)
        to[i] = UINT32_MAX;
    uint32_t next = 0;
    for (size_t k = 0; k < p->nnodes; k++) {
        uint32_t fn = p->nodes[k].func;
        if (fn != UINT32_MAX && to[fn] == UINT32_MAX)
            to[fn] = next++;
    }
    for (size_t i = 0; i < p->nfuncs; i++)
        if (to[i] == UINT32_MAX)
            to[i] = next++;
    for (size_t i = 0; i < p->nfuncs; i++) {
        f[to[i]] = p->funcs[i];
        len[to[i]] = i < p->merged.nfn ? p->merged.len[i] : 0;
    }
    for (size_t k = 0; k < p->nnodes; k++)
        if (p->nodes[k].func != UINT32_MAX)
            p->nodes[k].func = to[p->nodes[k].func];
    free(p->funcs);
    p->funcs = f;
    free(p->merged.len);
    p->merged.len = len;
    p->merged.nfn = p->nfuncs;
    free(p->merged.count);
    free(p->merged.since);
    p->merged.count = NULL;
    p->merged.since = NULL;
    free(to);
    return 0;
}

/* The threads not walked to their end, as a binary min-heap on (their
 * position, their index): the next to walk is on top, and only its
 * position changes with a walk, so a walk costs log n, not a scan of
 * every thread (a server of thousands of threads). */
struct live_heap {
    uint32_t *at; /* thread indexes */
    uint64_t *pos;
    size_t n;
};

static int heap_before(const struct live_heap *h, size_t a, size_t b)
{
    return h->pos[a] < h->pos[b] || (h->pos[a] == h->pos[b] && h->at[a] < h->at[b]);
}

static void heap_swap(struct live_heap *h, size_t a, size_t b)
{
    uint32_t at = h->at[a];
    uint64_t pos = h->pos[a];
    h->at[a] = h->at[b], h->pos[a] = h->pos[b];
    h->at[b] = at, h->pos[b] = pos;
}

static void heap_down(struct live_heap *h, size_t i)
{
    for (;;) {
        size_t l = 2 * i + 1, m = i;
        if (l < h->n && heap_before(h, l, m))
            m = l;
        if (l + 1 < h->n && heap_before(h, l + 1, m))
            m = l + 1;
        if (m == i)
            return;
        heap_swap(h, i, m);
        i = m;
    }
}

static int walk_merged(struct walker *w)
{
    struct instr_profile *p = w->p;
    const struct instr_dump *d = p->dump;
    size_t n = d->nthreads, folded = 0;
    struct live *t = calloc(n ? n : 1, sizeof *t);
    struct live_heap h = {malloc((n ? n : 1) * sizeof *h.at), malloc((n ? n : 1) * sizeof *h.pos), n};
    if (!t || !h.at || !h.pos) {
        free(t);
        free(h.at);
        free(h.pos);
        return INSTR_ENOMEM;
    }
    for (size_t i = 0; i < n; i++) {
        h.at[i] = (uint32_t)i;
        h.pos[i] = live_pos(&t[i], &d->threads[i]);
    }
    for (size_t i = n / 2; i-- > 0;)
        heap_down(&h, i);
    int rc = 0;
    while (h.n) {
        size_t best = h.at[0];
        struct live *l = &t[best];
        const struct instr_thread_info *ti = &d->threads[best];
        struct instr_pthread *th = &p->threads[best];
        if (l->state == 0) {
            l->w = *w;
            l->w.wall = &l->wall;
            l->w.saved = NULL;
            l->w.nsaved = l->w.capsaved = 0;
            l->w.capstack = 256;
            l->w.stack = NULL;
            l->w.state = NULL;
            l->state = 1;
            if (instr_wall_merge_thread(&p->merged, &l->wall) < 0 || instr_ptree_init_thread(&l->w) < 0 ||
                !(l->w.stack = malloc(256 * sizeof *l->w.stack)) ||
                !(l->w.state = malloc(256))) {
                rc = INSTR_ENOMEM;
                break;
            }
            l->prev = thread_start(&l->w, ti, th);
        }
        share(&l->w, w);
        if (l->ci < ti->nchunks)
            rc = walk_chunk(&l->w, th, &ti->chunks[l->ci++], &l->prev, &l->events);
        if (rc == 0 && l->ci == ti->nchunks) {
            rc = thread_finish(&l->w, ti, th, l->prev, l->events);
            l->state = 2;
        }
        share(w, &l->w);
        if (rc < 0)
            break;
        if (l->state < 2)
            h.pos[0] = live_pos(l, ti);
        else
            heap_swap(&h, 0, --h.n);
        heap_down(&h, 0);
        instr_wall_merge_advance(&p->merged, h.n ? h.pos[0] : UINT64_MAX);
        while (folded < n && t[folded].state == 2 && rc == 0) {
            share(&t[folded].w, w);
            rc = instr_ptree_fold(&t[folded].w, &p->threads[folded]);
            share(w, &t[folded].w);
            live_free(&t[folded]);
            t[folded++].state = 3;
        }
        if (rc < 0)
            break;
    }
    for (size_t i = 0; i < n; i++)
        if (t[i].state)
            live_free(&t[i]);
    free(t);
    free(h.at);
    free(h.pos);
    return rc < 0 ? rc : renumber(p);
}

static int switch_windows(struct instr_profile *p);

int instr_profile_build(struct instr_profile *p, const struct instr_dump *d, char *err, size_t errlen)
{
    return instr_profile_build_excluding(p, d, NULL, err, errlen);
}

int instr_profile_build_excluding(struct instr_profile *p, const struct instr_dump *d,
                                  const struct instr_exclusions *x, char *err, size_t errlen)
{
    return instr_profile_build_timeline(p, d, x, NULL, err, errlen);
}

int instr_profile_build_timeline(struct instr_profile *p, const struct instr_dump *d,
                                 const struct instr_exclusions *x, const struct instr_timeline *tl, char *err,
                                 size_t errlen)
{
    const struct instr_profile_opts o = {.x = x, .tl = tl};
    return instr_profile_build_opts(p, d, &o, err, errlen);
}

int instr_profile_build_intervals(struct instr_profile *p, const struct instr_dump *d,
                                  const struct instr_interval_observer *iv, char *err, size_t errlen)
{
    const struct instr_profile_opts o = {.iv = iv};
    return instr_profile_build_opts(p, d, &o, err, errlen);
}

int instr_profile_build_opts(struct instr_profile *p, const struct instr_dump *d, const struct instr_profile_opts *o,
                             char *err, size_t errlen)
{
    /* Options that change no walk (--mpi-prefixes alone): none. */
    const struct instr_exclusions *x = instr_exclusions_walk(o->x) ? o->x : NULL;
    memset(p, 0, sizeof *p);
    p->dump = d;
    p->wall_on = o->wall != 0;
    p->wall_merged = o->wall == 2 && !o->tl && !o->iv && d->nthreads > 1 &&
                     d->nthreads <= INSTR_WALL_MERGE_MAX_THREADS;
    struct walker w = {.p = p, .x = x, .tl = o->tl, .iv = o->iv, .os_ignored = x ? x->os_ignored : 0,
                       .wall = o->wall ? &p->wall : NULL};
    int rc = INSTR_ENOMEM;
    p->nmodules = d->nmodules + 1;
    if (!(p->modules = calloc(p->nmodules, sizeof *p->modules)) ||
        (d->nthreads && !(p->threads = calloc(d->nthreads, sizeof *p->threads))))
        goto out;
    for (size_t i = 0; i < d->nmodules; i++)
        p->modules[i].path = d->modules[i].path;
    instr_compensator_init(&w.comp, &p->comp, d);
    w.capstack = 256;
    if (instr_ptree_init(&w) < 0 || !(w.stack = malloc(w.capstack * sizeof *w.stack)) ||
        !(w.state = malloc(w.capstack)) ||
        instr_sitemap_build(&p->sites, d) < 0)
        goto out;
    for (size_t i = 0; i < d->nthreads; i++) {
        struct instr_pthread *th = &p->threads[p->nthreads++];
        th->index = d->threads[i].index;
        th->tid = d->threads[i].tid;
        th->name = d->threads[i].name;
        th->open_top = th->open_caller = UINT32_MAX;
        if (!p->wall_merged && (rc = walk_thread(&w, &d->threads[i], th)) < 0)
            goto out;
    }
    if (p->wall_merged && (rc = walk_merged(&w)) < 0)
        goto out;
    rc = switch_windows(p);
out:
    instr_ptree_free(&w);
    free(w.stack);
    free(w.state);
    for (size_t i = 0; i < w.capsaved; i++) {
        free(w.saved[i].stack);
        free(w.saved[i].state);
    }
    free(w.saved);
    if (rc < 0) {
        snprintf(err, errlen, "%s: %s", d->path, instr_tool_strerror(rc));
        instr_profile_free(p);
    }
    return rc;
}

static int by_tick(const void *a, const void *b)
{
    const struct instr_switch *x = a, *y = b;
    return (x->tick > y->tick) - (x->tick < y->tick);
}

/* The windows in which the switchable hooks were on: from the state the
 * dump began in (INSTR_DUMP_SWITCHED_OFF) through every switch, in time
 * order, to the process's end (or its last event). */
static int switch_windows(struct instr_profile *p)
{
    const struct instr_dump *d = p->dump;
    int off = (d->hdr.flags & INSTR_DUMP_SWITCHED_OFF) != 0;
    p->switched_at = p->nswitches;
    if (!p->nswitches && !off)
        return 0;
    if (p->nswitches > 1)
        qsort(p->switches, p->nswitches, sizeof *p->switches, by_tick);
    uint64_t end = d->hdr.end_tsc ? d->hdr.end_tsc : d->hdr.last_tsc;
    for (size_t t = 0; t < p->nthreads; t++)
        if (p->threads[t].end_tick > end)
            end = p->threads[t].end_tick;
    p->windows = malloc((p->nswitches + 1) * sizeof *p->windows);
    if (!p->windows)
        return INSTR_ENOMEM;
    int on = !off;
    uint64_t from = d->hdr.start_tsc;
    for (size_t i = 0; i <= p->nswitches; i++) {
        uint64_t at = i < p->nswitches ? p->switches[i].tick : end;
        int next = i < p->nswitches ? (int)p->switches[i].on : !on;
        if (next == on && i < p->nswitches)
            continue; /* switched to the state it was in */
        if (on && at > from) {
            p->windows[p->nwindows++] = (struct instr_window){from, at};
            p->recorded_ticks += at - from;
        }
        on = next;
        from = at;
    }
    return 0;
}

void instr_profile_free(struct instr_profile *p)
{
    free(p->windows);
    free(p->switches);
    for (size_t i = 0; p->funcs && i < p->nfuncs; i++) {
        free(p->funcs[i].origin);
        free(p->funcs[i].origin_demangled);
    }
    INSTR_FREE_ALL(p->funcs, p->threads, p->modules, p->nodes);
    instr_sitemap_free(&p->sites, p->dump ? p->dump->nsites : 0);
    instr_wall_free(&p->wall);
    instr_wall_merge_free(&p->merged);
    memset(p, 0, sizeof *p);
}

/* ---- stacks (EXT STACK_SWITCH) ----------------------------------------------
 *
 * A thread that switches stacks itself (coroutines) has one stack of open
 * frames per stack it runs on; the runtime says which one runs from each
 * EXT STACK_SWITCH on.  The running stack is w->stack; the others wait in
 * w->saved (ids are the runtime's, never reused in a thread) and are
 * charged nothing while suspended.  The event comes after any pending call
 * site was resolved (it is the "next event" that makes it a pseudo-frame). */
/* The timeline observer sees frames open and close innermost first: the
 * running stack's frames close at a switch, the resumed stack's open again
 * (a suspended call is several segments on the timeline). */
static int observe_stack(struct walker *w, uint64_t tick, int open)
{
    int rc = 0;
    if (INSTR_PROFILE_UNLIKELY(w->tl != NULL))
        for (uint32_t i = 1; i <= w->depth && rc == 0; i++)
            rc = open ? observe_open(w, w->stack[i], tick - w->cut)
                      : observe_close(w, w->stack[w->depth + 1 - i], tick - w->cut, 0);
    return rc;
}

static int switch_stack(struct walker *w, uint64_t id, uint64_t tick)
{
    int rc = observe_stack(w, tick, 0);
    if (rc < 0)
        return rc;
    size_t i, fresh = w->nsaved;
    for (i = 0; i < w->nsaved && w->saved[i].id != id; i++)
        if (!w->saved[i].depth && fresh == w->nsaved)
            fresh = i; /* an empty stack is not kept: its entry serves again */
    if (i == w->nsaved) { /* a new stack: an empty entry */
        if ((i = fresh) == w->nsaved) {
            struct saved_stack *s = instr_grow_zeroed(w->saved, &w->capsaved, w->nsaved + 1, sizeof *s, 4);
            if (!s)
                return INSTR_ENOMEM;
            w->saved = s;
            w->nsaved++;
        }
        struct saved_stack *e = &w->saved[i];
        if (!e->cap) {
            if (!(e->stack = malloc(256 * sizeof *e->stack)) || !(e->state = malloc(256)))
                return INSTR_ENOMEM;
            e->cap = 256;
        }
        e->stack[0] = 0;
        e->depth = 0;
    }
    /* Swap the running stack and the entry: no copy. */
    struct saved_stack *e = &w->saved[i];
    uint32_t *st = w->stack, d = w->depth;
    uint8_t *ss = w->state;
    size_t cap = w->capstack;
    w->stack = e->stack;
    w->state = e->state;
    w->capstack = e->cap;
    w->depth = e->depth;
    *e = (struct saved_stack){.id = w->running, .stack = st, .state = ss, .depth = d, .cap = cap};
    w->running = id;
    return observe_stack(w, tick, 1);
}

/* The thread ended with stacks suspended: their frames close at tick, as
 * the running stack's do (incomplete). */
static int close_saved_stacks(struct walker *w, uint64_t tick)
{
    int rc = 0;
    for (size_t i = 0; i < w->nsaved && rc == 0; i++)
        if (w->saved[i].depth && (rc = switch_stack(w, w->saved[i].id, tick)) == 0)
            rc = pop_all(w, tick);
    return rc;
}
