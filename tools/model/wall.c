/* wall.c - Wall Inclusive: unions of the time functions were on a stack
 * (wall.h). */
#include "wall.h"

#include <stdlib.h>
#include <string.h>

#include "arrays.h"

/* Room for function fn in the per-function arrays. */
static int grow(struct instr_wall *w, uint32_t fn)
{
    if (fn < w->nfn)
        return 0;
    size_t n = w->nfn ? w->nfn : 64;
    while (n <= fn)
        n *= 2;
    /* Each array is resized even when another could not be: all that grew
     * stay owned by w, and w->nfn stays the size every one has. */
    int ok = 1;
#define WALL_RESIZE(a)                                   \
    do {                                                 \
        void *q_ = realloc(w->a, n * sizeof *w->a);      \
        if (q_)                                          \
            w->a = q_;                                   \
        else                                             \
            ok = 0;                                      \
    } while (0)
    WALL_RESIZE(fn);
    WALL_RESIZE(cur);
    WALL_RESIZE(depth);
    WALL_RESIZE(open_at);
    WALL_RESIZE(seen);
    WALL_RESIZE(touched);
#undef WALL_RESIZE
    if (!ok) {
        w->nomem = 1;
        return -1;
    }
    size_t k = n - w->nfn;
    memset(w->fn + w->nfn, 0, k * sizeof *w->fn);
    memset(w->cur + w->nfn, 0, k * sizeof *w->cur);
    memset(w->depth + w->nfn, 0, k * sizeof *w->depth);
    memset(w->open_at + w->nfn, 0, k * sizeof *w->open_at);
    memset(w->seen + w->nfn, 0, k * sizeof *w->seen);
    w->nfn = n;
    return 0;
}

static void reclaim(struct instr_wall *w);

/* Appends [start, end) to a list in time order (touching: extended). */
static void append(struct instr_wall *w, struct instr_wall_list *l, uint64_t start, uint64_t end)
{
    if (end <= start || w->overflow || w->nomem)
        return;
    /* A start before the last one: the clock went back (RESYNC, a chunk's
     * base); kept as it is, the union sorts and merges it. */
    if (l->n && start >= l->s[l->n - 1].start && l->s[l->n - 1].end >= start) {
        if (end > l->s[l->n - 1].end)
            l->s[l->n - 1].end = end;
        return;
    }
    if (w->segs >= INSTR_WALL_MAX_SEGS)
        reclaim(w);
    if (w->overflow)
        return;
    if (l->n == l->cap) {
        size_t nc = l->cap ? l->cap * 2 : 8;
        struct instr_wall_seg *s = realloc(l->s, nc * sizeof *s);
        if (!s) {
            w->nomem = 1;
            return;
        }
        l->s = s;
        l->cap = nc;
    }
    l->s[l->n++] = (struct instr_wall_seg){start, end};
    w->segs++;
}

static void merge_push(struct instr_wall_merge *m, uint32_t qi, uint64_t tick, uint32_t fn, int32_t d);

/* Merged (w->merge): the same segments as the lists would hold, told to
 * the merge as their ends come: +1 where one starts, -1 where it ends (a
 * segment that would be empty ends where it starts). */
static inline uint64_t at_least(uint64_t a, uint64_t b)
{
    return a > b ? a : b;
}

void instr_wall_open(struct instr_wall *w, uint32_t fn, uint64_t tick)
{
    if (grow(w, fn) < 0)
        return;
    if (w->merge) {
        if (w->depth[fn]++ == 0) {
            w->open_at[fn] = tick;
            merge_push(w->merge, w->fifo, tick, fn, 1);
        }
        return;
    }
    if (w->depth[fn]++ == 0)
        w->open_at[fn] = tick;
    if (w->seen[fn] != w->thread + 1) {
        w->seen[fn] = w->thread + 1;
        w->touched[w->ntouched++] = fn;
    }
}

