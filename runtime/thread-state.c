/* thread-state.c - per-thread state: creation, chunk switches, thread end.
 *
 * A thread's state and the first frames of its shadow stack live in one
 * anonymous mapping (mmap, not malloc: the first hook of a thread may run in
 * a signal handler that interrupted malloc) of about 80 KiB.  Deeper
 * recursion moves the stack to a mapping twice as large, and again, up to
 * 1 Mi frames: address space is taken as it is used, so a program under a
 * low RLIMIT_AS keeps what it would have uninstrumented.  A thread whose
 * state cannot be mapped at all records nothing, and says so: it is counted
 * in the header (unrecorded_threads) and each of its events as dropped.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

#include "detector.h"
#include "internal.h"
#include "stack-switch.h"

__thread struct instr__thread *instr__tls __attribute__((tls_model("initial-exec")));

/* The static states' shadow stack: only the sentinel, which the slow paths
 * read (foreign-task.c) before they look at the guard. */
static struct instr__frame static_sentinel[1] = {{NULL, UINTPTR_MAX}};

/* busy == 1: every hook that finds this state returns at once.  Never written. */
struct instr__thread instr__idle_thread = {
    .busy = INSTR__BUSY_RUNTIME, .base = static_sentinel + 1, .top = static_sentinel + 1,
    .end = static_sentinel + 1};
/* busy == INSTR__BUSY_LOST: hooks count their event as dropped.  Never written. */
struct instr__thread instr__lost_thread = {
    .busy = INSTR__BUSY_LOST, .base = static_sentinel + 1, .top = static_sentinel + 1,
    .end = static_sentinel + 1};

uint32_t instr__gettid(void)
{
    return (uint32_t)syscall(SYS_gettid);
}

