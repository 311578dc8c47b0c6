/* self-pct.h - Self %: each function's share of the program's own on-CPU
 * time as it would be without instr, from samples, beside the four values
 * (never mixed into them).  docs/self-percent.md says what it means.
 *
 * Sources, best first (session.self.source):
 *  - "plain-samples": instr-sample of the uninstrumented build, another
 *    run, matched to the session's function rows by function identity
 *    (instr_self_fold: the demangled name with GCC clone suffixes folded;
 *    the module is ignored, so a renamed binary matches);
 *  - "instrumented-samples": instr-sample of the instrumented program
 *    (samples with a frame of instr's runtime on their stack left out), matched the same way;
 *  - "in-run-samples": the instrumented dump's own INSTR_SAMPLE samples
 *    placed on the shadow stack (hybrid.h), PCs inside the runtime left out;
 *  - "none": no samples; Self % is not shown (text "-", JSON null).
 * A sample whose leaf has no row of its own is credited, when its leaf is
 * in code instr did not instrument (libc), to the pseudo-frame of the
 * uninstrumented callee under the first instrumented caller on its stack,
 * if one has that name; else it counts in the total and for no row
 * ("unmatched").  Kernel leaves are left out (the fidelity method).
 * Library code: never prints or exits.
 */
#ifndef INSTR_SELF_PCT_H
#define INSTR_SELF_PCT_H

#include <stddef.h>

#include "report.h"

/* Self % of s's function rows from the sampling dumps sd[0..n) (source
 * "plain-samples" or "instrumented-samples", by whether a dump maps
 * instr's runtime).  0, or a negative
 * INSTR_E* with a reason in err. */
int instr_self_from_sampled(struct instr_session *s, const struct instr_dump *sd, size_t n, char *err, size_t errlen);

/* Self % from the session's own INSTR_SAMPLE samples, if any dump has
 * some ("in-run-samples"); nothing otherwise. */
int instr_self_from_in_run(struct instr_session *s, char *err, size_t errlen);

/* What a sampled frame (its function name and module path) is to Self %:
 * the program's own code (0), or left out: the kernel's, instr's runtime. */
enum { INSTR_SELF_KERNEL = 1, INSTR_SELF_RUNTIME = 2 };
int instr_self_frame_kind(const char *name, const char *module);

#endif
