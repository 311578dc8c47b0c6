/* threshold.h - threshold=N: functions too small to be worth their hooks. */
#ifndef INSTR_PLUGIN_THRESHOLD_H
#define INSTR_PLUGIN_THRESHOLD_H

#include "gcc-compat.h"

/* Whether fndecl is left out under threshold=N: fewer than N GIMPLE
 * statements, no loop and no call.  Decided once per function, from its
 * body as the instrumentation pass sees it (or as it is before that pass
 * when a caller asks first), and remembered, so the function and its
 * callers in this unit always agree.  False when threshold is 0 or the
 * body is not available (then the function is treated as any other). */
bool instr_threshold_leaves_out(tree fndecl);

/* The statement count the decision was made on (for dumps and notes). */
unsigned instr_threshold_statements(tree fndecl);

#endif
