/* export-html.c - a self-contained timeline viewer: one HTML file with the
 * page (export-html-page.html, embedded at build time) and the run as
 * compact JSON in a <script type="application/json"> element.  No network,
 * no external script or font: it opens from file://.
 *
 *   {"v": 1,
 *    "meta": {program, duration_ns, runtime_ns, app (Application values
 *             available), total_ei, total_ai, calls (walked), kept,
 *             min_dur_ns (thinning threshold), limit, range, min_dur_opt},
 *    "strings": [...],                   names, modules, files, labels
 *    "funcs": [[name, module, file, line, pseudo, calls, ei, ee, ai, ae, ci, ce], ...]
 *                                        ns, by function row key (ai/ae null without Application data,
 *                                        ci/ce without CPU data: meta "cpu")
 *    "job": {"id", "size", "pop": [load balance, communication, parallel efficiency],
 *            "ranks": [[rank, host, Elapsed, useful, MPI ns], ...]}   a job's (job.h), else absent
 *    "flows": [from, from tid, from ns, to, to tid, to ns, name, collective, ...]
 *                                        a job's messages and collectives (as the chrome
 *                                        export's flow arrows): from a send's start to its
 *                                        receive's end, from the last rank into an N x N
 *                                        collective to each other rank's exit from it; from
 *                                        and to index "procs" as written; collective 0/1.
 *                                        At most INSTR_HTML_MAX_FLOWS, the longest kept
 *                                        (meta "flows": how many there were)
 *    "procs": [{"pid", "name", "rank" (a job's rank, else null), "end" (its process's end),
 *               "windows": [from, to, ...] (a switchable run's recorded windows, p->windows in ns;
 *                          null if its hooks were never switched),
 *               "threads": [{"tid", "name",
 *               "calls": [dstart, dur, dur - excl, func, depth, dur - app, dur - cpu, ...],
 *               "states": [dstart, dur, kinds, offcpu, ...],
 *               "marks": [t, label, ...],
 *               "counters": [[label, [t, value, ...]], ...]}]}]}
 *
 * app and cpu are the call's Application and CPU Inclusive (data-values.md),
 * from the intervals the walk charged (instr_timeline.charged) while it was
 * open.  states are the intervals the OS took (flagged: kinds is their
 * INSTR_OS_* bits, dump-format.h, plus INSTR_HTML_STATE_APP when
 * --os-events leaves the interval in Application time; offcpu its
 * off-CPU ns), at most INSTR_HTML_MAX_STATES, the longest kept, in start
 * order.
 *
 * Times are integer ns since the session's start; a thread's calls are
 * sorted by start, each start written as the difference from the previous
 * one; excl is the call's own time (its duration less its callees', taken
 * before any thinning or clipping: a call clipped by --time-range keeps its
 * whole call's exclusive time, so dur - excl may be negative).  Calls come from the call timeline
 * (instr_profile_build_timeline), so a bar is exactly a call of the report.
 *
 * Thinning (thin.h): at most INSTR_HTML_MAX_CALLS calls are embedded.
 * Past that the shortest go first (the longest cap calls stay, min_dur_ns
 * is the shortest kept), so what is kept is closed under callers (no bar
 * without its parent).  Up to 4 x the cap is held in memory; past that the
 * histogram of the first walk's durations gives a threshold for a second
 * walk.  The exact cut is made among the calls held, ties taken callers
 * first.  The page says how many calls were left out and below which
 * duration.  --time-range and --min-duration (shared with chrome) cut
 * further.
 */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "export-html-page.h"
#include "export-options.h"
#include "mpi-calls.h"
#include "report.h"
#include "writers.h"
#include "strtab.h"
#include "thin.h"

#define INSTR_HTML_MAX_CALLS 1000000u
#define INSTR_HTML_MAX_STATES 1000000u
#define INSTR_HTML_MAX_FLOWS 100000u
#define INSTR_HTML_STATE_APP 0x100u

struct hcall {
    uint64_t t0, dur, excl; /* ns since the session start; duration; own time */
    uint64_t app, cpu;      /* Application and CPU Inclusive (ns) */
    uint32_t func;          /* function row key */
    uint32_t depth;
};

struct hmark {
    uint64_t t;
    uint32_t label; /* string id */
    int64_t value;  /* counters */
};

struct hstate {
    uint64_t t0, dur, off; /* ns; off: its off-CPU time, clipped as dur is */
    unsigned kinds;        /* INSTR_OS_*, INSTR_HTML_STATE_APP */
};

