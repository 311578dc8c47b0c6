/* hybrid.c - samples of an instrumented run (INSTR_SAMPLE=HZ) placed on the
 * exact shadow stack (see hybrid.h). */
#include "hybrid.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "arrays.h"
#include "emit.h"
#include "sample-reader.h"
#include "sample-symbols.h"

struct place {
    struct instr_hybrid *h;
    const struct instr_dump *d;
    double rate; /* ticks per ns */
    uint32_t thread; /* the thread the iterator is on, UINT32_MAX = none */
    struct instr_sample_iter *it;
    struct instr_sample s;
    uint64_t raw; /* s's own time (CLOCK_MONOTONIC ns) */
    int have; /* s holds the next sample, not yet placed */
    const struct instr_dump *sd;  /* the samples' dump: d itself, or instr-sample's */
    struct instr_symbolizer *sym; /* names the sampled frames (sd's MAP records), or NULL */
    char *has_fns;                /* with sym: per d->modules, 1 if it has instrumented functions */
};

/* ns (CLOCK_MONOTONIC) of a hybrid sample -> dump ticks. */
static uint64_t to_tick(const struct place *pl, uint64_t ns)
{
    const struct instr_dump_header *h = &pl->d->hdr;
    double dt = ((double)ns - (double)h->start_mono_ns) * pl->rate;
    return dt <= -(double)h->start_tsc ? 0 : (uint64_t)((double)h->start_tsc + dt);
}

static int next_sample(struct place *pl)
{
    while (instr_sample_iter_next(pl->it, &pl->s) > 0) {
        if (pl->s.kind == INSTR_SAMPLE_LOST) {
            pl->h->lost += pl->s.weight;
            continue;
        }
        if (pl->s.kind != INSTR_SAMPLE_STACK || !pl->s.nframes)
            continue;
        pl->raw = pl->s.tick;
        pl->s.tick = to_tick(pl, pl->s.tick);
        return pl->have = 1;
    }
    return pl->have = 0;
}

static const char *base_name(const char *path)
{
    const char *b = path ? strrchr(path, '/') : NULL;
    return b ? b + 1 : path ? path : "";
}

/* A module with instrumented functions in the instrumented dump (by file
 * name: the runtime and the kernel may spell a path differently; the dump
 * also names the modules of call sites' callees, e.g. libc). */
static int instrumented_module(const struct place *pl, const char *path)
{
    const char *b = base_name(path);
    for (size_t i = 0; i < pl->d->nmodules; i++)
        if (pl->has_fns[i] && !strcmp(base_name(pl->d->modules[i].path), b))
            return 1;
    return 0;
}

static int in_runtime(const struct instr_frame_sym *f)
{
    return !strncmp(base_name(f->module), "libinstr-rt", 11) ||
           (f->name && (!strncmp(f->name, "__instr_", 8) || !strncmp(f->name, "instr_", 6)));
}

static int add_below(struct instr_hybrid *h, uint32_t site, const char *chain, const char *module, uint64_t w)
{
    for (size_t i = 0; i < h->nbelow; i++)
        if (h->below[i].site == site && !strcmp(h->below[i].chain, chain) && !strcmp(h->below[i].module, module)) {
            h->below[i].samples += w;
            return 0;
        }
    struct instr_hybrid_below *a = instr_grow(h->below, &h->capbelow, h->nbelow + 1, sizeof *a, 64);
    if (!a)
        return INSTR_ENOMEM;
    h->below = a;
    struct instr_hybrid_below *b = &h->below[h->nbelow];
    if (!(b->chain = strdup(chain)) || !(b->module = strdup(module))) {
        free(b->chain);
        return INSTR_ENOMEM;
    }
    b->site = site;
    b->samples = w;
    h->nbelow++;
    return 0;
}

static int by_below(const void *a, const void *b)
{
    const struct instr_hybrid_below *x = a, *y = b;
    if (x->samples != y->samples)
        return x->samples > y->samples ? -1 : 1;
    return strcmp(x->chain, y->chain);
}

#define BELOW_MAX 6 /* frames of a chain below a call site */

