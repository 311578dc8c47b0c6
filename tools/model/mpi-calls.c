/* mpi-calls.c - a job's MPI calls from the wrappers' events (mpi-calls.h).
 *
 * Each rank's threads are walked once: the frames' stack is kept only to
 * know the top frame when an EXT MPI event comes (the call-site frame of
 * the MPI call, when its caller was instrumented), and the MPI_FIELD
 * events after it, up to the thread's next frame event, are its fields.
 * A call with a value out of range (a peer outside the job, a negative
 * size, a field twice or unknown) is counted invalid and left out. */
#include "mpi-calls.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dump-reader.h"
#include "job.h"
#include "report.h"

const char *instr_mpi_call_name(unsigned call)
{
    switch (call) {
#define INSTR_X_NAME(name, value, cls, text)                                                                           \
    case value:                                                                                                        \
        return text;
        INSTR_MPI_CALLS(INSTR_X_NAME)
#undef INSTR_X_NAME
    }
    return "?";
}

int instr_mpi_call_class(unsigned call)
{
    switch (call) {
#define INSTR_X_CLASS(name, value, cls, text)                                                                          \
    case value:                                                                                                        \
        return INSTR_MPI_CLASS_##cls;
        INSTR_MPI_CALLS(INSTR_X_CLASS)
#undef INSTR_X_CLASS
    }
    return -1;
}

int instr_mpi_coll_shape(unsigned call)
{
    switch (call) {
    case INSTR_MPI_BARRIER:
    case INSTR_MPI_ALLREDUCE:
    case INSTR_MPI_ALLGATHER:
    case INSTR_MPI_ALLGATHERV:
    case INSTR_MPI_ALLTOALL:
    case INSTR_MPI_ALLTOALLV:
    case INSTR_MPI_REDUCE_SCATTER:
    case INSTR_MPI_REDUCE_SCATTER_BLOCK:
        return INSTR_MPI_N_TO_N;
    case INSTR_MPI_BCAST:
    case INSTR_MPI_SCATTER:
    case INSTR_MPI_SCATTERV:
        return INSTR_MPI_ONE_TO_N;
    case INSTR_MPI_REDUCE:
    case INSTR_MPI_GATHER:
    case INSTR_MPI_GATHERV:
        return INSTR_MPI_N_TO_ONE;
    case INSTR_MPI_SCAN:
    case INSTR_MPI_EXSCAN:
        return INSTR_MPI_PREFIX;
    }
    return 0;
}

/* The flow that ends at recs[i], from recs[i].partner: its kind and name,
 * or 0 when none ends there (no partner matched, the last rank in itself). */
static int flow_at(const struct instr_mpi_calls *m, size_t i, char *name, size_t len)
{
    const struct instr_mpi_rec *to = &m->recs[i];
    if (to->partner >= m->nrecs || to->partner == i)
        return 0;
    const struct instr_mpi_rec *from = &m->recs[to->partner];
    if (to->call != from->call || instr_mpi_call_class(to->call) != INSTR_MPI_CLASS_COLL) {
        snprintf(name, len, "message %" PRId64 " B", to->f[INSTR_MPI_FIELD_RECEIVED]);
        return INSTR_MPI_FLOW_MESSAGE;
    }
    int shape = instr_mpi_coll_shape(to->call);
    const char *who = shape == INSTR_MPI_ONE_TO_N    ? "root in"
                      : shape == INSTR_MPI_N_TO_ONE ? "first in"
                      : shape == INSTR_MPI_PREFIX   ? "last lower rank in"
                                                    : "last in";
    snprintf(name, len, "%s #%" PRId64 ": %s", instr_mpi_call_name(to->call), to->f[INSTR_MPI_FIELD_SEQ], who);
    return INSTR_MPI_FLOW_COLLECTIVE;
}

/* One call being read: its event and the fields seen so far. */
struct pending {
    int open;
    unsigned call;
    uint64_t ticks;
    uint64_t end_tick; /* the MPI event's */
    int bad;
    const char *caller;
    uint64_t line;
    int64_t f[INSTR_MPI_FIELD_MAX + 1];
    uint32_t seen; /* bit per field */
};