struct hthread {
    uint64_t tid;
    uint32_t name;                /* string id */
    struct hcall *calls;
    size_t ncalls, capcalls;
    struct hmark *marks, *ctrs;
    size_t nmarks, capmarks, nctrs, capctrs;
    struct { uint64_t t0, child, app, cpu; } *open; /* open frames; app, cpu in ticks, inclusive so far */
    size_t nopen, capopen;
    struct { uint64_t tick, d, app, cpu; } recent[8]; /* charged since the last frame opened or closed */
    int nrecent;
    struct hstate *states;
    size_t nstates, capstates;
};

struct hproc {
    uint64_t pid;
    uint32_t name;
    uint64_t *windows; /* from, to in ns; NULL: never switched */
    size_t nwindows;
    struct hthread *threads;
    size_t nthreads;
};

/* A message or a collective's wait, drawn as an arrow (mpi-calls.h). */
struct hflow {
    uint32_t from, to; /* dump (procs) indexes */
    uint64_t from_tid, to_tid;
    uint64_t t0, t1; /* ns since the session's start */
    uint32_t name;
    int collective;
};

struct hexp {
    const struct instr_session *s;
    const struct instr_timeline_opts *o; /* --time-range, --min-duration */
    struct instr_strtab st;
    struct hproc *procs;
    size_t dump;
    const struct instr_profile *p;
    uint64_t thresh;        /* calls shorter than this are not kept (ns); after thinning, the shortest kept */
    uint64_t kept;          /* calls held */
    struct instr_thin_hist hist; /* of the calls seen (in range, long enough for the options) */
    int overflow;           /* stopped holding calls (too many): a second walk with thresh */
    double t0_us;           /* the session start (instr_session_us of the earliest dump) */
    double ns_per_tick;     /* of the dump walked */
    uint64_t nstates;       /* OS intervals held */
    uint64_t states_seen;   /* in range */
    uint64_t state_thresh;  /* OS intervals shorter than this are not held (ns) */
    int failed;             /* a charge could not be held (out of memory) */
    int mismatch;           /* the walk numbered functions unlike the report */
    struct hflow *flows;    /* a job's, the longest INSTR_HTML_MAX_FLOWS */
    size_t nflows, capflows;
    uint64_t flows_seen;    /* in range */
};

/* ---- collecting the timeline ---------------------------------------------------- */

static int grow(void **a, size_t *cap, size_t n, size_t size)
{
    if (n < *cap)
        return 0;
    size_t nc = *cap ? *cap * 2 : 64;
    void *b = realloc(*a, nc * size);
    if (!b)
        return INSTR_ENOMEM;
    *a = b;
    *cap = nc;
    return 0;
}

static struct hthread *thread_of(struct hexp *h, uint32_t thread)
{
    struct hproc *pr = &h->procs[h->dump];
    if (thread >= pr->nthreads) {
        struct hthread *a = realloc(pr->threads, (thread + 1) * sizeof *a);
        if (!a)
            return NULL;
        memset(a + pr->nthreads, 0, (thread + 1 - pr->nthreads) * sizeof *a);
        pr->threads = a;
        pr->nthreads = thread + 1;
    }
    return &pr->threads[thread];
}

/* ns since the session's start (clamped at 0). */
static uint64_t ns_at(const struct hexp *h, uint64_t tick)
{
    double us = instr_session_us(h->s, h->dump, tick) - h->t0_us;
    return us > 0 ? (uint64_t)llround(us * 1e3) : 0;
}

static int on_open(void *ctx, uint32_t thread, uint32_t func, uint64_t tick)
{
    struct hexp *h = ctx;
    (void)func;
    struct hthread *t = thread_of(h, thread);
    if (!t || grow((void **)&t->open, &t->capopen, t->nopen, sizeof *t->open) < 0)
        return INSTR_ENOMEM;
    t->open[t->nopen].t0 = ns_at(h, tick);
    t->open[t->nopen].child = t->open[t->nopen].app = t->open[t->nopen].cpu = 0;
    /* Under a call site that pended, the intervals since its tick were
     * charged to the caller: they are the callee's. */
    for (int r = 0; r < t->nrecent && t->nopen; r++)
        if (t->recent[r].tick - t->recent[r].d >= tick) {
            t->open[t->nopen - 1].app -= t->recent[r].app, t->open[t->nopen - 1].cpu -= t->recent[r].cpu;
            t->open[t->nopen].app += t->recent[r].app, t->open[t->nopen].cpu += t->recent[r].cpu;
        }
    t->nrecent = 0;
    t->nopen++;
    return 0;
}

/* The report's row of the walk's function func: the session's profile of
 * the dump numbers its functions as this walk does, unless it was a kept
 * profile that disagrees with the dump (UINT32_MAX, and h->mismatch). */
static uint32_t row_of(struct hexp *h, uint32_t func)
{
    const struct instr_profile *kept = &h->s->profiles[h->dump];
    if (func < kept->nfuncs && func < h->p->nfuncs && kept->funcs[func].key == h->p->funcs[func].key)
        return h->s->func_rows[h->dump][func];
    h->mismatch = 1;
    return UINT32_MAX;
}

