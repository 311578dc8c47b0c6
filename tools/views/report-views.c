/* report-views.c - the call-tree, callers and callees views as text and
 * CSV (the data comes from view-calltree.c and view-callers.c). */
#define _GNU_SOURCE /* asprintf */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"
#include "views.h"
#include "writers.h"

/* ---- text and CSV ------------------------------------------------------------ */

/* Cells in CSV order (the CPU values last, after the function: added
 * later); text shows them in text_order, the CPU values only when known. */
#define NCOLS 15
#define COL_MODULE 9
#define COL_FUNCTION 10
#define COL_CPU 11 /* CPU Incl, CPU Excl, CI%, CE% */
static const char *const titles[NCOLS] = {"Calls",    "Elapsed Incl", "Elapsed Excl", "App Incl", "App Excl",
                                          "EI%",      "EE%",          "AI%",          "AE%",      "Module",
                                          "Function", "CPU Incl",     "CPU Excl",     "CI%",      "CE%"};
static const int text_order[NCOLS] = {0, 1, 2, 3, 4, 11, 12, 5, 6, 7, 8, 13, 14, COL_MODULE, COL_FUNCTION};

/* What a line is: a call-tree path, a caller or callee of the function, or
 * the function itself (marked '*' in text). */
static const char *const role_names[] = {"path", "caller", "callee", "function"};
enum role { ROLE_PATH, ROLE_CALLER, ROLE_CALLEE, ROLE_FUNCTION };

struct line_info {
    unsigned depth; /* indentation level */
    enum role role;
};

struct lines {
    char **cells; /* n x NCOLS */
    struct line_info *info;
    size_t n, cap;
    int no_app; /* Application values unavailable: n/a */
    int cpu_known; /* CPU values known (every dump ran cpuclock): else not in text, empty in CSV */
};

/* A line's CPU values: ticks in v (ci, ce), ns and percents. */
struct line_cpu {
    const double *ns, *pct;
};

static int add_line(struct lines *l, const struct instr_values *v, const double *ns, const double *pct,
                    struct line_cpu cpu, enum instr_units u, const char *module, const char *name, unsigned depth,
                    enum role role)
{
    if (l->n == l->cap) {
        size_t nc = l->cap ? l->cap * 2 : 64;
        char **c = realloc(l->cells, nc * NCOLS * sizeof *c);
        if (!c)
            return INSTR_ENOMEM;
        l->cells = c;
        struct line_info *in = realloc(l->info, nc * sizeof *in);
        if (!in)
            return INSTR_ENOMEM;
        l->info = in;
        l->cap = nc;
    }
    l->info[l->n] = (struct line_info){depth, role};
    char **c = &l->cells[l->n++ * NCOLS];
    char buf[64];
    const uint64_t t[4] = {v->ei, v->ee, v->ai, v->ae};
    memset(c, 0, NCOLS * sizeof *c);
    if (asprintf(&c[0], "%" PRIu64, v->calls) < 0)
        c[0] = NULL;
    for (int i = 0; i < 4; i++) {
        instr_fmt_value(buf, sizeof buf, t[i], ns[i], u);
        c[1 + i] = strdup(i >= 2 && l->no_app ? "n/a" : buf);
        if (i >= 2 && l->no_app)
            c[5 + i] = strdup("n/a");
        else if (asprintf(&c[5 + i], "%.2f", pct[i]) < 0)
            c[5 + i] = NULL;
    }
    c[COL_MODULE] = strdup(module && module[0] ? instr_basename(module) : "?");
    c[COL_FUNCTION] = strdup(name);
    const uint64_t ct[2] = {v->ci, v->ce};
    for (int i = 0; i < 2; i++) {
        instr_fmt_value(buf, sizeof buf, ct[i], cpu.ns[i], u);
        c[COL_CPU + i] = strdup(l->cpu_known ? buf : "");
        if (!l->cpu_known)
            c[COL_CPU + 2 + i] = strdup("");
        else if (asprintf(&c[COL_CPU + 2 + i], "%.2f", cpu.pct[i]) < 0)
            c[COL_CPU + 2 + i] = NULL;
    }
    for (int i = 0; i < NCOLS; i++)
        if (!c[i])
            return INSTR_ENOMEM;
    return 0;
}