struct walk {
    struct instr_mpi_calls *m;
    uint32_t rank_index;
    const struct instr_axis *axis; /* the session's: the calls' times on it */
    const struct instr_dump *dumps;
    size_t dump;
    struct instr_mpi_rank *rank;
    const struct instr_dump *d;
    uint32_t job_size;
    uint64_t tid; /* the thread walked */
};

static struct instr_mpi_site *site_of(struct instr_mpi_calls *m, unsigned call, const char *caller, uint64_t line)
{
    for (size_t i = 0; i < m->nsites; i++)
        if (m->sites[i].call == call && m->sites[i].line == line && !strcmp(m->sites[i].caller, caller))
            return &m->sites[i];
    /* Capacity: 8, then doubled each time nsites reaches a power of two. */
    if (m->nsites == 0 || (m->nsites >= 8 && !(m->nsites & (m->nsites - 1)))) {
        size_t cap = m->nsites ? 2 * m->nsites : 8;
        struct instr_mpi_site *n = realloc(m->sites, cap * sizeof *n);
        if (!n)
            return NULL;
        m->sites = n;
    }
    struct instr_mpi_site *s = &m->sites[m->nsites++];
    memset(s, 0, sizeof *s);
    s->call = call;
    s->caller = caller;
    s->line = line;
    s->bytes_min = UINT64_MAX;
    return s;
}

static int has(const struct pending *p, unsigned f)
{
    return (p->seen >> f) & 1;
}

static int keep(struct walk *w, const struct pending *p, uint32_t site, double ns, double began_ns)
{
    struct instr_mpi_calls *m = w->m;
    if (m->nrecs == m->caprecs) {
        size_t cap = m->caprecs ? 2 * m->caprecs : 256;
        struct instr_mpi_rec *n = realloc(m->recs, cap * sizeof *n);
        if (!n)
            return INSTR_ENOMEM;
        m->recs = n;
        m->caprecs = cap;
    }
    struct instr_mpi_rec *r = &m->recs[m->nrecs++];
    r->rank = w->rank_index;
    r->site = site;
    r->call = p->call;
    r->end = instr_axis_tick_ns(w->axis, w->dumps, w->dump, p->end_tick);
    r->start = r->end - ns * w->axis->d[w->dump].scale;
    r->entered = r->start - began_ns * w->axis->d[w->dump].scale;
    memcpy(r->f, p->f, sizeof r->f);
    r->seen = p->seen;
    r->tid = w->tid;
    r->partner = SIZE_MAX;
    return 0;
}

/* A world rank field: -1 (any), -2 (MPI_PROC_NULL), -3 (not in the world) or a rank of the job. */
static int rank_ok(const struct walk *w, int64_t v)
{
    return v >= -3 && (w->job_size == 0 || v < (int64_t)w->job_size);
}

