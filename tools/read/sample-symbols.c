/* sample-symbols.c - ELF symbol lookup for sampled addresses (see sample-symbols.h). */
#include "sample-symbols.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arrays.h"
#include "demangle.h"
#include "elf-file.h"

struct elf_entry {
    char *path;
    int ok;               /* the file opened */
    struct instr_elf elf; /* the module file: segments */
    struct instr_elf dbg; /* where the symbols come from (the file itself, or its debug file) */
    int has_dbg;
    char **demangled; /* per symbol of the symbol source, lazily */
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
    snprintf(s->debug_root, sizeof s->debug_root, "/usr/lib/debug");
    *sp = s;
    return 0;
}

void instr_symbolizer_debug_root(struct instr_symbolizer *s, const char *dir)
{
    snprintf(s->debug_root, sizeof s->debug_root, "%s", dir);
}

void instr_symbolizer_free(struct instr_symbolizer *s)
{
    if (!s)
        return;
    for (size_t i = 0; i < s->nfiles; i++) {
        struct elf_entry *f = &s->files[i];
        struct instr_elf *src = f->has_dbg ? &f->dbg : &f->elf;
        if (f->demangled)
            for (size_t k = 0; k < src->nsyms; k++)
                free(f->demangled[k]);
        free(f->demangled);
        if (f->has_dbg)
            instr_elf_close(&f->dbg);
        if (f->ok)
            instr_elf_close(&f->elf);
        free(f->path);
    }
    free(s->files);
    free(s);
}

/* Tries a debug file: it must have a .symtab to be worth it. */
static int try_debug(struct elf_entry *f, const char *path)
{
    if (instr_elf_open(&f->dbg, path) < 0)
        return 0;
    if (!instr_elf_has_symtab(&f->dbg)) {
        instr_elf_close(&f->dbg);
        return 0;
    }
    f->has_dbg = 1;
    return 1;
}

static void find_debug_file(const struct instr_symbolizer *s, struct elf_entry *f)
{
    char id[130], path[1600];
    if (instr_elf_build_id(&f->elf, id, sizeof id) == 0 && strlen(id) > 2) {
        snprintf(path, sizeof path, "%s/.build-id/%.2s/%s.debug", s->debug_root, id, id + 2);
        if (try_debug(f, path))
            return;
    }
    const char *link = instr_elf_debuglink(&f->elf);
    if (!link || strchr(link, '/'))
        return;
    const char *slash = strrchr(f->path, '/');
    int dirlen = slash ? (int)(slash - f->path) : 0;
    snprintf(path, sizeof path, "%.*s/.debug/%s", dirlen, f->path, link);
    if (try_debug(f, path))
        return;
    snprintf(path, sizeof path, "%s%.*s/%s", s->debug_root, dirlen, f->path, link);
    if (try_debug(f, path))
        return;
    snprintf(path, sizeof path, "%.*s/%s", dirlen, f->path, link);
    if (strcmp(path, f->path))
        try_debug(f, path);
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
    if (!instr_elf_has_symtab(&f->elf))
        find_debug_file(s, f);
    struct instr_elf *src = f->has_dbg ? &f->dbg : &f->elf;
    if (instr_elf_load_symbols(src) < 0 || (src->nsyms && !(f->demangled = calloc(src->nsyms, sizeof(char *)))))
        return NULL;
    return f;
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
    struct instr_elf *src = f->has_dbg ? &f->dbg : &f->elf;
    const struct instr_elf_sym *sym = instr_elf_symbol(src, out->vaddr);
    if (!sym)
        return 0;
    size_t k = (size_t)(sym - src->syms);
    if (!f->demangled[k]) {
        /* .symtab names of versioned symbols carry the version: "memcpy@@GLIBC_2.14". */
        size_t l = strcspn(sym->name, "@");
        char *plain = strndup(sym->name, l);
        if (!plain || !(f->demangled[k] = instr_demangle(plain))) {
            free(plain);
            return INSTR_ENOMEM;
        }
        free(plain);
    }
    out->name = f->demangled[k];
    return 0;
}
