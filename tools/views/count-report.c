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
 * calls>": its entries minus the calls the counted edges into it make. */
#include "count-report.h"

#include <stdlib.h>
#include <string.h>

#include "arrays.h"
#include "demangle.h"

#define INDIRECT "[indirect call]" /* the callee of the calls through pointers of a caller */

struct cfn {
    char *name;    /* mangled */
    char *display; /* demangled, or the name */
    const char *file;
    uint64_t line;
    uint64_t calls;    /* entries (0: only known as a callee) */
    int instrumented;  /* had an FN_CALLS record */
};

struct cedge {
    size_t caller, callee; /* indices into fns */
    uint64_t calls;
};

struct ctx {
    struct cfn *fns;
    size_t nfns, capf;
    struct cedge *edges;
    size_t nedges, cape;
};

int instr_dump_is_counted(const struct instr_dump *d)
{
    return (d->hdr.flags & INSTR_DUMP_COUNTS) != 0;
}

/* The function named name (mangled), created if new; (size_t)-1 if out of memory. */
static size_t fn_index(struct ctx *x, const char *name, const char *demangled)
{
    for (size_t i = 0; i < x->nfns; i++)
        if (!strcmp(x->fns[i].name, name))
            return i;
    if (x->nfns == x->capf) {
        size_t n = x->capf ? 2 * x->capf : 64;
        struct cfn *a = realloc(x->fns, n * sizeof *a);
        if (!a)
            return (size_t)-1;
        x->fns = a;
        x->capf = n;
    }
    struct cfn *f = &x->fns[x->nfns];
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

static int add_edge(struct ctx *x, size_t caller, size_t callee, uint64_t calls)
{
    for (size_t i = 0; i < x->nedges; i++)
        if (x->edges[i].caller == caller && x->edges[i].callee == callee) {
            x->edges[i].calls += calls;
            return 0;
        }
    struct cedge *a = instr_grow(x->edges, &x->cape, x->nedges + 1, sizeof *a, 64);
    if (!a)
        return INSTR_ENOMEM;
    x->edges = a;
    x->edges[x->nedges++] = (struct cedge){caller, callee, calls};
    return 0;
}

static int gather(struct ctx *x, const struct instr_dump *d)
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
        size_t b = fn_index(x, *s->callee ? s->callee : INDIRECT, NULL);
        if (a == (size_t)-1 || b == (size_t)-1 || add_edge(x, a, b, s->calls))
            return INSTR_ENOMEM;
    }
    return 0;
}

static struct cfn *sort_fns;

static int by_calls(const void *pa, const void *pb)
{
    const struct cfn *a = &sort_fns[*(const size_t *)pa], *b = &sort_fns[*(const size_t *)pb];
    if (a->calls != b->calls)
        return a->calls < b->calls ? 1 : -1;
    return strcmp(a->display, b->display);
}

static struct ctx *sort_ctx;
static int sort_by_callee; /* 1: order edges by callee name, else by caller */

static int edge_order(const void *pa, const void *pb)
{
    const struct cedge *a = pa, *b = pb;
    if (a->calls != b->calls)
        return a->calls < b->calls ? 1 : -1;
    size_t ka = sort_by_callee ? a->callee : a->caller, kb = sort_by_callee ? b->callee : b->caller;
    return strcmp(sort_ctx->fns[ka].display, sort_ctx->fns[kb].display);
}

/* The calls into k that no counted edge explains. */
static uint64_t from_uninstrumented(const struct ctx *x, size_t k)
{
    uint64_t in = 0;
    for (size_t i = 0; i < x->nedges; i++)
        if (x->edges[i].callee == k)
            in += x->edges[i].calls;
    return x->fns[k].calls > in ? x->fns[k].calls - in : 0;
}

/* The edges into (callers) or out of (callees) k, most calls first. */
static void print_edges(FILE *out, struct ctx *x, size_t k, int callees, const char *indent)
{
    struct cedge *sel = malloc((x->nedges + 1) * sizeof *sel);
    size_t n = 0;
    if (!sel)
        return;
    for (size_t i = 0; i < x->nedges; i++)
        if ((callees ? x->edges[i].caller : x->edges[i].callee) == k)
            sel[n++] = x->edges[i];
    sort_ctx = x;
    sort_by_callee = callees;
    qsort(sel, n, sizeof *sel, edge_order);
    uint64_t unk = callees ? 0 : from_uninstrumented(x, k);
    if (unk)
        fprintf(out, "%s%12llu  <uninstrumented code or indirect calls>\n", indent, (unsigned long long)unk);
    for (size_t i = 0; i < n; i++)
        fprintf(out, "%s%12llu  %s%s\n", indent, (unsigned long long)sel[i].calls,
                x->fns[callees ? sel[i].callee : sel[i].caller].display,
                callees && !x->fns[sel[i].callee].instrumented && strcmp(x->fns[sel[i].callee].name, INDIRECT)
                    ? "  (not instrumented)"
                    : "");
    if (!n && !unk)
        fprintf(out, "%s%12s  (none)\n", indent, "");
    free(sel);
}

static void header(FILE *out, const struct instr_dump *dumps, size_t nd, const struct ctx *x)
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
                dumps[i].hdr.flags & INSTR_DUMP_COMPLETE ? "" : ", did not finish: no counts");
    fprintf(out, "Mode:      count (plugin mode=count): exact calls and call edges, all threads;\n"
                 "           no time was recorded, so there are no time columns\n");
    fprintf(out, "Functions: %zu counted, %llu calls; %llu calls at counted call sites\n\n", counted,
            (unsigned long long)calls, (unsigned long long)edges);
}

int instr_count_report(const struct instr_dump *dumps, size_t nd, const char *view, const char *func,
                       size_t limit, FILE *out, const char **why)
{
    struct ctx x = {0};
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
        } else {
            header(out, dumps, nd, &x);
            fprintf(out, "%s of %s (%llu calls)\n%12s  %s\n", callers ? "Callers" : "Callees",
                    x.fns[k].display, (unsigned long long)x.fns[k].calls, "Calls",
                    callers ? "Caller" : "Callee");
            print_edges(out, &x, k, callees, "");
        }
    } else if (!rc) {
        header(out, dumps, nd, &x);
        if (limit && limit < n)
            n = limit;
        fprintf(out, "%12s  %s\n", "Calls", "Function");
        for (size_t j = 0; j < n; j++) {
            const struct cfn *f = &x.fns[order[j]];
            fprintf(out, "%12llu  %s  (%s:%llu)\n", (unsigned long long)f->calls, f->display, f->file,
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
    for (size_t i = 0; i < x.nfns; i++) {
        free(x.fns[i].name);
        free(x.fns[i].display);
    }
    free(x.fns);
    free(x.edges);
    free(order);
    return rc;
}
