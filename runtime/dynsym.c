/* dynsym.c - where the dynamic linker would bind a name, found without
 * dlsym.
 *
 * A call site's callee is attributed to the module that defines it
 * (metadata.c).  dlsym(RTLD_DEFAULT, name) answers that, but a name it
 * does not find (a static function, a hidden one, an executable's symbol
 * not exported) costs it a malloc for the error it keeps for dlerror, and
 * malloc is the program's if the program defines one: the runtime would
 * call into the program, which then counts calls it never made and, if its
 * malloc is instrumented, shows them as its own (issue 38 §2).  This walks
 * the loaded modules in load order (the global scope's order for the
 * default namespace) and looks the name up in each one's GNU hash table of
 * dynamic symbols, as the dynamic linker does, allocating nothing. */
#define _GNU_SOURCE
#include <elf.h>
#include <link.h>
#include <stdint.h>
#include <string.h>

#include "internal.h"

struct lookup {
    const char *name;
    uint32_t hash;
    void *addr;
};

static uint32_t gnu_hash(const char *s)
{
    uint32_t h = 5381;
    for (; *s; s++)
        h = h * 33 + (unsigned char)*s;
    return h;
}

/* A d_ptr of the dynamic section: glibc relocates them in place for the
 * modules it loads; the vDSO's (and a read-only .dynamic's) are still
 * offsets. */
static uintptr_t dyn_ptr(const struct dl_phdr_info *info, ElfW(Addr) v)
{
    return v < info->dlpi_addr ? info->dlpi_addr + v : v;
}

static int in_module(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    struct lookup *l = data;
    const ElfW(Dyn) *dyn = NULL;
    for (int i = 0; i < info->dlpi_phnum; i++)
        if (info->dlpi_phdr[i].p_type == PT_DYNAMIC)
            dyn = (const ElfW(Dyn) *)(info->dlpi_addr + info->dlpi_phdr[i].p_vaddr);
    if (!dyn || (info->dlpi_name && strstr(info->dlpi_name, "linux-vdso")))
        return 0;
    const ElfW(Sym) *symtab = NULL;
    const char *strtab = NULL;
    const uint32_t *gh = NULL;
    for (; dyn->d_tag != DT_NULL; dyn++) {
        if (dyn->d_tag == DT_SYMTAB)
            symtab = (const ElfW(Sym) *)dyn_ptr(info, dyn->d_un.d_ptr);
        else if (dyn->d_tag == DT_STRTAB)
            strtab = (const char *)dyn_ptr(info, dyn->d_un.d_ptr);
        else if (dyn->d_tag == DT_GNU_HASH)
            gh = (const uint32_t *)dyn_ptr(info, dyn->d_un.d_ptr);
    }
    if (!symtab || !strtab || !gh || !gh[0] || !gh[2])
        return 0; /* no GNU hash table: nothing found here */
    const uint32_t nbuckets = gh[0], symoffset = gh[1], bloom_size = gh[2], shift = gh[3];
    const ElfW(Addr) *bloom = (const ElfW(Addr) *)(gh + 4);
    const uint32_t *buckets = (const uint32_t *)(bloom + bloom_size);
    const uint32_t *chain = buckets + nbuckets;
    const unsigned bits = sizeof(ElfW(Addr)) * 8;
    const uint32_t h = l->hash;
    ElfW(Addr) word = bloom[(h / bits) % bloom_size];
    ElfW(Addr) mask = ((ElfW(Addr))1 << (h % bits)) | ((ElfW(Addr))1 << ((h >> shift) % bits));
    if ((word & mask) != mask)
        return 0;
    uint32_t ix = buckets[h % nbuckets];
    if (ix < symoffset)
        return 0;
    for (;; ix++) {
        uint32_t ch = chain[ix - symoffset];
        const ElfW(Sym) *s = &symtab[ix];
        unsigned bind = ELF64_ST_BIND(s->st_info);
        if ((ch | 1) == (h | 1) && s->st_shndx != SHN_UNDEF && (bind == STB_GLOBAL || bind == STB_WEAK) &&
            !strcmp(strtab + s->st_name, l->name)) {
            l->addr = (void *)(info->dlpi_addr + s->st_value);
            return 1; /* the first definition in load order binds */
        }
        if (ch & 1)
            return 0;
    }
}

void *instr__dynsym(const char *name)
{
    struct lookup l = {name, gnu_hash(name), NULL};
    if (name && *name)
        dl_iterate_phdr(in_module, &l);
    return l.addr;
}
