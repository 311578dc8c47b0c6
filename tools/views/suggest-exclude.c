/* suggest-exclude.c - instr-report --suggest-exclude=PCT.
 *
 * Reads the function rows of a session and picks the hot tiny functions,
 * whose hooks cost more than the function itself and more than PCT % of
 * the run; writes them as an exclude= list for the next build. */
#include "suggest-exclude.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static int by_share(const void *a, const void *b)
{
    const struct instr_suggestion *x = a, *y = b;
    if (x->share_pct != y->share_pct)
        return x->share_pct < y->share_pct ? 1 : -1;
    return strcmp(x->row->mangled ? x->row->mangled : "", y->row->mangled ? y->row->mangled : "");
}

static int is_leaf(const struct instr_row *r)
{
    return !r->pseudo && r->mangled && r->mangled[0] && r->v.calls && r->v.ei == r->v.ee;
}

/* A call's hooks as the runtime measured them at start (the dump's
 * HOOK_COST records: enter and exit, each before and after its clock
 * read), in ticks of the first dump that has them; 0 if none has.  They
 * are the path the run's hooks took: with a record-time filter set, the
 * slow one (*filtering), whose cost the list weighs the calls by, as the
 * values had it subtracted. */
static double measured(const struct instr_session *s, double *ns, int *filtering)
{
    for (size_t i = 0; i < s->ndumps; i++) {
        const struct instr_dump *d = &s->dumps[i];
        const struct instr_hook_cost *en = &d->hook_cost[INSTR_EV_ENTER], *ex = &d->hook_cost[INSTR_EV_EXIT];
        if (!en->rounds || !ex->rounds)
            continue;
        double ticks = (double)(en->before + en->after + ex->before + ex->after) / 1e3;
        *ns = d->tick_hz > 0 ? ticks * 1e9 / d->tick_hz : NAN;
        *filtering = d->hdr.calibration_path == INSTR_CALIBRATION_PATH_FILTERING;
        return ticks;
    }
    return 0;
}

int instr_suggest_build(const struct instr_session *s, double pct, struct instr_suggestions *out)
{
    *out = (struct instr_suggestions){.hook_ns = NAN, .hook_source = "no leaf function with enough calls"};
    int filtering = 0;
    double per_ns = NAN, per = measured(s, &per_ns, &filtering);
    /* The run as it ran: the hook costs the values had taken out put back. */
    double run = (double)s->total.ei + (s->comp.applied ? (double)s->comp.ticks : 0);
    if (per > 0) {
        out->hook_source = filtering ? "measured by the runtime at start: the dump's hook costs, on the slow path "
                                       "the record-time filters take"
                                     : "measured by the runtime at start: the dump's hook costs";
        goto pick;
    }
    /* Without them, the estimate: the cheapest call of a leaf function. */
    for (size_t i = 0; i < s->nfunctions; i++) {
        const struct instr_row *r = &s->functions[i];
        if (!is_leaf(r) || r->v.calls < INSTR_SUGGEST_MIN_CALLS)
            continue;
        double t = (double)r->v.ee / (double)r->v.calls;
        if (per == 0 || t < per) {
            per = t;
            per_ns = r->ns[1] / (double)r->v.calls;
        }
    }
    if (per == 0)
        return 0;
    out->hook_source = "estimated: the smallest Elapsed Exclusive per call of a leaf function";
pick:
    if (run <= 0)
        return 0;
    out->hook_ticks = per;
    out->hook_ns = per_ns;
    out->v = calloc(s->nfunctions ? s->nfunctions : 1, sizeof *out->v);
    if (!out->v)
        return INSTR_ENOMEM;
    for (size_t i = 0; i < s->nfunctions; i++) {
        const struct instr_row *r = &s->functions[i];
        /* A call's own work: its CPU time where known (its Elapsed time
         * holds whatever preempted it: a loaded machine made every leaf
         * look long), else its Elapsed time. */
        double own = s->cpu_known ? (double)r->v.ce : (double)r->v.ee;
        if (!is_leaf(r) || own / (double)r->v.calls > INSTR_SUGGEST_TINY_FACTOR * per)
            continue;
        double share = 100.0 * (double)r->v.calls * per / run;
        if (share > pct)
            out->v[out->n++] = (struct instr_suggestion){r, share};
    }
    qsort(out->v, out->n, sizeof *out->v, by_share);
    return 0;
}

void instr_suggest_free(struct instr_suggestions *sg)
{
    free(sg->v);
    sg->v = NULL;
    sg->n = 0;
}

int instr_suggest_exclude(FILE *out, const struct instr_session *s, double pct)
{
    struct instr_suggestions sg;
    int rc = instr_suggest_build(s, pct, &sg);
    if (rc < 0)
        return rc;
    fprintf(out, "# instr-report --suggest-exclude=%g: tiny functions (leaves, at most %d hook costs per call)\n"
                 "# whose hooks cost more than %g%% of the run; use as -fplugin-arg-instr-exclude=@FILE\n",
            pct, INSTR_SUGGEST_TINY_FACTOR, pct);
    if (isnan(sg.hook_ns))
        fprintf(out, "# hook cost per call: %.1f ticks (%s)\n", sg.hook_ticks, sg.hook_source);
    else
        fprintf(out, "# hook cost per call: %.1f ns (%s)\n", sg.hook_ns, sg.hook_source);
    for (size_t i = 0; i < sg.n; i++) {
        const struct instr_row *r = sg.v[i].row;
        fprintf(out, "# %s: %" PRIu64 " calls, hooks about %.1f%% of the run\n%s\n", r->name, r->v.calls,
                sg.v[i].share_pct, r->mangled);
    }
    instr_suggest_free(&sg);
    return 0;
}
