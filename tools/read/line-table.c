/* line-table.c - source lines of code addresses from DWARF line tables
 * (see line-table.h). */
#include "line-table.h"

#include <elfutils/libdw.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dump-reader.h" /* INSTR_ENOMEM */
#include "elf-file.h"

/* A module's DWARF, opened once. */
struct ldw {
    char *path;
    int fd;
    Dwarf *dw; /* NULL: no line information */
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
        if (t->mods[i].dw)
            dwarf_end(t->mods[i].dw);
        if (t->mods[i].fd >= 0)
            close(t->mods[i].fd);
        free(t->mods[i].path);
    }
    free(t->mods);
    free(t);
}

/* The DWARF of the module at path; *oom set when memory ran out. */
static Dwarf *dwarf_of(struct instr_line_tables *c, const char *path, int *oom)
{
    for (size_t i = 0; i < c->nmods; i++)
        if (!strcmp(c->mods[i].path, path))
            return c->mods[i].dw;
    struct ldw *a = realloc(c->mods, (c->nmods + 1) * sizeof *a);
    if (!a) {
        *oom = 1;
        return NULL;
    }
    c->mods = a;
    struct ldw *m = &a[c->nmods];
    memset(m, 0, sizeof *m);
    m->fd = -1;
    if (!(m->path = strdup(path))) {
        *oom = 1;
        return NULL;
    }
    c->nmods++;
    m->fd = open(path, O_RDONLY | O_CLOEXEC);
    if (m->fd >= 0)
        m->dw = dwarf_begin(m->fd, DWARF_C_READ);
    if (!m->dw) {
        /* The debug file by build-id (Debian's -dbgsym packages). */
        struct instr_elf e;
        char id[130], dbg[700];
        const char *root = getenv("INSTR_DEBUG_ROOT");
        if (instr_elf_open(&e, path) == 0) {
            if (instr_elf_build_id(&e, id, sizeof id) == 0 && strlen(id) > 2) {
                snprintf(dbg, sizeof dbg, "%s/.build-id/%.2s/%s.debug", root && *root ? root : "/usr/lib/debug",
                         id, id + 2);
                if (m->fd >= 0)
                    close(m->fd);
                m->fd = open(dbg, O_RDONLY | O_CLOEXEC);
                if (m->fd >= 0)
                    m->dw = dwarf_begin(m->fd, DWARF_C_READ);
            }
            instr_elf_close(&e);
        }
    }
    return m->dw;
}

int instr_line_find(struct instr_line_tables *t, const char *path, uint64_t vaddr, const char **file, int *line)
{
    int oom = 0;
    Dwarf *dw = dwarf_of(t, path, &oom);
    if (oom)
        return INSTR_ENOMEM;
    Dwarf_Die cu;
    if (!dw || !dwarf_addrdie(dw, vaddr, &cu))
        return 1;
    Dwarf_Line *l = dwarf_getsrc_die(&cu, vaddr);
    const char *src = l ? dwarf_linesrc(l, NULL, NULL) : NULL;
    if (!l || !src || dwarf_lineno(l, line) != 0)
        return 1;
    *file = src;
    return 0;
}
