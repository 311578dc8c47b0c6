/* count.c - count mode (plugin mode=count): the counters' per-thread copies
 * and the FN_CALLS / SITE_CALLS records at exit.
 *
 * The plugin's code increments *(cell + delta), delta being a per-module
 * TLS variable (hook-abi.h, "Count mode").  A thread's first count in a
 * module finds its delta 0 and calls instr__count_thread, which gives the
 * thread its own copy of the module's counter section and sets the delta
 * to the copy's distance from the section:
 *
 *   section instr_cnt   [c0 c1 c2 ...]   counts made before binding, or
 *                                        with no runtime (delta 0)
 *   thread A's copy     [a0 a1 a2 ...]   delta_A = copyA - section
 *   thread B's copy     [b0 b1 b2 ...]
 *
 * so counting needs no atomic instruction and no shared cache line.  A
 * thread that ends gives its copies back (a key destructor sets its deltas
 * to 0); the next new thread takes one over and goes on adding to it: the
 * sum over the section and all copies is what the exit handler writes.
 * Copies are never freed, so their number is that of the threads alive at
 * once, per module.
 *
 * A signal handler that counts while its thread is inside
 * instr__count_thread finds the delta still 0 and counts into the section
 * (a plain increment: exact unless another thread does the same at that
 * moment).  Not on the hot path: nothing here is. */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <string.h>
#include <sys/mman.h>

#include "internal.h"

struct copy {
    struct copy *next;     /* the module's copies */
    struct copy *next_own; /* the owner thread's copies */
    uint64_t *cells;       /* as many as the section has */
    uintptr_t *delta;      /* the owner's TLS delta; NULL: free */
};

struct cmodule {
    const struct instr_count_module *m;
    struct copy *copies;
    struct cmodule *next;
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct cmodule *cmodules;
static pthread_key_t key;
static pthread_once_t key_once = PTHREAD_ONCE_INIT;
static int key_ok;
static __thread struct copy *own;
static __thread int inside;

/* Bookkeeping from a small mmap arena (no malloc in the runtime). */
static uint8_t *arena, *arena_end;

static void *arena_get(size_t size)
{
    size = (size + 15) & ~(size_t)15;
    if (!arena || (size_t)(arena_end - arena) < size) {
        void *p = mmap(NULL, 1 << 16, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (p == MAP_FAILED)
            return NULL;
        arena = p;
        arena_end = arena + (1 << 16);
    }
    void *r = arena;
    arena += size;
    return r;
}

static void release_own(void *unused)
{
    (void)unused;
    pthread_mutex_lock(&lock);
    for (struct copy *c = own; c; c = c->next_own) {
        *c->delta = 0; /* this thread's TLS: counts after this take a copy again */
        c->delta = NULL;
    }
    own = NULL;
    pthread_mutex_unlock(&lock);
}

static void make_key(void)
{
    key_ok = pthread_key_create(&key, release_own) == 0;
}

static struct copy *take_copy(const struct instr_count_module *m, uintptr_t *delta)
{
    struct cmodule *cm = cmodules;
    while (cm && cm->m != m)
        cm = cm->next;
    if (!cm) {
        if (!(cm = arena_get(sizeof *cm)))
            return NULL;
        cm->m = m;
        cm->copies = NULL;
        cm->next = cmodules;
        cmodules = cm;
    }
    struct copy *c = cm->copies;
    while (c && c->delta)
        c = c->next;
    if (!c) {
        size_t bytes = (size_t)((const uint8_t *)m->cells_end - (const uint8_t *)m->cells);
        void *cells = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (cells == MAP_FAILED || !(c = arena_get(sizeof *c)))
            return NULL;
        c->cells = cells;
        c->next = cm->copies;
        cm->copies = c;
    }
    c->delta = delta;
    c->next_own = own;
    own = c;
    return c;
}

/* The count-thread hook (INSTR_SLOT_COUNT_THREAD). */
void instr__count_thread(const struct instr_count_module *m, uintptr_t *delta)
{
    if (inside || !m || m->cells_end <= m->cells || *delta)
        return;
    inside = 1;
    int saved = errno;
    pthread_once(&key_once, make_key);
    if (key_ok) {
        pthread_mutex_lock(&lock);
        struct copy *c = take_copy(m, delta);
        if (c)
            *delta = (uintptr_t)c->cells - (uintptr_t)m->cells;
        pthread_mutex_unlock(&lock);
        if (c)
            pthread_setspecific(key, (void *)1);
    }
    errno = saved;
    inside = 0;
}

/* Exit: one record per counter that counted, the section and every copy
 * summed (threads still running may add a few more meanwhile). */
void instr__count_flush(void)
{
    if (!cmodules)
        return;
    pthread_mutex_lock(&lock);
    for (struct cmodule *cm = cmodules; cm; cm = cm->next) {
        const struct instr_count_module *m = cm->m;
        size_t n = (size_t)(m->cells_end - m->cells);
        for (const struct instr_count_rec *r = m->recs; r < m->recs_end; r++) {
            size_t i = (size_t)(r->counter - m->cells);
            if (i >= n || !r->fn)
                continue;
            uint64_t total = __atomic_load_n(&m->cells[i], __ATOMIC_RELAXED);
            for (struct copy *c = cm->copies; c; c = c->next)
                total += __atomic_load_n(&c->cells[i], __ATOMIC_RELAXED);
            if (!total)
                continue;
            uint32_t id = instr__register(r->fn);
            if (!id)
                continue;
            if (r->flags & INSTR_COUNT_SITE)
                instr__meta_site_calls(id, r->line, r->flags, r->callee ? r->callee : "", total);
            else
                instr__meta_fn_calls(id, total);
        }
    }
    pthread_mutex_unlock(&lock);
    if (instr__rt.header)
        __atomic_fetch_or(&instr__rt.header->flags, INSTR_DUMP_COUNTS, __ATOMIC_RELEASE);
}

/* Fork child: it counts from zero in its own dump.  Only the forking
 * thread is left: the other threads' copies are free again. */
void instr__count_fork_child(void)
{
    pthread_mutex_init(&lock, NULL);
    for (struct cmodule *cm = cmodules; cm; cm = cm->next) {
        memset(cm->m->cells, 0, (size_t)((uint8_t *)cm->m->cells_end - (uint8_t *)cm->m->cells));
        for (struct copy *c = cm->copies; c; c = c->next) {
            memset(c->cells, 0, (size_t)((uint8_t *)cm->m->cells_end - (uint8_t *)cm->m->cells));
            int mine = 0; /* the forking thread keeps its copies and its deltas */
            for (struct copy *o = own; o; o = o->next_own)
                mine |= o == c;
            if (!mine)
                c->delta = NULL;
        }
    }
}
