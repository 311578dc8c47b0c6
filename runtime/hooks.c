/* hooks.c - the hot path: enter, exit, landing and call-site hooks.
 *
 * Per event: one TLS load, the recursion guard, rdtsc, the detector check
 * (two loads and a compare), the shadow-stack push or pop, a varint head and
 * payload stored straight into the thread's chunk of the shared file mapping.
 * No locks, no allocation, no syscalls, errno untouched; everything else
 * (first hook of a thread, first call of a function, full chunk) is a call
 * out of line.
 *
 * Shadow-stack repair.  Each entry is {desc, cfa}; a live caller's CFA is
 * strictly greater than its callee's (the stack grows down), inlined copies
 * share their host's CFA.  Exits that never come (longjmp, an exception
 * unwinding through a frame, or a frame whose exit hook was not reached) are
 * found by comparing CFAs:
 *
 *      shadow stack          real stack after longjmp to main's setjmp
 *   +----------------+
 *   | h   cfa=0x700  |  <- top     (gone)
 *   | g   cfa=0x800  |             (gone)
 *   | f   cfa=0xa00  |             f is live: cfa 0xa00
 *   | main cfa=0xc00 |             main
 *   +----------------+
 *   enter(k, cfa=0x900):  h (0x700) and g (0x800) lie below the new frame's
 *   CFA, so they cannot be its ancestors: close them (EXT UNWIND STACK) at
 *   this tick, then push k.  f (0xa00 > 0x900) stays: k may be f's callee.
 *
 *   exit(f, 0xa00) with g, h still above: close them (UNWIND STACK, or
 *   MISMATCH if their cfa >= 0xa00, i.e. an inlined frame sharing f's CFA
 *   whose exit we missed), then EXIT f.  An exit that names no live frame
 *   writes nothing and counts in the header's unmatched_exits.
 *
 *   landing(f, 0xa00): an exception was caught in f: everything above the
 *   topmost (f, 0xa00) closes with UNWIND EXCEPTION; f goes on.
 *
 * Call-site frames sit on the same stack with their caller's CFA, above
 * the caller, so every rule above applies to them unchanged:
 *
 *   | write [site] cfa=0xa00 |  <- call(site, 0xa00): a frame f owns
 *   | f            cfa=0xa00 |
 *   | main         cfa=0xc00 |
 *
 *   a callee entered from it has a lower CFA: it stays below; a new call
 *   from f closes a site frame of f still on top (a longjmp left it); landing(f)
 *   closes it with the frames the exception left (the call it stands for
 *   was left by that exception); return(site, 0xa00) pops the topmost site
 *   frame with that CFA, closing what is above it like exit does.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <string.h>

#include "record.h"
#include "stack-switch.h"
#include "fatal-signals.h"

static inline uint8_t *room(struct instr__thread *t, uint8_t *p)
{
    if (INSTR_UNLIKELY(p >= t->limit)) {
        t->pos = p;
        instr__chunk_next(t);
        p = t->pos;
    }
    return p;
}

/* The hooks, as deferred events name them. */
enum { HOOK_ENTER, HOOK_EXIT, HOOK_CALL, HOOK_RETURN, HOOK_LANDING,
       HOOK_SWITCH /* not a hook: api.c's EXT SWITCH (INSTR_SIGNAL's handler), target = on */ };

static void hook_busy(struct instr__thread *t, unsigned kind, const void *desc, uintptr_t cfa,
                      void *target, void *ra);

/* A hook whose CFA lies more than INSTR_RT_STACK_SPAN from `from` (the top
 * frame's CFA, or the sentinel's) came from another stack: is it run by
 * another task sharing our memory (foreign-task.c)?  Then it must not touch
 * the state at all, not even the deferred slots of a held guard: checked
 * before the guard is looked at. */
static inline int foreign(struct instr__thread *t, uintptr_t cfa)
{
    if (t->top[-1].cfa - cfa < INSTR_RT_STACK_SPAN || instr__stack_known(t, cfa))
        return 0;
    if (instr__foreign_task(t, cfa))
        return 1;
    instr__sud_altstack(t); /* ours: a handler on the alternate signal stack? */
    return 0;
}

/* A slow path's check, once the guard is free: has recording stopped for
 * good (a limit reached, a sandbox)?  Then this thread stops too
 * (instr__thread_stopped) and this hook's event is counted as dropped.
 * The fast paths go on filling the chunk they have, then meet the stop
 * at its end (thread-state.c). */
static inline int stopped_now(struct instr__thread *t, unsigned ev)
{
    if (INSTR_LIKELY(!instr__rt.stopped) || !instr__rt.header)
        return 0;
    instr__thread_stopped(t);
    instr__count_dropped_kind(ev);
    return 1;
}

/* What a hook hands its writer: the descriptor (function, or call site),
 * the CFA, and for a call site its target and return address. */
struct hook_arg {
    const void *desc;
    uintptr_t cfa;
    void *target;
    void *ra;
    uint32_t id; /* fast paths: the id they already read */
    int replayed; /* a deferred event (a handler's): it nests, never switches stacks */
};

static uint8_t *unwind(struct instr__thread *t, uint8_t *p, uint64_t now, unsigned *bits,
                       unsigned reason)
{
    t->top--;
    p = instr__put_head(t, p, now, bits, INSTR_EV_EXT);
    p = instr_put_ext(p, INSTR_EXT_UNWIND, reason, 0);
    return room(t, p);
}

/* A hook at cfa far from the top frame: another stack (stack-switch.c)? */
static inline uint8_t *switch_stack(struct instr__thread *t, uint8_t *p, const struct hook_arg *a,
                                    int entry, uint64_t now, unsigned *bits)
{
    if (INSTR_LIKELY(t->top[-1].cfa - a->cfa < INSTR_RT_STACK_SPAN) || a->replayed)
        return p;
    return room(t, instr__stack_switch(t, p, a->cfa, entry, now, bits));
}

/* Frames below this CFA cannot be live ancestors of a frame entered with
 * cfa.  A frame with the same CFA cannot either, unless hooks may have been
 * inlined into their caller (inline=before), where it can be the host.  So
 * after a longjmp back into a function, its next call closes the frames
 * the jump left even though the new callee reuses their CFA. */
