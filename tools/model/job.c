/* job.c - a session's dumps as the ranks of one job (job.h).
 *
 * A rank's dump is the earliest started of the dumps with its rank: the
 * others are its children (a fork, an exec), which inherit the launcher's
 * environment.  MPI time is the Elapsed Inclusive of a rank's outermost
 * frames whose names begin with one of the MPI prefixes (INSTR_MPI_PREFIXES,
 * or --mpi-prefixes': call-site frames of MPI's calls);
 * useful time is the time outside them on the CPU (CPU values, when every
 * dump has them: the cpuclock backend), else the Elapsed time outside
 * them.  Not Application time: an interval the OS touched is not
 * Application time at all, and a computing loop's intervals are long
 * (a unit of work of 5 ms is always interrupted by a tick): its
 * Application time is near 0.  The POP metrics:
 * load balance = mean useful / max useful, communication efficiency = max
 * useful / the job's runtime (on the session's one clock, axis.h),
 * parallel efficiency = their product. */
#include "job.h"

#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dump-reader.h"
#include "report.h"

/* ",MPI_,PMPI_": the table's prefixes, each after a comma. */
static const char defaults[] = ""
#define X(p) "," p
    INSTR_MPI_PREFIXES(X)
#undef X
    ;
const char *const instr_mpi_prefixes_default = defaults + 1;

/* Whether the n bytes at p are one of list's comma-separated items. */
static int listed(const char *list, const char *p, size_t n)
{
    for (const char *q = list; *q;) {
        size_t m = strcspn(q, ",");
        if (m == n && !strncmp(q, p, n))
            return 1;
        q += m + (q[m] == ',');
    }
    return 0;
}

int instr_mpi_prefixes_parse(const char *arg, char **prefixes, char *err, size_t errlen)
{
    int add = arg[0] == '+';
    arg += add;
    size_t len = strlen(instr_mpi_prefixes_default) + strlen(arg) + 2;
    char *out = malloc(len);
    if (!out)
        return INSTR_ENOMEM;
    snprintf(out, len, "%s", add ? instr_mpi_prefixes_default : "");
    if (!add && !strcmp(arg, "none")) {
        *prefixes = out;
        return 0;
    }
    for (const char *p = arg;;) {
        size_t n = strcspn(p, ",");
        if (!n || strcspn(p, " \t\n") < n) {
            snprintf(err, errlen, "'%.*s' is not a prefix (one name's beginning, as MPI_ or shmem_; "
                                  "+PREFIX,... adds to %s; none: no MPI frames)",
                     (int)n, p, instr_mpi_prefixes_default);
            free(out);
            return -1;
        }
        if (!listed(out, p, n)) {
            size_t used = strlen(out);
            snprintf(out + used, len - used, "%s%.*s", used ? "," : "", (int)n, p);
        }
        if (!p[n])
            break;
        p += n + 1;
    }
    *prefixes = out;
    return 0;
}

int instr_is_mpi_name(const char *prefixes, const char *name)
{
    if (!prefixes)
        prefixes = instr_mpi_prefixes_default;
    for (const char *q = prefixes; name && *q;) {
        size_t m = strcspn(q, ",");
        if (m && !strncmp(name, q, m))
            return 1;
        q += m + (q[m] == ',');
    }
    return 0;
}

int instr_dump_is_rank(const struct instr_dump *d)
{
    return d->hdr.job_size > 0 && d->hdr.job_rank >= 0 && (uint32_t)d->hdr.job_rank < d->hdr.job_size;
}

const char *instr_process_label(const struct instr_dump *d, char *buf, size_t len)
{
    if (!instr_dump_is_rank(d))
        return instr_basename(d->hdr.exe_path);
    if (d->hdr.host[0])
        snprintf(buf, len, "rank %d (%.*s)", d->hdr.job_rank, (int)sizeof d->hdr.host, d->hdr.host);
    else
        snprintf(buf, len, "rank %d", d->hdr.job_rank);
    return buf;
}

