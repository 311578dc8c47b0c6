/* view-callers.c - the caller/callee view of one function, as in the
 * Visual Studio profiler: who called it, with the function's values on
 * the paths through each caller; whom it called, with each callee's values
 * on the paths through the function.
 *
 * Exclusive values and calls add up over all paths.  Inclusive values of a
 * path count only where the function (callee) is not already on the path
 * below it, so that recursion is counted once, as in the functions view:
 * the callers' EI add up to the function's EI.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"

/* Whether a frame of row is on the path strictly below node j. */
static int row_below(const struct instr_session *s, size_t i, uint32_t j, uint32_t row)
{
    const struct instr_profile *p = &s->profiles[i];
    for (uint32_t k = p->nodes[j].parent; p->nodes[k].func != UINT32_MAX; k = p->nodes[k].parent)
        if (s->func_rows[i][p->nodes[k].func] == row)
            return 1;
    return 0;
}

static int add(struct instr_relation **a, size_t *n, uint32_t row, const struct instr_dump *d,
               const struct instr_pnode *pn, int inclusive)
{
    size_t k = 0;
    while (k < *n && (*a)[k].row != row)
        k++;
    if (k == *n) {
        struct instr_relation *g = realloc(*a, (*n + 1) * sizeof *g);
        if (!g)
            return INSTR_ENOMEM;
        *a = g;
        memset(&g[k], 0, sizeof g[k]);
        g[k].row = row;
        (*n)++;
    }
    struct instr_relation *r = &(*a)[k];
    r->v.calls += pn->calls;
    r->v.ee += pn->ee;
    r->v.ae += pn->ae;
    r->ns[1] += instr_ticks_ns(d, pn->ee);
    r->ns[3] += instr_ticks_ns(d, pn->ae);
    r->v.ce += pn->ce;
    r->cpu_ns[1] += instr_ticks_ns(d, pn->ce);
    if (inclusive) {
        r->v.ci += pn->ci;
        r->cpu_ns[0] += instr_ticks_ns(d, pn->ci);
        r->v.ei += pn->ei;
        r->v.ai += pn->ai;
        r->ns[0] += instr_ticks_ns(d, pn->ei);
        r->ns[2] += instr_ticks_ns(d, pn->ai);
    }
    return 0;
}

static const struct instr_session *sort_s;

static int cmp_rel(const void *a, const void *b)
{
    const struct instr_relation *x = a, *y = b;
    if (x->v.ei != y->v.ei)
        return x->v.ei > y->v.ei ? -1 : 1;
    const struct instr_row *rx = instr_function_row(sort_s, x->row), *ry = instr_function_row(sort_s, y->row);
    int c = strcmp(rx ? rx->name : "", ry ? ry->name : "");
    return c ? c : (x->row < y->row ? -1 : x->row > y->row);
}

static void finish(const struct instr_session *s, struct instr_relation *a, size_t n)
{
    for (size_t k = 0; k < n; k++)
        instr_values_pct(&a[k].v, &s->total, a[k].pct, a[k].cpu_pct);
    sort_s = s;
    if (n > 1)
        qsort(a, n, sizeof *a, cmp_rel);
}

/* "name(args)" matches "name"; so does the mangled name. */
static int name_matches(const struct instr_row *r, const char *name)
{
    size_t l = strlen(name);
    return !strcmp(r->name, name) || (r->mangled && !strcmp(r->mangled, name)) ||
           (!strncmp(r->name, name, l) && r->name[l] == '(');
}

int instr_relations_build(const struct instr_session *s, const char *name, struct instr_relations *r, char *err,
                          size_t errlen)
{
    memset(r, 0, sizeof *r);
    size_t found = 0;
    const struct instr_row *hit = NULL;
    for (size_t k = 0; k < s->nfunctions; k++)
        if (name_matches(&s->functions[k], name)) {
            /* An exact name wins over a name without parameters. */
            if (hit && !strcmp(hit->name, name))
                continue;
            if (!strcmp(s->functions[k].name, name) && hit && strcmp(hit->name, name))
                found = 0;
            hit = &s->functions[k];
            found++;
        }
    if (found != 1) {
        snprintf(err, errlen, found ? "'%s' names %zu functions; give the full name (see --view functions)"
                                    : "no function named '%s' (see --view functions)",
                 name, found);
        return INSTR_EARG;
    }
    r->row = hit->key;
    uint8_t *mark = NULL;
    int rc = 0;
    for (size_t i = 0; i < s->ndumps && !rc; i++) {
        const struct instr_profile *p = &s->profiles[i];
        const struct instr_dump *d = &s->dumps[i];
        free(mark);
        if (!(mark = calloc(p->nnodes ? p->nnodes : 1, 1)))
            return INSTR_ENOMEM;
        for (uint32_t j = 0; j < p->nnodes && !rc; j++) {
            const struct instr_pnode *pn = &p->nodes[j];
            if (pn->func == UINT32_MAX || s->func_rows[i][pn->func] != r->row)
                continue;
            mark[j] = 1;
            const struct instr_pnode *par = &p->nodes[pn->parent];
            uint32_t caller = par->func == UINT32_MAX ? UINT32_MAX : s->func_rows[i][par->func];
            rc = add(&r->callers, &r->ncallers, caller, d, pn, !row_below(s, i, j, r->row));
        }
        for (uint32_t j = 0; j < p->nnodes && !rc; j++) {
            const struct instr_pnode *pn = &p->nodes[j];
            if (pn->func == UINT32_MAX || !mark[pn->parent])
                continue;
            uint32_t row = s->func_rows[i][pn->func];
            rc = add(&r->callees, &r->ncallees, row, d, pn, !row_below(s, i, j, row));
        }
    }
    free(mark);
    if (rc < 0) {
        instr_relations_free(r);
        return rc;
    }
    finish(s, r->callers, r->ncallers);
    finish(s, r->callees, r->ncallees);
    return 0;
}

void instr_relations_free(struct instr_relations *r)
{
    free(r->callers);
    free(r->callees);
    memset(r, 0, sizeof *r);
}