static inline uintptr_t dead_below(const struct instr_fn_desc *d, uintptr_t cfa)
{
    return cfa + !(d->flags & INSTR_FN_SHARES_CFA);
}

/* Frames on top that cannot be live ancestors of the new frame: close them. */
static __attribute__((noinline)) uint8_t *close_dead(struct instr__thread *t, uint8_t *p,
                                                     uintptr_t cfa, uint64_t now, unsigned *bits)
{
    while (t->top > t->base && t->top[-1].cfa < cfa)
        p = unwind(t, p, now, bits, INSTR_UNWIND_STACK);
    return p;
}

/* ---- record-time filters (filter.c) ------------------------------------- */

/* The rewind slot of frame f (INSTR_MIN_DURATION): by its depth. */
static inline struct instr__rewind *rewind_of(struct instr__thread *t, const struct instr__frame *f)
{
    return &t->rewind[(size_t)(f - t->base) % INSTR__REWIND_SLOTS];
}

/* INSTR_MIN_DURATION: frame f is being pushed with its event at p: where
 * the event starts and what the thread's clock state was, so that its
 * return can take it back (fold_short).  Marked kept when it cannot be:
 * the event carries transition bits, which would be lost with it
 * (slow_push also marks it when a registration's time was spent off the
 * CPU).  NULL, and the slot cleared, when p lies in no chunk of the
 * thread's. */
static struct instr__rewind *rewind_mark(struct instr__thread *t, const struct instr__frame *f,
                                         uint8_t *p, int keep)
{
    struct instr__rewind *r = rewind_of(t, f);
    r->desc = NULL;
    struct instr_chunk_header *c = instr__stage_chunk_of(&t->stage, p + 1);
    if (!c)
        return NULL;
    r->before = p;
    r->last_tsc = t->last_tsc;
    r->clean_ticks = t->det.clean_ticks;
    r->desc = f->desc;
    r->cfa = f->cfa;
    r->seq = c->seq;
    r->kept = (uint8_t)!!keep;
    r->by_call = 0;
    return r;
}

/* Whether frame f's event, as its rewind slot r says, can still be taken
 * back with the write position at p: it is the last event written (what
 * came after it was taken back already), in the same chunk. */
static int can_take_back(struct instr__thread *t, const struct instr__frame *f,
                         const struct instr__rewind *r, uint8_t *p)
{
    if (r->desc != f->desc || r->cfa != f->cfa || r->after != p || r->kept)
        return 0;
    struct instr_chunk_header *c = instr__stage_chunk_of(&t->stage, p);
    return c && c->seq == r->seq && instr__stage_chunk_of(&t->stage, r->before + 1) == c;
}

/* Takes frame f (the top one) and its event back: the bytes are zeroed (a
 * killed process's reader stops at the first zero byte) and the clock
 * state put back, so the next event's interval runs from the one before:
 * the caller's time.  A first call's registration stays, as an EXT
 * RUNTIME at the call's tick (charged to nobody, as before).  Returns the
 * new write position. */
static uint8_t *take_back(struct instr__thread *t, struct instr__frame *f, struct instr__rewind *r,
                          uint8_t *p)
{
    r->before[0] = 0;
    instr__barrier();
    memset(r->before + 1, 0, (size_t)(p - r->before - 1));
    instr__barrier();
    t->last_tsc = r->last_tsc;
    t->det.clean_ticks = r->clean_ticks;
    r->desc = NULL;
    t->top = f;
    p = r->before;
    if (r->runtime) {
        unsigned none = 0;
        p = instr__put_head(t, p, r->tsc, &none, INSTR_EV_EXT);
        p = instr_put_ext(p, INSTR_EXT_RUNTIME, r->runtime, 0);
        t->last_tsc = r->tsc + r->runtime;
        t->det.clean_ticks += r->runtime;
        /* The caller's event just before: it may still fold, the
         * registration's time then going to its own tick. */
        struct instr__rewind *up = f > t->base ? rewind_of(t, f - 1) : NULL;
        if (up && up->desc == f[-1].desc && up->cfa == f[-1].cfa && up->after == r->before) {
            up->after = p;
            up->runtime += r->runtime;
        }
    }
    return p;
}

/* INSTR_MIN_DURATION: the top frame returns at now with its event to go
 * at p.  If its own event is the last one written (everything it called
 * was folded already), in the same chunk, and it began less than
 * min_ticks ago on an interval the OS left alone, take it back, and with
 * it the call-site frame of the call that entered it, if there is one:
 *
 *   | sink          ENTER |  <- returns 300 ns after its entry: short
 *   | work [sink]   CALL  |  <- the CALL just before: taken back with it,
 *   | work          ENTER |     though the call-site frame's own span
 *                               (the hooks' time on both sides) may not be
 *
 * else the CALL's RETURN would leave a pseudo-frame `sink` of one call
 * beside the real one (issue 38).  The CALL is the call's when no other
 * hook ran between the two (by_call, from t->called); a frame whose CALL
 * cannot go (it carries the OS's transition bits, a chunk ended between
 * them) stays with it.  Returns the new write position, or NULL to record
 * the return as usual. */
static uint8_t *fold_short(struct instr__thread *t, uint8_t *p, uint64_t now, unsigned bits)
{
    struct instr__frame *f = &t->top[-1];
    struct instr__rewind *r = rewind_of(t, f);
    if (bits || !can_take_back(t, f, r, p) || now - r->tsc >= instr__filter.min_ticks)
        return NULL;
    struct instr__frame *s = r->by_call && f > t->base && INSTR__IS_SITE(f[-1].desc) ? f - 1 : NULL;
    struct instr__rewind *rs = s ? rewind_of(t, s) : NULL;
    if (s && !can_take_back(t, s, rs, r->before))
        return NULL;
    if (s && r->runtime) {
        /* The registration's EXT RUNTIME would sit between them: fold the
         * two as one, the time going to the CALL's tick. */
        rs->runtime += r->runtime;
        r->runtime = 0;
    }
    p = take_back(t, f, r, p);
    t->filtered[INSTR__FILTERED_SHORT] += !INSTR__IS_SITE(f->desc); /* calls of functions */
    if (s)
        p = take_back(t, s, rs, p);
    return p;
}

