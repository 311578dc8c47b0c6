/* sample-symbols.c - names for sampled addresses (see sample-symbols.h),
 * through elfutils' libdwfl: it reads the symbol tables (.symtab, else the
 * debug file's, else .dynsym) and finds the debug files (build-id under
 * the debug root, .gnu_debuglink next to the file, in .debug/ and under
 * the root), as perf and systemd-coredump do.  Kept here: which file a
 * sampled address lies in and at what bias (the dump's MAP records and
 * the file's segments, elf-file.h), the vDSO (this process's own, handed
 * to libdwfl from memory: dwfl-module.c), and the demangled names, once
 * per symbol. */
#define _GNU_SOURCE
#include "sample-symbols.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arrays.h"
#include "demangle.h"
#include "dwfl-module.h"
#include "elf-file.h"

/* a symbol's address -> the name shown for it, demangled */
struct name_slot {
    uint64_t addr; /* 0: empty */
    char *demangled;
};

struct elf_entry {
    char *path;
    int ok;               /* the file opened: its segments give the bias */
    struct instr_elf elf;
    struct instr_dwfl dw; /* its symbols */
    struct name_slot *names; /* open addressing, a power of two */
    size_t nnames, capnames;
};

struct instr_symbolizer {
    struct elf_entry *files;
    size_t nfiles, cap;
    char debug_root[512];
};

int instr_symbolizer_new(struct instr_symbolizer **sp)
{
    struct instr_symbolizer *s = calloc(1, sizeof *s);
    if (!s)
        return INSTR_ENOMEM;
    const char *root = getenv("INSTR_DEBUG_ROOT"); /* tests: a debug-file tree of their own */
    snprintf(s->debug_root, sizeof s->debug_root, "%s", root && *root ? root : "/usr/lib/debug");
    *sp = s;
    return 0;
}

void instr_symbolizer_free(struct instr_symbolizer *s)
{
    if (!s)
        return;
    for (size_t i = 0; i < s->nfiles; i++) {
        struct elf_entry *f = &s->files[i];
        for (size_t k = 0; k < f->capnames; k++)
            free(f->names[k].demangled);
        free(f->names);
        instr_dwfl_close(&f->dw);
        if (f->ok)
            instr_elf_close(&f->elf);
        free(f->path);
    }
    free(s->files);
    free(s);
}

static struct elf_entry *file_of(struct instr_symbolizer *s, const char *path)
{
    for (size_t i = 0; i < s->nfiles; i++)
        if (!strcmp(s->files[i].path, path))
            return &s->files[i];
    struct elf_entry *a = instr_grow(s->files, &s->cap, s->nfiles + 1, sizeof *a, 16);
    if (!a)
        return NULL;
    s->files = a;
    struct elf_entry *f = &s->files[s->nfiles];
    memset(f, 0, sizeof *f);
    if (!(f->path = strdup(path)))
        return NULL;
    s->nfiles++;
    if ((!strcmp(path, "[vdso]") ? instr_elf_open_vdso(&f->elf) : instr_elf_open(&f->elf, path)) < 0)
        return f;
    f->ok = 1;
    int vdso = !strcmp(path, "[vdso]");
    if (instr_dwfl_open(&f->dw, path, vdso ? f->elf.map : NULL, f->elf.size, s->debug_root) < 0)
        return NULL;
    return f;
}

/* The best of the function symbols at addr, as perf and instr's own
 * reader chose before libdwfl: sized, global before weak before local,
 * the fewest leading underscores, the shortest (malloc, not
 * __libc_malloc; write, not __write).  libdwfl's addrinfo returns one of
 * them, not always that one. */
