/* formats.h - the one table of output formats (--format) and exports
 * (--export).
 *
 * main (its --help, its option checks), --diff and the fuzz harness read
 * this table; none of them knows a format by position.  Adding an export is
 * one new export-NAME.c with an instr_exporter (declared beside the others
 * in writers.h) and one row in formats.c; --help, the option checks, the
 * warnings about options it does not read and the fuzz harness follow.  An
 * export with options of its own describes them in its file (an
 * instr_export_options, export-options.h, declared below) and names them in
 * its row: instr-report's command line, --help and warnings follow.
 */
#ifndef INSTR_FORMATS_H
#define INSTR_FORMATS_H

#include "export-options.h"
#include "report.h"
#include "writers.h"

enum instr_format_kind {
    INSTR_FORMAT_REPORT, /* --format: a view of the session's values */
    INSTR_FORMAT_EXPORT, /* --export: another tool's format */
};

/* The report options a format reads besides -o (main warns
 * about the ones given that the chosen format does not read); an export's
 * own options are its row's options. */
enum {
    INSTR_USES_VIEW = 1u << 0,       /* --view, --depth, --threshold, --sort, --limit, --flagged */
    INSTR_USES_UNITS = 1u << 1,      /* --units, every unit */
    INSTR_USES_TICKS = 1u << 2,      /* --units ticks only (otherwise the format's own unit) */
};

struct instr_format {
    const char *name;
    const char *help;            /* a few words for --help */
    enum instr_format_kind kind;
    unsigned uses;               /* INSTR_USES_* */
    instr_exporter write;
    instr_diff_writer diff;      /* NULL: no --diff in this format */
    instr_walk_exporter walk;    /* exports of the call timeline: written while the session is
                                    built, in its one walk of each dump (write: from a built one) */
    const struct instr_export_options *options; /* its own options (export-options.h), or NULL */
    int not_for_terminal;        /* binary or a whole page: refused on a terminal without -o, as gzip does */
    instr_count_exporter counts; /* the export of count-mode dumps, or NULL: none */
};

/* The exports' own options (in their export-NAME.c). */
extern const struct instr_export_options instr_chrome_options, instr_folded_options, instr_html_options,
    instr_perfetto_options;

extern const struct instr_format instr_formats[];
extern const size_t instr_nformats;

/* The format of that kind called name, or NULL. */
const struct instr_format *instr_format_find(enum instr_format_kind kind, const char *name);
/* The names of that kind joined by sep (static storage). */
const char *instr_format_names(enum instr_format_kind kind, const char *sep);

#endif