static int flush(struct walk *w, struct pending *p)
{
    if (!p->open)
        return 0;
    p->open = 0;
    int cls = instr_mpi_call_class(p->call);
    static const unsigned sizes[] = {INSTR_MPI_FIELD_SENT, INSTR_MPI_FIELD_RECEIVED, INSTR_MPI_FIELD_SIZE,
                                     INSTR_MPI_FIELD_SEQ,  INSTR_MPI_FIELD_COMM,     INSTR_MPI_FIELD_REQUEST,
                                     INSTR_MPI_FIELD_BEGAN};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++)
        if (has(p, sizes[i]) && (p->f[sizes[i]] < 0 || p->f[sizes[i]] > (INT64_C(1) << 56)))
            p->bad = 1;
    if (has(p, INSTR_MPI_FIELD_COMM_ID) && p->f[INSTR_MPI_FIELD_COMM_ID] < (INT64_C(1) << 32))
        p->bad = 1; /* (world rank + 1) << 32 | count: never below 2^32 */
    static const unsigned ranks[] = {INSTR_MPI_FIELD_PEER, INSTR_MPI_FIELD_SOURCE, INSTR_MPI_FIELD_ROOT};
    for (size_t i = 0; i < sizeof ranks / sizeof ranks[0]; i++)
        if (has(p, ranks[i]) && !rank_ok(w, p->f[ranks[i]]))
            p->bad = 1;
    double ns = instr_ticks_ns(w->d, p->ticks);
    static const unsigned clock[] = {INSTR_MPI_FIELD_CLOCK_LOCAL, INSTR_MPI_FIELD_CLOCK_ROOT, INSTR_MPI_FIELD_CLOCK_RTT};
    for (size_t i = 0; i < sizeof clock / sizeof clock[0]; i++)
        if (has(p, clock[i]) && (p->call != INSTR_MPI_CLOCK || p->f[clock[i]] < 0))
            p->bad = 1;
    if (cls < 0 || p->bad || !(ns >= 0)) {
        w->m->invalid++;
        return 0;
    }
    if (p->call == INSTR_MPI_CLOCK) /* not a call: the rank's clock against rank 0's, which the
                                       CLOCK_SYNC records give the session's axis (axis.h) */
        return 0;
    struct instr_mpi_site *s = site_of(w->m, p->call, p->caller, p->line);
    if (!s)
        return INSTR_ENOMEM;
    s->calls++;
    s->time_ns += ns;
    if (ns > s->time_max_ns)
        s->time_max_ns = ns;
    w->m->calls++;
    w->m->time_ns += ns;
    w->rank->calls++;
    double began = has(p, INSTR_MPI_FIELD_BEGAN) ? instr_ticks_ns(w->d, (uint64_t)p->f[INSTR_MPI_FIELD_BEGAN]) : 0;
    if (keep(w, p, (uint32_t)(s - w->m->sites), ns, began) < 0)
        return INSTR_ENOMEM;
    if (has(p, INSTR_MPI_FIELD_SENT)) {
        uint64_t b = (uint64_t)p->f[INSTR_MPI_FIELD_SENT];
        s->bytes += b;
        s->bytes_calls++;
        s->bytes_min = b < s->bytes_min ? b : s->bytes_min;
        s->bytes_max = b > s->bytes_max ? b : s->bytes_max;
        if (cls == INSTR_MPI_CLASS_SEND || cls == INSTR_MPI_CLASS_SENDRECV || cls == INSTR_MPI_CLASS_START) {
            s->messages++;
            w->rank->sent_messages++;
            w->rank->sent_bytes += b;
        }
    }
    if (has(p, INSTR_MPI_FIELD_RECEIVED) &&
        (cls == INSTR_MPI_CLASS_RECV || cls == INSTR_MPI_CLASS_SENDRECV || cls == INSTR_MPI_CLASS_WAIT ||
         cls == INSTR_MPI_CLASS_TEST)) {
        w->rank->received_messages++;
        w->rank->received_bytes += (uint64_t)p->f[INSTR_MPI_FIELD_RECEIVED];
    }
    return 0;
}

/* The stack's top frame as a site: the caller's name and the call's line
 * (a call-site frame), or the function itself with line 0. */
struct frame {
    uint8_t site; /* 1: a call-site id, 0: a function id */
    uint64_t id;
};

/* f pushed on the stack, grown as needed: 0, or -1 out of memory. */
static int push_frame(struct frame **stack, size_t *depth, size_t *cap, struct frame f)
{
    if (*depth == *cap) {
        size_t nc = *cap ? 2 * *cap : 64;
        struct frame *n = realloc(*stack, nc * sizeof *n);
        if (!n)
            return -1;
        *stack = n;
        *cap = nc;
    }
    (*stack)[(*depth)++] = f;
    return 0;
}

static void top_site(const struct walk *w, const struct frame *stack, size_t depth, const char **caller,
                     uint64_t *line)
{
    *caller = "?";
    *line = 0;
    if (!depth)
        return;
    const struct frame *f = &stack[depth - 1];
    const struct instr_function *fn = NULL;
    if (f->site) {
        const struct instr_callsite *cs = instr_dump_callsite(w->d, f->id);
        if (cs) {
            fn = instr_dump_function(w->d, cs->caller);
            *line = cs->line;
        }
    } else {
        fn = instr_dump_function(w->d, f->id);
    }
    if (fn)
        *caller = fn->demangled && fn->demangled[0] ? fn->demangled : fn->name;
}