void instr__thread_name(uint32_t tid, char *buf, size_t size)
{
    buf[0] = 0;
    if (size < 17)
        return;
    if (tid == instr__gettid()) {
        char n[17] = {0};
        if (prctl(PR_GET_NAME, n, 0, 0, 0) == 0)
            memcpy(buf, n, 17);
        return;
    }
    char path[64];
    snprintf(path, sizeof path, "/proc/self/task/%u/comm", tid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return;
    ssize_t n = read(fd, buf, size - 1);
    close(fd);
    if (n <= 0)
        n = 0;
    buf[n] = 0;
    char *nl = strchr(buf, '\n');
    if (nl)
        *nl = 0;
}

static void start_dropping(struct instr__thread *t)
{
    t->chunk = NULL;
    t->dropping = 1;
    t->pos = t->scratch;
    t->limit = t->scratch; /* every event goes through instr__chunk_next */
}

/* Maps a fresh events chunk for t (its next seq); dropping mode on failure. */
static int start_chunk(struct instr__thread *t)
{
    struct instr_chunk_header *c =
        instr__chunk_map(&t->stage, INSTR_CHUNK_EVENTS, t->index, t->tid, t->seq, t->last_tsc);
    if (!c) {
        start_dropping(t);
        return -1;
    }
    t->seq++;
    t->chunk = c;
    t->dropping = 0;
    t->pos = (uint8_t *)c + INSTR_CHUNK_HEADER_SIZE;
    t->limit = (uint8_t *)c + t->stage.csize - INSTR_EVENT_MAX_BYTES;
    /* What the detectors do not watch (yet) holds from the chunk's start:
     * a thread's first chunk, a fork child's, the one after a drop. */
    t->det.unseen_written = 0;
    t->pos = instr__put_unseen(t, t->pos);
    return 0;
}

static void close_chunk(struct instr__thread *t)
{
    struct instr_chunk_header *c = t->chunk;
    if (!c)
        return;
    __atomic_store_n(&c->used_bytes, (uint32_t)(t->pos - (uint8_t *)c - INSTR_CHUNK_HEADER_SIZE),
                     __ATOMIC_RELEASE);
    t->chunk = NULL; /* its stage stays mapped: chunk_map copies it out */
}

static void chunk_next(struct instr__thread *t);

/* After a chunk switch (t->pos in the new chunk, with room): perf's event,
 * if due, is opened here, its stretch the runtime's and what the thread
 * watches from here said (EXT UNSEEN). */
static void perf_due(struct instr__thread *t)
{
    if (INSTR_LIKELY(!t->det.perf_due_ns) || t->dropping || !t->chunk || instr__mono_ns() < t->det.perf_due_ns)
        return; /* not due: no system call (the cheap switch makes none) */
    sigset_t old;
    instr__signals_block(&old);
    int opened = instr__perf_late(t);
    instr__signals_restore(&old);
    if (!opened)
        return;
    instr__detector_rearm(t);
    t->pos = instr__put_runtime(t, t->pos);
    t->pos = instr__put_unseen(t, t->pos);
}

/* Called by a hook (busy set) once t->pos >= t->limit.  Signals are
 * blocked meanwhile: a handler that interrupted the switch between unmap
 * and map and left with siglongjmp would leave t->pos in no chunk (and a
 * lock held); its hooks run after the switch instead. */
void instr__chunk_next(struct instr__thread *t)
{
    instr__filter_flush(t); /* filter.c: its counts reach the header a chunk at a time */
    /* While dropping, most events only count (no system call, nothing
     * half done): no need to block anything for them. */
    if (t->dropping && (instr__rt.stopped || (t->dropped + 1) % INSTR_RT_DROP_RETRY)) {
        chunk_next(t);
        return;
    }
    /* The next chunk of the staging area: a few stores and no system
     * call, so no signal mask (two system calls a chunk) and no stretch
     * cut as the runtime's.  A handler leaving by siglongjmp may cut it
     * at any store; the hook that takes the guard over then switches
     * again.  So everything is derived from t->pos alone (the chunk it
     * lies in, that one's seq), the new chunk is handed out the same way
     * again until t->pos has moved into it, and t->pos moves before
     * t->limit: the limit is then still the old chunk's, lower, and the
     * next event switches again. */
    if (!t->dropping && !t->sampler) {
        uint8_t *end = t->pos;
        struct instr_chunk_header *c = instr__chunk_after(&t->stage, end, t->last_tsc);
        if (c) {
            struct instr_chunk_header *old = (struct instr_chunk_header *)((uint8_t *)c - t->stage.csize);
            t->pos = (uint8_t *)c + INSTR_CHUNK_HEADER_SIZE;
            __atomic_signal_fence(__ATOMIC_SEQ_CST);
            t->limit = (uint8_t *)c + t->stage.csize - INSTR_EVENT_MAX_BYTES;
            t->chunk = c;
            t->seq = c->seq + 1;
            __atomic_signal_fence(__ATOMIC_SEQ_CST);
            __atomic_store_n(&old->used_bytes, (uint32_t)(end - (uint8_t *)old - INSTR_CHUNK_HEADER_SIZE),
                             __ATOMIC_RELEASE);
            perf_due(t);
            return;
        }
    }
    sigset_t old;
    instr__signals_block(&old);
    chunk_next(t);
    instr__signals_restore(&old);
    perf_due(t);
}

static void chunk_next(struct instr__thread *t)
{
    if (t->dropping) {
        /* The event written to scratch (its kind: the head's low 3 bits). */
        unsigned kind = t->pos > t->scratch ? t->scratch[0] & 7u : 0;
        t->pos = t->scratch;
        t->dropped++;
        instr__count_dropped_kind(kind);
        if (instr__rt.stopped) {
            instr__thread_stopped(t);
            return;
        }
        if (t->dropped % INSTR_RT_DROP_RETRY)
            return;
        if (start_chunk(t) == 0) {
            /* Tell the reader how many events are missing here. */
            unsigned bits = 0;
            uint8_t *p = instr__put_head(t, t->pos, t->last_tsc, &bits, INSTR_EV_EXT);
            t->pos = instr_put_ext(p, INSTR_EXT_DROPPED, t->dropped, 0);
            t->dropped = 0;
        }
        instr__detector_rearm(t);
        return;
    }
    /* A cheap switch cut by a handler's siglongjmp (above) may have left
     * t->chunk and t->seq behind t->pos: t->pos says where the events are. */
    struct instr_chunk_header *at = instr__stage_chunk_of(&t->stage, t->pos);
    if (at && at != t->chunk) {
        t->chunk = at;
        t->seq = at->seq + 1;
    }
    close_chunk(t);
    instr__sampler_drain(t);
    /* The switch made syscalls: they are the runtime's, not the program's,
     * and its time is nobody's, up to the re-arm (whose own syscall is
     * where a loaded machine preempts: after it, a switch would be lost). */
    int mapped = start_chunk(t) == 0;
    instr__detector_rearm(t);
    if (mapped)
        t->pos = instr__put_runtime(t, t->pos);
}

static void list_remove(struct instr__thread *t)
{
    for (struct instr__thread **pp = &instr__rt.threads; *pp; pp = &(*pp)->next)
        if (*pp == t) {
            *pp = t->next;
            return;
        }
}

/* The state's mapping (header and first stack) and every grown stack. */
void instr__thread_unmap(struct instr__thread *t)
{
    for (uint32_t i = 0; i < t->nstacks; i++)
        munmap(t->stacks[i].map, t->stacks[i].size);
    munmap(t, t->map_size);
}

/* Recording stopped for good (a limit, a sandbox: dump-file.c, sandbox.c)
 * and t's hooks run on: from now on each only counts its event as dropped
 * (the lost state's guard), with no clock read, detector or system call.
 * Dropping mode wrote every event to scratch at a hook's full cost, and a
 * function first called after the stop took the registration path at
 * each call (three system calls: 5.9 s instead of 0.42 s for 2.6 million
 * hooks).  t stays in the thread list and under the thread-exit key: its
 * end and a fork child let go of it. */
void instr__thread_stopped(struct instr__thread *t)
{
    if (instr__tls == t)
        instr__tls = &instr__lost_thread;
}

/* No memory for a thread's state: it records nothing, and the dump says so. */
static void thread_lost(unsigned ev)
{
    instr__tls = &instr__lost_thread;
    if (instr__rt.header)
        __atomic_fetch_add(&instr__rt.header->unrecorded_threads, 1, __ATOMIC_RELAXED);
    instr__count_dropped_kind(ev); /* the hook that found no state */
}

int instr__stack_grow(struct instr__thread *t)
{
    size_t frames = (size_t)(t->end - t->base) + 1; /* the sentinel and the capacity */
    if (t->nstacks == INSTR_RT_STACK_GROWS || !instr__may_syscall())
        return -1;
    size_t size = 2 * frames * sizeof(struct instr__frame);
    void *m = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
                   -1, 0);
    if (m == MAP_FAILED)
        return -1;
    struct instr__frame *base = (struct instr__frame *)m + 1;
    size_t live = (size_t)(t->top - t->base);
    memcpy(base - 1, t->base - 1, (live + 1) * sizeof *base); /* sentinel and live frames */
    t->stacks[t->nstacks].map = m;
    t->stacks[t->nstacks].size = size;
    t->nstacks++;
    t->end = base + 2 * frames - 1;
    t->top = base + live;
    t->base = base;
    return 0;
}

