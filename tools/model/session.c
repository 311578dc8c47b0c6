/* session.c - a session from its dumps: per-process profiles, then rows
 * merged across processes (functions, modules), threads and processes. */
#define _GNU_SOURCE /* memmem */
#include "report.h"

#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "arrays.h"
#include "demangle.h"
#include "profile-cache.h"

#define add_warning(s, ...) instr_msgs_add(&(s)->warnings, &(s)->nwarnings, __VA_ARGS__)

double instr_session_us(const struct instr_session *s, size_t i, uint64_t tick)
{
    return instr_axis_tick_us(&s->axis, s->dumps, i, tick);
}

/* The warnings of dump d (file prefixed) and of its profile p. */
static int add_dump_warnings(struct instr_session *s, const struct instr_dump *d, const struct instr_profile *p)
{
    int rc = 0;
    if (d->tick_hz <= 0) {
        s->have_rate = 0;
        if ((rc = add_warning(s, "%s: no usable tick rate; values are shown in ticks", d->path)))
            return rc;
    }
    /* A known ending (endings.c) replaces "did not finish": a note, since
     * nothing was lost. */
    char ending[400];
    int ended = d->unfinished_warning && instr_session_ending(s, (size_t)(p - s->profiles), ending, sizeof ending);
    for (size_t w = 0; w < d->nwarnings; w++)
        if (!(ended && w + 1 == d->unfinished_warning) && (rc = add_warning(s, "%s: %s", d->path, d->warnings[w])))
            return rc;
    if (ended && (rc = add_warning(s, "%s: %s", d->path, ending)))
        return rc;
    s->nnotes += ended;
    if (p->repairs.bad_chunks &&
        (rc = add_warning(s, "%s: %" PRIu64 " chunk(s) with invalid bytes; their rest was skipped", d->path,
                          p->repairs.bad_chunks)))
        return rc;
    /* A clock that went back damages nothing (the interval across is
     * counted from the chunk's base): a note, not a damaged dump. */
    if (p->repairs.clock_back &&
        (rc = add_warning(s, "%s: %" PRIu64 " chunk(s) start before the previous event (clock went back; "
                             "the interval across counted from the chunk's start)",
                          d->path, p->repairs.clock_back)))
        return rc;
    if (p->repairs.clock_back)
        s->nnotes++;
    for (size_t t = 0; t < p->nthreads; t++)
        if (p->threads[t].dropped &&
            (rc = add_warning(s, "%s: thread %u: %" PRIu64 " events dropped (the runtime had no room), "
                                 "then recording resumed",
                              d->path, p->threads[t].index, p->threads[t].dropped)))
            return rc;
    /* Threads where a detector paused (sud over its budget, or SIGSYS
     * blocked): a note; the values stand, but the system calls of their
     * intervals there went unseen.  And the time before a backend began
     * watching (perf opened late): the Unwatched: line, against all the
     * threads' time. */
    uint64_t unseen = 0, life = 0;
    unsigned nunseen = 0, kinds = 0;
    for (size_t t = 0; t < p->nthreads; t++) {
        const struct instr_pthread *th = &p->threads[t];
        uint64_t lived = th->end_tick > th->first_tick ? th->end_tick - th->first_tick : 0;
        if (th->unseen_ticks) {
            nunseen++;
            unseen += th->unseen_ticks;
            kinds |= th->unseen_kinds;
            life += lived;
        }
        s->notyet_life_ns += instr_ticks_ns(d, lived);
        if (th->notyet_ticks) {
            s->notyet_threads++;
            s->notyet_ns += instr_ticks_ns(d, th->notyet_ticks);
            s->notyet_kinds |= th->notyet_kinds;
        }
    }
    double pct = life ? 100.0 * (double)unseen / (double)life : 100.0;
    if (nunseen && pct < INSTR_UNSEEN_MINOR_PCT) {
        /* a brief pause (a burst at start-up): not worth a warning */
        s->unseen_minor_threads += nunseen;
        s->unseen_minor_ns += instr_ticks_ns(d, unseen);
        s->unseen_minor_life_ns += instr_ticks_ns(d, life);
        nunseen = 0;
    }
    if (nunseen &&
        (rc = add_warning(s, "%s: %s were not seen in %.1f%% of the time of %u thread(s) (sud paused: over its "
                             "budget, INSTR_SUD_RATE, or SIGSYS blocked): their intervals count as "
                             "Application time there",
                          d->path, kinds & INSTR_OS_SYSCALL ? "system calls that do not block" : "some OS events",
                          pct, nunseen)))
        return rc;
    if (nunseen)
        s->nnotes++;
    if (d->hdr.unrecorded_threads &&
        (rc = add_warning(s, "%s: %u thread(s) recorded nothing (no address space for their state: "
                             "RLIMIT_AS); their events are counted as dropped",
                          d->path, d->hdr.unrecorded_threads)))
        return rc;
    /* What the runtime said (runtime/log.c), one note a line: a setting it
     * did not take, a backend that could not run.  Notes: the exit status
     * stays what the data's is. */
    size_t pos = 0, len;
    for (const char *q; (q = instr_dump_note(d, &pos, &len)); s->nnotes++)
        if ((rc = add_warning(s, "%s: the runtime said: %.*s", d->path, (int)len, q)))
            return rc;
    if (d->hdr.notes_dropped && (rc = add_warning(s, "%s: the runtime said %u more line(s) than its dump keeps",
                                                  d->path, d->hdr.notes_dropped)))
        return rc;
    s->nnotes += d->hdr.notes_dropped != 0;
    /* The runtime names why it stopped when it knows (sandbox.c); dumps
     * older than stop_reason said it at the end of detector_detail. */
    const char *why = d->hdr.stop_reason[0] ? d->hdr.stop_reason : NULL;
    if (!why && (why = memmem(d->hdr.detector_detail, strnlen(d->hdr.detector_detail, sizeof d->hdr.detector_detail),
                              "recording stopped: ", 19)))
        why += 19;
    /* A pause (no descriptor free: recording went on once one was) is
     * said as such (runtime/dump-file.c). */
    int paused = why && !strncmp(why, "recording paused: ", 18);
    char calls[160] = "";
    if (d->hdr.dropped_calls || d->hdr.dropped_sites)
        snprintf(calls, sizeof calls, ": %" PRIu64 " calls of instrumented functions and %" PRIu64 " at call sites",
                 d->hdr.dropped_calls, d->hdr.dropped_sites);
    /* Calls of functions or sites the runtime had no room to register
     * are dropped while recording goes on: said as such, with the stop
     * (if any) that dropped the others. */
    int full = !!(d->hdr.flags & INSTR_DUMP_REGISTRY_FULL);
    if (d->hdr.dropped_events > p->repairs.dropped &&
        (rc = add_warning(s, "%s: %" PRIu64 " events dropped %s (%s%s%s)%s: values undercount",
                          d->path, d->hdr.dropped_events - p->repairs.dropped,
                          paused ? "while recording was paused"
                          : why || !full ? "after recording stopped"
                                         : "for want of room in the runtime's registries",
                          paused ? why + 18 : why ? why : full ? "" : "disk full, file size limit or no descriptors",
                          why && full ? "; others " : "",
                          full ? "no memory to register more functions or call sites" : "", calls)))
        return rc;
    return 0;
}

