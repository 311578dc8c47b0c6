/* count-report.c - count-mode dumps: calls and call edges, no time.
 *
 * A count dump has no events, only FN_CALLS (entries of a function) and
 * SITE_CALLS (calls made at one call site) records.  Functions are keyed by
 * mangled name, so several dumps (a program's processes) add up; call
 * sites of one caller naming the same callee make one edge.  Calls into a
 * function that no counted direct call names (from code that was not
 * instrumented: the C library calling main, a thread start, a callback
 * from qsort; or through a pointer, counted at the caller as a call to
 * "[indirect call]") show as the caller "<uninstrumented code or indirect
 * calls>": its entries minus the calls the counted edges into it make.
 * GCC's clones of a function (foo.constprop.0, foo.cold) are folded into
 * its row, callers and callees alike, as the time report folds them,
 * unless --clones=split.
 *
 * Sampling dumps given beside them (instr-sample of the count-mode run)
 * give a Self % column: a count-mode build runs the code the plain build
 * runs, a counter increment at each entry (1.03-1.06x plain on Lua), so
 * its samples are where the time goes without instr.  Each function's
 * exclusive samples, matched by name with GCC clone suffixes folded;
 * kernel and runtime frames left out (self-pct.h). */
#include "count-report.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "arrays.h"
#include "demangle.h"
#include "emit.h"
#include "report.h"
#include "sample-report.h"
#include "self-pct.h"

int instr_dump_is_counted(const struct instr_dump *d)
{
    return (d->hdr.flags & INSTR_DUMP_COUNTS) != 0;
}

/* The function named name (mangled), created if new; (size_t)-1 if out of memory.
 * A clone's names are its source function's unless x->clones_split. */
static size_t fn_index(struct instr_count_graph *x, const char *name, const char *demangled)
{
    char origin[512], dorigin[1024];
    if (!x->clones_split) {
        instr_name_origin(name, origin, sizeof origin);
        name = origin;
        if (demangled && *demangled) {
            instr_name_origin(demangled, dorigin, sizeof dorigin);
            demangled = dorigin;
        }
    }
    for (size_t i = 0; i < x->nfns; i++)
        if (!strcmp(x->fns[i].name, name))
            return i;
    if (x->nfns == x->capf) {
        size_t n = x->capf ? 2 * x->capf : 64;
        struct instr_count_fn *a = realloc(x->fns, n * sizeof *a);
        if (!a)
            return (size_t)-1;
        x->fns = a;
        x->capf = n;
    }
    struct instr_count_fn *f = &x->fns[x->nfns];
    memset(f, 0, sizeof *f);
    f->name = strdup(name);
    f->display = demangled && *demangled ? strdup(demangled) : instr_demangle(name);
    f->file = "";
    if (!f->name || !f->display) {
        free(f->name);
        free(f->display);
        return (size_t)-1;
    }
    return x->nfns++;
}

static int add_edge(struct instr_count_graph *x, size_t caller, size_t callee, uint64_t calls)
{
    x->fns[callee].counted_in += calls;
    for (size_t i = 0; i < x->nedges; i++)
        if (x->edges[i].caller == caller && x->edges[i].callee == callee) {
            x->edges[i].calls += calls;
            return 0;
        }
    struct instr_count_edge *a = instr_grow(x->edges, &x->cape, x->nedges + 1, sizeof *a, 64);
    if (!a)
        return INSTR_ENOMEM;
    x->edges = a;
    x->edges[x->nedges++] = (struct instr_count_edge){caller, callee, calls};
    return 0;
}

static int gather(struct instr_count_graph *x, const struct instr_dump *d)
{
    for (size_t i = 0; i < d->nfn_calls; i++) {
        const struct instr_function *f = instr_dump_function(d, d->fn_calls[i].fn);
        if (!f)
            continue;
        size_t k = fn_index(x, f->name, f->demangled);
        if (k == (size_t)-1)
            return INSTR_ENOMEM;
        x->fns[k].calls += d->fn_calls[i].calls;
        x->fns[k].instrumented = 1;
        x->fns[k].file = f->file;
        x->fns[k].line = f->line;
    }
    for (size_t i = 0; i < d->nsite_calls; i++) {
        const struct instr_site_calls *s = &d->site_calls[i];
        const struct instr_function *f = instr_dump_function(d, s->caller);
        if (!f)
            continue;
        size_t a = fn_index(x, f->name, f->demangled);
        size_t b = fn_index(x, *s->callee ? s->callee : INSTR_COUNT_INDIRECT_NAME, NULL);
        if (a == (size_t)-1 || b == (size_t)-1 || add_edge(x, a, b, s->calls))
            return INSTR_ENOMEM;
    }
    return 0;
}

