/* sample-cli.c - instr-report on sampling dumps: options in, report out,
 * one line on stderr for each problem. */
#include "sample-cli.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "output-file.h"
#include "report.h"
#include "sample-report.h"
#include "views.h"

enum { EXIT_OK = 0, EXIT_USAGE = 1, EXIT_INPUT = 2, EXIT_WARNED = 3 };

int instr_sample_cli(const struct instr_dump *dumps, size_t nd, const char *view, int format, const char *sort,
                     size_t limit, double threshold, const char *export, const char *outpath, const char *func,
                     size_t depth, unsigned build_flags)
{
    if (export && strcmp(export, "folded") && strcmp(export, "callgrind") && strcmp(export, "pprof")) {
        fprintf(stderr, "instr-report: --export %s is not available for sampling dumps (folded, callgrind, pprof)\n",
                export);
        return EXIT_USAGE;
    }
    /* the view table's order: the table views, then calltree, callers, callees */
    static const enum instr_sview table[] = {INSTR_SVIEW_FUNCTIONS, INSTR_SVIEW_THREADS, INSTR_SVIEW_MODULES,
                                             INSTR_SVIEW_PROCESSES};
    struct instr_sreport_opts o = {.format = format, .limit = limit, .threshold = threshold};
    const struct instr_view_def *vd = instr_view_find(view);
    int v = vd ? (int)(vd - instr_views) : -1;
    if (vd && (vd->dumps & INSTR_VIEW_ON_HYBRID) && !(vd->dumps & INSTR_VIEW_ON_SAMPLED)) {
        fprintf(stderr, "instr-report: --view %s places a sampling dump's samples on the instrumented dump of the same "
                        "process: give both (%s)\n", view, dumps[0].path);
        return EXIT_USAGE;
    }
    if (!vd || !(vd->dumps & INSTR_VIEW_ON_SAMPLED)) {
        fprintf(stderr, "instr-report: --view %s is not a view of sampling dumps\n", view);
        return EXIT_USAGE;
    }
    o.view = v < INSTR_VIEW_CALLTREE ? table[v] : INSTR_SVIEW_FUNCTIONS;
    for (size_t i = 0; i < nd; i++)
        if (!instr_dump_is_sampled(&dumps[i])) {
            fprintf(stderr, "instr-report: %s is an instrumented dump and %s a sampling dump: report them apart\n",
                    dumps[i].path, dumps[0].path == dumps[i].path ? dumps[1].path : dumps[0].path);
            return EXIT_USAGE;
        }
    char err[600];
    struct instr_sprofile p;
    /* pprof's locations carry source lines (go tool pprof -list). */
    unsigned flags = build_flags | (export && !strcmp(export, "pprof") ? INSTR_SPROFILE_LINES : 0);
    if (instr_sprofile_build(&p, dumps, nd, flags, err, sizeof err) < 0) {
        fprintf(stderr, "instr-report: %s\n", err);
        return EXIT_INPUT;
    }
    int status = EXIT_OK;
    if (v == 7 && (!sort || !strcmp(sort, "ei")))
        sort = "exclusive"; /* default: the functions the samples landed in */
    int sorted = instr_sprofile_sort(&p, sort);
    if (sorted == INSTR_ENOMEM) {
        fprintf(stderr, "instr-report: out of memory\n");
        instr_sprofile_free(&p);
        return EXIT_INPUT;
    }
    if (sorted < 0) {
        fprintf(stderr, "instr-report: unknown sort column '%s' for samples (inclusive, exclusive, name)\n", sort);
        instr_sprofile_free(&p);
        return EXIT_USAGE;
    }
    FILE *out = instr_output_open(outpath);
    if (!out) {
        fprintf(stderr, "instr-report: %s: %s\n", outpath, strerror(errno));
        instr_sprofile_free(&p);
        return EXIT_USAGE;
    }
    int rc = export ? (!strcmp(export, "folded")  ? instr_sreport_folded(out, &p)
                       : !strcmp(export, "pprof") ? instr_sreport_pprof(out, &p)
                                                  : instr_sreport_callgrind(out, &p))
             : v == INSTR_VIEW_CALLTREE ? instr_sreport_calltree(out, &p, &o, depth)
             : v == INSTR_VIEW_LINES    ? instr_sreport_lines(out, &p, dumps, nd, &o)
             : v >= INSTR_VIEW_CALLERS  ? instr_sreport_relations(out, &p, &o, func, v == INSTR_VIEW_CALLERS)
                      : instr_sreport_write(out, &p, &o);
    if (rc == INSTR_EARG) {
        fprintf(stderr, "instr-report: no sampled function is named '%s'\n", func);
        instr_output_close(out, 0);
        instr_sprofile_free(&p);
        return EXIT_USAGE;
    }
    if (rc < 0 || fflush(out) != 0 || ferror(out)) {
        fprintf(stderr, "instr-report: %s\n", rc < 0 ? instr_tool_strerror(rc) : "write error");
        status = EXIT_INPUT;
    } else {
        for (size_t i = 0; i < nd; i++)
            for (size_t k = 0; k < dumps[i].nwarnings; k++) {
                fprintf(stderr, "instr-report: warning: %s: %s\n", dumps[i].path, dumps[i].warnings[k]);
                status = EXIT_WARNED;
            }
        for (size_t k = 0; k < p.nwarnings; k++) {
            fprintf(stderr, "instr-report: warning: %s\n", p.warnings[k]);
            status = EXIT_WARNED;
        }
    }
    if (instr_output_close(out, status != EXIT_INPUT) < 0 && status != EXIT_INPUT) {
        fprintf(stderr, "instr-report: write error: %s\n", strerror(errno));
        status = EXIT_INPUT;
    }
    instr_sprofile_free(&p);
    return status;
}