/* A rank's MPI and useful time from its profile's call paths. */
static int rank_times(const struct instr_session *s, const struct instr_job *j, struct instr_rank *r)
{
    const struct instr_profile *p = &s->profiles[r->dump];
    const struct instr_dump *d = &s->dumps[r->dump];
    char *is_mpi = calloc(p->nfuncs + 1, 1), *in_mpi = calloc(p->nnodes + 1, 1);
    if (!is_mpi || !in_mpi) {
        free(is_mpi);
        free(in_mpi);
        return INSTR_ENOMEM;
    }
    /* MPI's names are C's: the symbol itself (a call site's callee, or an
     * instrumented PMPI layer's function), no demangling needed. */
    for (size_t f = 0; f < p->nfuncs; f++)
        is_mpi[f] = (char)instr_is_mpi_name(j->mpi_prefixes, p->funcs[f].pseudo ? p->funcs[f].pseudo
                                            : p->funcs[f].fn     ? p->funcs[f].fn->name
                                                                 : NULL);
    uint64_t mpi_ei = 0, mpi_ci = 0;
    for (size_t i = 0; i < p->nnodes; i++) { /* a child after its parent */
        const struct instr_pnode *n = &p->nodes[i];
        int mine = n->func != UINT32_MAX && n->func < p->nfuncs && is_mpi[n->func];
        int above = n->parent != i && n->parent < i && in_mpi[n->parent];
        in_mpi[i] = (char)(mine || above);
        if (mine && !above) {
            mpi_ei += n->ei;
            mpi_ci += n->ci;
        }
    }
    free(is_mpi);
    free(in_mpi);
    r->elapsed_t = p->total.ei;
    r->mpi_t = mpi_ei;
    r->elapsed_ns = instr_ticks_ns(d, p->total.ei);
    r->mpi_ns = instr_ticks_ns(d, mpi_ei);
    uint64_t useful = s->cpu_known ? p->total.ci - (mpi_ci < p->total.ci ? mpi_ci : p->total.ci)
                                   : p->total.ei - (mpi_ei < p->total.ei ? mpi_ei : p->total.ei);
    r->useful_t = useful;
    r->useful_ns = instr_ticks_ns(d, useful);
    r->start_ns = s->axis.d[r->dump].start_ns;
    r->end_ns = instr_session_end_ns(s, r->dump);
    return 0;
}

/* The error code of the last MPI_Abort libinstr-mpi recorded in dump d
 * (its EXT MPI ABORT event's CODE field); INT64_MIN: none. */
static int64_t abort_code(const struct instr_dump *d)
{
    int64_t code = INT64_MIN;
    for (size_t t = 0; t < d->nthreads; t++) {
        struct instr_event_iter it;
        struct instr_event ev;
        int in_abort = 0; /* the fields after an ABORT event are its own */
        instr_event_iter_init(&it, &d->threads[t]);
        while (instr_event_iter_next(&it, &ev) > 0) {
            if (ev.kind != INSTR_EV_EXT)
                continue;
            if (ev.ext == INSTR_EXT_MPI)
                in_abort = ev.arg == INSTR_MPI_ABORT;
            else if (ev.ext == INSTR_EXT_MPI_FIELD && in_abort && ev.arg == INSTR_MPI_FIELD_CODE)
                code = ev.value;
        }
    }
    return code;
}

/* How rank r's process ended, and where its record ends. */
static int rank_end(const struct instr_session *s, struct instr_rank *r)
{
    const struct instr_dump *d = &s->dumps[r->dump];
    const struct instr_profile *p = &s->profiles[r->dump];
    r->abort_code = INT64_MIN;
    if (d->hdr.flags & INSTR_DUMP_COMPLETE)
        r->end = INSTR_RANK_EXITED, r->exit_status = d->hdr.exit_status;
    else if (d->hdr.flags & INSTR_DUMP_SIGNALED)
        r->end = INSTR_RANK_SIGNALED, r->signal = d->hdr.end_signal;
    else if ((r->call = instr_session_ending_call(s, r->dump)))
        r->end = INSTR_RANK_IN_CALL;
    else
        r->end = INSTR_RANK_NO_END;
    /* The thread that went on longest with a frame open (the first of
     * them on a tie: a signal closes them all at once). */
    const struct instr_pthread *last = NULL;
    for (size_t t = 0; t < p->nthreads; t++)
        if (p->threads[t].open_top < p->nfuncs && (!last || p->threads[t].end_tick > last->end_tick))
            last = &p->threads[t];
    if (!last)
        return 0;
    if (!(r->in = instr_profile_func_name(p, last->open_top)) ||
        (last->open_caller < p->nfuncs && !(r->from = instr_profile_func_name(p, last->open_caller))))
        return INSTR_ENOMEM;
    /* In MPI_Abort (not returned from, or its MPI's exit() there): the
     * code, when libinstr-mpi recorded it.  One more pass, of this dump only. */
    if (!strcmp(r->in, "MPI_Abort") || !strcmp(r->in, "PMPI_Abort"))
        r->abort_code = abort_code(d);
    return 0;
}

