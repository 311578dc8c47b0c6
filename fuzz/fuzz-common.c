/* fuzz-common.c - in-memory files and the full read pass (fuzz-common.h). */
#define _GNU_SOURCE
#include "fuzz-common.h"

#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>

#include "count-report.h"
#include "dump-reader.h"
#include "formats.h"
#include "report.h"
#include "text-trace.h"
#include "views.h"

const char *instr_fuzz_file(int slot, const uint8_t *data, size_t size)
{
    static int fd[2] = {-1, -1};
    static char path[2][64];
    if (fd[slot] < 0) {
        fd[slot] = memfd_create("instr-fuzz", MFD_CLOEXEC);
        if (fd[slot] < 0)
            return NULL;
        snprintf(path[slot], sizeof path[slot], "/proc/self/fd/%d", fd[slot]);
    }
    if (ftruncate(fd[slot], 0) < 0)
        return NULL;
    for (size_t off = 0; off < size;) {
        ssize_t n = pwrite(fd[slot], data + off, size - off, (off_t)off);
        if (n <= 0)
            return NULL;
        off += (size_t)n;
    }
    return path[slot];
}

void instr_fuzz_read_dump(const char *path)
{
    static FILE *null;
    if (!null && !(null = fopen("/dev/null", "w")))
        return;
    struct instr_dump d;
    char err[600];
    if (instr_dump_open(&d, path, err, sizeof err) < 0)
        return;
    size_t nbad;
    instr_text_write(null, &d, &nbad, err, sizeof err);
    if (instr_dump_is_counted(&d)) {
        /* A count-mode dump: its report and the rows with a count export. */
        const char *why;
        instr_count_report(&d, 1, "functions", NULL, 0, "json", 0, null, &why);
        for (size_t f = 0; f < instr_nformats; f++)
            if (instr_formats[f].counts)
                instr_count_export(&d, 1, 0, instr_formats[f].counts, null);
    }
    struct instr_session s;
    if (instr_session_build(&s, &d, 1, err, sizeof err) == 0) {
        /* Every row of the format table: reports in every table view,
         * exports (timelines, trees, names in other syntaxes) once. */
        for (size_t f = 0; f < instr_nformats; f++) {
            const struct instr_format *fm = &instr_formats[f];
            int report = fm->kind == INSTR_FORMAT_REPORT;
            for (int v = INSTR_VIEW_FUNCTIONS; v <= (report ? INSTR_VIEW_PROCESSES : INSTR_VIEW_FUNCTIONS); v++) {
                /* Reports: each view in another unit (ticks, ns, us, ms), so
                 * every format writes every unit; exports in ns. */
                struct instr_report_opts o = {.units = report ? (enum instr_units)(v % 4) : INSTR_UNITS_NS,
                                              .view = (enum instr_view)v, .flagged = report};
                fm->write(null, &s, &o);
            }
        }
        /* The views with writers of their own and no argument (a job's
         * ranks, its MPI calls), in text, CSV and JSON. */
        for (size_t v = 0; v < instr_nviews; v++) {
            const struct instr_view_def *vd = &instr_views[v];
            if (!vd->text || (vd->flags & (INSTR_VIEW_FUNC | INSTR_VIEW_DEPTH)))
                continue;
            struct instr_report_opts o = {.units = (enum instr_units)(v % 4)};
            vd->text(null, &s, &o, o.units);
            vd->csv(null, &s, &o, o.units);
            if (vd->json) {
                struct instr_json j;
                instr_json_init(&j, null);
                instr_json_open(&j, NULL, '{', INSTR_JSON_LINES);
                vd->json(&j, &s, &o);
                instr_json_close(&j);
            }
        }
        instr_session_sort(&s, "name");
        instr_session_free(&s);
    }
    instr_dump_close(&d);
}
