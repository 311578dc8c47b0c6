/* dwfl-module.h - one ELF file as elfutils' libdwfl sees it: its symbols
 * and its DWARF, the separate debug file found the standard way (build-id
 * under the debug root, .gnu_debuglink next to the file, in .debug/, under
 * the root), at the file's own addresses.  Shared by the sampled
 * addresses' names (sample-symbols.c) and their source lines
 * (line-table.c).  Library code: never prints or exits. */
#ifndef INSTR_DWFL_MODULE_H
#define INSTR_DWFL_MODULE_H

#include <elfutils/libdwfl.h>
#include <stddef.h>

struct instr_dwfl {
    Dwfl *dwfl;
    Dwfl_Module *mod; /* NULL: libdwfl could not read the file */
    Dwfl_Callbacks cb;
    char debug_path[600];
    char *debug_path_p;
};

/* m for the file at path, or (image != NULL) for the ELF image in memory
 * (the vDSO) named path; debug files under debug_root (NULL:
 * /usr/lib/debug).  0, or -1 (no memory: m->mod NULL). */
int instr_dwfl_open(struct instr_dwfl *m, const char *path, const void *image, size_t size, const char *debug_root);
void instr_dwfl_close(struct instr_dwfl *m);

#endif