static void row_add(struct instr_row *r, const struct instr_dump *d, const struct instr_values *v)
{
    instr_values_add4(&r->v, r->ns, d, v->ei, v->ee, v->ai, v->ae, v->calls);
    r->v.flagged_n += v->flagged_n;
    r->v.flagged_t += v->flagged_t;
    r->v.offcpu_t += v->offcpu_t;
    r->flagged_ns += instr_ticks_ns(d, v->flagged_t);
    r->offcpu_ns += instr_ticks_ns(d, v->offcpu_t);
    r->v.ext_ei += v->ext_ei;
    r->v.ext_ai += v->ext_ai;
    r->v.ci += v->ci;
    r->v.ce += v->ce;
    for (int k = 0; k < INSTR_OS_NKINDS; k++) {
        r->v.kind_n[k] += v->kind_n[k];
        r->v.kind_t[k] += v->kind_t[k];
        r->kind_ns[k] += instr_ticks_ns(d, v->kind_t[k]);
    }
    r->cpu_ns[0] += instr_ticks_ns(d, v->ci);
    r->cpu_ns[1] += instr_ticks_ns(d, v->ce);
    r->ext_ns[0] += instr_ticks_ns(d, v->ext_ei);
    r->ext_ns[1] += instr_ticks_ns(d, v->ext_ai);
    r->v.po += v->po;
    r->po_ns += instr_ticks_ns(d, v->po);
}

/* Merging functions (and modules) across processes: collect, sort by
 * identity, fold equal neighbours. */