/* Whether the function frames on t's shadow stack are depth or more.  A
 * call-site frame stands for its callee, at its caller's depth + 1, like
 * the callee's own frame above it: only function frames count.  Frames
 * deeper than the limit are never pushed, so the walk is short. */
static int depth_reached(const struct instr__thread *t, uint32_t depth)
{
    uint64_t n = t->overflow;
    if ((uint64_t)(t->top - t->base) + n < depth)
        return 0; /* fewer frames of any kind */
    for (const struct instr__frame *q = t->top; q > t->base && n < depth; q--)
        n += !INSTR__IS_SITE(q[-1].desc);
    return n >= depth;
}

/* Whether a filtering thread records the frame it is entering: -1 yes,
 * else the INSTR__FILTERED_* reason it does not. */
static inline int filter_skip(const struct instr__thread *t)
{
    if (!__atomic_load_n(&instr__filter.on, __ATOMIC_RELAXED))
        return INSTR__FILTERED_OFF;
    if (instr__filter.depth && depth_reached(t, instr__filter.depth))
        return INSTR__FILTERED_DEPTH;
    return -1;
}

/* A frame at cfa pushed as a root, or not recorded with no frame recorded
 * either: the sentinel moves near it, so that later root frames nearby,
 * and the hooks of its callees, stay fast rather than being taken for
 * another stack's (foreign: a system call each; with recording off, every
 * hook was). */
static inline void sentinel_near(struct instr__thread *t, uintptr_t cfa)
{
    if (t->top == t->base)
        t->base[-1].cfa = cfa + INSTR_RT_STACK_SPAN / 2;
}

/* A trigger switched recording: EXT SWITCH, as instr_start/instr_stop
 * write it (api.c), if this thread is the one that changed it. */
static uint8_t *trigger(struct instr__thread *t, uint8_t *p, uint64_t now, unsigned *bits, int on)
{
    if (__atomic_exchange_n(&instr__filter.on, on, __ATOMIC_RELAXED) == on)
        return p;
    p = instr__put_head(t, p, now, bits, INSTR_EV_EXT);
    return room(t, instr_put_ext(p, INSTR_EXT_SWITCH, (uint32_t)on, 0));
}

/* The common end of the enter and call writers, once dead frames are
 * closed: push the frame (or, past the shadow stack's capacity, count it as
 * untracked), write the event at p, then the runtime's own time if it just
 * registered the function or site. */
static uint8_t *slow_push(struct instr__thread *t, uint8_t *p, const void *desc, uintptr_t cfa,
                          uint64_t now, unsigned *bits, unsigned kind, uint32_t id,
                          int registered)
{
    struct instr__frame *top = t->top;
    sentinel_near(t, cfa);
    if (!t->overflow && top >= t->end && instr__stack_grow(t) == 0)
        top = t->top;
    struct instr__rewind *r = NULL;
    if (t->overflow || top >= t->end) {
        t->overflow++; /* beyond capacity: recorded, not tracked */
        __atomic_fetch_add(&instr__rt.stack_overflows, 1, __ATOMIC_RELAXED);
    } else {
        top->desc = desc;
        top->cfa = cfa;
        t->top = top + 1;
        if (INSTR_UNLIKELY(t->pending_bits & INSTR__FILTERING) && instr__filter.min_ticks)
            r = rewind_mark(t, top, p, *bits != 0);
    }
    p = instr__put_head(t, p, now, bits, kind);
    p = instr_put_varint(p, id);
    uint8_t *rt = p;
    if (registered)
        p = instr__put_runtime(t, p);
    if (r) {
        r->after = p;
        r->tsc = now;
        r->runtime = p > rt ? t->last_tsc - now : 0;
        if (p > rt && (*rt & 8)) /* off the CPU (the head's OS flag): kept */
            r->kept = 1;
    }
    return p;
}

/* Whether the function d is the one the thread's last CALL names (a call
 * through a pointer names any).  The answer is kept for the next call of
 * the same site: the comparison of names was 15 ns of a 100 ns call. */
static int names_callee(struct instr__thread *t, const struct instr_fn_desc *d)
{
    if (!t->called_name)
        return 1;
    if (t->called_cmp_name != t->called_name || t->called_cmp_fn != d) {
        t->called_cmp_name = t->called_name;
        t->called_cmp_fn = d;
        t->called_cmp_same = !strcmp(t->called_name, d->names);
    }
    return t->called_cmp_same;
}

static uint8_t *enter_write(struct instr__thread *t, uint8_t *p, uint64_t now, unsigned *bits,
                            const void *arg)
{
    const struct hook_arg *a = arg;
    struct instr_fn_desc *d = (struct instr_fn_desc *)a->desc;
    uint32_t id = d->id;
    int registered = 0;
    if (INSTR_UNLIKELY(id == 0)) {
        sigset_t old;
        instr__signals_block(&old); /* a jump out of a handler must not leave the lock held */
        id = instr__register(d, INSTR_EV_ENTER);
        instr__signals_restore(&old);
        instr__detector_rearm(t); /* registration may have made syscalls */
        if (id == 0)
            return p; /* not recorded */
        registered = 1;
    }
    p = switch_stack(t, p, a, 1, now, bits); /* first: the depth is the new stack's */
    int called = 0;
    if (INSTR_UNLIKELY(t->pending_bits & INSTR__FILTERING)) {
        /* The call that entered it, if its CALL was the thread's last hook. */
        called = t->called && t->called == t->top && names_callee(t, d);
        t->called = NULL;
        if (d->rt_flags & INSTR_FN_RT_TRIGGER_ON)
            p = trigger(t, p, now, bits, 1);
        int why = filter_skip(t);
        if (why == INSTR__FILTERED_OFF && called)
            why = -1; /* recording went off (another thread's trigger) after its CALL
                         was recorded: the call is recorded whole, as one frame */
        if (why >= 0) {
            t->filtered[why]++; /* its exit finds no frame (filter_pop) */
            /* Not recorded, it still closes the dead frames: one a longjmp
             * left while recording was off would otherwise stay open to the
             * end (a handler's replayed entry may lie on another stack). */
            if (!a->replayed && !t->overflow && t->top > t->base && t->top[-1].cfa < dead_below(d, a->cfa))
                p = close_dead(t, p, dead_below(d, a->cfa), now, bits);
            sentinel_near(t, a->cfa);
            return registered ? instr__put_runtime(t, p) : p;
        }
    }
    if (INSTR_LIKELY(!t->overflow) && t->top > t->base && t->top[-1].cfa < dead_below(d, a->cfa))
        p = close_dead(t, p, dead_below(d, a->cfa), now, bits);
    p = slow_push(t, p, d, a->cfa, now, bits, INSTR_EV_ENTER, id, registered);
    if (called && t->top > t->base && t->top[-1].desc == d && rewind_of(t, t->top - 1)->desc == d)
        rewind_of(t, t->top - 1)->by_call = 1; /* fold_short takes its CALL with it */
    return p;
}

