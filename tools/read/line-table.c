/* line-table.c - source lines of code addresses from DWARF line tables
 * (see line-table.h). */
#include "line-table.h"

#include <elfutils/libdw.h>
#include <stdlib.h>
#include <string.h>

#include "dump-reader.h" /* INSTR_ENOMEM */
#include "dwfl-module.h"

/* A module's DWARF, opened once: the file's own, else its debug file's
 * (dwfl-module.h finds it). */
struct ldw {
    char *path;
    struct instr_dwfl m;
    Dwarf *dw; /* NULL: no line information */
    Dwarf_Addr bias;
};

struct instr_line_tables {
    struct ldw *mods;
    size_t nmods;
};

int instr_line_tables_new(struct instr_line_tables **out)
{
    return (*out = calloc(1, sizeof **out)) ? 0 : INSTR_ENOMEM;
}

void instr_line_tables_free(struct instr_line_tables *t)
{
    if (!t)
        return;
    for (size_t i = 0; i < t->nmods; i++) {
        instr_dwfl_close(&t->mods[i].m);
        free(t->mods[i].path);
    }
    free(t->mods);
    free(t);
}

/* The module at path; *oom set when memory ran out. */
static struct ldw *module_of(struct instr_line_tables *c, const char *path, int *oom)
{
    for (size_t i = 0; i < c->nmods; i++)
        if (!strcmp(c->mods[i].path, path))
            return &c->mods[i];
    struct ldw *a = realloc(c->mods, (c->nmods + 1) * sizeof *a);
    if (!a) {
        *oom = 1;
        return NULL;
    }
    c->mods = a;
    struct ldw *m = &c->mods[c->nmods];
    memset(m, 0, sizeof *m);
    const char *root = getenv("INSTR_DEBUG_ROOT"); /* tests: a debug-file tree of their own */
    if (!(m->path = strdup(path)) || instr_dwfl_open(&m->m, path, NULL, 0, root && *root ? root : NULL) < 0) {
        free(m->path);
        *oom = 1;
        return NULL;
    }
    c->nmods++;
    if (m->m.mod)
        m->dw = dwfl_module_getdwarf(m->m.mod, &m->bias);
    return m;
}

int instr_line_find(struct instr_line_tables *t, const char *path, uint64_t vaddr, const char **file, int *line)
{
    int oom = 0;
    struct ldw *m = module_of(t, path, &oom);
    if (oom)
        return INSTR_ENOMEM;
    Dwarf_Die cu;
    if (!m || !m->dw || !dwarf_addrdie(m->dw, vaddr - m->bias, &cu))
        return 1;
    Dwarf_Line *l = dwarf_getsrc_die(&cu, vaddr - m->bias);
    const char *src = l ? dwarf_linesrc(l, NULL, NULL) : NULL;
    if (!l || !src || dwarf_lineno(l, line) != 0)
        return 1;
    *file = src;
    return 0;
}
