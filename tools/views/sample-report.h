/* sample-report.h - the sampling values of data-values.md § Sampling.
 *
 * For each sample (a STACK record, weight w), every distinct function on
 * its stack gets w inclusive samples and the function on top w exclusive
 * samples; the same for modules (distinct modules on the stack, the top
 * frame's module), and the sample's thread and process get w of both.
 * Inclusive % = 100 x inclusive / total samples, Exclusive % likewise.
 * Functions are (module path, demangled name) across processes; an address
 * without a symbol is named after its module ("[libfoo.so]"), one outside
 * every mapping "[unknown]".  Library code: never prints or exits.
 */
#ifndef INSTR_SAMPLE_REPORT_H
#define INSTR_SAMPLE_REPORT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "dump-reader.h"

struct instr_srow {
    char *name;          /* function, module path, "tid NAME", "pid EXE" */
    const char *module;  /* functions: module path ("" if none) */
    uint64_t pid, tid;   /* threads, processes */
    const char *thread;  /* threads: the thread's own name (the dump's; NULL if none) */
    uint64_t cpu_ns;     /* threads, processes: CPU time while sampled (0 = unknown) */
    uint64_t incl, excl; /* samples */
    uint64_t stamp;      /* the last sample that counted it (distinctness) */
};

/* A distinct stack of one thread: function rows root first, pool[off ..
 * off + len).  Views that merge threads add up the stacks of each. */
struct instr_sstack {
    uint64_t hash; /* 0 = an empty slot of the table */
    size_t off, len;
    uint64_t samples;
    uint32_t thread; /* its row in rows[INSTR_SVIEW_THREADS] */
};

enum instr_sview { INSTR_SVIEW_FUNCTIONS, INSTR_SVIEW_MODULES, INSTR_SVIEW_THREADS, INSTR_SVIEW_PROCESSES };

/* A source line of a function row (a build with INSTR_SPROFILE_LINES):
 * where the frames of the stacks are, a location as pprof has them. */
struct instr_sloc {
    uint32_t fn;      /* function row */
    int line;         /* 0: no line information */
    const char *file; /* the line table's path; NULL: none */
};

#define INSTR_SPROFILE_LINES 1u /* keep each frame's source line (lpool, locs) */
#define INSTR_SPROFILE_CLONES_SPLIT 2u /* GCC's clones (foo.constprop.0) rows of their own; else each is
                                          its source function's (instr_name_origin) */

struct instr_sprofile {
    struct instr_srow *rows[4]; /* per enum instr_sview */
    size_t nrows[4], caprows[4];
    uint64_t total;       /* samples (weights summed) */
    uint64_t records;     /* STACK records */
    uint64_t lost;        /* samples the kernel could not record */
    uint64_t truncated;   /* samples whose stack was cut */
    uint64_t fp_stacks;   /* samples unwound from the kernel's frame-pointer chain */
    uint64_t bad_chunks;  /* sample chunks that ended on invalid bytes */
    uint64_t cpu_ns;      /* CPU time of the sampled threads */
    uint64_t rate_hz;     /* asked (the first dump's SAMPLING record) */
    uint64_t stack_bytes;
    const char *unwinder; /* from the first dump that says */
    const char *program;  /* first dump's executable */
    size_t nprocesses, nthreads;
    size_t cut;           /* processes still running when sampling stopped (INSTR_DUMP_SAMPLING_CUT) */
    /* pc -> function row cache */
    struct scache *cache;
    size_t cache_mask, cache_used;
    /* function/module name index */
    struct sname *names;
    size_t names_mask, names_used;
    char **warnings;
    size_t nwarnings;
    /* distinct stacks (function rows, root first) with their samples */
    struct instr_sstack *stacks; /* hash table: stacks_mask + 1 slots */
    size_t stacks_mask, nstacks;
    uint32_t *pool; /* the rows of every stack, back to back */
    size_t npool, cappool;
    /* INSTR_SPROFILE_LINES: the location of each frame, beside pool (stacks
     * are then distinct by their locations); NULL otherwise */
    uint32_t *lpool;
    size_t caplpool;
    struct instr_sloc *locs;
    size_t nlocs, caplocs;
    struct sname *loc_table; /* location index (open addressing) */
    size_t loc_mask;
    int clones_split;   /* INSTR_SPROFILE_CLONES_SPLIT */
    struct instr_line_tables *lines;
};

