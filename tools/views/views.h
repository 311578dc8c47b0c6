/* views.h - the one table of views (--view NAME): what each is, which
 * dumps it applies to, the options it reads, and its writers.
 *
 * instr-report's option parser, --help, its warnings about options a view
 * does not read, the dispatch to a view's own front end (sampling dumps,
 * INSTR_SAMPLE runs) and the text, CSV and JSON reports read this table.
 * Adding a view of instrumented dumps is one new file (view-NAME.c: its
 * data and writers) and one row in views.c.  A row's index is the view's
 * value in struct instr_report_opts (enum instr_view names the first ones,
 * for the code that knows them: the table views' rows and columns).
 */
#ifndef INSTR_VIEWS_H
#define INSTR_VIEWS_H

#include <stdio.h>

#include "emit.h"
#include "report.h"

/* The dumps a view applies to. */
enum {
    INSTR_VIEW_ON_INSTRUMENTED = 1u << 0, /* instrumented dumps (instr-report's session) */
    INSTR_VIEW_ON_SAMPLED = 1u << 1,      /* sampling dumps (instr-sample; sample-cli.c) */
    INSTR_VIEW_ON_HYBRID = 1u << 2,       /* instrumented dumps with INSTR_SAMPLE samples (hybrid-cli.c) */
};

/* What a view reads and is. */
enum {
    INSTR_VIEW_ROWS = 1u << 0,  /* a table view: the session's rows in columns (columns.c); text and CSV
                                   read --limit and --flagged */
    INSTR_VIEW_FUNC = 1u << 1,  /* takes a function's name: --view NAME FUNC */
    INSTR_VIEW_DEPTH = 1u << 2, /* reads --depth and --threshold */
    INSTR_VIEW_LIMIT = 1u << 3, /* reads --limit in every format */
};

/* A view of the instrumented session as text (after the header) or CSV. */
typedef int (*instr_view_writer)(FILE *out, const struct instr_session *s, const struct instr_report_opts *o,
                                 enum instr_units u);
/* ... as its member of the JSON report (which also has every table view). */
typedef int (*instr_view_json)(struct instr_json *j, const struct instr_session *s,
                               const struct instr_report_opts *o);

struct instr_view_def {
    const char *name;
    const char *help;     /* its words in --help */
    unsigned dumps;       /* INSTR_VIEW_ON_* */
    unsigned flags;       /* INSTR_VIEW_* */
    instr_view_writer text, csv; /* NULL for table views (report-text.c, report-csv.c write them) */
    instr_view_json json;        /* NULL: no member of its own */
};

extern const struct instr_view_def instr_views[];
extern const size_t instr_nviews;

/* The view called name, or NULL. */
const struct instr_view_def *instr_view_find(const char *name);

/* The writers of the tree views (report-views.c, report-json.c). */
int instr_views_text(FILE *out, const struct instr_session *s, const struct instr_report_opts *o,
                     enum instr_units u);
int instr_views_csv(FILE *out, const struct instr_session *s, const struct instr_report_opts *o,
                    enum instr_units u);
int instr_json_calltree(struct instr_json *j, const struct instr_session *s, const struct instr_report_opts *o);
int instr_json_relations(struct instr_json *j, const struct instr_session *s, const struct instr_report_opts *o);
/* --view ranks (view-ranks.c). */
int instr_views_ranks_text(FILE *out, const struct instr_session *s, const struct instr_report_opts *o,
                           enum instr_units u);
int instr_views_ranks_csv(FILE *out, const struct instr_session *s, const struct instr_report_opts *o,
                          enum instr_units u);
int instr_json_ranks(struct instr_json *j, const struct instr_session *s, const struct instr_report_opts *o);
/* --view mpi (view-mpi.c). */
int instr_views_mpi_text(FILE *out, const struct instr_session *s, const struct instr_report_opts *o,
                         enum instr_units u);
int instr_views_mpi_csv(FILE *out, const struct instr_session *s, const struct instr_report_opts *o,
                        enum instr_units u);
int instr_json_mpi(struct instr_json *j, const struct instr_session *s, const struct instr_report_opts *o);

#endif
