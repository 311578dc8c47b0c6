/* calibrate.c - what one hook costs in this process, measured once at start.
 *
 * Every interval the report charges is longer than the program's own time
 * by the hooks at its two ends.  A hook reads the TSC somewhere in the
 * middle of its work: what it did before the read lengthens the interval
 * its event ends, what it does after lengthens the next one.
 *
 *      program ... | hook: pre-work  rdtsc  post-work | ... program
 *   interval ended here  +before  |        | +after   next interval
 *
 * Measured with the hooks themselves (the same code, the detectors armed
 * on this thread as for any thread: see armed[]), on a private thread state: its own
 * shadow stack and a scratch buffer inside its mapping instead of a chunk
 * of the dump, and descriptors with a fixed id that are never registered.
 * Nothing of it reaches the dump but the HOOK_COST records.  Each round is
 * what a call from an instrumented function to an instrumented callee
 * looks like with call-site hooks (call, enter, exit, return), each hook
 * reached as instrumented code reaches it (a call to a trampoline that
 * jumps through a table slot) and bracketed by two TSC reads:
 *
 *   t0 = rdtsc;  hook  (it records th);  t1 = rdtsc
 *   r  = the same two reads with nothing between them (one read's cost)
 *
 *   before = th - t0 - r/2     after = t1 - th - r/2
 *
 * (the hook's own read is part of its cost: half on each side), each the
 * mean over the rounds of the readings not far above their median (see
 * typical()), after warm-up rounds.
 *
 * That is the hook alone.  A call in instrumented code also runs what the
 * compiler adds around its hooks: their arguments, and the registers the
 * function must keep across the hook calls (saved in its prologue,
 * restored in its epilogue).  On this project's VM that was 16-20 % more
 * than the hooks alone, the same share on an empty leaf and on Lua.  So
 * whole calls are timed too, in the two shapes instrumented code has, each
 * against the same calls without hooks (calls_*()):
 *
 *   A: a caller calls an empty leaf that has enter and exit hooks
 *   B: the same with call-site hooks around the call (callsites=all)
 *
 *   scale(enter, exit)  = (A - plain) / (the four values of enter and exit)
 *   scale(call, return) = (B - A) / (the four values of call and return)
 *
 * each time the median of REPS readings of CALLS calls.  Each kind's
 * before and after are multiplied by its scale (split as the hook alone
 * splits): the records hold what a hook costs with its surroundings.
 * A scale outside [SCALE_MIN, SCALE_MAX] is taken as a disturbed
 * measurement and left at 1.
 *
 * The hooks measured take the path the program's hooks will take.  With
 * a record-time filter set (INSTR_DEPTH, INSTR_MIN_DURATION,
 * INSTR_TRIGGER: filter.c) every hook of every thread takes the slow
 * path, where the filters are decided: the private state filters too, so
 * the rounds run that path, with the filters' own checks, as a call that
 * is recorded runs it (calls left out are no interval of their own to
 * compensate).  For that, while it measures (nothing else records yet),
 * recording is on, a depth limit lets the rounds' two levels through
 * (depth_reached still walks them at INSTR_DEPTH=1 or 2), and a minimum
 * duration of one tick keeps every call: each exit still looks whether
 * its call could be taken back, in a scratch that is a chunk, as a real
 * one's does.  On this project's VM a whole call (call-site hooks too)
 * cost 550-640 ticks on the slow path against 260 on the fast one; with
 * the fast path's cost subtracted, a 1-ns leaf's compensated Exclusive
 * under INSTR_TRIGGER was 115 ns a call against 15 unfiltered
 * (docs/performance.md, "Record-time filters").
 *
 * About 1 ms of CPU time on a loaded virtual machine (0.4 ms of it the
 * rounds and calls), arming the detectors included.  A signal handler that
 * runs meanwhile records into the scratch buffer, and is lost.
 *
 * What it cannot see: hooks in real code also pay for cache and branch
 * predictor state that the program's own code evicted, and save or lose
 * time beside the function's own work (an out-of-order core runs them in
 * the shadow of a chain of dependent instructions): README, "Probe
 * overhead".
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "detector.h"
#include "internal.h"

#define ROUNDS 1000u
#define WARMUP 100u
#define SCRATCH (8u * 1024u) /* event bytes written before the buffer rolls over */
#define CHUNK INSTR_RT_CHUNK_SIZE /* the scratch lies in one, as a thread's events do */
#define STACK_FRAMES 16u
#define CALLS 16u  /* calls per timed reading of a whole-call shape */
#define REPS 160u  /* readings per shape, after CALL_WARMUP */
#define CALL_WARMUP 16u
#define SCALE_MIN 500u  /* permille */
#define SCALE_MAX 2500u

