/* report.h - a session (one or more dumps) as rows, its call tree and
 * caller/callee views (the core layer; the writers are in writers.h).
 *
 * The session merges the per-process profiles: functions are identified
 * across processes by (module path, mangled name, file, line), modules by
 * path.  Values stay in ticks; each process's ticks are also converted to
 * nanoseconds with that process's own tick rate.  Percents use ticks and the
 * session totals of data-values.md (both exclusive percents divide by the
 * inclusive totals).
 */
#ifndef INSTR_REPORT_H
#define INSTR_REPORT_H

#include <stdio.h>

#include "axis.h"
#include "dump-reader.h"
#include "job.h"
#include "profile.h"

enum instr_units { INSTR_UNITS_TICKS, INSTR_UNITS_NS, INSTR_UNITS_US, INSTR_UNITS_MS };
enum instr_view { INSTR_VIEW_FUNCTIONS, INSTR_VIEW_THREADS, INSTR_VIEW_MODULES, INSTR_VIEW_PROCESSES,
                  INSTR_VIEW_CALLTREE, INSTR_VIEW_CALLERS, INSTR_VIEW_CALLEES,
                  INSTR_VIEW_LINES /* sampling dumps only */,
                  INSTR_VIEW_SAMPLES /* instrumented dumps with INSTR_SAMPLE samples (hybrid.c) */ };
#define INSTR_NUNITS (INSTR_UNITS_MS + 1)
/* A detector's pause (system calls unseen) under this share of a dump's
 * threads' time is no warning (session.c). */
#define INSTR_UNSEEN_MINOR_PCT 1.0
/* The units' names on the command line (--units), by value (units.c); the
 * views' names and the rest of what is known of them: views.h. */
extern const char *const instr_unit_names[INSTR_NUNITS];

struct instr_row {
    char *name;          /* demangled function, thread name, module path, program */
    char *mangled;       /* functions: the symbol */
    const char *module;  /* functions, modules: module path ("" if unknown) */
    const char *file;    /* functions: source file */
    uint64_t line;       /* functions: source line */
    uint64_t pid;        /* threads, processes */
    uint64_t tid;        /* threads */
    uint32_t index;      /* threads: thread index */
    uint64_t start_tick, end_tick; /* threads: first event, end */
    double start_ns, end_ns;       /* threads: relative to the process start (NAN without a rate) */
    struct instr_values v;         /* ticks */
    double ns[4];                  /* ei, ee, ai, ae in ns (NAN without a tick rate) */
    double flagged_ns;
    double offcpu_ns;   /* exact off-CPU time in flagged intervals (cpuclock backend) */
    double pct[6];                 /* ei%, ee%, ai%, ae%, then ci%, ce% (of Session CPU Inclusive) */
    double cpu_ns[2];              /* v.ci, v.ce in ns */
    double kind_ns[INSTR_OS_NKINDS]; /* v.kind_t in ns */
    uint64_t wall_t;               /* functions: Wall Inclusive, ticks (session-wall.c) */
    double wall_ns;                /* ... in ns */
    double alive_pct;              /* threads: first event to end, percent of the run's duration */
    uint32_t key;                  /* functions: the row's index before sorting (instr_session.func_rows) */
    int pseudo;                    /* functions: a pseudo-frame (an uninstrumented callee of a call site) */
    int name_shared;               /* functions: another row has this name in another module (text adds the module) */
    double ext_ns[2];              /* functions: external time (v.ext_ei, v.ext_ai) in ns */
    double po_ns;                  /* probe overhead (v.po) in ns */
    double self_pct;               /* functions: Self % (self-pct.h), when session.self.source is set */
    struct {                       /* functions of a job: Elapsed Inclusive across its ranks (job.h) */
        uint64_t min_t, mean_t, max_t;
        double min_ns, mean_ns, max_ns;
        int32_t max_rank;
    } spread;
};

/* Where Self % came from (self-pct.h) and its sampling error. */
struct instr_self {
    const char *source;   /* "plain-samples", "instrumented-samples", "in-run-samples"; NULL: none */
    char *inputs;         /* the sampling dumps' paths, ", "-joined, or NULL (in-run samples) */
    uint64_t samples;     /* the total the shares divide: samples kept */
    uint64_t matched;     /* of which credited to a function row */
    uint64_t runtime;     /* left out: the PC was inside instr's runtime */
    uint64_t kernel;      /* left out: the leaf was in the kernel */
    uint64_t other;       /* left out: not on a thread's stack (in-run: empty stack, the runtime's gaps) */
    uint64_t lost;        /* samples the kernel could not record */
    size_t ambiguous;     /* names of several rows (the share split by their Elapsed Exclusive) */
    double top_pct;       /* the largest Self % */
    double top_ci95;      /* its binomial 95 % half-width, 1.96 sqrt(p(1-p)/n), in points */
};