int instr_count_graph_build(struct instr_count_graph *g, const struct instr_dump *dumps, size_t nd, int clones_split)
{
    memset(g, 0, sizeof *g);
    g->clones_split = clones_split;
    int rc = 0;
    for (size_t i = 0; i < nd && !rc; i++)
        if (instr_dump_is_counted(&dumps[i])) {
            if (!g->program)
                g->program = dumps[i].hdr.exe_path;
            rc = gather(g, &dumps[i]);
        }
    if (rc)
        instr_count_graph_free(g);
    return rc;
}

int instr_count_export(const struct instr_dump *dumps, size_t nd, int clones_split,
                       int (*write)(FILE *out, const struct instr_count_graph *g), FILE *out)
{
    struct instr_count_graph g;
    int rc = instr_count_graph_build(&g, dumps, nd, clones_split);
    if (rc)
        return rc;
    rc = write(out, &g);
    instr_count_graph_free(&g);
    return rc;
}

/* Each counted function's exclusive samples in sampling dump d. */
static int gather_samples(struct instr_count_graph *x, const struct instr_dump *d, char *err, size_t errlen)
{
    struct instr_sprofile p;
    int rc = instr_sprofile_build(&p, d, 1, 0, err, errlen);
    if (rc < 0)
        return rc;
    rc = 0;
    /* Each counted function's name with its clone suffixes folded, once. */
    char a[4096], **origin = calloc(x->nfns + 1, sizeof *origin);
    for (size_t k = 0; origin && k < x->nfns && rc == 0; k++) {
        if (!x->fns[k].instrumented)
            continue;
        instr_name_origin(x->fns[k].display, a, sizeof a);
        if (!(origin[k] = strdup(a)))
            rc = INSTR_ENOMEM;
    }
    const struct instr_srow *fr = p.rows[INSTR_SVIEW_FUNCTIONS];
    for (size_t r = 0; origin && rc == 0 && r < p.nrows[INSTR_SVIEW_FUNCTIONS]; r++) {
        if (!fr[r].excl || instr_self_frame_kind(fr[r].name, fr[r].module))
            continue;
        x->samples += fr[r].excl;
        instr_name_origin(fr[r].name, a, sizeof a);
        for (size_t k = 0; k < x->nfns; k++)
            if (origin[k] && !strcmp(a, origin[k])) {
                x->fns[k].samples += fr[r].excl;
                x->matched += fr[r].excl;
                break;
            }
    }
    for (size_t k = 0; origin && k < x->nfns; k++)
        free(origin[k]);
    if (!origin)
        rc = INSTR_ENOMEM;
    free(origin);
    x->sampled++;
    instr_sprofile_free(&p);
    return rc;
}

static double self_pct(const struct instr_count_graph *x, const struct instr_count_fn *f)
{
    return x->samples ? 100.0 * (double)f->samples / (double)x->samples : 0;
}

static struct instr_count_fn *sort_fns;

static int by_calls(const void *pa, const void *pb)
{
    const struct instr_count_fn *a = &sort_fns[*(const size_t *)pa], *b = &sort_fns[*(const size_t *)pb];
    if (a->calls != b->calls)
        return a->calls < b->calls ? 1 : -1;
    return strcmp(a->display, b->display);
}

static struct instr_count_graph *sort_ctx;
static int sort_by_callee; /* 1: order edges by callee name, else by caller */

static int edge_order(const void *pa, const void *pb)
{
    const struct instr_count_edge *a = pa, *b = pb;
    if (a->calls != b->calls)
        return a->calls < b->calls ? 1 : -1;
    size_t ka = sort_by_callee ? a->callee : a->caller, kb = sort_by_callee ? b->callee : b->caller;
    return strcmp(sort_ctx->fns[ka].display, sort_ctx->fns[kb].display);
}

/* The calls into k that no counted edge explains. */
uint64_t instr_count_uncounted_in(const struct instr_count_graph *x, size_t k)
{
    return x->fns[k].calls > x->fns[k].counted_in ? x->fns[k].calls - x->fns[k].counted_in : 0;
}

