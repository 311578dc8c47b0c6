/* hybrid.h - the samples of an instrumented run (INSTR_SAMPLE=HZ,
 * runtime/sampler.c) placed on the exact shadow stack.
 *
 * The profile is built as usual with an observer of its intervals: each
 * sample (its CLOCK_MONOTONIC ns turned into ticks with the header's
 * calibration pairs) lands in the interval (from, to] that holds it, and
 * counts for the function on top of the stack there: no unwinding.  A
 * sample between two intervals fell in the runtime's own work (EXT
 * RUNTIME: chunk switches), one after a thread's last event in none.
 * Per function: its Elapsed Exclusive share beside its share of the
 * placed samples, and the binomial sampling error 2 sqrt(p(1-p)/n) (at
 * least 1/n) within which they should agree; and the share of its samples
 * whose PC was inside instr's runtime (the hooks): measured probe
 * overhead.
 *
 * The samples may also come from instr-sample run on the instrumented
 * program (a sampling dump of the same process, sd): matched by thread id,
 * placed the same way by time; their unwound stacks (DWARF, instr-sample)
 * then also say where in uninstrumented code a sample under a call-site
 * frame was: the frames from the leaf up to the first frame in one of the
 * instrumented dump's modules ("below" the call site), counted per site and
 * chain.  A leaf PC inside instr's runtime (libinstr-rt, or a __instr_* /
 * instr_* symbol of a static runtime) counts as in the hooks.
 *
 * INSTR_SAMPLE's own samples carry the PC only, but the runtime also
 * writes the process's executable mappings (MAP records, runtime/maps.c):
 * a sample under a call-site frame whose PC is in an uninstrumented module
 * is named the same way, its "chain" the leaf alone (what lies between the
 * call site and the leaf is not known without instr-sample).
 * Library code: never prints or exits.
 */
#ifndef INSTR_HYBRID_H
#define INSTR_HYBRID_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "profile.h"

struct instr_hybrid_fn {
    uint64_t samples; /* placed with this function on top */
    uint64_t runtime; /* of which the PC was in instr's runtime */
};

/* Samples under a call-site frame with the uninstrumented frames below it
 * (from a sampling dump's stacks; with INSTR_SAMPLE's, the leaf alone). */
struct instr_hybrid_below {
    uint32_t site;    /* p.funcs index of the call-site frame (the shadow stack's top) */
    char *chain;      /* the frames below it, outermost first, ";"-separated */
    char *module;     /* the leaf's module file name */
    uint64_t samples;
};

struct instr_hybrid {
    uint64_t samples;         /* all STACK samples */
    uint64_t placed;          /* on a frame */
    uint64_t empty_samples;   /* on an empty stack */
    uint64_t gap_samples;     /* in the runtime's own work, or outside the thread's events */
    uint64_t runtime_samples; /* PC inside instr's runtime */
    uint64_t lost;            /* the kernel could not record them */
    uint64_t bad_chunks;      /* sample chunks that ended on invalid bytes (the rest of each skipped) */
    uint64_t thread_ticks;    /* threads' first to last event, summed */
    double tick_rate;         /* ticks per ns */
    struct instr_hybrid_fn *fn; /* per p.funcs index */
    size_t nfn;
    int from_sampler;           /* the samples came from a sampling dump (instr-sample) */
    uint64_t rate_asked_hz;     /* the SAMPLING record of the dump the samples came from; 0 = none */
    int leaf_only;              /* INSTR_SAMPLE's own samples, named through the dump's MAP
                                   records: below a call site, only the leaf is known */
    struct instr_hybrid_below *below; /* from_sampler or leaf_only: by site and chain */
    size_t nbelow, capbelow;
    struct instr_profile p;
};

/* 1 if the instrumented dump d holds samples. */
int instr_hybrid_has_samples(const struct instr_dump *d);
/* 0, or a negative INSTR_E* with a reason in err. */
int instr_hybrid_build(struct instr_hybrid *h, const struct instr_dump *d, char *err, size_t errlen);
/* The same with the samples of sd, a sampling dump of the same process
 * (instr-sample on the instrumented program), instead of d's own. */
int instr_hybrid_build_with(struct instr_hybrid *h, const struct instr_dump *d, const struct instr_dump *sd, char *err,
                            size_t errlen);
void instr_hybrid_free(struct instr_hybrid *h);
/* format 0 text, 1 csv, 2 json; limit rows (0 = all), by EE % descending. */
int instr_hybrid_write(FILE *out, const struct instr_hybrid *h, int format, size_t limit);

#endif
