/* os-events.h - which kinds of OS activity take an interval out of
 * Application time (instr-report --os-events=KIND[,KIND...]).
 *
 * The dump keeps the kinds of each flagged interval (INSTR_OS_* bits,
 * dump-format.h).  By default every kind counts, as data-values.md says.
 * A selection keeps only the chosen kinds: an interval whose kinds are all
 * left out counts as Application time (a program's own SIGPROF timer, the
 * short system calls of an I/O loop).  An interval flagged without any
 * kind (a detector that cannot tell) always counts: nothing says it may be
 * kept.
 *
 * The kinds also index the per-kind flagged values (--flagged).
 */
#ifndef INSTR_OS_EVENTS_H
#define INSTR_OS_EVENTS_H

#include <stddef.h>
#include <stdint.h>

#include "dump-format.h"

/* The kinds, in INSTR_OS_KINDS order: index -> bit and name. */
#define INSTR_OS_NKINDS 6
extern const struct instr_os_kind {
    unsigned bit;     /* INSTR_OS_* */
    const char *name; /* "sched" ... as in dumps and on the command line */
} instr_os_kinds[INSTR_OS_NKINDS];

/* Every kind bit. */
#define INSTR_OS_ALL_KINDS (INSTR_OS_SCHED | INSTR_OS_SYSCALL | INSTR_OS_FAULT | INSTR_OS_SIGNAL | INSTR_OS_IRQ | \
                            INSTR_OS_UNKNOWN)

/* Parses "sched,fault" (or "all", or "none") into the kinds NOT chosen
 * (*ignored: 0 = every kind counts).  0, or -1 with err naming the bad
 * kind. */
int instr_os_events_parse(const char *arg, unsigned *ignored, char *err, size_t errlen);

/* The chosen kinds as text ("sched,fault"; "none"), for headers. */
const char *instr_os_events_text(unsigned ignored, char *buf, size_t len);

/* Whether a flagged interval with these bits leaves Application time. */
static inline int instr_os_counts(unsigned bits, unsigned ignored)
{
    return !(bits & INSTR_OS_ALL_KINDS) || (bits & INSTR_OS_ALL_KINDS & ~ignored);
}

#endif
