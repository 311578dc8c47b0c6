/* profile.h - stack rebuilding and value aggregation for one process.
 *
 * Each thread's events are walked interval by interval.  The interval that
 * an event ends has the stack left by the previous event and the os flag of
 * this event:
 *
 *      enter f        enter g        exit          exit (os=sched)
 *   ------|--------------|-------------|----------------|------
 *         |   stack [f]  |  stack [f g] |   stack [f]    |
 *         |  Δ1 → f excl |  Δ2 → g excl | Δ3 → f excl,   |
 *         |              |              |  flagged: not   |
 *         |              |              |  Application    |
 *
 * Each Δ is added to the exclusive values of the top node of a call tree
 * (node = parent node + frame); inclusive values are derived afterwards
 * bottom-up, and a function's inclusive values are the sum over its
 * outermost nodes (nodes with no ancestor of the same function), so a
 * recursive function counts each interval once.  Memory grows with the
 * number of distinct call paths, never with the number of events.
 *
 * Repairs, each counted (see struct instr_repairs):
 *  - EXT UNWIND pops the top frame (an exception or longjmp went through it);
 *  - EXIT / RETURN on an empty stack is ignored;
 *  - frames still open at the end of a thread are closed at its end tick:
 *    its THREAD_END event, else the process end tick if the dump is
 *    COMPLETE (or SIGNALED: ended by a fatal signal) and it is later than the thread's last event (that last
 *    interval counts as Application: nothing says the OS acted), else the
 *    last event.
 *  - EXIT and RETURN pop whatever frame is on top (generic: the runtime
 *    reports mismatches itself as UNWIND mismatch).
 *
 * Call sites (CALL ... RETURN) make frames too.  What a CALL's frame is
 * depends on the next event of the thread:
 *
 *   CALL s, ENTER f  with s calling f (callsites.h)  -> one frame, f's:
 *                    CALL..ENTER and EXIT..RETURN are f's time, one call;
 *                    EXIT leaves it open, RETURN closes it, and of the two
 *                    UNWINDs that close it when an exception goes through,
 *                    only the second counts (one frame);
 *   CALL s, anything else                            -> a pseudo-frame named
 *                    after s's callee (key: INSTR_KEY_SITE | name index), so
 *                    main -> qsort -> cmp for a callback.
 *
 * Until that next event the call's time is held aside (walker.pend), so
 * the dump stays what the hooks saw and the merge is decided here.
 */
#ifndef INSTR_PROFILE_H
#define INSTR_PROFILE_H

#include <stddef.h>
#include <stdint.h>

#include "callsites.h"
#include "compensate.h"
#include "dump-reader.h"
#include "exclusions.h"
#include "os-events.h"
#include "wall.h"

/* The four values plus calls and flagged intervals, all in ticks. */
struct instr_values {
    uint64_t ei;        /* elapsed inclusive */
    uint64_t ee;        /* elapsed exclusive */
    uint64_t ai;        /* application inclusive */
    uint64_t ae;        /* application exclusive */
    uint64_t calls;     /* ENTER (or CALL) events */
    uint64_t flagged_n; /* flagged intervals with this frame on top */
    uint64_t flagged_t; /* their total ticks */
    uint64_t offcpu_t;  /* of which off the CPU, exact (cpuclock backend; else 0) */
    uint64_t ext_ei;    /* external time: see below */
    uint64_t ext_ai;    /* the same, Application */
    uint64_t kind_n[INSTR_OS_NKINDS]; /* flagged intervals with this frame on top, per kind (os-events.h) */
    uint64_t kind_t[INSTR_OS_NKINDS]; /* their ticks (an interval of several kinds counts in each) */
    uint64_t ci;        /* CPU inclusive: elapsed inclusive less the exact off-CPU time of each interval */
    uint64_t ce;        /* CPU exclusive (cpu.c: known when the cpuclock backend ran) */
    uint64_t po;        /* probe overhead: the hook costs inside ei, like ei (compensate.h) */
};

/* External time of a function F: the intervals whose stack has, somewhere
 * above an F frame, a pseudo-frame (an uninstrumented callee) called
 * directly by that F frame; each interval once, like inclusive values.  So
 * ext_ei is the part of F's EI spent in the libraries F calls itself (and
 * in whatever runs under them, callbacks included). */

#define INSTR_UNWIND_REASONS 4 /* index = INSTR_UNWIND_*, 0 = unknown reason */

