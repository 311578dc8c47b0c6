/* callsites.c - naming call-site frames (see callsites.h). */
#define _GNU_SOURCE
#include "callsites.h"

#include <elf.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "demangle.h"
#include "hook-abi.h"

/* ---- a module's ELF symbols ------------------------------------------------- */

struct elf_sym {
    uint64_t off, size; /* bytes from the module's load address */
    const char *name;   /* into the mapping */
};

struct elf_syms {
    uint64_t module;    /* module id */
    const uint8_t *map;
    size_t size;
    struct elf_sym *syms; /* functions, sorted by off */
    size_t n;
};

static int cmp_sym(const void *a, const void *b)
{
    const struct elf_sym *x = a, *y = b;
    return x->off < y->off ? -1 : x->off > y->off;
}

/* Reads the function symbols of an ELF64 file, treated as hostile input:
 * every table is checked against the file size.  Missing or unreadable
 * files simply have no symbols. */
static void elf_load(struct elf_syms *e, const char *path)
{
    /* The path comes from the dump: never block on a FIFO or a device. */
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
    struct stat st;
    if (fd < 0)
        return;
    if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size < (off_t)sizeof(Elf64_Ehdr)) {
        close(fd);
        return;
    }
    void *m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
    close(fd);
    if (m == MAP_FAILED)
        return;
    e->map = m;
    e->size = (size_t)st.st_size;
    const Elf64_Ehdr *eh = m;
    if (memcmp(eh->e_ident, ELFMAG, SELFMAG) || eh->e_ident[EI_CLASS] != ELFCLASS64 ||
        eh->e_shentsize != sizeof(Elf64_Shdr) || eh->e_shoff > e->size ||
        (uint64_t)eh->e_shnum * sizeof(Elf64_Shdr) > e->size - eh->e_shoff)
        return;
    /* Symbol values are virtual addresses; the load address maps the lowest
     * PT_LOAD's page (0 for PIE and shared objects). */
    uint64_t bias = UINT64_MAX;
    if (eh->e_phentsize == sizeof(Elf64_Phdr) && eh->e_phoff <= e->size &&
        (uint64_t)eh->e_phnum * sizeof(Elf64_Phdr) <= e->size - eh->e_phoff) {
        const Elf64_Phdr *ph = (const void *)((const uint8_t *)m + eh->e_phoff);
        for (unsigned i = 0; i < eh->e_phnum; i++)
            if (ph[i].p_type == PT_LOAD && ph[i].p_vaddr < bias)
                bias = ph[i].p_vaddr & ~(uint64_t)4095;
    }
    if (bias == UINT64_MAX)
        bias = 0;
    const Elf64_Shdr *sh = (const void *)((const uint8_t *)m + eh->e_shoff);
    for (int pass = 0; pass < 2 && !e->n; pass++) {
        uint32_t want = pass == 0 ? SHT_SYMTAB : SHT_DYNSYM;
        for (unsigned i = 0; i < eh->e_shnum; i++) {
            if (sh[i].sh_type != want || sh[i].sh_link >= eh->e_shnum ||
                sh[i].sh_entsize != sizeof(Elf64_Sym) || sh[i].sh_offset > e->size ||
                sh[i].sh_size > e->size - sh[i].sh_offset)
                continue;
            const Elf64_Shdr *str = &sh[sh[i].sh_link];
            if (str->sh_offset > e->size || str->sh_size > e->size - str->sh_offset || !str->sh_size)
                continue;
            const char *strtab = (const char *)m + str->sh_offset;
            const Elf64_Sym *sym = (const void *)((const uint8_t *)m + sh[i].sh_offset);
            size_t count = sh[i].sh_size / sizeof *sym;
            struct elf_sym *a = realloc(e->syms, (e->n + count) * sizeof *a);
            if (!a)
                return;
            e->syms = a;
            for (size_t k = 0; k < count; k++) {
                if (ELF64_ST_TYPE(sym[k].st_info) != STT_FUNC || !sym[k].st_value ||
                    sym[k].st_name >= str->sh_size || sym[k].st_value < bias)
                    continue;
                /* The name must end inside the table. */
                if (!memchr(strtab + sym[k].st_name, 0, str->sh_size - sym[k].st_name))
                    continue;
                e->syms[e->n++] = (struct elf_sym){sym[k].st_value - bias, sym[k].st_size,
                                                   strtab + sym[k].st_name};
            }
        }
    }
    if (e->n > 1)
        qsort(e->syms, e->n, sizeof *e->syms, cmp_sym);
}

