/* report-views.c - the call-tree, callers and callees views, as text and
 * as JSON members (the data comes from view-calltree.c and view-callers.c). */
#define _GNU_SOURCE /* asprintf */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"

/* ---- text and CSV ------------------------------------------------------------ */

#define NCOLS 11
static const char *const titles[NCOLS] = {"Calls", "Elapsed Incl", "Elapsed Excl", "App Incl", "App Excl",
                                          "EI%",   "EE%",          "AI%",          "AE%",      "Module",
                                          "Function"};

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
};

static int add_line(struct lines *l, const struct instr_values *v, const double *ns, const double *pct,
                    enum instr_units u, const char *module, const char *name, unsigned depth, enum role role)
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
    c[9] = strdup(module && module[0] ? instr_basename(module) : "?");
    c[10] = strdup(name);
    for (int i = 0; i < NCOLS; i++)
        if (!c[i])
            return INSTR_ENOMEM;
    return 0;
}

static void print_text(FILE *out, const struct lines *l)
{
    size_t w[NCOLS];
    for (int c = 0; c < NCOLS - 1; c++) {
        w[c] = strlen(titles[c]);
        for (size_t r = 0; r < l->n; r++)
            if (strlen(l->cells[r * NCOLS + c]) > w[c])
                w[c] = strlen(l->cells[r * NCOLS + c]);
    }
    for (size_t r = 0; r <= l->n; r++) {
        for (int c = 0; c < NCOLS - 1; c++) {
            const char *s = r ? l->cells[(r - 1) * NCOLS + c] : titles[c];
            fprintf(out, c == NCOLS - 2 ? "%-*s  " : "%*s  ", (int)w[c], s);
        }
        if (!r) {
            fprintf(out, "%s\n", titles[NCOLS - 1]);
            continue;
        }
        const struct line_info *in = &l->info[r - 1];
        fprintf(out, "%*s%s%s\n", 2 * (int)in->depth, "", in->role == ROLE_FUNCTION ? "* " : "",
                l->cells[(r - 1) * NCOLS + NCOLS - 1]);
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
            "application_exclusive_pct,module,function\n",
            un, un, un, un);
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

/* Whether a tree node is shown: within the depth limit and above the threshold. */
static int shown(const struct instr_tnode *n, const struct instr_report_opts *o)
{
    return (!o->depth || n->depth <= o->depth) && n->pct[0] >= o->threshold;
}

static int calltree_lines(const struct instr_session *s, const struct instr_report_opts *o,
                          enum instr_units u, struct lines *l)
{
    struct instr_tree t;
    int rc = instr_tree_build(s, &t);
    if (rc < 0)
        return rc;
    /* Depth-first, children by Elapsed Inclusive; a hidden node hides its subtree. */
    uint32_t c = t.n[0].first_child;
    while (c && !rc) {
        const struct instr_tnode *n = &t.n[c];
        const struct instr_row *r = instr_function_row(s, n->row);
        if (shown(n, o)) {
            rc = add_line(l, &n->v, n->ns, n->pct, u, r->module, r->name, n->depth - 1, ROLE_PATH);
            if (n->first_child) {
                c = n->first_child;
                continue;
            }
        }
        while (c && !t.n[c].next_sibling)
            c = t.n[c].parent;
        if (c)
            c = t.n[c].next_sibling;
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
        rc = add_line(l, &fr->v, fr->ns, fr->pct, u, fr->module, fr->name, 0, ROLE_FUNCTION);
    for (size_t i = 0; i < n && !rc; i++) {
        const struct instr_row *r = instr_function_row(s, a[i].row);
        rc = add_line(l, &a[i].v, a[i].ns, a[i].pct, u, r ? r->module : "", r ? r->name : "[thread start]", 1,
                      callers ? ROLE_CALLER : ROLE_CALLEE);
    }
    if (callers && !rc)
        rc = add_line(l, &fr->v, fr->ns, fr->pct, u, fr->module, fr->name, 0, ROLE_FUNCTION);
    return rc;
}

/* The tree views as text (csv == 0, with a title) or CSV. */
static int views_table(FILE *out, const struct instr_session *s, const struct instr_report_opts *o,
                       enum instr_units u, int csv)
{
    struct lines l = {.no_app = s->no_app};
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
        rc = instr_relations_build(s, o->func ? o->func : "", &rel, err, sizeof err);
        if (rc == INSTR_EARG) {
            fprintf(csv ? stderr : out, "%s\n", err);
            return rc;
        }
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

/* ---- JSON -------------------------------------------------------------------- */

/* no_app: Application values unavailable (instr_session.no_app): null. */
static void jvalues(FILE *out, int no_app, const struct instr_values *v, const double *ns, const double *pct)
{
    static const char *const names[4] = {"elapsed_inclusive", "elapsed_exclusive", "application_inclusive",
                                         "application_exclusive"};
    const uint64_t t[4] = {v->ei, v->ee, v->ai, v->ae};
    fprintf(out, "\"calls\": %" PRIu64, v->calls);
    for (int i = 0; i < 4; i++) {
        if (no_app && i >= 2) {
            fprintf(out, ", \"%s_ticks\": null, \"%s_ns\": null, \"%s_pct\": null", names[i], names[i], names[i]);
            continue;
        }
        fprintf(out, ", \"%s_ticks\": %" PRIu64 ", \"%s_ns\": ", names[i], t[i], names[i]);
        instr_json_ns(out, ns[i]);
        fprintf(out, ", \"%s_pct\": %.4f", names[i], pct[i]);
    }
}

static void jfunction(FILE *out, const struct instr_row *r)
{
    fputs("\"name\": ", out);
    instr_json_str(out, r ? r->name : "[thread start]");
    fputs(", \"mangled\": ", out);
    instr_json_str(out, r && r->mangled ? r->mangled : "");
    fputs(", \"module\": ", out);
    instr_json_str(out, r ? r->module : "");
}

static int calltree_json(FILE *out, const struct instr_session *s, const struct instr_report_opts *o)
{
    struct instr_tree t;
    int rc = instr_tree_build(s, &t);
    if (rc < 0)
        return rc;
    /* Flat, in the text view's order: id, parent id (0 = top level), depth. */
    fputs(",\n  \"calltree\": [", out);
    uint32_t c = t.n[0].first_child;
    int first = 1;
    while (c) {
        const struct instr_tnode *n = &t.n[c];
        if (shown(n, o)) {
            fprintf(out, "%s\n    {\"id\": %u, \"parent\": %u, \"depth\": %u, ", first ? "" : ",", c, n->parent,
                    n->depth);
            first = 0;
            jfunction(out, instr_function_row(s, n->row));
            fputs(", ", out);
            jvalues(out, s->no_app, &n->v, n->ns, n->pct);
            fputs("}", out);
            if (n->first_child) {
                c = n->first_child;
                continue;
            }
        }
        while (c && !t.n[c].next_sibling)
            c = t.n[c].parent;
        if (c)
            c = t.n[c].next_sibling;
    }
    fputs(first ? "]" : "\n  ]", out);
    instr_tree_free(&t);
    return 0;
}

static void jrelations(FILE *out, const struct instr_session *s, const char *key, const struct instr_relation *a,
                       size_t n)
{
    fprintf(out, ",\n    \"%s\": [", key);
    for (size_t i = 0; i < n; i++) {
        fputs(i ? ",\n      {" : "\n      {", out);
        jfunction(out, instr_function_row(s, a[i].row));
        fputs(", ", out);
        jvalues(out, s->no_app, &a[i].v, a[i].ns, a[i].pct);
        fputs("}", out);
    }
    fputs(n ? "\n    ]" : "]", out);
}

int instr_views_json(FILE *out, const struct instr_session *s, const struct instr_report_opts *o)
{
    if (o->view == INSTR_VIEW_CALLTREE)
        return calltree_json(out, s, o);
    if (o->view != INSTR_VIEW_CALLERS && o->view != INSTR_VIEW_CALLEES)
        return 0;
    struct instr_relations rel;
    char err[300];
    int rc = instr_relations_build(s, o->func ? o->func : "", &rel, err, sizeof err);
    if (rc < 0)
        return rc;
    const struct instr_row *fr = instr_function_row(s, rel.row);
    fprintf(out, ",\n  \"%s\": {\n    \"function\": {", o->view == INSTR_VIEW_CALLERS ? "callers" : "callees");
    jfunction(out, fr);
    fputs(", ", out);
    jvalues(out, s->no_app, &fr->v, fr->ns, fr->pct);
    fputs("}", out);
    if (o->view == INSTR_VIEW_CALLERS)
        jrelations(out, s, "callers", rel.callers, rel.ncallers);
    else
        jrelations(out, s, "callees", rel.callees, rel.ncallees);
    fputs("\n  }", out);
    instr_relations_free(&rel);
    return 0;
}
