/* metadata.c - function, module and thread records; the function registry.
 *
 * Everything here runs under the meta lock and is rare: once per function,
 * module and thread.  Records are appended to the current METADATA chunk;
 * each record's type byte is stored last (release), so a reader of a killed
 * process never sees a half-written record, only the zero byte before it.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <string.h>
#include <sys/mman.h>

#include "internal.h"

struct registered {
    struct instr_fn_desc *desc;
    uint32_t module;
};

struct module {
    uintptr_t base; /* dli_fbase: where the module's ELF image is mapped */
    const char *path;
};

static struct registered *registry; /* [INSTR_RT_MAX_FUNCTIONS], NORESERVE */
static uint32_t registered_count;   /* ids are 1..registered_count */
static struct module modules[INSTR_RT_MAX_MODULES];
static uint32_t module_count;
static char *arena; /* module paths */
static size_t arena_used;
#define ARENA_SIZE (4u << 20)

enum field_kind { F_VARINT, F_STRING, F_U64 };
struct field {
    enum field_kind kind;
    uint64_t v;
    const char *s;
};

static size_t varint_size(uint64_t v)
{
    size_t n = 1;
    while (v >= 0x80) {
        v >>= 7;
        n++;
    }
    return n;
}

static size_t str_len(const char *s)
{
    return s ? strnlen(s, INSTR_RT_MAX_STRING) : 0;
}

int instr__meta_init(void)
{
    registry = mmap(NULL, (size_t)INSTR_RT_MAX_FUNCTIONS * sizeof *registry, PROT_READ | PROT_WRITE,
                    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    arena = mmap(NULL, ARENA_SIZE, PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (registry == MAP_FAILED || arena == MAP_FAILED) {
        registry = NULL;
        arena = NULL;
        return -1;
    }
    return 0;
}

static int new_meta_chunk(void)
{
    struct instr_chunk_header *old = instr__rt.meta;
    if (old) {
        old->used_bytes = (uint32_t)(instr__rt.meta_pos - (uint8_t *)old - INSTR_CHUNK_HEADER_SIZE);
        instr__chunk_unmap(old);
        instr__rt.meta = NULL;
    }
    struct instr_chunk_header *c =
        instr__chunk_map(INSTR_CHUNK_METADATA, 0, 0, instr__rt.meta_seq, 0);
    if (!c)
        return -1;
    instr__rt.meta_seq++;
    instr__rt.meta = c;
    instr__rt.meta_pos = (uint8_t *)c + INSTR_CHUNK_HEADER_SIZE;
    return 0;
}

/* Appends one record (meta lock held).  Returns 0, or -1 if it was lost. */
static int meta_put(uint8_t type, const struct field *f, int n)
{
    size_t len = 0;
    for (int i = 0; i < n; i++) {
        if (f[i].kind == F_VARINT)
            len += varint_size(f[i].v);
        else if (f[i].kind == F_U64)
            len += 8;
        else
            len += varint_size(str_len(f[i].s)) + str_len(f[i].s);
    }
    size_t total = 1 + varint_size(len) + len;
    if (total > INSTR_RT_CHUNK_SIZE - INSTR_CHUNK_HEADER_SIZE)
        return -1;
    if (!instr__rt.meta ||
        (size_t)((uint8_t *)instr__rt.meta + INSTR_RT_CHUNK_SIZE - instr__rt.meta_pos) < total) {
        if (new_meta_chunk())
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

static void put_function(uint32_t id)
{
    const struct instr_fn_desc *d = registry[id - 1].desc;
    const char *name = d->names;
    const char *file = name + strnlen(name, INSTR_RT_MAX_STRING) + 1;
    const char *line = file + strnlen(file, INSTR_RT_MAX_STRING) + 1;
    uint64_t ln = 0;
    for (int i = 0; i < 10 && line[i] >= '0' && line[i] <= '9'; i++)
        ln = ln * 10 + (uint64_t)(line[i] - '0');
    struct field f[] = {
        {F_VARINT, id, NULL},
        {F_VARINT, registry[id - 1].module, NULL},
        {F_VARINT, ln, NULL},
        {F_STRING, 0, name},
        {F_STRING, 0, file},
    };
    meta_put(INSTR_META_FUNCTION, f, 5);
}

static const char *arena_copy(const char *s)
{
    size_t l = str_len(s);
    if (!arena || arena_used + l + 1 > ARENA_SIZE)
        return "";
    char *d = arena + arena_used;
    memcpy(d, s, l);
    d[l] = 0;
    arena_used += l + 1;
    return d;
}

/* The module holding addr; writes its MODULE record the first time. */
static uint32_t module_of(const void *addr)
{
    Dl_info info;
    struct link_map *lm = NULL;
    if (!dladdr1(addr, &info, (void **)&lm, RTLD_DL_LINKMAP))
        return 0;
    uintptr_t base = (uintptr_t)info.dli_fbase;
    for (uint32_t i = 0; i < module_count; i++)
        if (modules[i].base == base)
            return i + 1;
    if (module_count == INSTR_RT_MAX_MODULES)
        return 0;
    /* The main program's link map has an empty name: use /proc/self/exe. */
    const char *path = instr__rt.exe_path;
    if (lm && lm->l_name && lm->l_name[0])
        path = lm->l_name;
    else if (!lm && info.dli_fname && info.dli_fname[0] == '/')
        path = info.dli_fname;
    modules[module_count].base = base;
    modules[module_count].path = arena_copy(path);
    module_count++;
    put_module(module_count);
    return module_count;
}

/* Gives a function its dense id (1, 2, ...) and writes its record.  Returns
 * the id, or 0 if it cannot be registered (it is then not recorded). */
uint32_t instr__register(struct instr_fn_desc *d)
{
    int saved = errno;
    uint32_t id;
    pthread_mutex_lock(&instr__rt.meta_lock);
    id = __atomic_load_n(&d->id, __ATOMIC_ACQUIRE);
    if (id == 0 && registry && registered_count < INSTR_RT_MAX_FUNCTIONS && !instr__rt.stopped) {
        uint32_t module = module_of(d);
        id = registered_count + 1;
        registry[id - 1].desc = d;
        registry[id - 1].module = module;
        registered_count = id;
        put_function(id);
        __atomic_store_n(&d->id, id, __ATOMIC_RELEASE);
    }
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

/* At exit: the final names of all live threads (a later record wins). */
void instr__meta_threads_all(void)
{
    int saved = errno;
    char name[64];
    pthread_mutex_lock(&instr__rt.meta_lock);
    for (struct instr__thread *t = instr__rt.threads; t; t = t->next) {
        instr__thread_name(t->tid, name, sizeof name);
        put_thread(t->index, t->tid, name);
    }
    pthread_mutex_unlock(&instr__rt.meta_lock);
    errno = saved;
}

/* Fork child (meta lock held, fresh dump): the ids stay, the records are
 * written again.  The parent's metadata chunk is only unmapped. */
void instr__meta_reemit(void)
{
    if (instr__rt.meta)
        munmap(instr__rt.meta, INSTR_RT_CHUNK_SIZE);
    instr__rt.meta = NULL;
    instr__rt.meta_pos = NULL;
    instr__rt.meta_seq = 0;
    for (uint32_t i = 1; i <= module_count; i++)
        put_module(i);
    for (uint32_t i = 1; i <= registered_count; i++)
        put_function(i);
}