static int on_close(void *ctx, uint32_t thread, uint32_t func, uint64_t tick, int incomplete)
{
    struct hexp *h = ctx;
    (void)incomplete;
    struct hthread *t = thread_of(h, thread);
    if (!t)
        return INSTR_ENOMEM;
    if (!t->nopen)
        return 0;
    uint64_t t0 = t->open[--t->nopen].t0, t1 = ns_at(h, tick);
    uint64_t dur = t1 > t0 ? t1 - t0 : 0, child = t->open[t->nopen].child;
    uint64_t app = t->open[t->nopen].app, cpu = t->open[t->nopen].cpu;
    t->nrecent = 0;
    if (t->nopen) {
        t->open[t->nopen - 1].child += dur;
        t->open[t->nopen - 1].app += app, t->open[t->nopen - 1].cpu += cpu;
    }
    /* --time-range: calls that overlap it, clipped; --min-duration. */
    const struct instr_timeline_opts *o = h->o;
    double from = o->from_us * 1e3, to = o->to_us < 0 ? INFINITY : o->to_us * 1e3;
    if ((double)t1 < from || (double)t0 > to)
        return 0;
    uint64_t c0 = (double)t0 < from ? (uint64_t)from : t0, c1 = (double)t1 > to ? (uint64_t)to : t1;
    uint64_t cdur = c1 - c0;
    if ((double)cdur < o->min_dur_us * 1e3)
        return 0;
    instr_thin_add(&h->hist, cdur);
    if (cdur < h->thresh || h->overflow)
        return 0;
    if (h->kept >= 4ull * INSTR_HTML_MAX_CALLS) {
        h->overflow = 1; /* too many to hold: walk again with a threshold */
        return 0;
    }
    if (grow((void **)&t->calls, &t->capcalls, t->ncalls, sizeof *t->calls) < 0)
        return INSTR_ENOMEM;
    /* clipped by --time-range: at most the clipped duration */
    uint64_t ans = (uint64_t)llround((double)app * h->ns_per_tick), cns = (uint64_t)llround((double)cpu * h->ns_per_tick);
    uint32_t row = row_of(h, func);
    if (row == UINT32_MAX)
        return INSTR_ECORRUPT;
    t->calls[t->ncalls++] = (struct hcall){c0, cdur, dur > child ? dur - child : 0, ans < cdur ? ans : cdur,
                                           cns < cdur ? cns : cdur, row, (uint32_t)t->nopen};
    h->kept++;
    return 0;
}

static uint64_t keep_cut(uint64_t *d, size_t n, size_t keep, uint64_t *ties);

/* Keeps the `keep` longest OS intervals held (ties: the earliest), and
 * holds none shorter from now on. */
static int thin_states(struct hexp *h, uint64_t keep)
{
    uint64_t *d = malloc(h->nstates * sizeof *d);
    if (!d)
        return INSTR_ENOMEM;
    size_t n = 0;
    for (size_t i = 0; i <= h->dump && i < h->s->ndumps; i++)
        for (size_t k = 0; k < h->procs[i].nthreads; k++)
            for (size_t c = 0; c < h->procs[i].threads[k].nstates; c++)
                d[n++] = h->procs[i].threads[k].states[c].dur;
    uint64_t ties, cut = keep_cut(d, n, keep, &ties);
    h->nstates = 0;
    for (size_t i = 0; i <= h->dump && i < h->s->ndumps; i++)
        for (size_t k = 0; k < h->procs[i].nthreads; k++) {
            struct hthread *t = &h->procs[i].threads[k];
            size_t w = 0;
            for (size_t c = 0; c < t->nstates; c++)
                if (t->states[c].dur > cut || (t->states[c].dur == cut && ties && ties--))
                    t->states[w++] = t->states[c];
            t->nstates = w;
            h->nstates += w;
        }
    h->state_thresh = cut;
    return 0;
}