static int walk_thread(struct walk *w, const struct instr_thread_info *th)
{
    w->tid = th->tid;
    struct instr_event_iter it;
    struct instr_event ev;
    struct pending p = {0};
    struct frame *stack = NULL;
    size_t depth = 0, cap = 0;
    int rc = 0;
    instr_event_iter_init(&it, th);
    while (rc == 0 && instr_event_iter_next(&it, &ev) > 0) {
        int push = -1; /* 1 site, 0 function */
        switch (ev.kind) {
        case INSTR_EV_ENTER:
            push = 0;
            break;
        case INSTR_EV_CALL:
            push = 1;
            break;
        case INSTR_EV_EXIT:
        case INSTR_EV_RETURN:
            rc = flush(w, &p);
            depth -= depth > 0;
            continue;
        case INSTR_EV_EXT:
            break;
        default:
            continue;
        }
        if (push >= 0) {
            rc = flush(w, &p);
            if (push_frame(&stack, &depth, &cap, (struct frame){(uint8_t)push, ev.arg}) < 0) {
                rc = INSTR_ENOMEM;
                break;
            }
            continue;
        }
        switch (ev.ext) {
        case INSTR_EXT_UNWIND:
            rc = flush(w, &p);
            depth -= depth > 0;
            break;
        case INSTR_EXT_THREAD_END:
            rc = flush(w, &p);
            depth = 0;
            break;
        case INSTR_EXT_REENTER:
        case INSTR_EXT_REENTER_SITE:
            if (push_frame(&stack, &depth, &cap, (struct frame){ev.ext == INSTR_EXT_REENTER_SITE, ev.arg}) < 0)
                rc = INSTR_ENOMEM;
            break;
        case INSTR_EXT_MPI:
            if ((rc = flush(w, &p)) < 0)
                break;
            memset(&p, 0, sizeof p);
            p.open = 1;
            p.end_tick = ev.tick;
            p.call = ev.arg <= INSTR_MPI_CALL_MAX ? (unsigned)ev.arg : 0;
            p.bad = ev.value < 0 || !p.call;
            p.ticks = ev.value < 0 ? 0 : (uint64_t)ev.value;
            top_site(w, stack, depth, &p.caller, &p.line);
            break;
        case INSTR_EXT_MPI_FIELD:
            if (!p.open) {
                w->m->invalid++; /* a field of no call */
            } else if (!ev.arg || ev.arg > INSTR_MPI_FIELD_MAX || has(&p, (unsigned)ev.arg)) {
                p.bad = 1;
            } else {
                p.f[ev.arg] = ev.value;
                p.seen |= 1u << ev.arg;
            }
            break;
        }
    }
    if (rc == 0)
        rc = flush(w, &p);
    free(stack);
    return rc;
}

static int by_time(const void *a, const void *b)
{
    const struct instr_mpi_site *x = a, *y = b;
    if (x->time_ns != y->time_ns)
        return x->time_ns < y->time_ns ? 1 : -1;
    if (x->call != y->call)
        return x->call < y->call ? -1 : 1;
    int c = strcmp(x->caller, y->caller);
    return c ? c : (x->line > y->line) - (x->line < y->line);
}

static int by_pair(const void *a, const void *b)
{
    const struct instr_mpi_pair *x = a, *y = b;
    if (x->from != y->from)
        return x->from < y->from ? -1 : 1;
    return (x->to > y->to) - (x->to < y->to);
}

/* m->pairs from the sends kept (a message each, to a peer of the world). */
static int pairs(struct instr_mpi_calls *m)
{
    size_t n = 0;
    for (size_t i = 0; i < m->nrecs; i++) {
        const struct instr_mpi_rec *r = &m->recs[i];
        int cls = instr_mpi_call_class(r->call);
        n += (cls == INSTR_MPI_CLASS_SEND || cls == INSTR_MPI_CLASS_SENDRECV || cls == INSTR_MPI_CLASS_START) &&
             ((r->seen >> INSTR_MPI_FIELD_SENT) & 1) &&
             ((r->seen >> INSTR_MPI_FIELD_PEER) & 1) && r->f[INSTR_MPI_FIELD_PEER] >= 0;
    }
    if (!n)
        return 0;
    if (!(m->pairs = malloc(n * sizeof *m->pairs)))
        return INSTR_ENOMEM;
    for (size_t i = 0; i < m->nrecs; i++) {
        const struct instr_mpi_rec *r = &m->recs[i];
        int cls = instr_mpi_call_class(r->call);
        if ((cls == INSTR_MPI_CLASS_SEND || cls == INSTR_MPI_CLASS_SENDRECV || cls == INSTR_MPI_CLASS_START) &&
            ((r->seen >> INSTR_MPI_FIELD_SENT) & 1) &&
            ((r->seen >> INSTR_MPI_FIELD_PEER) & 1) && r->f[INSTR_MPI_FIELD_PEER] >= 0)
            m->pairs[m->npairs++] = (struct instr_mpi_pair){m->ranks[r->rank].rank,
                                                            (int32_t)r->f[INSTR_MPI_FIELD_PEER], 1,
                                                            (uint64_t)r->f[INSTR_MPI_FIELD_SENT]};
    }
    qsort(m->pairs, m->npairs, sizeof *m->pairs, by_pair);
    size_t k = 0; /* one per pair, summed */
    for (size_t i = 0; i < m->npairs; i++) {
        if (k && m->pairs[k - 1].from == m->pairs[i].from && m->pairs[k - 1].to == m->pairs[i].to) {
            m->pairs[k - 1].messages++;
            m->pairs[k - 1].bytes += m->pairs[i].bytes;
        } else {
            m->pairs[k++] = m->pairs[i];
        }
    }
    m->npairs = k;
    return 0;
}