/* A sample with its frames named: whether its leaf is in instr's runtime,
 * and, under a call-site frame, the uninstrumented frames below the site
 * (instr-sample's unwound stack; INSTR_SAMPLE's one frame: the leaf). */
static int read_stack(struct place *pl, const struct instr_sample *s, uint32_t top, int *rt)
{
    struct instr_frame_sym f[BELOW_MAX];
    size_t n = 0;
    int rc;
    /* MAP ticks are the samples' dump's: ns in instr-sample's, TSC in ours */
    const uint64_t at = pl->sd == pl->d ? s->tick : pl->raw;
    for (size_t k = 0; k < s->nframes && n < BELOW_MAX; k++) {
        /* a return address names the call before it */
        if ((rc = instr_symbolize(pl->sym, pl->sd, k ? s->frames[k] - 1 : s->frames[k], at, &f[n])) < 0)
            return rc;
        if (k == 0)
            *rt = *rt || in_runtime(&f[0]); /* the runtime's own flag stands */
        if (*rt || !f[n].module || instrumented_module(pl, f[n].module))
            break;
        n++;
    }
    /* p->funcs is filled after the walk: write_below keeps the call sites */
    if (!n || *rt || top == UINT32_MAX)
        return 0;
    char chain[1024];
    size_t len = 0;
    for (size_t k = n; k-- > 0 && len < sizeof chain;) {
        char addr[32];
        const char *name = f[k].name;
        if (!name) {
            snprintf(addr, sizeof addr, "[%s]", base_name(f[k].module));
            name = addr;
        }
        len += (size_t)snprintf(chain + len, sizeof chain - len, "%s%s", k + 1 < n ? ";" : "", name);
    }
    return add_below(pl->h, top, chain, base_name(f[0].module), s->weight);
}

static int count(struct place *pl, const struct instr_sample *s, uint32_t top, int gap)
{
    struct instr_hybrid *h = pl->h;
    if (!gap && top != UINT32_MAX && top >= h->nfn) {
        struct instr_hybrid_fn *a = instr_grow_zeroed(h->fn, &h->nfn, (size_t)top + 1, sizeof *a, 256);
        if (!a)
            return INSTR_ENOMEM;
        h->fn = a;
    }
    int rt = (s->flags & INSTR_STACK_RUNTIME) != 0;
    if (pl->sym) {
        int rc = read_stack(pl, s, gap ? UINT32_MAX : top, &rt);
        if (rc < 0)
            return rc;
    }
    h->samples += s->weight;
    h->runtime_samples += rt ? s->weight : 0;
    if (gap) {
        h->gap_samples += s->weight;
    } else if (top == UINT32_MAX) {
        h->empty_samples += s->weight;
    } else {
        h->placed += s->weight;
        h->fn[top].samples += s->weight;
        h->fn[top].runtime += rt ? s->weight : 0;
    }
    return 0;
}

static int start_thread(struct place *pl, uint32_t thread)
{
    /* The rest of the previous thread: after its last event. */
    while (pl->have) {
        if (count(pl, &pl->s, UINT32_MAX, 1) < 0)
            return INSTR_ENOMEM;
        next_sample(pl);
    }
    if (pl->thread != UINT32_MAX)
        pl->h->bad_chunks += pl->it->nbad;
    pl->thread = thread;
    pl->it->nbad = 0;
    if (thread == UINT32_MAX)
        return 0;
    /* the samples' thread: the same one, or instr-sample's with its tid */
    const struct instr_thread_info *t = &pl->d->threads[thread];
    if (pl->sd != pl->d) {
        t = NULL;
        for (size_t i = 0; i < pl->sd->nthreads && !t; i++)
            if (pl->sd->threads[i].tid == pl->d->threads[thread].tid)
                t = &pl->sd->threads[i];
        if (!t)
            return 0;
    }
    instr_sample_iter_init(pl->it, t);
    next_sample(pl);
    return 0;
}

static int on_interval(void *ctx, uint32_t thread, uint64_t from, uint64_t to, uint32_t top)
{
    struct place *pl = ctx;
    if (thread != pl->thread && start_thread(pl, thread) < 0)
        return INSTR_ENOMEM;
    while (pl->have && pl->s.tick <= to) {
        /* Before this interval and after the previous one: the runtime's own
         * work (EXT RUNTIME), or before the thread's first event. */
        int rc = count(pl, &pl->s, top, pl->s.tick <= from);
        if (rc < 0)
            return rc;
        next_sample(pl);
    }
    return 0;
}

