/* self-pct.c - Self % of a session's functions from samples (self-pct.h). */
#include "self-pct.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "hybrid.h"
#include "sample-report.h"

/* ---- the function rows by folded name ---- */

struct named {
    char *name; /* folded */
    uint32_t row; /* index in s->functions */
};

struct index {
    struct named *v;
    size_t n;
};

static int by_name(const void *a, const void *b)
{
    const struct named *x = a, *y = b;
    int c = strcmp(x->name, y->name);
    return c ? c : (x->row > y->row) - (x->row < y->row);
}

static void index_free(struct index *x)
{
    for (size_t i = 0; i < x->n; i++)
        free(x->v[i].name);
    free(x->v);
}

/* The rows of one kind (pseudo-frames or functions) by folded name. */
static int index_build(struct index *x, const struct instr_session *s, int pseudo)
{
    x->n = 0;
    if (!(x->v = calloc(s->nfunctions + 1, sizeof *x->v)))
        return INSTR_ENOMEM;
    char buf[4096];
    for (size_t i = 0; i < s->nfunctions; i++) {
        if (!s->functions[i].pseudo != !pseudo)
            continue;
        instr_name_origin(s->functions[i].name, buf, sizeof buf);
        if (!(x->v[x->n].name = strdup(buf))) {
            index_free(x);
            return INSTR_ENOMEM;
        }
        x->v[x->n++].row = (uint32_t)i;
    }
    qsort(x->v, x->n, sizeof *x->v, by_name);
    return 0;
}