/* The edges into (callers) or out of (callees) k, most calls first
 * (malloc'd; NULL: no memory). */
static struct instr_count_edge *edges_of(struct instr_count_graph *x, size_t k, int callees, size_t *nout)
{
    struct instr_count_edge *sel = malloc((x->nedges + 1) * sizeof *sel);
    size_t n = 0;
    if (!sel)
        return NULL;
    for (size_t i = 0; i < x->nedges; i++)
        if ((callees ? x->edges[i].caller : x->edges[i].callee) == k)
            sel[n++] = x->edges[i];
    sort_ctx = x;
    sort_by_callee = callees;
    qsort(sel, n, sizeof *sel, edge_order);
    *nout = n;
    return sel;
}

/* Whether the callee of a counted edge was instrumented (an indirect
 * call's is unknown: counted as such). */
static int callee_instrumented(const struct instr_count_graph *x, size_t k)
{
    return x->fns[k].instrumented || !strcmp(x->fns[k].name, INSTR_COUNT_INDIRECT_NAME);
}

/* The edges into (callers) or out of (callees) k, most calls first. */
static void print_edges(FILE *out, struct instr_count_graph *x, size_t k, int callees, const char *indent)
{
    size_t n;
    struct instr_count_edge *sel = edges_of(x, k, callees, &n);
    if (!sel)
        return;
    uint64_t unk = callees ? 0 : instr_count_uncounted_in(x, k);
    if (unk)
        fprintf(out, "%s%12llu  <uninstrumented code or indirect calls>\n", indent, (unsigned long long)unk);
    for (size_t i = 0; i < n; i++)
        fprintf(out, "%s%12llu  %s%s\n", indent, (unsigned long long)sel[i].calls,
                x->fns[callees ? sel[i].callee : sel[i].caller].display,
                callees && !callee_instrumented(x, sel[i].callee) ? "  (not instrumented)" : "");
    if (!n && !unk)
        fprintf(out, "%s%12s  (none)\n", indent, "");
    free(sel);
}

static void header(FILE *out, const struct instr_dump *dumps, size_t nd, const struct instr_count_graph *x)
{
    uint64_t calls = 0, edges = 0;
    size_t counted = 0;
    for (size_t i = 0; i < x->nfns; i++)
        if (x->fns[i].instrumented) {
            calls += x->fns[i].calls;
            counted++;
        }
    for (size_t i = 0; i < x->nedges; i++)
        edges += x->edges[i].calls;
    for (size_t i = 0; i < nd; i++)
        fprintf(out, "Dump:      %s (pid %llu%s)\n", dumps[i].path, (unsigned long long)dumps[i].hdr.pid,
                dumps[i].hdr.flags & INSTR_DUMP_SAMPLED    ? ", samples"
                : dumps[i].hdr.flags & INSTR_DUMP_COMPLETE ? ""
                                                           : ", did not finish: no counts");
    fprintf(out, "Mode:      count (plugin mode=count): exact calls and call edges, all threads;\n"
                 "           no time was recorded, so there are no time columns\n");
    /* What the runtime said (runtime/log.c): a setting it did not take. */
    for (size_t i = 0; i < nd; i++) {
        size_t pos = 0, len;
        for (const char *q; (q = instr_dump_note(&dumps[i], &pos, &len));)
            fprintf(out, "Note:      %s: the runtime said: %.*s\n", dumps[i].path, (int)len, q);
        if (dumps[i].hdr.notes_dropped)
            fprintf(out, "Note:      %s: the runtime said %u more line(s) than its dump keeps\n", dumps[i].path,
                    dumps[i].hdr.notes_dropped);
    }
    fprintf(out, "Functions: %zu counted, %llu calls; %llu calls at counted call sites\n", counted,
            (unsigned long long)calls, (unsigned long long)edges);
    if (x->samples) {
        double top = 0;
        for (size_t i = 0; i < x->nfns; i++)
            if (self_pct(x, &x->fns[i]) > top)
                top = self_pct(x, &x->fns[i]);
        double n = (double)x->samples, ci = 100.0 * 1.96 * sqrt(top / 100 * (1 - top / 100) / n);
        fprintf(out, "Self %%:    %llu samples of the program's own code (kernel and runtime left out), "
                     "%.1f %% in counted functions, the rest in uninstrumented code; largest share +-%.1f points "
                     "(95 %%)\n",
                (unsigned long long)x->samples, 100.0 * (double)x->matched / n, ci);
    } else if (x->sampled) {
        fprintf(out, "Self %%:    no samples of the program's own code in the sampling dump\n");
    }
    fputc('\n', out);
}