static __attribute__((noinline)) void enter_slow(struct instr_fn_desc *d, void *cfa_p)
{
    struct instr__thread *t = instr__record_thread(INSTR_EV_ENTER);
    if (INSTR_UNLIKELY(foreign(t, dead_below(d, (uintptr_t)cfa_p))))
        return;
    if (INSTR_UNLIKELY(t->busy))
        return hook_busy(t, HOOK_ENTER, d, (uintptr_t)cfa_p, NULL, NULL);
    if (INSTR_UNLIKELY(stopped_now(t, INSTR_EV_ENTER)))
        return;
    struct hook_arg a = {.desc = d, .cfa = (uintptr_t)cfa_p};
    instr__record(t, (uintptr_t)cfa_p, 1, enter_write, &a);
}

/* Whether frame f is the one exit(d, cfa) names; d == NULL: return(site,
 * cfa), which names the topmost call-site frame with that CFA. */
static inline int names_frame(const struct instr__frame *f, const struct instr_fn_desc *d,
                              uintptr_t cfa)
{
    return f->cfa == cfa && (d ? f->desc == d : INSTR__IS_SITE(f->desc));
}

/* exit(d, cfa) (or return, d == NULL) that is not the top frame: search
 * down for it. */
static __attribute__((noinline)) uint8_t *exit_repair(struct instr__thread *t, uint8_t *p,
                                                      const struct instr_fn_desc *d,
                                                      uintptr_t cfa, uint64_t now,
                                                      unsigned *bits)
{
    struct instr__frame *q = t->top;
    /* CFAs never increase towards the top (enter closes lower ones), so the
     * search stops at the first frame older than (d, cfa). */
    while (q > t->base && q[-1].cfa <= cfa) {
        if (names_frame(&q[-1], d, cfa))
            break;
        q--;
    }
    if (q == t->base || !names_frame(&q[-1], d, cfa)) {
        /* The exit of a call whose entry was dropped for want of an id
         * (metadata.c: counted there) is no mismatch. */
        if (d ? (d->rt_flags & INSTR_FN_RT_NO_ROOM) && !__atomic_load_n(&d->id, __ATOMIC_ACQUIRE)
              : t->unregistered > 0) {
            t->unregistered -= !d;
            return p;
        }
        if (instr__rt.header)
            __atomic_fetch_add(&instr__rt.header->unmatched_exits, 1, __ATOMIC_RELAXED);
        return p;
    }
    while (t->top > q)
        p = unwind(t, p, now, bits,
                   t->top[-1].cfa >= cfa ? INSTR_UNWIND_MISMATCH : INSTR_UNWIND_STACK);
    t->top--;
    return instr__put_head(t, p, now, bits, d ? INSTR_EV_EXIT : INSTR_EV_RETURN);
}

/* exit(d, cfa), or return(site, cfa) with a->desc == NULL. */
static uint8_t *pop_record(struct instr__thread *t, uint8_t *p, uint64_t now, unsigned *bits,
                           const void *arg)
{
    const struct hook_arg *a = arg;
    const struct instr_fn_desc *d = a->desc;
    struct instr__frame *top = t->top;
    if (INSTR_LIKELY(top > t->base && names_frame(&top[-1], d, a->cfa) && !t->overflow))
        t->top = top - 1;
    else if (t->overflow)
        t->overflow--;
    else
        return exit_repair(t, switch_stack(t, p, a, 0, now, bits), d, a->cfa, now, bits);
    return instr__put_head(t, p, now, bits, d ? INSTR_EV_EXIT : INSTR_EV_RETURN);
}

/* Whether (d, cfa) names a frame on a filtering thread's shadow stack:
 * if not, its entry was not recorded (filter_skip), and neither is its
 * exit, silently: not an unmatched exit. */
static int on_stack(const struct instr__thread *t, const struct instr_fn_desc *d, uintptr_t cfa)
{
    for (const struct instr__frame *q = t->top; q > t->base && q[-1].cfa <= cfa; q--)
        if (names_frame(&q[-1], d, cfa))
            return 1;
    return 0;
}

/* A filtering thread's exit or return: a frame not recorded writes
 * nothing, a short one is folded, the others are recorded; then an :off
 * trigger switches recording off. */
static uint8_t *filter_pop(struct instr__thread *t, uint8_t *p, uint64_t now, unsigned *bits,
                           const struct hook_arg *a)
{
    const struct instr_fn_desc *d = a->desc;
    uint8_t *folded = NULL;
    t->called = NULL;
    int top = names_frame(&t->top[-1], d, a->cfa);
    if (!top && !t->overflow)
        p = switch_stack(t, p, a, 0, now, bits); /* another stack's frame? */
    if (t->overflow)
        p = pop_record(t, p, now, bits, a);
    else if (!top && !on_stack(t, d, a->cfa))
        p = a->replayed ? p : close_dead(t, p, a->cfa, now, bits); /* not recorded; its callees are gone */
    else if (top && instr__filter.min_ticks && (folded = fold_short(t, p, now, *bits)))
        p = folded;
    else
        p = pop_record(t, p, now, bits, a);
    if (d && (d->rt_flags & INSTR_FN_RT_TRIGGER_OFF))
        p = trigger(t, room(t, p), now, bits, 0);
    return p;
}

static uint8_t *pop_write(struct instr__thread *t, uint8_t *p, uint64_t now, unsigned *bits,
                          const void *arg)
{
    if (INSTR_UNLIKELY(t->pending_bits & INSTR__FILTERING))
        return filter_pop(t, p, now, bits, arg);
    return pop_record(t, p, now, bits, arg);
}

