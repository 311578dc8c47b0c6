/* report-text.c - the human report: header lines and an aligned table. */
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "columns.h"
#include "report.h"

#define MAX_COLS 16

struct table {
    const char *title[MAX_COLS];
    int left[MAX_COLS]; /* left-aligned (text) columns */
    int ncols;
    char **cells; /* rows x ncols, malloc'd strings */
    size_t nrows;
};

static void col(struct table *t, const char *title, int left)
{
    t->title[t->ncols] = title;
    t->left[t->ncols++] = left;
}

static void print_table(FILE *out, const struct table *t)
{
    size_t w[MAX_COLS];
    for (int c = 0; c < t->ncols; c++) {
        w[c] = strlen(t->title[c]);
        for (size_t r = 0; r < t->nrows; r++) {
            size_t l = strlen(t->cells[r * t->ncols + c]);
            if (l > w[c])
                w[c] = l;
        }
    }
    for (size_t r = 0; r <= t->nrows; r++) {
        for (int c = 0; c < t->ncols; c++) {
            const char *s = r == 0 ? t->title[c] : t->cells[(r - 1) * t->ncols + c];
            int last = c == t->ncols - 1;
            if (t->left[c] && last)
                fputs(s, out);
            else if (t->left[c])
                fprintf(out, "%-*s", (int)w[c], s);
            else
                fprintf(out, "%*s", (int)w[c], s);
            if (!last)
                fputs("  ", out);
        }
        fputc('\n', out);
    }
}

static void print_header(FILE *out, const struct instr_session *s, enum instr_units u)
{
    char a[64], b[64];
    fprintf(out, "instr report (units: %s)\n", instr_units_name(u));
    for (size_t i = 0; i < s->ndumps; i++) {
        const struct instr_dump *d = &s->dumps[i];
        fprintf(out, "Program:    %s (pid %" PRIu64 ", ppid %" PRIu64 "%s)\n", d->hdr.exe_path, d->hdr.pid,
                d->hdr.ppid, (d->hdr.flags & INSTR_DUMP_FORK_CHILD) ? ", forked child" : "");
    }
    for (size_t i = 0; i < s->ndumps; i++) {
        /* A process that did not exit: say how it ended and what was cut. */
        const struct instr_dump *d = &s->dumps[i];
        uint64_t open = s->profiles[i].repairs.incomplete;
        if (d->hdr.flags & INSTR_DUMP_COMPLETE)
            continue;
        if (d->hdr.flags & INSTR_DUMP_SIGNALED)
            fprintf(out, "Ended:      pid %" PRIu64 " killed by signal %u (%s) in thread %u; %" PRIu64
                         " frame(s) still open, closed at the signal (incomplete)\n",
                    d->hdr.pid, d->hdr.end_signal, instr_signal_name(d->hdr.end_signal), d->hdr.end_signal_tid,
                    open);
        else
            fprintf(out, "Ended:      pid %" PRIu64 " did not finish (SIGKILL, _exit or still running); %" PRIu64
                         " frame(s) still open, closed at their thread's last event (incomplete)\n",
                    d->hdr.pid, open);
    }
    fprintf(out, "Threads:    %zu\n", s->nthreads);
    if (s->have_rate) {
        fprintf(out, "Duration:   %.3f ms\n", s->duration_ns / 1e6);
        for (size_t i = 0; i < s->ndumps; i++) {
            const struct instr_dump *d = &s->dumps[i];
            fprintf(out, "Tick rate:  %.6f GHz%s%s\n", d->tick_hz / 1e9,
                    (d->hdr.flags & INSTR_DUMP_TSC_INVARIANT) ? " (invariant TSC)"
                                                               : " (TSC not known invariant: times assume a constant rate)",
                    s->ndumps > 1 ? "" : "");
        }
    } else {
        fprintf(out, "Tick rate:  unknown (values in ticks)\n");
    }
    for (size_t i = 0; i < s->ndumps; i++) {
        const struct instr_dump *d = &s->dumps[i];
        char sees[400], unseen[400];
        instr_detector_text(d, sees, sizeof sees, unseen, sizeof unseen);
        char set[128];
        fprintf(out, "Detector:   %s", instr_detector_set_name(d, set, sizeof set));
        if (d->hdr.detector_detail[0])
            fprintf(out, " [%s]", d->hdr.detector_detail);
        if (s->ndumps > 1)
            fprintf(out, " (pid %" PRIu64 ")", d->hdr.pid);
        if (d->hdr.flags & INSTR_DUMP_NO_TRANSITIONS) {
            fputc('\n', out); /* nothing was watched: the Application line says so */
            continue;
        }
        fprintf(out, "\n  sees:     %s\n", sees);
        if (unseen[0])
            fprintf(out, "  not seen: %s\n", unseen);
    }
    const struct instr_repairs *r = &s->repairs;
    uint64_t unwound = r->unwound[0] + r->unwound[1] + r->unwound[2] + r->unwound[3];
    fprintf(out,
            "Repairs:    unwound frames %" PRIu64 " (exception %" PRIu64 ", stack %" PRIu64 ", mismatch %" PRIu64
            ", other %" PRIu64 "); unmatched exits %" PRIu64 " (+%" PRIu64 " in the runtime); incomplete frames %" PRIu64
            "\n",
            unwound, r->unwound[1], r->unwound[2], r->unwound[3], r->unwound[0], r->unmatched_exits,
            s->header_unmatched, r->incomplete);
    if (s->dropped)
        fprintf(out, "Dropped:    %" PRIu64 " events\n", s->dropped);
    if (s->repairs.runtime_ticks) {
        instr_fmt_value(a, sizeof a, s->repairs.runtime_ticks, s->runtime_ns, u);
        fprintf(out, "Runtime:    %s %s in the runtime's own slow paths (first calls, new chunks), "
                     "charged to nobody\n", a, instr_units_name(u));
    }
    for (size_t i = 0; i < s->nwarnings; i++)
        fprintf(out, "Warning:    %s\n", s->warnings[i]);
    instr_fmt_value(a, sizeof a, s->total.ei, s->total_ns[0], u);
    instr_fmt_value(b, sizeof b, s->total.ai, s->total_ns[1], u);
    if (s->exclude && s->exclude->text)
        fprintf(out, "Not Application: %s (intervals with a matching function on the stack)\n", s->exclude->text);
    if (s->offcpu_exact)
        fprintf(out, "Off-CPU:    exact, from the thread's CPU clock read at each flagged hook "
                     "(--flagged shows it per function)\n");
    if (s->no_app) {
        fprintf(out, "Application: %s\n", instr_no_app_reason);
        snprintf(b, sizeof b, "n/a");
    }
    fprintf(out, "Totals:     Elapsed %s, Application %s (%s)\n\n", a, b, instr_units_name(u));
}

