/* sample-views.c - the call tree and the caller/callee views of samples,
 * from the profile's distinct stacks (sample-report.h).
 *
 * Call tree: the stacks merged from the root; a node's inclusive samples
 * are those of the stacks through it, its exclusive samples those ending
 * at it.  Callers/callees of F: on each stack holding F, its outermost
 * occurrence (so recursion counts once and the callers' inclusive samples
 * add up to F's); the caller is the frame below it on the stack ("[root]"
 * when F is the outermost frame), the callee the frame F called, with an
 * exclusive sample when that frame is the top. */
#define _GNU_SOURCE /* qsort_r */
#include "sample-report.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "arrays.h"
#include "emit.h"
#include "report.h" /* instr_basename */

struct tnode {
    uint32_t fn;
    uint32_t child, next; /* first child, next sibling (0 = none) */
    uint64_t incl, excl;
};

struct tree {
    struct tnode *n; /* n[0] is the root */
    size_t len, cap;
};

static long node_child(struct tree *t, uint32_t parent, uint32_t fn)
{
    for (uint32_t c = t->n[parent].child; c; c = t->n[c].next)
        if (t->n[c].fn == fn)
            return c;
    struct tnode *a = instr_grow(t->n, &t->cap, t->len + 1, sizeof *a, 256);
    if (!a)
        return -1;
    t->n = a;
    uint32_t k = (uint32_t)t->len++;
    t->n[k] = (struct tnode){fn, 0, t->n[parent].child, 0, 0};
    t->n[parent].child = k;
    return k;
}

/* One row of a tree or relations view: a function (module: its path), or
 * "[root]" (module NULL: none). */
static void named_row(FILE *f, const struct instr_sprofile *p, int format, const char *role, size_t depth,
                      const char *name, const char *module, uint64_t incl, uint64_t excl, int *first)
{
    if (format == 0) {
        instr_svalues_write(f, 0, incl, excl, p->total);
        fprintf(f, "  %*s%s", (int)(2 * depth), "", name);
        if (module)
            fprintf(f, "  [%s]", instr_basename(module));
        fputc('\n', f);
    } else if (format == 1) {
        fprintf(f, "%s,%zu,", role, depth);
        instr_csv_field(f, name);
        fputc(',', f);
        instr_csv_field(f, module ? module : "");
        instr_svalues_write(f, 1, incl, excl, p->total);
        fputc('\n', f);
    } else {
        fprintf(f, "%s{\"role\":\"%s\",\"depth\":%zu,\"name\":", *first ? "" : ",", role, depth);
        instr_json_str(f, name);
        fputs(",\"module\":", f);
        instr_json_str(f, module ? module : "");
        instr_svalues_write(f, 2, incl, excl, p->total);
        fputc('}', f);
    }
    *first = 0;
}

static void row(FILE *f, const struct instr_sprofile *p, int format, const char *role, size_t depth, uint32_t fn,
                uint64_t incl, uint64_t excl, int *first)
{
    const struct instr_srow *r = &p->rows[INSTR_SVIEW_FUNCTIONS][fn];
    named_row(f, p, format, role, depth, r->name, r->module, incl, excl, first);
}

static void head(FILE *f, int format, const char *title)
{
    if (format == 0)
        fprintf(f, "%s\n%17s  %17s  %11s  %11s  %s\n", title, "Inclusive Samples", "Exclusive Samples",
                "Inclusive %", "Exclusive %", "Function  [module]");
    else if (format == 1)
        fputs("role,depth,function,module,inclusive_samples,exclusive_samples,inclusive_pct,exclusive_pct\n", f);
    else
        fprintf(f, "{\"collection\":\"sampling\",\"samples\":%s", "");
}

static int by_incl(const void *a, const void *b, void *ctx)
{
    const struct tree *t = ctx;
    const struct tnode *x = &t->n[*(const uint32_t *)a], *y = &t->n[*(const uint32_t *)b];
    if (x->incl != y->incl)
        return x->incl > y->incl ? -1 : 1;
    return x->fn < y->fn ? -1 : x->fn > y->fn;
}