int instr_sample_diff_cli(const struct instr_dump *a, const struct instr_dump *b, int format, const char *sort,
                          double threshold, const char *outpath)
{
    if (!instr_dump_is_sampled(a) || !instr_dump_is_sampled(b)) {
        fprintf(stderr, "instr-report: --diff compares two sampling dumps or two instrumented ones, not one of each\n");
        return EXIT_USAGE;
    }
    char err[600];
    struct instr_sprofile p[2];
    if (instr_sprofile_build(&p[0], a, 1, 0, err, sizeof err) < 0) {
        fprintf(stderr, "instr-report: %s\n", err);
        return EXIT_INPUT;
    }
    if (instr_sprofile_build(&p[1], b, 1, 0, err, sizeof err) < 0) {
        fprintf(stderr, "instr-report: %s\n", err);
        instr_sprofile_free(&p[0]);
        return EXIT_INPUT;
    }
    int status = EXIT_OK;
    FILE *out = instr_output_open(outpath);
    if (!out) {
        fprintf(stderr, "instr-report: %s: %s\n", outpath, strerror(errno));
        status = EXIT_USAGE;
    } else {
        int rc = instr_sreport_diff(out, &p[0], &p[1], format, sort, threshold);
        if (rc == INSTR_EARG) {
            fprintf(stderr, "instr-report: --diff of sampling dumps sorts by inclusive or exclusive\n");
            status = EXIT_USAGE;
        } else if (rc < 0 || fflush(out) != 0 || ferror(out)) {
            fprintf(stderr, "instr-report: %s\n", rc < 0 ? instr_tool_strerror(rc) : "write error");
            status = EXIT_INPUT;
        } else if (p[0].nwarnings || p[1].nwarnings || a->nwarnings || b->nwarnings) {
            for (int k = 0; k < 2; k++)
                for (size_t i = 0; i < p[k].nwarnings; i++)
                    fprintf(stderr, "instr-report: warning: %s\n", p[k].warnings[i]);
            status = EXIT_WARNED;
        }
        if (instr_output_close(out, status == EXIT_OK || status == EXIT_WARNED) < 0 &&
            (status == EXIT_OK || status == EXIT_WARNED)) {
            fprintf(stderr, "instr-report: write error: %s\n", strerror(errno));
            status = EXIT_INPUT;
        }
    }
    instr_sprofile_free(&p[0]);
    instr_sprofile_free(&p[1]);
    return status;
}