int instr_report_text(FILE *out, const struct instr_session *s, const struct instr_report_opts *o)
{
    enum instr_units u = s->have_rate ? o->units : INSTR_UNITS_TICKS;
    const struct instr_row *rows;
    size_t n;
    instr_view_rows(s, o->view, &rows, &n);
    if (o->limit && n > o->limit)
        n = o->limit;
    print_header(out, s, u);
    if (o->view >= INSTR_VIEW_CALLTREE)
        return instr_views_text(out, s, o, u);
    struct table t = {.ncols = 0};
    const struct instr_column *cols[MAX_COLS];
    for (size_t i = 0; i < instr_ncolumns && t.ncols < MAX_COLS; i++)
        if (instr_column_shown(&instr_columns[i], o->view, 0, s, o)) {
            cols[t.ncols] = &instr_columns[i];
            col(&t, instr_columns[i].title, (instr_columns[i].flags & INSTR_COL_LEFT) != 0);
        }
    t.nrows = n;
    t.cells = calloc(n * (size_t)t.ncols + 1, sizeof *t.cells);
    if (!t.cells)
        return INSTR_ENOMEM;
    int rc = 0;
    char buf[4096];
    for (size_t i = 0; i < n; i++) {
        char **c = &t.cells[i * (size_t)t.ncols];
        for (int k = 0; k < t.ncols; k++)
            if (!(c[k] = strdup(instr_column_cell(cols[k], buf, sizeof buf, s, &rows[i], u, 0))))
                rc = INSTR_ENOMEM;
    }
    if (!rc)
        print_table(out, &t);
    for (size_t i = 0; i < n * (size_t)t.ncols; i++)
        free(t.cells[i]);
    free(t.cells);
    return rc;
}