struct instr_session {
    const struct instr_dump *dumps;
    struct instr_profile *profiles;
    size_t ndumps;
    struct instr_row *functions, *threads, *modules, *processes;
    size_t nfunctions, nthreads, nmodules, nprocesses;
    struct instr_values total; /* ei = Session EI, ai = Session AI (ticks) */
    int offcpu_exact;          /* some dump measured off-CPU time (cpuclock backend) */
    int cpu_known;             /* every dump did: CPU values are known (else n/a, empty, null) */
    uint64_t offcpu_unknown;   /* flagged intervals without off-CPU ticks, counted on the CPU */
    /* Threads where a detector paused (sud over its budget) for less than
     * INSTR_UNSEEN_MINOR_PCT of their time: no warning (their values move
     * less than that), said under --verbose and in JSON. */
    unsigned unseen_minor_threads;
    double unseen_minor_ns, unseen_minor_life_ns; /* unseen, and those threads' lives */
    /* Time before a backend began watching a thread (perf's event opens
     * once the thread has run INSTR_PERF_AFTER), the kinds, the threads,
     * and all the session's threads' time: the Unwatched: line. */
    double notyet_ns, notyet_life_ns;
    unsigned notyet_threads, notyet_kinds;
    double total_cpu_ns;       /* total.ci (Session CPU Inclusive) in ns */
    int wall_on;               /* profiles record Wall Inclusive (several threads; else it is EI): 1
                                  segments, 2 one process's threads merged in time order */
    int wall_known;            /* Wall Inclusive computed (else unknown: too many activations, no memory) */
    const char *wall_why;      /* Wall unknown, for a reason said so (the MPI report); also unknown
                                  when axis.nhosts > 1: several hosts' ticks are not one clock */
    uint64_t total_wall_t;     /* Session Wall Inclusive: time with some stack non-empty, ticks */
    double total_wall_ns;
    double total_ns[2];        /* the same in ns */
    struct instr_repairs repairs;
    struct instr_compensation comp; /* summed over the dumps: known/applied if any dump's was */
    double comp_ns;            /* comp.ticks in ns */
    double comp_unpaid_ns;     /* comp.unpaid in ns */
    uint64_t dropped;          /* events lost: the header count (DROPPED events say where) */
    uint64_t dropped_calls;    /* of them, calls of instrumented functions (ENTER events), the headers' count */
    uint64_t dropped_sites;    /* and calls at call sites (CALL events; one of an instrumented callee is
                                  both) */
    double runtime_ns;         /* the runtime's own slow work, skipped (charged to nobody) */
    double unrecorded_ns;      /* after the last event of threads whose record was cut (repairs.cut_threads) */
    uint64_t header_unmatched; /* exits the runtime could not match */
    int have_rate;             /* every dump has a tick rate */
    double duration_ns;        /* from the earliest start to the latest end */
    char **warnings;           /* dump warnings prefixed with the file, bad chunks */
    size_t nwarnings;
    size_t nnotes;             /* of the warnings, those that leave the data whole (a clock that
                                  went back): not a damaged input (exit status 0) */
    int cache_said;            /* a refusal of the profile cache is among the notes (said once) */
    uint64_t events;
    uint32_t **func_rows;      /* [dump][profile function] -> function row key */
    uint32_t *row_of_key;      /* function row key -> index in functions (after the last sort) */
    const struct instr_exclusions *exclude; /* --not-application, or NULL */
    int no_app;                /* some input has no transition data (INSTR_DUMP_NO_TRANSITIONS):
                                  Application values are unavailable, printed n/a / null */
    struct instr_self self;    /* Self % of the function rows (self-pct.h); source NULL: none */
    struct instr_job *job;     /* the dumps as a job's ranks (job.h); NULL: no dump is a rank */
    struct instr_axis axis;    /* the processes on one time axis (axis.h) */
};

/* Wall Inclusive of the function rows and of the session, and each
 * thread's share of the run (session-wall.c), once the rows exist. */
int instr_session_wall(struct instr_session *s);
/* Whether the profiles must record Wall Inclusive: several threads. */
int instr_session_wants_wall(const struct instr_dump *dumps, size_t n);

/* Walks a session's dumps elsewhere: the MPI report (instr-report-mpi),
 * whose ranks walk a share each and send rank 0 their profiles.  walk
 * fills profiles[0..n) of dumps[0..n) walked with opts (no exclusions, no
 * observer, no Wall segments): 0, or < 0 with err; 1: not here, walk them
 * as usual.  Set once by the MPI front end; NULL otherwise. */
struct instr_session_remote {
    int (*walk)(void *ctx, const struct instr_dump *dumps, size_t n, const struct instr_profile_opts *opts,
                struct instr_profile *profiles, char *err, size_t errlen);
    void *ctx;
    const char *wall_why; /* why Wall Inclusive is then unknown */
};
extern struct instr_session_remote instr_session_remote;

