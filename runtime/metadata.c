/* metadata.c - function, module, call-site, thread and label records; the
 * function and call-site registries.
 *
 * Layering: above dump-file.c (its chunks), below thread-state.c, labels.c
 * and the hooks, which call it; it calls none of them.
 *
 * Everything here runs under the meta lock and is rare: once per function,
 * module, call site (per target for indirect calls) and thread.  Records are appended to the current METADATA chunk;
 * each record's type byte is stored last (release), so a reader of a killed
 * process never sees a half-written record, only the zero byte before it.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "internal.h"

struct registered {
    const char *names; /* arena copy of the descriptor's strings (hook-abi.h) */
    uint32_t module;
    uint8_t flags;     /* the descriptor's INSTR_FN_* */
};

struct module {
    uintptr_t base; /* dli_fbase: where the module's ELF image is mapped */
    const char *path;
};

/* The registries grow on demand (doubling, by mremap: they are only read
 * under the meta lock), so a process reserves address space for what it
 * registered, not for the largest program: under a low RLIMIT_AS the
 * program's own allocations must still fit. */
static struct registered *registry; /* [registry_cap] */
static uint32_t registry_cap;
static uint32_t registered_count;   /* ids are 1..registered_count */
static struct module modules[INSTR_RT_MAX_MODULES];
static uint32_t module_count;
/* Call sites: one id per direct site, one per (indirect site, target). */
struct site {
    uint32_t caller;     /* function id */
    uint32_t line;
    uint32_t flags;      /* INSTR_SITE_* */
    uint32_t module;     /* callee's module id, 0 = unknown */
    const char *callee;  /* arena copy: mangled name, resolved symbol, or "" */
    uint64_t callee_off; /* callee address - its module's base (0 = unknown) */
    uint64_t site_off;   /* return address of the call - the caller module's base */
};
#define MAX_SITES (1u << 20)
#define FIRST_CAP 1024u /* first capacity of each registry */
struct site_key {
    uintptr_t site, target;
    uint32_t caller, id; /* id 0 = empty slot */
};
static struct site *sites;         /* [sites_cap]; ids are 1..site_count */
static uint32_t sites_cap, site_count;
static struct site_key *site_map;  /* [site_map_size]: open addressing, at most half full */
static uint32_t site_map_size, site_map_used;
/* Copies of every string a record is written from again (fork child):
 * module paths, function names, callee names.  Never pointers into a
 * module: a dlclose'd library's descriptors are gone when a later fork
 * writes the records again.  Grows by blocks, never freed (meta lock). */
static char *arena;
static size_t arena_used, arena_size;
#define ARENA_SIZE (64u << 10)
#define ARENA_MAX (4u << 20)

enum field_kind { F_VARINT, F_STRING, F_U64 };
struct field {
    enum field_kind kind;
    uint64_t v;
    const char *s;
};

static size_t str_len(const char *s)
{
    return s ? strnlen(s, INSTR_RT_MAX_STRING) : 0;
}

/* Makes room for need elements of size sz in the array *base of *cap
 * (meta lock held): 0, or -1 (capacity max reached, no memory, or a
 * sandbox: the caller then does not record what needed the room). */