struct fref {
    const char *module, *mangled, *file;
    const char *demangled; /* recorded by the plugin, or NULL/"" */
    uint64_t line;
    char *synth; /* name made up for frames without metadata */
    const struct instr_dump *d;
    const struct instr_values *v;
    int pseudo;          /* a pseudo-frame */
    uint32_t *row_out;   /* functions: where the row key goes (session func_rows) */
};

static int cmp_str(const char *a, const char *b)
{
    return strcmp(a ? a : "", b ? b : "");
}

static int cmp_fref(const void *a, const void *b)
{
    const struct fref *x = a, *y = b;
    int c;
    if ((c = cmp_str(x->module, y->module)) || (c = cmp_str(x->mangled, y->mangled)) ||
        (c = cmp_str(x->file, y->file)))
        return c;
    return x->line < y->line ? -1 : x->line > y->line;
}

static int merge(struct instr_session *s, struct fref *refs, size_t n, struct instr_row **out, size_t *nout,
                 int functions)
{
    if (n > 1)
        qsort(refs, n, sizeof *refs, cmp_fref);
    struct instr_row *rows = n ? calloc(n, sizeof *rows) : NULL;
    if (n && !rows)
        return INSTR_ENOMEM;
    size_t nr = 0;
    for (size_t i = 0; i < n; i++) {
        if (!nr || cmp_fref(&refs[i], &refs[i - 1])) {
            struct instr_row *r = &rows[nr++];
            r->module = refs[i].module ? refs[i].module : "";
            r->file = refs[i].file ? refs[i].file : "";
            r->line = refs[i].line;
            r->key = (uint32_t)(nr - 1);
            r->pseudo = refs[i].pseudo;
            if (functions) {
                r->mangled = strdup(refs[i].mangled);
                /* The plugin's own demangling if the dump has it, so the
                 * name does not depend on this machine's demangler. */
                r->name = refs[i].demangled && refs[i].demangled[0] ? strdup(refs[i].demangled)
                                                                     : instr_demangle(refs[i].mangled);
            } else {
                r->name = strdup(r->module[0] ? r->module : "[unknown module]");
            }
            if (!r->name || (functions && !r->mangled)) {
                *out = rows;
                *nout = nr;
                return INSTR_ENOMEM;
            }
        }
        row_add(&rows[nr - 1], refs[i].d, refs[i].v);
        if (refs[i].row_out)
            *refs[i].row_out = (uint32_t)(nr - 1);
    }
    *out = rows;
    *nout = nr;
    (void)s;
    return 0;
}

static void percents(struct instr_session *s, struct instr_row *rows, size_t n)
{
    for (size_t i = 0; i < n; i++)
        instr_values_pct(&rows[i].v, &s->total, rows[i].pct, rows[i].pct + 4);
}

int instr_session_build(struct instr_session *s, const struct instr_dump *dumps, size_t n, char *err,
                        size_t errlen)
{
    return instr_session_build_excluding(s, dumps, n, NULL, err, errlen);
}

/* A profile cache refused or found damaged (profile-cache.h): a note, said
 * once a report; the values are the walk's. */
static int cache_note(struct instr_session *s, const char *why, const char *what)
{
    if (s->cache_said)
        return 0;
    s->cache_said = 1;
    s->nnotes++;
    return add_warning(s, "profile cache: %s: %s", why, what);
}

/* A dump's walk (step 1's first half): its profile, kept from an earlier
 * report of it or walked, and what the cache said. */
struct walked {
    int rc;            /* < 0: the walk failed, err says why */
    int load_refused;  /* the cache had a damaged or refused profile: why_load */
    int save_refused;  /* nothing kept: why_save */
    char err[600], why_load[512], why_save[512];
};

static void walk_one(struct instr_session *s, size_t i, const struct instr_exclusions *x,
                     const struct instr_session_observer *obs, struct walked *w)
{
    const struct instr_dump *d = &s->dumps[i];
    w->rc = 0;
    w->load_refused = w->save_refused = 0;
    w->err[0] = w->why_load[0] = w->why_save[0] = 0;
    if (obs && (w->rc = obs->dump_begin(obs->ctx, i, &s->profiles[i])) < 0) {
        snprintf(w->err, sizeof w->err, "%s", instr_tool_strerror(w->rc));
        return;
    }
    const struct instr_profile_opts po = {.x = instr_exclusions_walk(x) ? x : NULL, .tl = obs ? &obs->tl : NULL,
                                          .wall = s->wall_on};
    /* The plain views: a profile kept from an earlier report of d, or the
     * walk, kept for the next one (profile-cache.h). */
    int cacheable = !obs && !po.x, kept = 0;
    if (cacheable)
        kept = instr_profile_cache_load(&s->profiles[i], d, s->wall_on, w->why_load, sizeof w->why_load);
    w->load_refused = kept < 0;
    if (kept <= 0) {
        if ((w->rc = instr_profile_build_opts(&s->profiles[i], d, &po, w->err, sizeof w->err)) < 0)
            return;
        w->save_refused = cacheable && instr_profile_cache_save(&s->profiles[i], s->wall_on, w->why_save,
                                                                sizeof w->why_save) < 0;
    }
}

