/* maps.c - INSTR_SAMPLE=HZ: the process's executable mappings as MAP
 * records, so the tools can name a sampled PC in code the plugin never saw
 * (libc's memset under its call-site frame), as they do for instr-sample.
 *
 * Each loaded object's executable PT_LOAD segments, page-rounded as the
 * kernel maps them, become MAP records (dump-format.h) of the object's
 * MODULE (the same module table as the functions': an instrumented module
 * keeps its id).  They are written when the sampler starts (tick 0: before
 * every sample), and again when the set of loaded objects changed: the
 * dynamic linker counts the objects it added and removed (dl_iterate_phdr's
 * dlpi_adds, dlpi_subs), and the sampler compares the counts each time it
 * drains its ring, before it writes the samples, so a sample in a library
 * dlopen'ed since the last drain finds its map.  Only mappings not written
 * yet are written; a new one gets the tick of the last look that did not
 * see it (it was mapped after that, and the tools take the latest map
 * holding an address by a sample's time).  A fork child's dump gets them
 * all again.  Not seen: an object loaded and unloaded between two drains.
 *
 * The hot path is untouched: this runs only where the sampler drains
 * (chunk switch, thread end, exit) or starts.  The loader's list is read
 * without the meta lock (an instrumented dl_iterate_phdr callback of the
 * program takes the loader's lock, then the meta lock), into static
 * buffers that one thread at a time fills; the records are written after.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <link.h>
#include <stddef.h>
#include <string.h>
#include <sys/auxv.h>

#include "internal.h"

#define PAGE 4096u
#define MAX_SEGS 1024u           /* executable segments looked at (more are not named) */
#define NAMES_SIZE (64u << 10)   /* their objects' paths */

struct seg {
    uint64_t start, end, offset; /* page-rounded mapping, file offset of start */
    uintptr_t base;              /* the object's first mapped byte (its MODULE load address) */
    uint32_t name;               /* offset of its path in names */
    uint32_t module;             /* module id, once written */
};

struct counts {
    unsigned long long adds, subs;
    int ok; /* the loader gave them (glibc >= 2.4) */
};

/* The walker's (one thread at a time: walker holds its dump's gen). */
static struct seg segs[MAX_SEGS];
static uint32_t nsegs;
static char names[NAMES_SIZE];
static uint32_t names_used;
static struct seg written[MAX_SEGS]; /* MAP records in this dump (beyond: written again, harmless) */
static uint32_t nwritten;
static uint32_t written_gen;         /* the dump they are in (instr__rt.dump_gen), 0 = none */
static struct counts seen;           /* the loader's counts when they were written */
static uint64_t seen_tsc;            /* last look that found the set unchanged */
static uint32_t walker;              /* dump_gen of the thread at it, 0 = free */

static int count_objects(struct dl_phdr_info *info, size_t size, void *arg)
{
    struct counts *c = arg;
    if (size >= offsetof(struct dl_phdr_info, dlpi_subs) + sizeof info->dlpi_subs) {
        c->adds = info->dlpi_adds;
        c->subs = info->dlpi_subs;
        c->ok = 1;
    }
    return 1; /* one object tells the counts */
}

static int collect(struct dl_phdr_info *info, size_t size, void *arg)
{
    if (!((struct counts *)arg)->ok)
        count_objects(info, size, arg);
    uintptr_t base = UINTPTR_MAX;
    for (int i = 0; i < info->dlpi_phnum; i++)
        if (info->dlpi_phdr[i].p_type == PT_LOAD) {
            uintptr_t s = (info->dlpi_addr + info->dlpi_phdr[i].p_vaddr) & ~(uintptr_t)(PAGE - 1);
            base = s < base ? s : base;
        }
    if (base == UINTPTR_MAX)
        return 0;
    /* The main program's name is empty; the vDSO's is no file (the tools
     * read theirs: the same kernel's). */
    const char *path = info->dlpi_name;
    if (base == getauxval(AT_SYSINFO_EHDR))
        path = "[vdso]";
    else if (!path || !path[0])
        path = instr__rt.exe_path;
    size_t len = strnlen(path, INSTR_RT_MAX_STRING);
    if (!len || names_used + len + 1 > NAMES_SIZE)
        return 0;
    uint32_t name = names_used;
    int any = 0;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X) || !ph->p_memsz)
            continue;
        if (nsegs == MAX_SEGS)
            return 1;
        uint64_t s = info->dlpi_addr + ph->p_vaddr, lo = s & ~(uint64_t)(PAGE - 1);
        segs[nsegs++] = (struct seg){lo, (s + ph->p_memsz + PAGE - 1) & ~(uint64_t)(PAGE - 1),
                                     ph->p_offset - (s - lo), base, name, 0};
        any = 1;
    }
    if (any) {
        memcpy(names + name, path, len);
        names[name + len] = 0;
        names_used += (uint32_t)len + 1;
    }
    return 0;
}

static int was_written(const struct seg *g)
{
    for (uint32_t i = 0; i < nwritten; i++)
        if (written[i].start == g->start && written[i].end == g->end && written[i].offset == g->offset &&
            written[i].module == g->module)
            return 1;
    return 0;
}

void instr__maps_check(void)
{
    if (!instr__rt.header || instr__rt.stopped || instr__tsc_gone || !instr__may_syscall())
        return;
    /* A walker of an older dump gen is a fork parent's thread, gone here. */
    uint32_t gen = instr__rt.dump_gen, cur = __atomic_load_n(&walker, __ATOMIC_ACQUIRE);
    if (!gen || cur == gen || !__atomic_compare_exchange_n(&walker, &cur, gen, 0, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
        return; /* another thread writes what changed */
    int saved = errno;
    uint64_t now = instr__tsc();
    struct counts c = {0, 0, 0};
    if (written_gen == gen) {
        dl_iterate_phdr(count_objects, &c);
        if (c.ok && seen.ok && c.adds == seen.adds && c.subs == seen.subs) {
            seen_tsc = now;
            goto out;
        }
        c.ok = 0;
    } else {
        nwritten = 0;
        seen_tsc = 0; /* a new dump: its first maps precede every sample */
    }
    nsegs = names_used = 0;
    dl_iterate_phdr(collect, &c);
    pthread_mutex_lock(&instr__rt.meta_lock);
    for (uint32_t i = 0; i < nsegs && !instr__rt.stopped; i++) {
        struct seg *g = &segs[i];
        if (!(g->module = instr__meta_module(names + g->name, g->base)) || was_written(g))
            continue;
        instr__meta_map(g->module, g->start, g->end, g->offset, seen_tsc);
        if (nwritten < MAX_SEGS)
            written[nwritten++] = *g;
    }
    pthread_mutex_unlock(&instr__rt.meta_lock);
    written_gen = gen;
    seen = c;
    seen_tsc = now;
out:
    __atomic_store_n(&walker, 0, __ATOMIC_RELEASE);
    errno = saved;
}