static int walk(FILE *f, const struct instr_sprofile *p, const struct instr_sreport_opts *o, struct tree *t,
                uint32_t node, size_t depth, size_t maxdepth, int *first)
{
    size_t n = 0;
    for (uint32_t c = t->n[node].child; c; c = t->n[c].next)
        n++;
    uint32_t *kids = n ? malloc(n * sizeof *kids) : NULL;
    if (n && !kids)
        return INSTR_ENOMEM;
    n = 0;
    for (uint32_t c = t->n[node].child; c; c = t->n[c].next)
        kids[n++] = c;
    if (n > 1)
        qsort_r(kids, n, sizeof *kids, by_incl, t);
    int rc = 0;
    for (size_t i = 0; i < n && rc == 0; i++) {
        const struct tnode *k = &t->n[kids[i]];
        if (instr_spct(k->incl, p->total) < o->threshold)
            continue;
        row(f, p, o->format, "path", depth, k->fn, k->incl, k->excl, first);
        if (!maxdepth || depth + 1 < maxdepth)
            rc = walk(f, p, o, t, kids[i], depth + 1, maxdepth, first);
    }
    free(kids);
    return rc;
}

int instr_sreport_calltree(FILE *f, const struct instr_sprofile *p, const struct instr_sreport_opts *o, size_t depth)
{
    struct tree t = {calloc(256, sizeof(struct tnode)), 1, 256}; /* n[0]: the root */
    if (!t.n)
        return INSTR_ENOMEM;
    const struct instr_sstack *s;
    for (size_t i = 0; (s = instr_sstack_next(p, &i));) {
        long at = 0;
        for (size_t k = 0; k < s->len; k++) {
            if ((at = node_child(&t, (uint32_t)at, p->pool[s->off + k])) < 0) {
                free(t.n);
                return INSTR_ENOMEM;
            }
            t.n[at].incl += s->samples;
        }
        t.n[at].excl += s->samples;
    }
    int first = 1;
    head(f, o->format, "Call tree (samples; children by Inclusive Samples)");
    if (o->format == 2)
        fprintf(f, "%" PRIu64 ",\"calltree\":[", p->total);
    int rc = walk(f, p, o, &t, 0, 0, depth, &first);
    if (o->format == 2)
        fputs("]}\n", f);
    free(t.n);
    return rc;
}

static int name_matches(const char *name, const char *func)
{
    if (!strcmp(name, func))
        return 1;
    size_t l = strcspn(name, "(");
    return name[l] && strlen(func) == l && !strncmp(name, func, l);
}

int instr_sreport_relations(FILE *f, const struct instr_sprofile *p, const struct instr_sreport_opts *o,
                            const char *func, int callers)
{
    size_t nf = p->nrows[INSTR_SVIEW_FUNCTIONS];
    uint8_t *is = calloc(nf + 1, 1);
    uint64_t *incl = calloc(nf + 1, sizeof *incl), *excl = calloc(nf + 1, sizeof *excl);
    int rc = 0;
    if (!is || !incl || !excl) {
        rc = INSTR_ENOMEM;
        goto out;
    }
    size_t found = 0;
    for (size_t i = 0; i < nf; i++)
        if (name_matches(p->rows[INSTR_SVIEW_FUNCTIONS][i].name, func))
            is[i] = 1, found++;
    if (!found) {
        rc = INSTR_EARG;
        goto out;
    }
    /* incl/excl[nf] is "[root]" (callers) */
    const struct instr_sstack *s;
    for (size_t i = 0; (s = instr_sstack_next(p, &i));) {
        const uint32_t *r = p->pool + s->off;
        size_t k = 0;
        while (k < s->len && !is[r[k]])
            k++;
        if (k == s->len)
            continue;
        int top = k + 1 == s->len;
        if (callers) {
            size_t c = k ? r[k - 1] : nf;
            incl[c] += s->samples;
            excl[c] += top ? s->samples : 0; /* F's own samples, through this caller */
        } else if (!top) {
            incl[r[k + 1]] += s->samples;
            excl[r[k + 1]] += k + 2 == s->len ? s->samples : 0;
        }
    }
    int first = 1;
    char title[300];
    snprintf(title, sizeof title, "%s of %s (samples)", callers ? "Callers" : "Callees", func);
    head(f, o->format, title);
    if (o->format == 2)
        fprintf(f, "%" PRIu64 ",\"%s\":[", p->total, callers ? "callers" : "callees");
    /* rows in the table's order (it is sorted), "[root]" last */
    for (size_t i = 0; i < nf; i++)
        if (incl[i] || excl[i])
            row(f, p, o->format, callers ? "caller" : "callee", 1, (uint32_t)i, incl[i], excl[i], &first);
    if (callers && incl[nf])
        named_row(f, p, o->format, "caller", 1, "[root]", NULL, incl[nf], excl[nf], &first);
    for (size_t i = 0; i < nf; i++)
        if (is[i]) {
            const struct instr_srow *r = &p->rows[INSTR_SVIEW_FUNCTIONS][i];
            row(f, p, o->format, "function", 0, (uint32_t)i, r->incl, r->excl, &first);
        }
    if (o->format == 2)
        fputs("]}\n", f);
out:
    free(is);
    free(incl);
    free(excl);
    return rc;
}

