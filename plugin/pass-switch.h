/* pass-switch.h - switchable: every hooked function gets a plain twin
 * chosen at its entry by a run-time flag (pass-switch.cc). */
#ifndef INSTR_PLUGIN_PASS_SWITCH_H
#define INSTR_PLUGIN_PASS_SWITCH_H

#include "gcc-compat.h"

/* The function whose hooked copy decl is, or NULL_TREE: the instrument
 * pass hooks a copy under the name and descriptor of its origin. */
tree instr_switch_origin(tree decl);

/* For a function the instrument pass would hook (time mode, switchable):
 * makes its hooked copy and puts the flag test at its entry, or leaves it
 * without hooks if it cannot forward its arguments.  Returns the pass's
 * TODO flags. */
unsigned instr_switch_split(function *fun);

/* Functions split, and left out because they could not be, in this unit. */
unsigned instr_switch_split_count(void);
unsigned instr_switch_skipped_count(void);

/* At the end of the unit: the symbol table's hooks back in place. */
void instr_switch_unit_end(void);

extern const struct ggc_root_tab instr_switch_gc_roots[];

#endif