static __attribute__((noinline)) void pop_slow(const struct instr_fn_desc *d, void *cfa_p)
{
    struct instr__thread *t = instr__record_thread(INSTR_EV_EXIT);
    if (INSTR_UNLIKELY(foreign(t, (uintptr_t)cfa_p)))
        return;
    if (INSTR_UNLIKELY(t->busy))
        return hook_busy(t, d ? HOOK_EXIT : HOOK_RETURN, d, (uintptr_t)cfa_p, NULL, NULL);
    if (INSTR_UNLIKELY(stopped_now(t, INSTR_EV_EXIT)))
        return;
    struct hook_arg a = {.desc = d, .cfa = (uintptr_t)cfa_p};
    instr__record(t, (uintptr_t)cfa_p, 1, pop_write, &a);
}

/* Full chunk after an event: switch, then release the guard. */
__attribute__((noinline)) void instr__switch_release(struct instr__thread *t)
{
    instr__chunk_next(t);
    instr__barrier();
    t->busy = 0;
}

/* The fast paths' writers, once the checks passed: move the shadow stack,
 * write the event (head, and for a push the id). */
static inline __attribute__((always_inline)) uint8_t *
fast_push_write(struct instr__thread *t, uint8_t *p, uint64_t now, unsigned *bits, const void *arg)
{
    const struct hook_arg *a = arg;
    struct instr__frame *top = t->top;
    top->desc = a->desc;
    top->cfa = a->cfa;
    t->top = top + 1;
    p = instr__put_head(t, p, now, bits, a->target ? INSTR_EV_CALL : INSTR_EV_ENTER);
    return instr_put_varint(p, a->id);
}

static inline __attribute__((always_inline)) uint8_t *
fast_pop_write(struct instr__thread *t, uint8_t *p, uint64_t now, unsigned *bits, const void *arg)
{
    t->top--;
    return instr__put_head(t, p, now, bits, arg ? INSTR_EV_EXIT : INSTR_EV_RETURN);
}

static void hook_slow(unsigned kind, const void *desc, uintptr_t cfa, void *target, void *ra);

/* Every fast path's start: the thread's state, or NULL when the hook went
 * elsewhere (no state yet: the slow path creates it; guard held: nesting).
 * Always inlined with a constant kind, so each branch is one direct call. */
static inline __attribute__((always_inline)) struct instr__thread *
hook_state(unsigned kind, const void *desc, uintptr_t cfa, void *target, void *ra)
{
    struct instr__thread *t = instr__tls;
    if (INSTR_UNLIKELY(!t))
        hook_slow(kind, desc, cfa, target, ra);
    else if (INSTR_UNLIKELY(t->busy))
        hook_busy(t, kind, desc, cfa, target, ra);
    else
        return t;
    return NULL;
}

/* The fast paths handle the common case only: state exists, function
 * registered, nothing pending, room on the shadow stack, and (enter) no dead
 * frame to close or (exit) the top frame is the one exiting.  Anything else
 * goes to the general versions above.  The shadow stack has a sentinel below
 * its base (cfa UINTPTR_MAX, desc NULL), so top[-1] is always readable. */
void instr__hook_enter(struct instr_fn_desc *d, void *cfa_p)
{
    uintptr_t cfa = (uintptr_t)cfa_p;
    struct instr__thread *t = hook_state(HOOK_ENTER, d, cfa, NULL, NULL);
    if (INSTR_UNLIKELY(!t))
        return;
    struct instr__frame *top = t->top;
    uint32_t id = d->id;
    /* One unsigned compare: a dead frame on top (its CFA below ours wraps
     * round) or a jump to another stack (foreign-task.c). */
    if (INSTR_UNLIKELY(id == 0 || top >= t->end || top[-1].cfa - dead_below(d, cfa) >= INSTR_RT_STACK_SPAN ||
                       t->go_slow))
        return enter_slow(d, cfa_p);
    struct hook_arg a = {.desc = d, .cfa = cfa, .target = NULL, .id = id};
    instr__record(t, cfa, 0, fast_push_write, &a);
}

void instr__hook_exit(struct instr_fn_desc *d, void *cfa_p)
{
    uintptr_t cfa = (uintptr_t)cfa_p;
    struct instr__thread *t = hook_state(HOOK_EXIT, d, cfa, NULL, NULL);
    if (INSTR_UNLIKELY(!t))
        return;
    struct instr__frame *top = t->top;
    if (INSTR_UNLIKELY(top[-1].desc != d || top[-1].cfa != cfa || t->overflow || t->go_slow))
        return pop_slow(d, cfa_p);
    instr__record(t, cfa, 0, fast_pop_write, d);
}

/* landing(d, cfa): an exception was caught in d's frame at cfa. */
static uint8_t *landing_write(struct instr__thread *t, uint8_t *p, uint64_t now, unsigned *bits,
                              const void *arg)
{
    const struct hook_arg *a = arg;
    uintptr_t cfa = a->cfa;
    struct instr__frame *q = t->top;
    t->called = NULL;
    if (t->overflow)
        return p; /* untracked frames: nothing to repair */
    while (q > t->base && q[-1].cfa <= cfa) {
        if (q[-1].desc == a->desc && q[-1].cfa == cfa)
            break;
        q--;
    }
    if (q == t->base || q[-1].desc != a->desc || q[-1].cfa != cfa) {
        /* (d, cfa) itself is not on the stack: the frames below its CFA
         * are gone all the same. */
        q = t->top;
        while (q > t->base && q[-1].cfa < cfa)
            q--;
    }
    while (t->top > q)
        p = unwind(t, p, now, bits, INSTR_UNWIND_EXCEPTION);
    return p;
}

void instr__hook_landing(struct instr_fn_desc *d, void *cfa_p)
{
    struct instr__thread *t = instr__record_thread(INSTR_EV_EXT);
    if (INSTR_UNLIKELY(foreign(t, (uintptr_t)cfa_p)))
        return;
    if (INSTR_UNLIKELY(t->busy))
        return hook_busy(t, HOOK_LANDING, d, (uintptr_t)cfa_p, NULL, NULL);
    if (INSTR_UNLIKELY(stopped_now(t, INSTR_EV_EXIT)))
        return;
    struct hook_arg a = {.desc = d, .cfa = (uintptr_t)cfa_p};
    instr__record(t, (uintptr_t)cfa_p, 1, landing_write, &a);
}

