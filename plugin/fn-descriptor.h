/* fn-descriptor.h - the static descriptors the hooks receive: one per
 * instrumented function, one per instrumented call site. */
#ifndef INSTR_PLUGIN_FN_DESCRIPTOR_H
#define INSTR_PLUGIN_FN_DESCRIPTOR_H

#include "gcc-compat.h"

/* Creates and finalizes the descriptor (layout in hook-abi.h) of fndecl:
 * a TU-local, writable, 8-byte aligned char array; switchable: its hooks
 * run only in the hooked copy the switch selects (INSTR_FN_SWITCHABLE).
 * Returns its VAR_DECL. */
tree instr_build_fn_descriptor(tree fndecl, bool switchable);

/* Creates and finalizes a call-site descriptor (struct instr_site_desc):
 * caller_desc is the calling function's descriptor, callee the direct
 * callee's assembler name (NULL for an indirect call), flags its
 * INSTR_SITE_* bits, loc the call's location (its line is recorded). */
tree instr_build_site_descriptor(tree caller_desc, const char *callee, unsigned flags,
                                 location_t loc);

/* The site descriptors' record type lives across functions (GC roots). */
extern const struct ggc_root_tab instr_site_gc_roots[];

#endif