/* Step 1's second half, per dump walked: what the session adds up from its
 * profile (counters, repairs, totals, warnings, its process row). */
static int add_walked(struct instr_session *s, size_t i, const struct walked *w, char *err, size_t errlen)
{
    const struct instr_dump *d = &s->dumps[i];
    int rc;
    if (w->load_refused && (rc = cache_note(s, w->why_load, "ignored; the dump was walked")) < 0)
        return rc;
    if (w->rc < 0) {
        snprintf(err, errlen, "%s", w->err);
        return w->rc;
    }
    if (w->save_refused && (rc = cache_note(s, w->why_save, "nothing kept")) < 0)
        return rc;
    s->ndumps++;
    const struct instr_profile *p = &s->profiles[i];
    s->events += p->events;
    if (d->hdr.flags & INSTR_DUMP_NO_TRANSITIONS)
        s->no_app = 1;
    if (d->hdr.detector_set & (1u << INSTR_DETECTOR_CPUCLOCK))
        s->offcpu_exact = 1;
    else
        s->cpu_known = 0; /* one process without it: the session's CPU time is not known */
    s->offcpu_unknown += p->offcpu_unknown;
    if ((rc = add_dump_warnings(s, d, p)) < 0)
        return rc;
    const struct instr_repairs *r = &p->repairs;
    for (int k = 0; k < INSTR_UNWIND_REASONS; k++)
        s->repairs.unwound[k] += r->unwound[k];
    s->repairs.unmatched_exits += r->unmatched_exits;
    s->repairs.incomplete += r->incomplete;
    s->repairs.bad_chunks += r->bad_chunks;
    s->repairs.clock_back += r->clock_back;
    s->repairs.runtime_ticks += r->runtime_ticks;
    s->repairs.cut_threads += r->cut_threads;
    s->repairs.unrecorded_ticks += r->unrecorded_ticks;
    s->unrecorded_ns += instr_ticks_ns(d, r->unrecorded_ticks);
    s->comp.known |= p->comp.known;
    s->comp.applied |= p->comp.applied;
    s->comp.intervals += p->comp.intervals;
    s->comp.clamped += p->comp.clamped;
    s->comp.unpaid += p->comp.unpaid;
    s->comp.ticks += p->comp.ticks;
    s->comp_ns += instr_ticks_ns(d, p->comp.ticks);
    s->comp_unpaid_ns += instr_ticks_ns(d, p->comp.unpaid);
    s->runtime_ns += instr_ticks_ns(d, r->runtime_ticks);
    /* The header counts every dropped event; DROPPED events say where
     * the ones before a resumed recording were. */
    s->dropped += r->dropped > d->hdr.dropped_events ? r->dropped : d->hdr.dropped_events;
    s->dropped_calls += d->hdr.dropped_calls;
    s->dropped_sites += d->hdr.dropped_sites;
    s->header_unmatched += d->hdr.unmatched_exits;
    s->total.ei += p->total.ei;
    s->total.ai += p->total.ai;
    s->total_ns[0] += instr_ticks_ns(d, p->total.ei);
    s->total_ns[1] += instr_ticks_ns(d, p->total.ai);
    s->total.ci += p->total.ci;
    s->total_cpu_ns += instr_ticks_ns(d, p->total.ci);

    struct instr_row *pr = &s->processes[s->nprocesses++];
    if (!(pr->name = strdup(d->hdr.exe_path)))
        return INSTR_ENOMEM;
    pr->pid = d->hdr.pid;
    struct instr_values pv = p->total;
    pv.ee = pv.ei;
    pv.ae = pv.ai;
    pv.ce = pv.ci;
    for (size_t t = 0; t < p->nthreads; t++) {
        pv.calls += p->threads[t].v.calls;
        pv.flagged_n += p->threads[t].v.flagged_n;
        pv.flagged_t += p->threads[t].v.flagged_t;
        pv.offcpu_t += p->threads[t].v.offcpu_t;
        for (int k = 0; k < INSTR_OS_NKINDS; k++) {
            pv.kind_n[k] += p->threads[t].v.kind_n[k];
            pv.kind_t[k] += p->threads[t].v.kind_t[k];
        }
    }
    row_add(pr, d, &pv);
    return 0;
}