static void on_charged(void *ctx, uint32_t thread, uint64_t tick, uint64_t d, uint64_t app, uint64_t cpu,
                       unsigned os)
{
    struct hexp *h = ctx;
    struct hthread *t = thread_of(h, thread);
    if (!t) {
        h->failed = 1;
        return;
    }
    if (t->nopen) {
        t->open[t->nopen - 1].app += app, t->open[t->nopen - 1].cpu += cpu;
        if (t->nrecent < 8)
            t->recent[t->nrecent++] = (typeof(t->recent[0])){tick, d, app, cpu};
    }
    if (!os)
        return;
    /* the thread-state lane: clipped to --time-range */
    const struct instr_timeline_opts *o = h->o;
    double from = o->from_us * 1e3, to = o->to_us < 0 ? INFINITY : o->to_us * 1e3;
    uint64_t t0 = ns_at(h, tick > d ? tick - d : 0), t1 = ns_at(h, tick);
    if ((double)t1 < from || (double)t0 > to)
        return;
    uint64_t c0 = (double)t0 < from ? (uint64_t)from : t0, c1 = (double)t1 > to ? (uint64_t)to : t1;
    h->states_seen++;
    if (c1 - c0 < h->state_thresh)
        return;
    if (grow((void **)&t->states, &t->capstates, t->nstates, sizeof *t->states) < 0) {
        h->failed = 1;
        return;
    }
    double keep = t1 > t0 ? (double)(c1 - c0) / (double)(t1 - t0) : 1;
    uint64_t off = (uint64_t)llround((double)(d - cpu) * h->ns_per_tick * keep);
    t->states[t->nstates++] = (struct hstate){c0, c1 - c0, off < c1 - c0 ? off : c1 - c0,
                                              os | (app ? INSTR_HTML_STATE_APP : 0)};
    if (++h->nstates >= 4ull * INSTR_HTML_MAX_STATES && thin_states(h, INSTR_HTML_MAX_STATES) < 0)
        h->failed = 1;
}

static uint32_t label_id(struct hexp *h, uint64_t label)
{
    const struct instr_label *l = instr_dump_label(h->p->dump, label);
    return instr_strtab_id(&h->st, l ? l->text : "[label]");
}

static int add_mark(struct hexp *h, uint32_t thread, uint64_t label, int64_t value, uint64_t tick, int counter)
{
    struct hthread *t = thread_of(h, thread);
    uint64_t at = ns_at(h, tick);
    if (!t)
        return INSTR_ENOMEM;
    if ((double)at < h->o->from_us * 1e3 || (h->o->to_us >= 0 && (double)at > h->o->to_us * 1e3))
        return 0;
    uint32_t id = label_id(h, label);
    if (id == UINT32_MAX)
        return INSTR_ENOMEM;
    struct hmark **a = counter ? &t->ctrs : &t->marks;
    size_t *n = counter ? &t->nctrs : &t->nmarks, *cap = counter ? &t->capctrs : &t->capmarks;
    if (grow((void **)a, cap, *n, sizeof **a) < 0)
        return INSTR_ENOMEM;
    (*a)[(*n)++] = (struct hmark){at, id, value};
    return 0;
}

static int on_mark(void *ctx, uint32_t thread, uint64_t label, uint64_t tick)
{
    return add_mark(ctx, thread, label, 0, tick, 0);
}

static int on_counter(void *ctx, uint32_t thread, uint64_t label, int64_t value, uint64_t tick)
{
    return add_mark(ctx, thread, label, value, tick, 1);
}

static void free_procs(struct hexp *h)
{
    for (size_t i = 0; h->procs && i < h->s->ndumps; i++) {
        for (size_t k = 0; k < h->procs[i].nthreads; k++) {
            struct hthread *t = &h->procs[i].threads[k];
            free(t->calls), free(t->marks), free(t->ctrs), free(t->open), free(t->states);
        }
        free(h->procs[i].threads);
        free(h->procs[i].windows);
    }
    free(h->procs);
    h->procs = NULL;
}

/* One walk of every process; thread names and ids once each is walked. */
static int walk(struct hexp *h)
{
    struct instr_timeline tl = {h, on_open, on_close, on_mark, on_counter, on_charged};
    if (!(h->procs = calloc(h->s->ndumps, sizeof *h->procs)))
        return INSTR_ENOMEM;
    h->kept = 0;
    h->overflow = 0;
    h->nstates = h->states_seen = h->state_thresh = 0;
    memset(&h->hist, 0, sizeof h->hist);
    for (size_t i = 0; i < h->s->ndumps; i++) {
        struct instr_profile p;
        char err[600];
        int rc;
        h->dump = i;
        h->p = &p;
        h->ns_per_tick = (instr_session_us(h->s, i, 1000000) - instr_session_us(h->s, i, 0)) * 1e-3;
        const struct instr_dump *d = &h->s->dumps[i];
        h->procs[i].pid = d->hdr.pid;
        char label[128]; /* "rank 3 (node1)" for a job's rank */
        if ((h->procs[i].name = instr_strtab_id(&h->st, instr_process_label(d, label, sizeof label))) == UINT32_MAX)
            return INSTR_ENOMEM;
        if ((rc = instr_profile_build_timeline(&p, d, h->s->exclude, &tl, err, sizeof err)) < 0)
            return rc;
        if (h->failed) {
            instr_profile_free(&p);
            return INSTR_ENOMEM;
        }
        if (p.switched_at && !h->procs[i].windows) {
            /* dump ticks (the calls are on the timeline, less the runtime's
             * own work: a gap's edge may sit that much off its calls) */
            if (!(h->procs[i].windows = malloc((2 * p.nwindows + 1) * sizeof(uint64_t)))) {
                instr_profile_free(&p);
                return INSTR_ENOMEM;
            }
            for (size_t w = 0; w < p.nwindows; w++) {
                h->procs[i].windows[2 * w] = ns_at(h, p.windows[w].from);
                h->procs[i].windows[2 * w + 1] = ns_at(h, p.windows[w].to);
            }
            h->procs[i].nwindows = p.nwindows;
        }
        struct hthread *last = p.nthreads ? thread_of(h, (uint32_t)p.nthreads - 1) : NULL;
        for (size_t k = 0; last && k < p.nthreads; k++) {
            struct hthread *t = &h->procs[i].threads[k];
            t->tid = p.threads[k].tid;
            t->name = instr_strtab_id(&h->st, p.threads[k].name && p.threads[k].name[0] ? p.threads[k].name : "thread");
            rc = t->name == UINT32_MAX ? INSTR_ENOMEM : 0;
        }
        instr_profile_free(&p);
        if (rc < 0 || (p.nthreads && !last))
            return INSTR_ENOMEM;
    }
    return 0;
}

