/* pass-instrument.h - the GIMPLE pass that inserts the hook calls. */
#ifndef INSTR_PLUGIN_PASS_INSTRUMENT_H
#define INSTR_PLUGIN_PASS_INSTRUMENT_H

#include "gcc-compat.h"

/* The pass's name: -fdump-tree-all writes its result (*.instr). */
#define INSTR_PASS_NAME "instr"

opt_pass *instr_make_instrument_pass(gcc::context *ctxt);

/* The late GIMPLE pass: call-site hooks for the calls the optimiser made
 * after the instrument pass (loop distribution's memset/memcpy/memmove).
 * -fdump-tree-all writes its result (*.instr-late; a plugin pass's own
 * -fdump-tree-NAME is not known when GCC parses its options). */
#define INSTR_LATE_PASS_NAME "instr-late"
opt_pass *instr_make_late_sites_pass(gcc::context *ctxt);

/* Functions instrumented so far in this translation unit. */
unsigned instr_instrumented_count(void);

/* Functions left out by threshold=N so far in this translation unit. */
unsigned instr_left_out_count(void);

/* Whether this unit's main is instrumented (time mode): it calls the
 * late binding first (hook-abi.h, "Deferred binding"). */
bool instr_main_here(void);

/* The hook declarations live across passes, so the garbage collector must
 * see them (PLUGIN_REGISTER_GGC_ROOTS). */
extern const struct ggc_root_tab instr_pass_gc_roots[];

#endif