/* Without an end record (SIGKILL, an _exit or exec not seen, still
 * running), the later of its last event and its latest calibration: the
 * last moment it is known to have run.  (The calibration alone is the last
 * chunk written: an MPI rank killed in a wait had it 7 ms after its start,
 * 500 ms before its last event.) */
double instr_session_end_ns(const struct instr_session *s, size_t i)
{
    const struct instr_dump *d = &s->dumps[i];
    double end = instr_axis_end_ns(&s->axis, s->dumps, i);
    if ((d->hdr.flags & (INSTR_DUMP_COMPLETE | INSTR_DUMP_SIGNALED)) && d->hdr.end_mono_ns)
        return end;
    uint64_t last = 0;
    for (size_t t = 0; s->profiles && t < s->profiles[i].nthreads; t++)
        if (s->profiles[i].threads[t].end_tick > last)
            last = s->profiles[i].threads[t].end_tick;
    if (last > d->hdr.start_tsc)
        end = fmax(end, instr_axis_tick_ns(&s->axis, s->dumps, i, last)); /* NAN without a rate: end */
    return end;
}

/* From the earliest start to the latest end of the session's processes. */
static double session_duration(const struct instr_session *s, size_t n)
{
    double t1 = 0;
    for (size_t i = 0; i < n; i++)
        t1 = fmax(t1, instr_session_end_ns(s, i));
    return t1; /* the axis starts at the earliest start */
}

/* Step 2: a row per thread of every process. */
static int add_threads(struct instr_session *s)
{
    size_t nt = 0;
    for (size_t i = 0; i < s->ndumps; i++)
        nt += s->profiles[i].nthreads;
    if (nt && !(s->threads = calloc(nt, sizeof *s->threads)))
        return INSTR_ENOMEM;
    for (size_t i = 0; i < s->ndumps; i++) {
        const struct instr_dump *d = &s->dumps[i];
        const struct instr_profile *p = &s->profiles[i];
        for (size_t t = 0; t < p->nthreads; t++) {
            const struct instr_pthread *th = &p->threads[t];
            struct instr_row *r = &s->threads[s->nthreads++];
            char buf[32];
            snprintf(buf, sizeof buf, "thread %u", th->index);
            if (!(r->name = strdup(th->name && *th->name ? th->name : buf)))
                return INSTR_ENOMEM;
            r->pid = d->hdr.pid;
            r->tid = th->tid;
            r->index = th->index;
            r->start_tick = th->first_tick;
            r->end_tick = th->end_tick;
            r->start_ns = th->first_tick >= d->hdr.start_tsc ? instr_ticks_ns(d, th->first_tick - d->hdr.start_tsc)
                                                             : NAN;
            r->end_ns = th->end_tick >= d->hdr.start_tsc ? instr_ticks_ns(d, th->end_tick - d->hdr.start_tsc) : NAN;
            row_add(r, d, &th->v);
        }
    }
    return 0;
}

/* The identity of profile function pf of dump i, for merging. */
static int function_ref(struct instr_session *s, size_t i, size_t f, struct fref *r)
{
    const struct instr_profile *p = &s->profiles[i];
    const struct instr_pfunc *pf = &p->funcs[f];
    r->d = &s->dumps[i];
    r->v = &pf->v;
    r->module = p->modules[pf->module].path;
    r->row_out = &s->func_rows[i][f];
    if (pf->pseudo) {
        /* An uninstrumented callee: no file or line; identified
         * across processes by module and name. */
        r->mangled = pf->pseudo;
        r->pseudo = 1;
    } else if (pf->fn) {
        r->mangled = pf->origin ? pf->origin : pf->fn->name; /* a clone folded: its origin's */
        r->demangled = pf->origin ? pf->origin_demangled : pf->fn->demangled;
        r->file = pf->fn->file;
        r->line = pf->fn->line;
    } else {
        char buf[64];
        if (pf->key & INSTR_KEY_SITE)
            snprintf(buf, sizeof buf, "[site %" PRIu64 "]", (uint64_t)(pf->key & ~(INSTR_KEY_SITE | INSTR_KEY_UNNAMED)));
        else
            snprintf(buf, sizeof buf, "[function %" PRIu64 "]", pf->key);
        if (!(r->synth = strdup(buf)))
            return INSTR_ENOMEM;
        r->mangled = r->synth;
    }
    return 0;
}