/* The threads that walk a session's dumps at once: INSTR_REPORT_THREADS, or
 * the processors online; at most ndumps and 64. */
unsigned instr_session_threads(size_t ndumps);
/* Builds profiles and rows for dumps[0..n).  The dumps must outlive s. */
int instr_session_build(struct instr_session *s, const struct instr_dump *dumps, size_t n, char *err,
                        size_t errlen);
/* How dump i's process ended when it did not finish but its record stops
 * in a call that does not return (exec, _exit, daemon, MPI_Abort:
 * model/endings.c): 1 and the words in buf, else 0. */
int instr_session_ending(const struct instr_session *s, size_t i, char *buf, size_t len);
/* That call's name ("MPI_Abort", "execvp"...), NULL when there is none. */
const char *instr_session_ending_call(const struct instr_session *s, size_t i);

/* The same with exclusions from Application time (x must outlive s). */
int instr_session_build_excluding(struct instr_session *s, const struct instr_dump *dumps, size_t n,
                                  const struct instr_exclusions *x, char *err, size_t errlen);
/* The same, the walk of each dump also feeding a timeline observer (the
 * chrome and visualiser exports: one walk for the session and the export):
 * dump_begin(ctx, i, p) before dump i is walked into p (p's threads fill
 * as they are walked), then tl's callbacks with p's indices. */
struct instr_session_observer {
    void *ctx;
    int (*dump_begin)(void *ctx, size_t dump, const struct instr_profile *p);
    struct instr_timeline tl;
};
int instr_session_build_observed(struct instr_session *s, const struct instr_dump *dumps, size_t n,
                                 const struct instr_exclusions *x, const struct instr_session_observer *obs,
                                 char *err, size_t errlen);
/* Walks the dumps of a built session again, feeding obs (an export of the
 * call timeline written from a built session).  Returns the first error. */
int instr_session_rewalk(const struct instr_session *s, const struct instr_session_observer *obs);
void instr_session_free(struct instr_session *s);

/* Sorts every row array by column (see instr_sort_columns); numbers sort
 * descending, text ascending; ties by name, module, file, line, pid, index. */
int instr_session_sort(struct instr_session *s, const char *column);
extern const char instr_sort_columns[];

struct instr_report_opts {
    enum instr_units units;
    enum instr_view view;
    /* text, JSON: every view asked, in order (views[0] is view), for several
     * views of one walk (--view functions,threads,calltree); NULL: view alone */
    const enum instr_view *views;
    size_t nviews;
    const char *func;    /* callers, callees: the function (demangled or mangled name) */
    size_t depth;        /* calltree: deepest level shown, 0 = all */
    double threshold;    /* calltree: hide paths below this Elapsed Inclusive %, 0 = none */
    size_t limit;  /* rows shown (text, csv); 0 = all */
    int flagged;   /* text/csv: add the flagged-interval columns */
    const char *columns; /* text tables: -F/--columns (columns.h); NULL: the defaults */
    int verbose;         /* text: the whole header (else what the numbers' trust needs) */
    unsigned width;      /* text: the terminal's columns (names cut to fit, header wrapped); 0: none */
    /* --export formats (export-*.c) */
    const void *export_opts; /* the export's own options (its row's instr_export_options); NULL: defaults */
    /* An export writing parts (chrome's --split-size): the front end opens
     * part number part (2, 3...) of -o FILE. */
    FILE *(*next_part)(void *ctx, unsigned part);
    void *part_ctx;
    /* An export that left calls out on its own (chrome past what browser
     * viewers load, unless told otherwise) says so here, for the front end
     * to tell the user (writers.h); NULL: nobody asks. */
    struct instr_thinned *thinned;
};

/* Microseconds from the session's start (its earliest process start) to
 * tick of dump i, on the session's axis (axis.h); NAN without a tick rate. */
double instr_session_us(const struct instr_session *s, size_t i, uint64_t tick);
/* Nanoseconds from the session's start to the end of dump i's process on
 * its axis: its exit or fatal signal; without an end record, its last
 * event or latest calibration, whichever is later. */
double instr_session_end_ns(const struct instr_session *s, size_t i);

/* ---- --diff A B: instr_diff_text/csv/json in formats.h (diff.c) ---- */

/* Shared by the exporters (units.c). */
/* ticks of dump d in ns; NAN without a tick rate. */
double instr_ticks_ns(const struct instr_dump *d, uint64_t ticks);
/* Adds the four values (ticks of dump d) and calls to v, the four in ns
 * to ns[0..3] (ei, ee, ai, ae): a row or a tree node taking one more. */
void instr_values_add4(struct instr_values *v, double ns[4], const struct instr_dump *d, uint64_t ei, uint64_t ee,
                       uint64_t ai, uint64_t ae, uint64_t calls);