/* ---- call sites --------------------------------------------------------- */

/* The id of the CALL event for this site and target: the descriptor's, or
 * for an indirect call the cached (target, id) pair; 0 if not known yet. */
static inline uint32_t site_id(const struct instr_site_desc *s, void *target)
{
    if (!target)
        return __atomic_load_n(&s->id, __ATOMIC_ACQUIRE);
    uint64_t c = __atomic_load_n(&s->target, __ATOMIC_ACQUIRE);
    return (c & INSTR__TARGET_MASK) == (uintptr_t)target ? (uint32_t)(c >> INSTR__TARGET_BITS) : 0;
}

/* The thread's cache of indirect (site, target) ids: the descriptor keeps
 * only the last target, so a polymorphic call missed it every other time
 * and took the registration path (two sigprocmask calls, the meta lock,
 * a detector re-arm): 41% of examples/shapes' run went there. */
static inline struct instr__icache *icache_slot(struct instr__thread *t, const void *site, const void *target)
{
    uint64_t h = ((uintptr_t)site ^ (uintptr_t)target * 0x9e3779b97f4a7c15ull) >> 40;
    return &t->icache[h % INSTR_RT_ICACHE];
}

static uint32_t icache_get(struct instr__thread *t, const struct instr_site_desc *s, const void *target)
{
    const struct instr__icache *c = icache_slot(t, s, target);
    uint32_t caller = __atomic_load_n(&s->caller->id, __ATOMIC_RELAXED);
    return c->site == (uintptr_t)s && c->target == (uintptr_t)target && c->caller == caller && caller
               ? c->id
               : 0;
}

static void icache_put(struct instr__thread *t, const struct instr_site_desc *s, const void *target, uint32_t id)
{
    struct instr__icache *c = icache_slot(t, s, target);
    c->site = (uintptr_t)s;
    c->target = (uintptr_t)target;
    c->caller = __atomic_load_n(&s->caller->id, __ATOMIC_RELAXED);
    c->id = id;
}

/* A call from the frame at cfa: frames below its CFA are not live: it is
 * calling.  Nor is a call-site frame of the caller itself on top: one
 * frame makes one call at a time, so that call was left by a longjmp back
 * into the caller.  (Inlined hosts sharing the CFA, inline=before, always
 * have the inlined function's frame between two of their sites.) */
static uint8_t *close_dead_at_call(struct instr__thread *t, uint8_t *p, uintptr_t cfa, uint64_t now,
                                   unsigned *bits)
{
    if (INSTR_UNLIKELY(t->overflow))
        return p;
    while (t->top > t->base &&
           (t->top[-1].cfa < cfa || (t->top[-1].cfa == cfa && INSTR__IS_SITE(t->top[-1].desc))))
        p = unwind(t, p, now, bits, INSTR_UNWIND_STACK);
    return p;
}

static uint8_t *call_write(struct instr__thread *t, uint8_t *p, uint64_t now, unsigned *bits,
                           const void *arg)
{
    const struct hook_arg *a = arg;
    struct instr_site_desc *s = (struct instr_site_desc *)a->desc;
    uint32_t id = site_id(s, a->target);
    int registered = 0;
    if (INSTR_UNLIKELY(id == 0) && a->target)
        id = icache_get(t, s, a->target);
    if (INSTR_UNLIKELY(id == 0)) {
        sigset_t old;
        instr__signals_block(&old);
        id = instr__register_site(s, a->target, a->ra);
        if (instr__fatal_signals_api(s->callee))
            instr__fatal_signals_hide(); /* before the program's first look */
        instr__signals_restore(&old);
        instr__detector_rearm(t); /* registration may have made syscalls */
        if (id == 0) {
            t->unregistered++; /* its return: see exit_repair */
            return p;
        }
        if (a->target)
            icache_put(t, s, a->target, id);
        registered = 1;
    }
    uintptr_t cfa = a->cfa;
    p = switch_stack(t, p, a, 1, now, bits);
    if (INSTR_UNLIKELY(t->pending_bits & INSTR__FILTERING)) {
        t->called = NULL;
        if (filter_skip(t) >= 0) {
            if (!a->replayed) /* as enter_write: dead frames close, recorded or not */
                p = close_dead_at_call(t, p, cfa, now, bits);
            sentinel_near(t, cfa);
            return registered ? instr__put_runtime(t, p) : p; /* counted at its callee's entry, if instrumented */
        }
    }
    p = close_dead_at_call(t, p, cfa, now, bits);
    p = slow_push(t, p, INSTR__SITE_FRAME(id), cfa, now, bits, INSTR_EV_CALL, id, registered);
    if (INSTR_UNLIKELY(t->pending_bits & INSTR__FILTERING) && !t->overflow &&
        t->top > t->base && t->top[-1].desc == INSTR__SITE_FRAME(id)) {
        t->called = t->top;
        t->called_name = a->target ? NULL : s->callee;
    }
    return p;
}

static __attribute__((noinline)) void call_slow(struct instr_site_desc *s, void *cfa_p,
                                                void *target, void *ra)
{
    /* Never registered (the thread stops here), so every call of such a
     * site comes this way. */
    if (INSTR_UNLIKELY(s->flags & INSTR_SITE_SANDBOX))
        instr__sandbox_call_site(!!(s->flags & INSTR_SITE_SANDBOX_STRICT));
    struct instr__thread *t = instr__record_thread(INSTR_EV_CALL);
    if (INSTR_UNLIKELY(foreign(t, (uintptr_t)cfa_p)))
        return;
    if (INSTR_UNLIKELY(t->busy))
        return hook_busy(t, HOOK_CALL, s, (uintptr_t)cfa_p, target, ra);
    if (INSTR_UNLIKELY(stopped_now(t, INSTR_EV_CALL)))
        return;
    struct hook_arg a = {.desc = s, .cfa = (uintptr_t)cfa_p, .target = target, .ra = ra};
    instr__record(t, (uintptr_t)cfa_p, 1, call_write, &a);
}

