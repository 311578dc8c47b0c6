/* export-callgrind.c - the Callgrind profile format, for callgrind_annotate
 * and KCachegrind, from the session's call tree (every thread and process
 * merged by function, view-calltree.c).
 *
 *   events: Elapsed Application       costs in ns (Application left out when
 *                                     the input has no transition data)
 *   ob= fl= fn=                       each function once, with its module and
 *   LINE SELF...                      file; its line and exclusive costs
 *   cob= cfl= cfn= calls=N LINE       each callee, with the calls and the
 *   SITE INCLUSIVE...                 inclusive costs on those paths, at the
 *                                     line of the call (below)
 *
 * Names are compressed as Callgrind does: "(id) name" the first time, "(id)"
 * after, one id per distinct object, file and function.  Files are written
 * absolute, as valgrind writes them: the plugin records them absolute (the
 * compile directory joined, as in the debug information); a relative one
 * (a dump of an older plugin, a converted input) is taken from the
 * recording process's working directory when the dump has it (PROCESS
 * record).
 *
 * The line of a call is the call site's (CALLSITE record) when the dump
 * has a site from that caller naming that callee (or entering it, for a
 * site merged with the callee's entry); when a caller calls one callee
 * from several lines, the call tree has merged them, and the first line
 * carries the whole edge.  A line that cannot be in the caller's body
 * (before its first line, or past the end of its source file: code inlined
 * from another file, where the site's file is not recorded) falls back to
 * the caller's first line, as does a call without a site.  Costs
 * are rounded to whole nanoseconds per function and per call edge, and the
 * summary is the sum of the self costs, so callgrind_annotate's totals are
 * exactly the sum of what we print (and equal the session's Elapsed
 * Inclusive within that rounding).  A recursive call is an edge to itself,
 * as Callgrind writes it: inclusive costs there nest, self costs do not.
 *
 * Count-mode dumps (plugin mode=count; instr_export_callgrind_counts) have
 * calls and call edges, no time and no call lines:
 *
 *   events: Calls                     a function's entries (one that was
 *   fl= fn=                           not instrumented: its calls from
 *   LINE CALLS                        counted code), at its first line
 *   cfl= cfn= calls=N LINE            each callee with its calls, and as
 *   LINE N                            the call's cost the same N
 *
 * so KCachegrind's call counts and call graph are exact, and a function's
 * inclusive Calls are its own and the calls it makes (one level: the
 * edges say nothing deeper).
 */
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "callsites.h"
#include "count-report.h"
#include "hook-abi.h"
#include "report.h"
#include "writers.h"
#include "strtab.h"

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

/* A call site of some dump, by the row of its caller (for the call lines). */
struct cg_site {
    uint32_t caller;      /* row key */
    uint32_t pseudo_row;  /* the row of its pseudo-frame, UINT32_MAX if none */
    uint64_t line;
    const char *resolved; /* callee name for merging ("" = unknown) */
    const char *module;   /* the callee's module path ("" = unknown) */
    int indirect;
};

static int cmp_site(const void *a, const void *b)
{
    const struct cg_site *x = a, *y = b;
    if (x->caller != y->caller)
        return x->caller < y->caller ? -1 : 1;
    return x->line < y->line ? -1 : x->line > y->line;
}

/* Every call site of every dump whose caller is a row of the session. */
static int collect_sites(const struct instr_session *s, struct cg_site **out, size_t *nout)
{
    size_t n = 0, cap = 0;
    struct cg_site *a = NULL;
    for (size_t i = 0; i < s->ndumps; i++) {
        const struct instr_dump *d = &s->dumps[i];
        const struct instr_profile *p = &s->profiles[i];
        if (!d->nsites)
            continue;
        uint32_t *fn_row = malloc((d->nfunctions + 1) * sizeof *fn_row);
        uint32_t *pseudo_row = malloc((p->sites.nnames + 1) * sizeof *pseudo_row);
        if (!fn_row || !pseudo_row) {
            free(fn_row);
            free(pseudo_row);
            free(a);
            return INSTR_ENOMEM;
        }
        memset(fn_row, 0xff, (d->nfunctions + 1) * sizeof *fn_row);
        memset(pseudo_row, 0xff, (p->sites.nnames + 1) * sizeof *pseudo_row);
        for (size_t f = 0; f < p->nfuncs; f++) {
            const struct instr_pfunc *pf = &p->funcs[f];
            if (pf->fn && !pf->pseudo)
                fn_row[pf->fn - d->functions] = s->func_rows[i][f];
            else if ((pf->key & INSTR_KEY_SITE) && !(pf->key & INSTR_KEY_UNNAMED) &&
                     (pf->key & ~INSTR_KEY_SITE) < p->sites.nnames)
                pseudo_row[pf->key & ~INSTR_KEY_SITE] = s->func_rows[i][f];
        }
        for (size_t k = 0; k < d->nsites; k++) {
            const struct instr_callsite *cs = &d->sites[k];
            const struct instr_function *caller = instr_dump_function(d, cs->caller);
            if (!caller || fn_row[caller - d->functions] == UINT32_MAX)
                continue;
            if (n == cap) {
                cap = cap ? cap * 2 : 64;
                struct cg_site *b = realloc(a, cap * sizeof *b);
                if (!b) {
                    free(fn_row);
                    free(pseudo_row);
                    free(a);
                    return INSTR_ENOMEM;
                }
                a = b;
            }
            const struct instr_module *m = instr_dump_module(d, cs->module);
            a[n++] = (struct cg_site){fn_row[caller - d->functions], pseudo_row[p->sites.pseudo[k]], cs->line,
                                      p->sites.resolved[k], m && m->path ? m->path : "",
                                      (cs->flags & INSTR_SITE_INDIRECT) != 0 ? 1 : 0};
        }
        free(fn_row);
        free(pseudo_row);
    }
    if (n > 1)
        qsort(a, n, sizeof *a, cmp_site);
    *out = a;
    *nout = n;
    return 0;
}