int instr_hybrid_build(struct instr_hybrid *h, const struct instr_dump *d, char *err, size_t errlen)
{
    return instr_hybrid_build_with(h, d, NULL, err, errlen);
}

int instr_hybrid_build_with(struct instr_hybrid *h, const struct instr_dump *d, const struct instr_dump *sd, char *err,
                            size_t errlen)
{
    memset(h, 0, sizeof *h);
    struct place pl = {.h = h, .d = d, .thread = UINT32_MAX, .sd = sd ? sd : d};
    h->from_sampler = sd && sd != d;
    /* The rate is the sampler's: instr-sample's dump says what it asked,
     * the instrumented dump (without INSTR_SAMPLE) says nothing. */
    h->rate_asked_hz = pl.sd->sample_rate_hz;
    /* INSTR_SAMPLE's own samples are named through the runtime's MAP
     * records (runtime/maps.c; none in older dumps): the leaf only. */
    h->leaf_only = !h->from_sampler && d->nmaps;
    if (h->from_sampler || h->leaf_only) {
        if (!(pl.has_fns = calloc(d->nmodules + 1, 1)) || instr_symbolizer_new(&pl.sym) < 0) {
            free(pl.has_fns);
            snprintf(err, errlen, "%s", instr_tool_strerror(INSTR_ENOMEM));
            return INSTR_ENOMEM;
        }
        for (size_t i = 0; i < d->nmodules; i++)
            for (size_t f = 0; f < d->nfunctions && !pl.has_fns[i]; f++)
                pl.has_fns[i] = d->functions[f].module == d->modules[i].id;
    }
    const struct instr_dump_header *hd = &d->hdr;
    uint64_t et = hd->end_tsc ? hd->end_tsc : hd->last_tsc, en = hd->end_tsc ? hd->end_mono_ns : hd->last_mono_ns;
    pl.rate = en > hd->start_mono_ns && et > hd->start_tsc ? (double)(et - hd->start_tsc) / (double)(en - hd->start_mono_ns)
                                                           : 1.0;
    if (!(pl.it = calloc(1, sizeof *pl.it))) {
        snprintf(err, errlen, "%s", instr_tool_strerror(INSTR_ENOMEM));
        instr_symbolizer_free(pl.sym);
        free(pl.has_fns);
        return INSTR_ENOMEM;
    }
    struct instr_interval_observer iv = {.ctx = &pl, .interval = on_interval};
    int rc = instr_profile_build_intervals(&h->p, d, &iv, err, errlen);
    if (rc == 0)
        rc = start_thread(&pl, UINT32_MAX); /* the last thread's rest */
    for (size_t i = 0; i < pl.sd->nthreads; i++)
        for (size_t c = 0; c < pl.sd->threads[i].nschunks; c++)
            instr_dump_chunk_done(pl.sd, &pl.sd->threads[i].schunks[c]);
    free(pl.it);
    instr_symbolizer_free(pl.sym);
    free(pl.has_fns);
    if (rc < 0) {
        if (rc == INSTR_ENOMEM)
            snprintf(err, errlen, "%s", instr_tool_strerror(rc));
        instr_hybrid_free(h);
        return rc;
    }
    /* Below call-site frames only (p->funcs is filled now): under a
     * function's own frame a chain is a callee the plugin did not see as a
     * call site (a tail call). */
    size_t nb = 0;
    for (size_t i = 0; i < h->nbelow; i++)
        if (h->below[i].site < h->p.nfuncs && h->p.funcs[h->below[i].site].pseudo) {
            h->below[nb++] = h->below[i];
        } else {
            free(h->below[i].chain);
            free(h->below[i].module);
        }
    h->nbelow = nb;
    if (nb) /* below is NULL when nothing was below a site */
        qsort(h->below, nb, sizeof *h->below, by_below);
    for (size_t i = 0; i < h->p.nthreads; i++)
        if (h->p.threads[i].end_tick > h->p.threads[i].first_tick)
            h->thread_ticks += h->p.threads[i].end_tick - h->p.threads[i].first_tick;
    h->tick_rate = pl.rate;
    return 0;
}