/* ---- JSON and CSV ---------------------------------------------------------- */

/* A function's edges as a JSON array: "callers" (with the uninstrumented
 * rest first) or "callees". */
static void json_edges(struct instr_json *j, struct instr_count_graph *x, size_t k, int callees)
{
    size_t n = 0;
    struct instr_count_edge *sel = edges_of(x, k, callees, &n);
    instr_json_open(j, callees ? "callees" : "callers", '[', INSTR_JSON_LINES);
    uint64_t unk = callees ? 0 : instr_count_uncounted_in(x, k);
    if (unk) {
        instr_json_open(j, NULL, '{', INSTR_JSON_INLINE);
        instr_json_key_null(j, "name");
        instr_json_key_str(j, "what", "uninstrumented code or indirect calls");
        instr_json_key_u64(j, "calls", unk);
        instr_json_close(j);
    }
    for (size_t i = 0; sel && i < n; i++) {
        size_t o = callees ? sel[i].callee : sel[i].caller;
        instr_json_open(j, NULL, '{', INSTR_JSON_INLINE);
        instr_json_key_str(j, "name", x->fns[o].display);
        instr_json_key_str(j, "mangled", x->fns[o].name);
        instr_json_key_u64(j, "calls", sel[i].calls);
        if (callees)
            instr_json_key_bool(j, "instrumented", callee_instrumented(x, o));
        instr_json_close(j);
    }
    instr_json_close(j);
    free(sel);
}

static void json_function(struct instr_json *j, struct instr_count_graph *x, size_t k, int callers, int callees)
{
    const struct instr_count_fn *f = &x->fns[k];
    instr_json_open(j, NULL, '{', INSTR_JSON_LINES);
    instr_json_key_str(j, "name", f->display);
    instr_json_key_str(j, "mangled", f->name);
    if (f->file)
        instr_json_key_str(j, "file", f->file);
    else
        instr_json_key_null(j, "file");
    instr_json_key_u64(j, "line", f->line);
    instr_json_key_u64(j, "calls", f->calls);
    if (x->samples) {
        instr_json_key_num(j, "self_pct", "%.4f", self_pct(x, f));
        instr_json_key_u64(j, "self_samples", f->samples);
    }
    if (callers)
        json_edges(j, x, k, 0);
    if (callees)
        json_edges(j, x, k, 1);
    instr_json_close(j);
}

/* The JSON document: the dumps, then the functions most calls first (view
 * functions), or the one function of a callers/callees view. */
static void write_json(FILE *out, const struct instr_dump *dumps, size_t nd, struct instr_count_graph *x, const size_t *order,
                       size_t n, size_t one, int callers, int callees)
{
    struct instr_json j;
    instr_json_init(&j, out);
    instr_json_open(&j, NULL, '{', INSTR_JSON_LINES);
    instr_json_key_str(&j, "mode", "count");
    instr_json_key_str(&j, "view", callers ? "callers" : callees ? "callees" : "functions");
    instr_json_open(&j, "dumps", '[', INSTR_JSON_LINES);
    for (size_t i = 0; i < nd; i++) {
        const struct instr_dump *d = &dumps[i];
        instr_json_open(&j, NULL, '{', INSTR_JSON_INLINE);
        instr_json_key_str(&j, "path", d->path);
        instr_json_key_u64(&j, "pid", d->hdr.pid);
        instr_json_key_str(&j, "kind", d->hdr.flags & INSTR_DUMP_SAMPLED ? "samples" : "counts");
        instr_json_key_bool(&j, "complete", d->hdr.flags & INSTR_DUMP_COMPLETE);
        instr_json_open(&j, "runtime_said", '[', INSTR_JSON_INLINE);
        size_t pos = 0, len;
        for (const char *q; (q = instr_dump_note(d, &pos, &len));) {
            char line[sizeof d->hdr.notes + 1];
            memcpy(line, q, len);
            line[len] = 0;
            instr_json_key_str(&j, NULL, line);
        }
        instr_json_close(&j);
        instr_json_close(&j);
    }
    instr_json_close(&j);
    if (x->samples) {
        instr_json_key_u64(&j, "samples", x->samples);
        instr_json_key_u64(&j, "samples_matched", x->matched);
    } else {
        instr_json_key_null(&j, "samples");
    }
    instr_json_open(&j, "functions", '[', INSTR_JSON_LINES);
    if (callers || callees)
        json_function(&j, x, one, callers, callees);
    else
        for (size_t i = 0; i < n; i++)
            json_function(&j, x, order[i], 1, 1);
    instr_json_close(&j);
    instr_json_close(&j);
    fputc('\n', out);
}

