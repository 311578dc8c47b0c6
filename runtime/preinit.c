/* preinit.c - what ran before recording began: the executable's
 * .preinit_array functions.
 *
 * The dynamic linker calls them before any constructor, so before the
 * constructor that binds the hook table: whatever they call runs
 * unrecorded.  The runtime cannot go back for those calls, so it says how
 * many such functions of the executable there were (a note in the dump's
 * header, shown by the report).  Entries that point outside the
 * executable (a sanitizer's initialiser in its own library) are not the
 * program's code and are not counted. */
#define _GNU_SOURCE
#include <elf.h>
#include <link.h>
#include <stdint.h>

#include "internal.h"

struct preinit {
    unsigned count;
};

/* Whether addr lies in one of the module's loadable segments. */
static int in_module(const struct dl_phdr_info *info, uintptr_t addr)
{
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        uintptr_t lo = info->dlpi_addr + ph->p_vaddr;
        if (ph->p_type == PT_LOAD && addr >= lo && addr - lo < ph->p_memsz)
            return 1;
    }
    return 0;
}

/* The first object dl_iterate_phdr reports is the executable. */
static int count_main(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    struct preinit *p = arg;
    const ElfW(Dyn) *dyn = NULL;
    for (int i = 0; i < info->dlpi_phnum; i++)
        if (info->dlpi_phdr[i].p_type == PT_DYNAMIC)
            dyn = (const ElfW(Dyn) *)(info->dlpi_addr + info->dlpi_phdr[i].p_vaddr);
    uintptr_t array = 0;
    size_t bytes = 0;
    for (; dyn && dyn->d_tag != DT_NULL; dyn++) {
        if (dyn->d_tag == DT_PREINIT_ARRAY)
            array = info->dlpi_addr + dyn->d_un.d_ptr;
        else if (dyn->d_tag == DT_PREINIT_ARRAYSZ)
            bytes = dyn->d_un.d_val;
    }
    if (array && in_module(info, array))
        for (size_t k = 0; k < bytes / sizeof(uintptr_t); k++) {
            uintptr_t fn = ((const uintptr_t *)array)[k];
            p->count += fn != 0 && fn != (uintptr_t)-1 && in_module(info, fn);
        }
    return 1; /* the executable only */
}

void instr__preinit_say(void)
{
    struct preinit p = {0};
    dl_iterate_phdr(count_main, &p);
    if (!p.count)
        return;
    char n[16];
    int len = 0;
    for (unsigned v = p.count; v && len < 10; v /= 10)
        len++;
    n[len] = 0;
    for (unsigned v = p.count, i = (unsigned)len; i; v /= 10)
        n[--i] = (char)('0' + v % 10);
    instr__say("the executable's .preinit_array ran ", n,
               " function(s) before recording began", ": the calls they made are not recorded");
}
