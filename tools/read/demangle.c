/* demangle.c - wraps libiberty's demangler, falling back to the raw name. */
#include "demangle.h"

#include <stdlib.h>
#include <string.h>

#ifdef INSTR_HAVE_LIBIBERTY
#include <libiberty/demangle.h>
#endif

char *instr_demangle(const char *mangled)
{
#ifdef INSTR_HAVE_LIBIBERTY
    /* Only _Z names are Itanium C++ symbols; anything else (C names, our
     * "[site N]" pseudo-frames) is shown as is. */
    if (mangled[0] == '_' && mangled[1] == 'Z') {
        char *s = cplus_demangle(mangled, DMGL_PARAMS | DMGL_ANSI);
        if (s)
            return s;
    }
#endif
    return strdup(mangled);
}