/* The hook kinds measured, in round order (what their events are). */
enum { K_CALL, K_ENTER, K_EXIT, K_RETURN, NKINDS };
static const uint8_t kind_event[NKINDS] = {INSTR_EV_CALL, INSTR_EV_ENTER, INSTR_EV_EXIT, INSTR_EV_RETURN};

/* mticks, per kind: what the HOOK_COST records say. */
static struct {
    uint64_t before, after, spread, rounds;
} cost[NKINDS];
static int measured;
static uint32_t source; /* INSTR_CALIBRATION_* */
static uint64_t path;   /* run_path() measured */


/* The k-th smallest of a[0..n) (quickselect, Hoare partition; a is
 * reordered). */
static uint16_t kth(uint16_t *a, size_t n, size_t k)
{
    size_t lo = 0, hi = n - 1;
    while (lo < hi) {
        uint16_t pivot = a[lo + (hi - lo) / 2];
        size_t i = lo, j = hi;
        for (;;) {
            while (a[i] < pivot)
                i++;
            while (a[j] > pivot)
                j--;
            if (i >= j)
                break;
            uint16_t x = a[i];
            a[i++] = a[j];
            a[j--] = x;
        }
        /* a[lo..j] <= pivot <= a[j+1..hi], lo <= j < hi */
        if (k <= j)
            hi = j;
        else
            lo = j + 1;
    }
    return a[k];
}

static uint16_t clamp16(uint64_t v)
{
    return v > UINT16_MAX ? UINT16_MAX : (uint16_t)v;
}

/* The hooks as instrumented code reaches them: a direct call to a
 * trampoline that jumps through a table slot (hook-abi.h). */
__attribute__((visibility("hidden"))) void *instr__calib_slots[4];
void instr__calib_call(struct instr_site_desc *, void *, void *) __attribute__((visibility("hidden")));
void instr__calib_enter(struct instr_fn_desc *, void *) __attribute__((visibility("hidden")));
void instr__calib_exit(struct instr_fn_desc *, void *) __attribute__((visibility("hidden")));
void instr__calib_return(struct instr_site_desc *, void *) __attribute__((visibility("hidden")));
/* The trampolines: runtime/arch/<arch>/stubs.c. */
#define hook_call instr__calib_call
#define hook_enter instr__calib_enter
#define hook_exit instr__calib_exit
#define hook_return instr__calib_return

/* The whole-call shapes (see the top): the hooks are reached through the
 * same trampolines, with the descriptors and CFAs of measure(). */
static struct {
    struct instr_fn_desc *callee;
    struct instr_site_desc *site;
    void *cfa_caller, *cfa_callee;
} shape;

__attribute__((noinline, noclone)) static void calls_leaf(volatile unsigned *x)
{
    hook_enter(shape.callee, shape.cfa_callee);
    __asm__ volatile("" ::"r"(x));
    hook_exit(shape.callee, shape.cfa_callee);
}

__attribute__((noinline, noclone)) static void calls_plain_leaf(volatile unsigned *x)
{
    __asm__ volatile("" ::"r"(x));
}

__attribute__((noinline, noclone)) static void calls_plain(volatile unsigned *x)
{
    for (unsigned i = 0; i < CALLS; i++)
        calls_plain_leaf(x);
}

__attribute__((noinline, noclone)) static void calls_a(volatile unsigned *x)
{
    for (unsigned i = 0; i < CALLS; i++)
        calls_leaf(x);
}

__attribute__((noinline, noclone)) static void calls_b(volatile unsigned *x)
{
    for (unsigned i = 0; i < CALLS; i++) {
        hook_call(shape.site, shape.cfa_caller, NULL);
        calls_leaf(x);
        hook_return(shape.site, shape.cfa_caller);
    }
}

enum { S_PLAIN, S_A, S_B, NSHAPES };

/* The private state's mapping: the thread state, its shadow stack, the
 * event scratch, the samples (before and after per kind, and r; the
 * readings of each whole-call shape). */
struct samples {
    uint16_t v[2 * NKINDS + 1][ROUNDS]; /* ticks, at most 65535 (more is an outlier anyway) */
    uint16_t sum[ROUNDS];
    uint16_t calls[NSHAPES][REPS];
};