/* Lines in a source file, 0 if it cannot be read (the dump's paths are
 * from the recording machine). */
static uint64_t file_lines(const char *path)
{
    FILE *f = path[0] == '/' ? fopen(path, "r") : NULL;
    if (!f)
        return 0;
    uint64_t n = 0;
    int c, last = '\n';
    while ((c = getc(f)) != EOF) {
        n += c == '\n';
        last = c;
    }
    fclose(f);
    return n + (last != '\n');
}

/* The line of the call from row caller to row callee (see the top). */
static uint64_t call_line(const struct instr_session *s, const struct cg_site *sites, size_t nsites,
                          uint32_t caller, uint32_t callee, uint64_t caller_end)
{
    const struct instr_row *r = instr_function_row(s, caller), *c = instr_function_row(s, callee);
    size_t lo = 0, hi = nsites;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (sites[mid].caller < caller)
            lo = mid + 1;
        else
            hi = mid;
    }
    for (size_t k = lo; k < nsites && sites[k].caller == caller; k++) {
        const struct cg_site *x = &sites[k];
        int calls = x->pseudo_row == callee ||
                    (!c->pseudo && (x->resolved[0] ? instr_callsite_same_function(x->resolved, c->mangled)
                                                   : x->indirect && !strcmp(x->module, c->module)));
        if (calls && x->line >= r->line && (!caller_end || x->line <= caller_end))
            return x->line; /* sorted by line: the first */
    }
    return r->line;
}

/* Working directory of the session's processes, the first recorded. */
static const char *session_cwd(const struct instr_session *s)
{
    for (size_t i = 0; i < s->ndumps; i++)
        if (s->dumps[i].cwd && s->dumps[i].cwd[0] == '/')
            return s->dumps[i].cwd;
    return NULL;
}