/* The next distinct stack of p's table after slot *i (start with *i = 0),
 * or NULL at the end. */
const struct instr_sstack *instr_sstack_next(const struct instr_sprofile *p, size_t *i);

/* 100 x v / total (0 when total is 0). */
double instr_spct(uint64_t v, uint64_t total);

/* The values of one row in format 0 (text: "INCL  EXCL  INCL%  EXCL%",
 * fixed widths), 1 (CSV: ",INCL,EXCL,INCL%,EXCL%") or 2 (JSON members,
 * each after a comma): the part every sampling table shares. */
void instr_svalues_write(FILE *f, int format, uint64_t incl, uint64_t excl, uint64_t total);

/* Builds the profile of nd sampling dumps (flags: INSTR_SPROFILE_*).  0,
 * or a negative INSTR_E* with a reason in err. */
int instr_sprofile_build(struct instr_sprofile *p, const struct instr_dump *dumps, size_t nd, unsigned flags,
                         char *err, size_t errlen);
void instr_sprofile_free(struct instr_sprofile *p);

/* Sorts every table: "inclusive" (default), "exclusive", "name"; -1 if the
 * column is unknown. */
int instr_sprofile_sort(struct instr_sprofile *p, const char *column);

struct instr_sreport_opts {
    enum instr_sview view;
    int format;       /* 0 text, 1 csv, 2 json */
    size_t limit;     /* rows (text, csv); 0 = all */
    double threshold; /* hide rows whose Inclusive % is below */
};

/* Writes the report.  0, or a negative INSTR_E* code. */
int instr_sreport_write(FILE *out, const struct instr_sprofile *p, const struct instr_sreport_opts *o);

/* Folded stacks (flamegraph.pl, inferno, speedscope): one line per
 * distinct stack, root first, ';'-separated, then its samples. */
int instr_sreport_folded(FILE *out, const struct instr_sprofile *p);

/* The call tree (sample-views.c): text, CSV or JSON per o->format; depth
 * 0 = all levels, threshold hides paths below that Inclusive %. */
int instr_sreport_calltree(FILE *out, const struct instr_sprofile *p, const struct instr_sreport_opts *o, size_t depth);
/* Callers (callers = 1) or callees of the functions named func (demangled
 * name, or the name without its parameters).  INSTR_EARG if none has that
 * name. */
int instr_sreport_relations(FILE *out, const struct instr_sprofile *p, const struct instr_sreport_opts *o,
                            const char *func, int callers);

/* Callgrind format with one event, Samples (sample-views.c): exclusive
 * samples per function, inclusive samples per call edge. */
int instr_sreport_callgrind(FILE *out, const struct instr_sprofile *p);

/* The gzip'd profile.proto of pprof (export-pprof.c): samples and cpu
 * nanoseconds per distinct stack; source lines when p was built with
 * INSTR_SPROFILE_LINES. */
int instr_sreport_pprof(FILE *out, const struct instr_sprofile *p);

/* --diff A B (sample-diff.c): Inclusive/Exclusive % per function in each
 * run and the change, by the absolute change of sort ("inclusive",
 * "exclusive"; NULL = inclusive), hiding changes below threshold points.
 * INSTR_EARG for another sort column. */
int instr_sreport_diff(FILE *out, const struct instr_sprofile *a, const struct instr_sprofile *b, int format,
                       const char *sort, double threshold);

/* --view lines (sample-lines.c): samples per source line (DWARF line
 * tables, libdw) of the first o->limit functions of p (10 if 0) as sorted;
 * text, CSV or JSON per o->format.  p must be built from dumps. */
int instr_sreport_lines(FILE *out, const struct instr_sprofile *p, const struct instr_dump *dumps, size_t nd,
                        const struct instr_sreport_opts *o);

/* 1 if d is a sampling dump. */
int instr_dump_is_sampled(const struct instr_dump *d);

#endif