/* The k-th largest of a[0..n) (k < n), reordering a. */
static uint64_t kth_largest(uint64_t *a, size_t n, size_t k)
{
    size_t lo = 0, hi = n - 1;
    while (lo < hi) {
        uint64_t pivot = a[lo + (hi - lo) / 2];
        size_t i = lo, j = hi;
        while (i <= j) {
            while (a[i] > pivot)
                i++;
            while (a[j] < pivot)
                j--;
            if (i <= j) {
                uint64_t t = a[i];
                a[i++] = a[j];
                a[j] = t;
                if (j == 0)
                    break;
                j--;
            }
        }
        if (k <= j)
            hi = j;
        else if (k >= i)
            lo = i;
        else
            return a[k];
    }
    return a[k];
}

/* The shortest duration of the keep longest of d[0..n) (keep <= n), and
 * in *ties how many of that duration are kept; frees d. */
static uint64_t keep_cut(uint64_t *d, size_t n, size_t keep, uint64_t *ties)
{
    uint64_t cut = kth_largest(d, n, keep - 1), longer = 0;
    for (size_t i = 0; i < n; i++)
        longer += d[i] > cut;
    free(d);
    *ties = keep - longer;
    return cut;
}

/* Keeps exactly the cap: the calls longer than the cap-th longest duration
 * D, and as many lasting exactly D as fit.  A thread's calls are held in
 * closing order (a callee before its caller), so ties are taken from the
 * end: a caller lasting D is kept before its callee lasting D. */
static int thin(struct hexp *h)
{
    const struct instr_session *s = h->s;
    uint64_t *d = malloc(h->kept * sizeof *d);
    if (!d)
        return INSTR_ENOMEM;
    size_t n = 0;
    for (size_t i = 0; i < s->ndumps; i++)
        for (size_t k = 0; k < h->procs[i].nthreads; k++)
            for (size_t c = 0; c < h->procs[i].threads[k].ncalls; c++)
                d[n++] = h->procs[i].threads[k].calls[c].dur;
    uint64_t ties, cut = keep_cut(d, n, INSTR_HTML_MAX_CALLS, &ties);
    h->kept = 0;
    for (size_t i = 0; i < s->ndumps; i++)
        for (size_t k = 0; k < h->procs[i].nthreads; k++) {
            struct hthread *t = &h->procs[i].threads[k];
            size_t w = t->ncalls;
            for (size_t c = t->ncalls; c-- > 0;)
                if (t->calls[c].dur > cut || (t->calls[c].dur == cut && ties && ties--))
                    t->calls[--w] = t->calls[c];
            memmove(t->calls, t->calls + w, (t->ncalls - w) * sizeof *t->calls);
            t->ncalls -= w;
            h->kept += t->ncalls;
        }
    h->thresh = cut;
    return 0;
}

/* ---- a job's messages and collectives ---------------------------------------------- */

static uint64_t flow_len(const struct hflow *f)
{
    return f->t1 > f->t0 ? f->t1 - f->t0 : f->t0 - f->t1;
}

static int cmp_flow_len(const void *a, const void *b) /* longest first */
{
    uint64_t x = flow_len(a), y = flow_len(b);
    return (x < y) - (x > y);
}

static int cmp_flow_start(const void *a, const void *b)
{
    const struct hflow *x = a, *y = b;
    return (x->t0 > y->t0) - (x->t0 < y->t0);
}

static uint64_t flow_ns(const struct hexp *h, double axis_ns)
{
    double ns = axis_ns - h->t0_us * 1e3;
    return ns > 0 ? (uint64_t)llround(ns) : 0;
}