/* Step 3: function and module rows, merged across processes. */
static int add_functions_and_modules(struct instr_session *s)
{
    size_t n = s->ndumps, nf = 0, nm = 0, kf = 0, km = 0;
    for (size_t i = 0; i < n; i++) {
        nf += s->profiles[i].nfuncs;
        nm += s->profiles[i].nmodules;
    }
    int rc = INSTR_ENOMEM;
    struct fref *frefs = nf ? calloc(nf, sizeof *frefs) : NULL, *mrefs = nm ? calloc(nm, sizeof *mrefs) : NULL;
    if ((nf && !frefs) || (nm && !mrefs) || !(s->func_rows = calloc(n ? n : 1, sizeof *s->func_rows)))
        goto out;
    for (size_t i = 0; i < n; i++)
        if (s->profiles[i].nfuncs && !(s->func_rows[i] = calloc(s->profiles[i].nfuncs, sizeof *s->func_rows[i])))
            goto out;
    for (size_t i = 0; i < n; i++) {
        const struct instr_profile *p = &s->profiles[i];
        for (size_t f = 0; f < p->nfuncs; f++)
            if ((rc = function_ref(s, i, f, &frefs[kf++])) < 0)
                goto out;
        for (size_t m = 0; m < p->nmodules; m++) {
            if (!p->modules[m].v.ei && !p->modules[m].v.calls)
                continue;
            struct fref *r = &mrefs[km++];
            r->d = &s->dumps[i];
            r->v = &p->modules[m].v;
            r->module = p->modules[m].path;
        }
    }
    if ((rc = merge(s, frefs, kf, &s->functions, &s->nfunctions, 1)) >= 0)
        rc = merge(s, mrefs, km, &s->modules, &s->nmodules, 0);
out:
    for (size_t i = 0; frefs && i < nf; i++)
        free(frefs[i].synth);
    free(frefs);
    free(mrefs);
    return rc < 0 ? rc : 0;
}

int instr_session_build_excluding(struct instr_session *s, const struct instr_dump *dumps, size_t n,
                                  const struct instr_exclusions *x, char *err, size_t errlen)
{
    return instr_session_build_observed(s, dumps, n, x, NULL, err, errlen);
}

static int by_name_then_module(const void *a, const void *b)
{
    const struct instr_row *x = *(const struct instr_row *const *)a, *y = *(const struct instr_row *const *)b;
    int c = strcmp(x->name ? x->name : "", y->name ? y->name : "");
    return c ? c : strcmp(x->module ? x->module : "", y->module ? y->module : "");
}

/* Rows of one name in different modules (a program's own malloc and
 * libc's, which it calls through dlsym(RTLD_NEXT)): the text names their
 * module, so they read as two functions, not one twice. */
static int mark_shared_names(struct instr_session *s)
{
    if (s->nfunctions < 2)
        return 0;
    const struct instr_row **v = malloc(s->nfunctions * sizeof *v);
    if (!v)
        return INSTR_ENOMEM;
    for (size_t i = 0; i < s->nfunctions; i++)
        v[i] = &s->functions[i];
    qsort(v, s->nfunctions, sizeof *v, by_name_then_module);
    for (size_t i = 0, j; i < s->nfunctions; i = j) {
        for (j = i + 1; j < s->nfunctions && !strcmp(v[i]->name ? v[i]->name : "", v[j]->name ? v[j]->name : "");)
            j++;
        int modules = 0;
        for (size_t k = i + 1; k < j; k++)
            modules |= strcmp(v[k]->module ? v[k]->module : "", v[i]->module ? v[i]->module : "") != 0;
        for (size_t k = i; modules && k < j; k++)
            ((struct instr_row *)v[k])->name_shared = 1;
    }
    free(v);
    return 0;
}

/* Step 1 for every dump.  With an observer (an export streaming the
 * timelines) one dump after the other, in order; without, the dumps are
 * walked by up to instr_session_threads() threads at once (each profile
 * its own: the walks share nothing but the dumps, read only), then added
 * up in order, as one after the other would. */
struct pool {
    struct instr_session *s;
    const struct instr_exclusions *x;
    struct walked *w;
    size_t n, next;
    pthread_mutex_t lock;
};