#define MAX_INDENT 64 /* levels of indentation in the text tree views */

static void print_text(FILE *out, const struct lines *l)
{
    size_t w[NCOLS];
    for (int c = 0; c < NCOLS; c++) {
        w[c] = strlen(titles[c]);
        for (size_t r = 0; r < l->n; r++)
            if (strlen(l->cells[r * NCOLS + c]) > w[c])
                w[c] = strlen(l->cells[r * NCOLS + c]);
    }
    for (size_t r = 0; r <= l->n; r++) {
        for (int k = 0; k < NCOLS - 1; k++) {
            int c = text_order[k];
            if (c >= COL_CPU && !l->cpu_known)
                continue;
            const char *s = r ? l->cells[(r - 1) * NCOLS + c] : titles[c];
            fprintf(out, c == COL_MODULE ? "%-*s  " : "%*s  ", (int)w[c], s);
        }
        if (!r) {
            fprintf(out, "%s\n", titles[COL_FUNCTION]);
            continue;
        }
        const struct line_info *in = &l->info[r - 1];
        /* Deep recursion: indenting every level would make the output
         * grow with the square of the depth (100,000 levels: gigabytes);
         * past MAX_INDENT levels a line says its level instead. */
        if (in->depth > MAX_INDENT)
            fprintf(out, "%*s[%u] ", 2 * MAX_INDENT, "", in->depth);
        else
            fprintf(out, "%*s", 2 * (int)in->depth, "");
        fprintf(out, "%s%s\n", in->role == ROLE_FUNCTION ? "* " : "", l->cells[(r - 1) * NCOLS + COL_FUNCTION]);
    }
}

/* One row per line: role, depth, then the columns of the text table
 * (Application values empty when unavailable). */
static void print_csv(FILE *out, const struct lines *l, enum instr_units u)
{
    const char *un = instr_units_name(u);
    fprintf(out,
            "role,depth,calls,elapsed_inclusive_%s,elapsed_exclusive_%s,application_inclusive_%s,"
            "application_exclusive_%s,elapsed_inclusive_pct,elapsed_exclusive_pct,application_inclusive_pct,"
            "application_exclusive_pct,module,function,cpu_inclusive_%s,cpu_exclusive_%s,cpu_inclusive_pct,"
            "cpu_exclusive_pct\n",
            un, un, un, un, un, un);
    for (size_t r = 0; r < l->n; r++) {
        char *const *c = &l->cells[r * NCOLS];
        fprintf(out, "%s,%u", role_names[l->info[r].role], l->info[r].depth);
        for (int i = 0; i < NCOLS; i++) {
            fputc(',', out);
            if (!(l->no_app && (i == 3 || i == 4 || i == 7 || i == 8)))
                instr_csv_field(out, c[i]);
        }
        fputc('\n', out);
    }
}

static void free_lines(struct lines *l)
{
    for (size_t i = 0; i < l->n * NCOLS; i++)
        free(l->cells[i]);
    free(l->cells);
    free(l->info);
}

static int calltree_lines(const struct instr_session *s, const struct instr_report_opts *o,
                          enum instr_units u, struct lines *l)
{
    struct instr_tree t;
    int rc = instr_tree_build(s, &t);
    if (rc < 0)
        return rc;
    /* Depth-first, children by Elapsed Inclusive; a hidden node hides its subtree. */
    for (uint32_t c = instr_tree_first(&t); c && !rc; c = instr_tree_next(&t, c, instr_tree_shown(&t.n[c], o))) {
        const struct instr_tnode *n = &t.n[c];
        const struct instr_row *r = instr_function_row(s, n->row);
        if (instr_tree_shown(n, o))
            rc = add_line(l, &n->v, n->ns, n->pct, (struct line_cpu){n->cpu_ns, n->cpu_pct}, u, r->module, r->name,
                          n->depth - 1, ROLE_PATH);
    }
    instr_tree_free(&t);
    return rc;
}