/* One flow of a job (mpi-calls.h), held if in --time-range. */
static int hold_flow(void *ctx, const struct instr_mpi_flow *mf)
{
    struct hexp *h = ctx;
    struct hflow f = {.from = (uint32_t)mf->from_dump, .to = (uint32_t)mf->to_dump, .from_tid = mf->from->tid,
                      .to_tid = mf->to->tid, .t0 = flow_ns(h, mf->from->start), .t1 = flow_ns(h, mf->to->end),
                      .collective = mf->kind == INSTR_MPI_FLOW_COLLECTIVE};
    uint64_t lo = f.t0 < f.t1 ? f.t0 : f.t1, hi = f.t0 < f.t1 ? f.t1 : f.t0;
    if (hi < h->o->from_us * 1e3 || (h->o->to_us >= 0 && lo > h->o->to_us * 1e3))
        return 0;
    h->flows_seen++;
    if ((f.name = instr_strtab_id(&h->st, mf->name)) == UINT32_MAX ||
        grow((void **)&h->flows, &h->capflows, h->nflows + 1, sizeof *h->flows) < 0)
        return INSTR_ENOMEM;
    h->flows[h->nflows++] = f;
    return 0;
}

/* The flows of a job (mpi-calls.h: matched by the wait states), as the
 * chrome export draws them, in --time-range; past INSTR_HTML_MAX_FLOWS the
 * longest are kept, then sorted by start. */
static int collect_flows(struct hexp *h)
{
    int rc = instr_mpi_flows(h->s, hold_flow, h);
    if (rc == 0 && h->nflows > INSTR_HTML_MAX_FLOWS) {
        qsort(h->flows, h->nflows, sizeof *h->flows, cmp_flow_len);
        h->nflows = INSTR_HTML_MAX_FLOWS;
    }
    if (rc == 0 && h->nflows > 1)
        qsort(h->flows, h->nflows, sizeof *h->flows, cmp_flow_start);
    return rc;
}

static int cmp_call(const void *a, const void *b)
{
    const struct hcall *x = a, *y = b;
    if (x->t0 != y->t0)
        return x->t0 < y->t0 ? -1 : 1;
    return x->depth < y->depth ? -1 : x->depth > y->depth;
}

static int cmp_state(const void *a, const void *b)
{
    const struct hstate *x = a, *y = b;
    return x->t0 < y->t0 ? -1 : x->t0 > y->t0;
}

/* ---- writing ------------------------------------------------------------------------- */

/* A JSON string that cannot end the script element ('<' escaped). */
static void jstr(FILE *out, const char *s)
{
    fputc('"', out);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p == '"' || *p == '\\')
            fprintf(out, "\\%c", *p);
        else if (*p < 0x20 || *p == '<' || *p == '>' || *p == '&')
            fprintf(out, "\\u%04x", *p);
        else
            fputc(*p, out);
    }
    fputc('"', out);
}

static void jnum(FILE *out, double v)
{
    if (isnan(v))
        fputs("null", out);
    else
        fprintf(out, "%.0f", v);
}