static const struct elf_sym *elf_at(const struct elf_syms *e, uint64_t off)
{
    size_t lo = 0, hi = e->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (e->syms[mid].off <= off)
            lo = mid + 1;
        else
            hi = mid;
    }
    /* The last symbol starting at or before off that contains it. */
    for (size_t i = lo; i-- > 0 && lo - i < 64;)
        if (off < e->syms[i].off + (e->syms[i].size ? e->syms[i].size : 1))
            return &e->syms[i];
    return NULL;
}

static const struct elf_sym *elf_named(const struct elf_syms *e, const char *name)
{
    for (size_t i = 0; i < e->n; i++)
        if (!strcmp(e->syms[i].name, name))
            return &e->syms[i];
    return NULL;
}

static struct elf_syms *elf_of(struct elf_syms **cache, size_t *n, const struct instr_dump *d, uint64_t module)
{
    for (size_t i = 0; i < *n; i++)
        if ((*cache)[i].module == module)
            return &(*cache)[i];
    const struct instr_module *m = instr_dump_module(d, module);
    struct elf_syms *c = realloc(*cache, (*n + 1) * sizeof *c);
    if (!c)
        return NULL;
    *cache = c;
    struct elf_syms *e = &c[(*n)++];
    memset(e, 0, sizeof *e);
    e->module = module;
    if (m && m->path && m->path[0] == '/')
        elf_load(e, m->path);
    return e;
}

/* ---- the site map ------------------------------------------------------------- */

/* The pseudo-frame of callee name in module: one per name and module, so
 * that a program's own malloc calling libc's (through dlsym(RTLD_NEXT))
 * is two functions, not malloc -> malloc in one module.  A module not
 * known (0) joins the name's frame in any module. */
static int add_name(struct instr_sitemap *m, const char *name, uint64_t module, uint32_t *out)
{
    for (size_t i = 0; i < m->nnames; i++)
        if (!strcmp(m->names[i], name) && (m->module[i] == module || !m->module[i] || !module)) {
            *out = (uint32_t)i;
            return 0;
        }
    char **n = realloc(m->names, (m->nnames + 1) * sizeof *n);
    if (!n)
        return INSTR_ENOMEM;
    m->names = n;
    uint64_t *mo = realloc(m->module, (m->nnames + 1) * sizeof *mo);
    if (!mo)
        return INSTR_ENOMEM;
    m->module = mo;
    if (!(m->names[m->nnames] = strdup(name)))
        return INSTR_ENOMEM;
    m->module[m->nnames] = module;
    *out = (uint32_t)m->nnames++;
    return 0;
}

int instr_sitemap_build(struct instr_sitemap *m, const struct instr_dump *d)
{
    memset(m, 0, sizeof *m);
    struct elf_syms *cache = NULL;
    size_t ncache = 0;
    int rc = INSTR_ENOMEM;
    if (d->nsites && (!(m->pseudo = calloc(d->nsites, sizeof *m->pseudo)) ||
                      !(m->resolved = calloc(d->nsites, sizeof *m->resolved)) ||
                      !(m->merge_memo = calloc(d->nsites, sizeof *m->merge_memo))))
        goto out;
    for (size_t i = 0; i < d->nsites; i++) {
        const struct instr_callsite *cs = &d->sites[i];
        char buf[1100];
        const char *name = cs->callee ? cs->callee : "";
        const char *resolved = name;
        if (!name[0] && (cs->flags & INSTR_SITE_INDIRECT)) {
            struct elf_syms *e = cs->module ? elf_of(&cache, &ncache, d, cs->module) : NULL;
            const struct elf_sym *s = e ? elf_at(e, cs->callee_off) : NULL;
            if (s && s->off == cs->callee_off) {
                resolved = name = s->name;
            } else {
                const struct instr_function *caller = instr_dump_function(d, cs->caller);
                const char *cn = caller ? caller->name : "?";
                const struct elf_sym *cstart = NULL;
                if (caller) {
                    struct elf_syms *ce = elf_of(&cache, &ncache, d, caller->module);
                    cstart = ce ? elf_named(ce, cn) : NULL;
                }
                if (cstart && cs->site_off >= cstart->off)
                    snprintf(buf, sizeof buf, "[indirect] %.1000s+%#" PRIx64, cn, cs->site_off - cstart->off);
                else
                    snprintf(buf, sizeof buf, "[indirect] %.1000s@%#" PRIx64, cn, cs->site_off);
                name = buf;
                resolved = "";
            }
        }
        if (!name[0]) {
            snprintf(buf, sizeof buf, "[site %" PRIu64 "]", cs->id);
            name = buf;
        }
        if (!(m->resolved[i] = strdup(resolved)) || (rc = add_name(m, name, cs->module, &m->pseudo[i])) < 0) {
            rc = INSTR_ENOMEM;
            goto out;
        }
    }
    while (m->ndense < d->nsites && d->sites[m->ndense].id == m->ndense + 1)
        m->ndense++;
    rc = 0;
out:
    for (size_t i = 0; i < ncache; i++) {
        free(cache[i].syms);
        if (cache[i].map)
            munmap((void *)cache[i].map, cache[i].size);
    }
    free(cache);
    return rc; /* on failure the caller frees m with instr_sitemap_free */
}