/* This thread's CPU clock, ns (0 if it cannot be read). */
static uint64_t own_cpu_ns(void)
{
    struct timespec ts;
    if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts))
        return 0;
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

struct instr__thread *instr__thread_create(unsigned ev)
{
    int saved = errno;
    char name[64];
    /* While we build it, hooks on this thread (a signal handler) do nothing. */
    instr__tls = &instr__idle_thread;
    if (__atomic_load_n(&instr__rt.fork_pending, __ATOMIC_ACQUIRE)) {
        struct instr__thread *mine = instr__fork_child_resume(); /* the child's dump, made now */
        if (mine) {
            instr__tls = mine;
            goto out;
        }
    }
    if (!instr__rt.header)
        goto out;
    if (instr__rt.stopped) { /* a limit or a sandbox: its events are lost, and counted */
        instr__tls = &instr__lost_thread;
        instr__count_dropped_kind(ev); /* the hook that found no state */
        goto out;
    }
    size_t head = (sizeof(struct instr__thread) + 4095) & ~(size_t)4095;
    size_t size = head + (size_t)INSTR_RT_STACK_FIRST * sizeof(struct instr__frame);
    void *m = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
                   -1, 0);
    if (m == MAP_FAILED) {
        thread_lost(ev);
        goto out;
    }
    struct instr__thread *t = m;
    t->map_size = size;
    /* A sentinel below the base: no frame is older, none matches. */
    t->base = (struct instr__frame *)((char *)m + head) + 1;
    t->base[-1].desc = NULL;
    t->base[-1].cfa = UINTPTR_MAX;
    t->top = t->base;
    t->end = t->base + INSTR_RT_STACK_FIRST - 1;
    t->tid = instr__gettid();

    pthread_mutex_lock(&instr__rt.meta_lock);
    t->index = instr__rt.next_thread_index++;
    t->next = instr__rt.threads;
    instr__rt.threads = t;
    if (instr__rt.header)
        __atomic_store_n(&instr__rt.header->thread_count, instr__rt.next_thread_index,
                         __ATOMIC_RELAXED);
    pthread_mutex_unlock(&instr__rt.meta_lock);

    instr__detector_thread(t);
    instr__sampler_thread(t);
    if (instr__filter.any)
        t->pending_bits |= INSTR__FILTERING; /* filter.c: every hook decides in the slow path */
    t->cpu0_ns = own_cpu_ns();
    t->last_tsc = instr__tsc();
    start_chunk(t);
    instr__thread_name(t->tid, name, sizeof name);
    instr__meta_thread(t->index, t->tid, name);
    pthread_setspecific(instr__rt.key, t);
    instr__detector_rearm(t);
    t->busy = 0;
    instr__tls = t;