static void *walker(void *arg)
{
    struct pool *pl = arg;
    for (;;) {
        pthread_mutex_lock(&pl->lock);
        size_t i = pl->next < pl->n ? pl->next++ : SIZE_MAX;
        pthread_mutex_unlock(&pl->lock);
        if (i == SIZE_MAX)
            return NULL;
        walk_one(pl->s, i, pl->x, NULL, &pl->w[i]);
    }
}

unsigned instr_session_threads(size_t ndumps)
{
    const char *e = getenv("INSTR_REPORT_THREADS");
    long t = e && *e ? strtol(e, NULL, 10) : sysconf(_SC_NPROCESSORS_ONLN);
    if (t < 1)
        t = 1;
    if (t > 64)
        t = 64;
    return (unsigned)((size_t)t < ndumps ? (size_t)t : ndumps);
}

struct instr_session_remote instr_session_remote;

/* The dumps walked elsewhere (instr_session_remote): 0, 1 (not: walk
 * them here), or < 0. */
static int walk_remote(struct instr_session *s, size_t n, const struct instr_exclusions *x, struct walked *w)
{
    if (!instr_session_remote.walk || n < 2 || instr_exclusions_walk(x))
        return 1;
    const struct instr_profile_opts po = {.x = NULL, .tl = NULL, .wall = 0};
    int rc = instr_session_remote.walk(instr_session_remote.ctx, s->dumps, n, &po, s->profiles, w[0].err,
                                       sizeof w[0].err);
    if (rc != 0)
        return rc;
    for (size_t i = 0; i < n; i++)
        w[i] = (struct walked){0};
    s->wall_on = 0;
    s->wall_why = instr_session_remote.wall_why;
    return 0;
}

static int add_processes(struct instr_session *s, size_t n, const struct instr_exclusions *x,
                         const struct instr_session_observer *obs, int *walk_failed, char *err, size_t errlen)
{
    unsigned nt = obs ? 1 : instr_session_threads(n);
    struct walked *w = malloc((obs ? 1 : n) * sizeof *w);
    if (!w)
        return INSTR_ENOMEM;
    int rc = 0, remote = obs ? 1 : walk_remote(s, n, x, w);
    if (remote < 0) {
        snprintf(err, errlen, "%s", w[0].err);
        *walk_failed = 1;
        rc = remote;
    } else if (remote == 0) {
        for (size_t i = 0; i < n && rc == 0; i++)
            rc = add_walked(s, i, &w[i], err, errlen);
    } else if (nt > 1) {
        struct pool pl = {s, x, w, n, 0, PTHREAD_MUTEX_INITIALIZER};
        pthread_t th[64];
        unsigned started = 0;
        for (; started < nt; started++)
            if (pthread_create(&th[started], NULL, walker, &pl))
                break;
        if (!started)
            walker(&pl); /* no thread to be had: this one walks them all */
        for (unsigned k = 0; k < started; k++)
            pthread_join(th[k], NULL);
        for (size_t i = 0; i < n && rc == 0; i++)
            if ((rc = add_walked(s, i, &w[i], err, errlen)) < 0)
                *walk_failed = w[i].rc < 0;
        for (size_t i = s->ndumps; i < n; i++) /* walked after the one that failed: not the session's */
            if (w[i].rc == 0)
                instr_profile_free(&s->profiles[i]);
    } else {
        for (size_t i = 0; i < n && rc == 0; i++) {
            walk_one(s, i, x, obs, w);
            if ((rc = add_walked(s, i, w, err, errlen)) < 0)
                *walk_failed = w->rc < 0;
        }
    }
    free(w);
    return rc;
}

/* Whether several of the dumps are ranks of a job (job.h). */
static int ranks_of_a_job(const struct instr_dump *dumps, size_t n)
{
    size_t ranks = 0;
    for (size_t i = 0; i < n && ranks < 2; i++)
        ranks += instr_dump_is_rank(&dumps[i]) != 0;
    return ranks > 1;
}

