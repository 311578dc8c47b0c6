/* diff.c - instr-report --diff A B: per function, each value in A and B and
 * its change, sorted by the absolute change of one value.
 *
 * Functions are matched by identity, as a user names them: the demangled
 * name with GCC's clone suffixes taken off (foo.constprop.0, foo.part.0,
 * foo.cold and "[clone .isra.0]" are foo) and the source file's name (not
 * its directory, nor the line, nor the binary: two builds of one source
 * from other directories or under other names still match; when an input
 * has no source files at all, a visualiser file, by the name alone, and the
 * header says so); rows of one
 * side with the same key (a function and its clones) are added up.  The
 * header says how many matched.  Values are compared in ns when both sessions have a
 * tick rate, else in ticks.  A function in one run only has zeros in the
 * other.  Application values of a session without transition data are
 * unavailable (n/a, null), and so are their changes.
 */
#define _GNU_SOURCE /* qsort_r */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"
#include "writers.h"

#define NV 5 /* ei ee ai ae calls */

struct dref {
    const struct instr_row *r;
    int side;
    char *origin; /* r's name, GCC's clone suffixes taken off (instr_name_origin) */
};

struct drow {
    const struct instr_row *any; /* for the names */
    double v[2][NV];             /* [side][value] */
    int in[2];                   /* present in A, in B */
};

static const char *module_name(const struct instr_row *r)
{
    return instr_basename(r->module);
}

/* By name, then (unless *by_name_only) by source file name. */
static int cmp_ref(const void *x, const void *y, void *by_name_only)
{
    const struct dref *a = x, *b = y;
    int c = strcmp(a->origin, b->origin);
    if (c || *(const int *)by_name_only)
        return c;
    return strcmp(instr_basename(a->r->file ? a->r->file : ""), instr_basename(b->r->file ? b->r->file : ""));
}

/* Whether no function of s has a source file (a visualiser file, a
 * converted trace): its functions are then matched by name alone. */
static int no_files(const struct instr_session *s)
{
    for (size_t i = 0; i < s->nfunctions; i++)
        if (s->functions[i].file && s->functions[i].file[0])
            return 0;
    return s->nfunctions > 0;
}

static int cmp_row(const void *x, const void *y, void *ctx)
{
    const struct drow *a = x, *b = y;
    int sort_col = *(const int *)ctx;
    double da = fabs(a->v[1][sort_col] - a->v[0][sort_col]), db = fabs(b->v[1][sort_col] - b->v[0][sort_col]);
    if (da != db)
        return da > db ? -1 : 1;
    return strcmp(a->any->name, b->any->name);
}

static void value(const struct instr_row *r, int ns, double *v)
{
    const uint64_t t[4] = {r->v.ei, r->v.ee, r->v.ai, r->v.ae};
    for (int i = 0; i < 4; i++)
        v[i] += ns ? r->ns[i] : (double)t[i];
    v[4] += (double)r->v.calls;
}

/* A value in the chosen unit (ns or ticks in, as compared). */
static void fmt(char *buf, size_t len, double x, int ns, enum instr_units u, int sign)
{
    const char *f = sign ? "%+.3f" : "%.3f";
    if (!ns || u == INSTR_UNITS_TICKS || u == INSTR_UNITS_NS)
        snprintf(buf, len, sign ? "%+.0f" : "%.0f", x);
    else
        snprintf(buf, len, f, u == INSTR_UNITS_US ? x / 1e3 : x / 1e6);
}

/* One --diff table, computed once, then written by one of the styles below. */
struct dtable {
    const struct instr_session *a, *b;
    struct drow *rows;
    size_t nr;
    int col;             /* the sorted value */
    int ns;              /* values in ns (else ticks) */
    int no_app;          /* Application values unavailable */
    double threshold;    /* percent of A's total */
    enum instr_units un; /* as shown */
    struct instr_json *j; /* JSON: the writer */
    size_t matched;       /* functions in both */
    int by_name;          /* matched by name alone: a side has no source files */
    size_t only[2];       /* functions only in A, only in B */
};