static void measure(struct instr__thread *t, uint8_t *scratch, struct samples *s, uintptr_t base)
{
    /* Descriptors with fixed ids: the fast paths take them as registered. */
    static struct {
        struct instr_fn_desc d;
        char names[16];
    } caller = {{.id = 1, .abi = INSTR_HOOK_ABI_VERSION}, "\0\0\0"},
      callee = {{.id = 2, .abi = INSTR_HOOK_ABI_VERSION}, "\0\0\0"};
    /* A direct call of callee: a filtering thread's enter compares the
     * names (once: names_callee keeps the answer). */
    static struct instr_site_desc site = {
        .id = 1, .abi = INSTR_HOOK_ABI_VERSION, .caller = &caller.d, .callee = callee.names};
    /* CFAs as a caller and its callee would have them. */
    void *cfa_caller = (void *)base, *cfa_callee = (void *)(base - 64);

    hook_enter(&caller.d, cfa_caller); /* the caller's frame, below every round */
    for (unsigned i = 0; i < WARMUP + ROUNDS; i++) {
        if (t->pos - scratch > SCRATCH - 64)
            t->pos = scratch;
        uint64_t t0, t1, th[NKINDS], a[NKINDS], b[NKINDS];
        t0 = instr__tsc();
        t1 = instr__tsc();
        a[K_CALL] = instr__tsc();
        hook_call(&site, cfa_caller, NULL);
        th[K_CALL] = t->last_tsc;
        b[K_CALL] = instr__tsc();
        a[K_ENTER] = instr__tsc();
        hook_enter(&callee.d, cfa_callee);
        th[K_ENTER] = t->last_tsc;
        b[K_ENTER] = instr__tsc();
        a[K_EXIT] = instr__tsc();
        hook_exit(&callee.d, cfa_callee);
        th[K_EXIT] = t->last_tsc;
        b[K_EXIT] = instr__tsc();
        a[K_RETURN] = instr__tsc();
        hook_return(&site, cfa_caller);
        th[K_RETURN] = t->last_tsc;
        b[K_RETURN] = instr__tsc();
        if (i < WARMUP)
            continue;
        unsigned r = i - WARMUP;
        for (int k = 0; k < NKINDS; k++) {
            s->v[2 * k][r] = clamp16(th[k] - a[k]);
            s->v[2 * k + 1][r] = clamp16(b[k] - th[k]);
        }
        s->v[2 * NKINDS][r] = clamp16(t1 - t0);
    }

    /* The whole calls, the three shapes interleaved; each reading starts
     * the scratch afresh (CALLS calls write far less than SCRATCH). */
    shape.callee = &callee.d;
    shape.site = &site;
    shape.cfa_caller = cfa_caller;
    shape.cfa_callee = cfa_callee;
    volatile unsigned x = 0;
    for (unsigned i = 0; i < CALL_WARMUP + REPS; i++) {
        t->pos = scratch;
        uint64_t t0 = instr__tsc();
        calls_plain(&x);
        uint64_t t1 = instr__tsc();
        calls_a(&x);
        uint64_t t2 = instr__tsc();
        calls_b(&x);
        uint64_t t3 = instr__tsc();
        if (i < CALL_WARMUP)
            continue;
        unsigned r = i - CALL_WARMUP;
        s->calls[S_PLAIN][r] = clamp16(t1 - t0);
        s->calls[S_A][r] = clamp16(t2 - t1);
        s->calls[S_B][r] = clamp16(t3 - t2);
    }
    hook_exit(&caller.d, cfa_caller);
}

/* The typical value of a[0..n), in mticks: the mean of the samples not
 * far above the median (an interrupt, a detector's slow path or a cache
 * miss in a round is not the cost).  A mean, not the median: the TSC may
 * count in steps (21 ticks on some AMD machines), and only the mean of
 * many readings falls between two steps.  a is reordered. */
static uint64_t typical(uint16_t *a, size_t n)
{
    uint64_t med = kth(a, n, n / 2), cut = 2 * med + 64, sum = 0, kept = 0;
    for (size_t i = 0; i < n; i++)
        if (a[i] <= cut) {
            sum += a[i];
            kept++;
        }
    return kept ? (1000u * sum + kept / 2) / kept : 1000u * med;
}

/* Kinds j and k cost `total` mticks together in a whole call: their
 * before and after values scaled to that sum (see the top). */