out:
    errno = saved;
    return instr__tls;
}

/* pthread key destructor: the thread is ending (after C++ thread_local
 * destructors).  Hooks that still run on it afterwards find the idle state. */
void instr__thread_end(void *arg)
{
    struct instr__thread *t = arg;
    int saved = errno;
    char name[64];
    if (!t || t == &instr__idle_thread)
        return;
    /* The program's own pthread_key destructors run after ours when their
     * keys came later, and may call instrumented code: set the value again,
     * so the destructors run another round (POSIX: while values are set,
     * up to PTHREAD_DESTRUCTOR_ITERATIONS rounds), and end the recording
     * in the last. */
    if (t->end_rounds + 1 < PTHREAD_DESTRUCTOR_ITERATIONS && pthread_setspecific(instr__rt.key, t) == 0) {
        t->end_rounds++;
        errno = saved;
        return;
    }
    t->busy = 1;
    instr__deferred_flush_now(t);
    if (t->chunk) {
        unsigned bits = instr__detector_check(t) | (t->pending_bits & ~INSTR__FILTERING);
        uint8_t *p = instr__put_head(t, t->pos, instr__tsc(), &bits, INSTR_EV_EXT);
        t->pos = instr_put_ext(p, INSTR_EXT_THREAD_END, 0, 0);
    }
    close_chunk(t);
    instr__filter_flush(t);
    if (!instr__may_syscall()) { /* sandbox.c: the state stays mapped */
        instr__tls = &instr__idle_thread;
        errno = saved;
        return;
    }
    instr__sampler_thread_end(t);
    instr__chunk_unmap(&t->stage);
    instr__thread_name(t->tid, name, sizeof name);
    pthread_mutex_lock(&instr__rt.meta_lock);
    list_remove(t);
    pthread_mutex_unlock(&instr__rt.meta_lock);
    instr__meta_thread(t->index, t->tid, name);
    instr__detector_thread_end(t);
    instr__stacks_free(t);
    instr__tls = &instr__idle_thread;
    instr__thread_unmap(t);
    errno = saved;
}

/* Fork child: the other threads do not exist here.  Their chunks belong to
 * the parent's dump: unmap them without writing. */