struct dstyle {
    void (*begin)(FILE *out, const struct dtable *t);
    void (*row)(FILE *out, const struct dtable *t, const struct drow *d, const double *ch, size_t shown);
    void (*end)(FILE *out, const struct dtable *t, size_t shown);
};

static const char *const cols[NV] = {"ei", "ee", "ai", "ae", "calls"};
static const char *const names[NV] = {"elapsed_inclusive", "elapsed_exclusive", "application_inclusive",
                                      "application_exclusive", "calls"};

static int diff_write(FILE *out, const struct dstyle *st, const struct instr_session *a,
                      const struct instr_session *b, const char *column, double threshold, enum instr_units u)
{
    int col = -1;
    for (int i = 0; i < NV; i++)
        if (!strcmp(column, cols[i]))
            col = i;
    if (col < 0)
        return INSTR_EARG;
    int ns = a->have_rate && b->have_rate;
    int no_app = a->no_app || b->no_app;
    if (no_app && (col == 2 || col == 3))
        return INSTR_EARG;
    size_t n = a->nfunctions + b->nfunctions, nr = 0;
    struct dref *refs = calloc(n + 1, sizeof *refs);
    struct drow *rows = calloc(n + 1, sizeof *rows);
    if (!refs || !rows) {
        free(refs);
        free(rows);
        return INSTR_ENOMEM;
    }
    for (size_t i = 0; i < a->nfunctions; i++)
        refs[i] = (struct dref){&a->functions[i], 0, NULL};
    for (size_t i = 0; i < b->nfunctions; i++)
        refs[a->nfunctions + i] = (struct dref){&b->functions[i], 1, NULL};
    int rc = 0;
    for (size_t i = 0; i < n && !rc; i++) {
        const char *name = refs[i].r->name ? refs[i].r->name : "";
        size_t len = strlen(name) + 1;
        if (!(refs[i].origin = malloc(len)))
            rc = INSTR_ENOMEM;
        else
            instr_name_origin(name, refs[i].origin, len);
    }
    if (rc) {
        for (size_t i = 0; i < n; i++)
            free(refs[i].origin);
        free(refs);
        free(rows);
        return rc;
    }
    int by_name = no_files(a) || no_files(b);
    qsort_r(refs, n, sizeof *refs, cmp_ref, &by_name);
    for (size_t i = 0; i < n; i++) {
        if (!nr || cmp_ref(&refs[i], &refs[i - 1], &by_name))
            rows[nr++].any = refs[i].r;
        struct drow *d = &rows[nr - 1];
        value(refs[i].r, ns, d->v[refs[i].side]);
        d->in[refs[i].side] = 1;
    }
    size_t matched = 0, only[2] = {0, 0};
    for (size_t i = 0; i < nr; i++) {
        matched += rows[i].in[0] && rows[i].in[1];
        only[0] += rows[i].in[0] && !rows[i].in[1];
        only[1] += !rows[i].in[0] && rows[i].in[1];
    }
    qsort_r(rows, nr, sizeof *rows, cmp_row, &col);
    double total = col == 4 ? 0 : ns ? a->total_ns[col >= 2] : (double)(col >= 2 ? a->total.ai : a->total.ei);
    if (col == 4)
        for (size_t i = 0; i < a->nfunctions; i++)
            total += (double)a->functions[i].v.calls;
    double limit = threshold / 100.0 * total;
    struct instr_json j;
    instr_json_init(&j, out);
    const struct dtable t = {a,  b,         rows, nr, col, ns, no_app, threshold, ns ? u : INSTR_UNITS_TICKS, &j,
                             matched, by_name, {only[0], only[1]}};
    st->begin(out, &t);
    size_t shown = 0;
    for (size_t i = 0; i < nr; i++) {
        const struct drow *d = &rows[i];
        double ch[NV];
        for (int k = 0; k < NV; k++)
            ch[k] = d->v[1][k] - d->v[0][k];
        if (fabs(ch[col]) < limit || (threshold > 0 && ch[col] == 0))
            continue;
        st->row(out, &t, d, ch, shown);
        shown++;
    }
    st->end(out, &t, shown);
    for (size_t i = 0; i < n; i++)
        free(refs[i].origin);
    free(refs);
    free(rows);
    return 0;
}