/* A file as valgrind names it: absolute (see the top), "???" if unknown. */
static const char *abs_file(const char *file, const char *cwd, char *buf, size_t len)
{
    if (!file[0])
        return "???";
    if (file[0] == '/' || !cwd)
        return file;
    const char *f = file;
    while (f[0] == '.' && f[1] == '/')
        f += 2;
    snprintf(buf, len, "%s%s%s", cwd, cwd[strlen(cwd) - 1] == '/' ? "" : "/", f);
    return buf;
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
    size_t nf = s->nfunctions, ne = 0, nsites = 0;
    int app = !s->no_app;
    const char *cwd = session_cwd(s);
    char path[4200];
    struct instr_strtab obs = {0}, fls = {0};
    struct cg_site *sites = NULL;
    struct cg_func *f = calloc(nf + 1, sizeof *f);
    struct cg_edge *e = calloc(t.len + 1, sizeof *e);
    /* At most one object and one file per function, plus "???". */
    uint8_t *fn_done = calloc(nf + 1, 1), *fl_done = calloc(nf + 2, 1), *ob_done = calloc(nf + 2, 1);
    uint32_t *fl_id = calloc(nf + 1, sizeof *fl_id), *ob_id = calloc(nf + 1, sizeof *ob_id);
    uint64_t *end_line = calloc(nf + 1, sizeof *end_line);
    if (!f || !e || !fn_done || !fl_done || !ob_done || !fl_id || !ob_id || !end_line ||
        (rc = collect_sites(s, &sites, &nsites)) < 0) {
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
    /* One id per distinct object and file path, in the order first seen;
     * the length of each readable source file, once (a caller's last
     * possible line). */
    for (uint32_t k = 0; k < nf; k++) {
        const struct instr_row *r = instr_function_row(s, k);
        ob_id[k] = instr_strtab_id(&obs, r->module[0] ? r->module : "???");
        size_t before = fls.n;
        fl_id[k] = instr_strtab_id(&fls, abs_file(r->file, cwd, path, sizeof path));
        if (ob_id[k] == UINT32_MAX || fl_id[k] == UINT32_MAX) {
            rc = INSTR_ENOMEM;
            goto out;
        }
        if (fls.n > before)
            end_line[fl_id[k]] = nsites ? file_lines(fls.s[fl_id[k]]) : 0;
    }
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
    uint32_t cur_ob = UINT32_MAX, cur_fl = UINT32_MAX;
    for (uint32_t k = 0; k < nf; k++) {
        if (!f[k].seen)
            continue;
        const struct instr_row *r = instr_function_row(s, k);
        fputc('\n', out);
        /* ob= and fl= only when they change, as Callgrind writes them. */
        if (ob_id[k] != cur_ob)
            name(out, "ob", ob_id[k], obs.s[ob_id[k]], ob_done);
        if (fl_id[k] != cur_fl)
            name(out, "fl", fl_id[k], fls.s[fl_id[k]], fl_done);
        cur_ob = ob_id[k];
        cur_fl = fl_id[k];
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
            uint32_t c = sum_e.callee;
            const struct instr_row *cr = instr_function_row(s, c);
            /* cob=/cfl= only when the callee's differ from the caller's. */
            if (ob_id[c] != cur_ob)
                name(out, "cob", ob_id[c], obs.s[ob_id[c]], ob_done);
            if (fl_id[c] != cur_fl)
                name(out, "cfi", fl_id[c], fls.s[fl_id[c]], fl_done);
            name(out, "cfn", c, cr->name, fn_done);
            fprintf(out, "calls=%" PRIu64 " %" PRIu64 "\n%" PRIu64 " %lld", sum_e.calls, cr->line,
                    call_line(s, sites, nsites, k, c, end_line[fl_id[k]]), cost(sum_e.ns[0]));
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
    free(end_line);
    free(sites);
    instr_strtab_free(&obs);
    instr_strtab_free(&fls);
    instr_tree_free(&t);
    return rc;
}

/* A count graph's function: its "(id) name" the first time, "(id)" after. */
static void count_name(FILE *out, const char *key, const struct instr_count_graph *g, size_t k, uint8_t *named)
{
    if (named[k]) {
        fprintf(out, "%s=(%zu)\n", key, k + 1);
        return;
    }
    named[k] = 1;
    fprintf(out, "%s=(%zu) %s\n", key, k + 1, g->fns[k].display);
}

int instr_export_callgrind_counts(FILE *out, const struct instr_count_graph *g)
{
    uint8_t *named = calloc(g->nfns + 1, 1);
    uint64_t *calls = calloc(g->nfns + 1, sizeof *calls);
    /* The edges by caller: first[k] .. first[k + 1] in by_caller. */
    size_t *first = calloc(g->nfns + 2, sizeof *first), *by_caller = malloc((g->nedges + 1) * sizeof *by_caller);
    if (!named || !calls || !first || !by_caller) {
        free(named), free(calls), free(first), free(by_caller);
        return INSTR_ENOMEM;
    }
    for (size_t i = 0; i < g->nedges; i++)
        first[g->edges[i].caller + 2]++;
    for (size_t k = 2; k < g->nfns + 2; k++)
        first[k] += first[k - 1];
    for (size_t i = 0; i < g->nedges; i++)
        by_caller[first[g->edges[i].caller + 1]++] = i;
    /* A function's calls: its entries, or for one without (not
     * instrumented), the calls counted code made to it. */
    for (size_t k = 0; k < g->nfns; k++)
        calls[k] = g->fns[k].calls;
    for (size_t i = 0; i < g->nedges; i++)
        if (!g->fns[g->edges[i].callee].instrumented)
            calls[g->edges[i].callee] += g->edges[i].calls;
    uint64_t sum = 0;
    for (size_t k = 0; k < g->nfns; k++)
        sum += calls[k];
    fprintf(out, "# callgrind format\nversion: 1\ncreator: instr-report (count mode)\ncmd: %s\n"
                 "positions: line\nevent: Calls : Calls (exact, count mode; no time)\nevents: Calls\n"
                 "summary: %" PRIu64 "\n",
            g->program ? g->program : "", sum);
    for (size_t k = 0; k < g->nfns; k++) {
        const struct instr_count_fn *f = &g->fns[k];
        fprintf(out, "\nfl=%s\n", f->file && f->file[0] ? f->file : "???");
        count_name(out, "fn", g, k, named);
        fprintf(out, "%" PRIu64 " %" PRIu64 "\n", f->line, calls[k]);
        for (size_t j = first[k]; j < first[k + 1]; j++) {
            const struct instr_count_edge *e = &g->edges[by_caller[j]];
            if (!e->calls)
                continue;
            const struct instr_count_fn *c = &g->fns[e->callee];
            fprintf(out, "cfl=%s\n", c->file && c->file[0] ? c->file : "???");
            count_name(out, "cfn", g, e->callee, named);
            fprintf(out, "calls=%" PRIu64 " %" PRIu64 "\n%" PRIu64 " %" PRIu64 "\n", e->calls, c->line, f->line,
                    e->calls);
        }
    }
    free(named), free(calls), free(first), free(by_caller);
    return ferror(out) ? INSTR_EIO : 0;
}