void instr_hybrid_free(struct instr_hybrid *h)
{
    for (size_t i = 0; i < h->nbelow; i++) {
        free(h->below[i].chain);
        free(h->below[i].module);
    }
    free(h->below);
    free(h->fn);
    instr_profile_free(&h->p);
    memset(h, 0, sizeof *h);
}

int instr_hybrid_has_samples(const struct instr_dump *d)
{
    for (size_t i = 0; i < d->nthreads; i++)
        if (d->threads[i].nschunks)
            return 1;
    return 0;
}

struct hrow {
    uint32_t f;
    double ee_pct, cpu_pct, s_pct, err, rt_pct;
    int flag;
};

static int by_ee(const void *a, const void *b)
{
    const struct hrow *x = a, *y = b;
    if (x->ee_pct != y->ee_pct)
        return x->ee_pct > y->ee_pct ? -1 : 1;
    return x->s_pct > y->s_pct ? -1 : x->s_pct < y->s_pct;
}


/* The uninstrumented frames under call-site frames (text or JSON), most
 * samples first; limit rows (0 = all). */
static int write_below(FILE *out, const struct instr_hybrid *h, int format, size_t limit, struct instr_json *j)
{
    size_t n = limit && h->nbelow > limit ? limit : h->nbelow;
    if (format == 0 && n && h->leaf_only)
        fprintf(out,
                "\nBelow call sites (uninstrumented code, the sampled PC only: without instr-sample the frames between "
                "the call site and the leaf are not known):\n%-24s %10s %9s  %s\n",
                "Call site", "Samples", "Of site %", "Leaf function  [its module]");
    else if (format == 0 && n)
        fprintf(out, "\nBelow call sites (uninstrumented code, from instr-sample's unwound stacks):\n%-24s %10s %9s  %s\n",
                "Call site", "Samples", "Of site %", "Frames below it (outermost first)  [leaf module]");
    if (format == 2)
        instr_json_open(j, "below_call_sites", '[', INSTR_JSON_LINES);
    for (size_t i = 0; i < n; i++) {
        const struct instr_hybrid_below *b = &h->below[i];
        char *site = instr_profile_func_name(&h->p, b->site);
        if (!site)
            return INSTR_ENOMEM;
        uint64_t of = b->site < h->nfn ? h->fn[b->site].samples : 0;
        double pct = of ? 100.0 * (double)b->samples / (double)of : 0;
        if (format == 2) {
            instr_json_open(j, NULL, '{', INSTR_JSON_INLINE);
            instr_json_key_str(j, "call_site", site);
            instr_json_key_str(j, "frames", b->chain);
            instr_json_key_str(j, "module", b->module);
            instr_json_key_u64(j, "samples", b->samples);
            instr_json_key_num(j, "of_site_pct", "%.4f", pct);
            instr_json_close(j);
        } else {
            fprintf(out, "%-24s %10" PRIu64 " %8.2f%%  %s  [%s]\n", site, b->samples, pct, b->chain, b->module);
        }
        free(site);
    }
    if (format == 2)
        instr_json_close(j);
    return 0;
}