void instr_wall_close(struct instr_wall *w, uint32_t fn, uint64_t tick)
{
    if (fn >= w->nfn || !w->depth[fn])
        return;
    if (w->merge) {
        if (--w->depth[fn] == 0)
            merge_push(w->merge, w->fifo, at_least(tick, w->open_at[fn]), fn, -1);
        return;
    }
    if (--w->depth[fn] == 0)
        append(w, &w->cur[fn], w->open_at[fn], tick);
}

void instr_wall_root_open(struct instr_wall *w, uint64_t tick)
{
    if (w->merge) {
        /* Counted (stacks switched: a second stack's frames may open
         * while the first's are open). */
        if (w->root_n++ == 0) {
            w->root_open = tick;
            merge_push(w->merge, w->fifo, tick, UINT32_MAX, 1);
        }
        return;
    }
    w->root_open = tick;
}

void instr_wall_root_close(struct instr_wall *w, uint64_t tick)
{
    if (w->merge) {
        if (w->root_n && --w->root_n == 0)
            merge_push(w->merge, w->fifo, at_least(tick, w->root_open), UINT32_MAX, -1);
        return;
    }
    append(w, &w->cur_root, w->root_open, tick);
}

void instr_wall_split(struct instr_wall *w, uint32_t fn, uint64_t tick, uint64_t resume)
{
    if (fn >= w->nfn || !w->depth[fn] || w->open_at[fn] >= resume)
        return; /* not open, or split already (a recursive function is on the stack twice) */
    if (w->merge) {
        merge_push(w->merge, w->fifo, at_least(tick, w->open_at[fn]), fn, -1);
        merge_push(w->merge, w->fifo, resume, fn, 1);
        w->open_at[fn] = resume;
        return;
    }
    append(w, &w->cur[fn], w->open_at[fn], tick);
    w->open_at[fn] = resume;
}

void instr_wall_root_split(struct instr_wall *w, uint64_t tick, uint64_t resume)
{
    if (w->merge) {
        if (w->root_n) {
            merge_push(w->merge, w->fifo, at_least(tick, w->root_open), UINT32_MAX, -1);
            merge_push(w->merge, w->fifo, resume, UINT32_MAX, 1);
            w->root_open = resume;
        }
        return;
    }
    append(w, &w->cur_root, w->root_open, tick);
    w->root_open = resume;
}

static int cmp_seg(const void *a, const void *b)
{
    const struct instr_wall_seg *x = a, *y = b;
    return x->start < y->start ? -1 : x->start > y->start;
}

static int sorted(const struct instr_wall_seg *s, size_t n)
{
    for (size_t i = 1; i < n; i++)
        if (s[i].start < s[i - 1].start)
            return 0;
    return 1;
}

int instr_wall_settle(struct instr_wall_list *a)
{
    if (a->settled == a->n)
        return 0;
    struct instr_wall_seg *m = malloc(a->n * sizeof *m);
    if (!m)
        return -1;
    struct instr_wall_seg *h = a->s, *t = a->s + a->settled;
    size_t nh = a->settled, nt = a->n - a->settled;
    if (!sorted(t, nt)) /* a sorted tail (one thread's, one process's union) merges as it is */
        qsort(t, nt, sizeof *t, cmp_seg);
    size_t i = 0, j = 0, n = 0;
    while (i < nh || j < nt) {
        struct instr_wall_seg s = j >= nt || (i < nh && h[i].start <= t[j].start) ? h[i++] : t[j++];
        if (n && m[n - 1].end >= s.start) {
            if (s.end > m[n - 1].end)
                m[n - 1].end = s.end;
        } else {
            m[n++] = s;
        }
    }
    free(a->s);
    a->s = m;
    a->n = a->cap = a->settled = n;
    return 0;
}