static void scale_pair(int j, int k, uint64_t total)
{
    uint64_t alone = cost[j].before + cost[j].after + cost[k].before + cost[k].after;
    if (!alone)
        return;
    uint64_t permille = (1000u * total + alone / 2) / alone;
    if (permille < SCALE_MIN || permille > SCALE_MAX)
        return;
    const int kinds[2] = {j, k};
    for (int i = 0; i < 2; i++) {
        cost[kinds[i]].before = (cost[kinds[i]].before * permille + 500u) / 1000u;
        cost[kinds[i]].after = (cost[kinds[i]].after * permille + 500u) / 1000u;
    }
}

/* Into cost[] (mticks). */
static void summarise(struct samples *s)
{
    uint64_t r = typical(s->v[2 * NKINDS], ROUNDS);
    uint16_t *sum = s->sum;
    for (int k = 0; k < NKINDS; k++) {
        for (unsigned i = 0; i < ROUNDS; i++)
            sum[i] = clamp16((uint64_t)s->v[2 * k][i] + s->v[2 * k + 1][i]);
        uint64_t q1 = kth(sum, ROUNDS, ROUNDS / 4), q3 = kth(sum, ROUNDS, 3 * ROUNDS / 4);
        uint64_t before = typical(s->v[2 * k], ROUNDS), after = typical(s->v[2 * k + 1], ROUNDS);
        cost[k].before = before > r / 2 ? before - r / 2 : 0;
        cost[k].after = after > r / 2 ? after - r / 2 : 0;
        cost[k].spread = 1000u * (q3 - q1);
        cost[k].rounds = ROUNDS;
    }
    /* The whole calls: medians, in mticks per call. */
    uint64_t m[NSHAPES];
    for (int j = 0; j < NSHAPES; j++)
        m[j] = 1000u * kth(s->calls[j], REPS, REPS / 2) / CALLS;
    scale_pair(K_ENTER, K_EXIT, m[S_A] > m[S_PLAIN] ? m[S_A] - m[S_PLAIN] : 0);
    scale_pair(K_CALL, K_RETURN, m[S_B] > m[S_A] ? m[S_B] - m[S_A] : 0);
}

/* The backends armed for the measurement: every one that runs but perf.
 * Its check is one more load of a word it owns (the ring's data_head), the
 * same work as the loads of the others; opening and mapping a ring costs
 * more than the whole measurement (about 1.3 ms on a virtual machine). */
static const struct instr__detector_ops *const armed[] = {
    &instr__det_rseq, &instr__det_sud, &instr__det_rdpmc, &instr__det_cpuclock,
};
#define NARMED (sizeof armed / sizeof armed[0])

static void arm(struct instr__thread *t)
{
    instr__detector_none_thread(t);
    for (size_t i = 0; i < NARMED; i++)
        if (instr__detector.set & (1u << armed[i]->id))
            armed[i]->thread(t);
}

static void disarm(struct instr__thread *t)
{
    for (size_t i = NARMED; i-- > 0;)
        if ((instr__detector.set & (1u << armed[i]->id)) && armed[i]->thread_end)
            armed[i]->thread_end(t);
    instr__detector_none_thread(t);
}

/* The path this run's hooks take, as the cache keys it: 0 the fast path;
 * a filtering thread's slow path with what changes its cost: the depth
 * limit as measured (calib_filters()) and a minimum duration.  (Triggers
 * do not: every filtering hook checks its function's trigger flags.) */
#define PATH_FILTERING 1u
#define PATH_MIN_DURATION 2u
static uint32_t calib_depth(void)
{
    return instr__filter.depth && instr__filter.depth < 2 ? 2 : instr__filter.depth;
}

static uint64_t run_path(void)
{
    if (!instr__filter.any)
        return 0;
    return PATH_FILTERING | (instr__filter.min_ticks ? PATH_MIN_DURATION : 0) | (uint64_t)calib_depth() << 32;
}

/* The filters as the rounds need them (see the top), and back as they
 * were (user). */
static void calib_filters(void)
{
    __atomic_store_n(&instr__filter.on, 1, __ATOMIC_RELAXED);
    instr__filter.depth = calib_depth();
    if (instr__filter.min_ticks)
        instr__filter.min_ticks = 1;
}

static void restore_filters(const struct instr__filter *user)
{
    __atomic_store_n(&instr__filter.on, user->on, __ATOMIC_RELAXED);
    instr__filter.depth = user->depth;
    instr__filter.min_ticks = user->min_ticks;
}

