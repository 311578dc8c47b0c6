/* count.c - count mode (plugin mode=count): the counters' per-thread copies
 * and the FN_CALLS / SITE_CALLS records at exit.
 *
 * Code compiled for an executable counts into TLS cells (hook-abi.h): each
 * thread has its own by construction.  A thread's first count in such a
 * module arms it (instr__count_arm): the runtime notes its thread pointer;
 * when the thread ends, the key destructor adds its cells to the module's
 * sums and clears them; at exit the sums and the cells of the threads
 * still running are written.
 *
 * Code compiled -fPIC increments *(cell + delta), delta being a per-module
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
#include <stdint.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "internal.h"

struct copy {
    struct copy *next;     /* the module's copies */
    struct copy *next_own; /* the owner thread's copies */
    uint64_t *cells;       /* as many as the section has */
    uintptr_t *delta;      /* the owner's TLS delta; NULL: free */
};

/* A thread armed in a module with TLS cells. */
struct tthread {
    struct tthread *next;     /* the module's */
    struct tthread *next_own; /* the thread's */
    uintptr_t tp;             /* its thread pointer; 0: ended, free */
    uint8_t *armed;           /* its __instr_count_armed */
    struct cmodule *cm;
    int mapped;               /* at exit: its cells can be read */
};

struct cmodule {
    const struct instr_count_module *m;
    struct copy *copies;
    struct tthread *threads;
    uint64_t *sums; /* per record (TLS ones): the counts of threads that ended */
    intptr_t tls_lo, tls_hi; /* the TLS cells' lowest and highest offsets */
    struct cmodule *next;
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct cmodule *cmodules;
static pthread_key_t key;
static pthread_once_t key_once = PTHREAD_ONCE_INIT;
static int key_ok;
static __thread struct copy *own;
static __thread struct tthread *own_tls;
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

static size_t nrecs(const struct instr_count_module *m)
{
    return (size_t)(m->recs_end - m->recs);
}

static inline uint64_t *tls_cell(uintptr_t tp, const struct instr_count_rec *r)
{
    return (uint64_t *)(tp + (uintptr_t)instr__count_tls_offset(&r->counter));
}

/* Whether the TLS cells of module cm at thread pointer tp are mapped.  A
 * thread that counted after its key destructors (a signal handler at its
 * very end) is still listed when the process exits, and its stack may be
 * gone: those few counts are lost, rather than read from unmapped memory. */
static int tls_mapped(const struct cmodule *cm, uintptr_t tp)
{
    if (cm->tls_lo > cm->tls_hi)
        return 0;
    long pg = sysconf(_SC_PAGESIZE);
    uintptr_t a = (tp + (uintptr_t)cm->tls_lo) & ~(uintptr_t)(pg - 1), b = tp + (uintptr_t)cm->tls_hi + 8;
    unsigned char vec[64];
    for (; a < b; a += 64 * (uintptr_t)pg) {
        size_t len = b - a < 64 * (uintptr_t)pg ? b - a : 64 * (uintptr_t)pg;
        if (mincore((void *)a, len, vec) != 0)
            return 0;
    }
    return 1;
}

/* Adds a thread's TLS cells of module cm to its sums and clears them. */
static void harvest(struct cmodule *cm, uintptr_t tp)
{
    const struct instr_count_module *m = cm->m;
    for (size_t i = 0; i < nrecs(m); i++)
        if (m->recs[i].flags & INSTR_COUNT_TLS) {
            uint64_t *cell = tls_cell(tp, &m->recs[i]);
            cm->sums[i] += *cell;
            *cell = 0;
        }
}

/* The key destructor: the thread is ending.  From here on it runs no
 * signal handler (glibc blocks every signal of an exiting thread a moment
 * later anyway, after the other destructors): a handler that counted after
 * the harvest would count into cells the next thread on this stack starts
 * from zero.  A later destructor that counts arms the thread again, and
 * glibc runs this one again after it. */
static void release_own(void *unused)
{
    (void)unused;
    sigset_t all;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, NULL);
    pthread_mutex_lock(&lock);
    for (struct copy *c = own; c; c = c->next_own) {
        *c->delta = 0; /* this thread's TLS: counts after this take a copy again */
        c->delta = NULL;
    }
    own = NULL;
    for (struct tthread *t = own_tls; t; t = t->next_own)
        if (t->tp) {
            harvest(t->cm, t->tp);
            *t->armed = 0; /* counts after this (a later destructor) arm it again */
            t->tp = 0;
        }
    own_tls = NULL;
    pthread_mutex_unlock(&lock);
}

static void make_key(void)
{
    key_ok = pthread_key_create(&key, release_own) == 0;
}

/* The module's bookkeeping, made at its first thread; lock held. */
static struct cmodule *cmodule_of(const struct instr_count_module *m)
{
    struct cmodule *cm = cmodules;
    while (cm && cm->m != m)
        cm = cm->next;
    if (cm)
        return cm;
    if (!(cm = arena_get(sizeof *cm)))
        return NULL;
    memset(cm, 0, sizeof *cm);
    cm->m = m;
    cm->next = cmodules;
    cmodules = cm;
    return cm;
}