/* ---- nesting: hooks that find the guard held ------------------------------ */

static void hook_slow(unsigned kind, const void *desc, uintptr_t cfa, void *target, void *ra)
{
    switch (kind) {
    case HOOK_ENTER:
        return enter_slow((struct instr_fn_desc *)desc, (void *)cfa);
    case HOOK_EXIT:
    case HOOK_RETURN:
        return pop_slow(desc, (void *)cfa);
    case HOOK_CALL:
        return call_slow((struct instr_site_desc *)desc, (void *)cfa, target, ra);
    case HOOK_LANDING:
        return instr__hook_landing((struct instr_fn_desc *)desc, (void *)cfa);
    case HOOK_SWITCH:
        return instr__api_switched((int)(uintptr_t)target);
    }
}

/* A hook found the guard held: it runs inside the holder (a signal handler
 * that interrupted a hook), or the holder is gone (a handler that
 * interrupted a hook left it with siglongjmp).
 *
 *   main's frame     cfa 0xc00            after siglongjmp back to main:
 *   hook holding it  busy = 0x900 (its CFA)   main calls: cfa 0xc00 >= 0x900,
 *   signal frame                               the holder's frame is gone:
 *   handler's hooks  cfa 0x600 < 0x900         take the guard over.
 *
 * Nested (a lower CFA, or the handler runs on the alternate stack): the
 * event waits in t->def with its own tick, and the next hook records it
 * before its own (instr__deferred_flush).  Beyond the slots the events are
 * counted as dropped.  The runtime's own work (INSTR__BUSY_RUNTIME: thread
 * start and end, exit, fork) records nothing, as before. */
static __attribute__((noinline)) void hook_busy(struct instr__thread *t, unsigned kind,
                                                const void *desc, uintptr_t cfa, void *target,
                                                void *ra)
{
    uintptr_t owner = t->busy;
    if (owner == INSTR__BUSY_LOST)
        return instr__count_dropped_kind(kind == HOOK_ENTER ? INSTR_EV_ENTER : kind == HOOK_CALL ? INSTR_EV_CALL : 0);
    /* Not recording (no dump, or before the state is built): nothing to
     * do, and nothing to ask the kernel (foreign's gettid, once a hook). */
    if (t == &instr__idle_thread)
        return;
    if (foreign(t, cfa))
        return;
    /* A signal handler, whose CFA may lie near the top frame all the same
     * (the holder is replaying an earlier handler's frames): on the
     * alternate stack, its syscalls must not trap (detector-sud.c). */
    instr__sud_altstack(t);
    if (!INSTR__BUSY_IS_HOOK(owner))
        return;
    if (cfa >= owner && instr__may_syscall() && !instr__on_alt_stack()) {
        t->busy = 0;
        return hook_slow(kind, desc, cfa, target, ra);
    }
    uint64_t now = instr__tsc();
    uint32_t i = __atomic_fetch_add(&t->def_n, 1, __ATOMIC_RELAXED);
    if (i >= INSTR_RT_DEFERRED)
        return; /* counted when flushed */
    struct instr__deferred *e = &t->def[i];
    e->tsc = now;
    e->desc = desc;
    e->cfa = cfa;
    e->target = target;
    e->ra = ra;
    e->kind = (uint8_t)kind;
    instr__barrier();
    e->ready = 1;
}

static uint8_t *replay(struct instr__thread *t, uint8_t *p, const struct instr__deferred *e,
                       unsigned *bits)
{
    struct hook_arg a = {.desc = e->desc, .cfa = e->cfa, .target = e->target, .ra = e->ra,
                         .replayed = 1};
    switch (e->kind) {
    case HOOK_ENTER:
        return enter_write(t, p, e->tsc, bits, &a);
    case HOOK_EXIT:
        return pop_write(t, p, e->tsc, bits, &a);
    case HOOK_RETURN:
        a.desc = NULL;
        return pop_write(t, p, e->tsc, bits, &a);
    case HOOK_CALL:
        return call_write(t, p, e->tsc, bits, &a);
    case HOOK_LANDING:
        return landing_write(t, p, e->tsc, bits, &a);
    case HOOK_SWITCH:
        p = instr__put_head(t, p, e->tsc, bits, INSTR_EV_EXT);
        return instr_put_ext(p, INSTR_EXT_SWITCH, (uint32_t)(uintptr_t)e->target, 0);
    }
    return p;
}

/* api.c: EXT SWITCH found the guard held by a hook (INSTR_SIGNAL's
 * handler interrupted it): it waits in the deferred slots with its tick,
 * as a nested hook's event does, rather than being lost (a storm of 200
 * signals lost 47 to 88 switches, reported as dropped "after recording
 * stopped"). */
void instr__switch_deferred(struct instr__thread *t, int on)
{
    hook_busy(t, HOOK_SWITCH, NULL, (uintptr_t)__builtin_frame_address(0), (void *)(uintptr_t)(on != 0),
              NULL);
}

/* The thread's deferred events, now (guard held by the runtime: the
 * thread's end, the process's exit): a handler that interrupted the last
 * hook would otherwise leave them unwritten. */
void instr__deferred_flush_now(struct instr__thread *t)
{
    if (!__atomic_load_n(&t->def_n, __ATOMIC_ACQUIRE) || !t->chunk)
        return;
    unsigned bits = t->pending_bits & ~INSTR__FILTERING;
    t->pending_bits &= INSTR__FILTERING;
    uint8_t *p = instr__deferred_flush(t, t->pos, &bits);
    t->pending_bits |= bits;
    t->pos = room(t, p);
}