/* The first entry named name and how many share it (0: none). */
static size_t index_find(const struct index *x, const char *name, size_t *first)
{
    size_t lo = 0, hi = x->n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (strcmp(x->v[mid].name, name) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    size_t k = lo;
    while (k < x->n && !strcmp(x->v[k].name, name))
        k++;
    *first = lo;
    return k - lo;
}

/* Credits w samples to the rows named x->v[first .. first+n): split by
 * their Elapsed Exclusive when several share the name (equally if none has
 * any).  credit[] is per row. */
static void credit_rows(const struct instr_session *s, const struct index *x, size_t first, size_t n, double w,
                        double *credit)
{
    uint64_t ee = 0;
    for (size_t k = first; k < first + n; k++)
        ee += s->functions[x->v[k].row].v.ee;
    for (size_t k = first; k < first + n; k++)
        credit[x->v[k].row] +=
            ee ? w * (double)s->functions[x->v[k].row].v.ee / (double)ee : w / (double)n;
}

static const char *base_name(const char *path)
{
    const char *b = path ? strrchr(path, '/') : NULL;
    return b ? b + 1 : path ? path : "";
}

/* Whether module is instr's runtime library. */
static int runtime_module(const char *module)
{
    return !strncmp(base_name(module), "libinstr-rt", 11);
}

/* A frame in instr's runtime: its library, or a hook symbol of a static one. */
static int in_runtime(const char *name, const char *module)
{
    return runtime_module(module) || !strncmp(name, "__instr_", 8) || !strncmp(name, "instr_", 6);
}

static int in_kernel(const char *module)
{
    return !strncmp(module, "[kernel", 7);
}

int instr_self_frame_kind(const char *name, const char *module)
{
    return in_kernel(module) ? INSTR_SELF_KERNEL : in_runtime(name, module) ? INSTR_SELF_RUNTIME : 0;
}

/* A pseudo-frame named after an uninstrumented callee: its name, or the
 * name under a libc IFUNC variant ("__strlen_avx2" -> "strlen"). */
static size_t find_callee(const struct index *px, const char *folded, size_t *first)
{
    size_t n = index_find(px, folded, first);
    if (n)
        return n;
    char b[4096];
    const char *p = folded;
    while (*p == '_')
        p++;
    snprintf(b, sizeof b, "%s", p);
    for (char *u = strrchr(b, '_'); u && u > b; u = strrchr(b, '_')) {
        *u = 0;
        if ((n = index_find(px, b, first)))
            return n;
    }
    return 0;
}

/* Shares into the rows, the error of the largest. */
static void finish(struct instr_session *s, const double *credit)
{
    struct instr_self *x = &s->self;
    double n = (double)x->samples, top = 0;
    for (size_t i = 0; i < s->nfunctions; i++) {
        s->functions[i].self_pct = n > 0 ? 100.0 * credit[i] / n : 0;
        if (s->functions[i].self_pct > top)
            top = s->functions[i].self_pct;
    }
    x->top_pct = top;
    x->top_ci95 = n > 0 ? 100.0 * 1.96 * sqrt(top / 100 * (1 - top / 100) / n) : NAN;
}

/* Whether the sampling dump sd sampled an instrumented program (it mapped
 * instr's runtime). */
static int sampled_instrumented(const struct instr_dump *sd)
{
    for (size_t m = 0; m < sd->nmodules; m++)
        if (runtime_module(sd->modules[m].path))
            return 1;
    return 0;
}

/* One source, and the right run: samples of the plain build and of the
 * instrumented program are not one Self %, and samples of the
 * instrumented program speak for their own run only.  0, or INSTR_EARG
 * with the reason in err. */
static int check_sources(const struct instr_session *s, const struct instr_dump *sd, size_t n, char *err,
                         size_t errlen)
{
    for (size_t i = 1; i < n; i++)
        if (sampled_instrumented(&sd[i]) != sampled_instrumented(&sd[0])) {
            size_t a = sampled_instrumented(&sd[0]) ? 0 : i, b = a ? 0 : i;
            snprintf(err, errlen,
                     "%s sampled the instrumented program and %s the plain build: one Self %% comes from one "
                     "kind of sample (give one of them)",
                     sd[a].path ? sd[a].path : "?", sd[b].path ? sd[b].path : "?");
            return INSTR_EARG;
        }
    if (!n || !sampled_instrumented(&sd[0]))
        return 0; /* the plain build: another run by design */
    for (size_t i = 0; i < n; i++) {
        size_t j = 0;
        while (j < s->ndumps && s->dumps[j].hdr.pid != sd[i].hdr.pid)
            j++;
        if (j == s->ndumps) {
            snprintf(err, errlen,
                     "%s sampled pid %llu, a run of the instrumented program that is not among the dumps "
                     "reported: its samples are Self %% of that run only (report its dump with them, or sample "
                     "the plain build)",
                     sd[i].path ? sd[i].path : "?", (unsigned long long)sd[i].hdr.pid);
            return INSTR_EARG;
        }
    }
    return 0;
}

int instr_self_from_sampled(struct instr_session *s, const struct instr_dump *sd, size_t n, char *err, size_t errlen)
{
    int bad = check_sources(s, sd, n, err, errlen);
    if (bad < 0)
        return bad;
    struct instr_sprofile p;
    int rc = instr_sprofile_build(&p, sd, n, 0, err, errlen);
    if (rc < 0)
        return rc;
    struct index fx = {0}, px = {0};
    double *credit = calloc(s->nfunctions + 1, sizeof *credit);
    size_t len = 1;
    for (size_t i = 0; i < n; i++)
        len += strlen(sd[i].path ? sd[i].path : "?") + 2;
    char *inputs = malloc(len);
    if (!credit || !inputs || index_build(&fx, s, 0) < 0 || index_build(&px, s, 1) < 0) {
        rc = INSTR_ENOMEM;
        goto out;
    }
    /* The program sampled was instrumented if it mapped instr's runtime
     * (check_sources: all of them or none). */
    int instrumented = n && sampled_instrumented(&sd[0]);
    struct instr_self *x = &s->self;
    memset(x, 0, sizeof *x);
    x->source = instrumented ? "instrumented-samples" : "plain-samples";
    x->lost = p.lost;
    inputs[0] = 0;
    for (size_t i = 0; i < n; i++)
        strcat(strcat(inputs, i ? ", " : ""), sd[i].path ? sd[i].path : "?");
    x->inputs = inputs;
    inputs = NULL;
    const struct instr_srow *fr = p.rows[INSTR_SVIEW_FUNCTIONS];
    char buf[4096];
    size_t it = 0;
    for (const struct instr_sstack *st; (st = instr_sstack_next(&p, &it));) {
        if (!st->len)
            continue;
        const uint32_t *rows = p.pool + st->off;
        const struct instr_srow *leaf = &fr[rows[st->len - 1]];
        if (in_kernel(leaf->module)) {
            x->kernel += st->samples;
            continue;
        }
        /* Under a hook anywhere on the stack (the leaf may be libc or the
         * vDSO called by the runtime): the hooks' time, not the program's. */
        size_t r = 0;
        while (r < st->len && !in_runtime(fr[rows[r]].name, fr[rows[r]].module))
            r++;
        if (r < st->len) {
            x->runtime += st->samples;
            continue;
        }
        x->samples += st->samples;
        /* The leaf's own row (a function, or a pseudo-frame of that name);
         * else the innermost instrumented caller of the uninstrumented
         * code, whose callee (the frame below it) may have a pseudo-frame. */
        size_t first, m, leafk = st->len - 1;
        const struct index *hit = &fx;
        instr_name_origin(fr[rows[leafk]].name, buf, sizeof buf);
        if (!(m = index_find(&fx, buf, &first)) && (m = index_find(&px, buf, &first)))
            hit = &px;
        for (size_t k = leafk; !m && k-- > 0;) {
            instr_name_origin(fr[rows[k]].name, buf, sizeof buf);
            if (!index_find(&fx, buf, &first))
                continue;
            instr_name_origin(fr[rows[k + 1]].name, buf, sizeof buf);
            m = find_callee(&px, buf, &first);
            hit = &px;
            break;
        }
        if (m) {
            credit_rows(s, hit, first, m, (double)st->samples, credit);
            x->matched += st->samples;
        }
    }
    for (size_t i = 0; i < fx.n; i++)
        x->ambiguous += i + 1 < fx.n && !strcmp(fx.v[i].name, fx.v[i + 1].name) &&
                        (i == 0 || strcmp(fx.v[i - 1].name, fx.v[i].name));
    finish(s, credit);
out:
    free(inputs);
    free(credit);
    index_free(&fx);
    index_free(&px);
    instr_sprofile_free(&p);
    if (rc == INSTR_ENOMEM)
        snprintf(err, errlen, "%s", instr_tool_strerror(rc));
    return rc;
}

int instr_self_from_in_run(struct instr_session *s, char *err, size_t errlen)
{
    size_t with = 0;
    for (size_t i = 0; i < s->ndumps; i++)
        with += instr_hybrid_has_samples(&s->dumps[i]);
    if (!with)
        return 0;
    double *credit = calloc(s->nfunctions + 1, sizeof *credit);
    if (!credit) {
        snprintf(err, errlen, "%s", instr_tool_strerror(INSTR_ENOMEM));
        return INSTR_ENOMEM;
    }
    struct instr_self x = {.source = "in-run-samples"};
    for (size_t i = 0; i < s->ndumps; i++) {
        if (!instr_hybrid_has_samples(&s->dumps[i]))
            continue;
        struct instr_hybrid h;
        int rc = instr_hybrid_build(&h, &s->dumps[i], err, errlen);
        if (rc < 0) {
            free(credit);
            return rc;
        }
        /* The hybrid walks the same dump into the same function indices
         * as the session's profile: its rows are the session's. */
        if (h.p.nfuncs != s->profiles[i].nfuncs) {
            instr_hybrid_free(&h);
            free(credit);
            snprintf(err, errlen, "%s: the samples' profile does not match the report's", s->dumps[i].path);
            return INSTR_EARG;
        }
        x.lost += h.lost;
        /* between intervals: the runtime's own work (chunk switches) */
        x.runtime += h.gap_samples;
        x.other += h.samples - h.placed - h.gap_samples;
        for (size_t f = 0; f < h.nfn && f < h.p.nfuncs; f++) {
            uint64_t own = h.fn[f].samples - h.fn[f].runtime;
            x.runtime += h.fn[f].runtime;
            credit[s->row_of_key[s->func_rows[i][f]]] += (double)own;
            x.samples += own;
            x.matched += own;
        }
        instr_hybrid_free(&h);
    }
    s->self = x;
    finish(s, credit);
    free(credit);
    return 0;
}