/* CSV: one row per function (view functions), or per edge of the one
 * function of a callers/callees view. */
static void write_csv(FILE *out, struct instr_count_graph *x, const size_t *order, size_t n, size_t one, int callers, int callees)
{
    if (!callers && !callees) {
        fprintf(out, "calls,%sfunction,mangled,file,line\n", x->samples ? "self_pct," : "");
        for (size_t i = 0; i < n; i++) {
            const struct instr_count_fn *f = &x->fns[order[i]];
            fprintf(out, "%llu,", (unsigned long long)f->calls);
            if (x->samples)
                fprintf(out, "%.4f,", self_pct(x, f));
            instr_csv_field(out, f->display);
            fputc(',', out);
            instr_csv_field(out, f->name);
            fputc(',', out);
            instr_csv_field(out, f->file ? f->file : "");
            fprintf(out, ",%llu\n", (unsigned long long)f->line);
        }
        return;
    }
    fprintf(out, "calls,%s\n", callers ? "caller" : "callee,instrumented");
    uint64_t unk = callers ? instr_count_uncounted_in(x, one) : 0;
    if (unk)
        fprintf(out, "%llu,<uninstrumented code or indirect calls>\n", (unsigned long long)unk);
    size_t ne = 0;
    struct instr_count_edge *sel = edges_of(x, one, callees, &ne);
    for (size_t i = 0; sel && i < ne; i++) {
        size_t o = callees ? sel[i].callee : sel[i].caller;
        fprintf(out, "%llu,", (unsigned long long)sel[i].calls);
        instr_csv_field(out, x->fns[o].display);
        fputs(!callees ? "\n" : callee_instrumented(x, o) ? ",true\n" : ",false\n", out);
    }
    free(sel);
}

void instr_count_graph_free(struct instr_count_graph *x)
{
    for (size_t i = 0; i < x->nfns; i++) {
        free(x->fns[i].name);
        free(x->fns[i].display);
    }
    free(x->fns);
    free(x->edges);
}

/* ---- --diff of two count dumps ---------------------------------------------- */

struct drow {
    const struct instr_count_fn *a, *b; /* NULL: not counted in that input */
    int64_t change;
};

static int by_change(const void *pa, const void *pb)
{
    const struct drow *a = pa, *b = pb;
    uint64_t ca = (uint64_t)(a->change < 0 ? -a->change : a->change);
    uint64_t cb = (uint64_t)(b->change < 0 ? -b->change : b->change);
    if (ca != cb)
        return ca < cb ? 1 : -1;
    return strcmp((a->a ? a->a : a->b)->display, (b->a ? b->a : b->b)->display);
}