void instr_sitemap_free(struct instr_sitemap *m, size_t nsites)
{
    free(m->pseudo);
    for (size_t i = 0; m->resolved && i < nsites; i++)
        free(m->resolved[i]);
    free(m->resolved);
    for (size_t i = 0; i < m->nnames; i++)
        free(m->names[i]);
    free(m->names);
    free(m->module);
    free(m->merge_memo);
    memset(m, 0, sizeof *m);
}

static const struct instr_callsite *site_of(const struct instr_dump *d, uint64_t id, size_t *index)
{
    const struct instr_callsite *cs = instr_dump_callsite(d, id);
    if (cs)
        *index = (size_t)(cs - d->sites);
    return cs;
}

uint32_t instr_sitemap_pseudo(const struct instr_sitemap *m, const struct instr_dump *d, uint64_t site_id)
{
    size_t i;
    return site_of(d, site_id, &i) ? m->pseudo[i] : UINT32_MAX;
}

/* Whether a call site's callee a and an instrumented function b are one
 * function under two names: the same symbol, or two variants of one C++
 * constructor or destructor.  GCC emits one body for the complete and base
 * object variants and makes the other an alias (a call names D1 while the
 * body it runs says D2), and a deleting destructor (D0) runs the same user
 * code: left apart they show as ~T() called by ~T(), one frame of nothing.
 * Variants differ in the digit after the C or D of the nested name and
 * demangle to the same text. */
int instr_callsite_same_function(const char *a, const char *b)
{
    size_t i = 0;
    while (a[i] && a[i] == b[i])
        i++;
    if (!a[i] && !b[i])
        return 1;
    if (i < 4 || a[0] != '_' || a[1] != 'Z' || (a[i - 1] != 'C' && a[i - 1] != 'D') || a[i] < '0' ||
        a[i] > '5' || b[i] < '0' || b[i] > '5' || strcmp(a + i + 1, b + i + 1))
        return 0;
    char *da = instr_demangle(a), *db = instr_demangle(b);
    int same = da && db && strcmp(da, a) && !strcmp(da, db);
    free(da);
    free(db);
    return same;
}

int instr_sitemap_merges(const struct instr_sitemap *m, const struct instr_dump *d, uint64_t site_id,
                         uint64_t fn_id)
{
    size_t i;
    const struct instr_callsite *cs = site_of(d, site_id, &i);
    if (!cs)
        return 0;
    /* The answer depends on the pair only, and a site mostly calls one
     * function: remember the last pair (a name comparison per CALL event
     * was a tenth of the report's time). */
    uint64_t key = (fn_id + 1) << 1;
    if ((m->merge_memo[i] & ~1ull) == key)
        return (int)(m->merge_memo[i] & 1);
    const struct instr_function *fn = instr_dump_function(d, fn_id);
    if (!fn)
        return 0;
    const char *r = m->resolved[i];
    int merges = r[0] ? instr_callsite_same_function(r, fn->name) : (cs->flags & INSTR_SITE_INDIRECT) && cs->module == fn->module;
    m->merge_memo[i] = key | (uint64_t)merges;
    return merges;
}

uint64_t instr_sitemap_callee(const struct instr_sitemap *m, const struct instr_dump *d, uint64_t site_id)
{
    size_t i;
    const struct instr_callsite *cs = site_of(d, site_id, &i);
    if (!cs)
        return UINT64_MAX;
    if (m->merge_memo[i] & 1)
        return (m->merge_memo[i] >> 1) - 1;
    const char *r = m->resolved[i];
    if (!r[0])
        return UINT64_MAX;
    uint64_t found = UINT64_MAX;
    for (size_t f = 0; f < d->nfunctions; f++) {
        const struct instr_function *fn = &d->functions[f];
        if (!instr_callsite_same_function(r, fn->name))
            continue;
        if (fn->module == cs->module)
            return fn->id;
        if (found == UINT64_MAX)
            found = fn->id;
    }
    return found;
}
