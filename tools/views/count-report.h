/* count-report.h - the report of count-mode dumps (plugin mode=count):
 * exact calls per function and per call edge, no time. */
#ifndef INSTR_COUNT_REPORT_H
#define INSTR_COUNT_REPORT_H

#include <stdint.h>
#include <stdio.h>

#include "dump-reader.h"

/* The calls of count dumps, summed by function (keyed by mangled name). */
struct instr_count_fn {
    char *name;        /* mangled */
    char *display;     /* demangled, or the name */
    const char *file;
    uint64_t line;
    uint64_t calls;    /* entries (0: only known as a callee) */
    int instrumented;  /* had an FN_CALLS record */
    uint64_t samples;  /* exclusive samples (Self %), if sampling dumps were given */
    uint64_t counted_in; /* the calls of the counted edges into it */
};

struct instr_count_edge {
    size_t caller, callee; /* indices into fns */
    uint64_t calls;
};

struct instr_count_graph {
    struct instr_count_fn *fns;
    size_t nfns, capf;
    struct instr_count_edge *edges;
    size_t nedges, cape;
    /* Self %: the sampling dumps' samples of the program's own code, and
     * of those the ones in a counted function (0 samples: no column). */
    uint64_t samples, matched;
    size_t sampled;
    const char *program; /* the first count dump's program path */
    int clones_split;    /* --clones=split: GCC's clones rows of their own; 0: folded into
                            their source function's row (as the time report does) */
};

/* The name of the callee of a caller's calls through pointers. */
#define INSTR_COUNT_INDIRECT_NAME "[indirect call]"

/* The graph of the count dumps among dumps[0..nd), GCC's clones folded
 * unless clones_split: 0 or INSTR_ENOMEM (g then freed). */
int instr_count_graph_build(struct instr_count_graph *g, const struct instr_dump *dumps, size_t nd, int clones_split);
void instr_count_graph_free(struct instr_count_graph *g);
/* The calls into function k that no counted edge explains: from code that
 * was not instrumented, or through pointers. */
uint64_t instr_count_uncounted_in(const struct instr_count_graph *g, size_t k);

/* Whether d was written in count mode (INSTR_DUMP_COUNTS). */
int instr_dump_is_counted(const struct instr_dump *d);

/* The calls of dumps[0..nd) summed by function name, written to out in
 * format "text", "json" or "csv" (tools/README-json.md): view "functions"
 * (the table, then each function's callers and callees), "callers" or
 * "callees" of func.  Returns 0, INSTR_EARG (a view that needs time, or
 * func unknown: *why says which) or INSTR_ENOMEM. */
int instr_count_report(const struct instr_dump *dumps, size_t nd, const char *view, const char *func,
                       size_t limit, const char *format, int clones_split, FILE *out, const char **why);

/* The count dumps among dumps[0..nd) written to out by an export's
 * count writer (formats.h: the row's counts).  0 or its error. */
int instr_count_export(const struct instr_dump *dumps, size_t nd, int clones_split,
                       int (*write)(FILE *out, const struct instr_count_graph *g), FILE *out);

/* --diff of two count-mode dumps: each function's calls in a and in b
 * (matched by mangled name), most changed first, in format "text", "json"
 * or "csv".  0, INSTR_EARG (an input not a count dump: *why) or
 * INSTR_ENOMEM. */
int instr_count_diff(const struct instr_dump *a, const struct instr_dump *b, const char *format, int clones_split,
                     FILE *out, const char **why);

#endif