const char *instr_rank_end_name(enum instr_rank_end e)
{
    static const char *const names[] = {"exit", "signal", "call", "none"};
    return (unsigned)e < sizeof names / sizeof *names ? names[e] : "?";
}

void instr_rank_end_text(const struct instr_rank *r, char *buf, size_t len)
{
    char how[64], where[300] = "";
    if (r->end == INSTR_RANK_EXITED)
        snprintf(how, sizeof how, "exit %d", r->exit_status);
    else if (r->end == INSTR_RANK_SIGNALED)
        snprintf(how, sizeof how, "%s", instr_signal_name(r->signal));
    else if (r->end == INSTR_RANK_IN_CALL && r->abort_code != INT64_MIN)
        snprintf(how, sizeof how, "%s, code %" PRId64, r->call, r->abort_code);
    else if (r->end == INSTR_RANK_IN_CALL)
        snprintf(how, sizeof how, "%s", r->call);
    else
        snprintf(how, sizeof how, "no end recorded");
    /* The call itself is the open frame: only its caller is news. */
    if (r->end == INSTR_RANK_IN_CALL && r->from)
        snprintf(where, sizeof where, " (from %s)", r->from);
    else if (r->in && r->end != INSTR_RANK_IN_CALL)
        snprintf(where, sizeof where, "%s %s%s%s%s", r->end == INSTR_RANK_NO_END ? ", last in" : " in", r->in,
                 r->from ? " (from " : "", r->from ? r->from : "", r->from ? ")" : "");
    snprintf(buf, len, "%s%s", how, where);
}

/* A rank's ending in words, for grouping the ranks that ended alike. */
struct end_words {
    char text[200];
    int order; /* of its kind: the least ordinary first */
    int32_t rank;
};

static int by_text_rank(const void *a, const void *b)
{
    const struct end_words *x = a, *y = b;
    int c = strcmp(x->text, y->text);
    return c ? c : (x->rank > y->rank) - (x->rank < y->rank);
}

/* A group of ranks that ended alike: words[from..to). */
struct end_group {
    size_t from, to;
    int order;
    int32_t first; /* its lowest rank */
};

/* Ranks whose record ends in a call that does not return (the one that
 * called MPI_Abort), then those without an end record, then those a
 * signal ended, then those that exited.  Not by time: a rank without an
 * end record was last seen at its last event, maybe long before it was
 * killed (waiting in a barrier for the rank that aborted). */
static int by_order(const void *a, const void *b)
{
    const struct end_group *x = a, *y = b;
    return x->order != y->order ? x->order - y->order : (x->first > y->first) - (x->first < y->first);
}