/* The records (meta lock held): at start, and again in a fork child's dump. */
void instr__calibrate_reemit(void)
{
    if (!measured)
        return;
    if (instr__rt.header) {
        instr__rt.header->calibration = source;
        instr__rt.header->calibration_path = path ? INSTR_CALIBRATION_PATH_FILTERING : INSTR_CALIBRATION_PATH_FAST;
    }
    for (int k = 0; k < NKINDS; k++) {
        uint64_t v[5] = {kind_event[k], cost[k].before, cost[k].after, cost[k].spread, cost[k].rounds};
        instr__meta_hook_cost(v);
    }
}

void instr__calibrate(void)
{
    int saved = errno;
    _Static_assert(sizeof cost == 16 * sizeof(uint64_t), "cost[] is the cache's 16 values");
    const char *how = secure_getenv("INSTR_CALIBRATE");
    int fresh = how && !strcmp(how, "fresh");
    path = run_path();
    if (!fresh && !instr__calib_cache_load(&cost[0].before, instr__detector.set, path)) {
        source = INSTR_CALIBRATION_CACHED;
        goto done;
    }
    struct instr__thread *prev = instr__tls;
    size_t head = (sizeof(struct instr__thread) + 4095) & ~(size_t)4095;
    _Static_assert(INSTR_CHUNK_HEADER_SIZE + 2 * SCRATCH <= CHUNK, "the scratch fits in its chunk");
    size_t size = head + STACK_FRAMES * sizeof(struct instr__frame) + CHUNK + sizeof(struct samples);
    size = (size + 4095) & ~(size_t)4095;
    uint8_t *m = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
    if (m == MAP_FAILED)
        goto out;
    struct instr__thread *t = (struct instr__thread *)m;
    uint8_t *chunk = m + head + STACK_FRAMES * sizeof(struct instr__frame);
    uint8_t *scratch = chunk + INSTR_CHUNK_HEADER_SIZE;
    struct samples *s = (struct samples *)(chunk + CHUNK);
    t->map_size = size; /* the perf detector: faults on it are ours */
    /* A staging area of one chunk, never handed out: INSTR_MIN_DURATION's
     * rewinds find their events in it (hooks.c, rewind_mark). */
    t->stage.base = chunk;
    t->stage.n = 1;
    t->stage.next = 1;
    t->stage.gen = instr__rt.dump_gen;
    t->base = (struct instr__frame *)(m + head) + 1;
    t->base[-1].desc = NULL;
    t->base[-1].cfa = UINTPTR_MAX;
    t->top = t->base;
    t->end = t->base + STACK_FRAMES - 2;
    t->tid = instr__gettid();
    t->index = UINT32_MAX;
    t->pos = scratch;
    /* Never reached: the rounds roll over at SCRATCH; the room past it is
     * for a signal handler's hooks meanwhile (no chunk switch here). */
    t->limit = scratch + 2 * SCRATCH - INSTR_EVENT_MAX_BYTES;
    /* CFAs below this frame's, as a caller and its callee would have; the
     * sentinel near them, so that even the first hook takes the fast path
     * (the slow one would make a system call). */
    char here;
    uintptr_t base = ((uintptr_t)&here - 4096) & ~(uintptr_t)15;
    t->base[-1].cfa = base + INSTR_RT_STACK_SPAN / 2;
    t->busy = INSTR__BUSY_RUNTIME;
    instr__calib_slots[0] = (void *)instr__hook_call;
    instr__calib_slots[1] = (void *)instr__hook_enter;
    instr__calib_slots[2] = (void *)instr__hook_exit;
    instr__calib_slots[3] = (void *)instr__hook_return;
    instr__tls = t;
    arm(t);
    t->last_tsc = instr__tsc();
    instr__detector_rearm(t);
    struct instr__filter user = instr__filter;
    if (path) {
        t->pending_bits = INSTR__FILTERING;
        calib_filters();
    }
    t->busy = 0;

    measure(t, scratch, s, base);

    t->busy = INSTR__BUSY_RUNTIME;
    if (path)
        restore_filters(&user);
    disarm(t);
    instr__tls = prev;
    summarise(s);
    munmap(m, size);
    source = INSTR_CALIBRATION_FRESH;
    instr__calib_cache_store(&cost[0].before, instr__detector.set, path);
done:
    measured = 1;
    pthread_mutex_lock(&instr__rt.meta_lock);
    instr__calibrate_reemit();
    pthread_mutex_unlock(&instr__rt.meta_lock);
out:
    errno = saved;
}