int instr_hybrid_write(FILE *out, const struct instr_hybrid *h, int format, size_t limit)
{
    const struct instr_profile *p = &h->p;
    /* Samples count CPU time: with exact off-CPU ticks (the cpuclock
     * detector) the reference is each function's on-CPU Elapsed Exclusive,
     * else Elapsed Exclusive itself. */
    const int has_cpu = (p->dump->hdr.detector_set >> INSTR_DETECTOR_CPUCLOCK) & 1u;
    uint64_t ee_total = 0, cpu_total = 0;
    for (size_t f = 0; f < p->nfuncs; f++) {
        ee_total += p->funcs[f].v.ee;
        cpu_total += p->funcs[f].v.ee - (p->funcs[f].v.offcpu_t < p->funcs[f].v.ee ? p->funcs[f].v.offcpu_t : p->funcs[f].v.ee);
    }
    struct hrow *rows = calloc(p->nfuncs ? p->nfuncs : 1, sizeof *rows);
    if (!rows)
        return INSTR_ENOMEM;
    size_t n = 0;
    double N = (double)h->placed;
    const struct instr_hybrid_fn none = {0, 0};
    for (size_t f = 0; f < p->nfuncs; f++) {
        const struct instr_hybrid_fn *hf = f < h->nfn ? &h->fn[f] : &none;
        if (!p->funcs[f].v.ee && !hf->samples)
            continue;
        struct hrow *r = &rows[n++];
        r->f = (uint32_t)f;
        const struct instr_values *v = &p->funcs[f].v;
        double pe = ee_total ? (double)v->ee / (double)ee_total : 0;
        double pc = cpu_total ? (double)(v->ee - (v->offcpu_t < v->ee ? v->offcpu_t : v->ee)) / (double)cpu_total : 0;
        double pi = has_cpu ? pc : pe;
        double ps = N > 0 ? (double)hf->samples / N : 0;
        r->ee_pct = 100 * pe;
        r->cpu_pct = 100 * pc;
        r->s_pct = 100 * ps;
        /* Binomial sampling error of the share, 2 sigma; at least one sample's worth. */
        r->err = N > 0 ? 100 * fmax(2 * sqrt(pi * (1 - pi) / N), 1 / N) : 0;
        r->flag = N > 0 && fabs(r->s_pct - 100 * pi) > r->err; /* against the reference shown */
        r->rt_pct = hf->samples ? 100.0 * (double)hf->runtime / (double)hf->samples : 0;
    }
    qsort(rows, n, sizeof *rows, by_ee);
    const char *ref = has_cpu ? "on-CPU Elapsed Exclusive % (cpuclock detector)" : "Elapsed Exclusive %";
    if (limit && n > limit)
        n = limit;
    /* The CPU time samples were taken in: the functions' on-CPU time, plus
     * the hooks' cost compensated out of it and the runtime's own work
     * (samples land there too: in a call-heavy program most of them). */
    const uint64_t cpu_all = cpu_total + (p->comp.applied ? p->comp.ticks : 0) + p->repairs.runtime_ticks;
    double secs = h->tick_rate > 0 ? (double)(has_cpu ? cpu_all : h->thread_ticks) / h->tick_rate / 1e9 : 0;
    double achieved = secs > 0 ? (double)h->samples / secs : 0;
    const uint64_t asked = h->rate_asked_hz; /* 0 = no SAMPLING record (older dumps) */
    double rt_share = h->samples ? 100.0 * (double)h->runtime_samples / (double)h->samples : 0;
    struct instr_json j;
    if (format == 2) {
        instr_json_init(&j, out);
        instr_json_open(&j, NULL, '{', INSTR_JSON_LINES);
        instr_json_open(&j, "session", '{', INSTR_JSON_INLINE);
        instr_json_key_u64(&j, "samples", h->samples);
        instr_json_key_u64(&j, "placed", h->placed);
        instr_json_key_u64(&j, "empty_stack", h->empty_samples);
        instr_json_key_u64(&j, "runtime_gaps", h->gap_samples);
        instr_json_key_u64(&j, "lost", h->lost);
        instr_json_key_u64(&j, "in_runtime", h->runtime_samples);
        instr_json_key_num(&j, "in_runtime_pct", "%.4f", rt_share);
        if (asked)
            instr_json_key_u64(&j, "rate_asked_hz", asked);
        else
            instr_json_key_null(&j, "rate_asked_hz");
        instr_json_key_num(&j, "rate_achieved_hz", "%.1f", achieved);
        instr_json_key_str(&j, "compared_with", has_cpu ? "on_cpu_exclusive_pct" : "elapsed_exclusive_pct");
        instr_json_key_str(&j, "samples_from", h->from_sampler ? "instr-sample" : "INSTR_SAMPLE");
        if (h->from_sampler || h->leaf_only)
            instr_json_key_str(&j, "below_frames", h->from_sampler ? "unwound" : "leaf");
        else
            instr_json_key_null(&j, "below_frames");
        instr_json_close(&j);
        instr_json_open(&j, "functions", '[', INSTR_JSON_LINES);
    } else if (format == 1) {
        fputs("function,elapsed_exclusive_pct,on_cpu_exclusive_pct,exclusive_samples,exclusive_samples_pct,sampling_error_pct,disagree,"
              "in_runtime_pct\n",
              out);
    } else {
        fprintf(out,
                "Samples on the instrumented stack: %" PRIu64 " samples (%" PRIu64 " placed on a frame, %" PRIu64
                " on an empty stack, %" PRIu64 " in the runtime's own work, %" PRIu64 " lost)\n",
                h->samples, h->placed, h->empty_samples, h->gap_samples, h->lost);
        char askeds[32] = "unknown (not recorded)";
        if (asked)
            snprintf(askeds, sizeof askeds, "%" PRIu64 " Hz", asked);
        fprintf(out, "Rate: asked %s, achieved %.0f Hz of %s time;  PC inside instr's runtime: %.2f %% of samples "
                     "(measured probe overhead)\n",
                askeds, achieved, has_cpu ? "on-CPU" : "thread", rt_share);
        fprintf(out, "Samples from: %s\n", h->from_sampler ? "instr-sample (its unwound stacks, placed by time)" : "INSTR_SAMPLE (the runtime's own)");
        fprintf(out, "Compared with: %s; flagged where they differ by more than the sampling error (+/-)\n\n", ref);
        fprintf(out, "%-32s %9s %10s %10s %10s %8s %10s\n", "Function", "EE %", "On-CPU EE %", "Excl Smp",
                "Excl Smp %", "+/- %", "In hooks %");
    }
    for (size_t i = 0; i < n; i++) {
        const struct hrow *r = &rows[i];
        char *name = instr_profile_func_name(p, r->f);
        if (!name) {
            free(rows);
            return INSTR_ENOMEM;
        }
        uint64_t smp = r->f < h->nfn ? h->fn[r->f].samples : 0;
        if (format == 2) {
            instr_json_open(&j, NULL, '{', INSTR_JSON_INLINE);
            instr_json_key_str(&j, "name", name);
            instr_json_key_num(&j, "elapsed_exclusive_pct", "%.4f", r->ee_pct);
            if (has_cpu)
                instr_json_key_num(&j, "on_cpu_exclusive_pct", "%.4f", r->cpu_pct);
            else
                instr_json_key_null(&j, "on_cpu_exclusive_pct");
            instr_json_key_u64(&j, "exclusive_samples", smp);
            instr_json_key_num(&j, "exclusive_samples_pct", "%.4f", r->s_pct);
            instr_json_key_num(&j, "sampling_error_pct", "%.4f", r->err);
            instr_json_key_bool(&j, "disagree", r->flag);
            instr_json_key_num(&j, "in_runtime_pct", "%.4f", r->rt_pct);
            instr_json_close(&j);
        } else if (format == 1) {
            instr_csv_field(out, name);
            fprintf(out, ",%.4f,", r->ee_pct);
            if (has_cpu)
                fprintf(out, "%.4f", r->cpu_pct);
            fprintf(out, ",%" PRIu64 ",%.4f,%.4f,%d,%.4f\n", smp, r->s_pct, r->err, r->flag,
                    r->rt_pct);
        } else {
            char cpu[32] = "-";
            if (has_cpu)
                snprintf(cpu, sizeof cpu, "%.2f%%", r->cpu_pct);
            fprintf(out, "%-32s %8.2f%% %11s %10" PRIu64 " %9.2f%% %7.2f%% %9.2f%%%s\n", name, r->ee_pct, cpu, smp, r->s_pct,
                    r->err, r->rt_pct, r->flag ? "  << disagree" : "");
        }
        free(name);
    }
    free(rows);
    if (format == 2)
        instr_json_close(&j); /* functions */
    if ((h->from_sampler || h->leaf_only) && format != 1) {
        int rc = write_below(out, h, format, limit, &j);
        if (rc < 0)
            return rc;
    }
    if (format == 2) {
        instr_json_close(&j);
        fputc('\n', out);
    }
    return 0;
}