/* ---- callgrind ----------------------------------------------------------------
 *
 *   events: Samples
 *   fl=MODULE fn=FUNCTION        each function once (the module as its file;
 *                                callgrind_annotate shows it relative to its cwd)
 *   0 EXCLUSIVE                  its exclusive samples (no line information)
 *   cfi= cfn= calls=N 0          each function it called on the stacks:
 *   0 INCLUSIVE                  N = stacks through that edge, their samples
 *
 * An edge counts once per stack (a recursive call is an edge to itself, as
 * Callgrind writes it), so the summary line, the sum of the exclusive
 * samples, is the total. */

struct cg_edge {
    uint32_t caller, callee;
    uint64_t calls, samples;
};

static int cmp_cg(const void *a, const void *b)
{
    const struct cg_edge *x = a, *y = b;
    if (x->caller != y->caller)
        return x->caller < y->caller ? -1 : 1;
    return x->callee < y->callee ? -1 : x->callee > y->callee;
}

static void cg_name(FILE *f, const char *key, uint32_t id, const char *name, uint8_t *seen)
{
    if (seen[id]) {
        fprintf(f, "%s=(%u)\n", key, id + 1);
        return;
    }
    seen[id] = 1;
    fprintf(f, "%s=(%u) ", key, id + 1);
    for (; *name; name++)
        fputc(*name == '\n' ? ' ' : *name, f);
    fputc('\n', f);
}

int instr_sreport_callgrind(FILE *f, const struct instr_sprofile *p)
{
    size_t nf = p->nrows[INSTR_SVIEW_FUNCTIONS], ne = 0, cap = 0;
    struct cg_edge *e = NULL;
    size_t nm = 0; /* function name ids: nm + row */
    uint8_t *seen = calloc(nf + 1, 1);
    if (!seen)
        return INSTR_ENOMEM;
    const struct instr_sstack *s;
    for (size_t i = 0; (s = instr_sstack_next(p, &i));) {
        const uint32_t *r = p->pool + s->off;
        for (size_t k = 0; k + 1 < s->len; k++) {
            int dup = 0; /* once per stack */
            for (size_t j = 0; j < k && !dup; j++)
                dup = r[j] == r[k] && r[j + 1] == r[k + 1];
            if (dup)
                continue;
            struct cg_edge *a = instr_grow(e, &cap, ne + 1, sizeof *a, 1024);
            if (!a) {
                free(e);
                free(seen);
                return INSTR_ENOMEM;
            }
            e = a;
            e[ne++] = (struct cg_edge){r[k], r[k + 1], 1, s->samples};
        }
    }
    if (ne > 1)
        qsort(e, ne, sizeof *e, cmp_cg);
    size_t u = 0; /* merge equal edges */
    for (size_t i = 0; i < ne; i++) {
        if (u && e[u - 1].caller == e[i].caller && e[u - 1].callee == e[i].callee) {
            e[u - 1].calls += e[i].calls;
            e[u - 1].samples += e[i].samples;
        } else {
            e[u++] = e[i];
        }
    }
    ne = u;
    fprintf(f, "# callgrind format\nversion: 1\ncreator: instr-report (sampling)\npositions: line\nevents: Samples\n"
               "summary: %" PRIu64 "\n\n", p->total);
    size_t k = 0;
    for (size_t fn = 0; fn < nf; fn++) {
        const struct instr_srow *r = &p->rows[INSTR_SVIEW_FUNCTIONS][fn];
        fprintf(f, "fl=%s\n", r->module); /* no source files: the module stands for one */
        cg_name(f, "fn", (uint32_t)(nm + fn), r->name, seen);
        fprintf(f, "0 %" PRIu64 "\n", r->excl);
        while (k < ne && e[k].caller < fn)
            k++;
        for (; k < ne && e[k].caller == fn; k++) {
            const struct instr_srow *c = &p->rows[INSTR_SVIEW_FUNCTIONS][e[k].callee];
            fprintf(f, "cfi=%s\n", c->module);
            cg_name(f, "cfn", (uint32_t)(nm + e[k].callee), c->name, seen);
            fprintf(f, "calls=%" PRIu64 " 0\n0 %" PRIu64 "\n", e[k].calls, e[k].samples);
        }
        fputc('\n', f);
    }
    free(e);
    free(seen);
    return 0;
}