/* The ranks' clocks as the session's axis measured them (axis.h). */
static void clocks(const struct instr_session *s, struct instr_mpi_calls *m)
{
    const struct instr_job *j = s->job;
    const struct instr_axis *a = &s->axis;
    for (size_t i = 0; i < m->nranks; i++) {
        const struct instr_axis_dump *ad = &a->d[j->ranks[i].dump];
        struct instr_mpi_rank *r = &m->ranks[i];
        r->nsync = ad->nsync;
        for (unsigned k = 0; k < ad->nsync; k++)
            r->off_ns[k] = ad->offset_ns[k], r->rtt_ns[k] = ad->rtt_ns[k];
        r->start_ns = ad->start_ns;
    }
}

int instr_mpi_calls_build(const struct instr_session *s, struct instr_mpi_calls *m)
{
    memset(m, 0, sizeof *m);
    const struct instr_job *j = s->job;
    if (!j || !j->nranks)
        return 0;
    if (!(m->ranks = calloc(j->nranks, sizeof *m->ranks)))
        return INSTR_ENOMEM;
    m->nranks = j->nranks;
    m->job_size = j->size;
    for (size_t i = 0; i < j->nranks; i++) {
        struct walk w = {m,        (uint32_t)i,         &s->axis, s->dumps, j->ranks[i].dump, &m->ranks[i],
                         &s->dumps[j->ranks[i].dump], j->size, 0};
        m->ranks[i].rank = j->ranks[i].rank;
        for (size_t t = 0; t < w.d->nthreads; t++) {
            int rc = walk_thread(&w, &w.d->threads[t]);
            if (rc < 0) {
                instr_mpi_calls_free(m);
                return rc;
            }
        }
    }
    clocks(s, m);
    int rc = pairs(m);
    if (rc == 0)
        rc = instr_mpi_wait_states(m);
    if (rc < 0) {
        instr_mpi_calls_free(m);
        return rc;
    }
    if (m->nsites)
        qsort(m->sites, m->nsites, sizeof *m->sites, by_time);
    return 0;
}

void instr_mpi_calls_free(struct instr_mpi_calls *m)
{
    free(m->recs);
    free(m->pairs);
    free(m->sites);
    free(m->ranks);
    memset(m, 0, sizeof *m);
}

int instr_mpi_flows(const struct instr_session *s, int (*each)(void *ctx, const struct instr_mpi_flow *f), void *ctx)
{
    if (!s->job)
        return 0;
    struct instr_mpi_calls m;
    int rc = instr_mpi_calls_build(s, &m);
    for (size_t i = 0; rc == 0 && i < m.nrecs; i++) {
        struct instr_mpi_flow f;
        if (!(f.kind = flow_at(&m, i, f.name, sizeof f.name)))
            continue;
        f.to = &m.recs[i];
        f.from = &m.recs[f.to->partner];
        f.from_dump = s->job->ranks[f.from->rank].dump;
        f.to_dump = s->job->ranks[f.to->rank].dump;
        rc = each(ctx, &f);
    }
    instr_mpi_calls_free(&m);
    return rc;
}
