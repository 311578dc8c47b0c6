/* fn-descriptor.h - the per-function static descriptor the hooks receive. */
#ifndef INSTR_PLUGIN_FN_DESCRIPTOR_H
#define INSTR_PLUGIN_FN_DESCRIPTOR_H

#include "gcc-compat.h"

/* Creates and finalizes the descriptor (layout in hook-abi.h) of fndecl:
 * a TU-local, writable, 8-byte aligned char array.  Returns its VAR_DECL. */
tree instr_build_fn_descriptor(tree fndecl);

#endif