/* v's percents of the session's totals: ei%, ee%, ai%, ae% to pct[0..3]
 * (of Elapsed and Application Inclusive) and ci%, ce% to cpu[0..1] (of
 * CPU Inclusive); 0 where the total is 0. */
void instr_values_pct(const struct instr_values *v, const struct instr_values *total, double pct[4], double cpu[2]);
const char *instr_units_name(enum instr_units u);
/* A value in the chosen unit: ticks as an integer, ns rounded, us/ms with 3 decimals. */
void instr_fmt_value(char *buf, size_t len, uint64_t ticks, double ns, enum instr_units u);
const char *instr_basename(const char *path);
/* name with GCC clone suffixes removed (".constprop.N", ".isra.N",
 * ".part.N", ".cold", ".lto_priv.N", ".localalias", and the demangler's
 * " [clone .xxx]"), into buf (clones.c). */
void instr_name_origin(const char *name, char *buf, size_t len);
/* Whether every dump of dumps[0..n) has a tick rate (timelines need one). */
int instr_dumps_have_rate(const struct instr_dump *dumps, size_t n);
/* Whether d's process exited through exit() with hdr.exit_status (not
 * for inputs converted from formats that do not record it). */
int instr_dump_exited(const struct instr_dump *d);
/* Whether a and b are dumps of the same process (the same dump given
 * twice): same pid, program and start (ticks and clocks). */
int instr_dump_same_process(const struct instr_dump *a, const struct instr_dump *b);
/* What the detector of d sees and does not see, as two phrases. */
void instr_detector_text(const struct instr_dump *d, char *sees, size_t slen, char *unseen, size_t ulen);
/* The backends that ran, joined by '+' (the header's detector_set, else its detector). */
const char *instr_detector_set_name(const struct instr_dump *d, char *buf, size_t len);
/* ---- call tree and caller/callee views (view-calltree.c, view-callers.c) ---- */

/* A node of the session's call tree: call paths of every thread of every
 * process merged by function (row) identity. */
struct instr_tnode {
    uint32_t parent;      /* index into the tree; node 0 is the root */
    uint32_t row;         /* function row key (UINT32_MAX for the root) */
    uint32_t first_child, next_sibling; /* ordered by Elapsed Inclusive, descending */
    uint32_t depth;
    struct instr_values v; /* ticks: ei, ee, ai, ae, calls, ci, ce of this path */
    double ns[4];          /* the same in ns */
    double pct[4];         /* ei%, ee%, ai%, ae% */
    double cpu_ns[2];      /* ci, ce in ns */
    double cpu_pct[2];     /* ci%, ce% (of Session CPU Inclusive) */
};

struct instr_tree {
    struct instr_tnode *n;
    size_t len;
};

int instr_tree_build(const struct instr_session *s, struct instr_tree *t);
void instr_tree_free(struct instr_tree *t);
/* Depth first, children by Elapsed Inclusive: the first node below the
 * root (0: none), then the node after c, entering c's children only if
 * descend (a hidden node hides its subtree). */
uint32_t instr_tree_first(const struct instr_tree *t);
uint32_t instr_tree_next(const struct instr_tree *t, uint32_t c, int descend);
/* Whether a node is shown: within o's --depth and above its --threshold. */
struct instr_report_opts;
int instr_tree_shown(const struct instr_tnode *n, const struct instr_report_opts *o);

/* Caller/callee view of one function: whom it was called by, whom it
 * called, each with the function's (callee's) values on those paths. */
struct instr_relation {
    uint32_t row;         /* the other function's row key; UINT32_MAX: thread start (callers) */
    struct instr_values v;
    double ns[4];
    double pct[4];
    double cpu_ns[2];     /* v.ci, v.ce in ns (ci like ei: once per path) */
    double cpu_pct[2];    /* ... percent of Session CPU Inclusive */
};

struct instr_relations {
    uint32_t row;         /* the function's row key */
    struct instr_relation *callers, *callees;
    size_t ncallers, ncallees;
};

/* Finds the function named name (demangled, demangled without parameters,
 * or mangled).  Returns 0, INSTR_EARG if none matches (or several do: err
 * says which), INSTR_ENOMEM. */
int instr_relations_build(const struct instr_session *s, const char *name, struct instr_relations *r, char *err,
                          size_t errlen);
void instr_relations_free(struct instr_relations *r);

/* Why Application values are unavailable (s->no_app), for headers. */
extern const char instr_no_app_reason[];

/* The row of a function row key. */
const struct instr_row *instr_function_row(const struct instr_session *s, uint32_t key);

/* The rows of a view. */
void instr_view_rows(const struct instr_session *s, enum instr_view v, const struct instr_row **rows, size_t *n);

#endif
