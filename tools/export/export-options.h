/* export-options.h - the options an export reads besides the report's
 * (--weight, --time-range...), each export owning its own.
 *
 * An export with options keeps them in a struct of its own, private to its
 * file, and describes them with a struct instr_export_options that its row
 * of the format table (formats.c) points to.  instr-report builds its
 * command line, --help, the "does nothing without --export NAME" warnings
 * and the -o FILE check from those descriptions; the export receives its
 * struct as instr_report_opts.export_opts (NULL: its defaults, as the fuzz
 * harness calls it).  Options shared by several exports (the timeline's
 * --time-range, --min-duration) are described once here, and write into a
 * struct instr_timeline_opts that each of those exports' structs begins
 * with.
 */
#ifndef INSTR_EXPORT_OPTIONS_H
#define INSTR_EXPORT_OPTIONS_H

#include <stddef.h>

struct instr_session;

enum {
    INSTR_OPT_NEEDS_FILE = 1u << 0, /* a usage error (not a warning) unless this export writes to -o FILE */
};

/* One option, --name VALUE (or --name alone when arg is NULL). */
struct instr_option {
    const char *name;  /* without "--" */
    const char *arg;   /* its value's name in --help; NULL: it takes none */
    const char *help;  /* --help words, after the names of the exports reading it; '\n' goes on a new line */
    int (*parse)(void *opts, const char *value); /* into the export's struct: 0, or -1 for a bad value */
    unsigned flags;    /* INSTR_OPT_* */
};

/* The options of one export. */
struct instr_export_options {
    const struct instr_option *const *list; /* NULL-terminated */
    size_t size;                            /* of the export's struct */
    const void *defaults;                   /* its values when no option is given */
    /* Why the export refused to write (it returned INSTR_EARG) when that is
     * about its options; NULL (or a NULL answer): the input has no tick rate. */
    const char *(*refused)(const void *opts, const struct instr_session *s);
};

/* The timeline's options (chrome, html): their structs begin with this. */
struct instr_timeline_opts {
    double from_us, to_us; /* keep what overlaps [from, to] µs since the session start; to < 0: to the end */
    double min_dur_us;     /* leave out calls shorter than this, µs */
    int chosen;            /* --time-range or --min-duration given: the user chose what to leave out
                              (chrome then thins nothing by default) */
};
#define INSTR_TIMELINE_OPTS_DEFAULT {0, -1, 0, 0}
extern const struct instr_option instr_opt_time_range, instr_opt_min_duration;

/* v as a number >= min (whole string).  0, or -1. */
int instr_opt_double(const char *v, double *out, double min);

#endif
