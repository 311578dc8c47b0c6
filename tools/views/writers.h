/* writers.h - the writers of the out layer: reports (text, CSV, JSON), the
 * tree views' text and CSV, the exports.  The format table (formats.h)
 * names them; report.h (the core) does not know them.
 */
#ifndef INSTR_WRITERS_H
#define INSTR_WRITERS_H

#include <stdio.h>

#include "emit.h"
#include "report.h"

/* Exporters: one per format, same signature. */
typedef int (*instr_exporter)(FILE *out, const struct instr_session *s, const struct instr_report_opts *o);
int instr_report_text(FILE *out, const struct instr_session *s, const struct instr_report_opts *o);
int instr_report_csv(FILE *out, const struct instr_session *s, const struct instr_report_opts *o);
int instr_report_json(FILE *out, const struct instr_session *s, const struct instr_report_opts *o);
/* --diff A B in one format: the per-function changes (diff.c, a view:
 * it sits below the format table, so its writers are declared here). */
typedef int (*instr_diff_writer)(FILE *out, const struct instr_session *a, const struct instr_session *b,
                                 const char *column, double threshold, enum instr_units u);

int instr_diff_text(FILE *out, const struct instr_session *a, const struct instr_session *b, const char *column,
                    double threshold, enum instr_units u);
int instr_diff_csv(FILE *out, const struct instr_session *a, const struct instr_session *b, const char *column,
                   double threshold, enum instr_units u);
int instr_diff_json(FILE *out, const struct instr_session *a, const struct instr_session *b, const char *column,
                    double threshold, enum instr_units u);
/* Exchange formats (instr-report --export), same signature: */
int instr_export_visualiser(FILE *out, const struct instr_session *s, const struct instr_report_opts *o);
int instr_export_chrome(FILE *out, const struct instr_session *s, const struct instr_report_opts *o);
int instr_export_callgrind(FILE *out, const struct instr_session *s, const struct instr_report_opts *o);
int instr_export_folded(FILE *out, const struct instr_session *s, const struct instr_report_opts *o);
int instr_export_pprof(FILE *out, const struct instr_session *s, const struct instr_report_opts *o);
int instr_export_html(FILE *out, const struct instr_session *s, const struct instr_report_opts *o);
int instr_export_perfetto(FILE *out, const struct instr_session *s, const struct instr_report_opts *o);
/* The exports of count-mode dumps (plugin mode=count: calls and call
 * edges, no time; count-report.h), for the formats where counts mean
 * something: */
struct instr_count_graph;
typedef int (*instr_count_exporter)(FILE *out, const struct instr_count_graph *g);
int instr_export_callgrind_counts(FILE *out, const struct instr_count_graph *g);
int instr_export_folded_counts(FILE *out, const struct instr_count_graph *g);
int instr_export_pprof_counts(FILE *out, const struct instr_count_graph *g);
/* What an export left out on its own (instr_report_opts.thinned): it keeps
 * the kept longest of calls, those of at least min_ns; kept < calls. */
struct instr_thinned {
    uint64_t calls;  /* calls of the timeline */
    uint64_t kept;   /* written */
    uint64_t min_ns; /* the shortest call kept, ns: every call of at least this kept, every shorter one left out */
    uint64_t cap;    /* the most it keeps by default */
};

/* chrome and visualiser as they run inside the session's build (one walk
 * of each dump, instr_session_build_observed): build s from dumps[0..n)
 * while writing out.  Returns the build's code (err says why); *wrc gets
 * the export's (INSTR_EARG: no tick rate, nothing written).  On success s
 * is built even when the export failed. */
typedef int (*instr_walk_exporter)(FILE *out, struct instr_session *s, const struct instr_dump *dumps, size_t n,
                                   const struct instr_exclusions *x, const struct instr_report_opts *o, int *wrc,
                                   char *err, size_t errlen);
int instr_export_perfetto_walk(FILE *out, struct instr_session *s, const struct instr_dump *dumps, size_t n,
                               const struct instr_exclusions *x, const struct instr_report_opts *o, int *wrc,
                               char *err, size_t errlen);
int instr_export_chrome_walk(FILE *out, struct instr_session *s, const struct instr_dump *dumps, size_t n,
                             const struct instr_exclusions *x, const struct instr_report_opts *o, int *wrc,
                             char *err, size_t errlen);
int instr_export_visualiser_walk(FILE *out, struct instr_session *s, const struct instr_dump *dumps, size_t n,
                                 const struct instr_exclusions *x, const struct instr_report_opts *o, int *wrc,
                                 char *err, size_t errlen);

/* The views' own writers are in views.h. */

#endif
