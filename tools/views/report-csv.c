/* report-csv.c - the rows of one view as CSV (RFC 4180 quoting), columns
 * from the column table (columns.c). */
#include <string.h>

#include "columns.h"
#include "emit.h"
#include "report.h"
#include "views.h"
#include "writers.h"

int instr_report_csv(FILE *out, const struct instr_session *s, const struct instr_report_opts *o)
{
    enum instr_units u = s->have_rate ? o->units : INSTR_UNITS_TICKS;
    const struct instr_row *rows;
    size_t n;
    if (instr_views[o->view].csv)
        return instr_views[o->view].csv(out, s, o, u);
    instr_view_rows(s, o->view, &rows, &n);
    if (o->limit && n > o->limit)
        n = o->limit;
    /* The view's columns by CSV position. */
    const struct instr_column *cols[64];
    size_t nc = 0;
    for (size_t i = 0; i < instr_ncolumns && nc < 64; i++) {
        const struct instr_column *c = &instr_columns[i];
        if (!instr_column_shown(c, o->view, 1, s, o))
            continue;
        size_t k = nc++;
        for (; k > 0 && cols[k - 1]->csv_pos > c->csv_pos; k--)
            cols[k] = cols[k - 1];
        cols[k] = c;
    }
    for (size_t k = 0; k < nc; k++) {
        fputs(k ? "," : "", out);
        fprintf(out, cols[k]->csv, instr_units_name(u));
    }
    fputc('\n', out);
    char buf[4096];
    for (size_t i = 0; i < n; i++) {
        for (size_t k = 0; k < nc; k++) {
            fputs(k ? "," : "", out);
            instr_csv_field(out, instr_column_cell(cols[k], buf, sizeof buf, s, &rows[i], u, 1));
        }
        fputc('\n', out);
    }
    return 0;
}
