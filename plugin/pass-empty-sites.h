/* pass-empty-sites.h - the RTL pass that drops call-site hooks around
 * calls that expanded to no call instruction. */
#ifndef INSTR_PLUGIN_PASS_EMPTY_SITES_H
#define INSTR_PLUGIN_PASS_EMPTY_SITES_H

#include "gcc-compat.h"

/* -fdump-rtl-all writes what it removed (*.instr-sites; GCC parses
 * -fdump-rtl-NAME before it loads plugins). */
#define INSTR_EMPTY_SITES_PASS_NAME "instr-sites"

opt_pass *instr_make_empty_sites_pass(gcc::context *ctxt);

#endif