static const char *input_path(const struct instr_session *s)
{
    return s->ndumps ? s->dumps[0].path : "";
}

/* ---- text ---- */

static void text_begin(FILE *out, const struct dtable *t)
{
    fprintf(out, "instr diff (units: %s; sorted by the change of %s", instr_units_name(t->un), cols[t->col]);
    if (t->threshold > 0)
        fprintf(out, ", changes below %.2f%% of A's total hidden", t->threshold);
    fprintf(out, ")\nA: %s\nB: %s\n", input_path(t->a), input_path(t->b));
    fprintf(out, "Matched: %zu function%s in both (%s); %zu only in A, %zu only in B%s\n",
            t->matched, t->matched == 1 ? "" : "s",
            t->by_name ? "by name alone: an input has no source files" : "by name and source file", t->only[0],
            t->only[1],
            !t->matched && t->only[0] && t->only[1] ? " (not the same program?)" : "");
    if (t->no_app)
        fprintf(out, "Application: %s\n", instr_no_app_reason);
    fprintf(out, "\n%14s %14s %14s %14s %14s %10s %10s  %s\n", "EI A", "EI B", "EI change", "EE change",
            "AI change", "Calls A", "Calls B", "Function");
}

static void text_row(FILE *out, const struct dtable *t, const struct drow *d, const double *ch, size_t shown)
{
    char x[64], y[64], z[64], e[64], ai[64];
    (void)shown;
    fmt(x, sizeof x, d->v[0][0], t->ns, t->un, 0);
    fmt(y, sizeof y, d->v[1][0], t->ns, t->un, 0);
    fmt(z, sizeof z, ch[0], t->ns, t->un, 1);
    fmt(e, sizeof e, ch[1], t->ns, t->un, 1);
    if (t->no_app)
        snprintf(ai, sizeof ai, "n/a");
    else
        fmt(ai, sizeof ai, ch[2], t->ns, t->un, 1);
    fprintf(out, "%14s %14s %14s %14s %14s %10.0f %10.0f  %s%s\n", x, y, z, e, ai, d->v[0][4], d->v[1][4],
            d->any->name, !d->in[0] ? " (only in B)" : !d->in[1] ? " (only in A)" : "");
}

static void no_end(FILE *out, const struct dtable *t, size_t shown)
{
    (void)out, (void)t, (void)shown;
}

/* ---- CSV ---- */

static void csv_begin(FILE *out, const struct dtable *t)
{
    (void)t;
    fputs("function,mangled,module,in_a,in_b", out);
    for (int i = 0; i < NV; i++)
        fprintf(out, ",%s_a,%s_b,%s_change", names[i], names[i], names[i]);
    fputc('\n', out);
}

static void csv_row(FILE *out, const struct dtable *t, const struct drow *d, const double *ch, size_t shown)
{
    char x[64], y[64], z[64];
    (void)shown;
    fputc('"', out);
    for (const char *c = d->any->name; *c; c++)
        fputs(*c == '"' ? "\"\"" : (char[2]){*c, 0}, out);
    fprintf(out, "\",%s,%s,%d,%d", d->any->mangled, module_name(d->any), d->in[0], d->in[1]);
    for (int k = 0; k < NV; k++) {
        if (t->no_app && (k == 2 || k == 3)) {
            fputs(",,,", out);
            continue;
        }
        fmt(x, sizeof x, d->v[0][k], t->ns && k < 4, t->un, 0);
        fmt(y, sizeof y, d->v[1][k], t->ns && k < 4, t->un, 0);
        fmt(z, sizeof z, ch[k], t->ns && k < 4, t->un, 1);
        fprintf(out, ",%s,%s,%s", x, y, z);
    }
    fputc('\n', out);
}