static int write_json(FILE *out, struct hexp *h)
{
    const struct instr_session *s = h->s;
    const struct instr_timeline_opts *o = h->o;
    /* Function rows first: their strings get ids. */
    uint32_t *fs = malloc((s->nfunctions * 3 + 1) * sizeof *fs);
    if (!fs)
        return INSTR_ENOMEM;
    for (uint32_t k = 0; k < s->nfunctions; k++) {
        const struct instr_row *r = instr_function_row(s, k);
        fs[3 * k] = instr_strtab_id(&h->st, r->name);
        fs[3 * k + 1] = instr_strtab_id(&h->st, instr_basename(r->module));
        fs[3 * k + 2] = instr_strtab_id(&h->st, r->file);
        if (fs[3 * k] == UINT32_MAX || fs[3 * k + 1] == UINT32_MAX || fs[3 * k + 2] == UINT32_MAX) {
            free(fs);
            return INSTR_ENOMEM;
        }
    }
    fprintf(out, "{\"v\":1,\"meta\":{\"program\":");
    jstr(out, s->ndumps ? s->dumps[0].hdr.exe_path : "");
    fprintf(out, ",\"processes\":%zu,\"duration_ns\":", s->ndumps);
    jnum(out, s->duration_ns);
    fprintf(out, ",\"runtime_ns\":");
    jnum(out, s->runtime_ns);
    fprintf(out, ",\"app\":%s,\"cpu\":%s,\"total_ei\":", s->no_app ? "false" : "true", s->cpu_known ? "true" : "false");
    jnum(out, s->total_ns[0]);
    fprintf(out, ",\"total_ai\":");
    jnum(out, s->no_app ? NAN : s->total_ns[1]);
    fprintf(out, ",\"total_ci\":");
    jnum(out, s->cpu_known ? s->total_cpu_ns : NAN);
    fprintf(out, ",\"calls\":%" PRIu64 ",\"kept\":%" PRIu64 ",\"min_dur_ns\":%" PRIu64 ",\"limit\":%u", h->hist.calls,
            h->kept, h->thresh, INSTR_HTML_MAX_CALLS);
    fprintf(out, ",\"states\":%" PRIu64 ",\"states_kept\":%" PRIu64 ",\"states_min_ns\":%" PRIu64, h->states_seen,
            h->nstates, h->state_thresh);
    fprintf(out, ",\"range\":[%.0f,", o->from_us * 1e3);
    jnum(out, o->to_us < 0 ? NAN : o->to_us * 1e3);
    fprintf(out, "],\"min_dur_opt\":%.0f,\"flows\":%" PRIu64 "},\n\"strings\":[", o->min_dur_us * 1e3,
            h->flows_seen);
    for (size_t i = 0; i < h->st.n; i++) {
        if (i)
            fputc(',', out);
        jstr(out, h->st.s[i]);
    }
    fprintf(out, "],\n\"funcs\":[");
    for (uint32_t k = 0; k < s->nfunctions; k++) {
        const struct instr_row *r = instr_function_row(s, k);
        fprintf(out, "%s[%u,%u,%u,%" PRIu64 ",%d,%" PRIu64, k ? ",\n" : "", fs[3 * k], fs[3 * k + 1], fs[3 * k + 2],
                r->line, r->pseudo ? 1 : 0, r->v.calls);
        for (int v = 0; v < 4; v++) {
            fputc(',', out);
            jnum(out, s->no_app && v >= 2 ? NAN : r->ns[v]);
        }
        for (int v = 0; v < 2; v++) {
            fputc(',', out);
            jnum(out, s->cpu_known ? r->cpu_ns[v] : NAN);
        }
        fputc(']', out);
    }
    free(fs);
    fprintf(out, "],\n");
    if (s->job) { /* the rank table of the page */
        const struct instr_job *j = s->job;
        fprintf(out, "\"job\":{\"id\":");
        jstr(out, j->id);
        fprintf(out, ",\"size\":%u,\"pop\":[", j->size);
        const double pop[3] = {j->load_balance, j->communication_efficiency, j->parallel_efficiency};
        for (int v = 0; v < 3; v++)
            fprintf(out, isnan(pop[v]) ? "%snull" : "%s%.4f", v ? "," : "", pop[v]);
        fprintf(out, "],\"ranks\":[");
        for (size_t k = 0; k < j->nranks; k++) {
            fprintf(out, "%s[%d,", k ? "," : "", j->ranks[k].rank);
            jstr(out, j->ranks[k].host);
            for (int v = 0; v < 3; v++) {
                fputc(',', out);
                jnum(out, v == 0 ? j->ranks[k].elapsed_ns : v == 1 ? j->ranks[k].useful_ns : j->ranks[k].mpi_ns);
            }
            fputc(']', out);
        }
        fprintf(out, "]},\n");
    }
    if (s->job) {
        fprintf(out, "\"flows\":[");
        for (size_t k = 0; k < h->nflows; k++) {
            const struct hflow *f = &h->flows[k];
            fprintf(out, "%s%u,%" PRIu64 ",%" PRIu64 ",%u,%" PRIu64 ",%" PRIu64 ",%u,%d", k ? (k % 4 ? "," : ",\n") : "",
                    f->from, f->from_tid, f->t0, f->to, f->to_tid, f->t1, f->name, f->collective);
        }
        fprintf(out, "],\n");
    }
    fprintf(out, "\"procs\":[");
    for (size_t i = 0; i < s->ndumps; i++) {
        const struct hproc *pr = &h->procs[i];
        fprintf(out, "%s{\"pid\":%" PRIu64 ",\"name\":%u,\"rank\":", i ? ",\n" : "", pr->pid, pr->name);
        if (instr_dump_is_rank(&s->dumps[i]))
            fprintf(out, "%d", s->dumps[i].hdr.job_rank);
        else
            fputs("null", out);
        fprintf(out, ",\"end\":");
        jnum(out, instr_session_end_ns(s, i));
        fprintf(out, ",\"windows\":%s", pr->windows ? "[" : "null");
        for (size_t w = 0; pr->windows && w < pr->nwindows; w++)
            fprintf(out, "%s%" PRIu64 ",%" PRIu64, w ? "," : "", pr->windows[2 * w], pr->windows[2 * w + 1]);
        fprintf(out, "%s,\"threads\":[", pr->windows ? "]" : "");
        for (size_t k = 0; k < pr->nthreads; k++) {
            struct hthread *t = &pr->threads[k];
            fprintf(out, "%s{\"tid\":%" PRIu64 ",\"name\":%u,\"calls\":[", k ? ",\n" : "", t->tid, t->name);
            if (t->ncalls > 1)
                qsort(t->calls, t->ncalls, sizeof *t->calls, cmp_call);
            uint64_t prev = 0;
            for (size_t c = 0; c < t->ncalls; c++) {
                const struct hcall *a = &t->calls[c];
                /* dur - excl: 0 for a leaf; negative for a call clipped by --time-range */
                fprintf(out, "%s%" PRIu64 ",%" PRIu64 ",%" PRId64 ",%u,%u,%" PRIu64 ",%" PRIu64,
                        c ? (c % 8 ? "," : ",\n") : "", a->t0 - prev, a->dur, (int64_t)(a->dur - a->excl), a->func,
                        a->depth, a->dur - a->app, a->dur - a->cpu);
                prev = a->t0;
            }
            fprintf(out, "],\"states\":[");
            if (t->nstates > 1)
                qsort(t->states, t->nstates, sizeof *t->states, cmp_state);
            prev = 0;
            for (size_t c = 0; c < t->nstates; c++) {
                fprintf(out, "%s%" PRIu64 ",%" PRIu64 ",%u,%" PRIu64, c ? (c % 8 ? "," : ",\n") : "",
                        t->states[c].t0 - prev, t->states[c].dur, t->states[c].kinds, t->states[c].off);
                prev = t->states[c].t0;
            }
            fprintf(out, "],\"marks\":[");
            for (size_t m = 0; m < t->nmarks; m++)
                fprintf(out, "%s%" PRIu64 ",%u", m ? "," : "", t->marks[m].t, t->marks[m].label);
            fprintf(out, "],\"counters\":[");
            /* One series per label, in order of first appearance. */
            int first = 1;
            for (size_t m = 0; m < t->nctrs; m++) {
                uint32_t l = t->ctrs[m].label;
                size_t q = 0;
                while (q < m && t->ctrs[q].label != l)
                    q++;
                if (q < m)
                    continue;
                fprintf(out, "%s[%u,[", first ? "" : ",", l);
                first = 0;
                int f2 = 1;
                for (size_t r = m; r < t->nctrs; r++)
                    if (t->ctrs[r].label == l) {
                        fprintf(out, "%s%" PRIu64 ",%" PRId64, f2 ? "" : ",", t->ctrs[r].t, t->ctrs[r].value);
                        f2 = 0;
                    }
                fprintf(out, "]]");
            }
            fprintf(out, "]}");
        }
        fprintf(out, "]}");
    }
    fprintf(out, "]}");
    return 0;
}