static int reserve(void **base, uint32_t *cap, size_t sz, uint32_t need, uint32_t max)
{
    if (need <= *cap)
        return 0;
    if (need > max || !instr__may_syscall())
        return -1;
    uint32_t n = *cap ? *cap : FIRST_CAP;
    while (n < need)
        n *= 2;
    if (n > max)
        n = max;
    void *m = *base ? mremap(*base, *cap * sz, n * sz, MREMAP_MAYMOVE)
                    : mmap(NULL, n * sz, PROT_READ | PROT_WRITE,
                           MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (m == MAP_FAILED)
        return -1;
    *base = m;
    *cap = n;
    return 0;
}

static void read_process(void);

int instr__meta_init(void)
{
    read_process();
    /* Only the function registry now: call sites get theirs at the first
     * call site. */
    if (reserve((void **)&registry, &registry_cap, sizeof *registry, 1, INSTR_RT_MAX_FUNCTIONS))
        return -1;
    return 0;
}

static struct site_key *site_slot(uintptr_t site, uint32_t caller, uintptr_t target);

/* Room for one more call site, and its indirect-map slot (meta lock held). */
static int site_room(void)
{
    if (reserve((void **)&sites, &sites_cap, sizeof *sites, site_count + 1, MAX_SITES))
        return -1;
    if (2 * (site_map_used + 1) <= site_map_size)
        return 0;
    /* The map is rehashed into one twice as large. */
    uint32_t size = site_map_size ? 2 * site_map_size : 2 * FIRST_CAP;
    if (!instr__may_syscall())
        return -1;
    struct site_key *m = mmap(NULL, (size_t)size * sizeof *m, PROT_READ | PROT_WRITE,
                              MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (m == MAP_FAILED)
        return -1;
    struct site_key *old = site_map;
    uint32_t old_size = site_map_size;
    site_map = m;
    site_map_size = size;
    for (uint32_t i = 0; i < old_size; i++)
        if (old[i].id)
            *site_slot(old[i].site, old[i].caller, old[i].target) = old[i];
    if (old)
        munmap(old, (size_t)old_size * sizeof *old);
    return 0;
}

static void put_process(void);

static int new_meta_chunk(void)
{
    struct instr_chunk_header *old = instr__rt.meta;
    if (old) {
        old->used_bytes = (uint32_t)(instr__rt.meta_pos - (uint8_t *)old - INSTR_CHUNK_HEADER_SIZE);
        instr__rt.meta = NULL;
    }
    struct instr_chunk_header *c =
        instr__chunk_map(&instr__rt.meta_stage, INSTR_CHUNK_METADATA, 0, 0, instr__rt.meta_seq, 0);
    if (!c)
        return -1;
    instr__rt.meta_seq++;
    instr__rt.meta = c;
    instr__rt.meta_pos = (uint8_t *)c + INSTR_CHUNK_HEADER_SIZE;
    if (instr__rt.meta_seq == 1)
        put_process(); /* a dump's first record (a fork child's too) */
    return 0;
}

/* Bytes left in the current metadata chunk (meta lock held, one mapped). */
static size_t meta_room(void)
{
    return (size_t)((uint8_t *)instr__rt.meta + instr__rt.meta_stage.csize - instr__rt.meta_pos);
}

/* Appends one record (meta lock held).  Returns 0, or -1 if it was lost. */
static int meta_put(uint8_t type, const struct field *f, int n)
{
    size_t len = 0;
    for (int i = 0; i < n; i++) {
        if (f[i].kind == F_VARINT)
            len += instr_varint_size(f[i].v);
        else if (f[i].kind == F_U64)
            len += 8;
        else
            len += instr_varint_size(str_len(f[i].s)) + str_len(f[i].s);
    }
    size_t total = 1 + instr_varint_size(len) + len;
    if (total > INSTR_RT_CHUNK_SIZE - INSTR_CHUNK_HEADER_SIZE)
        return -1;
    if (!instr__rt.meta || meta_room() < total) {
        if (new_meta_chunk())
            return -1;
        /* A dump's first chunk (small) starts with the PROCESS record;
         * the next one is whole. */
        if (meta_room() < total && new_meta_chunk())
            return -1;
    }
    uint8_t *start = instr__rt.meta_pos;
    uint8_t *p = instr_put_varint(start + 1, len);
    for (int i = 0; i < n; i++) {
        if (f[i].kind == F_VARINT) {
            p = instr_put_varint(p, f[i].v);
        } else if (f[i].kind == F_U64) {
            for (int b = 0; b < 8; b++)
                *p++ = (uint8_t)(f[i].v >> (8 * b));
        } else {
            size_t l = str_len(f[i].s);
            p = instr_put_varint(p, l);
            memcpy(p, f[i].s, l);
            p += l;
        }
    }
    __atomic_store_n(start, type, __ATOMIC_RELEASE);
    instr__rt.meta_pos = p;
    return 0;
}

static void put_module(uint32_t id)
{
    struct field f[] = {
        {F_VARINT, id, NULL},
        {F_STRING, 0, modules[id - 1].path},
        {F_U64, modules[id - 1].base, NULL},
    };
    meta_put(INSTR_META_MODULE, f, 3);
}

/* A registered function's strings: "mangled\0file\0line\0" and, only
 * when the plugin says so, "demangled\0" ("" otherwise). */
struct fn_names {
    const char *name, *file, *line, *demangled;
};

static struct fn_names fn_names(uint32_t id)
{
    struct fn_names n;
    n.name = registry[id - 1].names;
    n.file = n.name + strnlen(n.name, INSTR_RT_MAX_STRING) + 1;
    n.line = n.file + strnlen(n.file, INSTR_RT_MAX_STRING) + 1;
    n.demangled = (registry[id - 1].flags & INSTR_FN_DEMANGLED) ? n.line + strnlen(n.line, INSTR_RT_MAX_STRING) + 1 : "";
    return n;
}

static void put_function(uint32_t id)
{
    struct fn_names names = fn_names(id), *n = &names;
    uint64_t ln = 0;
    for (int i = 0; i < 10 && n->line[i] >= '0' && n->line[i] <= '9'; i++)
        ln = ln * 10 + (uint64_t)(n->line[i] - '0');
    struct field f[] = {
        {F_VARINT, id, NULL},
        {F_VARINT, registry[id - 1].module, NULL},
        {F_VARINT, ln, NULL},
        {F_STRING, 0, n->name},
        {F_STRING, 0, n->file},
        {F_STRING, 0, n->demangled},
    };
    meta_put(INSTR_META_FUNCTION, f, 6);
}

/* A copy of the l bytes at s followed by a NUL; NULL if out of memory. */
static const char *arena_copy_n(const char *s, size_t l)
{
    if (!arena || arena_used + l + 1 > arena_size) {
        /* Blocks of 64 KiB, then twice the previous, up to 4 MiB. */
        size_t size = !arena ? ARENA_SIZE : arena_size < ARENA_MAX ? 2 * arena_size : ARENA_MAX;
        if (size < l + 1)
            size = l + 1;
        if (!instr__may_syscall())
            return NULL;
        void *m = mmap(NULL, size, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        if (m == MAP_FAILED)
            return NULL;
        arena = m; /* the old block stays: its copies are in use */
        arena_size = size;
        arena_used = 0;
    }
    char *d = arena + arena_used;
    memcpy(d, s, l);
    d[l] = 0;
    arena_used += l + 1;
    return d;
}

static const char *arena_copy(const char *s)
{
    const char *d = arena_copy_n(s, str_len(s));
    return d ? d : "";
}

/* The descriptor's strings ("mangled\0file\0line\0" [+ "demangled\0"]). */
static const char *copy_names(const struct instr_fn_desc *d)
{
    int n = d->flags & INSTR_FN_DEMANGLED ? 4 : 3;
    size_t l = 0;
    for (int i = 0; i < n; i++)
        l += str_len(d->names + l) + 1;
    const char *c = arena_copy_n(d->names, l);
    return c ? c : "\0\0\0";
}

#if defined(__GLIBC_PREREQ) && __GLIBC_PREREQ(2, 35)
/* Weak: a glibc older than the one built against has none, and then
 * dladdr1 does the work. */
#pragma weak _dl_find_object
#define HAVE_DL_FIND_OBJECT 1
#endif

/* The module holding addr; writes its MODULE record the first time.
 * _dl_find_object (glibc 2.35) finds it in a sorted table; dladdr1 also
 * looks for the nearest symbol, a scan of the object's dynamic symbols
 * (glibc's, thousands of them), at every first call of a function and
 * every call site: 3 % of a short program's run (examples/shapes).  The
 * base is the same either way: the object's lowest mapped address. */
static uint32_t module_of(const void *addr)
{
#ifdef HAVE_DL_FIND_OBJECT
    struct dl_find_object found;
    if (_dl_find_object && _dl_find_object((void *)addr, &found) == 0 && found.dlfo_link_map) {
        const struct link_map *fl = found.dlfo_link_map;
        return instr__meta_module(fl->l_name && fl->l_name[0] ? fl->l_name : instr__rt.exe_path,
                                  (uintptr_t)found.dlfo_map_start);
    }
#endif
    Dl_info info;
    struct link_map *lm = NULL;
    if (!dladdr1(addr, &info, (void **)&lm, RTLD_DL_LINKMAP))
        return 0;
    uintptr_t base = (uintptr_t)info.dli_fbase;
    /* The main program's link map has an empty name: use /proc/self/exe. */
    const char *path = instr__rt.exe_path;
    if (lm && lm->l_name && lm->l_name[0])
        path = lm->l_name;
    else if (!lm && info.dli_fname && info.dli_fname[0] == '/')
        path = info.dli_fname;
    return instr__meta_module(path, base);
}

/* The module at base with this path; writes its MODULE record the first
 * time (meta lock held).  Base and path: a library loaded where a
 * dlclose'd one was is another module. */
uint32_t instr__meta_module(const char *path, uintptr_t base)
{
    for (uint32_t i = 0; i < module_count; i++)
        if (modules[i].base == base && !strcmp(modules[i].path, path))
            return i + 1;
    if (module_count == INSTR_RT_MAX_MODULES)
        return 0;
    modules[module_count].base = base;
    modules[module_count].path = arena_copy(path);
    module_count++;
    put_module(module_count);
    return module_count;
}

/* No room for one more function (what: "function NAME") or call site:
 * flagged in the header, and said the first time of each (meta lock held). */
static void registry_full(int site, const char *what)
{
    static int said[2];
    struct instr_dump_header *h = instr__rt.header;
    if (h)
        __atomic_fetch_or(&h->flags, INSTR_DUMP_REGISTRY_FULL, __ATOMIC_RELAXED);
    if (said[site]++)
        return;
    instr__say("no room to register ", what,
               " (the runtime's registry could not grow: no memory); from here on, the calls of what has "
               "no id are not recorded, counted as dropped",
               "");
}

/* Gives a function its dense id (1, 2, ...) and writes its record.  Returns
 * the id, or 0 if it cannot be registered (it is then not recorded, and
 * the event of this INSTR_EV_* kind that needed it is counted dropped:
 * ENTER for a call of it, CALL for a call site in it, 0 for count mode's
 * totals at exit). */
uint32_t instr__register(struct instr_fn_desc *d, unsigned kind)
{
    int saved = errno;
    uint32_t id;
    pthread_mutex_lock(&instr__rt.meta_lock);
    id = __atomic_load_n(&d->id, __ATOMIC_ACQUIRE);
    if (id == 0 && !instr__rt.stopped &&
        reserve((void **)&registry, &registry_cap, sizeof *registry, registered_count + 1,
                INSTR_RT_MAX_FUNCTIONS) == 0) {
        uint32_t module = module_of(d);
        id = registered_count + 1;
        registry[id - 1].names = copy_names(d);
        registry[id - 1].flags = d->flags;
        registry[id - 1].module = module;
        registered_count = id;
        put_function(id);
        struct fn_names n = fn_names(id);
        d->rt_flags = instr__filter_fn_flags(n.name, n.demangled);
        if (!(d->flags & INSTR_FN_SWITCHABLE))
            instr__switch_unswitchable(); /* the switch reaches it through the filters */
        __atomic_store_n(&d->id, id, __ATOMIC_RELEASE);
    } else if (id == 0 && !instr__rt.stopped) {
        char what[96];
        snprintf(what, sizeof what, "function %.80s", d->names);
        registry_full(0, what);
        d->rt_flags |= INSTR_FN_RT_NO_ROOM;
        instr__count_dropped_kind(kind); /* no room: this event is not recorded */
    }
    pthread_mutex_unlock(&instr__rt.meta_lock);
    errno = saved;
    return id;
}

static void put_site(uint32_t id)
{
    const struct site *st = &sites[id - 1];
    struct field f[] = {
        {F_VARINT, id, NULL},
        {F_VARINT, st->caller, NULL},
        {F_VARINT, st->line, NULL},
        {F_VARINT, st->flags, NULL},
        {F_STRING, 0, st->callee},
        {F_VARINT, st->module, NULL},
        {F_U64, st->callee_off, NULL},
        {F_U64, st->site_off, NULL},
    };
    meta_put(INSTR_META_CALLSITE, f, 8);
}

static uint64_t module_offset(uint32_t module, const void *addr)
{
    return module ? (uint64_t)((uintptr_t)addr - modules[module - 1].base) : 0;
}

/* The slot of (site, caller, target) in the indirect map: its entry, or the
 * empty slot where it goes. */
static struct site_key *site_slot(uintptr_t site, uint32_t caller, uintptr_t target)
{
    uint64_t h = (site ^ target * 0x9e3779b97f4a7c15ull ^ caller) * 0xff51afd7ed558ccdull;
    for (size_t i = (size_t)(h >> 20) % site_map_size;; i = (i + 1) % site_map_size) {
        struct site_key *k = &site_map[i];
        if (!k->id || (k->site == site && k->target == target && k->caller == caller))
            return k;
    }
}

/* Gives a call site (an indirect one: the pair site, target) its id and
 * writes its CALLSITE record; caches the id in the descriptor.  The caller
 * is part of the key: after a dlclose, another site descriptor may sit at
 * the same address, but its caller then has a new function id.  Returns the
 * id, or 0 if it cannot be registered (the call is then not recorded). */
uint32_t instr__register_site(struct instr_site_desc *s, void *target, void *ret_addr)
{
    int saved = errno;
    uint32_t caller = __atomic_load_n(&s->caller->id, __ATOMIC_ACQUIRE);
    if (!caller && !(caller = instr__register(s->caller, INSTR_EV_CALL)))
        return 0;
    uint32_t id = 0;
    pthread_mutex_lock(&instr__rt.meta_lock);
    struct site_key *k = NULL;
    if (instr__rt.stopped)
        goto out;
    if (target) {
        if (site_map && (id = site_slot((uintptr_t)s, caller, (uintptr_t)target)->id))
            goto cache;
    } else if ((id = __atomic_load_n(&s->id, __ATOMIC_ACQUIRE))) {
        goto out;
    }
    if (site_room()) {
        registry_full(1, "a call site");
        instr__count_dropped_kind(INSTR_EV_CALL); /* no room: this call is not recorded */
        goto out;
    }
    if (target)
        k = site_slot((uintptr_t)s, caller, (uintptr_t)target);
    struct site *st = &sites[site_count];
    memset(st, 0, sizeof *st);
    st->caller = caller;
    st->line = s->line;
    st->flags = s->flags & INSTR_SITE_INDIRECT; /* the others are the runtime's */
    st->site_off = module_offset(registry[caller - 1].module, ret_addr);
    const void *addr = target;
    const char *name = "";
    Dl_info info;
    if (target) {
        /* The dynamic symbol at the target, if any: the report looks in the
         * module's symbol table otherwise. */
        if (dladdr(target, &info) && info.dli_sname && info.dli_saddr == target)
            name = info.dli_sname;
    } else {
        name = s->callee ? s->callee : "";
        /* Where the call goes, for the module view: the definition the
         * dynamic linker binds the name to.  Not found (a static or hidden
         * function): it is in the caller's module. */
        addr = name[0] ? instr__dynsym(name) : NULL; /* dynsym.c: dlsym would malloc when it fails */
    }
    st->callee = arena_copy(name);
    if (addr) {
        st->module = module_of(addr);
        st->callee_off = module_offset(st->module, addr);
    } else {
        st->module = registry[caller - 1].module;
    }
    id = ++site_count;
    put_site(id);
    if (!target) {
        __atomic_store_n(&s->id, id, __ATOMIC_RELEASE);
        goto out;
    }
    k->site = (uintptr_t)s;
    k->target = (uintptr_t)target;
    k->caller = caller;
    k->id = id;
    site_map_used++;
cache:
    if (id <= 0xffff && ((uintptr_t)target & ~INSTR__TARGET_MASK) == 0)
        __atomic_store_n(&s->target, (uint64_t)id << INSTR__TARGET_BITS | (uintptr_t)target,
                         __ATOMIC_RELEASE);
out:
    pthread_mutex_unlock(&instr__rt.meta_lock);
    errno = saved;
    return id;
}

static void put_thread(uint32_t index, uint32_t tid, const char *name)
{
    struct field f[] = {
        {F_VARINT, index, NULL},
        {F_VARINT, tid, NULL},
        {F_STRING, 0, name},
    };
    meta_put(INSTR_META_THREAD, f, 3);
}

void instr__meta_thread(uint32_t index, uint32_t tid, const char *name)
{
    int saved = errno;
    pthread_mutex_lock(&instr__rt.meta_lock);
    put_thread(index, tid, name);
    pthread_mutex_unlock(&instr__rt.meta_lock);
    errno = saved;
}

void instr__meta_thread_locked(uint32_t index, uint32_t tid, const char *name)
{
    put_thread(index, tid, name);
}

void instr__meta_clock_sync(uint32_t peer, uint64_t local, uint64_t peer_ticks, uint64_t rtt)
{
    struct field f[] = {
        {F_VARINT, peer, NULL},
        {F_U64, local, NULL},
        {F_U64, peer_ticks, NULL},
        {F_VARINT, rtt, NULL},
    };
    int saved = errno;
    pthread_mutex_lock(&instr__rt.meta_lock);
    meta_put(INSTR_META_CLOCK_SYNC, f, 4);
    pthread_mutex_unlock(&instr__rt.meta_lock);
    errno = saved;
}

/* EXIT_CPU (meta lock held).  room_only: a fatal signal's handler, which
 * must not map a new chunk (the chunk lock may be held by the code it
 * interrupted): written only if the current chunk has room. */
void instr__meta_exit_cpu_locked(uint32_t index, uint64_t cpu_ns, uint64_t tick, int room_only)
{
    struct field f[] = {
        {F_VARINT, index, NULL},
        {F_VARINT, cpu_ns, NULL},
        {F_VARINT, tick, NULL},
    };
    if (room_only && (!instr__rt.meta || meta_room() < 40))
        return;
    meta_put(INSTR_META_EXIT_CPU, f, 3);
}

/* threshold=N (hook-abi.h): per module, what its units left out, for the
 * fork child's dump: the sums at the smallest threshold, and a record of
 * nothing at the largest when they differ (the reader keeps sums and
 * extremes), the file names dropped. */
struct unit_sum {
    uint32_t min, max, left_out, instrumented, units;
};
static struct unit_sum unit_sums[INSTR_RT_MAX_MODULES];

static void put_unit(uint32_t module, uint32_t threshold, uint32_t left_out, uint32_t instrumented,
                     const char *file)
{
    struct field f[] = {
        {F_VARINT, module, NULL},
        {F_VARINT, threshold, NULL},
        {F_VARINT, left_out, NULL},
        {F_VARINT, instrumented, NULL},
        {F_STRING, 0, file},
    };
    meta_put(INSTR_META_UNIT, f, 5);
}

static void put_units(void)
{
    for (uint32_t i = 0; i < module_count; i++)
        if (unit_sums[i].units) {
            put_unit(i + 1, unit_sums[i].min, unit_sums[i].left_out, unit_sums[i].instrumented, "");
            if (unit_sums[i].max != unit_sums[i].min)
                put_unit(i + 1, unit_sums[i].max, 0, 0, "");
        }
}

/* The unit hook (INSTR_SLOT_UNIT): a unit's constructor reports what its
 * threshold left out.  Runs once per unit, at start-up. */
void instr__meta_unit(const struct instr_unit_desc *u)
{
    if (!u || u->abi != INSTR_HOOK_ABI_VERSION)
        return;
    int saved = errno;
    pthread_mutex_lock(&instr__rt.meta_lock);
    if (!instr__rt.stopped) {
        uint32_t module = module_of(u);
        if (module) {
            struct unit_sum *m = &unit_sums[module - 1];
            if (!m->units || u->threshold < m->min)
                m->min = u->threshold;
            if (u->threshold > m->max)
                m->max = u->threshold;
            m->left_out += u->left_out;
            m->instrumented += u->instrumented;
            m->units++;
        }
        put_unit(module, u->threshold, u->left_out, u->instrumented, u->file);
    }
    pthread_mutex_unlock(&instr__rt.meta_lock);
    errno = saved;
}

/* Fork child (meta lock held, fresh dump): the ids stay, the records are
 * written again.  The parent's metadata chunk is only unmapped. */
void instr__meta_reemit(void)
{
    instr__chunk_unmap(&instr__rt.meta_stage);
    instr__rt.meta = NULL;
    instr__rt.meta_pos = NULL;
    instr__rt.meta_seq = 0;
    for (uint32_t i = 1; i <= module_count; i++)
        put_module(i);
    for (uint32_t i = 1; i <= registered_count; i++)
        put_function(i);
    for (uint32_t i = 1; i <= site_count; i++)
        put_site(i);
    instr__calibrate_reemit();
    put_units();
}

/* A LABEL record (meta lock held): the text of a mark or counter label. */
void instr__meta_label(uint32_t id, const char *text)
{
    struct field f[] = {
        {F_VARINT, id, NULL},
        {F_STRING, 0, text},
    };
    meta_put(INSTR_META_LABEL, f, 2);
}

/* ---- the PROCESS record: working directory and command line -------------- */

#define MAX_ARGS 128
static char proc_cwd[4096];
static char proc_cmdline[4096]; /* NUL-separated, as /proc/self/cmdline */
static size_t proc_cmdline_len;

/* Read once at start (before any detector watches system calls). */
static void read_process(void)
{
    if (!getcwd(proc_cwd, sizeof proc_cwd))
        proc_cwd[0] = 0;
    int fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return;
    ssize_t n;
    while (proc_cmdline_len < sizeof proc_cmdline - 1 &&
           (n = read(fd, proc_cmdline + proc_cmdline_len, sizeof proc_cmdline - 1 - proc_cmdline_len)) > 0)
        proc_cmdline_len += (size_t)n;
    close(fd);
    proc_cmdline[proc_cmdline_len] = 0; /* a longer command line ends cut */
}

static void put_process(void)
{
    struct field f[MAX_ARGS + 2] = {{F_STRING, 0, proc_cwd}};
    int n = 2;
    for (size_t i = 0; i < proc_cmdline_len && n < MAX_ARGS + 2; i += strlen(proc_cmdline + i) + 1)
        f[n++] = (struct field){F_STRING, 0, proc_cmdline + i};
    f[1] = (struct field){F_VARINT, (uint64_t)(n - 2), NULL};
    meta_put(INSTR_META_PROCESS, f, n);
}

/* A HOOK_COST record (meta lock held): kind, before, after, spread, rounds
 * (dump-format.h; calibrate.c measures them). */
void instr__meta_hook_cost(const uint64_t v[5])
{
    struct field f[5];
    for (int i = 0; i < 5; i++)
        f[i] = (struct field){F_VARINT, v[i], NULL};
    meta_put(INSTR_META_HOOK_COST, f, 5);
}

/* Count mode (count.c): the exact calls of a function and of a call site. */
void instr__meta_fn_calls(uint32_t fn, uint64_t calls)
{
    struct field f[] = {
        {F_VARINT, fn, NULL},
        {F_VARINT, calls, NULL},
    };
    pthread_mutex_lock(&instr__rt.meta_lock);
    if (!instr__rt.stopped)
        meta_put(INSTR_META_FN_CALLS, f, 2);
    pthread_mutex_unlock(&instr__rt.meta_lock);
}

void instr__meta_site_calls(uint32_t caller, uint32_t line, uint32_t flags, const char *callee,
                            uint64_t calls)
{
    struct field f[] = {
        {F_VARINT, caller, NULL},
        {F_VARINT, line, NULL},
        {F_VARINT, flags, NULL},
        {F_STRING, 0, callee},
        {F_VARINT, calls, NULL},
    };
    pthread_mutex_lock(&instr__rt.meta_lock);
    if (!instr__rt.stopped)
        meta_put(INSTR_META_SITE_CALLS, f, 5);
    pthread_mutex_unlock(&instr__rt.meta_lock);
}

/* A SAMPLING record (meta lock held): INSTR_SAMPLE's rate asked, its period,
 * the stack bytes copied per sample and the unwinder (dump-format.h). */
void instr__meta_sampling(uint64_t rate_hz, uint64_t period_ns, uint64_t stack_bytes, const char *unwinder)
{
    struct field f[] = {
        {F_VARINT, rate_hz, NULL},
        {F_VARINT, period_ns, NULL},
        {F_VARINT, stack_bytes, NULL},
        {F_STRING, 0, unwinder},
    };
    meta_put(INSTR_META_SAMPLING, f, 4);
}

/* A MAP record (meta lock held): an executable mapping of a module
 * (INSTR_SAMPLE, maps.c; dump-format.h). */
void instr__meta_map(uint32_t module, uint64_t start, uint64_t end, uint64_t offset, uint64_t tick)
{
    struct field f[] = {
        {F_VARINT, module, NULL},
        {F_U64, start, NULL},
        {F_U64, end, NULL},
        {F_U64, offset, NULL},
        {F_U64, tick, NULL},
    };
    meta_put(INSTR_META_MAP, f, 5);
}
