/* view-calltree.c - the session's call tree: every thread's call paths,
 * merged across threads and processes by function identity (the function
 * rows), with the four values of each path.
 *
 * A path's values are those of its last frame on that path: EI = every
 * interval with this path at the bottom of the stack (the path's frames,
 * then anything), EE = intervals with exactly this path as the stack.
 * Recursion needs no special care here, each path being distinct.
 */
#define _GNU_SOURCE /* qsort_r */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"

/* (parent, row) -> tree node, open addressing. */
struct tmap {
    uint64_t *k;
    uint32_t *v;
    size_t mask, n;
};

static size_t th(uint64_t k)
{
    k *= 0x9e3779b97f4a7c15ull;
    return (size_t)(k ^ k >> 31);
}

static int tmap_grow(struct tmap *m)
{
    size_t cap = m->k ? (m->mask + 1) * 2 : 1024;
    uint64_t *k = malloc(cap * sizeof *k);
    uint32_t *v = malloc(cap * sizeof *v);
    if (!k || !v) {
        free(k);
        free(v);
        return INSTR_ENOMEM;
    }
    for (size_t i = 0; i < cap; i++)
        v[i] = UINT32_MAX;
    if (m->k)
        for (size_t i = 0; i <= m->mask; i++)
            if (m->v[i] != UINT32_MAX) {
                size_t j = th(m->k[i]) & (cap - 1);
                while (v[j] != UINT32_MAX)
                    j = (j + 1) & (cap - 1);
                k[j] = m->k[i];
                v[j] = m->v[i];
            }
    free(m->k);
    free(m->v);
    m->k = k;
    m->v = v;
    m->mask = cap - 1;
    return 0;
}

/* The tree node for row under parent, created if needed; UINT32_MAX on
 * allocation failure. */
static uint32_t tchild(struct instr_tree *t, size_t *cap, struct tmap *m, uint32_t parent, uint32_t row)
{
    if ((m->n + 1) * 2 > (m->k ? m->mask + 1 : 0) && tmap_grow(m) < 0)
        return UINT32_MAX;
    uint64_t key = (uint64_t)parent << 32 | row;
    size_t i = th(key) & m->mask;
    for (; m->v[i] != UINT32_MAX; i = (i + 1) & m->mask)
        if (m->k[i] == key)
            return m->v[i];
    if (t->len == *cap) {
        size_t nc = *cap ? *cap * 2 : 256;
        struct instr_tnode *n = realloc(t->n, nc * sizeof *n);
        if (!n)
            return UINT32_MAX;
        t->n = n;
        *cap = nc;
    }
    uint32_t c = (uint32_t)t->len++;
    memset(&t->n[c], 0, sizeof t->n[c]);
    t->n[c].parent = parent;
    t->n[c].row = row;
    t->n[c].depth = t->n[parent].depth + 1;
    m->k[i] = key;
    m->v[i] = c;
    m->n++;
    return c;
}

static int cmp_child(const void *a, const void *b, void *ctx)
{
    const struct instr_tree *t = ctx;
    const struct instr_tnode *x = &t->n[*(const uint32_t *)a], *y = &t->n[*(const uint32_t *)b];
    if (x->v.ei != y->v.ei)
        return x->v.ei > y->v.ei ? -1 : 1;
    return x->row < y->row ? -1 : x->row > y->row;
}

int instr_tree_build(const struct instr_session *s, struct instr_tree *t)
{
    size_t cap = 0;
    struct tmap m = {0};
    uint32_t *map = NULL;
    int rc = INSTR_ENOMEM;
    memset(t, 0, sizeof *t);
    if (!(t->n = calloc(1, sizeof *t->n)))
        return INSTR_ENOMEM;
    cap = t->len = 1;
    t->n[0].row = UINT32_MAX;
    for (size_t i = 0; i < s->ndumps; i++) {
        const struct instr_profile *p = &s->profiles[i];
        const struct instr_dump *d = &s->dumps[i];
        free(map);
        if (!(map = malloc((p->nnodes ? p->nnodes : 1) * sizeof *map)))
            goto out;
        /* Parents come before their children, thread by thread. */
        for (size_t j = 0; j < p->nnodes; j++) {
            const struct instr_pnode *pn = &p->nodes[j];
            if (pn->func == UINT32_MAX) {
                map[j] = 0;
                continue;
            }
            uint32_t c = tchild(t, &cap, &m, map[pn->parent], s->func_rows[i][pn->func]);
            if (c == UINT32_MAX)
                goto out;
            map[j] = c;
            struct instr_tnode *n = &t->n[c];
            instr_values_add4(&n->v, n->ns, d, pn->ei, pn->ee, pn->ai, pn->ae, pn->calls);
            n->v.ci += pn->ci;
            n->v.ce += pn->ce;
            n->cpu_ns[0] += instr_ticks_ns(d, pn->ci);
            n->cpu_ns[1] += instr_ticks_ns(d, pn->ce);
        }
    }
    /* Children lists, largest Elapsed Inclusive first; percents. */
    uint32_t *kids = malloc(t->len * sizeof *kids);
    size_t *count = calloc(t->len, sizeof *count), *start = calloc(t->len + 1, sizeof *start);
    if (!kids || !count || !start) {
        free(kids);
        free(count);
        free(start);
        goto out;
    }
    for (size_t c = 1; c < t->len; c++)
        count[t->n[c].parent]++;
    for (size_t c = 0; c < t->len; c++)
        start[c + 1] = start[c] + count[c];
    memset(count, 0, t->len * sizeof *count);
    for (size_t c = 1; c < t->len; c++) {
        uint32_t par = t->n[c].parent;
        kids[start[par] + count[par]++] = (uint32_t)c;
    }
    for (size_t c = 0; c < t->len; c++) {
        struct instr_tnode *n = &t->n[c];
        if (count[c] > 1)
            qsort_r(kids + start[c], count[c], sizeof *kids, cmp_child, t);
        n->first_child = count[c] ? kids[start[c]] : 0;
        for (size_t k = 0; k < count[c]; k++)
            t->n[kids[start[c] + k]].next_sibling = k + 1 < count[c] ? kids[start[c] + k + 1] : 0;
        instr_values_pct(&n->v, &s->total, n->pct, n->cpu_pct);
    }
    free(kids);
    free(count);
    free(start);
    rc = 0;
out:
    free(map);
    free(m.k);
    free(m.v);
    if (rc < 0)
        instr_tree_free(t);
    return rc;
}

uint32_t instr_tree_first(const struct instr_tree *t)
{
    return t->len ? t->n[0].first_child : 0;
}

uint32_t instr_tree_next(const struct instr_tree *t, uint32_t c, int descend)
{
    if (descend && t->n[c].first_child)
        return t->n[c].first_child;
    while (c && !t->n[c].next_sibling)
        c = t->n[c].parent;
    return c ? t->n[c].next_sibling : 0;
}

int instr_tree_shown(const struct instr_tnode *n, const struct instr_report_opts *o)
{
    return (!o->depth || n->depth <= o->depth) && n->pct[0] >= o->threshold;
}

void instr_tree_free(struct instr_tree *t)
{
    free(t->n);
    memset(t, 0, sizeof *t);
}