int instr_count_diff(const struct instr_dump *a, const struct instr_dump *b, const char *format, int clones_split,
                     FILE *out, const char **why)
{
    struct instr_count_graph x[2] = {{0}, {0}};
    x[0].clones_split = x[1].clones_split = clones_split;
    *why = NULL;
    if (!instr_dump_is_counted(a) || !instr_dump_is_counted(b)) {
        *why = "--diff of a count-mode dump needs another count-mode dump (calls against calls)";
        return INSTR_EARG;
    }
    int rc = gather(&x[0], a);
    if (!rc)
        rc = gather(&x[1], b);
    struct drow *rows = rc ? NULL : malloc((x[0].nfns + x[1].nfns + 1) * sizeof *rows);
    size_t n = 0, same = 0;
    if (!rc && !rows)
        rc = INSTR_ENOMEM;
    /* Functions by mangled name: A's, then those only B counted. */
    for (size_t i = 0; !rc && i < x[0].nfns; i++) {
        if (!x[0].fns[i].instrumented)
            continue;
        const struct instr_count_fn *fb = NULL;
        for (size_t k = 0; k < x[1].nfns && !fb; k++)
            if (x[1].fns[k].instrumented && !strcmp(x[1].fns[k].name, x[0].fns[i].name))
                fb = &x[1].fns[k];
        int64_t change = (int64_t)(fb ? fb->calls : 0) - (int64_t)x[0].fns[i].calls;
        if (change || !fb)
            rows[n++] = (struct drow){&x[0].fns[i], fb, change};
        else
            same++;
    }
    for (size_t k = 0; !rc && k < x[1].nfns; k++) {
        if (!x[1].fns[k].instrumented)
            continue;
        int found = 0;
        for (size_t i = 0; i < x[0].nfns && !found; i++)
            found = x[0].fns[i].instrumented && !strcmp(x[1].fns[k].name, x[0].fns[i].name);
        if (!found)
            rows[n++] = (struct drow){NULL, &x[1].fns[k], (int64_t)x[1].fns[k].calls};
    }
    if (!rc) {
        qsort(rows, n, sizeof *rows, by_change);
        int json = !strcmp(format, "json"), csv = !strcmp(format, "csv");
        if (json) {
            struct instr_json j;
            instr_json_init(&j, out);
            instr_json_open(&j, NULL, '{', INSTR_JSON_LINES);
            instr_json_open(&j, "diff", '{', INSTR_JSON_INLINE);
            instr_json_key_str(&j, "mode", "count");
            instr_json_key_str(&j, "a", a->path);
            instr_json_key_str(&j, "b", b->path);
            instr_json_key_u64(&j, "unchanged", same);
            instr_json_close(&j);
            instr_json_open(&j, "functions", '[', INSTR_JSON_LINES);
            for (size_t i = 0; i < n; i++) {
                const struct instr_count_fn *f = rows[i].a ? rows[i].a : rows[i].b;
                instr_json_open(&j, NULL, '{', INSTR_JSON_INLINE);
                instr_json_key_str(&j, "name", f->display);
                instr_json_key_str(&j, "mangled", f->name);
                instr_json_key_bool(&j, "in_a", rows[i].a != NULL);
                instr_json_key_bool(&j, "in_b", rows[i].b != NULL);
                instr_json_key_u64(&j, "calls_a", rows[i].a ? rows[i].a->calls : 0);
                instr_json_key_u64(&j, "calls_b", rows[i].b ? rows[i].b->calls : 0);
                instr_json_key_num(&j, "calls_change", "%.0f", (double)rows[i].change);
                instr_json_close(&j);
            }
            instr_json_close(&j);
            instr_json_close(&j);
            fputc('\n', out);
        } else if (csv) {
            fprintf(out, "calls_a,calls_b,calls_change,function,mangled\n");
            for (size_t i = 0; i < n; i++) {
                const struct instr_count_fn *f = rows[i].a ? rows[i].a : rows[i].b;
                fprintf(out, "%llu,%llu,%lld,", (unsigned long long)(rows[i].a ? rows[i].a->calls : 0),
                        (unsigned long long)(rows[i].b ? rows[i].b->calls : 0), (long long)rows[i].change);
                instr_csv_field(out, f->display);
                fputc(',', out);
                instr_csv_field(out, f->name);
                fputc('\n', out);
            }
        } else {
            fprintf(out, "Diff of calls (count-mode dumps; functions matched by mangled name)\n"
                         "A:         %s (pid %llu)\nB:         %s (pid %llu)\n",
                    a->path, (unsigned long long)a->hdr.pid, b->path, (unsigned long long)b->hdr.pid);
            fprintf(out, "Matched:   %zu function(s) with the same calls, %zu changed or in one only\n\n", same, n);
            fprintf(out, "%12s  %12s  %12s  %s\n", "Calls A", "Calls B", "Change", "Function");
            for (size_t i = 0; i < n; i++) {
                const struct instr_count_fn *f = rows[i].a ? rows[i].a : rows[i].b;
                char ca[24] = "-", cb[24] = "-";
                if (rows[i].a)
                    snprintf(ca, sizeof ca, "%llu", (unsigned long long)rows[i].a->calls);
                if (rows[i].b)
                    snprintf(cb, sizeof cb, "%llu", (unsigned long long)rows[i].b->calls);
                fprintf(out, "%12s  %12s  %+12lld  %s\n", ca, cb, (long long)rows[i].change, f->display);
            }
        }
    }
    free(rows);
    instr_count_graph_free(&x[0]);
    instr_count_graph_free(&x[1]);
    return rc;
}

