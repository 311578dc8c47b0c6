/* export-callgrind.c - the Callgrind profile format, for callgrind_annotate
 * and KCachegrind, from the session's call tree (every thread and process
 * merged by function, view-calltree.c).
 *
 *   events: Elapsed Application       costs in ns (Application left out when
 *                                     the input has no transition data)
 *   ob= fl= fn=                       each function once, with its module and
 *   LINE SELF...                      file; its line and exclusive costs
 *   cob= cfl= cfn= calls=N LINE       each callee, with the calls and the
 *   LINE INCLUSIVE...                 inclusive costs on those paths
 *
 * Names are compressed ("(id) name" the first time, "(id)" after).  Costs
 * are rounded to whole nanoseconds per function and per call edge, and the
 * summary is the sum of the self costs, so callgrind_annotate's totals are
 * exactly the sum of what we print (and equal the session's Elapsed
 * Inclusive within that rounding).  A recursive call is an edge to itself,
 * as Callgrind writes it: inclusive costs there nest, self costs do not.
 */
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"

struct cg_edge {
    uint32_t caller, callee; /* row keys */
    uint64_t calls;
    double ns[2];            /* inclusive Elapsed, Application */
};

struct cg_func {
    double self[2]; /* exclusive Elapsed, Application, ns */
    int seen;       /* on some path */
};

static int cmp_edge(const void *a, const void *b)
{
    const struct cg_edge *x = a, *y = b;
    if (x->caller != y->caller)
        return x->caller < y->caller ? -1 : 1;
    return x->callee < y->callee ? -1 : x->callee > y->callee;
}

/* Costs in whole ns.  A hostile or corrupt dump can hold absurd times: they
 * are clamped, and sums saturate, so the file stays well-formed. */
#define COST_MAX (LLONG_MAX / 2)
static long long cost(double ns)
{
    if (!(ns > 0))
        return 0; /* also NaN */
    return ns >= (double)COST_MAX ? COST_MAX : llround(ns);
}

static long long add_cost(long long sum, long long c)
{
    return sum > COST_MAX - c ? COST_MAX : sum + c;
}

/* "(id) name" the first time, "(id)" after. */
static void name(FILE *out, const char *key, uint32_t id, const char *text, uint8_t *done)
{
    if (done[id]) {
        fprintf(out, "%s=(%u)\n", key, id + 1);
        return;
    }
    done[id] = 1;
    fprintf(out, "%s=(%u) ", key, id + 1);
    for (; *text; text++)
        fputc(*text == '\n' ? ' ' : *text, out);
    fputc('\n', out);
}

int instr_export_callgrind(FILE *out, const struct instr_session *s, const struct instr_report_opts *o)
{
    (void)o;
    struct instr_tree t;
    int rc = instr_tree_build(s, &t);
    if (rc < 0)
        return rc;
    size_t nf = s->nfunctions, ne = 0;
    int app = !s->no_app;
    struct cg_func *f = calloc(nf + 1, sizeof *f);
    struct cg_edge *e = calloc(t.len + 1, sizeof *e);
    uint8_t *fn_done = calloc(nf + 1, 1), *fl_done = calloc(nf + 1, 1), *ob_done = calloc(nf + 1, 1);
    uint32_t *fl_id = calloc(nf + 1, sizeof *fl_id), *ob_id = calloc(nf + 1, sizeof *ob_id);
    if (!f || !e || !fn_done || !fl_done || !ob_done || !fl_id || !ob_id) {
        rc = INSTR_ENOMEM;
        goto out;
    }
    for (size_t i = 1; i < t.len; i++) {
        const struct instr_tnode *n = &t.n[i];
        f[n->row].self[0] += n->ns[1];
        f[n->row].self[1] += n->ns[3];
        f[n->row].seen = 1;
        if (n->parent)
            e[ne++] = (struct cg_edge){t.n[n->parent].row, n->row, n->v.calls, {n->ns[0], n->ns[2]}};
    }
    qsort(e, ne, sizeof *e, cmp_edge);
    /* A file or module id per function: the same name under two ids is
     * one file to the readers (they key by name), and this stays linear. */
    for (uint32_t k = 0; k < nf; k++)
        fl_id[k] = ob_id[k] = k;
    long long sum[2] = {0, 0};
    for (size_t k = 0; k < nf; k++)
        if (f[k].seen)
            sum[0] = add_cost(sum[0], cost(f[k].self[0])),
            sum[1] = add_cost(sum[1], cost(f[k].self[1]));
    fprintf(out, "# callgrind format\nversion: 1\ncreator: instr-report\n");
    for (size_t i = 0; i < s->ndumps; i++)
        fprintf(out, "%s %s", i ? "" : "cmd:", s->dumps[i].hdr.exe_path);
    fprintf(out, "\npositions: line\nevent: Elapsed : Elapsed time (ns)\n");
    if (app)
        fprintf(out, "event: Application : Application time (ns)\n");
    fprintf(out, "events: Elapsed%s\nsummary: %lld", app ? " Application" : "", sum[0]);
    if (app)
        fprintf(out, " %lld", sum[1]);
    fputc('\n', out);
    size_t ei = 0;
    for (uint32_t k = 0; k < nf; k++) {
        if (!f[k].seen)
            continue;
        const struct instr_row *r = instr_function_row(s, k);
        fputc('\n', out);
        name(out, "ob", ob_id[k], r->module[0] ? r->module : "???", ob_done);
        name(out, "fl", fl_id[k], r->file[0] ? r->file : "???", fl_done);
        name(out, "fn", k, r->name, fn_done);
        fprintf(out, "%" PRIu64 " %lld", r->line, cost(f[k].self[0]));
        if (app)
            fprintf(out, " %lld", cost(f[k].self[1]));
        fputc('\n', out);
        while (ei < ne && e[ei].caller < k)
            ei++;
        /* Equal (caller, callee) edges of different paths: one call line. */
        while (ei < ne && e[ei].caller == k) {
            struct cg_edge sum_e = e[ei++];
            while (ei < ne && e[ei].caller == k && e[ei].callee == sum_e.callee) {
                sum_e.calls += e[ei].calls;
                sum_e.ns[0] += e[ei].ns[0];
                sum_e.ns[1] += e[ei].ns[1];
                ei++;
            }
            const struct instr_row *c = instr_function_row(s, sum_e.callee);
            name(out, "cob", ob_id[sum_e.callee], c->module[0] ? c->module : "???", ob_done);
            name(out, "cfl", fl_id[sum_e.callee], c->file[0] ? c->file : "???", fl_done);
            name(out, "cfn", sum_e.callee, c->name, fn_done);
            fprintf(out, "calls=%" PRIu64 " %" PRIu64 "\n%" PRIu64 " %lld", sum_e.calls, c->line, r->line,
                    cost(sum_e.ns[0]));
            if (app)
                fprintf(out, " %lld", cost(sum_e.ns[1]));
            fputc('\n', out);
        }
    }
out:
    free(f);
    free(e);
    free(fn_done);
    free(fl_done);
    free(ob_done);
    free(fl_id);
    free(ob_id);
    instr_tree_free(&t);
    return rc;
}