static int relations_lines(const struct instr_session *s, const struct instr_report_opts *o,
                           enum instr_units u, const struct instr_relations *rel, struct lines *l)
{
    int rc = 0;
    const struct instr_row *fr = instr_function_row(s, rel->row);
    int callers = o->view == INSTR_VIEW_CALLERS;
    const struct instr_relation *a = callers ? rel->callers : rel->callees;
    size_t n = callers ? rel->ncallers : rel->ncallees;
    if (!callers)
        rc = add_line(l, &fr->v, fr->ns, fr->pct, (struct line_cpu){fr->cpu_ns, fr->pct + 4}, u, fr->module,
                      fr->name, 0, ROLE_FUNCTION);
    for (size_t i = 0; i < n && !rc; i++) {
        const struct instr_row *r = instr_function_row(s, a[i].row);
        rc = add_line(l, &a[i].v, a[i].ns, a[i].pct, (struct line_cpu){a[i].cpu_ns, a[i].cpu_pct}, u,
                      r ? r->module : "", r ? r->name : "[thread start]", 1, callers ? ROLE_CALLER : ROLE_CALLEE);
    }
    if (callers && !rc)
        rc = add_line(l, &fr->v, fr->ns, fr->pct, (struct line_cpu){fr->cpu_ns, fr->pct + 4}, u, fr->module,
                      fr->name, 0, ROLE_FUNCTION);
    return rc;
}

/* The tree views as text (csv == 0, with a title) or CSV. */
static int views_table(FILE *out, const struct instr_session *s, const struct instr_report_opts *o,
                       enum instr_units u, int csv)
{
    struct lines l = {.no_app = s->no_app, .cpu_known = s->cpu_known};
    int rc;
    if (o->view == INSTR_VIEW_CALLTREE) {
        if (!csv) {
            fprintf(out, "Call tree");
            if (o->depth)
                fprintf(out, ", depth <= %zu", o->depth);
            if (o->threshold > 0)
                fprintf(out, ", paths below %.2f%% of Elapsed Inclusive hidden", o->threshold);
            fputs("\n", out);
        }
        rc = calltree_lines(s, o, u, &l);
    } else {
        struct instr_relations rel;
        char err[300];
        /* An unknown name is the caller's to report (main checks it first). */
        rc = instr_relations_build(s, o->func ? o->func : "", &rel, err, sizeof err);
        if (rc < 0)
            return rc;
        if (!csv) {
            const struct instr_row *fr = instr_function_row(s, rel.row);
            if (o->view == INSTR_VIEW_CALLERS)
                fprintf(out, "Callers of %s: who called it, with its values on the paths through each caller;\n"
                             "then, marked '*', the function itself\n", fr->name);
            else
                fprintf(out, "Callees of %s: the function itself, marked '*'; then what it called, with each\n"
                             "callee's values on the paths through the function\n", fr->name);
        }
        rc = relations_lines(s, o, u, &rel, &l);
        instr_relations_free(&rel);
    }
    if (!rc) {
        if (csv)
            print_csv(out, &l, u);
        else
            print_text(out, &l);
    }
    free_lines(&l);
    return rc;
}

int instr_views_text(FILE *out, const struct instr_session *s, const struct instr_report_opts *o,
                     enum instr_units u)
{
    return views_table(out, s, o, u, 0);
}

int instr_views_csv(FILE *out, const struct instr_session *s, const struct instr_report_opts *o,
                    enum instr_units u)
{
    return views_table(out, s, o, u, 1);
}