int instr_wall_union(struct instr_wall_list *a, const struct instr_wall_list *b)
{
    if (!b->n)
        return 0;
    if (a->n + b->n > a->cap) {
        size_t nc = a->cap ? a->cap : 8;
        while (nc < a->n + b->n)
            nc *= 2;
        struct instr_wall_seg *s = realloc(a->s, nc * sizeof *s);
        if (!s)
            return -1;
        a->s = s;
        a->cap = nc;
    }
    /* A settled union and a sorted list at least a quarter its size (a
     * process's union into a session's) merge in one pass, at once: that
     * costs at most five times what was added.  A smaller one (a thread's
     * list into its process's union, thousands of them) waits in the tail,
     * merged once the tail is as long as the head: merging each at once
     * would cost the whole union every time. */
    int linear = a->settled == a->n && 4 * b->n >= a->settled && sorted(b->s, b->n);
    memcpy(a->s + a->n, b->s, b->n * sizeof *b->s);
    a->n += b->n;
    if ((linear || a->n - a->settled >= a->settled) && instr_wall_settle(a) < 0) {
        a->n -= b->n;
        return -1;
    }
    return 0;
}

uint64_t instr_wall_length(const struct instr_wall_list *l)
{
    uint64_t t = 0;
    for (size_t i = 0; i < l->n; i++)
        t += l->s[i].end - l->s[i].start;
    return t;
}

/* Moves a thread's list into the union (held segments: the union's). */
static void join(struct instr_wall *w, struct instr_wall_list *u, struct instr_wall_list *t)
{
    size_t before = u->n + t->n;
    if (instr_wall_union(u, t) < 0)
        w->nomem = 1;
    else
        w->segs -= before - u->n;
    free(t->s);
    memset(t, 0, sizeof *t);
}

static void settle_counted(struct instr_wall *w, struct instr_wall_list *l)
{
    size_t before = l->n;
    if (instr_wall_settle(l) < 0)
        w->nomem = 1;
    else
        w->segs -= before - l->n;
}

/* The cap is reached: the unions' unmerged tails may hold what merging
 * gives back.  Past three quarters of the cap after that, Wall Inclusive
 * is unknown (so that a run near the cap does not merge everything again
 * for every few segments). */
static void reclaim(struct instr_wall *w)
{
    for (size_t f = 0; f < w->nfn; f++)
        settle_counted(w, &w->fn[f]);
    settle_counted(w, &w->root);
    if (w->segs >= INSTR_WALL_MAX_SEGS / 4 * 3)
        w->overflow = 1;
}

void instr_wall_thread_end(struct instr_wall *w)
{
    if (w->merge)
        return; /* every frame closed: told already */
    for (size_t k = 0; k < w->ntouched; k++) {
        uint32_t f = w->touched[k];
        if (w->cur[f].n)
            join(w, &w->fn[f], &w->cur[f]);
        w->depth[f] = 0;
    }
    w->ntouched = 0;
    w->thread++;
    join(w, &w->root, &w->cur_root);
}

void instr_wall_free(struct instr_wall *w)
{
    for (size_t f = 0; f < w->nfn; f++) {
        free(w->fn[f].s);
        free(w->cur[f].s);
    }
    INSTR_FREE_ALL(w->fn, w->cur, w->depth, w->open_at, w->seen, w->touched, w->root.s, w->cur_root.s);
    memset(w, 0, sizeof *w);
}

/* ---- the time-ordered merge (wall.h: struct instr_wall_merge) ---------- */

static int merge_grow(struct instr_wall_merge *m, uint32_t fn)
{
    if (fn < m->nfn)
        return 0;
    size_t n = m->nfn ? m->nfn : 64;
    while (n <= fn)
        n *= 2;
    int64_t *c = realloc(m->count, n * sizeof *c);
    if (c)
        m->count = c;
    uint64_t *s = realloc(m->since, n * sizeof *s);
    if (s)
        m->since = s;
    uint64_t *l = realloc(m->len, n * sizeof *l);
    if (l)
        m->len = l;
    if (!c || !s || !l) {
        m->nomem = 1;
        return -1;
    }
    memset(m->count + m->nfn, 0, (n - m->nfn) * sizeof *c);
    memset(m->since + m->nfn, 0, (n - m->nfn) * sizeof *s);
    memset(m->len + m->nfn, 0, (n - m->nfn) * sizeof *l);
    m->nfn = n;
    return 0;
}

/* Queues fn's count changing by d at tick (fn UINT32_MAX: the session's
 * "some stack non-empty") in thread q's FIFO, kept in tick order (a
 * change comes in order but for a call site's frame, which opens at the
 * site's tick once resolved, and a clock that went back: a few places). */
