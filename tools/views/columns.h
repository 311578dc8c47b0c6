/* columns.h - the one table of the table views' columns (functions,
 * threads, modules, processes), read by the text and CSV writers.
 *
 * A row says where a column shows (text views, CSV views), its titles, and
 * how its cell is made.  Adding a column is one row in columns.c.
 *
 * The text table shows by default the columns without INSTR_COL_MORE
 * whose values are known (Calls, Self %, the four values, the name: about
 * 60 characters before the name); -F/--columns names others, perf's way:
 * "ee,ee%,function" (these, in this order), "+ci,module" (the defaults and
 * these, in table order), "all" (every column whose values are known).
 */
#ifndef INSTR_COLUMNS_H
#define INSTR_COLUMNS_H

#include "report.h"

#define INSTR_VIEW_BIT(v) (1u << (v))

enum {
    INSTR_COL_APP = 1u << 0,     /* an Application value: n/a (text) or empty (CSV) without transition data */
    INSTR_COL_LEFT = 1u << 1,    /* text: left-aligned */
    INSTR_COL_FLAGGED = 1u << 2, /* text: only with --flagged */
    INSTR_COL_OFFCPU = 1u << 3,  /* text: only when off-CPU time was measured (cpuclock) */
    INSTR_COL_WALL = 1u << 5,    /* Wall Inclusive: text only with several threads (else it is EI);
                                    n/a or empty when unknown */
    INSTR_COL_CPU = 1u << 4,     /* a CPU value: text only when known (every dump ran cpuclock);
                                    empty in CSV when not */
    INSTR_COL_PROBE = 1u << 6,   /* text and CSV: only when the hooks' cost is known (compensate.h) */
    INSTR_COL_SELF = 1u << 7,    /* Self %: text and CSV only with a samples source (self-pct.h) */
    INSTR_COL_MORE = 1u << 8,    /* text: not in the default table (-F KEY or -F all shows it), so
                                    that the default fits a terminal */
    INSTR_COL_JOB = 1u << 9,     /* a value across a job's ranks (job.h): text and CSV only when some
                                    dump is a rank */
};

/* What a getter reads. */
struct instr_cell {
    const struct instr_row *r;
    enum instr_units u;
    int csv; /* the CSV form (else text) */
};

struct instr_column {
    const char *key;     /* its name in -F/--columns (one key per value, whatever the view) */
    const char *title;   /* text title; NULL: not in text */
    const char *csv;     /* CSV name ("%s": the unit); NULL: not in CSV */
    unsigned text_views; /* INSTR_VIEW_BIT of the text views showing it */
    unsigned csv_views;  /* ... of the CSV views */
    unsigned flags;      /* INSTR_COL_* */
    int csv_pos;         /* CSV columns are written by increasing csv_pos */
    /* The cell's text: in buf, or a string of the row. */
    const char *(*get)(char *buf, size_t len, const struct instr_cell *c);
};

extern const struct instr_column instr_columns[];
extern const size_t instr_ncolumns;

/* Whether column c shows in view v of the text (csv == 0) or CSV output. */
int instr_column_shown(const struct instr_column *c, enum instr_view v, int csv, const struct instr_session *s,
                       const struct instr_report_opts *o);
/* The text table's columns of view v into cols (at most max), for the
 * list of -F/--columns (NULL: the defaults).  Columns named in the list
 * show even where their values are unknown (their cells say n/a).  s NULL:
 * only checks the list's keys.  Returns how many, or -1 with err saying
 * which key this view does not have, and the keys it has. */
int instr_columns_pick(const char *list, enum instr_view v, const struct instr_session *s,
                       const struct instr_report_opts *o, const struct instr_column **cols, int max, char *err,
                       size_t errlen);
/* The cell of column c for row r (n/a or empty for unavailable values):
 * buf (at least 64 bytes; longer file names are cut) or a string of r. */
const char *instr_column_cell(const struct instr_column *c, char *buf, size_t len, const struct instr_session *s,
                              const struct instr_row *r, enum instr_units u, int csv);

#endif
