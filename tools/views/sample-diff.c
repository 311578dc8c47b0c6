/* sample-diff.c - two sampling runs compared per function (--diff A B).
 *
 * Runs have different sample counts, so percents are compared: each
 * function's Inclusive % and Exclusive % in A and B and their change.
 * Functions are matched by identity, as the instrumented --diff matches
 * them (diff.c): the name with GCC's clone suffixes taken off
 * (foo.constprop.0, foo.part.0, foo.cold are foo) and where it is: in the
 * program (whatever each run's executable is called: two builds of one
 * source under other names still match) or in a library of that file name
 * (the path may differ).  Rows of one side with the same key (a function
 * and its clones) are added up.  The header says how many matched.  Rows
 * by the absolute change of the chosen column, changes below the
 * threshold (percentage points) hidden. */
#include "sample-report.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "emit.h"
#include "report.h" /* instr_basename */

struct drow {
    char *name;            /* clone suffixes taken off */
    const char *module;    /* file name; a program's: A's (B's when only in B) */
    int in_program;        /* in the run's executable */
    double ai, ae, bi, be; /* percents */
    int in[2];             /* seen in A, in B */
    double change;         /* of the sort column: bi - ai or be - ae */
};

/* By the absolute change of the sort column, then by name. */
static int by_change(const void *x, const void *y)
{
    const struct drow *a = x, *b = y;
    double da = fabs(a->change), db = fabs(b->change);
    if (da != db)
        return da > db ? -1 : 1;
    return strcmp(a->name, b->name);
}

/* Adds side's rows into d[0..*n): each matched by its key, else a new row. */
static int add_side(struct drow *d, size_t *n, const struct instr_sprofile *p, int side)
{
    const struct instr_srow *rows = p->rows[INSTR_SVIEW_FUNCTIONS];
    const char *program = p->program ? instr_basename(p->program) : NULL;
    char origin[4096];
    /* Quadratic matching is fine for profiles (thousands of functions at
     * most in practice); a hash would be the next step. */
    for (size_t r = 0; r < p->nrows[INSTR_SVIEW_FUNCTIONS]; r++) {
        const char *module = instr_basename(rows[r].module);
        int in_program = program && module && !strcmp(module, program);
        instr_name_origin(rows[r].name, origin, sizeof origin);
        size_t k = 0;
        while (k < *n && !(!strcmp(d[k].name, origin) && d[k].in_program == in_program &&
                           (in_program || !strcmp(d[k].module ? d[k].module : "", module ? module : ""))))
            k++;
        if (k == *n) {
            d[k] = (struct drow){.name = strdup(origin), .module = module, .in_program = in_program};
            if (!d[k].name)
                return INSTR_ENOMEM;
            (*n)++;
        }
        d[k].in[side] = 1;
        *(side ? &d[k].bi : &d[k].ai) += instr_spct(rows[r].incl, p->total);
        *(side ? &d[k].be : &d[k].ae) += instr_spct(rows[r].excl, p->total);
    }
    return 0;
}

int instr_sreport_diff(FILE *f, const struct instr_sprofile *a, const struct instr_sprofile *b, int format,
                       const char *sort, double threshold)
{
    int excl = sort && (!strcmp(sort, "exclusive") || !strcmp(sort, "ee") || !strcmp(sort, "excl"));
    if (sort && !excl && strcmp(sort, "inclusive") && strcmp(sort, "ei") && strcmp(sort, "incl"))
        return INSTR_EARG;
    size_t na = a->nrows[INSTR_SVIEW_FUNCTIONS], nb = b->nrows[INSTR_SVIEW_FUNCTIONS];
    struct drow *d = calloc(na + nb + 1, sizeof *d);
    if (!d)
        return INSTR_ENOMEM;
    size_t n = 0;
    int rc = add_side(d, &n, a, 0);
    if (!rc)
        rc = add_side(d, &n, b, 1);
    if (rc) {
        for (size_t i = 0; i < n; i++)
            free(d[i].name);
        free(d);
        return rc;
    }
    size_t matched = 0, only[2] = {0, 0};
    for (size_t i = 0; i < n; i++) {
        matched += d[i].in[0] && d[i].in[1];
        only[0] += d[i].in[0] && !d[i].in[1];
        only[1] += !d[i].in[0] && d[i].in[1];
    }
    for (size_t i = 0; i < n; i++)
        d[i].change = excl ? d[i].be - d[i].ae : d[i].bi - d[i].ai;
    if (n > 1)
        qsort(d, n, sizeof *d, by_change);
    if (format == 0)
        fprintf(f, "Samples: A %" PRIu64 ", B %" PRIu64 " (percents of each run's total)\n"
                   "Matched: %zu function%s in both (by name, clones added up, and program or library); %zu only in "
                   "A, %zu only in B%s\n\n%-40s  %8s  %8s  %9s  %8s  %8s  "
                   "%9s  %s\n",
                a->total, b->total, matched, matched == 1 ? "" : "s", only[0], only[1],
                !matched && only[0] && only[1] ? " (not the same program?)" : "", "Function", "A Incl%", "B Incl%", "+/- Incl%", "A Excl%", "B Excl%", "+/- Excl%",
                "Module");
    else if (format == 1)
        fputs("function,module,a_inclusive_pct,b_inclusive_pct,change_inclusive_pct,a_exclusive_pct,"
              "b_exclusive_pct,change_exclusive_pct\n", f);
    else
        fprintf(f, "{\"collection\":\"sampling\",\"a_samples\":%" PRIu64 ",\"b_samples\":%" PRIu64
                   ",\"matched\":%zu,\"only_a\":%zu,\"only_b\":%zu,\"diff\":[",
                a->total, b->total, matched, only[0], only[1]);
    int first = 1;
    for (size_t i = 0; i < n; i++) {
        const struct drow *r = &d[i];
        if (fabs(r->change) < threshold || (fabs(r->bi - r->ai) < 1e-12 && fabs(r->be - r->ae) < 1e-12 && threshold > 0))
            continue;
        if (format == 0) {
            fprintf(f, "%-40s  %8.2f  %8.2f  %+9.2f  %8.2f  %8.2f  %+9.2f  %s\n", r->name, r->ai, r->bi, r->bi - r->ai,
                    r->ae, r->be, r->be - r->ae, r->module);
        } else if (format == 1) {
            instr_csv_field(f, r->name);
            fputc(',', f);
            instr_csv_field(f, r->module);
            fprintf(f, ",%.4f,%.4f,%.4f,%.4f,%.4f,%.4f\n", r->ai, r->bi, r->bi - r->ai, r->ae, r->be, r->be - r->ae);
        } else {
            fprintf(f, "%s{\"name\":", first ? "" : ",");
            instr_json_str(f, r->name);
            fputs(",\"module\":", f);
            instr_json_str(f, r->module);
            fprintf(f, ",\"a_inclusive_pct\":%.4f,\"b_inclusive_pct\":%.4f,\"a_exclusive_pct\":%.4f,"
                       "\"b_exclusive_pct\":%.4f}",
                    r->ai, r->bi, r->ae, r->be);
        }
        first = 0;
    }
    if (format == 2)
        fputs("]}\n", f);
    for (size_t i = 0; i < n; i++)
        free(d[i].name);
    free(d);
    return 0;
}
