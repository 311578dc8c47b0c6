/* wall.c - Wall Inclusive: unions of the time functions were on a stack
 * (wall.h). */
#include "wall.h"

#include <stdlib.h>
#include <string.h>

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

void instr_wall_open(struct instr_wall *w, uint32_t fn, uint64_t tick)
{
    if (grow(w, fn) < 0)
        return;
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
    if (--w->depth[fn] == 0)
        append(w, &w->cur[fn], w->open_at[fn], tick);
}

void instr_wall_root_open(struct instr_wall *w, uint64_t tick)
{
    w->root_open = tick;
}

void instr_wall_root_close(struct instr_wall *w, uint64_t tick)
{
    append(w, &w->cur_root, w->root_open, tick);
}

void instr_wall_split(struct instr_wall *w, uint32_t fn, uint64_t tick, uint64_t resume)
{
    if (fn >= w->nfn || !w->depth[fn] || w->open_at[fn] >= resume)
        return; /* not open, or split already (a recursive function is on the stack twice) */
    append(w, &w->cur[fn], w->open_at[fn], tick);
    w->open_at[fn] = resume;
}

void instr_wall_root_split(struct instr_wall *w, uint64_t tick, uint64_t resume)
{
    append(w, &w->cur_root, w->root_open, tick);
    w->root_open = resume;
}

static int cmp_seg(const void *a, const void *b)
{
    const struct instr_wall_seg *x = a, *y = b;
    return x->start < y->start ? -1 : x->start > y->start;
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
    memcpy(a->s + a->n, b->s, b->n * sizeof *b->s);
    a->n += b->n;
    /* The tail as long as the head: merging now costs what was added. */
    if (a->n - a->settled >= a->settled && instr_wall_settle(a) < 0) {
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
    free(w->fn);
    free(w->cur);
    free(w->depth);
    free(w->open_at);
    free(w->seen);
    free(w->touched);
    free(w->root.s);
    free(w->cur_root.s);
    memset(w, 0, sizeof *w);
}