void instr__thread_drop_others(struct instr__thread *keep)
{
    struct instr__thread *t = instr__rt.threads, *next;
    for (; t; t = next) {
        next = t->next;
        if (t == keep)
            continue;
        instr__chunk_unmap(&t->stage); /* the parent's: unmapped, not written */
        instr__thread_unmap(t);
    }
    instr__rt.threads = keep;
    if (keep)
        keep->next = NULL;
}

/* Fork child: the forking thread starts over in the child's new dump as
 * thread 0 (or after the threads that hooked before it) and re-enters its
 * open frames, bottom to top. */
int instr__thread_restart(struct instr__thread *t)
{
    char name[64];
    instr__chunk_unmap(&t->stage); /* the parent's: leave it as it is */
    t->chunk = NULL;
    t->tid = instr__gettid();
    t->foreign_left = 0; /* the parent's foreign tasks are not in this process */
    t->index = instr__rt.next_thread_index++;
    __atomic_store_n(&instr__rt.header->thread_count, instr__rt.next_thread_index, __ATOMIC_RELAXED);
    t->seq = 0;
    t->dropped = 0;
    t->pending_bits = instr__filter.any ? INSTR__FILTERING : 0;
    t->called = NULL;
    memset(t->filtered, 0, sizeof t->filtered); /* the parent's, flushed by the parent */
    t->cpu0_ns = own_cpu_ns();
    t->last_tsc = instr__tsc();
    start_chunk(t);
    instr__thread_name(t->tid, name, sizeof name);
    instr__meta_thread(t->index, t->tid, name);
    uint64_t now = t->last_tsc;
    for (struct instr__frame *f = t->base; f < t->top; f++) {
        unsigned bits = 0;
        uint8_t *p = instr__put_head(t, t->pos, now, &bits, INSTR_EV_EXT);
        /* Call-site frames too: the child returns from fork() through one. */
        if (INSTR__IS_SITE(f->desc))
            t->pos = instr_put_ext(p, INSTR_EXT_REENTER_SITE, INSTR__SITE_ID(f->desc), 0);
        else
            t->pos = instr_put_ext(p, INSTR_EXT_REENTER, f->desc->id, 0);
        if (t->pos >= t->limit)
            instr__chunk_next(t);
    }
    instr__detector_rearm(t);
    return 0;
}

/* At the process's end: each live thread's CPU time since it started
 * recording, so that the report knows whether the interval its open frames
 * end with was spent on the CPU (a thread blocked in pthread_cond_wait
 * until exit was not).  Another thread's clock is its clock id from the
 * tid (the kernel's MAKE_THREAD_CPUCLOCK(tid, CPUCLOCK_SCHED)); the CPU
 * time before its first event (the runtime's start-up) is left out.  From a fatal signal's
 * handler: only if the metadata lock is free and its chunk has room. */
void instr__thread_cpu_all(int in_signal)
{
    int saved = errno;
    if (in_signal ? pthread_mutex_trylock(&instr__rt.meta_lock) != 0
                  : pthread_mutex_lock(&instr__rt.meta_lock) != 0)
        return;
    for (struct instr__thread *t = instr__rt.threads; t; t = t->next) {
        struct timespec ts;
        clockid_t id = (clockid_t)((~(unsigned)t->tid << 3) | 4u /* per thread */ | 2u /* SCHED */);
        if (!t->chunk || clock_gettime(id, &ts))
            continue;
        uint64_t ns = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
        instr__meta_exit_cpu_locked(t->index, ns > t->cpu0_ns ? ns - t->cpu0_ns : 0, instr__tsc(), in_signal);
    }
    pthread_mutex_unlock(&instr__rt.meta_lock);
    errno = saved;
}

/* At exit: the final names of all live threads (a later record wins). */
void instr__thread_names_all(void)
{
    int saved = errno;
    char name[64];
    pthread_mutex_lock(&instr__rt.meta_lock);
    for (struct instr__thread *t = instr__rt.threads; t; t = t->next) {
        instr__thread_name(t->tid, name, sizeof name);
        instr__meta_thread_locked(t->index, t->tid, name);
    }
    pthread_mutex_unlock(&instr__rt.meta_lock);
    errno = saved;
}
