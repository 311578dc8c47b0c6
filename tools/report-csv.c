/* report-csv.c - the rows of one view as CSV (RFC 4180 quoting). */
#include <inttypes.h>
#include <string.h>

#include "report.h"

int instr_report_csv(FILE *out, const struct instr_session *s, const struct instr_report_opts *o)
{
    enum instr_units u = s->have_rate ? o->units : INSTR_UNITS_TICKS;
    const char *un = instr_units_name(u);
    const struct instr_row *rows;
    size_t n;
    if (o->view >= INSTR_VIEW_CALLTREE)
        return instr_views_csv(out, s, o, u);
    instr_view_rows(s, o->view, &rows, &n);
    if (o->limit && n > o->limit)
        n = o->limit;
    fprintf(out,
            "calls,elapsed_inclusive_%s,elapsed_exclusive_%s,application_inclusive_%s,application_exclusive_%s,"
            "elapsed_inclusive_pct,elapsed_exclusive_pct,application_inclusive_pct,application_exclusive_pct,"
            "flagged_intervals,flagged_%s",
            un, un, un, un, un);
    switch (o->view) {
    case INSTR_VIEW_FUNCTIONS: fprintf(out, ",function,mangled,module,file,line,external_elapsed_%s\n", un); break;
    case INSTR_VIEW_THREADS: fputs(",pid,thread,tid,name\n", out); break;
    case INSTR_VIEW_MODULES: fputs(",module\n", out); break;
    case INSTR_VIEW_PROCESSES: fputs(",pid,program\n", out); break;
    default: break;
    }
    for (size_t i = 0; i < n; i++) {
        const struct instr_row *r = &rows[i];
        char v[5][64];
        instr_fmt_value(v[0], 64, r->v.ei, r->ns[0], u);
        instr_fmt_value(v[1], 64, r->v.ee, r->ns[1], u);
        instr_fmt_value(v[2], 64, r->v.ai, r->ns[2], u);
        instr_fmt_value(v[3], 64, r->v.ae, r->ns[3], u);
        instr_fmt_value(v[4], 64, r->v.flagged_t, r->flagged_ns, u);
        if (s->no_app) /* unavailable: empty fields */
            fprintf(out, "%" PRIu64 ",%s,%s,,,%.4f,%.4f,,,%" PRIu64 ",%s,", r->v.calls, v[0], v[1], r->pct[0],
                    r->pct[1], r->v.flagged_n, v[4]);
        else
            fprintf(out, "%" PRIu64 ",%s,%s,%s,%s,%.4f,%.4f,%.4f,%.4f,%" PRIu64 ",%s,", r->v.calls, v[0], v[1],
                    v[2], v[3], r->pct[0], r->pct[1], r->pct[2], r->pct[3], r->v.flagged_n, v[4]);
        switch (o->view) {
        case INSTR_VIEW_FUNCTIONS:
            instr_csv_field(out, r->name);
            fputc(',', out);
            instr_csv_field(out, r->mangled);
            fputc(',', out);
            instr_csv_field(out, r->module);
            fputc(',', out);
            instr_csv_field(out, r->file);
            instr_fmt_value(v[0], 64, r->v.ext_ei, r->ext_ns[0], u);
            fprintf(out, ",%" PRIu64 ",%s\n", r->line, r->pseudo ? "" : v[0]);
            break;
        case INSTR_VIEW_THREADS:
            fprintf(out, "%" PRIu64 ",%u,%" PRIu64 ",", r->pid, r->index, r->tid);
            instr_csv_field(out, r->name);
            fputc('\n', out);
            break;
        case INSTR_VIEW_MODULES:
            instr_csv_field(out, r->name);
            fputc('\n', out);
            break;
        case INSTR_VIEW_PROCESSES:
            fprintf(out, "%" PRIu64 ",", r->pid);
            instr_csv_field(out, r->name);
            fputc('\n', out);
            break;
        default:
            break;
        }
    }
    return 0;
}
