/* demangle.h - C++ names for display. */
#ifndef INSTR_DEMANGLE_H
#define INSTR_DEMANGLE_H

/* Returns a malloc'd display name for a mangled symbol: the libiberty
 * demangling (parameters included, clone suffixes as "[clone .part.0]"),
 * else a copy of the name itself.  NULL only when out of memory. */
char *instr_demangle(const char *mangled);

#endif