static void merge_push(struct instr_wall_merge *m, uint32_t qi, uint64_t tick, uint32_t fn, int32_t d)
{
    if (m->nomem)
        return;
    if (fn != UINT32_MAX && merge_grow(m, fn) < 0)
        return;
    struct instr_wall_fifo *q = &m->fifo[qi];
    if (q->n == q->cap) {
        if (q->head) {
            memmove(q->op, q->op + q->head, (q->n - q->head) * sizeof *q->op);
            q->n -= q->head;
            q->head = 0;
        }
        if (q->n == q->cap) {
            size_t nc = q->cap ? q->cap * 2 : 1024;
            struct instr_wall_op *o = realloc(q->op, nc * sizeof *o);
            if (!o) {
                m->nomem = 1;
                return;
            }
            q->op = o;
            q->cap = nc;
        }
    }
    if (q->head == q->n)
        m->active[m->nactive++] = qi;
    size_t i = q->n++;
    while (i > q->head && q->op[i - 1].tick > tick) {
        q->op[i] = q->op[i - 1];
        i--;
    }
    q->op[i] = (struct instr_wall_op){tick, fn, d};
    if (++m->held > m->peak)
        m->peak = m->held;
}

int instr_wall_merge_thread(struct instr_wall_merge *m, struct instr_wall *w)
{
    if (m->nfifo == m->capfifo) {
        size_t nc = m->capfifo ? m->capfifo * 2 : 16;
        struct instr_wall_fifo *f = realloc(m->fifo, nc * sizeof *f);
        if (f)
            m->fifo = f;
        uint32_t *a = realloc(m->active, nc * sizeof *a);
        if (a)
            m->active = a;
        if (!f || !a) {
            m->nomem = 1;
            return -1;
        }
        m->capfifo = nc;
    }
    memset(&m->fifo[m->nfifo], 0, sizeof m->fifo[0]);
    w->merge = m;
    w->fifo = (uint32_t)m->nfifo++;
    return 0;
}

static void merge_apply(struct instr_wall_merge *m, const struct instr_wall_op *op)
{
    int64_t *c = op->fn == UINT32_MAX ? &m->root_count : &m->count[op->fn];
    uint64_t *since = op->fn == UINT32_MAX ? &m->root_since : &m->since[op->fn];
    uint64_t *len = op->fn == UINT32_MAX ? &m->root_len : &m->len[op->fn];
    int64_t was = *c;
    *c += op->d;
    if (was <= 0 && *c > 0)
        *since = op->tick;
    else if (was > 0 && *c <= 0)
        *len += op->tick - *since;
}

/* A merge of the threads' FIFOs: the one whose head is earliest gives
 * every change up to the next FIFO's head at once. */
void instr_wall_merge_advance(struct instr_wall_merge *m, uint64_t upto)
{
    for (;;) {
        size_t best = SIZE_MAX;
        uint64_t bt = UINT64_MAX, second = UINT64_MAX;
        for (size_t k = 0; k < m->nactive; k++) {
            const struct instr_wall_fifo *q = &m->fifo[m->active[k]];
            uint64_t h = q->op[q->head].tick;
            if (h < bt) {
                second = bt;
                bt = h;
                best = k;
            } else if (h < second) {
                second = h;
            }
        }
        if (best == SIZE_MAX || bt > upto)
            return;
        uint64_t lim = second < upto ? second : upto;
        struct instr_wall_fifo *q = &m->fifo[m->active[best]];
        while (q->head < q->n && q->op[q->head].tick <= lim) {
            merge_apply(m, &q->op[q->head++]);
            m->held--;
        }
        if (q->head == q->n) {
            q->head = q->n = 0;
            m->active[best] = m->active[--m->nactive];
        }
    }
}

void instr_wall_merge_free(struct instr_wall_merge *m)
{
    for (size_t i = 0; i < m->nfifo; i++)
        free(m->fifo[i].op);
    free(m->fifo);
    free(m->active);
    free(m->count);
    free(m->since);
    free(m->len);
    memset(m, 0, sizeof *m);
}
