/* suggest-exclude.h - instr-report --suggest-exclude=PCT: an exclude= list
 * of the tiny functions whose hooks cost the most. */
#ifndef INSTR_SUGGEST_EXCLUDE_H
#define INSTR_SUGGEST_EXCLUDE_H

#include <stdio.h>

#include "report.h"

/* A function is "tiny" when it is a leaf (its Elapsed Inclusive is its
 * Exclusive: no frame ever ran under it) and its Elapsed Exclusive per call
 * is at most this many times the hook cost per call. */
#define INSTR_SUGGEST_TINY_FACTOR 4

/* Leaf functions with fewer calls than this do not take part in the
 * estimate of the hook cost (one slow call says nothing about the hooks). */
#define INSTR_SUGGEST_MIN_CALLS 100

struct instr_suggestion {
    const struct instr_row *row;
    double share_pct; /* calls x hook cost, % of the session's Elapsed total */
};

struct instr_suggestions {
    struct instr_suggestion *v; /* most costly first */
    size_t n;
    double hook_ticks; /* hook cost per call used, ticks (0: no estimate) */
    double hook_ns;    /* the same in ns (NAN without a tick rate) */
    const char *hook_source; /* how hook_ticks was obtained, for the list's header */
};

/* The tiny functions of s whose hooks cost more than pct % of the run:
 * calls x the hook cost per call, over the session's Elapsed total with
 * the hook costs compensation took out put back (the run as it ran).  The
 * hook cost per call is the one the runtime measured at start (the dump's
 * HOOK_COST records: enter and exit); a dump without them gets an
 * estimate: the smallest Elapsed Exclusive per call of a leaf function
 * with at least INSTR_SUGGEST_MIN_CALLS calls (a lower bound of what the
 * hooks cost, and lower still once compensated).  Returns 0 or
 * INSTR_ENOMEM. */
int instr_suggest_build(const struct instr_session *s, double pct, struct instr_suggestions *out);
void instr_suggest_free(struct instr_suggestions *sg);

/* Writes the list in the format -fplugin-arg-instr-exclude=@FILE reads:
 * '#' comment lines (what was measured, one line per function with its
 * numbers) and one mangled name per line.  Returns 0, or INSTR_ENOMEM. */
int instr_suggest_exclude(FILE *out, const struct instr_session *s, double pct);

#endif