static struct copy *take_copy(const struct instr_count_module *m, uintptr_t *delta)
{
    struct cmodule *cm = cmodule_of(m);
    if (!cm)
        return NULL;
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

/* Whether module cm (NULL: none) has its sums for TLS cells, made at its
 * first armed thread with the range of the cells' offsets; lock held. */
static int tls_sums(struct cmodule *cm)
{
    if (!cm || cm->sums)
        return cm != NULL;
    const struct instr_count_module *m = cm->m;
    void *p = mmap(NULL, nrecs(m) * sizeof(uint64_t) + 1, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
        return 0;
    cm->sums = p;
    cm->tls_lo = INTPTR_MAX;
    cm->tls_hi = INTPTR_MIN;
    for (const struct instr_count_rec *r = m->recs; r < m->recs_end; r++)
        if (r->flags & INSTR_COUNT_TLS) {
            intptr_t off = instr__count_tls_offset(&r->counter);
            cm->tls_lo = off < cm->tls_lo ? off : cm->tls_lo;
            cm->tls_hi = off > cm->tls_hi ? off : cm->tls_hi;
        }
    return 1;
}

/* The count-arm hook (INSTR_SLOT_COUNT_ARM): a thread's first count in a
 * module with TLS cells; *armed is already 1 (the trampoline set it). */
void instr__count_arm(const struct instr_count_module *m, uint8_t *armed, uintptr_t tp)
{
    if (inside || !m || !tp)
        return;
    inside = 1;
    int saved = errno;
    pthread_once(&key_once, make_key);
    pthread_mutex_lock(&lock);
    struct cmodule *cm = cmodule_of(m);
    /* Armed already: a signal came between the arming test and the
     * trampoline, and its handler armed the thread first. */
    int again = 0;
    for (struct tthread *o = own_tls; o; o = o->next_own)
        again |= o->cm == cm && o->tp == tp;
    struct tthread *t = NULL;
    if (!again && tls_sums(cm)) {
        /* Two running threads never share a thread pointer: an entry with
         * this one is of a thread that ended after its last harvest (a
         * signal handler that counted after its key destructors) and
         * whose stack this thread now has (glibc reuses them). */
        for (t = cm->threads; t; t = t->next)
            if (t->tp == tp)
                t->tp = 0;
        for (t = cm->threads; t && t->tp; t = t->next)
            ;
        if (!t && (t = arena_get(sizeof *t))) {
            t->next = cm->threads;
            cm->threads = t;
        }
    }
    if (t) {
        t->tp = tp;
        t->armed = armed;
        t->cm = cm;
        t->next_own = own_tls;
        own_tls = t;
    }
    pthread_mutex_unlock(&lock);
    if (t && key_ok)
        pthread_setspecific(key, (void *)1);
    errno = saved;
    inside = 0;
}

/* A module's total for record r (index i): the section and every copy, or
 * for a TLS cell the ended threads' sum and the running threads' cells. */
static uint64_t total_of(const struct cmodule *cm, const struct instr_count_rec *r, size_t i)
{
    const struct instr_count_module *m = cm->m;
    uint64_t total = 0;
    if (r->flags & INSTR_COUNT_TLS) {
        if (!cm->sums)
            return 0;
        total = cm->sums[i];
        for (const struct tthread *t = cm->threads; t; t = t->next)
            if (t->tp && t->mapped)
                total += __atomic_load_n(tls_cell(t->tp, r), __ATOMIC_RELAXED);
        return total;
    }
    size_t c = (size_t)(r->counter - m->cells);
    if (c >= (size_t)(m->cells_end - m->cells))
        return 0;
    total = __atomic_load_n(&m->cells[c], __ATOMIC_RELAXED);
    for (const struct copy *cp = cm->copies; cp; cp = cp->next)
        total += __atomic_load_n(&cp->cells[c], __ATOMIC_RELAXED);
    return total;
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
        for (struct tthread *t = cm->threads; t; t = t->next)
            t->mapped = t->tp && tls_mapped(cm, t->tp);
        for (const struct instr_count_rec *r = m->recs; r < m->recs_end; r++) {
            uint64_t total = r->fn ? total_of(cm, r, (size_t)(r - m->recs)) : 0;
            if (!total)
                continue;
            uint32_t id = instr__register(r->fn, 0);
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
    /* Samples are taken on threads that record time: none here. */
    const char *hz = getenv("INSTR_SAMPLE");
    if (hz && *hz && strcmp(hz, "0") && instr__rt.header && !instr__rt.header->thread_count)
        instr__say("INSTR_SAMPLE=", hz, " ignored", ": a count-mode build counts calls and records no time, so it "
                                                  "takes no samples (instr-sample samples any build)");
}

/* Whether a count-mode module is bound: its counts need no hook. */
int instr__count_active(void)
{
    return cmodules != NULL;
}

/* Fork child: it counts from zero in its own dump.  Only the forking
 * thread is left: the other threads' copies are free again, and so are
 * their TLS entries. */
void instr__count_fork_child(void)
{
    pthread_mutex_init(&lock, NULL);
    for (struct cmodule *cm = cmodules; cm; cm = cm->next) {
        for (struct tthread *t = cm->threads; t; t = t->next) {
            int mine = 0;
            for (struct tthread *o = own_tls; o; o = o->next_own)
                mine |= o == t;
            if (mine && t->tp)
                harvest(cm, t->tp); /* clears the cells; the sums are cleared below */
            else
                t->tp = 0;
        }
        if (cm->sums)
            memset(cm->sums, 0, nrecs(cm->m) * sizeof(uint64_t));
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