int instr_session_build_observed(struct instr_session *s, const struct instr_dump *dumps, size_t n,
                                 const struct instr_exclusions *x, const struct instr_session_observer *obs,
                                 char *err, size_t errlen)
{
    memset(s, 0, sizeof *s);
    s->exclude = x;
    s->dumps = dumps;
    s->have_rate = 1;
    s->cpu_known = n > 0; /* until a dump without cpuclock */
    s->wall_on = instr_session_wants_wall(dumps, n);
    /* One process: its threads walked in time order, Wall Inclusive with
     * no cap.  Several: their segments united (wall.h's cap). */
    if (s->wall_on)
        s->wall_on = n == 1 ? 2 : 1;
    int rc = INSTR_ENOMEM;
    if (!(s->profiles = calloc(n, sizeof *s->profiles)) || !(s->processes = calloc(n, sizeof *s->processes)) ||
        instr_axis_build(&s->axis, dumps, n) < 0)
        goto fail;
    if (s->axis.nhosts > 1) /* several hosts' ticks: no one clock to unite Wall segments on; none kept */
        s->wall_on = 0;
    if (s->wall_on && n > 1 && ranks_of_a_job(dumps, n) && !(x && x->job_wall)) {
        s->wall_on = 0;
        s->wall_why = "the ranks of a job: uniting every rank's activations costs more than the rest of the "
                      "walk; --wall computes it";
    }
    int walk_failed = 0;
    if ((rc = add_processes(s, n, x, obs, &walk_failed, err, errlen)) < 0) {
        if (walk_failed) /* the profile failed: err says why */
            goto fail_quiet;
        goto fail;
    }
    s->duration_ns = session_duration(s, n);
    if ((rc = add_threads(s)) < 0 || (rc = add_functions_and_modules(s)) < 0 || (rc = instr_session_wall(s)) < 0)
        goto fail;
    if ((rc = mark_shared_names(s)) < 0)
        goto fail;
    percents(s, s->functions, s->nfunctions);
    percents(s, s->threads, s->nthreads);
    percents(s, s->modules, s->nmodules);
    percents(s, s->processes, s->nprocesses);
    /* The ranks of a job (job.h), before the rows are sorted. */
    rc = INSTR_ENOMEM;
    if (!(s->job = calloc(1, sizeof *s->job)) || (rc = instr_job_build(s, s->job)) < 0)
        goto fail;
    if (!s->job->nranks) {
        instr_job_free(s->job);
        free(s->job);
        s->job = NULL;
    }
    return instr_session_sort(s, "ei");

fail:
    rc = rc < 0 ? rc : INSTR_ENOMEM;
    snprintf(err, errlen, "%s", instr_tool_strerror(rc));
fail_quiet:
    instr_session_free(s);
    return rc;
}

const struct instr_row *instr_function_row(const struct instr_session *s, uint32_t key)
{
    return key < s->nfunctions ? &s->functions[s->row_of_key[key]] : NULL;
}

static void free_rows(struct instr_row *rows, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free(rows[i].name);
        free(rows[i].mangled);
    }
    free(rows);
}

void instr_session_free(struct instr_session *s)
{
    instr_axis_free(&s->axis);
    for (size_t i = 0; i < s->ndumps; i++)
        instr_profile_free(&s->profiles[i]);
    free(s->profiles);
    free_rows(s->functions, s->nfunctions);
    free_rows(s->threads, s->nthreads);
    free_rows(s->modules, s->nmodules);
    free_rows(s->processes, s->nprocesses);
    for (size_t i = 0; s->func_rows && i < s->ndumps; i++)
        free(s->func_rows[i]);
    free(s->func_rows);
    free(s->row_of_key);
    free(s->self.inputs);
    if (s->job)
        instr_job_free(s->job);
    free(s->job);
    for (size_t i = 0; i < s->nwarnings; i++)
        free(s->warnings[i]);
    free(s->warnings);
    memset(s, 0, sizeof *s);
}

void instr_view_rows(const struct instr_session *s, enum instr_view v, const struct instr_row **rows, size_t *n)
{
    switch (v) {
    case INSTR_VIEW_FUNCTIONS: *rows = s->functions; *n = s->nfunctions; break;
    case INSTR_VIEW_THREADS: *rows = s->threads; *n = s->nthreads; break;
    case INSTR_VIEW_MODULES: *rows = s->modules; *n = s->nmodules; break;
    case INSTR_VIEW_PROCESSES: *rows = s->processes; *n = s->nprocesses; break;
    default: *rows = s->functions; *n = s->nfunctions; break; /* tree views: their own output */
    }
}

int instr_session_rewalk(const struct instr_session *s, const struct instr_session_observer *obs)
{
    int rc = 0;
    for (size_t i = 0; i < s->ndumps && rc == 0; i++) {
        struct instr_profile p;
        char err[600];
        memset(&p, 0, sizeof p);
        (void)obs->dump_begin(obs->ctx, i, &p);
        if ((rc = instr_profile_build_timeline(&p, &s->dumps[i], s->exclude, &obs->tl, err, sizeof err)) == 0)
            instr_profile_free(&p);
    }
    return rc;
}
