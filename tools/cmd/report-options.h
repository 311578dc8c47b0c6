/* report-options.h - instr-report's command line: what it asks for
 * (struct cli), read from argv with GNU getopt_long, its --help, and the
 * warnings for options the chosen view or format does not read.  The
 * exports' own options come from the format table (export-options.h). */
#ifndef INSTR_REPORT_OPTIONS_H
#define INSTR_REPORT_OPTIONS_H

#include <stdio.h>

#include "exclusions.h"
#include "formats.h"
#include "report.h"

#define PROG "instr-report"

enum { EXIT_OK = 0, EXIT_USAGE = 1, EXIT_INPUT = 2, EXIT_WARNED = 3 };

/* The report's options, by getopt value; GIVEN(o): its bit in cli.given. */
enum opt {
    OPT_VIEW = 256, OPT_DEPTH, OPT_THRESHOLD, OPT_SORT, OPT_UNITS, OPT_FORMAT, OPT_LIMIT, OPT_FLAGGED,
    OPT_NOT_APP, OPT_EXPORT, OPT_DIFF, OPT_VERSION, OPT_CLEAR_CACHE,
    OPT_OS_EVENTS,
    OPT_RAW, OPT_COMPENSATE,
    OPT_SUGGEST_EXCLUDE,
    OPT_SELF,
    OPT_COLUMNS, OPT_VERBOSE,
    OPT_CLONES,
    OPT_MPI_PREFIXES,
    OPT_WALL,
};
#define GIVEN(o) (1u << ((o) - OPT_VIEW))

#define MAX_XOPTS 64
#define MAX_VIEWS 8 /* in one --view list */

/* What the command line asks for. */
struct cli {
    struct instr_report_opts o;
    enum instr_view views[MAX_VIEWS];  /* --view A,B,... (default: functions); o.views points here */
    const struct instr_format *format; /* --format, or --export when export is set */
    int export;                        /* --export given */
    int diff;                          /* --diff A B */
    const char *sort;                  /* --sort, default ei */
    const char *outpath;               /* -o; NULL: standard output */
    struct instr_exclusions excl;      /* --not-application, --os-events, --clones, --mpi-prefixes */
    int raw;                           /* --raw: the hook costs stay in the values (compensate.h) */
    unsigned given;                    /* GIVEN(OPT_*) of the options given */
    unsigned char xgiven[MAX_XOPTS];   /* xopts[i] given */
    void *xo[32];                      /* per row of the format table: its export's options, or NULL */
    double suggest_pct;                /* --suggest-exclude=PCT (with GIVEN(OPT_SUGGEST_EXCLUDE)) */
    const char *self;                  /* --self=SAMPLEDUMP: Self % from it (self-pct.h) */
    int self_shown;                    /* the report had a Self % source */
    char **paths;                      /* the inputs */
    size_t npaths;
};

/* Fills c from argv.  Returns 0 to go on, 1 when done (--help, --version),
 * -1 on a usage error (said on stderr). */
int report_parse_args(struct cli *c, int argc, char **argv);
/* Options given that the chosen view or format does not read: a warning
 * each (the report is still written). */
void report_warn_unused(const struct cli *c);
/* The options a report of count-mode dumps does not read, each said once. */
void report_warn_count(const struct cli *c);
/* Whether an option writing parts of -o FILE (--split-size) was given. */
int report_parts_asked(const struct cli *c);
void report_free_cli(struct cli *c);

#endif