/* Appends to buf at *n (up to len) what fmt says. */
static void add_text(char *buf, size_t len, size_t *n, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static void add_text(char *buf, size_t len, size_t *n, const char *fmt, ...)
{
    if (*n >= len)
        return;
    va_list ap;
    va_start(ap, fmt);
    int w = vsnprintf(buf + *n, len - *n, fmt, ap);
    va_end(ap);
    *n += w > 0 ? (size_t)w : 0;
}

int instr_job_ends_text(const struct instr_job *j, char *buf, size_t len)
{
    buf[0] = 0;
    struct end_words *w = calloc(j->nranks + 1, sizeof *w);
    struct end_group *g = calloc(j->nranks + 1, sizeof *g);
    if (!w || !g) {
        free(w), free(g);
        return INSTR_ENOMEM;
    }
    int odd = 0; /* some rank did not exit 0 */
    for (size_t i = 0; i < j->nranks; i++) {
        const struct instr_rank *r = &j->ranks[i];
        instr_rank_end_text(r, w[i].text, sizeof w[i].text);
        static const int order[] = {[INSTR_RANK_IN_CALL] = 0, [INSTR_RANK_NO_END] = 1,
                                    [INSTR_RANK_SIGNALED] = 2, [INSTR_RANK_EXITED] = 3};
        w[i].order = order[r->end];
        w[i].rank = r->rank;
        odd |= r->end != INSTR_RANK_EXITED || r->exit_status;
    }
    size_t ng = 0, n = 0;
    if (odd) {
        qsort(w, j->nranks, sizeof *w, by_text_rank);
        for (size_t i = 0; i < j->nranks; i++) {
            if (!i || strcmp(w[i].text, w[i - 1].text))
                g[ng++] = (struct end_group){i, i, w[i].order, w[i].rank};
            g[ng - 1].to = i + 1;
        }
        qsort(g, ng, sizeof *g, by_order);
    }
    for (size_t k = 0; k < ng && n < len; k++) {
        add_text(buf, len, &n, "%srank%s ", k ? "; " : "", g[k].to - g[k].from > 1 ? "s" : "");
        /* The group's ranks (sorted) as ranges: "0-2, 5". */
        for (size_t i = g[k].from; i < g[k].to;) {
            size_t e = i;
            while (e + 1 < g[k].to && w[e + 1].rank == w[e].rank + 1)
                e++;
            if (e > i)
                add_text(buf, len, &n, "%s%d-%d", i > g[k].from ? ", " : "", w[i].rank, w[e].rank);
            else
                add_text(buf, len, &n, "%s%d", i > g[k].from ? ", " : "", w[i].rank);
            i = e + 1;
        }
        add_text(buf, len, &n, ": %s", w[g[k].from].text);
    }
    if (n >= len && len > 4)
        strcpy(buf + len - 4, "...");
    free(w), free(g);
    return 0;
}

static int by_rank(const void *a, const void *b)
{
    const struct instr_rank *x = a, *y = b;
    return (x->rank > y->rank) - (x->rank < y->rank);
}

/* Per function row: Elapsed Inclusive across the ranks (min, mean, max and
 * the rank of the max; a rank that never ran it counts 0). */
static int spread(struct instr_session *s, const struct instr_job *j)
{
    size_t n = s->nfunctions + 1;
    uint64_t *t = calloc(n, sizeof *t);
    double *ns = calloc(n, sizeof *ns);
    uint32_t *seen = calloc(n, sizeof *seen), *count = calloc(n, sizeof *count); /* last rank, ranks with it */
    int rc = t && ns && seen && count ? 0 : INSTR_ENOMEM;
    for (size_t k = 0; !rc && k < s->nfunctions; k++) {
        memset(&s->functions[k].spread, 0, sizeof s->functions[k].spread);
        s->functions[k].spread.max_rank = -1;
    }
    for (size_t i = 0; !rc && i < j->nranks; i++) {
        size_t di = j->ranks[i].dump;
        const struct instr_profile *p = &s->profiles[di];
        const uint32_t *rows = s->func_rows[di];
        for (size_t f = 0; f < p->nfuncs; f++)
            if (rows[f] < s->nfunctions) {
                t[rows[f]] += p->funcs[f].v.ei;
                ns[rows[f]] += instr_ticks_ns(&s->dumps[di], p->funcs[f].v.ei);
            }
        for (size_t f = 0; f < p->nfuncs; f++) {
            uint32_t key = rows[f];
            if (key >= s->nfunctions || seen[key] == i + 1)
                continue;
            seen[key] = (uint32_t)i + 1;
            struct instr_row *r = &s->functions[key];
            r->spread.mean_t += t[key];
            r->spread.mean_ns += ns[key];
            /* ns order them (hosts' tick rates differ); ticks without a rate */
            int by_ns = !isnan(ns[key]) && !isnan(r->spread.max_ns);
            if (!count[key] || (by_ns ? ns[key] < r->spread.min_ns : t[key] < r->spread.min_t))
                r->spread.min_t = t[key], r->spread.min_ns = ns[key];
            if (!count[key] || (by_ns ? ns[key] > r->spread.max_ns : t[key] > r->spread.max_t))
                r->spread.max_t = t[key], r->spread.max_ns = ns[key], r->spread.max_rank = j->ranks[i].rank;
            count[key]++;
            t[key] = 0, ns[key] = 0;
        }
    }
    for (size_t k = 0; !rc && k < s->nfunctions; k++) {
        struct instr_row *r = &s->functions[k];
        if (count[k] < j->nranks)
            r->spread.min_t = 0, r->spread.min_ns = 0;
        r->spread.mean_t /= j->nranks;
        r->spread.mean_ns /= (double)j->nranks;
    }
    free(t), free(ns), free(seen), free(count);
    return rc;
}

int instr_job_build(struct instr_session *s, struct instr_job *j)
{
    memset(j, 0, sizeof *j);
    j->load_balance = j->communication_efficiency = j->parallel_efficiency = j->runtime_ns = NAN;
    /* The job of the most rank dumps (the first of them on a tie). */
    size_t first = s->ndumps, best = 0;
    for (size_t i = 0; i < s->ndumps; i++) {
        const struct instr_dump_header *h = &s->dumps[i].hdr;
        if (!instr_dump_is_rank(&s->dumps[i]) ||
            (first < s->ndumps && !strcmp(h->job_id, s->dumps[first].hdr.job_id) &&
             h->job_size == s->dumps[first].hdr.job_size))
            continue;
        size_t n = 0;
        for (size_t k = i; k < s->ndumps; k++)
            n += instr_dump_is_rank(&s->dumps[k]) && !strcmp(s->dumps[k].hdr.job_id, h->job_id) &&
                 s->dumps[k].hdr.job_size == h->job_size;
        if (n > best)
            best = n, first = i;
    }
    if (first == s->ndumps)
        return 0;
    const struct instr_dump_header *h0 = &s->dumps[first].hdr;
    j->mpi_prefixes = s->exclude && s->exclude->mpi_prefixes ? s->exclude->mpi_prefixes : instr_mpi_prefixes_default;
    j->id = h0->job_id;
    j->launcher = h0->job_launcher;
    j->size = h0->job_size;
    if (!(j->ranks = calloc(s->ndumps, sizeof *j->ranks)))
        return INSTR_ENOMEM;
    /* One dump per rank: the earliest started. */
    for (size_t i = 0; i < s->ndumps; i++) {
        const struct instr_dump_header *h = &s->dumps[i].hdr;
        if (!instr_dump_is_rank(&s->dumps[i]))
            continue;
        if (strcmp(h->job_id, h0->job_id) || h->job_size != h0->job_size) {
            j->other_jobs++;
            continue;
        }
        size_t k = 0;
        while (k < j->nranks && j->ranks[k].rank != h->job_rank)
            k++;
        if (k < j->nranks) {
            j->extra++;
            if (h->start_real_ns >= s->dumps[j->ranks[k].dump].hdr.start_real_ns)
                continue;
        } else
            j->nranks++;
        j->ranks[k] = (struct instr_rank){.rank = h->job_rank, .dump = i, .pid = h->pid, .host = h->host};
    }
    qsort(j->ranks, j->nranks, sizeof *j->ranks, by_rank);
    if (j->nranks < j->size) {
        /* The gaps between the ranks present (sorted), and after the last. */
        if (!(j->missing = calloc(j->nranks + 1, sizeof *j->missing)))
            return INSTR_ENOMEM;
        int64_t next = 0; /* the lowest rank not yet seen */
        for (size_t k = 0; k <= j->nranks; k++) {
            int64_t upto = k < j->nranks ? (int64_t)j->ranks[k].rank : (int64_t)j->size;
            if (upto > next) {
                j->missing[j->nmissing_ranges++] = (struct instr_rank_range){(int32_t)next, (int32_t)(upto - 1)};
                j->nmissing += (uint64_t)(upto - next);
            }
            if (k < j->nranks && (int64_t)j->ranks[k].rank + 1 > next)
                next = (int64_t)j->ranks[k].rank + 1;
        }
    }
    double sum = 0, max = 0, start = INFINITY, end = -INFINITY;
    for (size_t k = 0; k < j->nranks; k++) {
        struct instr_rank *r = &j->ranks[k];
        int rc = rank_times(s, j, r);
        if (rc >= 0)
            rc = rank_end(s, r);
        if (rc < 0)
            return rc;
        sum += r->useful_ns;
        max = r->useful_ns > max ? r->useful_ns : max;
        start = r->start_ns < start ? r->start_ns : start;
        end = r->end_ns > end ? r->end_ns : end;
        size_t h = 0;
        while (h < k && strcmp(j->ranks[h].host, r->host))
            h++;
        j->nhosts += h == k;
    }
    j->runtime_ns = end - start;
    if (max > 0 && s->have_rate) {
        j->load_balance = sum / (double)j->nranks / max;
        if (j->runtime_ns > 0)
            j->communication_efficiency = max / j->runtime_ns;
        j->parallel_efficiency = j->load_balance * j->communication_efficiency;
    }
    return s->functions && s->func_rows ? spread(s, j) : 0;
}

void instr_job_missing_text(const struct instr_job *j, char *buf, size_t len)
{
    size_t n = 0;
    buf[0] = 0;
    for (size_t i = 0; i < j->nmissing_ranges && n < len; i++) {
        const struct instr_rank_range *m = &j->missing[i];
        int w = m->to > m->from ? snprintf(buf + n, len - n, "%s%d-%d", i ? ", " : "", m->from, m->to)
                                : snprintf(buf + n, len - n, "%s%d", i ? ", " : "", m->from);
        n += w > 0 ? (size_t)w : 0;
    }
    if (n >= len && len > 4)
        strcpy(buf + len - 4, "...");
}

void instr_job_free(struct instr_job *j)
{
    for (size_t i = 0; j->ranks && i < j->nranks; i++)
        free(j->ranks[i].in), free(j->ranks[i].from);
    free(j->ranks);
    free(j->missing);
    memset(j, 0, sizeof *j);
}
