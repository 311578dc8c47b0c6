/* sample-diff.c - two sampling runs compared per function (--diff A B).
 *
 * Runs have different sample counts, so percents are compared: each
 * function's Inclusive % and Exclusive % in A and B and their change, the
 * functions matched by name and module file name (the path may differ).
 * Rows by the absolute change of the chosen column, changes below the
 * threshold (percentage points) hidden. */
#include "sample-report.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "emit.h"
#include "report.h" /* instr_basename */

struct drow {
    const char *name, *module;
    double ai, ae, bi, be; /* percents */
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

int instr_sreport_diff(FILE *f, const struct instr_sprofile *a, const struct instr_sprofile *b, int format,
                       const char *sort, double threshold)
{
    int excl = sort && (!strcmp(sort, "exclusive") || !strcmp(sort, "ee") || !strcmp(sort, "excl"));
    if (sort && !excl && strcmp(sort, "inclusive") && strcmp(sort, "ei") && strcmp(sort, "incl"))
        return INSTR_EARG;
    const struct instr_srow *ra = a->rows[INSTR_SVIEW_FUNCTIONS], *rb = b->rows[INSTR_SVIEW_FUNCTIONS];
    size_t na = a->nrows[INSTR_SVIEW_FUNCTIONS], nb = b->nrows[INSTR_SVIEW_FUNCTIONS];
    struct drow *d = malloc((na + nb + 1) * sizeof *d);
    uint8_t *used = calloc(nb + 1, 1);
    if (!d || !used) {
        free(d);
        free(used);
        return INSTR_ENOMEM;
    }
    size_t n = 0;
    /* Quadratic matching is fine for profiles (thousands of functions at most
     * in practice); a hash would be the next step. */
    for (size_t i = 0; i < na; i++) {
        struct drow r = {.name = ra[i].name,
                         .module = instr_basename(ra[i].module),
                         .ai = instr_spct(ra[i].incl, a->total),
                         .ae = instr_spct(ra[i].excl, a->total)};
        for (size_t k = 0; k < nb; k++)
            if (!used[k] && !strcmp(rb[k].name, ra[i].name) && !strcmp(instr_basename(rb[k].module), r.module)) {
                used[k] = 1;
                r.bi = instr_spct(rb[k].incl, b->total);
                r.be = instr_spct(rb[k].excl, b->total);
                break;
            }
        d[n++] = r;
    }
    for (size_t k = 0; k < nb; k++)
        if (!used[k])
            d[n++] = (struct drow){.name = rb[k].name,
                                   .module = instr_basename(rb[k].module),
                                   .bi = instr_spct(rb[k].incl, b->total),
                                   .be = instr_spct(rb[k].excl, b->total)};
    for (size_t i = 0; i < n; i++)
        d[i].change = excl ? d[i].be - d[i].ae : d[i].bi - d[i].ai;
    if (n > 1)
        qsort(d, n, sizeof *d, by_change);
    if (format == 0)
        fprintf(f, "Samples: A %" PRIu64 ", B %" PRIu64 " (percents of each run's total)\n\n%-40s  %8s  %8s  %9s  %8s  %8s  "
                   "%9s  %s\n",
                a->total, b->total, "Function", "A Incl%", "B Incl%", "+/- Incl%", "A Excl%", "B Excl%", "+/- Excl%",
                "Module");
    else if (format == 1)
        fputs("function,module,a_inclusive_pct,b_inclusive_pct,change_inclusive_pct,a_exclusive_pct,"
              "b_exclusive_pct,change_exclusive_pct\n", f);
    else
        fprintf(f, "{\"collection\":\"sampling\",\"a_samples\":%" PRIu64 ",\"b_samples\":%" PRIu64 ",\"diff\":[",
                a->total, b->total);
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
    free(d);
    free(used);
    return 0;
}