static const char *best_alias(Dwfl_Module *mod, uint64_t addr, const char *found)
{
    const char *best = found;
    int n = dwfl_module_getsymtab(mod);
    long best_key = -1;
    for (int i = 1; i < n; i++) {
        GElf_Sym sym;
        GElf_Addr a;
        const char *name = dwfl_module_getsym_info(mod, i, &sym, &a, NULL, NULL, NULL);
        unsigned t = GELF_ST_TYPE(sym.st_info), b = GELF_ST_BIND(sym.st_info);
        if (!name || !*name || a != addr || (t != STT_FUNC && t != STT_GNU_IFUNC))
            continue;
        size_t under = strspn(name, "_"), len = strlen(name);
        long key = (long)(sym.st_size == 0) << 40 | (long)(b == STB_GLOBAL ? 0 : b == STB_WEAK ? 1 : 2) << 36 |
                   (long)(under < 15 ? under : 15) << 32 | (long)(len < 0xffffffffu ? len : 0xffffffffu);
        if (best_key < 0 || key < best_key || (key == best_key && strcmp(name, best) < 0)) {
            best_key = key;
            best = name;
        }
    }
    return best;
}

/* The demangled name shown for the symbol at addr (name: libdwfl's), made
 * once; NULL: no memory. */
static const char *demangled(struct elf_entry *f, uint64_t addr, const char *name)
{
    if (f->nnames * 2 >= f->capnames) {
        size_t cap = f->capnames ? f->capnames * 2 : 256;
        struct name_slot *n = calloc(cap, sizeof *n);
        if (!n)
            return NULL;
        for (size_t k = 0; k < f->capnames; k++)
            if (f->names[k].addr) {
                size_t h = (size_t)(f->names[k].addr * 0x9e3779b97f4a7c15ull >> 20) & (cap - 1);
                while (n[h].addr)
                    h = (h + 1) & (cap - 1);
                n[h] = f->names[k];
            }
        free(f->names);
        f->names = n;
        f->capnames = cap;
    }
    size_t h = (size_t)(addr * 0x9e3779b97f4a7c15ull >> 20) & (f->capnames - 1);
    while (f->names[h].addr && f->names[h].addr != addr)
        h = (h + 1) & (f->capnames - 1);
    if (f->names[h].addr)
        return f->names[h].demangled;
    name = best_alias(f->dw.mod, addr, name);
    /* .symtab names of versioned symbols carry the version: "memcpy@@GLIBC_2.14". */
    char *plain = strndup(name, strcspn(name, "@")), *d = plain ? instr_demangle(plain) : NULL;
    free(plain);
    if (!d)
        return NULL;
    f->names[h].addr = addr;
    f->names[h].demangled = d;
    f->nnames++;
    return d;
}

/* The map holding addr at tick: the latest one mapped by then, else any. */
static const struct instr_map *map_of(const struct instr_dump *d, uint64_t addr, uint64_t tick)
{
    const struct instr_map *any = NULL;
    for (size_t i = d->nmaps; i-- > 0;) {
        const struct instr_map *m = &d->maps[i];
        if (addr < m->start || addr >= m->end)
            continue;
        if (m->tick <= tick)
            return m;
        any = m;
    }
    return any;
}

int instr_symbolize(struct instr_symbolizer *s, const struct instr_dump *d, uint64_t addr, uint64_t tick,
                    struct instr_frame_sym *out)
{
    memset(out, 0, sizeof *out);
    const struct instr_map *m = map_of(d, addr, tick);
    const struct instr_module *mod = m ? instr_dump_module(d, m->module) : NULL;
    if (!mod)
        return 0;
    out->module = mod->path;
    struct elf_entry *f = file_of(s, mod->path);
    if (!f)
        return INSTR_ENOMEM;
    uint64_t bias;
    if (!f->ok || instr_elf_bias(&f->elf, m->start, m->pgoff, &bias) < 0)
        return 0;
    out->vaddr = addr - bias;
    if (!f->dw.mod)
        return 0;
    GElf_Sym sym;
    GElf_Off off;
    const char *name = dwfl_module_addrinfo(f->dw.mod, out->vaddr, &off, &sym, NULL, NULL, NULL);
    if (!name || (GELF_ST_TYPE(sym.st_info) != STT_FUNC && GELF_ST_TYPE(sym.st_info) != STT_GNU_IFUNC))
        return 0;
    if (!(out->name = demangled(f, out->vaddr - off, name)))
        return INSTR_ENOMEM;
    return 0;
}