int instr_count_report(const struct instr_dump *dumps, size_t nd, const char *view, const char *func,
                       size_t limit, const char *format, int clones_split, FILE *out, const char **why)
{
    int json = !strcmp(format, "json"), csv = !strcmp(format, "csv");
    struct instr_count_graph x = {.clones_split = clones_split};
    int rc = 0;
    *why = NULL;
    int callers = !strcmp(view, "callers"), callees = !strcmp(view, "callees");
    if (!callers && !callees && strcmp(view, "functions")) {
        *why = "a count-mode dump has calls only: its views are functions, callers and callees";
        return INSTR_EARG;
    }
    for (size_t i = 0; i < nd && !rc; i++)
        if (instr_dump_is_counted(&dumps[i]))
            rc = gather(&x, &dumps[i]);
    char err[512] = "";
    for (size_t i = 0; i < nd && !rc; i++)
        if (dumps[i].hdr.flags & INSTR_DUMP_SAMPLED)
            rc = gather_samples(&x, &dumps[i], err, sizeof err);
    if (rc < 0 && err[0])
        *why = "the sampling dump given beside the count dumps cannot be read";
    size_t *order = rc ? NULL : malloc((x.nfns + 1) * sizeof *order);
    if (!rc && !order)
        rc = INSTR_ENOMEM;
    size_t n = 0;
    if (!rc) {
        for (size_t i = 0; i < x.nfns; i++)
            if (x.fns[i].instrumented)
                order[n++] = i;
        sort_fns = x.fns;
        qsort(order, n, sizeof *order, by_calls);
    }
    if (!rc && (callers || callees)) {
        size_t k = (size_t)-1;
        for (size_t i = 0; i < x.nfns && k == (size_t)-1; i++)
            if (func && (!strcmp(x.fns[i].display, func) || !strcmp(x.fns[i].name, func)))
                k = i;
        if (k == (size_t)-1) {
            *why = "no counted function has that name";
            rc = INSTR_EARG;
        } else if (json || csv) {
            if (json)
                write_json(out, dumps, nd, &x, order, n, k, callers, callees);
            else
                write_csv(out, &x, order, n, k, callers, callees);
        } else {
            header(out, dumps, nd, &x);
            fprintf(out, "%s of %s (%llu calls)\n%12s  %s\n", callers ? "Callers" : "Callees",
                    x.fns[k].display, (unsigned long long)x.fns[k].calls, "Calls",
                    callers ? "Caller" : "Callee");
            print_edges(out, &x, k, callees, "");
        }
    } else if (!rc && (json || csv)) {
        if (limit && limit < n)
            n = limit;
        if (json)
            write_json(out, dumps, nd, &x, order, n, 0, 0, 0);
        else
            write_csv(out, &x, order, n, 0, 0, 0);
    } else if (!rc) {
        header(out, dumps, nd, &x);
        if (limit && limit < n)
            n = limit;
        if (x.samples)
            fprintf(out, "%12s  %6s  %s\n", "Calls", "Self %", "Function");
        else
            fprintf(out, "%12s  %s\n", "Calls", "Function");
        for (size_t j = 0; j < n; j++) {
            const struct instr_count_fn *f = &x.fns[order[j]];
            char pct[32] = "";
            if (x.samples)
                snprintf(pct, sizeof pct, "%6.2f  ", self_pct(&x, f));
            fprintf(out, "%12llu  %s%s  (%s:%llu)\n", (unsigned long long)f->calls, pct, f->display, f->file,
                    (unsigned long long)f->line);
        }
        fprintf(out, "\nCall graph (calls per edge; callers above each function, callees below)\n");
        for (size_t j = 0; j < n; j++) {
            size_t k = order[j];
            fprintf(out, "\n%s  (%llu calls)\n  callers:\n", x.fns[k].display,
                    (unsigned long long)x.fns[k].calls);
            print_edges(out, &x, k, 0, "  ");
            fprintf(out, "  callees:\n");
            print_edges(out, &x, k, 1, "  ");
        }
    }
    instr_count_graph_free(&x);
    free(order);
    return rc;
}
