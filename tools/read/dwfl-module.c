/* dwfl-module.c - one ELF file through libdwfl (see dwfl-module.h). */
#define _GNU_SOURCE
#include "dwfl-module.h"

#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

int instr_dwfl_open(struct instr_dwfl *m, const char *path, const void *image, size_t size, const char *debug_root)
{
    memset(m, 0, sizeof *m);
    /* "-": no CRC check of a debuglink's file; then the file's directory,
     * its .debug/, and the root (where build-ids are looked up too) */
    snprintf(m->debug_path, sizeof m->debug_path, "-:.debug:%s", debug_root ? debug_root : "/usr/lib/debug");
    m->debug_path_p = m->debug_path;
    m->cb.find_elf = dwfl_build_id_find_elf;
    m->cb.find_debuginfo = dwfl_standard_find_debuginfo;
    m->cb.section_address = dwfl_offline_section_address;
    m->cb.debuginfo_path = &m->debug_path_p;
    int fd = -1;
    if (image) { /* from memory: a file of its own for libdwfl */
        fd = memfd_create("instr-elf", MFD_CLOEXEC);
        if (fd < 0 || write(fd, image, size) != (ssize_t)size) {
            if (fd >= 0)
                close(fd);
            return 0;
        }
    }
    if (!(m->dwfl = dwfl_begin(&m->cb))) {
        if (fd >= 0)
            close(fd);
        return -1;
    }
    dwfl_report_begin(m->dwfl);
    /* base 0, addresses as p_vaddr: the file's own numbering; a module of
     * its own Dwfl (two files' addresses overlap); libdwfl owns the fd */
    m->mod = dwfl_report_elf(m->dwfl, path, path, fd, 0, false);
    if (!m->mod && fd >= 0)
        close(fd); /* consumed only on success */
    dwfl_report_end(m->dwfl, NULL, NULL);
    return 0;
}

void instr_dwfl_close(struct instr_dwfl *m)
{
    if (m->dwfl)
        dwfl_end(m->dwfl);
    memset(m, 0, sizeof *m);
}