struct instr_repairs {
    uint64_t unwound[INSTR_UNWIND_REASONS]; /* frames popped by EXT UNWIND, by reason */
    uint64_t unmatched_exits;               /* EXIT/RETURN on an empty stack, ignored */
    uint64_t incomplete;                    /* frames closed at a thread's end */
    uint64_t bad_chunks;                    /* chunks whose decoding stopped on invalid bytes */
    uint64_t dropped;                       /* events lost, from DROPPED events */
    uint64_t clock_back;                    /* chunk bases earlier than the previous event */
    uint64_t runtime_ticks;                 /* skipped: the runtime's own slow work (EXT RUNTIME) */
    uint64_t cut_threads;                   /* threads whose record was cut with frames open (truncated
                                               dump, damaged chunk, dropped events) */
    uint64_t unrecorded_ticks;              /* from their last event to the process's end: not known,
                                               charged to no frame */
};

/* Frame keys: a function id, or a call-site id with this bit set. */
#define INSTR_KEY_SITE (1ull << 63)
#define INSTR_KEY_UNNAMED (1ull << 62) /* with INSTR_KEY_SITE: a site id without a CALLSITE record */

struct instr_pfunc {
    uint64_t key;                     /* function id, or pseudo-frame index | INSTR_KEY_SITE */
    const struct instr_function *fn;  /* metadata, NULL if missing or a pseudo-frame */
    uint32_t module;                  /* index into modules (nmodules - 1 = unknown) */
    struct instr_values v;
    const char *pseudo;               /* pseudo-frame: the callee's (mangled) name, else NULL */
    char *origin, *origin_demangled;  /* a GCC clone folded (foo.constprop.0): its source function's
                                         names, the row's; NULL: fn's own (instr_pfunc_name) */
};

/* A node of a thread's call tree: one call path.  Nodes of one thread are
 * contiguous, its root first (func UINT32_MAX, its own parent); a child
 * comes after its parent. */
struct instr_pnode {
    uint32_t parent;  /* index into the profile's nodes */
    uint32_t func;    /* index into funcs, UINT32_MAX for a thread's root */
    uint32_t thread;  /* index into threads */
    uint64_t ei, ee, ai, ae, calls; /* ticks: this path's four values, and its calls */
    uint64_t ci, ce;                /* ticks: its CPU Inclusive and Exclusive (instr_values) */
};

struct instr_pthread {
    uint32_t index;
    uint64_t tid;
    const char *name;     /* may be NULL */
    uint64_t first_tick;  /* first event */
    uint64_t end_tick;    /* the tick its open frames were closed at (or last event) */
    uint64_t events;
    struct instr_values v; /* inclusive = intervals with a non-empty stack; exclusive = same */
    uint64_t dropped;      /* events lost in this thread, from its DROPPED events */
    /* Time the detectors saw less than the header says (EXT UNSEEN: sud
     * paused), to the thread's end, and the kinds unseen. */
    uint64_t unseen_ticks;
    unsigned unseen_kinds;
    /* Time on the CPU before a backend began watching (EXT UNSEEN's
     * not-yet kinds: perf's event opened late, INSTR_PERF_AFTER; off-CPU
     * time left out where cpuclock measured it), and those kinds. */
    uint64_t notyet_ticks;
    unsigned notyet_kinds;
    /* Its innermost frame still open at its last event, and that frame's
     * caller (function indexes; UINT32_MAX: none). */
    uint32_t open_top, open_caller;
};

struct instr_pmodule {
    const char *path; /* NULL for the unknown module */
    struct instr_values v;
};

struct instr_profile {
    const struct instr_dump *dump;
    struct instr_pfunc *funcs;
    size_t nfuncs;
    struct instr_pthread *threads;
    size_t nthreads;
    struct instr_pmodule *modules; /* dump modules in order, then "unknown" */
    size_t nmodules;
    struct instr_values total; /* process: ei = non-empty intervals, ai = those not flagged */
    struct instr_repairs repairs;
    struct instr_compensation comp; /* the hook costs subtracted (compensate.h) */
    uint64_t events;
    uint64_t offcpu_unknown; /* flagged intervals charged to a frame without off-CPU ticks (counted on the CPU) */
    size_t max_nodes; /* largest call tree of a thread */
    struct instr_sitemap sites;  /* names of the dump's call sites */
    struct instr_pnode *nodes;   /* every thread's call tree */
    size_t nnodes;
    int wall_on;                 /* Wall Inclusive recorded (instr_profile_opts.wall) */
    struct instr_wall wall;      /* its unions per function (index into funcs) and of all stacks */
    int wall_merged;             /* ... computed by a time-ordered merge of the threads instead (wall == 2) */
    struct instr_wall_merge merged; /* then its lengths per function and of all stacks */
    /* Switchable builds: when the hooks were on (EXT SWITCH, the header's
     * INSTR_DUMP_SWITCHED_OFF), as windows [from, to) in dump ticks, in
     * time order; switched_at: the switches the dump recorded (0: the
     * hooks were never switched, and windows says nothing). */
    struct instr_window {
        uint64_t from, to;
    } *windows;
    size_t nwindows, switched_at;
    uint64_t recorded_ticks; /* the windows' length */
    struct instr_switch {
        uint64_t tick;
        unsigned on;
    } *switches; /* as the walk met them, thread after thread */
    size_t nswitches, capswitches;
};