/* ---- JSON ---- */

static void json_begin(FILE *out, const struct dtable *t)
{
    (void)out;
    instr_json_open(t->j, NULL, '{', INSTR_JSON_LINES);
    instr_json_open(t->j, "diff", '{', INSTR_JSON_INLINE);
    instr_json_key_str(t->j, "a", input_path(t->a));
    instr_json_key_str(t->j, "b", input_path(t->b));
    instr_json_key_str(t->j, "sort", cols[t->col]);
    instr_json_key_num(t->j, "threshold_pct", "%.4f", t->threshold);
    instr_json_key_str(t->j, "unit", t->ns ? "ns" : "ticks");
    instr_json_key_num(t->j, "matched", "%.0f", (double)t->matched);
    instr_json_key_num(t->j, "only_in_a", "%.0f", (double)t->only[0]);
    instr_json_key_num(t->j, "only_in_b", "%.0f", (double)t->only[1]);
    instr_json_key_str(t->j, "matched_by", t->by_name ? "name" : "name and file");
    instr_json_close(t->j);
    instr_json_open(t->j, "functions", '[', INSTR_JSON_LINES);
}

static void json_row(FILE *out, const struct dtable *t, const struct drow *d, const double *ch, size_t shown)
{
    char key[64];
    (void)out, (void)shown;
    instr_json_open(t->j, NULL, '{', INSTR_JSON_INLINE);
    instr_json_key_str(t->j, "name", d->any->name);
    instr_json_key_str(t->j, "mangled", d->any->mangled);
    instr_json_key_str(t->j, "module", module_name(d->any));
    instr_json_key_bool(t->j, "in_a", d->in[0]);
    instr_json_key_bool(t->j, "in_b", d->in[1]);
    for (int k = 0; k < NV; k++) {
        int na = t->no_app && (k == 2 || k == 3); /* unavailable: null */
        snprintf(key, sizeof key, "%s_a", names[k]);
        instr_json_key_num(t->j, key, "%.0f", na ? NAN : d->v[0][k]);
        snprintf(key, sizeof key, "%s_b", names[k]);
        instr_json_key_num(t->j, key, "%.0f", na ? NAN : d->v[1][k]);
        snprintf(key, sizeof key, "%s_change", names[k]);
        instr_json_key_num(t->j, key, "%.0f", na ? NAN : ch[k]);
    }
    instr_json_close(t->j);
}

static void json_end(FILE *out, const struct dtable *t, size_t shown)
{
    (void)shown;
    instr_json_close(t->j); /* functions */
    instr_json_close(t->j);
    fputc('\n', out);
}

/* The --diff writers of the format table (formats.c). */
int instr_diff_text(FILE *out, const struct instr_session *a, const struct instr_session *b, const char *column,
                    double threshold, enum instr_units u)
{
    static const struct dstyle st = {text_begin, text_row, no_end};
    return diff_write(out, &st, a, b, column, threshold, u);
}

int instr_diff_csv(FILE *out, const struct instr_session *a, const struct instr_session *b, const char *column,
                   double threshold, enum instr_units u)
{
    static const struct dstyle st = {csv_begin, csv_row, no_end};
    return diff_write(out, &st, a, b, column, threshold, u);
}

int instr_diff_json(FILE *out, const struct instr_session *a, const struct instr_session *b, const char *column,
                    double threshold, enum instr_units u)
{
    static const struct dstyle st = {json_begin, json_row, json_end};
    return diff_write(out, &st, a, b, column, threshold, u);
}
