/* count-mode.h - mode=count: per-thread call and edge counters instead of
 * hooks (layout and runtime contract in hook-abi.h, "Count mode"). */
#ifndef INSTR_PLUGIN_COUNT_MODE_H
#define INSTR_PLUGIN_COUNT_MODE_H

#include "gcc-compat.h"

/* A call statement that gets a counter: callee is the direct callee's
 * assembler name, or NULL for a call through a pointer. */
struct instr_count_site {
    gcall *call;
    const char *callee;
    location_t loc;
};

/* Adds the entry counter of fun (descriptor desc) and a counter before
 * each of sites.  Returns the TODO flags for the pass. */
unsigned instr_count_function(function *fun, tree desc, const std::vector<instr_count_site> &sites);

/* Adds a counter before each of sites of fun, whose entry
 * instr_count_function counted earlier under descriptor desc (the late
 * pass: calls to const and pure functions, counted once the optimiser
 * has merged, hoisted or removed them).  Returns the TODO flags. */
unsigned instr_count_sites(function *fun, tree desc, const std::vector<instr_count_site> &sites);

/* Count mode, a function that is not counted (excluded, artificial...):
 * with TLS cells, the arming test alone where a thread can begin in it,
 * so that a thread reaching counted code only through it is known to
 * the runtime.  Returns whether fun was changed. */
bool instr_count_arm_only(function *fun);

/* Whether this unit counted anything (then it needs the count binding). */
bool instr_count_used(void);

/* The count binding: the module's TLS delta, its struct instr_count_module
 * and the __instr_count_thread trampoline, in their own COMDAT group. */
std::string instr_count_binding_asm(void);

extern const struct ggc_root_tab instr_count_gc_roots[];

#endif