int instr_profile_build(struct instr_profile *p, const struct instr_dump *d, char *err, size_t errlen);

/* The call timeline, for exporters that need each call's start and end
 * (Chrome trace, visualiser): an observer of the walk that builds the
 * profile (the same call-site merging and repairs), told of each frame as
 * it opens and closes.  thread is an index into p->threads, func into
 * p->funcs, label a dump label id.  Frames close innermost first;
 * incomplete: closed at the thread's end (a repair).
 *
 * Ticks are timeline ticks: the dump's, less the runtime's own work so far
 * in that thread (EXT RUNTIME intervals, which no value is charged with)
 * and less the hook costs compensation took out (compensate.h), so a
 * call's end - start is exactly the Elapsed Inclusive the report charges it (threads' timelines drift apart by their own runtime work,
 * which profile.repairs.runtime_ticks totals).  Any callback may be NULL.
 * Callbacks return 0, or a negative code that stops the walk (returned by
 * the build). */
struct instr_timeline {
    void *ctx;
    int (*frame_open)(void *ctx, uint32_t thread, uint32_t func, uint64_t tick);
    int (*frame_close)(void *ctx, uint32_t thread, uint32_t func, uint64_t tick, int incomplete);
    int (*mark)(void *ctx, uint32_t thread, uint64_t label, uint64_t tick);
    int (*counter)(void *ctx, uint32_t thread, uint64_t label, int64_t value, uint64_t tick);
    /* An interval of d ticks (compensated) charged to the frame on top,
     * ending at timeline tick `tick`: app of them Application time (d or
     * 0), cpu on the CPU (d less its off-CPU ticks), os the INSTR_OS_*
     * kinds that flagged it (INSTR_OS_UNKNOWN for a flag without a kind;
     * 0: the OS did nothing).  Told after the frame on top opened, except
     * under a call site still pending (its frame opens later, from an
     * earlier tick).  No return: a charge cannot stop the walk. */
    void (*charged)(void *ctx, uint32_t thread, uint64_t tick, uint64_t d, uint64_t app, uint64_t cpu, unsigned os);
};
int instr_profile_build_timeline(struct instr_profile *p, const struct instr_dump *d,
                                 const struct instr_exclusions *x, const struct instr_timeline *tl, char *err,
                                 size_t errlen);
/* Everything a build can take. */
struct instr_interval_observer;
struct instr_profile_opts {
    const struct instr_exclusions *x; /* --not-application, --os-events; or NULL */
    const struct instr_timeline *tl;  /* or NULL */
    const struct instr_interval_observer *iv; /* intervals to hybrid.c, or NULL */
    int wall;                         /* record Wall Inclusive (wall.h): the session has several threads;
                                         1: segments (processes to unite), 2: lengths, the threads
                                         walked in time order (one process; no timeline, no intervals) */
};
int instr_profile_build_opts(struct instr_profile *p, const struct instr_dump *d, const struct instr_profile_opts *o,
                             char *err, size_t errlen);
/* The same, with intervals under a frame matching x (and its callees) not
 * counted as Application time (instr-report --not-application). */
int instr_profile_build_excluding(struct instr_profile *p, const struct instr_dump *d,
                                  const struct instr_exclusions *x, char *err, size_t errlen);
void instr_profile_free(struct instr_profile *p);

/* An observer of every interval (from, to] of each thread, in dump ticks
 * (no cut), with the function on top of its stack (index into p->funcs; an
 * interval under a call site is told once the next event decides its
 * frame: the callee's, or the site's pseudo-frame), UINT32_MAX if the stack
 * is empty; threads in order, intervals in time order (hybrid.c places
 * samples with it).  Returns 0, or a negative code that stops the walk. */
struct instr_interval_observer {
    void *ctx;
    int (*interval)(void *ctx, uint32_t thread, uint64_t from, uint64_t to, uint32_t top);
};
int instr_profile_build_intervals(struct instr_profile *p, const struct instr_dump *d,
                                  const struct instr_interval_observer *iv, char *err, size_t errlen);

/* The name a report shows for p->funcs[func]: the plugin's demangled name,
 * else the symbol (a pseudo-frame's callee) demangled here; "[site N]" or
 * "[function N]" for frames without metadata.  malloc'd; NULL: no memory. */
char *instr_profile_func_name(const struct instr_profile *p, uint32_t func);

#endif
