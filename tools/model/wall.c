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
    struct instr_wall_list *f = realloc(w->fn, n * sizeof *f);
    if (f)
        w->fn = f;
    struct instr_wall_list *c = realloc(w->cur, n * sizeof *c);
    if (c)
        w->cur = c;
    uint32_t *d = realloc(w->depth, n * sizeof *d);
    if (d)
        w->depth = d;
    uint64_t *o = realloc(w->open_at, n * sizeof *o);
    if (o)
        w->open_at = o;
    if (!f || !c || !d || !o) {
        w->nomem = 1;
        return -1;
    }
    size_t k = n - w->nfn;
    memset(w->fn + w->nfn, 0, k * sizeof *f);
    memset(w->cur + w->nfn, 0, k * sizeof *c);
    memset(w->depth + w->nfn, 0, k * sizeof *d);
    memset(w->open_at + w->nfn, 0, k * sizeof *o);
    w->nfn = n;
    return 0;
}

/* Appends [start, end) to a list in time order (touching: extended). */
static void append(struct instr_wall *w, struct instr_wall_list *l, uint64_t start, uint64_t end)
{
    if (end <= start || w->overflow || w->nomem)
        return;
    if (l->n && start < l->s[l->n - 1].start)
        w->unsorted = 1; /* the clock went back (RESYNC, a chunk's base): sorted at the thread's end */
    else if (l->n && l->s[l->n - 1].end >= start) {
        if (end > l->s[l->n - 1].end)
            l->s[l->n - 1].end = end;
        return;
    }
    if (w->segs >= INSTR_WALL_MAX_SEGS) {
        w->overflow = 1;
        return;
    }
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

int instr_wall_union(struct instr_wall_list *a, const struct instr_wall_list *b)
{
    if (!b->n)
        return 0;
    struct instr_wall_seg *m = malloc((a->n + b->n) * sizeof *m);
    if (!m)
        return -1;
    size_t i = 0, j = 0, n = 0;
    while (i < a->n || j < b->n) {
        struct instr_wall_seg s = j >= b->n || (i < a->n && a->s[i].start <= b->s[j].start) ? a->s[i++] : b->s[j++];
        if (n && m[n - 1].end >= s.start) {
            if (s.end > m[n - 1].end)
                m[n - 1].end = s.end;
        } else {
            m[n++] = s;
        }
    }
    free(a->s);
    a->s = m;
    a->n = a->cap = n;
    return 0;
}

uint64_t instr_wall_length(const struct instr_wall_list *l)
{
    uint64_t t = 0;
    for (size_t i = 0; i < l->n; i++)
        t += l->s[i].end - l->s[i].start;
    return t;
}

static int cmp_seg(const void *a, const void *b)
{
    const struct instr_wall_seg *x = a, *y = b;
    return x->start < y->start ? -1 : x->start > y->start;
}

/* Moves a thread's list into the union (held segments: the union's). */
static void join(struct instr_wall *w, struct instr_wall_list *u, struct instr_wall_list *t)
{
    size_t before = u->n + t->n;
    if (w->unsorted && t->n > 1)
        qsort(t->s, t->n, sizeof *t->s, cmp_seg); /* instr_wall_union merges what overlaps */
    if (instr_wall_union(u, t) < 0)
        w->nomem = 1;
    w->segs -= before - u->n;
    free(t->s);
    memset(t, 0, sizeof *t);
}

void instr_wall_thread_end(struct instr_wall *w)
{
    for (size_t f = 0; f < w->nfn; f++) {
        if (w->cur[f].n)
            join(w, &w->fn[f], &w->cur[f]);
        w->depth[f] = 0;
    }
    join(w, &w->root, &w->cur_root);
    w->unsorted = 0;
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
    free(w->root.s);
    free(w->cur_root.s);
    memset(w, 0, sizeof *w);
}
