/* gcc-compat.h - the one place that knows GCC versions.
 *
 * Every plugin file includes this instead of GCC's headers, so that a new
 * GCC release means editing one file.  Supported: GCC 11 to 14 (11 and 12,
 * Debian 12's, are tested by CI; 13 and 14, Debian 13's, by
 * scripts/test-newer-gcc.sh); older releases lack APIs we rely on
 * (cgraph_edge::rebuild_edges as a static member, label_to_block with a
 * function argument).
 */
#ifndef INSTR_GCC_COMPAT_H
#define INSTR_GCC_COMPAT_H

/* Standard headers first: GCC's system.h poisons some libc names and
 * redefines abort(), which breaks libstdc++ headers included after it. */
#include <limits.h>
#include <stdlib.h>
#include <string>
#include <unordered_map>
#include <vector>

#include "bversion.h"
#include "gcc-plugin.h"
#include "tree.h"
#include "tree-pass.h"
#include "context.h"
#include "function.h"
#include "basic-block.h"
#include "cfg.h"
#include "cgraph.h"
#include "gimple.h"
#include "gimple-iterator.h"
#include "gimple-pretty-print.h"
#include "gimple-ssa.h"
#include "ssa.h"
#include "tree-cfg.h"
#include "tree-into-ssa.h"
#include "except.h"
#include "tree-eh.h"
#include "stringpool.h"
#include "attribs.h"
#include "diagnostic-core.h"
#include "output.h"
#include "builtins.h"
#include "stor-layout.h"
#include "langhooks.h"
#include "ggc.h"
#include "rtl.h"
#include "cfgrtl.h"
#include "memmodel.h"
#include "emit-rtl.h"

/* libiberty's demangler, linked into cc1 and cc1plus and exported to
 * plugins; its header is not among the plugin headers.  Options as in
 * libiberty's demangle.h. */
extern "C" char *cplus_demangle(const char *mangled, int options);
#define INSTR_DMGL_PARAMS (1 << 0)
#define INSTR_DMGL_ANSI (1 << 1)
/* The demangled name (malloc'd), or NULL if mangled is not a C++ name. */
static inline char *instr_demangle(const char *mangled)
{
    return cplus_demangle(mangled, INSTR_DMGL_PARAMS | INSTR_DMGL_ANSI);
}

/* The plugin is built with -fvisibility=hidden; only what cc1 looks up is
 * exported. */
#define INSTR_PLUGIN_EXPORT __attribute__((visibility("default")))

#if BUILDING_GCC_MAJOR < 11 || BUILDING_GCC_MAJOR > 14
#error "instr supports GCC 11 to 14; port gcc-compat.h to this release"
#endif

#endif
