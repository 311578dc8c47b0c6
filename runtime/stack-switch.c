/* stack-switch.c - one shadow stack per stack a thread runs on (coroutines).
 *
 * A program that switches stacks itself (swapcontext, boost.context, green
 * threads) runs several call stacks on one thread, one at a time.  With a
 * single shadow stack their frames interleave: a coroutine's frames land on
 * top of the frames that switched to it, are closed as "left by a longjmp"
 * when the other side resumes, and its own resumption names frames that
 * are gone (unmatched exits); a suspended frame is charged with what the
 * other stack did.  So each stack gets its own shadow stack:
 *
 *   real stacks                       shadow stacks (t->base: the running one)
 *   main stack   0x7ffc...  main      id 0: main, ping, [swapcontext]
 *                           ping        (suspended while the coroutine runs)
 *   heap stack   0x55...    co_body   id 1: co_body, pong, [swapcontext]
 *                           pong
 *
 * A hook whose CFA lies more than INSTR_RT_STACK_SPAN beyond the running
 * shadow stack's frames (above its bottom frame, or below its top frame)
 * comes from another stack.  If a suspended shadow stack's frames lie
 * around that CFA, it is the one resumed; else (an entry or a call) a new
 * stack starts, empty.  The running one is suspended (copied aside) and an
 * EXT STACK event names the stack that runs from here, so the report keeps
 * the same shadow stacks: intervals go to the top of the running stack, a
 * suspended frame is charged nothing while suspended.  A CFA that far away
 * is never a longjmp within the stack the shadow stack belongs to, unless
 * a jump skipped more than INSTR_RT_STACK_SPAN of frames downwards... which
 * cannot be: a longjmp only goes to a live (higher) frame, and a frame
 * above the bottom one by that much is not the bottom frame's caller in
 * any program that does not use 1 MiB of stack between two instrumented
 * functions.
 *
 * Limits: stacks closer together than INSTR_RT_STACK_SPAN (small coroutine
 * stacks allocated side by side) are not told apart (their frames nest as
 * before); a handler on the alternate signal stack keeps nesting into the
 * interrupted stack (it returns to it); at most STACKS_SLOTS stacks are kept
 * suspended, each at most STACKS_FRAMES deep: past that the switch is not
 * followed (as before).  Everything here runs in the slow paths, under the
 * thread's guard.
 */
#define _GNU_SOURCE
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>

#include "record.h"
#include "stack-switch.h"

#define STACKS_SLOTS 8u
#define STACKS_FRAMES 4096u

struct suspended {
    uint64_t id;     /* its number in EXT STACK; 0 = slot free (id 0 never suspends empty) */
    uintptr_t lo, hi; /* CFA of its top and bottom frames */
    uint32_t n;      /* frames */
    uint32_t used;   /* slot in use (id 0 is a real id: the thread's first stack) */
};

struct instr__stacks {
    uint64_t running;  /* id of the stack t->base holds */
    uint64_t next_id;
    struct suspended slot[STACKS_SLOTS];
    struct instr__frame frames[STACKS_SLOTS][STACKS_FRAMES];
};

/* Whether cfa is more than INSTR_RT_STACK_SPAN beyond frames [lo, hi]. */
static inline int far(uintptr_t lo, uintptr_t hi, uintptr_t cfa)
{
    return cfa > hi + INSTR_RT_STACK_SPAN || cfa + INSTR_RT_STACK_SPAN < lo;
}

int instr__stack_known(const struct instr__thread *t, uintptr_t cfa)
{
    const struct instr__stacks *s = t->suspended;
    if (!s)
        return 0;
    for (unsigned i = 0; i < STACKS_SLOTS; i++)
        if (s->slot[i].used && !far(s->slot[i].lo, s->slot[i].hi, cfa))
            return 1;
    return 0;
}

int instr__on_alt_stack(void)
{
    stack_t ss;
    return instr__own_syscall(SYS_sigaltstack, 0, (long)(uintptr_t)&ss, 0) == 0 &&
           (ss.ss_flags & SS_ONSTACK);
}

static struct instr__stacks *stacks(struct instr__thread *t)
{
    if (!t->suspended && instr__may_syscall()) {
        void *m = mmap(NULL, sizeof *t->suspended, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        if (m != MAP_FAILED)
            t->suspended = m; /* zeroed: running 0, no slot used */
        if (t->suspended)
            t->suspended->next_id = 1;
    }
    return t->suspended;
}

uint8_t *instr__stack_switch(struct instr__thread *t, uint8_t *p, uintptr_t cfa, int entry,
                             uint64_t now, unsigned *bits)
{
    if (t->overflow)
        return p; /* untracked frames: leave the stack alone */
    int empty = t->top == t->base;
    if (!empty && !far(t->top[-1].cfa, t->base[0].cfa, cfa))
        return p;
    struct instr__stacks *s = t->suspended;
    unsigned i, to = STACKS_SLOTS, free_slot = STACKS_SLOTS;
    for (i = 0; s && i < STACKS_SLOTS; i++) {
        if (!s->slot[i].used)
            free_slot = free_slot < STACKS_SLOTS ? free_slot : i;
        else if (to == STACKS_SLOTS && !far(s->slot[i].lo, s->slot[i].hi, cfa))
            to = i;
    }
    if (to == STACKS_SLOTS && (empty || !entry))
        return p; /* nothing to resume; an empty stack just starts here */
    if (to == STACKS_SLOTS && instr__on_alt_stack())
        return p; /* a signal handler: it nests into the stack it interrupted */
    while (to < STACKS_SLOTS && (uint32_t)(t->end - t->base) < s->slot[to].n)
        if (instr__stack_grow(t))
            return p; /* no room to resume it: not followed */
    if (!empty) {
        uint32_t n = (uint32_t)(t->top - t->base);
        if (!(s = stacks(t)) || n > STACKS_FRAMES)
            return p;
        if (free_slot == STACKS_SLOTS)
            for (free_slot = 0; free_slot < STACKS_SLOTS && s->slot[free_slot].used; free_slot++)
                ;
        if (free_slot == STACKS_SLOTS)
            return p; /* all slots hold suspended stacks: not followed */
        struct suspended *w = &s->slot[free_slot];
        memcpy(s->frames[free_slot], t->base, n * sizeof *t->base);
        *w = (struct suspended){.id = s->running, .lo = t->top[-1].cfa, .hi = t->base[0].cfa,
                                .n = n, .used = 1};
    } else if (!(s = stacks(t))) {
        return p;
    }
    t->top = t->base;
    if (to < STACKS_SLOTS) {
        struct suspended *r = &s->slot[to];
        memcpy(t->base, s->frames[to], r->n * sizeof *t->base);
        t->top = t->base + r->n;
        s->running = r->id;
        r->used = 0;
    } else {
        s->running = s->next_id++;
    }
    t->base[-1].cfa = t->top > t->base ? t->base[0].cfa + INSTR_RT_STACK_SPAN / 2
                                        : cfa + INSTR_RT_STACK_SPAN / 2;
    p = instr__put_head(t, p, now, bits, INSTR_EV_EXT);
    return instr_put_ext(p, INSTR_EXT_STACK_SWITCH, s->running, 0);
}

void instr__stacks_free(struct instr__thread *t)
{
    if (t->suspended)
        munmap(t->suspended, sizeof *t->suspended);
    t->suspended = NULL;
}