__attribute__((noinline)) uint8_t *instr__deferred_flush(struct instr__thread *t, uint8_t *p,
                                                         unsigned *bits)
{
    /* Signals wait until the replay is done (two system calls, only when a
     * handler interrupted a hook): an event is written, published (t->pos)
     * and marked done in three steps, and a handler that came between the
     * last two and jumped out (siglongjmp) left the next hook to replay it
     * again, a call counted twice (1 run in 20 of
     * survival-signals-siglongjmp-async on a loaded machine). */
    sigset_t old;
    instr__signals_block(&old);
    uint32_t n = __atomic_load_n(&t->def_n, __ATOMIC_ACQUIRE), i = 0;
    uint64_t last = t->last_tsc;
    for (;;) {
        for (; i < n && i < INSTR_RT_DEFERRED; i++) {
            struct instr__deferred *e = &t->def[i];
            if (e->ready) {
                if (e->tsc > last)
                    last = e->tsc;
                p = room(t, replay(t, p, e, bits));
                t->pos = p;
                instr__barrier();
            }
            e->ready = 0;
        }
        /* More may have come while replaying: not from this thread's
         * signals, which wait, but where no mask could be set (sandbox.c):
         * go on. */
        if (__atomic_compare_exchange_n(&t->def_n, &n, 0, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
            break;
    }
    instr__signals_restore(&old);
    instr__detector_rearm_own_syscall(t);
    if (n > INSTR_RT_DEFERRED) {
        uint64_t lost = n - INSTR_RT_DEFERRED;
        if (instr__rt.header)
            __atomic_fetch_add(&instr__rt.header->dropped_events, lost, __ATOMIC_RELAXED);
        p = instr__put_head(t, p, last, bits, INSTR_EV_EXT);
        p = room(t, instr_put_ext(p, INSTR_EXT_DROPPED, lost, 0));
    }
    return p;
}

/* Same fast-path shape as enter and exit: one TLS load, the guard, the
 * descriptor's cached id (indirect: one 64-bit load and compare), rdtsc,
 * the detector check, a push and a varint. */
void instr__hook_call(struct instr_site_desc *s, void *cfa_p, void *target)
{
    uintptr_t cfa = (uintptr_t)cfa_p;
    struct instr__thread *t = hook_state(HOOK_CALL, s, cfa, target, __builtin_return_address(0));
    if (INSTR_UNLIKELY(!t))
        return;
    struct instr__frame *top = t->top;
    uint32_t id = site_id(s, target);
    if (INSTR_UNLIKELY(id == 0 || top >= t->end || top[-1].cfa - (cfa + INSTR__IS_SITE(top[-1].desc)) >= INSTR_RT_STACK_SPAN ||
                       t->go_slow))
        return call_slow(s, cfa_p, target, __builtin_return_address(0));
    /* .target only tells the writer this is a CALL (non-NULL) */
    struct hook_arg a = {.desc = INSTR__SITE_FRAME(id), .cfa = cfa, .target = s, .id = id};
    instr__record(t, cfa, 0, fast_push_write, &a);
}

void instr__hook_return(struct instr_site_desc *s, void *cfa_p)
{
    (void)s; /* the top call-site frame with this CFA is the one returning */
    uintptr_t cfa = (uintptr_t)cfa_p;
    struct instr__thread *t = hook_state(HOOK_RETURN, NULL, cfa, NULL, NULL);
    if (INSTR_UNLIKELY(!t))
        return;
    struct instr__frame *top = t->top;
    if (INSTR_UNLIKELY(!INSTR__IS_SITE(top[-1].desc) || top[-1].cfa != cfa || t->overflow ||
                       t->go_slow))
        return pop_slow(NULL, cfa_p);
    instr__record(t, cfa, 0, fast_pop_write, NULL);
}

/* ---- joining the filters: the switch went off on unswitchable code ------ */

/* The calling thread filters from now on (an atomic or: a handler on this
 * thread may be adding its pending bits). */
static inline void join_filtering(void)
{
    struct instr__thread *t = instr__thread_own(instr__tls);
    if (t && !(__atomic_load_n(&t->pending_bits, __ATOMIC_RELAXED) & INSTR__FILTERING))
        instr__thread_join_filtering(t);
}

void instr__thread_join_filtering(struct instr__thread *t)
{
    __atomic_fetch_or(&t->pending_bits, INSTR__FILTERING, __ATOMIC_RELAXED);
    /* A CALL recorded before it filtered, its callee not yet entered: the
     * callee's entry is that call's, recorded whole (enter_write), as a
     * filtering thread's CALL would have noted. */
    if (!t->busy && !t->overflow && t->top > t->base && INSTR__IS_SITE(t->top[-1].desc)) {
        t->called = t->top;
        t->called_name = NULL;
    }
}

void instr__hook_enter_joining(struct instr_fn_desc *d, void *cfa)
{
    join_filtering();
    instr__hook_enter(d, cfa);
}

void instr__hook_exit_joining(struct instr_fn_desc *d, void *cfa)
{
    join_filtering();
    instr__hook_exit(d, cfa);
}

void instr__hook_landing_joining(struct instr_fn_desc *d, void *cfa)
{
    join_filtering();
    instr__hook_landing(d, cfa);
}

/* The call's return address is the site's (registration keeps it): taken
 * here, and the general path called with it. */
void instr__hook_call_joining(struct instr_site_desc *s, void *cfa_p, void *target)
{
    join_filtering();
    void *ra = __builtin_return_address(0);
    if (hook_state(HOOK_CALL, s, (uintptr_t)cfa_p, target, ra))
        call_slow(s, cfa_p, target, ra);
}

void instr__hook_return_joining(struct instr_site_desc *s, void *cfa)
{
    join_filtering();
    instr__hook_return(s, cfa);
}

void instr__hooks_join(instr_hook_fn *table)
{
    /* One pointer store each: the trampolines jump through them. */
    __atomic_store_n(&table[INSTR_SLOT_ENTER], instr__hook_enter_joining, __ATOMIC_RELAXED);
    __atomic_store_n(&table[INSTR_SLOT_EXIT], instr__hook_exit_joining, __ATOMIC_RELAXED);
    __atomic_store_n(&table[INSTR_SLOT_LANDING], instr__hook_landing_joining, __ATOMIC_RELAXED);
    __atomic_store_n(&table[INSTR_SLOT_CALL], (instr_hook_fn)(void (*)(void))instr__hook_call_joining,
                     __ATOMIC_RELAXED);
    __atomic_store_n(&table[INSTR_SLOT_RETURN], (instr_hook_fn)(void (*)(void))instr__hook_return_joining,
                     __ATOMIC_RELAXED);
}

void instr__hook_nop(struct instr_fn_desc *d, void *cfa)
{
    (void)d;
    (void)cfa;
}