static const struct instr_timeline_opts defaults = INSTR_TIMELINE_OPTS_DEFAULT;
const struct instr_export_options instr_html_options = {
    (const struct instr_option *const[]){&instr_opt_time_range, &instr_opt_min_duration, NULL}, sizeof defaults,
    &defaults, NULL};

int instr_export_html(FILE *out, const struct instr_session *s, const struct instr_report_opts *o)
{
    if (!s->have_rate)
        return INSTR_EARG; /* a time axis needs a tick rate */
    struct hexp h = {.s = s, .o = o->export_opts ? o->export_opts : &defaults};
    size_t first = 0;
    for (size_t i = 1; i < s->ndumps; i++)
        if (s->dumps[i].hdr.start_mono_ns < s->dumps[first].hdr.start_mono_ns)
            first = i;
    h.t0_us = s->ndumps ? instr_session_us(s, first, s->dumps[first].hdr.start_tsc) : 0;
    int rc = walk(&h);
    if (rc == 0 && h.overflow) { /* not everything was held: walk again, holding only what may stay */
        h.thresh = instr_thin_cut(&h.hist, INSTR_HTML_MAX_CALLS, 4ull * INSTR_HTML_MAX_CALLS);
        free_procs(&h);
        rc = walk(&h);
    }
    if (rc == 0 && h.kept > INSTR_HTML_MAX_CALLS)
        rc = thin(&h);
    if (rc == 0 && h.nstates > INSTR_HTML_MAX_STATES)
        rc = thin_states(&h, INSTR_HTML_MAX_STATES);
    if (rc == 0)
        rc = collect_flows(&h);
    if (rc == 0) {
        const char *mark = strstr(instr_html_page, "/*INSTR_DATA*/");
        if (!mark)
            rc = INSTR_EARG;
        else {
            fwrite(instr_html_page, 1, (size_t)(mark - instr_html_page), out);
            rc = write_json(out, &h);
            fputs(mark + strlen("/*INSTR_DATA*/"), out);
        }
    }
    free_procs(&h);
    free(h.flows);
    instr_strtab_free(&h.st);
    return rc;
}
